//! The HTTP server: one task per connection, every answer closing its connection so that each
//! request arrives on a fresh one and per-request connection faults are exact.

use crate::request::ApiRequest;
use crate::respond::{fal_error, problem, raw, Body};
use crate::state::Shared;
use crate::stats::bump;
use bytes::Bytes;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONNECTION};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::json;
use std::convert::Infallible;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

/// Largest request body taken.
const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;
/// Pause after a failed accept (such as running out of file descriptors) before trying again.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Which part of the simulator a path belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Route {
    Control,
    Media,
    Jwks,
    Replicate,
    Fal,
}

impl Route {
    fn of(path: &str) -> Route {
        if path.starts_with("/_sim/") {
            Route::Control
        } else if path.starts_with("/media/") {
            Route::Media
        } else if path == "/.well-known/jwks.json" {
            Route::Jwks
        } else if path == "/v1" || path.starts_with("/v1/") {
            Route::Replicate
        } else {
            Route::Fal
        }
    }

    /// An error in this route's protocol.
    fn error(self, status: StatusCode, detail: &str) -> Response<Body> {
        match self {
            Route::Replicate => problem(status, crate::respond::reason(status), detail),
            _ => fal_error(status, json!(detail)),
        }
    }
}

/// Accepts connections until the simulator stops.
pub(crate) async fn serve(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    // Answers are small and final; waiting to coalesce them only adds latency.
                    let _ = stream.set_nodelay(true);
                    tokio::spawn(connection(stream, shared.clone()));
                }
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                }
            },
            () = crate::state::until_stopped(shared.stopped.clone()) => return,
        }
    }
}

/// Serves one connection; it ends with its one answer, when a fault drops it, or when the
/// simulator stops (which also ends hanging requests).
async fn connection(stream: TcpStream, shared: Arc<Shared>) {
    let drop_now = Arc::new(Notify::new());
    let service = {
        let (shared, drop_now) = (shared.clone(), drop_now.clone());
        service_fn(move |request| {
            let (shared, drop_now) = (shared.clone(), drop_now.clone());
            async move { Ok::<_, Infallible>(handle(&shared, &drop_now, request).await) }
        })
    };
    let connection = http1::Builder::new().keep_alive(false).serve_connection(TokioIo::new(stream), service);
    // Leaving the select drops the connection, which closes the socket without an answer.
    tokio::select! {
        served = connection => if let Err(e) = served {
            tracing::debug!(error = %e, "connection ended with an error");
        },
        () = drop_now.notified() => {}
        () = crate::state::until_stopped(shared.stopped.clone()) => {}
    }
}

/// Answers one request.
async fn handle(shared: &Arc<Shared>, drop_now: &Notify, request: Request<Incoming>) -> Response<Body> {
    let route = Route::of(request.uri().path());
    let mut response = match route {
        Route::Control => {
            let (parts, body) = request.into_parts();
            match read_body(body).await {
                Ok(body) => crate::control::handle(shared, &parts.method, parts.uri.path(), &body),
                Err(status) => crate::respond::json(status, &json!({"error": crate::respond::reason(status)})),
            }
        }
        Route::Media => media(shared, request.method(), request.uri().path()).await,
        Route::Jwks | Route::Replicate | Route::Fal => api(shared, drop_now, route, request).await,
    };
    response.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
    response
}

/// Answers a provider API request, after the connection faults and latency.
async fn api(shared: &Arc<Shared>, drop_now: &Notify, route: Route, request: Request<Incoming>) -> Response<Body> {
    if shared.take_drop() {
        bump(&shared.counters.dropped_connections);
        drop_now.notify_one();
        return std::future::pending().await;
    }
    let faults = shared.faults();
    if faults.hang {
        return std::future::pending().await;
    }
    if faults.latency_ms > 0 {
        tokio::time::sleep(Duration::from_millis(faults.latency_ms)).await;
    }
    let (parts, body) = request.into_parts();
    let body = match read_body(body).await {
        Ok(body) => body,
        Err(status) if status == StatusCode::PAYLOAD_TOO_LARGE => {
            return route.error(status, "The request body is larger than 8 MiB")
        }
        Err(status) => return route.error(status, "The request body could not be read"),
    };
    let request = ApiRequest::new(parts, body);
    match route {
        Route::Jwks if request.method == Method::GET => crate::respond::json(StatusCode::OK, &shared.signer.jwks()),
        Route::Replicate => crate::replicate::handle(shared, request).await,
        Route::Fal => crate::fal::handle(shared, request).await,
        _ => route.error(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed"),
    }
}

/// Reads a body of at most [`MAX_BODY_BYTES`]; the error is the status to answer.
async fn read_body(body: Incoming) -> Result<Bytes, StatusCode> {
    match Limited::new(body, MAX_BODY_BYTES).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => Err(StatusCode::PAYLOAD_TOO_LARGE),
        Err(_) => Err(StatusCode::BAD_REQUEST),
    }
}

/// `GET /media/{token}.{extension}`: never dropped, delayed only by `media_delay_ms`, but it may
/// have expired.
async fn media(shared: &Shared, method: &Method, path: &str) -> Response<Body> {
    if method != Method::GET && method != Method::HEAD {
        return raw(StatusCode::METHOD_NOT_ALLOWED, "text/plain", Bytes::from_static(b"Method Not Allowed"));
    }
    let name = path.trim_start_matches("/media/");
    let download = *method == Method::GET;
    if !download {
        return serve_media(shared, name, false).await;
    }
    let counters = &shared.counters;
    bump(&counters.media_downloads);
    let now = counters.media_in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    counters.media_downloads_peak.fetch_max(now, Ordering::SeqCst);
    let delay = shared.faults().media_delay_ms;
    if delay > 0 {
        tokio::time::sleep(Duration::from_millis(delay)).await;
    }
    let response = serve_media(shared, name, true).await;
    counters.media_in_flight.fetch_sub(1, Ordering::SeqCst);
    response
}

/// The file `name`; only a real download (`use_up`) uses up an expiring URL, while a HEAD still
/// sees that it expired.
async fn serve_media(shared: &Shared, name: &str, use_up: bool) -> Response<Body> {
    match shared.media.download(name, shared.faults().expire_media, use_up).await {
        Ok(file) => match usize::try_from(shared.faults().media_padding_bytes) {
            Ok(0) | Err(_) => raw(StatusCode::OK, file.content_type, file.bytes.clone()),
            Ok(padding) => {
                let mut padded = Vec::with_capacity(file.bytes.len() + padding);
                padded.extend_from_slice(&file.bytes);
                padded.resize(file.bytes.len() + padding, 0);
                raw(StatusCode::OK, file.content_type, Bytes::from(padded))
            }
        },
        Err(crate::media::DownloadError::NotFound) => {
            raw(StatusCode::NOT_FOUND, "text/plain", Bytes::from_static(b"Not Found"))
        }
        Err(e) => raw(StatusCode::INTERNAL_SERVER_ERROR, "text/plain", Bytes::from(e.to_string())),
    }
}
