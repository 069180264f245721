//! The connector's tools: their definitions for `tools/list` and their execution for `tools/call`.
//!
//! Every tool is a thin call into the service. Tool failures a model can act on (bad arguments, a
//! spend limit, an unknown task) are results with `isError: true`; an unknown tool name is a
//! JSON-RPC error.

use crate::codes;
use domain::{Family, GenerateRequest, ListingEnhanceRequest, ListingKitRequest, LotTraceRequest, ReelRequest};
use jsonrpsee::types::{ErrorObjectOwned, Params};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use service::views::{QueuedTask, ReelView, TaskView};
use service::{Caller, Service, ServiceError, SyncOutcome};

#[derive(Deserialize)]
struct CallParams {
    name: String,
    #[serde(default)]
    arguments: Option<Map<String, Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListModelsArgs {
    #[serde(default)]
    family: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskStatusArgs {
    id: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReelStatusArgs {
    reel_id: String,
}

fn queued_schema() -> Value {
    queued_schema_for("task_id", "task_status", "job", "task")
}

/// The answer of a tool that starts a billed job: its id (under `id_field`, passed to
/// `status_tool`), the held price and where to poll.
fn queued_schema_for(id_field: &str, status_tool: &str, job: &str, poll: &str) -> Value {
    json!({
        "type": "object",
        "properties": {
            id_field: {"type": "string", "description": format!("Pass to {status_tool}.")},
            "status": {"type": "string", "enum": ["queued"]},
            "price_usd": {"type": "string", "description": format!("Price held for the {job} (decimal USD); billed only on success.")},
            "poll_url": {"type": "string", "description": format!("HTTP address of the {poll} (needs the API key).")},
            "next_step": {"type": "string"}
        },
        "required": [id_field, "status", "price_usd", "poll_url", "next_step"],
        "additionalProperties": false
    })
}

fn output_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"url": {"type": "string"}, "type": {"type": "string", "enum": ["image", "video", "audio", "text"]}, "content_type": {"type": "string"}},
        "required": ["url", "type", "content_type"]
    })
}

/// Tools that start billed jobs; the others only read.
const BILLED_TOOLS: [&str; 5] = ["generate", "listing_enhance", "lot_trace", "listing_kit", "reel"];

/// Adds a tool's annotations, derived from whether it starts a billed job: billed tools change state,
/// are not idempotent and reach outside (they fetch input URLs); the others are read-only lookups.
/// The answer of a synchronous recipe tool: the task's fields, the recipe's own `fields`, and
/// `next_step` when it is still running.
fn synchronous_schema(fields: Value) -> Value {
    let mut properties = json!({
        "task_id": {"type": "string"},
        "status": {"type": "string", "enum": ["queued", "succeeded"]},
        "cost_usd": {"type": "string"},
        "outputs": {"type": "array", "items": {"type": "object"}},
        "next_step": {"type": "string"}
    });
    if let (Some(all), Some(own)) = (properties.as_object_mut(), fields.as_object()) {
        all.extend(own.clone());
    }
    json!({"type": "object", "properties": properties, "required": ["task_id", "status"]})
}

fn photo_url() -> Value {
    json!({"type": "string", "description": "A photo as an absolute http(s) URL or a base64 data: URI"})
}

/// Listing photos, 1 to `max`: URLs, or objects with a url, a caption and (for the kit) staged.
fn photos_schema(max: usize, staged: bool, description: &str) -> Value {
    let mut object = json!({
        "type": "object",
        "properties": {"url": photo_url(), "caption": {"type": "string", "maxLength": 80}},
        "required": ["url"],
        "additionalProperties": false
    });
    if staged {
        object["properties"]["staged"] = json!({"type": "boolean"});
    }
    json!({
        "type": "array", "minItems": 1, "maxItems": max, "description": description,
        "items": {"oneOf": [photo_url(), object]}
    })
}

/// Every field of the listing details, as the kit uses them.
const DETAIL_FIELDS: [&str; 16] = [
    "address",
    "price",
    "beds",
    "baths",
    "square_feet",
    "lot_size",
    "year_built",
    "headline",
    "description",
    "features",
    "open_house",
    "agent_name",
    "phone",
    "email",
    "brokerage",
    "license_number",
];
/// The fields the reel shows.
const REEL_DETAIL_FIELDS: [&str; 9] =
    ["address", "price", "beds", "baths", "square_feet", "headline", "agent_name", "brokerage", "phone"];

/// The listing details (one `ListingDetails` type behind both recipes), with the `fields` a tool
/// uses.
fn details_schema(fields: &[&str], description: &str) -> Value {
    let all = json!({
        "address": {"type": "string"},
        "price": {"type": ["number", "string"], "description": "525000 or \"$525,000\"."},
        "beds": {"type": "number", "minimum": 0},
        "baths": {"type": "number", "minimum": 0},
        "square_feet": {"type": "number", "minimum": 0},
        "lot_size": {"type": ["number", "string"], "description": "Acres (0.25) or text."},
        "year_built": {"type": "integer", "minimum": 1600, "maximum": 2100},
        "headline": {"type": "string"},
        "description": {"type": "string"},
        "features": {"type": "array", "items": {"type": "string"}, "maxItems": 20},
        "open_house": {"type": "string"},
        "agent_name": {"type": "string"},
        "phone": {"type": "string"},
        "email": {"type": "string"},
        "brokerage": {"type": "string"},
        "license_number": {"type": "string"}
    });
    let properties: serde_json::Map<String, Value> =
        fields.iter().filter_map(|f| all.get(*f).map(|schema| (f.to_string(), schema.clone()))).collect();
    json!({"type": "object", "description": description, "properties": properties, "additionalProperties": false})
}

fn annotate(tool: &mut Value) {
    let billed = tool["name"].as_str().is_some_and(|name| BILLED_TOOLS.contains(&name));
    tool["annotations"] = json!({
        "title": tool["title"].clone(),
        "readOnlyHint": !billed,
        "idempotentHint": !billed,
        "destructiveHint": false,
        "openWorldHint": billed,
    });
}

/// The tool definitions, with the live engine ids as the `model` enum.
pub(crate) fn list(service: &Service) -> Value {
    let models: Vec<String> = service.engines().catalog().engines().map(|e| e.id.clone()).collect();
    let families: Vec<Value> = Family::PUBLIC.iter().filter_map(|f| serde_json::to_value(f).ok()).collect();
    let url = |what: &str| json!({"type": "string", "description": format!("{what} as an absolute http(s) URL or a base64 data: URI")});
    let mut tools = json!([
        {
            "name": "list_models",
            "title": "List generation engines",
            "description": "Lists the live media-generation engines: id, family (image_generation, image_to_video, \
                text_to_speech, ...), which inputs each needs (prompt, image_url, video_url, audio_url), its params \
                with ranges and defaults, and its price rule. Free; never billed. Call it to choose a model for generate.",
            "inputSchema": {
                "type": "object",
                "properties": {"family": {"type": "string", "enum": families, "description": "Only engines of this family."}},
                "additionalProperties": false
            },
            "outputSchema": {
                "type": "object",
                "properties": {"models": {"type": "array", "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "family": {"type": "string"},
                        "title": {"type": "string"},
                        "inputs": {"type": "object"},
                        "params": {"type": "object"},
                        "price": {"type": "object", "properties": {"per": {"type": "string"}, "usd": {"type": "string"}}, "required": ["per", "usd"]}
                    },
                    "required": ["id", "family", "title", "inputs", "params", "price"]
                }}},
                "required": ["models"],
                "additionalProperties": false
            }
        },
        {
            "name": "generate",
            "title": "Generate media with an engine",
            "description": "Starts a billed generation job on one engine (see list_models for each engine's required \
                inputs, params and price) and returns a task id at once. Poll task_status with it until the status \
                is succeeded (output URLs included) or failed. The price is held at submit and billed only on success.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "model": {"type": "string", "enum": models, "description": "Engine id."},
                    "prompt": {"type": "string", "description": "Text prompt, for engines that take one."},
                    "image_url": url("Input image"),
                    "video_url": url("Input video"),
                    "audio_url": url("Input audio"),
                    "params": {"type": "object", "description": "Engine parameters such as width, height, num_images, duration, seed (see list_models)."}
                },
                "required": ["model"],
                "additionalProperties": false
            },
            "outputSchema": queued_schema()
        },
        {
            "name": "listing_enhance",
            "title": "Enhance a listing photo",
            "description": "Turns a raw interior, exterior or drone photo of a property into a polished listing photo \
                (white balance, exposure, local contrast, colour, optional vertical correction), exported for MLS \
                (default: JPEG, long edge 2048 px, under 3 MB), web or print. Billed; returns a task id at once; poll \
                task_status, whose result lists every adjustment made.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "image_url": url("The photo"),
                    "notes": {"type": "string", "description": "Optional guidance, such as 'brighter', 'warmer', 'more contrast', 'twilight', 'natural'."},
                    "params": {
                        "type": "object",
                        "properties": {
                            "preset": {"type": "string", "enum": ["mls", "web", "print"], "description": "Export preset (default mls)."},
                            "output_format": {"type": "string", "enum": ["jpeg", "png"], "description": "jpeg (default) or png (not with mls)."},
                            "straighten": {"type": "boolean", "description": "Correct tilted verticals (walls, door frames)."}
                        },
                        "additionalProperties": false
                    }
                },
                "required": ["image_url"],
                "additionalProperties": false
            },
            "outputSchema": queued_schema()
        },
        {
            "name": "lot_trace",
            "title": "Trace a parcel on an aerial photo",
            "description": "Isolates a parcel on an aerial or satellite photo and measures it: acres, square feet, \
                perimeter and every side's length, plus the photo with the parcel highlighted, side lengths and an \
                acreage callout. Give the boundary as pixel points (or params.geojson in lon/lat with a \
                geo-referenced image) and one ground scale: params.meters_per_pixel, params.latitude with \
                params.zoom (web-mercator tiles), or params.bounds. Billed; answers with the result when done \
                (usually within seconds), otherwise with a task id to poll with task_status. Approximate; not a survey.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "image_url": url("The aerial photo"),
                    "points": {
                        "type": "array", "minItems": 3, "maxItems": 1000,
                        "description": "Corners of the parcel in image pixels, in order around it.",
                        "items": {"oneOf": [
                            {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2},
                            {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}, "required": ["x", "y"], "additionalProperties": false}
                        ]}
                    },
                    "params": {
                        "type": "object",
                        "properties": {
                            "meters_per_pixel": {"type": "number", "exclusiveMinimum": 0, "description": "Ground metres per pixel (planar)."},
                            "latitude": {"type": "number", "minimum": -85.0511, "maximum": 85.0511, "description": "Latitude of the image centre (web-mercator tile image)."},
                            "longitude": {"type": "number", "minimum": -180, "maximum": 180, "description": "Longitude of the image centre; geo-references the image."},
                            "zoom": {"type": "number", "minimum": 0, "maximum": 23, "description": "Web-mercator zoom of the image."},
                            "scale": {"type": "number", "minimum": 1, "maximum": 4, "description": "2 for @2x tiles."},
                            "bounds": {"type": "array", "items": {"type": "number"}, "minItems": 4, "maxItems": 4, "description": "[west, south, east, north] of a web-mercator image."},
                            "geojson": {"type": "object", "description": "The boundary as a GeoJSON Polygon or MultiPolygon in lon/lat, instead of points."}
                        },
                        "additionalProperties": false
                    }
                },
                "required": ["image_url"],
                "additionalProperties": false
            },
            "outputSchema": synchronous_schema(json!({
                "acres": {"type": "number"},
                "square_feet": {"type": "number"},
                "square_meters": {"type": "number"},
                "perimeter_m": {"type": "number"},
                "perimeter_ft": {"type": "number"},
                "sides": {"type": "array", "items": {"type": "object"}},
                "centroid": {"type": "object"},
                "geojson": {"type": "object"},
                "disclaimer": {"type": "string"}
            }))
        },
        {
            "name": "listing_kit",
            "title": "Make a listing marketing kit",
            "description": "Makes a brand-locked marketing kit from 1 to 10 listing photos (the first is the hero) and \
                the listing details: a press-ready flyer (PDF with 0.125 in bleed, fonts embedded, and a PNG), a \
                1080x1080 and a 1080x1350 social post, a 1080x1920 story, and captions (MLS remarks within the limit \
                and without contact details, portal, website, social with hashtags, a story line). Every text is \
                checked against Fair Housing rules (42 U.S.C. 3604(c)): flagged phrases are rewritten or dropped and \
                listed in fair_housing.findings. Mark virtually staged photos with staged: true. Billed; answers with \
                the kit when done (usually within seconds), otherwise with a task id to poll with task_status.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "photos": photos_schema(10, true, "The photos, hero first: URLs, or objects with url, an optional caption and staged."),
                    "details": details_schema(
                        &DETAIL_FIELDS,
                        "Every field optional; give at least one. Missing ones are left out, never invented.",
                    ),
                    "params": {
                        "type": "object",
                        "properties": {
                            "brand": {
                                "type": "object",
                                "properties": {
                                    "primary": {"type": "string", "pattern": "^#[0-9A-Fa-f]{6}$"},
                                    "accent": {"type": "string", "pattern": "^#[0-9A-Fa-f]{6}$"},
                                    "logo_url": url("The logo, PNG or JPEG"),
                                    "font": {"type": "string", "enum": ["inter", "garamond"]}
                                },
                                "additionalProperties": false
                            },
                            "paper": {"type": "string", "enum": ["letter", "a4"]},
                            "mls_remarks_max": {"type": "integer", "minimum": 100, "maximum": 5000}
                        },
                        "additionalProperties": false
                    }
                },
                "required": ["photos", "details"],
                "additionalProperties": false
            },
            "outputSchema": synchronous_schema(json!({
                "flyer": {"type": "object"},
                "social": {"type": "object"},
                "story": {"type": "object"},
                "captions": {"type": "object"},
                "fair_housing": {"type": "object"},
                "staged_disclosure": {"type": ["string", "null"]},
                "brand": {"type": "object"}
            }))
        },
        {
            "name": "reel",
            "title": "Make a listing reel",
            "description": "Makes a vertical listing video ready to post (1080x1920, 30 fps, H.264) from 1 to 3 \
                listing photos and the listing details: each photo framed around its subject with a slow push-in, \
                cross-fades, captions (price, beds and baths, square feet, address, headline) inside the platforms' \
                safe zone, an end card with the agent's contact, and optional voiceover and music. Also a cover JPEG \
                and the captions as SRT and WebVTT. Billed; returns a reel id at once; poll reel_status (not task_status).",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "photos": photos_schema(3, false, "The stills in order: URLs, or objects with url and an optional caption."),
                    "details": details_schema(&REEL_DETAIL_FIELDS, "The details the reel shows; every field optional."),
                    "params": {
                        "type": "object",
                        "properties": {
                            "duration": {"type": "number", "minimum": 6, "maximum": 30, "description": "Seconds (default 15)."},
                            "voiceover": {"type": "boolean", "description": "Speak a script written from the details."},
                            "music": {"type": "boolean", "description": "A music bed, ducked under the voiceover."},
                            "brand": {
                                "type": "object",
                                "properties": {
                                    "primary": {"type": "string", "pattern": "^#[0-9A-Fa-f]{6}$"},
                                    "accent": {"type": "string", "pattern": "^#[0-9A-Fa-f]{6}$"}
                                },
                                "additionalProperties": false
                            }
                        },
                        "additionalProperties": false
                    }
                },
                "required": ["photos"],
                "additionalProperties": false
            },
            "outputSchema": queued_schema_for("reel_id", "reel_status", "reel", "reel")
        },
        {
            "name": "reel_status",
            "title": "Check a reel",
            "description": "Returns the status of a reel started by the reel tool: queued, running, succeeded (with the \
                video, cover and caption file URLs, the billed cost and the captions with their times) or failed \
                (with the reason). Output URLs are signed and work without the API key for an hour.",
            "inputSchema": {
                "type": "object",
                "properties": {"reel_id": {"type": "string", "description": "The reel_id returned by reel."}},
                "required": ["reel_id"],
                "additionalProperties": false
            },
            "outputSchema": {
                "type": "object",
                "properties": {
                    "reel_id": {"type": "string"},
                    "status": {"type": "string", "enum": ["queued", "running", "succeeded", "failed"]},
                    "price_usd": {"type": "string"},
                    "cost_usd": {"type": ["string", "null"]},
                    "error": {"type": ["string", "null"]},
                    "outputs": {"type": "array", "items": output_schema()},
                    "result": {"type": ["object", "null"], "description": "Once succeeded: the video's facts and every caption with its times."}
                },
                "required": ["reel_id", "status", "price_usd", "cost_usd", "error", "outputs", "result"],
                "additionalProperties": false
            }
        },
        {
            "name": "task_status",
            "title": "Check a task",
            "description": "Returns the status of a task started by generate, listing_enhance, lot_trace or listing_kit: queued, \
                running, succeeded (with output URLs, their media type, the billed cost and, for recipes, their \
                result) or failed (with the reason). Output URLs are signed and work without the API key for an hour.",
            "inputSchema": {
                "type": "object",
                "properties": {"id": {"type": "string", "description": "The task_id returned by generate, listing_enhance, lot_trace or listing_kit."}},
                "required": ["id"],
                "additionalProperties": false
            },
            "outputSchema": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "model": {"type": "string"},
                    "status": {"type": "string", "enum": ["queued", "running", "succeeded", "failed"]},
                    "price_usd": {"type": "string"},
                    "cost_usd": {"type": ["string", "null"]},
                    "error": {"type": ["string", "null"]},
                    "sandbox": {"type": ["boolean", "null"], "description": "Once succeeded: whether the outputs are sandbox media from a built-in engine."},
                    "outputs": {"type": "array", "items": output_schema()},
                    "result": {"type": ["object", "null"], "description": "Once a recipe has succeeded: its structured result."}
                },
                "required": ["id", "model", "status", "price_usd", "cost_usd", "error", "sandbox", "outputs", "result"],
                "additionalProperties": false
            }
        }
    ]);
    if let Some(tools) = tools.as_array_mut() {
        tools.iter_mut().for_each(annotate);
    }
    json!({ "tools": tools })
}

/// Runs `tools/call`.
pub(crate) async fn call(
    service: &Service,
    caller: &Caller,
    params: Params<'static>,
) -> Result<Value, ErrorObjectOwned> {
    let call: CallParams = params.parse().map_err(|e| {
        ErrorObjectOwned::owned(codes::INVALID_PARAMS, format!("tools/call needs name and arguments: {e}"), None::<()>)
    })?;
    let arguments = Value::Object(call.arguments.unwrap_or_default());
    let outcome = match call.name.as_str() {
        "list_models" => list_models(service, arguments),
        "generate" => generate(service, caller, arguments).await,
        "listing_enhance" => listing_enhance(service, caller, arguments).await,
        "lot_trace" => lot_trace(service, caller, arguments).await,
        "listing_kit" => listing_kit(service, caller, arguments).await,
        "reel" => reel(service, caller, arguments).await,
        "reel_status" => reel_status(service, caller, arguments).await,
        "task_status" => task_status(service, caller, arguments).await,
        other => {
            return Err(ErrorObjectOwned::owned(
                codes::INVALID_PARAMS,
                format!("unknown tool {other:?}; tools/list names the tools"),
                None::<()>,
            ))
        }
    };
    Ok(match outcome {
        Ok(structured) => json!({
            "content": [{"type": "text", "text": structured.to_string()}],
            "structuredContent": structured,
            "isError": false
        }),
        Err(message) => json!({"content": [{"type": "text", "text": message}], "isError": true}),
    })
}

fn arguments<T: serde::de::DeserializeOwned>(tool: &str, value: Value) -> Result<T, String> {
    serde_json::from_value(value).map_err(|e| format!("invalid arguments for {tool}: {e}"))
}

fn explain(error: ServiceError) -> String {
    match error {
        ServiceError::PaymentRequired(m) => format!("{m}. The job was not started and nothing was billed."),
        ServiceError::BadRequest(m) => {
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
        ServiceError::ProviderFailed(m) => {
            format!("{m}. Nothing was billed; try again later.")
        }
        other => other.to_string(),
    }
}

fn list_models(service: &Service, value: Value) -> Result<Value, String> {
    let args: ListModelsArgs = arguments("list_models", value)?;
    let models: Vec<Value> = service
        .list_models()
        .models
        .into_iter()
        .filter_map(|m| serde_json::to_value(m).ok())
        .filter(|m| args.family.as_deref().is_none_or(|f| m["family"] == f))
        .collect();
    Ok(json!({ "models": models }))
}

fn queued(task: QueuedTask) -> Value {
    json!({
        "task_id": task.id,
        "status": task.status,
        "price_usd": task.price_usd,
        "poll_url": task.poll_url,
        "next_step": format!("call task_status with id {} until status is succeeded or failed", task.id),
    })
}

async fn generate(service: &Service, caller: &Caller, value: Value) -> Result<Value, String> {
    let request: GenerateRequest = arguments("generate", value)?;
    service.submit(caller, request).await.map(queued).map_err(explain)
}

async fn listing_enhance(service: &Service, caller: &Caller, value: Value) -> Result<Value, String> {
    let request: ListingEnhanceRequest = arguments("listing_enhance", value)?;
    service.listing_enhance(caller, request).await.map(queued).map_err(explain)
}

async fn lot_trace(service: &Service, caller: &Caller, value: Value) -> Result<Value, String> {
    let request: LotTraceRequest = arguments("lot_trace", value)?;
    synchronous(service.lot_trace(caller, request).await.map_err(explain)?)
}

async fn listing_kit(service: &Service, caller: &Caller, value: Value) -> Result<Value, String> {
    let request: ListingKitRequest = arguments("listing_kit", value)?;
    let mut answer = synchronous(service.listing_kit(caller, request).await.map_err(explain)?)?;
    // Where each line of text went is for print checks, not for an agent's context.
    if let Some(answer) = answer.as_object_mut() {
        answer.remove("layout");
    }
    Ok(answer)
}

/// A synchronous recipe's answer: its result with the task's id, status, cost and outputs, or the
/// queued task to poll.
fn synchronous(outcome: SyncOutcome) -> Result<Value, String> {
    match outcome {
        SyncOutcome::Pending(task) => Ok(queued(task)),
        SyncOutcome::Finished(finished) => {
            let mut answer = finished.result;
            answer.insert("task_id".into(), json!(finished.task.id));
            answer.insert("status".into(), json!(finished.task.status));
            answer.insert("cost_usd".into(), json!(finished.task.cost_usd));
            answer.insert("outputs".into(), json!(outputs(finished.task.output)));
            Ok(Value::Object(answer))
        }
    }
}

fn outputs(output: Option<Vec<service::views::OutputView>>) -> Vec<Value> {
    output
        .unwrap_or_default()
        .into_iter()
        .map(|o| json!({"url": o.url, "type": o.kind, "content_type": o.content_type}))
        .collect()
}

async fn reel(service: &Service, caller: &Caller, value: Value) -> Result<Value, String> {
    let request: ReelRequest = arguments("reel", value)?;
    let queued = service.reel(caller, request).await.map_err(explain)?;
    Ok(json!({
        "reel_id": queued.reel_id,
        "status": queued.status,
        "price_usd": queued.price_usd,
        "poll_url": queued.poll_url,
        "next_step": format!(
            "call reel_status with reel_id {} every few seconds until status is succeeded or failed",
            queued.reel_id
        ),
    }))
}

async fn reel_status(service: &Service, caller: &Caller, value: Value) -> Result<Value, String> {
    let args: ReelStatusArgs = arguments("reel_status", value)?;
    let reel: ReelView = service.reel_status(caller, &args.reel_id).await.map_err(|e| match e {
        ServiceError::NotFound(_) => {
            format!("no reel {:?} for this key; use the reel_id returned by reel", args.reel_id)
        }
        other => explain(other),
    })?;
    Ok(json!({
        "reel_id": reel.reel_id,
        "status": reel.status,
        "price_usd": reel.price_usd,
        "cost_usd": reel.cost_usd,
        "error": reel.error,
        "outputs": outputs(reel.output),
        "result": reel.result,
    }))
}

async fn task_status(service: &Service, caller: &Caller, value: Value) -> Result<Value, String> {
    let args: TaskStatusArgs = arguments("task_status", value)?;
    let task: TaskView = service.task(caller, &args.id).await.map_err(|e| match e {
        ServiceError::NotFound(_) if args.id.starts_with("reel_") => {
            format!("{:?} is a reel; check it with reel_status", args.id)
        }
        ServiceError::NotFound(_) => {
            format!("no task {:?} for this key; use the task_id returned by generate", args.id)
        }
        other => explain(other),
    })?;
    Ok(json!({
        "id": task.id,
        "model": task.model,
        "status": task.status,
        "price_usd": task.price_usd,
        "cost_usd": task.cost_usd,
        "error": task.error,
        "sandbox": task.sandbox,
        "outputs": outputs(task.output),
        "result": task.result,
    }))
}
