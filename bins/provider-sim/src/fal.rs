//! fal.ai's queue API: submit to an app path, poll `status_url`, fetch `response_url`, cancel at
//! `cancel_url`, and an optional signed webhook. As on fal, the request URLs keep only the first
//! two segments of the app path, so a client must use the URLs it is given.

use crate::ids::random_hex_id;
use crate::jobs::{Api, Job, Phase};
use crate::media::{self, Kind, MediaError};
use crate::request::{is_web_url, ApiRequest};
use crate::respond::{fal_error, json, reason, refusal_status, rfc3339, truncated_json, Body};
use crate::signing::unix_now;
use crate::state::{Shared, Submission};
use crate::stats::bump;
use crate::webhooks::{self, Callback};
use hyper::{Method, Response, StatusCode};
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::Instant;

/// Answers a request to the fal API.
pub(crate) async fn handle(shared: &Arc<Shared>, request: ApiRequest) -> Response<Body> {
    let expected = format!("Key {}", shared.config.fal_key);
    if request.authorization() != Some(expected.as_str()) {
        return fal_error(StatusCode::UNAUTHORIZED, json!("Invalid or missing key"));
    }
    let segments = request.segments();
    match (&request.method, segments.as_slice()) {
        (&Method::PUT, [owner, app, "requests", id, "cancel"]) => cancel(shared, &format!("{owner}/{app}"), id),
        (&Method::GET, [owner, app, "requests", id, "status"]) => status(shared, &format!("{owner}/{app}"), id),
        (&Method::GET, [owner, app, "requests", id]) => result(shared, &format!("{owner}/{app}"), id).await,
        (&Method::POST, [_, _, ..]) => submit(shared, &request, &segments),
        _ => fal_error(StatusCode::NOT_FOUND, json!("Not Found")),
    }
}

/// `{url}/{owner}/{app}/requests/{id}`: the job's result URL, and the base of the others.
fn base_url(shared: &Shared, prefix: &str, id: &str) -> String {
    format!("{}/{prefix}/requests/{id}", shared.base_url)
}

/// The fal job `id` polled under `prefix`; a job is only found under the prefix it was given.
fn find(shared: &Shared, prefix: &str, id: &str) -> Option<Arc<Job>> {
    shared.jobs.get(id).filter(|job| matches!(&job.api, Api::Fal { prefix: p } if p == prefix))
}

fn not_found() -> Response<Body> {
    fal_error(StatusCode::NOT_FOUND, json!("Request not found"))
}

/// A FastAPI-style validation error about `loc`.
fn validation(loc: Value, msg: &str, kind: &str) -> Value {
    json!([{"loc": loc, "msg": msg, "type": kind}])
}

/// A fal-style id: 32 random hex digits grouped like a UUID.
fn request_id() -> String {
    let hex = random_hex_id();
    format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
}

/// `POST /{app_path}[?fal_webhook=URL]`.
fn submit(shared: &Arc<Shared>, request: &ApiRequest, segments: &[&str]) -> Response<Body> {
    if let Some(code) = shared.faults().refuse_submit {
        let status = refusal_status(code);
        return fal_error(status, json!(reason(status)));
    }
    let webhook = match request.query_param("fal_webhook") {
        Some(url) if !is_web_url(&url) => {
            let detail = validation(json!(["query", "fal_webhook"]), "Input should be a valid URL", "url_parsing");
            return fal_error(StatusCode::UNPROCESSABLE_ENTITY, detail);
        }
        webhook => webhook,
    };
    let input = match serde_json::from_slice::<Value>(&request.body) {
        Ok(Value::Object(input)) => input,
        Ok(_) => {
            let detail = validation(json!(["body"]), "Input should be a valid dictionary", "dict_type");
            return fal_error(StatusCode::UNPROCESSABLE_ENTITY, detail);
        }
        Err(_) => {
            let detail = validation(json!(["body"]), "JSON decode error", "json_invalid");
            return fal_error(StatusCode::UNPROCESSABLE_ENTITY, detail);
        }
    };
    let prefix = format!("{}/{}", segments[0], segments[1]);
    let id = request_id();
    let submission = Submission {
        id: id.clone(),
        api: Api::Fal { prefix: prefix.clone() },
        input,
        webhook,
        kind: Kind::of(&segments.join("/")),
    };
    let job = shared.create_job(submission);
    webhooks::deliver_when_done(shared, &job, signed_callback);
    let base = base_url(shared, &prefix, &id);
    json(
        StatusCode::OK,
        &json!({
            "request_id": id,
            "response_url": base,
            "status_url": format!("{base}/status"),
            "cancel_url": format!("{base}/cancel"),
            "queue_position": shared.jobs.queued_before(job.created, Instant::now()),
        }),
    )
}

/// `GET .../status`.
fn status(shared: &Shared, prefix: &str, id: &str) -> Response<Body> {
    bump(&shared.counters.status_polls);
    if shared.take_status_error() {
        return fal_error(StatusCode::SERVICE_UNAVAILABLE, json!("Service temporarily unavailable"));
    }
    let Some(job) = find(shared, prefix, id) else { return not_found() };
    if job.mark_polled() {
        bump(&shared.counters.jobs_polled);
    }
    if shared.faults().malformed {
        return json(StatusCode::OK, &json!({"status": 42}));
    }
    let now = Instant::now();
    let base = base_url(shared, prefix, id);
    let body = match job.phase(now) {
        Phase::Queued => json!({
            "status": "IN_QUEUE",
            "queue_position": shared.jobs.queued_before(job.created, now),
            "response_url": base,
        }),
        Phase::Running { started } => json!({
            "status": "IN_PROGRESS",
            "logs": [{"message": "Generating", "timestamp": rfc3339(job.wall(started))}],
            "response_url": base,
        }),
        Phase::Succeeded { started, ended } | Phase::Failed { started, ended } => json!({
            "status": "COMPLETED",
            "logs": [],
            "metrics": {"inference_time": ended.duration_since(started).as_secs_f64()},
            "response_url": base,
        }),
        Phase::Canceled { started, at } => json!({
            "status": "COMPLETED",
            "logs": [],
            "metrics": {"inference_time": started.map_or(0.0, |s| at.duration_since(s).as_secs_f64())},
            "response_url": base,
        }),
    };
    json(StatusCode::OK, &body)
}

/// What the result URL answers for an ended job: the status and body.
async fn outcome(shared: &Shared, job: &Job, phase: Phase) -> (StatusCode, Value) {
    match phase {
        Phase::Queued | Phase::Running { .. } => {
            (StatusCode::BAD_REQUEST, json!({"detail": "Request is still in progress"}))
        }
        Phase::Failed { .. } => {
            let detail = validation(
                json!(["body", "prompt"]),
                "The prompt was flagged by the content checker",
                "content_policy_violation",
            );
            (StatusCode::UNPROCESSABLE_ENTITY, json!({"detail": detail}))
        }
        Phase::Canceled { .. } => (StatusCode::BAD_REQUEST, json!({"detail": "Request was cancelled"})),
        Phase::Succeeded { started, ended } => match result_body(shared, job, ended - started).await {
            Ok(body) => (StatusCode::OK, body),
            Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, json!({"detail": e.to_string()})),
        },
    }
}

/// The result of a succeeded job, in the shape of its media kind.
async fn result_body(shared: &Shared, job: &Job, run: std::time::Duration) -> Result<Value, MediaError> {
    let key = job.media;
    let urls: Vec<String> =
        job.tokens.iter().map(|token| format!("{}/media/{token}.{}", shared.base_url, key.kind.extension())).collect();
    let first = urls.first().cloned().unwrap_or_default();
    Ok(match key.kind {
        Kind::Image => {
            let images: Vec<Value> = urls
                .iter()
                .map(|url| {
                    json!({"url": url, "content_type": key.kind.content_type(), "width": key.width, "height": key.height})
                })
                .collect();
            json!({
                "images": images,
                "seed": job.seed,
                "has_nsfw_concepts": vec![false; urls.len()],
                "prompt": job.input.get("prompt").and_then(Value::as_str).unwrap_or(""),
                "timings": {"inference": run.as_secs_f64()},
            })
        }
        Kind::Video => {
            let file = shared.media.file(key, "").await?;
            json!({
                "video": {"url": first, "content_type": file.content_type, "file_name": "output.mp4", "file_size": file.bytes.len()},
                "seed": job.seed,
            })
        }
        Kind::Audio | Kind::Mp3 => {
            let file = shared.media.file(key, &speech_text(&job.input)).await?;
            let name = format!("speech.{}", key.kind.extension());
            json!({
                "audio": {"url": first, "content_type": file.content_type, "file_name": name, "file_size": file.bytes.len()},
            })
        }
    })
}

/// The text a speech job reads, as its media request has it.
fn speech_text(input: &Map<String, Value>) -> String {
    media::request_for(Kind::Audio, input).text
}

/// `GET .../requests/{id}`: the result.
async fn result(shared: &Shared, prefix: &str, id: &str) -> Response<Body> {
    bump(&shared.counters.result_fetches);
    let Some(job) = find(shared, prefix, id) else { return not_found() };
    let (status, body) = outcome(shared, &job, job.phase(Instant::now())).await;
    if shared.faults().malformed {
        return truncated_json(&body);
    }
    json(status, &body)
}

/// `PUT .../cancel`.
fn cancel(shared: &Shared, prefix: &str, id: &str) -> Response<Body> {
    let Some(job) = find(shared, prefix, id) else { return not_found() };
    bump(&shared.counters.cancels);
    if shared.jobs.cancel(&job) {
        json(StatusCode::ACCEPTED, &json!({"status": "CANCELLATION_REQUESTED"}))
    } else {
        json(StatusCode::BAD_REQUEST, &json!({"status": "ALREADY_COMPLETED"}))
    }
}

/// The callback body for an ended job.
async fn webhook_body(shared: &Shared, job: &Job) -> Value {
    let (status, payload) = outcome(shared, job, job.phase(Instant::now())).await;
    if status.is_success() {
        json!({"request_id": job.id, "gateway_request_id": job.id, "status": "OK", "payload": payload})
    } else {
        json!({
            "request_id": job.id,
            "gateway_request_id": job.id,
            "status": "ERROR",
            "error": format!("Invalid status code: {}", status.as_u16()),
            "payload": payload,
        })
    }
}

/// The callback for an ended job, signed with the fal key.
async fn signed_callback(shared: Arc<Shared>, job: Arc<Job>) -> Callback {
    let body = webhook_body(&shared, &job).await.to_string().into_bytes();
    let headers = shared.signer.fal_headers(&job.id, unix_now(), &body);
    Callback { body, headers }
}
