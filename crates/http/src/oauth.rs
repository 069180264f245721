//! The connector's OAuth 2.1 endpoints: metadata (RFC 8414, RFC 9728), client registration
//! (RFC 7591), the token endpoint and revocation (RFC 7009). The authorization endpoint is a page
//! of the console (where the person signs in and consents). Errors are RFC 6749's JSON:
//! `{"error": "<code>", "error_description": "..."}`.

use crate::errors::ApiError;
use actix_web::http::header;
use actix_web::web::{self, Data};
use actix_web::{HttpRequest, HttpResponse};
use base64::Engine as _;
use domain::oauth::{ClientRegistration, OAuthError, TokenRequest};
use service::oauth::{
    AuthorizationServerMetadata, OAuthFailure, ProtectedResourceMetadata, RegisteredClient, TokenResponse,
};
use service::Service;

/// A refusal or failure as the OAuth endpoints answer it.
fn failure(failure: OAuthFailure) -> Result<HttpResponse, ApiError> {
    match failure {
        OAuthFailure::Refused(error, status) => {
            let status =
                actix_web::http::StatusCode::from_u16(status).unwrap_or(actix_web::http::StatusCode::BAD_REQUEST);
            let mut response = HttpResponse::build(status);
            if status == actix_web::http::StatusCode::UNAUTHORIZED {
                response.insert_header((header::WWW_AUTHENTICATE, "Basic realm=\"oauth\""));
            }
            Ok(response.insert_header((header::CACHE_CONTROL, "no-store")).json(error))
        }
        OAuthFailure::Service(e) => Err(e.into()),
    }
}

/// The client's credentials from HTTP Basic (`client_secret_basic`), decoded.
fn basic_credentials(req: &HttpRequest) -> Option<(String, String)> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, encoded) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD.decode(encoded.trim()).ok()?;
    let (id, secret) = std::str::from_utf8(&decoded).ok()?.split_once(':')?;
    let unescape =
        |s: &str| url::form_urlencoded::parse(format!("v={s}").as_bytes()).next().map(|(_, v)| v.into_owned());
    Some((unescape(id)?, unescape(secret)?))
}

/// Authorization server metadata (RFC 8414).
#[utoipa::path(
    get, path = "/.well-known/oauth-authorization-server", tag = "Connector",
    responses((status = 200, description = "The connector's authorization server", body = AuthorizationServerMetadata))
)]
pub(crate) async fn server_metadata(service: Data<Service>) -> HttpResponse {
    HttpResponse::Ok().json(service.authorization().metadata())
}

/// The connector's protected resource metadata (RFC 9728), at the well-known path and at the
/// path of the connector's own.
#[utoipa::path(
    get, path = "/.well-known/oauth-protected-resource/api/mcp", tag = "Connector",
    responses((status = 200, description = "The connector as an OAuth protected resource", body = ProtectedResourceMetadata))
)]
pub(crate) async fn resource_metadata(service: Data<Service>) -> HttpResponse {
    HttpResponse::Ok().json(service.authorization().resource_metadata())
}

/// Registers an OAuth client (RFC 7591): `redirect_uris` (https, or http on loopback), an
/// optional `client_name` and `token_endpoint_auth_method` (`none` by default).
#[utoipa::path(
    post, path = "/oauth/register", tag = "Connector",
    request_body = ClientRegistration,
    responses(
        (status = 201, description = "The registered client", body = RegisteredClient),
        (status = 400, description = "`invalid_redirect_uri` or `invalid_client_metadata`", body = OAuthError),
    )
)]
pub(crate) async fn register(service: Data<Service>, body: web::Bytes) -> Result<HttpResponse, ApiError> {
    let registration: ClientRegistration = match serde_json::from_slice(&body) {
        Ok(registration) => registration,
        Err(e) => {
            return failure(OAuthFailure::Refused(
                OAuthError::new("invalid_client_metadata", format!("the body is not a registration: {e}")),
                400,
            ))
        }
    };
    match service.authorization().register(registration).await {
        Ok(client) => Ok(HttpResponse::Created().insert_header((header::CACHE_CONTROL, "no-store")).json(client)),
        Err(e) => failure(e),
    }
}

/// The token endpoint: `grant_type=authorization_code` (with `code`, `redirect_uri`,
/// `code_verifier`, `client_id`) or `grant_type=refresh_token`. Refresh tokens are used once:
/// each exchange answers a new one.
#[utoipa::path(
    post, path = "/oauth/token", tag = "Connector",
    request_body(content = Object, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, description = "New tokens", body = TokenResponse),
        (status = 400, description = "An OAuth error (`invalid_grant`, `invalid_request`, `invalid_target`, ...)", body = OAuthError),
        (status = 401, description = "`invalid_client`", body = OAuthError),
    )
)]
pub(crate) async fn token(
    req: HttpRequest,
    service: Data<Service>,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let request: TokenRequest = match serde_urlencoded::from_bytes(&body) {
        Ok(request) => request,
        Err(e) => return failure(OAuthFailure::Refused(OAuthError::new("invalid_request", e.to_string()), 400)),
    };
    match service.authorization().token(request, basic_credentials(&req)).await {
        Ok(tokens) => Ok(HttpResponse::Ok()
            .insert_header((header::CACHE_CONTROL, "no-store"))
            .insert_header((header::PRAGMA, "no-cache"))
            .json(tokens)),
        Err(e) => failure(e),
    }
}

/// The form of a revocation.
#[derive(serde::Deserialize)]
struct Revocation {
    #[serde(default)]
    token: String,
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    client_secret: Option<String>,
}

/// Revokes an access or refresh token (RFC 7009); revoking a refresh token revokes the
/// connection's access tokens too. An unknown token is answered 200 as well.
#[utoipa::path(
    post, path = "/oauth/revoke", tag = "Connector",
    request_body(content = Object, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, description = "Revoked (or unknown)"),
        (status = 401, description = "`invalid_client`", body = OAuthError),
    )
)]
pub(crate) async fn revoke(
    req: HttpRequest,
    service: Data<Service>,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let form: Revocation = match serde_urlencoded::from_bytes(&body) {
        Ok(form) => form,
        Err(e) => return failure(OAuthFailure::Refused(OAuthError::new("invalid_request", e.to_string()), 400)),
    };
    let revoked = service
        .authorization()
        .revoke(&form.token, form.client_id.as_deref(), form.client_secret.as_deref(), basic_credentials(&req))
        .await;
    match revoked {
        Ok(()) => Ok(HttpResponse::Ok().finish()),
        Err(e) => failure(e),
    }
}
