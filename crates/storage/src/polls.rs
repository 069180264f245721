//! A poll's reads: the caller's key and its task. A poll is the commonest request, so on SQLite
//! its reads run on the caller's own thread whenever that costs no waiting, as one statement.

use crate::connection::{on_native_connection, AnyConnection};
use crate::key_cache::AuthenticatedKey;
use crate::keys::{use_record_due, LiveKey, LiveKeyColumns, LIVE_KEY_COLUMNS};
use crate::schema::{api_keys, tasks};
use crate::task_record::{PolledColumns, TaskRecord};
use crate::tasks::polled_columns;
use crate::{now_millis, Backend, Database, StorageResult};
use diesel::prelude::*;
use diesel::sql_types::Text;

/// What a poll reads.
#[derive(Clone, Debug)]
pub struct PollReads {
    /// The live key behind the presented secret, if any.
    pub key: Option<AuthenticatedKey>,
    /// The task asked for, if the key was found and owns it.
    pub task: Option<TaskRecord>,
}

impl Database {
    /// The live key behind `secret_hash` (as [`Database::authenticate`] finds it) and, when it is
    /// found and `task_id` is given, its task `task_id` (as [`Database::task_for_key`] reads it).
    /// Blocking: async callers run it on a blocking thread.
    pub fn poll_reads(&self, secret_hash: &str, task_id: Option<&str>) -> StorageResult<PollReads> {
        let key = self.authenticate(secret_hash)?;
        let task = match (&key, task_id) {
            (Some(key), Some(id)) => self.task_for_key(id, &key.key_id)?,
            _ => None,
        };
        Ok(PollReads { key, task })
    }

    /// [`Database::poll_reads`] answered from memory, reading nothing: when the key is verified in
    /// this process's cache of keys ([`Database::cache_verified_keys`]) and its task `task_id` has
    /// ended and is kept ([`Database::cache_ended_tasks`]) or, on SQLite, is still queued or
    /// running and unchanged since a poll read it (`live_tasks`). `None` otherwise.
    pub fn poll_reads_in_memory(&self, secret_hash: &str, task_id: Option<&str>) -> Option<PollReads> {
        let key = self.key_cache.get(secret_hash)?;
        let id = task_id?;
        let task = self.ended_tasks.get(id, &key.key_id).or_else(|| self.live_tasks.as_ref()?.get(id, &key.key_id))?;
        Some(PollReads { key: Some(key), task: Some(task) })
    }

    /// Keeps the task a poll just read, if it has ended, for [`Database::poll_reads_in_memory`]
    /// (which answers only with the key verified in memory: nothing is kept while keys are not).
    pub fn keep_polled_task(&self, reads: &PollReads) {
        if !self.key_cache.is_active() {
            return;
        }
        if let Some(task) = &reads.task {
            self.ended_tasks.keep(task, now_millis());
        }
    }

    /// Starts keeping the ended tasks polls read (see [`Database::poll_reads_in_memory`]); the
    /// retention sweeper expires a task `retention` after its end (`None`: never), and no task is
    /// kept within two minutes of that.
    pub fn cache_ended_tasks(&self, retention: Option<std::time::Duration>) {
        self.ended_tasks.start(retention);
    }

    /// [`Database::poll_reads`] on the caller's thread, when that blocks on nothing: on SQLite, with
    /// a connection idle in the pool and the key's use not due to be recorded (a write, which could
    /// wait for another writer), the reads take microseconds, in one statement, and are done at
    /// once. `None` otherwise, and on PostgreSQL (whose reads are round trips to its server): the
    /// caller then runs [`Database::poll_reads`] on a blocking thread.
    pub fn poll_reads_at_once(&self, secret_hash: &str, task_id: Option<&str>) -> Option<StorageResult<PollReads>> {
        if self.backend() != Backend::Sqlite {
            return None;
        }
        let (generation, read_at) = (self.key_cache.generation(), std::time::Instant::now());
        // Noted before the read, so that a change committed after it is seen (see `live_tasks`).
        let live_counted = self.live_tasks.as_ref().zip(task_id).map(|(live, id)| (live, live.count_of(id)));
        let reads = self.read_if_idle(|conn| {
            let Some((found, task)) = live_key_and_task(conn, secret_hash, task_id)? else {
                return Ok(Some(PollReads { key: None, task: None }));
            };
            if use_record_due(found.last_used_at, now_millis()) {
                return Ok(None);
            }
            if let Some(generation) = generation {
                self.key_cache.insert(secret_hash, &found.key, generation, read_at);
                if let (Some((live, counted)), Some(task)) = (live_counted, &task) {
                    live.keep(task, counted);
                }
            }
            Ok(Some(PollReads { key: Some(found.key), task }))
        })?;
        reads.transpose()
    }
}

/// The live key behind `secret_hash` and, when `task_id` is given, its task `task_id`, in one
/// statement: one read transaction where two would each take and drop SQLite's shared lock. The
/// task is joined on its id and its owner, so another key's task is never read.
fn live_key_and_task(
    conn: &mut AnyConnection,
    secret_hash: &str,
    task_id: Option<&str>,
) -> diesel::QueryResult<Option<(LiveKey, Option<TaskRecord>)>> {
    // No task asked for: an id no task has (ids are never empty) keeps the one prepared statement.
    let task_id = task_id.unwrap_or_default();
    let found: Option<(LiveKeyColumns, Option<PolledColumns>)> = on_native_connection!(conn, |conn| api_keys::table
        .left_join(tasks::table.on(tasks::id.eq(task_id).and(tasks::key_id.eq(api_keys::id))))
        .filter(api_keys::secret_hash.eq(secret_hash))
        .filter(api_keys::revoked_at.is_null())
        .select((LIVE_KEY_COLUMNS, polled_columns!().nullable()))
        .first(conn)
        .optional())?;
    Ok(found.map(|(key, task)| (LiveKey::from_columns(key), task.map(TaskRecord::from_polled))))
}
