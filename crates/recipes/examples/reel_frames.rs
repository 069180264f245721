//! The frames of a reel as the service draws them, before encoding: `reel_frames REQUEST.json`
//! reads a reel request (the body of `POST /v1/recipes/reel`, photos as `data:` URIs) and writes
//! every frame to standard output as raw RGB, 1080x1920 at 30 fps. `cargo xtask bench` measures
//! the reel it got from the service against them (SSIM).

use std::io::Write;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let path = std::env::args().nth(1).unwrap_or_else(|| fail("usage: reel_frames REQUEST.json"));
    let body = std::fs::read(&path).unwrap_or_else(|e| fail(&format!("{path}: {e}")));
    let request: domain::reel::ReelRequest = serde_json::from_slice(&body).unwrap_or_else(|e| fail(&e.to_string()));
    let job = recipes::reel::prepare(request).unwrap_or_else(|e| fail(&e.to_string()));
    let fetcher = engines::InputFetcher::new(engines::FetchPolicy::default()).unwrap_or_else(|e| fail(&e.to_string()));
    let mut photos = Vec::new();
    for (i, photo) in job.photos.iter().enumerate() {
        photos.push(fetcher.fetch(&format!("photos[{i}]"), &photo.url).await.unwrap_or_else(|e| fail(&e.to_string())));
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    recipes::reel::draw_frames(&job, photos, |frame| {
        out.write_all(frame.as_raw()).map_err(|e| recipes::RecipeError::Failed(format!("writing a frame: {e}")))
    })
    .unwrap_or_else(|e| fail(&e.to_string()));
    out.flush().unwrap_or_else(|e| fail(&e.to_string()));
}

fn fail(message: &str) -> ! {
    eprintln!("reel_frames: {message}");
    std::process::exit(2)
}
