//! `POST /api/mcp`: the HTTP transport of the agent connector (MCP streamable HTTP, JSON answers).

use crate::errors::{ApiError, ErrorBody};
use actix_web::http::{header, StatusCode};
use actix_web::web::{Data, Payload};
use actix_web::{HttpRequest, HttpResponse};
use domain::rate_limit::RateClass;
use mcp::{Connector, Reply};
use service::{ErrorCode, Service, ServiceError};

/// Header carrying the negotiated protocol version after initialization.
const PROTOCOL_HEADER: &str = "mcp-protocol-version";

/// The key from `Authorization: Bearer` or, for ready-made connector URLs, the `key` query parameter.
fn connector_token(req: &HttpRequest) -> Option<String> {
    crate::extract::bearer_token(req).map(str::to_string).or_else(|| {
        url::form_urlencoded::parse(req.query_string().as_bytes())
            .find(|(k, _)| k == "key")
            .map(|(_, v)| v.into_owned())
    })
}

/// Browsers send `Origin`; a page from a foreign origin must not drive the connector (DNS
/// rebinding). Requests without the header (agents, CLIs) pass; otherwise the origin must be
/// exactly the service's own (scheme, host and port), or a page on this machine (loopback, for
/// local tools such as an MCP inspector).
fn origin_allowed(req: &HttpRequest, public_base_url: &str) -> bool {
    let Some(origin) = req.headers().get(header::ORIGIN) else {
        return true;
    };
    let Some(origin) = origin.to_str().ok().and_then(|o| url::Url::parse(o).ok()) else {
        return false;
    };
    if !matches!(origin.scheme(), "http" | "https") {
        return false;
    }
    let own = url::Url::parse(public_base_url).map(|u| u.origin());
    if own.is_ok_and(|own| own == origin.origin()) {
        return true;
    }
    match origin.host() {
        Some(url::Host::Domain(host)) => host.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// The agent connector: one JSON-RPC 2.0 message per POST (MCP `initialize`, `ping`, `tools/list`,
/// `tools/call`). Authenticate with the bearer header or the `key` query parameter.
#[utoipa::path(
    post, path = "/api/mcp", tag = "Connector",
    params(("key" = Option<String>, Query, description = "API key, for clients that cannot send headers (keep the URL secret)")),
    request_body(content = mcp::ClientMessage, description = "One JSON-RPC 2.0 message: a request, a notification, or a response to a request of ours", content_type = "application/json"),
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
    body: Payload,
    service: Data<Service>,
    connector: Data<Connector>,
) -> Result<HttpResponse, ApiError> {
    if !origin_allowed(&req, &service.config().public_base_url) {
        return Err(ApiError::new(ErrorCode::Forbidden, "requests from this Origin are not allowed"));
    }
    // Only a bad key or token is a 401; an outage stays a 503 (an agent must not drop a good key).
    // The 401 points OAuth clients at the connector's protected resource metadata.
    let caller = service.api().authenticate_connector(connector_token(&req).as_deref()).await.map_err(|e| match e {
        ServiceError::Unauthorized(_) => ApiError::new(
            ErrorCode::Unauthorized,
            "missing or invalid credentials: send `Authorization: Bearer <API_KEY or OAuth access token>` or use \
             the connector URL with ?key=<API_KEY>; OAuth clients discover the authorization server from this \
             answer's WWW-Authenticate header",
        )
        .with_resource_metadata(service.authorization().resource_metadata_url()),
        other => ApiError::from(other),
    })?;
    crate::extract::admit(&req, &service, &caller, RateClass::Read).await?;
    if let Some(version) = req.headers().get(PROTOCOL_HEADER) {
        let version = version.to_str().unwrap_or("");
        if !mcp::supports_protocol_version(version) {
            return Err(ApiError::new(
                ErrorCode::InvalidInput,
                format!(
                    "unsupported MCP-Protocol-Version {version:?}; supported: {}",
                    mcp::SUPPORTED_PROTOCOL_VERSIONS.join(", ")
                ),
            ));
        }
    }
    let body = crate::extract::read_body(&req, body).await?;
    let json =
        |status: StatusCode, body: String| HttpResponse::build(status).content_type("application/json").body(body);
    Ok(match connector.handle(caller, &body).await {
        Reply::Response(body) => json(StatusCode::OK, body),
        Reply::Invalid(body) => json(StatusCode::BAD_REQUEST, body),
        Reply::Accepted => HttpResponse::Accepted().finish(),
    })
}

/// Query parameters whose values are secrets: API keys, URL signatures, callback tokens and OAuth
/// codes.
const SECRET_PARAMETERS: [&str; 4] = ["key", "sig", "token", "code"];

/// Paths whose last segment is a secret (an invite link's token).
const SECRET_PATH_PREFIXES: [&str; 3] = ["/console/invite/", "/console/verify/", "/console/reset/"];

/// The request line for access logs, with secret query parameters (`key`, `sig`, `token`) and
/// secret path segments redacted; parameters are recognised by their decoded names, so `?k%65y=`
/// is redacted too.
pub(crate) fn redacted_request_line(req: &actix_web::HttpRequest) -> String {
    format!("{} {}{} {:?}", req.method(), redacted_path(req.path()), redacted_query(req.query_string()), req.version())
}

/// `path` with a secret segment replaced by `REDACTED`.
fn redacted_path(path: &str) -> String {
    for prefix in SECRET_PATH_PREFIXES {
        // Matched without regard to case, as the router may route a differently written path.
        if path.len() > prefix.len() && path[..prefix.len()].eq_ignore_ascii_case(prefix) {
            return format!("{prefix}REDACTED");
        }
    }
    path.to_string()
}

/// `?query` with the values of secret parameters replaced by `REDACTED` (empty when none).
pub(crate) fn redacted_query(query: &str) -> String {
    if query.is_empty() {
        return String::new();
    }
    let redacted: Vec<String> = query
        .split('&')
        .map(|pair| {
            let raw_name = pair.split_once('=').map_or(pair, |(k, _)| k);
            let name: String = url::form_urlencoded::parse(raw_name.as_bytes()).map(|(k, _)| k.into_owned()).collect();
            if SECRET_PARAMETERS.iter().any(|s| name.eq_ignore_ascii_case(s)) {
                format!("{raw_name}=REDACTED")
            } else {
                pair.to_string()
            }
        })
        .collect();
    format!("?{}", redacted.join("&"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_log_line_hides_the_key() {
        let req = actix_web::test::TestRequest::post().uri("/api/mcp?key=mgk_secret&x=1").to_http_request();
        let line = redacted_request_line(&req);
        assert!(!line.contains("mgk_secret"), "{line}");
        assert!(line.contains("key=REDACTED") && line.contains("x=1"), "{line}");
        for query in ["k%65y=mgk_secret", "%6B%65%79=mgk_secret&a=b", "KEY=mgk_secret", "k%65y=mgk_secret&sig=abc"] {
            let redacted = redacted_query(query);
            assert!(!redacted.contains("mgk_secret") && !redacted.contains("abc"), "{query}: {redacted}");
        }
        assert_eq!(redacted_query("a=1&b=2"), "?a=1&b=2");
        assert_eq!(redacted_query("token=abc&t=1"), "?token=REDACTED&t=1");
        let invite = actix_web::test::TestRequest::get().uri("/console/invite/inv_secret123").to_http_request();
        let line = redacted_request_line(&invite);
        assert!(!line.contains("inv_secret123") && line.contains("/console/invite/REDACTED"), "{line}");
        assert_eq!(redacted_path("/console/invite/"), "/console/invite/");
        assert_eq!(redacted_path("/console/verify/vt_secret"), "/console/verify/REDACTED");
        assert_eq!(redacted_path("/console/reset/rt_secret"), "/console/reset/REDACTED");
        assert_eq!(redacted_path("/console/reset"), "/console/reset");
        assert_eq!(redacted_path("/v1/tasks/task_1"), "/v1/tasks/task_1");
    }

    #[test]
    fn only_exact_origins_pass() {
        let check = |origin: &str| {
            let req = actix_web::test::TestRequest::post().insert_header((header::ORIGIN, origin)).to_http_request();
            origin_allowed(&req, "https://api.example.com")
        };
        assert!(check("https://api.example.com"));
        assert!(check("http://localhost:6274"));
        assert!(check("http://127.0.0.1:3000"));
        assert!(check("http://[::1]:3000"));
        for foreign in [
            "https://api.example.com.evil.net",
            "https://api.example.com:8443",
            "http://api.example.com",
            "https://evil.net",
            "null",
            "https://localhost.evil.net",
        ] {
            assert!(!check(foreign), "{foreign}");
        }
    }
}
