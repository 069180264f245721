//! Simulated jobs and their life cycle. A job's state is never stored: it is computed from the
//! instant it was created, the timing faults in force then, and whether it was since cancelled or
//! released from a hold.

use crate::faults::Faults;
use crate::media::MediaKey;
use crate::sync::lock;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};
use tokio::sync::watch;

/// Which protocol a job was submitted through, with what that protocol reports about it.
#[derive(Clone, Debug)]
pub(crate) enum Api {
    /// fal: the first two segments of the app path, under which the job is polled.
    Fal { prefix: String },
    /// Replicate: the model (`owner/name`) and version.
    Replicate { model: String, version: String },
}

/// The timing of a job, fixed from the faults in force at submission.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Plan {
    queue: Duration,
    run: Duration,
    hold: bool,
    fail: bool,
}

impl Plan {
    /// The plan the faults `faults` give a job submitted now.
    pub fn from_faults(faults: &Faults) -> Plan {
        Plan {
            queue: Duration::from_millis(faults.queue_ms),
            run: Duration::from_millis(faults.run_ms),
            hold: faults.hold,
            fail: faults.fail_jobs,
        }
    }
}

/// Where a job is at one instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Waiting to start.
    Queued,
    /// Running since `started`.
    Running { started: Instant },
    /// Finished with output.
    Succeeded { started: Instant, ended: Instant },
    /// Finished with an error.
    Failed { started: Instant, ended: Instant },
    /// Cancelled at `at`, after starting at `started` if it had.
    Canceled { started: Option<Instant>, at: Instant },
}

impl Phase {
    /// Whether the job has ended, one way or another.
    pub fn is_done(self) -> bool {
        !matches!(self, Phase::Queued | Phase::Running { .. })
    }
}

/// What can happen to a job after it is created.
#[derive(Default)]
struct Marks {
    canceled: Option<Instant>,
    released: Option<Instant>,
}

/// One simulated job.
pub(crate) struct Job {
    /// The id clients poll it by.
    pub id: String,
    /// The protocol it came through.
    pub api: Api,
    /// The model input, as the client sent it.
    pub input: Map<String, Value>,
    /// The media it produces and how many files.
    pub media: MediaKey,
    /// One media token per output file.
    pub tokens: Vec<String>,
    /// Seed reported with the result.
    pub seed: u64,
    /// Where to send a callback once it ends.
    pub webhook: Option<String>,
    /// When it was created.
    pub created: Instant,
    /// When it was created, by the wall clock.
    pub created_wall: SystemTime,
    plan: Plan,
    marks: Mutex<Marks>,
    polled: AtomicBool,
}

/// The parts of a job its submission decides.
pub(crate) struct NewJob {
    pub id: String,
    pub api: Api,
    pub input: Map<String, Value>,
    pub media: MediaKey,
    pub tokens: Vec<String>,
    pub seed: u64,
    pub webhook: Option<String>,
    pub plan: Plan,
}

impl Job {
    /// A job created now.
    pub fn new(new: NewJob) -> Job {
        Job {
            id: new.id,
            api: new.api,
            input: new.input,
            media: new.media,
            tokens: new.tokens,
            seed: new.seed,
            webhook: new.webhook,
            created: Instant::now(),
            created_wall: SystemTime::now(),
            plan: new.plan,
            marks: Mutex::new(Marks::default()),
            polled: AtomicBool::new(false),
        }
    }

    /// When it starts running.
    fn start(&self) -> Instant {
        self.created + self.plan.queue
    }

    /// When it ends if nothing else happens to it; `None` while it is held.
    fn natural_end(&self, marks: &Marks) -> Option<Instant> {
        let end = self.start() + self.plan.run;
        if self.plan.hold {
            marks.released.map(|released| released.max(end))
        } else {
            Some(end)
        }
    }

    /// When it ends (or ended), given what happened to it so far; `None` while it is held.
    pub fn end(&self) -> Option<Instant> {
        let marks = lock(&self.marks);
        marks.canceled.or_else(|| self.natural_end(&marks))
    }

    /// Where it is at `now`.
    pub fn phase(&self, now: Instant) -> Phase {
        let marks = lock(&self.marks);
        let start = self.start();
        if let Some(at) = marks.canceled {
            return Phase::Canceled { started: (at >= start).then_some(start), at };
        }
        match self.natural_end(&marks) {
            _ if now < start => Phase::Queued,
            Some(ended) if now >= ended => {
                if self.plan.fail {
                    Phase::Failed { started: start, ended }
                } else {
                    Phase::Succeeded { started: start, ended }
                }
            }
            _ => Phase::Running { started: start },
        }
    }

    /// The wall-clock time of `at`.
    pub fn wall(&self, at: Instant) -> SystemTime {
        self.created_wall + at.saturating_duration_since(self.created)
    }

    /// Whether it is still queued at `now`; cheap for jobs past their queue time, which is most of
    /// them when a queue position is counted.
    pub fn is_queued(&self, now: Instant) -> bool {
        now < self.start() && lock(&self.marks).canceled.is_none()
    }

    /// Records a poll; true the first time.
    pub fn mark_polled(&self) -> bool {
        !self.polled.swap(true, Ordering::SeqCst)
    }
}

/// Every job, by id, and a signal raised whenever a job's end moves (cancel, release).
pub(crate) struct JobStore {
    jobs: Mutex<HashMap<String, Arc<Job>>>,
    changes: watch::Sender<u64>,
}

impl JobStore {
    /// An empty store.
    pub fn new() -> JobStore {
        JobStore { jobs: Mutex::new(HashMap::new()), changes: watch::Sender::new(0) }
    }

    /// Adds `job`.
    pub fn insert(&self, job: Arc<Job>) {
        lock(&self.jobs).insert(job.id.clone(), job);
    }

    /// The job `id`, if it exists.
    pub fn get(&self, id: &str) -> Option<Arc<Job>> {
        lock(&self.jobs).get(id).cloned()
    }

    /// Cancels `job` unless it has already ended; true if it was cancelled now.
    pub fn cancel(&self, job: &Job) -> bool {
        let now = Instant::now();
        if job.phase(now).is_done() {
            return false;
        }
        lock(&job.marks).canceled = Some(now);
        self.changes.send_modify(|n| *n += 1);
        true
    }

    /// Lets every held job finish; returns how many were released.
    pub fn release_held(&self) -> usize {
        let now = Instant::now();
        let mut released = 0;
        for job in lock(&self.jobs).values().filter(|job| job.plan.hold) {
            let mut marks = lock(&job.marks);
            if marks.released.is_none() {
                marks.released = Some(now);
                released += 1;
            }
        }
        self.changes.send_modify(|n| *n += 1);
        released
    }

    /// A receiver that wakes whenever a job's end may have moved.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Jobs queued or in progress at `now`.
    pub fn active(&self, now: Instant) -> u64 {
        lock(&self.jobs).values().filter(|job| !job.phase(now).is_done()).count() as u64
    }

    /// Jobs queued at `now` that were created before `created` (a queue position).
    pub fn queued_before(&self, created: Instant, now: Instant) -> u64 {
        let jobs = lock(&self.jobs);
        jobs.values().filter(|job| job.created < created && job.is_queued(now)).count() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::random_hex_id;
    use crate::media::Kind;

    fn job(plan: Plan) -> Job {
        Job::new(NewJob {
            id: random_hex_id(),
            api: Api::Fal { prefix: "a/b".into() },
            input: Map::new(),
            media: MediaKey { kind: Kind::Image, width: 256, height: 256, duration: 0 },
            tokens: vec![],
            seed: 0,
            webhook: None,
            plan,
        })
    }

    #[test]
    fn phases_follow_the_plan() {
        let secs = Duration::from_secs;
        let j = job(Plan { queue: secs(10), run: secs(10), hold: false, fail: false });
        assert_eq!(j.phase(j.created), Phase::Queued);
        assert!(matches!(j.phase(j.created + secs(15)), Phase::Running { .. }));
        assert!(matches!(j.phase(j.created + secs(20)), Phase::Succeeded { .. }));
        let j = job(Plan { queue: secs(0), run: secs(0), hold: false, fail: true });
        assert!(matches!(j.phase(j.created), Phase::Failed { .. }));
    }

    #[test]
    fn held_jobs_run_until_released_and_cancelled_jobs_stop() {
        let store = JobStore::new();
        let j = Arc::new(job(Plan { queue: Duration::ZERO, run: Duration::ZERO, hold: true, fail: false }));
        store.insert(j.clone());
        let later = Instant::now() + Duration::from_secs(3600);
        assert!(matches!(j.phase(later), Phase::Running { .. }));
        assert_eq!(store.active(Instant::now()), 1);
        assert_eq!(store.release_held(), 1);
        assert!(j.phase(later).is_done());
        assert!(!store.cancel(&j));

        let k = Arc::new(job(Plan { queue: Duration::from_secs(60), run: Duration::ZERO, hold: false, fail: false }));
        assert!(store.cancel(&k));
        assert!(matches!(k.phase(Instant::now()), Phase::Canceled { started: None, .. }));
    }
}
