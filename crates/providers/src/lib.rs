//! Adapters for the upstream providers that run generative engines: a fal-style queue (submit,
//! status, result, cancel) and Replicate-style predictions. Each turns a route and an input into
//! a [`Handle`] at submit, a handle into [`Progress`] when polled, and verifies the provider's
//! signed callbacks ([`Providers::verify_webhook`]). Errors are classified: [`ProviderError`]
//! says whether trying again can help.
//!
//! Nothing here stores or bills anything; the service records handles on its tasks and decides
//! what a status means for the job.

mod answers;
mod fal;
mod poll;
mod replicate;
mod transport;
mod webhooks;

pub use poll::{Next, PollPolicy};
pub use webhooks::WebhookError;

use domain::catalog::Route;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;
use transport::Transport;

/// The upstream providers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderName {
    /// fal's queue API.
    Fal,
    /// Replicate's predictions API.
    Replicate,
}

impl ProviderName {
    /// The name as routes and settings spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderName::Fal => "fal",
            ProviderName::Replicate => "replicate",
        }
    }

    /// The provider a route runs on, if any.
    pub fn of(route: &Route) -> Option<ProviderName> {
        match route {
            Route::Local => None,
            Route::Fal { .. } => Some(ProviderName::Fal),
            Route::Replicate { .. } => Some(ProviderName::Replicate),
        }
    }

    /// Parses `fal` or `replicate`.
    pub fn parse(name: &str) -> Option<ProviderName> {
        match name {
            "fal" => Some(ProviderName::Fal),
            "replicate" => Some(ProviderName::Replicate),
            _ => None,
        }
    }
}

impl std::fmt::Display for ProviderName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// fal's settings.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FalSettings {
    /// `FAL_KEY`, sent as `Authorization: Key <key>`.
    pub key: String,
    /// `FAL_QUEUE_URL` (`https://queue.fal.run`).
    pub queue_url: String,
    /// Where fal publishes the ED25519 keys its callbacks are signed with.
    pub jwks_url: String,
    /// Our fal user id (`FAL_USER_ID`): when set, callbacks for any other user are refused.
    #[serde(default)]
    pub user_id: Option<String>,
}

/// Replicate's settings.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReplicateSettings {
    /// `REPLICATE_API_TOKEN`, sent as `Authorization: Bearer <token>`.
    pub token: String,
    /// `REPLICATE_API_URL` (`https://api.replicate.com`).
    pub api_url: String,
    /// The callbacks' signing secret (`whsec_...`); without one it is read once from the API.
    pub webhook_secret: Option<String>,
}

/// The configured providers and the limits of every call to them.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Settings {
    /// fal, if configured.
    pub fal: Option<FalSettings>,
    /// Replicate, if configured.
    pub replicate: Option<ReplicateSettings>,
    /// Time limit of one request to a provider.
    pub request_timeout: Duration,
}

/// A request accepted by a provider: its id and the addresses the provider gave for it. They are
/// stored as given and never rebuilt (a fal app with a sub-path is polled elsewhere than it was
/// submitted to).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Handle {
    /// Which provider holds the request.
    pub provider: ProviderName,
    /// The provider's id of the request.
    pub request_id: String,
    /// Where its status is read.
    pub status_url: String,
    /// Where its result is read (fal), if apart from the status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_url: Option<String>,
    /// Where it is cancelled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel_url: Option<String>,
}

/// Where a request stands.
#[derive(Clone, Debug, PartialEq)]
pub enum Progress {
    /// Waiting in the provider's queue.
    Queued {
        /// Place in the queue, when the provider says.
        position: Option<u64>,
    },
    /// Running.
    Running,
    /// Finished with media.
    Succeeded(Completion),
    /// Finished without a result; the provider's reason.
    Failed(String),
    /// Cancelled (by us or at the provider).
    Canceled,
}

/// A finished request's media and what it cost the provider.
#[derive(Clone, Debug, PartialEq)]
pub struct Completion {
    /// The produced files, in the provider's order.
    pub media: Vec<MediaRef>,
    /// Seconds of compute the provider reports (`metrics.predict_time`, `inference_time`).
    pub provider_seconds: Option<f64>,
}

/// One produced file at the provider.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MediaRef {
    /// Its address (short-lived at most providers).
    pub url: String,
    /// The MIME type the provider states, if any.
    pub content_type: Option<String>,
}

/// Why a call to a provider did not give an answer we can use.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// The route's provider has no credentials configured.
    #[error("provider {0} is not configured")]
    NotConfigured(ProviderName),
    /// The provider refused the request (a 4xx answer): asking again will not help.
    #[error("{provider} refused the request (HTTP {status}): {reason}")]
    Refused {
        /// Provider.
        provider: ProviderName,
        /// HTTP status.
        status: u16,
        /// The provider's reason.
        reason: String,
    },
    /// The provider could not answer now (5xx, 429, a timeout, a dropped connection): asking
    /// again later may help.
    #[error("{provider} is unavailable: {reason}")]
    Unavailable {
        /// Provider.
        provider: ProviderName,
        /// What happened.
        reason: String,
    },
    /// The provider answered something that is not its documented shape.
    #[error("{provider} sent a malformed answer: {reason}")]
    Malformed {
        /// Provider.
        provider: ProviderName,
        /// What was wrong.
        reason: String,
    },
}

impl ProviderError {
    /// Whether asking again later may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, ProviderError::Unavailable { .. })
    }
}

/// The configured providers; cheap to clone.
#[derive(Clone)]
pub struct Providers {
    inner: Arc<Inner>,
}

struct Inner {
    settings: Settings,
    /// The HTTP client; none when no provider is configured, so that engines that never call a
    /// provider (every job process of a local job) do not load the system's trust store.
    transport: Option<Transport>,
    keys: webhooks::KeyCache,
}

/// Largest answer read from a provider's API (media downloads have their own limit).
const MAX_ANSWER_BYTES: usize = 4 * 1024 * 1024;

impl Providers {
    /// Providers with `settings`.
    pub fn new(settings: Settings) -> Result<Providers, ProviderError> {
        let configured = settings.fal.is_some() || settings.replicate.is_some();
        let transport = configured.then(|| Transport::new(settings.request_timeout)).transpose().map_err(|reason| {
            ProviderError::Unavailable {
                provider: ProviderName::Fal,
                reason: format!("cannot build an HTTP client: {reason}"),
            }
        })?;
        Ok(Providers { inner: Arc::new(Inner { settings, transport, keys: webhooks::KeyCache::default() }) })
    }

    /// No provider configured: every engine runs locally (and no HTTP client is built).
    pub fn none() -> Providers {
        let settings = Settings { fal: None, replicate: None, request_timeout: Duration::from_secs(30) };
        Providers { inner: Arc::new(Inner { settings, transport: None, keys: webhooks::KeyCache::default() }) }
    }

    /// The HTTP client, which exists when a provider is configured (a call reaches it only after
    /// its provider's settings were found).
    fn transport(&self, provider: ProviderName) -> Result<&Transport, ProviderError> {
        self.inner.transport.as_ref().ok_or(ProviderError::NotConfigured(provider))
    }

    /// [`Providers::transport`] for checking a callback of `provider`.
    fn webhook_transport(&self, provider: ProviderName) -> Result<&Transport, WebhookError> {
        self.inner.transport.as_ref().ok_or(WebhookError::NotConfigured(provider))
    }

    /// The settings.
    pub fn settings(&self) -> &Settings {
        &self.inner.settings
    }

    /// Whether any provider has credentials.
    pub fn any_configured(&self) -> bool {
        self.is_configured(ProviderName::Fal) || self.is_configured(ProviderName::Replicate)
    }

    /// Whether `provider` has credentials.
    pub fn is_configured(&self, provider: ProviderName) -> bool {
        match provider {
            ProviderName::Fal => self.inner.settings.fal.is_some(),
            ProviderName::Replicate => self.inner.settings.replicate.is_some(),
        }
    }

    /// Whether `url` is on a configured provider's own origin (its API), which is trusted for
    /// downloads even on a private address; every other address is fetched as untrusted.
    pub fn trusts(&self, url: &str) -> bool {
        let settings = &self.inner.settings;
        let bases = [settings.fal.as_ref().map(|f| &f.queue_url), settings.replicate.as_ref().map(|r| &r.api_url)];
        bases.into_iter().flatten().any(|base| transport::same_origin(base, url))
    }

    /// Submits `input` to `route`'s provider. With `webhook`, the provider calls it back when the
    /// request ends. One retry when the connection could not be made (nothing was sent).
    pub async fn submit(
        &self,
        route: &Route,
        input: serde_json::Value,
        webhook: Option<&str>,
    ) -> Result<Handle, ProviderError> {
        match route {
            Route::Local => Err(ProviderError::Malformed {
                provider: ProviderName::Fal,
                reason: "a local route has no provider".into(),
            }),
            Route::Fal { app } => {
                let fal = self.inner.settings.fal.as_ref().ok_or(ProviderError::NotConfigured(ProviderName::Fal))?;
                fal::submit(self.transport(ProviderName::Fal)?, fal, app, &input, webhook).await
            }
            Route::Replicate { model, version } => {
                let replicate = self.replicate()?;
                let transport = self.transport(ProviderName::Replicate)?;
                replicate::submit(transport, replicate, model, version.as_deref(), input, webhook).await
            }
        }
    }

    /// Where the request of `handle` stands; a finished one comes with its result.
    pub async fn poll(&self, handle: &Handle) -> Result<Progress, ProviderError> {
        match handle.provider {
            ProviderName::Fal => {
                let fal = self.inner.settings.fal.as_ref().ok_or(ProviderError::NotConfigured(ProviderName::Fal))?;
                fal::poll(self.transport(ProviderName::Fal)?, fal, handle).await
            }
            ProviderName::Replicate => {
                let replicate = self.replicate()?;
                replicate::poll(self.transport(ProviderName::Replicate)?, replicate, handle).await
            }
        }
    }

    /// Asks the provider to stop the request (best effort: a finished one stays finished).
    pub async fn cancel(&self, handle: &Handle) -> Result<(), ProviderError> {
        let Some(url) = handle.cancel_url.as_deref() else { return Ok(()) };
        let transport = self.transport(handle.provider)?;
        match handle.provider {
            ProviderName::Fal => {
                let fal = self.inner.settings.fal.as_ref().ok_or(ProviderError::NotConfigured(ProviderName::Fal))?;
                transport
                    .call(ProviderName::Fal, reqwest::Method::PUT, url, &fal::auth(fal), None, false)
                    .await
                    .map(drop)
            }
            ProviderName::Replicate => {
                let replicate = self.replicate()?;
                let auth = replicate::auth(replicate);
                transport.call(ProviderName::Replicate, reqwest::Method::POST, url, &auth, None, false).await.map(drop)
            }
        }
    }

    /// Downloads a produced file from a provider's own origin (see [`Providers::trusts`]), at
    /// most `max_bytes`; returns its bytes and stated MIME type.
    pub async fn download(&self, url: &str, max_bytes: usize) -> Result<(bytes::Bytes, Option<String>), ProviderError> {
        let provider = self.origin_of(url)?;
        self.transport(provider)?.download(provider, url, max_bytes).await
    }

    /// Streams a produced file from a provider's own origin into `sink` as it arrives, at most
    /// `max_bytes`, so taking in a large result costs no more memory than a read buffer; returns
    /// the bytes written and the stated MIME type.
    pub async fn download_to<W: tokio::io::AsyncWrite + Unpin>(
        &self,
        url: &str,
        max_bytes: usize,
        sink: &mut W,
    ) -> Result<(u64, Option<String>), ProviderError> {
        let provider = self.origin_of(url)?;
        self.transport(provider)?.download_to(provider, url, max_bytes, sink).await
    }

    /// The provider whose origin serves `url`; a URL on neither is refused.
    fn origin_of(&self, url: &str) -> Result<ProviderName, ProviderError> {
        let provider = if self.inner.settings.fal.as_ref().is_some_and(|f| transport::same_origin(&f.queue_url, url)) {
            ProviderName::Fal
        } else {
            ProviderName::Replicate
        };
        if !self.trusts(url) {
            return Err(ProviderError::Malformed {
                provider,
                reason: format!("{url} is not on the provider's origin"),
            });
        }
        Ok(provider)
    }

    /// Checks a callback's signature (fal: ED25519 with the keys of its JWKS; Replicate: a
    /// Standard Webhooks HMAC) and reads what it reports. `header` looks a request header up by
    /// its lower-case name.
    pub async fn verify_webhook(
        &self,
        provider: ProviderName,
        header: &(dyn Fn(&str) -> Option<String> + Sync),
        body: &[u8],
    ) -> Result<(String, Progress), WebhookError> {
        match provider {
            ProviderName::Fal => {
                let fal = self.inner.settings.fal.as_ref().ok_or(WebhookError::NotConfigured(provider))?;
                let signed_id =
                    webhooks::verify_fal(self.webhook_transport(provider)?, &self.inner.keys, fal, header, body)
                        .await?;
                let (request_id, progress) = fal::read_webhook(body).map_err(WebhookError::Body)?;
                if request_id != signed_id {
                    return Err(WebhookError::Body("the body's request id is not the signed one".into()));
                }
                Ok((request_id, progress))
            }
            ProviderName::Replicate => {
                let replicate = self.replicate().map_err(|_| WebhookError::NotConfigured(provider))?;
                let transport = self.webhook_transport(provider)?;
                webhooks::verify_replicate(transport, &self.inner.keys, replicate, header, body).await?;
                replicate::read_webhook(body).map_err(WebhookError::Body)
            }
        }
    }

    /// Reads a callback that was verified when it arrived (kept on a task), without verifying it
    /// again: its request id and outcome.
    pub fn read_callback(&self, provider: ProviderName, body: &[u8]) -> Result<(String, Progress), String> {
        match provider {
            ProviderName::Fal => fal::read_webhook(body),
            ProviderName::Replicate => replicate::read_webhook(body),
        }
    }

    /// The request a verified callback reports, as a handle: Replicate's callback is the
    /// prediction with its URLs; fal's names only the request id, so its handle has no URLs and
    /// the callback itself is the outcome.
    pub fn handle_of_callback(&self, provider: ProviderName, body: &[u8]) -> Result<Handle, String> {
        let value: serde_json::Value = serde_json::from_slice(body).map_err(|e| e.to_string())?;
        match provider {
            ProviderName::Fal => Ok(Handle {
                provider,
                request_id: answers::text(&value, "/request_id")?.to_string(),
                status_url: String::new(),
                result_url: None,
                cancel_url: None,
            }),
            ProviderName::Replicate => {
                let settings = self.replicate().map_err(|e| e.to_string())?;
                replicate::read_submission(settings, &value)
            }
        }
    }

    fn replicate(&self) -> Result<&ReplicateSettings, ProviderError> {
        self.inner.settings.replicate.as_ref().ok_or(ProviderError::NotConfigured(ProviderName::Replicate))
    }
}
