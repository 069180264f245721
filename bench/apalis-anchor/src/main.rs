//! The anchor that the service's own queue is compared with by `cargo xtask bench --part queue`:
//! apalis's throughput on its PostgreSQL backend (`apalis-postgres`) for no-op jobs.
//!
//! `apalis-anchor DATABASE_URL JOBS CONCURRENCY` runs apalis's own migrations on that (scratch)
//! database, starts one worker of concurrency CONCURRENCY whose handler does nothing and
//! succeeds, pushes JOBS jobs as a client would (one `push`, one INSERT, per job, from 32 tasks
//! at once), and times the first push to the last job done: handled, and its result written by
//! the worker (apalis batches those writes; stopping the worker flushes the last batch). It
//! checks that the database holds JOBS jobs marked `Done` and prints
//! `apalis-postgres enqueue-claim-complete: N jobs in S s, R jobs/s`. The worker keeps apalis's
//! defaults and wakes on its LISTEN/NOTIFY, with a slow poll as a safety net.
//!
//! A crate of its own outside the workspace, so the service never builds apalis.

use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use apalis::layers::WorkerBuilderExt;
use apalis::prelude::{
    BackendExt, BoxDynError, Data, Event, EventListenerExt, ParallelizeExt, Strategy, TaskSink, WorkerBuilder,
    WorkerContext,
};
use apalis_postgres::{Config, PostgresStorage};
use sqlx::postgres::PgPoolOptions;
use tokio::sync::Notify;

/// Client tasks pushing jobs at once.
const CLIENTS: usize = 32;
/// The apalis queue (`job_type`) the jobs go to, made unique per run below so that jobs left by
/// an earlier run on the same database are neither run nor counted.
const QUEUE: &str = "apalis-anchor-noop";
/// The fallback poll when no notification arrives (only matters while the queue is empty).
const FALLBACK_POLL: Duration = Duration::from_millis(250);
/// A guard against a hang: the run fails if the jobs are not all done by then.
const DEADLINE: Duration = Duration::from_secs(600);

type Error = Box<dyn std::error::Error + Send + Sync>;

/// What the handler shares with `main`.
struct Progress {
    jobs: usize,
    done: AtomicUsize,
    all_done: Notify,
}

/// The no-op job: it does nothing and succeeds.
async fn noop(_job: u64, progress: Data<Arc<Progress>>) -> Result<(), BoxDynError> {
    if progress.done.fetch_add(1, Ordering::SeqCst) + 1 == progress.jobs {
        progress.all_done.notify_one();
    }
    Ok(())
}

fn main() -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("apalis-anchor: starting tokio: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run()) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("apalis-anchor: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<String, Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, jobs, concurrency] = args.as_slice() else {
        return Err("usage: apalis-anchor DATABASE_URL JOBS CONCURRENCY".into());
    };
    let jobs: usize = jobs.parse().map_err(|e| format!("JOBS {jobs:?}: {e}"))?;
    let concurrency: usize = concurrency.parse().map_err(|e| format!("CONCURRENCY {concurrency:?}: {e}"))?;
    if jobs == 0 || concurrency == 0 {
        return Err("JOBS and CONCURRENCY must be at least 1".into());
    }

    // Enough connections for every client, the worker's queries and its listener.
    let pool = PgPoolOptions::new()
        .max_connections((CLIENTS + 8) as u32)
        .connect(url)
        .await
        .map_err(|e| format!("connecting to the database: {e}"))?;
    PostgresStorage::setup(&pool).await.map_err(|e| format!("running apalis's migrations: {e}"))?;

    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let queue = format!("{QUEUE}-{}-{nanos}", std::process::id());
    let storage = PostgresStorage::<u64>::new(&pool).with_config(Config::default().queue(&queue));
    let backend = storage.clone().with_pubsub().poll_with_strategy(Strategy::new().interval(FALLBACK_POLL));

    let progress = Arc::new(Progress { jobs, done: AtomicUsize::new(0), all_done: Notify::new() });
    let registered = Arc::new(Notify::new());
    let context = WorkerContext::new("apalis-anchor-worker");
    let worker = WorkerBuilder::new(&context)
        .backend(backend)
        .data(progress.clone())
        .concurrency(concurrency)
        .parallelize(tokio::spawn)
        .on_event({
            let registered = registered.clone();
            // The first heartbeat follows the worker's registration in the database.
            move |_, event| {
                if matches!(event, Event::HeartBeat) {
                    registered.notify_one();
                }
            }
        })
        .build(noop);
    let mut worker = tokio::spawn(worker.run());

    // Start the clock once the worker is registered, so its start-up is not timed.
    tokio::select! {
        _ = registered.notified() => {}
        ended = &mut worker => return Err(worker_ended(ended)),
    }

    let started = Instant::now();
    let next = Arc::new(AtomicUsize::new(0));
    let clients: Vec<_> = (0..CLIENTS.min(jobs))
        .map(|_| {
            let (mut storage, next) = (storage.clone(), next.clone());
            tokio::spawn(async move {
                loop {
                    let job = next.fetch_add(1, Ordering::SeqCst);
                    if job >= jobs {
                        return Ok::<(), Error>(());
                    }
                    storage.push(job as u64).await.map_err(|e| format!("pushing job {job}: {e}"))?;
                }
            })
        })
        .collect();
    for client in clients {
        client.await.map_err(|e| format!("a client task failed: {e}"))??;
    }

    tokio::select! {
        _ = progress.all_done.notified() => {}
        ended = &mut worker => return Err(worker_ended(ended)),
        _ = tokio::time::sleep(DEADLINE.saturating_sub(started.elapsed())) => {
            return Err(format!(
                "only {} of {jobs} jobs done after {} s",
                progress.done.load(Ordering::SeqCst),
                DEADLINE.as_secs()
            )
            .into());
        }
    }
    // Stop the worker: it finishes in-flight jobs and writes the last results before it exits.
    context.stop().map_err(|e| format!("stopping the worker: {e}"))?;
    worker.await.map_err(|e| format!("the worker task failed: {e}"))?.map_err(|e| format!("the worker failed: {e}"))?;
    let seconds = started.elapsed().as_secs_f64();

    let handled = progress.done.load(Ordering::SeqCst);
    if handled != jobs {
        return Err(format!("the handler ran {handled} times for {jobs} jobs").into());
    }
    let (total, done): (i64, i64) =
        sqlx::query_as("SELECT count(*), count(*) FILTER (WHERE status = 'Done') FROM apalis.jobs WHERE job_type = $1")
            .bind(&queue)
            .fetch_one(&pool)
            .await
            .map_err(|e| format!("counting the jobs: {e}"))?;
    if total != jobs as i64 || done != jobs as i64 {
        return Err(format!("the database holds {total} jobs, {done} of them done, for {jobs} pushed").into());
    }
    pool.close().await;

    Ok(format!(
        "apalis-postgres enqueue-claim-complete: {jobs} jobs in {seconds:.2} s, {:.0} jobs/s",
        jobs as f64 / seconds
    ))
}

fn worker_ended(ended: Result<Result<(), apalis::prelude::WorkerError>, tokio::task::JoinError>) -> Error {
    match ended {
        Ok(Ok(())) => "the worker stopped before the jobs were done".into(),
        Ok(Err(e)) => format!("the worker failed: {e}").into(),
        Err(e) => format!("the worker task failed: {e}").into(),
    }
}
