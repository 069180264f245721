//! The queue's own throughput, for `cargo xtask bench --part queue`: `queue_noop DATABASE_URL
//! JOBS WORKERS` submits JOBS no-op tasks from 32 client threads while WORKERS threads claim each,
//! do nothing and settle it as succeeded (the capture, the ledger, the webhook outbox: all a real
//! job's bookkeeping), and prints how long the last one took to finish from the first submit.
//! Workers wake on the queue's notification on PostgreSQL and poll every millisecond on SQLite,
//! as a worker does.

use domain::{keys, Usd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};
use storage::{new_id, Database, NewTask, RunningShares, WebhookChoice};

const CLIENTS: usize = 32;

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
    let worker_threads: Vec<_> = (0..workers)
        .map(|n| {
            let (db, finished, wake) = (db.clone(), finished.clone(), wake.clone());
            std::thread::spawn(move || -> Result<(), String> {
                let id = format!("noop-worker-{n}");
                while finished.load(Ordering::SeqCst) < jobs {
                    let seen = *wake.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    match db.claim_task(&id, 60_000, RunningShares::UNLIMITED).map_err(|e| e.to_string())? {
                        Some(claimed) => {
                            db.finish_succeeded(
                                &claimed.task.id,
                                claimed.attempt,
                                "[]",
                                None,
                                Usd::from_units(100),
                                false,
                            )
                            .map_err(|e| e.to_string())?;
                            finished.fetch_add(1, Ordering::SeqCst);
                        }
                        None => {
                            let guard = wake.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                            let _ = wake.1.wait_timeout_while(guard, Duration::from_millis(1), |count| *count == seen);
                        }
                    }
                }
                Ok(())
            })
        })
        .collect();
    for thread in clients.into_iter().chain(worker_threads) {
        thread.join().map_err(|_| "a thread panicked")??;
    }
    let seconds = started.elapsed().as_secs_f64();
    println!("ours enqueue-claim-complete: {jobs} jobs in {seconds:.2} s, {:.0} jobs/s", jobs as f64 / seconds);
    Ok(())
}

/// Bytes for a key's secret, from the clock and the process id (a bench key, thrown away).
fn rand_seed() -> [u8; 32] {
    let mut seed = [0u8; 32];
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    seed[..16].copy_from_slice(&nanos.to_le_bytes());
    seed[16..20].copy_from_slice(&std::process::id().to_le_bytes());
    seed
}
