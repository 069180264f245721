//! The binary as operators run it: request ids in the answers and in every JSON log line a request
//! causes, and a readiness probe that notices a store it cannot write.

use serde_json::{json, Value};

mod common;

use common::{terminate, Deployment};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_ids_reach_the_answers_and_the_json_logs_and_readiness_sees_the_store() {
    let deployment = Deployment::with_env(&[("LOG_FORMAT", "json"), ("RUST_LOG", "info,actix_server=warn")]);
    let (mut server, key) = deployment.start();
    let key = key.expect("first key");
    let client = reqwest::Client::new();

    // A client's own id is kept and echoed; without one, the server makes one.
    let usage = client
        .get(deployment.url("/v1/usage"))
        .bearer_auth(&key)
        .header("x-request-id", "client-7f3a9c")
        .send()
        .await
        .unwrap();
    assert_eq!(usage.headers()["x-request-id"], "client-7f3a9c");
    let submitted = client
        .post(deployment.url("/v1/generate"))
        .bearer_auth(&key)
        .json(&json!({"model": "tts", "prompt": "A quiet street."}))
        .send()
        .await
        .unwrap();
    let made = submitted.headers()["x-request-id"].to_str().unwrap().to_string();
    assert!(made.starts_with("req_") && made.len() == 36, "{made}");
    let task: Value = submitted.json().await.unwrap();
    // An unusable id (quotes and spaces would confuse log readers) is replaced; errors carry one too.
    let refused =
        client.get(deployment.url("/v1/usage")).header("x-request-id", "id \"with\" quotes").send().await.unwrap();
    assert_eq!(refused.status(), 401);
    assert!(refused.headers()["x-request-id"].to_str().unwrap().starts_with("req_"));

    // Ready while the database and the store work.
    let ready = client.get(deployment.url("/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), 200);
    let body: Value = ready.json().await.unwrap();
    assert_eq!(body, json!({"ready": true, "checks": {"database": "ok", "migrations": "ok", "store": "ok"}}));
    // The store's directory replaced by a file: not ready, saying which part failed. The job
    // submitted above ends first, so its output is not being written while the directory goes.
    let task_id = task["id"].as_str().expect("task id");
    deployment.finished(&client, &key, task_id, std::time::Duration::from_secs(60)).await;
    let outputs = deployment.dir.join("outputs");
    if outputs.exists() {
        std::fs::remove_dir_all(&outputs).expect("the store's directory is removed");
    }
    std::fs::write(&outputs, b"not a directory").unwrap();
    let unready = client.get(deployment.url("/readyz")).send().await.unwrap();
    assert_eq!(unready.status(), 503);
    let body: Value = unready.json().await.unwrap();
    assert_eq!((body["ready"].clone(), body["checks"]["store"].clone()), (json!(false), json!("not writable")));
    assert_eq!(body["checks"]["database"], "ok");
    // Liveness does not depend on them.
    assert_eq!(client.get(deployment.url("/healthz")).send().await.unwrap().status(), 200);
    assert!(terminate(&mut server).success());

    // Every line is JSON; the access log and the service's own lines carry the request's id.
    let lines: Vec<Value> = deployment
        .log()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not a JSON log line ({e}): {line}")))
        .collect();
    let of = |id: &str| -> Vec<&Value> { lines.iter().filter(|l| l["span"]["id"] == id).collect() };
    let client_lines = of("client-7f3a9c");
    assert!(
        client_lines.iter().any(|l| l["fields"]["message"].as_str().unwrap_or("").contains("GET /v1/usage")),
        "{client_lines:?}"
    );
    let made_lines = of(&made);
    let messages: Vec<&str> = made_lines.iter().filter_map(|l| l["fields"]["message"].as_str()).collect();
    assert!(messages.contains(&"job accepted"), "{messages:?}");
    assert!(messages.iter().any(|m| m.contains("POST /v1/generate")), "{messages:?}");
    assert!(made_lines.iter().any(|l| l["fields"]["task"] == task["id"]), "{made_lines:?}");
}

/// A standalone worker answers its own probes and serves the metrics of the jobs it ran, to the
/// bearer of the metrics token only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_standalone_worker_serves_probes_and_the_metrics_of_its_jobs() {
    let deployment = Deployment::with_env(&[("METRICS_TOKEN", "scrape-7f3a9c"), ("WORKER_POLL_MS", "100")]);
    let (server, key) = deployment.start_with(&["serve", "--no-worker"]);
    let mut server = common::Killed(server);
    let key = key.expect("first key");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let addr = format!("127.0.0.1:{port}");
    let mut worker = common::Killed(deployment.spawn_worker(&[("WORKER_HTTP_ADDR", &addr)]));
    let client = reqwest::Client::new();
    let at = |path: &str| format!("http://{addr}{path}");
    let started = std::time::Instant::now();
    while client.get(at("/healthz")).send().await.is_err() {
        assert!(started.elapsed() < std::time::Duration::from_secs(30), "the worker never listened");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(client.get(at("/readyz")).send().await.unwrap().status(), 200);

    let id = deployment.submit(&client, &key, &json!({"model": "tts", "prompt": "A quiet street."})).await;
    let task = deployment.finished(&client, &key, &id, std::time::Duration::from_secs(60)).await;
    assert_eq!(task["status"], "succeeded", "{task}");
    assert_eq!(client.get(at("/metrics")).send().await.unwrap().status(), 401);
    // The worker counts a job once its settlement has committed, so a client that saw the
    // terminal status may scrape a moment before the count: scrape until it shows.
    let counted = r#"jobs_finished_total{engine="tts",outcome="succeeded"} 1"#;
    let text = loop {
        let metrics = client.get(at("/metrics")).bearer_auth("scrape-7f3a9c").send().await.unwrap();
        assert_eq!(metrics.status(), 200);
        let text = metrics.text().await.unwrap();
        if text.contains(counted) || started.elapsed() > std::time::Duration::from_secs(60) {
            break text;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert!(text.contains(counted), "{text}");
    assert!(text.contains("job_peak_memory_bytes"), "{text}");
    assert_eq!(client.get(at("/v1/usage")).bearer_auth(&key).send().await.unwrap().status(), 404, "no API here");
    assert!(terminate(&mut worker.0).success(), "the worker and its listener stop on SIGTERM");
    assert!(terminate(&mut server.0).success());
}
