//! Cookies and CSRF: the session cookie, the signed-in user extracted from it, and the two kinds
//! of form token (the session's own, and a signed, expiring double-submit cookie for the forms
//! shown before sign-in, so a hostile page cannot sign a visitor in to an attacker's account).

use crate::pages::{self, Page};
use actix_web::cookie::{Cookie, SameSite};
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse};
use service::console::{ConsoleUser, NewSession, SESSION_TTL_MS};
use service::Service;
use subtle::ConstantTimeEq;

/// The session cookie.
pub const SESSION_COOKIE: &str = "mg_console";
/// The form-token cookie of the signed-out forms on a plain-HTTP deployment.
pub const FORM_COOKIE: &str = "mg_form";
/// The same over HTTPS: a `__Host-` cookie, which browsers accept only `Secure`, for the whole host
/// (`Path=/`) and from this host alone, so a sibling subdomain cannot plant a token of its choosing.
pub const HOST_FORM_COOKIE: &str = "__Host-mg_form";
/// Every console cookie is scoped to the console's paths.
pub const COOKIE_PATH: &str = "/console";

/// Whether cookies must be `Secure`: the deployment is served over HTTPS.
pub fn secure(service: &Service) -> bool {
    service.config().public_base_url.starts_with("https://")
}

/// The session cookie of a new session.
pub fn session_cookie(service: &Service, session: &NewSession) -> Cookie<'static> {
    Cookie::build(SESSION_COOKIE, session.token.clone())
        .path(COOKIE_PATH)
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(secure(service))
        .max_age(actix_web::cookie::time::Duration::milliseconds(SESSION_TTL_MS))
        .finish()
}

/// A cookie that removes `name`.
pub fn removal(service: &Service, name: &'static str) -> Cookie<'static> {
    let mut cookie = Cookie::build(name, "").path(COOKIE_PATH).http_only(true).secure(secure(service)).finish();
    cookie.make_removal();
    cookie
}

/// The session token the request carries, if any.
pub fn session_token(req: &HttpRequest) -> Option<String> {
    req.cookie(SESSION_COOKIE).map(|c| c.value().to_string()).filter(|v| !v.is_empty())
}

/// The signed-in user, or the response that sends the visitor to sign in.
pub async fn signed_in(service: &Service, req: &HttpRequest) -> Result<ConsoleUser, HttpResponse> {
    let user = match session_token(req) {
        Some(token) => service.console().console_user(&token).await.map_err(pages::service_error)?,
        None => None,
    };
    user.ok_or_else(|| {
        let mut to_sign_in = see_other("/console/sign-in");
        if session_token(req).is_some() {
            // An ended or expired session: drop its cookie.
            let _ = to_sign_in.add_cookie(&removal(service, SESSION_COOKIE));
        }
        to_sign_in
    })
}

/// Checks a signed-in form's token against the session's.
fn check_session_token(user: &ConsoleUser, sent: &str) -> Result<(), HttpResponse> {
    if equal(sent, &user.csrf_token) {
        Ok(())
    } else {
        Err(forged())
    }
}

/// The signed-in user of a form whose token matches their session.
pub async fn signed_in_form(service: &Service, req: &HttpRequest, token: &str) -> Result<ConsoleUser, HttpResponse> {
    let user = signed_in(service, req).await?;
    check_session_token(&user, token)?;
    Ok(user)
}

/// The form-token cookie's name and path on this deployment.
fn form_cookie_scope(service: &Service) -> (&'static str, &'static str) {
    if secure(service) {
        (HOST_FORM_COOKIE, "/")
    } else {
        (FORM_COOKIE, COOKIE_PATH)
    }
}

/// The cookie carrying a signed-out form's token.
pub fn form_cookie(service: &Service, token: &str) -> Cookie<'static> {
    let (name, path) = form_cookie_scope(service);
    Cookie::build(name, token.to_string())
        .path(path)
        .http_only(true)
        .same_site(SameSite::Strict)
        .secure(secure(service))
        .finish()
}

/// A cookie that removes the form-token cookie.
pub fn form_cookie_removal(service: &Service) -> Cookie<'static> {
    let (name, path) = form_cookie_scope(service);
    let mut cookie = Cookie::build(name, "").path(path).http_only(true).secure(secure(service)).finish();
    cookie.make_removal();
    cookie
}

/// Checks a signed-out form's token against its cookie, and that the service signed it and it
/// has not expired.
pub fn check_form_token(service: &Service, req: &HttpRequest, sent: &str) -> bool {
    let (name, _) = form_cookie_scope(service);
    req.cookie(name).is_some_and(|cookie| !sent.is_empty() && equal(sent, cookie.value()))
        && service.console().form_token_is_valid(sent)
}

/// The answer to a form without a valid token.
pub fn forged() -> HttpResponse {
    pages::error_page(
        actix_web::http::StatusCode::FORBIDDEN,
        "This form has expired or did not come from this console. Go back, reload the page and try again.",
    )
}

/// A 303 redirect to `location` (a console path).
pub fn see_other(location: &str) -> HttpResponse {
    HttpResponse::SeeOther().insert_header((header::LOCATION, location.to_string())).finish()
}

/// The client's address as the rate limits and the access log count it: the peer, or behind one
/// of the deployment's trusted proxies the address they forwarded (see
/// [`service::client_address::TrustedProxies`]).
pub fn client_address(service: &Service, req: &HttpRequest) -> String {
    let Some(peer) = req.peer_addr().map(|address| address.ip()) else { return "unknown".into() };
    let forwarded: Vec<&str> =
        req.headers().get_all("x-forwarded-for").filter_map(|value| value.to_str().ok()).collect();
    service.config().trusted_proxies.client(peer, &forwarded).to_string()
}

/// Renders a signed-out page with a fresh form token set in its cookie.
pub fn with_form_token(service: &Service, render: impl FnOnce(&str) -> Page) -> HttpResponse {
    let token = service.console().new_form_token();
    let mut response = render(&token).respond();
    let _ = response.add_cookie(&form_cookie(service, &token));
    response
}

fn equal(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}
