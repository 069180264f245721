//! The retention sweeper's use-case: finished tasks older than the retention period lose their
//! outputs and stored inputs (in the store) and their job and result (in the database); idempotency
//! keys past their 24 hours are forgotten, and so are console sign-in and sign-up attempts past
//! theirs. Run by every worker now and then; several at once only
//! repeat each other's deletions.

use crate::{JobRunner, ServiceError};
use storage::now_millis;

/// Tasks expired per database round trip.
const BATCH: i64 = 100;

/// What one sweep removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Swept {
    /// Tasks expired (their files removed).
    pub tasks: usize,
    /// Idempotency keys forgotten.
    pub idempotency_keys: usize,
    /// Console attempts forgotten.
    pub attempts: usize,
}

impl JobRunner<'_> {
    /// Expires what is past its time; with `batches` rounds of tasks at most, so one sweep stays
    /// short (the next one continues).
    pub async fn sweep(&self, batches: usize) -> Result<Swept, ServiceError> {
        let service = self.service;
        let now = now_millis();
        let mut swept = Swept::default();
        let cutoff = now - domain::idempotency::WINDOW_MILLIS;
        swept.idempotency_keys = service.db(move |db| db.forget_idempotency_keys_before(cutoff)).await?;
        let cutoff = now - crate::console::ATTEMPTS_KEPT_MS;
        swept.attempts = service.db(move |db| db.forget_attempts_before(cutoff)).await?;
        let Some(retention) = service.config().task_retention else { return Ok(swept) };
        let cutoff = now - i64::try_from(retention.as_millis()).unwrap_or(i64::MAX);
        for _ in 0..batches {
            let due = service.db(move |db| db.expirable_tasks(cutoff, BATCH)).await?;
            for id in &due {
                // Files first: a sweep cut short leaves the task to the next one, never an
                // expired task with files nobody will remove.
                let outputs = service.inner.store.delete_folder(&format!("tasks/{id}")).await;
                let inputs = service.inner.store.delete_folder(&format!("inputs/{id}")).await;
                if let Err(e) = outputs.and(inputs) {
                    tracing::warn!(task = %id, error = %e, "retention: files could not be removed; will retry");
                    continue;
                }
                let task_id = id.clone();
                if service.db(move |db| db.expire_task(&task_id, now_millis())).await? {
                    swept.tasks += 1;
                }
            }
            if due.len() < BATCH as usize {
                break;
            }
        }
        if swept != Swept::default() {
            tracing::info!(
                tasks = swept.tasks,
                idempotency_keys = swept.idempotency_keys,
                attempts = swept.attempts,
                "retention sweep"
            );
        }
        Ok(swept)
    }
}
