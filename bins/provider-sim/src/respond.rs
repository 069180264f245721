//! Building answers: JSON bodies, the two protocols' error shapes, and raw media.

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::{Response, StatusCode};
use serde_json::{json, Value};

/// The body type of every answer.
pub(crate) type Body = Full<Bytes>;

/// An answer with `bytes` as its body, of MIME type `content_type`.
pub(crate) fn raw(status: StatusCode, content_type: &'static str, bytes: Bytes) -> Response<Body> {
    let mut response = Response::new(Full::new(bytes));
    *response.status_mut() = status;
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// A JSON answer.
pub(crate) fn json(status: StatusCode, value: &Value) -> Response<Body> {
    raw(status, "application/json", Bytes::from(value.to_string()))
}

/// A 200 answer that claims to be JSON but is only the first half of `value`'s text.
pub(crate) fn truncated_json(value: &Value) -> Response<Body> {
    let text = value.to_string();
    let mut cut = text.len() / 2;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    raw(StatusCode::OK, "application/json", Bytes::from(text[..cut].to_string()))
}

/// A fal error: `{"detail": ...}`.
pub(crate) fn fal_error(status: StatusCode, detail: Value) -> Response<Body> {
    json(status, &json!({ "detail": detail }))
}

/// A Replicate error: an RFC 7807 problem.
pub(crate) fn problem(status: StatusCode, title: &str, detail: &str) -> Response<Body> {
    let body = json!({"title": title, "detail": detail, "status": status.as_u16()});
    raw(status, "application/problem+json", Bytes::from(body.to_string()))
}

/// The status a refusal fault names; an out-of-range number refuses with 503.
pub(crate) fn refusal_status(code: u16) -> StatusCode {
    StatusCode::from_u16(code).unwrap_or(StatusCode::SERVICE_UNAVAILABLE)
}

/// The standard wording of `status`.
pub(crate) fn reason(status: StatusCode) -> &'static str {
    status.canonical_reason().unwrap_or("Error")
}

/// An RFC 3339 time with milliseconds, as both providers report times.
pub(crate) fn rfc3339(at: std::time::SystemTime) -> String {
    humantime::format_rfc3339_millis(at).to_string()
}

/// A JSON answer made from any serializable value.
pub(crate) fn json_of<T: serde::Serialize>(status: StatusCode, value: &T) -> Response<Body> {
    match serde_json::to_vec(value) {
        Ok(bytes) => raw(status, "application/json", Bytes::from(bytes)),
        Err(e) => json(StatusCode::INTERNAL_SERVER_ERROR, &json!({"error": e.to_string()})),
    }
}
