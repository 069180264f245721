//! Jobs run in child processes held to a memory limit and a deadline: the worst accepted input of
//! every family fits the limit; attacks with small, cheap requests fail cleanly and unbilled; a
//! job past its deadline is stopped; a job that crashes its process is a poison job; and the
//! server keeps answering throughout.

mod common;

use base64::Engine as _;
use common::{terminate, Deployment};
use image::{Rgb, RgbImage};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// The documented default memory limit of a job, MiB.
const MEMORY_LIMIT_MB: u64 = 512;

struct Client {
    http: reqwest::Client,
    key: String,
}

impl Client {
    async fn post(&self, deployment: &Deployment, path: &str, body: &Value) -> (u16, Value) {
        let response =
            self.http.post(deployment.url(path)).bearer_auth(&self.key).json(body).send().await.expect("post");
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    async fn get(&self, deployment: &Deployment, path: &str) -> (u16, Value) {
        let response = self.http.get(deployment.url(path)).bearer_auth(&self.key).send().await.expect("get");
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// Submits and returns the task id; panics on anything but 202.
    async fn submit(&self, deployment: &Deployment, path: &str, body: &Value) -> String {
        let (status, answer) = self.post(deployment, path, body).await;
        assert_eq!(status, 202, "{path}: {answer}");
        answer["id"].as_str().expect("id").to_string()
    }

    /// Polls until the task (or reel) ends.
    async fn wait(&self, deployment: &Deployment, id: &str, limit: Duration) -> Value {
        let path = if id.starts_with("reel_") { format!("/v1/recipes/reel/{id}") } else { format!("/v1/tasks/{id}") };
        let started = Instant::now();
        loop {
            let (status, task) = self.get(deployment, &path).await;
            assert_eq!(status, 200, "{task}");
            if task["status"] == "succeeded" || task["status"] == "failed" {
                return task;
            }
            assert!(started.elapsed() < limit, "{id} did not end in {limit:?}: {task}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn spent_and_held(&self, deployment: &Deployment) -> (String, String) {
        let (_, usage) = self.get(deployment, "/v1/usage").await;
        (usage["spent_usd"].as_str().unwrap_or("?").to_string(), usage["held_usd"].as_str().unwrap_or("?").to_string())
    }
}

async fn start(deployment: &Deployment) -> (std::process::Child, Client) {
    let (server, key) = deployment.start();
    let client = Client { http: reqwest::Client::new(), key: key.expect("first-start key") };
    (server, client)
}

/// The peak resident memory the server logged for a task's job process, KiB.
fn peak_rss_kib(log: &str, task: &str) -> Option<u64> {
    log.lines().filter(|l| l.contains("job process ended") && l.contains(task)).find_map(|line| {
        let plain: String = strip_ansi(line);
        let value = plain.split("peak_rss_kib=").nth(1)?;
        value.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
    })
}

fn strip_ansi(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn data_uri(mime: &str, bytes: &[u8]) -> String {
    format!("data:{mime};base64,{}", base64::engine::general_purpose::STANDARD.encode(bytes))
}

fn png(image: &RgbImage) -> String {
    let mut bytes = Vec::new();
    image::DynamicImage::ImageRgb8(image.clone())
        .write_to(&mut std::io::Cursor::new(&mut bytes), image::ImageFormat::Png)
        .expect("png");
    data_uri("image/png", &bytes)
}

/// A photo-like picture that compresses well: sky, lawn, a house-coloured block and a disc.
fn scene(width: u32, height: u32) -> RgbImage {
    RgbImage::from_fn(width, height, |x, y| {
        let (fx, fy) = (x as f32 / width as f32, y as f32 / height as f32);
        if (fx - 0.5).powi(2) + (fy - 0.3).powi(2) < 0.01 {
            Rgb([250, 210, 90])
        } else if (0.25..0.75).contains(&fx) && (0.45..0.8).contains(&fy) {
            Rgb([180, 70, 60])
        } else if fy > 0.6 {
            Rgb([70, 140, 60])
        } else {
            Rgb([120, 170, 230])
        }
    })
}

fn mp4(width: u32, height: u32, frames: usize) -> String {
    let frames: Vec<RgbImage> = (0..frames)
        .map(|i| RgbImage::from_fn(width, height, |x, y| Rgb([(x / 8 + i as u32) as u8, (y / 8) as u8, 90])))
        .collect();
    data_uri("video/mp4", &media::video::encode_mp4(&frames, 24).expect("mp4"))
}

fn wav(seconds: f32) -> String {
    let rate = 16_000;
    let samples: Vec<f32> = (0..(seconds * rate as f32) as usize)
        .map(|i| (i as f32 * 440.0 * std::f32::consts::TAU / rate as f32).sin() * 0.3)
        .collect();
    data_uri("audio/wav", &media::audio::encode_wav(&samples, rate).expect("wav"))
}

/// The largest accepted picture: 6320x6320 is 39.9 megapixels, under the 40 megapixel cap.
const WORST_SIDE: u32 = 6320;

/// Every family and recipe at its worst accepted input runs in its own process under the
/// documented 512 MB limit, succeeds, and its peak memory (as the server measured it) is printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_worst_accepted_input_of_every_family_fits_the_memory_limit() {
    let deployment = Deployment::with_env(&[
        ("RUST_LOG", "warn,service::job_process=info"),
        ("WORKER_CONCURRENCY", "1"),
        ("INPUT_MAX_BYTES", "67108864"),
        // Every family's worst input together costs more than the default allowance.
        ("FREE_ALLOWANCE_USD", "50"),
    ]);
    let (mut server, client) = start(&deployment).await;
    let photo = png(&scene(WORST_SIDE, WORST_SIDE));
    let twelve_mp = scene(4000, 3000);
    let half_mask = RgbImage::from_fn(4000, 3000, |x, _| if x < 2000 { Rgb([255; 3]) } else { Rgb([0; 3]) });
    let details = json!({"address": "42 Harbor Lane, Mystic, CT 06355", "price": 525000, "beds": 3, "baths": 2,
        "square_feet": 1850, "agent_name": "Dana Reyes", "phone": "(860) 555-0142", "brokerage": "Shoreline Realty"});
    let jobs: Vec<(&str, &str, Value)> = vec![
        (
            "image_generation",
            "/v1/generate",
            json!({"model": "beta-image", "prompt": "a porch",
            "params": {"width": 2048, "height": 2048, "num_images": 4}}),
        ),
        ("image_editing", "/v1/generate", json!({"model": "beta-edit", "prompt": "warmer", "image_url": photo})),
        (
            "inpaint",
            "/v1/generate",
            json!({"model": "inpaint", "prompt": "lawn", "image_url": png(&twelve_mp),
            "params": {"mask_url": png(&half_mask)}}),
        ),
        ("background_removal", "/v1/generate", json!({"model": "bg-remove", "image_url": photo})),
        (
            "image_upscaling",
            "/v1/generate",
            json!({"model": "upscale-clarity", "image_url": png(&scene(2048, 2048)),
            "params": {"scale": 2}}),
        ),
        (
            "image_to_video",
            "/v1/generate",
            json!({"model": "eta-lite-i2v", "prompt": "pan", "image_url": photo,
            "params": {"duration": 10, "resolution": "720p"}}),
        ),
        (
            "text_to_video",
            "/v1/generate",
            json!({"model": "lambda-t2v", "prompt": "tour",
            "params": {"duration": 10, "resolution": "720p"}}),
        ),
        (
            "video_to_video",
            "/v1/generate",
            json!({"model": "nu-aleph", "prompt": "dusk", "video_url": mp4(1920, 1080, 12)}),
        ),
        ("video_upscaling", "/v1/generate", json!({"model": "video-upscale", "video_url": mp4(960, 540, 12)})),
        (
            "lip_sync",
            "/v1/generate",
            json!({"model": "lipsync", "video_url": mp4(1920, 1080, 1), "audio_url": wav(60.0)}),
        ),
        (
            "text_to_speech",
            "/v1/generate",
            json!({"model": "tts", "prompt": "The kitchen opens to the garden. ".repeat(300)}),
        ),
        ("music", "/v1/generate", json!({"model": "omicron2", "prompt": "calm piano", "params": {"duration": 60}})),
    ];
    let mut submitted = Vec::new();
    for (work, path, body) in &jobs {
        submitted.push((*work, client.submit(&deployment, path, body).await));
    }
    // The recipes take the edited 40-megapixel photo by its URL of ours: ten of them as data URIs
    // would not fit a request body.
    let edited = client.wait(&deployment, &submitted[1].1, Duration::from_secs(300)).await;
    let photo = edited["output"][0]["url"].as_str().unwrap_or_else(|| panic!("{edited}")).to_string();
    let recipes: Vec<(&str, &str, Value)> = vec![
        ("listing-enhance", "/v1/recipes/listing-enhance", json!({"image_url": photo})),
        (
            "listing-enhance print",
            "/v1/recipes/listing-enhance",
            json!({"image_url": photo,
            "params": {"preset": "print", "straighten": true}}),
        ),
        (
            "lot-trace",
            "/v1/recipes/lot-trace",
            json!({"image_url": photo,
            "points": [[100, 100], [6000, 150], [6100, 6000], [200, 6100]], "params": {"meters_per_pixel": 0.05}}),
        ),
        ("reel", "/v1/recipes/reel", json!({"photos": [photo, photo, photo], "details": details})),
        ("listing-kit", "/v1/recipes/listing-kit", json!({"photos": vec![photo.clone(); 10], "details": details})),
    ];
    for (work, path, body) in &recipes {
        let (status, answer) = client.post(&deployment, path, body).await;
        // Synchronous recipes answer at once (200) or hand over the task to poll (202).
        assert!(status == 200 || status == 202, "{work}: {status} {answer}");
        let id = ["id", "task_id", "reel_id"]
            .iter()
            .find_map(|k| answer[*k].as_str())
            .unwrap_or_else(|| panic!("{work}: {answer}"));
        submitted.push((*work, id.to_string()));
    }
    let mut table = Vec::new();
    for (work, id) in &submitted {
        let task = client.wait(&deployment, id, Duration::from_secs(900)).await;
        assert_eq!(task["status"], "succeeded", "{work}: {task}");
        // The log line is written as the job ends; give the file a moment.
        let mut peak = None;
        for _ in 0..50 {
            peak = peak_rss_kib(&deployment.log(), id);
            if peak.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let peak = peak.unwrap_or_else(|| panic!("{work}: no job process logged for {id}"));
        table.push((*work, peak));
    }
    println!("peak resident memory of each family's worst accepted input (limit {MEMORY_LIMIT_MB} MiB):");
    for (work, peak) in &table {
        println!("  {work:<20} {:>6.1} MiB", *peak as f64 / 1024.0);
    }
    for (work, peak) in &table {
        assert!(*peak < MEMORY_LIMIT_MB * 1024, "{work}: {peak} KiB");
    }
    assert!(terminate(&mut server).success());
}

/// The attacks of small, cheap requests: each is refused at submit or fails cleanly, nothing is
/// billed, nothing is held, and the server keeps answering.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_hostile_inputs_fail_cleanly_unbilled_and_the_server_keeps_answering() {
    let deployment = Deployment::new();
    let (mut server, client) = start(&deployment).await;
    // A WAV whose header claims 2 GB of samples, with none behind it.
    let mut lying_wav = b"RIFF\xff\xff\xff\x7fWAVEfmt ".to_vec();
    lying_wav.extend_from_slice(&[16, 0, 0, 0, 1, 0, 1, 0, 0x80, 0x3e, 0, 0, 0, 0x7d, 0, 0, 2, 0, 16, 0]);
    lying_wav.extend_from_slice(b"data\x00\x00\x00\x80");
    assert_eq!(lying_wav.len(), 44);
    // A flat 8192x8192 PNG: small on the wire, 67 megapixels decoded.
    let flat = png(&RgbImage::from_pixel(8192, 8192, Rgb([200, 200, 200])));
    let attacks = [
        json!({"model": "lipsync", "video_url": mp4(1920, 1080, 1), "audio_url": data_uri("audio/wav", &lying_wav)}),
        json!({"model": "bg-remove", "image_url": flat}),
        json!({"model": "inpaint", "prompt": "x", "image_url": flat, "params": {"mask_url": flat}}),
        json!({"model": "upscale-clarity", "image_url": flat}),
    ];
    for attack in &attacks {
        let (status, answer) = client.post(&deployment, "/v1/generate", attack).await;
        if status == 400 {
            assert!(answer["error"].is_string(), "{answer}");
            continue;
        }
        assert_eq!(status, 202, "{answer}");
        let task = client.wait(&deployment, answer["id"].as_str().unwrap(), Duration::from_secs(120)).await;
        assert_eq!(task["status"], "failed", "{task}");
        assert!(task["error"].as_str().is_some_and(|e| !e.is_empty()), "{task}");
        let (status, _) = client.get(&deployment, "/healthz").await;
        assert_eq!(status, 200);
    }
    assert_eq!(client.spent_and_held(&deployment).await, ("0.0000".to_string(), "0.0000".to_string()));
    assert!(terminate(&mut server).success());
    let (ok, out) = deployment.admin(&["verify-ledger"]);
    assert!(ok, "{out}");
}

/// A job over its memory limit is stopped with a clear error, is not run again, and is not billed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_over_its_memory_limit_is_stopped_unbilled_and_not_retried() {
    let deployment =
        Deployment::with_env(&[("JOB_MEMORY_LIMIT_MB", "160"), ("RUST_LOG", "warn,service::job_process=info")]);
    let (mut server, client) = start(&deployment).await;
    let id = client
        .submit(
            &deployment,
            "/v1/generate",
            &json!({"model": "beta-edit", "prompt": "warmer",
            "image_url": png(&scene(4000, 3000))}),
        )
        .await;
    let task = client.wait(&deployment, &id, Duration::from_secs(120)).await;
    assert_eq!(task["status"], "failed", "{task}");
    assert_eq!(task["error"], "the job needed more than its memory limit of 160 MB and was stopped", "{task}");
    assert_eq!(deployment.log().matches("job process ended").count(), 1, "run once, not retried");
    assert_eq!(client.spent_and_held(&deployment).await, ("0.0000".to_string(), "0.0000".to_string()));
    // A small job still runs under the same limit.
    let small = client
        .submit(
            &deployment,
            "/v1/generate",
            &json!({"model": "beta-image", "prompt": "porch",
            "params": {"width": 256, "height": 256}}),
        )
        .await;
    assert_eq!(client.wait(&deployment, &small, Duration::from_secs(60)).await["status"], "succeeded");
    assert!(terminate(&mut server).success());
}

/// A job past its family's deadline is killed and failed, its hold released; the next job runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_past_its_deadline_is_killed_and_its_hold_released() {
    let deployment = Deployment::with_env(&[("JOB_DEADLINES", "text_to_video=1")]);
    let (mut server, client) = start(&deployment).await;
    let long = json!({"model": "lambda-t2v", "prompt": "tour", "params": {"duration": 10, "resolution": "720p"}});
    let id = client.submit(&deployment, "/v1/generate", &long).await;
    let started = Instant::now();
    let task = client.wait(&deployment, &id, Duration::from_secs(60)).await;
    assert_eq!(task["status"], "failed", "{task}");
    assert_eq!(task["error"], "the job ran past its deadline (text_to_video: 1 s) and was stopped", "{task}");
    assert!(started.elapsed() < Duration::from_secs(30), "stopped at the deadline, not at the job's end");
    assert_eq!(client.spent_and_held(&deployment).await, ("0.0000".to_string(), "0.0000".to_string()));
    let (status, _) = client.get(&deployment, "/healthz").await;
    assert_eq!(status, 200);
    let image = json!({"model": "beta-image", "prompt": "porch", "params": {"width": 256, "height": 256}});
    let next = client.submit(&deployment, "/v1/generate", &image).await;
    assert_eq!(client.wait(&deployment, &next, Duration::from_secs(60)).await["status"], "succeeded");
    assert!(terminate(&mut server).success());
}

/// The pids of the server's job processes (its children started with `run-job`).
fn job_processes(server: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // The parent pid is the fourth field, after the parenthesised command name.
            let parent = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse().ok());
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            parent == Some(server) && cmdline.split(|&b| b == 0).any(|arg| arg == b"run-job")
        })
        .collect()
}

/// A job whose process crashes is run again; after the second crash it is failed as a poison
/// job, unbilled, and the server keeps serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_that_crashes_its_process_twice_is_a_poison_job() {
    let deployment = Deployment::with_env(&[("RUST_LOG", "warn,service::job_process=info")]);
    let (mut server, client) = start(&deployment).await;
    let long = json!({"model": "lambda-t2v", "prompt": "tour", "params": {"duration": 10, "resolution": "720p"}});
    let id = client.submit(&deployment, "/v1/generate", &long).await;
    let mut crashed = Vec::new();
    let started = Instant::now();
    while crashed.len() < 2 {
        assert!(started.elapsed() < Duration::from_secs(60), "no job process to crash");
        for pid in job_processes(server.id()) {
            if !crashed.contains(&pid) {
                // The end a failed assertion in a native decoder would cause.
                let _ = std::process::Command::new("kill").args(["-ABRT", &pid.to_string()]).status();
                crashed.push(pid);
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let task = client.wait(&deployment, &id, Duration::from_secs(60)).await;
    assert_eq!(task["status"], "failed", "{task}");
    let error = task["error"].as_str().unwrap_or_default();
    assert!(error.starts_with("the job crashed its process 2 times (last: killed by signal 6 (SIGABRT))"), "{error}");
    assert!(error.contains("poison job"), "{error}");
    assert_eq!(client.spent_and_held(&deployment).await, ("0.0000".to_string(), "0.0000".to_string()));
    let image = json!({"model": "beta-image", "prompt": "porch", "params": {"width": 256, "height": 256}});
    let next = client.submit(&deployment, "/v1/generate", &image).await;
    assert_eq!(client.wait(&deployment, &next, Duration::from_secs(60)).await["status"], "succeeded");
    assert!(terminate(&mut server).success());
}
