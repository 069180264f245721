//! `POST /v1/recipes/listing-kit`.

use crate::errors::{ApiError, ErrorBody};
use crate::extract::{AuthenticatedJson, Idempotency};
use crate::routes::synchronous;
use actix_web::web::Data;
use actix_web::HttpResponse;
use domain::ListingKitRequest;
use service::views::{ListingKitResult, QueuedTask};
use service::Service;

/// Listing kit: listing photos (1 to 10, the first the hero) and details to a brand-locked
/// marketing kit: a press-ready flyer (PDF with trim and bleed, and a PNG), a square and a
/// portrait social post, a story, and captions for the MLS, portals, a website and social media.
/// Every text passes a Fair Housing check first. Synchronous: 200 with the result, or 202 with
/// the task to poll when it takes longer than the server's wait (`SYNC_RECIPE_WAIT_SECS`).
#[utoipa::path(
    post, path = "/v1/recipes/listing-kit", tag = "Recipes",
    request_body = ListingKitRequest,
    params(Idempotency),
    responses(
        (status = 200, description = "The kit; billed at `cost_usd`", body = ListingKitResult),
        (status = 202, description = "Still running when the wait ran out; poll `poll_url`", body = QueuedTask),
        (status = 400, description = "Missing or invalid input: no photos or more than 10, no details, a bad colour, an unknown field (the message names it; nothing billed)", body = ErrorBody),
        (status = 401, description = "Invalid or missing API key", body = ErrorBody),
        (status = 402, description = "Spend cap reached, or free allowance used up with no card on file", body = ErrorBody),
        (status = 422, description = "The `Idempotency-Key` was used with a different request", body = ErrorBody),
        (status = 413, description = "Body too large", body = ErrorBody),
        (status = 415, description = "Body is not JSON", body = ErrorBody),
        (status = 502, description = "A photo or the logo could not be fetched or decoded, or the kit failed (nothing billed)", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn listing_kit(
    call: AuthenticatedJson<ListingKitRequest>,
    idempotency: Idempotency,
    service: Data<Service>,
) -> Result<HttpResponse, ApiError> {
    Ok(synchronous(
        service.api().with_idempotency_key(idempotency.key.as_ref()).listing_kit(&call.caller, call.body).await?,
    ))
}
