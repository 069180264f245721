//! The hot paths beside their anchors, measured by `wrk` (one thread, 32 connections, as a load
//! generator that costs the server's two cores little): `GET /v1/tasks/{id}` on the api-server,
//! the same request on a bare actix-web handler answering a task-shaped body
//! (`crates/http/examples/bare_poll.rs`), and on PostgreSQL `pgbench -S` (single-row selects, 32
//! clients); `POST /v1/generate` of one key and, on PostgreSQL, the ceiling of transactions that
//! update one hot row (`pgbench` with a one-line script, 32 clients). pgbench runs on a scratch
//! database of its own.

use anyhow::{bail, Context, Result};
use std::io::BufRead;
use std::process::{Command, Stdio};

/// What one `wrk` run measured.
pub struct WrkFigures {
    requests_per_second: f64,
    p50_ms: f64,
    p99_ms: f64,
}

/// Polls of a task still queued, which every poll reads from the database (an ended task is
/// answered from memory): measured while no worker runs, printed, and kept for
/// [`poll_beside_anchors`] to compare. `None` without `wrk`.
pub fn poll_of_queued_task(base: &str, key: &str, task_id: &str) -> Result<Option<WrkFigures>> {
    if !has_wrk() {
        return Ok(None);
    }
    let figures = wrk(&format!("{base}/v1/tasks/{task_id}"), Some(key), None)?;
    print_figures("GET /v1/tasks/{id} queued (wrk c=32)", &figures);
    Ok(Some(figures))
}

/// Prints the api-server's poll throughput and latency for a succeeded task beside the bare
/// handler's and, on PostgreSQL, beside `pgbench -S`; with them the ratios of `queued`, the polls
/// of a queued task measured before.
pub fn poll_beside_anchors(
    base: &str,
    key: &str,
    task_id: &str,
    queued: Option<WrkFigures>,
    postgres: bool,
) -> Result<()> {
    if !has_wrk() {
        println!("polls under wrk: skipped (apt-get install wrk)");
        return Ok(());
    }
    let url = format!("{base}/v1/tasks/{task_id}");
    let ours = wrk(&url, Some(key), None)?;
    print_figures("GET /v1/tasks/{id} succeeded (wrk c=32)", &ours);
    let bare = bare_actix(task_id)?;
    print_figures("  bare actix handler (wrk c=32)", &bare);
    let measured = [("  polls, succeeded task", Some(&ours)), ("  polls, queued task", queued.as_ref())];
    let selects = if postgres { Some(pgbench(&["-S"])?) } else { None };
    if let Some(selects) = selects {
        println!("{:<34} {:>8.0} tps", "  pgbench -S (c=32)", selects);
    }
    for (label, figures) in measured {
        let Some(figures) = figures else { continue };
        let against_bare = figures.requests_per_second / bare.requests_per_second;
        match selects {
            Some(selects) => println!(
                "{label:<34} {against_bare:.2}x the bare handler's throughput, {:.2}x pgbench -S",
                figures.requests_per_second / selects
            ),
            None => println!("{label:<34} {against_bare:.2}x the bare handler's throughput"),
        }
    }
    Ok(())
}

fn print_figures(label: &str, figures: &WrkFigures) {
    println!(
        "{label:<34} {:>8.0} req/s  p50 {:>7.2} ms  p99 {:>7.2} ms",
        figures.requests_per_second, figures.p50_ms, figures.p99_ms
    );
}

fn has_wrk() -> bool {
    crate::have_or_install("wrk", "wrk")
}

/// Prints the api-server's submit throughput and latency for one key (whose rate limits the
/// caller has lifted) and, on PostgreSQL, the ratio to the hot-row ceiling.
pub fn submits_beside_anchor(base: &str, key: &str, postgres: bool) -> Result<()> {
    if !has_wrk() {
        println!("submits under wrk: skipped (apt-get install wrk)");
        return Ok(());
    }
    let script = std::env::current_dir()?.join("target/bench-submit.lua");
    std::fs::write(
        &script,
        "wrk.method = \"POST\"\n\
         wrk.body = '{\"model\": \"tts\", \"prompt\": \"Two beds, one bath, a garden.\"}'\n\
         wrk.headers[\"Content-Type\"] = \"application/json\"\n",
    )?;
    let ours = wrk(&format!("{base}/v1/generate"), Some(key), Some(&script))?;
    print_figures("POST /v1/generate, one key (wrk c=32)", &ours);
    if postgres {
        let hot_row = std::env::current_dir()?.join("target/bench-hot-row.sql");
        std::fs::write(&hot_row, "UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = 1;\n")?;
        let ceiling = pgbench(&["-f", &hot_row.to_string_lossy()])?;
        println!("{:<34} {:>8.0} tps", "  pgbench, one hot row (c=32)", ceiling);
        println!("{:<34} {:.2}x the hot-row ceiling", "  submits", ours.requests_per_second / ceiling);
    }
    Ok(())
}

/// Five seconds of `wrk -t1 -c32` on `url`, with `key` as the bearer token and the requests made
/// by `script` (a `wrk` Lua script) when given.
fn wrk(url: &str, key: Option<&str>, script: Option<&std::path::Path>) -> Result<WrkFigures> {
    let mut command = Command::new("wrk");
    command.args(["-t1", "-c32", "-d5s", "--latency"]);
    if let Some(key) = key {
        command.args(["-H", &format!("Authorization: Bearer {key}")]);
    }
    if let Some(script) = script {
        command.arg("-s").arg(script);
    }
    let output = command.arg(url).output().context("running wrk")?;
    let text = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() || text.contains("Non-2xx") {
        bail!("wrk on {url} failed or got errors:\n{text}");
    }
    let field = |prefix: &str| -> Option<&str> {
        text.lines().map(str::trim).find_map(|line| line.strip_prefix(prefix)).map(str::trim)
    };
    Ok(WrkFigures {
        requests_per_second: field("Requests/sec:").context("wrk printed no rate")?.parse()?,
        p50_ms: field("50%").and_then(milliseconds).context("wrk printed no median")?,
        p99_ms: field("99%").and_then(milliseconds).context("wrk printed no 99th percentile")?,
    })
}

/// A `wrk` duration (`812.00us`, `1.52ms`, `2.01s`) in milliseconds.
fn milliseconds(value: &str) -> Option<f64> {
    let split = value.find(|c: char| c.is_ascii_alphabetic())?;
    let (number, unit) = value.split_at(split);
    let number: f64 = number.parse().ok()?;
    match unit {
        "us" => Some(number / 1000.0),
        "ms" => Some(number),
        "s" => Some(number * 1000.0),
        _ => None,
    }
}

/// Builds and starts the bare handler on two workers, as the api-server runs, and measures it.
fn bare_actix(task_id: &str) -> Result<WrkFigures> {
    crate::run(crate::cargo().args([
        "build",
        "--quiet",
        "--release",
        "--package",
        "http-api",
        "--example",
        "bare_poll",
    ]))?;
    let mut server = Command::new("target/release/examples/bare_poll")
        .args(["127.0.0.1:0", "2"])
        .stdout(Stdio::piped())
        .spawn()
        .context("starting bare_poll")?;
    let mut line = String::new();
    let read = server.stdout.take().context("bare_poll's output").map(std::io::BufReader::new);
    let address = read.and_then(|mut out| {
        out.read_line(&mut line)?;
        line.trim().strip_prefix("listening on ").map(str::to_string).context("bare_poll printed no address")
    });
    let figures = address.and_then(|address| wrk(&format!("http://{address}/v1/tasks/{task_id}"), None, None));
    let _ = server.kill();
    let _ = server.wait();
    figures
}

/// `pgbench` with `workload` (`-S`: single-row selects; `-f FILE`: a script) and 32 clients on
/// one thread for five seconds, on a scratch database made and dropped here; transactions a second.
fn pgbench(workload: &[&str]) -> Result<f64> {
    let connection = ["-h", "127.0.0.1", "-U", "postgres"];
    crate::deployment::with_scratch_database("media_pgbench", |database| {
        let init = Command::new("pgbench").args(connection).args(["-i", "-q", "-s", "1", database]).output()?;
        if !init.status.success() {
            bail!("pgbench -i failed: {}", String::from_utf8_lossy(&init.stderr));
        }
        let run = Command::new("pgbench")
            .args(connection)
            .args(workload)
            .args(["-c", "32", "-j", "1", "-T", "5", database])
            .output()?;
        let text = String::from_utf8_lossy(&run.stdout);
        text.lines()
            .find_map(|line| line.strip_prefix("tps = "))
            .and_then(|rest| rest.split_whitespace().next())
            .context("pgbench printed no tps")?
            .parse::<f64>()
            .map_err(Into::into)
    })
}
