//! The reel's sound: the voiceover placed after a short lead-in, the music bed under it, ducked
//! while the voice speaks and faded at both ends, mixed to one track the reel's exact length.

/// Sample rate of the reel's audio track (AAC at 44.1 kHz).
pub const SAMPLE_RATE: u32 = 44_100;
/// The voice starts this long after the pictures.
const VOICE_LEAD_IN_SECS: f64 = 0.4;
/// Peak level the voice is normalised to.
const VOICE_PEAK: f32 = 0.89;
/// Music level alone, and under the voice.
const MUSIC_LEVEL: f32 = 0.45;
const MUSIC_DUCKED: f32 = 0.14;
/// How fast the music's gain follows the voice: quick down, slower back up, seconds.
const DUCK_ATTACK_SECS: f32 = 0.05;
const DUCK_RELEASE_SECS: f32 = 0.3;
/// The voice detector: its time constants, and the level above which the voice speaks.
const DETECT_ATTACK_SECS: f32 = 0.005;
const DETECT_RELEASE_SECS: f32 = 0.08;
const VOICE_PRESENT: f32 = 0.02;
/// Fades of the music at the start and the end, and of a voice cut at the end, seconds.
const MUSIC_FADE_IN_SECS: f64 = 0.5;
const FADE_OUT_SECS: f64 = 1.2;

/// Mixes `voice` and `music` (each samples with their rate) into a mono track of `duration`
/// seconds at [`SAMPLE_RATE`].
pub fn mix(voice: Option<(&[f32], u32)>, music: Option<(&[f32], u32)>, duration: f64) -> Vec<f32> {
    let len = (duration * f64::from(SAMPLE_RATE)).round() as usize;
    let mut out = vec![0.0f32; len];
    let lead_in = (VOICE_LEAD_IN_SECS * f64::from(SAMPLE_RATE)) as usize;
    let mut voice_track = vec![0.0f32; len];
    if let Some((samples, rate)) = voice {
        let resampled = media::audio::resample_linear(samples, rate, SAMPLE_RATE);
        let peak = resampled.iter().fold(0.0f32, |m, s| m.max(s.abs()));
        let gain = if peak > 0.0 { VOICE_PEAK / peak } else { 0.0 };
        for (dst, src) in voice_track.iter_mut().skip(lead_in).zip(resampled) {
            *dst = src * gain;
        }
        fade_out(&mut voice_track, FADE_OUT_SECS * 0.5);
    }
    if let Some((samples, rate)) = music {
        let mut bed = media::audio::resample_linear(samples, rate, SAMPLE_RATE);
        bed.resize(len, 0.0);
        let peak = bed.iter().fold(0.0f32, |m, s| m.max(s.abs()));
        let normalise = if peak > 0.0 { 1.0 / peak } else { 0.0 };
        let attack = smoothing(DUCK_ATTACK_SECS);
        let release = smoothing(DUCK_RELEASE_SECS);
        let (detect_attack, detect_release) = (smoothing(DETECT_ATTACK_SECS), smoothing(DETECT_RELEASE_SECS));
        let (mut detector, mut gain) = (0.0f32, MUSIC_LEVEL);
        let fade_in = (MUSIC_FADE_IN_SECS * f64::from(SAMPLE_RATE)) as usize;
        for (i, (o, m)) in out.iter_mut().zip(&bed).enumerate() {
            // A fast peak detector says whether the voice speaks; the music's gain then glides
            // down quickly and back up slowly.
            let level = voice_track[i].abs();
            detector += (level - detector) * if level > detector { detect_attack } else { detect_release };
            let target = if detector > VOICE_PRESENT { MUSIC_DUCKED } else { MUSIC_LEVEL };
            gain += (target - gain) * if target < gain { attack } else { release };
            let ramp = if i < fade_in { i as f32 / fade_in as f32 } else { 1.0 };
            *o = m * normalise * gain * ramp;
        }
        fade_out(&mut out, FADE_OUT_SECS);
    }
    for (o, v) in out.iter_mut().zip(&voice_track) {
        *o = (*o + v).clamp(-1.0, 1.0);
    }
    out
}

/// One-pole smoothing coefficient for a time constant.
fn smoothing(secs: f32) -> f32 {
    1.0 - (-1.0 / (secs * SAMPLE_RATE as f32)).exp()
}

fn fade_out(samples: &mut [f32], secs: f64) {
    let n = ((secs * f64::from(SAMPLE_RATE)) as usize).min(samples.len());
    let len = samples.len();
    for (i, s) in samples[len - n..].iter_mut().enumerate() {
        *s *= 1.0 - i as f32 / n as f32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tone(freq: f32, secs: f32, rate: u32) -> Vec<f32> {
        (0..(secs * rate as f32) as usize)
            .map(|i| (i as f32 / rate as f32 * freq * std::f32::consts::TAU).sin())
            .collect()
    }

    fn rms(samples: &[f32]) -> f32 {
        (samples.iter().map(|s| s * s).sum::<f32>() / samples.len().max(1) as f32).sqrt()
    }

    #[test]
    fn music_ducks_under_the_voice_and_the_track_has_the_reel_length() {
        let voice = tone(220.0, 2.0, 22_050);
        let music = tone(440.0, 10.0, 22_050);
        let track = mix(Some((&voice, 22_050)), Some((&music, 22_050)), 6.0);
        assert_eq!(track.len(), 6 * 44_100);
        let window = |from: f32, to: f32| &track[(from * 44_100.0) as usize..(to * 44_100.0) as usize];
        let music_alone = mix(None, Some((&music, 22_050)), 6.0);
        let alone = |from: f32, to: f32| rms(&music_alone[(from * 44_100.0) as usize..(to * 44_100.0) as usize]);
        // Under the voice the music is ducked to about a third; after it, back to its level.
        assert!(alone(1.0, 2.0) > 0.25, "{}", alone(1.0, 2.0));
        assert!(rms(window(1.0, 2.0)) > alone(1.0, 2.0), "the voice is heard");
        assert!((alone(3.5, 4.5) - rms(window(3.5, 4.5))).abs() < 0.01, "no voice, no ducking");
        assert!(track.iter().all(|s| s.abs() <= 1.0));
        // The end fades to silence.
        assert!(track[track.len() - 10..].iter().all(|s| s.abs() < 0.01));
    }

    #[test]
    fn resampling_keeps_length_and_pitch() {
        let up = media::audio::resample_linear(&tone(440.0, 1.0, 22_050), 22_050, 44_100);
        assert!((up.len() as i64 - 44_100).abs() <= 2);
        let crossings = up.windows(2).filter(|w| w[0] < 0.0 && w[1] >= 0.0).count();
        assert!((439..=441).contains(&crossings), "{crossings}");
    }
}
