//! Tasks: creating one together with its billing hold, and reading it back.

use crate::accounts::Account;
use crate::connection::{read, write_tx};
use crate::keys::ApiKey;
use crate::ledger::append_ledger;
use crate::schema::{accounts, api_keys, ledger, tasks};
use crate::{now_millis, Backend, Database, StorageError, StorageResult};
use diesel::prelude::*;
use diesel::sql_types::Text;
use domain::{billing, BillingRefusal, FailureKind, TaskStatus, Usd};

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
}

/// The columns a poll reads, in groups of five (diesel's tuples), in the table's order.
type PolledColumns = (
    (String, String, String, String, String),
    (String, i64, i64, Option<i64>, Option<i64>),
    (Option<String>, Option<i64>, i32, Option<String>, i64),
    (i64, Option<i64>, Option<String>, bool, i32),
    (Option<String>, Option<String>, Option<String>, Option<String>, Option<String>),
    (Option<i64>, Option<i64>),
);

impl TaskRecord {
    fn from_polled(columns: PolledColumns) -> TaskRecord {
        let ((id, key_id, account_id, engine, job), second, third, fourth, fifth, sixth) = columns;
        let (status, created_at, updated_at, started_at, finished_at) = second;
        let (lease_owner, lease_expires_at, attempt, outputs, price_units) = third;
        let (hold_allowance_units, cost_units, error, sandbox, priority) = fourth;
        let (result, failure_kind, provider, provider_handle, provider_callback) = fifth;
        let (provider_millis, provider_cost_units) = sixth;
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

/// What is needed to create a task.
#[derive(Clone, Debug)]
pub struct NewTask {
    /// Task id (`task_...`).
    pub id: String,
    /// Submitting key.
    pub key_id: String,
    /// The key's account, billed for the task.
    pub account_id: String,
    /// Engine id.
    pub engine: String,
    /// The validated job as JSON.
    pub job: String,
    /// Quoted price, to be held.
    pub price: Usd,
    /// Claim order: higher first (a caller waiting on the result).
    pub priority: i32,
    /// The upstream provider the job is submitted to; such a task is never claimed to run here,
    /// only tracked (see `Database::claim_tracked`).
    pub provider: Option<String>,
}

/// Why a task was not created.
#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    /// The billing rules refuse the job (HTTP 402).
    #[error(transparent)]
    Refused(#[from] BillingRefusal),
    /// The database failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The key was revoked before the job could be held (HTTP 401).
    #[error("this API key has been revoked")]
    Revoked,
}

impl From<diesel::result::Error> for SubmitError {
    fn from(e: diesel::result::Error) -> Self {
        SubmitError::Storage(e.into())
    }
}

impl From<r2d2::Error> for SubmitError {
    fn from(e: r2d2::Error) -> Self {
        SubmitError::Storage(e.into())
    }
}

/// Reads one row by id, locked `FOR UPDATE` on PostgreSQL, in one round trip.
macro_rules! locked_row {
    ($conn:expr, $backend:expr, $table:literal, $id:expr) => {{
        let sql = if $backend == Backend::Postgres {
            concat!("SELECT * FROM ", $table, " WHERE id = $1 FOR UPDATE")
        } else {
            concat!("SELECT * FROM ", $table, " WHERE id = ?")
        };
        diesel::sql_query(sql).bind::<Text, _>($id).get_result($conn)
    }};
}

impl Database {
    /// Creates a queued task and places its hold, in one transaction: the key's cap and the
    /// account's allowance are checked and reserved under row locks, so concurrent submits can
    /// never together pass a limit.
    pub fn submit_task(&self, new: &NewTask) -> Result<TaskRecord, SubmitError> {
        let now = now_millis();
        write_tx!(self, |conn, backend| {
            // Lock order account -> key everywhere, so concurrent holds and settlements serialise
            // per account without deadlocks. On SQLite the IMMEDIATE transaction already holds the
            // database's write lock, and the rows are simply read.
            let account: Account = locked_row!(conn, backend, "accounts", &new.account_id)?;
            let key: ApiKey = locked_row!(conn, backend, "api_keys", &new.key_id)?;
            if key.account_id != account.id {
                return Err(StorageError::NotFound(format!("key {:?} of account {:?}", key.id, account.id)).into());
            }
            // A key revoked while this submit waited for its row is refused: the check that let
            // the request in ran before the lock.
            if key.revoked_at.is_some() {
                return Err(SubmitError::Revoked);
            }
            let hold = billing::place_hold(&key.limits(), &account.limits(), new.price)?;
            diesel::update(accounts::table.find(&account.id))
                .set(accounts::free_held_units.eq(accounts::free_held_units + hold.from_allowance.units()))
                .execute(conn)?;
            diesel::update(api_keys::table.find(&key.id))
                .set(api_keys::held_units.eq(api_keys::held_units + hold.total.units()))
                .execute(conn)?;
            let record = TaskRecord {
                id: new.id.clone(),
                key_id: key.id.clone(),
                account_id: account.id.clone(),
                engine: new.engine.clone(),
                job: new.job.clone(),
                status: TaskStatus::Queued.as_str().to_string(),
                created_at: now,
                updated_at: now,
                started_at: None,
                finished_at: None,
                lease_owner: None,
                lease_expires_at: None,
                attempt: 0,
                outputs: None,
                price_units: hold.total.units(),
                hold_allowance_units: hold.from_allowance.units(),
                cost_units: None,
                error: None,
                sandbox: false,
                priority: new.priority,
                result: None,
                failure_kind: None,
                provider: new.provider.clone(),
                provider_handle: None,
                provider_callback: None,
                provider_millis: None,
                provider_cost_units: None,
            };
            diesel::insert_into(tasks::table)
                .values((
                    tasks::id.eq(&record.id),
                    tasks::key_id.eq(&record.key_id),
                    tasks::account_id.eq(&record.account_id),
                    tasks::engine.eq(&record.engine),
                    tasks::job.eq(&record.job),
                    tasks::status.eq(&record.status),
                    tasks::created_at.eq(now),
                    tasks::updated_at.eq(now),
                    tasks::price_units.eq(record.price_units),
                    tasks::hold_allowance_units.eq(record.hold_allowance_units),
                    tasks::priority.eq(record.priority),
                    tasks::provider.eq(&record.provider),
                ))
                .execute(conn)?;
            if record.provider.is_some() {
                // Not looked at by trackers while the submission is under way (see
                // `Database::record_submission`).
                crate::tracking::hold_for_submission!(conn, backend, &record.id)?;
            }
            append_ledger!(conn, &record, "hold", hold.total, hold.from_allowance, now)?;
            if backend == Backend::Postgres {
                // Delivered at commit to every listening worker (see `Database::listen_for_jobs`).
                diesel::sql_query(crate::listener::NOTIFY_JOB).execute(conn)?;
            }
            Ok(record)
        })
    }

    /// The task `id` if it belongs to `key_id`, as its owner sees it: every column but the job
    /// itself (`job` is left empty), which can hold megabytes of inputs a poll never shows.
    /// Tasks of other keys are invisible.
    pub fn task_for_key(&self, id: &str, key_id: &str) -> StorageResult<Option<TaskRecord>> {
        Ok(read!(self, |conn| tasks::table
            .find(id)
            .filter(tasks::key_id.eq(key_id))
            .select((
                (tasks::id, tasks::key_id, tasks::account_id, tasks::engine, diesel::dsl::sql::<Text>("''")),
                (tasks::status, tasks::created_at, tasks::updated_at, tasks::started_at, tasks::finished_at),
                (tasks::lease_owner, tasks::lease_expires_at, tasks::attempt, tasks::outputs, tasks::price_units),
                (tasks::hold_allowance_units, tasks::cost_units, tasks::error, tasks::sandbox, tasks::priority),
                (tasks::result, tasks::failure_kind, tasks::provider, tasks::provider_handle, tasks::provider_callback),
                (tasks::provider_millis, tasks::provider_cost_units),
            ))
            .first::<PolledColumns>(conn)
            .optional())?
        .map(TaskRecord::from_polled))
    }

    /// The task `id`, whoever owns it (for workers and operators).
    pub fn task(&self, id: &str) -> StorageResult<Option<TaskRecord>> {
        Ok(read!(self, |conn| tasks::table.find(id).select(TaskRecord::as_select()).first(conn).optional())?)
    }

    /// Ledger rows of one task, oldest first (for operators and tests).
    pub fn task_ledger(&self, id: &str) -> StorageResult<Vec<crate::LedgerEntry>> {
        Ok(read!(self, |conn| ledger::table
            .filter(ledger::task_id.eq(id))
            .order(ledger::id.asc())
            .select(crate::LedgerEntry::as_select())
            .load(conn))?)
    }
}
