//! Ended tasks kept in memory, so that a poll of a task that has ended (a client polling once
//! more after the end, or fetching its result again for fresh output URLs) is answered without
//! reading the database, when its key is verified in memory too (`key_cache`).
//!
//! A task that has ended (succeeded or failed) changes once more at most: the retention sweeper
//! expires it when the retention period has passed. So a task is kept only while its expiry is
//! more than two entry lifetimes away, and an entry is trusted for one lifetime: what is answered
//! from memory is exactly what the database holds. A task is answered only to the key that
//! created it, as the database's read answers it. Memory is bounded: a task larger than
//! [`MAX_TASK_BYTES`] is not kept, and past [`MAX_BYTES`] the cache starts again empty.

use crate::task_record::TaskRecord;
use domain::TaskStatus;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a kept task is answered from memory before it is read again.
const ENTRY_LIFETIME: Duration = Duration::from_secs(60);
/// The most memory the kept tasks take, roughly.
const MAX_BYTES: usize = 16 << 20;
/// The largest task kept (its outputs, result and messages).
pub(crate) const MAX_TASK_BYTES: usize = 64 << 10;

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
    /// Task id to the task and when it was read.
    tasks: HashMap<String, (TaskRecord, Instant)>,
    /// The kept tasks' sizes (see [`size_of_task`]), summed.
    bytes: usize,
}

impl EndedTasks {
    /// Starts keeping ended tasks, which the retention sweeper expires `retention` after their
    /// end (`None`: never).
    pub(crate) fn start(&self, retention: Option<Duration>) {
        let mut state = self.lock();
        state.retention = Some(retention);
        state.tasks.clear();
        state.bytes = 0;
    }

    /// Task `id`, kept and not older than its lifetime, if key `key_id` created it.
    pub(crate) fn get(&self, id: &str, key_id: &str) -> Option<TaskRecord> {
        let state = self.lock();
        let (task, read_at) = state.tasks.get(id)?;
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
        let size = size_of_task(task);
        if size > MAX_TASK_BYTES {
            return;
        }
        if state.bytes + size > MAX_BYTES {
            state.tasks.clear();
            state.bytes = 0;
        }
        if let Some((old, _)) = state.tasks.insert(task.id.clone(), (task.clone(), Instant::now())) {
            state.bytes -= size_of_task(&old);
        }
        state.bytes += size;
    }

    /// Forgets task `id` (this process expired it).
    pub(crate) fn forget(&self, id: &str) {
        let mut state = self.lock();
        if let Some((old, _)) = state.tasks.remove(id) {
            state.bytes -= size_of_task(&old);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // Every change leaves the state consistent, even one a panic interrupted.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Roughly what `task` takes in memory: its text and a fixed part for the rest.
pub(crate) fn size_of_task(task: &TaskRecord) -> usize {
    let texts = [&task.id, &task.key_id, &task.account_id, &task.engine, &task.job, &task.status];
    let optional = [
        &task.lease_owner,
        &task.outputs,
        &task.error,
        &task.result,
        &task.failure_kind,
        &task.provider,
        &task.provider_handle,
        &task.provider_callback,
    ];
    512 + texts.iter().map(|t| t.len()).sum::<usize>()
        + optional.iter().map(|t| t.as_ref().map_or(0, String::len)).sum::<usize>()
}
