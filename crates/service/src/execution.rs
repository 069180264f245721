//! Running queued jobs: claim with a lease, renew it, release it, and run a claimed job to its
//! billed end.

use crate::jobs::StoredOutput;
use crate::{Service, ServiceError};
use domain::{Usd, ValidatedJob};
use engines::EngineError;
use storage::ClaimedTask;

/// How running a claimed job ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobOutcome {
    /// Succeeded and billed at this cost.
    Succeeded(Usd),
    /// Failed, nothing billed.
    Failed(String),
    /// Another attempt owns the task now; this attempt's result was discarded.
    Superseded,
}

impl Service {
    /// Claims the next job for `worker_id` with a lease of `lease_ms`.
    pub async fn claim(&self, worker_id: &str, lease_ms: i64) -> Result<Option<ClaimedTask>, ServiceError> {
        let worker_id = worker_id.to_string();
        self.db(move |db| db.claim_task(&worker_id, lease_ms)).await
    }

    /// Renews a running job's lease; false when the attempt lost the task.
    pub async fn renew_lease(&self, claimed: &ClaimedTask, lease_ms: i64) -> Result<bool, ServiceError> {
        let (id, attempt) = (claimed.task.id.clone(), claimed.attempt);
        self.db(move |db| db.renew_lease(&id, attempt, lease_ms)).await
    }

    /// Gives a claimed job back to the queue at once (shutdown).
    pub async fn release(&self, claimed: &ClaimedTask) -> Result<bool, ServiceError> {
        let (id, attempt) = (claimed.task.id.clone(), claimed.attempt);
        self.db(move |db| db.release_task(&id, attempt)).await
    }

    /// Fails a claimed job without running it (for example after too many lost attempts).
    pub async fn fail(&self, claimed: &ClaimedTask, reason: &str) -> Result<JobOutcome, ServiceError> {
        let (id, attempt, reason) = (claimed.task.id.clone(), claimed.attempt, reason.to_string());
        let message = reason.clone();
        let failed = self.db(move |db| db.finish_failed(&id, attempt, &message)).await?;
        Ok(if failed { JobOutcome::Failed(reason) } else { JobOutcome::Superseded })
    }

    /// Runs a claimed job: its engine, then output storage, then the terminal status with its
    /// billing in one transaction. A job error fails the task (nothing billed); an error of ours
    /// (store or database) is returned so the worker can release the task for another attempt.
    pub async fn execute(&self, claimed: &ClaimedTask) -> Result<JobOutcome, ServiceError> {
        let task = &claimed.task;
        let job: ValidatedJob = match serde_json::from_str(&task.job) {
            Ok(job) => job,
            Err(e) => return self.fail(claimed, &format!("stored job is unreadable: {e}")).await,
        };
        let output = match self.engines().run(&job).await {
            Ok(output) if output.files.is_empty() => {
                // Never bill for nothing, whatever the engine reported.
                return self.fail(claimed, "engine failed: it produced no output").await;
            }
            Ok(output) => output,
            Err(e) => return self.fail(claimed, &client_message(&e)).await,
        };
        let mut stored = Vec::with_capacity(output.files.len());
        for (index, file) in output.files.into_iter().enumerate() {
            let path = format!("tasks/{}/{}-{index}.{}", task.id, claimed.attempt, file.extension);
            let content_type = file.content_type().to_string();
            self.inner.store.put(&path, file.bytes).await.map_err(|e| ServiceError::Internal(e.to_string()))?;
            stored.push(StoredOutput {
                path,
                kind: file.kind,
                content_type,
                width: file.width,
                height: file.height,
                duration_secs: file.duration_secs,
            });
        }
        let cost = self
            .engines()
            .catalog()
            .get_any(&job.model)
            .map_or(job.price, |spec| spec.price.amount(&output.produced).min(job.price));
        let outputs_json = serde_json::to_string(&stored).map_err(|e| ServiceError::Internal(e.to_string()))?;
        let (id, attempt, sandbox) = (task.id.clone(), claimed.attempt, output.sandbox);
        let capture = self.db(move |db| db.finish_succeeded(&id, attempt, &outputs_json, cost, sandbox)).await?;
        Ok(match capture {
            Some(capture) => JobOutcome::Succeeded(capture.cost),
            None => JobOutcome::Superseded,
        })
    }
}

fn client_message(error: &EngineError) -> String {
    match error {
        EngineError::Failed(m) => format!("engine failed: {m}"),
        other => other.to_string(),
    }
}
