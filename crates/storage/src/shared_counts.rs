//! Counts shared by every process that opens one SQLite database, where PostgreSQL has `NOTIFY`:
//! a change adds one to its count after its commit, and a process that holds something it read
//! compares the count before trusting it. One count of key changes (`PATH-keys`), so that a key
//! revoked by one process (an operator's `admin key revoke`, another api-server) is forgotten by
//! every other process's cache of verified keys as the change commits; and a table of counts of
//! task changes (`PATH-tasks`, a task counted in the slot its id falls in), so that a poll of a
//! task still queued or running is answered from memory while nothing has changed it.
//!
//! The counts are in a file beside the database (as SQLite keeps `PATH-wal` and `PATH-shm` there),
//! mapped into memory by each process. Reading one is one atomic load, no system call and no lock,
//! which is what a poll answered from memory can afford. Like SQLite's own shared memory this
//! works between processes of one machine, the only kind that share a SQLite file.

use memmap2::MmapRaw;
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A table of mapped counts (see the module's text).
pub(crate) struct SharedCounts {
    map: MmapRaw,
    len: usize,
}

impl SharedCounts {
    /// Maps the `len` counts kept beside the SQLite database at `database` in `PATH-{suffix}`,
    /// creating the file (every count at zero) when it is missing.
    pub(crate) fn open(database: &Path, suffix: &str, len: usize) -> std::io::Result<SharedCounts> {
        // The file's real path, as SQLite names its own files: processes that reach the database
        // through different links share the counts.
        let database = std::fs::canonicalize(database).unwrap_or_else(|_| database.to_path_buf());
        let path = Self::path_of(&database, suffix);
        let file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path)?;
        let bytes = (len * COUNT_BYTES) as u64;
        // Processes opening it together may each see it empty and each extend it: extending to the
        // same length changes nothing another already counted.
        if file.metadata()?.len() < bytes {
            // Writable by whoever may write the database, as SQLite makes its `-wal` and `-shm`.
            if let Ok(database) = std::fs::metadata(&database) {
                file.set_permissions(database.permissions())?;
            }
            file.set_len(bytes)?;
        }
        let map = memmap2::MmapOptions::new().len(len * COUNT_BYTES).map_raw(&file)?;
        Ok(SharedCounts { map, len })
    }

    /// Where the counts named `suffix` of the database at `database` are kept.
    pub(crate) fn path_of(database: &Path, suffix: &str) -> PathBuf {
        let mut name = database.as_os_str().to_owned();
        name.push("-");
        name.push(suffix);
        PathBuf::from(name)
    }

    /// Count `index` now (`index` is taken modulo the number of counts).
    pub(crate) fn current(&self, index: usize) -> u64 {
        self.count(index).load(Ordering::Acquire)
    }

    /// Counts one change in count `index`, committed just before.
    pub(crate) fn advance(&self, index: usize) {
        self.count(index).fetch_add(1, Ordering::AcqRel);
    }

    fn count(&self, index: usize) -> &AtomicU64 {
        let index = index % self.len;
        // SAFETY: the mapping is `len * COUNT_BYTES` long and page-aligned, so each count is in it
        // and aligned for a u64, and it lives as long as `self`; it is shared with other
        // processes, which touch it only through the same atomic operations, and an `AtomicU64`
        // may be read and written through a shared reference.
        unsafe { &*self.map.as_mut_ptr().cast::<AtomicU64>().add(index) }
    }
}

/// A count's size in the file.
const COUNT_BYTES: usize = 8;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_counted_by_one_mapping_is_seen_by_another() {
        let dir = std::env::temp_dir().join(format!("shared-counts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let database = dir.join("media.db");
        let first = SharedCounts::open(&database, "tasks", 64).unwrap();
        let second = SharedCounts::open(&database, "tasks", 64).unwrap();
        let (before, other) = (second.current(5), second.current(6));
        first.advance(5);
        assert_eq!(second.current(5), before + 1);
        assert_eq!(second.current(6), other, "another count is untouched");
        assert_eq!(second.current(64 + 5), before + 1, "indices wrap");
        assert!(SharedCounts::path_of(&database, "tasks").ends_with("media.db-tasks"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
