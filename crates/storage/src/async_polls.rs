//! A poll's task read on PostgreSQL without leaving the caller's thread: each thread of an async
//! runtime (an HTTP worker) keeps one connection of its own, opened by `tokio-postgres`, on which
//! the polls it serves are pipelined. The blocking path hands every poll to another thread and
//! back and has up to a pool's worth of connections busy at once; on a loaded machine those
//! hand-offs and the scheduler's time slices made the slowest polls wait ten times the median.
//!
//! Used only where it changes nothing a client can see: the key was verified within the key
//! cache's second (so revocation reaches it exactly as it reaches the blocking path), and the
//! server is on this machine or the URL turns TLS off, since this connection never speaks TLS. A
//! thread's first poll opens its connection in the background and takes the blocking path; a
//! connection found closed is dropped and opened again the same way (one that cannot be opened
//! is tried again five seconds later).

use crate::polls::PollReads;
use crate::task_record::TaskRecord;
use crate::{Backend, Database};
use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::sync::mpsc::{sync_channel, Receiver, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_postgres::{Client, NoTls, Statement};

/// The columns of a poll's task read, in `TaskRecord`'s order, the job left out (it can hold
/// megabytes a poll never shows). By id alone, the owner checked after: a prepared statement that
/// also filtered on the key could be planned once, while the table was small, to walk the key's
/// index, and then read every task of a busy key on each poll.
const TASK_FOR_KEY: &str = "SELECT id, key_id, account_id, engine, status, created_at, updated_at, started_at, \
     finished_at, lease_owner, lease_expires_at, attempt, outputs, price_units, hold_allowance_units, cost_units, \
     error, sandbox, priority, result, failure_kind, provider, provider_handle, provider_callback, provider_millis, \
     provider_cost_units, expired_at FROM tasks WHERE id = $1";

/// A thread's connection to one database, and its prepared task read.
struct ThreadConnection {
    client: Client,
    task_for_key: Statement,
}

/// A thread's connections, by database URL.
#[derive(Default)]
struct ThreadConnections {
    ready: HashMap<String, Arc<ThreadConnection>>,
    /// Being opened, or failed to open.
    opening: HashMap<String, Opening>,
}

/// A thread's connection that is not ready.
enum Opening {
    /// A task of the runtime opens it; it arrives on the channel.
    UnderWay(Receiver<ThreadConnection>),
    /// Opening it failed then: not tried again for [`RETRY_AFTER`].
    FailedAt(Instant),
}

/// How long a thread's connection that could not be opened is left before the next try (polls
/// take the pool meanwhile).
const RETRY_AFTER: Duration = Duration::from_secs(5);

thread_local! {
    static CONNECTIONS: RefCell<ThreadConnections> = RefCell::new(ThreadConnections::default());
}

impl Database {
    /// [`Database::poll_reads`] as a future on this thread's own connection, when that changes
    /// nothing (see the module's text): on PostgreSQL, in a Tokio runtime, with the key verified
    /// in the cache and this thread's connection open. `None` otherwise, and from the future when
    /// the read failed (the connection was lost): the caller then runs [`Database::poll_reads`]
    /// on a blocking thread.
    pub fn poll_reads_async(
        &self,
        secret_hash: &str,
        task_id: Option<&str>,
    ) -> Option<impl Future<Output = Option<PollReads>> + 'static> {
        if self.backend() != Backend::Postgres || !self.async_polls_allowed() {
            return None;
        }
        let key = self.key_cache.get(secret_hash)?;
        let connection = thread_connection(&self.url)?;
        let task_id = task_id.map(str::to_string);
        Some(async move {
            let task = match task_id {
                Some(id) => match read_task(&connection, &id, &key.key_id).await {
                    Ok(task) => task,
                    Err(error) => {
                        tracing::warn!(%error, "a poll's read on the thread's connection failed; retried on the pool");
                        return None;
                    }
                },
                None => None,
            };
            Some(PollReads { key: Some(key), task })
        })
    }

    /// Whether this connection may be opened without TLS where the blocking path would use it:
    /// the server is on this machine, or the URL turns TLS off.
    fn async_polls_allowed(&self) -> bool {
        crate::connection::is_local_server(&self.url) || self.url.contains("sslmode=disable")
    }
}

/// This thread's open connection to `url`; when there is none, starts opening one (if this
/// thread runs a Tokio runtime) and answers `None`.
fn thread_connection(url: &str) -> Option<Arc<ThreadConnection>> {
    CONNECTIONS.with(|cell| {
        let mut connections = cell.borrow_mut();
        if let Some(connection) = connections.ready.get(url) {
            if !connection.client.is_closed() {
                return Some(connection.clone());
            }
            connections.ready.remove(url);
        }
        match connections.opening.get(url) {
            Some(Opening::UnderWay(arrives)) => match arrives.try_recv() {
                Ok(connection) => {
                    connections.opening.remove(url);
                    let connection = Arc::new(connection);
                    connections.ready.insert(url.to_string(), connection.clone());
                    return Some(connection);
                }
                Err(TryRecvError::Empty) => return None,
                Err(TryRecvError::Disconnected) => {
                    connections.opening.insert(url.to_string(), Opening::FailedAt(Instant::now()));
                    return None;
                }
            },
            Some(Opening::FailedAt(at)) if at.elapsed() < RETRY_AFTER => return None,
            _ => {}
        }
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        let config: tokio_postgres::Config = url.parse().ok()?;
        let (opened, arrives) = sync_channel(1);
        connections.opening.insert(url.to_string(), Opening::UnderWay(arrives));
        // The connection's own task runs on the runtime that opened it: on an HTTP worker's
        // single-threaded runtime, this thread.
        let spawner = runtime.clone();
        runtime.spawn(async move {
            let result = async {
                let (client, connection) = config.connect(NoTls).await?;
                spawner.spawn(connection);
                let task_for_key = client.prepare(TASK_FOR_KEY).await?;
                Ok::<_, tokio_postgres::Error>(ThreadConnection { client, task_for_key })
            }
            .await;
            match result {
                Ok(connection) => {
                    let _ = opened.try_send(connection);
                }
                Err(error) => tracing::warn!(%error, "cannot open a thread's connection for polls"),
            }
        });
        None
    })
}

async fn read_task(
    connection: &ThreadConnection,
    id: &str,
    key_id: &str,
) -> Result<Option<TaskRecord>, tokio_postgres::Error> {
    let row = connection.client.query_opt(&connection.task_for_key, &[&id]).await?;
    let task = row.map(|row| task_from_row(&row)).transpose()?;
    Ok(task.filter(|task| task.key_id == key_id))
}

fn task_from_row(row: &tokio_postgres::Row) -> Result<TaskRecord, tokio_postgres::Error> {
    Ok(TaskRecord {
        id: row.try_get(0)?,
        key_id: row.try_get(1)?,
        account_id: row.try_get(2)?,
        engine: row.try_get(3)?,
        job: String::new(),
        status: row.try_get(4)?,
        created_at: row.try_get(5)?,
        updated_at: row.try_get(6)?,
        started_at: row.try_get(7)?,
        finished_at: row.try_get(8)?,
        lease_owner: row.try_get(9)?,
        lease_expires_at: row.try_get(10)?,
        attempt: row.try_get(11)?,
        outputs: row.try_get(12)?,
        price_units: row.try_get(13)?,
        hold_allowance_units: row.try_get(14)?,
        cost_units: row.try_get(15)?,
        error: row.try_get(16)?,
        sandbox: row.try_get(17)?,
        priority: row.try_get(18)?,
        result: row.try_get(19)?,
        failure_kind: row.try_get(20)?,
        provider: row.try_get(21)?,
        provider_handle: row.try_get(22)?,
        provider_callback: row.try_get(23)?,
        provider_millis: row.try_get(24)?,
        provider_cost_units: row.try_get(25)?,
        expired_at: row.try_get(26)?,
    })
}
