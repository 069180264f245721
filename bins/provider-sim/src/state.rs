//! What every request handler shares: configuration, faults, counters, jobs and media.

use crate::faults::Faults;
use crate::jobs::{Api, Job, JobStore, NewJob, Plan};
use crate::media::{self, Kind, MediaStore};
use crate::signing::Signer;
use crate::stats::{bump, Counters, Stats};
use crate::sync::lock;
use crate::SimConfig;
use serde_json::{Map, Value};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Longest a webhook delivery may take.
const WEBHOOK_TIMEOUT: Duration = Duration::from_secs(10);

/// State shared by the server and the [`Simulator`](crate::Simulator) handle.
pub(crate) struct Shared {
    /// The setup.
    pub config: SimConfig,
    /// `http://host:port`.
    pub base_url: String,
    faults: Mutex<Faults>,
    /// What has been seen.
    pub counters: Counters,
    /// Every job.
    pub jobs: JobStore,
    /// Media files and their URLs.
    pub media: MediaStore,
    /// Webhook signing keys.
    pub signer: Signer,
    /// Client for webhook deliveries.
    pub http: reqwest::Client,
    /// Becomes true when the simulator is dropped.
    pub stopped: watch::Receiver<bool>,
}

/// What a submission decided about a new job.
pub(crate) struct Submission {
    /// The job's id.
    pub id: String,
    /// The protocol and what it reports.
    pub api: Api,
    /// The model input.
    pub input: Map<String, Value>,
    /// Where to send the callback.
    pub webhook: Option<String>,
    /// The media it makes, from the app path or model name.
    pub kind: Kind,
}

impl Shared {
    /// Fresh state with new signing keys.
    pub fn new(config: SimConfig, base_url: String, stopped: watch::Receiver<bool>) -> std::io::Result<Shared> {
        let http = reqwest::Client::builder()
            .timeout(WEBHOOK_TIMEOUT)
            // Webhook receivers are local test servers; an environment proxy must not intercept them.
            .no_proxy()
            .build()
            .map_err(std::io::Error::other)?;
        Ok(Shared {
            config,
            base_url,
            faults: Mutex::new(Faults::default()),
            counters: Counters::default(),
            jobs: JobStore::new(),
            media: MediaStore::new(),
            signer: Signer::generate(),
            http,
            stopped,
        })
    }

    /// The faults in force.
    pub fn faults(&self) -> Faults {
        lock(&self.faults).clone()
    }

    /// Replaces the faults.
    pub fn set_faults(&self, faults: Faults) {
        *lock(&self.faults) = faults;
    }

    /// Takes one from the countdown `field` picks; true if it was above zero.
    fn take(&self, field: impl Fn(&mut Faults) -> &mut u32) -> bool {
        let mut faults = lock(&self.faults);
        let left = field(&mut faults);
        if *left > 0 {
            *left -= 1;
            true
        } else {
            false
        }
    }

    /// Whether this status poll is to fail with 503.
    pub fn take_status_error(&self) -> bool {
        self.take(|f| &mut f.status_errors)
    }

    /// Whether this API request's connection is to be dropped.
    pub fn take_drop(&self) -> bool {
        self.take(|f| &mut f.drop_connections)
    }

    /// The counters now.
    pub fn stats(&self) -> Stats {
        self.counters.snapshot(self.jobs.active(Instant::now()))
    }

    /// Creates a job from `submission` under the faults in force and starts making its media. The
    /// protocol module that submitted it arranges its webhook.
    pub fn create_job(self: &Arc<Self>, submission: Submission) -> Arc<Job> {
        let kind = submission.kind;
        let request = media::request_for(kind, &submission.input);
        let tokens = (0..request.count).map(|_| self.media.register(&request)).collect();
        let seed = submission.input.get("seed").and_then(Value::as_u64).unwrap_or_else(|| rand::random::<u32>().into());
        let job = Arc::new(Job::new(NewJob {
            id: submission.id,
            api: submission.api,
            input: submission.input,
            media: request.key,
            tokens,
            seed,
            webhook: submission.webhook,
            plan: Plan::from_faults(&self.faults()),
        }));
        self.jobs.insert(job.clone());
        match &job.api {
            Api::Fal { .. } => bump(&self.counters.fal_submissions),
            Api::Replicate { .. } => bump(&self.counters.replicate_submissions),
        }
        // Make the media now, in the background, so that results and downloads rarely wait.
        let shared = self.clone();
        let text = request.text;
        tokio::spawn(async move {
            if let Err(e) = shared.media.file(request.key, &text).await {
                tracing::warn!("{e}");
            }
        });
        job
    }
}

/// Waits until the simulator stops (or its handle is gone).
pub(crate) async fn until_stopped(mut stopped: watch::Receiver<bool>) {
    // The guard `wait_for` returns is not Send, so it must not outlive this function.
    let _ = stopped.wait_for(|stopped| *stopped).await.map(|_| ());
}
