//! The video engines `cargo xtask bench` times beside ffmpeg, one per family of local engine,
//! each run through [`engines::Engines::run`] as a job process runs it (inputs as `data:` URIs,
//! the output MP4 in memory):
//!
//! - `text_to_video`: `lambda-fast`, 5 s at 720p;
//! - `video_to_video`: `nu-aleph` editing a 5 s 720p clip;
//! - `video_upscaling`: `video-upscale`, a 5 s 640x360 clip to 1280x720;
//! - `lip_sync`: `lipsync`, a 5 s 720p clip driven by a 5 s recording.
//!
//! `video_engines_bench OUT_DIR CLIP720.mp4 CLIP360.mp4 SPEECH.wav THREADS` prints one line per
//! engine, `family milliseconds bytes` (the best of three runs), and writes each output to
//! `OUT_DIR/FAMILY.mp4`. `THREADS` is what the job may use (1 when its worker runs other jobs,
//! every core when it does not).

use base64::Engine as _;
use serde_json::{json, Value};
use std::time::Instant;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [out_dir, clip720, clip360, speech, threads] = args.as_slice() else {
        fail("usage: video_engines_bench OUT_DIR CLIP720.mp4 CLIP360.mp4 SPEECH.wav THREADS")
    };
    media::set_job_threads(threads.parse().unwrap_or_else(|_| fail("THREADS must be a number")));
    let uri = |path: &str, kind: &str| {
        let bytes = std::fs::read(path).unwrap_or_else(|e| fail(&format!("{path}: {e}")));
        format!("data:{kind};base64,{}", base64::engine::general_purpose::STANDARD.encode(bytes))
    };
    let (clip720, clip360, speech) = (uri(clip720, "video/mp4"), uri(clip360, "video/mp4"), uri(speech, "audio/wav"));
    let cases: [(&str, Value); 4] = [
        (
            "text_to_video",
            json!({"model": "lambda-fast", "prompt": "a sunlit kitchen with a marble island", "params": {"duration": 5, "resolution": "720p"}}),
        ),
        ("video_to_video", json!({"model": "nu-aleph", "prompt": "make it golden hour", "video_url": clip720})),
        ("video_upscaling", json!({"model": "video-upscale", "video_url": clip360})),
        ("lip_sync", json!({"model": "lipsync", "video_url": clip720, "audio_url": speech})),
    ];
    let fetch = engines::InputFetcher::new(engines::FetchPolicy::default()).unwrap_or_else(|e| fail(&e.to_string()));
    let engines = engines::Engines::new(engines::Catalog::builtin(), fetch);
    for (family, request) in cases {
        let request: domain::GenerateRequest =
            serde_json::from_value(request).unwrap_or_else(|e| fail(&format!("{family}: {e}")));
        let spec = engines.catalog().get(&request.model).unwrap_or_else(|| fail(&request.model));
        let job = spec.validate(&request).unwrap_or_else(|e| fail(&format!("{family}: {e}")));
        let mut best = f64::INFINITY;
        let mut video = Vec::new();
        for _ in 0..3 {
            let start = Instant::now();
            let output = engines.run(&job).await.unwrap_or_else(|e| fail(&format!("{family}: {e}")));
            best = best.min(start.elapsed().as_secs_f64() * 1000.0);
            video = output.files.into_iter().next().map(|f| f.bytes).unwrap_or_default();
        }
        let path = format!("{out_dir}/{family}.mp4");
        std::fs::write(&path, &video).unwrap_or_else(|e| fail(&format!("{path}: {e}")));
        println!("{family} {best:.1} {}", video.len());
    }
}

fn fail(message: &str) -> ! {
    eprintln!("video_engines_bench: {message}");
    std::process::exit(2)
}
