//! H.264/MP4 encode, probe and decode without ffmpeg.
//!
//! Encoding uses x264 (or OpenH264 without the `x264` feature) and decoding
//! OpenH264, both compiled into the binary from source; the MP4 container is
//! written and parsed with the pure-Rust `mp4` crate.

use std::io::{Cursor, Read, Seek};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use image::RgbImage;
use mp4::{
    AacConfig, AudioObjectType, AvcConfig, ChannelConfig, MediaConfig, Mp4Config, Mp4Reader, Mp4Sample, Mp4Track,
    Mp4Writer, SampleFreqIndex, TrackConfig, TrackType,
};
use openh264::decoder::{DecodedYUV, Decoder, DecoderConfig, Flush};
use openh264::formats::YUVSource;
use openh264::OpenH264API;

use crate::aac::AacTrack;
use crate::h264::{CompressedStream, EncodedSample, H264Settings, H264Stream};
use crate::{mp4_boxes, yuv, MediaError};

/// Most frames [`decode_mp4`] returns; later frames are ignored.
pub const MAX_DECODE_FRAMES: u32 = 1800;

/// Upper bound on decoded RGB bytes held at once, so a long high-resolution
/// upload cannot exhaust memory even under the frame cap.
const MAX_DECODE_BYTES: usize = 1536 * 1024 * 1024;

/// Highest frame rate accepted by [`encode_mp4`].
pub const MAX_FPS: u32 = 240;

/// Seconds between IDR pictures: a player seeks to one and decodes forward from it. Each costs
/// about ten inter pictures' bytes, so short clips carry few (x264's default is 250 frames).
pub const IDR_PERIOD_SECS: u32 = 5;

/// Per-frame tick count; with a timescale of `fps * TICKS_PER_FRAME` every
/// frame duration is an exact integer.
const TICKS_PER_FRAME: u32 = 1000;

/// Basic facts about an MP4's primary video track (and its audio track, if any).
#[derive(Debug, Clone, PartialEq)]
pub struct Mp4Info {
    /// Coded width in pixels.
    pub width: u32,
    /// Coded height in pixels.
    pub height: u32,
    /// Track duration in seconds.
    pub duration_secs: f64,
    /// Number of samples (frames) in the track.
    pub frame_count: u32,
    /// Average frame rate.
    pub fps: f64,
    /// Sample entry four-cc, e.g. `avc1` for H.264.
    pub codec: String,
    /// `moov` comes before `mdat`: playback can start while the file downloads.
    pub fast_start: bool,
    /// The sample entry carries BT.709 colour tags (`colr`, `nclx` 1/1/1).
    pub bt709: bool,
    /// The first audio track.
    pub audio: Option<AudioTrackInfo>,
}

/// Basic facts about an MP4's audio track.
#[derive(Debug, Clone, PartialEq)]
pub struct AudioTrackInfo {
    /// Sample entry four-cc, e.g. `mp4a` for AAC.
    pub codec: String,
    /// Sample rate, Hz.
    pub sample_rate: u32,
    /// Track duration in seconds.
    pub duration_secs: f64,
}

/// Encodes RGB frames as H.264 (High profile by default) in an MP4 file.
///
/// All frames must share one even size (4:2:0 chroma needs it) no larger than
/// 3840x2160 (or 2160x3840); `fps` must be 1..=[`MAX_FPS`]. The result is what
/// [`VideoEncoder::finish`] makes of them, with no audio.
pub fn encode_mp4(frames: &[RgbImage], fps: u32) -> Result<Vec<u8>, MediaError> {
    let first = frames.first().ok_or_else(|| MediaError::InvalidInput("no frames to encode".into()))?;
    let (w, h) = first.dimensions();
    let mut encoder = VideoEncoder::new(w, h, fps)?;
    for (i, frame) in frames.iter().enumerate() {
        if frame.dimensions() != (w, h) {
            return Err(MediaError::InvalidInput(format!(
                "frame {i} is {}x{}, expected {w}x{h}",
                frame.width(),
                frame.height()
            )));
        }
        encoder.push(frame)?;
    }
    encoder.finish(None)
}

fn validate_encode_size(w: u32, h: u32, fps: u32) -> Result<(), MediaError> {
    if !(1..=MAX_FPS).contains(&fps) {
        return Err(MediaError::InvalidInput(format!("fps must be 1..={MAX_FPS}, got {fps}")));
    }
    // Bit tests rather than `is_multiple_of`, which is newer than the MSRV.
    if w == 0 || h == 0 || w & 1 != 0 || h & 1 != 0 {
        return Err(MediaError::InvalidInput(format!("frame size must be non-zero and even, got {w}x{h}")));
    }
    if w.max(h) > 3840 || w.min(h) > 2160 {
        return Err(MediaError::InvalidInput(format!(
            "frame size {w}x{h} exceeds the H.264 encoder limit of 3840x2160"
        )));
    }
    Ok(())
}

/// Streaming H.264 encoder: frames are pushed one at a time and compressed at
/// once, so memory holds one picture plus the compressed stream whatever the
/// length. [`VideoEncoder::finish`] muxes the MP4.
///
/// The file has one `avc1` track whose duration is exactly `frames / fps`,
/// IDR frames every [`IDR_PERIOD_SECS`] marked as sync samples (players can seek),
/// BT.709 colour tags, `moov` before `mdat` (playback starts while the file
/// downloads), and optionally an AAC track interleaved with it about once a
/// second.
pub struct VideoEncoder {
    compression: Compression,
    /// The frame being converted, as Y, Cb and Cr planes back to back.
    planes: Vec<u8>,
    width: u32,
    height: u32,
    fps: u32,
    pushed: u64,
}

/// Where pictures are compressed: on the caller's thread, or on a thread of their own while the
/// caller draws the next frame (when the job may use more than one core).
enum Compression {
    Inline(H264Stream),
    Background(Background),
    /// The compression thread failed; its error was returned once.
    Stopped,
}

impl Compression {
    fn stopped() -> MediaError {
        MediaError::Encode("the encoder failed on an earlier frame".into())
    }
}

/// A compression thread fed converted pictures through a channel of one, which hands their
/// buffers back for reuse: the pipeline holds at most three pictures whatever the clip's length.
struct Background {
    pictures: SyncSender<(Vec<u8>, i64)>,
    spent: Receiver<Vec<u8>>,
    thread: JoinHandle<Result<H264Stream, MediaError>>,
}

impl Background {
    fn start(mut stream: H264Stream) -> Result<Background, MediaError> {
        let (pictures, queued) = sync_channel::<(Vec<u8>, i64)>(1);
        let (give_back, spent) = sync_channel::<Vec<u8>>(2);
        let thread = std::thread::Builder::new()
            .name("h264".into())
            .spawn(move || {
                for (planes, frame_index) in queued {
                    stream.compress(&planes, frame_index)?;
                    // The caller may already hold enough spare buffers; then this one is freed.
                    let _ = give_back.try_send(planes);
                }
                Ok(stream)
            })
            .map_err(|e| MediaError::Encode(format!("starting the compression thread: {e}")))?;
        Ok(Background { pictures, spent, thread })
    }

    /// The thread's error once it has stopped early, or a description of how it died.
    fn failure(self) -> MediaError {
        match self.thread.join() {
            Ok(Err(e)) => e,
            Ok(Ok(_)) => MediaError::Encode("the compression thread stopped early".into()),
            Err(_) => MediaError::Encode("the compression thread panicked".into()),
        }
    }
}

impl VideoEncoder {
    /// An encoder for `width` x `height` frames (even, at most 3840x2160 or
    /// 2160x3840) at `fps` (1..=[`MAX_FPS`]).
    pub fn new(width: u32, height: u32, fps: u32) -> Result<VideoEncoder, MediaError> {
        VideoEncoder::with_settings(width, height, fps, H264Settings::default())
    }

    /// [`VideoEncoder::new`] with chosen compression settings.
    pub fn with_settings(
        width: u32,
        height: u32,
        fps: u32,
        settings: H264Settings,
    ) -> Result<VideoEncoder, MediaError> {
        validate_encode_size(width, height, fps)?;
        let stream = H264Stream::new(width, height, fps, fps * IDR_PERIOD_SECS, settings)?;
        let compression = if settings.threads > 1 {
            Compression::Background(Background::start(stream)?)
        } else {
            Compression::Inline(stream)
        };
        Ok(VideoEncoder { compression, planes: Vec::new(), width, height, fps, pushed: 0 })
    }

    /// Frames pushed so far.
    pub fn frames(&self) -> u64 {
        self.pushed
    }

    /// Compresses one frame, which must have the encoder's size.
    pub fn push(&mut self, frame: &RgbImage) -> Result<(), MediaError> {
        if frame.dimensions() != (self.width, self.height) {
            return Err(MediaError::InvalidInput(format!(
                "frame is {}x{}, expected {}x{}",
                frame.width(),
                frame.height(),
                self.width,
                self.height
            )));
        }
        let (wu, hu) = (self.width as usize, self.height as usize);
        yuv::rgb_to_i420(frame.as_raw(), wu, hu, &mut self.planes)?;
        let frame_index = i64::try_from(self.pushed).unwrap_or(i64::MAX);
        self.pushed += 1;
        match &mut self.compression {
            Compression::Inline(stream) => stream.compress(&self.planes, frame_index),
            Compression::Background(background) => {
                let spare = background.spent.try_recv().unwrap_or_default();
                let planes = std::mem::replace(&mut self.planes, spare);
                if background.pictures.send((planes, frame_index)).is_ok() {
                    return Ok(());
                }
                // The thread has stopped, and holds the reason.
                match std::mem::replace(&mut self.compression, Compression::Stopped) {
                    Compression::Background(background) => Err(background.failure()),
                    _ => Err(Compression::stopped()),
                }
            }
            Compression::Stopped => Err(Compression::stopped()),
        }
    }

    /// Muxes the MP4, with `audio` as a second track when given.
    pub fn finish(self, audio: Option<AacTrack>) -> Result<Vec<u8>, MediaError> {
        let stream = match self.compression {
            Compression::Inline(stream) => stream,
            Compression::Background(background) => {
                drop(background.pictures);
                match background.thread.join() {
                    Ok(stream) => stream?,
                    Err(_) => return Err(MediaError::Encode("the compression thread panicked".into())),
                }
            }
            Compression::Stopped => return Err(Compression::stopped()),
        };
        let CompressedStream { sps, pps, samples, delay_frames } = stream.finish()?;
        let stream = Muxing { sps, pps, samples, width: self.width, height: self.height, fps: self.fps };
        let mut file = stream.mux(audio.as_ref())?;
        mp4_boxes::tag_bt709(&mut file)?;
        if delay_frames > 0 {
            let frames: u32 = stream.samples.iter().map(|s| s.frames).sum();
            let ticks = |frames: u32| {
                frames.checked_mul(TICKS_PER_FRAME).ok_or_else(|| MediaError::InvalidInput("video too long".into()))
            };
            mp4_boxes::add_edit_list(&mut file, ticks(delay_frames)?, ticks(frames)?)?;
        }
        mp4_boxes::set_next_track_id(&mut file, if audio.is_some() { 3 } else { 2 });
        mp4_boxes::fast_start(file)
    }
}

/// A finished H.264 stream, ready for the container.
struct Muxing {
    sps: Vec<u8>,
    pps: Vec<u8>,
    samples: Vec<EncodedSample>,
    width: u32,
    height: u32,
    fps: u32,
}

impl Muxing {
    fn mux(&self, audio: Option<&AacTrack>) -> Result<Vec<u8>, MediaError> {
        let mux_err = |e: mp4::Error| MediaError::Encode(format!("MP4 mux: {e}"));
        let brand = |s: &[u8; 4]| mp4::FourCC::from(*s);
        let timescale = self.fps * TICKS_PER_FRAME;
        let config = Mp4Config {
            major_brand: brand(b"isom"),
            minor_version: 512,
            compatible_brands: vec![brand(b"isom"), brand(b"iso2"), brand(b"avc1"), brand(b"mp41")],
            // The writer converts each sample duration to movie units with integer
            // division, so only an identical movie timescale keeps mvhd/tkhd exact.
            timescale,
        };
        let mut writer = Mp4Writer::write_start(Cursor::new(Vec::new()), &config).map_err(mux_err)?;
        let (width, height) = (
            u16::try_from(self.width).map_err(|_| MediaError::InvalidInput("width too large".into()))?,
            u16::try_from(self.height).map_err(|_| MediaError::InvalidInput("height too large".into()))?,
        );
        writer
            .add_track(&TrackConfig {
                track_type: TrackType::Video,
                timescale,
                language: "und".into(),
                media_conf: MediaConfig::AvcConfig(AvcConfig {
                    width,
                    height,
                    seq_param_set: self.sps.clone(),
                    pic_param_set: self.pps.clone(),
                }),
            })
            .map_err(mux_err)?;
        if let Some(audio) = audio {
            writer.add_track(&aac_track_config(audio)?).map_err(mux_err)?;
        }

        // Interleave: before each picture, the audio frames that start before it.
        let mut audio_frames = audio.map(|a| a.frames.iter().zip(&a.durations)).into_iter().flatten().peekable();
        let audio_rate = audio.map_or(1, |a| a.sample_rate);
        let mut audio_start = 0u64;
        let mut start_time = 0u64;
        for sample in &self.samples {
            // Times compared in seconds as exact fractions: audio_start / rate < start_time / timescale.
            while let Some((bytes, &duration)) = audio_frames.next_if(|_| {
                u128::from(audio_start) * u128::from(timescale) <= u128::from(start_time) * u128::from(audio_rate)
            }) {
                write_sample(&mut writer, 2, MuxSample::audio(audio_start, duration, bytes)).map_err(mux_err)?;
                audio_start += u64::from(duration);
            }
            let duration = sample.frames * TICKS_PER_FRAME;
            let shown_after = i32::try_from(u64::from(sample.composition_offset) * u64::from(TICKS_PER_FRAME))
                .map_err(|_| MediaError::Encode("composition offset too large".into()))?;
            let picture =
                MuxSample { start_time, duration, shown_after, is_sync: sample.is_sync, bytes: &sample.bytes };
            write_sample(&mut writer, 1, picture).map_err(mux_err)?;
            start_time += u64::from(duration);
        }
        for (bytes, &duration) in audio_frames {
            write_sample(&mut writer, 2, MuxSample::audio(audio_start, duration, bytes)).map_err(mux_err)?;
            audio_start += u64::from(duration);
        }
        writer.write_end().map_err(mux_err)?;
        Ok(writer.into_writer().into_inner())
    }
}

/// One sample for the muxer: its decoding time and duration in its track's ticks, how many
/// ticks after decoding it is shown, and whether decoding may start at it.
struct MuxSample<'a> {
    start_time: u64,
    duration: u32,
    shown_after: i32,
    is_sync: bool,
    bytes: &'a [u8],
}

impl<'a> MuxSample<'a> {
    /// An audio frame: shown as decoded, and every one a sync sample.
    fn audio(start_time: u64, duration: u32, bytes: &'a [u8]) -> MuxSample<'a> {
        MuxSample { start_time, duration, shown_after: 0, is_sync: true, bytes }
    }
}

fn write_sample(writer: &mut Mp4Writer<Cursor<Vec<u8>>>, track: u32, sample: MuxSample<'_>) -> mp4::Result<()> {
    writer.write_sample(
        track,
        &Mp4Sample {
            start_time: sample.start_time,
            duration: sample.duration,
            rendering_offset: sample.shown_after,
            is_sync: sample.is_sync,
            bytes: bytes::Bytes::copy_from_slice(sample.bytes),
        },
    )
}

fn aac_track_config(audio: &AacTrack) -> Result<TrackConfig, MediaError> {
    let freq_index = match audio.sample_rate {
        48_000 => SampleFreqIndex::Freq48000,
        44_100 => SampleFreqIndex::Freq44100,
        32_000 => SampleFreqIndex::Freq32000,
        24_000 => SampleFreqIndex::Freq24000,
        22_050 => SampleFreqIndex::Freq22050,
        16_000 => SampleFreqIndex::Freq16000,
        rate => return Err(MediaError::InvalidInput(format!("no AAC muxing at {rate} Hz"))),
    };
    Ok(TrackConfig {
        track_type: TrackType::Audio,
        timescale: audio.sample_rate,
        language: "und".into(),
        media_conf: MediaConfig::AacConfig(AacConfig {
            bitrate: audio.bit_rate,
            profile: AudioObjectType::AacLowComplexity,
            freq_index,
            chan_conf: ChannelConfig::Mono,
        }),
    })
}

/// Reads the primary video track's size, duration, frame count, rate and
/// codec, the container's layout and colour tags, and the audio track's facts.
pub fn probe_mp4(bytes: &[u8]) -> Result<Mp4Info, MediaError> {
    guard_parser(|| {
        let reader = open_mp4(bytes)?;
        let track = primary_video_track(&reader)?;
        let codec = sample_entry(track)?;
        let mut audio_tracks: Vec<&Mp4Track> =
            reader.tracks().values().filter(|t| matches!(t.track_type(), Ok(TrackType::Audio))).collect();
        audio_tracks.sort_by_key(|t| t.track_id());
        let audio = match audio_tracks.first() {
            Some(track) => Some(AudioTrackInfo {
                codec: sample_entry(track)?,
                sample_rate: track.trak.mdia.mdhd.timescale,
                duration_secs: track_duration_secs(&reader, track)?,
            }),
            None => None,
        };
        Ok(Mp4Info {
            width: u32::from(track.width()),
            height: u32::from(track.height()),
            duration_secs: track_duration_secs(&reader, track)?,
            frame_count: track.sample_count(),
            fps: stream_fps(track)?,
            codec,
            fast_start: mp4_boxes::is_fast_start(bytes),
            bt709: mp4_boxes::is_tagged_bt709(bytes),
            audio,
        })
    })
}

fn sample_entry(track: &Mp4Track) -> Result<String, MediaError> {
    track
        .box_type()
        .map(|f| String::from_utf8_lossy(&f.value).into_owned())
        .map_err(|e| MediaError::Decode(format!("unsupported sample entry: {e}")))
}

/// Decodes the H.264 (`avc1`) track to RGB frames and returns them with the
/// stream's frame rate.
///
/// At most [`MAX_DECODE_FRAMES`] frames are returned (later ones are ignored);
/// a stream whose decoded frames would not fit the in-memory budget (1.5 GiB
/// of RGB) is rejected instead of truncated to a useless stub.
pub fn decode_mp4(bytes: &[u8]) -> Result<(Vec<RgbImage>, f64), MediaError> {
    guard_parser(|| decode_mp4_inner(bytes))
}

fn decode_mp4_inner(bytes: &[u8]) -> Result<(Vec<RgbImage>, f64), MediaError> {
    let mut frames: Vec<RgbImage> = Vec::new();
    let mut decoded_bytes = 0usize;
    let cap = MAX_DECODE_FRAMES as usize;
    let (_, fps) = each_frame(bytes, |frame| {
        decoded_bytes += frame.as_raw().len();
        if decoded_bytes > MAX_DECODE_BYTES {
            return Err(MediaError::InvalidInput(
                "video too large to decode in memory; use a shorter or smaller clip".into(),
            ));
        }
        frames.push(frame);
        Ok(frames.len() < cap)
    })?;
    Ok((frames, fps))
}

/// Decodes the H.264 (`avc1`) track one frame at a time, handing each to
/// `on_frame` in display order, which returns whether to go on; memory holds
/// one picture whatever the length. Returns the frames decoded and the
/// stream's frame rate.
pub fn for_each_frame(
    bytes: &[u8],
    on_frame: impl FnMut(RgbImage) -> Result<bool, MediaError>,
) -> Result<(u32, f64), MediaError> {
    guard_parser(|| each_frame(bytes, on_frame))
}

fn each_frame(
    bytes: &[u8],
    mut on_frame: impl FnMut(RgbImage) -> Result<bool, MediaError>,
) -> Result<(u32, f64), MediaError> {
    let mut reader = open_mp4(bytes)?;
    let track = primary_video_track(&reader)?;
    let avc1 = track
        .trak
        .mdia
        .minf
        .stbl
        .stsd
        .avc1
        .as_ref()
        .ok_or_else(|| MediaError::Decode("video track is not H.264 (avc1)".into()))?;
    let length_size = usize::from(avc1.avcc.length_size_minus_one & 0x03) + 1;
    let mut parameter_sets = Vec::new();
    for nal in avc1.avcc.sequence_parameter_sets.iter().chain(&avc1.avcc.picture_parameter_sets) {
        parameter_sets.extend_from_slice(&[0, 0, 0, 1]);
        parameter_sets.extend_from_slice(&nal.bytes);
    }
    let track_id = track.track_id();
    let sample_count = track.sample_count();
    let fps = stream_fps(track)?;
    // The mp4 crate allocates each sample at its declared size before reading,
    // so refuse declared sizes that cannot fit in the file.
    let stsz = &track.trak.mdia.minf.stbl.stsz;
    let file_len = bytes.len() as u64;
    if u64::from(stsz.sample_size) > file_len || stsz.sample_sizes.iter().any(|&s| u64::from(s) > file_len) {
        return Err(MediaError::Decode("sample size exceeds file size".into()));
    }

    let dec_err = |e: openh264::Error| MediaError::Decode(format!("H.264 decoder: {e}"));
    let config = DecoderConfig::new().flush_after_decode(Flush::NoFlush);
    let mut decoder = Decoder::with_api_config(OpenH264API::from_source(), config).map_err(dec_err)?;
    let mut count = 0u32;
    let mut annex_b = Vec::new();
    for sample_id in 1..=sample_count {
        let sample = reader
            .read_sample(track_id, sample_id)
            .map_err(|e| MediaError::Decode(format!("reading sample {sample_id}: {e}")))?;
        let Some(sample) = sample else {
            continue;
        };
        annex_b.clear();
        // Parameter sets live in avcC, not in the samples; the decoder needs
        // them in-band before every random-access point.
        if sample.is_sync || sample_id == 1 {
            annex_b.extend_from_slice(&parameter_sets);
        }
        length_prefixed_to_annex_b(&sample.bytes, length_size, &mut annex_b)?;
        if let Some(yuv) = decoder.decode(&annex_b).map_err(dec_err)? {
            if let Some(frame) = to_rgb(&yuv)? {
                count += 1;
                if !on_frame(frame)? {
                    return Ok((count, fps));
                }
            }
        }
    }
    for yuv in decoder.flush_remaining().map_err(dec_err)? {
        if let Some(frame) = to_rgb(&yuv)? {
            count += 1;
            if !on_frame(frame)? {
                break;
            }
        }
    }
    if count == 0 {
        return Err(MediaError::Decode("no decodable frames in video track".into()));
    }
    Ok((count, fps))
}

fn to_rgb(yuv: &DecodedYUV<'_>) -> Result<Option<RgbImage>, MediaError> {
    let (w, h) = yuv.dimensions();
    if w == 0 || h == 0 {
        return Ok(None);
    }
    let mut rgb = vec![0u8; w * h * 3];
    yuv::i420_to_rgb((yuv.y(), yuv.u(), yuv.v()), yuv.strides(), w, h, &mut rgb)?;
    let (w32, h32) = (
        u32::try_from(w).map_err(|_| MediaError::Decode("frame too wide".into()))?,
        u32::try_from(h).map_err(|_| MediaError::Decode("frame too tall".into()))?,
    );
    RgbImage::from_raw(w32, h32, rgb)
        .map(Some)
        .ok_or_else(|| MediaError::Decode("decoded frame buffer size mismatch".into()))
}

/// Rewrites MP4 length-prefixed NAL units as Annex-B start-code units.
fn length_prefixed_to_annex_b(sample: &[u8], length_size: usize, out: &mut Vec<u8>) -> Result<(), MediaError> {
    let mut rest = sample;
    while !rest.is_empty() {
        if rest.len() < length_size {
            return Err(MediaError::Decode("truncated NAL length prefix".into()));
        }
        let (prefix, tail) = rest.split_at(length_size);
        let len = prefix.iter().fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
        if len > tail.len() {
            return Err(MediaError::Decode("NAL unit overruns its sample".into()));
        }
        let (nal, tail) = tail.split_at(len);
        if !nal.is_empty() {
            out.extend_from_slice(&[0, 0, 0, 1]);
            out.extend_from_slice(nal);
        }
        rest = tail;
    }
    Ok(())
}

fn open_mp4(bytes: &[u8]) -> Result<Mp4Reader<Cursor<&[u8]>>, MediaError> {
    if bytes.is_empty() {
        return Err(MediaError::InvalidInput("empty video data".into()));
    }
    mp4_boxes::check_structure(bytes)?;
    Mp4Reader::read_header(Cursor::new(bytes), bytes.len() as u64)
        .map_err(|e| MediaError::Decode(format!("not a readable MP4: {e}")))
}

/// Lowest-id H.264 track, else the lowest-id video track of any codec.
fn primary_video_track<R: Read + Seek>(reader: &Mp4Reader<R>) -> Result<&Mp4Track, MediaError> {
    let mut video: Vec<&Mp4Track> =
        reader.tracks().values().filter(|t| matches!(t.track_type(), Ok(TrackType::Video))).collect();
    video.sort_by_key(|t| t.track_id());
    video
        .iter()
        .find(|t| t.trak.mdia.minf.stbl.stsd.avc1.is_some())
        .or_else(|| video.first())
        .copied()
        .ok_or_else(|| MediaError::Decode("MP4 has no video track".into()))
}

/// Media duration of the track, falling back to the movie header when the
/// track's own duration is unset (as in some fragmented files).
fn track_duration_secs<R>(reader: &Mp4Reader<R>, track: &Mp4Track) -> Result<f64, MediaError> {
    let mdhd = &track.trak.mdia.mdhd;
    if mdhd.timescale > 0 && mdhd.duration > 0 {
        return Ok(mdhd.duration as f64 / f64::from(mdhd.timescale));
    }
    let mvhd = &reader.moov.mvhd;
    if mvhd.timescale > 0 {
        return Ok(mvhd.duration as f64 / f64::from(mvhd.timescale));
    }
    Err(MediaError::Decode("MP4 has a zero timescale".into()))
}

/// Average frame rate from the sample timing table.
fn stream_fps(track: &Mp4Track) -> Result<f64, MediaError> {
    let timescale = track.trak.mdia.mdhd.timescale;
    let stts = &track.trak.mdia.minf.stbl.stts;
    let (count, ticks) = stts.entries.iter().fold((0u64, 0u64), |(c, t), e| {
        (c + u64::from(e.sample_count), t + u64::from(e.sample_count) * u64::from(e.sample_delta))
    });
    if timescale == 0 || count == 0 || ticks == 0 {
        return Err(MediaError::Decode("MP4 video track has no usable timing".into()));
    }
    Ok(count as f64 * f64::from(timescale) / ticks as f64)
}

/// Runs MP4 parsing behind a panic guard: the `mp4` crate still has
/// `unwrap`s on malformed tables, and uploads are untrusted.
fn guard_parser<T>(f: impl FnOnce() -> Result<T, MediaError>) -> Result<T, MediaError> {
    catch_unwind(AssertUnwindSafe(f))
        .unwrap_or_else(|_| Err(MediaError::Decode("malformed MP4 (parser aborted)".into())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::sandbox_motion_frames;

    fn clip(frames: u32) -> Vec<RgbImage> {
        sandbox_motion_frames("test clip", 9, 160, 96, frames).collect()
    }

    #[test]
    fn encode_probe_decode_roundtrip() -> Result<(), MediaError> {
        let frames = clip(24);
        let mp4 = encode_mp4(&frames, 12)?;

        let info = probe_mp4(&mp4)?;
        assert_eq!(info.codec, "avc1");
        assert_eq!((info.width, info.height), (160, 96));
        assert!((info.duration_secs - 2.0).abs() < 0.1, "duration {}", info.duration_secs);
        assert_eq!(info.frame_count, 24);

        let (decoded, fps) = decode_mp4(&mp4)?;
        assert_eq!(decoded.len(), 24);
        assert!(decoded.iter().all(|f| f.dimensions() == (160, 96)));
        assert!((fps - 12.0).abs() < 1e-6);
        // Lossy, but recognisably the same pictures.
        for (a, b) in decoded.iter().zip(&frames) {
            let err: u64 = a.as_raw().iter().zip(b.as_raw()).map(|(x, y)| u64::from(x.abs_diff(*y))).sum();
            let mean = err as f64 / a.as_raw().len() as f64;
            assert!(mean < 12.0, "mean abs error {mean}");
        }
        Ok(())
    }

    /// The stream is High profile, as social platforms expect, whether pictures are compressed
    /// on the caller's thread or beside it; both give the same bytes.
    #[test]
    fn high_profile_and_the_same_file_on_one_thread_or_two() -> Result<(), MediaError> {
        let frames = clip(30);
        let encode = |threads: usize| -> Result<Vec<u8>, MediaError> {
            let mut encoder =
                VideoEncoder::with_settings(160, 96, 24, H264Settings { threads, ..H264Settings::default() })?;
            for frame in &frames {
                encoder.push(frame)?;
            }
            encoder.finish(None)
        };
        let inline = encode(1)?;
        assert!(inline == encode(2)?, "the compression thread changed the stream");
        let avcc = inline.windows(4).position(|w| w == b"avcC").expect("an avcC box");
        // configurationVersion, then AVCProfileIndication.
        assert_eq!(inline[avcc + 5], 100, "profile_idc of High");
        assert_eq!(decode_mp4(&inline)?.0.len(), 30);
        Ok(())
    }

    /// Reordered pictures (B-frames) are shown in the order they were pushed, and the first
    /// is shown at time zero: the edit list takes the reordering delay back out.
    #[test]
    fn reordered_pictures_come_back_in_order_from_time_zero() -> Result<(), MediaError> {
        // Each frame a flat grey a step brighter than the one before, so order is readable.
        let frames: Vec<RgbImage> =
            (0..40u8).map(|i| RgbImage::from_pixel(160, 96, image::Rgb([40 + i * 4; 3]))).collect();
        let mut encoder = VideoEncoder::with_settings(160, 96, 24, H264Settings { threads: 1, ..Default::default() })?;
        for frame in &frames {
            encoder.push(frame)?;
        }
        let mp4 = encoder.finish(None)?;
        let reader = open_mp4(&mp4)?;
        let track = primary_video_track(&reader)?;
        if cfg!(feature = "x264") {
            let ctts = track.trak.mdia.minf.stbl.ctts.as_ref().expect("composition offsets for B-frames");
            assert!(ctts.entries.iter().any(|e| e.sample_offset > 0));
            let elst = track.trak.edts.as_ref().and_then(|e| e.elst.as_ref()).expect("an edit list");
            assert_eq!(elst.entries.len(), 1);
            let first_shown = ctts.entries.first().map_or(0, |e| e.sample_offset);
            assert_eq!(elst.entries[0].media_time, u64::try_from(first_shown).expect("positive offset"));
            assert_eq!(elst.entries[0].segment_duration, track.trak.tkhd.duration);
        }
        let (decoded, _) = decode_mp4(&mp4)?;
        assert_eq!(decoded.len(), 40);
        for (i, (got, want)) in decoded.iter().zip(&frames).enumerate() {
            let (g, w) = (got.get_pixel(80, 48)[1], want.get_pixel(80, 48)[1]);
            assert!(g.abs_diff(w) <= 2, "frame {i}: {g} where {w} was pushed");
        }
        Ok(())
    }

    /// A frame of the wrong size is refused on either path, and the stream goes on without it.
    #[test]
    fn a_wrong_frame_fails_on_either_path() -> Result<(), MediaError> {
        for threads in [1, 2] {
            let mut encoder =
                VideoEncoder::with_settings(160, 96, 24, H264Settings { threads, ..H264Settings::default() })?;
            encoder.push(&clip(1)[0])?;
            assert!(encoder.push(&RgbImage::new(32, 32)).is_err());
            encoder.push(&clip(1)[0])?;
            assert_eq!(probe_mp4(&encoder.finish(None)?)?.frame_count, 2);
        }
        Ok(())
    }

    #[test]
    fn container_tables_are_consistent() -> Result<(), MediaError> {
        let mp4 = encode_mp4(&clip(6), 3)?;
        let reader = open_mp4(&mp4)?;
        assert_eq!(reader.moov.mvhd.next_track_id, 2);
        let mvhd = &reader.moov.mvhd;
        assert_eq!(mvhd.duration, 2 * u64::from(mvhd.timescale));
        let track = primary_video_track(&reader)?;
        let stbl = &track.trak.mdia.minf.stbl;
        let ticks: u64 = stbl.stts.entries.iter().map(|e| u64::from(e.sample_count) * u64::from(e.sample_delta)).sum();
        assert_eq!(ticks, track.trak.mdia.mdhd.duration);
        assert_eq!(ticks, 2 * u64::from(track.trak.mdia.mdhd.timescale));
        assert_eq!(stbl.stsz.sample_count, 6);
        let offsets = stbl.stco.as_ref().map(|s| s.entries.clone()).unwrap_or_default();
        assert!(!offsets.is_empty());
        assert!(offsets.iter().all(|&o| (o as usize) < mp4.len()));
        // First sample is an IDR sync sample.
        assert!(stbl.stss.as_ref().is_some_and(|s| s.entries.first() == Some(&1)));
        // Samples are well-formed length-prefixed NAL units.
        let first = offsets[0] as usize;
        let size = stbl.stsz.sample_sizes.first().copied().unwrap_or(stbl.stsz.sample_size) as usize;
        let mut annex_b = Vec::new();
        length_prefixed_to_annex_b(&mp4[first..first + size], 4, &mut annex_b)?;
        let nal_kinds: Vec<u8> = annex_b.windows(4).filter(|w| w[..3] == [0, 0, 1]).map(|w| w[3] & 0x1f).collect();
        assert!(nal_kinds.contains(&crate::h264::NAL_IDR), "NAL units of the first sample: {nal_kinds:?}");
        Ok(())
    }

    #[test]
    fn streamed_video_with_audio_is_fast_start_tagged_and_in_step() -> Result<(), MediaError> {
        let frames = clip(36);
        let mut encoder = VideoEncoder::new(160, 96, 12)?;
        for frame in &frames {
            encoder.push(frame)?;
        }
        assert_eq!(encoder.frames(), 36);
        let tone: Vec<f32> = (0..44_100 * 3).map(|i| 0.3 * (i as f32 * 0.0627).sin()).collect();
        let mp4 = encoder.finish(Some(crate::aac::encode(&tone, 44_100)?))?;
        let info = probe_mp4(&mp4)?;
        assert!(info.fast_start && info.bt709, "{info:?}");
        assert_eq!((info.frame_count, info.fps), (36, 12.0));
        let audio = info.audio.as_ref().expect("an audio track");
        assert_eq!((audio.codec.as_str(), audio.sample_rate), ("mp4a", 44_100));
        assert!((audio.duration_secs - 3.0).abs() < 1e-9, "{audio:?}");
        // Moving moov ahead shifted every chunk offset: the pictures still decode.
        let (decoded, _) = decode_mp4(&mp4)?;
        assert_eq!(decoded.len(), 36);
        let mut seen = 0;
        for_each_frame(&mp4, |_| {
            seen += 1;
            Ok(seen < 10)
        })?;
        assert_eq!(seen, 10, "stops when asked");
        Ok(())
    }

    #[test]
    fn encode_rejects_bad_input() {
        let odd = vec![RgbImage::new(15, 10)];
        assert!(matches!(encode_mp4(&odd, 10), Err(MediaError::InvalidInput(_))));
        assert!(matches!(encode_mp4(&[], 10), Err(MediaError::InvalidInput(_))));
        let ok = vec![RgbImage::new(16, 16)];
        assert!(matches!(encode_mp4(&ok, 0), Err(MediaError::InvalidInput(_))));
        let mixed = vec![RgbImage::new(16, 16), RgbImage::new(32, 16)];
        assert!(matches!(encode_mp4(&mixed, 10), Err(MediaError::InvalidInput(_))));
    }

    #[test]
    fn a_box_overrunning_the_file_is_refused_before_the_parser_sees_it() -> Result<(), MediaError> {
        // Found by fuzzing: a moov box claiming more bytes than the file holds made the parser
        // loop forever.
        let mut mp4 = encode_mp4(&clip(4), 4)?;
        let moov = mp4.windows(4).position(|w| w == b"moov").expect("a moov box") - 4;
        let size = u32::from_be_bytes([mp4[moov], mp4[moov + 1], mp4[moov + 2], mp4[moov + 3]]);
        mp4.truncate(moov + size as usize - 9);
        let refused = mp4_boxes::check_structure(&mp4).map_err(|e| e.to_string()).unwrap_err();
        assert!(refused.contains("moov"), "{refused}");
        assert!(matches!(probe_mp4(&mp4), Err(MediaError::Decode(_))));
        assert!(decode_mp4(&mp4).is_err());
        assert!(size > 8);
        Ok(())
    }

    #[test]
    fn inputs_that_once_hung_or_exhausted_the_parser_are_refused() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions/mp4_decoder");
        let files: Vec<_> =
            std::fs::read_dir(&dir).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
        assert!(files.len() >= 3, "{dir:?}");
        for path in files {
            let bytes = std::fs::read(&path).unwrap_or_default();
            // Each once hung, allocated gigabytes or panicked inside the parser: now decoding each
            // ends promptly in an error (the probe of one, whose tables parse, may succeed).
            let _ = probe_mp4(&bytes);
            assert!(matches!(for_each_frame(&bytes, |_| Ok(true)), Err(MediaError::Decode(_))), "{path:?} decoded");
        }
    }

    #[test]
    fn decode_rejects_garbage_and_truncation() -> Result<(), MediaError> {
        assert!(probe_mp4(b"").is_err());
        assert!(decode_mp4(b"not an mp4 at all").is_err());
        let mp4 = encode_mp4(&clip(4), 4)?;
        assert!(decode_mp4(&mp4[..mp4.len() / 2]).is_err());
        Ok(())
    }
}
