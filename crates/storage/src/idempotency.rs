//! Idempotency keys: the task each key's spending request created, looked up and recorded inside
//! the submit transaction, so two tries of one request (even on two api-servers at once) create one
//! task between them.

use crate::connection::AnyConnection;
use crate::schema::idempotency_keys;
use crate::{Database, StorageResult};
use diesel::prelude::*;
use domain::idempotency::WINDOW_MILLIS;

/// A submit's idempotency key and the fingerprint of its request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdempotencyClaim {
    /// The key the client sent.
    pub key: String,
    /// `domain::idempotency::fingerprint` of the request.
    pub request_hash: String,
}

/// The task an earlier request under the same key created.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EarlierRequest {
    /// Its task.
    pub task_id: String,
    /// Whether it was the same request (endpoint and body).
    pub same_request: bool,
}

/// The live (younger than the window) use of `claim`'s key by `key_id`, if any; an expired one is
/// removed, so the key names a new request.
pub(crate) fn find(
    conn: &mut AnyConnection,
    key_id: &str,
    claim: &IdempotencyClaim,
    now: i64,
) -> QueryResult<Option<EarlierRequest>> {
    let row: Option<(String, String, i64)> = idempotency_keys::table
        .find((key_id, &claim.key))
        .select((idempotency_keys::request_hash, idempotency_keys::task_id, idempotency_keys::created_at))
        .first(conn)
        .optional()?;
    match row {
        Some((request_hash, task_id, created_at)) if now - created_at < WINDOW_MILLIS => {
            Ok(Some(EarlierRequest { task_id, same_request: request_hash == claim.request_hash }))
        }
        Some(_) => {
            diesel::delete(idempotency_keys::table.find((key_id, &claim.key))).execute(conn)?;
            Ok(None)
        }
        None => Ok(None),
    }
}

impl Database {
    /// Removes the idempotency keys recorded before `cutoff` (Unix milliseconds); returns how many.
    pub fn forget_idempotency_keys_before(&self, cutoff: i64) -> StorageResult<usize> {
        self.read(|conn| {
            diesel::delete(idempotency_keys::table.filter(idempotency_keys::created_at.lt(cutoff))).execute(conn)
        })
    }
}
