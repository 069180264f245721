//! Image figures of `cargo xtask bench`: our upscale and reduction beside libvips' CLI (and
//! ImageMagick) doing the same operation on the same input, same run.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};

/// Runs the image comparisons; a missing tool is installed from Debian or its line skipped.
pub fn run() -> Result<()> {
    crate::run(crate::cargo().args([
        "build",
        "--release",
        "--package",
        "media",
        "--example",
        "image_bench",
        "--example",
        "video_bench",
    ]))?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let ours = root.join("target/release/examples/image_bench");
    crate::have_or_install("vips", "libvips-tools");
    if imagemagick().is_none() {
        crate::apt_install(&["imagemagick"]);
    }
    let (true, Some(convert)) = (crate::have("vips"), imagemagick()) else {
        println!(
            "\n== images ==\nskipped: vips and ImageMagick are needed (apt-get install libvips-tools imagemagick)"
        );
        return Ok(());
    };
    let dir = root.join("target/bench-images");
    std::fs::create_dir_all(&dir)?;
    let source = root.join("crates/media/tests/photos/tuning/pavilion.jpg");
    // A 3 MP and a 12 MP camera-sized JPEG made from a real photo (enlarged, then given back
    // its grain so the encoders see photo-like detail).
    let small = dir.join("in-3mp.jpg");
    let large = dir.join("in-12mp.jpg");
    for (path, size) in [(&small, "2048x1536!"), (&large, "4000x3000!")] {
        if !path.exists() {
            tool(
                &convert,
                &[
                    source.to_str().context("path")?,
                    "-resize",
                    size,
                    "-attenuate",
                    "0.4",
                    "+noise",
                    "Gaussian",
                    "-quality",
                    "90",
                    path.to_str().context("path")?,
                ],
            )?;
        }
    }
    println!("\n== images (best of 3 each; ratio = their time / ours, above 1 is faster) ==");
    let out = |name: &str| dir.join(name).to_string_lossy().into_owned();
    let (ours_up, ours_up_bytes) = ours_run(&ours, &["upscale", &small.to_string_lossy(), &out("ours-2x.png")])?;
    let (vips_up, vips_up_bytes) = best_of_3(
        "vips",
        &["resize", &small.to_string_lossy(), &out("vips-2x.png"), "2", "--kernel", "lanczos3"],
        &out("vips-2x.png"),
    )?;
    line("upscale 2x, 3 MP JPEG -> 12 MP PNG", ours_up, ours_up_bytes, "vips resize lanczos3", vips_up, vips_up_bytes);
    // The same job alone on its worker, which may use every core (vips always does).
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get).to_string();
    let (ours_up_all, _) =
        ours_run(&ours, &["upscale", &small.to_string_lossy(), &out("ours-2x-mt.png"), "0", &cores])?;
    line(&format!("  the same on {cores} threads"), ours_up_all, ours_up_bytes, "", vips_up, vips_up_bytes);
    {
        let (im, im_bytes) = best_of_3(
            &convert,
            &[&small.to_string_lossy(), "-filter", "Lanczos", "-resize", "200%", &out("magick-2x.png")],
            &out("magick-2x.png"),
        )?;
        line("", ours_up, ours_up_bytes, "ImageMagick -resize 200%", im, im_bytes);
    }
    let (ours_down, ours_down_bytes) =
        ours_run(&ours, &["reduce", &large.to_string_lossy(), &out("ours-2048.jpg"), "2048"])?;
    let (vips_down, vips_down_bytes) = best_of_3(
        "vips",
        &[
            "resize",
            &large.to_string_lossy(),
            &format!("{}[Q=90]", out("vips-2048.jpg")),
            "0.512",
            "--kernel",
            "lanczos3",
        ],
        &out("vips-2048.jpg"),
    )?;
    line(
        "reduce 12 MP JPEG -> 2048 px JPEG q90",
        ours_down,
        ours_down_bytes,
        "vips resize lanczos3",
        vips_down,
        vips_down_bytes,
    );
    let (ours_png, ours_png_bytes) =
        ours_run(&ours, &["reduce", &large.to_string_lossy(), &out("ours-2048.png"), "2048"])?;
    let (vips_png, vips_png_bytes) = best_of_3(
        "vips",
        &["resize", &large.to_string_lossy(), &out("vips-2048.png"), "0.512", "--kernel", "lanczos3"],
        &out("vips-2048.png"),
    )?;
    line(
        "reduce 12 MP JPEG -> 2048 px PNG",
        ours_png,
        ours_png_bytes,
        "vips resize lanczos3",
        vips_png,
        vips_png_bytes,
    );
    video(&root, &small, &dir)?;
    if !crate::have_ffmpeg() {
        return Ok(());
    }
    crate::video_engines_bench::run(&root, &dir)
}

/// The `eta-lite-i2v` pan and zoom (5 s, 1280x720, 24 fps, from the 3 MP still): our job on one
/// thread (its worker busy with other jobs) and on every core (its worker otherwise idle), beside
/// ffmpeg's zoompan with libx264 `veryfast` making the same motion; then x264 `veryfast` coding
/// our drawn frames at a ladder of CRFs, so that bytes compare at equal SSIM against those frames.
fn video(root: &Path, still: &Path, dir: &Path) -> Result<()> {
    if !crate::have_ffmpeg() {
        println!("pan and zoom: skipped (apt-get install ffmpeg)");
        return Ok(());
    }
    let bench = root.join("target/release/examples/video_bench");
    let path = |name: &str| dir.join(name).to_string_lossy().into_owned();
    let (frames, ours_mp4) = (path("frames.rgb"), path("ours.mp4"));
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get).to_string();
    let ours = |output: &str, frames: &str, threads: &str| -> Result<[f64; 6]> {
        let mut best: Option<[f64; 6]> = None;
        for _ in 0..3 {
            let run = Command::new(&bench).args([&still.to_string_lossy(), output, frames, "", threads]).output()?;
            if !run.status.success() {
                bail!("video_bench: {}", String::from_utf8_lossy(&run.stderr));
            }
            let text = String::from_utf8_lossy(&run.stdout);
            let fields: Vec<f64> = text.split_whitespace().filter_map(|f| f.parse().ok()).collect();
            let run: [f64; 6] = fields.try_into().map_err(|_| anyhow::anyhow!("video_bench printed {text:?}"))?;
            if best.is_none_or(|b| run[4] < b[4]) {
                best = Some(run);
            }
        }
        best.context("no run")
    };
    let [decode, draw, encode, mux, single, bytes] = ours(&ours_mp4, &frames, "1")?;
    let [.., all_cores, _] = ours(&path("ours-mt.mp4"), "", &cores)?;
    println!(
        "  ours, pan and zoom on 1 thread: decode {decode:.0} ms, draw {draw:.0} ms, convert and encode {encode:.0} ms, mux {mux:.0} ms"
    );
    let x264 = path("x264-zoompan.mp4");
    let filter =
        "scale=2560:-2,zoompan=z='1+0.25*on/120':x='iw/2-(iw/zoom/2)':y='ih/2-(ih/zoom/2)':d=120:s=1280x720:fps=24";
    let still = still.to_string_lossy();
    let args = ["-v", "error", "-y", "-i", &still, "-vf", filter, "-frames:v", "120"];
    let args = [&args[..], &["-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", &x264]].concat();
    let (theirs, their_bytes) = best_of_3("ffmpeg", &args, &x264)?;
    line("pan and zoom 5 s 720p, 1 thread", single, bytes as u64, "ffmpeg zoompan x264 veryfast", theirs, their_bytes);
    line(&format!("pan and zoom 5 s 720p, {cores} threads"), all_cores, bytes as u64, "", theirs, their_bytes);

    // Same frames: SSIM of each file against the frames we drew, and x264's size at our SSIM.
    let our_ssim = ssim(&ours_mp4, &frames, "1280x720", "24")?;
    let mut ladder = Vec::new();
    for crf in [18, 21, 23, 26, 29, 32] {
        let output = path(&format!("x264-crf{crf}.mp4"));
        let crf = crf.to_string();
        let started = Instant::now();
        tool(
            "ffmpeg",
            &[
                "-v",
                "error",
                "-y",
                "-f",
                "rawvideo",
                "-pix_fmt",
                "rgb24",
                "-s",
                "1280x720",
                "-r",
                "24",
                "-i",
                &frames,
                "-vf",
                "scale=out_color_matrix=bt709:out_range=tv",
                "-c:v",
                "libx264",
                "-preset",
                "veryfast",
                "-crf",
                &crf,
                "-pix_fmt",
                "yuv420p",
                &output,
            ],
        )?;
        let elapsed = started.elapsed().as_secs_f64() * 1000.0;
        ladder.push((
            crf,
            ssim(&output, &frames, "1280x720", "24")?,
            std::fs::metadata(&output)?.len() as f64,
            elapsed,
        ));
    }
    for (crf, ssim, bytes, ms) in &ladder {
        println!("  x264 veryfast CRF {crf:>2} on our frames: SSIM {ssim:.4}, {:>5.0} KiB, {ms:.0} ms", bytes / 1024.0);
    }
    let at_our_ssim = bytes_at_ssim(&ladder, our_ssim);
    println!(
        "{:<38} ours SSIM {our_ssim:.4} {:>6.0} KiB | x264 veryfast at that SSIM {} | {}",
        "pan and zoom, same frames",
        bytes / 1024.0,
        at_our_ssim.map_or("out of its CRF range".into(), |b| format!("{:.0} KiB", b / 1024.0)),
        at_our_ssim.map_or("-".into(), |b| format!("{:.2}x its bytes", bytes / b)),
    );
    Ok(())
}

/// SSIM (all planes, as ffmpeg's `ssim` filter weighs them) of `video` against raw RGB frames
/// converted to 4:2:0 with the BT.709 matrix, the form both encoders start from.
pub(crate) fn ssim(video: &str, frames: &str, size: &str, rate: &str) -> Result<f64> {
    let output = Command::new("ffmpeg")
        .args(["-i", video, "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", size, "-r", rate, "-i", frames])
        .args(["-lavfi", "[1:v]scale=out_color_matrix=bt709:out_range=tv,format=yuv420p[ref];[0:v][ref]ssim"])
        .args(["-f", "null", "-"])
        .output()?;
    let log = String::from_utf8_lossy(&output.stderr);
    let all = log.rsplit("All:").next().and_then(|rest| rest.split_whitespace().next());
    all.and_then(|v| v.parse().ok()).with_context(|| format!("no SSIM in ffmpeg's output for {video}"))
}

/// x264's bytes at `target` SSIM, interpolated linearly between the two rungs of the ladder
/// around it; `None` when the target lies outside the ladder.
pub(crate) fn bytes_at_ssim(ladder: &[(String, f64, f64, f64)], target: f64) -> Option<f64> {
    ladder.windows(2).find_map(|pair| {
        let ((_, hi_ssim, hi_bytes, _), (_, lo_ssim, lo_bytes, _)) = (&pair[0], &pair[1]);
        (target <= *hi_ssim && target >= *lo_ssim).then(|| {
            let t = if hi_ssim > lo_ssim { (target - lo_ssim) / (hi_ssim - lo_ssim) } else { 0.0 };
            lo_bytes + t * (hi_bytes - lo_bytes)
        })
    })
}

pub(crate) fn line(what: &str, ours_ms: f64, ours_bytes: u64, anchor: &str, anchor_ms: f64, anchor_bytes: u64) {
    println!(
        "{what:<38} ours {ours_ms:>7.0} ms {:>6} KiB | {anchor:<26} {anchor_ms:>7.0} ms {:>6} KiB | {:.2}x",
        ours_bytes / 1024,
        anchor_bytes / 1024,
        anchor_ms / ours_ms
    );
}

/// Our example's best total time and output size, with its stage breakdown printed.
fn ours_run(binary: &PathBuf, args: &[&str]) -> Result<(f64, u64)> {
    let output = Command::new(binary).args(args).output().context("running image_bench")?;
    if !output.status.success() {
        bail!("image_bench {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let fields: Vec<f64> = text.split_whitespace().filter_map(|f| f.parse().ok()).collect();
    let [decode, op, encode, total, bytes] = fields[..] else { bail!("image_bench printed {text:?}") };
    let on = args.get(4).map_or(String::new(), |threads| format!(" on {threads} threads"));
    println!("  ours, {}{on}: decode {decode:.0} ms, {} {op:.0} ms, encode {encode:.0} ms", args[0], args[0]);
    Ok((total, bytes as u64))
}

/// The best wall time of three runs of a command, and the size of the file it wrote.
pub(crate) fn best_of_3(program: &str, args: &[&str], output: &str) -> Result<(f64, u64)> {
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let start = Instant::now();
        tool(program, args)?;
        best = best.min(start.elapsed().as_secs_f64() * 1000.0);
    }
    Ok((best, std::fs::metadata(output)?.len()))
}

pub(crate) fn tool(program: &str, args: &[&str]) -> Result<()> {
    let status = Command::new(program).args(args).status().with_context(|| format!("running {program}"))?;
    if !status.success() {
        bail!("{program} {args:?} failed");
    }
    Ok(())
}

/// ImageMagick's `convert`: the first in the PATH that is ImageMagick itself, not a stand-in of
/// the same name, else Debian's.
fn imagemagick() -> Option<String> {
    let path = std::env::var("PATH").unwrap_or_default();
    let candidates = path.split(':').map(|dir| format!("{dir}/convert")).chain(["/usr/bin/convert".to_string()]);
    candidates.into_iter().find(|program| {
        Command::new(program)
            .arg("-version")
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("ImageMagick"))
    })
}
