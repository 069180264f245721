//! Retention: finished tasks past the retention period lose their job, outputs and result (the
//! files go with them, removed by the service); the row stays with its money, so the ledger, the
//! usage totals and a poll's "expired" answer outlive it.

use crate::schema::tasks;
use crate::{Database, StorageResult};
use diesel::prelude::*;
use domain::TaskStatus;

impl Database {
    /// Up to `limit` finished tasks that ended before `cutoff` (Unix milliseconds) and are not
    /// expired yet, oldest first.
    pub fn expirable_tasks(&self, cutoff: i64, limit: i64) -> StorageResult<Vec<String>> {
        self.read(|conn| {
            tasks::table
                .filter(tasks::finished_at.lt(cutoff))
                .filter(tasks::expired_at.is_null())
                .filter(tasks::status.eq_any([TaskStatus::Succeeded.as_str(), TaskStatus::Failed.as_str()]))
                .order(tasks::finished_at)
                .select(tasks::id)
                .limit(limit)
                .load(conn)
        })
    }

    /// Marks task `id` expired at `now`, dropping its job, outputs and result; false when it
    /// already was (another sweeper got there first).
    pub fn expire_task(&self, id: &str, now: i64) -> StorageResult<bool> {
        let updated = self.read(|conn| {
            diesel::update(tasks::table.find(id).filter(tasks::expired_at.is_null()))
                .set((
                    tasks::job.eq(""),
                    tasks::outputs.eq(None::<String>),
                    tasks::result.eq(None::<String>),
                    tasks::expired_at.eq(now),
                ))
                .execute(conn)
        })?;
        self.ended_tasks.forget(id);
        Ok(updated == 1)
    }
}
