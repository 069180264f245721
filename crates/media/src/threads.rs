//! How many threads a job's media work may use. A job's process is told once, at its start, by
//! the worker that runs it: every core while the worker has no other job, one otherwise. Work that
//! can overlap (drawing the next frame while the last one compresses) asks [`job_threads`].

use std::sync::atomic::{AtomicUsize, Ordering};

static JOB_THREADS: AtomicUsize = AtomicUsize::new(1);

/// Lets this process's media work use `threads` threads (at least one).
pub fn set_job_threads(threads: usize) {
    JOB_THREADS.store(threads.max(1), Ordering::Relaxed);
}

/// The threads this process's media work may use; one unless [`set_job_threads`] said more.
pub fn job_threads() -> usize {
    JOB_THREADS.load(Ordering::Relaxed)
}
