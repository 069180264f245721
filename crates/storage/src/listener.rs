//! Wake-ups for workers in other processes: on PostgreSQL every accepted job sends `NOTIFY` at
//! commit, and a listener thread turns notifications into a callback, so idle workers start at once
//! instead of waiting for their next poll.

use crate::{Backend, Database};
use diesel::connection::SimpleConnection;
use diesel::pg::PgConnection;
use diesel::Connection;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const CHANNEL: &str = "media_jobs";
pub(crate) const NOTIFY_JOB: &str = "NOTIFY media_jobs";

/// How often the listener reads its socket; reading is local (no round trip to the server).
const READ_INTERVAL: Duration = Duration::from_millis(20);
/// Pause before reconnecting after the listening connection broke.
const RECONNECT_DELAY: Duration = Duration::from_secs(1);

/// A running listener; it stops when dropped.
pub struct JobListener {
    stop: Arc<AtomicBool>,
}

impl Drop for JobListener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl Database {
    /// On PostgreSQL, starts a thread with its own connection that calls `on_job` whenever a job is
    /// accepted by any process. On SQLite (one process) there is nothing to listen to: `None`.
    pub fn listen_for_jobs(&self, on_job: impl Fn() + Send + 'static) -> Option<JobListener> {
        if self.backend() != Backend::Postgres {
            return None;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let (url, flag) = (self.url.clone(), stop.clone());
        std::thread::Builder::new()
            .name("job-listener".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    if let Err(e) = listen(&url, &flag, &on_job) {
                        tracing::warn!(error = %e, "job listener lost its connection; reconnecting");
                        std::thread::sleep(RECONNECT_DELAY);
                    }
                }
            })
            .ok()?;
        Some(JobListener { stop })
    }
}

fn listen(url: &str, stop: &AtomicBool, on_job: &impl Fn()) -> Result<(), Box<dyn std::error::Error>> {
    let mut conn = PgConnection::establish(url)?;
    conn.batch_execute(&format!("LISTEN {CHANNEL}"))?;
    // A job may have been queued while we were not listening.
    on_job();
    while !stop.load(Ordering::Relaxed) {
        let mut woke = false;
        for notification in conn.notifications_iter() {
            notification?;
            woke = true;
        }
        if woke {
            on_job();
        }
        std::thread::sleep(READ_INTERVAL);
    }
    Ok(())
}
