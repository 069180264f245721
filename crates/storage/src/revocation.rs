//! Revoking a key: from then on it authenticates nothing, and nothing it queued is billed.

use crate::keys::ApiKey;
use crate::schema::api_keys;
use crate::task_record::TaskRecord;
use crate::{dialect, now_millis, settlement, Database, StorageError, StorageResult};
use diesel::prelude::*;
use domain::FailureKind;

/// Why a job queued by a key that was then revoked did not run.
pub(crate) const REVOKED_KEY_JOB: &str = "cancelled: the API key that queued this job was revoked before it started";

/// A revoked key, and the jobs its revocation cancelled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Revoked {
    /// The key, as revoked.
    pub key: ApiKey,
    /// Ids of the queued jobs cancelled with it.
    pub cancelled: Vec<String>,
}

impl Database {
    /// Revokes a key: it authenticates nothing from now on, and the jobs it queued that have not
    /// started are failed at once with their holds released, so nothing it queued is billed after
    /// its revocation. (Jobs already running finish; those tracked at a provider run there.)
    pub fn revoke_key(&self, key_id: &str) -> StorageResult<Revoked> {
        let now = now_millis();
        let cancelled = self.transaction(|conn| {
            // Lock order account -> key, as every hold and settlement takes them.
            dialect::sql_query(
                conn,
                "SELECT id FROM accounts WHERE id = (SELECT account_id FROM api_keys WHERE id = ?){FOR_UPDATE}",
            )
            .bind::<diesel::sql_types::Text, _>(key_id)
            .execute(conn)?;
            let revoked = diesel::update(api_keys::table.find(key_id).filter(api_keys::revoked_at.is_null()))
                .set(api_keys::revoked_at.eq(now))
                .execute(conn)?;
            let mut cancelled = Vec::new();
            if revoked == 1 {
                let queued: Vec<TaskRecord> = dialect::sql_query(
                    conn,
                    "SELECT * FROM tasks WHERE key_id = ? AND status = 'queued' AND provider IS NULL{FOR_UPDATE}",
                )
                .bind::<diesel::sql_types::Text, _>(key_id)
                .load(conn)?;
                for task in &queued {
                    settlement::settle_failed(conn, task, REVOKED_KEY_JOB, FailureKind::Job, now)?;
                    cancelled.push(task.id.clone());
                }
            }
            Ok::<_, StorageError>(cancelled)
        })?;
        Ok(Revoked { key: self.key(key_id)?, cancelled })
    }
}
