//! Two api-servers with workers on one PostgreSQL database, one of them on a host whose clock
//! runs a year ahead (libfaketime): leases are set and compared on the database's clock, so the
//! skewed worker never takes the live job of the other.

mod common;

use common::{terminate, Deployment};
use serde_json::{json, Value};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use storage::test_support::TestDatabase;

/// Where Debian's `faketime` package puts the library (`.ci/run` installs it).
fn libfaketime() -> String {
    let found = std::fs::read_dir("/usr/lib")
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("faketime/libfaketime.so.1"))
        .find(|p| p.exists());
    found.expect("libfaketime is missing: apt-get install faketime").display().to_string()
}

fn this_year() -> u64 {
    let days = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() / 86_400).unwrap_or(0);
    1970 + days * 400 / 146_097
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_whose_clock_runs_ahead_never_takes_a_live_lease() {
    let db = TestDatabase::postgres().expect("PostgreSQL for tests");
    let outputs = std::env::temp_dir().join(storage::new_id("skew-outputs"));
    let outputs = outputs.display().to_string();
    let shared = [
        ("DATABASE_URL", db.url.as_str()),
        ("OUTPUT_DIR", outputs.as_str()),
        ("EMBEDDED_WORKER", "true"),
        // A short lease: a worker comparing it with its own clock would see it lapse at once.
        ("WORKER_LEASE_SECS", "3"),
        ("WORKER_HEARTBEAT_SECS", "1"),
        ("RUST_LOG", "warn,service::job_process=info,api_server=info"),
    ];
    let steady = Deployment::with_env(&shared);
    let preload = libfaketime();
    let mut ahead_env = shared.to_vec();
    ahead_env.extend([("LD_PRELOAD", preload.as_str()), ("FAKETIME", "+1y"), ("FAKETIME_DONT_FAKE_MONOTONIC", "1")]);
    let ahead = Deployment::with_env(&ahead_env);

    // The account and key come from the CLI: PostgreSQL deployments print no first-start key.
    assert!(steady.admin(&["account", "create", "acme", "--card-on-file"]).0);
    let (ok, out) = steady.admin(&["key", "create", "--account", "acme"]);
    assert!(ok, "{out}");
    let key = out.lines().last().expect("secret").to_string();
    let (mut first, _) = steady.start();
    let client = reqwest::Client::new();
    let long = json!({"model": "lambda-t2v", "prompt": "tour", "params": {"duration": 10, "resolution": "720p"}});
    let queued: Value = client
        .post(steady.url("/v1/generate"))
        .bearer_auth(&key)
        .json(&long)
        .send()
        .await
        .expect("submit")
        .json()
        .await
        .expect("json");
    let id = queued["id"].as_str().expect("id").to_string();
    let poll = || async {
        let task: Value = client
            .get(steady.url(&format!("/v1/tasks/{id}")))
            .bearer_auth(&key)
            .send()
            .await
            .expect("poll")
            .json()
            .await
            .expect("json");
        task
    };
    let started = Instant::now();
    while poll().await["status"] != "running" {
        assert!(started.elapsed() < Duration::from_secs(30), "the steady worker did not claim the job");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // The second worker starts while the job runs, its clock a year ahead.
    let (mut second, _) = ahead.start();
    let task = loop {
        let task = poll().await;
        if task["status"] == "succeeded" || task["status"] == "failed" {
            break task;
        }
        assert!(started.elapsed() < Duration::from_secs(180), "{task}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(task["status"], "succeeded", "{task}");
    assert!(terminate(&mut second).success());
    assert!(terminate(&mut first).success());

    // The skew was real (its log is dated a year ahead), and only the steady worker ran the job.
    let (steady_log, ahead_log) = (steady.log(), ahead.log());
    assert!(ahead_log.contains(&format!("{}-", this_year() + 1)), "libfaketime did not take: {ahead_log}");
    assert_eq!(steady_log.lines().filter(|l| l.contains("job process ended") && l.contains(&id)).count(), 1);
    assert!(!ahead_log.contains(&id), "the skewed worker touched the live job: {ahead_log}");
    let (ok, ledger) = steady.admin(&["account", "ledger", "acme"]);
    assert!(ok && ledger.matches("capture").count() == 1, "{ledger}");
    let _ = std::fs::remove_dir_all(&outputs);
}
