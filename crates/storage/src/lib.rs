//! Persistence of the service: accounts, API keys, tasks (which double as the job queue), the
//! billing ledger, completion webhooks, the connector's OAuth clients and tokens and the developer
//! console's logins and sessions, over SQLite (the embedded
//! default) or PostgreSQL, chosen by the database URL.
//!
//! Every operation is a plain function over one connection type for both backends (diesel's
//! `MultiConnection`), written once against diesel's query builder. The few statements diesel
//! cannot render for both (the database's clock, row locks, `SKIP LOCKED`) are written once in SQL
//! and rendered per backend by one module, `dialect`. Calls are blocking: async callers run them on
//! a blocking thread.

mod accounts;
mod async_polls;
mod balances;
mod cancellation;
mod connection;
mod console;
mod dialect;
mod ended_tasks;
mod endings;
mod figures;
mod group_commit;
mod idempotency;
mod kept_tasks;
mod key_cache;
mod keys;
mod ledger;
mod listener;
mod live_tasks;
mod oauth;
mod polls;
mod queue;
mod rate_limits;
mod retention;
mod revocation;
mod schema;
mod settings;
mod settlement;
mod shared_counts;
mod submission;
mod submission_writes;
mod task_record;
mod tasks;
#[cfg(feature = "test-support")]
pub mod test_support;
mod tracking;
mod verification;
mod webhooks;

pub use accounts::Account;
pub use cancellation::{Cancellation, CANCELLED_BY_CLIENT};
pub use connection::{Backend, Database};
pub use console::{AttemptRefused, DailySpend, GrowingDelay, InviteError, Login, SessionRecord};
pub use figures::OperatingFigures;
pub use group_commit::MAX_BATCH as ENDS_PER_COMMIT;
pub use idempotency::{EarlierRequest, IdempotencyClaim};
pub use key_cache::AuthenticatedKey;
pub use keys::{ApiKey, NewKeySecret};
pub use ledger::{LedgerEntry, LedgerMismatch, Usage};
pub use listener::Listener;
pub use oauth::{token_kind, AgentConnection, AgentGrant, CodeRecord, NewToken, OAuthClient, Redemption, RefreshGrant};
pub use polls::PollReads;
pub use queue::{ClaimedTask, RunningShares};
pub use revocation::Revoked;
pub use settlement::Success;
pub use submission::{NewTask, SubmitError};
pub use task_record::TaskRecord;
pub use tracking::{ProviderMargin, SUBMISSION_WINDOW_MS};
pub use verification::{AllowanceGrant, LinkPurpose, Verified};
pub use webhooks::{
    delivery_status, AttemptResult, DeliveriesOf, KeyWebhook, WebhookAttempt, WebhookChoice, WebhookDelivery,
    PREVIOUS_SECRET_GRACE_MS, UNRECORDED_ATTEMPT,
};

/// A failure of the storage layer.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// The database URL is not one we can use.
    #[error("unsupported database URL scheme {0:?}: use sqlite://PATH or postgres://...")]
    UnsupportedUrl(String),
    /// No connection could be had from the pool.
    #[error("database unavailable: {0}")]
    Pool(#[from] r2d2::Error),
    /// Connecting failed.
    #[error("cannot connect to the database: {0}")]
    Connect(#[from] diesel::ConnectionError),
    /// A query failed.
    #[error("database error: {0}")]
    Query(#[from] diesel::result::Error),
    /// Applying migrations failed.
    #[error("database migration failed: {0}")]
    Migration(String),
    /// A named account or key does not exist.
    #[error("{0} not found")]
    NotFound(String),
    /// A unique name is taken.
    #[error("{0} already exists")]
    AlreadyExists(String),
    /// The database could not be reached for a batch of work that shared one attempt (see
    /// `Database::submit_tasks`); each part of the batch gets this, with the original error.
    #[error("database unavailable: {0}")]
    Unavailable(String),
    /// A transaction's outcome was lost (the thread running it failed): whether it committed is
    /// not known here.
    #[error("database error: {0}")]
    Interrupted(String),
    /// Stored data could not be read back.
    #[error("corrupt stored data: {0}")]
    Corrupt(String),
}

impl StorageError {
    /// Whether the database could not be reached (no pool connection, a failed connect, a
    /// connection closed under a query): a condition to retry, not a fault of the request.
    pub fn is_unavailable(&self) -> bool {
        match self {
            StorageError::Pool(_) | StorageError::Connect(_) | StorageError::Unavailable(_) => true,
            StorageError::Query(error) => is_connection_loss(error),
            _ => false,
        }
    }
}

/// Whether `error` says the connection it ran on is gone: closed under the query, or cut by the
/// server (a restart, a failover, an administrator).
pub(crate) fn is_connection_loss(error: &diesel::result::Error) -> bool {
    use diesel::result::{DatabaseErrorKind, Error};
    match error {
        Error::DatabaseError(DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand, _) => true,
        // A commit or rollback that failed on a connection cut under it leaves diesel unsure of
        // the transaction's state; the pool discards such a connection (`is_broken`).
        Error::BrokenTransactionManager => true,
        Error::DatabaseError(_, info) => {
            // PostgreSQL reports an administrator or failover cutting sessions as 57P01-class
            // errors; libpq words them this way.
            let message = info.message();
            message.contains("terminating connection") || message.contains("server closed the connection")
        }
        _ => false,
    }
}

/// Result of storage operations.
pub type StorageResult<T> = Result<T, StorageError>;

/// The current time in Unix milliseconds, the unit of every stored timestamp.
pub fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A new identifier with a readable prefix, such as `task_019afc3e5d2a00c1e87f94b2`: 24 hex
/// digits, of which the first 12 are the time in Unix milliseconds, the next 4 a count of this
/// process's ids and the last 8 random.
///
/// Ids sort in the order they were made within a process (but for the one millisecond in 65,536
/// ids where the count wraps): tasks created in the same millisecond (a batch of submits shares
/// its creation time) are taken from the queue by id after their time, so a key's jobs start in
/// the order they were submitted. Ids are names, not secrets: every read of a task checks the
/// key that created it, and nothing that must be unguessable is named by one.
pub fn new_id(prefix: &str) -> String {
    use rand::Rng;
    use std::sync::atomic::{AtomicU16, Ordering};
    static MADE: AtomicU16 = AtomicU16::new(0);
    let millis = now_millis().clamp(0, 0xffff_ffff_ffff);
    let made = MADE.fetch_add(1, Ordering::Relaxed);
    let random: u32 = rand::thread_rng().gen();
    format!("{prefix}_{millis:012x}{made:04x}{random:08x}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_sort_in_the_order_they_are_made() {
        let ids: Vec<String> = (0..5000).map(|_| super::new_id("task")).collect();
        assert!(ids.windows(2).all(|pair| pair[0] < pair[1]), "made in order, sorted in order");
        assert!(ids.iter().all(|id| id.len() == "task_".len() + 24 && id[5..].bytes().all(|b| b.is_ascii_hexdigit())));
        let random: std::collections::HashSet<&str> = ids.iter().map(|id| &id[21..]).collect();
        assert!(random.len() > 4990, "the last 8 digits are random");
    }
}
