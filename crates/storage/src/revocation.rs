//! Revoking a key: from then on it authenticates nothing, and nothing it queued is billed.

use crate::balances;
use crate::keys::ApiKey;
use crate::schema::api_keys;
use crate::task_record::TaskRecord;
use crate::{dialect, now_millis, settlement, Database, StorageError, StorageResult};
use diesel::prelude::*;
use domain::TaskStatus;

/// Why a job queued by a key that was then revoked did not run.
pub(crate) const REVOKED_KEY_JOB: &str = "cancelled: the API key that queued this job was revoked before it started";
/// Why a job that was running (here or at a provider) when its key was revoked was stopped.
pub(crate) const REVOKED_KEY_RUNNING_JOB: &str = "cancelled: the API key that queued this job was revoked while it ran";

/// A revoked key, and the jobs its revocation cancelled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Revoked {
    /// The key, as revoked.
    pub key: ApiKey,
    /// Ids of the jobs cancelled with it (queued, running, or at a provider).
    pub cancelled: Vec<String>,
    /// The provider handles (as stored) of the cancelled jobs a provider was running, to be
    /// cancelled there too.
    pub upstream: Vec<String>,
}

impl Database {
    /// Revokes a key: it authenticates nothing from now on, and every unfinished job it queued is
    /// failed at once with its hold released, so nothing it queued is billed after its revocation.
    /// A job running here loses its attempt (its worker's lease renewal fails, and the worker
    /// stops its process); one at a provider is returned in [`Revoked::upstream`] to be cancelled
    /// there.
    pub fn revoke_key(&self, key_id: &str) -> StorageResult<Revoked> {
        let now = now_millis();
        let cancelled = self.changing_key(|conn| {
            // Lock order account -> key, as every submit takes them.
            dialect::sql_query(
                conn,
                "SELECT id FROM accounts WHERE id = (SELECT account_id FROM api_keys WHERE id = ?){FOR_UPDATE}",
            )
            .bind::<diesel::sql_types::Text, _>(key_id)
            .execute(conn)?;
            let revoked = diesel::update(api_keys::table.find(key_id).filter(api_keys::revoked_at.is_null()))
                .set(api_keys::revoked_at.eq(now))
                .execute(conn)?;
            let (mut cancelled, mut upstream) = (Vec::new(), Vec::new());
            if revoked == 1 {
                let unfinished: Vec<TaskRecord> = dialect::sql_query(
                    conn,
                    "SELECT * FROM tasks WHERE key_id = ? AND status IN ('queued', 'running') ORDER BY id{FOR_UPDATE}",
                )
                .bind::<diesel::sql_types::Text, _>(key_id)
                .load(conn)?;
                for task in &unfinished {
                    let started = task.status == TaskStatus::Running.as_str() || task.provider_handle.is_some();
                    let why = if started { REVOKED_KEY_RUNNING_JOB } else { REVOKED_KEY_JOB };
                    upstream.extend(settlement::cancel_unfinished(conn, task, why, now)?.upstream);
                    cancelled.push(task.id.clone());
                }
            }
            // With the account held, what its settlements moved (these cancellations' included) is
            // added into the rows: an account whose last key this was may never submit again.
            let account_id: Option<String> =
                api_keys::table.find(key_id).select(api_keys::account_id).first(conn).optional()?;
            if let Some(account_id) = account_id {
                balances::add_in(conn, &account_id)?;
            }
            Ok::<_, StorageError>(((cancelled, upstream), revoked == 1))
        })?;
        let (cancelled, upstream) = cancelled;
        Ok(Revoked { key: self.key(key_id)?, cancelled, upstream })
    }
}
