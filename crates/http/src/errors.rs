//! The one mapping from service errors to HTTP (the status of each [`ErrorCode`]), and the
//! middleware that turns every other error response (actix's own: unknown route, wrong method,
//! oversized body) into the JSON error body.

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::ServiceResponse;
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::middleware::ErrorHandlerResponse;
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;
use service::{ErrorCode, ServiceError};

/// The body of every error response.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// Human-readable message saying what went wrong and what to do.
    pub error: String,
    /// Stable machine-readable code of the error; the message may be reworded, the code not.
    pub code: ErrorCode,
}

/// Realm announced in `WWW-Authenticate` on 401 answers.
pub const REALM: &str = "media-gateway";

/// The HTTP status every error code is answered with.
pub fn status_of(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::InvalidInput | ErrorCode::UnknownModel => StatusCode::BAD_REQUEST,
        ErrorCode::Unauthorized => StatusCode::UNAUTHORIZED,
        ErrorCode::SpendCapReached | ErrorCode::FreeAllowanceUsed => StatusCode::PAYMENT_REQUIRED,
        ErrorCode::Forbidden => StatusCode::FORBIDDEN,
        ErrorCode::NotFound => StatusCode::NOT_FOUND,
        ErrorCode::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
        ErrorCode::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        ErrorCode::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        ErrorCode::AlreadyFinished => StatusCode::CONFLICT,
        ErrorCode::RateLimited => StatusCode::TOO_MANY_REQUESTS,
        ErrorCode::IdempotencyKeyReused => StatusCode::UNPROCESSABLE_ENTITY,
        ErrorCode::Expired => StatusCode::GONE,
        ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        ErrorCode::ProviderFailed | ErrorCode::RecipeFailed => StatusCode::BAD_GATEWAY,
        ErrorCode::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
    }
}

/// The codes answered with `status`, for the OpenAPI document.
pub(crate) fn codes_of(status: StatusCode) -> Vec<ErrorCode> {
    ErrorCode::ALL.into_iter().filter(|code| status_of(*code) == status).collect()
}

/// The `Retry-After` of a 503: a database restart or failover takes seconds.
const UNAVAILABLE_RETRY_AFTER_SECS: u64 = 2;

/// An error answered as `{"error": "...", "code": "..."}` with the status of its code.
#[derive(Debug)]
pub struct ApiError {
    code: ErrorCode,
    message: String,
    /// Seconds until a refused attempt may succeed, sent as `Retry-After`.
    retry_after_secs: Option<u64>,
    /// On a 401 of a protected resource: where its metadata is (RFC 9728 §5.1).
    resource_metadata: Option<String>,
}

impl ApiError {
    /// An error with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ApiError {
        ApiError { code, message: message.into(), retry_after_secs: None, resource_metadata: None }
    }

    /// This error, whose 401 challenge points OAuth clients at `metadata_url`.
    pub fn with_resource_metadata(self, metadata_url: String) -> ApiError {
        ApiError { resource_metadata: Some(metadata_url), ..self }
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
            return ApiError::new(ErrorCode::Internal, "internal error; it has been logged");
        }
        let retry_after_secs = match &e {
            ServiceError::TooManyRequests { retry_after_secs, .. } => Some(*retry_after_secs),
            // The database is restarting or failing over: worth another try in a moment.
            ServiceError::Unavailable(_) => Some(UNAVAILABLE_RETRY_AFTER_SECS),
            _ => None,
        };
        ApiError { retry_after_secs, ..ApiError::new(e.code(), e.to_string()) }
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        status_of(self.code)
    }

    fn error_response(&self) -> HttpResponse {
        let mut response = HttpResponse::build(self.status_code());
        if self.code == ErrorCode::Unauthorized {
            let challenge = match &self.resource_metadata {
                Some(url) => format!("Bearer realm=\"{REALM}\", resource_metadata=\"{url}\""),
                None => format!("Bearer realm=\"{REALM}\""),
            };
            response.insert_header((header::WWW_AUTHENTICATE, challenge));
        }
        if let Some(seconds) = self.retry_after_secs {
            response.insert_header((header::RETRY_AFTER, seconds));
        }
        response.json(ErrorBody { error: self.message.clone(), code: self.code })
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
    let body = ErrorBody { error: message, code: code_for_status(status) };
    let body = serde_json::to_string(&body).unwrap_or_else(|_| "{}".into());
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    let response = response.set_body(BoxBody::new(body));
    Ok(ErrorHandlerResponse::Response(ServiceResponse::new(req, response).map_into_right_body()))
}

/// The code of an error response actix made on its own, from its status. The statuses actix
/// answers are those of the table; any other client error reads as bad input and any other
/// server error as ours.
fn code_for_status(status: StatusCode) -> ErrorCode {
    match status {
        StatusCode::UNAUTHORIZED => ErrorCode::Unauthorized,
        StatusCode::FORBIDDEN => ErrorCode::Forbidden,
        StatusCode::NOT_FOUND => ErrorCode::NotFound,
        StatusCode::METHOD_NOT_ALLOWED => ErrorCode::MethodNotAllowed,
        StatusCode::PAYLOAD_TOO_LARGE => ErrorCode::PayloadTooLarge,
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ErrorCode::UnsupportedMediaType,
        StatusCode::TOO_MANY_REQUESTS => ErrorCode::RateLimited,
        StatusCode::SERVICE_UNAVAILABLE => ErrorCode::Unavailable,
        s if s.is_server_error() => ErrorCode::Internal,
        _ => ErrorCode::InvalidInput,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_one_error_status_and_actix_statuses_map_back() {
        for code in ErrorCode::ALL {
            let status = status_of(code);
            assert!(status.is_client_error() || status.is_server_error(), "{code:?}");
            assert!(codes_of(status).contains(&code));
        }
        for status in [404, 405, 413, 415] {
            let status = StatusCode::from_u16(status).unwrap();
            assert_eq!(status_of(code_for_status(status)), status);
        }
    }
}
