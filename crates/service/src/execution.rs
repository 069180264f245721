//! Running queued jobs: claim with a lease, renew it, release it, and run a claimed job to its
//! billed end.

use crate::job_inputs;
use crate::job_process::{produce_in_child, ChildRequest, JobIsolation, OutputTarget};
use crate::stored_job::{output_path, StoredJob, StoredOutput};
use crate::work::{produce_here, unfetchable_input, Finished, JobFailure, Outputs};
use crate::{JobRunner, Service, ServiceError};
use domain::{FailureKind, Usd};
use engines::OutputFile;
use storage::ClaimedTask;

/// A job a worker has claimed, with the attempt that fences its end.
#[derive(Clone, Debug)]
pub struct ClaimedJob(pub(crate) ClaimedTask);

impl ClaimedJob {
    /// The task's (or reel's) id.
    pub fn id(&self) -> &str {
        &self.0.task.id
    }

    /// This claim's attempt number: how many times the job has been claimed so far.
    pub fn attempt(&self) -> i32 {
        self.0.attempt
    }
}

/// How running a claimed job ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobOutcome {
    /// Succeeded and billed at this cost.
    Succeeded(Usd),
    /// Failed, nothing billed.
    Failed(String),
    /// Another attempt owns the task now; this attempt's result was discarded.
    Superseded,
    /// Still at its provider; it is looked at again later.
    Waiting,
}

impl JobRunner<'_> {
    /// Claims the next job for `worker_id` with a lease of `lease_ms`.
    pub async fn claim(&self, worker_id: &str, lease_ms: i64) -> Result<Option<ClaimedJob>, ServiceError> {
        Ok(self.claim_up_to(worker_id, lease_ms, 1).await?.pop())
    }

    /// Claims up to `limit` jobs for `worker_id` at once (one per free slot), each with a lease
    /// of `lease_ms`, in the order they are to start.
    pub async fn claim_up_to(
        &self,
        worker_id: &str,
        lease_ms: i64,
        limit: usize,
    ) -> Result<Vec<ClaimedJob>, ServiceError> {
        let (worker_id, shares) = (worker_id.to_string(), self.service.config().running_shares);
        let claimed = self.service.db(move |db| db.claim_tasks(&worker_id, lease_ms, shares, limit)).await?;
        Ok(claimed.into_iter().map(ClaimedJob).collect())
    }

    /// Renews a running job's lease; false when the attempt lost the task.
    pub async fn renew_lease(&self, job: &ClaimedJob, lease_ms: i64) -> Result<bool, ServiceError> {
        let claimed = &job.0;
        let (id, attempt) = (claimed.task.id.clone(), claimed.attempt);
        self.service.db(move |db| db.renew_lease(&id, attempt, lease_ms)).await
    }

    /// Gives a claimed job back to the queue at once (shutdown); a tracked one is due again at
    /// once.
    pub async fn release(&self, job: &ClaimedJob) -> Result<bool, ServiceError> {
        let claimed = &job.0;
        let (id, attempt) = (claimed.task.id.clone(), claimed.attempt);
        if claimed.task.provider.is_some() {
            return self.service.db(move |db| db.reschedule_tracked(&id, attempt, 0, false)).await;
        }
        self.service.db(move |db| db.release_task(&id, attempt)).await
    }

    /// Fails a claimed job without running it (for example after too many lost attempts).
    pub async fn fail(&self, job: &ClaimedJob, reason: &str) -> Result<JobOutcome, ServiceError> {
        let claimed = &job.0;
        self.service.fail_as(claimed, reason, FailureKind::Job).await
    }

    /// Runs a claimed job (an engine's or a recipe's), then output storage, then the terminal
    /// status with its billing in one transaction. A job error fails the task (nothing billed); an
    /// error of ours (store or database) is returned so the worker can release the task for another
    /// attempt. The same as [`JobRunner::work`] followed by [`JobRunner::record`].
    pub async fn execute(&self, claimed_job: &ClaimedJob) -> Result<JobOutcome, ServiceError> {
        let done = self.work(claimed_job).await?;
        self.record(claimed_job, done).await
    }

    /// Runs a claimed job's work (an engine's or a recipe's) and stores its outputs; what it
    /// returns is recorded, and billed, by [`JobRunner::record`]. A worker frees the job's slot
    /// between the two, so the next job starts while this one's end is written (ends written at
    /// the same moment share a transaction). An error of ours (store or database) is returned so
    /// the worker can leave the task to another attempt.
    pub async fn work(&self, claimed_job: &ClaimedJob) -> Result<WorkDone, ServiceError> {
        let started = std::time::Instant::now();
        let end = self.work_here(claimed_job).await;
        if end.is_err() {
            crate::metrics::job_finished(&claimed_job.0.task.engine, "error", started.elapsed());
        }
        Ok(WorkDone { end: end?, started })
    }

    /// Records how a job's work ended: its outputs and its cost in one transaction with the
    /// billing, or its failure with its hold released.
    pub async fn record(&self, claimed_job: &ClaimedJob, done: WorkDone) -> Result<JobOutcome, ServiceError> {
        let claimed = &claimed_job.0;
        let outcome = match done.end {
            JobEnd::Failed { reason, kind } => self.service.fail_as(claimed, &reason, kind).await,
            JobEnd::Succeeded { outputs_json, result_json, cost, sandbox } => {
                self.record_success(claimed, outputs_json, result_json, cost, sandbox).await
            }
        };
        let label = match &outcome {
            Ok(JobOutcome::Succeeded(_)) => "succeeded",
            Ok(JobOutcome::Failed(_)) => "failed",
            Ok(JobOutcome::Superseded) => "superseded",
            Ok(JobOutcome::Waiting) => "waiting",
            Err(_) => "error",
        };
        crate::metrics::job_finished(&claimed.task.engine, label, done.started.elapsed());
        outcome
    }

    async fn work_here(&self, claimed_job: &ClaimedJob) -> Result<JobEnd, ServiceError> {
        let claimed = &claimed_job.0;
        let task = &claimed.task;
        let job = match StoredJob::decode(&task.job) {
            Ok(job) => job,
            Err(e) => return Ok(JobEnd::failed(&format!("stored job is unreadable: {e}"), FailureKind::Job)),
        };
        let finished = match self.service.produce(claimed, job).await? {
            // Never bill for nothing, whatever the engine reported.
            Ok(finished) if finished.outputs.is_empty() => {
                return Ok(JobEnd::failed("engine failed: it produced no output", FailureKind::Job));
            }
            Ok(finished) => finished,
            Err(failure) => return Ok(JobEnd::failed(&failure.message, failure.kind)),
        };
        let stored = match finished.outputs {
            Outputs::Files(files) => match self.service.store_outputs(claimed, files).await {
                Ok(stored) => stored,
                Err(ServiceError::Internal(detail)) => {
                    let failure = JobFailure::unstored(&task.id, &detail);
                    return Ok(JobEnd::failed(&failure.message, failure.kind));
                }
                Err(other) => return Err(other),
            },
            Outputs::Stored(stored) => stored,
        };
        let internal = |e: serde_json::Error| ServiceError::Internal(e.to_string());
        Ok(JobEnd::Succeeded {
            outputs_json: serde_json::to_string(&stored).map_err(internal)?,
            result_json: finished.result.as_ref().map(serde_json::to_string).transpose().map_err(internal)?,
            cost: finished.cost,
            sandbox: finished.sandbox,
        })
    }

    async fn record_success(
        &self,
        claimed: &ClaimedTask,
        outputs_json: String,
        result_json: Option<String>,
        cost: Usd,
        sandbox: bool,
    ) -> Result<JobOutcome, ServiceError> {
        let (id, attempt) = (claimed.task.id.clone(), claimed.attempt);
        let capture = retrying_own_failures("recording the result", || {
            let (id, outputs_json, result_json) = (id.clone(), outputs_json.clone(), result_json.clone());
            self.service
                .db(move |db| db.finish_succeeded(&id, attempt, &outputs_json, result_json.as_deref(), cost, sandbox))
        })
        .await?;
        self.service.inner.finished.notify_waiters();
        Ok(match capture {
            Some(capture) => {
                // Its work is done: nothing reads the inputs stored at submit again.
                self.service.discard_inputs(&claimed.task.id).await;
                JobOutcome::Succeeded(capture.cost)
            }
            None => JobOutcome::Superseded,
        })
    }
}

/// A claimed job whose work is done (see [`JobRunner::work`]), waiting for its end to be
/// recorded.
#[derive(Debug)]
pub struct WorkDone {
    end: JobEnd,
    started: std::time::Instant,
}

/// How a job's work ended, before it is recorded.
#[derive(Debug)]
enum JobEnd {
    Succeeded { outputs_json: String, result_json: Option<String>, cost: Usd, sandbox: bool },
    Failed { reason: String, kind: FailureKind },
}

impl JobEnd {
    fn failed(reason: &str, kind: FailureKind) -> JobEnd {
        JobEnd::Failed { reason: reason.to_string(), kind }
    }
}

impl Service {
    async fn fail_as(
        &self,
        claimed: &ClaimedTask,
        reason: &str,
        kind: FailureKind,
    ) -> Result<JobOutcome, ServiceError> {
        let (id, attempt, reason) = (claimed.task.id.clone(), claimed.attempt, reason.to_string());
        let message = reason.clone();
        let failed = self.db(move |db| db.finish_failed(&id, attempt, &message, kind)).await?;
        self.inner.finished.notify_waiters();
        if !failed {
            return Ok(JobOutcome::Superseded);
        }
        self.discard_inputs(&claimed.task.id).await;
        Ok(JobOutcome::Failed(reason))
    }

    /// Writes a claimed job's files to the output store (retrying our own failures), as the
    /// outputs recorded on its task.
    pub(crate) async fn store_outputs(
        &self,
        claimed: &ClaimedTask,
        files: Vec<OutputFile>,
    ) -> Result<Vec<StoredOutput>, ServiceError> {
        let mut stored = Vec::with_capacity(files.len());
        for (index, file) in files.into_iter().enumerate() {
            let path = output_path(&claimed.task.id, claimed.attempt, index, file.extension);
            let info = file.info();
            let bytes = bytes::Bytes::from(file.bytes);
            retrying_own_failures("storing an output", || async {
                self.inner.store.put(&path, bytes.clone()).await.map_err(|e| ServiceError::Internal(e.to_string()))
            })
            .await?;
            stored.push(StoredOutput::of(path, &info));
        }
        Ok(stored)
    }

    /// Runs a job's work where the deployment isolates jobs, under its family's deadline.
    async fn produce(
        &self,
        claimed: &ClaimedTask,
        job: StoredJob,
    ) -> Result<Result<Finished, JobFailure>, ServiceError> {
        let price = claimed.task.price();
        let catalog = self.engines().catalog();
        let kind = job.kind(catalog);
        let deadline = self.config().deadlines.of(kind);
        let name = format!("{}-{}", claimed.task.id, claimed.attempt);
        let inputs =
            match job_inputs::fetch(self.engines().fetcher(), &self.config().inputs, &name, job.input_urls()).await {
                Ok(inputs) => inputs,
                Err(job_inputs::InputsError::Unfetchable(error)) => return Ok(Err(unfetchable_input(error))),
                Err(job_inputs::InputsError::Keeping(failure)) => return Ok(Err(failure)),
            };
        match &self.config().isolation {
            JobIsolation::ChildProcess(child) => {
                let target = OutputTarget {
                    store: self.inner.store.clone(),
                    task_id: claimed.task.id.clone(),
                    attempt: claimed.attempt,
                };
                let engines = if job.may_call_providers(catalog) {
                    child.engines.clone()
                } else {
                    child.engines.without_providers()
                };
                let request = ChildRequest {
                    job,
                    price,
                    engines,
                    inputs: inputs.files().clone(),
                    input_dir: inputs.dir().map(Into::into),
                    threads: 1,
                };
                produce_in_child(child, request, &target, kind, deadline).await
            }
            JobIsolation::InProcess => {
                let engines = self.engines().clone().with_prefetched(inputs.files().clone());
                match tokio::time::timeout(deadline, produce_here(&engines, &job, price)).await {
                    Ok(outcome) => Ok(outcome),
                    Err(_) => Ok(Err(JobFailure::past_deadline(kind, deadline))),
                }
            }
        }
    }
}

/// Tries of a step that fails for a reason of our own (the output store, the database) before the
/// job is left to another attempt, and the first wait between them (it doubles each time).
const OWN_FAILURE_TRIES: u32 = 4;
const OWN_FAILURE_BACKOFF: std::time::Duration = std::time::Duration::from_millis(250);

/// Runs `step`, again after a growing wait while it fails for a reason of ours (an internal error
/// or an unavailable database), so that a blip of the store or the database does not cost the job
/// its attempt. The error after the last try says what failed and how often.
pub(crate) async fn retrying_own_failures<T, F, Fut>(what: &str, mut step: F) -> Result<T, ServiceError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, ServiceError>>,
{
    let mut wait = OWN_FAILURE_BACKOFF;
    let mut tries = 1;
    loop {
        match step().await {
            Err(e @ (ServiceError::Internal(_) | ServiceError::Unavailable(_))) if tries < OWN_FAILURE_TRIES => {
                tracing::warn!(error = %e, tries, "{what} failed; retrying in {} ms", wait.as_millis());
                tokio::time::sleep(wait).await;
                wait *= 2;
                tries += 1;
            }
            Err(ServiceError::Internal(e) | ServiceError::Unavailable(e)) => {
                return Err(ServiceError::Internal(format!("{what} failed {tries} times: {e}")));
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod retry_tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[tokio::test(start_paused = true)]
    async fn own_failures_are_retried_with_backoff_then_reported() {
        let calls = AtomicU32::new(0);
        let flaky = || async {
            if calls.fetch_add(1, Ordering::SeqCst) < 2 {
                Err(ServiceError::Unavailable("database unavailable".into()))
            } else {
                Ok(7)
            }
        };
        let started = tokio::time::Instant::now();
        assert_eq!(retrying_own_failures("recording the result", flaky).await.unwrap(), 7);
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        assert_eq!(started.elapsed(), std::time::Duration::from_millis(250 + 500));

        let always = || async { Err::<(), _>(ServiceError::Internal("store down".into())) };
        let error = retrying_own_failures("storing an output", always).await.unwrap_err().to_string();
        assert!(error.contains("storing an output failed 4 times: store down"), "{error}");

        // The client's own errors are not ours to retry.
        let calls = AtomicU32::new(0);
        let refused = || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err::<(), _>(ServiceError::BadRequest("no".into()))
        };
        assert!(retrying_own_failures("x", refused).await.is_err());
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }
}
