//! What the front ends send back: the shapes of queued tasks, tasks, reels, models, usage and the
//! synchronous recipes' results. The HTTP API and the connector answer with these same types.

use domain::catalog::EngineInputs;
use domain::{Family, OutputKind, ParamRule, PriceRule, TaskStatus, Usd};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Answer to an accepted job (HTTP 202).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct QueuedTask {
    /// Task id, for `GET /v1/tasks/{id}`.
    pub id: String,
    /// Always `queued`.
    pub status: TaskStatus,
    /// Published price of the job, held until it ends (decimal USD string).
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "0.0400"))]
    pub price_usd: Usd,
    /// Address to poll.
    #[cfg_attr(feature = "openapi", schema(format = "uri"))]
    pub poll_url: String,
    /// Whether this answers a retry under an idempotency key with the task an earlier try made
    /// (HTTP sends it as `Idempotent-Replayed: true`; it is not part of the body).
    #[serde(skip)]
    pub replayed: bool,
}

/// Answer to an accepted reel (HTTP 202 of `POST /v1/recipes/reel`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct QueuedReel {
    /// Reel id (`reel_...`), for `GET /v1/recipes/reel/{reel_id}`.
    pub reel_id: String,
    /// Always `queued`.
    pub status: TaskStatus,
    /// Published price of the reel, held until it ends (decimal USD string).
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "0.2500"))]
    pub price_usd: Usd,
    /// Address to poll.
    #[cfg_attr(feature = "openapi", schema(format = "uri"))]
    pub poll_url: String,
    /// As [`QueuedTask::replayed`].
    #[serde(skip)]
    pub replayed: bool,
}

impl From<QueuedTask> for QueuedReel {
    fn from(queued: QueuedTask) -> Self {
        QueuedReel {
            reel_id: queued.id,
            status: queued.status,
            price_usd: queued.price_usd,
            poll_url: queued.poll_url,
            replayed: queued.replayed,
        }
    }
}

/// A reel as its owner sees it (HTTP 200 of `GET /v1/recipes/reel/{reel_id}`): the same states
/// and billing as a task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReelView {
    /// Reel id.
    pub reel_id: String,
    /// `queued`, `running`, `succeeded` or `failed`.
    pub status: TaskStatus,
    /// Once succeeded: the MP4 (`video`), the cover (`image`, JPEG) and the captions as SRT and
    /// WebVTT (`text`), in that order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Vec<OutputView>>,
    /// Billed cost (decimal USD string); present once succeeded.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, example = "0.2500"))]
    pub cost_usd: Option<Usd>,
    /// Price quoted and held at submit.
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "0.2500"))]
    pub price_usd: Usd,
    /// Why the reel failed; null otherwise.
    pub error: Option<String>,
    /// Once succeeded: the video's facts (size, fps, frames, duration), every caption with its
    /// times and its box on screen, the safe zone, each photo's framing and the voiceover script.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub result: Option<serde_json::Value>,
    /// Acceptance time (RFC 3339).
    pub created_at: String,
    /// When a worker first started it.
    pub started_at: Option<String>,
    /// When it reached `succeeded` or `failed`.
    pub finished_at: Option<String>,
}

impl From<TaskView> for ReelView {
    fn from(task: TaskView) -> Self {
        ReelView {
            reel_id: task.id,
            status: task.status,
            output: task.output,
            cost_usd: task.cost_usd,
            price_usd: task.price_usd,
            error: task.error,
            result: task.result,
            created_at: task.created_at,
            started_at: task.started_at,
            finished_at: task.finished_at,
        }
    }
}

/// One output file of a succeeded task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OutputView {
    /// Signed download URL; works without the bearer header until it expires.
    pub url: String,
    /// `image`, `video`, `audio`, `text` (captions) or `document` (a PDF).
    #[serde(rename = "type")]
    pub kind: OutputKind,
    /// MIME type, such as `image/png`.
    pub content_type: String,
    /// Pixel width of images and videos.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    /// Pixel height of images and videos.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub height: Option<u32>,
    /// Length of videos and recordings, seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_seconds: Option<f64>,
    /// When `url` stops working (RFC 3339); poll the task again for a fresh one.
    pub expires_at: String,
}

/// A task as its owner sees it (HTTP 200 of `GET /v1/tasks/{id}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskView {
    /// Task id.
    pub id: String,
    /// Engine id.
    pub model: String,
    /// `queued`, `running`, `succeeded` or `failed`.
    pub status: TaskStatus,
    /// Outputs; present once the task has succeeded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Vec<OutputView>>,
    /// Billed cost (decimal USD string); present once the task has succeeded.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, example = "0.0400"))]
    pub cost_usd: Option<Usd>,
    /// Price quoted and held at submit.
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "0.0400"))]
    pub price_usd: Usd,
    /// Why the task failed; null otherwise.
    pub error: Option<String>,
    /// Once succeeded: true when the outputs are sandbox media from a built-in engine rather than
    /// a real model's result. Absent before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<bool>,
    /// Once a recipe has succeeded: its structured result (a traced parcel's measurements, the
    /// adjustments made to a photo). Absent for engines.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub result: Option<serde_json::Value>,
    /// Acceptance time (RFC 3339).
    pub created_at: String,
    /// When a worker first started it.
    pub started_at: Option<String>,
    /// When it reached `succeeded` or `failed`.
    pub finished_at: Option<String>,
}

/// How a model is priced, as listed by `GET /v1`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PriceView {
    /// Unit: `call`, `image`, `megapixel`, `second` or `thousand_chars`.
    pub per: String,
    /// Price of one unit (decimal USD string).
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "0.0400"))]
    pub usd: Usd,
}

impl From<&PriceRule> for PriceView {
    fn from(rule: &PriceRule) -> Self {
        let per = match rule {
            PriceRule::Call { .. } => "call",
            PriceRule::Image { .. } => "image",
            PriceRule::Megapixel { .. } => "megapixel",
            PriceRule::Second { .. } => "second",
            PriceRule::ThousandChars { .. } => "thousand_chars",
        };
        PriceView { per: per.to_string(), usd: rule.unit_price() }
    }
}

/// A live engine (an item of `GET /v1`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ModelView {
    /// Engine id, the `model` of a generate request.
    pub id: String,
    /// Engine family.
    pub family: Family,
    /// What it does.
    pub title: String,
    /// For each of `prompt`, `image_url`, `video_url`, `audio_url`: `required`, `optional` or `rejected`.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub inputs: EngineInputs,
    /// Accepted `params` keys and their rules (type, range, allowed values, default).
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub params: BTreeMap<String, ParamRule>,
    /// Price rule.
    pub price: PriceView,
}

/// Answer of `GET /v1`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ModelList {
    /// API version.
    pub version: String,
    /// The live engines.
    pub models: Vec<ModelView>,
}

/// One billed job in a usage report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ChargeView {
    /// Task billed.
    pub task_id: String,
    /// Amount (decimal USD string).
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub amount_usd: Usd,
    /// Part drawn on the free allowance.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub from_free_allowance_usd: Usd,
    /// Time (RFC 3339).
    pub at: String,
}

/// Answer of `GET /v1/usage`: this key's spend and its account's standing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UsageView {
    /// Key id (not the secret).
    pub key_id: String,
    /// Billed spend of this key.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub spent_usd: Usd,
    /// Prices held by this key's unfinished jobs.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub held_usd: Usd,
    /// The key's cumulative spend cap; null when uncapped.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub spend_cap_usd: Option<Usd>,
    /// What can still be accepted under the cap; null when uncapped.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub cap_headroom_usd: Option<Usd>,
    /// Free allowance neither used nor held.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub free_allowance_remaining_usd: Usd,
    /// Whether the account has a card on file.
    pub card_on_file: bool,
    /// Charges beyond the allowance, owed on the account's invoice.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub invoice_balance_usd: Usd,
    /// This key's latest charges, newest first.
    pub recent_charges: Vec<ChargeView>,
}

/// The answer of a finished lot-trace (HTTP 200): the task, with the measured parcel beside its
/// fields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LotTraceResult {
    /// The task (its `id` also readable at `GET /v1/tasks/{id}`).
    #[serde(flatten)]
    pub task: TaskView,
    /// The measured parcel.
    #[serde(flatten)]
    pub parcel: recipes::lot_trace::measure::Measurement,
}

/// The answer of a finished listing kit (HTTP 200): the task (every file in `output`), with the
/// named pieces, captions and Fair Housing findings beside its fields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ListingKitResult {
    /// The task (every file in `output`, also readable at `GET /v1/tasks/{id}`).
    #[serde(flatten)]
    pub task: TaskView,
    /// The print flyer.
    pub flyer: FlyerPieces,
    /// The social posts.
    pub social: SocialPieces,
    /// The story, a 1080x1920 PNG with its text inside the safe zone.
    pub story: OutputView,
    /// Captions for the MLS, portals, a website and social media.
    pub captions: recipes::listing_kit::captions::Captions,
    /// What the Fair Housing check changed.
    pub fair_housing: FairHousingReport,
    /// A note for each photo printed below 300 ppi on the flyer or shown from fewer pixels than a
    /// screen piece has (photos are never enlarged beyond what they hold without saying so).
    pub notes: Vec<String>,
    /// "One or more photos virtually staged." when a photo is marked staged (every piece then
    /// carries it), else null.
    pub staged_disclosure: Option<String>,
    /// The brand as applied: colours, the text colour on the main colour, the typeface, and the
    /// WCAG contrast ratio of every text/background pair.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub brand: serde_json::Value,
    /// Where each line of text went on each piece (flyer in points from the trim's top left,
    /// screens in pixels), and the story's safe zone.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub layout: serde_json::Value,
}

/// The listing kit's print flyer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FlyerPieces {
    /// Press-ready PDF: the page is the trim plus a 0.125 in bleed, with TrimBox and BleedBox
    /// set and every font embedded.
    pub pdf: OutputView,
    /// The trim as a PNG at 150 ppi.
    pub png: OutputView,
    /// Paper size.
    pub paper: domain::listing_kit::Paper,
    /// Trim width and height, inches.
    pub trim_inches: Vec<f64>,
    /// Bleed on each side, inches.
    pub bleed_inches: f64,
    /// Page (trim plus bleed) width and height, inches.
    pub page_inches: Vec<f64>,
    /// Resolution of `png`.
    pub png_ppi: f64,
    /// Each photo as placed: its index, slot (points), pixels and printed ppi.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub photos: Vec<serde_json::Value>,
}

/// The listing kit's social posts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SocialPieces {
    /// 1080x1080 PNG.
    pub square: OutputView,
    /// 1080x1350 PNG.
    pub portrait: OutputView,
}

/// What the listing kit's Fair Housing check changed, in the client's texts and in ours.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FairHousingReport {
    /// Each phrase found, where, and what replaced it.
    pub findings: Vec<recipes::listing_kit::fair_housing::Finding>,
}

/// Answer of `GET /readyz` (200 when `ready`, 503 otherwise).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReadinessView {
    /// Whether every check passed.
    pub ready: bool,
    /// Each check: `ok`, or what is wrong (details are in the server's log).
    pub checks: ReadinessChecks,
}

/// The checks behind [`ReadinessView`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReadinessChecks {
    /// The database answers (`ok`, `unreachable`, `failing`, `timed out`).
    pub database: String,
    /// Every migration of this release is applied (`ok`, `N pending`, `unknown`).
    pub migrations: String,
    /// The output store takes a write and a delete (`ok`, `not writable`, `timed out`).
    pub store: String,
}

/// A job as its cancel left it: a task, or a reel in its own shape (whichever the id names).
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum CancelledJob {
    /// A `task_...` id.
    Task(TaskView),
    /// A `reel_...` id.
    Reel(ReelView),
}

/// One webhook message of a task (`GET /v1/webhooks/deliveries`): its id (the `webhook-id`
/// header), where it goes, and every attempt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WebhookDeliveryView {
    /// The message id, sent as `webhook-id` on every attempt: the receiver's dedup key.
    pub id: String,
    /// The task (or reel) it announces.
    pub task_id: String,
    /// `running` or `completed`.
    pub event: String,
    /// The receiver.
    pub url: String,
    /// `pending` (another attempt is due at `next_attempt_at`), `delivered` (a 2xx answer) or
    /// `failed` (every attempt refused; given up).
    pub status: String,
    /// The attempts so far, oldest first.
    pub attempts: Vec<WebhookAttemptView>,
    /// When the next attempt is due, while pending (RFC 3339).
    pub next_attempt_at: Option<String>,
    /// When the event happened (RFC 3339).
    pub created_at: String,
    /// When it was delivered or given up (RFC 3339).
    pub finished_at: Option<String>,
}

/// One attempt of a webhook delivery.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WebhookAttemptView {
    /// Its number, from 1.
    pub attempt: i32,
    /// When it was sent (RFC 3339).
    pub at: String,
    /// The receiver's HTTP status, when it answered.
    pub status_code: Option<i32>,
    /// Why it did not count as delivered (the answer's status and start, a timeout, no
    /// connection); null for a 2xx.
    pub error: Option<String>,
    /// How long it took, milliseconds.
    pub duration_ms: i64,
}

/// The caller's webhook deliveries, newest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WebhookDeliveryList {
    /// The deliveries.
    pub deliveries: Vec<WebhookDeliveryView>,
}
