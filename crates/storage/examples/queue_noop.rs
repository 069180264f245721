//! The queue's own throughput, for `cargo xtask bench --part queue`: `queue_noop DATABASE_URL
//! JOBS WORKERS` submits JOBS no-op tasks from 32 client threads while one worker of WORKERS
//! slots claims them (as many at once as it has free slots), does nothing and settles each as
//! succeeded (the capture, the ledger, the webhook outbox: all a real job's bookkeeping), and
//! prints how long the last one took to finish from the first submit. The worker wakes on the
//! queue's notification on PostgreSQL and polls every millisecond on SQLite, as a worker does.

use domain::{keys, Usd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};
use storage::{new_id, Database, NewTask, RunningShares, WebhookChoice};

const CLIENTS: usize = 32;
/// Ends settled with their slot already back, at most, as in the worker.
const RECORDING_PLACES: usize = storage::ENDS_PER_COMMIT;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, jobs, workers] = args.as_slice() else {
        return Err("usage: queue_noop DATABASE_URL JOBS WORKERS".into());
    };
    let (jobs, workers): (usize, usize) = (jobs.parse()?, workers.parse()?);
    let db = Database::connect(url, 16)?;
    let account = new_id("bench");
    db.create_account(&account, true, Usd::ZERO)?;
    let secret = keys::secret_from_random(rand_seed());
    let key = db.create_key(&account, &keys::hash_secret(&secret), None, None)?;

    let wake = Arc::new((Mutex::new(0u64), Condvar::new()));
    let _listener = db.listen_for_jobs({
        let wake = wake.clone();
        move || {
            *wake.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner) += 1;
            wake.1.notify_all();
        }
    });
    let finished = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let clients: Vec<_> = (0..CLIENTS)
        .map(|client| {
            let (db, key) = (db.clone(), key.clone());
            std::thread::spawn(move || -> Result<(), String> {
                for _ in (client..jobs).step_by(CLIENTS) {
                    let task = NewTask {
                        id: new_id("task"),
                        key_id: key.id.clone(),
                        account_id: key.account_id.clone(),
                        engine: "noop".into(),
                        job: "{}".into(),
                        price: Usd::from_units(100),
                        priority: 0,
                        provider: None,
                        input_bytes: 0,
                        key_input_limit: i64::MAX,
                        idempotency: None,
                        webhook: WebhookChoice::Off,
                    };
                    db.submit_task(&task).map_err(|e| e.to_string())?;
                }
                Ok(())
            })
        })
        .collect();
    // One worker with WORKERS slots, as the worker binary runs: whenever slots are free it claims
    // that many tasks in one claim, and each runs (does nothing) on a slot of its own. The slot
    // goes back before the end is settled while fewer than RECORDING_PLACES ends are being
    // settled (else after), and ends that meet are settled together: so a job is with a slot
    // thread from its claim to its settlement, at most WORKERS + RECORDING_PLACES at once.
    let (claim_time, settle_time) = (Arc::new(Timings::default()), Arc::new(Timings::default()));
    let free_slots = Arc::new((Mutex::new(workers), Condvar::new()));
    let recording_places = Arc::new(AtomicUsize::new(RECORDING_PLACES));
    let (to_slots, slot_queue) = std::sync::mpsc::channel::<storage::ClaimedTask>();
    let slot_queue = Arc::new(Mutex::new(slot_queue));
    let slots: Vec<_> = (0..workers + RECORDING_PLACES)
        .map(|_| {
            let (db, finished, free_slots, slot_queue, settle_time, recording_places) = (
                db.clone(),
                finished.clone(),
                free_slots.clone(),
                slot_queue.clone(),
                settle_time.clone(),
                recording_places.clone(),
            );
            let free_a_slot = move || {
                *free_slots.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner) += 1;
                free_slots.1.notify_all();
            };
            std::thread::spawn(move || -> Result<(), String> {
                loop {
                    let next = slot_queue.lock().unwrap_or_else(std::sync::PoisonError::into_inner).recv();
                    let Ok(claimed) = next else { return Ok(()) };
                    let early =
                        recording_places.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok();
                    if early {
                        free_a_slot();
                    }
                    let settling = Instant::now();
                    let settled =
                        db.finish_succeeded(&claimed.task.id, claimed.attempt, "[]", None, Usd::from_units(100), false);
                    settle_time.record(settling.elapsed());
                    if let Err(e) = settled {
                        // Ends the run: the claimer stops at once rather than wait for this job.
                        finished.store(usize::MAX, Ordering::SeqCst);
                        return Err(e.to_string());
                    }
                    finished.fetch_add(1, Ordering::SeqCst);
                    if early {
                        recording_places.fetch_add(1, Ordering::SeqCst);
                    } else {
                        free_a_slot();
                    }
                }
            })
        })
        .collect();
    let claimer = {
        let (db, finished, wake, claim_time, free_slots) =
            (db.clone(), finished.clone(), wake.clone(), claim_time.clone(), free_slots.clone());
        std::thread::spawn(move || -> Result<(), String> {
            while finished.load(Ordering::SeqCst) < jobs {
                let free = {
                    let guard = free_slots.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    let (mut free, _) = free_slots
                        .1
                        .wait_timeout_while(guard, Duration::from_millis(1), |free| *free == 0)
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    std::mem::take(&mut *free)
                };
                if free == 0 {
                    continue;
                }
                let seen = *wake.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                let claiming = Instant::now();
                let claimed =
                    db.claim_tasks("noop-worker", 60_000, RunningShares::UNLIMITED, free).map_err(|e| e.to_string())?;
                claim_time.record(claiming.elapsed());
                let unfilled = free - claimed.len();
                *free_slots.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner) += unfilled;
                let idle = claimed.is_empty();
                for task in claimed {
                    to_slots.send(task).map_err(|e| e.to_string())?;
                }
                if idle {
                    let guard = wake.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    let _ = wake.1.wait_timeout_while(guard, Duration::from_millis(1), |count| *count == seen);
                }
            }
            // Dropping the sender lets the slots go.
            Ok(())
        })
    };
    let worker_threads: Vec<_> = std::iter::once(claimer).chain(slots).collect();
    for thread in clients {
        thread.join().map_err(|_| "a thread panicked")??;
    }
    let submitted = started.elapsed().as_secs_f64();
    for thread in worker_threads {
        thread.join().map_err(|_| "a thread panicked")??;
    }
    let seconds = started.elapsed().as_secs_f64();
    println!("submitted in {submitted:.2} s; claims: {claim_time}; settlements: {settle_time}");
    println!("ours enqueue-claim-complete: {jobs} jobs in {seconds:.2} s, {:.0} jobs/s", jobs as f64 / seconds);
    Ok(())
}

/// How many calls of one kind were made and how long they took in all.
#[derive(Default)]
struct Timings {
    calls: AtomicUsize,
    micros: AtomicUsize,
}

impl Timings {
    fn record(&self, took: Duration) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.micros.fetch_add(usize::try_from(took.as_micros()).unwrap_or(usize::MAX), Ordering::Relaxed);
    }
}

impl std::fmt::Display for Timings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (calls, micros) = (self.calls.load(Ordering::Relaxed), self.micros.load(Ordering::Relaxed));
        write!(f, "{calls}, mean {:.2} ms", micros as f64 / calls.max(1) as f64 / 1000.0)
    }
}

/// Bytes for a key's secret, from the clock and the process id (a bench key, thrown away).
fn rand_seed() -> [u8; 32] {
    let mut seed = [0u8; 32];
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    seed[..16].copy_from_slice(&nanos.to_le_bytes());
    seed[16..20].copy_from_slice(&std::process::id().to_le_bytes());
    seed
}
