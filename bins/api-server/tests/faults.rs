//! Fault drills with real processes: PostgreSQL restarted under load, a worker stopped with
//! SIGTERM while it runs a job, and an output store that is full or cannot be written. In each,
//! no accepted task is lost, nothing is billed twice, and nothing is billed for a lost output.

mod common;

use common::{terminate, Deployment, Killed, PrivatePostgres};
use serde_json::{json, Value};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What one request of the load met.
#[derive(Debug)]
struct Answer {
    status: u16,
    retry_after: Option<String>,
    took: Duration,
    body: Value,
}

fn captures(deployment: &Deployment, account: &str) -> usize {
    let (ok, ledger) = deployment.admin(&["account", "ledger", account]);
    assert!(ok, "{ledger}");
    ledger.lines().filter(|line| line.contains("capture")).count()
}

const SMALL_IMAGE: &str =
    r#"{"model": "alpha-schnell", "prompt": "a porch at dusk", "params": {"width": 256, "height": 256}}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_restarted_under_load_answers_503_quickly_and_loses_no_accepted_task() {
    let postgres = PrivatePostgres::start();
    let url = postgres.url();
    let deployment = Deployment::with_env(&[
        ("DATABASE_URL", url.as_str()),
        ("RATE_LIMIT_SUBMITS_PER_MINUTE", "0"),
        ("RATE_LIMIT_READS_PER_MINUTE", "0"),
        ("WORKER_POLL_MS", "100"),
        ("WORKER_LEASE_SECS", "4"),
        ("WORKER_HEARTBEAT_SECS", "1"),
    ]);
    // Processes of a deploy that start together on a fresh database take turns migrating it.
    let migrations: Vec<_> = (0..3)
        .map(|_| deployment.command().arg("migrate").stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap())
        .collect();
    for migrated in migrations {
        let migrated = migrated.wait_with_output().unwrap();
        assert!(migrated.status.success(), "{}", String::from_utf8_lossy(&migrated.stderr));
    }
    let (server, _) = deployment.start_with(&["serve", "--no-worker"]);
    let mut server = Killed(server);
    let key = deployment.account_key("acme");
    let worker = Killed(deployment.spawn_worker(&[]));
    let client = reqwest::Client::builder().timeout(Duration::from_secs(30)).build().unwrap();

    // Eight clients submit small jobs as fast as they are answered, through the whole drill.
    let answers = Arc::new(Mutex::new(Vec::<Answer>::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let mut load = Vec::new();
    for _ in 0..8 {
        let (client, answers, stop, key) = (client.clone(), answers.clone(), stop.clone(), key.clone());
        let url = deployment.url("/v1/generate");
        load.push(tokio::spawn(async move {
            let job: Value = serde_json::from_str(SMALL_IMAGE).unwrap();
            while !stop.load(Ordering::Relaxed) {
                let started = Instant::now();
                let answer =
                    client.post(&url).bearer_auth(&key).json(&job).send().await.expect("an answer, not a hang");
                let status = answer.status().as_u16();
                let retry_after = answer.headers().get("retry-after").map(|v| v.to_str().unwrap().to_string());
                let body = answer.json::<Value>().await.expect("a JSON body");
                answers.lock().unwrap().push(Answer { status, retry_after, took: started.elapsed(), body });
                if status != 202 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }));
    }
    let accepted = |answers: &Mutex<Vec<Answer>>| answers.lock().unwrap().iter().filter(|a| a.status == 202).count();
    let started = Instant::now();
    while accepted(&answers) < 20 {
        assert!(started.elapsed() < Duration::from_secs(30), "the load never got going");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The worker is to live through the outage, so it is up and running jobs before it: on a busy
    // machine its start can take longer than twenty submits do.
    let first: String =
        answers.lock().unwrap().iter().find(|a| a.status == 202).unwrap().body["id"].as_str().unwrap().to_string();
    deployment.finished(&client, &key, &first, Duration::from_secs(60)).await;

    // The restart: the server is down for three seconds.
    postgres.stop();
    let down_at = answers.lock().unwrap().len();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let readiness = client.get(deployment.url("/readyz")).send().await.unwrap();
    assert_eq!(readiness.status(), 503);
    let readiness: Value = readiness.json().await.unwrap();
    assert_eq!(readiness["checks"]["database"], "unreachable", "{readiness}");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    postgres.start_again();
    let up_at = answers.lock().unwrap().len();
    let accepted_before = accepted(&answers);

    // Both processes find the database again by themselves: submits are accepted again.
    let started = Instant::now();
    while accepted(&answers) < accepted_before + 20 {
        assert!(started.elapsed() < Duration::from_secs(30), "the api-server did not recover");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    stop.store(true, Ordering::Relaxed);
    for client in load {
        client.await.unwrap();
    }
    let answers = std::mem::take(&mut *answers.lock().unwrap());

    // During the outage every refusal was a quick 503 in JSON, and nothing else went wrong.
    let refused: Vec<&Answer> = answers.iter().filter(|a| a.status != 202).collect();
    assert!(!refused.is_empty(), "no request met the outage");
    for answer in &refused {
        assert_eq!(answer.status, 503, "{answer:?}");
        assert_eq!(answer.body["code"], "unavailable", "{answer:?}");
        assert_eq!(answer.retry_after.as_deref(), Some("2"), "{answer:?}");
        assert!(answer.body["error"].as_str().is_some_and(|e| !e.is_empty()), "{answer:?}");
    }
    let slowest = answers.iter().map(|a| a.took).max().unwrap();
    assert!(slowest < Duration::from_secs(8), "an answer took {slowest:?}");
    let during = &answers[down_at.saturating_sub(8)..up_at.min(answers.len())];
    assert!(during.iter().any(|a| a.status == 503), "the outage was answered with 503");

    // Every accepted task runs once and is billed once; the worker lived through the outage.
    let ids: Vec<String> =
        answers.iter().filter(|a| a.status == 202).map(|a| a.body["id"].as_str().unwrap().to_string()).collect();
    for id in &ids {
        let task = deployment.finished(&client, &key, id, Duration::from_secs(180)).await;
        assert_eq!(task["status"], "succeeded", "{task}");
    }
    assert_eq!(captures(&deployment, "acme"), ids.len(), "one capture per accepted task");
    let (ok, out) = deployment.admin(&["verify-ledger"]);
    assert!(ok, "{out}");
    let mut worker = worker;
    assert!(worker.0.try_wait().unwrap().is_none(), "the worker is still running");
    assert!(terminate(&mut worker.0).success());
    assert!(terminate(&mut server.0).success());
    let log = deployment.log();
    assert!(log.contains("claiming a job failed"), "the worker noticed the outage");
}

/// A worker stopped with SIGTERM stops claiming, finishes the job it runs when its grace allows,
/// or else hands it back to the queue at once; either way the job is billed once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_stopped_with_sigterm_finishes_or_hands_back_its_job() {
    let deployment = Deployment::with_env(&[("WORKER_POLL_MS", "100"), ("RUST_LOG", "info")]);
    let (server, key) = deployment.start_with(&["serve", "--no-worker"]);
    let mut server = Killed(server);
    let key = key.expect("first-start key");
    let client = reqwest::Client::new();
    let long_job =
        json!({"model": "lambda-t2v", "prompt": "long tour", "params": {"duration": 3, "resolution": "480p"}});
    let wait_running = |id: String| {
        let (client, deployment, key) = (&client, &deployment, &key);
        async move {
            let started = Instant::now();
            while deployment.task(client, key, &id).await["status"] != "running" {
                assert!(started.elapsed() < Duration::from_secs(30));
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    };

    // With a grace long enough, the job finishes before the worker exits.
    let id = deployment.submit(&client, &key, &long_job).await;
    let mut graceful = Killed(deployment.spawn_worker(&[("SHUTDOWN_GRACE_SECS", "120")]));
    wait_running(id.clone()).await;
    let queued_meanwhile = deployment.submit(&client, &key, &long_job).await;
    assert!(terminate(&mut graceful.0).success(), "graceful exit");
    assert_eq!(deployment.task(&client, &key, &id).await["status"], "succeeded", "finished before exiting");
    assert_eq!(
        deployment.task(&client, &key, &queued_meanwhile).await["status"],
        "queued",
        "not claimed after SIGTERM"
    );

    // With no grace, the running job goes back to the queue at once and another worker runs it:
    // at once, not after the ten-minute lease the stopped worker took (the poll limit below is
    // far shorter).
    let no_grace = [("SHUTDOWN_GRACE_SECS", "0"), ("WORKER_LEASE_SECS", "600")];
    let mut hasty = Killed(deployment.spawn_worker(&no_grace));
    wait_running(queued_meanwhile.clone()).await;
    assert!(terminate(&mut hasty.0).success(), "exit without grace");
    assert!(deployment.log().contains("released to the queue at shutdown"), "{}", deployment.log());
    let _next = Killed(deployment.spawn_worker(&[]));
    let task = deployment.finished(&client, &key, &queued_meanwhile, Duration::from_secs(120)).await;
    assert_eq!(task["status"], "succeeded", "{task}");
    assert_eq!(captures(&deployment, "dev"), 2, "each job billed once");
    let (ok, out) = deployment.admin(&["verify-ledger"]);
    assert!(ok, "{out}");
    assert!(terminate(&mut server.0).success());
}

/// The store the deployment writes outputs to, on a small filesystem of its own (a tmpfs, which
/// needs the right to mount: root in a container with it).
struct SmallFilesystem(std::path::PathBuf);

impl SmallFilesystem {
    fn mount(path: std::path::PathBuf, size: &str) -> Option<SmallFilesystem> {
        std::fs::create_dir_all(&path).unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&path)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        mounted.then_some(SmallFilesystem(path))
    }
}

impl Drop for SmallFilesystem {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// Fills the filesystem of `dir` until only about `left` bytes are free; returns the filler.
fn fill(dir: &std::path::Path, left: u64) -> std::path::PathBuf {
    use std::io::Write;
    let path = dir.join("filler");
    let mut file = std::fs::File::create(&path).unwrap();
    let chunk = vec![7u8; 64 * 1024];
    let mut written = 0u64;
    while file.write_all(&chunk).is_ok() {
        written += chunk.len() as u64;
    }
    file.set_len(written.saturating_sub(left)).unwrap();
    path
}

/// A full disk: the job fails with a reason that says so (or waits and then succeeds once there
/// is room), and nothing is billed for an output that was not kept. Once there is room again, the
/// same job succeeds and is billed once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_fails_the_job_unbilled_and_room_again_lets_it_succeed() {
    let outputs = std::env::temp_dir().join(format!("small-store-{}-{}", std::process::id(), common::rand_suffix()));
    let Some(small) = SmallFilesystem::mount(outputs, "4m") else {
        // Mounting needs root with the right to mount; docs/operations.md says where this runs.
        eprintln!("faults: a tmpfs cannot be mounted here; the disk-full drill is not run");
        return;
    };
    let deployment = Deployment::with_env(&[("OUTPUT_DIR", &small.0.to_string_lossy()), ("WORKER_MAX_ATTEMPTS", "2")]);
    let (server, key) = deployment.start();
    let mut server = Killed(server);
    let key = key.expect("first-start key");
    let client = reqwest::Client::new();

    let filler = fill(&small.0, 16 * 1024);
    let id = deployment.submit(&client, &key, &big_image()).await;
    let task = deployment.finished(&client, &key, &id, Duration::from_secs(120)).await;
    assert_eq!(task["status"], "failed", "{task}");
    let error = task["error"].as_str().unwrap_or_default();
    assert!(error.contains("could not be stored (the output store is full)"), "{task}");
    assert!(!error.contains(&*small.0.to_string_lossy()), "no server paths in answers: {task}");
    assert_eq!(captures(&deployment, "dev"), 0, "nothing billed: {task}");

    std::fs::remove_file(filler).unwrap();
    let id = deployment.submit(&client, &key, &big_image()).await;
    let task = deployment.finished(&client, &key, &id, Duration::from_secs(120)).await;
    assert_eq!(task["status"], "succeeded", "{task}");
    let image = client.get(task["output"][0]["url"].as_str().unwrap()).send().await.unwrap().bytes().await.unwrap();
    assert_eq!(image::load_from_memory(&image).unwrap().width(), 1024);
    assert_eq!(captures(&deployment, "dev"), 1);
    let (ok, out) = deployment.admin(&["verify-ledger"]);
    assert!(ok, "{out}");
    assert!(terminate(&mut server.0).success());
}

/// A store that cannot be written (its directory gone, a file in its place): readiness says so,
/// the job fails clearly, and nothing is billed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unwritable_store_fails_the_job_unbilled_and_readiness_says_so() {
    let deployment = Deployment::with_env(&[("WORKER_MAX_ATTEMPTS", "2")]);
    let (server, key) = deployment.start();
    let mut server = Killed(server);
    let key = key.expect("first-start key");
    let client = reqwest::Client::new();
    assert_eq!(client.get(deployment.url("/readyz")).send().await.unwrap().status(), 200);

    let store = deployment.dir.join("outputs");
    std::fs::rename(&store, deployment.dir.join("outputs-aside")).unwrap();
    std::fs::write(&store, b"not a directory").unwrap();
    let readiness = client.get(deployment.url("/readyz")).send().await.unwrap();
    assert_eq!(readiness.status(), 503);
    let readiness: Value = readiness.json().await.unwrap();
    assert_ne!(readiness["checks"]["store"], "ok", "{readiness}");

    let id = deployment.submit(&client, &key, &big_image()).await;
    let task = deployment.finished(&client, &key, &id, Duration::from_secs(120)).await;
    assert_eq!(task["status"], "failed", "{task}");
    assert!(task["error"].as_str().is_some_and(|e| e.contains("could not be stored")), "{task}");

    // The store back: ready again, and the next job succeeds without a restart.
    std::fs::remove_file(&store).unwrap();
    std::fs::rename(deployment.dir.join("outputs-aside"), &store).unwrap();
    assert_eq!(client.get(deployment.url("/readyz")).send().await.unwrap().status(), 200);
    let id = deployment.submit(&client, &key, &big_image()).await;
    let task = deployment.finished(&client, &key, &id, Duration::from_secs(120)).await;
    assert_eq!(task["status"], "succeeded", "{task}");
    assert_eq!(captures(&deployment, "dev"), 1, "the lost output was not billed, the kept one once");
    let (ok, out) = deployment.admin(&["verify-ledger"]);
    assert!(ok, "{out}");
    assert!(terminate(&mut server.0).success());
}

fn big_image() -> Value {
    json!({"model": "alpha-schnell", "prompt": "a wide lawn", "params": {"width": 1024, "height": 1024}})
}
