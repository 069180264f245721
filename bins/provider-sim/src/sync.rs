//! Locking that shrugs off poisoning, for the simulator's shared maps and marks.

use std::sync::{Mutex, MutexGuard};

/// Locks `mutex`, carrying on with its data if a panicking thread poisoned it: every value kept
/// under these locks is valid after any single update.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
