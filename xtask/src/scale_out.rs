//! `cargo xtask scale-out [--jobs N] [--release]`: two api-servers and up to three standalone
//! workers on one scratch PostgreSQL database, driven through both api-servers by two keys of two
//! accounts. Three timed rounds of N jobs each (one worker, then two, then three) give the
//! throughput per worker count; a fourth round of N jobs runs while one worker and one api-server
//! are killed with SIGKILL, the client retrying each refused or cut-off submit on the surviving
//! api-server with the same `Idempotency-Key`, as a client behind a load balancer would. A tenth
//! of the jobs fail when they run (background removal of bytes that are not a picture).
//!
//! Then it checks what a user and an auditor would: every accepted job ended, exactly one task per
//! idempotency key, one hold per task settled exactly once, a capture only for a succeeded task,
//! each key's spent equal to the sum of its succeeded tasks' `cost_usd` with nothing held, and
//! `api-server admin verify-ledger` clean. Nothing asserts on timings; the figures are printed.

use crate::deployment::Deployment;
use anyhow::{bail, ensure, Context, Result};
use futures::stream::{self, StreamExt};
use rust_decimal::Decimal;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Requests in flight at once from the client.
const CONCURRENCY: usize = 32;
/// One job in this many fails when it runs.
const FAILING_EVERY: usize = 10;
/// Rounds without a kill, one per worker count.
const WORKER_COUNTS: [usize; 3] = [1, 2, 3];

pub fn run(args: &[String]) -> Result<()> {
    let (mut jobs, mut profile) = (1000, "debug");
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--jobs" => jobs = it.next().context("--jobs needs a value")?.parse()?,
            "--release" => profile = "release",
            other => bail!("unknown option {other} (--jobs N, --release)"),
        }
    }
    crate::build_binaries(profile)?;

    let mut deployment = Deployment::start(
        profile,
        true,
        &[
            ("EMBEDDED_WORKER", "false".into()),
            ("HTTP_WORKERS", "1".into()),
            ("WORKER_CONCURRENCY", "2".into()),
            // Every slot of the three workers may serve one key, or one account.
            ("JOBS_RUNNING_PER_KEY", "6".into()),
            ("JOBS_RUNNING_PER_ACCOUNT", "6".into()),
            // A killed worker's jobs are claimed again within seconds, not half a minute.
            ("WORKER_LEASE_SECS", "3".into()),
            ("WORKER_HEARTBEAT_SECS", "1".into()),
            ("RATE_LIMIT_SUBMITS_PER_MINUTE", "0".into()),
            ("RATE_LIMIT_READS_PER_MINUTE", "0".into()),
        ],
    )?;
    deployment.admin(&["account", "create", "second", "--card-on-file"])?;
    let second_key = deployment.admin(&["key", "create", "--account", "second", "--label", "scale-out"])?;
    let (second_server, second_server_pid) = deployment.start_another_server()?;
    let cluster = Cluster {
        servers: vec![deployment.base.clone(), second_server],
        keys: vec![deployment.key.clone(), second_key],
        client: reqwest::Client::builder().pool_max_idle_per_host(CONCURRENCY).build()?,
    };
    println!("scale-out: 2 api-servers, PostgreSQL, {jobs} jobs a round ({profile} build)");

    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let mut accepted = Vec::new();
    let mut workers = Vec::new();
    for count in WORKER_COUNTS {
        while workers.len() < count {
            workers.push(deployment.start_another_worker()?);
        }
        let started = Instant::now();
        let round = runtime.block_on(cluster.submit_round(&format!("w{count}"), jobs, None))?;
        runtime.block_on(cluster.wait_until_ended(&round, &cluster.servers))?;
        let elapsed = started.elapsed().as_secs_f64();
        println!(
            "{count} worker(s): {jobs} jobs submitted and ended in {elapsed:.1} s, {:.0} jobs/s",
            jobs as f64 / elapsed
        );
        accepted.extend(round);
    }

    // The fourth round: a third of the way through the submits, one worker and one api-server die.
    let submitted = Arc::new(AtomicUsize::new(0));
    let round = {
        let cluster = cluster.clone();
        let submitted = submitted.clone();
        runtime.spawn(async move { cluster.submit_round("chaos", jobs, Some(&submitted)).await })
    };
    while submitted.load(Ordering::Relaxed) < jobs / 3 && !round.is_finished() {
        std::thread::sleep(Duration::from_millis(5));
    }
    deployment.kill(workers[0])?;
    deployment.kill(second_server_pid)?;
    println!("killed worker {} and the second api-server with SIGKILL after {} submits", workers[0], jobs / 3);
    let started = Instant::now();
    let round = runtime.block_on(round)??;
    let survivors = vec![cluster.servers[0].clone()];
    runtime.block_on(cluster.wait_until_ended(&round, &survivors))?;
    println!("round with the kills ended {:.1} s after them", started.elapsed().as_secs_f64());
    accepted.extend(round);

    check_database(&deployment, &accepted)?;
    runtime.block_on(check_books(&cluster, &survivors[0], &accepted))?;
    let verified = deployment.admin(&["verify-ledger"])?;
    println!("{verified}");
    Ok(())
}

/// A job the service accepted: its task id and the key that submitted it.
struct Accepted {
    id: String,
    key: usize,
}

#[derive(Clone)]
struct Cluster {
    servers: Vec<String>,
    keys: Vec<String>,
    client: reqwest::Client,
}

impl Cluster {
    /// Submits `jobs` jobs, alternating api-servers and keys, each with an idempotency key of its
    /// own; a submit that fails on the way (connection refused or cut, a 5xx) is sent again, with
    /// the same idempotency key, to the next api-server. Counts each accepted submit in `submitted`.
    async fn submit_round(&self, round: &str, jobs: usize, submitted: Option<&AtomicUsize>) -> Result<Vec<Accepted>> {
        let undecodable = undecodable_png_data_url();
        let submit = |i: usize| {
            // Two neighbours fail together, so that both keys have failures.
            let body = if i % (2 * FAILING_EVERY) < 2 {
                json!({"model": "bg-remove", "image_url": undecodable})
            } else {
                json!({"model": "tts", "prompt": format!("Listing {i} of round {round}: two beds, one bath.")})
            };
            let idempotency_key = format!("{round}-{i}");
            async move {
                let key = i % self.keys.len();
                let mut last_error = String::new();
                for attempt in 0..20 {
                    let server = &self.servers[(i + attempt) % self.servers.len()];
                    let response = self
                        .client
                        .post(format!("{server}/v1/generate"))
                        .bearer_auth(&self.keys[key])
                        .header("Idempotency-Key", &idempotency_key)
                        .json(&body)
                        .send()
                        .await;
                    match response {
                        Ok(response) if response.status().as_u16() == 202 => {
                            let body: Value = response.json().await?;
                            let id = body["id"].as_str().context("an accepted job has an id")?.to_string();
                            if let Some(submitted) = submitted {
                                submitted.fetch_add(1, Ordering::Relaxed);
                            }
                            return Ok(Accepted { id, key });
                        }
                        Ok(response) if response.status().is_server_error() => {
                            last_error = format!("{} from {server}", response.status());
                        }
                        Ok(response) => {
                            let status = response.status();
                            bail!("{idempotency_key} refused: {status} {}", response.text().await.unwrap_or_default());
                        }
                        Err(error) => last_error = format!("{error} from {server}"),
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                bail!("{idempotency_key} never accepted: {last_error}")
            }
        };
        stream::iter((0..jobs).map(submit))
            .buffer_unordered(CONCURRENCY)
            .collect::<Vec<_>>()
            .await
            .into_iter()
            .collect()
    }

    /// Polls every job through `servers` until each has ended.
    async fn wait_until_ended<'a>(&'a self, jobs: &'a [Accepted], servers: &'a [String]) -> Result<()> {
        let deadline = Instant::now() + Duration::from_secs(600);
        let wait = |(i, job): (usize, &'a Accepted)| async move {
            loop {
                let task = self.poll(&servers[i % servers.len()], job).await?;
                if matches!(task["status"].as_str(), Some("succeeded" | "failed")) {
                    return Ok(());
                }
                if Instant::now() > deadline {
                    bail!("task {} has not ended after ten minutes: {task}", job.id);
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        };
        stream::iter(jobs.iter().enumerate().map(wait))
            .buffer_unordered(CONCURRENCY)
            .collect::<Vec<_>>()
            .await
            .into_iter()
            .collect()
    }

    /// Reads a task. A poll is safe to repeat, so one cut off on a kept-alive connection the
    /// server was closing is sent again, as an HTTP client library would, a few times.
    async fn poll(&self, server: &str, job: &Accepted) -> Result<Value> {
        let url = format!("{server}/v1/tasks/{}", job.id);
        let mut attempt = 0;
        let response = loop {
            match self.client.get(&url).bearer_auth(&self.keys[job.key]).send().await {
                Ok(response) => break response,
                Err(e) if attempt < 3 && (e.is_request() || e.is_connect()) => {
                    attempt += 1;
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Err(e) => return Err(e.into()),
            }
        };
        ensure!(response.status().is_success(), "poll of {} answered {}", job.id, response.status());
        Ok(response.json().await?)
    }
}

/// Each key's `spent_usd` equals the sum of its succeeded tasks' `cost_usd`, and nothing is held.
async fn check_books(cluster: &Cluster, server: &str, accepted: &[Accepted]) -> Result<()> {
    let distinct: HashSet<&str> = accepted.iter().map(|job| job.id.as_str()).collect();
    ensure!(distinct.len() == accepted.len(), "two idempotency keys were given the same task");
    let tasks: Vec<Result<Value>> =
        stream::iter(accepted.iter().map(|job| cluster.poll(server, job))).buffered(CONCURRENCY).collect().await;
    let mut cost_by_key: HashMap<usize, Decimal> = HashMap::new();
    let (mut succeeded, mut failed) = (0, 0);
    for (job, task) in accepted.iter().zip(tasks) {
        let task = task?;
        match task["status"].as_str() {
            Some("succeeded") => {
                succeeded += 1;
                let cost = task["cost_usd"].as_str().context("a succeeded task has a cost")?;
                *cost_by_key.entry(job.key).or_default() += Decimal::from_str(cost)?;
            }
            Some("failed") => {
                failed += 1;
                ensure!(task.get("cost_usd").is_none_or(Value::is_null), "a failed task was billed: {task}");
            }
            _ => bail!("task {} has not ended: {task}", job.id),
        }
    }
    for (index, key) in cluster.keys.iter().enumerate() {
        let usage: Value =
            cluster.client.get(format!("{server}/v1/usage")).bearer_auth(key).send().await?.json().await?;
        let spent = Decimal::from_str(usage["spent_usd"].as_str().context("usage has spent_usd")?)?;
        let held = Decimal::from_str(usage["held_usd"].as_str().context("usage has held_usd")?)?;
        let costs = cost_by_key.get(&index).copied().unwrap_or_default();
        ensure!(spent == costs, "key {index}: spent {spent} but its succeeded tasks cost {costs}");
        ensure!(held.is_zero(), "key {index}: {held} still held with every task ended");
        println!("key {index}: spent {spent} = the sum of its succeeded tasks' cost_usd, nothing held");
    }
    println!("{} jobs accepted, each ended once: {succeeded} succeeded, {failed} failed", accepted.len());
    Ok(())
}

/// The database holds exactly the accepted tasks, each with one hold settled once: a succeeded
/// task's by its capture and the release of what it did not cost, a failed task's by a release.
fn check_database(deployment: &Deployment, accepted: &[Accepted]) -> Result<()> {
    let single = |sql: &str| -> Result<String> { Ok(deployment.query(sql)?.join("\n")) };
    ensure!(
        single("SELECT count(*) FROM tasks")? == accepted.len().to_string(),
        "the database holds tasks nobody was told of"
    );
    let wrong = single(
        "SELECT count(*) FROM tasks t WHERE \
           (SELECT count(*) FROM ledger l WHERE l.task_id = t.id AND l.kind = 'hold') <> 1 \
        OR (SELECT count(*) FROM ledger l WHERE l.task_id = t.id AND l.kind = 'capture') <> \
           CASE WHEN t.status = 'succeeded' THEN 1 ELSE 0 END \
        OR (SELECT count(*) FROM ledger l WHERE l.task_id = t.id AND l.kind = 'release') <> 1 \
        OR t.status NOT IN ('succeeded', 'failed')",
    )?;
    ensure!(wrong == "0", "{wrong} tasks are not settled exactly once");
    let captured = single("SELECT COALESCE(SUM(amount_units), 0) FROM ledger WHERE kind = 'capture'")?;
    let costs = single("SELECT COALESCE(SUM(cost_units), 0) FROM tasks WHERE status = 'succeeded'")?;
    ensure!(captured == costs, "the ledger captured {captured} units, the succeeded tasks cost {costs}");
    let retried = single("SELECT count(*) FROM tasks WHERE attempt > 1")?;
    println!(
        "ledger: one hold per task, settled once; captures {captured} units = succeeded costs; {retried} tasks claimed again after the kill"
    );
    Ok(())
}

/// 4 KB that claim to be a PNG and are not, as a `data:` URL: accepted (the bytes are stored),
/// then refused when the job decodes them, so the job fails when it runs, at once.
fn undecodable_png_data_url() -> String {
    use base64::Engine as _;
    let junk: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    format!("data:image/png;base64,{}", base64::engine::general_purpose::STANDARD.encode(junk))
}
