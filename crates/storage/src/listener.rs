//! Wake-ups across processes on PostgreSQL: every accepted job sends `NOTIFY media_jobs`, every
//! finished task `NOTIFY media_tasks_finished` and every key change `NOTIFY media_keys_changed` at
//! commit, and a listener thread turns notifications into a callback, so idle workers start at
//! once, a waiting synchronous request answers at once instead of at its next poll, and a revoked
//! key is forgotten by every api-server's cache of verified keys.
//!
//! The listening connection is libpq's own (through `pq-sys`, which diesel links already): diesel
//! can only look for notifications already received, so a diesel listener must wake up on a timer,
//! while here the thread sleeps in `poll(2)` on the connection's socket and runs the callback the
//! moment a notification arrives.

use crate::key_cache::KEYS_CHANNEL;
use crate::{Backend, Database};
use std::ffi::{CStr, CString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Where every accepted job is announced.
pub(crate) const JOBS_CHANNEL: &str = "media_jobs";
/// Where every finished task is announced.
pub(crate) const FINISHED_CHANNEL: &str = "media_tasks_finished";

/// How long the listener sleeps on its socket before it looks at its stop flag.
const READ_INTERVAL: Duration = Duration::from_millis(50);
/// Pause before reconnecting after the listening connection broke.
const RECONNECT_DELAY: Duration = Duration::from_secs(1);

/// What a listener thread tells its callback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ListenEvent {
    /// The connection listens (again): anything may have happened while it did not.
    Connected,
    /// A notification arrived.
    Notified,
    /// The connection was lost, or the listener is stopping; nothing is heard until `Connected`.
    Lost,
}

/// A running listener; it stops when dropped.
pub struct Listener {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// What a listener without a thread (SQLite's count of key changes) undoes when dropped.
    on_drop: Option<Box<dyn FnOnce() + Send + Sync>>,
}
impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wait for the thread (it checks the flag every few milliseconds), so that no database
        // call is still running when the process exits.
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        if let Some(on_drop) = self.on_drop.take() {
            on_drop();
        }
    }
}

impl Database {
    /// On PostgreSQL, starts a thread with its own connection that calls `on_job` whenever a job is
    /// accepted by any process. On SQLite (one process) there is nothing to listen to: `None`.
    pub fn listen_for_jobs(&self, on_job: impl Fn() + Send + 'static) -> Option<Listener> {
        self.listen(JOBS_CHANNEL, move |event| {
            if event != ListenEvent::Lost {
                on_job()
            }
        })
    }

    /// On PostgreSQL, starts a thread with its own connection that calls `on_finished` whenever any
    /// process finishes a task (succeeded or failed). On SQLite: `None`.
    pub fn listen_for_finished_tasks(&self, on_finished: impl Fn() + Send + 'static) -> Option<Listener> {
        self.listen(FINISHED_CHANNEL, move |event| {
            if event != ListenEvent::Lost {
                on_finished()
            }
        })
    }

    /// Starts keeping this process's cache of verified keys true to the database (see
    /// `key_cache`): keys are cached until the listener is dropped and forgotten whenever any
    /// process changes one. On PostgreSQL a thread listens for the changes, and nothing is cached
    /// while its connection is down; on SQLite the cache watches the database's shared count of
    /// key changes (`None` if it could not be mapped: then nothing is cached).
    pub fn cache_verified_keys(&self) -> Option<Listener> {
        let cache = self.key_cache.clone();
        if self.backend() == Backend::Sqlite {
            cache.watch(self.key_epoch.clone()?);
            return Some(Listener {
                stop: Arc::new(AtomicBool::new(true)),
                thread: None,
                on_drop: Some(Box::new(move || cache.set_listening(false))),
            });
        }
        self.listen(KEYS_CHANNEL, move |event| match event {
            ListenEvent::Connected => cache.set_listening(true),
            ListenEvent::Notified => cache.forget_all(),
            ListenEvent::Lost => cache.set_listening(false),
        })
    }

    fn listen(&self, channel: &'static str, on_event: impl Fn(ListenEvent) + Send + 'static) -> Option<Listener> {
        if self.backend() != Backend::Postgres {
            return None;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let (url, flag) = (self.url.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name(format!("listen-{channel}"))
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    let listened = listen(&url, channel, &flag, &on_event);
                    on_event(ListenEvent::Lost);
                    if let Err(e) = listened {
                        tracing::warn!(error = %e, channel, "listener lost its connection; reconnecting");
                        let retry_at = std::time::Instant::now() + RECONNECT_DELAY;
                        while !flag.load(Ordering::Relaxed) && std::time::Instant::now() < retry_at {
                            std::thread::sleep(READ_INTERVAL);
                        }
                    }
                }
            })
            .ok()?;
        Some(Listener { stop, thread: Some(thread), on_drop: None })
    }
}

fn listen(url: &str, channel: &str, stop: &AtomicBool, on_event: &impl Fn(ListenEvent)) -> Result<(), ListenError> {
    let mut conn = ListeningConnection::open(&crate::connection::postgres_url(url), channel)?;
    on_event(ListenEvent::Connected);
    while !stop.load(Ordering::Relaxed) {
        if conn.wait(READ_INTERVAL)? {
            on_event(ListenEvent::Notified);
        }
    }
    Ok(())
}

/// Why the listening connection was lost (it is opened again after [`RECONNECT_DELAY`]).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct ListenError(String);

/// A libpq connection that has run `LISTEN` on one channel; closed on drop.
struct ListeningConnection(std::ptr::NonNull<pq_sys::PGconn>);

// The connection is used by the one thread that owns it.
unsafe impl Send for ListeningConnection {}

impl ListeningConnection {
    fn open(url: &str, channel: &str) -> Result<ListeningConnection, ListenError> {
        let url = CString::new(url).map_err(|_| ListenError("the database URL holds a NUL byte".into()))?;
        // SAFETY: `url` is a NUL-terminated string that outlives the call; a non-null result is
        // owned by the returned value and finished exactly once, on drop.
        let conn = std::ptr::NonNull::new(unsafe { pq_sys::PQconnectdb(url.as_ptr()) })
            .map(ListeningConnection)
            .ok_or_else(|| ListenError("libpq could not allocate a connection".into()))?;
        // SAFETY: the connection is live.
        if unsafe { pq_sys::PQstatus(conn.0.as_ptr()) } != pq_sys::ConnStatusType::CONNECTION_OK {
            return Err(conn.error());
        }
        let listen = CString::new(format!("LISTEN {channel}")).map_err(|_| ListenError("bad channel name".into()))?;
        // SAFETY: the connection is live and the query NUL-terminated; the result is cleared once.
        let ok = unsafe {
            let result = pq_sys::PQexec(conn.0.as_ptr(), listen.as_ptr());
            let ok = !result.is_null() && pq_sys::PQresultStatus(result) == pq_sys::ExecStatusType::PGRES_COMMAND_OK;
            pq_sys::PQclear(result);
            ok
        };
        if !ok {
            return Err(conn.error());
        }
        Ok(conn)
    }

    /// Sleeps until the server sends something or `limit` passes; whether a notification came.
    fn wait(&mut self, limit: Duration) -> Result<bool, ListenError> {
        let conn = self.0.as_ptr();
        // SAFETY: the connection is live; `poll` reads one `pollfd` that lives on this stack.
        let ready = unsafe {
            let mut socket = libc::pollfd { fd: pq_sys::PQsocket(conn), events: libc::POLLIN, revents: 0 };
            if socket.fd < 0 {
                return Err(self.error());
            }
            libc::poll(&mut socket, 1, i32::try_from(limit.as_millis()).unwrap_or(i32::MAX))
        };
        if ready < 0 {
            let error = std::io::Error::last_os_error();
            return if error.kind() == std::io::ErrorKind::Interrupted {
                Ok(false)
            } else {
                Err(ListenError(error.to_string()))
            };
        }
        if ready == 0 {
            return Ok(false);
        }
        let mut notified = false;
        // SAFETY: the connection is live; each notification libpq hands over is freed once.
        unsafe {
            if pq_sys::PQconsumeInput(conn) == 0 {
                return Err(self.error());
            }
            loop {
                let notification = pq_sys::PQnotifies(conn);
                if notification.is_null() {
                    break;
                }
                pq_sys::PQfreemem(notification.cast());
                notified = true;
            }
        }
        Ok(notified)
    }

    /// libpq's message for the connection's last failure.
    fn error(&self) -> ListenError {
        // SAFETY: the connection is live; libpq owns the message, which is copied at once.
        let message = unsafe { CStr::from_ptr(pq_sys::PQerrorMessage(self.0.as_ptr())) };
        ListenError(message.to_string_lossy().trim().to_string())
    }
}

impl Drop for ListeningConnection {
    fn drop(&mut self) {
        // SAFETY: the connection was opened by `PQconnectdb` and is finished only here.
        unsafe { pq_sys::PQfinish(self.0.as_ptr()) }
    }
}
