//! Tasks still queued or running kept in memory on SQLite, so that a poll of one (a client polling
//! while its job waits or runs, the commonest request) is answered without reading the database
//! while nothing has changed the task, when its key is verified in memory too (`key_cache`).
//!
//! Every connection of every process on the file notes the tasks its statements update or delete
//! (temporary triggers call a function of the connection) and, once the statement's transaction
//! has ended, advances each one's count in the shared table of task changes (`shared_counts`,
//! `PATH-tasks`; a task's count is the one its id falls in). A poll notes its task's count before
//! it reads the task, and a kept task is answered only while the count is still the noted one: a
//! change committed before the read is in what was read, one committed after it moves the count.
//! A count is shared by the tasks whose ids fall in it, so a change to one makes the next poll of
//! another read again, never the other way. An entry is trusted for at most a second, which
//! bounds what a change made around the service (by hand, in the `sqlite3` shell) can hide.
//! Memory is bounded (`kept_tasks`).

use crate::kept_tasks::KeptTasks;
use crate::shared_counts::SharedCounts;
use crate::task_record::TaskRecord;
use diesel::sql_types::Text;
use diesel::sqlite::SqliteConnection;
use domain::TaskStatus;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// How many counts the shared table has.
const COUNTS: usize = 4096;
/// How long a kept task is answered from memory at most before it is read again.
const ENTRY_LIFETIME: Duration = Duration::from_secs(1);

/// The triggers that note a connection's task changes; temporary, so they live in the connection
/// alone and nothing but this service's connections ever calls the function they name.
pub(crate) const TRIGGERS: &str = "\
    CREATE TEMP TRIGGER IF NOT EXISTS note_task_update AFTER UPDATE ON main.tasks \
    BEGIN SELECT task_changed(NEW.id); END; \
    CREATE TEMP TRIGGER IF NOT EXISTS note_task_delete AFTER DELETE ON main.tasks \
    BEGIN SELECT task_changed(OLD.id); END;";

diesel::define_sql_function! {
    /// Notes that task `id` changed (see [`TRIGGERS`]).
    fn task_changed(id: Text) -> Integer;
}

/// The live tasks of one process (see the module's text).
pub(crate) struct LiveTasks {
    counts: SharedCounts,
    /// Each kept task with its count before it was read.
    tasks: Mutex<KeptTasks<u64>>,
}

impl LiveTasks {
    /// Maps the shared counts of the SQLite database at `database`.
    pub(crate) fn open(database: &Path) -> std::io::Result<LiveTasks> {
        let counts = SharedCounts::open(database, "tasks", COUNTS)?;
        Ok(LiveTasks { counts, tasks: Mutex::default() })
    }

    /// Task `id`'s count now: noted before the task is read, and given to [`LiveTasks::keep`].
    pub(crate) fn count_of(&self, id: &str) -> u64 {
        self.counts.current(count_index(id))
    }

    /// Keeps `task`, read after its count was `counted`, if it is still queued or running.
    pub(crate) fn keep(&self, task: &TaskRecord, counted: u64) {
        if task.status().map_or(true, TaskStatus::is_terminal) || task.expired_at.is_some() {
            return;
        }
        self.lock().insert(task, counted);
    }

    /// Task `id`, kept, unchanged since it was read and read within its lifetime, if key `key_id`
    /// created it.
    pub(crate) fn get(&self, id: &str, key_id: &str) -> Option<TaskRecord> {
        let tasks = self.lock();
        let (task, counted, read_at) = tasks.get(id)?;
        let trusted = task.key_id == key_id && read_at.elapsed() < ENTRY_LIFETIME && *counted == self.count_of(id);
        trusted.then(|| task.clone())
    }

    /// Counts the changes `noted` holds, once the transaction that made them has ended.
    pub(crate) fn publish(&self, noted: &NotedChanges) {
        if !noted.any.swap(false, Ordering::AcqRel) {
            return;
        }
        let indices = std::mem::take(&mut *noted.indices.lock().unwrap_or_else(PoisonError::into_inner));
        for index in indices {
            self.counts.advance(index);
        }
    }

    fn lock(&self) -> MutexGuard<'_, KeptTasks<u64>> {
        // Every change leaves the map consistent, even one a panic interrupted.
        self.tasks.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The task changes one connection's statements made and not yet counted.
#[derive(Default)]
pub(crate) struct NotedChanges {
    /// Whether `indices` holds any: one atomic load on every use of the connection.
    any: AtomicBool,
    /// The counts the changed tasks fall in.
    indices: Mutex<Vec<usize>>,
}

impl NotedChanges {
    /// Makes `conn`'s `task_changed` function note into `noted` (see [`TRIGGERS`], which are
    /// created once the tasks table exists).
    pub(crate) fn register(conn: &mut SqliteConnection, noted: Arc<NotedChanges>) -> diesel::QueryResult<()> {
        task_changed_utils::register_impl(conn, move |id: String| {
            noted.indices.lock().unwrap_or_else(PoisonError::into_inner).push(count_index(&id));
            noted.any.store(true, Ordering::Release);
            0
        })
    }
}

/// The count task `id` falls in: FNV-1a of the id, the same in every process and every build.
fn count_index(id: &str) -> usize {
    let hash = id
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3));
    (hash % COUNTS as u64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every process and every build must put a task in the same count: the index is a fixed
    /// function of the id.
    #[test]
    fn a_tasks_count_is_the_same_in_every_build() {
        assert_eq!(count_index("task_0dec12e5b30ce09a4f3a1cd1"), 940);
        assert!(count_index("") < COUNTS);
    }
}
