//! The video job `cargo xtask bench` times beside ffmpeg: the `eta-lite-i2v` pan and zoom over a
//! still, 5 s of 1280x720 at 24 fps, each stage timed (decode the still, draw the frames, convert
//! and encode, mux).
//!
//! `video_bench IN.jpg OUT.mp4 [FRAMES.rgb] [QUALITY] [THREADS]` prints `decode_ms draw_ms encode_ms
//! mux_ms total_ms bytes`. With `FRAMES.rgb` the drawn frames are also written there as raw RGB
//! (the reference the bench measures SSIM against); with `QUALITY` the stream is coded at that
//! rate factor (x264) or quantiser (OpenH264) instead of the default; `THREADS` is what a job is allowed (1 when its worker runs
//! other jobs, every core when it does not). With more than one thread, compression overlaps
//! drawing and `encode_ms` is only the time drawing waited for it.

use std::io::Write;
use std::time::Instant;

use media::codecs::decode_image;
use media::h264::H264Settings;
use media::sandbox::pan_zoom_frames;
use media::video::VideoEncoder;

const FRAMES: u32 = 120;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (input, output) = match args.as_slice() {
        [input, output, ..] => (input, output),
        _ => fail("usage: video_bench IN.jpg OUT.mp4 [FRAMES.rgb] [QUALITY] [THREADS]"),
    };
    if let Some(threads) = args.get(4) {
        media::set_job_threads(threads.parse().unwrap_or_else(|_| fail("THREADS must be a number")));
    }
    let mut raw = args.get(2).filter(|p| !p.is_empty()).map(|path| {
        std::io::BufWriter::new(std::fs::File::create(path).unwrap_or_else(|e| fail(&format!("{path}: {e}"))))
    });
    let mut settings = H264Settings::default();
    if let Some(quality) = args.get(3).filter(|q| !q.is_empty()) {
        settings.quality = quality.parse().unwrap_or_else(|_| fail("QUALITY must be a number"));
    }
    let bytes = std::fs::read(input).unwrap_or_else(|e| fail(&format!("{input}: {e}")));
    let start = Instant::now();
    let still = decode_image(&bytes).unwrap_or_else(|e| fail(&e.to_string()));
    let decoded = start.elapsed();
    let mut encoder = VideoEncoder::with_settings(1280, 720, 24, settings).unwrap_or_else(|e| fail(&e.to_string()));
    let (mut draw, mut encode, mut dump) = (0.0, 0.0, 0.0);
    let mut frames = pan_zoom_frames(still, 1280, 720, FRAMES, 7);
    loop {
        let t = Instant::now();
        let Some(frame) = frames.next() else { break };
        draw += t.elapsed().as_secs_f64();
        let t = Instant::now();
        encoder.push(&frame).unwrap_or_else(|e| fail(&e.to_string()));
        encode += t.elapsed().as_secs_f64();
        if let Some(raw) = raw.as_mut() {
            let t = Instant::now();
            raw.write_all(frame.as_raw()).unwrap_or_else(|e| fail(&e.to_string()));
            dump += t.elapsed().as_secs_f64();
        }
    }
    let t = Instant::now();
    let mp4 = encoder.finish(None).unwrap_or_else(|e| fail(&e.to_string()));
    let mux = t.elapsed().as_secs_f64();
    let total = start.elapsed().as_secs_f64() - dump;
    std::fs::write(output, &mp4).unwrap_or_else(|e| fail(&format!("{output}: {e}")));
    let ms = |s: f64| s * 1000.0;
    println!(
        "{:.1} {:.1} {:.1} {:.1} {:.1} {}",
        ms(decoded.as_secs_f64()),
        ms(draw),
        ms(encode),
        ms(mux),
        ms(total),
        mp4.len()
    );
}

fn fail(message: &str) -> ! {
    eprintln!("video_bench: {message}");
    std::process::exit(2)
}
