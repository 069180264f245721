//! The job queue over the tasks table: claims with a lease, heartbeats, release, and the
//! finalisation that settles billing in the same transaction as the terminal status.

use crate::connection::write_tx;
use crate::ledger::append_ledger;
use crate::schema::{accounts, api_keys, tasks};
use crate::tasks::TaskRecord;
use crate::{now_millis, Backend, Database, StorageError, StorageResult};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use domain::{billing, Capture, FailureKind, TaskStatus, Usd};

/// The update target "this task, while this attempt runs it".
macro_rules! running_attempt {
    ($task_id:expr, $attempt:expr) => {
        diesel::update(tasks::table)
            .filter(tasks::id.eq($task_id))
            .filter(tasks::status.eq(TaskStatus::Running.as_str()))
            .filter(tasks::attempt.eq($attempt))
    };
}

/// On PostgreSQL, tells every process waiting on a task's end (a synchronous recipe's handler) to
/// look again; delivered at commit (see `Database::listen_for_finished_tasks`).
macro_rules! notify_finished {
    ($conn:expr, $backend:expr) => {
        if $backend == Backend::Postgres {
            diesel::sql_query(crate::listener::NOTIFY_FINISHED).execute($conn)?;
        }
    };
}
pub(crate) use notify_finished;

/// Reads the task if `attempt` holds it in one of `$statuses` (an SQL list such as
/// `'running'`), locking its row on PostgreSQL so a concurrent finaliser waits, then sees the new
/// status and backs off.
macro_rules! lock_attempt {
    ($conn:expr, $backend:expr, $task_id:expr, $attempt:expr, $statuses:literal) => {{
        let sql = if $backend == Backend::Postgres {
            concat!("SELECT * FROM tasks WHERE id = $1 AND status IN (", $statuses, ") AND attempt = $2 FOR UPDATE")
        } else {
            concat!("SELECT * FROM tasks WHERE id = ? AND status IN (", $statuses, ") AND attempt = ?")
        };
        diesel::sql_query(sql)
            .bind::<Text, _>($task_id)
            .bind::<diesel::sql_types::Integer, _>($attempt)
            .get_result::<TaskRecord>($conn)
            .optional()
    }};
}
pub(crate) use lock_attempt;

/// Marks the locked `$task` succeeded with `$success` and captures its cost, in the caller's
/// transaction; evaluates to the capture.
macro_rules! settle_succeeded {
    ($conn:expr, $backend:expr, $task:expr, $success:expr, $now:expr) => {{
        let (task, success, now): (&TaskRecord, &crate::queue::Success, i64) = ($task, $success, $now);
        if task.status()? == TaskStatus::Queued {
            // A provider's task that finished before we saw it start: it goes through `running`
            // (its `started_at` is set now) in the same write.
            check_transition(task, TaskStatus::Running)?;
        } else {
            check_transition(task, TaskStatus::Succeeded)?;
        }
        let capture = billing::capture(&task.hold(), success.cost);
        diesel::update(tasks::table.find(&task.id))
            .set((
                tasks::status.eq(TaskStatus::Succeeded.as_str()),
                tasks::outputs.eq(success.outputs_json),
                tasks::result.eq(success.result_json),
                tasks::cost_units.eq(capture.cost.units()),
                tasks::sandbox.eq(success.sandbox),
                tasks::started_at.eq(task.started_at.unwrap_or(now)),
                tasks::finished_at.eq(now),
                tasks::updated_at.eq(now),
                tasks::lease_owner.eq(None::<String>),
                tasks::lease_expires_at.eq(None::<i64>),
                tasks::provider_millis.eq(success.provider_millis),
                tasks::provider_cost_units.eq(success.provider_cost.map(|c| c.units())),
            ))
            .execute($conn)?;
        let hold = task.hold();
        diesel::update(accounts::table.find(&task.account_id))
            .set((
                accounts::free_held_units.eq(accounts::free_held_units - hold.from_allowance.units()),
                accounts::free_used_units.eq(accounts::free_used_units + capture.from_allowance.units()),
                accounts::invoice_units.eq(accounts::invoice_units + capture.to_invoice.units()),
            ))
            .execute($conn)?;
        diesel::update(api_keys::table.find(&task.key_id))
            .set((
                api_keys::held_units.eq(api_keys::held_units - hold.total.units()),
                api_keys::spent_units.eq(api_keys::spent_units + capture.cost.units()),
            ))
            .execute($conn)?;
        append_ledger!($conn, task, "capture", capture.cost, capture.from_allowance, now)?;
        let released_allowance = hold.from_allowance - capture.from_allowance;
        append_ledger!($conn, task, "release", capture.released, released_allowance, now)?;
        notify_finished!($conn, $backend);
        capture
    }};
}
pub(crate) use settle_succeeded;

/// Marks the locked `$task` failed with `$error` of `$kind` and releases its whole hold, in the
/// caller's transaction.
macro_rules! settle_failed {
    ($conn:expr, $backend:expr, $task:expr, $error:expr, $kind:expr, $now:expr) => {{
        let (task, error, kind, now): (&TaskRecord, &str, FailureKind, i64) = ($task, $error, $kind, $now);
        check_transition(task, TaskStatus::Failed)?;
        diesel::update(tasks::table.find(&task.id))
            .set((
                tasks::status.eq(TaskStatus::Failed.as_str()),
                tasks::error.eq(error),
                tasks::failure_kind.eq(kind.as_str()),
                tasks::finished_at.eq(now),
                tasks::updated_at.eq(now),
                tasks::lease_owner.eq(None::<String>),
                tasks::lease_expires_at.eq(None::<i64>),
            ))
            .execute($conn)?;
        let hold = task.hold();
        diesel::update(accounts::table.find(&task.account_id))
            .set(accounts::free_held_units.eq(accounts::free_held_units - hold.from_allowance.units()))
            .execute($conn)?;
        diesel::update(api_keys::table.find(&task.key_id))
            .set(api_keys::held_units.eq(api_keys::held_units - hold.total.units()))
            .execute($conn)?;
        append_ledger!($conn, task, "release", hold.total, hold.from_allowance, now)?;
        notify_finished!($conn, $backend);
    }};
}
pub(crate) use settle_failed;

/// What a successful job is finalised with.
#[derive(Clone, Debug, Default)]
pub struct Success<'a> {
    /// The stored outputs as JSON.
    pub outputs_json: &'a str,
    /// A recipe's structured result as JSON.
    pub result_json: Option<&'a str>,
    /// The cost to capture (never more than the hold; see `domain::billing::capture`).
    pub cost: Usd,
    /// Whether the outputs are sandbox media.
    pub sandbox: bool,
    /// Compute time an upstream provider reported, milliseconds.
    pub provider_millis: Option<i64>,
    /// What the job cost us at an upstream provider.
    pub provider_cost: Option<Usd>,
}

/// The domain's lifecycle rule, applied where the queue writes a status: a change it forbids is an
/// error, never written.
pub(crate) fn check_transition(task: &TaskRecord, next: TaskStatus) -> StorageResult<()> {
    let current: TaskStatus = task
        .status
        .parse()
        .map_err(|_| StorageError::Corrupt(format!("task {} has status {:?}", task.id, task.status)))?;
    if current.can_become(next) {
        Ok(())
    } else {
        Err(StorageError::Corrupt(format!("task {} cannot go from {} to {}", task.id, current.as_str(), next.as_str())))
    }
}

/// A task a worker has claimed, with the attempt number that fences its finalisation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimedTask {
    /// The task as claimed (status `running`).
    pub task: TaskRecord,
    /// This claim's attempt number.
    pub attempt: i32,
}

// Leases are set and compared on the database's clock, never a process's: with workers on several
// hosts, a host whose clock runs ahead must not see a live lease as lapsed.
/// The database's time, in milliseconds since the Unix epoch, on SQLite.
const NOW_SQLITE: &str = "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)";
/// The database's time, in milliseconds since the Unix epoch, on PostgreSQL.
const NOW_POSTGRES: &str = "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)";

// A task is claimable when queued, or running under a lease that lapsed (its worker died).
const CLAIM_SQLITE: &str = "UPDATE tasks SET status = 'running', attempt = attempt + 1, lease_owner = ?, \
     lease_expires_at = {NOW} + ?, started_at = COALESCE(started_at, ?), updated_at = ? \
     WHERE id = (SELECT id FROM tasks WHERE provider IS NULL \
     AND (status = 'queued' OR (status = 'running' AND lease_expires_at < {NOW})) \
     ORDER BY priority DESC, created_at, id LIMIT 1) RETURNING *";
// SKIP LOCKED lets many workers claim concurrently without waiting on each other's rows.
const CLAIM_POSTGRES: &str = "UPDATE tasks SET status = 'running', attempt = attempt + 1, lease_owner = $1, \
     lease_expires_at = {NOW} + $2, started_at = COALESCE(started_at, $3), updated_at = $4 \
     WHERE id = (SELECT id FROM tasks WHERE provider IS NULL \
     AND (status = 'queued' OR (status = 'running' AND lease_expires_at < {NOW})) \
     ORDER BY priority DESC, created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING *";
// A tracked task may still be `queued` (at its provider) while a tracker holds it; a task run
// here is `running` whenever an attempt holds it.
const RENEW_SQLITE: &str = "UPDATE tasks SET lease_expires_at = {NOW} + ? WHERE id = ? \
     AND status IN ('queued', 'running') AND attempt = ?";
const RENEW_POSTGRES: &str = "UPDATE tasks SET lease_expires_at = {NOW} + $1 WHERE id = $2 \
     AND status IN ('queued', 'running') AND attempt = $3";

/// `sql` with the backend's clock in place of `{NOW}`.
pub(crate) fn on_database_clock(sql: &str, backend: Backend) -> String {
    sql.replace("{NOW}", if backend == Backend::Postgres { NOW_POSTGRES } else { NOW_SQLITE })
}

impl Database {
    /// Claims the oldest claimable task for `worker_id` with a lease of `lease_ms`.
    pub fn claim_task(&self, worker_id: &str, lease_ms: i64) -> StorageResult<Option<ClaimedTask>> {
        let now = now_millis();
        let claimed: Option<TaskRecord> = write_tx!(self, |conn, backend| {
            let sql = if backend == Backend::Postgres { CLAIM_POSTGRES } else { CLAIM_SQLITE };
            diesel::sql_query(on_database_clock(sql, backend))
                .bind::<Text, _>(worker_id)
                .bind::<BigInt, _>(lease_ms)
                .bind::<BigInt, _>(now)
                .bind::<BigInt, _>(now)
                .get_result::<TaskRecord>(conn)
                .optional()
        })?;
        Ok(claimed.map(|task| ClaimedTask { attempt: task.attempt, task }))
    }

    /// Renews the lease of `task_id` for the holder of `attempt`. Returns false when the lease
    /// was lost (another attempt took over, or the task ended): the caller must stop.
    pub fn renew_lease(&self, task_id: &str, attempt: i32, lease_ms: i64) -> StorageResult<bool> {
        let updated = write_tx!(self, |conn, backend| {
            let sql = if backend == Backend::Postgres { RENEW_POSTGRES } else { RENEW_SQLITE };
            diesel::sql_query(on_database_clock(sql, backend))
                .bind::<BigInt, _>(lease_ms)
                .bind::<Text, _>(task_id)
                .bind::<diesel::sql_types::Integer, _>(attempt)
                .execute(conn)
        })?;
        Ok(updated == 1)
    }

    /// Gives a claimed task back at once (graceful shutdown): its lease lapses now, so any
    /// worker claims it again. The status stays `running`; clients never see it go backwards.
    pub fn release_task(&self, task_id: &str, attempt: i32) -> StorageResult<bool> {
        let updated = write_tx!(self, |conn, backend| running_attempt!(task_id, attempt)
            .set((tasks::lease_expires_at.eq(0i64), tasks::lease_owner.eq(None::<String>)))
            .execute(conn))?;
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
        let now = now_millis();
        write_tx!(self, |conn, backend| {
            let Some(task) = lock_attempt!(conn, backend, task_id, attempt, "'running'")? else {
                return Ok(None);
            };
            Ok(Some(settle_succeeded!(conn, backend, &task, &success, now)))
        })
    }

    /// Marks `attempt` of a task failed with `error` of `kind` and releases its whole hold, in one
    /// transaction. Returns false when the attempt no longer holds the task.
    pub fn finish_failed(&self, task_id: &str, attempt: i32, error: &str, kind: FailureKind) -> StorageResult<bool> {
        let now = now_millis();
        write_tx!(self, |conn, backend| {
            let Some(task) = lock_attempt!(conn, backend, task_id, attempt, "'running'")? else {
                return Ok(false);
            };
            settle_failed!(conn, backend, &task, error, kind, now);
            Ok(true)
        })
    }
}
