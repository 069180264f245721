//! A job of every engine family runs to `succeeded` and its output URL downloads bytes that decode
//! as the declared media at the expected size or duration.

mod common;

use base64::Engine as _;

use common::{generate, mask_data_uri, png_data_uri, TestServer};
use media::video;
use serde_json::{json, Value};
use std::io::Cursor;

fn png_size(bytes: &[u8]) -> (u32, u32, image::ColorType) {
    let image = image::load_from_memory_with_format(bytes, image::ImageFormat::Png).expect("PNG decodes");
    (image.width(), image.height(), image.color())
}

async fn first_output(server: &TestServer, task: &Value) -> (String, Vec<u8>) {
    let output = &task["output"][0];
    let (content_type, bytes) = server.download(output["url"].as_str().expect("url")).await;
    assert_eq!(content_type, output["content_type"].as_str().unwrap());
    (content_type, bytes)
}

fn wav_seconds(bytes: &[u8]) -> f64 {
    let reader = hound::WavReader::new(Cursor::new(bytes)).expect("WAV parses");
    reader.duration() as f64 / f64::from(reader.spec().sample_rate)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_family_produces_real_media() {
    let server = TestServer::start_with(
        storage::Backend::Sqlite,
        common::Options { worker_concurrency: 2, ..Default::default() },
    )
    .await;
    let key = server.key(None, false).await;
    let photo = png_data_uri(96, 64);

    // Image generation (PNG and JPEG) at the requested size.
    let task = server
        .run(&key, generate("alpha-dev", json!({"prompt": "modern kitchen", "params": {"width": 320, "height": 256}})))
        .await;
    let (_, bytes) = first_output(&server, &task).await;
    let (w, h, _) = png_size(&bytes);
    assert_eq!((w, h), (320, 256));
    assert_eq!(task["cost_usd"], "0.0020", "320x256 = 0.08192 MP at 0.025 USD");
    let task = server
        .run(&key, generate("zeta", json!({"prompt": "garden", "params": {"width": 256, "height": 256, "num_images": 2, "output_format": "jpeg"}})))
        .await;
    assert_eq!(task["output"].as_array().unwrap().len(), 2);
    let (content_type, bytes) = first_output(&server, &task).await;
    assert_eq!(content_type, "image/jpeg");
    let jpeg = image::load_from_memory_with_format(&bytes, image::ImageFormat::Jpeg).expect("JPEG decodes");
    assert_eq!((jpeg.width(), jpeg.height()), (256, 256));
    assert_eq!(task["cost_usd"], "0.0600");

    // Image editing keeps the input size; inpainting fills the mask.
    let task = server.run(&key, generate("delta-edit", json!({"prompt": "warmer light", "image_url": photo}))).await;
    assert_eq!(png_size(&first_output(&server, &task).await.1).0, 96);
    let task = server
        .run(&key, generate("inpaint", json!({"image_url": photo, "params": {"mask_url": mask_data_uri(96, 64)}})))
        .await;
    assert_eq!(task["sandbox"], false);
    let (w, h, _) = png_size(&first_output(&server, &task).await.1);
    assert_eq!((w, h), (96, 64));

    // Background removal gives a PNG with alpha: corners transparent, centre opaque.
    let task = server.run(&key, generate("bg-remove", json!({"image_url": photo}))).await;
    let (_, bytes) = first_output(&server, &task).await;
    let cutout = image::load_from_memory(&bytes).expect("PNG").to_rgba8();
    assert_eq!(cutout.get_pixel(0, 0)[3], 0);
    assert_eq!(cutout.get_pixel(48, 32)[3], 255);

    // Upscaling by the requested factor.
    let task = server.run(&key, generate("upscale-clarity", json!({"image_url": photo, "params": {"scale": 3}}))).await;
    let (w, h, _) = png_size(&first_output(&server, &task).await.1);
    assert_eq!((w, h), (288, 192));
    // 3x makes 2.25 times the pixels of the catalog's 2x price, quoted and billed.
    assert_eq!((task["price_usd"].as_str(), task["cost_usd"].as_str()), (Some("0.0675"), Some("0.0675")));
    // A per-image price covers 1024x1024; a 2048x2048 image is four of them.
    let large = generate("alpha-ultra", json!({"prompt": "a porch", "params": {"width": 2048, "height": 2048}}));
    let (status, quoted) = server.post(&key, "/v1/generate", large).await;
    assert_eq!((status.as_u16(), quoted["price_usd"].as_str()), (202, Some("0.2400")), "{quoted}");
    let cancel = format!("/v1/tasks/{}/cancel", quoted["id"].as_str().unwrap());
    let _ = server.post(&key, &cancel, json!({})).await;

    // Image to video and text to video: H.264 MP4 of the requested duration.
    let task = server
        .run(
            &key,
            generate("eta-lite-i2v", json!({"image_url": photo, "params": {"duration": 2, "resolution": "360p"}})),
        )
        .await;
    let (content_type, clip) = first_output(&server, &task).await;
    assert_eq!(content_type, "video/mp4");
    let info = video::probe_mp4(&clip).expect("MP4 parses");
    assert_eq!((info.codec.as_str(), info.width, info.height), ("avc1", 640, 360));
    assert!((info.duration_secs - 2.0).abs() < 0.05, "{info:?}");
    // 2 s at 360p: half the catalog's 480p rate of 0.04 a second.
    assert_eq!((task["price_usd"].as_str(), task["cost_usd"].as_str()), (Some("0.0400"), Some("0.0400")));
    let task = server
        .run(
            &key,
            generate(
                "lambda-fast",
                json!({"prompt": "sunset drone shot", "params": {"duration": 1, "resolution": "360p"}}),
            ),
        )
        .await;
    let t2v_url = task["output"][0]["url"].as_str().unwrap().to_string();
    let (_, bytes) = first_output(&server, &task).await;
    let (frames, _) = video::decode_mp4(&bytes).expect("H.264 decodes");
    assert_eq!(frames.len(), 24);

    // Video to video and video upscaling take our own output URL as input.
    let task = server.run(&key, generate("nu-aleph", json!({"prompt": "make it dusk", "video_url": t2v_url}))).await;
    assert_eq!(video::probe_mp4(&first_output(&server, &task).await.1).unwrap().frame_count, 24);
    let small = server
        .run(&key, generate("theta-t2v", json!({"prompt": "tiny", "params": {"duration": 1, "resolution": "360p"}})))
        .await;
    let small_url = small["output"][0]["url"].as_str().unwrap().to_string();
    let task = server.run(&key, generate("video-upscale", json!({"video_url": small_url}))).await;
    let info = video::probe_mp4(&first_output(&server, &task).await.1).unwrap();
    assert_eq!((info.width, info.height), (1280, 720));

    // Speech, music, and lip sync (video cut to the speech plus the speech track).
    let task = server.run(&key, generate("tts", json!({"prompt": "Welcome to this three bedroom home."}))).await;
    let (content_type, speech) = first_output(&server, &task).await;
    assert_eq!(content_type, "audio/wav");
    // Real speech from eSpeak NG when installed (CI installs it), else the marked sandbox vocoder.
    let synthesizer = std::process::Command::new(media::speech::SYNTHESIZER).arg("--version").output().is_ok();
    assert_eq!(task["sandbox"], !synthesizer, "{task}");
    let seconds = wav_seconds(&speech);
    assert!((0.5..10.0).contains(&seconds), "{seconds} s for one sentence");
    assert_eq!(task["cost_usd"], "0.0150");
    let speech_url = task["output"][0]["url"].as_str().unwrap().to_string();
    let task = server.run(&key, generate("omicron2", json!({"prompt": "calm piano", "params": {"duration": 3}}))).await;
    assert!((wav_seconds(&first_output(&server, &task).await.1) - 3.0).abs() < 0.01);
    assert_eq!(task["cost_usd"], "0.0300");
    let task = server.run(&key, generate("lipsync", json!({"video_url": t2v_url, "audio_url": speech_url}))).await;
    let outputs = task["output"].as_array().unwrap();
    assert_eq!((outputs[0]["type"].as_str(), outputs[1]["type"].as_str()), (Some("video"), Some("audio")));
    let info = video::probe_mp4(&first_output(&server, &task).await.1).unwrap();
    assert!((info.duration_secs - wav_seconds(&speech)).abs() < 0.1, "{info:?}");
    // The speech is muxed in as AAC, as long as the pictures.
    let audio = info.audio.as_ref().expect("the speech is in the MP4");
    assert_eq!(audio.codec, "mp4a");
    assert!((audio.duration_secs - info.duration_secs).abs() < 0.01, "{info:?}");
    // The separate speech output is our own encoding, not the client's bytes.
    let (_, wav) = server.download(outputs[1]["url"].as_str().unwrap()).await;
    assert!((wav_seconds(&wav) - wav_seconds(&speech)).abs() < 0.01);

    // A WAV whose header claims 2 GB of samples but holds none fails cleanly, unbilled.
    let mut lying = media::audio::encode_wav(&[], 22_050).unwrap();
    lying[40..44].copy_from_slice(&2_000_000_000u32.to_le_bytes());
    let lying = format!("data:audio/wav;base64,{}", base64::engine::general_purpose::STANDARD.encode(&lying));
    let queued = server.submit(&key, generate("lipsync", json!({"video_url": t2v_url, "audio_url": lying}))).await;
    let task = server.wait(&key, queued["id"].as_str().unwrap()).await;
    assert_eq!(task["status"], "failed", "{task}");
    assert!(task["error"].as_str().unwrap().contains("audio_url"), "{task}");
    assert!(task.get("cost_usd").is_none());
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn undecodable_input_fails_the_task_and_costs_nothing() {
    let server = TestServer::start(storage::Backend::Sqlite).await;
    let key = server.key(None, false).await;
    let queued =
        server.submit(&key, generate("bg-remove", json!({"image_url": "data:image/png;base64,aGVsbG8="}))).await;
    let task = server.wait(&key, queued["id"].as_str().unwrap()).await;
    assert_eq!(task["status"], "failed");
    assert!(task["error"].as_str().unwrap().contains("image_url"), "{task}");
    assert!(task.get("cost_usd").is_none() && task.get("output").is_none());
    let (_, usage) = server.get(&key, "/v1/usage").await;
    assert_eq!((usage["spent_usd"].as_str(), usage["held_usd"].as_str()), (Some("0.0000"), Some("0.0000")));
    server.stop().await;
}

/// The decompression bomb of an image engine: a flat 8192 x 8192 PNG, small on the wire and 67
/// megapixels in memory. bg-remove and inpaint refuse it from its header, before decoding; the
/// job fails with the reason, nothing is billed, and the server keeps answering.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_image_over_the_pixel_limit_fails_before_it_is_decoded() {
    let server = TestServer::start(storage::Backend::Sqlite).await;
    let key = server.key(None, false).await;
    let mut png = Vec::new();
    image::DynamicImage::ImageLuma8(image::GrayImage::new(8192, 8192))
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .expect("png");
    assert!(png.len() < 1 << 20, "the bomb is small on the wire: {} bytes", png.len());
    let bomb = format!("data:image/png;base64,{}", base64::engine::general_purpose::STANDARD.encode(&png));
    for (model, extra) in [
        ("bg-remove", json!({"image_url": bomb})),
        ("inpaint", json!({"image_url": bomb, "prompt": "a chair", "params": {"mask_url": mask_data_uri(64, 64)}})),
    ] {
        let queued = server.submit(&key, generate(model, extra)).await;
        let task = server.wait(&key, queued["id"].as_str().unwrap()).await;
        assert_eq!(task["status"], "failed", "{model}: {task}");
        assert!(task["error"].as_str().unwrap().contains("megapixels"), "{model}: {task}");
    }
    let (status, _) = server.get(&key, "/v1").await;
    assert_eq!(status, reqwest::StatusCode::OK, "the server still answers");
    let (_, usage) = server.get(&key, "/v1/usage").await;
    assert_eq!((usage["spent_usd"].as_str(), usage["held_usd"].as_str()), (Some("0.0000"), Some("0.0000")));
    server.stop().await;
}

/// A large `data:` input is kept in the object store, not in the task row: the stored job holds a
/// reference, and the job still reads its input and succeeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn large_data_inputs_leave_the_task_row() {
    let server = TestServer::start(storage::Backend::Sqlite).await;
    let key = server.key(None, false).await;
    // Noise does not compress: about 100 KB of PNG.
    let mut seed = 7u32;
    let noisy = image::RgbImage::from_fn(200, 200, |_, _| {
        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        image::Rgb([(seed >> 16) as u8, (seed >> 8) as u8, seed as u8])
    });
    let input = common::image_data_uri(&noisy);
    assert!(input.len() > 64 * 1024);
    // (Upscaled: noise has no subject a background removal could keep.)
    let queued = server.submit(&key, generate("upscale-clarity", json!({"image_url": input}))).await;
    let id = queued["id"].as_str().unwrap();
    let row = server.service.database().task(id).unwrap().unwrap();
    assert!(row.job.len() < 4 * 1024, "the row holds a reference, not the input: {} bytes", row.job.len());
    assert!(row.job.contains("stored-input:inputs/") && !row.job.contains("data:image"), "{}", row.job);
    let task = server.wait(&key, id).await;
    assert_eq!(task["status"], "succeeded", "{task}");
    let folder = server.output_dir.join("inputs").join(id);
    assert_eq!(std::fs::read_dir(&folder).map_or(0, |e| e.count()), 0, "a finished job's inputs stay stored");
    server.stop().await;
}

/// A background removal that finds no subject (a flat picture) fails with a clear error and is
/// not billed, instead of returning a transparent picture as a success.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cutout_without_a_subject_fails_unbilled() {
    let server = TestServer::start(storage::Backend::Sqlite).await;
    let key = server.key(None, false).await;
    let flat = image::RgbImage::from_pixel(160, 120, image::Rgb([182, 190, 201]));
    let queued = server.submit(&key, generate("bg-remove", json!({"image_url": common::image_data_uri(&flat)}))).await;
    let task = server.wait(&key, queued["id"].as_str().unwrap()).await;
    assert_eq!(task["status"], "failed", "{task}");
    assert!(task["error"].as_str().unwrap().contains("no subject could be told apart"), "{task}");
    assert!(task["cost_usd"].is_null() || task["cost_usd"] == "0.0000", "{task}");
    let (_, usage) = server.get(&key, "/v1/usage").await;
    assert_eq!((usage["spent_usd"].as_str(), usage["held_usd"].as_str()), (Some("0.0000"), Some("0.0000")));
    server.stop().await;
}

/// One key's unfinished jobs hold a bounded number of stored input bytes: past the bound a submit
/// is a 429, nothing held, until its earlier jobs finish.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_key_cannot_fill_the_store_with_waiting_inputs() {
    let one_mib: common::Adjust = Box::new(|config| config.stored_input_mb_per_key = 1);
    let options = common::Options { worker: false, adjust: Some(one_mib), ..Default::default() };
    let server = TestServer::start_with(storage::Backend::Sqlite, options).await;
    let key = server.key(None, false).await;
    let mut seed = 11u32;
    let noisy = image::RgbImage::from_fn(400, 400, |_, _| {
        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        image::Rgb([(seed >> 16) as u8, (seed >> 8) as u8, seed as u8])
    });
    let input = common::image_data_uri(&noisy);
    assert!(input.len() > 400 * 1024 && input.len() < 700 * 1024, "{}", input.len());
    let job = generate("bg-remove", json!({"image_url": input}));
    server.submit(&key, job.clone()).await;
    let (status, refused) = server.post(&key, "/v1/generate", job.clone()).await;
    assert_eq!(status, reqwest::StatusCode::TOO_MANY_REQUESTS, "{refused}");
    assert!(refused["error"].as_str().unwrap().contains("at most 1 MB may wait at once"), "{refused}");
    let (_, usage) = server.get(&key, "/v1/usage").await;
    assert_eq!(usage["held_usd"], "0.0100", "only the first job is held: {usage}");
    server.start_worker();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let (status, _) = server.post(&key, "/v1/generate", job.clone()).await;
        if status == reqwest::StatusCode::ACCEPTED {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the first job never made room");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    server.stop().await;
}

/// A failed job's stored inputs are removed when it fails, and so are those of the jobs a revoked
/// key had queued: nothing a job will never read stays on disk.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn stored_inputs_go_with_a_failed_or_cancelled_job() {
    let stored_inputs = |server: &TestServer, id: &str| {
        std::fs::read_dir(server.output_dir.join("inputs").join(id)).map_or(0, |entries| entries.count())
    };
    // 96 KB that claims to be a PNG and is not: stored at submit, refused when decoded.
    let junk: Vec<u8> = (0..96 * 1024u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    let input = format!("data:image/png;base64,{}", base64::engine::general_purpose::STANDARD.encode(&junk));

    let server = TestServer::start(storage::Backend::Sqlite).await;
    let key = server.key(None, false).await;
    let queued = server.submit(&key, generate("bg-remove", json!({"image_url": input.clone()}))).await;
    let id = queued["id"].as_str().unwrap().to_string();
    let task = server.wait(&key, &id).await;
    assert_eq!(task["status"], "failed", "{task}");
    assert_eq!(stored_inputs(&server, &id), 0, "a failed job's inputs stay behind");
    server.stop().await;

    let options = common::Options { worker: false, ..common::Options::default() };
    let server = TestServer::start_with(storage::Backend::Sqlite, options).await;
    let key = server.key(None, false).await;
    let queued = server.submit(&key, generate("bg-remove", json!({"image_url": input}))).await;
    let id = queued["id"].as_str().unwrap().to_string();
    assert_eq!(stored_inputs(&server, &id), 1, "the input is stored while the job waits");
    let key_id = server.service.api().authenticate(Some(&key)).await.unwrap().key_id;
    server.service.operator().revoke_key(&key_id).await.unwrap();
    assert_eq!(stored_inputs(&server, &id), 0, "a cancelled job's inputs stay behind");
    server.stop().await;
}
