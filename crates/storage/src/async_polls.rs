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
use crate::task_record::{PolledColumns, TaskRecord};
use crate::{Backend, Database};
use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::sync::mpsc::{sync_channel, Receiver, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_postgres::{Client, NoTls, Statement};

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
        let sql = crate::tasks::polled_task_postgres_sql().ok()?;
        let (opened, arrives) = sync_channel(1);
        connections.opening.insert(url.to_string(), Opening::UnderWay(arrives));
        // The connection's own task runs on the runtime that opened it: on an HTTP worker's
        // single-threaded runtime, this thread.
        let spawner = runtime.clone();
        runtime.spawn(async move {
            let result = async {
                let (client, connection) = config.connect(NoTls).await?;
                spawner.spawn(connection);
                let task_for_key = client.prepare(&sql).await?;
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
    let row = connection.client.query_opt(&connection.task_for_key, &[&"", &id]).await?;
    let task = row.map(|row| polled_columns(&row)).transpose()?.map(TaskRecord::from_polled);
    Ok(task.filter(|task| task.key_id == key_id))
}

/// A row of the poll's task read, in the columns' order.
fn polled_columns(row: &tokio_postgres::Row) -> Result<PolledColumns, tokio_postgres::Error> {
    Ok((
        (row.try_get(0)?, row.try_get(1)?, row.try_get(2)?, row.try_get(3)?, row.try_get(4)?),
        (row.try_get(5)?, row.try_get(6)?, row.try_get(7)?, row.try_get(8)?, row.try_get(9)?),
        (row.try_get(10)?, row.try_get(11)?, row.try_get(12)?, row.try_get(13)?, row.try_get(14)?),
        (row.try_get(15)?, row.try_get(16)?, row.try_get(17)?, row.try_get(18)?, row.try_get(19)?),
        (row.try_get(20)?, row.try_get(21)?, row.try_get(22)?, row.try_get(23)?, row.try_get(24)?),
        (row.try_get(25)?, row.try_get(26)?, row.try_get(27)?),
    ))
}
