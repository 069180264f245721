//! H.264 compression by x264 (`veryfast`, B-frames, constant rate factor), the default encoder.

use super::{CompressedStream, EncodedSample, H264Settings};
use crate::MediaError;

/// x264's speed preset: the one the service is measured against in docs/performance.md.
const PRESET: &str = "veryfast";

/// Threads x264 always runs (frame threads, and its lookahead beside them). A fixed count, not
/// the job's allowance: x264's output depends on its thread count, and a job's video must be the
/// same bytes whether its worker was busy or idle. The work is the same either way; a job held to
/// one core time-shares it.
const THREADS: u32 = 2;

/// Options over the preset: `superfast`'s motion search (a diamond search, one subpixel pass)
/// instead of `veryfast`'s hexagon and two passes. Measured on the pan and zoom's frames, it
/// takes a fifth less time for the same bytes at an SSIM 0.0002 lower; `veryfast`'s
/// macroblock-tree lookahead, which is what makes slow push-ins over stills small, stays
/// (docs/performance.md, "The encoder").
const OPTIONS: [(&str, &str); 2] = [("me", "dia"), ("subme", "1")];

/// An encoder and the stream it has made so far, in MP4 form (parameter sets apart, each
/// picture's NAL units length-prefixed, in decoding order).
pub(crate) struct H264Stream {
    encoder: x264::Encoder,
    headers: x264::Headers,
    samples: Vec<EncodedSample>,
    /// The first picture's decoding time, in frames: zero or negative.
    first_dts: Option<i64>,
}

fn encode_error(e: x264::X264Error) -> MediaError {
    match e {
        x264::X264Error::Settings(message) => MediaError::InvalidInput(message),
        e @ x264::X264Error::Encode(_) => MediaError::Encode(e.to_string()),
    }
}

impl H264Stream {
    /// An empty stream of `width` x `height` pictures at `fps`, with an IDR picture at least
    /// every `idr_period` frames (and at scene cuts).
    pub(crate) fn new(
        width: u32,
        height: u32,
        fps: u32,
        idr_period: u32,
        settings: H264Settings,
    ) -> Result<H264Stream, MediaError> {
        let mut encoder = x264::Encoder::new(&x264::Settings {
            width,
            height,
            fps,
            crf: f32::from(settings.quality),
            preset: PRESET,
            keyint: idr_period,
            threads: THREADS,
            b_frames: true,
            options: OPTIONS.iter().map(|&(name, value)| (name, value.to_string())).collect(),
        })
        .map_err(encode_error)?;
        let headers = encoder.headers().map_err(encode_error)?;
        Ok(H264Stream { encoder, headers, samples: Vec::new(), first_dts: None })
    }

    /// Compresses one I420 picture (Y, Cb, Cr planes back to back), the `frame`th of the stream.
    pub(crate) fn compress(&mut self, planes: &[u8], frame: i64) -> Result<(), MediaError> {
        let picture = self.encoder.encode(planes, frame).map_err(encode_error)?;
        if let Some(picture) = picture {
            record(&mut self.samples, &mut self.first_dts, &picture)?;
        }
        Ok(())
    }

    /// Drains the pictures x264 still holds and returns the stream.
    pub(crate) fn finish(mut self) -> Result<CompressedStream, MediaError> {
        while let Some(picture) = self.encoder.flush().map_err(encode_error)? {
            record(&mut self.samples, &mut self.first_dts, &picture)?;
        }
        let delay_frames = u32::try_from(-self.first_dts.unwrap_or(0))
            .map_err(|_| MediaError::Encode("x264 decoded its first picture after showing it".into()))?;
        let x264::Headers { sps, pps } = self.headers;
        CompressedStream { sps, pps, samples: self.samples, delay_frames }.checked()
    }
}

/// Adds one picture to the stream. Pictures come out in decoding order, one frame apart.
fn record(
    samples: &mut Vec<EncodedSample>,
    first_dts: &mut Option<i64>,
    picture: &x264::Picture<'_>,
) -> Result<(), MediaError> {
    let first = *first_dts.get_or_insert(picture.dts);
    let expected_dts = first + samples.len() as i64;
    let offset = picture.pts - picture.dts;
    if picture.dts != expected_dts || offset < 0 {
        return Err(MediaError::Encode(format!(
            "x264 gave picture {} decoding time {} (expected {expected_dts})",
            picture.pts, picture.dts
        )));
    }
    samples.push(EncodedSample {
        bytes: picture.data.to_vec(),
        is_sync: picture.keyframe,
        frames: 1,
        composition_offset: u32::try_from(offset).unwrap_or(u32::MAX),
    });
    Ok(())
}
