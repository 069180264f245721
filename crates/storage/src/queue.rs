//! The job queue over the tasks table: claims with a lease, heartbeats, release, and the
//! finalisation that settles billing in the same transaction as the terminal status.

use crate::dialect;
use crate::schema::tasks;
use crate::settlement::{self, Holding, Success};
use crate::task_record::TaskRecord;
use crate::webhooks;
use crate::{now_millis, Database, StorageResult};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Integer, Text};
use domain::{Capture, FailureKind, TaskStatus, Usd, WebhookEvent};

/// A task a worker has claimed, with the attempt number that fences its finalisation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimedTask {
    /// The task as claimed (status `running`).
    pub task: TaskRecord,
    /// This claim's attempt number.
    pub attempt: i32,
}

impl From<TaskRecord> for ClaimedTask {
    fn from(task: TaskRecord) -> ClaimedTask {
        ClaimedTask { attempt: task.attempt, task }
    }
}

// A task is claimable when queued, or running under a lease that lapsed (its worker died).
// SKIP LOCKED lets many workers claim concurrently without waiting on each other's rows.
// The keys and accounts already running their share (live leases on work run here) are passed
// over; each set is computed once per claim.
const CLAIM: &str = "UPDATE tasks SET status = 'running', attempt = attempt + 1, lease_owner = ?, \
     lease_expires_at = {NOW} + ?, started_at = COALESCE(started_at, ?), updated_at = ? \
     WHERE id = (SELECT id FROM tasks WHERE provider IS NULL \
     AND (status = 'queued' OR (status = 'running' AND lease_expires_at < {NOW})) \
     AND key_id NOT IN (SELECT key_id FROM tasks WHERE provider IS NULL AND status = 'running' \
       AND lease_expires_at >= {NOW} GROUP BY key_id HAVING COUNT(*) >= ?) \
     AND account_id NOT IN (SELECT account_id FROM tasks WHERE provider IS NULL AND status = 'running' \
       AND lease_expires_at >= {NOW} GROUP BY account_id HAVING COUNT(*) >= ?) \
     ORDER BY priority DESC, created_at, id LIMIT 1{SKIP_LOCKED}) RETURNING *";
// A tracked task may still be `queued` (at its provider) while a tracker holds it; a task run
// here is `running` whenever an attempt holds it.
const RENEW: &str = "UPDATE tasks SET lease_expires_at = {NOW} + ? WHERE id = ? \
     AND status IN ('queued', 'running') AND attempt = ?";

/// How many tasks one key, and one account, may have running here at once (tasks held at a
/// provider do not count: they hold no worker slot).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunningShares {
    /// Tasks running at once per key.
    pub per_key: u32,
    /// Tasks running at once per account, over all its keys.
    pub per_account: u32,
}

impl RunningShares {
    /// No share smaller than the whole queue (tools and tests).
    pub const UNLIMITED: RunningShares = RunningShares { per_key: u32::MAX, per_account: u32::MAX };
}

impl Database {
    /// Claims the oldest claimable task for `worker_id` with a lease of `lease_ms`, passing over
    /// the tasks of keys and accounts that already run their `shares`.
    pub fn claim_task(
        &self,
        worker_id: &str,
        lease_ms: i64,
        shares: RunningShares,
    ) -> StorageResult<Option<ClaimedTask>> {
        let claimed = self.write(|conn| {
            // Claims run one at a time, so two workers never both see a key under its share and
            // both take one of its tasks.
            dialect::lock_name(conn, "claim")?;
            // Read the clock once the locks are held: a claim that waited for a submit's write
            // would otherwise stamp its task as started before it was accepted.
            let now = now_millis();
            let claimed = dialect::sql_query(conn, CLAIM)
                .bind::<Text, _>(worker_id)
                .bind::<BigInt, _>(lease_ms)
                .bind::<BigInt, _>(now)
                .bind::<BigInt, _>(now)
                .bind::<BigInt, _>(i64::from(shares.per_key))
                .bind::<BigInt, _>(i64::from(shares.per_account))
                .get_result::<TaskRecord>(conn)
                .optional()?;
            if let Some(task) = &claimed {
                webhooks::announce(conn, &task.id, WebhookEvent::Running, now)?;
            }
            Ok(claimed)
        })?;
        Ok(claimed.map(ClaimedTask::from))
    }

    /// Renews the lease of `task_id` for the holder of `attempt`. Returns false when the lease
    /// was lost (another attempt took over, or the task ended): the caller must stop.
    pub fn renew_lease(&self, task_id: &str, attempt: i32, lease_ms: i64) -> StorageResult<bool> {
        let updated = self.write(|conn| {
            dialect::sql_query(conn, RENEW)
                .bind::<BigInt, _>(lease_ms)
                .bind::<Text, _>(task_id)
                .bind::<Integer, _>(attempt)
                .execute(conn)
        })?;
        Ok(updated == 1)
    }

    /// Gives a claimed task back at once (graceful shutdown): its lease lapses now, so any
    /// worker claims it again. The status stays `running`; clients never see it go backwards.
    pub fn release_task(&self, task_id: &str, attempt: i32) -> StorageResult<bool> {
        let updated = self.write(|conn| {
            diesel::update(tasks::table)
                .filter(tasks::id.eq(task_id))
                .filter(tasks::status.eq(TaskStatus::Running.as_str()))
                .filter(tasks::attempt.eq(attempt))
                .set((tasks::lease_expires_at.eq(0i64), tasks::lease_owner.eq(None::<String>)))
                .execute(conn)
        })?;
        Ok(updated == 1)
    }

    /// Marks `attempt` of a task succeeded and captures its cost, in one transaction. Returns the
    /// capture, or `None` when the attempt no longer holds the task (finished already, or fenced
    /// out by a newer attempt): finalising twice never bills twice.
    pub fn finish_succeeded(
        &self,
        task_id: &str,
        attempt: i32,
        outputs_json: &str,
        result_json: Option<&str>,
        cost: Usd,
        sandbox: bool,
    ) -> StorageResult<Option<Capture>> {
        let success = Success { outputs_json, result_json, cost, sandbox, ..Success::default() };
        self.settle_success(task_id, attempt, Holding::Running, &success)
    }

    /// Marks `attempt` of a task failed with `error` of `kind` and releases its whole hold, in one
    /// transaction. Returns false when the attempt no longer holds the task.
    pub fn finish_failed(&self, task_id: &str, attempt: i32, error: &str, kind: FailureKind) -> StorageResult<bool> {
        self.settle_failure(task_id, attempt, Holding::Running, error, kind)
    }

    /// Settles a success of `attempt`, if it still holds the task.
    pub(crate) fn settle_success(
        &self,
        task_id: &str,
        attempt: i32,
        holding: Holding,
        success: &Success,
    ) -> StorageResult<Option<Capture>> {
        let now = now_millis();
        self.transaction(|conn| {
            let Some(task) = settlement::lock_attempt(conn, task_id, attempt, holding)? else {
                return Ok(None);
            };
            settlement::settle_succeeded(conn, &task, success, now).map(Some)
        })
    }

    /// Settles a failure of `attempt`, if it still holds the task.
    pub(crate) fn settle_failure(
        &self,
        task_id: &str,
        attempt: i32,
        holding: Holding,
        error: &str,
        kind: FailureKind,
    ) -> StorageResult<bool> {
        let now = now_millis();
        self.transaction(|conn| {
            let Some(task) = settlement::lock_attempt(conn, task_id, attempt, holding)? else {
                return Ok(false);
            };
            settlement::settle_failed(conn, &task, error, kind, now)?;
            Ok(true)
        })
    }
}
