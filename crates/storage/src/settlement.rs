//! Settling a task's money with its terminal status, in the caller's transaction: a success
//! captures its cost (never above the hold) and releases the rest; a failure releases the whole
//! hold. Shared by jobs run here ([`crate::Database::finish_succeeded`]) and jobs tracked at a
//! provider ([`crate::Database::finish_tracked`]).

use crate::balances::{self, Moved};
use crate::connection::{on_native_connection, AnyConnection};
use crate::dialect;
use crate::ledger::{self, Movement};
use crate::listener::FINISHED_CHANNEL;
use crate::schema::tasks;
use crate::task_record::TaskRecord;
use crate::webhooks;
use crate::{StorageError, StorageResult};
use diesel::prelude::*;
use domain::{billing, Capture, FailureKind, TaskStatus, Usd, WebhookEvent};
use std::collections::BTreeMap;

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

/// What settling tasks moves besides their own rows, gathered so that many tasks' settlements
/// record each key's change of balance and the ledger once (see [`Books::write`]).
#[derive(Default)]
pub(crate) struct Books {
    /// Per account and key: what the settlements moved.
    moved: BTreeMap<(String, String), Moved>,
    /// Ledger rows.
    ledger: Vec<Movement>,
    /// Tasks that ended.
    ended: Vec<String>,
}

impl Books {
    /// Writes what the settled tasks moved: the balances' changes (beside the accounts' and keys'
    /// rows, which a settlement leaves to the submits that lock them; see `balances`) and the
    /// ledger rows, one statement each, their `completed` webhooks, and one notification that
    /// tasks ended.
    pub(crate) fn write(self, conn: &mut AnyConnection, now: i64) -> StorageResult<()> {
        if self.ended.is_empty() {
            return Ok(());
        }
        balances::append(conn, &self.moved)?;
        ledger::append_all(conn, &self.ledger, now)?;
        let ended: Vec<&str> = self.ended.iter().map(String::as_str).collect();
        webhooks::announce_all(conn, &ended, WebhookEvent::Completed, now)?;
        dialect::notify(conn, FINISHED_CHANNEL)?;
        Ok(())
    }

    fn moved(&mut self, task: &TaskRecord) -> &mut Moved {
        self.moved.entry((task.account_id.clone(), task.key_id.clone())).or_default()
    }
}

/// Marks the locked `task` succeeded with `success`, entering what it moves in `books`. A task
/// the lifecycle does not let succeed is an error, and nothing is written for it.
pub(crate) fn succeed(
    conn: &mut AnyConnection,
    task: &TaskRecord,
    success: &Success,
    now: i64,
    books: &mut Books,
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
    on_native_connection!(conn, |native| diesel::update(tasks::table.find(&task.id))
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
        .execute(native))?;
    let moved = books.moved(task);
    moved.free_held -= hold.from_allowance.units();
    moved.free_used += capture.from_allowance.units();
    moved.invoice += capture.to_invoice.units();
    moved.held -= hold.total.units();
    moved.spent += capture.cost.units();
    books.ledger.push(Movement::of(task, "capture", capture.cost, capture.from_allowance));
    books.ledger.push(Movement::of(task, "release", capture.released, capture.released_from_allowance));
    books.ended.push(task.id.clone());
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

/// Marks the locked `task` failed with `error` of `kind` and releases its whole hold, in the
/// caller's transaction.
pub(crate) fn settle_failed(
    conn: &mut AnyConnection,
    task: &TaskRecord,
    error: &str,
    kind: FailureKind,
    now: i64,
) -> StorageResult<()> {
    let mut books = Books::default();
    fail(conn, task, error, kind, now, &mut books)?;
    books.write(conn, now)
}

/// Marks the locked `task` failed with `error` of `kind`, entering the release of its hold in
/// `books`. A task the lifecycle does not let fail is an error, and nothing is written for it.
pub(crate) fn fail(
    conn: &mut AnyConnection,
    task: &TaskRecord,
    error: &str,
    kind: FailureKind,
    now: i64,
    books: &mut Books,
) -> StorageResult<()> {
    check_transition(task, TaskStatus::Failed)?;
    on_native_connection!(conn, |native| diesel::update(tasks::table.find(&task.id))
        .set((
            tasks::status.eq(TaskStatus::Failed.as_str()),
            tasks::error.eq(error),
            tasks::failure_kind.eq(kind.as_str()),
            tasks::finished_at.eq(now),
            tasks::updated_at.eq(now),
            tasks::lease_owner.eq(None::<String>),
            tasks::lease_expires_at.eq(None::<i64>),
        ))
        .execute(native))?;
    let hold = task.hold();
    let moved = books.moved(task);
    moved.free_held -= hold.from_allowance.units();
    moved.held -= hold.total.units();
    books.ledger.push(Movement::of(task, "release", hold.total, hold.from_allowance));
    books.ended.push(task.id.clone());
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
