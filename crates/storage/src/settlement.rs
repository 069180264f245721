//! Settling a task's money with its terminal status, in the caller's transaction: a success
//! captures its cost (never above the hold) and releases the rest; a failure releases the whole
//! hold. Shared by jobs run here ([`crate::Database::finish_succeeded`]) and jobs tracked at a
//! provider ([`crate::Database::finish_tracked`]).

use crate::connection::AnyConnection;
use crate::dialect;
use crate::ledger;
use crate::listener::FINISHED_CHANNEL;
use crate::schema::{accounts, api_keys, tasks};
use crate::task_record::TaskRecord;
use crate::webhooks;
use crate::{StorageError, StorageResult};
use diesel::prelude::*;
use diesel::sql_types::{Integer, Text};
use domain::{billing, Capture, FailureKind, TaskStatus, Usd, WebhookEvent};

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

/// The statuses in which an attempt may still settle a task.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Holding {
    /// A job run here: `running` while its attempt holds it.
    Running,
    /// A job tracked at a provider: `queued` (at the provider) or `running`.
    QueuedOrRunning,
}

/// Reads the task if `attempt` holds it, locking its row on PostgreSQL so a concurrent finaliser
/// waits, then sees the new status and backs off.
pub(crate) fn lock_attempt(
    conn: &mut AnyConnection,
    task_id: &str,
    attempt: i32,
    holding: Holding,
) -> QueryResult<Option<TaskRecord>> {
    lock_account_of_task(conn, task_id)?;
    let template = match holding {
        Holding::Running => "SELECT * FROM tasks WHERE id = ? AND status = 'running' AND attempt = ?{FOR_UPDATE}",
        Holding::QueuedOrRunning => {
            "SELECT * FROM tasks WHERE id = ? AND status IN ('queued', 'running') AND attempt = ?{FOR_UPDATE}"
        }
    };
    dialect::sql_query(conn, template)
        .bind::<Text, _>(task_id)
        .bind::<Integer, _>(attempt)
        .get_result::<TaskRecord>(conn)
        .optional()
}

/// Locks the account of task `task_id` (on PostgreSQL; SQLite's write transaction already holds
/// the database). A settlement takes the account before the task, in the order every hold,
/// cancellation and revocation takes them (account, then key or task): a settlement that locked
/// the task first deadlocked against a client's cancel of the same task, which had the account.
pub(crate) fn lock_account_of_task(conn: &mut AnyConnection, task_id: &str) -> QueryResult<()> {
    dialect::sql_query(
        conn,
        "SELECT id FROM accounts WHERE id = (SELECT account_id FROM tasks WHERE id = ?){FOR_UPDATE}",
    )
    .bind::<Text, _>(task_id)
    .execute(conn)
    .map(drop)
}

/// Marks the locked `task` succeeded with `success` and captures its cost.
pub(crate) fn settle_succeeded(
    conn: &mut AnyConnection,
    task: &TaskRecord,
    success: &Success,
    now: i64,
) -> StorageResult<Capture> {
    if task.status()? == TaskStatus::Queued {
        // A provider's task that finished before we saw it start: it goes through `running` (its
        // `started_at` is set now) in the same write.
        check_transition(task, TaskStatus::Running)?;
    } else {
        check_transition(task, TaskStatus::Succeeded)?;
    }
    let hold = task.hold();
    let capture = billing::capture(&hold, success.cost);
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
        .execute(conn)?;
    diesel::update(accounts::table.find(&task.account_id))
        .set((
            accounts::free_held_units.eq(accounts::free_held_units - hold.from_allowance.units()),
            accounts::free_used_units.eq(accounts::free_used_units + capture.from_allowance.units()),
            accounts::invoice_units.eq(accounts::invoice_units + capture.to_invoice.units()),
        ))
        .execute(conn)?;
    diesel::update(api_keys::table.find(&task.key_id))
        .set((
            api_keys::held_units.eq(api_keys::held_units - hold.total.units()),
            api_keys::spent_units.eq(api_keys::spent_units + capture.cost.units()),
        ))
        .execute(conn)?;
    ledger::append(conn, task, "capture", capture.cost, capture.from_allowance, now)?;
    ledger::append(conn, task, "release", capture.released, capture.released_from_allowance, now)?;
    webhooks::announce(conn, &task.id, WebhookEvent::Completed, now)?;
    dialect::notify(conn, FINISHED_CHANNEL)?;
    Ok(capture)
}

/// How a cancelled task stood when it was cancelled.
pub(crate) struct Stopped {
    /// A worker or a provider had started it (so its worker must stop, or its provider cancel).
    pub(crate) was_running: bool,
    /// The provider's request (its handle as stored), when a provider was running it.
    pub(crate) upstream: Option<String>,
}

/// Cancels the locked, unfinished `task` (its client's cancel, or its key's revocation): failed
/// with `why`, its hold released, nothing billed. Its worker, if any, finds the lease gone.
pub(crate) fn cancel_unfinished(
    conn: &mut AnyConnection,
    task: &TaskRecord,
    why: &str,
    now: i64,
) -> StorageResult<Stopped> {
    settle_failed(conn, task, why, FailureKind::Job, now)?;
    Ok(Stopped {
        was_running: task.status == TaskStatus::Running.as_str() || task.provider_handle.is_some(),
        upstream: task.provider_handle.clone(),
    })
}

/// Marks the locked `task` failed with `error` of `kind` and releases its whole hold.
pub(crate) fn settle_failed(
    conn: &mut AnyConnection,
    task: &TaskRecord,
    error: &str,
    kind: FailureKind,
    now: i64,
) -> StorageResult<()> {
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
        .execute(conn)?;
    let hold = task.hold();
    diesel::update(accounts::table.find(&task.account_id))
        .set(accounts::free_held_units.eq(accounts::free_held_units - hold.from_allowance.units()))
        .execute(conn)?;
    diesel::update(api_keys::table.find(&task.key_id))
        .set(api_keys::held_units.eq(api_keys::held_units - hold.total.units()))
        .execute(conn)?;
    ledger::append(conn, task, "release", hold.total, hold.from_allowance, now)?;
    webhooks::announce(conn, &task.id, WebhookEvent::Completed, now)?;
    dialect::notify(conn, FINISHED_CHANNEL)?;
    Ok(())
}

/// The domain's lifecycle rule, applied where a status is written: a change it forbids is an
/// error, never written.
fn check_transition(task: &TaskRecord, next: TaskStatus) -> StorageResult<()> {
    let current = task.status()?;
    if current.can_become(next) {
        Ok(())
    } else {
        Err(StorageError::Corrupt(format!("task {} cannot go from {} to {}", task.id, current.as_str(), next.as_str())))
    }
}
