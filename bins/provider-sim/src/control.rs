//! The simulator's own control API under `/_sim`, for processes that cannot call the library:
//! read and replace the faults, read the stats, release held jobs. It needs no authentication
//! and is never subject to the faults.

use crate::faults::Faults;
use crate::respond::{json, json_of, Body};
use crate::state::Shared;
use hyper::{Method, Response, StatusCode};
use serde_json::json;

/// Answers a `/_sim/...` request.
pub(crate) fn handle(shared: &Shared, method: &Method, path: &str, body: &[u8]) -> Response<Body> {
    match (method, path.trim_end_matches('/')) {
        (&Method::GET, "/_sim/faults") => json_of(StatusCode::OK, &shared.faults()),
        (&Method::POST | &Method::PUT, "/_sim/faults") => match serde_json::from_slice::<Faults>(body) {
            Ok(faults) => {
                shared.set_faults(faults.clone());
                json_of(StatusCode::OK, &faults)
            }
            Err(e) => json(StatusCode::BAD_REQUEST, &json!({"error": format!("not a faults object: {e}")})),
        },
        (&Method::GET, "/_sim/stats") => json_of(StatusCode::OK, &shared.stats()),
        (&Method::POST, "/_sim/release") => json(StatusCode::OK, &json!({"released": shared.jobs.release_held()})),
        _ => json(StatusCode::NOT_FOUND, &json!({"error": "no such control endpoint"})),
    }
}
