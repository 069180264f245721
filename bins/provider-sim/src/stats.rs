//! What the simulator has seen, counted as it happens.

use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};

/// Counts of what the simulated providers were asked and did since the simulator started.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Stats {
    /// fal jobs created (refused submissions are not counted).
    pub fal_submissions: u64,
    /// Replicate predictions created (refused submissions are not counted).
    pub replicate_submissions: u64,
    /// Authenticated status polls: fal `status_url` and Replicate `urls.get`, including those
    /// answered 503 by [`Faults::status_errors`](crate::Faults::status_errors).
    pub status_polls: u64,
    /// Authenticated fetches of a fal result (`response_url`).
    pub result_fetches: u64,
    /// Media downloads asked for, including those refused because the URL expired.
    pub media_downloads: u64,
    /// Most media downloads in progress at one moment.
    pub media_downloads_peak: u64,
    /// Cancellation requests naming an existing job.
    pub cancels: u64,
    /// Webhook deliveries attempted (each one POST, successful or not).
    pub webhooks_sent: u64,
    /// Webhook deliveries that failed: no answer within 10 s, a connection error, or a status
    /// other than 2xx. Counted before `webhooks_sent`, so a reader that sees a delivery in
    /// `webhooks_sent` also sees whether it failed.
    pub webhook_failures: u64,
    /// Distinct jobs that were successfully polled at least once.
    pub jobs_polled: u64,
    /// Jobs currently queued or in progress.
    pub in_progress: u64,
    /// API connections closed without an answer by [`Faults::drop_connections`](crate::Faults::drop_connections).
    pub dropped_connections: u64,
}

/// The live counters behind [`Stats`]; `in_progress` is computed from the jobs instead.
#[derive(Default)]
pub(crate) struct Counters {
    pub fal_submissions: AtomicU64,
    pub replicate_submissions: AtomicU64,
    pub status_polls: AtomicU64,
    pub result_fetches: AtomicU64,
    pub media_downloads: AtomicU64,
    pub media_in_flight: AtomicU64,
    pub media_downloads_peak: AtomicU64,
    pub cancels: AtomicU64,
    pub webhooks_sent: AtomicU64,
    pub webhook_failures: AtomicU64,
    pub jobs_polled: AtomicU64,
    pub dropped_connections: AtomicU64,
}

/// Adds one to `counter`.
pub(crate) fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::SeqCst);
}

impl Counters {
    /// The counters as they are now, with `in_progress` supplied by the caller.
    pub fn snapshot(&self, in_progress: u64) -> Stats {
        let get = |c: &AtomicU64| c.load(Ordering::SeqCst);
        Stats {
            fal_submissions: get(&self.fal_submissions),
            replicate_submissions: get(&self.replicate_submissions),
            status_polls: get(&self.status_polls),
            result_fetches: get(&self.result_fetches),
            media_downloads: get(&self.media_downloads),
            media_downloads_peak: get(&self.media_downloads_peak),
            cancels: get(&self.cancels),
            webhooks_sent: get(&self.webhooks_sent),
            webhook_failures: get(&self.webhook_failures),
            jobs_polled: get(&self.jobs_polled),
            in_progress,
            dropped_connections: get(&self.dropped_connections),
        }
    }
}
