//! The reel recipe over HTTP, black-box on SQLite and PostgreSQL: 202 with a `reel_...` id,
//! polled at its own endpoint and nowhere else, the MP4 probed (size, codec, rate, length, fast
//! start, colour tags), the cover and the caption files read back, the audio track when asked,
//! 400s for bad input, and billing once, only on success.

mod common;

use common::{photo, read, Options, TestServer};
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::time::Duration;
use storage::test_support::BACKENDS;

fn full_request(duration: f64) -> Value {
    json!({
        "photos": [
            {"url": photo("coffee.jpg"), "caption": "Sunlit breakfast nook"},
            photo("rocket.jpg"),
            {"url": photo("chelsea.jpg")},
        ],
        "details": {
            "address": "42 Harbor Lane, Mystic, CT", "price": 525000, "beds": 3, "baths": 2,
            "square_feet": 1850, "headline": "Waterfront colonial with a private dock",
            "agent_name": "Dana Reyes", "brokerage": "Shoreline Realty", "phone": "(860) 555-0142",
        },
        "params": {"duration": duration, "brand": {"primary": "#1F3A5F", "accent": "#D9B36C"}},
    })
}

/// Polls a reel until it ends.
async fn wait_reel(server: &TestServer, key: &str, id: &str) -> Value {
    server.wait_at(key, &format!("/v1/recipes/reel/{id}")).await
}

async fn spent(server: &TestServer, key: &str) -> (String, String) {
    let (_, usage) = server.get(key, "/v1/usage").await;
    (usage["spent_usd"].as_str().unwrap().to_string(), usage["held_usd"].as_str().unwrap().to_string())
}

/// Parses SubRip or WebVTT cues: (start, end, text).
fn cues(text: &str) -> Vec<(f64, f64, String)> {
    let seconds = |t: &str| {
        let t = t.trim().replace(',', ".");
        let parts: Vec<f64> = t.split(':').map(|p| p.parse().unwrap()).collect();
        parts[0] * 3600.0 + parts[1] * 60.0 + parts[2]
    };
    text.trim_start_matches("WEBVTT")
        .split("\n\n")
        .filter(|block| block.contains("-->"))
        .map(|block| {
            let mut lines = block.trim().lines().skip(1);
            let (start, end) = lines.next().unwrap().split_once("-->").unwrap();
            (seconds(start), seconds(end), lines.collect::<Vec<_>>().join("\n"))
        })
        .collect()
}

#[tokio::test]
async fn a_reel_is_a_posted_ready_video_in_its_own_id_space() {
    for backend in BACKENDS {
        // The default length on SQLite; the shortest on PostgreSQL, to keep the suite quick.
        let (seconds, frames) = match backend {
            storage::Backend::Sqlite => (15.0, 450),
            storage::Backend::Postgres => (6.0, 180),
        };
        let server = TestServer::start(backend).await;
        let key = server.key(None, false).await;
        let response = server
            .client
            .post(format!("{}/v1/recipes/reel", server.base))
            .bearer_auth(&key)
            .json(&full_request(seconds))
            .send()
            .await
            .unwrap();
        let location = response.headers().get("location").map(|l| l.to_str().unwrap().to_string());
        let (status, queued) = read(response).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{queued}");
        let id = queued["reel_id"].as_str().unwrap().to_string();
        assert!(id.starts_with("reel_"), "{queued}");
        assert_eq!(queued["status"], "queued");
        assert_eq!(queued["price_usd"], "0.2500");
        assert!(queued["poll_url"].as_str().unwrap().ends_with(&format!("/v1/recipes/reel/{id}")));
        assert_eq!(location.as_deref(), queued["poll_url"].as_str());

        // Its own id space: not a task, and not another key's.
        assert_eq!(server.get(&key, &format!("/v1/tasks/{id}")).await.0, StatusCode::NOT_FOUND);
        let other = server.key(None, false).await;
        assert_eq!(server.get(&other, &format!("/v1/recipes/reel/{id}")).await.0, StatusCode::NOT_FOUND);

        let reel = wait_reel(&server, &key, &id).await;
        assert_eq!(reel["status"], "succeeded", "{reel}");
        assert_eq!(reel["cost_usd"], "0.2500");
        let output = reel["output"].as_array().unwrap();
        let kinds: Vec<_> =
            output.iter().map(|o| (o["type"].as_str().unwrap(), o["content_type"].as_str().unwrap())).collect();
        assert_eq!(
            kinds,
            [("video", "video/mp4"), ("image", "image/jpeg"), ("text", "application/x-subrip"), ("text", "text/vtt")]
        );

        // The video: 1080x1920 H.264 at 30 fps, exactly the length asked to the frame, fast start, no audio.
        let mut files = Vec::new();
        for file in output {
            files.push(server.download(file["url"].as_str().unwrap()).await.1);
        }
        let [mp4, cover, srt, vtt] = <[_; 4]>::try_from(files).unwrap();
        let info = media::video::probe_mp4(&mp4).expect("the reel probes");
        assert_eq!((info.width, info.height, info.codec.as_str()), (1080, 1920, "avc1"));
        assert_eq!(info.frame_count, frames);
        assert!((info.duration_secs - seconds).abs() < 1e-6, "{info:?}");
        assert!((info.fps - 30.0).abs() < 1e-6, "{info:?}");
        assert!(info.fast_start, "moov before mdat");
        assert!(info.audio.is_none(), "{info:?}");
        assert!(info.bt709, "BT.709 colour tags");
        // Every frame decodes; a few are kept to look at (target/tmp/reel-frame-*.png).
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/tmp");
        std::fs::create_dir_all(&dir).unwrap();
        let (decoded, fps) = tokio::task::spawn_blocking(move || {
            let mut index = 0u32;
            media::video::for_each_frame(&mp4, |frame| {
                assert_eq!(frame.dimensions(), (1080, 1920));
                if seconds == 15.0 && [0, 100, 150, 250, 330, 440].contains(&index) {
                    frame.save(dir.join(format!("reel-frame-{index:03}.png"))).unwrap();
                }
                index += 1;
                Ok(true)
            })
        })
        .await
        .unwrap()
        .expect("the reel decodes");
        assert_eq!((decoded, fps), (frames, 30.0));

        // The cover.
        let cover = image::load_from_memory_with_format(&cover, image::ImageFormat::Jpeg).expect("cover decodes");
        assert_eq!((cover.width(), cover.height()), (1080, 1920));

        // The caption files match the captions burned in, and every caption box is in the safe zone.
        let result = &reel["result"];
        let zone = &result["safe_zone"];
        let (zx, zy, zw, zh) = (
            zone["x"].as_f64().unwrap(),
            zone["y"].as_f64().unwrap(),
            zone["width"].as_f64().unwrap(),
            zone["height"].as_f64().unwrap(),
        );
        let edges = [zx, zy, zx + zw, zy + zh];
        for (edge, exact) in edges.into_iter().zip([64.8, 268.8, 1015.2, 1248.0]) {
            assert!((edge - exact).abs() < 1e-3, "safe zone {edges:?}");
        }
        let captions = result["captions"].as_array().unwrap();
        for caption in captions {
            let b = &caption["box"];
            let (x, y, w, h) = (
                b["x"].as_f64().unwrap(),
                b["y"].as_f64().unwrap(),
                b["width"].as_f64().unwrap(),
                b["height"].as_f64().unwrap(),
            );
            assert!(
                x >= zx - 1e-3 && y >= zy - 1e-3 && x + w <= zx + zw + 1e-3 && y + h <= zy + zh + 1e-3,
                "{caption}"
            );
        }
        let (srt, vtt) = (cues(&String::from_utf8(srt).unwrap()), cues(&String::from_utf8(vtt).unwrap()));
        assert_eq!(srt, vtt);
        let texts: Vec<&str> = srt.iter().map(|c| c.2.as_str()).collect();
        assert_eq!(
            texts,
            [
                "Sunlit breakfast nook\nWaterfront colonial with a private dock\n$525,000",
                "3 bd | 2 ba | 1,850 sq ft",
                "42 Harbor Lane, Mystic, CT",
                "Dana Reyes\nShoreline Realty\n(860) 555-0142",
            ]
        );
        for (cue, caption) in srt.iter().take(3).zip(captions) {
            assert!((cue.0 - caption["start_seconds"].as_f64().unwrap()).abs() < 0.001);
            assert!((cue.1 - caption["end_seconds"].as_f64().unwrap()).abs() < 0.001);
        }
        assert!(srt.windows(2).all(|w| w[0].1 <= w[1].0 + 1e-9), "cues do not overlap: {srt:?}");
        assert!(srt.last().unwrap().1 <= seconds + 1e-9);

        // Billed once, on success.
        assert_eq!(spent(&server, &key).await, ("0.2500".into(), "0.0000".into()));
        let ledger = server.service.database().task_ledger(&id).unwrap();
        assert_eq!(ledger.iter().filter(|e| e.kind == "capture").count(), 1);
        // A task id is not a reel.
        let task = server.submit(&key, json!({"model": "alpha-schnell", "prompt": "porch"})).await;
        let task_id = task["id"].as_str().unwrap();
        assert_eq!(server.get(&key, &format!("/v1/recipes/reel/{task_id}")).await.0, StatusCode::NOT_FOUND);
        server.stop().await;
    }
}

#[tokio::test]
async fn voiceover_and_music_make_an_aac_track_as_long_as_the_video() {
    let server = TestServer::start(storage::Backend::Sqlite).await;
    let key = server.key(None, false).await;
    let mut request = full_request(8.0);
    request["params"]["voiceover"] = json!(true);
    request["params"]["music"] = json!(true);
    let (status, queued) = server.post(&key, "/v1/recipes/reel", request).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{queued}");
    let reel = wait_reel(&server, &key, queued["reel_id"].as_str().unwrap()).await;
    assert_eq!(reel["status"], "succeeded", "{reel}");
    let script = reel["result"]["voiceover_script"].as_str().unwrap();
    assert!(script.contains("Offered at $525,000") && !script.contains("null"), "{script}");
    let (_, mp4) = server.download(reel["output"][0]["url"].as_str().unwrap()).await;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/tmp");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("reel-voiceover.mp4"), &mp4).unwrap();
    let info = media::video::probe_mp4(&mp4).unwrap();
    assert_eq!(info.frame_count, 240);
    assert!(info.fast_start && info.bt709, "{info:?}");
    let audio = info.audio.expect("an audio track");
    assert_eq!(audio.codec, "mp4a");
    assert!(audio.sample_rate == 44_100 || audio.sample_rate == 48_000, "{audio:?}");
    // Within one AAC frame (1024 samples) of the pictures.
    assert!((audio.duration_secs - 8.0).abs() <= 1024.0 / f64::from(audio.sample_rate), "{audio:?}");
    server.stop().await;
}

#[tokio::test]
async fn bad_reels_are_refused_or_failed_and_never_billed() {
    for backend in BACKENDS {
        let options = Options::default();
        let server = TestServer::start_with(backend, options).await;
        let key = server.key(None, false).await;
        let one = photo("coffee.jpg");
        let cases = [
            (json!({"photos": []}), "photos"),
            (json!({"photos": [one, one, one, one]}), "photos"),
            (json!({"details": {"price": 1}}), "photos: required"),
            (json!({"photos": [one], "details": {"pool": true}}), "unknown field `pool`"),
            (json!({"photos": [one], "params": {"duration": 5}}), "params.duration"),
            (json!({"photos": [one], "params": {"duration": 31}}), "params.duration"),
            (json!({"photos": [one], "params": {"brand": {"primary": "navy"}}}), "params.brand.primary"),
            (json!({"photos": ["ftp://example.com/a.jpg"]}), "photos[0].url"),
            (json!({"photos": [{"url": one, "alt": "x"}]}), "unknown field `alt`"),
            (json!({"photos": [one], "details": {"beds": -2}}), "details.beds"),
        ];
        for (body, named) in cases {
            let (status, answer) = server.post(&key, "/v1/recipes/reel", body.clone()).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {answer}");
            assert!(answer["error"].as_str().unwrap().contains(named), "{named}: {answer}");
        }
        // A photo that is not an image fails the reel with a clear error, and costs nothing.
        let body = json!({"photos": [one, "data:image/png;base64,AAAAAAAA"]});
        let (status, queued) = server.post(&key, "/v1/recipes/reel", body).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{queued}");
        let reel = wait_reel(&server, &key, queued["reel_id"].as_str().unwrap()).await;
        assert_eq!(reel["status"], "failed", "{reel}");
        assert!(reel["error"].as_str().unwrap().contains("photos[1]"), "{reel}");
        assert_eq!(spent(&server, &key).await, ("0.0000".into(), "0.0000".into()));
        server.stop().await;
    }
}

#[tokio::test]
async fn the_connector_makes_and_checks_a_reel() {
    let server = TestServer::start(storage::Backend::Sqlite).await;
    let key = server.key(None, false).await;
    let call = |id: u32, name: &str, arguments: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}});
    let arguments =
        json!({"photos": [photo("rocket.jpg")], "details": {"price": "$1,200,000"}, "params": {"duration": 6}});
    let (status, answer) = server.post(&key, "/api/mcp", call(1, "reel", arguments)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let started = &answer["result"]["structuredContent"];
    let reel_id = started["reel_id"].as_str().unwrap().to_string();
    assert!(reel_id.starts_with("reel_"), "{answer}");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    let status = loop {
        let (_, answer) = server.post(&key, "/api/mcp", call(2, "reel_status", json!({"reel_id": reel_id}))).await;
        let status = answer["result"]["structuredContent"].clone();
        if status["status"] == "succeeded" || status["status"] == "failed" {
            break status;
        }
        assert!(tokio::time::Instant::now() < deadline, "{answer}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(status["status"], "succeeded", "{status}");
    assert_eq!(status["output"][0]["type"], "video");
    assert_eq!(status["result"]["captions"][0]["text"], "$1,200,000");
    // task_status does not read reels, and says where to look.
    let (_, answer) = server.post(&key, "/api/mcp", call(3, "task_status", json!({"id": reel_id}))).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(answer["result"]["content"][0]["text"].as_str().unwrap().contains("reel_status"), "{answer}");
    server.stop().await;
}
