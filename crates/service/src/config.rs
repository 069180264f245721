//! The deployment's configuration: one typed struct read from environment variables (and an
//! optional `KEY=VALUE` file named by `CONFIG_FILE`; the environment wins), every field with a
//! documented default, and the assembly of a [`Service`] from it.

use crate::engine_setup::EngineSettings;
use crate::job_process::{ChildJobs, JobIsolation};
use crate::{Service, ServiceConfig, UrlSigner};
use domain::job_kind::Deadlines;
use domain::Usd;
use engines::{Engines, FetchPolicy, InputFetcher, OutputStore};
use std::collections::HashMap;
use std::time::Duration;
use storage::{Backend, Database};

/// A setting that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A variable has a value of the wrong shape.
    #[error("{name}={value:?} is not valid: {expected}")]
    Invalid {
        /// Variable name.
        name: &'static str,
        /// Its value.
        value: String,
        /// What was expected.
        expected: &'static str,
    },
    /// The configuration file could not be read.
    #[error("cannot read CONFIG_FILE {0}: {1}")]
    File(String, std::io::Error),
    /// A component could not be set up.
    #[error("{0}")]
    Setup(String),
}

/// Every setting of api-server and worker. See the README's configuration table. Its `Debug`
/// form redacts the secrets (database credentials, the URL signing key).
#[derive(Clone)]
pub struct AppConfig {
    /// `DATABASE_URL`: `sqlite://PATH` (default `sqlite://data/media.db`) or `postgres://...`.
    pub database_url: String,
    /// `DATABASE_POOL_SIZE`: connections per process (default 8).
    pub database_pool_size: u32,
    /// `BIND_ADDR`: HTTP listen address (default `127.0.0.1:8080`).
    pub bind_addr: String,
    /// `HTTP_WORKERS`: HTTP threads (default 2).
    pub http_workers: usize,
    /// `PUBLIC_BASE_URL`: base of `poll_url` and output URLs (default `http://` + the bind address).
    pub public_base_url: String,
    /// `OUTPUT_DIR`: local directory of the output store (default `data/outputs`).
    pub output_dir: String,
    /// `OUTPUT_STORE_URL`: an `s3://BUCKET[/PREFIX]` store instead of `OUTPUT_DIR` (credentials and
    /// endpoint from the standard `AWS_*` variables; default none).
    pub output_store_url: Option<String>,
    /// `URL_SIGNING_SECRET`: HMAC key of download URLs (default on SQLite: generated once into
    /// `url-signing.key` beside the database file; required on PostgreSQL).
    pub url_signing_secret: Option<String>,
    /// `OUTPUT_URL_TTL_SECS`: lifetime of a signed output URL (default 3600).
    pub output_url_ttl: Duration,
    /// `SYNC_RECIPE_WAIT_SECS`: how long a synchronous recipe (lot-trace) waits for its result
    /// before answering 202 with the task to poll (default 60).
    pub sync_recipe_wait: Duration,
    /// `FREE_ALLOWANCE_USD`: free allowance of new accounts (default 5).
    pub free_allowance: Usd,
    /// `FAIR_HOUSING_PRIMARY_SUITE`: the listing kit's Fair Housing check also rewrites "master
    /// bedroom/bath/suite" to "primary ...", as some MLSs require (default off).
    pub fair_housing_primary_suite: bool,
    /// `ENGINE_CATALOG_FILE`: replaces the built-in engine catalog (default none).
    pub engine_catalog_file: Option<String>,
    /// `EMBEDDED_WORKER`: whether api-server runs jobs in-process (default true on SQLite, false on PostgreSQL).
    pub embedded_worker: bool,
    /// `WORKER_CONCURRENCY`: jobs one worker runs at once (default 2).
    pub worker_concurrency: usize,
    /// `JOBS_RUNNING_PER_KEY`: jobs one key may have running at once on all workers together
    /// (default half of `WORKER_CONCURRENCY`, at least 1), so a key that floods the queue leaves
    /// other keys worker slots; jobs held at a provider do not count.
    pub jobs_running_per_key: u32,
    /// `JOBS_RUNNING_PER_ACCOUNT`: the same for all of an account's keys together (default the
    /// per-key default).
    pub jobs_running_per_account: u32,
    /// `WORKER_LEASE_SECS`: job lease (default 30).
    pub worker_lease: Duration,
    /// `WORKER_HEARTBEAT_SECS`: lease renewal interval (default 10).
    pub worker_heartbeat: Duration,
    /// `WORKER_POLL_MS`: fallback polling interval (default 500).
    pub worker_poll: Duration,
    /// `WORKER_MAX_ATTEMPTS`: claims before a job that keeps losing its worker fails (default 3).
    pub worker_max_attempts: i32,
    /// `SHUTDOWN_GRACE_SECS`: time running jobs get to finish at shutdown (default 30).
    pub shutdown_grace: Duration,
    /// `INPUT_MAX_BYTES`: largest input download (default 67108864).
    pub input_max_bytes: usize,
    /// `INPUT_FETCH_TIMEOUT_SECS`: input download time limit (default 30).
    pub input_fetch_timeout: Duration,
    /// `STORED_INPUT_MB_PER_KEY`: MiB of inputs sent inline (`data:` URIs, kept in the object store
    /// until the job ends) that one key's unfinished jobs may hold at once (default 1024).
    pub stored_input_mb_per_key: u64,
    /// `INPUT_FETCH_BUDGET_SECS`: how long all of a job's inputs together may take to fetch,
    /// before its work starts (default 60).
    pub input_fetch_budget: Duration,
    /// `JOB_INPUT_DIR`: where jobs' fetched inputs are kept while they run (default the system's
    /// temporary directory's `media-gateway-inputs`).
    pub job_input_dir: std::path::PathBuf,
    /// `ALLOW_PRIVATE_INPUT_URLS`: let jobs fetch from private addresses (default false).
    pub allow_private_input_urls: bool,
    /// `JOB_ISOLATION`: `process` runs each job in a child process under `JOB_MEMORY_LIMIT_MB` and
    /// its deadline (default); `inline` runs it in this process under its deadline only.
    pub job_isolation: IsolationMode,
    /// `JOB_MEMORY_LIMIT_MB`: address-space limit of each job's process, MiB (default 512).
    pub job_memory_limit_mb: u64,
    /// `JOB_DEADLINES`: `NAME=SECONDS` pairs overriding the per-family and per-recipe deadlines
    /// (default none; see [`domain::JobKind::default_deadline`]).
    pub job_deadlines: Deadlines,
    /// `JOB_CRASH_LIMIT`: crashes of a job's process after which it fails as a poison job
    /// (default 2).
    pub job_crash_limit: u32,
    /// `CONSOLE_SIGN_UP`: visitors may create accounts in the developer console (default true);
    /// when false, accounts come from the operator CLI with invite links.
    pub console_sign_up: bool,
    /// `TRUSTED_PROXIES`: addresses and networks of the reverse proxies in front of the service,
    /// comma-separated (default none). Only their `X-Forwarded-For` is believed; from anyone else
    /// the peer address is the client's.
    pub trusted_proxies: crate::client_address::TrustedProxies,
    /// `MAIL_TRANSPORT`: where the console's mail goes: `dir:PATH` (a file per message) or
    /// `sendmail:PATH` (piped to a sendmail-compatible program) (default `dir:data/mail`).
    pub mail_transport: crate::mail::MailTransport,
    /// `MAIL_FROM`: the console mail's sender (default `console@` the public host).
    pub mail_from: String,
    /// `FREE_ALLOWANCES_PER_ADDRESS_RANGE`: verified sign-ups from one IPv4 /24 or IPv6 /48 that
    /// get the free allowance per 30 days (default 3).
    pub allowances_per_address_range: u32,
    /// `CONSOLE_SIGN_UPS_PER_ADDRESS`: accounts one client address may create in the console per
    /// day (default 20; 0 for no limit).
    pub console_sign_ups_per_address: u32,
    /// `FAL_KEY`: fal's API key (default none: fal routes refused).
    pub fal_key: Option<String>,
    /// `FAL_QUEUE_URL`: fal's queue (default `https://queue.fal.run`).
    pub fal_queue_url: String,
    /// `FAL_JWKS_URL`: the keys fal signs callbacks with (default
    /// `https://rest.alpha.fal.ai/.well-known/jwks.json`).
    pub fal_jwks_url: String,
    /// `FAL_USER_ID`: our fal user id; when set, fal callbacks for any other user are refused
    /// (default none).
    pub fal_user_id: Option<String>,
    /// `REPLICATE_API_TOKEN`: Replicate's API token (default none: Replicate routes refused).
    pub replicate_api_token: Option<String>,
    /// `REPLICATE_API_URL`: Replicate's API (default `https://api.replicate.com`).
    pub replicate_api_url: String,
    /// `REPLICATE_WEBHOOK_SECRET`: Replicate's callback signing secret, `whsec_...` (default: read
    /// from the API when the first callback arrives).
    pub replicate_webhook_secret: Option<String>,
    /// `ENGINE_ROUTES`: `ENGINE=fal:APP_PATH` or `ENGINE=replicate:OWNER/NAME[:VERSION]` (or
    /// `ENGINE=local`), comma-separated, overriding the catalog's routes (default none).
    pub engine_routes: Vec<(String, domain::catalog::Route)>,
    /// `PROVIDER_TIMEOUT_SECS`: time limit of one call to a provider (default 30).
    pub provider_timeout: Duration,
    /// `PROVIDER_WEBHOOKS`: ask providers to call back at `PUBLIC_BASE_URL/v1/webhooks/...`
    /// (default: true unless `PUBLIC_BASE_URL` is a loopback address no provider can reach).
    pub provider_webhooks: bool,
    /// `RATE_LIMIT_SUBMITS_PER_MINUTE`: spending requests one key may make per minute, on every
    /// api-server together (default 600; 0: no limit).
    pub rate_limit_submits_per_minute: u32,
    /// `RATE_LIMIT_READS_PER_MINUTE`: other authenticated requests one key may make per minute
    /// (default 3000; 0: no limit).
    pub rate_limit_reads_per_minute: u32,
    /// `RATE_LIMIT_BURST_SECS`: seconds of its rate a key may spend at once (default 10).
    pub rate_limit_burst_secs: u32,
    /// `TASK_RETENTION_DAYS`: days a finished task keeps its outputs, stored inputs and result
    /// before the sweeper removes them (default 30; 0: kept forever).
    pub task_retention_days: u32,
    /// `METRICS_TOKEN`: the bearer token Prometheus sends to `GET /metrics` (default none:
    /// `/metrics` answers 404).
    pub metrics_token: Option<String>,
    /// `ACCESS_LOG_READS`: one in this many successful, quick reads (`GET` and `HEAD` answered
    /// under 400 in under a second: polls, mostly) gets an access-log line; every other request
    /// always does (default 1: every read).
    pub access_log_reads: u32,
    /// `ALLOW_PRIVATE_WEBHOOK_URLS`: let clients' webhooks go to private and loopback addresses
    /// (default false; for closed networks and tests).
    pub allow_private_webhook_urls: bool,
    /// `WEBHOOK_TIMEOUT_SECS`: time limit of one webhook delivery attempt (default 10).
    pub webhook_timeout: Duration,
    /// `WEBHOOK_RETRY_DELAYS`: the waits before each retry of a refused webhook, comma-separated
    /// durations such as `5s,30s,2m` (default `5s,30s,2m,10m,30m,1h,3h,6h,12h`: ten attempts over
    /// about 23 hours).
    pub webhook_retry_delays: Vec<Duration>,
    /// `OAUTH_ACCESS_TOKEN_SECS`: how long the connector's OAuth access tokens work (default
    /// 3600; refresh tokens work 30 days and are used once).
    pub oauth_access_token: Duration,
    /// `WORKER_HTTP_ADDR`: where a standalone `worker` answers `/healthz`, `/readyz` and
    /// `/metrics` (default none: it serves nothing).
    pub worker_http_addr: Option<String>,
}

/// Where jobs run (`JOB_ISOLATION`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IsolationMode {
    /// A child process per job (`process`).
    Process,
    /// This process (`inline`).
    Inline,
}

struct Source(HashMap<String, String>);

impl Source {
    /// `CONFIG_FILE`'s lines under the process environment (the environment wins).
    fn load() -> Result<Source, ConfigError> {
        let file = match std::env::var("CONFIG_FILE") {
            Ok(path) => std::fs::read_to_string(&path).map_err(|e| ConfigError::File(path.clone(), e))?,
            Err(_) => String::new(),
        };
        Ok(Self::from_parts(&file, std::env::vars()))
    }

    fn from_parts(file: &str, env: impl Iterator<Item = (String, String)>) -> Source {
        let mut values = HashMap::new();
        for line in file.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
            if let Some((k, v)) = line.split_once('=') {
                values.insert(k.trim().to_string(), v.trim().trim_matches('"').to_string());
            }
        }
        values.extend(env);
        Source(values)
    }

    fn string(&self, name: &str) -> Option<String> {
        self.0.get(name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
    }

    fn parse<T: std::str::FromStr>(
        &self,
        name: &'static str,
        default: T,
        expected: &'static str,
    ) -> Result<T, ConfigError> {
        match self.string(name) {
            None => Ok(default),
            Some(value) => value.parse().map_err(|_| ConfigError::Invalid { name, value, expected }),
        }
    }

    fn flag(&self, name: &'static str, default: bool) -> Result<bool, ConfigError> {
        match self.string(name).map(|v| v.to_ascii_lowercase()) {
            None => Ok(default),
            Some(v) if ["1", "true", "yes", "on"].contains(&v.as_str()) => Ok(true),
            Some(v) if ["0", "false", "no", "off"].contains(&v.as_str()) => Ok(false),
            Some(value) => Err(ConfigError::Invalid { name, value, expected: "true or false" }),
        }
    }

    fn secs(&self, name: &'static str, default: u64) -> Result<Duration, ConfigError> {
        self.parse(name, default, "a whole number of seconds").map(Duration::from_secs)
    }
}

/// Smallest `JOB_MEMORY_LIMIT_MB`: below it the job process cannot even start (a debug build maps
/// about 130 MiB before any work: its code, the subject network it embeds, its libraries).
const MIN_JOB_MEMORY_MB: u64 = 160;

/// Shortest accepted `URL_SIGNING_SECRET`: 32 characters (a 128-bit or longer key).
pub const MIN_SIGNING_SECRET_CHARS: usize = 32;

/// Query parameters of a database URL that carry secrets.
const SECRET_URL_PARAMETERS: [&str; 3] = ["password", "sslpassword", "sslkey"];

/// A database URL fit for logs: credentials replaced by `***` (everything before the last `@`
/// of the authority, so a password containing `@` does not leak) and secret query parameters
/// (`password=`, ...) replaced by `REDACTED`.
pub fn redact_database_url(url: &str) -> String {
    let (scheme, rest) = match url.split_once("://") {
        Some(parts) => parts,
        None => return url.split_once('?').map_or(url.to_string(), |(base, _)| format!("{base}?REDACTED")),
    };
    let (before_query, query) = match rest.split_once('?') {
        Some((before, query)) => (before, Some(query)),
        None => (rest, None),
    };
    let (authority, path) = before_query.split_once('/').map_or((before_query, None), |(a, p)| (a, Some(p)));
    let mut out = format!("{scheme}://");
    match authority.rsplit_once('@') {
        Some((_, host)) => {
            out.push_str("***@");
            out.push_str(host);
        }
        None => out.push_str(authority),
    }
    if let Some(path) = path {
        out.push('/');
        out.push_str(path);
    }
    if let Some(query) = query {
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| {
                let name = pair.split_once('=').map_or(pair, |(k, _)| k);
                let decoded: String =
                    url::form_urlencoded::parse(name.as_bytes()).map(|(k, _)| k.into_owned()).collect();
                if SECRET_URL_PARAMETERS.iter().any(|s| decoded.eq_ignore_ascii_case(s)) {
                    format!("{name}=REDACTED")
                } else {
                    pair.to_string()
                }
            })
            .collect();
        out.push('?');
        out.push_str(&pairs.join("&"));
    }
    out
}

impl std::fmt::Debug for AppConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppConfig").field("settings", &self.describe()).finish()
    }
}

impl AppConfig {
    /// Reads the configuration from the environment (and `CONFIG_FILE`).
    pub fn from_env() -> Result<AppConfig, ConfigError> {
        Self::from_source(&Source::load()?)
    }

    /// The configuration from `settings` alone (name and value, as the environment would give
    /// them), ignoring the process environment and `CONFIG_FILE`: for embedding the service, and
    /// for tests that must not depend on the machine they run on.
    pub fn from_settings<'a>(settings: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<AppConfig, ConfigError> {
        let settings = settings.into_iter().map(|(name, value)| (name.to_string(), value.to_string()));
        Self::from_source(&Source::from_parts("", settings))
    }

    fn from_source(src: &Source) -> Result<AppConfig, ConfigError> {
        Self::read_source(src)?.validated()
    }

    /// Rules between settings, or about a value's range, that its shape alone does not show.
    fn validated(self) -> Result<AppConfig, ConfigError> {
        let invalid = |name: &'static str, value: String, expected: &'static str| {
            Err(ConfigError::Invalid { name, value, expected })
        };
        if self.worker_concurrency == 0 {
            return invalid("WORKER_CONCURRENCY", "0".into(), "at least 1");
        }
        if self.jobs_running_per_key == 0 {
            return invalid("JOBS_RUNNING_PER_KEY", "0".into(), "at least 1");
        }
        if self.jobs_running_per_account == 0 {
            return invalid("JOBS_RUNNING_PER_ACCOUNT", "0".into(), "at least 1");
        }
        if self.worker_max_attempts < 1 {
            return invalid("WORKER_MAX_ATTEMPTS", self.worker_max_attempts.to_string(), "at least 1");
        }
        if self.database_pool_size == 0 {
            return invalid("DATABASE_POOL_SIZE", "0".into(), "at least 1");
        }
        if self.http_workers == 0 {
            return invalid("HTTP_WORKERS", "0".into(), "at least 1");
        }
        if self.worker_lease.is_zero() {
            return invalid("WORKER_LEASE_SECS", "0".into(), "at least 1 second");
        }
        if self.access_log_reads == 0 {
            return invalid("ACCESS_LOG_READS", "0".into(), "at least 1 (1: every read)");
        }
        if self.job_crash_limit == 0 {
            return invalid("JOB_CRASH_LIMIT", "0".into(), "at least 1");
        }
        if self.job_memory_limit_mb < MIN_JOB_MEMORY_MB {
            return invalid("JOB_MEMORY_LIMIT_MB", self.job_memory_limit_mb.to_string(), "at least 160 (MiB)");
        }
        // A submission (with its one retry) must end well within the window in which trackers
        // leave its task alone.
        let longest_submit = self.provider_timeout * 2 + Duration::from_secs(10);
        if self.provider_timeout.is_zero()
            || longest_submit >= Duration::from_millis(storage::SUBMISSION_WINDOW_MS as u64)
        {
            return invalid(
                "PROVIDER_TIMEOUT_SECS",
                self.provider_timeout.as_secs().to_string(),
                "between 1 and 50 seconds",
            );
        }
        if self.worker_heartbeat.is_zero() || self.worker_heartbeat >= self.worker_lease {
            return invalid(
                "WORKER_HEARTBEAT_SECS",
                self.worker_heartbeat.as_secs().to_string(),
                "at least 1 second and shorter than WORKER_LEASE_SECS, so a lease is renewed before it lapses",
            );
        }
        Ok(self)
    }

    fn read_source(src: &Source) -> Result<AppConfig, ConfigError> {
        let database_url = src.string("DATABASE_URL").unwrap_or_else(|| "sqlite://data/media.db".into());
        let is_sqlite = database_url.starts_with("sqlite:");
        let bind_addr = src.string("BIND_ADDR").unwrap_or_else(|| "127.0.0.1:8080".into());
        let public_base_url = src
            .string("PUBLIC_BASE_URL")
            .unwrap_or_else(|| format!("http://{}", bind_addr.replace("0.0.0.0", "127.0.0.1")))
            .trim_end_matches('/')
            .to_string();
        let worker_concurrency: usize = src.parse("WORKER_CONCURRENCY", 2, "a positive whole number")?;
        let default_share = u32::try_from(worker_concurrency / 2).unwrap_or(u32::MAX).max(1);
        let mail_transport = match src.string("MAIL_TRANSPORT") {
            None => crate::mail::MailTransport::Directory("data/mail".into()),
            Some(value) => crate::mail::MailTransport::parse(&value).ok_or(ConfigError::Invalid {
                name: "MAIL_TRANSPORT",
                value,
                expected: "dir:PATH or sendmail:PATH",
            })?,
        };
        let mail_from = src.string("MAIL_FROM").unwrap_or_else(|| {
            let host = url::Url::parse(&public_base_url).ok().and_then(|u| u.host_str().map(str::to_string));
            format!("console@{}", host.unwrap_or_else(|| "localhost".into()))
        });
        Ok(AppConfig {
            mail_transport,
            mail_from,
            allowances_per_address_range: src.parse("FREE_ALLOWANCES_PER_ADDRESS_RANGE", 3, "a whole number")?,
            database_pool_size: src.parse("DATABASE_POOL_SIZE", 8, "a positive whole number")?,
            http_workers: src.parse("HTTP_WORKERS", 2, "a positive whole number")?,
            output_dir: src.string("OUTPUT_DIR").unwrap_or_else(|| "data/outputs".into()),
            output_store_url: src.string("OUTPUT_STORE_URL"),
            url_signing_secret: match src.string("URL_SIGNING_SECRET") {
                Some(secret) if secret.chars().count() < MIN_SIGNING_SECRET_CHARS => {
                    return Err(ConfigError::Invalid {
                        name: "URL_SIGNING_SECRET",
                        value: "(redacted)".into(),
                        expected: "at least 32 characters (for example 64 hex digits from `openssl rand -hex 32`)",
                    })
                }
                secret => secret,
            },
            output_url_ttl: src.secs("OUTPUT_URL_TTL_SECS", 3600)?,
            sync_recipe_wait: src.secs("SYNC_RECIPE_WAIT_SECS", 60)?,
            free_allowance: src.parse(
                "FREE_ALLOWANCE_USD",
                Usd::from_units(50_000),
                "a USD amount such as 5 or 2.50",
            )?,
            engine_catalog_file: src.string("ENGINE_CATALOG_FILE"),
            fair_housing_primary_suite: src.flag("FAIR_HOUSING_PRIMARY_SUITE", false)?,
            embedded_worker: src.flag("EMBEDDED_WORKER", is_sqlite)?,
            worker_concurrency,
            jobs_running_per_key: src.parse("JOBS_RUNNING_PER_KEY", default_share, "a positive whole number")?,
            jobs_running_per_account: src.parse(
                "JOBS_RUNNING_PER_ACCOUNT",
                default_share,
                "a positive whole number",
            )?,
            worker_lease: src.secs("WORKER_LEASE_SECS", 30)?,
            worker_heartbeat: src.secs("WORKER_HEARTBEAT_SECS", 10)?,
            worker_poll: src
                .parse("WORKER_POLL_MS", 500, "a whole number of milliseconds")
                .map(Duration::from_millis)?,
            worker_max_attempts: src.parse("WORKER_MAX_ATTEMPTS", 3, "a positive whole number")?,
            shutdown_grace: src.secs("SHUTDOWN_GRACE_SECS", 30)?,
            input_max_bytes: src.parse("INPUT_MAX_BYTES", 64 * 1024 * 1024, "a number of bytes")?,
            input_fetch_timeout: src.secs("INPUT_FETCH_TIMEOUT_SECS", 30)?,
            input_fetch_budget: src.secs("INPUT_FETCH_BUDGET_SECS", 60)?,
            stored_input_mb_per_key: src.parse("STORED_INPUT_MB_PER_KEY", 1024, "a whole number of MiB")?,
            job_input_dir: src
                .string("JOB_INPUT_DIR")
                .map_or_else(|| std::env::temp_dir().join("media-gateway-inputs"), Into::into),
            allow_private_input_urls: src.flag("ALLOW_PRIVATE_INPUT_URLS", false)?,
            job_isolation: match src.string("JOB_ISOLATION").map(|v| v.to_ascii_lowercase()).as_deref() {
                None | Some("process") => IsolationMode::Process,
                Some("inline") => IsolationMode::Inline,
                Some(other) => {
                    return Err(ConfigError::Invalid {
                        name: "JOB_ISOLATION",
                        value: other.into(),
                        expected: "process or inline",
                    })
                }
            },
            job_memory_limit_mb: src.parse("JOB_MEMORY_LIMIT_MB", 512, "a whole number of MiB")?,
            job_deadlines: match src.string("JOB_DEADLINES") {
                None => Deadlines::default(),
                // The reason names the pair at fault (an unknown name lists the known ones).
                Some(value) => {
                    Deadlines::with_overrides(&value).map_err(|e| ConfigError::Setup(format!("JOB_DEADLINES: {e}")))?
                }
            },
            job_crash_limit: src.parse("JOB_CRASH_LIMIT", 2, "a positive whole number")?,
            console_sign_up: src.flag("CONSOLE_SIGN_UP", true)?,
            trusted_proxies: crate::client_address::TrustedProxies::parse(
                &src.string("TRUSTED_PROXIES").unwrap_or_default(),
            )
            .map_err(|e| ConfigError::Setup(format!("TRUSTED_PROXIES: {e}")))?,
            console_sign_ups_per_address: src.parse(
                "CONSOLE_SIGN_UPS_PER_ADDRESS",
                20,
                "a whole number (0: no limit)",
            )?,
            fal_key: src.string("FAL_KEY"),
            fal_queue_url: base_url(src, "FAL_QUEUE_URL", "https://queue.fal.run")?,
            fal_jwks_url: base_url(src, "FAL_JWKS_URL", "https://rest.alpha.fal.ai/.well-known/jwks.json")?,
            replicate_api_token: src.string("REPLICATE_API_TOKEN"),
            replicate_api_url: base_url(src, "REPLICATE_API_URL", "https://api.replicate.com")?,
            replicate_webhook_secret: src.string("REPLICATE_WEBHOOK_SECRET"),
            fal_user_id: src.string("FAL_USER_ID"),
            engine_routes: match src.string("ENGINE_ROUTES") {
                None => Vec::new(),
                Some(routes) => parse_routes(&routes)?,
            },
            provider_timeout: src.secs("PROVIDER_TIMEOUT_SECS", 30)?,
            provider_webhooks: src.flag("PROVIDER_WEBHOOKS", !is_loopback_url(&public_base_url))?,
            rate_limit_submits_per_minute: src.parse(
                "RATE_LIMIT_SUBMITS_PER_MINUTE",
                600,
                "a whole number of requests (0: no limit)",
            )?,
            rate_limit_reads_per_minute: src.parse(
                "RATE_LIMIT_READS_PER_MINUTE",
                3000,
                "a whole number of requests (0: no limit)",
            )?,
            rate_limit_burst_secs: src.parse("RATE_LIMIT_BURST_SECS", 10, "a whole number of seconds")?,
            task_retention_days: src.parse("TASK_RETENTION_DAYS", 30, "a whole number of days (0: forever)")?,
            metrics_token: src.string("METRICS_TOKEN"),
            access_log_reads: src.parse("ACCESS_LOG_READS", 1, "a positive whole number")?,
            allow_private_webhook_urls: src.flag("ALLOW_PRIVATE_WEBHOOK_URLS", false)?,
            oauth_access_token: src.secs("OAUTH_ACCESS_TOKEN_SECS", 3600)?,
            webhook_timeout: src.secs("WEBHOOK_TIMEOUT_SECS", 10)?,
            webhook_retry_delays: match src.string("WEBHOOK_RETRY_DELAYS") {
                None => domain::webhook::RETRY_DELAYS.to_vec(),
                Some(value) => value
                    .split(',')
                    .map(|part| humantime::parse_duration(part.trim()))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|_| ConfigError::Invalid {
                        name: "WEBHOOK_RETRY_DELAYS",
                        value,
                        expected: "comma-separated durations such as 5s,30s,2m",
                    })?,
            },
            worker_http_addr: src.string("WORKER_HTTP_ADDR"),
            database_url,
            bind_addr,
            public_base_url,
        })
    }

    /// The upstream providers these settings configure.
    pub fn build_providers(&self) -> Result<providers::Providers, ConfigError> {
        providers::Providers::new(self.provider_settings()).map_err(|e| ConfigError::Setup(e.to_string()))
    }

    fn provider_settings(&self) -> providers::Settings {
        let fal = self.fal_key.as_ref().map(|key| providers::FalSettings {
            key: key.clone(),
            queue_url: self.fal_queue_url.clone(),
            jwks_url: self.fal_jwks_url.clone(),
            user_id: self.fal_user_id.clone(),
        });
        let replicate = self.replicate_api_token.as_ref().map(|token| providers::ReplicateSettings {
            token: token.clone(),
            api_url: self.replicate_api_url.clone(),
            webhook_secret: self.replicate_webhook_secret.clone(),
        });
        providers::Settings { fal, replicate, request_timeout: self.provider_timeout }
    }

    /// The settings as `NAME=value` lines for the start-up log, with secrets redacted.
    pub fn describe(&self) -> Vec<String> {
        vec![
            format!("DATABASE_URL={}", redact_database_url(&self.database_url)),
            format!("DATABASE_POOL_SIZE={}", self.database_pool_size),
            format!("BIND_ADDR={}", self.bind_addr),
            format!("HTTP_WORKERS={}", self.http_workers),
            format!("PUBLIC_BASE_URL={}", self.public_base_url),
            format!("OUTPUT_DIR={}", self.output_dir),
            format!("OUTPUT_STORE_URL={}", self.output_store_url.as_deref().unwrap_or("(none: OUTPUT_DIR)")),
            format!(
                "URL_SIGNING_SECRET={}",
                if self.url_signing_secret.is_some() { "***" } else { "(generated into url-signing.key)" }
            ),
            format!("OUTPUT_URL_TTL_SECS={}", self.output_url_ttl.as_secs()),
            format!("SYNC_RECIPE_WAIT_SECS={}", self.sync_recipe_wait.as_secs()),
            format!("FREE_ALLOWANCE_USD={}", self.free_allowance),
            format!("FAIR_HOUSING_PRIMARY_SUITE={}", self.fair_housing_primary_suite),
            format!("ENGINE_CATALOG_FILE={}", self.engine_catalog_file.as_deref().unwrap_or("(built in)")),
            format!("EMBEDDED_WORKER={}", self.embedded_worker),
            format!("MAIL_TRANSPORT={:?}", self.mail_transport),
            format!("MAIL_FROM={}", self.mail_from),
            format!("FREE_ALLOWANCES_PER_ADDRESS_RANGE={}", self.allowances_per_address_range),
            format!("WORKER_CONCURRENCY={}", self.worker_concurrency),
            format!("JOBS_RUNNING_PER_KEY={}", self.jobs_running_per_key),
            format!("JOBS_RUNNING_PER_ACCOUNT={}", self.jobs_running_per_account),
            format!("WORKER_LEASE_SECS={}", self.worker_lease.as_secs()),
            format!("WORKER_HEARTBEAT_SECS={}", self.worker_heartbeat.as_secs()),
            format!("WORKER_POLL_MS={}", self.worker_poll.as_millis()),
            format!("WORKER_MAX_ATTEMPTS={}", self.worker_max_attempts),
            format!("SHUTDOWN_GRACE_SECS={}", self.shutdown_grace.as_secs()),
            format!("INPUT_MAX_BYTES={}", self.input_max_bytes),
            format!("INPUT_FETCH_TIMEOUT_SECS={}", self.input_fetch_timeout.as_secs()),
            format!("INPUT_FETCH_BUDGET_SECS={}", self.input_fetch_budget.as_secs()),
            format!("STORED_INPUT_MB_PER_KEY={}", self.stored_input_mb_per_key),
            format!("JOB_INPUT_DIR={}", self.job_input_dir.display()),
            format!("ALLOW_PRIVATE_INPUT_URLS={}", self.allow_private_input_urls),
            format!(
                "JOB_ISOLATION={}",
                if self.job_isolation == IsolationMode::Process { "process" } else { "inline" }
            ),
            format!("JOB_MEMORY_LIMIT_MB={}", self.job_memory_limit_mb),
            format!("JOB_DEADLINES={}", self.job_deadlines.describe()),
            format!("JOB_CRASH_LIMIT={}", self.job_crash_limit),
            format!("CONSOLE_SIGN_UP={}", self.console_sign_up),
            format!("TRUSTED_PROXIES={}", self.trusted_proxies),
            format!("CONSOLE_SIGN_UPS_PER_ADDRESS={}", self.console_sign_ups_per_address),
            format!("FAL_KEY={}", if self.fal_key.is_some() { "***" } else { "(none)" }),
            format!("FAL_QUEUE_URL={}", self.fal_queue_url),
            format!("FAL_JWKS_URL={}", self.fal_jwks_url),
            format!("REPLICATE_API_TOKEN={}", if self.replicate_api_token.is_some() { "***" } else { "(none)" }),
            format!("REPLICATE_API_URL={}", self.replicate_api_url),
            format!(
                "REPLICATE_WEBHOOK_SECRET={}",
                if self.replicate_webhook_secret.is_some() { "***" } else { "(read from the API)" }
            ),
            format!(
                "ENGINE_ROUTES={}",
                self.engine_routes
                    .iter()
                    .map(|(id, route)| format!("{id}={}", describe_route(route)))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            format!("PROVIDER_TIMEOUT_SECS={}", self.provider_timeout.as_secs()),
            format!("PROVIDER_WEBHOOKS={}", self.provider_webhooks),
            format!("RATE_LIMIT_SUBMITS_PER_MINUTE={}", self.rate_limit_submits_per_minute),
            format!("RATE_LIMIT_READS_PER_MINUTE={}", self.rate_limit_reads_per_minute),
            format!("ACCESS_LOG_READS={}", self.access_log_reads),
            format!("RATE_LIMIT_BURST_SECS={}", self.rate_limit_burst_secs),
            format!("TASK_RETENTION_DAYS={}", self.task_retention_days),
            format!("METRICS_TOKEN={}", if self.metrics_token.is_some() { "***" } else { "(none: /metrics off)" }),
            format!("ALLOW_PRIVATE_WEBHOOK_URLS={}", self.allow_private_webhook_urls),
            format!("WEBHOOK_TIMEOUT_SECS={}", self.webhook_timeout.as_secs()),
            format!(
                "WEBHOOK_RETRY_DELAYS={}",
                self.webhook_retry_delays
                    .iter()
                    .map(|d| humantime::format_duration(*d).to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            format!("OAUTH_ACCESS_TOKEN_SECS={}", self.oauth_access_token.as_secs()),
            format!("WORKER_HTTP_ADDR={}", self.worker_http_addr.as_deref().unwrap_or("(none)")),
        ]
    }

    /// Opens the database (applying migrations) and assembles the service.
    pub fn build_service(&self) -> Result<Service, ConfigError> {
        let db = Database::connect(&self.database_url, self.database_pool_size)
            .map_err(|e| ConfigError::Setup(e.to_string()))?;
        self.build_service_on(db)
    }

    /// Assembles the service on an open database.
    pub fn build_service_on(&self, db: Database) -> Result<Service, ConfigError> {
        let store = self.build_store()?;
        let secret = match &self.url_signing_secret {
            Some(secret) => {
                crate::signing_key::forget_legacy_key(&db, secret).map_err(|e| ConfigError::Setup(e.to_string()))?;
                secret.clone()
            }
            None => crate::signing_key::generated_key(&db).map_err(|e| ConfigError::Setup(e.to_string()))?,
        };
        let isolation = match self.job_isolation {
            IsolationMode::Inline => JobIsolation::InProcess,
            IsolationMode::Process => JobIsolation::ChildProcess(Box::new(
                ChildJobs::this_executable(self.job_memory_limit_mb, self.job_crash_limit, self.engine_settings())
                    .map_err(|e| ConfigError::Setup(format!("cannot find this executable for job processes: {e}")))?,
            )),
        };
        let config = ServiceConfig {
            public_base_url: self.public_base_url.clone(),
            free_allowance: self.free_allowance,
            output_url_ttl: self.output_url_ttl,
            sync_recipe_wait: self.sync_recipe_wait,
            fair_housing: recipes::listing_kit::fair_housing::Policy {
                master_to_primary: self.fair_housing_primary_suite,
                ..Default::default()
            },
            isolation,
            deadlines: self.job_deadlines.clone(),
            console_sign_up: self.console_sign_up,
            trusted_proxies: self.trusted_proxies.clone(),
            console_sign_ups_per_address: std::num::NonZeroU32::new(self.console_sign_ups_per_address),
            provider_webhooks: self.provider_webhooks,
            metrics_token: self.metrics_token.clone(),
            access_log_reads: std::num::NonZeroU32::new(self.access_log_reads).unwrap_or(std::num::NonZeroU32::MIN),
            task_retention: (self.task_retention_days > 0)
                .then(|| Duration::from_secs(u64::from(self.task_retention_days) * 86_400)),
            rate_limits: crate::rate_limit::RateLimits {
                submits_per_minute: self.rate_limit_submits_per_minute,
                reads_per_minute: self.rate_limit_reads_per_minute,
                burst_secs: self.rate_limit_burst_secs,
            },
            mailer: crate::mail::Mailer { transport: self.mail_transport.clone(), from: self.mail_from.clone() },
            allowances_per_address_range: self.allowances_per_address_range,
            stored_input_bytes_per_key: i64::try_from(self.stored_input_mb_per_key.saturating_mul(1 << 20))
                .unwrap_or(i64::MAX),
            running_shares: storage::RunningShares {
                per_key: self.jobs_running_per_key,
                per_account: self.jobs_running_per_account,
            },
            inputs: crate::InputSettings { dir: self.job_input_dir.clone(), budget: self.input_fetch_budget },
            webhooks: crate::WebhookSettings {
                sender: webhooks::Sender::new(webhooks::SenderSettings {
                    timeout: self.webhook_timeout,
                    allow_private: self.allow_private_webhook_urls,
                })
                .map_err(|e| ConfigError::Setup(e.to_string()))?,
                retry_delays: self.webhook_retry_delays.clone(),
            },
            oauth_access_token_secs: i64::try_from(self.oauth_access_token.as_secs()).unwrap_or(i64::MAX / 2000),
        };
        Ok(Service::new(db, self.build_engines_only()?, store, UrlSigner::new(secret.as_bytes()), config))
    }

    /// The engines a job runs on: the catalog, the input fetcher, and the output store for inputs
    /// moved there at submit. Job processes build theirs with this.
    pub fn build_engines(&self) -> Result<Engines, ConfigError> {
        Ok(self.build_engines_only()?.with_stored_inputs(self.build_store()?))
    }

    fn build_engines_only(&self) -> Result<Engines, ConfigError> {
        let setup = |e: crate::engine_setup::EngineSetupError| ConfigError::Setup(e.to_string());
        let settings = self.engine_settings();
        let catalog = settings.catalog().map_err(setup)?;
        let upstream = &settings.providers;
        for (id, route) in catalog.routes() {
            let Some(provider) = providers::ProviderName::of(route) else { continue };
            let (configured, key) = match provider {
                providers::ProviderName::Fal => (upstream.fal.is_some(), "FAL_KEY"),
                providers::ProviderName::Replicate => (upstream.replicate.is_some(), "REPLICATE_API_TOKEN"),
            };
            if !configured {
                return Err(ConfigError::Setup(format!(
                    "engine {id} is routed to {provider} ({}), but {key} is not set",
                    describe_route(route)
                )));
            }
        }
        let fetcher = InputFetcher::new(FetchPolicy {
            max_bytes: self.input_max_bytes,
            timeout: self.input_fetch_timeout,
            allow_private: self.allow_private_input_urls,
            trusted_prefix: Some(crate::urls::PublicUrls::new(&self.public_base_url).files_prefix()),
        })
        .map_err(|e| ConfigError::Setup(e.to_string()))?;
        settings.build(fetcher).map_err(setup)
    }

    /// What engines are built from, in this process and in job processes.
    pub fn engine_settings(&self) -> EngineSettings {
        EngineSettings {
            catalog_file: self.engine_catalog_file.clone(),
            routes: self.engine_routes.clone(),
            providers: self.provider_settings(),
            allow_private: self.allow_private_input_urls,
        }
    }

    fn build_store(&self) -> Result<OutputStore, ConfigError> {
        match &self.output_store_url {
            Some(url) => OutputStore::from_url(url),
            None => OutputStore::local_dir(&self.output_dir),
        }
        .map_err(|e| ConfigError::Setup(e.to_string()))
    }

    /// Whether the database is the embedded SQLite one.
    pub fn is_embedded(&self) -> bool {
        Database::backend_of_url(&self.database_url) == Some(Backend::Sqlite)
    }
}

/// A provider base URL setting: `http(s)://...`, kept without a trailing slash.
fn base_url(src: &Source, name: &'static str, default: &str) -> Result<String, ConfigError> {
    let value = src.string(name).unwrap_or_else(|| default.to_string());
    match url::Url::parse(&value) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() => {
            Ok(value.trim_end_matches('/').to_string())
        }
        _ => Err(ConfigError::Invalid { name, value, expected: "an http(s) URL" }),
    }
}

/// `ENGINE_ROUTES`: comma-separated `ENGINE=ROUTE` pairs.
fn parse_routes(text: &str) -> Result<Vec<(String, domain::catalog::Route)>, ConfigError> {
    let invalid = |expected: String| ConfigError::Setup(format!("ENGINE_ROUTES: {expected}"));
    let mut routes = Vec::new();
    for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (id, route) = pair.split_once('=').ok_or_else(|| invalid(format!("{pair:?} is not ENGINE=ROUTE")))?;
        let route = domain::catalog::Route::parse(route).map_err(invalid)?;
        if routes.iter().any(|(seen, _)| seen == id.trim()) {
            return Err(invalid(format!("engine {} is routed twice", id.trim())));
        }
        routes.push((id.trim().to_string(), route));
    }
    Ok(routes)
}

/// A route as `ENGINE_ROUTES` spells it.
fn describe_route(route: &domain::catalog::Route) -> String {
    use domain::catalog::Route;
    match route {
        Route::Local => "local".into(),
        Route::Fal { app } => format!("fal:{app}"),
        Route::Replicate { model, version: Some(version) } => format!("replicate:{model}:{version}"),
        Route::Replicate { model, version: None } => format!("replicate:{model}"),
    }
}

/// Whether `url` names this machine (a provider could not call it back).
fn is_loopback_url(url: &str) -> bool {
    match url::Url::parse(url).ok().and_then(|u| u.host().map(|h| h.to_owned())) {
        Some(url::Host::Domain(name)) => name == "localhost" || name.ends_with(".localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback() || ip.is_unspecified(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback() || ip.is_unspecified(),
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_are_read_and_checked_against_the_credentials() {
        let c = config(
            "",
            &[("ENGINE_ROUTES", "alpha-ultra=fal:fal-ai/flux-pro/v1.1-ultra, zeta=replicate:owner/model:abc123")],
        )
        .unwrap();
        assert_eq!(c.engine_routes.len(), 2);
        assert!(
            c.describe()
                .iter()
                .any(|l| l
                    == "ENGINE_ROUTES=alpha-ultra=fal:fal-ai/flux-pro/v1.1-ultra,zeta=replicate:owner/model:abc123")
        );
        let refused = c.build_engines_only().err().unwrap().to_string();
        assert!(refused.contains("alpha-ultra") && refused.contains("FAL_KEY"), "{refused}");
        let keyed = config("", &[("ENGINE_ROUTES", "alpha-ultra=fal:fal-ai/flux"), ("FAL_KEY", "k")]).unwrap();
        assert!(keyed.build_engines_only().is_ok());
        assert!(!keyed.describe().iter().any(|l| l.contains("=k")), "the key is redacted");
        let unknown = config("", &[("ENGINE_ROUTES", "omega=fal:a/b"), ("FAL_KEY", "k")]).unwrap();
        assert!(unknown.build_engines_only().err().unwrap().to_string().contains("omega"));
        for bad in
            ["alpha-ultra", "alpha-ultra=fal:flux", "zeta=replicate:model", "zeta=openai:x/y", "zeta=local,zeta=local"]
        {
            let err = config("", &[("ENGINE_ROUTES", bad)]).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(err.starts_with("ENGINE_ROUTES"), "{bad}: {err}");
        }
        assert!(config("", &[("FAL_QUEUE_URL", "queue.fal.run")]).is_err());
        assert!(!config("", &[]).unwrap().provider_webhooks, "nobody can call back a loopback address");
        assert!(config("", &[("PUBLIC_BASE_URL", "https://api.example.com")]).unwrap().provider_webhooks);
    }

    fn config(file: &str, env: &[(&str, &str)]) -> Result<AppConfig, ConfigError> {
        AppConfig::from_source(&Source::from_parts(file, env.iter().map(|(k, v)| (k.to_string(), v.to_string()))))
    }

    #[test]
    fn secrets_never_reach_logs_or_debug() {
        for (url, leaked) in [
            ("postgres://u:p@ss@db/media", "p@ss"),
            ("postgres://user:hunter2@db:5432/media?sslmode=require", "hunter2"),
            ("postgres://db/media?user=u&password=hunter2", "hunter2"),
            ("postgres://db/media?pass%77ord=hunter2", "hunter2"),
        ] {
            let redacted = redact_database_url(url);
            assert!(!redacted.contains(leaked), "{url} -> {redacted}");
        }
        assert_eq!(redact_database_url("postgres://u:p@ss@db/media"), "postgres://***@db/media");
        assert_eq!(redact_database_url("sqlite://data/media.db"), "sqlite://data/media.db");
        let secret = "s3cr3t-signing-key-of-forty-characters!!";
        let c = config("", &[("DATABASE_URL", "postgres://u:hunter2@db/m"), ("URL_SIGNING_SECRET", secret)]).unwrap();
        let debug = format!("{c:?}");
        assert!(!debug.contains("hunter2") && !debug.contains(secret), "{debug}");
        let short = config("", &[("URL_SIGNING_SECRET", "short")]).unwrap_err().to_string();
        assert!(short.contains("URL_SIGNING_SECRET") && !short.contains("short\""), "{short}");
    }

    #[test]
    fn defaults_are_the_embedded_deployment() {
        let c = config("", &[]).unwrap();
        assert_eq!(c.database_url, "sqlite://data/media.db");
        assert_eq!(c.bind_addr, "127.0.0.1:8080");
        assert_eq!(c.public_base_url, "http://127.0.0.1:8080");
        assert_eq!(c.free_allowance.to_string(), "5.0000");
        assert!(c.embedded_worker && !c.allow_private_input_urls);
        assert_eq!(c.worker_lease, Duration::from_secs(30));
    }

    #[test]
    fn the_file_fills_in_and_the_environment_wins() {
        let file = "# comment\nBIND_ADDR=0.0.0.0:9000\nFREE_ALLOWANCE_USD=\"2.5\"\nDATABASE_URL=postgres://u:secret@db/media\n";
        let c = config(file, &[("FREE_ALLOWANCE_USD", "1")]).unwrap();
        assert_eq!(c.public_base_url, "http://127.0.0.1:9000", "derived from the bind address");
        assert_eq!(c.free_allowance.to_string(), "1.0000");
        assert!(!c.embedded_worker, "PostgreSQL deployments run workers apart by default");
        assert!(c.describe().iter().any(|l| l == "DATABASE_URL=postgres://***@db/media"), "password redacted");
    }

    #[test]
    fn bad_values_name_the_variable() {
        let err = config("", &[("WORKER_LEASE_SECS", "soon")]).unwrap_err().to_string();
        assert!(err.starts_with("WORKER_LEASE_SECS=\"soon\""), "{err}");
        assert!(config("", &[("EMBEDDED_WORKER", "maybe")]).is_err());
        assert!(config("", &[("FREE_ALLOWANCE_USD", "-1")]).is_err());
    }

    #[test]
    fn settings_that_cannot_work_together_are_refused_at_start() {
        for (env, variable) in [
            (vec![("WORKER_HEARTBEAT_SECS", "30"), ("WORKER_LEASE_SECS", "30")], "WORKER_HEARTBEAT_SECS"),
            (vec![("WORKER_HEARTBEAT_SECS", "0")], "WORKER_HEARTBEAT_SECS"),
            (vec![("WORKER_LEASE_SECS", "0")], "WORKER_LEASE_SECS"),
            (vec![("WORKER_CONCURRENCY", "0")], "WORKER_CONCURRENCY"),
            (vec![("WORKER_MAX_ATTEMPTS", "0")], "WORKER_MAX_ATTEMPTS"),
            (vec![("DATABASE_POOL_SIZE", "0")], "DATABASE_POOL_SIZE"),
            (vec![("JOB_ISOLATION", "sandbox")], "JOB_ISOLATION"),
            (vec![("JOB_MEMORY_LIMIT_MB", "16")], "JOB_MEMORY_LIMIT_MB"),
            (vec![("JOB_CRASH_LIMIT", "0")], "JOB_CRASH_LIMIT"),
            (vec![("ACCESS_LOG_READS", "0")], "ACCESS_LOG_READS"),
            (vec![("PROVIDER_TIMEOUT_SECS", "60")], "PROVIDER_TIMEOUT_SECS"),
            (vec![("JOB_DEADLINES", "vidoe_upscaling=30")], "JOB_DEADLINES: \"vidoe_upscaling\" is not a kind of work"),
        ] {
            let err = config("", &env).unwrap_err().to_string();
            assert!(err.starts_with(variable), "{env:?}: {err}");
        }
        assert!(config("", &[("WORKER_HEARTBEAT_SECS", "5"), ("WORKER_LEASE_SECS", "6")]).is_ok());
        let jobs = config("", &[("JOB_ISOLATION", "inline"), ("JOB_DEADLINES", "reel=60")]).unwrap();
        assert_eq!(jobs.job_isolation, IsolationMode::Inline);
        assert_eq!(jobs.job_deadlines.of(domain::JobKind::Recipe(domain::Recipe::Reel)), Duration::from_secs(60));
    }
}
