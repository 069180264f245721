//! A client cancelling one of its own tasks: failed at once with its hold released, whatever
//! state it was in, so a job cancelled while it ran or waited at a provider is never billed.

use crate::task_record::TaskRecord;
use crate::{dialect, now_millis, settlement, Database, StorageError, StorageResult};
use diesel::prelude::*;

/// The error a cancelled task ends with (the contract has no state but `failed` for it).
pub const CANCELLED_BY_CLIENT: &str = "cancelled by client";

/// What a cancel found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cancellation {
    /// Cancelled now; `upstream` is the provider's request (as stored) when a provider was
    /// running the job, to be cancelled there too.
    Cancelled {
        /// Whether a worker or a provider had started the job.
        was_running: bool,
        /// The provider handle, when the job was at a provider.
        upstream: Option<String>,
    },
    /// The task had already ended; its status (`succeeded` or `failed`).
    AlreadyFinished(String),
    /// No such task for this key.
    NotFound,
}

impl Database {
    /// Cancels `task_id` of `key_id`: in one transaction, under the lock every settlement takes
    /// (the task's row), so a cancel racing the job's own end leaves exactly one of them
    /// standing, and the job is billed at most once. A running job loses its
    /// attempt: its worker finds the lease gone and stops the job's process.
    pub fn cancel_task(&self, task_id: &str, key_id: &str) -> StorageResult<Cancellation> {
        let now = now_millis();
        self.transaction(|conn| {
            let task: Option<TaskRecord> =
                dialect::sql_query(conn, "SELECT * FROM tasks WHERE id = ? AND key_id = ?{FOR_UPDATE}")
                    .bind::<diesel::sql_types::Text, _>(task_id)
                    .bind::<diesel::sql_types::Text, _>(key_id)
                    .get_result(conn)
                    .optional()?;
            let Some(task) = task else { return Ok(Cancellation::NotFound) };
            if task.status()?.is_terminal() {
                return Ok(Cancellation::AlreadyFinished(task.status));
            }
            let stopped = settlement::cancel_unfinished(conn, &task, CANCELLED_BY_CLIENT, now)?;
            Ok::<_, StorageError>(Cancellation::Cancelled {
                was_running: stopped.was_running,
                upstream: stopped.upstream,
            })
        })
    }
}
