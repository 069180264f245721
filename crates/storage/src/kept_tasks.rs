//! Tasks kept in memory by the poll caches (`live_tasks`, `ended_tasks`), within a bound: a task
//! larger than [`MAX_TASK_BYTES`] is not kept, and past [`MAX_BYTES`] the map starts again empty.

use crate::task_record::TaskRecord;
use std::collections::HashMap;
use std::time::Instant;

/// The most memory the kept tasks take, roughly.
const MAX_BYTES: usize = 16 << 20;
/// The largest task kept (its outputs, result and messages).
const MAX_TASK_BYTES: usize = 64 << 10;

/// Tasks kept in memory, each with what its cache notes beside it (`T`) and when it was read.
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
