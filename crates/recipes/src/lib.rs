//! The real-estate recipes: pipelines over media operations and engines that turn listing inputs
//! into what an agent or photographer publishes. listing-enhance polishes a listing photo;
//! lot-trace isolates a parcel on an aerial photo and measures it; reel makes listing stills and
//! details into a captioned vertical video; listing-kit makes photos and details into a
//! brand-locked marketing kit (print flyer, social posts, story, captions), Fair Housing safe.
//!
//! Each recipe has a `prepare` step, run at submit time, that checks a request and turns it into a
//! [`RecipeJob`] (so bad input is refused with 400 before anything is held or queued), and a run
//! step, called by a worker through [`run`], that fetches the inputs and produces the files and
//! the structured result.

pub mod colour;
pub mod listing;
pub mod listing_enhance;
pub mod listing_kit;
pub mod lot_trace;
pub mod numbers;
pub mod reel;

use engines::{EngineError, Engines, FetchError, OutputFile};
use serde::{Deserialize, Serialize};

/// A recipe's work as queued: everything needed to run it, already checked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "recipe", rename_all = "kebab-case")]
pub enum RecipeJob {
    /// A listing photo to a polished one.
    ListingEnhance(listing_enhance::ListingEnhanceJob),
    /// An aerial photo and a boundary to a measured, rendered parcel.
    LotTrace(lot_trace::LotTraceJob),
    /// Listing stills and details to a captioned vertical video.
    Reel(Box<reel::ReelJob>),
    /// Listing photos and details to a marketing kit.
    ListingKit(Box<listing_kit::ListingKitJob>),
}

impl RecipeJob {
    /// Which recipe this is.
    pub fn kind(&self) -> domain::Recipe {
        match self {
            RecipeJob::ListingEnhance(_) => domain::Recipe::ListingEnhance,
            RecipeJob::LotTrace(_) => domain::Recipe::LotTrace,
            RecipeJob::Reel(_) => domain::Recipe::Reel,
            RecipeJob::ListingKit(_) => domain::Recipe::ListingKit,
        }
    }

    /// The recipe's input URLs (`data:` URIs included): field label and URL, in the order it reads
    /// them.
    pub fn input_urls(&self) -> Vec<(String, String)> {
        let urls: Vec<(String, &str)> = match self {
            RecipeJob::ListingEnhance(job) => vec![("image_url".into(), &job.image_url)],
            RecipeJob::LotTrace(job) => vec![("image_url".into(), &job.image_url)],
            RecipeJob::Reel(job) => {
                job.photos.iter().enumerate().map(|(i, photo)| (format!("photos[{i}]"), photo.url.as_str())).collect()
            }
            RecipeJob::ListingKit(job) => job
                .photos
                .iter()
                .enumerate()
                .map(|(i, photo)| (format!("photos[{i}]"), photo.url.as_str()))
                .chain(job.brand.logo_url.as_deref().map(|url| ("params.brand.logo_url".to_string(), url)))
                .collect(),
        };
        urls.into_iter().map(|(label, url)| (label, url.to_string())).collect()
    }

    /// The recipe's name, as in its endpoint (`lot-trace`).
    pub fn name(&self) -> &'static str {
        self.kind().name()
    }
}

/// What a finished recipe produced.
#[derive(Clone, Debug)]
pub struct RecipeOutput {
    /// The files, in order.
    pub files: Vec<OutputFile>,
    /// The structured result beside the files (measurements, the adjustments made).
    pub result: serde_json::Value,
}

/// Why a recipe produced nothing.
#[derive(Debug, thiserror::Error)]
pub enum RecipeError {
    /// The client's input cannot be used (the message names the field).
    #[error("{0}")]
    InvalidInput(String),
    /// The recipe failed for a reason that is not the input.
    #[error("recipe failed: {0}")]
    Failed(String),
}

impl From<FetchError> for RecipeError {
    fn from(e: FetchError) -> Self {
        RecipeError::InvalidInput(e.to_string())
    }
}

impl From<EngineError> for RecipeError {
    fn from(e: EngineError) -> Self {
        match e {
            EngineError::Fetch(e) => e.into(),
            EngineError::InvalidInput(m) => RecipeError::InvalidInput(m),
            other => RecipeError::Failed(other.to_string()),
        }
    }
}

/// Runs `job`, fetching its inputs through `engines`; the CPU-bound work runs on the blocking pool.
pub async fn run(engines: &Engines, job: &RecipeJob) -> Result<RecipeOutput, RecipeError> {
    match job {
        RecipeJob::ListingEnhance(job) => listing_enhance::run(engines, job).await,
        RecipeJob::LotTrace(job) => lot_trace::run(engines, job).await,
        RecipeJob::Reel(job) => reel::run(engines, job).await,
        RecipeJob::ListingKit(job) => listing_kit::run(engines, job).await,
    }
}

/// Runs CPU-bound work off the async runtime.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, RecipeError> + Send + 'static,
) -> Result<T, RecipeError> {
    tokio::task::spawn_blocking(work).await.map_err(|e| RecipeError::Failed(format!("recipe crashed: {e}")))?
}

/// Decodes a fetched PNG or JPEG, naming the field on failure.
fn decode_image(bytes: &[u8], field: &str) -> Result<image::DynamicImage, RecipeError> {
    media::codecs::decode_image(bytes)
        .map_err(|e| RecipeError::InvalidInput(format!("{field}: not a usable PNG or JPEG image ({e})")))
}
