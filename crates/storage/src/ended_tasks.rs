//! Ended tasks kept in memory, so that a poll of a task that has ended (a client polling once
//! more after the end, or fetching its result again for fresh output URLs) is answered without
//! reading the database, when its key is verified in memory too (`key_cache`).
//!
//! A task that has ended (succeeded or failed) changes once more at most: the retention sweeper
//! expires it when the retention period has passed. So a task is kept only while its expiry is
//! more than two entry lifetimes away, and an entry is trusted for one lifetime: what is answered
//! from memory is exactly what the database holds. A task is answered only to the key that
//! created it, as the database's read answers it. Memory is bounded (`kept_tasks`).

use crate::kept_tasks::KeptTasks;
use crate::task_record::TaskRecord;
use domain::TaskStatus;
use std::sync::Mutex;
use std::time::Duration;

/// How long a kept task is answered from memory before it is read again.
const ENTRY_LIFETIME: Duration = Duration::from_secs(60);

/// The ended tasks of one process (see the module's text).
#[derive(Default)]
pub(crate) struct EndedTasks {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// How long after its end a task is expired; nothing is kept until it is known (`None`),
    /// and with no retention (`Some(None)`) ended tasks never change.
    retention: Option<Option<Duration>>,
    tasks: KeptTasks<()>,
}

impl EndedTasks {
    /// Starts keeping ended tasks, which the retention sweeper expires `retention` after their
    /// end (`None`: never).
    pub(crate) fn start(&self, retention: Option<Duration>) {
        let mut state = self.lock();
        state.retention = Some(retention);
        state.tasks.clear();
    }

    /// Task `id`, kept and not older than its lifetime, if key `key_id` created it.
    pub(crate) fn get(&self, id: &str, key_id: &str) -> Option<TaskRecord> {
        let state = self.lock();
        let (task, (), read_at) = state.tasks.get(id)?;
        (task.key_id == key_id && read_at.elapsed() < ENTRY_LIFETIME).then(|| task.clone())
    }

    /// Keeps `task`, just read from the database, if it has ended and cannot be expired before
    /// its entry lapses (`now`: the time, Unix milliseconds).
    pub(crate) fn keep(&self, task: &TaskRecord, now: i64) {
        let mut state = self.lock();
        let Some(retention) = state.retention else { return };
        let ended = task.status().is_ok_and(TaskStatus::is_terminal) && task.expired_at.is_none();
        let Some(finished_at) = task.finished_at.filter(|_| ended) else { return };
        let margin = i64::try_from(2 * ENTRY_LIFETIME.as_millis()).unwrap_or(i64::MAX);
        if let Some(retention) = retention {
            let expires_at = finished_at.saturating_add(i64::try_from(retention.as_millis()).unwrap_or(i64::MAX));
            if expires_at.saturating_sub(now) <= margin {
                return;
            }
        }
        state.tasks.insert(task, ());
    }

    /// Forgets task `id` (this process expired it).
    pub(crate) fn forget(&self, id: &str) {
        self.lock().tasks.remove(id);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // Every change leaves the state consistent, even one a panic interrupted.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
