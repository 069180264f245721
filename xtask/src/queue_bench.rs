//! `cargo xtask bench --part queue [--requests N]`: the queue's enqueue-claim-complete rate of
//! no-op jobs (`crates/storage/examples/queue_noop.rs`: our submit, claim and settlement, with
//! their billing) beside apalis on its PostgreSQL backend (`bench/apalis-anchor`, a crate of its
//! own outside the workspace, so the service never builds it), each on a scratch database, with
//! two and with eight workers, alternated over three rounds in the same run; then ours on SQLite.

use anyhow::{Context, Result};
use std::process::Command;

/// Rounds per worker count, ours and apalis alternated: one run of each moves by several per cent
/// on two shared cores, so the median round's ratio is the figure.
const ROUNDS: usize = 3;

/// Worker counts measured.
const WORKERS: [usize; 2] = [2, 8];

pub fn run(jobs: usize) -> Result<()> {
    crate::run(crate::cargo().args([
        "build",
        "--quiet",
        "--release",
        "--package",
        "storage",
        "--example",
        "queue_noop",
    ]))?;
    crate::run(crate::cargo().args([
        "build",
        "--quiet",
        "--release",
        "--locked",
        "--manifest-path",
        "bench/apalis-anchor/Cargo.toml",
    ]))?;
    println!("\n== queue: {jobs} no-op jobs, enqueue-claim-complete, {ROUNDS} rounds ==");
    for workers in WORKERS {
        let mut ratios = Vec::with_capacity(ROUNDS);
        for round in 1..=ROUNDS {
            let ours = crate::deployment::with_scratch_database("media_queue_bench", |database| {
                measure("target/release/examples/queue_noop", &postgres_url(database), jobs, workers)
            })?;
            let apalis = crate::deployment::with_scratch_database("media_apalis_bench", |database| {
                measure("bench/apalis-anchor/target/release/apalis-anchor", &postgres_url(database), jobs, workers)
            })?;
            println!(
                "{:<34} {:>8.0} jobs/s, apalis {:>6.0} jobs/s: {:.2}x",
                format!("round {round}, {workers} workers"),
                ours,
                apalis,
                ours / apalis
            );
            ratios.push(ours / apalis);
        }
        ratios.sort_by(f64::total_cmp);
        println!(
            "{:<34} {:.2}x apalis (median of {ROUNDS})",
            format!("  queue, {workers} workers"),
            ratios[ROUNDS / 2]
        );
    }
    let scratch = std::env::temp_dir().join(format!("media-queue-bench-{}", crate::deployment::unique()));
    std::fs::create_dir_all(&scratch)?;
    let sqlite = measure(
        "target/release/examples/queue_noop",
        &format!("sqlite://{}", scratch.join("queue.db").display()),
        jobs,
        WORKERS[0],
    );
    let _ = std::fs::remove_dir_all(&scratch);
    println!("{:<34} {:>8.0} jobs/s", format!("ours, SQLite, {} workers", WORKERS[0]), sqlite?);
    Ok(())
}

fn postgres_url(database: &str) -> String {
    format!("postgres://postgres@127.0.0.1:5432/{database}")
}

/// Runs one of the two programs, which print `... N jobs in S s, R jobs/s`; returns R.
fn measure(program: &str, url: &str, jobs: usize, workers: usize) -> Result<f64> {
    let output = Command::new(program)
        .args([url, &jobs.to_string(), &workers.to_string()])
        .output()
        .with_context(|| format!("running {program}"))?;
    let text = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        anyhow::bail!("{program} failed: {}{}", text, String::from_utf8_lossy(&output.stderr));
    }
    text.rsplit(", ")
        .next()
        .and_then(|rate| rate.trim().strip_suffix("jobs/s"))
        .context("no rate printed")?
        .trim()
        .parse()
        .with_context(|| format!("{program} printed {text:?}"))
}
