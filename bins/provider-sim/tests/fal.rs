//! fal queue protocol over real HTTP.

mod common;

use common::*;
use provider_sim::Faults;
use serde_json::{json, Value};

#[tokio::test]
async fn image_job_goes_through_the_queue_and_its_media_decode() {
    let sim = sim(Faults { queue_ms: 150, run_ms: 150, ..Faults::default() }).await;
    let input = json!({"prompt": "a lighthouse", "image_size": {"width": 256, "height": 320}, "num_images": 2});
    let submitted = fal_submit(&sim, "fal-ai/flux/dev", input).await;
    let id = submitted["request_id"].as_str().expect("request id");
    let base = format!("{}/fal-ai/flux/requests/{id}", sim.url());
    assert_eq!(submitted["response_url"], json!(base));
    assert_eq!(submitted["status_url"], json!(format!("{base}/status")));
    assert_eq!(submitted["cancel_url"], json!(format!("{base}/cancel")));
    assert!(submitted["queue_position"].is_u64());

    let (code, early) = fal_get(&base).await;
    assert_eq!((code, early), (400, json!({"detail": "Request is still in progress"})));

    let seen = fal_until_completed(&format!("{base}/status?logs=1")).await;
    assert_eq!(seen, ["IN_QUEUE", "IN_PROGRESS", "COMPLETED"]);
    let (_, completed) = fal_get(&format!("{base}/status")).await;
    assert!(completed["metrics"]["inference_time"].as_f64().expect("inference time") >= 0.1);

    let (code, result) = fal_get(&base).await;
    assert_eq!(code, 200, "{result}");
    let images = result["images"].as_array().expect("images");
    assert_eq!(images.len(), 2);
    assert_eq!(result["has_nsfw_concepts"], json!([false, false]));
    assert_eq!(result["prompt"], "a lighthouse");
    assert!(result["seed"].is_u64());
    assert_ne!(images[0]["url"], images[1]["url"], "each output has its own URL");
    for image in images {
        assert_eq!((image["width"].as_u64(), image["height"].as_u64()), (Some(256), Some(320)));
        assert_eq!(image["content_type"], "image/png");
        let url = image["url"].as_str().expect("url");
        assert!(url.starts_with(&format!("{}/media/", sim.url())));
        let download = client().get(url).send().await.expect("download");
        assert_eq!(download.status(), 200);
        assert_eq!(download.headers()["content-type"], "image/png");
        let length: usize = download.headers()["content-length"].to_str().unwrap().parse().unwrap();
        let bytes = download.bytes().await.expect("bytes");
        assert_eq!(bytes.len(), length);
        let decoded = image::load_from_memory_with_format(&bytes, image::ImageFormat::Png).expect("a PNG");
        assert_eq!((decoded.width(), decoded.height()), (256, 320));
    }
    let stats = sim.stats();
    assert_eq!((stats.fal_submissions, stats.media_downloads, stats.jobs_polled, stats.in_progress), (1, 2, 1, 0));
    assert!(stats.status_polls >= 3 && stats.result_fetches == 2, "{stats:?}");
}

#[tokio::test]
async fn sub_path_apps_are_polled_under_their_first_two_segments() {
    let sim = sim(quick()).await;
    let submitted =
        fal_submit(&sim, "fal-ai/flux-pro/v1.1-ultra", json!({"prompt": "x", "width": 256, "height": 256})).await;
    let id = submitted["request_id"].as_str().expect("id");
    let status_url = submitted["status_url"].as_str().expect("status url");
    assert_eq!(status_url, format!("{}/fal-ai/flux-pro/requests/{id}/status", sim.url()));
    fal_until_completed(status_url).await;
    let (code, _) = fal_get(submitted["response_url"].as_str().expect("response url")).await;
    assert_eq!(code, 200);
    // A client that rebuilds the URL from the full app path polls a path that does not exist.
    let rebuilt = format!("{}/fal-ai/flux-pro/v1.1-ultra/requests/{id}/status", sim.url());
    assert_eq!(fal_get(&rebuilt).await.0, 404);
    // Another app's prefix does not find the job either.
    let (code, body) = fal_get(&format!("{}/fal-ai/other/requests/{id}/status", sim.url())).await;
    assert_eq!((code, body), (404, json!({"detail": "Request not found"})));
}

#[tokio::test]
async fn a_wrong_or_missing_key_is_refused() {
    let sim = sim(quick()).await;
    for auth in [Some("Key wrong"), Some("Bearer sim-fal-key"), None] {
        let mut request = client().post(format!("{}/fal-ai/flux/dev", sim.url())).json(&json!({"prompt": "x"}));
        if let Some(auth) = auth {
            request = request.header("authorization", auth);
        }
        let answer = request.send().await.expect("answer");
        assert_eq!(answer.status(), 401);
        assert_eq!(answer.json::<Value>().await.unwrap(), json!({"detail": "Invalid or missing key"}));
    }
    assert_eq!(sim.stats().fal_submissions, 0);
}

#[tokio::test]
async fn input_that_is_not_an_object_is_a_validation_error() {
    let sim = sim(quick()).await;
    let answer = client()
        .post(format!("{}/fal-ai/flux/dev", sim.url()))
        .header("authorization", FAL_KEY)
        .json(&json!(["not", "an", "object"]))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 422);
    let body: Value = answer.json().await.unwrap();
    assert_eq!(body["detail"][0]["type"], "dict_type");
    assert_eq!(body["detail"][0]["loc"], json!(["body"]));
}

#[tokio::test]
async fn failed_jobs_answer_a_content_policy_error() {
    let sim = sim(Faults { fail_jobs: true, ..quick() }).await;
    let submitted = fal_submit(&sim, "fal-ai/flux/dev", json!({"prompt": "x"})).await;
    fal_until_completed(submitted["status_url"].as_str().unwrap()).await;
    let (code, body) = fal_get(submitted["response_url"].as_str().unwrap()).await;
    assert_eq!(code, 422);
    assert_eq!(body["detail"][0]["type"], "content_policy_violation");
    assert_eq!(body["detail"][0]["loc"], json!(["body", "prompt"]));
}

#[tokio::test]
async fn cancel_stops_a_running_job_and_not_a_finished_one() {
    let sim = sim(Faults { hold: true, ..quick() }).await;
    let submitted = fal_submit(&sim, "fal-ai/flux/dev", json!({"prompt": "x"})).await;
    let cancel_url = submitted["cancel_url"].as_str().unwrap();
    let cancel = || client().put(cancel_url).header("authorization", FAL_KEY).send();
    let first = cancel().await.unwrap();
    assert_eq!(first.status(), 202);
    assert_eq!(first.json::<Value>().await.unwrap(), json!({"status": "CANCELLATION_REQUESTED"}));
    fal_until_completed(submitted["status_url"].as_str().unwrap()).await;
    assert_eq!(fal_get(submitted["response_url"].as_str().unwrap()).await.0, 400);
    let again = cancel().await.unwrap();
    assert_eq!(again.status(), 400);
    assert_eq!(again.json::<Value>().await.unwrap(), json!({"status": "ALREADY_COMPLETED"}));
    assert_eq!(sim.stats().cancels, 2);
}

#[tokio::test]
async fn held_jobs_stay_in_progress_until_released() {
    let sim = sim(Faults { hold: true, ..quick() }).await;
    let submitted = fal_submit(&sim, "fal-ai/flux/dev", json!({"prompt": "x"})).await;
    let status_url = submitted["status_url"].as_str().unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert_eq!(fal_get(status_url).await.1["status"], "IN_PROGRESS");
    assert_eq!(sim.stats().in_progress, 1);
    sim.release_held();
    fal_until_completed(status_url).await;
    assert_eq!(sim.stats().in_progress, 0);
}

#[tokio::test]
async fn video_and_audio_results_point_at_real_files() {
    let sim = sim(quick()).await;
    let video =
        fal_submit(&sim, "fal-ai/kling-video/v2/master/text-to-video", json!({"prompt": "x", "duration": "1"})).await;
    let audio = fal_submit(&sim, "fal-ai/minimax/speech-02-hd", json!({"text": "Hello there."})).await;
    for (submitted, field, content_type, magic_at, magic) in
        [(video, "video", "video/mp4", 4, &b"ftyp"[..]), (audio, "audio", "audio/wav", 8, &b"WAVE"[..])]
    {
        fal_until_completed(submitted["status_url"].as_str().unwrap()).await;
        let (code, result) = fal_get(submitted["response_url"].as_str().unwrap()).await;
        assert_eq!(code, 200, "{result}");
        let file = &result[field];
        assert_eq!(file["content_type"], content_type);
        let download = client().get(file["url"].as_str().unwrap()).send().await.unwrap();
        assert_eq!(download.headers()["content-type"], content_type);
        let bytes = download.bytes().await.unwrap();
        assert_eq!(file["file_size"].as_u64(), Some(bytes.len() as u64));
        assert_eq!(&bytes[magic_at..magic_at + 4], magic, "{field} file header");
    }
}
