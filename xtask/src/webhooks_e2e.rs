//! `cargo xtask webhooks-e2e`: completion webhooks end to end on PostgreSQL with a standalone
//! worker, received by a Python receiver on loopback that verifies every request with the
//! Standard Webhooks reference implementation (`standardwebhooks`, pinned in
//! `crates/webhooks/tests/e2e/requirements.txt`) and refuses the first two attempts of each
//! message. The worker is killed with SIGKILL between attempts and started again: every message
//! must still be taken, exactly once after dedup by `webhook-id`, and the delivery log must show
//! every attempt, an attempt whose answer the kill kept from being recorded listed as unrecorded.

use crate::deployment::{python_with, Deployment};
use anyhow::{bail, ensure, Context, Result};
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

const REQUIREMENTS: &str = "crates/webhooks/tests/e2e/requirements.txt";
const RECEIVER: &str = "crates/webhooks/tests/e2e/receiver.py";
/// Attempts of each message the receiver refuses.
const REFUSALS: usize = 2;

/// The receiver's process, stopped on drop.
struct ReceiverProcess(Child);

impl Drop for ReceiverProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn run() -> Result<()> {
    let python = python_with(REQUIREMENTS)?;
    crate::build_binaries("debug")?;
    let env = [("ALLOW_PRIVATE_WEBHOOK_URLS", "true".to_string()), ("WEBHOOK_RETRY_DELAYS", "2s,2s,2s,2s".into())];
    let mut deployment = Deployment::start("debug", true, &env)?;
    let created = deployment.admin_lines(&["key", "create", "--account", "e2e", "--label", "webhooks"])?;
    let secret = created
        .iter()
        .find_map(|line| line.strip_prefix("webhook signing secret (shown only now): "))
        .context("key create printed no webhook signing secret")?
        .to_string();
    let key = created.last().context("key create printed nothing")?.clone();

    let scratch = std::env::temp_dir().join(format!("webhooks-e2e-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let (port_file, log) = (scratch.join("port"), scratch.join("received.jsonl"));
    let _receiver = ReceiverProcess(
        Command::new(&python)
            .args([RECEIVER, &port_file.display().to_string(), &log.display().to_string(), &secret])
            .arg(REFUSALS.to_string())
            .spawn()
            .context("starting the receiver")?,
    );
    let port = wait_for(Duration::from_secs(30), || Ok(std::fs::read_to_string(&port_file).ok()))?;
    let receiver_url = format!("http://127.0.0.1:{port}/hooks/media");
    deployment.start_worker()?;

    let runtime = tokio::runtime::Runtime::new()?;
    let outcome = runtime.block_on(drive(&mut deployment, &key, &receiver_url, &log));
    let _ = std::fs::remove_dir_all(&scratch);
    outcome
}

async fn drive(deployment: &mut Deployment, key: &str, receiver_url: &str, log: &Path) -> Result<()> {
    let client = reqwest::Client::new();
    let submitted: Value = client
        .post(format!("{}/v1/generate", deployment.base))
        .bearer_auth(key)
        .json(&json!({
            "model": "beta-image", "prompt": "a porch at dusk",
            "webhook_url": receiver_url, "webhook_events": ["running", "completed"],
        }))
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    let id = submitted["id"].as_str().context("no task id")?.to_string();
    // Kill the worker once the completed message was refused once: mid-schedule.
    wait_for(Duration::from_secs(60), || {
        Ok(received(log)?.iter().any(|r| r["body"]["status"] == "succeeded").then_some(()))
    })?;
    deployment.kill_worker()?;
    eprintln!("webhooks-e2e: worker killed after the first refusal of task {id}'s completion message");
    std::thread::sleep(Duration::from_secs(3));
    deployment.start_worker()?;

    let taken = wait_for(Duration::from_secs(90), || {
        let all = received(log)?;
        let taken: Vec<&Value> = all.iter().filter(|r| r["answered"] == 200).collect();
        Ok((taken.len() >= 2).then(|| all.clone()))
    })?;
    // Let any stray resend arrive before counting.
    std::thread::sleep(Duration::from_secs(3));
    let all = received(log)?;
    ensure!(all.iter().all(|r| r["verified"] == true), "a request failed verification: {all:?}");
    let duplicates = all.iter().filter(|r| r["duplicate"] == true).count();
    let mut ids: Vec<&str> = all.iter().filter_map(|r| r["id"].as_str()).collect();
    ids.sort();
    ids.dedup();
    ensure!(ids.len() == 2, "one running and one completed message, got {ids:?}");
    for message in &ids {
        let tries: Vec<&Value> = all.iter().filter(|r| r["id"] == *message).collect();
        let takes = tries.iter().filter(|r| r["answered"] == 200 && r["duplicate"] == false).count();
        ensure!(takes == 1, "message {message} taken {takes} times after dedup");
        ensure!(tries.len() > REFUSALS, "message {message} tried {} times", tries.len());
    }
    let statuses: Vec<&str> = taken.iter().filter_map(|r| r["body"]["status"].as_str()).collect();
    ensure!(statuses.contains(&"running") && statuses.contains(&"succeeded"), "{statuses:?}");

    let deliveries: Value = client
        .get(format!("{}/v1/webhooks/deliveries?task_id={id}", deployment.base))
        .bearer_auth(key)
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    let deliveries = deliveries["deliveries"].as_array().context("no deliveries")?;
    ensure!(deliveries.len() == 2, "{deliveries:?}");
    for delivery in deliveries {
        ensure!(delivery["status"] == "delivered", "{delivery}");
        // Every attempt the receiver saw is logged, numbered from 1: refused, or unrecorded when
        // the kill fell between the receiver's answer and its record; the last one taken.
        let attempts = delivery["attempts"].as_array().context("no attempts")?;
        let tried = all.iter().filter(|r| r["id"] == delivery["id"]).count();
        let numbers: Vec<i64> = attempts.iter().filter_map(|a| a["attempt"].as_i64()).collect();
        let expected: Vec<i64> = (1..).take(attempts.len()).collect();
        ensure!(numbers == expected && attempts.len() >= tried, "{tried} tries received, logged {delivery}");
        let (last, earlier) = attempts.split_last().context("no attempts")?;
        ensure!(last["status_code"] == 200, "{delivery}");
        let refused_or_unrecorded =
            |a: &Value| a["status_code"] == 503 || (a["status_code"].is_null() && a["error"].is_string());
        ensure!(earlier.iter().all(refused_or_unrecorded), "{delivery}");
    }
    eprintln!(
        "webhooks-e2e: {} requests, all verified by standardwebhooks; 2 messages, each taken once \
         ({duplicates} resends deduplicated); the worker was killed mid-schedule",
        all.len()
    );
    Ok(())
}

/// The receiver's log so far.
fn received(log: &Path) -> Result<Vec<Value>> {
    let Ok(text) = std::fs::read_to_string(log) else { return Ok(Vec::new()) };
    text.lines().map(|line| serde_json::from_str(line).context("receiver log")).collect()
}

/// Polls `probe` until it yields, for at most `limit`.
fn wait_for<T>(limit: Duration, mut probe: impl FnMut() -> Result<Option<T>>) -> Result<T> {
    let started = Instant::now();
    loop {
        if let Some(found) = probe()? {
            return Ok(found);
        }
        if started.elapsed() > limit {
            bail!("gave up after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
