//! What every request leaves behind: a request id, kept from the client's `x-request-id` when it
//! is sane or made here, answered in the `x-request-id` header and carried by a tracing span around
//! the whole request, so every log line it causes names it; and one access-log line (client
//! address, the request line with its secrets redacted, status, size, time to the answer's head),
//! or for successful quick reads one line in `access_log_reads` when the deployment samples them;
//! and its count and latency in the metrics, by route pattern.

use crate::connector::redacted_request_line;
use actix_web::body::{BodySize, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use actix_web::web::Data;
use actix_web::HttpMessage;
use service::rate_limit::RateStatus;
use service::Service;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tracing::Instrument;

/// The header a request id travels in, both ways.
pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Longest client request id kept; a longer or stranger one is replaced.
const MAX_CLIENT_ID_CHARS: usize = 128;

/// Probes polled by load balancers and scrapers: not worth an access-log line each.
const UNLOGGED: [&str; 3] = ["/healthz", "/readyz", "/metrics"];

/// A read slower than this is always logged, sampled or not.
const SLOW_READ: Duration = Duration::from_secs(1);

/// Successful quick reads seen by this process, for sampling them.
static QUICK_READS: AtomicU64 = AtomicU64::new(0);

/// Whether a request's access-log line is written: always, except for a successful quick read
/// (`GET` or `HEAD`, under 400, under [`SLOW_READ`]) when the deployment logs one in `one_in`.
fn logs_line(read: bool, status: u16, took: Duration, one_in: u32) -> bool {
    if one_in <= 1 || !read || status >= 400 || took >= SLOW_READ {
        return true;
    }
    QUICK_READS.fetch_add(1, Ordering::Relaxed).is_multiple_of(u64::from(one_in))
}

/// The pattern of the resource a request was routed to, as its metrics label, set on each
/// resource: reading it back costs nothing, while `HttpRequest::match_pattern` matches the path
/// against every pattern again.
pub(crate) struct RouteLabel(pub(crate) std::sync::Arc<str>);

/// The metrics label of `req`'s route: its resource's [`RouteLabel`], else its matched pattern,
/// else `unmatched`.
fn route_label(req: &actix_web::HttpRequest) -> std::sync::Arc<str> {
    match req.app_data::<RouteLabel>() {
        Some(label) => label.0.clone(),
        None => req.match_pattern().map_or_else(|| "unmatched".into(), Into::into),
    }
}

/// The middleware: see the module's documentation.
pub(crate) async fn observe(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let started = Instant::now();
    let id = req
        .headers()
        .get(&REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .filter(|id| is_sane(id))
        .map_or_else(new_request_id, str::to_string);
    let method = req.method().clone();
    let span = tracing::info_span!("request", id = %id);
    let mut response = next.call(req).instrument(span.clone()).await?;
    let route = route_label(response.request());
    service::metrics::http_request(&route, method.as_str(), response.status().as_u16(), started.elapsed());
    let read = matches!(method, actix_web::http::Method::GET | actix_web::http::Method::HEAD);
    let one_in = response.request().app_data::<Data<Service>>().map_or(1, |s| s.config().access_log_reads.get());
    // Composed only when it is written: a poll answered in microseconds would otherwise spend a
    // share of them on a line the deployment samples out or filters away.
    let logged = tracing::enabled!(target: "access", tracing::Level::INFO)
        && !UNLOGGED.contains(&response.request().path())
        && logs_line(read, response.status().as_u16(), started.elapsed(), one_in);
    if logged {
        let request = response.request();
        // The address the rate limits count.
        let client = match request.app_data::<Data<Service>>() {
            Some(service) => console::client_address(service, request),
            None => "unknown".into(),
        };
        let line = redacted_request_line(request);
        let status = response.status().as_u16();
        let size = match response.response().body().size() {
            BodySize::Sized(bytes) => bytes.to_string(),
            BodySize::None | BodySize::Stream => "-".into(),
        };
        let millis = started.elapsed().as_secs_f64() * 1000.0;
        span.in_scope(|| tracing::info!(target: "access", "{client} \"{line}\" {status} {size} {millis:.3}ms"));
    }
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(REQUEST_ID, value);
    }
    let rate = response.request().extensions().get::<RateStatus>().copied();
    if let Some(rate) = rate {
        add_rate_headers(response.headers_mut(), &rate);
    }
    Ok(response)
}

/// The `RateLimit` fields of the IETF draft (`draft-ietf-httpapi-ratelimit-headers`, in the form
/// most clients read: limit, remaining, seconds to reset), and the policy: requests per 60 s
/// window, and the burst the bucket allows.
fn add_rate_headers(headers: &mut actix_web::http::header::HeaderMap, rate: &RateStatus) {
    let fields = [
        ("ratelimit-limit", rate.per_minute.to_string()),
        ("ratelimit-remaining", rate.remaining.to_string()),
        ("ratelimit-reset", rate.reset_secs.to_string()),
        ("ratelimit-policy", format!("{};w=60;burst={}", rate.per_minute, rate.burst)),
    ];
    for (name, value) in fields {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(HeaderName::from_static(name), value);
        }
    }
}

/// A client's id is kept when it cannot break a log line or a header: 1 to 128 characters of
/// letters, digits and `-_.:/+=`, which covers UUIDs, ULIDs, W3C trace ids and cloud load
/// balancers' ids.
fn is_sane(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_CLIENT_ID_CHARS
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.:/+=".contains(&b))
}

/// A new id: `req_` and 128 random bits in hex.
fn new_request_id() -> String {
    format!("req_{:032x}", rand::random::<u128>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_ids_are_kept_only_when_they_are_safe_to_log_and_echo() {
        for kept in ["4bf92f3577b34da6a3ce929d0e0e4736", "01HZX3J5Q8", "Root=1-67891233-abcdef012345678912345678"] {
            assert!(is_sane(kept), "{kept}");
        }
        for replaced in ["", "a b", "line\nbreak", "\"quoted\"", &"x".repeat(129), "ünïcode"] {
            assert!(!is_sane(replaced), "{replaced:?}");
        }
        let made = new_request_id();
        assert!(is_sane(&made) && made.len() == 36, "{made}");
        assert_ne!(made, new_request_id());
    }

    #[test]
    fn only_successful_quick_reads_are_sampled() {
        let quick = Duration::from_millis(2);
        // Writes, errors and slow reads are always logged, whatever the sampling.
        for _ in 0..50 {
            assert!(logs_line(false, 202, quick, 100));
            assert!(logs_line(true, 404, quick, 100));
            assert!(logs_line(true, 200, SLOW_READ, 100));
            assert!(logs_line(true, 200, quick, 1));
        }
        // Successful quick reads: one in `one_in` (the counter is shared with other tests, so
        // count over whole cycles).
        let logged = (0..1000).filter(|_| logs_line(true, 200, quick, 10)).count();
        assert!((99..=101).contains(&logged), "{logged} of 1000 logged at one in 10");
    }
}
