//! Replicate's predictions: `POST /v1/models/{owner}/{name}/predictions` (or `/v1/predictions`
//! with a version) answers a prediction with its `urls.get` and `urls.cancel`; its status runs
//! `starting`, `processing`, then `succeeded` (with `output`), `failed` (with `error`) or
//! `canceled`; errors are RFC 7807 problems.

use crate::answers::{clip, output_urls, text};
use crate::transport::{same_origin, Transport};
use crate::{Completion, Handle, Progress, ProviderError, ProviderName, ReplicateSettings};
use reqwest::Method;
use serde_json::{json, Value};

const REPLICATE: ProviderName = ProviderName::Replicate;

pub(crate) fn auth(replicate: &ReplicateSettings) -> String {
    format!("Bearer {}", replicate.token)
}

fn malformed(reason: impl Into<String>) -> ProviderError {
    ProviderError::Malformed { provider: REPLICATE, reason: reason.into() }
}

pub(crate) async fn submit(
    transport: &Transport,
    replicate: &ReplicateSettings,
    model: &str,
    version: Option<&str>,
    input: Value,
    webhook: Option<&str>,
) -> Result<Handle, ProviderError> {
    let api = replicate.api_url.trim_end_matches('/');
    let (url, mut body) = match version {
        Some(version) => (format!("{api}/v1/predictions"), json!({"version": version, "input": input})),
        None => (format!("{api}/v1/models/{model}/predictions"), json!({"input": input})),
    };
    if let Some(hook) = webhook {
        body["webhook"] = json!(hook);
        body["webhook_events_filter"] = json!(["completed"]);
    }
    let answer = transport.call(REPLICATE, Method::POST, &url, &auth(replicate), Some(&body), true).await?;
    read_submission(replicate, &answer).map_err(malformed)
}

pub(crate) fn read_submission(replicate: &ReplicateSettings, answer: &Value) -> Result<Handle, String> {
    let own = |pointer: &str| -> Result<String, String> {
        let url = text(answer, pointer)?;
        if same_origin(&replicate.api_url, url) {
            Ok(url.to_string())
        } else {
            Err(format!("`{}` {url:?} is not on the API's origin", pointer.trim_start_matches('/')))
        }
    };
    Ok(Handle {
        provider: REPLICATE,
        request_id: text(answer, "/id")?.to_string(),
        status_url: own("/urls/get")?,
        result_url: None,
        cancel_url: answer.pointer("/urls/cancel").map(|_| own("/urls/cancel")).transpose()?,
    })
}

pub(crate) async fn poll(
    transport: &Transport,
    replicate: &ReplicateSettings,
    handle: &Handle,
) -> Result<Progress, ProviderError> {
    let prediction = transport.call(REPLICATE, Method::GET, &handle.status_url, &auth(replicate), None, false).await?;
    read_prediction(&prediction).map_err(malformed)
}

/// Where a prediction stands.
pub(crate) fn read_prediction(prediction: &Value) -> Result<Progress, String> {
    match prediction.get("status").and_then(Value::as_str) {
        Some("starting") => Ok(Progress::Queued { position: None }),
        Some("processing") => Ok(Progress::Running),
        Some("succeeded") => {
            let mut media = Vec::new();
            output_urls(prediction.get("output").unwrap_or(&Value::Null), &mut media);
            if media.is_empty() {
                return Err("the prediction succeeded but its output names no file".into());
            }
            let seconds = prediction.pointer("/metrics/predict_time").and_then(Value::as_f64);
            Ok(Progress::Succeeded(Completion { media, provider_seconds: seconds }))
        }
        Some("failed") => Ok(Progress::Failed(clip(
            prediction.get("error").and_then(Value::as_str).unwrap_or("the prediction failed"),
        ))),
        Some("canceled" | "aborted") => Ok(Progress::Canceled),
        Some(other) => Err(format!("unknown status {:?}", clip(other))),
        None => Err("the prediction has no `status`".into()),
    }
}

/// A callback (the prediction itself): its id and where it stands.
pub(crate) fn read_webhook(body: &[u8]) -> Result<(String, Progress), String> {
    let prediction: Value = serde_json::from_slice(body).map_err(|e| format!("the body is not JSON: {e}"))?;
    Ok((text(&prediction, "/id")?.to_string(), read_prediction(&prediction)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predictions_map_to_progress() {
        let succeeded = json!({"id": "p", "status": "succeeded", "output": ["https://replicate.delivery/a.png"], "metrics": {"predict_time": 2.5}});
        match read_prediction(&succeeded).unwrap() {
            Progress::Succeeded(c) => assert_eq!(c.provider_seconds, Some(2.5)),
            other => panic!("{other:?}"),
        }
        assert_eq!(read_prediction(&json!({"status": "starting"})).unwrap(), Progress::Queued { position: None });
        assert_eq!(read_prediction(&json!({"status": "processing"})).unwrap(), Progress::Running);
        assert_eq!(read_prediction(&json!({"status": "aborted"})).unwrap(), Progress::Canceled);
        assert_eq!(
            read_prediction(&json!({"status": "failed", "error": "CUDA out of memory"})).unwrap(),
            Progress::Failed("CUDA out of memory".into())
        );
        assert!(read_prediction(&json!({"status": "succeeded", "output": null})).is_err());
        assert!(read_prediction(&json!({"status": 42})).is_err());
    }

    #[test]
    fn submissions_must_point_at_the_api() {
        let settings =
            ReplicateSettings { token: "t".into(), api_url: "https://api.replicate.com".into(), webhook_secret: None };
        let ok = json!({"id": "p", "status": "starting", "urls": {"get": "https://api.replicate.com/v1/predictions/p", "cancel": "https://api.replicate.com/v1/predictions/p/cancel"}});
        assert_eq!(read_submission(&settings, &ok).unwrap().request_id, "p");
        let foreign = json!({"id": "p", "urls": {"get": "http://10.0.0.1/v1/predictions/p"}});
        assert!(read_submission(&settings, &foreign).is_err());
    }
}
