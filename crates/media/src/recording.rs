//! Recordings made elsewhere (an upstream provider's speech or music): WAV or MP3, any channel
//! count, read to mono samples or measured. Lengths come from the frames actually present, never
//! from a header's claim.

use std::io::{Cursor, ErrorKind};

use symphonia::core::audio::SampleBuffer;
use symphonia::core::codecs::{Decoder, DecoderOptions};
use symphonia::core::errors::Error as SymphoniaError;
use symphonia::core::formats::{FormatOptions, FormatReader};
use symphonia::core::io::MediaSourceStream;
use symphonia::core::meta::MetadataOptions;
use symphonia::core::probe::Hint;

use crate::audio::{decode_wav, MAX_SAMPLE_RATE};
use crate::MediaError;

/// Whether `bytes` look like an MP3 stream: an ID3v2 tag or an MPEG audio frame sync.
pub fn looks_like_mp3(bytes: &[u8]) -> bool {
    bytes.starts_with(b"ID3") || (bytes.len() >= 2 && bytes[0] == 0xff && bytes[1] & 0xe0 == 0xe0)
}

fn is_wav(bytes: &[u8]) -> bool {
    bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WAVE"
}

/// Decodes a WAV or MP3 recording to mono samples in [-1, 1] and their rate, keeping at most
/// `max_secs` of it.
pub fn decode_recording(bytes: &[u8], max_secs: f64) -> Result<(Vec<f32>, u32), MediaError> {
    if is_wav(bytes) {
        return decode_wav(bytes, max_secs);
    }
    if !looks_like_mp3(bytes) {
        return Err(MediaError::Decode("the recording is neither WAV nor MP3".into()));
    }
    let mut mp3 = Mp3::open(bytes)?;
    let limit = (max_secs.max(0.0) * f64::from(mp3.sample_rate)) as usize;
    let mut mono = Vec::new();
    let mut interleaved = None::<SampleBuffer<f32>>;
    while mono.len() < limit {
        let Some(packet) = mp3.next_packet()? else { break };
        let decoded = match mp3.decoder.decode(&packet) {
            Ok(decoded) => decoded,
            // A damaged frame is skipped, as players do; the rest still plays.
            Err(SymphoniaError::DecodeError(_)) => continue,
            Err(e) => return Err(mp3_error(e)),
        };
        let spec = *decoded.spec();
        let channels = spec.channels.count().max(1);
        let buffer = match &mut interleaved {
            Some(buffer) if buffer.capacity() >= decoded.capacity() * channels => buffer,
            slot => slot.insert(SampleBuffer::new(decoded.capacity() as u64, spec)),
        };
        buffer.copy_interleaved_ref(decoded);
        let frames = buffer.samples().chunks_exact(channels).map(|frame| frame.iter().sum::<f32>() / channels as f32);
        mono.extend(frames.map(|s| if s.is_finite() { s.clamp(-1.0, 1.0) } else { 0.0 }).take(limit - mono.len()));
    }
    if mono.is_empty() && limit > 0 {
        return Err(MediaError::Decode("MP3: no frame decodes".into()));
    }
    Ok((mono, mp3.sample_rate))
}

/// Length in seconds of an MP3 recording, summed over its frames (which are parsed, not decoded;
/// the first is decoded to show the stream is audio).
pub fn mp3_duration_secs(bytes: &[u8]) -> Result<f64, MediaError> {
    let mut mp3 = Mp3::open(bytes)?;
    let mut frames = 0u64;
    let mut checked = false;
    while let Some(packet) = mp3.next_packet()? {
        if !checked {
            mp3.decoder.decode(&packet).map_err(mp3_error)?;
            checked = true;
        }
        frames += packet.dur;
    }
    if frames == 0 {
        return Err(MediaError::Decode("MP3: no audio frame".into()));
    }
    Ok(frames as f64 / f64::from(mp3.sample_rate))
}

/// An MP3 stream opened for reading: its frames, their decoder and their rate.
struct Mp3 {
    reader: Box<dyn FormatReader>,
    decoder: Box<dyn Decoder>,
    track: u32,
    sample_rate: u32,
}

impl Mp3 {
    fn open(bytes: &[u8]) -> Result<Mp3, MediaError> {
        let source = MediaSourceStream::new(Box::new(Cursor::new(bytes.to_vec())), Default::default());
        let mut hint = Hint::new();
        hint.with_extension("mp3");
        let probed = symphonia::default::get_probe()
            .format(&hint, source, &FormatOptions::default(), &MetadataOptions::default())
            .map_err(mp3_error)?;
        let reader = probed.format;
        let track = reader.default_track().ok_or_else(|| MediaError::Decode("MP3: no audio track".into()))?;
        let sample_rate = track.codec_params.sample_rate.unwrap_or(0);
        if sample_rate == 0 || sample_rate > MAX_SAMPLE_RATE {
            return Err(MediaError::Decode(format!("MP3: unusable sample rate {sample_rate} Hz")));
        }
        let decoder = symphonia::default::get_codecs()
            .make(&track.codec_params, &DecoderOptions::default())
            .map_err(mp3_error)?;
        Ok(Mp3 { track: track.id, reader, decoder, sample_rate })
    }

    /// The next frame of the audio track, or `None` at the end of the stream.
    fn next_packet(&mut self) -> Result<Option<symphonia::core::formats::Packet>, MediaError> {
        loop {
            match self.reader.next_packet() {
                Ok(packet) if packet.track_id() == self.track => return Ok(Some(packet)),
                Ok(_) => continue,
                Err(SymphoniaError::IoError(e)) if e.kind() == ErrorKind::UnexpectedEof => return Ok(None),
                Err(e) => return Err(mp3_error(e)),
            }
        }
    }
}

fn mp3_error(error: SymphoniaError) -> MediaError {
    MediaError::Decode(format!("MP3: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Speech from eSpeak NG encoded by LAME: stereo, 44.1 kHz, 96 kb/s, with an ID3v2 tag;
    /// 6.19 s of sound.
    const SPEECH_MP3: &[u8] = include_bytes!("../tests/audio/speech-stereo.mp3");

    #[test]
    fn mp3_is_measured_and_decoded_to_mono() {
        assert!(looks_like_mp3(SPEECH_MP3));
        let secs = mp3_duration_secs(SPEECH_MP3).unwrap();
        assert!((secs - 6.19).abs() < 0.08, "{secs}");
        let (samples, rate) = decode_recording(SPEECH_MP3, 60.0).unwrap();
        assert_eq!(rate, 44_100);
        assert!((samples.len() as f64 / 44_100.0 - secs).abs() < 0.08, "{}", samples.len());
        // Speech, not silence: a loud part and quiet gaps between words.
        let peak = samples.iter().fold(0.0f32, |m, s| m.max(s.abs()));
        assert!(peak > 0.2, "{peak}");
        let (short, _) = decode_recording(SPEECH_MP3, 1.5).unwrap();
        assert_eq!(short.len(), 66_150);
    }

    #[test]
    fn wav_of_any_layout_decodes_and_other_bytes_are_refused() {
        let wav = crate::audio::encode_wav(&vec![0.25; 8000], 8000).unwrap();
        let (samples, rate) = decode_recording(&wav, 10.0).unwrap();
        assert_eq!((samples.len(), rate), (8000, 8000));
        assert!(decode_recording(b"<html>expired</html>", 10.0).is_err());
        assert!(mp3_duration_secs(b"ID3\x04\x00\x00\x00\x00\x00\x00").is_err());
        let mut cut = SPEECH_MP3[..SPEECH_MP3.len() / 2].to_vec();
        cut.extend_from_slice(&[0u8; 64]);
        let half = mp3_duration_secs(&cut).unwrap();
        assert!(half > 2.0 && half < 4.0, "a cut stream is as long as what is left: {half}");
    }
}
