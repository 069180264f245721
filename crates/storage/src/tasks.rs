//! Tasks: creating one together with its billing hold, and reading it back.

use crate::connection::{on_native_connection, AnyConnection, Backend};
use crate::group_commit::GroupCommit;
use crate::schema::{ledger, tasks};
use crate::submission::{self, NewTask, SubmitError};
use crate::task_record::{PolledColumns, TaskRecord};
use crate::{Database, StorageError, StorageResult};
use diesel::prelude::*;
use diesel::sql_types::Text;
use std::sync::LazyLock;

/// Submits waiting to share a transaction, per pool and account (see `group_commit`).
static SUBMITS: LazyLock<GroupCommit<NewTask, Result<TaskRecord, SubmitError>>> = LazyLock::new(GroupCommit::default);

impl Database {
    /// Creates a queued task and places its hold, in one transaction: the key's cap and the
    /// account's allowance are checked and reserved under row locks, so concurrent submits can
    /// never together pass a limit. Concurrent submits of one account share that transaction
    /// (see `group_commit`): each is checked as if it ran alone after the ones before it.
    pub fn submit_task(&self, new: &NewTask) -> Result<TaskRecord, SubmitError> {
        let group = format!("{}/{}", self.instance, new.account_id);
        SUBMITS.run(
            &group,
            new.clone(),
            |batch, start_next| self.submit_in_turn(&batch, start_next),
            || Err(StorageError::Interrupted("the submit's transaction ended without an answer".into()).into()),
        )
    }

    /// Creates several tasks of one account in one transaction, in order: each is checked (and
    /// refused, or held) as [`Database::submit_task`] would check it after the ones before it,
    /// and the results come back in the same order. When the transaction fails as a whole (a
    /// statement's error), each submit runs again in its own, so one cannot fail the others;
    /// when the database cannot be reached, each is told so.
    pub fn submit_tasks(&self, batch: &[NewTask]) -> Vec<Result<TaskRecord, SubmitError>> {
        self.submit_in_turn(batch, &|| {})
    }

    /// [`Database::submit_tasks`], calling `start_next` on PostgreSQL once the batch has only its
    /// commit left: the next batch of the account may start meanwhile and wait for the rows at
    /// the database (see `group_commit`). SQLite has one writer at a time, where a second
    /// transaction would only wait out its busy timeout.
    fn submit_in_turn(&self, batch: &[NewTask], start_next: &dyn Fn()) -> Vec<Result<TaskRecord, SubmitError>> {
        let in_transaction = |batch: &[NewTask]| {
            self.transaction(|conn| {
                let results = submission::submit_batch(conn, batch)?;
                if conn.backend() == Backend::Postgres {
                    start_next();
                }
                Ok::<_, StorageError>(results)
            })
        };
        let alone = |new: &NewTask| match in_transaction(std::slice::from_ref(new)) {
            Ok(mut results) => results.pop().unwrap_or_else(|| {
                Err(StorageError::Interrupted("the submit's transaction gave no answer".into()).into())
            }),
            Err(error) => Err(error.into()),
        };
        if batch.len() == 1 {
            return batch.iter().map(alone).collect();
        }
        match in_transaction(batch) {
            Ok(results) => results,
            // The database cannot be reached: every submit is told so at once. Running each
            // again would make the last wait out as many connection timeouts as there are
            // submits before it.
            Err(error) if error.is_unavailable() => {
                let shown = error.to_string();
                batch.iter().map(|_| Err(StorageError::Unavailable(shown.clone()).into())).collect()
            }
            Err(_) => batch.iter().map(alone).collect(),
        }
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

/// A poll's read of task `$id`: every column but the job itself (read as an empty string), by id
/// alone, its owner checked by the caller. Written once for the pooled read
/// ([`task_for_key`]) and the PostgreSQL thread's connection ([`polled_task_postgres_sql`]).
/// Not filtered on the key: a prepared statement that also filtered on it could be planned once,
/// while the table was small, to walk the key's index, and then read every task of a busy key on
/// each poll.
macro_rules! polled_task {
    ($id:expr) => {
        tasks::table.find($id).select(polled_columns!())
    };
}

/// The columns of a poll's task read, as [`crate::task_record::PolledColumns`] holds them.
macro_rules! polled_columns {
    () => {
        (
            // A bound empty string, not an SQL literal: diesel never caches the prepared
            // statement of a query holding raw SQL, and this one runs on every poll.
            (tasks::id, tasks::key_id, tasks::account_id, tasks::engine, "".into_sql::<Text>()),
            (tasks::status, tasks::created_at, tasks::updated_at, tasks::started_at, tasks::finished_at),
            (tasks::lease_owner, tasks::lease_expires_at, tasks::attempt, tasks::outputs, tasks::price_units),
            (tasks::hold_allowance_units, tasks::cost_units, tasks::error, tasks::sandbox, tasks::priority),
            (tasks::result, tasks::failure_kind, tasks::provider, tasks::provider_handle, tasks::provider_callback),
            (tasks::provider_millis, tasks::provider_cost_units, tasks::expired_at),
        )
    };
}
pub(crate) use polled_columns;

/// [`Database::task_for_key`] on `conn`.
pub(crate) fn task_for_key(conn: &mut AnyConnection, id: &str, key_id: &str) -> QueryResult<Option<TaskRecord>> {
    let polled = on_native_connection!(conn, |conn| polled_task!(id).first::<PolledColumns>(conn).optional())?;
    Ok(polled.map(TaskRecord::from_polled).filter(|task| task.key_id == key_id))
}

/// The SQL of a poll's task read as PostgreSQL runs it: `$1` is the empty string read in place of
/// the job, `$2` the task's id; its rows are [`PolledColumns`].
pub(crate) fn polled_task_postgres_sql() -> QueryResult<String> {
    use diesel::query_builder::{QueryBuilder, QueryFragment};
    let mut builder = diesel::pg::PgQueryBuilder::default();
    QueryFragment::<diesel::pg::Pg>::to_sql(&polled_task!(""), &mut builder, &diesel::pg::Pg)?;
    Ok(builder.finish())
}
