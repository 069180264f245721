//! The real binary as a process: first-start key, the admin CLI, and SIGTERM with nothing lost.

use serde_json::{json, Value};
use std::time::{Duration, Instant};

mod common;

use common::{terminate, Deployment};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_start_admin_cli_and_sigterm_lose_nothing() {
    let deployment = Deployment::new();
    // `migrate` prepares a fresh database on its own, without serving.
    let output = deployment.command().arg("migrate").output().unwrap();
    assert!(output.status.success() && String::from_utf8_lossy(&output.stdout).contains("up to date"));
    let (mut server, key) = deployment.start();
    let key = key.expect("a fresh embedded deployment prints its first key");
    let client = reqwest::Client::new();

    // The admin CLI works beside the running server: the new secret is alone on the last line.
    assert!(deployment.admin(&["account", "create", "acme", "--card-on-file"]).0);
    let (ok, out) = deployment.admin(&["key", "create", "--account", "acme", "--spend-cap", "1.5", "--label", "ci"]);
    assert!(ok);
    let secret = out.lines().last().unwrap().to_string();
    assert!(secret.starts_with("mgk_") && secret.len() == 68, "{out}");
    let (ok, listed) = deployment.admin(&["key", "list", "--account", "acme"]);
    assert!(ok && listed.contains("1.5000") && listed.contains("active"), "{listed}");
    let usage: Value =
        client.get(deployment.url("/v1/usage")).bearer_auth(&secret).send().await.unwrap().json().await.unwrap();
    assert_eq!(usage["spend_cap_usd"], "1.5000");

    // The operator changes the card flag, the cap, and revokes the key: each takes effect at once.
    assert!(deployment.admin(&["account", "card", "acme", "--off"]).1.contains("card on file: false"));
    let key_id = listed.lines().nth(1).and_then(|l| l.split_whitespace().next()).unwrap().to_string();
    assert!(deployment.admin(&["key", "cap", &key_id, "--usd", "0.01"]).0);
    let tts = json!({"model": "tts", "prompt": "one sentence"});
    let refused = client.post(deployment.url("/v1/generate")).bearer_auth(&secret).json(&tts).send().await.unwrap();
    assert_eq!(refused.status(), 402, "0.0150 does not fit a 0.01 cap");
    assert!(deployment.admin(&["key", "cap", &key_id, "--none"]).0);

    // The key's webhooks from the CLI: a default target (a public receiver only), the signing
    // secret rotated and shown once, then shown no more.
    let receiver = "https://93.184.216.34/hooks/media";
    let (ok, out) = deployment.admin(&["key", "webhook", &key_id, "--url", receiver, "--running", "--rotate-secret"]);
    assert!(ok && out.contains(&format!("default webhook {receiver} (running and completed)")), "{out}");
    assert!(out.lines().last().unwrap().starts_with("whsec_"), "{out}");
    let (ok, shown) = deployment.admin(&["key", "webhook", &key_id]);
    assert!(ok && shown.contains(receiver) && !shown.contains("whsec_"), "{shown}");
    let (ok, _) = deployment.admin(&["key", "webhook", &key_id, "--url", "http://10.0.0.1/hooks"]);
    assert!(!ok, "a private receiver is refused");
    let (ok, cleared) = deployment.admin(&["key", "webhook", &key_id, "--clear"]);
    assert!(ok && cleared.contains("no default webhook"), "{cleared}");
    let (ok, rates) = deployment.admin(&["key", "rate", &key_id, "--submits-per-minute", "600"]);
    assert!(ok && rates.contains("submits 600/min, reads the default"), "{rates}");

    let accepted = client.post(deployment.url("/v1/generate")).bearer_auth(&secret).json(&tts).send().await.unwrap();
    assert_eq!(accepted.status(), 202);
    let task_url =
        deployment.url(&format!("/v1/tasks/{}", accepted.json::<Value>().await.unwrap()["id"].as_str().unwrap()));
    // Polled to its end and once more, so the server holds the key and the ended task in memory.
    let started = Instant::now();
    loop {
        let task: Value = client.get(&task_url).bearer_auth(&secret).send().await.unwrap().json().await.unwrap();
        if task["status"] == "succeeded" {
            break;
        }
        assert!(task["status"] != "failed" && started.elapsed() < Duration::from_secs(60), "{task}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(client.get(&task_url).bearer_auth(&secret).send().await.unwrap().status(), 200);
    assert!(deployment.admin(&["key", "revoke", &key_id]).0);
    let revoked = client.get(&task_url).bearer_auth(&secret).send().await.unwrap();
    assert_eq!(revoked.status(), 401, "a key revoked by another process is refused at once, even for an ended task");
    let revoked = client.get(deployment.url("/v1/usage")).bearer_auth(&secret).send().await.unwrap();
    assert_eq!(revoked.status(), 401);

    // A long job is running when SIGTERM arrives; with no grace it is released, not lost.
    let queued: Value = client
        .post(deployment.url("/v1/generate"))
        .bearer_auth(&key)
        .json(&json!({"model": "lambda-t2v", "prompt": "long tour", "params": {"duration": 4, "resolution": "480p"}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = queued["id"].as_str().unwrap().to_string();
    let poll = |client: reqwest::Client, url: String, key: String| async move {
        client.get(url).bearer_auth(key).send().await.unwrap().json::<Value>().await.unwrap()
    };
    let started = Instant::now();
    while poll(client.clone(), deployment.url(&format!("/v1/tasks/{id}")), key.clone()).await["status"] != "running" {
        assert!(started.elapsed() < Duration::from_secs(30));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(terminate(&mut server).success(), "graceful exit");

    // After a restart the released job is finished, and billed once.
    let (mut server, again) = deployment.start();
    assert!(again.is_none(), "the first-start key is printed only once");
    let started = Instant::now();
    let task = loop {
        let task = poll(client.clone(), deployment.url(&format!("/v1/tasks/{id}")), key.clone()).await;
        if task["status"] == "succeeded" || task["status"] == "failed" {
            break task;
        }
        assert!(started.elapsed() < Duration::from_secs(120), "{task}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(task["status"], "succeeded", "{task}");
    assert!(terminate(&mut server).success());
    let (ok, out) = deployment.admin(&["verify-ledger"]);
    assert!(ok, "{out}");
    let (ok, ledger) = deployment.admin(&["account", "ledger", "dev"]);
    assert!(ok && ledger.matches("capture").count() == 1, "{ledger}");
}

/// An api-server killed while a client waits on a synchronous recipe loses nothing: the task was
/// durable before the wait, runs after the restart, and is billed once.
#[tokio::test]
async fn a_crash_while_a_lot_trace_waits_loses_nothing_and_bills_once() {
    let deployment = Deployment::new();
    // No pooled connections: the server is restarted on the same port under the client.
    let client = reqwest::Client::builder().pool_max_idle_per_host(0).build().unwrap();
    let (mut server, key) = deployment.start();
    let key = key.expect("first-start key");
    // A photo of our own to trace (own output URLs stay valid across restarts).
    let generate = json!({"model": "alpha-schnell", "prompt": "aerial lot", "params": {"width": 320, "height": 256}});
    let queued: Value = client
        .post(deployment.url("/v1/generate"))
        .bearer_auth(&key)
        .json(&generate)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = queued["id"].as_str().unwrap().to_string();
    let started = Instant::now();
    let image = loop {
        let task: Value = client
            .get(deployment.url(&format!("/v1/tasks/{id}")))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if task["status"] == "succeeded" {
            break task["output"][0]["url"].as_str().unwrap().to_string();
        }
        assert!(started.elapsed() < Duration::from_secs(60), "{task}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(terminate(&mut server).success());

    // With no worker, the lot-trace waits; the server is killed under it.
    let (mut server, _) = deployment.start_with(&["serve", "--no-worker"]);
    let trace = json!({"image_url": image, "points": [[20, 20], [220, 20], [220, 200], [20, 200]], "params": {"meters_per_pixel": 0.5}});
    let waiting = {
        let (client, url, key) = (client.clone(), deployment.url("/v1/recipes/lot-trace"), key.clone());
        tokio::spawn(async move { client.post(url).bearer_auth(key).json(&trace).send().await })
    };
    tokio::time::sleep(Duration::from_millis(800)).await;
    if waiting.is_finished() {
        let answer = waiting.await.unwrap().unwrap();
        panic!("the lot-trace answered with no worker running: {} {}", answer.status(), answer.text().await.unwrap());
    }
    server.kill().unwrap();
    server.wait().unwrap();
    assert!(waiting.await.unwrap().is_err(), "the waiting client lost its connection");

    // After a restart the task runs and is billed once: two captures (the photo and the trace).
    let (mut server, _) = deployment.start();
    let started = Instant::now();
    loop {
        let (ok, ledger) = deployment.admin(&["account", "ledger", "dev"]);
        assert!(ok, "{ledger}");
        if ledger.matches("capture").count() == 2 {
            assert!(ledger.contains("0.0300"), "{ledger}");
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "{ledger}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (_, ledger) = deployment.admin(&["account", "ledger", "dev"]);
    assert_eq!(ledger.matches("capture").count(), 2, "{ledger}");
    assert!(terminate(&mut server).success());
    let (ok, out) = deployment.admin(&["verify-ledger"]);
    assert!(ok, "{out}");
}

/// The job processes `parent` runs now (their pids).
fn job_processes(parent: u32) -> Vec<String> {
    let out =
        std::process::Command::new("pgrep").args(["-P", &parent.to_string(), "-f", service::CHILD_COMMAND]).output();
    out.map(|o| String::from_utf8_lossy(&o.stdout).split_whitespace().map(str::to_string).collect()).unwrap_or_default()
}

/// Lease renewals 25 s apart: a cancelled job's process that ends within the 20 s the check
/// waits was stopped by the task's end being announced, not found out at a renewal.
const LATE_HEARTBEAT: [(&str, &str); 2] = [("WORKER_HEARTBEAT_SECS", "25"), ("WORKER_LEASE_SECS", "60")];

/// Submits a long video as `key`, waits for its process under `runner` (the process running jobs),
/// cancels it, and checks the job's process ends soon after and nothing is billed to `account`.
async fn cancel_and_see_the_process_end(deployment: &Deployment, key: &str, runner: u32, account: &str) {
    let client = reqwest::Client::new();
    let long =
        json!({"model": "lambda-t2v", "prompt": "a long tour", "params": {"duration": 10, "resolution": "720p"}});
    let id = deployment.submit(&client, key, &long).await;
    let started = Instant::now();
    while job_processes(runner).is_empty() {
        assert!(started.elapsed() < Duration::from_secs(30), "the job's process never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let cancelled =
        client.post(deployment.url(&format!("/v1/tasks/{id}/cancel"))).bearer_auth(key).send().await.unwrap();
    assert_eq!(cancelled.status(), 200);
    let task: Value = cancelled.json().await.unwrap();
    assert_eq!(task["error"], "cancelled by client", "{task}");
    let stopping = Instant::now();
    while !job_processes(runner).is_empty() {
        assert!(stopping.elapsed() < Duration::from_secs(20), "the cancelled job's process still runs");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    eprintln!("the job's process ended {} ms after the cancel", stopping.elapsed().as_millis());
    let (ok, ledger) = deployment.admin(&["account", "ledger", account]);
    assert!(ok && !ledger.contains("capture") && ledger.contains("release"), "{ledger}");
}

/// A client's cancel of a job running in its own process ends that process, not only the record:
/// the worker finds its lease gone as soon as the task ends and kills the job's process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_running_job_has_its_process_stopped_and_is_not_billed() {
    let deployment = Deployment::with_env(&LATE_HEARTBEAT);
    let (mut server, key) = deployment.start();
    let key = key.expect("first-start key");
    cancel_and_see_the_process_end(&deployment, &key, server.id(), "dev").await;
    assert!(terminate(&mut server).success());
}

/// The same across processes on PostgreSQL: the cancel is answered by an api-server, and the
/// worker running the job learns of it from the database's `NOTIFY`, not at its next heartbeat.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_reaches_a_standalone_workers_job_through_postgres() {
    let database = storage::test_support::TestDatabase::postgres().expect("PostgreSQL");
    let mut env = LATE_HEARTBEAT.to_vec();
    env.push(("DATABASE_URL", database.url.as_str()));
    let deployment = Deployment::with_env(&env);
    let (server, _) = deployment.start_with(&["serve", "--no-worker"]);
    let mut server = common::Killed(server);
    let key = deployment.account_key("acme");
    let mut worker = common::Killed(deployment.spawn_worker(&[]));
    cancel_and_see_the_process_end(&deployment, &key, worker.0.id(), "acme").await;
    assert!(terminate(&mut worker.0).success());
    assert!(terminate(&mut server.0).success());
}

/// A real job's process, read from `/proc` while it runs: none of the service's secrets in its
/// environment, `no_new_privs` and a seccomp filter set, and limits on CPU time, memory, open
/// files, file size and core dumps.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_jobs_process_holds_no_secret_and_is_confined() {
    const SECRETS: [(&str, &str); 5] = [
        ("FAL_KEY", "fal-key-that-must-not-reach-a-job"),
        ("REPLICATE_API_TOKEN", "r8_token-that-must-not-reach-a-job"),
        ("URL_SIGNING_SECRET", "signing-secret-that-must-not-reach-a-job-0123456789"),
        ("AWS_SECRET_ACCESS_KEY", "aws-secret-that-must-not-reach-a-job"),
        ("METRICS_TOKEN", "metrics-token-that-must-not-reach-a-job"),
    ];
    let deployment = Deployment::with_env(&SECRETS);
    let (mut server, key) = deployment.start();
    let key = key.expect("first-start key");
    let client = reqwest::Client::new();
    let long =
        json!({"model": "lambda-t2v", "prompt": "a long tour", "params": {"duration": 10, "resolution": "720p"}});
    let id = deployment.submit(&client, &key, &long).await;
    let started = Instant::now();
    let pid = loop {
        if let Some(pid) = job_processes(server.id()).into_iter().next() {
            break pid;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "the job's process never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let proc_file = |name: &str| std::fs::read(format!("/proc/{pid}/{name}")).expect("the job's process is running");
    let environment = String::from_utf8_lossy(&proc_file("environ")).replace('\0', "\n");
    for (name, value) in SECRETS {
        assert!(!environment.contains(value) && !environment.contains(name), "{name} reached the job: {environment}");
    }
    assert!(!environment.contains("DATABASE_URL"), "{environment}");
    // The job confines itself as it starts, before it reads its job: wait for that moment.
    let field = |status: &str, name: &str| {
        status.lines().find_map(|l| l.strip_prefix(name)).map(|v| v.trim().to_string()).unwrap_or_default()
    };
    let confining = Instant::now();
    let status = loop {
        let status = String::from_utf8_lossy(&proc_file("status")).into_owned();
        if field(&status, "NoNewPrivs:") == "1" || confining.elapsed() > Duration::from_secs(10) {
            break status;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let field = |name: &str| field(&status, name);
    assert_eq!(field("NoNewPrivs:"), "1", "{status}");
    assert_eq!(field("Seccomp:"), "2", "a seccomp filter: {status}");
    let limits = String::from_utf8_lossy(&proc_file("limits")).into_owned();
    let soft = |name: &str| {
        let line = limits.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("{name}: {limits}"));
        line[name.len()..].split_whitespace().next().unwrap_or_default().to_string()
    };
    for name in ["Max cpu time", "Max file size", "Max open files", "Max address space"] {
        assert_ne!(soft(name), "unlimited", "{name}: {limits}");
    }
    assert!(soft("Max open files").parse::<u64>().unwrap() <= 1024, "{limits}");
    assert_eq!(soft("Max core file size"), "0", "{limits}");
    eprintln!("the job process {pid}: NoNewPrivs 1, Seccomp 2\n{limits}");
    let cancelled = client.post(deployment.url(&format!("/v1/tasks/{id}/cancel"))).bearer_auth(&key).send().await;
    assert_eq!(cancelled.unwrap().status(), 200);
    assert!(terminate(&mut server).success());
}

/// eSpeak NG, which a speech job's process starts on client text, ends with that job: here it is
/// frozen (SIGSTOP, so it cannot finish on its own) while the job is cancelled, and it is gone
/// all the same, killed with the job's process group.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_synthesizer_a_speech_job_starts_ends_with_the_job() {
    if std::process::Command::new("espeak-ng").arg("--version").output().is_err() {
        eprintln!("espeak-ng is not installed: speech runs as sandbox audio and starts no synthesizer");
        return;
    }
    let deployment = Deployment::new();
    let (mut server, key) = deployment.start();
    let key = key.expect("first-start key");
    let client = reqwest::Client::new();
    let text = "The quiet house on the corner has three bedrooms, a garden and a porch. ".repeat(130);
    let pid_of = |args: &[&str]| {
        let out = std::process::Command::new("pgrep").args(args).output().expect("pgrep");
        String::from_utf8_lossy(&out.stdout).split_whitespace().next().map(str::to_string)
    };
    // The synthesizer runs for about a second: each try looks for it every few milliseconds.
    let mut caught = None;
    for _ in 0..5 {
        let id = deployment.submit(&client, &key, &json!({"model": "tts", "prompt": text})).await;
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(20) {
            let job = job_processes(server.id()).into_iter().next();
            if let Some(synthesizer) = job.as_deref().and_then(|job| pid_of(&["-P", job, "-x", "espeak-ng"])) {
                let frozen = std::process::Command::new("kill").args(["-STOP", &synthesizer]).status().unwrap();
                if frozen.success() {
                    caught = Some((id.clone(), synthesizer));
                }
                break;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        if caught.is_some() {
            break;
        }
    }
    let (id, synthesizer) = caught.expect("a speech job's synthesizer was seen running");
    let cancelled = client.post(deployment.url(&format!("/v1/tasks/{id}/cancel"))).bearer_auth(&key).send().await;
    assert_eq!(cancelled.unwrap().status(), 200);
    let stopping = Instant::now();
    while std::path::Path::new(&format!("/proc/{synthesizer}")).exists()
        && !std::fs::read_to_string(format!("/proc/{synthesizer}/stat")).unwrap_or_default().contains(") Z ")
    {
        assert!(stopping.elapsed() < Duration::from_secs(20), "the frozen synthesizer outlived its job");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(terminate(&mut server).success());
}
