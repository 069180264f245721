//! The image operations `cargo xtask bench` times beside libvips: one picture through decode,
//! the operation and encode, each stage timed, best of three runs.
//!
//! `image_bench upscale IN OUT.png` (2x, Lanczos3 and the unsharp mask, as `upscale-clarity`);
//! `image_bench reduce IN OUT.jpg|OUT.png LONG_EDGE` (Lanczos3 to the long edge, then JPEG
//! quality 90 as the MLS export of `listing-enhance`, or PNG). Prints `decode_ms op_ms encode_ms total_ms bytes`.
//! A fifth argument is the threads the job may use (one unless given; every core when its
//! worker runs no other job).

use std::time::Instant;

use image::DynamicImage;
use media::codecs::{decode_image, encode_jpeg, encode_png};
use media::resample::{resize_rgb, upscale, Filter};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (op, input, output) = match args.as_slice() {
        [op, input, output, ..] => (op.as_str(), input, output),
        _ => fail("usage: image_bench upscale|reduce IN OUT [LONG_EDGE] [THREADS]"),
    };
    let bytes = std::fs::read(input).unwrap_or_else(|e| fail(&format!("{input}: {e}")));
    let long_edge: u32 = args.get(3).and_then(|v| v.parse().ok()).unwrap_or(2048);
    if let Some(threads) = args.get(4) {
        media::set_job_threads(threads.parse().unwrap_or_else(|_| fail("THREADS must be a number")));
    }
    let mut best: Option<[f64; 4]> = None;
    let mut encoded = Vec::new();
    for _ in 0..3 {
        let start = Instant::now();
        let picture = decode_image(&bytes).unwrap_or_else(|e| fail(&e.to_string()));
        let decoded = start.elapsed().as_secs_f64();
        let result = match op {
            "upscale" => upscale(&picture, 2),
            "reduce" => {
                let rgb = picture.into_rgb8();
                let scale = f64::from(long_edge) / f64::from(rgb.width().max(rgb.height()));
                let (w, h) =
                    ((f64::from(rgb.width()) * scale).round() as u32, (f64::from(rgb.height()) * scale).round() as u32);
                DynamicImage::ImageRgb8(resize_rgb(&rgb, w, h, Filter::Lanczos3))
            }
            other => fail(&format!("unknown operation {other}")),
        };
        let operated = start.elapsed().as_secs_f64();
        encoded = if output.ends_with(".png") { encode_png(&result) } else { encode_jpeg(&result.to_rgb8(), 90) }
            .unwrap_or_else(|e| fail(&e.to_string()));
        let total = start.elapsed().as_secs_f64();
        let run = [decoded, operated - decoded, total - operated, total].map(|s| s * 1000.0);
        if best.is_none_or(|b| run[3] < b[3]) {
            best = Some(run);
        }
    }
    std::fs::write(output, &encoded).unwrap_or_else(|e| fail(&format!("{output}: {e}")));
    if let Some([d, o, e, t]) = best {
        println!("{d:.1} {o:.1} {e:.1} {t:.1} {}", encoded.len());
    }
}

fn fail(message: &str) -> ! {
    eprintln!("image_bench: {message}");
    std::process::exit(2)
}
