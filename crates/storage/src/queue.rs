//! The job queue over the tasks table: claims with a lease, heartbeats, release, and the
//! finalisation that settles billing in the same transaction as the terminal status.

use crate::connection::{on_native_connection, AnyConnection, Backend};
use crate::dialect;
use crate::endings::{End, Ending, Settled};
use crate::schema::tasks;
use crate::settlement::{Holding, Success};
use crate::task_record::TaskRecord;
use crate::webhooks;
use crate::{now_millis, Database, StorageResult};
use diesel::prelude::*;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::serialize::ToSql;
use diesel::sql_types::{BigInt, Integer, Text, Untyped};
use domain::{Capture, FailureKind, TaskStatus, Usd, WebhookEvent};
use std::sync::LazyLock;

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

/// A claimed task, and whether it has a webhook that asked to hear that it started.
#[derive(QueryableByName)]
struct ClaimedRow {
    #[diesel(embed)]
    task: TaskRecord,
    #[diesel(sql_type = diesel::sql_types::Bool)]
    announces_running: bool,
}

// A task is claimable when queued, or running under a lease that lapsed (its worker died).
// The keys and accounts already running their share (live leases on work run here) are passed
// over before the oldest candidates are taken, so a key at its share never hides the others'
// tasks. Among the candidates, a task's place in its key's line (after what the key runs) must be
// within the key's share; among those left, its place in its account's line likewise: the tasks
// one claim takes are those that claims of one task each, one after another, would take.
// SKIP LOCKED lets a claim pass rows a settlement or a cancellation holds.
// The start is the database's clock read once by the statement, after its snapshot was taken: a
// task seen queued because another's end was committed (a key's next job, once its previous one
// ended) starts after that end was stamped, which a clock read before the statement cannot promise.
// Nor does a task start before it was accepted, whichever clock stamped its creation.
const CLAIM: &str = "WITH clock AS MATERIALIZED (SELECT {NOW} AS now), \
     running AS (SELECT key_id, account_id FROM tasks WHERE provider IS NULL \
       AND status = 'running' AND lease_expires_at >= {NOW}), \
     running_keys AS (SELECT key_id, COUNT(*) AS n FROM running GROUP BY key_id), \
     running_accounts AS (SELECT account_id, COUNT(*) AS n FROM running GROUP BY account_id) \
     UPDATE tasks SET status = 'running', attempt = attempt + 1, lease_owner = ?, \
     lease_expires_at = {NOW} + ?, started_at = COALESCE(started_at, CASE WHEN created_at > (SELECT now FROM clock) \
       THEN created_at ELSE (SELECT now FROM clock) END), \
     updated_at = (SELECT now FROM clock) \
     WHERE id IN (SELECT id FROM (SELECT k.id, k.priority, k.created_at, \
         ROW_NUMBER() OVER (PARTITION BY k.account_id ORDER BY k.priority DESC, k.created_at, k.id) \
           + COALESCE(ra.n, 0) AS account_place \
       FROM (SELECT c.id, c.account_id, c.priority, c.created_at, \
           ROW_NUMBER() OVER (PARTITION BY c.key_id ORDER BY c.priority DESC, c.created_at, c.id) \
             + COALESCE(rk.n, 0) AS key_place \
         FROM (SELECT id, key_id, account_id, priority, created_at FROM tasks WHERE provider IS NULL \
           AND status IN ('queued', 'running') \
           AND (status = 'queued' OR (status = 'running' AND lease_expires_at < {NOW})) \
           AND key_id NOT IN (SELECT key_id FROM running_keys WHERE n >= ?) \
           AND account_id NOT IN (SELECT account_id FROM running_accounts WHERE n >= ?) \
           ORDER BY priority DESC, created_at, id LIMIT ?{SKIP_LOCKED}) c \
         LEFT JOIN running_keys rk ON rk.key_id = c.key_id) k \
       LEFT JOIN running_accounts ra ON ra.account_id = k.account_id \
       WHERE k.key_place <= ?) ranked \
     WHERE account_place <= ? ORDER BY priority DESC, created_at, id LIMIT ?)";
/// Whether a claimed task (`tasks` in [`CLAIM`]) has a webhook that asked to hear it started.
const ANNOUNCES_RUNNING: &str = "EXISTS (SELECT 1 FROM task_webhooks w WHERE w.task_id = tasks.id AND w.on_running)";
/// On PostgreSQL a claim is one round trip: a function of the session (in `pg_temp`, created on
/// each connection before its first claim, so its text is [`CLAIM`] as SQLite runs it too) runs in
/// the calling statement's transaction, and being volatile, each of its statements reads a fresh
/// snapshot (under `READ COMMITTED`, PostgreSQL's default, which the service keeps):
/// - Claims run one at a time (a transaction-scoped advisory lock, taken before the claim's
///   snapshot), so two workers never both see a key under its share and both take one of its
///   tasks.
/// - The claim reads the queue in its index's order and stops after the candidates. The
///   statistics of a queue that churns lag behind it, and with them the planner would read every
///   queued row off a bitmap and sort them, a cost that grows with the queue.
/// - The claim's commit does not wait for its WAL to reach the disk (a third of a claim's time).
///   A claim lost to a database crash only puts its tasks back in the queue, as a lapsed lease
///   would: the worker's record of the job's end is fenced by the attempt and finds the task no
///   longer its own, and any end that is recorded (a durable commit) makes the claim before it
///   durable too, since the log is written in order. Nothing accepted and nothing billed depends
///   on a claim alone.
/// - A claimed task whose webhook asked to hear of its start is announced in the same transaction
///   ([`webhooks::ANNOUNCE`], its delivery named from `gen_random_uuid`), so a claim and its
///   announcements commit or vanish together.
///
/// PL/pgSQL prepares the claim once per session, as diesel prepares the call.
static CLAIM_FUNCTION_POSTGRES: LazyLock<String> = LazyLock::new(|| {
    let announce = dialect::fill_placeholders(
        webhooks::ANNOUNCE,
        &[
            &format!("'{}_' || left(replace(gen_random_uuid()::text, '-', ''), 24)", webhooks::DELIVERY_ID_PREFIX),
            &format!("'{}'", WebhookEvent::Running.as_str()),
            "{NOW}",
            "{NOW}",
            "(claim_row.claimed).id",
            "false",
        ],
    );
    format!(
        "CREATE OR REPLACE FUNCTION pg_temp.claim_tasks(text, bigint, bigint, bigint, bigint, bigint, bigint, bigint) \
         RETURNS TABLE (claimed tasks, announces_running boolean) LANGUAGE plpgsql VOLATILE AS $claim$ \
         DECLARE claim_row record; BEGIN \
         PERFORM pg_advisory_xact_lock(hashtext('claim')); \
         PERFORM set_config('enable_bitmapscan', 'off', true); \
         PERFORM set_config('synchronous_commit', 'off', true); \
         FOR claim_row IN {} RETURNING tasks AS claimed, {ANNOUNCES_RUNNING} AS announces_running LOOP \
           IF claim_row.announces_running THEN {}; END IF; \
           claimed := claim_row.claimed; announces_running := claim_row.announces_running; RETURN NEXT; \
         END LOOP; END $claim$",
        dialect::render(CLAIM, Backend::Postgres),
        dialect::render_markers(&announce, Backend::Postgres),
    )
});

/// A claim as each backend runs it, with the binds of [`CLAIM`], cut at its placeholders.
static CLAIM_SQL: LazyLock<[Vec<String>; 2]> = LazyLock::new(|| {
    let cut = |sql: &str| sql.split('?').map(str::to_string).collect();
    [
        cut(&dialect::render_markers(
            &format!("{CLAIM} RETURNING *, {ANNOUNCES_RUNNING} AS announces_running"),
            Backend::Sqlite,
        )),
        cut("SELECT (c.claimed).*, c.announces_running FROM pg_temp.claim_tasks(?, ?, ?, ?, ?, ?, ?, ?) c"),
    ]
});

/// One claim, as a statement type of its own: its text never changes, so each connection
/// prepares it once and every later claim skips parsing and planning, which cost PostgreSQL more
/// than running it (`diesel::sql_query` is prepared anew on every call).
struct ClaimStatement<'a> {
    /// [`CLAIM`] for the connection's backend, cut at its placeholders (one more piece than binds).
    sql: &'a [String],
    worker_id: &'a str,
    /// The other binds, in the order of the statement's placeholders.
    numbers: [i64; 7],
}

impl<'a> ClaimStatement<'a> {
    fn new(backend: Backend, worker_id: &'a str, lease_ms: i64, shares: RunningShares, limit: usize) -> Self {
        let sql = match backend {
            Backend::Sqlite => &CLAIM_SQL[0],
            Backend::Postgres => &CLAIM_SQL[1],
        };
        let (per_key, per_account) = (i64::from(shares.per_key), i64::from(shares.per_account));
        let limit_bind = i64::try_from(limit).unwrap_or(i64::MAX);
        let numbers = [lease_ms, per_key, per_account, candidates_for(limit), per_key, per_account, limit_bind];
        ClaimStatement { sql, worker_id, numbers }
    }
}

impl QueryId for ClaimStatement<'_> {
    type QueryId = ClaimStatement<'static>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl Query for ClaimStatement<'_> {
    type SqlType = Untyped;
}

impl<Conn> RunQueryDsl<Conn> for ClaimStatement<'_> {}

impl<DB> QueryFragment<DB> for ClaimStatement<'_>
where
    DB: diesel::backend::Backend,
    str: ToSql<Text, DB>,
    i64: ToSql<BigInt, DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        let mut pieces = self.sql.iter();
        let mut next_piece = |out: &mut AstPass<'_, 'b, DB>| {
            out.push_sql(pieces.next().map_or("", String::as_str));
        };
        next_piece(&mut out);
        out.push_bind_param::<Text, _>(self.worker_id)?;
        for number in &self.numbers {
            next_piece(&mut out);
            out.push_bind_param::<BigInt, _>(number)?;
        }
        next_piece(&mut out);
        Ok(())
    }
}

/// Candidates a claim of `n` tasks looks at: enough that a few keys at their share among the
/// oldest tasks leave room for the others.
fn candidates_for(limit: usize) -> i64 {
    i64::try_from(limit.saturating_mul(4).max(16)).unwrap_or(i64::MAX)
}

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
        Ok(self.claim_tasks(worker_id, lease_ms, shares, 1)?.pop())
    }

    /// Claims up to `limit` of the oldest claimable tasks for `worker_id` in one transaction, each
    /// with a lease of `lease_ms`, oldest (and highest priority) first. No key or account is
    /// given more than its `shares`, counting what it already runs and the others claimed here.
    pub fn claim_tasks(
        &self,
        worker_id: &str,
        lease_ms: i64,
        shares: RunningShares,
        limit: usize,
    ) -> StorageResult<Vec<ClaimedTask>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let claim = |conn: &mut AnyConnection| {
            let claim = ClaimStatement::new(conn.backend(), worker_id, lease_ms, shares, limit);
            on_native_connection!(conn, |native| claim.load::<ClaimedRow>(native))
        };
        let rows = match self.backend() {
            // The function announces what it claims.
            Backend::Postgres => self.run_after_setup(&CLAIM_FUNCTION_POSTGRES, claim)?,
            // SQLite's `IMMEDIATE` transactions already run one at a time.
            Backend::Sqlite => self.write(|conn| {
                let rows = claim(conn)?;
                let now = now_millis();
                for row in rows.iter().filter(|row| row.announces_running) {
                    webhooks::announce(conn, &row.task.id, WebhookEvent::Running, now)?;
                }
                Ok(rows)
            })?,
        };
        let mut claimed: Vec<TaskRecord> = rows.into_iter().map(|row| row.task).collect();
        // RETURNING gives no order: the caller starts them in the queue's.
        claimed.sort_by(|a, b| {
            b.priority.cmp(&a.priority).then(a.created_at.cmp(&b.created_at)).then_with(|| a.id.cmp(&b.id))
        });
        Ok(claimed.into_iter().map(ClaimedTask::from).collect())
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
        let ending = Ending { task_id: task_id.to_string(), attempt, holding, end: End::succeeded(success) };
        Ok(match self.settle(ending)? {
            Settled::Succeeded(capture) => Some(capture),
            Settled::Failed | Settled::NotHeld => None,
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
        let end = End::Failed { error: error.to_string(), kind };
        Ok(self.settle(Ending { task_id: task_id.to_string(), attempt, holding, end })? == Settled::Failed)
    }
}
