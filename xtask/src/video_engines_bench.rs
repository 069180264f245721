//! Video engine figures of `cargo xtask bench`: one engine of each local video family run as a
//! job runs it (the `engines` crate's `video_engines_bench` example), on one thread and on every
//! core, beside what a user would run in ffmpeg with libx264 `veryfast` for the same output:
//!
//! - text to video: x264 coding the very frames we drew (decoded from our file beforehand, so
//!   ffmpeg is given the drawing for free);
//! - video to video: ffmpeg decoding the clip, grading it (`eq` and `vignette`) and coding it;
//! - video upscaling: ffmpeg decoding, scaling 2x (bicubic) and coding;
//! - lip sync: ffmpeg looping the clip to the recording, coding the pictures and the sound (AAC).

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::image_bench::{best_of_3, line, tool};

/// Runs the comparisons in `dir`, where the pan-and-zoom figures left `x264-zoompan.mp4` (5 s of
/// 1280x720 at 24 fps made by ffmpeg from a photo): the clip the video-in engines take.
pub fn run(root: &Path, dir: &Path) -> Result<()> {
    crate::run(crate::cargo().args([
        "build",
        "--release",
        "--package",
        "engines",
        "--example",
        "video_engines_bench",
    ]))?;
    let path = |name: &str| dir.join(name).to_string_lossy().into_owned();
    let (clip720, clip360, speech) = (path("x264-zoompan.mp4"), path("clip-360p.mp4"), path("speech.wav"));
    let quiet = ["-v", "error", "-y"];
    tool("ffmpeg", &[&quiet[..], &["-i", &clip720, "-vf", "scale=640:360", "-c:v", "libx264", &clip360]].concat())?;
    let tone = "sine=frequency=220:duration=5";
    tool("ffmpeg", &[&quiet[..], &["-f", "lavfi", "-i", tone, "-ar", "24000", "-ac", "1", &speech]].concat())?;

    let bench = root.join("target/release/examples/video_engines_bench");
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get).to_string();
    let ours = |threads: &str| -> Result<Vec<(String, f64, u64)>> {
        let out = dir.to_string_lossy();
        let run = Command::new(&bench).args([&out[..], &clip720, &clip360, &speech, threads]).output()?;
        if !run.status.success() {
            bail!("video_engines_bench: {}", String::from_utf8_lossy(&run.stderr));
        }
        String::from_utf8_lossy(&run.stdout)
            .lines()
            .map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
                [family, ms, bytes] => Ok((family.to_string(), ms.parse()?, bytes.parse()?)),
                _ => bail!("video_engines_bench printed {l:?}"),
            })
            .collect()
    };
    let single = ours("1")?;
    let all = ours(&cores)?;

    let x264 = ["-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p"];
    println!("\n== video engines (best of 3 each; ratio = ffmpeg's time / ours, above 1 is faster) ==");
    let frames = path("t2v-frames.rgb");
    for ((family, one_ms, bytes), (_, all_ms, _)) in single.iter().zip(&all) {
        let output = path(&format!("ffmpeg-{family}.mp4"));
        let (anchor, args): (&str, Vec<&str>) = match family.as_str() {
            "text_to_video" => {
                decode_raw(&path("text_to_video.mp4"), &frames)?;
                let input = ["-f", "rawvideo", "-pix_fmt", "rgb24", "-s", "1280x720", "-r", "24", "-i"];
                let convert = ["-vf", "scale=out_color_matrix=bt709:out_range=tv"];
                (
                    "x264 on our drawn frames",
                    [&quiet[..], &input, &[&frames[..]], &convert, &x264, &[&output[..]]].concat(),
                )
            }
            "video_to_video" => {
                let grade = ["-vf", "eq=contrast=1.1:saturation=1.2:gamma=1.1,vignette"];
                ("ffmpeg eq+vignette x264", [&quiet[..], &["-i", &clip720], &grade, &x264, &[&output[..]]].concat())
            }
            "video_upscaling" => {
                let scale = ["-vf", "scale=1280:720:flags=bicubic"];
                ("ffmpeg scale 2x x264", [&quiet[..], &["-i", &clip360], &scale, &x264, &[&output[..]]].concat())
            }
            "lip_sync" => {
                let inputs = ["-stream_loop", "-1", "-i", &clip720, "-i", &speech, "-map", "0:v", "-map", "1:a"];
                let audio = ["-c:a", "aac", "-shortest"];
                ("ffmpeg loop + x264 + aac", [&quiet[..], &inputs, &x264, &audio, &[&output[..]]].concat())
            }
            other => bail!("no anchor for {other}"),
        };
        let (theirs, their_bytes) = best_of_3("ffmpeg", &args, &output)?;
        line(&format!("{family}, 1 thread"), *one_ms, *bytes, anchor, theirs, their_bytes);
        line(&format!("{family}, {cores} threads"), *all_ms, *bytes, "", theirs, their_bytes);
    }
    Ok(())
}

/// Decodes `video` to raw RGB frames at `frames`.
fn decode_raw(video: &str, frames: &str) -> Result<()> {
    tool("ffmpeg", &["-v", "error", "-y", "-i", video, "-f", "rawvideo", "-pix_fmt", "rgb24", frames])
        .with_context(|| format!("decoding {video}"))
}
