//! The connector's tools: their definitions for `tools/list` and their execution for `tools/call`.
//!
//! Every tool is a thin call into the service, and answers with the same view the HTTP API
//! returns for the same resource (a queued task, a task, a reel, the model list, a recipe's
//! result). Input and output schemas are derived from those same Rust types, never written by
//! hand. Tool failures a model can act on (bad arguments, a spend limit, an unknown task) are
//! results with `isError: true` carrying the error's message and stable `code`; an unknown tool
//! name is a JSON-RPC error.

use crate::codes;
use domain::limits::{KIT_MAX_PHOTOS, REEL_MAX_PHOTOS};
use domain::rate_limit::RateClass;
use domain::{
    Family, GenerateRequest, IdempotencyKey, ListingEnhanceRequest, ListingKitRequest, LotTraceRequest, ReelRequest,
};
use jsonrpsee::types::{ErrorObjectOwned, Params};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use service::contract::{any_of, json_schema};
use service::views::{ListingKitResult, LotTraceResult, ModelList, QueuedReel, QueuedTask, ReelView, TaskView};
use service::{Caller, ErrorCode, Service, ServiceError, SyncOutcome};
use utoipa::ToSchema;

#[derive(Deserialize)]
struct CallParams {
    name: String,
    #[serde(default)]
    arguments: Option<Map<String, Value>>,
}

/// Arguments of `list_models`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct ListModelsArgs {
    /// Only engines of this family.
    #[serde(default)]
    family: Option<Family>,
}

/// Arguments of `task_status`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct TaskStatusArgs {
    /// The `id` returned by generate, listing_enhance, lot_trace or listing_kit.
    id: String,
}

/// Arguments of `reel_status`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct ReelStatusArgs {
    /// The `reel_id` returned by reel.
    reel_id: String,
}

/// Arguments of `cancel_task`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct CancelArgs {
    /// The `id` of a task (from generate, listing_enhance, lot_trace or listing_kit) or the
    /// `reel_id` of a reel.
    id: String,
}

/// The argument every tool that spends takes beside its request.
#[derive(ToSchema)]
// Only its schema is used: `spending_arguments` takes the argument out before the request is read.
#[allow(dead_code)]
struct SpendingArgs {
    idempotency_key: Option<IdempotencyKey>,
}

/// `schema` (a request's) with the [`SpendingArgs`] properties added.
fn spending_schema(mut schema: Value) -> Value {
    let extra = json_schema::<SpendingArgs>();
    let extra = extra.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
    if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        properties.extend(extra);
    }
    schema
}

/// One tool: what `tools/list` says of it.
struct Tool {
    name: &'static str,
    title: &'static str,
    description: String,
    input: Value,
    output: Value,
}

impl Tool {
    fn definition(self) -> Value {
        // A billed tool changes state and reaches outside to fetch inputs; it takes an idempotency key.
        let billed = SPENDING_TOOLS.contains(&self.name);
        let destructive = DESTRUCTIVE_TOOLS.contains(&self.name);
        let input = if billed { spending_schema(self.input) } else { self.input };
        json!({
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": input,
            "outputSchema": self.output,
            "annotations": {
                "title": self.title,
                "readOnlyHint": !billed && !destructive,
                "idempotentHint": !billed,
                "destructiveHint": destructive,
                "openWorldHint": billed,
            },
        })
    }
}

/// The answer of a synchronous recipe: its finished result `R`, or the queued task to poll.
fn synchronous_schema<R: ToSchema>() -> Value {
    any_of([json_schema::<R>(), json_schema::<QueuedTask>()])
}

/// The generate request's schema, with the live engine ids as the `model` enum.
fn generate_schema(service: &Service) -> Value {
    let mut schema = json_schema::<GenerateRequest>();
    let models: Vec<&str> = service.engines().catalog().engines().map(|e| e.id.as_str()).collect();
    if let Some(model) = schema.pointer_mut("/properties/model").and_then(Value::as_object_mut) {
        model.insert("enum".into(), json!(models));
    }
    schema
}

/// The tool definitions.
pub(crate) fn list(service: &Service) -> Value {
    let tools = [
        Tool {
            name: "list_models",
            title: "List generation engines",
            description: "Lists the live media-generation engines: id, family (image_generation, image_to_video, \
                text_to_speech, ...), which inputs each needs (prompt, image_url, video_url, audio_url), its params \
                with ranges and defaults, and its price rule. Free; never billed. Call it to choose a model for generate.".into(),
            input: json_schema::<ListModelsArgs>(),
            output: json_schema::<ModelList>(),
        },
        Tool {
            name: "generate",
            title: "Generate media with an engine",
            description: "Starts a billed generation job on one engine (see list_models for each engine's required \
                inputs, params and price) and returns the queued task at once. Poll task_status with its id until \
                the status is succeeded (output URLs included) or failed. The price is held at submit and billed \
                only on success.".into(),
            input: generate_schema(service),
            output: json_schema::<QueuedTask>(),
        },
        Tool {
            name: "listing_enhance",
            title: "Enhance a listing photo",
            description: "Turns a raw interior, exterior or drone photo of a property into a polished listing photo \
                (white balance, exposure, local contrast, colour, optional vertical correction), exported for MLS \
                (default: JPEG, long edge 2048 px, under 3 MB), web or print. Billed; returns the queued task at \
                once; poll task_status with its id, whose result lists every adjustment made.".into(),
            input: json_schema::<ListingEnhanceRequest>(),
            output: json_schema::<QueuedTask>(),
        },
        Tool {
            name: "lot_trace",
            title: "Trace a parcel on an aerial photo",
            description: "Isolates a parcel on an aerial or satellite photo and measures it: acres, square feet, \
                perimeter and every side's length, plus the photo with the parcel highlighted, side lengths and an \
                acreage callout. Give the boundary as pixel points (or params.geojson in lon/lat with a \
                geo-referenced image) and one ground scale: params.meters_per_pixel, params.latitude with \
                params.zoom (web-mercator tiles), or params.bounds. Billed; answers with the result when done \
                (usually within seconds), otherwise with the queued task to poll with task_status. Approximate; \
                not a survey.".into(),
            input: json_schema::<LotTraceRequest>(),
            output: synchronous_schema::<LotTraceResult>(),
        },
        Tool {
            name: "listing_kit",
            title: "Make a listing marketing kit",
            description: format!("Makes a brand-locked marketing kit from 1 to {KIT_MAX_PHOTOS} listing photos (the first is the hero) and \
                the listing details: a press-ready flyer (PDF with 0.125 in bleed, fonts embedded, and a PNG), a \
                1080x1080 and a 1080x1350 social post, a 1080x1920 story, and captions (MLS remarks within the limit \
                and without contact details, portal, website, social with hashtags, a story line). Every text is \
                checked against Fair Housing rules (42 U.S.C. 3604(c)): flagged phrases are rewritten or dropped and \
                listed in fair_housing.findings. Mark virtually staged photos with staged: true. Billed; answers with \
                the kit when done (usually within seconds), otherwise with the queued task to poll with task_status."),
            input: json_schema::<ListingKitRequest>(),
            output: synchronous_schema::<ListingKitResult>(),
        },
        Tool {
            name: "reel",
            title: "Make a listing reel",
            description: format!("Makes a vertical listing video ready to post (1080x1920, 30 fps, H.264) from 1 to {REEL_MAX_PHOTOS} \
                listing photos and the listing details: each photo framed around its subject with a slow push-in, \
                cross-fades, captions (price, beds and baths, square feet, address, headline) inside the platforms' \
                safe zone, an end card with the agent's contact, and optional voiceover and music. Also a cover JPEG \
                and the captions as SRT and WebVTT. Billed; returns the queued reel at once; poll reel_status with \
                its reel_id (not task_status)."),
            input: json_schema::<ReelRequest>(),
            output: json_schema::<QueuedReel>(),
        },
        Tool {
            name: "reel_status",
            title: "Check a reel",
            description: "Returns a reel started by the reel tool: queued, running, succeeded (with the video, \
                cover and caption files in output, the billed cost and the captions with their times in result) \
                or failed (with the reason in error). Output URLs are signed and work without the API key until their \
                expires_at.".into(),
            input: json_schema::<ReelStatusArgs>(),
            output: json_schema::<ReelView>(),
        },
        Tool {
            name: "task_status",
            title: "Check a task",
            description: "Returns a task started by generate, listing_enhance, lot_trace or listing_kit: queued, \
                running, succeeded (with the files in output, each with its url and type: image, video, audio, text \
                or document; the billed cost; and, for recipes, their result) or failed (with the reason in error). \
                Output URLs are signed and work without the API key until their expires_at.".into(),
            input: json_schema::<TaskStatusArgs>(),
            output: json_schema::<TaskView>(),
        },
        Tool {
            name: "cancel_task",
            title: "Cancel a task or reel",
            description: "Cancels a queued or running task or reel of this key: it ends failed with the error \
                \"cancelled by client\", its hold is released and nothing is billed. Returns it as it ended (a reel \
                in reel_status's shape). A task that already succeeded or failed cannot be cancelled (code \
                already_finished).".into(),
            input: json_schema::<CancelArgs>(),
            output: any_of([json_schema::<TaskView>(), json_schema::<ReelView>()]),
        },
    ];
    json!({ "tools": tools.into_iter().map(Tool::definition).collect::<Vec<_>>() })
}

/// A tool's answer: the view, and what to do next when the job is still under way.
struct Answer {
    view: Value,
    next_step: Option<String>,
}

impl Answer {
    fn of(view: impl Serialize) -> Result<Answer, ToolError> {
        let view = serde_json::to_value(view).map_err(|e| ToolError::from(ServiceError::Internal(e.to_string())))?;
        Ok(Answer { view, next_step: None })
    }

    fn then(mut self, next_step: String) -> Answer {
        self.next_step = Some(next_step);
        self
    }
}

/// A failed call as the agent sees it: what happened and what to do, with the stable code.
struct ToolError {
    message: String,
    code: ErrorCode,
}

impl From<ServiceError> for ToolError {
    fn from(error: ServiceError) -> Self {
        let code = error.code();
        let message = match error {
            ServiceError::PaymentRequired(refusal) => {
                format!("{refusal}. The job was not started and nothing was billed.")
            }
            ServiceError::BadRequest(m) | ServiceError::UnknownModel(m) => {
                format!("{m}. Fix the argument and call again; list_models shows what each engine accepts.")
            }
            // Our own faults are logged, never shown: database or storage text is not for agents.
            ServiceError::Internal(detail) => {
                tracing::error!(error = %detail, "internal error in a connector tool");
                "Internal error on our side; it has been logged. Nothing was billed; try again later.".into()
            }
            ServiceError::Unavailable(_) => {
                "The service is temporarily unavailable. Nothing was billed; retry in a few seconds.".into()
            }
            ServiceError::ProviderFailed(m) | ServiceError::RecipeFailed(m) => {
                format!("{m}. Nothing was billed; try again later.")
            }
            other => other.to_string(),
        };
        ToolError { message, code }
    }
}

/// The tools that start billed work: their definitions say so, and each call is counted against
/// the key's rate of spending requests.
const SPENDING_TOOLS: [&str; 5] = ["generate", "listing_enhance", "lot_trace", "listing_kit", "reel"];

/// The tools that end something the key started (a cancelled job cannot be resumed).
const DESTRUCTIVE_TOOLS: [&str; 1] = ["cancel_task"];

/// Runs `tools/call`.
pub(crate) async fn call(
    service: &Service,
    caller: &Caller,
    params: Params<'static>,
) -> Result<Value, ErrorObjectOwned> {
    let call: CallParams =
        params.parse().map_err(|e| invalid_params(format!("tools/call needs name and arguments: {e}")))?;
    let arguments = Value::Object(call.arguments.unwrap_or_default());
    // A spending call counts against the key's rate of spending requests, as the HTTP submit does.
    let admitted = if SPENDING_TOOLS.contains(&call.name.as_str()) {
        service.api().admit(caller, RateClass::Submit).await.map(|_| ())
    } else {
        Ok(())
    };
    let outcome = match (admitted, call.name.as_str()) {
        (Err(refusal), _) => Err(ToolError::from(ServiceError::from(refusal))),
        (Ok(()), "list_models") => list_models(service, arguments),
        (Ok(()), "generate") => generate(service, caller, arguments).await,
        (Ok(()), "listing_enhance") => listing_enhance(service, caller, arguments).await,
        (Ok(()), "lot_trace") => lot_trace(service, caller, arguments).await,
        (Ok(()), "listing_kit") => listing_kit(service, caller, arguments).await,
        (Ok(()), "reel") => reel(service, caller, arguments).await,
        (Ok(()), "reel_status") => reel_status(service, caller, arguments).await,
        (Ok(()), "task_status") => task_status(service, caller, arguments).await,
        (Ok(()), "cancel_task") => cancel_task(service, caller, arguments).await,
        (Ok(()), other) => return Err(invalid_params(format!("unknown tool {other:?}; tools/list names the tools"))),
    };
    Ok(match outcome {
        Ok(answer) => {
            let mut content = vec![json!({"type": "text", "text": answer.view.to_string()})];
            if let Some(next_step) = answer.next_step {
                content.push(json!({"type": "text", "text": format!("Next step: {next_step}")}));
            }
            json!({"content": content, "structuredContent": answer.view, "isError": false})
        }
        Err(error) => json!({
            "content": [{"type": "text", "text": error.message}],
            "structuredContent": {"error": error.message, "code": error.code},
            "isError": true
        }),
    })
}

/// A JSON-RPC invalid-params error, with the stable code in its data.
fn invalid_params(message: String) -> ErrorObjectOwned {
    ErrorObjectOwned::owned(codes::INVALID_PARAMS, message, Some(json!({"code": ErrorCode::InvalidInput})))
}

fn arguments<T: serde::de::DeserializeOwned>(tool: &str, value: Value) -> Result<T, ToolError> {
    serde_json::from_value(value)
        .map_err(|e| ToolError { message: format!("invalid arguments for {tool}: {e}"), code: ErrorCode::InvalidInput })
}

/// A spending tool's request `T` and its idempotency key (see [`SpendingArgs`]).
fn spending_arguments<T: serde::de::DeserializeOwned>(
    tool: &str,
    mut value: Value,
) -> Result<(T, Option<IdempotencyKey>), ToolError> {
    let invalid = |message: String| ToolError { message, code: ErrorCode::InvalidInput };
    let key = match value.as_object_mut().and_then(|args| args.remove("idempotency_key")) {
        None | Some(Value::Null) => None,
        Some(Value::String(key)) => {
            Some(IdempotencyKey::parse(&key).map_err(|e| invalid(format!("idempotency_key: {e}")))?)
        }
        Some(_) => return Err(invalid("idempotency_key: expected a string".into())),
    };
    Ok((arguments(tool, value)?, key))
}

fn list_models(service: &Service, value: Value) -> Result<Answer, ToolError> {
    let args: ListModelsArgs = arguments("list_models", value)?;
    let mut models = service.api().list_models();
    if let Some(family) = args.family {
        models.models.retain(|m| m.family == family);
    }
    Answer::of(models)
}

fn queued(task: QueuedTask) -> Result<Answer, ToolError> {
    let next_step = format!("call task_status with id {} until status is succeeded or failed", task.id);
    Ok(Answer::of(task)?.then(next_step))
}

async fn generate(service: &Service, caller: &Caller, value: Value) -> Result<Answer, ToolError> {
    let (request, key): (GenerateRequest, _) = spending_arguments("generate", value)?;
    queued(service.api().with_idempotency_key(key.as_ref()).submit(caller, request).await?)
}

async fn listing_enhance(service: &Service, caller: &Caller, value: Value) -> Result<Answer, ToolError> {
    let (request, key): (ListingEnhanceRequest, _) = spending_arguments("listing_enhance", value)?;
    queued(service.api().with_idempotency_key(key.as_ref()).listing_enhance(caller, request).await?)
}

async fn lot_trace(service: &Service, caller: &Caller, value: Value) -> Result<Answer, ToolError> {
    let (request, key): (LotTraceRequest, _) = spending_arguments("lot_trace", value)?;
    synchronous(service.api().with_idempotency_key(key.as_ref()).lot_trace(caller, request).await?)
}

async fn listing_kit(service: &Service, caller: &Caller, value: Value) -> Result<Answer, ToolError> {
    let (request, key): (ListingKitRequest, _) = spending_arguments("listing_kit", value)?;
    synchronous(service.api().with_idempotency_key(key.as_ref()).listing_kit(caller, request).await?)
}

/// A synchronous recipe's answer: its result (the HTTP 200 body), or the queued task to poll.
fn synchronous<R: Serialize>(outcome: SyncOutcome<R>) -> Result<Answer, ToolError> {
    match outcome {
        SyncOutcome::Pending(task) => queued(task),
        SyncOutcome::Finished(finished) => Answer::of(finished),
    }
}

async fn reel(service: &Service, caller: &Caller, value: Value) -> Result<Answer, ToolError> {
    let (request, key): (ReelRequest, _) = spending_arguments("reel", value)?;
    let queued = service.api().with_idempotency_key(key.as_ref()).reel(caller, request).await?;
    let next_step = format!(
        "call reel_status with reel_id {} every few seconds until status is succeeded or failed",
        queued.reel_id
    );
    Ok(Answer::of(queued)?.then(next_step))
}

async fn reel_status(service: &Service, caller: &Caller, value: Value) -> Result<Answer, ToolError> {
    let args: ReelStatusArgs = arguments("reel_status", value)?;
    match service.api().reel_status(caller, &args.reel_id).await {
        Ok(reel) => Answer::of(reel),
        Err(ServiceError::NotFound(_)) => Err(ToolError {
            message: format!("no reel {:?} for this key; use the reel_id returned by reel", args.reel_id),
            code: ErrorCode::NotFound,
        }),
        Err(other) => Err(other.into()),
    }
}

async fn task_status(service: &Service, caller: &Caller, value: Value) -> Result<Answer, ToolError> {
    let args: TaskStatusArgs = arguments("task_status", value)?;
    match service.api().task(caller, &args.id).await {
        Ok(task) => Answer::of(task),
        Err(ServiceError::NotFound(_)) => {
            let message = if args.id.starts_with("reel_") {
                format!("{:?} is a reel; check it with reel_status", args.id)
            } else {
                format!("no task {:?} for this key; use the id returned by generate", args.id)
            };
            Err(ToolError { message, code: ErrorCode::NotFound })
        }
        Err(other) => Err(other.into()),
    }
}

async fn cancel_task(service: &Service, caller: &Caller, value: Value) -> Result<Answer, ToolError> {
    let args: CancelArgs = arguments("cancel_task", value)?;
    Answer::of(service.api().cancel_job(caller, &args.id).await?)
}
