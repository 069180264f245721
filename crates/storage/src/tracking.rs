//! Tasks run at an upstream provider. Such a task is never claimed to run here; after its
//! submission is recorded it waits as a timer (`lease_expires_at` is when it is next looked at),
//! and trackers claim the due ones in batches, each claim a new attempt that fences the others.

use crate::connection::AnyConnection;
use crate::dialect;
use crate::listener::JOBS_CHANNEL;
use crate::queue::ClaimedTask;
use crate::settlement::{self, Holding, Success};
use crate::task_record::TaskRecord;
use crate::webhooks;
use crate::{now_millis, Database, StorageResult};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bool, Integer, Text};
use domain::{Capture, FailureKind, WebhookEvent};

/// How long a task stays out of the trackers' reach while the api-server submits it: longer than
/// any submission can take, so only a submission whose server died is ever looked at early.
pub const SUBMISSION_WINDOW_MS: i64 = 120_000;

const HOLD_FOR_SUBMISSION: &str = "UPDATE tasks SET lease_expires_at = {NOW} + ? WHERE id = ?";
const RECORD_SUBMISSION: &str = "UPDATE tasks SET provider_handle = ?, lease_expires_at = {NOW} + ? \
     WHERE id = ? AND status = 'queued' AND provider_handle IS NULL";
const LOCK_UNSUBMITTED: &str = "SELECT * FROM tasks WHERE id = ? AND status = 'queued' AND provider IS NOT NULL \
     AND provider_handle IS NULL{FOR_UPDATE}";
const CLAIM_TRACKED: &str = "UPDATE tasks SET attempt = attempt + 1, lease_owner = ?, lease_expires_at = {NOW} + ? \
     WHERE id IN (SELECT id FROM tasks WHERE provider IS NOT NULL AND status IN ('queued', 'running') \
     AND lease_expires_at < {NOW} ORDER BY lease_expires_at LIMIT ?{SKIP_LOCKED}) RETURNING *";
// A look holds its task with `lease_owner` set. A callback that arrives meanwhile clears it (see
// WAKE), and the look's reschedule then makes the task due at once instead of after its backoff.
const RESCHEDULE: &str = "UPDATE tasks SET \
     lease_expires_at = CASE WHEN lease_owner IS NULL THEN 0 ELSE {NOW} + ? END, lease_owner = NULL, updated_at = ?, \
     status = CASE WHEN ? THEN 'running' ELSE status END, \
     started_at = CASE WHEN ? THEN COALESCE(started_at, ?) ELSE started_at END \
     WHERE id = ? AND attempt = ? AND status IN ('queued', 'running')";
// WAKE and ADOPT make a task due at once when it waits; when a look holds the task its lease stands
// (no second tracker takes it meanwhile) and the cleared owner tells the look's reschedule to make
// it due at once.
const WAKE: &str =
    "UPDATE tasks SET lease_expires_at = CASE WHEN lease_owner IS NULL THEN 0 ELSE lease_expires_at END, \
     lease_owner = NULL WHERE id = ? AND provider IS NOT NULL AND status IN ('queued', 'running')";
const ADOPT: &str = "UPDATE tasks SET provider_handle = ?, provider_callback = ?, \
     lease_expires_at = CASE WHEN lease_owner IS NULL THEN 0 ELSE lease_expires_at END, lease_owner = NULL \
     WHERE id = ? AND provider = ? AND status IN ('queued', 'running') AND provider_handle IS NULL";

/// Succeeded provider work of one engine at one provider: what it was billed at and what it cost
/// us there (for margin reports).
#[derive(Clone, Debug, PartialEq, Eq, QueryableByName)]
pub struct ProviderMargin {
    /// `fal` or `replicate`.
    #[diesel(sql_type = Text)]
    pub provider: String,
    /// Engine id.
    #[diesel(sql_type = Text)]
    pub engine: String,
    /// Succeeded tasks.
    #[diesel(sql_type = BigInt)]
    pub tasks: i64,
    /// What they were billed, ten-thousandths of a dollar.
    #[diesel(sql_type = BigInt)]
    pub billed_units: i64,
    /// Tasks whose provider cost is known (the route has a `cost_per_second`).
    #[diesel(sql_type = BigInt)]
    pub costed_tasks: i64,
    /// Their provider cost, ten-thousandths of a dollar.
    #[diesel(sql_type = BigInt)]
    pub provider_cost_units: i64,
    /// Billed amount of the costed tasks alone (the base of their margin).
    #[diesel(sql_type = BigInt)]
    pub costed_billed_units: i64,
    /// Compute time the provider reported, milliseconds.
    #[diesel(sql_type = BigInt)]
    pub provider_millis: i64,
}

const MARGINS: &str = "SELECT provider, engine, COUNT(*) AS tasks, \
     CAST(COALESCE(SUM(cost_units), 0) AS BIGINT) AS billed_units, \
     COUNT(provider_cost_units) AS costed_tasks, \
     CAST(COALESCE(SUM(provider_cost_units), 0) AS BIGINT) AS provider_cost_units, \
     CAST(COALESCE(SUM(CASE WHEN provider_cost_units IS NULL THEN 0 ELSE cost_units END), 0) AS BIGINT) AS costed_billed_units, \
     CAST(COALESCE(SUM(provider_millis), 0) AS BIGINT) AS provider_millis \
     FROM tasks WHERE provider IS NOT NULL AND status = 'succeeded' AND finished_at >= ? \
     GROUP BY provider, engine ORDER BY provider, engine";

impl Database {
    /// Provider work finished since `since` (Unix milliseconds), by provider and engine.
    pub fn provider_margins(&self, since: i64) -> StorageResult<Vec<ProviderMargin>> {
        self.read(|conn| dialect::sql_query(conn, MARGINS).bind::<BigInt, _>(since).load(conn))
    }

    /// Records the provider's request for a task just submitted (`handle_json`), and when it is
    /// first looked at. False when the task is no longer waiting for it (an interrupted
    /// submission already given up on).
    pub fn record_submission(&self, task_id: &str, handle_json: &str, first_look_ms: i64) -> StorageResult<bool> {
        self.update_and_wake_trackers(|conn| {
            dialect::sql_query(conn, RECORD_SUBMISSION)
                .bind::<Text, _>(handle_json)
                .bind::<BigInt, _>(first_look_ms)
                .bind::<Text, _>(task_id)
                .execute(conn)
        })
    }

    /// Fails a task whose provider refused it at submit (or never answered), releasing its hold;
    /// it never started and never will. False when it is not such a task.
    pub fn fail_unsubmitted(&self, task_id: &str, error: &str) -> StorageResult<bool> {
        let now = now_millis();
        self.transaction(|conn| {
            let Some(task) = dialect::sql_query(conn, LOCK_UNSUBMITTED)
                .bind::<Text, _>(task_id)
                .get_result::<TaskRecord>(conn)
                .optional()?
            else {
                return Ok(false);
            };
            settlement::settle_failed(conn, &task, error, FailureKind::Job, now)?;
            Ok(true)
        })
    }

    /// Claims up to `limit` tracked tasks that are due for a look, each as a new attempt under a
    /// lease of `lease_ms` (another tracker takes it over if this one dies).
    pub fn claim_tracked(&self, worker_id: &str, lease_ms: i64, limit: i64) -> StorageResult<Vec<ClaimedTask>> {
        let claimed = self.write(|conn| {
            dialect::sql_query(conn, CLAIM_TRACKED)
                .bind::<Text, _>(worker_id)
                .bind::<BigInt, _>(lease_ms)
                .bind::<BigInt, _>(limit)
                .load::<TaskRecord>(conn)
        })?;
        Ok(claimed.into_iter().map(ClaimedTask::from).collect())
    }

    /// Puts a tracked task back to wait `delay_ms` before its next look; `started` marks it
    /// running (the provider began work). False when `attempt` no longer holds it.
    pub fn reschedule_tracked(&self, task_id: &str, attempt: i32, delay_ms: i64, started: bool) -> StorageResult<bool> {
        let now = now_millis();
        let updated = self.write(|conn| {
            let updated = dialect::sql_query(conn, RESCHEDULE)
                .bind::<BigInt, _>(delay_ms)
                .bind::<BigInt, _>(now)
                .bind::<Bool, _>(started)
                .bind::<Bool, _>(started)
                .bind::<BigInt, _>(now)
                .bind::<Text, _>(task_id)
                .bind::<Integer, _>(attempt)
                .execute(conn)?;
            if updated == 1 && started {
                webhooks::announce(conn, task_id, WebhookEvent::Running, now)?;
            }
            Ok(updated)
        })?;
        Ok(updated == 1)
    }

    /// Marks a tracked task succeeded and captures its cost, like `finish_succeeded`; it may
    /// still be `queued` (the provider finished before we saw it start).
    pub fn finish_tracked(&self, task_id: &str, attempt: i32, success: &Success) -> StorageResult<Option<Capture>> {
        self.settle_success(task_id, attempt, Holding::QueuedOrRunning, success)
    }

    /// Marks a tracked task failed and releases its hold, like `finish_failed`.
    pub fn fail_tracked(&self, task_id: &str, attempt: i32, error: &str, kind: FailureKind) -> StorageResult<bool> {
        self.settle_failure(task_id, attempt, Holding::QueuedOrRunning, error, kind)
    }

    /// Makes a tracked task due now (its provider called back), and wakes the trackers; a task
    /// being looked at right now is due again as soon as that look ends.
    pub fn wake_tracked(&self, task_id: &str) -> StorageResult<bool> {
        self.update_and_wake_trackers(|conn| dialect::sql_query(conn, WAKE).bind::<Text, _>(task_id).execute(conn))
    }

    /// Adopts a request the provider reported in a verified callback for a task whose submission
    /// was never recorded (its api-server stopped in between), keeping the callback, and makes it
    /// due now. False when the task is not waiting for a submission of `provider`.
    pub fn adopt_submission(
        &self,
        task_id: &str,
        provider: &str,
        handle_json: &str,
        callback_json: &str,
    ) -> StorageResult<bool> {
        self.update_and_wake_trackers(|conn| {
            dialect::sql_query(conn, ADOPT)
                .bind::<Text, _>(handle_json)
                .bind::<Text, _>(callback_json)
                .bind::<Text, _>(task_id)
                .bind::<Text, _>(provider)
                .execute(conn)
        })
    }

    /// Runs `update` (of one tracked task) in a write transaction and, when it changed the task,
    /// wakes the trackers of every process (at commit); whether it did.
    fn update_and_wake_trackers(
        &self,
        update: impl FnOnce(&mut AnyConnection) -> QueryResult<usize>,
    ) -> StorageResult<bool> {
        self.write(|conn| {
            let updated = update(conn)?;
            if updated == 1 {
                dialect::notify(conn, JOBS_CHANNEL)?;
            }
            Ok(updated == 1)
        })
    }
}

/// Keeps a new provider task away from trackers for [`SUBMISSION_WINDOW_MS`], in the transaction
/// that creates it (see `Database::submit_task`).
pub(crate) fn hold_for_submission(conn: &mut AnyConnection, task_id: &str) -> QueryResult<usize> {
    dialect::sql_query(conn, HOLD_FOR_SUBMISSION)
        .bind::<BigInt, _>(SUBMISSION_WINDOW_MS)
        .bind::<Text, _>(task_id)
        .execute(conn)
}
