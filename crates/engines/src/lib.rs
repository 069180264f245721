//! The engines behind the service: the catalog of live engine ids, fetching of input media, the
//! built-in local implementations of every engine family, and the store that keeps outputs.
//!
//! [`Engines::run`] takes a validated job to finished output files; where they are stored and how
//! they are billed is the caller's business.

pub mod catalog;
pub mod fetch;
pub mod local;
pub mod store;
pub mod upstream;

pub use catalog::{Catalog, CatalogError};
pub use fetch::{
    check_public_target, is_forbidden_address, public_only_resolver, FetchError, FetchPolicy, FetcherSetupError,
    InputFetcher, Lookup, Network, PrefetchedInputs, STORED_INPUT_PREFIX,
};
pub use store::{OutputStore, StoreError, StoreWriter, StoredObject};

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

/// The extensions outputs are written with (WebP and MP3 only come from upstream providers).
pub const OUTPUT_EXTENSIONS: [&str; 9] = ["png", "jpg", "webp", "mp4", "wav", "mp3", "srt", "vtt", "pdf"];

/// `extension` as one of [`OUTPUT_EXTENSIONS`], if it is one.
pub fn known_extension(extension: &str) -> Option<&'static str> {
    OUTPUT_EXTENSIONS.into_iter().find(|known| *known == extension)
}

/// MIME type of an output file's extension (one of [`OUTPUT_EXTENSIONS`]).
pub fn content_type_of(extension: &str) -> &'static str {
    match extension {
        "png" => "image/png",
        "jpg" => "image/jpeg",
        "webp" => "image/webp",
        "mp3" => "audio/mpeg",
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

/// Something that runs a local engine's job on fetched inputs: the built-in engines, or a stand-in
/// in tests. (Engines routed to a provider, fal or Replicate, run through `providers` instead.)
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
pub trait Runner: Send + Sync {
    /// Runs `job` on `spec`'s engine.
    fn run(
        &self,
        spec: EngineSpec,
        job: ValidatedJob,
        inputs: Inputs,
    ) -> futures::future::BoxFuture<'static, Result<EngineOutput, EngineError>>;
}

/// The built-in local engines, run on the blocking thread pool (they are CPU-bound).
pub struct LocalRunner;

impl Runner for LocalRunner {
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
    local: Arc<dyn Runner>,
    upstream: providers::Providers,
    upstream_files: InputFetcher,
}

/// Why a provider's file could not be taken in.
#[derive(Debug, thiserror::Error)]
pub enum DownloadError {
    /// It may work later (an outage, a timeout).
    #[error("{0}")]
    Retryable(String),
    /// It will not work (the URL expired, the file is not media).
    #[error("{0}")]
    Fatal(String),
}

/// An engine job's input fields: label and URL, in the order of [`local::Inputs`]'s fields.
fn input_fields(job: &ValidatedJob) -> [(&'static str, Option<&str>); 4] {
    [
        ("image_url", job.image_url.as_deref()),
        ("video_url", job.video_url.as_deref()),
        ("audio_url", job.audio_url.as_deref()),
        ("params.mask_url", job.str_param("mask_url")),
    ]
}

/// The input URLs of an engine job (`data:` URIs included): label and URL.
pub fn input_urls(job: &ValidatedJob) -> Vec<(String, String)> {
    input_fields(job).into_iter().filter_map(|(label, url)| Some((label.into(), url?.into()))).collect()
}

/// Largest file taken from a provider.
pub const UPSTREAM_FILE_MAX_BYTES: usize = 512 * 1024 * 1024;

impl Engines {
    /// Engines of `catalog` on the built-in local engines, fetching inputs with `fetcher`.
    pub fn new(catalog: Catalog, fetcher: InputFetcher) -> Engines {
        Self::with_runner(catalog, fetcher, Arc::new(LocalRunner))
    }

    /// Engines of `catalog` whose local route runs on `runner`.
    pub fn with_runner(catalog: Catalog, fetcher: InputFetcher, runner: Arc<dyn Runner>) -> Engines {
        let upstream_files = fetcher.clone();
        Engines {
            catalog: Arc::new(catalog),
            fetcher,
            local: runner,
            upstream: providers::Providers::none(),
            upstream_files,
        }
    }

    /// These engines, running the routes to upstream providers on `upstream` and fetching the
    /// files they produce on other hosts with `files` (SSRF-safe, with its own limits).
    pub fn with_upstream(self, upstream: providers::Providers, files: InputFetcher) -> Engines {
        Engines { upstream, upstream_files: files, ..self }
    }

    /// The upstream providers.
    pub fn upstream(&self) -> &providers::Providers {
        &self.upstream
    }

    /// The provider input of `job` on `spec`'s route, through the catalog's mapping.
    pub fn upstream_input(&self, spec: &EngineSpec, job: &ValidatedJob) -> serde_json::Value {
        let mapping = spec.route.provider().and_then(|name| spec.provider_input.get(name)).cloned().unwrap_or_default();
        mapping.apply(job.fields())
    }

    /// Downloads a file a provider produced and reads it as an output. The provider's own
    /// origin is trusted (even on loopback); any other address goes through the SSRF-safe
    /// fetcher like a client's input.
    pub async fn download_upstream(&self, url: &str) -> Result<OutputFile, DownloadError> {
        let bytes = if self.upstream.trusts(url) {
            match self.upstream.download(url, UPSTREAM_FILE_MAX_BYTES).await {
                Ok((bytes, _)) => Vec::from(bytes),
                Err(e) if e.is_retryable() => return Err(DownloadError::Retryable(e.to_string())),
                Err(e) => return Err(DownloadError::Fatal(e.to_string())),
            }
        } else {
            self.upstream_files.fetch("provider output", url).await.map_err(|e| {
                if e.transient {
                    DownloadError::Retryable(e.to_string())
                } else {
                    DownloadError::Fatal(e.to_string())
                }
            })?
        };
        upstream::output_file(bytes).map_err(DownloadError::Fatal)
    }

    /// Streams a provider's file at `url` into a new file at `path` (at most
    /// [`UPSTREAM_FILE_MAX_BYTES`], never whole in memory) and reads what it is from there: the
    /// worker's way of taking in a finished provider request with bounded memory.
    pub async fn download_upstream_to(
        &self,
        url: &str,
        path: &std::path::Path,
    ) -> Result<upstream::FileInfo, DownloadError> {
        let scratch = |e: std::io::Error| DownloadError::Retryable(format!("a scratch file for the download: {e}"));
        let mut file = tokio::fs::File::create(path).await.map_err(scratch)?;
        if self.upstream.trusts(url) {
            match self.upstream.download_to(url, UPSTREAM_FILE_MAX_BYTES, &mut file).await {
                Ok(_) => {}
                Err(e) if e.is_retryable() => return Err(DownloadError::Retryable(e.to_string())),
                Err(e) => return Err(DownloadError::Fatal(e.to_string())),
            }
        } else {
            self.upstream_files.fetch_to("provider output", url, &mut file).await.map_err(|e| {
                if e.transient {
                    DownloadError::Retryable(e.to_string())
                } else {
                    DownloadError::Fatal(e.to_string())
                }
            })?;
        }
        drop(file);
        let path = path.to_path_buf();
        tokio::task::spawn_blocking(move || {
            let file = std::fs::File::open(&path).map_err(scratch)?;
            // SAFETY: the file is this process's own scratch file, which nothing else writes
            // while it is mapped. Mapped pages are the page cache's, read as the probe needs them
            // and dropped under pressure, not the worker's heap.
            let mapped = unsafe { memmap2::Mmap::map(&file) }.map_err(scratch)?;
            upstream::probe(&mapped).map_err(DownloadError::Fatal)
        })
        .await
        .map_err(|e| DownloadError::Retryable(format!("reading the downloaded file: {e}")))?
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

    /// Runs `job`: at its route's provider when it has one, otherwise with its inputs fetched, on
    /// the local runner.
    pub async fn run(&self, job: &ValidatedJob) -> Result<EngineOutput, EngineError> {
        let spec =
            self.catalog.get_any(&job.model).cloned().ok_or_else(|| EngineError::UnknownEngine(job.model.clone()))?;
        if spec.route != domain::catalog::Route::Local {
            return self.run_upstream(&spec, job).await;
        }
        let inputs = self.fetch_inputs(job).await?;
        self.local.run(spec, job.clone(), inputs).await
    }

    /// Runs `job` at its route's provider from start to end: submits it, follows it by the same
    /// policy and reading of answers as the jobs workers track (`providers::PollPolicy`), cancels
    /// it at the provider past its engine family's deadline, and takes in its files. Recipes use
    /// this for the engine steps they run; `/v1/generate` jobs are submitted by the API and
    /// tracked by the workers instead, without holding a slot.
    async fn run_upstream(&self, spec: &EngineSpec, job: &ValidatedJob) -> Result<EngineOutput, EngineError> {
        use providers::Next;
        let failed = |e: providers::ProviderError| EngineError::Failed(e.to_string());
        let handle = self.upstream.submit(&spec.route, self.upstream_input(spec, job), None).await.map_err(failed)?;
        let submitted = tokio::time::Instant::now();
        let deadline = domain::JobKind::of_engine(Some(spec.family)).default_deadline();
        let poll = providers::PollPolicy::DEFAULT;
        tokio::time::sleep(poll.first).await;
        let completion = loop {
            let look = self.upstream.poll(&handle).await;
            match poll.after_look(handle.provider, look, submitted.elapsed(), deadline) {
                Next::Succeeded(completion) => break completion,
                Next::LookAgain { after, .. } => tokio::time::sleep(after).await,
                Next::Failed(message) => return Err(EngineError::Failed(message)),
                Next::PastDeadline => {
                    let _ = self.upstream.cancel(&handle).await;
                    return Err(EngineError::Failed(format!(
                        "{} did not finish within {} s and the request was cancelled",
                        handle.provider,
                        deadline.as_secs()
                    )));
                }
            }
        };
        let mut files = Vec::with_capacity(completion.media.len());
        for media in &completion.media {
            files.push(self.download_upstream(&media.url).await.map_err(|e| EngineError::Failed(e.to_string()))?);
        }
        Ok(upstream::engine_output(job, files))
    }

    /// These engines, reading their inputs from `inputs` instead of downloading them (see
    /// [`InputFetcher::with_prefetched`]).
    pub fn with_prefetched(self, inputs: PrefetchedInputs) -> Engines {
        Engines { fetcher: self.fetcher.with_prefetched(inputs), ..self }
    }

    async fn fetch_inputs(&self, job: &ValidatedJob) -> Result<Inputs, EngineError> {
        let fetch = |label: &'static str, url: Option<String>| async move {
            match url {
                Some(url) => self.fetcher.fetch(label, &url).await.map(Some),
                None => Ok(None),
            }
        };
        let [image, video, audio, mask] = input_fields(job).map(|(label, url)| fetch(label, url.map(str::to_string)));
        let (image, video, audio, mask) = futures::try_join!(image, video, audio, mask)?;
        Ok(Inputs { image, video, audio, mask })
    }
}
