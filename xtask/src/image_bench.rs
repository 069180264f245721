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
    if !have("vips") {
        crate::apt_install(&["libvips-tools"]);
    }
    if !have("convert") {
        crate::apt_install(&["imagemagick"]);
    }
    if !have("vips") || !have("convert") {
        println!(
            "\n== images ==\nskipped: vips and ImageMagick are needed (apt-get install libvips-tools imagemagick)"
        );
        return Ok(());
    }
    let dir = root.join("target/bench-images");
    std::fs::create_dir_all(&dir)?;
    let source = root.join("crates/media/tests/photos/heldout/pavilion.jpg");
    // A 3 MP and a 12 MP camera-sized JPEG made from a real photo (enlarged, then given back
    // its grain so the encoders see photo-like detail).
    let small = dir.join("in-3mp.jpg");
    let large = dir.join("in-12mp.jpg");
    for (path, size) in [(&small, "2048x1536!"), (&large, "4000x3000!")] {
        if !path.exists() {
            tool(
                "convert",
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
    {
        let (im, im_bytes) = best_of_3(
            "convert",
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
    video(&root, &small, &dir)
}

/// The `eta-lite-i2v` pan and zoom (5 s, 1280x720, 24 fps, from the 3 MP still) by our pipeline
/// and by ffmpeg's zoompan with libx264 `veryfast`, as a user would make it.
fn video(root: &Path, still: &Path, dir: &Path) -> Result<()> {
    let ours = root.join("target/release/examples/video_bench");
    let output = Command::new(&ours).arg(still).arg(dir.join("ours.mp4")).output().context("running video_bench")?;
    if !output.status.success() {
        bail!("video_bench: {}", String::from_utf8_lossy(&output.stderr));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let fields: Vec<f64> = text.split_whitespace().filter_map(|f| f.parse().ok()).collect();
    let [decode, draw, encode, mux, total, bytes] = fields[..] else { bail!("video_bench printed {text:?}") };
    println!("  ours, pan and zoom: decode {decode:.0} ms, draw {draw:.0} ms, convert and encode {encode:.0} ms, mux {mux:.0} ms");
    if !have("ffmpeg") {
        crate::apt_install(&["ffmpeg"]);
    }
    if !have("ffmpeg") {
        println!("pan and zoom: ffmpeg skipped (apt-get install ffmpeg)");
        return Ok(());
    }
    let x264 = dir.join("x264.mp4").to_string_lossy().into_owned();
    let still = still.to_string_lossy();
    let filter =
        "scale=2560:-2,zoompan=z='1+0.25*on/120':x='iw/2-(iw/zoom/2)':y='ih/2-(ih/zoom/2)':d=120:s=1280x720:fps=24";
    let args = [
        "-v",
        "error",
        "-y",
        "-i",
        &still,
        "-vf",
        filter,
        "-frames:v",
        "120",
        "-c:v",
        "libx264",
        "-preset",
        "veryfast",
        "-pix_fmt",
        "yuv420p",
        &x264,
    ];
    let (theirs, their_bytes) = best_of_3("ffmpeg", &args, &x264)?;
    line("pan and zoom 5 s 720p from 3 MP", total, bytes as u64, "ffmpeg zoompan x264 veryfast", theirs, their_bytes);
    Ok(())
}

fn line(what: &str, ours_ms: f64, ours_bytes: u64, anchor: &str, anchor_ms: f64, anchor_bytes: u64) {
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
    println!("  ours, {}: decode {decode:.0} ms, {} {op:.0} ms, encode {encode:.0} ms", args[0], args[0]);
    Ok((total, bytes as u64))
}

/// The best wall time of three runs of a command, and the size of the file it wrote.
fn best_of_3(program: &str, args: &[&str], output: &str) -> Result<(f64, u64)> {
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let start = Instant::now();
        tool(program, args)?;
        best = best.min(start.elapsed().as_secs_f64() * 1000.0);
    }
    Ok((best, std::fs::metadata(output)?.len()))
}

fn tool(program: &str, args: &[&str]) -> Result<()> {
    let status = Command::new(program).args(args).status().with_context(|| format!("running {program}"))?;
    if !status.success() {
        bail!("{program} {args:?} failed");
    }
    Ok(())
}

fn have(program: &str) -> bool {
    Command::new("sh").args(["-c", &format!("command -v {program}")]).output().is_ok_and(|o| o.status.success())
}
