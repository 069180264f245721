//! The built-in local engines: one implementation per family, producing real media files with no
//! network and no model weights.
//!
//! Families with a classical algorithm (background removal, upscaling, inpainting, video
//! upscaling, photo enhancement) do the real work, and speech is real when the eSpeak NG
//! synthesizer is installed. Generative families (image generation and editing, video generation,
//! music, lip sync) produce deterministic sandbox media derived from the prompt, seed and inputs,
//! and say so through [`EngineOutput::sandbox`].

use crate::{EngineError, EngineOutput, Inputs, OutputFile};
use domain::validation::Produced;
use domain::{EngineSpec, Family, ValidatedJob};
use image::{DynamicImage, RgbImage};
use media::{audio, codecs, inpaint, resample, sandbox, segmentation, speech, video, MediaError};

/// Frame rate of every locally produced video.
pub const VIDEO_FPS: u32 = 24;
/// Sample rate of every locally produced recording.
pub const AUDIO_SAMPLE_RATE: u32 = 22_050;
/// Largest side of an upscaled image.
const MAX_UPSCALED_SIDE: u32 = 8192;
/// Most pixels of an upscaled image (4096x4096): the resampler's working buffers are several
/// times the output, and a job must fit its memory limit.
const MAX_UPSCALED_PIXELS: u64 = 4096 * 4096;
/// Largest picture inpainting takes: it keeps several values per pixel while it fills.
const MAX_INPAINT_PIXELS: u64 = 12_000_000;
/// Largest frame side of an upscaled video.
const MAX_UPSCALED_VIDEO_SIDE: u32 = 1920;

impl From<MediaError> for EngineError {
    fn from(e: MediaError) -> Self {
        match e {
            MediaError::Decode(m) | MediaError::InvalidInput(m) => EngineError::InvalidInput(m),
            MediaError::Encode(m) | MediaError::Inference(m) => EngineError::Failed(m),
        }
    }
}

/// Runs `job` on the local implementation of `spec`'s family. CPU-bound: call it on a blocking
/// thread.
pub fn run(spec: &EngineSpec, job: &ValidatedJob, inputs: &Inputs) -> Result<EngineOutput, EngineError> {
    let seed = job.int_param("seed").unwrap_or(0).max(0) as u64;
    let prompt = job.prompt.as_deref().unwrap_or("");
    match spec.family {
        Family::ImageGeneration => {
            let (width, height) = (param_u32(job, "width", 1024), param_u32(job, "height", 1024));
            let count = param_u32(job, "num_images", 1);
            let images = (0..count).map(|i| sandbox::sandbox_image(prompt, seed + u64::from(i), width, height));
            images_output(job, images.collect(), true)
        }
        Family::ImageEditing if job.params.contains_key("mask_url") => {
            let image = decode_input_image(inputs.image.as_deref(), "image_url")?;
            let pixels = u64::from(image.width()) * u64::from(image.height());
            if pixels > MAX_INPAINT_PIXELS {
                return Err(EngineError::InvalidInput(format!(
                    "image_url: inpainting takes pictures of up to {} megapixels; this one is {}x{}",
                    MAX_INPAINT_PIXELS / 1_000_000,
                    image.width(),
                    image.height()
                )));
            }
            let mask = decode_input_image(inputs.mask.as_deref(), "params.mask_url")?.to_luma8();
            images_output(job, vec![inpaint::inpaint(image, &mask)?], false)
        }
        Family::ImageEditing => {
            let image = decode_input_image(inputs.image.as_deref(), "image_url")?;
            let count = param_u32(job, "num_images", 1);
            let pixels = u64::from(count) * u64::from(image.width()) * u64::from(image.height());
            if pixels > codecs::MAX_IMAGE_PIXELS {
                return Err(EngineError::InvalidInput(format!(
                    "params.num_images: {count} edits of a {}x{} picture would make {:.1} megapixels; a job makes at most {}",
                    image.width(),
                    image.height(),
                    pixels as f64 / 1e6,
                    codecs::MAX_IMAGE_PIXELS / 1_000_000
                )));
            }
            let edits = (0..count).map(|i| sandbox::sandbox_edit(&image, prompt, seed + u64::from(i)));
            images_output(job, edits.collect(), true)
        }
        Family::BackgroundRemoval => {
            let image = decode_input_image(inputs.image.as_deref(), "image_url")?;
            let cutout = segmentation::remove_background(image)?;
            check_cutout(segmentation::kept_share(&cutout))?;
            let cutout = DynamicImage::ImageRgba8(cutout);
            let (w, h) = (cutout.width(), cutout.height());
            let file = OutputFile::image(codecs::encode_png(&cutout)?, "png", w, h);
            Ok(EngineOutput { files: vec![file], produced: one_image(w, h), sandbox: false })
        }
        Family::ImageUpscaling => {
            let image = decode_input_image(inputs.image.as_deref(), "image_url")?;
            let factor = param_u32(job, "scale", 2);
            if image.width().max(image.height()) * factor > MAX_UPSCALED_SIDE {
                return Err(EngineError::InvalidInput(format!(
                    "image_url: a {}x{} image scaled {factor}x would pass {MAX_UPSCALED_SIDE} pixels a side",
                    image.width(),
                    image.height()
                )));
            }
            let out_pixels = u64::from(image.width() * factor) * u64::from(image.height() * factor);
            if out_pixels > MAX_UPSCALED_PIXELS {
                return Err(EngineError::InvalidInput(format!(
                    "image_url: a {}x{} image scaled {factor}x would make {:.1} megapixels; upscaling makes at most {:.1}",
                    image.width(),
                    image.height(),
                    out_pixels as f64 / 1e6,
                    MAX_UPSCALED_PIXELS as f64 / 1e6
                )));
            }
            let upscaled = resample::upscale(&image, factor);
            let mut output = images_output(job, vec![upscaled.to_rgb8()], false)?;
            output.produced.upscale = factor;
            Ok(output)
        }
        Family::ImageToVideo => {
            let image = decode_input_image(inputs.image.as_deref(), "image_url")?;
            let (width, height) = resolution(job);
            encode_frames(sandbox::pan_zoom_frames(image, width, height, frame_count(job), seed), true)
        }
        Family::TextToVideo => {
            let (width, height) = resolution(job);
            encode_frames(sandbox::sandbox_motion_frames(prompt, seed, width, height, frame_count(job)), true)
        }
        Family::VideoToVideo => {
            let video = required(inputs.video.as_deref(), "video_url")?;
            let mut edit = sandbox::SandboxEdit::new(prompt, seed);
            stream_video(video, true, |frame| Ok(edit.apply(frame)))
        }
        Family::VideoUpscaling => {
            let video = required(inputs.video.as_deref(), "video_url")?;
            let factor = param_u32(job, "scale", 2);
            stream_video(video, false, |frame| {
                let (width, height) = (frame.width() * factor, frame.height() * factor);
                if width.max(height) > MAX_UPSCALED_VIDEO_SIDE {
                    return Err(EngineError::InvalidInput(format!(
                        "video_url: a {}x{} video scaled {factor}x would pass {MAX_UPSCALED_VIDEO_SIDE} pixels a side",
                        frame.width(),
                        frame.height()
                    )));
                }
                Ok(resample::resize_rgb(&frame, even(width), even(height), resample::Filter::CatmullRom))
            })
        }
        Family::LipSync => lip_sync(inputs),
        Family::Recipe => Err(EngineError::Failed(format!("{} runs only as a recipe", spec.id))),
        Family::TextToSpeech => {
            let voice = job.str_param("voice").unwrap_or("narrator");
            let mut output = match speech::speak(prompt, voice) {
                Some(wav) => {
                    let (samples, rate) = speech::wav_samples(&wav?)?;
                    audio_output(&samples, rate, false)?
                }
                // Without a synthesizer installed, a clearly marked sandbox recording.
                None => {
                    audio_output(&audio::synthesize_speech_sandbox(prompt, AUDIO_SAMPLE_RATE), AUDIO_SAMPLE_RATE, true)?
                }
            };
            output.produced.chars = prompt.chars().count() as u64;
            Ok(output)
        }
        Family::Music => {
            let seconds = job.int_param("duration").unwrap_or(10).max(1) as f64;
            audio_output(&audio::synthesize_music(prompt, seed, seconds, AUDIO_SAMPLE_RATE), AUDIO_SAMPLE_RATE, true)
        }
    }
}

/// Longest speech a lip-sync job reads, seconds.
const MAX_LIP_SYNC_SECS: f64 = 60.0;
/// Sample rate of the muxed speech when the recording's rate is not one AAC muxing takes.
const MUX_SAMPLE_RATE: u32 = 44_100;

/// Longest side of a lip-sync video; larger inputs are scaled down to it.
const MAX_LIP_SYNC_SIDE: u32 = 1920;
/// Decoded frames a lip-sync job keeps to loop a short clip without decoding it again, bytes.
const LIP_SYNC_LOOP_CACHE_BYTES: usize = 64 * 1024 * 1024;

/// Sandbox lip sync: the input video, looped or cut to the speech's length, with the speech muxed
/// in as AAC, plus the speech alone as a WAV we encoded (never the client's bytes). Lengths come
/// from the decoded samples, never from a header. The clip is decoded and encoded a frame at a
/// time; a clip shorter than the speech is played again from its start, from a small cache of
/// its frames when they fit, otherwise by decoding it again, so memory holds a few pictures
/// whatever the lengths.
fn lip_sync(inputs: &Inputs) -> Result<EngineOutput, EngineError> {
    let speech = required(inputs.audio.as_deref(), "audio_url")?;
    let (samples, rate) = audio::decode_wav(speech, MAX_LIP_SYNC_SECS)
        .map_err(|e| EngineError::InvalidInput(format!("audio_url: expected a WAV recording ({e})")))?;
    if samples.len() < rate as usize / 10 {
        return Err(EngineError::InvalidInput("audio_url: the recording is shorter than 0.1 s".into()));
    }
    let video = required(inputs.video.as_deref(), "video_url")?;
    let seconds = samples.len() as f64 / f64::from(rate);
    let wanted =
        ((seconds * f64::from(VIDEO_FPS)).round() as usize).clamp(1, MAX_LIP_SYNC_SECS as usize * VIDEO_FPS as usize);

    let mut encoder = SizedEncoder::new(lip_sync_size);
    let mut pushed = 0usize;
    let mut cache: Option<Vec<RgbImage>> = Some(Vec::new());
    let mut cached_bytes = 0usize;
    let mut first_pass = true;
    while pushed < wanted {
        let before = pushed;
        match (&cache, first_pass) {
            (Some(frames), false) => {
                for frame in frames.iter().cycle().take(wanted - pushed) {
                    encoder.push_sized(frame)?;
                    pushed += 1;
                }
            }
            _ => {
                video::for_each_frame(video, |frame| {
                    let frame = encoder.push(frame)?;
                    pushed += 1;
                    if first_pass {
                        cached_bytes += frame.as_raw().len();
                        match cache.as_mut() {
                            Some(frames) if cached_bytes <= LIP_SYNC_LOOP_CACHE_BYTES => frames.push(frame),
                            _ => cache = None,
                        }
                    }
                    Ok(pushed < wanted)
                })?;
                // Cut short by the speech, the cache may miss the clip's end: never loop from it.
                if pushed >= wanted {
                    cache = None;
                }
            }
        }
        first_pass = false;
        if pushed == before {
            return Err(EngineError::InvalidInput("video_url: video has no frames".into()));
        }
    }
    let duration = wanted as f64 / f64::from(VIDEO_FPS);
    // The muxed track is as long as the pictures: the speech, cut or padded with silence.
    let mux_rate =
        if [48_000, 44_100, 32_000, 24_000, 22_050, 16_000].contains(&rate) { rate } else { MUX_SAMPLE_RATE };
    let mut track = audio::resample_linear(&samples, rate, mux_rate);
    track.resize((duration * f64::from(mux_rate)).round() as usize, 0.0);
    let (mp4, (width, height)) = encoder.finish(Some(media::aac::encode(&track, mux_rate)?))?;
    let millis = (duration * 1000.0).round() as u64;
    let files = vec![
        OutputFile::video(mp4, width, height, duration),
        OutputFile::audio(audio::encode_wav(&samples, rate)?, seconds),
    ];
    Ok(EngineOutput { files, produced: video_produced(millis, width, height), sandbox: true })
}

/// The output size of a lip-sync video: the input's, scaled down to [`MAX_LIP_SYNC_SIDE`] and
/// with even sides (H.264 in 4:2:0 needs them).
fn lip_sync_size(width: u32, height: u32) -> (u32, u32) {
    let long = width.max(height);
    if long <= MAX_LIP_SYNC_SIDE {
        return (even(width), even(height));
    }
    let scale = f64::from(MAX_LIP_SYNC_SIDE) / f64::from(long);
    (even((f64::from(width) * scale).round() as u32), even((f64::from(height) * scale).round() as u32))
}

fn required<'a>(bytes: Option<&'a [u8]>, field: &str) -> Result<&'a [u8], EngineError> {
    bytes.ok_or_else(|| EngineError::InvalidInput(format!("{field}: missing")))
}

fn decode_input_image(bytes: Option<&[u8]>, field: &str) -> Result<DynamicImage, EngineError> {
    codecs::decode_image(required(bytes, field)?)
        .map_err(|e| EngineError::InvalidInput(format!("{field}: not a PNG or JPEG image ({e})")))
}

fn param_u32(job: &ValidatedJob, key: &str, default: u32) -> u32 {
    job.int_param(key).and_then(|v| u32::try_from(v).ok()).unwrap_or(default)
}

fn even(n: u32) -> u32 {
    (n & !1).max(2)
}

fn resolution(job: &ValidatedJob) -> (u32, u32) {
    match job.str_param("resolution") {
        Some("360p") => (640, 360),
        Some("720p") => (1280, 720),
        _ => (848, 480),
    }
}

fn frame_count(job: &ValidatedJob) -> u32 {
    let seconds = job.int_param("duration").unwrap_or(5).clamp(1, 60) as u32;
    seconds * VIDEO_FPS
}

/// `millis` of video whose frames are `width` x `height`.
fn video_produced(millis: u64, width: u32, height: u32) -> Produced {
    Produced { millis, frame_short_side: width.min(height), ..Default::default() }
}

/// Least share of a picture a background removal may keep, and most: a cut-out that keeps
/// (almost) nothing or (almost) everything found no subject or no background, and is a failure
/// (unbilled), never a transparent or unchanged picture returned as a success. A subject may be
/// small (a kite in the sky keeps 0.4 %); under a thousandth is specks, not a subject.
const CUTOUT_KEPT_SHARE: std::ops::RangeInclusive<f64> = 0.001..=0.995;

fn check_cutout(kept: f64) -> Result<(), EngineError> {
    if kept < *CUTOUT_KEPT_SHARE.start() {
        return Err(EngineError::InvalidInput(
            "image_url: no subject could be told apart from the background (the cut-out would be empty)".into(),
        ));
    }
    if kept > *CUTOUT_KEPT_SHARE.end() {
        return Err(EngineError::InvalidInput(
            "image_url: no background could be told apart from the subject (the cut-out would be the whole picture)"
                .into(),
        ));
    }
    Ok(())
}

fn one_image(width: u32, height: u32) -> Produced {
    Produced { images: 1, pixels: u64::from(width) * u64::from(height), ..Default::default() }
}

fn images_output(job: &ValidatedJob, images: Vec<RgbImage>, sandbox: bool) -> Result<EngineOutput, EngineError> {
    let jpeg = job.str_param("output_format") == Some("jpeg");
    let mut files = Vec::with_capacity(images.len());
    let mut produced = Produced::default();
    for image in images {
        let (w, h) = image.dimensions();
        let (bytes, extension) = if jpeg {
            (codecs::encode_jpeg(&image, 90)?, "jpg")
        } else {
            (codecs::encode_png(&DynamicImage::ImageRgb8(image))?, "png")
        };
        files.push(OutputFile::image(bytes, extension, w, h));
        produced.images += 1;
        produced.pixels += u64::from(w) * u64::from(h);
    }
    Ok(EngineOutput { files, produced, sandbox })
}

/// Decodes `video` a frame at a time, passes each through `edit` and encodes the result as it
/// comes: memory holds a picture or two whatever the clip's length (at most
/// [`video::MAX_DECODE_FRAMES`] frames are read).
fn stream_video(
    video: &[u8],
    sandbox: bool,
    mut edit: impl FnMut(RgbImage) -> Result<RgbImage, EngineError>,
) -> Result<EngineOutput, EngineError> {
    let mut encoder = SizedEncoder::new(|width, height| (even(width), even(height)));
    let mut failure: Option<EngineError> = None;
    video::for_each_frame(video, |frame| match edit(frame) {
        Ok(edited) => {
            encoder.push(edited)?;
            Ok(encoder.frames() < u64::from(video::MAX_DECODE_FRAMES))
        }
        Err(e) => {
            failure = Some(e);
            Ok(false)
        }
    })?;
    if let Some(failure) = failure {
        return Err(failure);
    }
    let frames = encoder.frames();
    let (bytes, (width, height)) = encoder.finish(None)?;
    let millis = frames * 1000 / u64::from(VIDEO_FPS);
    let file = OutputFile::video(bytes, width, height, millis as f64 / 1000.0);
    Ok(EngineOutput { files: vec![file], produced: video_produced(millis, width, height), sandbox })
}

/// An H.264 encoder opened at the size its first frame picks; later frames are scaled to that
/// size (4:2:0 needs even sides, and a decoded clip's frames may not have them).
struct SizedEncoder {
    size_for: fn(u32, u32) -> (u32, u32),
    opened: Option<(video::VideoEncoder, (u32, u32))>,
    frames: u64,
}

impl SizedEncoder {
    /// An encoder whose size `size_for` picks from the first frame's.
    fn new(size_for: fn(u32, u32) -> (u32, u32)) -> SizedEncoder {
        SizedEncoder { size_for, opened: None, frames: 0 }
    }

    /// Encodes `frame`, scaled to the encoder's size when it differs; returns it as encoded.
    fn push(&mut self, frame: RgbImage) -> Result<RgbImage, MediaError> {
        let size = match &self.opened {
            Some((_, size)) => *size,
            None => {
                let size = (self.size_for)(frame.width(), frame.height());
                self.opened = Some((video::VideoEncoder::new(size.0, size.1, VIDEO_FPS)?, size));
                size
            }
        };
        let frame = if frame.dimensions() == size {
            frame
        } else {
            resample::resize_rgb(&frame, size.0, size.1, resample::Filter::Bilinear)
        };
        self.push_sized(&frame)?;
        Ok(frame)
    }

    /// Encodes a frame already at the encoder's size (one [`SizedEncoder::push`] returned).
    fn push_sized(&mut self, frame: &RgbImage) -> Result<(), MediaError> {
        if let Some((encoder, _)) = self.opened.as_mut() {
            encoder.push(frame)?;
            self.frames += 1;
        }
        Ok(())
    }

    /// Frames encoded so far.
    fn frames(&self) -> u64 {
        self.frames
    }

    /// The MP4 with `audio` muxed in, and its size; an encoder that saw no frame is an input error.
    fn finish(self, audio: Option<media::aac::AacTrack>) -> Result<(Vec<u8>, (u32, u32)), EngineError> {
        let (encoder, size) =
            self.opened.ok_or_else(|| EngineError::InvalidInput("video_url: video has no frames".into()))?;
        Ok((encoder.finish(audio)?, size))
    }
}

/// Encodes frames of even size as they are rendered: memory holds one picture, whatever the
/// clip's length.
fn encode_frames(frames: impl Iterator<Item = RgbImage>, sandbox: bool) -> Result<EngineOutput, EngineError> {
    let mut frames = frames.peekable();
    let (width, height) =
        frames.peek().map(RgbImage::dimensions).ok_or_else(|| EngineError::Failed("no frames to encode".into()))?;
    let mut encoder = video::VideoEncoder::new(width, height, VIDEO_FPS)?;
    let mut count = 0u64;
    for frame in frames {
        encoder.push(&frame)?;
        count += 1;
    }
    let bytes = encoder.finish(None)?;
    let millis = count * 1000 / u64::from(VIDEO_FPS);
    let file = OutputFile::video(bytes, width, height, millis as f64 / 1000.0);
    Ok(EngineOutput { files: vec![file], produced: video_produced(millis, width, height), sandbox })
}

fn audio_output(samples: &[f32], sample_rate: u32, sandbox: bool) -> Result<EngineOutput, EngineError> {
    let bytes = audio::encode_wav(samples, sample_rate)?;
    let millis = samples.len() as u64 * 1000 / u64::from(sample_rate.max(1));
    Ok(EngineOutput {
        files: vec![OutputFile::audio(bytes, millis as f64 / 1000.0)],
        produced: Produced { millis, ..Default::default() },
        sandbox,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cutout_that_keeps_nothing_or_everything_is_refused() {
        for (kept, says) in [(0.0, "empty"), (0.0009, "empty"), (0.996, "whole picture"), (1.0, "whole picture")] {
            let refusal = check_cutout(kept).unwrap_err().to_string();
            assert!(refusal.contains(says), "{kept}: {refusal}");
        }
        for kept in [0.001, 0.004, 0.3, 0.995] {
            assert!(check_cutout(kept).is_ok(), "{kept}");
        }
    }
}
