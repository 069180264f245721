//! A count of key changes shared by every process that opens one SQLite database, so that a key
//! revoked by one process (an operator's `admin key revoke`, another api-server) is forgotten by
//! every other process's cache of verified keys as the change commits, where PostgreSQL has
//! `NOTIFY` for that.
//!
//! The count is eight bytes in a file beside the database (`PATH-keys`, as SQLite keeps `PATH-wal`
//! and `PATH-shm` there), mapped into memory by each process: a change adds one after its commit,
//! and a cache compares the count before trusting what it holds. Reading it is one atomic load, no
//! system call and no lock, which is what a poll answered from memory can afford. Like SQLite's own
//! shared memory it works between processes of one machine, the only kind that share a SQLite file.

use memmap2::MmapRaw;
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The mapped count (see the module's text).
pub(crate) struct KeyEpoch {
    map: MmapRaw,
}

impl KeyEpoch {
    /// Maps the count of the SQLite database at `database`, creating its file (at zero) when it is
    /// missing.
    pub(crate) fn open(database: &Path) -> std::io::Result<KeyEpoch> {
        // The file's real path, as SQLite names its own files: processes that reach the database
        // through different links share one count.
        let database = std::fs::canonicalize(database).unwrap_or_else(|_| database.to_path_buf());
        let path = Self::path_of(&database);
        let file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path)?;
        // Processes opening it together may each see it empty and each extend it: extending to the
        // same length changes nothing another already counted.
        if file.metadata()?.len() < COUNT_BYTES {
            // Writable by whoever may write the database, as SQLite makes its `-wal` and `-shm`.
            if let Ok(database) = std::fs::metadata(&database) {
                file.set_permissions(database.permissions())?;
            }
            file.set_len(COUNT_BYTES)?;
        }
        let map = memmap2::MmapOptions::new().len(COUNT_BYTES as usize).map_raw(&file)?;
        Ok(KeyEpoch { map })
    }

    /// Where the count of the database at `database` is kept.
    pub(crate) fn path_of(database: &Path) -> PathBuf {
        let mut name = database.as_os_str().to_owned();
        name.push("-keys");
        PathBuf::from(name)
    }

    /// The count now.
    pub(crate) fn current(&self) -> u64 {
        self.count().load(Ordering::Acquire)
    }

    /// Counts one change, committed just before.
    pub(crate) fn advance(&self) {
        self.count().fetch_add(1, Ordering::AcqRel);
    }

    fn count(&self) -> &AtomicU64 {
        // SAFETY: the mapping is `COUNT_BYTES` long, page-aligned (so aligned for a u64) and lives as
        // long as `self`; it is shared with other processes, which touch it only through the same
        // atomic operations, and an `AtomicU64` may be read and written through a shared reference.
        unsafe { &*self.map.as_mut_ptr().cast::<AtomicU64>() }
    }
}

/// The count's size in the file.
const COUNT_BYTES: u64 = 8;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_counted_by_one_mapping_is_seen_by_another() {
        let dir = std::env::temp_dir().join(format!("key-epoch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let database = dir.join("media.db");
        let (first, second) = (KeyEpoch::open(&database).unwrap(), KeyEpoch::open(&database).unwrap());
        let before = second.current();
        first.advance();
        assert_eq!(second.current(), before + 1);
        assert!(KeyEpoch::path_of(&database).ends_with("media.db-keys"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
