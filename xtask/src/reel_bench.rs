//! The reel figures of `cargo xtask bench`: a 15 s reel from three real photos with voice-over
//! and music, end to end through the service, with the peak memory of the worker and its job
//! processes; then the same reel's frames as the service draws them (the `recipes` crate's
//! `reel_frames` example), against which the delivered file's SSIM is measured, and which x264
//! `veryfast` codes at a ladder of CRFs: its time beside ours, and its bytes at our SSIM.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use base64::Engine as _;
use serde_json::json;

use crate::bench::{rss_kib, submit_and_wait, tree_rss_kib, Target};
use crate::image_bench::{bytes_at_ssim, ssim};

/// The reel's frame size and rate, as ffmpeg takes them for raw frames.
const SIZE: &str = "1080x1920";
const RATE: &str = "30";

pub async fn run(client: &reqwest::Client, target: &Target, worker: Option<u32>) -> Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let photo = |name: &str| -> Result<String> {
        let bytes = std::fs::read(root.join("crates/media/tests/photos").join(name))
            .with_context(|| format!("reading {name}"))?;
        Ok(format!("data:image/jpeg;base64,{}", base64::engine::general_purpose::STANDARD.encode(bytes)))
    };
    let body = json!({
        "photos": [photo("coffee.jpg")?, photo("rocket.jpg")?, photo("chelsea.jpg")?],
        "details": {"price": 525000, "beds": 3, "baths": 2, "square_feet": 1850, "address": "42 Harbor Lane",
                    "agent_name": "Dana Reyes", "phone": "(860) 555-0142"},
        "params": {"duration": 15, "voiceover": true, "music": true},
    });
    let baseline = worker.map_or(0, tree_rss_kib);
    let mut peak = baseline;
    let sample = || peak = peak.max(worker.map_or(0, tree_rss_kib));
    let (elapsed, reel) =
        submit_and_wait(client, target, "/v1/recipes/reel", body.clone(), Duration::from_millis(20), sample).await?;
    let ours_ms = elapsed.as_secs_f64() * 1000.0;
    println!(
        "{:<34} end to end {:>8.0} ms  (worker and job processes' RSS {} MiB before, peak {} MiB, sampled every 20 ms)",
        "reel 15 s 1080x1920, voice, music",
        ours_ms,
        baseline / 1024,
        peak / 1024
    );
    let url = reel["output"][0]["url"].as_str().context("reel video url")?;
    let mp4 = client.get(url).send().await?.bytes().await?;
    // Kept beside the image figures' files, to look at.
    let dir = root.join("target/bench-images");
    std::fs::create_dir_all(&dir)?;
    let path = |name: &str| dir.join(name).to_string_lossy().into_owned();
    let ours = path("reel.mp4");
    std::fs::write(&ours, &mp4)?;
    if !crate::have_ffmpeg() {
        println!("{:<34} skipped (apt-get install ffmpeg)", "reel, same frames");
    } else if let Err(e) = same_frames(&root, &body, &ours, mp4.len() as f64, ours_ms, &path) {
        println!("{:<34} skipped: {e}", "reel, same frames");
    }
    Ok(())
}

/// Draws the reel's frames again, measures our file against them and has x264 code them.
fn same_frames(
    root: &Path,
    body: &serde_json::Value,
    ours: &str,
    our_bytes: f64,
    ours_ms: f64,
    path: &dyn Fn(&str) -> String,
) -> Result<()> {
    crate::run(crate::cargo().args(["build", "--release", "--package", "recipes", "--example", "reel_frames"]))?;
    let request = path("reel-request.json");
    std::fs::write(&request, serde_json::to_vec(body)?)?;
    let frames = path("reel-frames.rgb");
    let status = Command::new(root.join("target/release/examples/reel_frames"))
        .arg(&request)
        .stdout(std::fs::File::create(&frames)?)
        .status()
        .context("running reel_frames")?;
    if !status.success() {
        bail!("reel_frames failed");
    }
    let outcome = ladder(ours, our_bytes, ours_ms, &frames, path);
    // 2.8 GB of raw pictures: not kept.
    let _ = std::fs::remove_file(&frames);
    outcome
}

fn ladder(ours: &str, our_bytes: f64, ours_ms: f64, frames: &str, path: &dyn Fn(&str) -> String) -> Result<()> {
    let our_ssim = ssim(ours, frames, SIZE, RATE)?;
    let mut rungs = Vec::new();
    for crf in ["18", "21", "23", "26", "29"] {
        let output = path(&format!("reel-x264-crf{crf}.mp4"));
        let (elapsed, peak_kib) = x264(frames, crf, &output)?;
        let rung =
            (crf.to_string(), ssim(&output, frames, SIZE, RATE)?, std::fs::metadata(&output)?.len() as f64, elapsed);
        println!(
            "  x264 veryfast CRF {crf} on the reel's frames: SSIM {:.4}, {:>5.0} KiB, {:.0} ms, peak {} MiB",
            rung.1,
            rung.2 / 1024.0,
            elapsed,
            peak_kib / 1024
        );
        rungs.push(rung);
    }
    let default = rungs.iter().find(|r| r.0 == "23").map_or(f64::NAN, |r| r.3);
    println!(
        "{:<38} ours {ours_ms:>7.0} ms end to end | x264 veryfast CRF 23 encode alone {default:>7.0} ms | {:.2}x",
        "reel 15 s, same frames",
        default / ours_ms
    );
    let at_our_ssim = bytes_at_ssim(&rungs, our_ssim);
    println!(
        "{:<38} ours SSIM {our_ssim:.4} {:>6.0} KiB | x264 veryfast at that SSIM {} | {}",
        "reel 15 s, same frames",
        our_bytes / 1024.0,
        at_our_ssim.map_or("out of its CRF range".into(), |b| format!("{:.0} KiB", b / 1024.0)),
        at_our_ssim.map_or("-".into(), |b| format!("{:.2}x its bytes", our_bytes / b)),
    );
    Ok(())
}

/// x264 `veryfast` at `crf` on the raw frames (BT.709, 4:2:0, fast start, as the service writes
/// them): wall time in ms and the encoder's peak memory in KiB.
fn x264(frames: &str, crf: &str, output: &str) -> Result<(f64, u64)> {
    let started = Instant::now();
    let mut encoder = Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", SIZE, "-r", RATE, "-i", frames])
        .args(["-vf", "scale=out_color_matrix=bt709:out_range=tv"])
        .args(["-c:v", "libx264", "-preset", "veryfast", "-crf", crf, "-pix_fmt", "yuv420p"])
        .args(["-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709", "-movflags", "+faststart"])
        .arg(output)
        .stdin(Stdio::null())
        .spawn()
        .context("starting ffmpeg")?;
    let mut peak = 0;
    while encoder.try_wait()?.is_none() {
        if let Some(hwm) = rss_kib(encoder.id(), "VmHWM") {
            peak = peak.max(hwm);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    if !encoder.wait()?.success() {
        bail!("ffmpeg failed on the reel's frames");
    }
    Ok((started.elapsed().as_secs_f64() * 1000.0, peak))
}
