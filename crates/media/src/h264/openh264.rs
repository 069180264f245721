//! H.264 compression on OpenH264's C interface, the encoder without the `x264` feature.
//!
//! The `openh264` crate's encoder wrapper fixes settings this service needs to
//! choose (CABAC entropy coding, which is what makes the stream High profile;
//! the in-stream BT.709 colour description), so the encoder is driven here
//! through `openh264-sys2` directly. Decoding still uses the crate's wrapper.

use std::os::raw::{c_int, c_void};
use std::ptr::{addr_of_mut, null_mut};

use openh264::OpenH264API;
use openh264_sys2::API;
use openh264_sys2::{
    cmResultSuccess, videoFormatI420, ISVCEncoder, ISVCEncoderVtbl, SEncParamExt, SFrameBSInfo, SSourcePicture,
    CAMERA_VIDEO_REAL_TIME, CONSTANT_ID, ENCODER_OPTION_DATAFORMAT, ENCODER_OPTION_TRACE_LEVEL, LOW_COMPLEXITY,
    PRO_HIGH, RC_OFF_MODE, SM_SINGLE_SLICE, WELS_LOG_QUIET,
};

use super::{CompressedStream, EncodedSample, H264Settings, NAL_IDR, NAL_PPS, NAL_SPS};
use crate::MediaError;

const NAL_AUD: u8 = 9;

/// An encoder and the stream it has made so far, in MP4 form (parameter sets apart, each
/// picture's NAL units length-prefixed).
pub(crate) struct H264Stream {
    encoder: H264Encoder,
    fps: u32,
    sps: Option<Vec<u8>>,
    pps: Option<Vec<u8>>,
    samples: Vec<EncodedSample>,
}

impl H264Stream {
    /// An empty stream of `width` x `height` pictures at `fps`, with an IDR picture every
    /// `idr_period` frames.
    pub(crate) fn new(
        width: u32,
        height: u32,
        fps: u32,
        idr_period: u32,
        settings: H264Settings,
    ) -> Result<H264Stream, MediaError> {
        let encoder = H264Encoder::new(width, height, fps, idr_period, settings)?;
        Ok(H264Stream { encoder, fps, sps: None, pps: None, samples: Vec::new() })
    }

    /// Compresses one I420 picture (see [`H264Encoder::encode`]), the `frame`th of the stream.
    pub(crate) fn compress(&mut self, planes: &[u8], frame: i64) -> Result<(), MediaError> {
        let mut access_unit = Vec::new();
        let mut is_idr = false;
        let timestamp_ms = frame.saturating_mul(1000) / i64::from(self.fps);
        for nal in self.encoder.encode(planes, timestamp_ms)? {
            let payload = strip_start_code(nal);
            let Some(&header) = payload.first() else {
                continue;
            };
            match header & 0x1f {
                NAL_SPS => {
                    self.sps.get_or_insert_with(|| payload.to_vec());
                }
                NAL_PPS => {
                    self.pps.get_or_insert_with(|| payload.to_vec());
                }
                // Access unit delimiters are redundant in MP4 samples.
                NAL_AUD => {}
                kind => {
                    is_idr |= kind == NAL_IDR;
                    let len = u32::try_from(payload.len())
                        .map_err(|_| MediaError::Encode("NAL unit larger than 4 GiB".into()))?;
                    access_unit.extend_from_slice(&len.to_be_bytes());
                    access_unit.extend_from_slice(payload);
                }
            }
        }
        if access_unit.is_empty() {
            // A skipped picture: hold the previous one for one more frame.
            match self.samples.last_mut() {
                Some(last) => last.frames += 1,
                None => return Err(MediaError::Encode("encoder produced no picture for the first frame".into())),
            }
        } else {
            self.samples.push(EncodedSample { bytes: access_unit, is_sync: is_idr, frames: 1, composition_offset: 0 });
        }
        Ok(())
    }

    /// The stream, once it holds at least one picture and its parameter sets.
    pub(crate) fn finish(self) -> Result<CompressedStream, MediaError> {
        let missing = |what: &str| MediaError::Encode(format!("encoder emitted no {what}"));
        let sps = self.sps.ok_or_else(|| missing("SPS"))?;
        let pps = self.pps.ok_or_else(|| missing("PPS"))?;
        CompressedStream { sps, pps, samples: self.samples, delay_frames: 0 }.checked()
    }
}

/// Removes an Annex-B start code (3 or 4 bytes) if present.
fn strip_start_code(nal: &[u8]) -> &[u8] {
    if let Some(rest) = nal.strip_prefix(&[0, 0, 0, 1]) {
        rest
    } else if let Some(rest) = nal.strip_prefix(&[0, 0, 1]) {
        rest
    } else {
        nal
    }
}

/// One OpenH264 encoder instance, initialised for one picture size.
struct H264Encoder {
    api: OpenH264API,
    encoder: *mut ISVCEncoder,
    vtable: ISVCEncoderVtbl,
    // Boxed: the struct is 7 KiB and the encoder moves between threads.
    output: Box<SFrameBSInfo>,
    width: c_int,
    height: c_int,
}

// SAFETY: the encoder instance is owned by this value and used from one thread
// at a time (every method takes `&mut self`).
unsafe impl Send for H264Encoder {}

fn check(what: &str, code: c_int) -> Result<(), MediaError> {
    if code == cmResultSuccess as c_int {
        Ok(())
    } else {
        Err(MediaError::Encode(format!("H.264 encoder: {what} failed with code {code}")))
    }
}

impl H264Encoder {
    /// An encoder for `width` x `height` pictures at `fps`, with an IDR
    /// picture every `idr_period` frames.
    fn new(
        width: u32,
        height: u32,
        fps: u32,
        idr_period: u32,
        settings: H264Settings,
    ) -> Result<H264Encoder, MediaError> {
        if settings.quality > 51 {
            return Err(MediaError::InvalidInput(format!("QP must be 0..=51, got {}", settings.quality)));
        }
        let (width, height) = (
            c_int::try_from(width).map_err(|_| MediaError::InvalidInput("width out of range".into()))?,
            c_int::try_from(height).map_err(|_| MediaError::InvalidInput("height out of range".into()))?,
        );
        let api = OpenH264API::from_source();
        let mut encoder: *mut ISVCEncoder = null_mut();
        // SAFETY: WelsCreateSVCEncoder writes a fresh instance pointer.
        check("create", unsafe { api.WelsCreateSVCEncoder(&mut encoder) })?;
        // SAFETY: a successful create yields a valid instance whose first word
        // points at its function table.
        let vtable = match unsafe { encoder.as_ref().and_then(|table| table.as_ref()) } {
            Some(table) => *table,
            None => return Err(MediaError::Encode("H.264 encoder: create returned no instance".into())),
        };
        let mut this = H264Encoder { api, encoder, vtable, output: Box::default(), width, height };
        this.initialise(fps, idr_period, settings)?;
        Ok(this)
    }

    fn initialise(&mut self, fps: u32, idr_period: u32, settings: H264Settings) -> Result<(), MediaError> {
        let missing = || MediaError::Encode("H.264 encoder: function table is incomplete".into());
        let get_defaults = self.vtable.GetDefaultParams.ok_or_else(missing)?;
        let initialise = self.vtable.InitializeExt.ok_or_else(missing)?;
        let set_option = self.vtable.SetOption.ok_or_else(missing)?;
        let mut params = SEncParamExt::default();
        // SAFETY: the instance is valid and `params` is a writable struct of the right type.
        check("defaults", unsafe { get_defaults(self.encoder, &mut params) })?;
        params.iUsageType = CAMERA_VIDEO_REAL_TIME;
        params.iPicWidth = self.width;
        params.iPicHeight = self.height;
        params.iRCMode = RC_OFF_MODE;
        params.bEnableFrameSkip = false;
        params.fMaxFrameRate = fps as f32;
        params.uiIntraPeriod = idr_period;
        params.eSpsPpsIdStrategy = CONSTANT_ID;
        // CABAC, which makes the stream High profile.
        params.iEntropyCodingModeFlag = 1;
        params.iComplexityMode = LOW_COMPLEXITY;
        // OpenH264's own threads work on slices: they cost compression and, measured, gave no
        // speed here. Parallelism comes from compressing beside the drawing instead.
        params.iMultipleThreadIdc = 1;
        // Background detection lets static areas go uncoded; on pan-and-zoom footage it cost
        // bytes and SSIM alike (docs/performance.md).
        params.bEnableBackgroundDetection = false;
        params.iMinQp = c_int::from(settings.quality);
        params.iMaxQp = c_int::from(settings.quality);
        params.iSpatialLayerNum = 1;
        params.iTemporalLayerNum = 1;
        let layer = &mut params.sSpatialLayers[0];
        layer.iVideoWidth = self.width;
        layer.iVideoHeight = self.height;
        layer.fFrameRate = fps as f32;
        layer.iDLayerQp = c_int::from(settings.quality);
        layer.uiProfileIdc = PRO_HIGH;
        layer.sSliceArgument.uiSliceMode = SM_SINGLE_SLICE;
        layer.sSliceArgument.uiSliceNum = 1;
        // BT.709 in the stream itself, matching the container's `colr` box.
        layer.bVideoSignalTypePresent = true;
        layer.uiVideoFormat = 5; // unspecified
        layer.bFullRange = false;
        layer.bColorDescriptionPresent = true;
        layer.uiColorPrimaries = 1;
        layer.uiTransferCharacteristics = 1;
        layer.uiColorMatrix = 1;
        // SAFETY: `params` is fully initialised from the encoder's own defaults.
        check("initialise", unsafe { initialise(self.encoder, &params) })?;
        let mut quiet: c_int = WELS_LOG_QUIET as c_int;
        let mut format: c_int = videoFormatI420 as c_int;
        // SAFETY: both options take a pointer to an int that outlives the call.
        unsafe {
            check(
                "trace level",
                set_option(self.encoder, ENCODER_OPTION_TRACE_LEVEL, addr_of_mut!(quiet).cast::<c_void>()),
            )?;
            check(
                "data format",
                set_option(self.encoder, ENCODER_OPTION_DATAFORMAT, addr_of_mut!(format).cast::<c_void>()),
            )?;
        }
        Ok(())
    }

    /// Compresses one I420 picture (`planes` holds Y, then Cb, then Cr, each
    /// tightly packed) and returns its NAL units with their start codes.
    fn encode(&mut self, planes: &[u8], timestamp_ms: i64) -> Result<Vec<&[u8]>, MediaError> {
        let (w, h) = (self.width as usize, self.height as usize);
        let luma = w * h;
        if planes.len() != luma + luma / 2 {
            return Err(MediaError::InvalidInput("picture planes do not match the encoder's size".into()));
        }
        let encode =
            self.vtable.EncodeFrame.ok_or_else(|| MediaError::Encode("H.264 encoder: no EncodeFrame".into()))?;
        let base = planes.as_ptr().cast_mut();
        let source = SSourcePicture {
            iColorFormat: videoFormatI420 as c_int,
            iStride: [self.width, self.width / 2, self.width / 2, 0],
            // SAFETY: the offsets stay inside `planes`, checked above. The
            // encoder only reads its input, so the casts to *mut are sound.
            pData: unsafe { [base, base.add(luma), base.add(luma + luma / 4), null_mut()] },
            iPicWidth: self.width,
            iPicHeight: self.height,
            uiTimeStamp: timestamp_ms,
            bPsnrY: false,
            bPsnrU: false,
            bPsnrV: false,
        };
        // SAFETY: source describes a live buffer of the initialised size;
        // `output` is owned by self and rewritten by the call.
        check("encode", unsafe { encode(self.encoder, &source, &mut *self.output) })?;
        let mut nals = Vec::new();
        let layers = usize::try_from(self.output.iLayerNum).unwrap_or(0).min(self.output.sLayerInfo.len());
        for layer in &self.output.sLayerInfo[..layers] {
            let mut offset = 0usize;
            for n in 0..usize::try_from(layer.iNalCount).unwrap_or(0) {
                // SAFETY: the encoder reports iNalCount lengths for the NAL
                // units it wrote back to back into pBsBuf, valid until the
                // next call; the returned slices borrow `self` mutably.
                let nal = unsafe {
                    let len = usize::try_from(*layer.pNalLengthInByte.add(n)).unwrap_or(0);
                    let nal = std::slice::from_raw_parts(layer.pBsBuf.add(offset), len);
                    offset += len;
                    nal
                };
                nals.push(nal);
            }
        }
        Ok(nals)
    }
}

impl Drop for H264Encoder {
    fn drop(&mut self) {
        // SAFETY: the instance was created by WelsCreateSVCEncoder and is
        // destroyed exactly once, after uninitialising it.
        unsafe {
            if let Some(uninitialise) = self.vtable.Uninitialize {
                uninitialise(self.encoder);
            }
            self.api.WelsDestroySVCEncoder(self.encoder);
        }
    }
}
