//! Injected faults, set through the library and over `/_sim`.

mod common;

use common::*;
use provider_sim::Faults;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

#[tokio::test]
async fn refused_submissions_create_nothing() {
    let sim = sim(Faults { refuse_submit: Some(503), ..quick() }).await;
    let fal = client()
        .post(format!("{}/fal-ai/flux/dev", sim.url()))
        .header("authorization", FAL_KEY)
        .json(&json!({"prompt": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(fal.status(), 503);
    assert!(fal.json::<Value>().await.unwrap()["detail"].is_string());
    let replicate = replicate_post(&sim, "/v1/models/a/b/predictions", json!({"input": {"prompt": "x"}})).await;
    assert_eq!(replicate.status(), 503);
    assert_eq!(replicate.headers()["content-type"], "application/problem+json");
    assert_eq!(replicate.json::<Value>().await.unwrap()["status"], 503);
    let stats = sim.stats();
    assert_eq!((stats.fal_submissions, stats.replicate_submissions, stats.in_progress), (0, 0, 0));
}

#[tokio::test]
async fn expiring_media_can_be_downloaded_once() {
    let sim = sim(Faults { expire_media: true, ..quick() }).await;
    let submitted = fal_submit(&sim, "fal-ai/flux/dev", json!({"prompt": "x", "image_size": "square"})).await;
    fal_until_completed(submitted["status_url"].as_str().unwrap()).await;
    let result = fal_get(submitted["response_url"].as_str().unwrap()).await.1;
    let url = result["images"][0]["url"].as_str().unwrap();
    assert_eq!(client().get(url).send().await.unwrap().status(), 200);
    assert_eq!(client().get(url).send().await.unwrap().status(), 404);
    assert_eq!(sim.stats().media_downloads, 2);
}

#[tokio::test]
async fn dropped_connections_are_connection_errors() {
    let sim = sim(Faults { drop_connections: 2, ..quick() }).await;
    for _ in 0..2 {
        let error = client()
            .post(format!("{}/fal-ai/flux/dev", sim.url()))
            .header("authorization", FAL_KEY)
            .json(&json!({"prompt": "x"}))
            .send()
            .await
            .expect_err("the connection is dropped");
        assert!(error.is_request() || error.is_connect(), "{error:?}");
        assert!(error.status().is_none());
    }
    fal_submit(&sim, "fal-ai/flux/dev", json!({"prompt": "x"})).await;
    let stats = sim.stats();
    assert_eq!((stats.dropped_connections, stats.fal_submissions), (2, 1));
    assert_eq!(sim.faults().drop_connections, 0);
}

#[tokio::test]
async fn status_errors_answer_503_then_count_down() {
    let sim = sim(quick()).await;
    let submitted = fal_submit(&sim, "fal-ai/flux/dev", json!({"prompt": "x"})).await;
    let created: Value = replicate_post(&sim, "/v1/models/a/b/predictions", json!({"input": {"prompt": "x"}}))
        .await
        .json()
        .await
        .unwrap();
    sim.set_faults(Faults { status_errors: 2, ..quick() });
    let status_url = submitted["status_url"].as_str().unwrap();
    assert_eq!(fal_get(status_url).await.0, 503);
    let replicate = client()
        .get(created["urls"]["get"].as_str().unwrap())
        .header("authorization", REPLICATE_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(replicate.status(), 503);
    assert_eq!(replicate.headers()["content-type"], "application/problem+json");
    assert_eq!(sim.faults().status_errors, 0);
    assert_eq!(fal_get(status_url).await.0, 200);
    let stats = sim.stats();
    assert_eq!((stats.status_polls, stats.jobs_polled), (3, 1));
}

#[tokio::test]
async fn malformed_answers_are_not_the_documented_shape() {
    let sim = sim(quick()).await;
    let submitted = fal_submit(&sim, "fal-ai/flux/dev", json!({"prompt": "x"})).await;
    let created: Value = replicate_post(&sim, "/v1/models/a/b/predictions", json!({"input": {"prompt": "x"}}))
        .await
        .json()
        .await
        .unwrap();
    fal_until_completed(submitted["status_url"].as_str().unwrap()).await;
    sim.set_faults(Faults { malformed: true, ..quick() });
    assert_eq!(fal_get(submitted["status_url"].as_str().unwrap()).await, (200, json!({"status": 42})));
    let result = client()
        .get(submitted["response_url"].as_str().unwrap())
        .header("authorization", FAL_KEY)
        .send()
        .await
        .unwrap();
    assert_eq!(result.status(), 200);
    assert!(serde_json::from_slice::<Value>(&result.bytes().await.unwrap()).is_err());
    let prediction = client()
        .get(created["urls"]["get"].as_str().unwrap())
        .header("authorization", REPLICATE_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(prediction.status(), 200);
    assert!(serde_json::from_slice::<Value>(&prediction.bytes().await.unwrap()).is_err());
}

#[tokio::test]
async fn hanging_requests_never_answer_and_latency_delays_answers() {
    let sim = sim(Faults { hang: true, ..quick() }).await;
    let hung = client()
        .post(format!("{}/fal-ai/flux/dev", sim.url()))
        .header("authorization", FAL_KEY)
        .json(&json!({"prompt": "x"}))
        .timeout(Duration::from_millis(300))
        .send()
        .await
        .expect_err("no answer");
    assert!(hung.is_timeout(), "{hung:?}");
    // Control requests are not subject to faults.
    let stats = client().get(format!("{}/_sim/stats", sim.url())).send().await.unwrap();
    assert_eq!(stats.status(), 200);

    sim.set_faults(Faults { latency_ms: 200, ..quick() });
    let started = Instant::now();
    fal_submit(&sim, "fal-ai/flux/dev", json!({"prompt": "x"})).await;
    assert!(started.elapsed() >= Duration::from_millis(200));
}

#[tokio::test]
async fn faults_stats_and_release_are_controlled_over_http() {
    let sim = sim(Faults::default()).await;
    let http = client();
    let set = http
        .post(format!("{}/_sim/faults", sim.url()))
        .json(&json!({"hold": true, "queue_ms": 1, "status_errors": 3}))
        .send()
        .await
        .unwrap();
    assert_eq!(set.status(), 200);
    let faults: Faults = http.get(format!("{}/_sim/faults", sim.url())).send().await.unwrap().json().await.unwrap();
    assert_eq!(faults, Faults { hold: true, queue_ms: 1, status_errors: 3, ..Faults::default() });
    assert_eq!(sim.faults(), faults);

    fal_submit(&sim, "fal-ai/flux/dev", json!({"prompt": "x"})).await;
    let stats: provider_sim::Stats =
        http.get(format!("{}/_sim/stats", sim.url())).send().await.unwrap().json().await.unwrap();
    assert_eq!((stats.fal_submissions, stats.in_progress), (1, 1));
    let released = http.post(format!("{}/_sim/release", sim.url())).send().await.unwrap();
    assert_eq!(released.status(), 200);
    wait_stats(&sim, |s| s.in_progress == 0).await;

    let bad = http.post(format!("{}/_sim/faults", sim.url())).body("{\"hold\": 3}").send().await.unwrap();
    assert_eq!(bad.status(), 400);
}

#[tokio::test]
async fn the_binary_prints_its_url_and_serves() {
    use tokio::io::AsyncBufReadExt;
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_provider-sim"))
        .args(["--bind", "127.0.0.1:0", "--fal-key", "k1"])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the binary starts");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line()).await.unwrap().unwrap().unwrap();
    let url = line.strip_prefix("provider-sim listening on ").expect("the listening line");
    assert!(url.starts_with("http://127.0.0.1:"));
    let answer = client()
        .post(format!("{url}/fal-ai/flux/dev"))
        .header("authorization", "Key k1")
        .json(&json!({"prompt": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    child.kill().await.unwrap();
}
