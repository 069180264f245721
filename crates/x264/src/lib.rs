//! H.264 compression by x264 (0.164, built from the bundled source by `build.rs`), behind a
//! small safe interface: I420 pictures in, MP4-ready pictures out (each NAL unit behind a 4-byte
//! length, SPS and PPS apart for the container), High profile, constant rate factor, BT.709 in
//! the stream's VUI.
//!
//! x264 is GPL-2.0-or-later, and so is this crate and every binary it is linked into.

use std::ffi::{c_char, c_float, c_int, CString};
use std::ptr::null;

/// Why x264 refused.
#[derive(Debug, thiserror::Error)]
pub enum X264Error {
    /// The settings were refused before encoding began.
    #[error("x264 settings: {0}")]
    Settings(String),
    /// x264 failed while compressing.
    #[error("x264 failed to {0}")]
    Encode(&'static str),
}

/// x264's speed presets, fastest first.
pub const PRESETS: [&str; 10] =
    ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo"];

/// How a stream is compressed.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Picture width in pixels, even.
    pub width: u32,
    /// Picture height in pixels, even.
    pub height: u32,
    /// Frames per second; timestamps count frames.
    pub fps: u32,
    /// Constant rate factor: 0 (lossless) to 51; 23 is x264's default.
    pub crf: f32,
    /// One of x264's [`PRESETS`].
    pub preset: &'static str,
    /// The longest run of pictures between IDR pictures.
    pub keyint: u32,
    /// Threads x264 may use for itself. With more than one its output differs from a
    /// one-thread run (frame threads narrow the motion search), so callers that need the same
    /// bytes on every machine pass 1.
    pub threads: u32,
    /// B-frames (reordered pictures: smaller files; the container needs composition offsets).
    pub b_frames: bool,
    /// x264 options by their command-line names without the dashes (`me`, `subme`,
    /// `rc-lookahead`, ...), applied over the preset.
    pub options: Vec<(&'static str, String)>,
}

/// A compressed picture, borrowed from the encoder until its next call.
#[derive(Debug)]
pub struct Picture<'a> {
    /// The picture's NAL units, each behind a 4-byte big-endian length.
    pub data: &'a [u8],
    /// Presentation time, in frames.
    pub pts: i64,
    /// Decoding time, in frames; negative for the first pictures when B-frames delay output.
    pub dts: i64,
    /// An IDR picture: decoding may start here.
    pub keyframe: bool,
}

/// The stream's parameter sets, without start codes or lengths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Headers {
    /// The sequence parameter set.
    pub sps: Vec<u8>,
    /// The picture parameter set.
    pub pps: Vec<u8>,
}

#[repr(C)]
struct RawSettings {
    width: c_int,
    height: c_int,
    fps: c_int,
    keyint: c_int,
    threads: c_int,
    bframes: c_int,
    crf: c_float,
    preset: *const c_char,
    option_names: *const *const c_char,
    option_values: *const *const c_char,
    option_count: c_int,
}

#[repr(C)]
struct RawPicture {
    data: *const u8,
    size: c_int,
    pts: i64,
    dts: i64,
    keyframe: c_int,
}

#[repr(C)]
struct RawEncoder {
    _private: [u8; 0],
}

extern "C" {
    fn gx_open(settings: *const RawSettings) -> *mut RawEncoder;
    fn gx_headers(
        encoder: *mut RawEncoder,
        sps: *mut *const u8,
        sps_len: *mut c_int,
        pps: *mut *const u8,
        pps_len: *mut c_int,
    ) -> c_int;
    fn gx_encode(encoder: *mut RawEncoder, planes: *const u8, pts: i64, out: *mut RawPicture) -> c_int;
    fn gx_delayed(encoder: *mut RawEncoder) -> c_int;
    fn gx_close(encoder: *mut RawEncoder);
}

/// One x264 encoder, for pictures of one size.
pub struct Encoder {
    raw: *mut RawEncoder,
    picture_len: usize,
}

// SAFETY: the encoder is owned by this value and used from one thread at a time (every method
// takes `&mut self`); x264 keeps no thread-local state between calls.
unsafe impl Send for Encoder {}

fn to_int(value: u32, what: &str) -> Result<c_int, X264Error> {
    c_int::try_from(value).map_err(|_| X264Error::Settings(format!("{what} {value} is out of range")))
}

impl Encoder {
    /// An encoder with `settings`.
    pub fn new(settings: &Settings) -> Result<Encoder, X264Error> {
        if settings.width == 0 || settings.height == 0 || settings.width % 2 == 1 || settings.height % 2 == 1 {
            return Err(X264Error::Settings(format!(
                "pictures must have even, non-zero sides, not {}x{}",
                settings.width, settings.height
            )));
        }
        if !(0.0..=51.0).contains(&settings.crf) {
            return Err(X264Error::Settings(format!("CRF must be 0 to 51, not {}", settings.crf)));
        }
        if settings.fps == 0 || settings.keyint == 0 || settings.threads == 0 {
            return Err(X264Error::Settings("fps, keyint and threads must be at least 1".into()));
        }
        if !PRESETS.contains(&settings.preset) {
            return Err(X264Error::Settings(format!("unknown preset {:?}", settings.preset)));
        }
        let preset =
            CString::new(settings.preset).map_err(|_| X264Error::Settings(format!("preset {:?}", settings.preset)))?;
        let c_string = |text: &str| {
            CString::new(text).map_err(|_| X264Error::Settings(format!("option text {text:?} holds a NUL")))
        };
        let names = settings.options.iter().map(|(name, _)| c_string(name)).collect::<Result<Vec<_>, _>>()?;
        let values = settings.options.iter().map(|(_, value)| c_string(value)).collect::<Result<Vec<_>, _>>()?;
        let name_pointers: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
        let value_pointers: Vec<*const c_char> = values.iter().map(|v| v.as_ptr()).collect();
        let raw_settings = RawSettings {
            width: to_int(settings.width, "width")?,
            height: to_int(settings.height, "height")?,
            fps: to_int(settings.fps, "fps")?,
            keyint: to_int(settings.keyint, "keyint")?,
            threads: to_int(settings.threads, "threads")?,
            bframes: c_int::from(settings.b_frames),
            crf: settings.crf,
            preset: preset.as_ptr(),
            option_names: name_pointers.as_ptr(),
            option_values: value_pointers.as_ptr(),
            option_count: to_int(u32::try_from(settings.options.len()).unwrap_or(u32::MAX), "option count")?,
        };
        // SAFETY: the settings struct, the preset and every option string outlive the call; x264
        // copies what it keeps.
        let raw = unsafe { gx_open(&raw_settings) };
        if raw.is_null() {
            return Err(X264Error::Settings(format!(
                "x264 refused {}x{} at {} fps, preset {}, options {:?}",
                settings.width, settings.height, settings.fps, settings.preset, settings.options
            )));
        }
        let luma = settings.width as usize * settings.height as usize;
        Ok(Encoder { raw, picture_len: luma + luma / 2 })
    }

    /// The stream's SPS and PPS.
    pub fn headers(&mut self) -> Result<Headers, X264Error> {
        let (mut sps, mut pps) = (null(), null());
        let (mut sps_len, mut pps_len): (c_int, c_int) = (0, 0);
        // SAFETY: the encoder is open; the out-pointers are valid locals.
        let code = unsafe { gx_headers(self.raw, &mut sps, &mut sps_len, &mut pps, &mut pps_len) };
        if code != 0 || sps.is_null() || pps.is_null() {
            return Err(X264Error::Encode("write its parameter sets"));
        }
        // SAFETY: on success both point into x264's buffer for the given lengths, valid until the
        // next call on this encoder; they are copied at once.
        let (sps, pps) = unsafe {
            (
                std::slice::from_raw_parts(sps, usize::try_from(sps_len).unwrap_or(0)).to_vec(),
                std::slice::from_raw_parts(pps, usize::try_from(pps_len).unwrap_or(0)).to_vec(),
            )
        };
        Ok(Headers { sps, pps })
    }

    /// Compresses one picture: `planes` holds Y, then Cb, then Cr, each tightly packed, and `pts`
    /// counts frames. Returns the picture that came out, if any (x264 holds pictures back for
    /// its lookahead and B-frames; [`Encoder::flush`] drains them).
    pub fn encode(&mut self, planes: &[u8], pts: i64) -> Result<Option<Picture<'_>>, X264Error> {
        if planes.len() != self.picture_len {
            return Err(X264Error::Settings(format!(
                "a picture of {} bytes, where the encoder's size needs {}",
                planes.len(),
                self.picture_len
            )));
        }
        Ok(self.step(planes.as_ptr(), pts, "compress a picture")?.map(|raw| picture(&raw)))
    }

    /// One picture x264 still holds, until it holds none.
    pub fn flush(&mut self) -> Result<Option<Picture<'_>>, X264Error> {
        // SAFETY: the encoder is open.
        while unsafe { gx_delayed(self.raw) } > 0 {
            // A null picture asks for a delayed one; x264 may take a call without giving one.
            if let Some(raw) = self.step(null(), 0, "drain its delayed pictures")? {
                return Ok(Some(picture(&raw)));
            }
        }
        Ok(None)
    }

    /// One call into x264: the raw form of the picture it gave, if any. Returned unborrowed, so
    /// that `flush` can call again in a loop; the callers tie its bytes to `&mut self`.
    fn step(&mut self, planes: *const u8, pts: i64, doing: &'static str) -> Result<Option<RawPicture>, X264Error> {
        let mut out = empty_picture();
        // SAFETY: `planes` is null or covers a whole picture of the encoder's size (checked by
        // `encode`); x264 only reads it during the call, copying what it keeps for its lookahead.
        match unsafe { gx_encode(self.raw, planes, pts, &mut out) } {
            1 => Ok(Some(out)),
            0 => Ok(None),
            _ => Err(X264Error::Encode(doing)),
        }
    }
}

fn empty_picture() -> RawPicture {
    RawPicture { data: null(), size: 0, pts: 0, dts: 0, keyframe: 0 }
}

/// The borrowed form of what `gx_encode` wrote; its bytes live in x264's buffer until the next
/// call on the encoder, which the returned lifetime (tied to `&mut Encoder` by the callers)
/// enforces.
fn picture<'a>(raw: &RawPicture) -> Picture<'a> {
    let data = if raw.data.is_null() {
        &[][..]
    } else {
        // SAFETY: x264 wrote `size` bytes at `data`, valid until the next call on the encoder.
        unsafe { std::slice::from_raw_parts(raw.data, usize::try_from(raw.size).unwrap_or(0)) }
    };
    Picture { data, pts: raw.pts, dts: raw.dts, keyframe: raw.keyframe != 0 }
}

impl Drop for Encoder {
    fn drop(&mut self) {
        // SAFETY: opened by gx_open and closed exactly once.
        unsafe { gx_close(self.raw) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> Settings {
        Settings {
            width: 64,
            height: 48,
            fps: 24,
            crf: 23.0,
            preset: "veryfast",
            keyint: 48,
            threads: 1,
            b_frames: true,
            options: vec![("me", "dia".into()), ("subme", "1".into())],
        }
    }

    /// Every picture pushed comes out once, keyframe first, with its timestamp, and each is a
    /// run of length-prefixed NAL units that exactly fills it.
    #[test]
    fn every_picture_comes_out_once_in_mp4_form() -> Result<(), X264Error> {
        let mut encoder = Encoder::new(&settings())?;
        let headers = encoder.headers()?;
        assert_eq!(headers.sps[0] & 0x1f, 7);
        assert_eq!(headers.pps[0] & 0x1f, 8);
        assert_eq!(headers.sps[1], 100, "High profile");
        let mut seen = Vec::new();
        let mut record = |picture: Picture<'_>| {
            let mut at = 0;
            while at < picture.data.len() {
                let len = u32::from_be_bytes(picture.data[at..at + 4].try_into().expect("4 bytes")) as usize;
                at += 4 + len;
            }
            assert_eq!(at, picture.data.len(), "the lengths tile the picture");
            seen.push((picture.pts, picture.dts, picture.keyframe));
        };
        for frame in 0..30i64 {
            let mut planes = vec![128u8; 64 * 48 * 3 / 2];
            for (i, p) in planes.iter_mut().take(64 * 48).enumerate() {
                *p = ((i as i64 + frame * 3) % 200) as u8;
            }
            if let Some(picture) = encoder.encode(&planes, frame)? {
                record(picture);
            }
        }
        while let Some(picture) = encoder.flush()? {
            record(picture);
        }
        assert_eq!(seen.len(), 30);
        assert!(seen[0].2, "the first picture is an IDR");
        let mut pts: Vec<i64> = seen.iter().map(|s| s.0).collect();
        pts.sort_unstable();
        assert_eq!(pts, (0..30).collect::<Vec<_>>());
        assert!(seen.windows(2).all(|w| w[0].1 < w[1].1), "decoding times rise");
        assert!(seen.iter().all(|s| s.1 <= s.0), "no picture is shown before it is decoded");
        Ok(())
    }

    #[test]
    fn bad_settings_and_pictures_are_refused() -> Result<(), X264Error> {
        assert!(Encoder::new(&Settings { width: 63, ..settings() }).is_err());
        assert!(Encoder::new(&Settings { crf: 60.0, ..settings() }).is_err());
        assert!(Encoder::new(&Settings { preset: "warp", ..settings() }).is_err());
        assert!(Encoder::new(&Settings { options: vec![("no-such-option", "1".into())], ..settings() }).is_err());
        let mut encoder = Encoder::new(&settings())?;
        assert!(encoder.encode(&[0; 10], 0).is_err());
        Ok(())
    }
}
