//! The use-cases of the media-generation service, shared by every front end: authenticate a key,
//! list models, submit a job (validated, priced and held in one step), read a task, report usage,
//! serve signed output files, run a claimed job to its billed end, submit jobs to upstream
//! providers and track them to theirs, deliver completion webhooks, the operator's account and key administration, and the
//! developer console's accounts, sessions and key management.
//!
//! The HTTP API, the MCP connector and the console are thin layers over [`Service`]; no business rule lives in
//! them.

mod admin;
mod child;
pub mod client_address;
pub mod config;
pub mod console;
#[cfg(feature = "openapi")]
pub mod contract;
pub mod engine_setup;
mod errors;
mod execution;
pub mod identity;
mod job_inputs;
mod job_process;
mod jobs;
pub mod logging;
pub mod mail;
pub mod metrics;
pub mod oauth;
pub mod rate_limit;
mod readiness;
mod recipes;
mod retention;
pub mod signing;
pub mod signing_key;
mod stored_job;
mod upstream;
pub mod urls;
pub mod views;
mod webhook_delivery;
mod work;

pub use admin::{AccountKey, NewKey};
pub use child::child_main;
pub use config::{AppConfig, ConfigError, IsolationMode};
pub use domain::job_kind::Deadlines;
pub use errors::{ErrorCode, ServiceError};
pub use execution::{ClaimedJob, JobOutcome, WorkDone};
pub use job_inputs::InputSettings;
pub use job_process::{ChildJobs, JobIsolation, CHILD_COMMAND};
pub use recipes::SyncOutcome;
pub use retention::Swept;
pub use signing::UrlSigner;
pub use storage::ENDS_PER_COMMIT;
pub use webhook_delivery::{KeyWebhookSettings, WebhookSettings};

use domain::Usd;
use engines::{Engines, OutputStore};
use std::sync::Arc;
use std::time::Duration;
use storage::Database;
use tokio::sync::Notify;

/// Deployment settings the use-cases need.
#[derive(Clone, Debug)]
pub struct ServiceConfig {
    /// Base of every URL handed out (`poll_url`, output URLs), without a trailing slash.
    pub public_base_url: String,
    /// Free allowance of new accounts.
    pub free_allowance: Usd,
    /// How long a signed output URL stays valid.
    pub output_url_ttl: Duration,
    /// How long a synchronous recipe waits for its result before answering with the queued task.
    pub sync_recipe_wait: Duration,
    /// The listing kit's Fair Housing policy.
    pub fair_housing: ::recipes::listing_kit::fair_housing::Policy,
    /// Where jobs run: a child process per job, or this process.
    pub isolation: JobIsolation,
    /// Deadlines of jobs by family or recipe.
    pub deadlines: Deadlines,
    /// Whether visitors may sign up in the console (otherwise accounts come from the operator,
    /// with invite links).
    pub console_sign_up: bool,
    /// The proxies whose forwarded headers name the client (none: the peer is the client).
    pub trusted_proxies: client_address::TrustedProxies,
    /// Accounts one client address may create in the console per day; `None`: no limit.
    pub console_sign_ups_per_address: Option<std::num::NonZeroU32>,
    /// How the console's mail (verification and reset links) is sent.
    pub mailer: mail::Mailer,
    /// Free allowances one client address range may earn per 30 days.
    pub allowances_per_address_range: u32,
    /// Most bytes of inputs moved to the store that one key's unfinished jobs may hold at once.
    pub stored_input_bytes_per_key: i64,
    /// How many jobs one key and one account may have running at once.
    pub running_shares: storage::RunningShares,
    /// Where and how long each job's inputs are fetched before its work starts.
    pub inputs: job_inputs::InputSettings,
    /// The bearer token `/metrics` asks for; `None`: metrics are not served over HTTP.
    pub metrics_token: Option<String>,
    /// One in this many successful, quick reads is access-logged (1: every one).
    pub access_log_reads: std::num::NonZeroU32,
    /// How long finished tasks keep their outputs, inputs and results; `None`: forever.
    pub task_retention: Option<Duration>,
    /// The deployment's default request rates per key.
    pub rate_limits: rate_limit::RateLimits,
    /// Whether submissions to providers ask them to call back at `/v1/webhooks/...` (the
    /// provider must be able to reach `public_base_url`).
    pub provider_webhooks: bool,
    /// How clients' completion webhooks are sent.
    pub webhooks: WebhookSettings,
    /// How long the connector's OAuth access tokens work, seconds.
    pub oauth_access_token_secs: i64,
}

/// The authenticated caller of a use-case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    /// Key id.
    pub key_id: String,
    /// Account id.
    pub account_id: String,
    /// The key's own request rates, where set.
    pub rates: rate_limit::KeyRates,
}

impl From<storage::AuthenticatedKey> for Caller {
    /// The caller a verified key (or a connector token's key) acts as.
    fn from(key: storage::AuthenticatedKey) -> Caller {
        Caller {
            key_id: key.key_id,
            account_id: key.account_id,
            rates: rate_limit::KeyRates {
                submits_per_minute: key.submit_rate_per_minute.and_then(|r| u32::try_from(r).ok()),
                reads_per_minute: key.read_rate_per_minute.and_then(|r| u32::try_from(r).ok()),
            },
        }
    }
}

/// The shared core of the service: its database, engines, output store and settings; cheap to
/// clone. Its use-cases are grouped by who calls them, each group a small handle over the core:
/// [`Service::api`] (the HTTP API and the MCP connector), [`Service::runner`] (workers),
/// [`Service::console`] (the developer console) and [`Service::operator`] (the operator's CLI).
#[derive(Clone)]
pub struct Service {
    inner: Arc<Inner>,
}

struct Inner {
    db: Database,
    engines: Engines,
    store: OutputStore,
    signer: UrlSigner,
    config: ServiceConfig,
    queued: Notify,
    /// Signalled when a tracked task is due early (just submitted, or its provider called back).
    tracked_due: Notify,
    /// Permits to take in a finished provider result: each is held in memory while it is copied,
    /// so only a few are taken in at once, however many requests are tracked.
    intake: tokio::sync::Semaphore,
    /// Signalled whenever a task ends, here or (on PostgreSQL) in any process.
    finished: Arc<Notify>,
    /// This process's leases of the keys' rate-limit tokens.
    rate_limiter: rate_limit::RateLimiter,
    /// Relays other processes' task ends into `finished`; stops when the service is dropped.
    _finished_listener: Option<storage::Listener>,
    /// Keeps the cache of verified keys true on PostgreSQL, once the process serves requests
    /// (see [`Service::cache_verified_keys`]).
    key_listener: std::sync::OnceLock<Option<storage::Listener>>,
}

/// The client-facing use-cases, as a key uses them: models, submit, poll, recipes, usage, output
/// files, and providers' callbacks.
#[derive(Clone, Copy)]
pub struct Api<'a> {
    service: &'a Service,
    /// The client's idempotency key for the spending call made through this handle.
    idempotency: Option<&'a domain::IdempotencyKey>,
}

/// Running jobs to their billed end: claim, lease, execute here, or track at a provider.
#[derive(Clone, Copy)]
pub struct JobRunner<'a> {
    service: &'a Service,
}

/// The developer console's use-cases: sign-up and sessions, an account's keys and spend.
#[derive(Clone, Copy)]
pub struct Console<'a> {
    service: &'a Service,
}

/// The operator's administration: accounts, keys, card flags, the ledger and provider margins.
#[derive(Clone, Copy)]
pub struct Operator<'a> {
    service: &'a Service,
}

impl Service {
    /// The client-facing use-cases.
    pub fn api(&self) -> Api<'_> {
        Api { service: self, idempotency: None }
    }

    /// The job runner's use-cases.
    pub fn runner(&self) -> JobRunner<'_> {
        JobRunner { service: self }
    }

    /// The developer console's use-cases.
    pub fn console(&self) -> Console<'_> {
        Console { service: self }
    }

    /// The operator's use-cases.
    pub fn operator(&self) -> Operator<'_> {
        Operator { service: self }
    }

    /// Assembles the service.
    pub fn new(
        db: Database,
        engines: Engines,
        store: OutputStore,
        signer: UrlSigner,
        config: ServiceConfig,
    ) -> Service {
        let config =
            ServiceConfig { public_base_url: config.public_base_url.trim_end_matches('/').to_string(), ..config };
        let finished = Arc::new(Notify::new());
        let relay = finished.clone();
        let _finished_listener = db.listen_for_finished_tasks(move || relay.notify_waiters());
        // Inputs moved out of a job at submit are read back from the output store.
        let engines = engines.with_stored_inputs(store.clone());
        Service {
            inner: Arc::new(Inner {
                db,
                engines,
                store,
                signer,
                config,
                queued: Notify::new(),
                tracked_due: Notify::new(),
                intake: tokio::sync::Semaphore::new(upstream::RESULTS_TAKEN_IN_AT_ONCE),
                finished,
                rate_limiter: Default::default(),
                _finished_listener,
                key_listener: std::sync::OnceLock::new(),
            }),
        }
    }

    /// Starts keeping the keys this process verifies in memory for up to a second, forgotten
    /// whenever any process changes a key (see `storage::Database::cache_verified_keys`), and the
    /// ended tasks its polls read (`storage::Database::cache_ended_tasks`): for a process that
    /// serves requests. Once per service; later calls do nothing.
    pub fn cache_verified_keys(&self) {
        self.inner.key_listener.get_or_init(|| {
            self.inner.db.cache_ended_tasks(self.config().task_retention);
            self.inner.db.cache_verified_keys()
        });
    }

    /// The database.
    pub fn database(&self) -> &Database {
        &self.inner.db
    }

    /// The engines.
    pub fn engines(&self) -> &Engines {
        &self.inner.engines
    }

    /// The settings.
    pub fn config(&self) -> &ServiceConfig {
        &self.inner.config
    }

    /// Waits, at most `limit`, until this is the last handle on the service, and says whether it
    /// is. Front ends that run on threads of their own (the HTTP server's workers) let go of their
    /// handles a moment after they stop; dropping the last handle stops the service's background
    /// threads (the PostgreSQL listener), which must not be inside a database call when the process
    /// exits.
    pub async fn until_sole_handle(&self, limit: std::time::Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        while Arc::strong_count(&self.inner) > 1 {
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        true
    }

    /// The service's public addresses.
    pub fn urls(&self) -> urls::PublicUrls<'_> {
        urls::PublicUrls::new(&self.inner.config.public_base_url)
    }

    /// Signalled whenever this process accepts a job, so in-process workers wake without polling.
    pub fn job_queued(&self) -> &Notify {
        &self.inner.queued
    }

    /// Signalled whenever a task ends (in this process, or in any on PostgreSQL): a cancelled
    /// job's worker looks at its lease at once instead of at its next heartbeat.
    pub fn task_ended(&self) -> &Notify {
        &self.inner.finished
    }

    /// Signalled when a tracked task is due early, so this process's tracker looks at once.
    pub fn tracked_due(&self) -> &Notify {
        &self.inner.tracked_due
    }

    /// Runs a blocking storage call off the async runtime.
    async fn db<T, E>(&self, call: impl FnOnce(&Database) -> Result<T, E> + Send + 'static) -> Result<T, ServiceError>
    where
        T: Send + 'static,
        E: Into<ServiceError> + Send + 'static,
    {
        let db = self.inner.db.clone();
        tokio::task::spawn_blocking(move || call(&db).map_err(Into::into))
            .await
            .map_err(|e| ServiceError::Internal(format!("storage task crashed: {e}")))?
    }
}

/// Formats Unix milliseconds as RFC 3339.
pub(crate) fn rfc3339(millis: i64) -> String {
    let time = std::time::UNIX_EPOCH + Duration::from_millis(u64::try_from(millis).unwrap_or(0));
    humantime::format_rfc3339_millis(time).to_string()
}
