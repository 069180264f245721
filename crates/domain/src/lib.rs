//! Pure rules of the media-generation service, with no I/O: money, the engine catalog's types and
//! request validation, price quotes, the task lifecycle, billing decisions, API-key hashing, idempotency keys and
//! webhook requests.
//!
//! Every other crate builds on these types; keeping them free of databases and networks lets the
//! rules be tested exhaustively on their own.

pub mod billing;
pub mod catalog;
pub mod idempotency;
pub mod job_kind;
pub mod keys;
pub mod limits;
pub mod listing_kit;
pub mod money;
pub mod oauth;
pub mod rate_limit;
pub mod recipe;
pub mod reel;
pub mod task;
pub mod url_host;
pub mod validation;
pub mod webhook;

pub use billing::{AccountLimits, BillingRefusal, Capture, Hold, KeyLimits};
pub use catalog::{EngineSpec, Family, InputRequirement, ParamRule, PriceRule};
pub use idempotency::IdempotencyKey;
pub use job_kind::{Deadlines, JobKind, Recipe};
pub use listing_kit::ListingKitRequest;
pub use money::Usd;
pub use recipe::{ListingEnhanceRequest, LotTraceRequest};
pub use reel::ReelRequest;
pub use task::{FailureKind, OutputKind, TaskStatus};
pub use validation::{GenerateRequest, ValidatedJob, ValidationError};
pub use webhook::{TaskWebhook, WebhookEvent};
