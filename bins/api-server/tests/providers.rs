//! Provider tracking across real processes on PostgreSQL: an api-server that submits, a worker
//! that tracks, a simulator standing in for the provider. A worker killed with SIGKILL while it
//! tracks a request is replaced by another that finishes the same request: the provider sees one
//! submission and the job is billed once.

mod common;

use common::{terminate, Deployment, Killed};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

async fn stats(client: &reqwest::Client, sim: &str) -> Value {
    client.get(format!("{sim}/_sim/stats")).send().await.unwrap().json().await.unwrap()
}

/// The provider simulator on a port of its choosing, with `faults`; stopped when dropped.
async fn simulator(client: &reqwest::Client, faults: Value) -> (Killed, String) {
    let probe = Deployment::new();
    let mut sim = probe.sibling("provider-sim");
    let mut sim = Killed(sim.args(["--bind", "127.0.0.1:0"]).stdout(Stdio::piped()).spawn().unwrap());
    let mut line = String::new();
    BufReader::new(sim.0.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let sim_url = line.trim().rsplit(' ').next().unwrap().to_string();
    assert!(sim_url.starts_with("http://127.0.0.1:"), "{line}");
    assert!(client.post(format!("{sim_url}/_sim/faults")).json(&faults).send().await.unwrap().status().is_success());
    (sim, sim_url)
}

async fn read_task(client: &reqwest::Client, deployment: &Deployment, key: &str, id: &str) -> Value {
    let url = deployment.url(&format!("/v1/tasks/{id}"));
    client.get(url).bearer_auth(key).send().await.unwrap().json().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_killed_mid_tracking_is_replaced_without_a_second_submission() {
    let database = storage::test_support::TestDatabase::postgres().expect("PostgreSQL for the scale-out test");
    let client = reqwest::Client::builder().pool_max_idle_per_host(0).build().unwrap();

    // Each request runs 6 s at the provider: long enough to kill the tracking worker midway.
    let (_sim, sim_url) = simulator(&client, json!({"queue_ms": 200, "run_ms": 6000})).await;

    let deployment = Deployment::with_env(&[
        ("DATABASE_URL", database.url.as_str()),
        ("FAL_KEY", "sim-fal-key"),
        ("FAL_QUEUE_URL", sim_url.as_str()),
        ("ENGINE_ROUTES", "beta-image=fal:fal-ai/flux/dev"),
        ("WORKER_LEASE_SECS", "2"),
        ("WORKER_HEARTBEAT_SECS", "1"),
        ("WORKER_POLL_MS", "100"),
    ]);
    let (server, _) = deployment.start_with(&["serve", "--no-worker"]);
    let mut server = Killed(server);
    assert!(deployment.admin(&["account", "create", "acme", "--card-on-file"]).0);
    let (ok, out) = deployment.admin(&["key", "create", "--account", "acme"]);
    assert!(ok, "{out}");
    let key = out.lines().last().unwrap().to_string();

    let first = Killed(deployment.sibling("worker").stderr(Stdio::null()).spawn().unwrap());
    let job = json!({"model": "beta-image", "prompt": "a porch at dusk", "params": {"width": 320, "height": 256}});
    let answer = client.post(deployment.url("/v1/generate")).bearer_auth(&key).json(&job).send().await.unwrap();
    assert_eq!(answer.status(), 202);
    let id = answer.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_string();

    // The first worker is tracking the request: it has polled it. Then it dies without warning.
    let started = Instant::now();
    while stats(&client, &sim_url).await["status_polls"].as_u64().unwrap() == 0 {
        assert!(started.elapsed() < Duration::from_secs(30), "the worker never polled");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    drop(first);
    let task = read_task(&client, &deployment, &key, &id).await;
    assert!(task["status"] == "queued" || task["status"] == "running", "still at the provider: {task}");

    // Another worker takes the request over once the lease lapses, and finishes it.
    let second = Killed(deployment.sibling("worker").stderr(Stdio::null()).spawn().unwrap());
    let started = Instant::now();
    let task = loop {
        let task = read_task(&client, &deployment, &key, &id).await;
        if task["status"] == "succeeded" || task["status"] == "failed" {
            break task;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "{task}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(task["status"], "succeeded", "{task}");
    let image = client.get(task["output"][0]["url"].as_str().unwrap()).send().await.unwrap().bytes().await.unwrap();
    assert_eq!(image::load_from_memory(&image).unwrap().width(), 320);

    let stats = stats(&client, &sim_url).await;
    assert_eq!(stats["fal_submissions"], 1, "the provider was asked once: {stats}");
    let (ok, ledger) = deployment.admin(&["account", "ledger", "acme"]);
    assert!(ok && ledger.matches("capture").count() == 1, "billed once: {ledger}");
    let (ok, margins) = deployment.admin(&["margin"]);
    let row = margins.lines().find(|l| l.contains("beta-image")).unwrap_or_default().to_string();
    assert!(ok && row.starts_with("fal") && row.split_whitespace().nth(2) == Some("1"), "{margins}");
    assert_eq!(row.split_whitespace().nth(3), task["cost_usd"].as_str(), "{margins}");
    let (ok, out) = deployment.admin(&["verify-ledger"]);
    assert!(ok, "{out}");
    drop(second);
    assert!(terminate(&mut server.0).success());
}

/// Peak resident memory of process `pid`, MiB (`VmHWM`).
fn peak_rss_mib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() / 1024
}

/// A provider's result far larger than the worker's memory budget is taken in a part at a time,
/// through a scratch file into the store: the worker's peak memory stays far below the file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_result_is_taken_in_with_bounded_worker_memory() {
    const PADDING_MIB: u64 = 384;
    let database = storage::test_support::TestDatabase::postgres().expect("PostgreSQL for the intake test");
    let client = reqwest::Client::builder().pool_max_idle_per_host(0).build().unwrap();
    let (_sim, sim_url) = simulator(&client, json!({"media_padding_bytes": PADDING_MIB << 20})).await;

    let deployment = Deployment::with_env(&[
        ("DATABASE_URL", database.url.as_str()),
        ("FAL_KEY", "sim-fal-key"),
        ("FAL_QUEUE_URL", sim_url.as_str()),
        ("ENGINE_ROUTES", "beta-image=fal:fal-ai/flux/dev"),
        ("WORKER_POLL_MS", "100"),
    ]);
    let (server, _) = deployment.start_with(&["serve", "--no-worker"]);
    let mut server = Killed(server);
    let key = deployment.account_key("acme");
    let worker = Killed(deployment.sibling("worker").stderr(Stdio::null()).spawn().unwrap());
    let job = json!({"model": "beta-image", "prompt": "a porch at dusk", "params": {"width": 320, "height": 256}});
    let answer = client.post(deployment.url("/v1/generate")).bearer_auth(&key).json(&job).send().await.unwrap();
    assert_eq!(answer.status(), 202);
    let id = answer.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_string();
    let started = Instant::now();
    let task = loop {
        let task = read_task(&client, &deployment, &key, &id).await;
        if task["status"] == "succeeded" || task["status"] == "failed" {
            break task;
        }
        assert!(started.elapsed() < Duration::from_secs(120), "{task}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(task["status"], "succeeded", "{task}");
    let peak = peak_rss_mib(worker.0.id());
    // The stored output is the whole file, padding included.
    let stored = client.get(task["output"][0]["url"].as_str().unwrap()).send().await.unwrap();
    let length = stored.content_length().unwrap_or_default();
    assert!(length > PADDING_MIB << 20, "{length} bytes stored");
    drop(stored);
    assert!(peak < PADDING_MIB / 3, "the worker peaked at {peak} MiB taking in a {PADDING_MIB} MiB file");
    eprintln!("worker peak {peak} MiB for a {} MiB result", length >> 20);
    drop(worker);
    assert!(terminate(&mut server.0).success());
}
