//! The task row and what it tells about its task: status, price, hold and cost.

use crate::schema::tasks;
use crate::{StorageError, StorageResult};
use diesel::prelude::*;
use domain::{FailureKind, TaskStatus, Usd};

/// A task row.
#[derive(Clone, Debug, PartialEq, Eq, Queryable, QueryableByName, Selectable)]
#[diesel(table_name = tasks)]
pub struct TaskRecord {
    /// Task id (`task_...`).
    pub id: String,
    /// Key that created it; only this key can see it.
    pub key_id: String,
    /// Account billed for it.
    pub account_id: String,
    /// Engine id.
    pub engine: String,
    /// The validated job as JSON.
    pub job: String,
    /// Lifecycle status (see [`TaskStatus`]).
    pub status: String,
    /// Creation time, Unix milliseconds.
    pub created_at: i64,
    /// Last change.
    pub updated_at: i64,
    /// First claim by a worker.
    pub started_at: Option<i64>,
    /// Reaching a terminal status.
    pub finished_at: Option<i64>,
    /// Worker holding the lease.
    pub lease_owner: Option<String>,
    /// When the lease lapses unless renewed.
    pub lease_expires_at: Option<i64>,
    /// Number of claims so far; fences out finishers of older attempts.
    pub attempt: i32,
    /// Outputs as JSON, once succeeded.
    pub outputs: Option<String>,
    /// Quoted price, held at submit.
    pub price_units: i64,
    /// Part of the hold drawn on the free allowance.
    pub hold_allowance_units: i64,
    /// Billed cost, once succeeded.
    pub cost_units: Option<i64>,
    /// Failure message.
    pub error: Option<String>,
    /// Whether the outputs come from a sandbox engine rather than a real model.
    pub sandbox: bool,
    /// Claim order: higher first (synchronous recipes, whose caller is waiting).
    pub priority: i32,
    /// A recipe's structured result as JSON, once succeeded.
    pub result: Option<String>,
    /// Why the task failed (see [`FailureKind`]), once failed.
    pub failure_kind: Option<String>,
    /// The upstream provider running it (`fal`, `replicate`), if any.
    pub provider: Option<String>,
    /// The provider's request (id and URLs) as JSON, once it accepted the job.
    pub provider_handle: Option<String>,
    /// A verified callback of the provider, kept when the request was adopted from it.
    pub provider_callback: Option<String>,
    /// Compute time the provider reported, milliseconds.
    pub provider_millis: Option<i64>,
    /// What the job cost us at the provider, when its rate is known.
    pub provider_cost_units: Option<i64>,
    /// When the retention sweeper removed its job, outputs and inputs (its money is kept).
    pub expired_at: Option<i64>,
}

/// The columns a poll reads, in groups of five (diesel's tuples), in the table's order.
pub(crate) type PolledColumns = (
    (String, String, String, String, String),
    (String, i64, i64, Option<i64>, Option<i64>),
    (Option<String>, Option<i64>, i32, Option<String>, i64),
    (i64, Option<i64>, Option<String>, bool, i32),
    (Option<String>, Option<String>, Option<String>, Option<String>, Option<String>),
    (Option<i64>, Option<i64>, Option<i64>),
);

impl TaskRecord {
    pub(crate) fn from_polled(columns: PolledColumns) -> TaskRecord {
        let ((id, key_id, account_id, engine, job), second, third, fourth, fifth, sixth) = columns;
        let (status, created_at, updated_at, started_at, finished_at) = second;
        let (lease_owner, lease_expires_at, attempt, outputs, price_units) = third;
        let (hold_allowance_units, cost_units, error, sandbox, priority) = fourth;
        let (result, failure_kind, provider, provider_handle, provider_callback) = fifth;
        let (provider_millis, provider_cost_units, expired_at) = sixth;
        TaskRecord {
            id,
            key_id,
            account_id,
            engine,
            job,
            status,
            created_at,
            updated_at,
            started_at,
            finished_at,
            lease_owner,
            lease_expires_at,
            attempt,
            outputs,
            price_units,
            hold_allowance_units,
            cost_units,
            error,
            sandbox,
            priority,
            result,
            failure_kind,
            provider,
            provider_handle,
            provider_callback,
            provider_millis,
            provider_cost_units,
            expired_at,
        }
    }

    /// The task's status.
    pub fn status(&self) -> StorageResult<TaskStatus> {
        self.status.parse().map_err(|e: domain::task::UnknownStatus| StorageError::Corrupt(e.to_string()))
    }

    /// The quoted price.
    pub fn price(&self) -> Usd {
        Usd::from_units(self.price_units)
    }

    /// The billed cost, once succeeded.
    pub fn cost(&self) -> Option<Usd> {
        self.cost_units.map(Usd::from_units)
    }

    /// Why the task failed, once failed; an unknown stored kind reads as a job failure.
    pub fn failure_kind(&self) -> Option<FailureKind> {
        self.failure_kind.as_deref().map(|kind| {
            if kind == FailureKind::Input.as_str() {
                FailureKind::Input
            } else {
                FailureKind::Job
            }
        })
    }

    /// The hold placed at submit.
    pub fn hold(&self) -> domain::Hold {
        domain::Hold { total: self.price(), from_allowance: Usd::from_units(self.hold_allowance_units) }
    }
}
