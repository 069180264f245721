//! AAC-LC encoding of a mono track for MP4 muxing, with the pure-Rust `syom` encoder.
//!
//! An AAC decoder delays its output by one frame (1,024 samples of encoder priming). MP4 files
//! without an edit list play that delay, so the track is encoded from its 1,024th sample on: the
//! decoded audio then lines up with the pictures from the first frame, and the first 23 ms (a
//! fade-in or lead-in in every track we make) are the priming itself.

use crate::MediaError;

/// Samples per AAC-LC frame, and the encoder's priming.
pub const FRAME_SAMPLES: u32 = 1024;
/// Bit rate of the mono track, at rates where AAC-LC allows it.
const BIT_RATE: u32 = 128_000;
/// AAC-LC carries at most 6,144 bits per channel per 1,024-sample frame: 6 bits a sample.
const MAX_BITS_PER_SAMPLE: u32 = 6;

/// An encoded AAC-LC track ready to mux: raw access units with their durations.
#[derive(Clone, Debug)]
pub struct AacTrack {
    /// Sample rate, Hz.
    pub sample_rate: u32,
    /// Raw `raw_data_block`s, one per frame.
    pub frames: Vec<Vec<u8>>,
    /// Each frame's duration in samples: 1,024, except the last, trimmed so the track is exactly
    /// as long as the samples given.
    pub durations: Vec<u32>,
    /// Bit rate the encoder aimed for, bits per second.
    pub bit_rate: u32,
}

impl AacTrack {
    /// Length of the track, seconds.
    pub fn duration_secs(&self) -> f64 {
        self.durations.iter().map(|&d| f64::from(d)).sum::<f64>() / f64::from(self.sample_rate)
    }
}

/// Encodes mono samples (clamped to -1..=1) at `sample_rate` (one of AAC's rates, such as 44,100
/// or 48,000) as AAC-LC; the decoded track is exactly `samples.len()` long.
pub fn encode(samples: &[f32], sample_rate: u32) -> Result<AacTrack, MediaError> {
    let failed = |e: syom::AacError| MediaError::Encode(format!("AAC encoder: {e}"));
    let total = u32::try_from(samples.len()).map_err(|_| MediaError::InvalidInput("audio track too long".into()))?;
    if total <= FRAME_SAMPLES {
        return Err(MediaError::InvalidInput("audio track shorter than one AAC frame".into()));
    }
    let bit_rate = BIT_RATE.min(MAX_BITS_PER_SAMPLE * sample_rate);
    let options = syom::EncodeOptions::raw().with_bitrate_bps(bit_rate);
    let mut encoder = syom::Encoder::new(sample_rate, 1, &options).map_err(failed)?;
    let mut frames = Vec::with_capacity(samples.len() / FRAME_SAMPLES as usize + 2);
    let mut chunk = Vec::with_capacity(FRAME_SAMPLES as usize * 16);
    for block in samples[FRAME_SAMPLES as usize..].chunks(FRAME_SAMPLES as usize * 16) {
        chunk.clear();
        chunk.extend(block.iter().map(|s| if s.is_finite() { s.clamp(-1.0, 1.0) } else { 0.0 }));
        encoder
            .feed(&[&chunk], |frame| {
                frames.push(frame.payload.to_vec());
                Ok(())
            })
            .map_err(failed)?;
    }
    encoder
        .finish(|frame| {
            frames.push(frame.payload.to_vec());
            Ok(())
        })
        .map_err(failed)?;
    // The decoded stream is priming plus the samples given; keep exactly `total` of it.
    let mut durations = Vec::with_capacity(frames.len());
    let mut left = total;
    for _ in &frames {
        let duration = left.min(FRAME_SAMPLES);
        durations.push(duration);
        left -= duration;
    }
    while durations.last() == Some(&0) {
        durations.pop();
        frames.pop();
    }
    Ok(AacTrack { sample_rate, frames, durations, bit_rate })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_track_is_exactly_as_long_as_its_samples_and_decodes_in_place() -> Result<(), MediaError> {
        let rate = 44_100;
        // Silence, then a tone from 0.5 s: after decoding, the tone starts at 0.5 s.
        let samples: Vec<f32> =
            (0..rate * 2)
                .map(|i| {
                    if i < rate / 2 {
                        0.0
                    } else {
                        0.5 * (i as f32 / rate as f32 * 440.0 * std::f32::consts::TAU).sin()
                    }
                })
                .collect();
        let track = encode(&samples, rate)?;
        assert!((track.duration_secs() - 2.0).abs() < 1e-9, "{}", track.duration_secs());
        let mut adts = Vec::new();
        for frame in &track.frames {
            adts.extend(syom::wrap_adts_au(frame, rate, 1).map_err(|e| MediaError::Decode(e.to_string()))?);
        }
        let decoded =
            syom::decode_with(&adts, &syom::DecodeOptions::audio()).map_err(|e| MediaError::Decode(e.to_string()))?;
        let pcm = &decoded.channels[0];
        let onset = pcm.iter().position(|s| s.abs() > 0.1).unwrap_or(usize::MAX);
        let expected = (rate / 2) as usize;
        assert!(onset.abs_diff(expected) < 64, "tone starts at sample {onset}, expected {expected}");
        Ok(())
    }
}

#[cfg(test)]
mod rate_tests {
    use super::*;

    #[test]
    fn every_muxable_rate_encodes_within_what_aac_lc_allows() {
        for rate in [48_000, 44_100, 32_000, 24_000, 22_050, 16_000] {
            let samples: Vec<f32> = (0..rate).map(|i| (i as f32 * 0.05).sin() * 0.4).collect();
            let track = encode(&samples, rate).unwrap_or_else(|e| panic!("{rate} Hz: {e}"));
            assert!(track.bit_rate <= MAX_BITS_PER_SAMPLE * rate, "{rate} Hz at {}", track.bit_rate);
            assert!((track.duration_secs() - 1.0).abs() < 1e-9);
        }
    }
}
