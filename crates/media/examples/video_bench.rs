//! The video job `cargo xtask bench` times beside ffmpeg: the `eta-lite-i2v` pan and zoom over a
//! still, 5 s of 1280x720 at 24 fps, each stage timed (decode the still, draw the frames, convert
//! and encode, mux).
//!
//! `video_bench IN.jpg OUT.mp4` prints `decode_ms draw_ms encode_ms mux_ms total_ms bytes`.

use std::time::Instant;

use media::codecs::decode_image;
use media::sandbox::pan_zoom_frames;
use media::video::VideoEncoder;

const FRAMES: u32 = 120;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, output] = args.as_slice() else { fail("usage: video_bench IN.jpg OUT.mp4") };
    let bytes = std::fs::read(input).unwrap_or_else(|e| fail(&format!("{input}: {e}")));
    let start = Instant::now();
    let still = decode_image(&bytes).unwrap_or_else(|e| fail(&e.to_string()));
    let decoded = start.elapsed();
    let mut encoder = VideoEncoder::new(1280, 720, 24).unwrap_or_else(|e| fail(&e.to_string()));
    let (mut draw, mut encode) = (0.0, 0.0);
    let mut frames = pan_zoom_frames(still, 1280, 720, FRAMES, 7);
    loop {
        let t = Instant::now();
        let Some(frame) = frames.next() else { break };
        draw += t.elapsed().as_secs_f64();
        let t = Instant::now();
        encoder.push(&frame).unwrap_or_else(|e| fail(&e.to_string()));
        encode += t.elapsed().as_secs_f64();
    }
    let t = Instant::now();
    let mp4 = encoder.finish(None).unwrap_or_else(|e| fail(&e.to_string()));
    let mux = t.elapsed().as_secs_f64();
    let total = start.elapsed().as_secs_f64();
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
