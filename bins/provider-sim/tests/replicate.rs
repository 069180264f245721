//! Replicate predictions protocol over real HTTP.

mod common;

use common::*;
use provider_sim::Faults;
use serde_json::{json, Value};

#[tokio::test]
async fn prediction_goes_from_starting_to_succeeded_with_a_list_of_images() {
    let sim = sim(Faults { queue_ms: 100, run_ms: 100, ..Faults::default() }).await;
    let input = json!({"prompt": "a fox", "width": 256, "height": 256, "num_outputs": 2});
    let answer =
        replicate_post(&sim, "/v1/models/black-forest-labs/flux-schnell/predictions", json!({"input": input})).await;
    assert_eq!(answer.status(), 201);
    let created: Value = answer.json().await.unwrap();
    let id = created["id"].as_str().unwrap();
    assert_eq!(created["status"], "starting");
    assert_eq!(created["model"], "black-forest-labs/flux-schnell");
    assert_eq!(created["version"], "hidden");
    assert_eq!(created["input"], input);
    assert_eq!((&created["output"], &created["error"], &created["logs"]), (&Value::Null, &Value::Null, &json!("")));
    let get = format!("{}/v1/predictions/{id}", sim.url());
    assert_eq!(created["urls"]["get"], json!(get));
    assert_eq!(created["urls"]["cancel"], json!(format!("{get}/cancel")));

    let (done, seen) = replicate_until_done(&get).await;
    assert_eq!(seen, ["starting", "processing", "succeeded"]);
    assert!(done["metrics"]["predict_time"].as_f64().unwrap() > 0.05);
    assert!(done["completed_at"].is_string() && done["started_at"].is_string());
    assert!(done["logs"].as_str().unwrap().lines().count() >= 2);
    let output = done["output"].as_array().expect("a list of URLs");
    assert_eq!(output.len(), 2);
    for url in output {
        let bytes = client().get(url.as_str().unwrap()).send().await.unwrap().bytes().await.unwrap();
        let decoded = image::load_from_memory(&bytes).expect("a picture");
        assert_eq!((decoded.width(), decoded.height()), (256, 256));
    }
    assert_eq!(sim.stats().replicate_submissions, 1);
}

#[tokio::test]
async fn version_predictions_and_token_auth_work_and_video_output_is_one_url() {
    let sim = sim(quick()).await;
    let answer = client()
        .post(format!("{}/v1/predictions", sim.url()))
        .header("authorization", "Token sim-replicate-token")
        .json(&json!({"version": "wan-video-abc123", "input": {"prompt": "x", "duration": 1}}))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 201);
    let created: Value = answer.json().await.unwrap();
    assert_eq!(created["model"], "unknown/wan-video-abc123");
    assert_eq!(created["version"], "wan-video-abc123");
    let (done, _) = replicate_until_done(created["urls"]["get"].as_str().unwrap()).await;
    let url = done["output"].as_str().expect("one URL");
    assert!(url.ends_with(".mp4"));
}

#[tokio::test]
async fn bad_requests_get_problem_bodies() {
    let sim = sim(quick()).await;
    let unauthenticated = client()
        .post(format!("{}/v1/models/a/b/predictions", sim.url()))
        .header("authorization", "Bearer nope")
        .json(&json!({"input": {}}))
        .send()
        .await
        .unwrap();
    assert_eq!(unauthenticated.status(), 401);
    assert_eq!(unauthenticated.headers()["content-type"], "application/problem+json");
    assert_eq!(
        unauthenticated.json::<Value>().await.unwrap(),
        json!({"title": "Unauthenticated", "detail": "You did not pass a valid authentication token", "status": 401})
    );
    let no_input = replicate_post(&sim, "/v1/models/a/b/predictions", json!({"prompt": "x"})).await;
    assert_eq!(no_input.status(), 422);
    assert_eq!(
        no_input.json::<Value>().await.unwrap(),
        json!({"title": "Input validation failed", "detail": "input: Input is required", "status": 422})
    );
    let missing = client()
        .get(format!("{}/v1/predictions/nope", sim.url()))
        .header("authorization", REPLICATE_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    assert_eq!(missing.json::<Value>().await.unwrap()["status"], 404);
}

#[tokio::test]
async fn failed_and_canceled_predictions() {
    let sim = sim(Faults { fail_jobs: true, ..quick() }).await;
    let created: Value = replicate_post(&sim, "/v1/models/a/b/predictions", json!({"input": {"prompt": "x"}}))
        .await
        .json()
        .await
        .unwrap();
    let (done, _) = replicate_until_done(created["urls"]["get"].as_str().unwrap()).await;
    assert_eq!(done["status"], "failed");
    assert!(done["error"].as_str().unwrap().contains("CUDA out of memory"));
    assert_eq!(done["output"], Value::Null);

    sim.set_faults(Faults { hold: true, ..quick() });
    let created: Value = replicate_post(&sim, "/v1/models/a/b/predictions", json!({"input": {"prompt": "x"}}))
        .await
        .json()
        .await
        .unwrap();
    let canceled = client()
        .post(created["urls"]["cancel"].as_str().unwrap())
        .header("authorization", REPLICATE_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(canceled.status(), 200);
    assert_eq!(canceled.json::<Value>().await.unwrap()["status"], "canceled");
    let (done, _) = replicate_until_done(created["urls"]["get"].as_str().unwrap()).await;
    assert_eq!(done["status"], "canceled");
}
