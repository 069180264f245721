//! fal's queue: `POST {queue}/{app}` answers a request id with its status, result and cancel
//! URLs; the status reads `IN_QUEUE`, `IN_PROGRESS` or `COMPLETED`; the result holds files with
//! URLs; errors are `{"detail": ...}`.

use crate::answers::{clip, error_reason, fal_files, text};
use crate::transport::{same_origin, Transport};
use crate::{Completion, FalSettings, Handle, Progress, ProviderError, ProviderName};
use reqwest::Method;
use serde_json::Value;

const FAL: ProviderName = ProviderName::Fal;

pub(crate) fn auth(fal: &FalSettings) -> String {
    format!("Key {}", fal.key)
}

fn malformed(reason: impl Into<String>) -> ProviderError {
    ProviderError::Malformed { provider: FAL, reason: reason.into() }
}

pub(crate) async fn submit(
    transport: &Transport,
    fal: &FalSettings,
    app: &str,
    input: &Value,
    webhook: Option<&str>,
) -> Result<Handle, ProviderError> {
    let base = format!("{}/{app}", fal.queue_url.trim_end_matches('/'));
    let url = match webhook {
        Some(hook) => url::Url::parse_with_params(&base, [("fal_webhook", hook)])
            .map_err(|e| malformed(format!("the app URL {base} is not valid: {e}")))?
            .to_string(),
        None => base,
    };
    let answer = transport.call(FAL, Method::POST, &url, &auth(fal), Some(input), true).await?;
    read_submission(fal, &answer).map_err(malformed)
}

/// The accepted request's id and URLs, each of which must be on the queue's own origin.
fn read_submission(fal: &FalSettings, answer: &Value) -> Result<Handle, String> {
    let own = |pointer: &str| -> Result<String, String> {
        let url = text(answer, pointer)?;
        if same_origin(&fal.queue_url, url) {
            Ok(url.to_string())
        } else {
            Err(format!("`{}` {url:?} is not on the queue's origin", pointer.trim_start_matches('/')))
        }
    };
    Ok(Handle {
        provider: FAL,
        request_id: text(answer, "/request_id")?.to_string(),
        status_url: own("/status_url")?,
        result_url: Some(own("/response_url")?),
        cancel_url: answer.get("cancel_url").map(|_| own("/cancel_url")).transpose()?,
    })
}

pub(crate) async fn poll(transport: &Transport, fal: &FalSettings, handle: &Handle) -> Result<Progress, ProviderError> {
    let status = transport.call(FAL, Method::GET, &handle.status_url, &auth(fal), None, false).await?;
    match status.get("status").and_then(Value::as_str) {
        Some("IN_QUEUE") => Ok(Progress::Queued { position: status.get("queue_position").and_then(Value::as_u64) }),
        Some("IN_PROGRESS") => Ok(Progress::Running),
        Some("COMPLETED") => {
            if let Some(error) = status.get("error").and_then(Value::as_str) {
                return Ok(Progress::Failed(clip(error)));
            }
            let seconds = status.pointer("/metrics/inference_time").and_then(Value::as_f64);
            let url = handle.result_url.as_deref().ok_or_else(|| malformed("the request has no result URL"))?;
            match transport.call(FAL, Method::GET, url, &auth(fal), None, false).await {
                Ok(result) => Ok(Progress::Succeeded(Completion {
                    media: read_result(&result).map_err(malformed)?,
                    provider_seconds: seconds,
                })),
                // The result of a failed request is its error (422 with the reason, for example).
                Err(ProviderError::Refused { status: 400, reason, .. }) if reason.contains("in progress") => {
                    Ok(Progress::Running)
                }
                Err(ProviderError::Refused { reason, .. }) => Ok(Progress::Failed(reason)),
                Err(other) => Err(other),
            }
        }
        Some(other) => Err(malformed(format!("unknown status {:?}", clip(other)))),
        None => Err(malformed("the status answer has no `status`")),
    }
}

/// The files of a result; a result without any is malformed.
fn read_result(result: &Value) -> Result<Vec<crate::MediaRef>, String> {
    let mut media = Vec::new();
    fal_files(result, &mut media);
    if media.is_empty() {
        return Err("the result names no file".into());
    }
    Ok(media)
}

/// A callback's request id and outcome: `{"request_id", "status": "OK", "payload": RESULT}` or
/// `{"status": "ERROR", "error", "payload": {"detail": ...}}`.
pub(crate) fn read_webhook(body: &[u8]) -> Result<(String, Progress), String> {
    let value: Value = serde_json::from_slice(body).map_err(|e| format!("the body is not JSON: {e}"))?;
    let request_id = text(&value, "/request_id")?.to_string();
    let progress = match value.get("status").and_then(Value::as_str) {
        Some("OK") => Progress::Succeeded(Completion {
            media: read_result(value.get("payload").unwrap_or(&Value::Null))?,
            provider_seconds: None,
        }),
        Some("ERROR") => {
            let detail = value.get("payload").and_then(|p| error_reason(p.to_string().as_bytes()));
            let error = value.get("error").and_then(Value::as_str).unwrap_or("the request failed");
            Progress::Failed(clip(&match detail {
                Some(detail) => format!("{error}: {detail}"),
                None => error.to_string(),
            }))
        }
        _ => return Err("the callback's `status` is neither OK nor ERROR".into()),
    };
    Ok((request_id, progress))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn settings() -> FalSettings {
        FalSettings {
            key: "k".into(),
            queue_url: "https://queue.fal.run".into(),
            jwks_url: String::new(),
            user_id: None,
        }
    }

    #[test]
    fn submissions_keep_the_urls_given_and_refuse_foreign_ones() {
        let answer = json!({
            "request_id": "r1",
            "status_url": "https://queue.fal.run/fal-ai/flux-pro/requests/r1/status",
            "response_url": "https://queue.fal.run/fal-ai/flux-pro/requests/r1",
            "cancel_url": "https://queue.fal.run/fal-ai/flux-pro/requests/r1/cancel",
        });
        let handle = read_submission(&settings(), &answer).unwrap();
        assert_eq!(handle.status_url, "https://queue.fal.run/fal-ai/flux-pro/requests/r1/status");
        let mut foreign = answer.clone();
        foreign["status_url"] = json!("http://169.254.169.254/latest/meta-data");
        assert!(read_submission(&settings(), &foreign).unwrap_err().contains("origin"));
        assert!(read_submission(&settings(), &json!({"request_id": "r1"})).is_err());
    }

    #[test]
    fn callbacks_read_both_outcomes() {
        let ok =
            json!({"request_id": "r1", "status": "OK", "payload": {"images": [{"url": "https://v3.fal.media/x.png"}]}});
        let (id, progress) = read_webhook(ok.to_string().as_bytes()).unwrap();
        assert_eq!(id, "r1");
        assert!(matches!(progress, Progress::Succeeded(c) if c.media.len() == 1));
        let error = json!({"request_id": "r1", "status": "ERROR", "error": "Invalid status code: 422", "payload": {"detail": [{"loc": ["body", "prompt"], "msg": "flagged"}]}});
        let (_, progress) = read_webhook(error.to_string().as_bytes()).unwrap();
        assert_eq!(progress, Progress::Failed("Invalid status code: 422: body.prompt: flagged".into()));
        assert!(read_webhook(b"{\"request_id\": \"r1\", \"status\": 3}").is_err());
    }
}
