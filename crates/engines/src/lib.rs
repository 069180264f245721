//! The engines behind the service: the catalog of live engine ids, fetching of input media, the
//! built-in local implementations of every engine family, and the store that keeps outputs.
//!
//! [`Engines::run`] takes a validated job to finished output files; where they are stored and how
//! they are billed is the caller's business.

pub mod catalog;
pub mod fetch;
pub mod local;
pub mod store;

pub use catalog::{Catalog, CatalogError};
pub use fetch::{
    is_forbidden_address, FetchError, FetchPolicy, FetcherSetupError, InputFetcher, Lookup, Network,
    STORED_INPUT_PREFIX,
};
pub use store::{OutputStore, StoreError};

use domain::validation::Produced;
use domain::{EngineSpec, OutputKind, ValidatedJob};
use std::sync::Arc;

/// Why a job produced no output.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The job names an engine the catalog no longer has.
    #[error("unknown model {0}")]
    UnknownEngine(String),
    /// An input could not be fetched.
    #[error(transparent)]
    Fetch(#[from] FetchError),
    /// An input was fetched but is not usable media.
    #[error("{0}")]
    InvalidInput(String),
    /// The engine itself failed.
    #[error("engine failed: {0}")]
    Failed(String),
}

/// Input media of a job, fetched.
#[derive(Clone, Debug, Default)]
pub struct Inputs {
    /// Bytes behind `image_url`.
    pub image: Option<Vec<u8>>,
    /// Bytes behind `video_url`.
    pub video: Option<Vec<u8>>,
    /// Bytes behind `audio_url`.
    pub audio: Option<Vec<u8>>,
    /// Bytes behind `params.mask_url`.
    pub mask: Option<Vec<u8>>,
}

/// One produced file.
#[derive(Clone, Debug)]
pub struct OutputFile {
    /// File contents.
    pub bytes: Vec<u8>,
    /// Media kind.
    pub kind: OutputKind,
    /// File extension without the dot.
    pub extension: &'static str,
    /// Pixel width of images and videos.
    pub width: Option<u32>,
    /// Pixel height of images and videos.
    pub height: Option<u32>,
    /// Length of videos and recordings, seconds.
    pub duration_secs: Option<f64>,
}

impl OutputFile {
    /// A PNG (`png`) or JPEG (`jpg`) image.
    pub fn image(bytes: Vec<u8>, extension: &'static str, width: u32, height: u32) -> OutputFile {
        OutputFile {
            bytes,
            kind: OutputKind::Image,
            extension,
            width: Some(width),
            height: Some(height),
            duration_secs: None,
        }
    }

    /// A WAV recording.
    pub fn audio(bytes: Vec<u8>, duration_secs: f64) -> OutputFile {
        OutputFile {
            bytes,
            kind: OutputKind::Audio,
            extension: "wav",
            width: None,
            height: None,
            duration_secs: Some(duration_secs),
        }
    }
}

impl OutputFile {
    /// An MP4 video.
    pub fn video(bytes: Vec<u8>, width: u32, height: u32, duration_secs: f64) -> OutputFile {
        OutputFile {
            bytes,
            kind: OutputKind::Video,
            extension: "mp4",
            width: Some(width),
            height: Some(height),
            duration_secs: Some(duration_secs),
        }
    }

    /// Timed text: SubRip (`srt`) or WebVTT (`vtt`) captions.
    pub fn text(bytes: Vec<u8>, extension: &'static str) -> OutputFile {
        OutputFile { bytes, kind: OutputKind::Text, extension, width: None, height: None, duration_secs: None }
    }

    /// A PDF document.
    pub fn pdf(bytes: Vec<u8>) -> OutputFile {
        OutputFile {
            bytes,
            kind: OutputKind::Document,
            extension: "pdf",
            width: None,
            height: None,
            duration_secs: None,
        }
    }

    /// MIME type, such as `image/png`.
    pub fn content_type(&self) -> &'static str {
        content_type_of(self.extension)
    }
}

/// The extensions outputs are written with.
pub const OUTPUT_EXTENSIONS: [&str; 7] = ["png", "jpg", "mp4", "wav", "srt", "vtt", "pdf"];

/// `extension` as one of [`OUTPUT_EXTENSIONS`], if it is one.
pub fn known_extension(extension: &str) -> Option<&'static str> {
    OUTPUT_EXTENSIONS.into_iter().find(|known| *known == extension)
}

/// MIME type of an output file's extension (`png`, `jpg`, `mp4`, `wav`, `srt`, `vtt`, `pdf`).
pub fn content_type_of(extension: &str) -> &'static str {
    match extension {
        "png" => "image/png",
        "jpg" => "image/jpeg",
        "mp4" => "video/mp4",
        "wav" => "audio/wav",
        "srt" => "application/x-subrip",
        "vtt" => "text/vtt",
        "pdf" => "application/pdf",
        _ => "application/octet-stream",
    }
}

/// What a finished job produced.
#[derive(Clone, Debug)]
pub struct EngineOutput {
    /// The files, in order.
    pub files: Vec<OutputFile>,
    /// Quantities produced, from which the job's cost is computed.
    pub produced: Produced,
    /// True when the files are sandbox media rather than a real model's result.
    pub sandbox: bool,
}

/// Something that runs an engine's job on fetched inputs: the built-in local engines, or (with
/// the provider adapters) an upstream service.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
pub trait Provider: Send + Sync {
    /// Runs `job` on `spec`'s engine.
    fn run(
        &self,
        spec: EngineSpec,
        job: ValidatedJob,
        inputs: Inputs,
    ) -> futures::future::BoxFuture<'static, Result<EngineOutput, EngineError>>;
}

/// The built-in local engines, run on the blocking thread pool (they are CPU-bound).
pub struct LocalProvider;

impl Provider for LocalProvider {
    fn run(
        &self,
        spec: EngineSpec,
        job: ValidatedJob,
        inputs: Inputs,
    ) -> futures::future::BoxFuture<'static, Result<EngineOutput, EngineError>> {
        Box::pin(async move {
            tokio::task::spawn_blocking(move || local::run(&spec, &job, &inputs))
                .await
                .map_err(|e| EngineError::Failed(format!("engine crashed: {e}")))?
        })
    }
}

/// The catalog plus the means to run its engines; cheap to clone.
#[derive(Clone)]
pub struct Engines {
    catalog: Arc<Catalog>,
    fetcher: InputFetcher,
    local: Arc<dyn Provider>,
}

impl Engines {
    /// Engines of `catalog` on the built-in local engines, fetching inputs with `fetcher`.
    pub fn new(catalog: Catalog, fetcher: InputFetcher) -> Engines {
        Self::with_provider(catalog, fetcher, Arc::new(LocalProvider))
    }

    /// Engines of `catalog` whose local route runs on `provider`.
    pub fn with_provider(catalog: Catalog, fetcher: InputFetcher, provider: Arc<dyn Provider>) -> Engines {
        Engines { catalog: Arc::new(catalog), fetcher, local: provider }
    }

    /// These engines, reading inputs moved to `store` at submit (see
    /// [`fetch::STORED_INPUT_PREFIX`]).
    pub fn with_stored_inputs(self, store: OutputStore) -> Engines {
        Engines { fetcher: self.fetcher.with_stored_inputs(store), ..self }
    }

    /// The catalog.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// The SSRF-safe fetcher of input media (recipes fetch their own inputs through it).
    pub fn fetcher(&self) -> &InputFetcher {
        &self.fetcher
    }

    /// Runs `job`: fetches its inputs, then runs its engine on its route's provider.
    pub async fn run(&self, job: &ValidatedJob) -> Result<EngineOutput, EngineError> {
        let spec =
            self.catalog.get_any(&job.model).cloned().ok_or_else(|| EngineError::UnknownEngine(job.model.clone()))?;
        let inputs = self.fetch_inputs(job).await?;
        let provider = match spec.route {
            domain::catalog::Route::Local => &self.local,
        };
        provider.run(spec, job.clone(), inputs).await
    }

    async fn fetch_inputs(&self, job: &ValidatedJob) -> Result<Inputs, EngineError> {
        let fetch = |label: &'static str, url: Option<String>| async move {
            match url {
                Some(url) => self.fetcher.fetch(label, &url).await.map(Some),
                None => Ok(None),
            }
        };
        let (image, video, audio, mask) = futures::try_join!(
            fetch("image_url", job.image_url.clone()),
            fetch("video_url", job.video_url.clone()),
            fetch("audio_url", job.audio_url.clone()),
            fetch("params.mask_url", job.str_param("mask_url").map(str::to_string)),
        )?;
        Ok(Inputs { image, video, audio, mask })
    }
}
