//! The job runner: claims queued jobs under a lease, keeps the lease alive with a heartbeat while
//! a job runs, finalises it through the service (which bills it), and shuts down gracefully.
//! Beside the jobs it tracks requests at upstream providers: those wait as timers in the
//! database and take no job slot; due ones are claimed in batches and looked at concurrently.
//! It also sends clients' completion webhooks as they come due.
//!
//! Runs in-process inside `api-server` (embedded deployments) or as the standalone `worker`
//! binary; any number of workers may share one PostgreSQL database.

use service::{AppConfig, ClaimedJob, JobOutcome, Service};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;

/// How a worker behaves.
#[derive(Clone, Debug)]
pub struct WorkerConfig {
    /// Name recorded as the lease owner.
    pub worker_id: String,
    /// Jobs run at once.
    pub concurrency: usize,
    /// Lease length; a job whose worker stops renewing is claimed again after this.
    pub lease: Duration,
    /// Interval between lease renewals (well under `lease`).
    pub heartbeat: Duration,
    /// Fallback interval for looking for work when no wake-up arrives (a missed notification).
    pub poll_interval: Duration,
    /// Claims after which a job that keeps losing its worker is failed instead of run again.
    pub max_attempts: i32,
    /// On shutdown, how long running jobs may take to finish before they are released.
    pub shutdown_grace: Duration,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        WorkerConfig {
            worker_id: format!("worker-{}", std::process::id()),
            concurrency: 2,
            lease: Duration::from_secs(30),
            heartbeat: Duration::from_secs(10),
            poll_interval: Duration::from_millis(500),
            max_attempts: 3,
            shutdown_grace: Duration::from_secs(30),
        }
    }
}

impl WorkerConfig {
    /// The worker settings of a deployment's configuration.
    pub fn from_app_config(config: &AppConfig, worker_id: String) -> WorkerConfig {
        WorkerConfig {
            worker_id,
            concurrency: config.worker_concurrency,
            lease: config.worker_lease,
            heartbeat: config.worker_heartbeat,
            poll_interval: config.worker_poll,
            max_attempts: config.worker_max_attempts,
            shutdown_grace: config.shutdown_grace,
        }
    }
}

/// How often at most a running job looks whether it was ended elsewhere (cancelled) when tasks end.
const ENDED_LOOK_INTERVAL: Duration = Duration::from_millis(250);

/// The longest wait between tries while the database stays away.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// Waits between tries of a step that keeps failing (the database restarting, a failover): from the
/// poll interval, doubling up to [`MAX_BACKOFF`], and from the start again after a success, so a
/// long outage is neither hammered nor logged many times a second, and recovery is noticed within
/// seconds.
struct Backoff {
    first: Duration,
    next: Duration,
}

impl Backoff {
    fn new(first: Duration) -> Backoff {
        let first = first.min(MAX_BACKOFF);
        Backoff { first, next: first }
    }

    /// The wait after another failure.
    fn failed(&mut self) -> Duration {
        let wait = self.next;
        self.next = (self.next * 2).min(MAX_BACKOFF);
        wait
    }

    fn succeeded(&mut self) {
        self.next = self.first;
    }

    /// Logs that `what` failed with `error` and waits the next backoff; false when shutdown was
    /// asked for meanwhile.
    async fn wait_after(
        &mut self,
        what: &str,
        error: &service::ServiceError,
        shutdown: &mut watch::Receiver<bool>,
    ) -> bool {
        let wait = self.failed();
        tracing::warn!(%error, "{what} failed; retrying in {} ms", wait.as_millis());
        tokio::select! {
            _ = tokio::time::sleep(wait) => true,
            _ = shutdown_requested(shutdown) => false,
        }
    }
}

/// Resolves on SIGTERM or Ctrl-C: the cue for a graceful shutdown.
pub async fn termination_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// Jobs whose work is done and whose slot went back while their end is recorded, at most: one
/// transaction's worth. Ends recorded together share a transaction, so short jobs that end faster
/// than one transaction commits are recorded in batches instead of one commit per slot; past this
/// many, a job keeps its slot until its end is recorded, so a database that falls behind slows the
/// claims down. A worker killed meanwhile leaves these jobs to their leases: run again, billed once.
pub const RECORDING_PLACES: usize = service::ENDS_PER_COMMIT;

/// Runs jobs until `shutdown` turns true, then stops claiming, gives running jobs
/// `shutdown_grace` to finish and releases the rest to the queue.
pub async fn run(service: Service, config: WorkerConfig, mut shutdown: watch::Receiver<bool>) {
    service::metrics::install();
    let slots = Arc::new(Semaphore::new(config.concurrency.max(1)));
    let recording = Arc::new(Semaphore::new(RECORDING_PLACES));
    let mut running = JoinSet::new();
    // Jobs hear of the shutdown only once the claims have stopped: a job that gave its task back
    // while a claim of this worker was still under way would be claimed again by it.
    let (stop_jobs, jobs_shutdown) = watch::channel(false);
    let lease_ms = i64::try_from(config.lease.as_millis()).unwrap_or(i64::MAX);
    let waker = service.clone();
    let _listener = service.database().listen_for_jobs(move || {
        waker.job_queued().notify_one();
        waker.tracked_due().notify_one();
    });
    let tracker = tokio::spawn(track(service.clone(), config.clone(), shutdown.clone()));
    let sweeper = tokio::spawn(sweep(service.clone(), shutdown.clone()));
    let webhooks = tokio::spawn(deliver_webhooks(service.clone(), config.poll_interval, shutdown.clone()));
    tracing::info!(worker = %config.worker_id, concurrency = config.concurrency, "worker started");
    let mut backoff = Backoff::new(config.poll_interval);
    loop {
        let first = tokio::select! {
            biased;
            _ = shutdown_requested(&mut shutdown) => break,
            permit = slots.clone().acquire_owned() => match permit { Ok(p) => p, Err(_) => break },
        };
        // Every free slot is filled by one claim.
        let mut permits = vec![first];
        while let Ok(permit) = slots.clone().try_acquire_owned() {
            permits.push(permit);
        }
        // Reap finished jobs so the set does not grow without bound.
        while running.try_join_next().is_some() {}
        // Listening before the claim: a job that ends while the claim finds nothing (its key or
        // account was at its limit of running jobs) wakes this loop at once, so the next job of
        // that key starts now rather than at the next poll.
        let ended = service.task_ended().notified();
        tokio::pin!(ended);
        ended.as_mut().enable();
        match service.runner().claim_up_to(&config.worker_id, lease_ms, permits.len()).await {
            Ok(claimed) if !claimed.is_empty() => {
                // Slots the claim did not fill go back at once.
                permits.truncate(claimed.len());
                for (claimed, permit) in claimed.into_iter().zip(permits) {
                    let (service, config, shutdown) = (service.clone(), config.clone(), jobs_shutdown.clone());
                    let recording = recording.clone();
                    running.spawn(async move {
                        run_one(&service, &config, claimed, shutdown, permit, &recording).await;
                    });
                }
            }
            Ok(_) => {
                drop(permits);
                tokio::select! {
                    _ = service.job_queued().notified() => {}
                    _ = &mut ended => {}
                    _ = tokio::time::sleep(config.poll_interval) => {}
                    _ = shutdown_requested(&mut shutdown) => break,
                }
            }
            Err(e) => {
                drop(permits);
                if !backoff.wait_after("claiming a job", &e, &mut shutdown).await {
                    break;
                }
                continue;
            }
        }
        backoff.succeeded();
    }
    tracing::info!(worker = %config.worker_id, running = running.len(), "worker stopping");
    let _ = stop_jobs.send(true);
    while running.join_next().await.is_some() {}
    let _ = tracker.await;
    let _ = sweeper.await;
    let _ = webhooks.await;
    tracing::info!(worker = %config.worker_id, "worker stopped");
}

/// Longest wait between looks for due webhook deliveries: a retry comes due by time, not by
/// any event a worker hears of.
const WEBHOOK_LOOK_INTERVAL: Duration = Duration::from_secs(1);

/// Sends due webhook deliveries until `shutdown`: at once when a task ends (its message was
/// written with its status), otherwise every [`WEBHOOK_LOOK_INTERVAL`]. A delivery under way at
/// shutdown finishes its attempt (bounded by the attempt's time limit).
async fn deliver_webhooks(service: Service, poll_interval: Duration, mut shutdown: watch::Receiver<bool>) {
    let mut backoff = Backoff::new(poll_interval);
    loop {
        let ended = service.task_ended().notified();
        tokio::pin!(ended);
        ended.as_mut().enable();
        match service.runner().deliver_webhooks().await {
            Ok(sent) if sent > 0 => {
                backoff.succeeded();
                continue;
            }
            Ok(_) => backoff.succeeded(),
            Err(e) => {
                if !backoff.wait_after("sending webhooks", &e, &mut shutdown).await {
                    return;
                }
                continue;
            }
        }
        tokio::select! {
            _ = ended => {}
            _ = tokio::time::sleep(WEBHOOK_LOOK_INTERVAL) => {}
            _ = shutdown_requested(&mut shutdown) => return,
        }
    }
}

/// How often a worker runs the retention sweep (see `JobRunner::sweep`).
const SWEEP_INTERVAL: Duration = Duration::from_secs(600);
/// Rounds of a hundred tasks one sweep expires at most.
const SWEEP_BATCHES: usize = 20;

/// Runs the retention sweep a minute after start, then every [`SWEEP_INTERVAL`].
async fn sweep(service: Service, mut shutdown: watch::Receiver<bool>) {
    let mut wait = Duration::from_secs(60);
    loop {
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = shutdown_requested(&mut shutdown) => return,
        }
        if let Err(e) = service.runner().sweep(SWEEP_BATCHES).await {
            tracing::warn!(error = %e, "retention sweep failed; will retry");
        }
        wait = SWEEP_INTERVAL;
    }
}

/// Provider requests looked at concurrently by one worker (calls in flight, not job slots).
pub const TRACKING_CONCURRENCY: usize = 64;
/// Most tracked tasks claimed in one query.
const TRACKING_BATCH: usize = 100;
/// With no provider configured nothing new is ever tracked: the tracker only looks, this seldom,
/// for tasks left from a deployment that had one (each fails, as its provider is gone), rather
/// than taking the database's write lock every poll interval, or on every accepted job, for
/// nothing.
const IDLE_WITHOUT_PROVIDERS: Duration = Duration::from_secs(30);

/// Tracks requests at upstream providers until `shutdown`: claims due tasks in batches and looks
/// at each (poll, finish or wait again) under a lease, many at once; between batches it sleeps
/// until woken (a submission, a callback) or the poll interval passes.
async fn track(service: Service, config: WorkerConfig, mut shutdown: watch::Receiver<bool>) {
    let in_flight = Arc::new(Semaphore::new(TRACKING_CONCURRENCY));
    let mut looking = JoinSet::new();
    let lease_ms = i64::try_from(config.lease.as_millis()).unwrap_or(i64::MAX);
    let providers = service.engines().upstream().any_configured();
    let idle = if providers { config.poll_interval } else { IDLE_WITHOUT_PROVIDERS };
    let mut backoff = Backoff::new(config.poll_interval);
    loop {
        while looking.try_join_next().is_some() {}
        let free = tokio::select! {
            biased;
            _ = shutdown_requested(&mut shutdown) => break,
            permit = in_flight.clone().acquire_owned() => match permit {
                Ok(permit) => { drop(permit); in_flight.available_permits() }
                Err(_) => break,
            },
        };
        let limit = i64::try_from(free.min(TRACKING_BATCH)).unwrap_or(1);
        match service.runner().claim_tracked(&config.worker_id, lease_ms, limit).await {
            Ok(batch) if !batch.is_empty() => {
                for claimed in batch {
                    let Ok(permit) = in_flight.clone().acquire_owned().await else { break };
                    let (service, config, shutdown) = (service.clone(), config.clone(), shutdown.clone());
                    looking.spawn(async move {
                        let runner = service.runner();
                        let look = runner.track(&claimed);
                        // A tracked job cancelled meanwhile is seen at its next look: with
                        // thousands tracked at once, waking each on every task's end would cost a
                        // query per tracked job per end.
                        let ended = EndedElsewhere::AtHeartbeat;
                        if let Some(outcome) = supervise(&service, &config, &claimed, look, shutdown, ended).await {
                            log_outcome(claimed.id(), outcome);
                        }
                        drop(permit);
                    });
                }
            }
            Ok(_) => {
                tokio::select! {
                    // Without a provider no submission or callback can make a task due, and a
                    // look on every accepted job would take the database (and a core) from the
                    // claim that starts it.
                    _ = service.tracked_due().notified(), if providers => {}
                    _ = tokio::time::sleep(idle) => {}
                    _ = shutdown_requested(&mut shutdown) => break,
                }
            }
            Err(e) => {
                if !backoff.wait_after("claiming tracked tasks", &e, &mut shutdown).await {
                    break;
                }
                continue;
            }
        }
        backoff.succeeded();
    }
    while looking.join_next().await.is_some() {}
}

/// Runs a claimed job on its `slot`. The slot goes back once the work is done, before its end
/// is recorded, when one of the `recording` places is free: the next job starts meanwhile, and
/// ends recorded at the same moment share a transaction.
async fn run_one(
    service: &Service,
    config: &WorkerConfig,
    claimed: ClaimedJob,
    shutdown: watch::Receiver<bool>,
    slot: OwnedSemaphorePermit,
    recording: &Arc<Semaphore>,
) {
    let runner = service.runner();
    if claimed.attempt() > config.max_attempts {
        let reason = format!("the job lost its worker {} times; giving up", claimed.attempt() - 1);
        log_outcome(claimed.id(), runner.fail(&claimed, &reason).await);
        return;
    }
    let work = runner.work(&claimed);
    let done = match supervise(service, config, &claimed, work, shutdown, EndedElsewhere::Promptly).await {
        Some(Ok(done)) => done,
        Some(Err(e)) => return log_outcome(claimed.id(), Err(e)),
        None => return,
    };
    // Held until the end is recorded: the slot's own place when no recording place is free.
    let _place = match recording.clone().try_acquire_owned() {
        Ok(place) => {
            drop(slot);
            place
        }
        Err(_) => slot,
    };
    log_outcome(claimed.id(), runner.record(&claimed, done).await);
}

/// When a supervised job notices that its task ended elsewhere (cancelled by its client, its key
/// revoked).
#[derive(Clone, Copy, PartialEq, Eq)]
enum EndedElsewhere {
    /// Within [`ENDED_LOOK_INTERVAL`]: the job runs here and holds a worker slot and a process.
    Promptly,
    /// At its next lease renewal.
    AtHeartbeat,
}

/// Drives `job` (running or looking at `claimed`) to its end while renewing the lease, and
/// returns what it gave; on shutdown gives it `shutdown_grace`, then releases the task to another
/// worker. None when the job was stopped: the task ended elsewhere, another attempt took it, or
/// it was released.
async fn supervise<T>(
    service: &Service,
    config: &WorkerConfig,
    claimed: &ClaimedJob,
    job: impl std::future::Future<Output = T>,
    mut shutdown: watch::Receiver<bool>,
    ended: EndedElsewhere,
) -> Option<T> {
    let task_id = claimed.id().to_string();
    let lease_ms = i64::try_from(config.lease.as_millis()).unwrap_or(i64::MAX);
    tokio::pin!(job);
    let mut heartbeat = tokio::time::interval(config.heartbeat);
    heartbeat.tick().await;
    let mut grace_deadline: Option<tokio::time::Instant> = None;
    let (mut last_look, mut look_at) = (tokio::time::Instant::now(), None);
    loop {
        let grace = sleep_until_or_never(grace_deadline);
        let look = sleep_until_or_never(look_at);
        tokio::select! {
            outcome = &mut job => return Some(outcome),
            // Some task ended (one of many): if it was this one (cancelled, or its key revoked),
            // the lease is gone and the job's process is stopped now. Looked at most a few times
            // a second, so a busy queue does not turn into a query per job per finished task.
            _ = service.task_ended().notified(), if ended == EndedElsewhere::Promptly && look_at.is_none() => {
                look_at = Some((last_look + ENDED_LOOK_INTERVAL).max(tokio::time::Instant::now()));
            }
            _ = look, if look_at.is_some() => {
                look_at = None;
                last_look = tokio::time::Instant::now();
                if let Ok(false) = service.runner().renew_lease(claimed, lease_ms).await {
                    tracing::info!(task = %task_id, "the job ended elsewhere (cancelled); stopping it");
                    return None;
                }
            }
            _ = heartbeat.tick() => {
                last_look = tokio::time::Instant::now();
                match service.runner().renew_lease(claimed, lease_ms).await {
                    Ok(true) => {}
                    Ok(false) => {
                        tracing::warn!(task = %task_id, "lease lost (another attempt took the job, or it was cancelled); abandoning this one");
                        return None;
                    }
                    Err(e) => tracing::warn!(task = %task_id, error = %e, "lease renewal failed"),
                }
            }
            _ = shutdown_requested(&mut shutdown), if grace_deadline.is_none() => {
                grace_deadline = Some(tokio::time::Instant::now() + config.shutdown_grace);
            }
            _ = grace => {
                match service.runner().release(claimed).await {
                    Ok(_) => tracing::info!(task = %task_id, "released to the queue at shutdown"),
                    Err(e) => tracing::warn!(task = %task_id, error = %e, "release failed; the lease will lapse"),
                }
                return None;
            }
        }
    }
}

/// Sleeps until `deadline`, or forever without one.
async fn sleep_until_or_never(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// Resolves once shutdown is asked for, or once nobody can ask any more (the sender is gone).
async fn shutdown_requested(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|stop| *stop).await;
}

fn log_outcome(task_id: &str, outcome: Result<JobOutcome, service::ServiceError>) {
    match outcome {
        Ok(JobOutcome::Succeeded(cost)) => tracing::info!(task = %task_id, %cost, "job succeeded"),
        Ok(JobOutcome::Failed(reason)) => tracing::info!(task = %task_id, %reason, "job failed"),
        Ok(JobOutcome::Superseded) => tracing::info!(task = %task_id, "job superseded by a newer attempt"),
        Ok(JobOutcome::Waiting) => tracing::debug!(task = %task_id, "still at its provider"),
        // Our own fault (store or database): leave the lease to lapse so another attempt runs it.
        Err(e) => tracing::error!(task = %task_id, error = %e, "job could not be finalised; it will be retried"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_its_ceiling_and_starts_over_after_a_success() {
        let mut backoff = Backoff::new(Duration::from_millis(500));
        let waits: Vec<u128> = (0..6).map(|_| backoff.failed().as_millis()).collect();
        assert_eq!(waits, [500, 1000, 2000, 4000, 5000, 5000]);
        backoff.succeeded();
        assert_eq!(backoff.failed(), Duration::from_millis(500));
    }
}
