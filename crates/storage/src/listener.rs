//! Wake-ups across processes on PostgreSQL: every accepted job sends `NOTIFY media_jobs` and every
//! finished task `NOTIFY media_tasks_finished` at commit, and a listener thread turns notifications
//! into a callback, so idle workers start at once and a waiting synchronous request answers at once
//! instead of at its next poll.

use crate::{Backend, Database};
use diesel::connection::SimpleConnection;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Where every accepted job is announced.
pub(crate) const JOBS_CHANNEL: &str = "media_jobs";
/// Where every finished task is announced.
pub(crate) const FINISHED_CHANNEL: &str = "media_tasks_finished";

/// How often the listener reads its socket; reading is local (no round trip to the server).
const READ_INTERVAL: Duration = Duration::from_millis(20);
/// Pause before reconnecting after the listening connection broke.
const RECONNECT_DELAY: Duration = Duration::from_secs(1);

/// A running listener; it stops when dropped.
pub struct Listener {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}
impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wait for the thread (it checks the flag every few milliseconds), so that no database
        // call is still running when the process exits.
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Database {
    /// On PostgreSQL, starts a thread with its own connection that calls `on_job` whenever a job is
    /// accepted by any process. On SQLite (one process) there is nothing to listen to: `None`.
    pub fn listen_for_jobs(&self, on_job: impl Fn() + Send + 'static) -> Option<Listener> {
        self.listen(JOBS_CHANNEL, on_job)
    }

    /// On PostgreSQL, starts a thread with its own connection that calls `on_finished` whenever any
    /// process finishes a task (succeeded or failed). On SQLite: `None`.
    pub fn listen_for_finished_tasks(&self, on_finished: impl Fn() + Send + 'static) -> Option<Listener> {
        self.listen(FINISHED_CHANNEL, on_finished)
    }

    fn listen(&self, channel: &'static str, on_event: impl Fn() + Send + 'static) -> Option<Listener> {
        if self.backend() != Backend::Postgres {
            return None;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let (url, flag) = (self.url.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name(format!("listen-{channel}"))
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    if let Err(e) = listen(&url, channel, &flag, &on_event) {
                        tracing::warn!(error = %e, channel, "listener lost its connection; reconnecting");
                        let retry_at = std::time::Instant::now() + RECONNECT_DELAY;
                        while !flag.load(Ordering::Relaxed) && std::time::Instant::now() < retry_at {
                            std::thread::sleep(READ_INTERVAL);
                        }
                    }
                }
            })
            .ok()?;
        Some(Listener { stop, thread: Some(thread) })
    }
}

fn listen(url: &str, channel: &str, stop: &AtomicBool, on_event: &impl Fn()) -> Result<(), Box<dyn std::error::Error>> {
    let mut conn = crate::connection::connect_postgres(url)?;
    conn.batch_execute(&format!("LISTEN {channel}"))?;
    // Something may have happened while we were not listening.
    on_event();
    while !stop.load(Ordering::Relaxed) {
        let mut woke = false;
        for notification in conn.notifications_iter() {
            notification?;
            woke = true;
        }
        if woke {
            on_event();
        }
        std::thread::sleep(READ_INTERVAL);
    }
    Ok(())
}
