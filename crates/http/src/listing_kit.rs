//! `POST /v1/recipes/listing-kit` and the schema of its result.

use crate::errors::{ApiError, ErrorBody};
use crate::routes::{authenticate, parse_json, read_body, synchronous};
use actix_web::web::{Data, Payload};
use actix_web::{HttpRequest, HttpResponse};
use domain::listing_kit::Paper;
use domain::ListingKitRequest;
use recipes::listing_kit::captions::Captions;
use recipes::listing_kit::fair_housing::Finding;
use service::views::{OutputView, QueuedTask, TaskView};
use service::Service;
use utoipa::ToSchema;

/// A finished listing kit (HTTP 200): the task (every file in `output`, also readable at
/// `GET /v1/tasks/{id}`), with the named pieces, captions and Fair Housing findings beside it.
#[derive(ToSchema)]
#[allow(dead_code)]
pub(crate) struct ListingKitResult {
    #[serde(flatten)]
    task: TaskView,
    flyer: FlyerPieces,
    social: SocialPieces,
    /// The story, a 1080x1920 PNG with its text inside the safe zone.
    story: OutputView,
    captions: Captions,
    fair_housing: FairHousingReport,
    /// A note for each photo printed below 300 ppi on the flyer or shown from fewer pixels than a
    /// screen piece has (photos are never enlarged beyond what they hold without saying so).
    notes: Vec<String>,
    /// "One or more photos virtually staged." when a photo is marked staged (every piece then
    /// carries it), else null.
    staged_disclosure: Option<String>,
    /// The brand as applied: colours, the text colour on the main colour, the typeface, and the
    /// WCAG contrast ratio of every text/background pair.
    #[schema(value_type = Object)]
    brand: serde_json::Value,
    /// Where each line of text went on each piece (flyer in points from the trim's top left,
    /// screens in pixels), and the story's safe zone.
    #[schema(value_type = Object)]
    layout: serde_json::Value,
}

/// The print flyer.
#[derive(ToSchema)]
#[allow(dead_code)]
struct FlyerPieces {
    /// Press-ready PDF: the page is the trim plus a 0.125 in bleed, with TrimBox and BleedBox
    /// set and every font embedded.
    pdf: OutputView,
    /// The trim as a PNG at 150 ppi.
    png: OutputView,
    paper: Paper,
    /// Trim width and height, inches.
    trim_inches: Vec<f64>,
    /// Bleed on each side, inches.
    bleed_inches: f64,
    /// Page (trim plus bleed) width and height, inches.
    page_inches: Vec<f64>,
    /// Resolution of `png`.
    png_ppi: f64,
    /// Each photo as placed: its index, slot (points), pixels and printed ppi.
    #[schema(value_type = Vec<Object>)]
    photos: Vec<serde_json::Value>,
}

/// The social posts.
#[derive(ToSchema)]
#[allow(dead_code)]
struct SocialPieces {
    /// 1080x1080 PNG.
    square: OutputView,
    /// 1080x1350 PNG.
    portrait: OutputView,
}

/// What the Fair Housing check changed, in the client's texts and in ours.
#[derive(ToSchema)]
#[allow(dead_code)]
struct FairHousingReport {
    findings: Vec<Finding>,
}

/// Listing kit: listing photos (1 to 10, the first the hero) and details to a brand-locked
/// marketing kit: a press-ready flyer (PDF with trim and bleed, and a PNG), a square and a
/// portrait social post, a story, and captions for the MLS, portals, a website and social media.
/// Every text passes a Fair Housing check first. Synchronous: 200 with the result, or 202 with
/// the task to poll when it takes longer than the server's wait (`SYNC_RECIPE_WAIT_SECS`).
#[utoipa::path(
    post, path = "/v1/recipes/listing-kit", tag = "Recipes",
    request_body = ListingKitRequest,
    responses(
        (status = 200, description = "The kit; billed at `cost_usd`", body = ListingKitResult),
        (status = 202, description = "Still running when the wait ran out; poll `poll_url`", body = QueuedTask),
        (status = 400, description = "Missing or invalid input: no photos or more than 10, no details, a bad colour, an unknown field (the message names it; nothing billed)", body = ErrorBody),
        (status = 401, description = "Invalid or missing API key", body = ErrorBody),
        (status = 402, description = "Spend cap reached, or free allowance used up with no card on file", body = ErrorBody),
        (status = 413, description = "Body too large", body = ErrorBody),
        (status = 415, description = "Body is not JSON", body = ErrorBody),
        (status = 502, description = "A photo or the logo could not be fetched or decoded, or the kit failed (nothing billed)", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn listing_kit(
    req: HttpRequest,
    body: Payload,
    service: Data<Service>,
) -> Result<HttpResponse, ApiError> {
    let caller = authenticate(&req, &service).await?;
    let body = read_body(&req, body).await?;
    let request: ListingKitRequest = parse_json(&req, &body)?;
    Ok(synchronous(service.listing_kit(&caller, request).await?))
}
