//! The HTTP endpoints: thin adapters from requests to service use-cases.

use crate::errors::{ApiError, ErrorBody};
use crate::extract::{admit, authenticate, bearer_token, read_body, Authenticated, AuthenticatedJson, Idempotency};
use actix_web::http::header;
use actix_web::web::{self, Data, Payload};
use actix_web::{HttpRequest, HttpResponse};
use domain::rate_limit::RateClass;
use domain::{GenerateRequest, ListingEnhanceRequest, LotTraceRequest, ReelRequest};
use futures::StreamExt;
use serde::Deserialize;
use service::views::{
    LotTraceResult, ModelList, QueuedReel, QueuedTask, ReadinessView, ReelView, TaskView, UsageView,
    WebhookDeliveryList,
};
use service::{ErrorCode, Service, SyncOutcome};

/// 202 for an accepted job, with `Location` pointing at its poll URL, and `Idempotent-Replayed:
/// true` when a retry is answered with the task an earlier try made (as Stripe answers).
fn accepted(queued: QueuedTask) -> HttpResponse {
    accepted_at(&queued.poll_url.clone(), queued.replayed, queued)
}

fn accepted_at(poll_url: &str, replayed: bool, body: impl serde::Serialize) -> HttpResponse {
    let mut response = HttpResponse::Accepted();
    response.insert_header((header::LOCATION, poll_url.to_string()));
    if replayed {
        response.insert_header((IDEMPOTENT_REPLAYED, "true"));
    }
    response.json(body)
}

/// The header of an answer to a retry under an idempotency key.
pub(crate) const IDEMPOTENT_REPLAYED: &str = "idempotent-replayed";

/// Run an engine: validates, prices and holds the job, then queues it.
#[utoipa::path(
    post, path = "/v1/generate", tag = "Generation",
    request_body = GenerateRequest,
    params(Idempotency),
    responses(
        (status = 202, description = "Job accepted; poll `poll_url`", body = QueuedTask),
        (status = 400, description = "Unknown or unavailable model, or bad input (the message names the field)", body = ErrorBody),
        (status = 401, description = "Invalid or missing API key", body = ErrorBody),
        (status = 402, description = "Spend cap reached, or free allowance used up with no card on file", body = ErrorBody),
        (status = 422, description = "The `Idempotency-Key` was used with a different request", body = ErrorBody),
        (status = 413, description = "Body too large", body = ErrorBody),
        (status = 415, description = "Body is not JSON", body = ErrorBody),
        (status = 502, description = "The provider refused the submission", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn generate(
    call: AuthenticatedJson<GenerateRequest>,
    idempotency: Idempotency,
    service: Data<Service>,
) -> Result<HttpResponse, ApiError> {
    Ok(accepted(service.api().with_idempotency_key(idempotency.key.as_ref()).submit(&call.caller, call.body).await?))
}

/// Listing photo enhancement: a raw interior, exterior or drone photo (`image_url`) to a premium
/// edit, guided by `notes`. Poll `GET /v1/tasks/{id}`.
#[utoipa::path(
    post, path = "/v1/recipes/listing-enhance", tag = "Recipes",
    request_body = ListingEnhanceRequest,
    params(Idempotency),
    responses(
        (status = 202, description = "Job accepted; poll `poll_url`", body = QueuedTask),
        (status = 400, description = "Missing or invalid input (the message names the field)", body = ErrorBody),
        (status = 401, description = "Invalid or missing API key", body = ErrorBody),
        (status = 402, description = "Spend cap reached, or free allowance used up with no card on file", body = ErrorBody),
        (status = 422, description = "The `Idempotency-Key` was used with a different request", body = ErrorBody),
        (status = 413, description = "Body too large", body = ErrorBody),
        (status = 415, description = "Body is not JSON", body = ErrorBody),
        (status = 502, description = "The recipe or provider failed", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn listing_enhance(
    call: AuthenticatedJson<ListingEnhanceRequest>,
    idempotency: Idempotency,
    service: Data<Service>,
) -> Result<HttpResponse, ApiError> {
    Ok(accepted(
        service.api().with_idempotency_key(idempotency.key.as_ref()).listing_enhance(&call.caller, call.body).await?,
    ))
}

/// Lot trace: an aerial photo, the parcel boundary and the ground scale to the measured parcel
/// (acres, square feet, perimeter, every side) and the photo with the parcel isolated and
/// annotated. Synchronous: 200 with the result, or 202 with the task to poll when it takes longer
/// than the server's wait (`SYNC_RECIPE_WAIT_SECS`).
#[utoipa::path(
    post, path = "/v1/recipes/lot-trace", tag = "Recipes",
    request_body = LotTraceRequest,
    params(Idempotency),
    responses(
        (status = 200, description = "The traced parcel; billed at `cost_usd`", body = LotTraceResult),
        (status = 202, description = "Still running when the wait ran out; poll `poll_url`", body = QueuedTask,
            headers(("Location" = String, description = "The poll URL"))),
        (status = 400, description = "Missing or invalid input, including points outside the image or an undecodable photo (nothing billed)", body = ErrorBody),
        (status = 401, description = "Invalid or missing API key", body = ErrorBody),
        (status = 402, description = "Spend cap reached, or free allowance used up with no card on file", body = ErrorBody),
        (status = 422, description = "The `Idempotency-Key` was used with a different request", body = ErrorBody),
        (status = 413, description = "Body too large", body = ErrorBody),
        (status = 415, description = "Body is not JSON", body = ErrorBody),
        (status = 502, description = "The recipe failed (nothing billed)", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn lot_trace(
    call: AuthenticatedJson<LotTraceRequest>,
    idempotency: Idempotency,
    service: Data<Service>,
) -> Result<HttpResponse, ApiError> {
    Ok(synchronous(
        service.api().with_idempotency_key(idempotency.key.as_ref()).lot_trace(&call.caller, call.body).await?,
    ))
}

/// A synchronous recipe's answer: 200 with its result, or 202 with the task when the wait ran out.
pub(crate) fn synchronous<R: serde::Serialize>(outcome: SyncOutcome<R>) -> HttpResponse {
    match outcome {
        SyncOutcome::Finished(result) => HttpResponse::Ok().json(result),
        SyncOutcome::Pending(queued) => accepted(queued),
    }
}

/// Listing reel: 1 to 3 listing stills and the listing's details to a 1080x1920, 30 fps H.264
/// video with captions inside the platforms' safe zone, an end card, and optional voiceover and
/// music; plus a cover JPEG and the captions as SRT and WebVTT. Poll
/// `GET /v1/recipes/reel/{reel_id}` (not `/v1/tasks`).
#[utoipa::path(
    post, path = "/v1/recipes/reel", tag = "Recipes",
    request_body = ReelRequest,
    params(Idempotency),
    responses(
        (status = 202, description = "Reel accepted; poll `poll_url`", body = QueuedReel,
            headers(("Location" = String, description = "The poll URL"))),
        (status = 400, description = "Missing or invalid input, such as no photos or more than 3 (the message names the field)", body = ErrorBody),
        (status = 401, description = "Invalid or missing API key", body = ErrorBody),
        (status = 402, description = "Spend cap reached, or free allowance used up with no card on file", body = ErrorBody),
        (status = 422, description = "The `Idempotency-Key` was used with a different request", body = ErrorBody),
        (status = 413, description = "Body too large", body = ErrorBody),
        (status = 415, description = "Body is not JSON", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn reel(
    call: AuthenticatedJson<ReelRequest>,
    idempotency: Idempotency,
    service: Data<Service>,
) -> Result<HttpResponse, ApiError> {
    let queued = service.api().with_idempotency_key(idempotency.key.as_ref()).reel(&call.caller, call.body).await?;
    Ok(accepted_at(&queued.poll_url.clone(), queued.replayed, queued))
}

/// Get a reel: its status and, once succeeded, the video, cover and captions, and the billed cost.
#[utoipa::path(
    get, path = "/v1/recipes/reel/{reel_id}", tag = "Recipes",
    params(("reel_id" = String, Path, description = "Reel id returned by `POST /v1/recipes/reel`")),
    responses(
        (status = 200, description = "The reel", body = ReelView),
        (status = 401, description = "Invalid or missing API key", body = ErrorBody),
        (status = 404, description = "No such reel for this key (task ids are not reels)", body = ErrorBody),
        (status = 410, description = "The reel finished longer ago than the retention period and was removed", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn get_reel(
    Authenticated(caller): Authenticated,
    reel_id: web::Path<String>,
    service: Data<Service>,
) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(service.api().reel_status(&caller, &reel_id).await?))
}

/// Get a task: its status and, once succeeded, its outputs and billed cost.
#[utoipa::path(
    get, path = "/v1/tasks/{id}", tag = "Generation",
    params(("id" = String, Path, description = "Task id returned by a submit call")),
    responses(
        (status = 200, description = "The task", body = TaskView),
        (status = 401, description = "Invalid or missing API key", body = ErrorBody),
        (status = 404, description = "No such task for this key", body = ErrorBody),
        (status = 410, description = "The task finished longer ago than the retention period and was removed", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn get_task(
    req: HttpRequest,
    id: web::Path<String>,
    service: Data<Service>,
) -> Result<HttpResponse, ApiError> {
    // What the `Authenticated` extractor does, with the task read in the same trip to the
    // database as the key: 401, then 429, then the task (or its 404 or 410).
    let (caller, task) = service.api().authenticate_and_poll(bearer_token(&req), &id).await?;
    admit(&req, &service, &caller, RateClass::Read).await?;
    Ok(HttpResponse::Ok().json(task?))
}

/// Cancel a task: a queued one at once, a running one by stopping its process or cancelling it at
/// its provider. It ends `failed` with `error: "cancelled by client"`, its hold released and
/// nothing billed.
#[utoipa::path(
    post, path = "/v1/tasks/{id}/cancel", tag = "Generation",
    params(("id" = String, Path, description = "Task id returned by a submit call")),
    responses(
        (status = 200, description = "The task, cancelled", body = TaskView),
        (status = 401, description = "Invalid or missing API key", body = ErrorBody),
        (status = 404, description = "No such task for this key", body = ErrorBody),
        (status = 409, description = "The task already ended; the message names its state", body = ErrorBody),
        (status = 410, description = "The task finished longer ago than the retention period and was removed", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn cancel_task(
    Authenticated(caller): Authenticated,
    id: web::Path<String>,
    service: Data<Service>,
) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(service.api().cancel_task(&caller, &id).await?))
}

/// Cancel a reel, as a task is cancelled.
#[utoipa::path(
    post, path = "/v1/recipes/reel/{reel_id}/cancel", tag = "Recipes",
    params(("reel_id" = String, Path, description = "Reel id returned by `POST /v1/recipes/reel`")),
    responses(
        (status = 200, description = "The reel, cancelled", body = ReelView),
        (status = 401, description = "Invalid or missing API key", body = ErrorBody),
        (status = 404, description = "No such reel for this key (task ids are not reels)", body = ErrorBody),
        (status = 409, description = "The reel already ended; the message names its state", body = ErrorBody),
        (status = 410, description = "The reel finished longer ago than the retention period and was removed", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn cancel_reel(
    Authenticated(caller): Authenticated,
    reel_id: web::Path<String>,
    service: Data<Service>,
) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(service.api().cancel_reel(&caller, &reel_id).await?))
}

/// List the live models with their inputs, parameters and price rules.
#[utoipa::path(
    get, path = "/v1", tag = "Models",
    responses(
        (status = 200, description = "The live engines", body = ModelList),
        (status = 401, description = "Invalid or missing API key", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn list_models(_: Authenticated, service: Data<Service>) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(service.api().list_models()))
}

/// This key's billed spend, holds, cap and headroom, and its account's free allowance and invoice.
#[utoipa::path(
    get, path = "/v1/usage", tag = "Billing",
    responses(
        (status = 200, description = "Usage of this key", body = UsageView),
        (status = 401, description = "Invalid or missing API key", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn usage(
    Authenticated(caller): Authenticated,
    service: Data<Service>,
) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(service.api().usage(&caller).await?))
}

/// The filters of the webhook delivery log.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct DeliveriesQuery {
    /// Only the deliveries of this task or reel (its `id` or `reel_id`).
    #[param(max_length = 64)] // service's JOB_ID_FILTER_MAX; the contract test holds the two equal
    task_id: Option<String>,
    /// How many to list, newest first (default 50).
    #[param(minimum = 1, maximum = 100)] // service's MAX_LISTED, held equal by the contract test
    limit: Option<i64>,
}

/// The webhook delivery log of this key, newest first: each message (its `webhook-id`, event,
/// receiver and status) with every attempt's time, status code or error, and the next try.
#[utoipa::path(
    get, path = "/v1/webhooks/deliveries", tag = "Generation",
    params(DeliveriesQuery),
    responses(
        (status = 200, description = "The deliveries", body = WebhookDeliveryList),
        (status = 400, description = "A filter is not valid", body = ErrorBody),
        (status = 401, description = "Invalid or missing API key", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn webhook_deliveries(
    Authenticated(caller): Authenticated,
    req: HttpRequest,
    service: Data<Service>,
) -> Result<HttpResponse, ApiError> {
    let query = web::Query::<DeliveriesQuery>::from_query(req.query_string())
        .map_err(|e| ApiError::from(service::ServiceError::BadRequest(format!("query: {e}"))))?
        .into_inner();
    Ok(HttpResponse::Ok().json(service.api().webhook_deliveries(&caller, query.task_id.as_deref(), query.limit).await?))
}

#[derive(Deserialize)]
pub(crate) struct Signature {
    expires: i64,
    sig: String,
}

/// Download an output through its signed URL (no bearer header needed).
#[utoipa::path(
    get, path = "/files/{path}", tag = "Generation",
    params(
        ("path" = String, Path, description = "Output path from `output[].url`"),
        ("expires" = i64, Query, minimum = 0, description = "Expiry, Unix seconds"),
        ("sig" = String, Query, pattern = "^[0-9a-f]{64}$", description = "Signature (hex HMAC-SHA256)"),
    ),
    responses(
        (status = 200, description = "The file", content_type = "application/octet-stream"),
        (status = 400, description = "Missing signature parameters", body = ErrorBody),
        (status = 403, description = "Invalid or expired signature", body = ErrorBody),
        (status = 404, description = "No such file", body = ErrorBody),
    )
)]
pub(crate) async fn download(
    path: web::Path<String>,
    signature: Result<web::Query<Signature>, actix_web::Error>,
    service: Data<Service>,
) -> Result<HttpResponse, ApiError> {
    let signature = signature.map_err(|_| {
        ApiError::new(ErrorCode::InvalidInput, "a download URL needs its `expires` and `sig` parameters")
    })?;
    let (object, content_type) = service.api().open_file(&path, signature.expires, &signature.sig).await?;
    let disposition = content_disposition(&path, &content_type);
    Ok(HttpResponse::Ok()
        .content_type(content_type)
        .insert_header((header::CACHE_CONTROL, "private, max-age=3600"))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        // Outputs are media, never pages: nothing in them may run or load anything.
        .insert_header((header::CONTENT_SECURITY_POLICY, "default-src 'none'; sandbox"))
        .insert_header((header::CONTENT_DISPOSITION, disposition))
        // Streamed as the store delivers it: a large video costs the server a chunk, not the file.
        .no_chunking(object.size)
        .streaming(object.chunks.map(|chunk| chunk.map_err(|e| std::io::Error::other(e.to_string())))))
}

/// Media a browser shows inline; anything else (captions, unknown types) downloads as a file.
fn content_disposition(path: &str, content_type: &str) -> String {
    let name: String = path
        .rsplit('/')
        .next()
        .unwrap_or("output")
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
        .collect();
    let shown = ["image/", "video/", "audio/"].iter().any(|kind| content_type.starts_with(kind));
    format!("{}; filename=\"{name}\"", if shown { "inline" } else { "attachment" })
}

#[derive(Deserialize)]
pub(crate) struct CallbackToken {
    token: Option<String>,
}

/// A provider's callback about a task submitted to it (`fal` or `replicate`). Authenticated by the
/// provider's signature (fal: ED25519 with the keys of its JWKS; Replicate: Standard Webhooks
/// HMAC), not by an API key; the task is then looked at at once.
#[utoipa::path(
    post, path = "/v1/webhooks/{provider}/{task_id}", tag = "Providers",
    params(
        ("provider" = String, Path, description = "`fal` or `replicate`"),
        ("task_id" = String, Path, description = "The task the callback is about"),
        ("token" = String, Query, description = "Our signature of the provider and task, from the callback URL we gave"),
    ),
    request_body(content = serde_json::Value, description = "The provider's callback body, as it signed it"),
    responses(
        (status = 200, description = "Accepted", body = serde_json::Value),
        (status = 400, description = "Signed, but about another request or unreadable", body = ErrorBody),
        (status = 401, description = "Missing or wrong token, or a missing, stale or wrong signature", body = ErrorBody),
        (status = 404, description = "No such provider or task", body = ErrorBody),
        (status = 413, description = "Body too large", body = ErrorBody),
        (status = 503, description = "The provider's signing keys cannot be obtained right now", body = ErrorBody),
    )
)]
pub(crate) async fn provider_callback(
    req: HttpRequest,
    path: web::Path<(String, String)>,
    body: Payload,
    service: Data<Service>,
) -> Result<HttpResponse, ApiError> {
    let (provider, task_id) = path.into_inner();
    let token = web::Query::<CallbackToken>::from_query(req.query_string()).ok().and_then(|q| q.into_inner().token);
    // The body is read only for a caller holding our token.
    service.api().check_callback_token(&provider, &task_id, token.as_deref())?;
    let body = read_body(&req, body).await?;
    let headers = req.headers().clone();
    let header = move |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
    service.api().provider_callback(&provider, &task_id, token.as_deref(), &header, &body).await?;
    Ok(HttpResponse::Ok().json(serde_json::json!({"received": true})))
}

/// Liveness probe (no key needed).
#[utoipa::path(get, path = "/healthz", tag = "Operations", responses((status = 200, description = "Alive", body = Object)))]
pub(crate) async fn health() -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({"status": "ok"}))
}

/// Readiness probe (no key needed): the database answers with every migration applied and the
/// output store takes a write. 503 while any check fails, so a load balancer sends no traffic.
#[utoipa::path(get, path = "/readyz", tag = "Operations", responses(
    (status = 200, description = "Ready", body = ReadinessView),
    (status = 503, description = "Not ready; `checks` says which part failed", body = ReadinessView),
))]
pub(crate) async fn ready(service: Data<Service>) -> HttpResponse {
    let readiness = service.api().readiness().await;
    let mut response = if readiness.ready { HttpResponse::Ok() } else { HttpResponse::ServiceUnavailable() };
    response.insert_header((header::CACHE_CONTROL, "no-store")).json(readiness)
}

/// Prometheus metrics (text format), for the bearer of `METRICS_TOKEN`; 401 without a token, 404
/// when the operator set none.
#[utoipa::path(get, path = "/metrics", tag = "Operations", responses(
    (status = 200, description = "Metrics in the Prometheus text format", content_type = "text/plain"),
    (status = 401, description = "Missing or wrong metrics token", body = ErrorBody),
    (status = 404, description = "Metrics are off (no `METRICS_TOKEN`)", body = ErrorBody),
), security(("bearer" = [])))]
pub(crate) async fn metrics(req: HttpRequest, service: Data<Service>) -> Result<HttpResponse, ApiError> {
    let token = bearer_token(&req);
    let refused =
        || ApiError::new(ErrorCode::Unauthorized, "send the metrics token: Authorization: Bearer <METRICS_TOKEN>");
    if token.is_none() {
        return Err(refused());
    }
    if service.config().metrics_token.is_none() {
        return Err(ApiError::new(
            ErrorCode::NotFound,
            "metrics are off: the operator sets METRICS_TOKEN to serve them",
        ));
    }
    if !service.operator().metrics_token_matches(token) {
        return Err(refused());
    }
    let text = service.operator().metrics().await?;
    Ok(HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .body(text))
}

/// Anything else: under `/v1` and `/api` the key is checked first (401 before 404), so unknown
/// paths reveal nothing to unauthenticated callers.
pub(crate) async fn fallback(req: HttpRequest, service: Data<Service>) -> Result<HttpResponse, ApiError> {
    let path = req.path();
    if path == "/v1" || path.starts_with("/v1/") || path.starts_with("/api/") {
        authenticate(&req, &service).await?;
    }
    Err(ApiError::new(ErrorCode::NotFound, format!("no such endpoint: {} {}; see /openapi.json", req.method(), path)))
}

/// A known path with the wrong method: 401 first for protected paths, then 405 with `Allow`.
pub(crate) async fn wrong_method(
    req: HttpRequest,
    service: Data<Service>,
    allow: &'static str,
) -> Result<HttpResponse, ApiError> {
    if req.path().starts_with("/v1") {
        authenticate(&req, &service).await?;
    }
    Ok(method_not_allowed(&req, allow))
}

/// 405 with the `Allow` header RFC 9110 asks for.
pub(crate) fn method_not_allowed(req: &HttpRequest, allow: &'static str) -> HttpResponse {
    let message = format!("method {} not allowed on {}; use {allow} (see /openapi.json)", req.method(), req.path());
    HttpResponse::MethodNotAllowed()
        .insert_header((header::ALLOW, allow))
        .json(ErrorBody { error: message, code: ErrorCode::MethodNotAllowed })
}
