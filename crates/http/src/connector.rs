//! `POST /api/mcp`: the HTTP transport of the agent connector (MCP streamable HTTP, JSON answers).

use crate::errors::{ApiError, ErrorBody};
use actix_web::http::{header, StatusCode};
use actix_web::web::{Bytes, Data};
use actix_web::{HttpRequest, HttpResponse};
use mcp::{Connector, Reply};
use service::Service;

/// Header carrying the negotiated protocol version after initialization.
const PROTOCOL_HEADER: &str = "mcp-protocol-version";

/// The key from `Authorization: Bearer` or, for ready-made connector URLs, the `key` query parameter.
fn connector_token(req: &HttpRequest) -> Option<String> {
    crate::routes::bearer_token(req).map(str::to_string).or_else(|| {
        url::form_urlencoded::parse(req.query_string().as_bytes())
            .find(|(k, _)| k == "key")
            .map(|(_, v)| v.into_owned())
    })
}

/// Browsers send `Origin`; a page from a foreign origin must not drive the connector (DNS
/// rebinding). Requests without the header (agents, CLIs) pass.
fn origin_allowed(req: &HttpRequest, public_base_url: &str) -> bool {
    let Some(origin) = req.headers().get(header::ORIGIN).and_then(|v| v.to_str().ok()) else {
        return true;
    };
    let host = origin.split("://").nth(1).unwrap_or("").split(':').next().unwrap_or("");
    origin == public_base_url.trim_end_matches('/')
        || origin.starts_with(public_base_url.trim_end_matches('/'))
        || matches!(host, "localhost" | "127.0.0.1" | "[::1]")
}

/// The agent connector: one JSON-RPC 2.0 message per POST (MCP `initialize`, `ping`, `tools/list`,
/// `tools/call`). Authenticate with the bearer header or the `key` query parameter.
#[utoipa::path(
    post, path = "/api/mcp", tag = "Connector",
    params(("key" = Option<String>, Query, description = "API key, for clients that cannot send headers (keep the URL secret)")),
    request_body(content = Object, description = "A JSON-RPC 2.0 request or notification", content_type = "application/json"),
    responses(
        (status = 200, description = "JSON-RPC response", content_type = "application/json", body = Object),
        (status = 202, description = "Notification or client response accepted; no body"),
        (status = 400, description = "Malformed JSON-RPC message, or unsupported MCP-Protocol-Version", body = Object),
        (status = 401, description = "Invalid or missing API key", body = ErrorBody),
        (status = 403, description = "Foreign Origin", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn post(
    req: HttpRequest,
    body: Bytes,
    service: Data<Service>,
    connector: Data<Connector>,
) -> Result<HttpResponse, ApiError> {
    if !origin_allowed(&req, &service.config().public_base_url) {
        return Err(ApiError::new(StatusCode::FORBIDDEN, "requests from this Origin are not allowed"));
    }
    let caller = service.authenticate(connector_token(&req).as_deref()).await.map_err(|_| {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            "missing or invalid API key: send `Authorization: Bearer <API_KEY>` or use the connector URL with ?key=<API_KEY>",
        )
    })?;
    if let Some(version) = req.headers().get(PROTOCOL_HEADER) {
        let version = version.to_str().unwrap_or("");
        if !mcp::supports_protocol_version(version) {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                format!(
                    "unsupported MCP-Protocol-Version {version:?}; supported: {}",
                    mcp::SUPPORTED_PROTOCOL_VERSIONS.join(", ")
                ),
            ));
        }
    }
    let json =
        |status: StatusCode, body: String| HttpResponse::build(status).content_type("application/json").body(body);
    Ok(match connector.handle(caller, &body).await {
        Reply::Response(body) => json(StatusCode::OK, body),
        Reply::Invalid(body) => json(StatusCode::BAD_REQUEST, body),
        Reply::Accepted => HttpResponse::Accepted().finish(),
    })
}

/// The request line for access logs, with the `key` query parameter redacted.
pub(crate) fn redacted_request_line(req: &actix_web::dev::ServiceRequest) -> String {
    let query = req.query_string();
    let query = if query.is_empty() {
        String::new()
    } else {
        let redacted: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, _)) if k == "key" || k == "sig" => format!("{k}=REDACTED"),
                _ => pair.to_string(),
            })
            .collect();
        format!("?{}", redacted.join("&"))
    };
    format!("{} {}{} {:?}", req.method(), req.path(), query, req.version())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_log_line_hides_the_key() {
        let req = actix_web::test::TestRequest::post().uri("/api/mcp?key=mgk_secret&x=1").to_srv_request();
        let line = redacted_request_line(&req);
        assert!(!line.contains("mgk_secret"), "{line}");
        assert!(line.contains("key=REDACTED") && line.contains("x=1"), "{line}");
    }
}
