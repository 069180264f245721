//! A poll's reads: the caller's key and its task. A poll is the commonest request, so on SQLite
//! its reads run on the caller's own thread whenever that costs no waiting.

use crate::key_cache::AuthenticatedKey;
use crate::keys::{live_key, use_record_due};
use crate::task_record::TaskRecord;
use crate::tasks::task_for_key;
use crate::{now_millis, Backend, Database, StorageResult};

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

    /// [`Database::poll_reads`] on the caller's thread, when that blocks on nothing: on SQLite, with
    /// a connection idle in the pool and the key's use not due to be recorded (a write, which could
    /// wait for another writer), the two reads take microseconds and are done at once. `None`
    /// otherwise, and on PostgreSQL (whose reads are round trips to its server): the caller then
    /// runs [`Database::poll_reads`] on a blocking thread.
    pub fn poll_reads_at_once(&self, secret_hash: &str, task_id: Option<&str>) -> Option<StorageResult<PollReads>> {
        if self.backend() != Backend::Sqlite {
            return None;
        }
        let reads = self.read_if_idle(|conn| {
            let Some(found) = live_key(conn, secret_hash)? else {
                return Ok(Some(PollReads { key: None, task: None }));
            };
            if use_record_due(found.last_used_at, now_millis()) {
                return Ok(None);
            }
            let task = match task_id {
                Some(id) => task_for_key(conn, id, &found.key.key_id)?,
                None => None,
            };
            Ok(Some(PollReads { key: Some(found.key), task }))
        })?;
        reads.transpose()
    }
}
