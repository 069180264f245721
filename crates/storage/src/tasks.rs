//! Tasks: creating one together with its billing hold, and reading it back.

use crate::accounts::Account;
use crate::connection::{on_native_connection, AnyConnection};
use crate::idempotency::{self, EarlierRequest, IdempotencyClaim};
use crate::keys::ApiKey;
use crate::listener::JOBS_CHANNEL;
use crate::schema::{accounts, api_keys, ledger, tasks};
use crate::task_record::{PolledColumns, TaskRecord};
use crate::webhooks::{self, WebhookChoice};
use crate::{dialect, ledger as ledger_rows, now_millis, tracking, Database, StorageError, StorageResult};
use diesel::prelude::*;
use diesel::sql_types::Text;
use domain::{billing, BillingRefusal, TaskStatus, Usd};

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
    /// Bytes of the inputs moved to the object store for it at submit.
    pub input_bytes: i64,
    /// Most bytes of stored inputs the key may have in queued and running tasks at once, this
    /// task's included.
    pub key_input_limit: i64,
    /// The client's idempotency key for this request, if it sent one.
    pub idempotency: Option<IdempotencyClaim>,
    /// Where the task's webhooks go.
    pub webhook: WebhookChoice,
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
    /// The key's queued and running tasks already hold this many bytes of stored inputs, and
    /// this task's would take them past the limit.
    #[error("the key's unfinished jobs hold {held} bytes of inputs; at most {limit} at once")]
    InputsOverLimit {
        /// Bytes held by the key's unfinished tasks.
        held: i64,
        /// The limit.
        limit: i64,
    },
    /// The request's idempotency key already created a task (within its window): the same request
    /// is answered with that task, another request under the key is refused.
    #[error("this idempotency key was used by an earlier request (task {})", .0.task_id)]
    AlreadySubmitted(EarlierRequest),
    /// The request names a webhook, and its key has no signing secret to sign it with.
    #[error("this API key has no webhook signing secret")]
    NoWebhookSecret,
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

/// Reads one row of `table` by id, locked `FOR UPDATE` on PostgreSQL, in one round trip.
fn locked_row<Row>(conn: &mut AnyConnection, table: &str, id: &str) -> QueryResult<Row>
where
    Row: diesel::QueryableByName<crate::connection::MultiBackend> + 'static,
{
    dialect::sql_query(conn, &format!("SELECT * FROM {table} WHERE id = ?{{FOR_UPDATE}}"))
        .bind::<Text, _>(id)
        .get_result(conn)
}

impl Database {
    /// Creates a queued task and places its hold, in one transaction: the key's cap and the
    /// account's allowance are checked and reserved under row locks, so concurrent submits can
    /// never together pass a limit.
    pub fn submit_task(&self, new: &NewTask) -> Result<TaskRecord, SubmitError> {
        let now = now_millis();
        self.transaction(|conn| {
            // Lock order account -> key everywhere, so concurrent holds and settlements serialise
            // per account without deadlocks. On SQLite the IMMEDIATE transaction already holds the
            // database's write lock, and the rows are simply read.
            let account: Account = locked_row(conn, "accounts", &new.account_id)?;
            let key: ApiKey = locked_row(conn, "api_keys", &new.key_id)?;
            if key.account_id != account.id {
                return Err(StorageError::NotFound(format!("key {:?} of account {:?}", key.id, account.id)).into());
            }
            // A key revoked while this submit waited for its row is refused: the check that let
            // the request in ran before the lock.
            if key.revoked_at.is_some() {
                return Err(SubmitError::Revoked);
            }
            // After the row locks, so a concurrent try of the same request sees this one's record.
            if let Some(claim) = &new.idempotency {
                if let Some(earlier) = idempotency::find(conn, &key.id, claim, now)? {
                    return Err(SubmitError::AlreadySubmitted(earlier));
                }
            }
            if new.input_bytes > 0 {
                let held: i64 = tasks::table
                    .filter(tasks::key_id.eq(&key.id))
                    .filter(tasks::status.eq_any([TaskStatus::Queued.as_str(), TaskStatus::Running.as_str()]))
                    .filter(tasks::input_bytes.gt(0))
                    .select(tasks::input_bytes)
                    .load::<i64>(conn)?
                    .into_iter()
                    .fold(0, i64::saturating_add);
                if held.saturating_add(new.input_bytes) > new.key_input_limit {
                    return Err(SubmitError::InputsOverLimit { held, limit: new.key_input_limit });
                }
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
                expired_at: None,
            };
            diesel::insert_into(tasks::table)
                .values((
                    tasks::id.eq(&record.id),
                    tasks::key_id.eq(&record.key_id),
                    tasks::account_id.eq(&record.account_id),
                    tasks::engine.eq(&record.engine),
                    tasks::job.eq(&record.job),
                    tasks::status.eq(&record.status),
                    tasks::input_bytes.eq(new.input_bytes),
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
                tracking::hold_for_submission(conn, &record.id)?;
            }
            if !webhooks::record_for_task(conn, &record.id, &key.id, &new.webhook)? {
                return Err(SubmitError::NoWebhookSecret);
            }
            ledger_rows::append(conn, &record, "hold", hold.total, hold.from_allowance, now)?;
            if let Some(claim) = &new.idempotency {
                idempotency::record(conn, &key.id, claim, &record.id, now)?;
            }
            // Delivered at commit to every listening worker (see `Database::listen_for_jobs`).
            dialect::notify(conn, JOBS_CHANNEL)?;
            Ok(record)
        })
    }

    /// The task `id` if it belongs to `key_id`, as its owner sees it: every column but the job
    /// itself (`job` is left empty), which can hold megabytes of inputs a poll never shows.
    /// Tasks of other keys are invisible.
    pub fn task_for_key(&self, id: &str, key_id: &str) -> StorageResult<Option<TaskRecord>> {
        self.read(|conn| task_for_key(conn, id, key_id))
    }

    /// The task `id`, whoever owns it (for workers and operators).
    pub fn task(&self, id: &str) -> StorageResult<Option<TaskRecord>> {
        self.read(|conn| tasks::table.find(id).select(TaskRecord::as_select()).first(conn).optional())
    }

    /// Ledger rows of one task, oldest first (for operators and tests).
    pub fn task_ledger(&self, id: &str) -> StorageResult<Vec<crate::LedgerEntry>> {
        self.read(|conn| {
            ledger::table
                .filter(ledger::task_id.eq(id))
                .order(ledger::id.asc())
                .select(crate::LedgerEntry::as_select())
                .load(conn)
        })
    }
}

/// [`Database::task_for_key`] on `conn`.
pub(crate) fn task_for_key(conn: &mut AnyConnection, id: &str, key_id: &str) -> QueryResult<Option<TaskRecord>> {
    Ok(on_native_connection!(conn, |conn| tasks::table
        .find(id)
        .filter(tasks::key_id.eq(key_id))
        .select((
            // A bound empty string, not an SQL literal: diesel never caches the prepared
            // statement of a query holding raw SQL, and this one runs on every poll.
            (tasks::id, tasks::key_id, tasks::account_id, tasks::engine, "".into_sql::<Text>()),
            (tasks::status, tasks::created_at, tasks::updated_at, tasks::started_at, tasks::finished_at),
            (tasks::lease_owner, tasks::lease_expires_at, tasks::attempt, tasks::outputs, tasks::price_units,),
            (tasks::hold_allowance_units, tasks::cost_units, tasks::error, tasks::sandbox, tasks::priority),
            (tasks::result, tasks::failure_kind, tasks::provider, tasks::provider_handle, tasks::provider_callback,),
            (tasks::provider_millis, tasks::provider_cost_units, tasks::expired_at),
        ))
        .first::<PolledColumns>(conn)
        .optional())?
    .map(TaskRecord::from_polled))
}
