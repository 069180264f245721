//! H.264 compression, and the compressed stream in the form the MP4 muxer takes.
//! [`H264Settings`] is how callers of [`crate::video::VideoEncoder::with_settings`] choose the
//! compression.
//!
//! With the `x264` feature (the default) pictures are compressed by x264 `veryfast` with
//! B-frames; without it, by OpenH264 (BSD-licensed, about twice the bytes at the same quality).
//! docs/performance.md, "The encoder", records why and what each choice means for the licence.
//! Either way the stream is High profile with BT.709 in its VUI, and the same input gives the
//! same bytes whatever the thread count.

#[cfg(not(feature = "x264"))]
mod openh264;
#[cfg(feature = "x264")]
mod x264;

#[cfg(not(feature = "x264"))]
pub(crate) use self::openh264::H264Stream;
#[cfg(feature = "x264")]
pub(crate) use self::x264::H264Stream;

/// How a stream is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct H264Settings {
    /// Quality, 0 (best) to 51: x264's constant rate factor, or OpenH264's constant quantiser
    /// without the `x264` feature.
    pub quality: u8,
    /// Threads the encoder may use: with 2 or more, pictures are compressed on a thread of
    /// their own while the caller draws the next frame. The stream is the same either way.
    pub threads: usize,
}

impl H264Settings {
    /// The quality a job's video is made at: x264's default rate factor (23), or OpenH264's
    /// quantiser 26, the settings measured against x264 `veryfast` in docs/performance.md.
    pub const DEFAULT_QUALITY: u8 = if cfg!(feature = "x264") { 23 } else { 26 };
}

impl Default for H264Settings {
    /// [`H264Settings::DEFAULT_QUALITY`] on the threads [`crate::job_threads`] allows.
    fn default() -> Self {
        H264Settings { quality: Self::DEFAULT_QUALITY, threads: crate::job_threads() }
    }
}

#[cfg(any(test, not(feature = "x264")))]
pub(crate) const NAL_IDR: u8 = 5;
const NAL_SPS: u8 = 7;
const NAL_PPS: u8 = 8;

/// One compressed picture, in decoding order: length-prefixed NAL units, whether it is a sync
/// sample, how many input frames it spans, and how many frames after its decoding it is shown.
pub(crate) struct EncodedSample {
    pub(crate) bytes: Vec<u8>,
    pub(crate) is_sync: bool,
    pub(crate) frames: u32,
    pub(crate) composition_offset: u32,
}

/// A whole compressed stream, ready to mux: its parameter sets, its pictures, and how many
/// frames the first picture is shown after the first decoding (B-frames' reordering delay,
/// which the container's edit list takes back out).
pub(crate) struct CompressedStream {
    pub(crate) sps: Vec<u8>,
    pub(crate) pps: Vec<u8>,
    pub(crate) samples: Vec<EncodedSample>,
    pub(crate) delay_frames: u32,
}

impl CompressedStream {
    /// Checks what every backend must deliver before muxing.
    fn checked(self) -> Result<CompressedStream, crate::MediaError> {
        use crate::MediaError;
        if self.samples.is_empty() {
            return Err(MediaError::InvalidInput("no frames to encode".into()));
        }
        if self.sps.len() < 4 || self.sps[0] & 0x1f != NAL_SPS {
            return Err(MediaError::Encode("encoder emitted no usable SPS".into()));
        }
        if self.pps.first().map(|b| b & 0x1f) != Some(NAL_PPS) {
            return Err(MediaError::Encode("encoder emitted no usable PPS".into()));
        }
        Ok(self)
    }
}
