//! Replicate's predictions API: create a prediction for a model or a version, poll `urls.get`,
//! cancel, the default webhook secret, and Standard Webhooks callbacks. Errors are RFC 7807
//! problems.

use crate::ids::random_hex_id;
use crate::jobs::{Api, Job, Phase};
use crate::media::Kind;
use crate::request::{is_web_url, ApiRequest};
use crate::respond::{json, problem, reason, refusal_status, rfc3339, truncated_json, Body};
use crate::signing::unix_now;
use crate::state::{Shared, Submission};
use crate::stats::bump;
use crate::webhooks::{self, Callback};
use hyper::{Method, Response, StatusCode};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Instant;

/// The error a failed prediction reports.
const FAILURE: &str = "CUDA out of memory. Tried to allocate 2.00 GiB";

/// Answers a request to the Replicate API.
pub(crate) async fn handle(shared: &Arc<Shared>, request: ApiRequest) -> Response<Body> {
    let token = &shared.config.replicate_token;
    let authorized = request.authorization().is_some_and(|given| {
        let given = given.strip_prefix("Bearer ").or_else(|| given.strip_prefix("Token "));
        given == Some(token.as_str())
    });
    if !authorized {
        return problem(StatusCode::UNAUTHORIZED, "Unauthenticated", "You did not pass a valid authentication token");
    }
    let segments = request.segments();
    match (&request.method, segments.as_slice()) {
        (&Method::POST, ["v1", "models", owner, name, "predictions"]) => {
            submit(shared, &request, format!("{owner}/{name}"), None)
        }
        (&Method::POST, ["v1", "predictions"]) => submit_version(shared, &request),
        (&Method::GET, ["v1", "predictions", id]) => get(shared, id),
        (&Method::POST, ["v1", "predictions", id, "cancel"]) => cancel(shared, id),
        (&Method::GET, ["v1", "webhooks", "default", "secret"]) => {
            json(StatusCode::OK, &json!({"key": shared.signer.replicate_secret()}))
        }
        _ => problem(StatusCode::NOT_FOUND, "Not found", "The requested resource could not be found"),
    }
}

fn not_found() -> Response<Body> {
    problem(StatusCode::NOT_FOUND, "Not found", "The requested prediction could not be found")
}

fn invalid(detail: &str) -> Response<Body> {
    problem(StatusCode::UNPROCESSABLE_ENTITY, "Input validation failed", detail)
}

/// Why a request body is not a prediction request.
enum BadBody {
    NotJson,
    NotObject,
}

impl BadBody {
    /// The problem to answer.
    fn answer(self) -> Response<Body> {
        match self {
            BadBody::NotJson => problem(StatusCode::BAD_REQUEST, "Invalid JSON", "The request body is not valid JSON"),
            BadBody::NotObject => invalid("input: Input is required"),
        }
    }
}

/// The request body as a JSON object.
fn body_object(request: &ApiRequest) -> Result<serde_json::Map<String, Value>, BadBody> {
    match serde_json::from_slice::<Value>(&request.body) {
        Ok(Value::Object(body)) => Ok(body),
        Ok(_) => Err(BadBody::NotObject),
        Err(_) => Err(BadBody::NotJson),
    }
}

/// The refusal to answer while [`Faults::refuse_submit`](crate::Faults::refuse_submit) is set.
fn refusal(shared: &Shared) -> Option<Response<Body>> {
    let status = refusal_status(shared.faults().refuse_submit?);
    Some(problem(status, reason(status), "The service cannot take predictions now"))
}

/// `POST /v1/predictions` with a `version`.
fn submit_version(shared: &Arc<Shared>, request: &ApiRequest) -> Response<Body> {
    if let Some(answer) = refusal(shared) {
        return answer;
    }
    let body = match body_object(request) {
        Ok(body) => body,
        Err(bad) => return bad.answer(),
    };
    match body.get("version").and_then(Value::as_str).map(str::trim).filter(|v| !v.is_empty()) {
        Some(version) => submit(shared, request, format!("unknown/{version}"), Some(version.to_string())),
        None => invalid("version: Version is required"),
    }
}

/// Creates a prediction of `model` (at `version`, or the model's hidden latest).
fn submit(shared: &Arc<Shared>, request: &ApiRequest, model: String, version: Option<String>) -> Response<Body> {
    if let Some(answer) = refusal(shared) {
        return answer;
    }
    let body = match body_object(request) {
        Ok(body) => body,
        Err(bad) => return bad.answer(),
    };
    let Some(Value::Object(input)) = body.get("input").cloned() else { return invalid("input: Input is required") };
    let webhook = match body.get("webhook") {
        None | Some(Value::Null) => None,
        Some(Value::String(url)) if is_web_url(url) => Some(url.clone()),
        Some(_) => return invalid("webhook: must be a valid http(s) URL"),
    };
    // Replicate sends the final state only to receivers that asked for "completed", or for every
    // event by giving no filter; the simulator sends no other event.
    let wants_final_state = match body.get("webhook_events_filter") {
        None | Some(Value::Null) => true,
        Some(Value::Array(events)) if events.iter().all(Value::is_string) => {
            events.iter().any(|event| event == "completed")
        }
        Some(_) => return invalid("webhook_events_filter: must be a list of event names"),
    };
    let submission = Submission {
        id: random_hex_id(),
        kind: Kind::of(&model),
        api: Api::Replicate { model, version: version.unwrap_or_else(|| "hidden".into()) },
        input,
        webhook,
    };
    let job = shared.create_job(submission);
    if wants_final_state {
        webhooks::deliver_when_done(shared, &job, signed_callback);
    }
    json(StatusCode::CREATED, &prediction(shared, &job, Instant::now()))
}

/// `GET /v1/predictions/{id}`.
fn get(shared: &Shared, id: &str) -> Response<Body> {
    bump(&shared.counters.status_polls);
    if shared.take_status_error() {
        return problem(StatusCode::SERVICE_UNAVAILABLE, "Service unavailable", "Please retry the request");
    }
    let Some(job) = find(shared, id) else { return not_found() };
    if job.mark_polled() {
        bump(&shared.counters.jobs_polled);
    }
    let body = prediction(shared, &job, Instant::now());
    if shared.faults().malformed {
        return truncated_json(&body);
    }
    json(StatusCode::OK, &body)
}

/// `POST /v1/predictions/{id}/cancel`.
fn cancel(shared: &Shared, id: &str) -> Response<Body> {
    let Some(job) = find(shared, id) else { return not_found() };
    bump(&shared.counters.cancels);
    shared.jobs.cancel(&job);
    json(StatusCode::OK, &prediction(shared, &job, Instant::now()))
}

/// The Replicate prediction `id`.
fn find(shared: &Shared, id: &str) -> Option<Arc<Job>> {
    shared.jobs.get(id).filter(|job| matches!(job.api, Api::Replicate { .. }))
}

/// The prediction object of `job` as it stands at `now`.
fn prediction(shared: &Shared, job: &Job, now: Instant) -> Value {
    let (model, version) = match &job.api {
        Api::Replicate { model, version } => (model.as_str(), version.as_str()),
        Api::Fal { prefix } => (prefix.as_str(), "hidden"),
    };
    let get = format!("{}/v1/predictions/{}", shared.base_url, job.id);
    let time = |at: Option<Instant>| at.map_or(Value::Null, |at| json!(rfc3339(job.wall(at))));
    let started_line = "Starting prediction\n";
    let (status, started, completed, logs) = match job.phase(now) {
        Phase::Queued => ("starting", None, None, String::new()),
        Phase::Running { started } => ("processing", Some(started), None, started_line.to_string()),
        Phase::Succeeded { started, ended } => {
            ("succeeded", Some(started), Some(ended), format!("{started_line}Prediction succeeded\n"))
        }
        Phase::Failed { started, ended } => {
            ("failed", Some(started), Some(ended), format!("{started_line}{FAILURE}\n"))
        }
        Phase::Canceled { started, at } => {
            let before = if started.is_some() { started_line } else { "" };
            ("canceled", started, Some(at), format!("{before}Prediction canceled\n"))
        }
    };
    let (output, error, metrics) = match (status, started, completed) {
        ("succeeded", Some(started), Some(ended)) => {
            let urls: Vec<Value> = job
                .tokens
                .iter()
                .map(|token| json!(format!("{}/media/{token}.{}", shared.base_url, job.media.kind.extension())))
                .collect();
            let output = match job.media.kind {
                Kind::Image => Value::Array(urls),
                Kind::Video | Kind::Audio | Kind::Mp3 => urls.into_iter().next().unwrap_or(Value::Null),
            };
            (output, Value::Null, json!({"predict_time": ended.duration_since(started).as_secs_f64()}))
        }
        ("failed", _, _) => (Value::Null, json!(FAILURE), json!({})),
        _ => (Value::Null, Value::Null, json!({})),
    };
    json!({
        "id": job.id,
        "model": model,
        "version": version,
        "input": job.input,
        "logs": logs,
        "output": output,
        "error": error,
        "status": status,
        "created_at": rfc3339(job.created_wall),
        "started_at": time(started),
        "completed_at": time(completed),
        "urls": {"get": get, "cancel": format!("{get}/cancel"), "stream": format!("{get}/stream")},
        "metrics": metrics,
        "webhook": job.webhook,
    })
}

/// The callback for an ended prediction: its final state, signed with the webhook secret under
/// a new message id.
async fn signed_callback(shared: Arc<Shared>, job: Arc<Job>) -> Callback {
    let body = prediction(&shared, &job, Instant::now()).to_string().into_bytes();
    let id = format!("msg_{}", random_hex_id());
    let headers = shared.signer.replicate_headers(&id, unix_now(), &body);
    Callback { body, headers }
}
