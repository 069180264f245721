//! The one mapping from service errors to HTTP, and the middleware that turns every other error
//! response (actix's own: unknown route, wrong method, oversized body) into the JSON error body.

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::ServiceResponse;
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::middleware::ErrorHandlerResponse;
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;
use service::ServiceError;

/// The body of every error response.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// Human-readable message saying what went wrong and what to do.
    pub error: String,
}

/// Realm announced in `WWW-Authenticate` on 401 answers.
pub const REALM: &str = "media-gateway";

/// An error answered as `{"error": "..."}` with its status.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    /// An error with `status` and `message`.
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError { status, message: message.into() }
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<ServiceError> for ApiError {
    fn from(e: ServiceError) -> Self {
        if let ServiceError::Internal(detail) = &e {
            tracing::error!(error = %detail, "internal error");
            return ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal error; it has been logged");
        }
        let status = StatusCode::from_u16(e.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        ApiError::new(status, e.to_string())
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        let mut response = HttpResponse::build(self.status);
        if self.status == StatusCode::UNAUTHORIZED {
            response.insert_header((header::WWW_AUTHENTICATE, format!("Bearer realm=\"{REALM}\"")));
        }
        response.json(ErrorBody { error: self.message.clone() })
    }
}

/// Replaces a non-JSON error response with the JSON error body, keeping its status and headers.
pub fn json_error_body<B: MessageBody + 'static>(
    res: ServiceResponse<B>,
) -> actix_web::Result<ErrorHandlerResponse<B>> {
    let content_type = res.response().headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
    let is_json = content_type.is_some_and(|v| v.starts_with("application/json"));
    // The console answers browsers with its own error pages.
    let is_console_page =
        console::is_console_path(res.request().path()) && content_type.is_some_and(|v| v.starts_with("text/html"));
    if is_json || is_console_page {
        return Ok(ErrorHandlerResponse::Response(res.map_into_left_body()));
    }
    let status = res.status();
    let message = match res.response().error() {
        Some(e) => describe(status, &e.to_string()),
        None => describe(status, ""),
    };
    let (req, mut response) = res.into_parts();
    let body = serde_json::to_string(&ErrorBody { error: message }).unwrap_or_else(|_| "{}".into());
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    let response = response.set_body(BoxBody::new(body));
    Ok(ErrorHandlerResponse::Response(ServiceResponse::new(req, response).map_into_right_body()))
}

fn describe(status: StatusCode, detail: &str) -> String {
    let base = match status {
        StatusCode::NOT_FOUND => "no such endpoint; see /openapi.json",
        StatusCode::METHOD_NOT_ALLOWED => "method not allowed on this endpoint; see /openapi.json",
        StatusCode::PAYLOAD_TOO_LARGE => "request body too large",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "send the body as JSON with Content-Type: application/json",
        s if s.is_server_error() => "internal error",
        _ => status.canonical_reason().unwrap_or("request failed"),
    };
    if detail.is_empty() || status.is_server_error() {
        base.to_string()
    } else {
        format!("{base}: {detail}")
    }
}
