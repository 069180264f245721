//! The HTTP front end: the actix-web routes of the public API, bearer authentication, the one
//! mapping of service errors to JSON error bodies, signed file downloads, the OpenAPI 3.1
//! description generated from the code, the transport of the MCP connector at `/api/mcp`, and
//! the connector's OAuth 2.1 authorization server endpoints, and the developer console's pages at
//! `/console` (crate `console`).
//!
//! Handlers only translate between HTTP and [`service::Service`]; no business rule lives here.

mod connector;

mod errors;
mod extract;
mod listing_kit;
mod oauth;
mod openapi;
mod request_log;
mod routes;
mod schema_rules;

pub use errors::{status_of, ApiError, ErrorBody, REALM};
pub use openapi::openapi_json;
pub use request_log::REQUEST_ID;

use actix_web::middleware::ErrorHandlers;
use actix_web::web::{self, Data, PayloadConfig};
use actix_web::{App, HttpServer};
use service::Service;

/// Largest accepted request body: room for `data:` URIs of small inputs.
pub const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;

/// Registers every route of the API on an actix app.
pub fn configure(service: Service) -> impl FnOnce(&mut web::ServiceConfig) {
    move |cfg| {
        cfg.app_data(Data::new(mcp::Connector::new(service.clone())))
            .app_data(Data::new(service))
            .app_data(PayloadConfig::new(MAX_BODY_BYTES))
            .service(web::resource("/openapi.json").route(web::get().to(openapi::serve)))
            .service(web::resource("/healthz").route(web::get().to(routes::health)))
            .service(web::resource("/readyz").route(web::get().to(routes::ready)))
            .service(web::resource("/metrics").route(web::get().to(routes::metrics)))
            .service(endpoint("/v1", "GET", web::get().to(routes::list_models)))
            .service(endpoint("/v1/generate", "POST", web::post().to(routes::generate)))
            .service(endpoint("/v1/tasks/{id}", "GET", web::get().to(routes::get_task)))
            .service(endpoint("/v1/tasks/{id}/cancel", "POST", web::post().to(routes::cancel_task)))
            .service(endpoint("/v1/usage", "GET", web::get().to(routes::usage)))
            .service(endpoint("/v1/webhooks/deliveries", "GET", web::get().to(routes::webhook_deliveries)))
            .service(endpoint("/v1/recipes/listing-enhance", "POST", web::post().to(routes::listing_enhance)))
            .service(endpoint("/v1/recipes/lot-trace", "POST", web::post().to(routes::lot_trace)))
            .service(endpoint("/v1/recipes/listing-kit", "POST", web::post().to(listing_kit::listing_kit)))
            .service(endpoint("/v1/recipes/reel", "POST", web::post().to(routes::reel)))
            .service(endpoint("/v1/recipes/reel/{reel_id}", "GET", web::get().to(routes::get_reel)))
            .service(endpoint("/v1/recipes/reel/{reel_id}/cancel", "POST", web::post().to(routes::cancel_reel)))
            // GET (the optional event stream) is not offered: 405 without asking for the key.
            .service(endpoint("/api/mcp", "POST", web::post().to(connector::post)))
            .service(endpoint("/files/{path:.+}", "GET", web::get().to(routes::download)))
            .service(endpoint("/v1/webhooks/{provider}/{task_id}", "POST", web::post().to(routes::provider_callback)))
            .service(endpoint("/.well-known/oauth-authorization-server", "GET", web::get().to(oauth::server_metadata)))
            .service(endpoint("/.well-known/oauth-protected-resource", "GET", web::get().to(oauth::resource_metadata)))
            .service(endpoint(
                "/.well-known/oauth-protected-resource/api/mcp",
                "GET",
                web::get().to(oauth::resource_metadata),
            ))
            .service(endpoint("/oauth/register", "POST", web::post().to(oauth::register)))
            .service(endpoint("/oauth/token", "POST", web::post().to(oauth::token)))
            .service(endpoint("/oauth/revoke", "POST", web::post().to(oauth::revoke)))
            .configure(console::configure)
            .default_service(web::to(routes::fallback));
    }
}

/// A resource answering one method; any other gets 401 on protected paths, then 405 with `Allow`.
fn endpoint(path: &str, allow: &'static str, route: actix_web::Route) -> actix_web::Resource {
    web::resource(path)
        .app_data(request_log::RouteLabel(path.into()))
        .route(route)
        .default_service(web::to(move |req, service| routes::wrong_method(req, service, allow)))
}

/// Serves only the operational endpoints (`/healthz`, `/readyz`, `/metrics`, each as the API
/// serves it) on `listener`: what a standalone worker answers its orchestrator and Prometheus.
pub fn serve_operations(service: Service, listener: std::net::TcpListener) -> std::io::Result<actix_web::dev::Server> {
    service::metrics::install();
    let server = HttpServer::new(move || {
        App::new()
            .wrap(ErrorHandlers::new().default_handler(errors::json_error_body))
            .app_data(web::Data::new(service.clone()))
            .service(endpoint("/healthz", "GET", web::get().to(routes::health)))
            .service(endpoint("/readyz", "GET", web::get().to(routes::ready)))
            .service(endpoint("/metrics", "GET", web::get().to(routes::metrics)))
    })
    .workers(1)
    .shutdown_timeout(1)
    .disable_signals()
    .listen(listener)?;
    Ok(server.run())
}

/// Serves the API on an already bound `listener` with `workers` HTTP threads; await the returned
/// server to run it.
pub fn serve(
    service: Service,
    listener: std::net::TcpListener,
    workers: usize,
) -> std::io::Result<actix_web::dev::Server> {
    service::metrics::install();
    service.cache_verified_keys();
    let server = HttpServer::new(move || {
        App::new()
            .wrap(ErrorHandlers::new().default_handler(errors::json_error_body))
            // Outermost, so the error bodies and everything the request logs fall inside its span.
            // URLs may carry secrets (the connector's key, signatures, callback and invite
            // tokens): the access log redacts them.
            .wrap(actix_web::middleware::from_fn(request_log::observe))
            .configure(configure(service.clone()))
    })
    .workers(workers.max(1))
    .shutdown_timeout(5)
    .disable_signals()
    .listen(listener)?;
    Ok(server.run())
}
