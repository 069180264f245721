//! The provider adapters against the simulator, over real HTTP on both sides: success with the
//! outputs copied into our store (our URL keeps working after the provider's has expired),
//! failures at the provider, refusals at submit (502, nothing billed, no task left to run),
//! malformed answers, outages and timeouts, signed callbacks, and many requests tracked at once
//! without a worker slot each.

mod common;

use common::{Options, TestServer};
use provider_sim::{Faults, SimConfig, Simulator};
use reqwest::StatusCode;
use serde_json::{json, Value};
use service::AppConfig;
use std::time::Duration;
use storage::Backend;

/// A server whose `routes` (`ENGINE=fal:...` pairs) run at `sim`.
async fn server_on(sim: &Simulator, routes: &str, adjust: impl FnOnce(&mut AppConfig) + 'static) -> TestServer {
    server_with(Backend::Sqlite, sim, routes, 2, adjust).await
}

async fn server_with(
    backend: Backend,
    sim: &Simulator,
    routes: &str,
    worker_concurrency: usize,
    adjust: impl FnOnce(&mut AppConfig) + 'static,
) -> TestServer {
    let (url, routes) = (sim.url(), routes.to_string());
    let defaults = SimConfig::default();
    let options = Options {
        worker_concurrency,
        adjust: Some(Box::new(move |config: &mut AppConfig| {
            config.fal_key = Some(defaults.fal_key.clone());
            config.fal_queue_url = url.clone();
            config.fal_jwks_url = format!("{url}/.well-known/jwks.json");
            config.replicate_api_token = Some(defaults.replicate_token.clone());
            config.replicate_api_url = url;
            config.engine_routes = routes
                .split(',')
                .map(|pair| {
                    let (id, route) = pair.split_once('=').unwrap();
                    (id.to_string(), domain::catalog::Route::parse(route).unwrap())
                })
                .collect();
            config.provider_webhooks = false;
            config.provider_timeout = Duration::from_secs(5);
            adjust(config);
        })),
        ..Options::default()
    };
    TestServer::start_with(backend, options).await
}

/// A server with `beta-image` at fal and `zeta` at Replicate that asks both to call back.
async fn callback_server(sim: &Simulator) -> TestServer {
    server_on(sim, &format!("{IMAGE},zeta=replicate:acme/zeta"), |config| config.provider_webhooks = true).await
}

async fn sim() -> Simulator {
    let sim = Simulator::start(SimConfig::default()).await.expect("simulator");
    sim.set_faults(Faults { queue_ms: 50, run_ms: 150, ..Faults::default() });
    sim
}

const IMAGE: &str = "beta-image=fal:fal-ai/flux-pro/v1.1-ultra";

fn image_job() -> Value {
    json!({"model": "beta-image", "prompt": "a porch at dusk", "params": {"width": 320, "height": 256, "num_images": 2}})
}

async fn usage(server: &TestServer, key: &str) -> Value {
    let (status, usage) = server.get(key, "/v1/usage").await;
    assert_eq!(status, StatusCode::OK);
    usage
}

#[tokio::test]
async fn fal_outputs_are_copied_and_outlive_the_providers_urls() {
    let sim = sim().await;
    sim.set_faults(Faults { queue_ms: 50, run_ms: 150, expire_media: true, ..Faults::default() });
    // The built-in catalog, with what fal charges per second of compute for beta-image.
    let builtin = concat!(env!("CARGO_MANIFEST_DIR"), "/../engines/data/catalog.json");
    let mut catalog: Value = serde_json::from_str(&std::fs::read_to_string(builtin).unwrap()).unwrap();
    let entry = catalog["engines"].as_array_mut().unwrap().iter_mut().find(|e| e["id"] == "beta-image").unwrap();
    entry["provider_input"]["fal"]["cost_per_second"] = json!("0.0100");
    let catalog_file = std::env::temp_dir().join(storage::new_id("catalog")).with_extension("json");
    std::fs::write(&catalog_file, catalog.to_string()).unwrap();
    let path = catalog_file.display().to_string();
    let server = server_on(&sim, IMAGE, move |config| config.engine_catalog_file = Some(path)).await;
    let key = server.key(None, false).await;
    let task = server.run(&key, image_job()).await;
    assert_eq!(task["sandbox"], false, "a real model's output");
    let outputs = task["output"].as_array().unwrap();
    assert_eq!(outputs.len(), 2, "{task}");
    for output in outputs {
        assert!(output["url"].as_str().unwrap().starts_with(&server.base), "served by us: {output}");
        let (content_type, bytes) = server.download(output["url"].as_str().unwrap()).await;
        assert_eq!(content_type, "image/png");
        let image = image::load_from_memory(&bytes).expect("a PNG that decodes");
        assert_eq!((image.width(), image.height()), (320, 256), "the size asked for, as the mapping sent it");
        assert_eq!(output["width"], 320);
    }
    // Billed per image produced, never more than the quote; the provider's compute time beside it.
    assert_eq!(task["cost_usd"], task["price_usd"], "{task}");
    let stats = sim.stats();
    assert_eq!(stats.fal_submissions, 1);
    assert_eq!(stats.media_downloads, 2, "each file fetched once");
    let record = server.db.db.task(task["id"].as_str().unwrap()).unwrap().unwrap();
    // fal's compute time and what it cost us at 0.01 USD a second, beside what we billed.
    let millis = record.provider_millis.expect("compute time recorded");
    assert!(millis > 0, "{record:?}");
    let provider_cost = record.provider_cost_units.expect("provider cost recorded");
    assert!((provider_cost - millis / 10).abs() <= 1, "0.0100 USD/s x {millis} ms: {provider_cost} units");
    let margins = server.service.operator().provider_margins(1).await.unwrap();
    assert_eq!(margins.len(), 1, "{margins:?}");
    assert_eq!((margins[0].engine.as_str(), margins[0].tasks, margins[0].costed_tasks), ("beta-image", 1, 1));
    assert_eq!(margins[0].provider_cost_units, provider_cost);
    std::fs::remove_file(&catalog_file).unwrap();
    let handle: Value = serde_json::from_str(record.provider_handle.as_deref().unwrap()).unwrap();
    assert!(
        handle["status_url"].as_str().unwrap().contains("/fal-ai/flux-pro/requests/"),
        "the status URL given by the queue, not one rebuilt from the app path: {handle}"
    );
    assert_eq!(usage(&server, &key).await["spent_usd"], task["cost_usd"]);
    // The provider's own URLs have expired; ours still serve the copies.
    let result: Value = server
        .client
        .get(handle["result_url"].as_str().unwrap())
        .header("Authorization", format!("Key {}", SimConfig::default().fal_key))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let theirs = result["images"][0]["url"].as_str().unwrap();
    assert_eq!(server.client.get(theirs).send().await.unwrap().status(), StatusCode::NOT_FOUND);
    let (_, bytes) = server.download(outputs[0]["url"].as_str().unwrap()).await;
    assert!(image::load_from_memory(&bytes).is_ok());
    server.stop().await;
}

#[tokio::test]
async fn replicate_video_is_copied_and_billed_for_its_length() {
    let sim = sim().await;
    let server = server_on(&sim, "lambda-t2v=replicate:acme/video-model", |_| {}).await;
    let key = server.key(None, false).await;
    let task = server.run(&key, json!({"model": "lambda-t2v", "prompt": "a drive past the house"})).await;
    let output = &task["output"][0];
    assert_eq!(output["content_type"], "video/mp4");
    let (_, bytes) = server.download(output["url"].as_str().unwrap()).await;
    let video = mp4::Mp4Reader::read_header(std::io::Cursor::new(&bytes), bytes.len() as u64).expect("an MP4");
    assert!(video.duration().as_secs_f64() > 0.5);
    let cost: rust_decimal::Decimal = task["cost_usd"].as_str().unwrap().parse().unwrap();
    let price: rust_decimal::Decimal = task["price_usd"].as_str().unwrap().parse().unwrap();
    assert!(cost > rust_decimal::Decimal::ZERO && cost <= price, "{task}");
    assert_eq!(sim.stats().replicate_submissions, 1);
    server.stop().await;
}

#[tokio::test]
async fn mp3_from_a_provider_is_measured_and_voices_a_reel() {
    use base64::Engine as _;
    let sim = sim().await;
    // Speech and music answered as MP3 (stereo, 44.1 kHz), as most providers deliver them.
    let server = server_on(&sim, "tts=replicate:acme/speech-mp3,omicron2=fal:acme/music-mp3", |_| {}).await;
    let key = server.key(None, false).await;
    let task = server.run(&key, json!({"model": "tts", "prompt": "Welcome home to Harbour Lane."})).await;
    assert_eq!(task["status"], "succeeded", "{task}");
    let output = &task["output"][0];
    assert_eq!(output["content_type"], "audio/mpeg", "{task}");
    let seconds = output["duration_seconds"].as_f64().expect("a length measured from the frames");
    assert!((seconds - 6.19).abs() < 0.1, "{task}");
    let (_, bytes) = server.download(output["url"].as_str().unwrap()).await;
    let (samples, rate) = media::recording::decode_recording(&bytes, 60.0).unwrap();
    assert!(rate == 44_100 && samples.iter().any(|s| s.abs() > 0.2), "speech, not silence");

    // A reel whose narration and music both come from the providers as MP3.
    let photo = image::RgbImage::from_fn(960, 640, |x, y| image::Rgb([(x / 4) as u8, (y / 3) as u8, 140]));
    let png = media::codecs::encode_png(&image::DynamicImage::ImageRgb8(photo)).unwrap();
    let photo = format!("data:image/png;base64,{}", base64::engine::general_purpose::STANDARD.encode(png));
    let reel = json!({
        "photos": [photo],
        "details": {"address": "12 Harbour Lane, Mystic, CT", "price": 480000, "beds": 3, "baths": 2},
        "params": {"duration": 6, "voiceover": true, "music": true},
    });
    let (status, queued) = server.post(&key, "/v1/recipes/reel", reel).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{queued}");
    let reel = server.wait_at(&key, &format!("/v1/recipes/reel/{}", queued["reel_id"].as_str().unwrap())).await;
    assert_eq!(reel["status"], "succeeded", "{reel}");
    let (_, mp4) = server.download(reel["output"][0]["url"].as_str().unwrap()).await;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/tmp");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("reel-provider-mp3.mp4"), &mp4).unwrap();
    let audio = media::video::probe_mp4(&mp4).unwrap().audio.expect("an audio track");
    assert!((audio.duration_secs - 6.0).abs() <= 1024.0 / f64::from(audio.sample_rate), "{audio:?}");
    let stats = sim.stats();
    assert_eq!((stats.replicate_submissions, stats.fal_submissions), (2, 1), "speech twice, music once: {stats:?}");
    server.stop().await;
}

/// A reel whose photo cannot be decoded fails before its narration and music are asked of the
/// providers: nothing is spent there on a reel that was never going to be made.
#[tokio::test]
async fn an_unusable_photo_fails_a_reel_before_any_provider_is_paid() {
    use base64::Engine as _;
    let sim = sim().await;
    let server = server_on(&sim, "tts=replicate:acme/speech-mp3,omicron2=fal:acme/music-mp3", |_| {}).await;
    let key = server.key(None, false).await;
    // A PNG signature with nothing usable behind it: fetched fine, refused when decoded.
    let broken = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR broken";
    let not_an_image = format!("data:image/png;base64,{}", base64::engine::general_purpose::STANDARD.encode(broken));
    let reel = json!({
        "photos": [not_an_image],
        "details": {"address": "12 Harbour Lane, Mystic, CT"},
        "params": {"duration": 6, "voiceover": true, "music": true},
    });
    let (status, queued) = server.post(&key, "/v1/recipes/reel", reel).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{queued}");
    let reel = server.wait_at(&key, &format!("/v1/recipes/reel/{}", queued["reel_id"].as_str().unwrap())).await;
    assert_eq!(reel["status"], "failed", "{reel}");
    assert!(reel["error"].as_str().unwrap().contains("photos[0]"), "{reel}");
    let stats = sim.stats();
    assert_eq!((stats.replicate_submissions, stats.fal_submissions), (0, 0), "{stats:?}");
    server.stop().await;
}

#[tokio::test]
async fn a_refused_submission_is_a_502_with_nothing_billed_and_no_task_left() {
    let sim = sim().await;
    let server = server_on(&sim, &format!("{IMAGE},zeta=replicate:acme/zeta"), |_| {}).await;
    let key = server.key(None, false).await;
    for (status, model) in [(422, "beta-image"), (503, "zeta"), (401, "zeta")] {
        sim.set_faults(Faults { refuse_submit: Some(status), ..Faults::default() });
        let (answer, body) = server.post(&key, "/v1/generate", json!({"model": model, "prompt": "porch"})).await;
        assert_eq!(answer, StatusCode::BAD_GATEWAY, "{body}");
        let error = body["error"].as_str().unwrap();
        assert!(error.starts_with("provider submit failed") && error.contains(&status.to_string()), "{error}");
    }
    // Through the agent connector, the same refusal is a tool error an agent can act on.
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "generate", "arguments": {"model": "zeta", "prompt": "porch"}}});
    let answer: Value = server
        .client
        .post(format!("{}/api/mcp", server.base))
        .bearer_auth(&key)
        .json(&call)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("provider submit failed") && text.contains("Nothing was billed"), "{text}");
    let usage = usage(&server, &key).await;
    assert_eq!((usage["spent_usd"].as_str(), usage["held_usd"].as_str()), (Some("0.0000"), Some("0.0000")), "{usage}");
    // Nothing is left that could run later: no tracker or worker finds work.
    assert!(server.service.runner().claim_tracked("probe", 1_000, 100).await.unwrap().is_empty());
    assert!(server.service.runner().claim("probe", 1_000).await.unwrap().is_none());
    server.stop().await;
}

/// A connection that breaks after the submission went out is not retried (the provider may have
/// accepted it, and would run it twice): a 502 with nothing billed.
#[tokio::test]
async fn a_connection_dropped_at_submit_is_a_502_never_a_second_submission() {
    let sim = sim().await;
    let server = server_on(&sim, IMAGE, |_| {}).await;
    let key = server.key(None, false).await;
    sim.set_faults(Faults { queue_ms: 10, run_ms: 10, drop_connections: 1, ..Faults::default() });
    let (status, body) = server.post(&key, "/v1/generate", image_job()).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{body}");
    assert!(body["error"].as_str().unwrap().contains("connection"), "{body}");
    assert_eq!((sim.stats().dropped_connections, sim.stats().fal_submissions), (1, 0));
    assert_eq!(usage(&server, &key).await["held_usd"], "0.0000");
    // The next submission goes through, once.
    let task = server.run(&key, image_job()).await;
    assert_eq!(task["status"], "succeeded");
    assert_eq!(sim.stats().fal_submissions, 1);
    server.stop().await;
}

#[tokio::test]
async fn failures_at_the_provider_and_malformed_answers_fail_the_task_unbilled() {
    let sim = sim().await;
    let server = server_on(&sim, &format!("{IMAGE},zeta=replicate:acme/zeta"), |_| {}).await;
    let key = server.key(None, false).await;
    for (faults, model, expected) in [
        (Faults { run_ms: 20, fail_jobs: true, ..Faults::default() }, "beta-image", "fal failed"),
        (Faults { run_ms: 20, fail_jobs: true, ..Faults::default() }, "zeta", "replicate failed"),
        (Faults { malformed: true, ..Faults::default() }, "zeta", "malformed"),
        (Faults { malformed: true, ..Faults::default() }, "beta-image", "malformed"),
    ] {
        sim.set_faults(faults);
        let queued = server.submit(&key, json!({"model": model, "prompt": "porch"})).await;
        let task = server.wait(&key, queued["id"].as_str().unwrap()).await;
        assert_eq!(task["status"], "failed", "{task}");
        assert!(task["error"].as_str().unwrap().contains(expected), "{expected}: {task}");
        assert!(task["cost_usd"].is_null());
    }
    let usage = usage(&server, &key).await;
    assert_eq!((usage["spent_usd"].as_str(), usage["held_usd"].as_str()), (Some("0.0000"), Some("0.0000")), "{usage}");
    server.stop().await;
}

/// A request cancelled at the provider, and one still running at its family's deadline (which we
/// cancel there), fail their tasks with nothing billed.
#[tokio::test]
async fn cancellation_and_the_deadline_fail_the_task_unbilled() {
    let sim = sim().await;
    let server = server_on(&sim, &format!("{IMAGE},zeta=replicate:acme/zeta"), |config| {
        config.job_deadlines = service::Deadlines::with_overrides("image_generation=3").unwrap();
    })
    .await;
    let key = server.key(None, false).await;
    sim.set_faults(Faults { queue_ms: 20, run_ms: 60_000, ..Faults::default() });
    let queued = server.submit(&key, json!({"model": "zeta", "prompt": "porch"})).await;
    let id = queued["id"].as_str().unwrap();
    let started = tokio::time::Instant::now();
    while server.get(&key, &format!("/v1/tasks/{id}")).await.1["status"] != "running" {
        assert!(started.elapsed() < Duration::from_secs(10), "the provider's processing shows as running");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let record = server.db.db.task(id).unwrap().unwrap();
    let handle: Value = serde_json::from_str(record.provider_handle.as_deref().unwrap()).unwrap();
    let cancel = server
        .client
        .post(handle["cancel_url"].as_str().unwrap())
        .bearer_auth(SimConfig::default().replicate_token)
        .send()
        .await
        .unwrap();
    assert!(cancel.status().is_success());
    let task = server.wait(&key, id).await;
    assert_eq!(task["status"], "failed");
    assert_eq!(task["error"], "replicate cancelled the request", "{task}");

    let cancels = sim.stats().cancels;
    let queued = server.submit(&key, image_job()).await;
    let task = server.wait(&key, queued["id"].as_str().unwrap()).await;
    assert_eq!(task["status"], "failed");
    assert!(task["error"].as_str().unwrap().contains("past its deadline"), "{task}");
    assert_eq!(sim.stats().cancels, cancels + 1, "stopped at the provider too");
    let usage = usage(&server, &key).await;
    assert_eq!((usage["spent_usd"].as_str(), usage["held_usd"].as_str()), (Some("0.0000"), Some("0.0000")), "{usage}");
    server.stop().await;
}

#[tokio::test]
async fn outages_while_tracking_are_retried_and_a_silent_provider_times_out() {
    let sim = sim().await;
    let server = server_on(&sim, IMAGE, |config| {
        config.provider_timeout = Duration::from_secs(1);
        config.job_deadlines = service::Deadlines::with_overrides("image_generation=4").unwrap();
    })
    .await;
    let key = server.key(None, false).await;
    // Three 503s on the status URL, then an answer: the task succeeds.
    sim.set_faults(Faults { run_ms: 20, status_errors: 3, ..Faults::default() });
    let task = server.run(&key, image_job()).await;
    assert_eq!(task["status"], "succeeded");
    assert!(sim.stats().status_polls >= 4);

    // A provider that stops answering after accepting: the task fails at the family's deadline.
    sim.set_faults(Faults { queue_ms: 60_000, ..Faults::default() });
    let queued = server.submit(&key, image_job()).await;
    sim.set_faults(Faults { queue_ms: 60_000, hang: true, ..Faults::default() });
    let task = server.wait(&key, queued["id"].as_str().unwrap()).await;
    assert_eq!(task["status"], "failed");
    assert!(task["error"].as_str().unwrap().contains("did not answer"), "{task}");

    // A submission that gets no answer in time is a 502.
    let (status, body) = server.post(&key, "/v1/generate", image_job()).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{body}");
    assert!(body["error"].as_str().unwrap().contains("no answer in time"), "{body}");
    sim.set_faults(Faults::default());
    let usage = usage(&server, &key).await;
    assert_eq!(usage["held_usd"], "0.0000", "{usage}");
    server.stop().await;
}

#[tokio::test]
async fn signed_callbacks_finish_tasks_and_forged_ones_are_refused() {
    let sim = sim().await;
    let server = callback_server(&sim).await;
    let key = server.key(None, false).await;
    for model in ["beta-image", "zeta"] {
        sim.set_faults(Faults { queue_ms: 20, run_ms: 1_500, ..Faults::default() });
        let before = sim.stats().webhooks_sent;
        let task = server.run(&key, json!({"model": model, "prompt": "porch"})).await;
        assert_eq!(task["status"], "succeeded", "{task}");
        assert_eq!(sim.stats().webhooks_sent, before + 1, "{model}");
        assert_eq!(sim.stats().webhook_failures, 0);
    }
    // Our callback URL, as the provider holds it: it carries our token for the task.
    sim.set_faults(Faults { queue_ms: 60_000, ..Faults::default() });
    let queued = server.submit(&key, json!({"model": "zeta", "prompt": "porch"})).await;
    let id = queued["id"].as_str().unwrap();
    let record = server.db.db.task(id).unwrap().unwrap();
    let handle: Value = serde_json::from_str(record.provider_handle.as_deref().unwrap()).unwrap();
    let prediction: Value = server
        .client
        .get(handle["status_url"].as_str().unwrap())
        .bearer_auth(SimConfig::default().replicate_token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let url = prediction["webhook"].as_str().unwrap().to_string();
    assert!(url.starts_with(&format!("{}/v1/webhooks/replicate/{id}?token=", server.base)), "{url}");
    let forged = server
        .client
        .post(&url)
        .header("webhook-id", "msg_1")
        .header(
            "webhook-timestamp",
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs().to_string(),
        )
        .header("webhook-signature", "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
        .json(&json!({"id": "x", "status": "succeeded", "output": ["http://169.254.169.254/"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), StatusCode::UNAUTHORIZED);
    assert!(forged.json::<Value>().await.unwrap()["error"].as_str().unwrap().contains("signature"));
    // Without our token (or with another task's), a callback is refused before anything else.
    let other = url.replace(id, "task_someone_else");
    for url in [url.split('?').next().unwrap().to_string(), other] {
        let refused = server.client.post(&url).json(&json!({})).send().await.unwrap();
        assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
        assert!(refused.json::<Value>().await.unwrap()["error"].as_str().unwrap().contains("token"));
    }
    // Nothing of the body is read for a caller without our token: one that never ends is
    // answered at once.
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let address = server.base.trim_start_matches("http://").to_string();
    let mut connection = tokio::net::TcpStream::connect(&address).await.unwrap();
    let head = format!(
        "POST /v1/webhooks/replicate/{id} HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{{"
    );
    connection.write_all(head.as_bytes()).await.unwrap();
    let mut answer = vec![0u8; 1024];
    let read = tokio::time::timeout(Duration::from_secs(5), connection.read(&mut answer))
        .await
        .expect("answered before the body was sent")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer[..read]);
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    sim.set_faults(Faults::default());
    server.stop().await;
}

/// The api-server stopped between the provider's acceptance and its record of the request: the
/// provider's verified callback (its URL names our task) adopts the request, and the task
/// finishes from it, without a second submission.
#[tokio::test]
async fn a_request_whose_record_was_lost_is_adopted_from_its_callback() {
    let sim = sim().await;
    let server = callback_server(&sim).await;
    let key = server.key(None, false).await;
    for model in ["beta-image", "zeta"] {
        sim.set_faults(Faults { queue_ms: 20, run_ms: 1_000, ..Faults::default() });
        let queued = server.submit(&key, json!({"model": model, "prompt": "porch"})).await;
        let id = queued["id"].as_str().unwrap();
        assert!(server.db.forget_submission(id).unwrap());
        let task = server.wait(&key, id).await;
        assert_eq!(task["status"], "succeeded", "{model}: {task}");
        let (_, bytes) = server.download(task["output"][0]["url"].as_str().unwrap()).await;
        assert!(image::load_from_memory(&bytes).is_ok());
        let record = server.db.db.task(id).unwrap().unwrap();
        assert!(record.provider_callback.is_some() && record.provider_handle.is_some(), "{record:?}");
    }
    let stats = sim.stats();
    assert_eq!((stats.fal_submissions, stats.replicate_submissions), (1, 1), "never submitted again");
    server.stop().await;
}

#[tokio::test]
async fn results_finishing_together_are_taken_in_a_few_at_a_time() {
    const TASKS: usize = 12;
    let sim = sim().await;
    // Every request held, then all finish at once; each file takes 300 ms to download.
    sim.set_faults(Faults { hold: true, media_delay_ms: 300, ..Faults::default() });
    let server = server_on(&sim, IMAGE, |_| {}).await;
    let key = server.key(None, true).await;
    let job = json!({"model": "beta-image", "prompt": "porch", "params": {"width": 256, "height": 256}});
    let submits = (0..TASKS).map(|_| server.post(&key, "/v1/generate", job.clone()));
    let ids: Vec<String> = futures::future::join_all(submits)
        .await
        .into_iter()
        .map(|(status, queued)| {
            assert_eq!(status, StatusCode::ACCEPTED, "{queued}");
            queued["id"].as_str().unwrap().to_string()
        })
        .collect();
    let started = tokio::time::Instant::now();
    while sim.stats().jobs_polled < TASKS as u64 {
        assert!(started.elapsed() < Duration::from_secs(30), "{:?}", sim.stats());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    sim.release_held();
    for id in &ids {
        assert_eq!(server.wait(&key, id).await["status"], "succeeded");
    }
    let stats = sim.stats();
    assert_eq!(stats.media_downloads, TASKS as u64, "{stats:?}");
    // The tracker looks at all twelve at once, but holds at most four results in memory.
    assert!((2..=4).contains(&stats.media_downloads_peak), "{stats:?}");
    server.stop().await;
}

/// One worker with two job slots tracks a thousand requests at once: every one is polled while
/// all are still running at the provider, then all finish and are billed once each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_requests_are_tracked_at_once_without_a_slot_each() {
    const TASKS: usize = 1_000;
    let sim = sim().await;
    sim.set_faults(Faults { hold: true, ..Faults::default() });
    // A thousand submits and their polls in a few seconds: past the default rate limits, so
    // without them here.
    let server = server_on(&sim, IMAGE, |config| {
        config.rate_limit_submits_per_minute = 0;
        config.rate_limit_reads_per_minute = 0;
    })
    .await;
    let key = server.key(None, true).await;
    let job = json!({"model": "beta-image", "prompt": "porch", "params": {"width": 256, "height": 256}});
    let mut ids = Vec::with_capacity(TASKS);
    for chunk in 0..TASKS / 50 {
        let submits = (0..50).map(|_| server.post(&key, "/v1/generate", job.clone()));
        for (status, queued) in futures::future::join_all(submits).await {
            assert_eq!(status, StatusCode::ACCEPTED, "chunk {chunk}: {queued}");
            ids.push(queued["id"].as_str().unwrap().to_string());
        }
    }
    let started = tokio::time::Instant::now();
    while sim.stats().jobs_polled < TASKS as u64 {
        assert!(started.elapsed() < Duration::from_secs(120), "{:?}", sim.stats());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(sim.stats().in_progress, TASKS as u64, "all held at the provider while tracked");
    sim.release_held();
    for id in &ids {
        let task = server.wait(&key, id).await;
        assert_eq!(task["status"], "succeeded", "{task}");
    }
    assert_eq!(sim.stats().fal_submissions, TASKS as u64);
    assert_eq!(server.db.db.verify_ledger().unwrap(), vec![], "holds and captures add up");
    let usage = usage(&server, &key).await;
    assert_eq!(usage["held_usd"], "0.0000", "{usage}");
    server.stop().await;
}

/// A client's cancel of a job running at a provider: the task fails "cancelled by client" at once,
/// unbilled, and the provider is asked to stop (fal's and Replicate's cancel), on both backends.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_client_cancel_reaches_the_provider_and_bills_nothing() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let sim = Simulator::start(SimConfig::default()).await.expect("simulator");
        // Long enough at the provider to be cancelled there.
        sim.set_faults(Faults { queue_ms: 50, run_ms: 20_000, ..Faults::default() });
        let server = server_with(backend, &sim, &format!("{IMAGE},zeta=replicate:acme/zeta"), 2, |_| {}).await;
        let key = server.key(None, true).await;
        for job in [image_job(), json!({"model": "zeta", "prompt": "a porch at dusk"})] {
            let queued = server.submit(&key, job).await;
            let id = queued["id"].as_str().unwrap();
            server.wait_running(&key, id).await;
            let cancels = sim.stats().cancels;
            let (status, task) = server.post(&key, &format!("/v1/tasks/{id}/cancel"), json!({})).await;
            assert_eq!(status, StatusCode::OK, "{task}");
            assert_eq!(
                (task["status"].as_str(), task["error"].as_str()),
                (Some("failed"), Some("cancelled by client"))
            );
            assert_eq!(sim.stats().cancels, cancels + 1, "the provider saw the cancel: {task}");
            // It stays cancelled: the tracker does not bring the provider's answer back.
            tokio::time::sleep(Duration::from_millis(500)).await;
            assert_eq!(server.get(&key, &format!("/v1/tasks/{id}")).await.1["error"], "cancelled by client");
        }
        let usage = usage(&server, &key).await;
        assert_eq!((usage["held_usd"].as_str(), usage["spent_usd"].as_str()), (Some("0.0000"), Some("0.0000")));
        assert!(server.service.operator().verify_ledger().await.unwrap().is_empty());
        server.stop().await;
    }
}
