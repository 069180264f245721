//! The developer console: server-rendered pages at `/console` where developers sign up, create,
//! cap, rotate and revoke their API keys (the secret and its MCP connector URL shown once), and
//! see their balance, daily spend and recent jobs, manage webhooks, and connect AI agents through
//! the connector's OAuth consent page.
//!
//! Like the HTTP API and the MCP connector, it is a thin front end over [`service::Service`]:
//! handlers read forms and render [maud](https://maud.lambda.xyz) templates; every rule lives in
//! the service. Sessions live in the database (every api-server shares them), every form carries
//! a CSRF token, and the stylesheet and script are compiled into the binary.

// Handlers return the response that ends a request early (to sign in, a refused form) as the
// `Err` of their checks; it is built once per request, so its size does not matter.
#![allow(clippy::result_large_err)]

mod agents;
mod auth;
mod keys;
mod pages;
mod reports;
mod session;
mod webhooks;

pub use session::client_address;
pub use session::{FORM_COOKIE, HOST_FORM_COOKIE, SESSION_COOKIE};

use actix_web::http::{header, StatusCode};
use actix_web::{web, HttpRequest, HttpResponse};
use pages::keys::Action;
use service::Service;

/// Registers the console's routes under `/console`. The service must be registered as app data.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/console")
            .app_data(web::FormConfig::default().limit(16 * 1024).error_handler(|error, _req| {
                let page = pages::error_page(StatusCode::BAD_REQUEST, &format!("The form could not be read: {error}"));
                actix_web::error::InternalError::from_response(error, page).into()
            }))
            .route("", web::get().to(auth::home))
            .route("/", web::get().to(auth::home))
            .route("/assets/console.css", web::get().to(stylesheet))
            .route("/assets/console.js", web::get().to(script))
            .route("/sign-in", web::get().to(auth::sign_in_page))
            .route("/sign-in", web::post().to(auth::sign_in))
            .route("/sign-up", web::get().to(auth::sign_up_page))
            .route("/sign-up", web::post().to(auth::sign_up))
            .route("/verify/{token}", web::get().to(auth::verify_page))
            .route("/verify/{token}", web::post().to(auth::verify))
            .route("/reset", web::get().to(auth::reset_request_page))
            .route("/reset", web::post().to(auth::reset_request))
            .route("/reset/{token}", web::get().to(auth::reset_page))
            .route("/reset/{token}", web::post().to(auth::reset))
            .route("/account/password", web::post().to(auth::change_password))
            .route("/account/delete", web::post().to(auth::delete_account))
            .route("/invite/{token}", web::get().to(auth::invite_page))
            .route("/invite/{token}", web::post().to(auth::accept_invite))
            .route("/sign-out", web::post().to(auth::sign_out))
            .route("/sign-out-everywhere", web::post().to(auth::sign_out_everywhere))
            .route("/keys", web::get().to(keys::list))
            .route("/keys", web::post().to(keys::create))
            .route("/keys/{id}/cap", web::post().to(keys::set_cap))
            .route("/keys/{id}/rates", web::post().to(keys::set_rates))
            .route("/keys/{id}/revoke", web::get().to(|s, r, id| confirm(s, r, id, Action::Revoke)))
            .route("/keys/{id}/revoke", web::post().to(|s, r, id, f| act(s, r, id, f, Action::Revoke)))
            .route("/keys/{id}/rotate", web::get().to(|s, r, id| confirm(s, r, id, Action::Rotate)))
            .route("/keys/{id}/rotate", web::post().to(|s, r, id, f| act(s, r, id, f, Action::Rotate)))
            .route("/keys/{id}/webhook", web::post().to(webhooks::set_target))
            .route("/keys/{id}/webhook-secret", web::post().to(webhooks::rotate_secret))
            .route("/webhooks", web::get().to(webhooks::page))
            // The connector's OAuth authorization endpoint: a console page, within the session
            // cookie's path.
            .route("/authorize", web::get().to(agents::authorize_page))
            .route("/authorize", web::post().to(agents::authorize))
            .route("/agents", web::get().to(agents::list))
            .route("/agents/{id}/disconnect", web::post().to(agents::disconnect))
            .route("/usage", web::get().to(reports::usage))
            .route("/jobs/{id}/cancel", web::post().to(reports::cancel_job))
            .route("/account", web::get().to(reports::account))
            .default_service(web::to(not_found)),
    );
}

/// Whether a request path belongs to the console (whose errors are pages, not JSON).
pub fn is_console_path(path: &str) -> bool {
    path == "/console" || path.starts_with("/console/")
}

async fn confirm(service: web::Data<Service>, req: HttpRequest, id: web::Path<String>, action: Action) -> HttpResponse {
    keys::confirm(&service, &req, &id, action).await
}

async fn act(
    service: web::Data<Service>,
    req: HttpRequest,
    id: web::Path<String>,
    form: web::Form<auth::TokenOnly>,
    action: Action,
) -> HttpResponse {
    keys::act(&service, &req, &id, &form.csrf, action).await
}

async fn not_found() -> HttpResponse {
    pages::error_page(StatusCode::NOT_FOUND, "There is no such page in the console.")
}

async fn stylesheet() -> HttpResponse {
    asset("text/css; charset=utf-8", pages::STYLESHEET)
}

async fn script() -> HttpResponse {
    asset("text/javascript; charset=utf-8", pages::SCRIPT)
}

fn asset(content_type: &str, body: &'static str) -> HttpResponse {
    pages::secured(HttpResponse::Ok())
        .insert_header((header::CACHE_CONTROL, "public, max-age=3600"))
        .content_type(content_type.to_string())
        .body(body)
}
