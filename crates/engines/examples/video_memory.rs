//! Peak memory of the video-upscale engine, side by side with holding a clip in memory:
//! `cargo run -p engines --example video_memory -- old|new FRAMES`. Each mode runs in its own
//! process, so `VmHWM` (the peak resident set) is that mode's alone. `old` decodes every frame,
//! scales them all 2x and encodes the lot (what the engine did before it streamed); `new` runs
//! the engine, which decodes, scales and encodes one frame at a time.

use base64::Engine as _;
/// The process's peak resident set, as the kernel reports it.
fn hwm() -> String {
    std::fs::read_to_string("/proc/self/status").unwrap().lines().find(|l| l.starts_with("VmHWM")).unwrap().to_string()
}
#[tokio::main]
async fn main() {
    let mode = std::env::args().nth(1).unwrap();
    let frames: u32 = std::env::args().nth(2).unwrap().parse().unwrap();
    let mut enc = media::video::VideoEncoder::new(640, 360, 24).unwrap();
    for i in 0..frames {
        let f = image::RgbImage::from_fn(640, 360, |x, y| {
            image::Rgb([((x + i) % 256) as u8, ((y * 2 + i) % 256) as u8, 90])
        });
        enc.push(&f).unwrap();
    }
    let mp4 = enc.finish(None).unwrap();
    println!("clip: {} frames, {} bytes; after encoding {}", frames, mp4.len(), hwm());
    if mode == "old" {
        let (decoded, _) = media::video::decode_mp4(&mp4).unwrap();
        let up = media::resample::resize_frames(&decoded, 1280, 720);
        let out = media::video::encode_mp4(&up, 24).unwrap();
        println!("old (all frames in memory): out {} bytes; peak {}", out.len(), hwm());
    } else {
        let engines = engines::Engines::new(
            engines::Catalog::builtin(),
            engines::InputFetcher::new(engines::FetchPolicy::default()).unwrap(),
        );
        let uri = format!("data:video/mp4;base64,{}", base64::engine::general_purpose::STANDARD.encode(&mp4));
        let request: domain::GenerateRequest =
            serde_json::from_value(serde_json::json!({"model": "video-upscale", "video_url": uri})).unwrap();
        let job = engines.catalog().get("video-upscale").unwrap().validate(&request).unwrap();
        let out = engines.run(&job).await.unwrap();
        println!("new (streaming engine): out {} bytes; peak {}", out.files[0].bytes.len(), hwm());
    }
}
