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

/// Tasks kept in memory, each with what its cache notes beside it (`T`) and when it was read.
/// Memory is bounded: a task larger than [`MAX_TASK_BYTES`] is not kept, and past [`MAX_BYTES`]
/// the map starts again empty.
pub(crate) struct KeptTasks<T> {
    tasks: HashMap<String, (TaskRecord, T, Instant)>,
    /// The kept tasks' sizes (see [`size_of_task`]), summed.
    bytes: usize,
}

impl<T> Default for KeptTasks<T> {
    fn default() -> Self {
        KeptTasks { tasks: HashMap::new(), bytes: 0 }
    }
}

impl<T> KeptTasks<T> {
    /// Keeps `task`, just read, with `noted`, in place of any earlier read of it.
    pub(crate) fn insert(&mut self, task: &TaskRecord, noted: T) {
        let size = size_of_task(task);
        if size > MAX_TASK_BYTES {
            return;
        }
        // A new read of a kept task takes its place, and counts only once.
        self.remove(&task.id);
        if self.bytes + size > MAX_BYTES {
            self.clear();
        }
        self.tasks.insert(task.id.clone(), (task.clone(), noted, Instant::now()));
        self.bytes += size;
    }

    /// Task `id`, what was noted with it and when it was read, if it is kept.
    pub(crate) fn get(&self, id: &str) -> Option<(&TaskRecord, &T, Instant)> {
        self.tasks.get(id).map(|(task, noted, read_at)| (task, noted, *read_at))
    }

    /// Forgets task `id`.
    pub(crate) fn remove(&mut self, id: &str) {
        if let Some((old, _, _)) = self.tasks.remove(id) {
            self.bytes -= size_of_task(&old);
        }
    }

    /// Forgets every task.
    pub(crate) fn clear(&mut self) {
        self.tasks.clear();
        self.bytes = 0;
    }
}

/// Roughly what `task` takes in memory: its text and a fixed part for the rest.
fn size_of_task(task: &TaskRecord) -> usize {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str, outputs_bytes: usize) -> TaskRecord {
        TaskRecord {
            id: id.into(),
            key_id: "key_1".into(),
            account_id: "acct_1".into(),
            engine: "e".into(),
            job: "{}".into(),
            status: "succeeded".into(),
            created_at: 0,
            updated_at: 0,
            started_at: None,
            finished_at: None,
            lease_owner: None,
            lease_expires_at: None,
            attempt: 0,
            outputs: Some("x".repeat(outputs_bytes)),
            price_units: 0,
            hold_allowance_units: 0,
            cost_units: None,
            error: None,
            sandbox: false,
            priority: 0,
            result: None,
            failure_kind: None,
            provider: None,
            provider_handle: None,
            provider_callback: None,
            provider_millis: None,
            provider_cost_units: None,
            expired_at: None,
        }
    }

    #[test]
    fn kept_tasks_stay_within_their_bytes() {
        let mut kept = KeptTasks::default();
        kept.insert(&task("task_big", MAX_TASK_BYTES), 1u64);
        assert!(kept.get("task_big").is_none(), "a task over the limit is not kept");

        // Ids of one length, so that every task has the same size.
        let (id, each) = (|i: usize| format!("task_{i:05}"), MAX_TASK_BYTES / 2);
        let size = size_of_task(&task(&id(0), each));
        let fit = MAX_BYTES / size;
        for i in 0..fit {
            kept.insert(&task(&id(i), each), 1);
        }
        kept.insert(&task(&id(0), each), 2);
        assert_eq!(kept.get(&id(0)).map(|(_, noted, _)| *noted), Some(2), "a new read replaces the old");
        assert_eq!((kept.tasks.len(), kept.bytes), (fit, fit * size), "and counts once, even when full");
        kept.remove(&id(1));
        assert_eq!(kept.bytes, (fit - 1) * size);

        kept.insert(&task(&id(1), each), 1);
        kept.insert(&task(&id(fit), each), 1);
        assert!(kept.get(&id(0)).is_none(), "past the bound the map starts again empty");
        assert_eq!((kept.tasks.len(), kept.bytes), (1, size));
    }
}
