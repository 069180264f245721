//! Prometheus metrics: the process's recorder, the measurements the use-cases take (jobs, their
//! memory, provider calls), and the figures read from the database at each scrape (the queue,
//! holds and captured spend), which are the same from whichever process is scraped. The `metrics`
//! crate's macros are the recording side; `metrics-exporter-prometheus` renders the text format.

use crate::{Operator, ServiceError};
use domain::Usd;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use std::sync::OnceLock;
use std::time::Duration;

/// Latency buckets, seconds: from a poll answered from memory to a long video job.
const SECONDS: [f64; 16] =
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 60.0, 300.0];
/// Memory buckets, bytes: 16 MiB to 2 GiB.
const BYTES: [f64; 8] = [16e6, 32e6, 64e6, 128e6, 256e6, 512e6, 1024e6, 2048e6];

static RECORDER: OnceLock<Option<PrometheusHandle>> = OnceLock::new();

/// Installs this process's recorder (once; later calls return the same handle). `None` when
/// another recorder was installed first.
pub fn install() -> Option<&'static PrometheusHandle> {
    RECORDER
        .get_or_init(|| {
            let builder = PrometheusBuilder::new()
                .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), &SECONDS)
                .and_then(|b| b.set_buckets_for_metric(Matcher::Suffix("_bytes".into()), &BYTES));
            match builder.and_then(|b| b.install_recorder()) {
                Ok(handle) => Some(handle),
                Err(e) => {
                    tracing::warn!(error = %e, "metrics recorder not installed");
                    None
                }
            }
        })
        .as_ref()
}

/// Counts a job's end and its time on the worker, by engine (or recipe) and outcome.
pub(crate) fn job_finished(engine: &str, outcome: &'static str, elapsed: Duration) {
    metrics::counter!("jobs_finished_total", "engine" => engine.to_string(), "outcome" => outcome).increment(1);
    metrics::histogram!("job_duration_seconds", "engine" => engine.to_string(), "outcome" => outcome)
        .record(elapsed.as_secs_f64());
}

/// Records the peak memory of a job's process, by kind of work.
pub(crate) fn job_peak_memory(work: &str, peak_rss_kib: u64) {
    metrics::histogram!("job_peak_memory_bytes", "work" => work.to_string()).record(peak_rss_kib as f64 * 1024.0);
}

/// Counts a call to a provider and its time, by provider, operation and outcome (`ok`, `error`).
pub(crate) fn provider_call(provider: &str, operation: &'static str, ok: bool, elapsed: Duration) {
    let outcome = if ok { "ok" } else { "error" };
    let provider = provider.to_string();
    metrics::counter!("provider_requests_total", "provider" => provider.clone(), "operation" => operation, "outcome" => outcome)
        .increment(1);
    metrics::histogram!("provider_request_duration_seconds", "provider" => provider, "operation" => operation)
        .record(elapsed.as_secs_f64());
}

/// Counts a webhook delivery attempt and its time, by outcome (`delivered`, `refused`: a non-2xx
/// answer, a timeout or no connection).
pub(crate) fn webhook_attempt(delivered: bool, elapsed: Duration) {
    let outcome = if delivered { "delivered" } else { "refused" };
    metrics::counter!("webhook_attempts_total", "outcome" => outcome).increment(1);
    metrics::histogram!("webhook_attempt_duration_seconds").record(elapsed.as_secs_f64());
}

/// Counts an answered HTTP request and its time, by route pattern, method and status.
pub fn http_request(route: &str, method: &str, status: u16, elapsed: Duration) {
    let (route, method) = (route.to_string(), method.to_string());
    metrics::counter!("http_requests_total", "route" => route.clone(), "method" => method.clone(), "status" => status.to_string())
        .increment(1);
    metrics::histogram!("http_request_duration_seconds", "route" => route, "method" => method)
        .record(elapsed.as_secs_f64());
}

impl Operator<'_> {
    /// Whether `token` is the configured metrics token (compared by hash, so the comparison's time
    /// says nothing of the token).
    pub fn metrics_token_matches(&self, token: Option<&str>) -> bool {
        match (&self.service.config().metrics_token, token) {
            (Some(expected), Some(given)) => domain::keys::hash_secret(expected) == domain::keys::hash_secret(given),
            _ => false,
        }
    }

    /// The metrics text (Prometheus exposition format): this process's measurements, and the
    /// queue and money read from the database now.
    pub async fn metrics(&self) -> Result<String, ServiceError> {
        let handle = install().ok_or_else(|| ServiceError::Internal("no metrics recorder in this process".into()))?;
        let figures = self.service.db(|db| db.operating_figures()).await?;
        metrics::gauge!("queue_jobs", "status" => "queued").set(figures.queued as f64);
        metrics::gauge!("queue_jobs", "status" => "running").set(figures.running as f64);
        metrics::gauge!("queue_jobs", "status" => "at_provider").set(figures.at_provider as f64);
        metrics::gauge!("queue_oldest_queued_age_seconds").set(figures.oldest_queued_age_ms as f64 / 1000.0);
        metrics::gauge!("billing_held_usd").set(usd(figures.held_units));
        metrics::gauge!("billing_captured_usd").set(usd(figures.spent_units));
        metrics::gauge!("webhook_deliveries", "status" => "pending").set(figures.webhooks_pending as f64);
        metrics::gauge!("webhook_deliveries", "status" => "delivered").set(figures.webhooks_delivered as f64);
        metrics::gauge!("webhook_deliveries", "status" => "failed").set(figures.webhooks_failed as f64);
        metrics::gauge!("webhook_oldest_due_age_seconds").set(figures.oldest_due_webhook_ms as f64 / 1000.0);
        Ok(handle.render())
    }
}

/// A sum of money as a metric's float: for graphs and alerts only; the ledger is the record.
fn usd(units: i64) -> f64 {
    Usd::from_units(units).to_string().parse().unwrap_or(f64::NAN)
}
