//! Media operations with no knowledge of engines, providers or the catalog: still-image codecs,
//! resampling, segmentation, inpainting, photo enhancement, text rendering in the shipped
//! typeface, H.264/MP4 video with AAC audio, WAV audio, MP3 recordings from providers, speech
//! through eSpeak NG, and deterministic sandbox generators.
//!
//! Everything runs in-process without ffmpeg; the one model, the salient-object network that
//! background removal starts from, is embedded in the binary and run by `tract`. The engines and
//! the recipes build on these operations; errors come back as [`MediaError`], split into client
//! faults (decode, invalid input) and server faults (encode, inference).

pub mod aac;
pub mod audio;
pub mod codecs;
pub mod colour;
pub mod enhance;
mod error;
pub mod filters;
pub mod h264;
pub mod inpaint;
mod mp4_boxes;
pub mod recording;
pub mod resample;
pub mod sandbox;
mod seed;
pub mod segmentation;
pub mod speech;
pub mod text;
mod threads;
pub mod video;
mod yuv;

pub use error::MediaError;
pub use threads::{job_threads, set_job_threads};

#[cfg(test)]
mod test_images {
    use image::{Rgb, RgbImage};

    /// A deterministic gradient with distinct values in every channel.
    pub(crate) fn test_pattern(w: u32, h: u32) -> RgbImage {
        RgbImage::from_fn(w, h, |x, y| Rgb([(x * 7) as u8, (y * 5) as u8, ((x + y) * 3) as u8]))
    }
}
