//! Audio: WAV I/O and deterministic synthesis (sandbox music and a
//! speech-like placeholder) for the local engines.

use std::f64::consts::{PI, TAU};
use std::io::Cursor;

use crate::seed::{fnv1a64, prompt_seed, Rng};
use crate::MediaError;

/// Longest audio the synthesizers produce; longer requests are truncated.
pub const MAX_SYNTH_SECS: f64 = 600.0;

/// Highest sample rate the synthesizers accept; above it they return an empty
/// buffer rather than allocate unbounded memory.
pub const MAX_SAMPLE_RATE: u32 = 192_000;

/// Encodes mono samples in [-1, 1] as 16-bit PCM WAV in memory.
///
/// Out-of-range samples are clipped and NaNs become silence, so a buggy
/// generator yields a playable file instead of an error.
pub fn encode_wav(samples: &[f32], sample_rate: u32) -> Result<Vec<u8>, MediaError> {
    if sample_rate == 0 {
        return Err(MediaError::InvalidInput("sample rate must be positive".into()));
    }
    let spec =
        hound::WavSpec { channels: 1, sample_rate, bits_per_sample: 16, sample_format: hound::SampleFormat::Int };
    let enc_err = |e: hound::Error| MediaError::Encode(format!("WAV: {e}"));
    let mut cursor = Cursor::new(Vec::with_capacity(44 + samples.len() * 2));
    {
        let mut writer = hound::WavWriter::new(&mut cursor, spec).map_err(enc_err)?;
        let mut pcm = writer.get_i16_writer(
            u32::try_from(samples.len())
                .map_err(|_| MediaError::InvalidInput("too many samples for a WAV file".into()))?,
        );
        for &s in samples {
            let s = if s.is_nan() { 0.0 } else { s.clamp(-1.0, 1.0) };
            pcm.write_sample((s * f32::from(i16::MAX)).round() as i16);
        }
        pcm.flush().map_err(enc_err)?;
        writer.finalize().map_err(enc_err)?;
    }
    Ok(cursor.into_inner())
}

/// Duration in seconds of a WAV file (any channel count or sample format).
pub fn wav_duration_secs(bytes: &[u8]) -> Result<f64, MediaError> {
    let reader = hound::WavReader::new(Cursor::new(bytes)).map_err(|e| MediaError::Decode(format!("WAV: {e}")))?;
    let rate = reader.spec().sample_rate;
    if rate == 0 {
        return Err(MediaError::Decode("WAV header has a zero sample rate".into()));
    }
    Ok(f64::from(reader.duration()) / f64::from(rate))
}

/// Decodes a WAV recording (any channel count, 8 to 32-bit integer or float samples) to mono
/// samples in [-1, 1], reading at most `max_secs` of it. The length comes from the samples
/// actually present, never from the header (a 44-byte file may claim gigabytes).
pub fn decode_wav(bytes: &[u8], max_secs: f64) -> Result<(Vec<f32>, u32), MediaError> {
    let bad = |e: hound::Error| MediaError::Decode(format!("WAV: {e}"));
    let mut reader = hound::WavReader::new(Cursor::new(bytes)).map_err(bad)?;
    let spec = reader.spec();
    if spec.sample_rate == 0 || spec.sample_rate > MAX_SAMPLE_RATE || spec.channels == 0 {
        return Err(MediaError::Decode(format!(
            "WAV: unusable format ({} Hz, {} channels)",
            spec.sample_rate, spec.channels
        )));
    }
    let channels = usize::from(spec.channels);
    let limit = (max_secs.max(0.0) * f64::from(spec.sample_rate)) as usize * channels;
    // What the file really holds bounds the buffer, whatever the header says.
    let present = bytes.len() / usize::from(spec.bits_per_sample / 8).max(1);
    let mut interleaved = Vec::with_capacity(limit.min(present));
    match spec.sample_format {
        hound::SampleFormat::Float => {
            for sample in reader.samples::<f32>().take(limit) {
                match sample {
                    Ok(s) => interleaved.push(if s.is_finite() { s.clamp(-1.0, 1.0) } else { 0.0 }),
                    Err(_) => break, // A truncated file ends where its data ends.
                }
            }
        }
        hound::SampleFormat::Int => {
            let scale = 1.0 / (1u64 << (spec.bits_per_sample.clamp(1, 32) - 1)) as f32;
            for sample in reader.samples::<i32>().take(limit) {
                match sample {
                    Ok(s) => interleaved.push(s as f32 * scale),
                    Err(_) => break,
                }
            }
        }
    }
    let mono = interleaved.chunks_exact(channels).map(|frame| frame.iter().sum::<f32>() / channels as f32).collect();
    Ok((mono, spec.sample_rate))
}

/// Linear-interpolation resampling from `from` to `to` Hz; adequate for speech and for the
/// exact 2:1 steps between the engines' rates and the muxed track's.
pub fn resample_linear(samples: &[f32], from: u32, to: u32) -> Vec<f32> {
    if from == to || samples.is_empty() || from == 0 || to == 0 {
        return samples.to_vec();
    }
    let ratio = f64::from(from) / f64::from(to);
    let len = (samples.len() as f64 / ratio).floor() as usize;
    (0..len)
        .map(|i| {
            let pos = i as f64 * ratio;
            let i0 = (pos.floor() as usize).min(samples.len() - 1);
            let i1 = (i0 + 1).min(samples.len() - 1);
            let t = (pos - i0 as f64) as f32;
            samples[i0] * (1.0 - t) + samples[i1] * t
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Music
// ---------------------------------------------------------------------------

/// Deterministic synthesized music for `prompt` + `seed` (sandbox stand-in for
/// a text-to-music model).
///
/// Tempo, key, mode and chord progression come from a stable hash of the
/// inputs, nudged by mood words ("calm", "sad", "dance", ...). Voices: a
/// plucked bass, a detuned pad playing the chords, a melody that favours
/// chord tones on strong beats, and optional soft drums, each with ADSR
/// envelopes; the mix is peak-normalised below full scale. Duration is capped
/// at [`MAX_SYNTH_SECS`]; a zero/invalid duration or sample rate (or one above
/// [`MAX_SAMPLE_RATE`]) yields an empty buffer.
pub fn synthesize_music(prompt: &str, seed: u64, duration_secs: f64, sample_rate: u32) -> Vec<f32> {
    if duration_secs.is_nan() || duration_secs <= 0.0 || sample_rate == 0 || sample_rate > MAX_SAMPLE_RATE {
        return Vec::new();
    }
    let sr = f64::from(sample_rate);
    let total = (duration_secs.min(MAX_SYNTH_SECS) * sr).round() as usize;
    if total == 0 {
        return Vec::new();
    }
    let plan = MusicPlan::new(prompt, seed);
    let mut mix = vec![0.0f64; total];
    let mut rng = Rng::new(prompt_seed(prompt, seed) ^ 0x006d_7573_6963);
    let beat = 60.0 / plan.tempo;
    let bar = 4.0 * beat;
    let end = total as f64 / sr;
    let mut bar_index = 0usize;
    let mut melody_degree: i32 = 7 + 2 * rng.index(2) as i32;

    while (bar_index as f64) * bar < end {
        let t0 = bar_index as f64 * bar;
        let chord_degree = plan.progression[bar_index % plan.progression.len()];
        let chord: Vec<i32> = [0, 2, 4].iter().map(|d| chord_degree + d).collect();

        // Pad: the triad an octave above the key root, held through the bar.
        for &d in &chord {
            let note = Note { start: t0, length: bar, freq: midi_to_hz(plan.degree_to_midi(d) + 12), amp: 0.09 };
            render_note(&mut mix, sr, &note, Adsr::new(0.35 * beat, 0.5 * beat, 0.75, 0.6 * beat), Voice::Pad);
        }

        // Bass: chord root two octaves down, on the chosen rhythm.
        for &(offset, len) in plan.bass_pattern {
            let note = Note {
                start: t0 + offset * beat,
                length: len * beat,
                freq: midi_to_hz(plan.degree_to_midi(chord_degree) - 12),
                amp: 0.32,
            };
            render_note(&mut mix, sr, &note, Adsr::new(0.005, 0.18, 0.45, 0.08), Voice::Bass);
        }

        // Melody: eighth-note grid, random walk over the scale; downbeats snap
        // to chord tones so it sounds harmonised rather than random.
        let mut pos: f64 = 0.0;
        while pos < 4.0 {
            let len = if rng.chance(0.45) { 1.0 } else { 0.5 };
            if !rng.chance(plan.rest_probability) {
                melody_degree = (melody_degree + rng.index(5) as i32 - 2).clamp(3, 14);
                if pos.fract() == 0.0 {
                    melody_degree = nearest_chord_tone(melody_degree, &chord);
                }
                let note = Note {
                    start: t0 + pos * beat,
                    length: len * beat * 0.9,
                    freq: midi_to_hz(plan.degree_to_midi(melody_degree) + 12),
                    amp: 0.2,
                };
                render_note(&mut mix, sr, &note, Adsr::new(0.012, 0.12, 0.6, 0.12), Voice::Lead);
            }
            pos += len;
        }

        if plan.drums {
            for b in 0..4 {
                let t = t0 + f64::from(b) * beat;
                if b % 2 == 0 {
                    render_kick(&mut mix, sr, t);
                }
                render_hat(&mut mix, sr, t + 0.5 * beat, &mut rng);
            }
        }
        bar_index += 1;
    }

    finish(&mut mix, sr, 0.89, 1.5)
}

/// Musical choices derived from the prompt hash.
struct MusicPlan {
    tempo: f64,
    root_midi: i32,
    scale: &'static [i32; 7],
    progression: &'static [i32],
    bass_pattern: &'static [(f64, f64)],
    rest_probability: f64,
    drums: bool,
}

const MAJOR: [i32; 7] = [0, 2, 4, 5, 7, 9, 11];
const MINOR: [i32; 7] = [0, 2, 3, 5, 7, 8, 10];
const MAJOR_PROGRESSIONS: [&[i32]; 4] = [&[0, 4, 5, 3], &[0, 5, 3, 4], &[0, 3, 4, 3], &[5, 3, 0, 4]];
const MINOR_PROGRESSIONS: [&[i32]; 4] = [&[0, 5, 2, 6], &[0, 3, 4, 0], &[0, 6, 5, 6], &[0, 3, 6, 2]];
/// (beat offset, length in beats) per bar.
const BASS_PATTERNS: [&[(f64, f64)]; 3] =
    [&[(0.0, 1.5), (2.0, 1.5)], &[(0.0, 0.9), (1.5, 0.5), (2.0, 0.9), (3.0, 0.9)], &[(0.0, 3.5)]];

impl MusicPlan {
    fn new(prompt: &str, seed: u64) -> Self {
        let mut rng = Rng::new(prompt_seed(prompt, seed));
        let lower = prompt.to_lowercase();
        let has = |words: &[&str]| words.iter().any(|w| lower.contains(w));
        let calm = has(&["calm", "ambient", "slow", "sleep", "relax", "chill", "lofi", "lo-fi"]);
        let energetic = has(&["dance", "energetic", "upbeat", "fast", "party", "rock", "epic", "action"]);
        let dark = has(&["sad", "dark", "melanchol", "minor", "night", "rain", "tense", "horror"]);
        let bright = has(&["happy", "bright", "joy", "sunny", "major", "cheer"]);

        let mut tempo = rng.range(78.0, 128.0);
        if calm {
            tempo = rng.range(62.0, 84.0);
        } else if energetic {
            tempo = rng.range(118.0, 140.0);
        }
        let minor = if dark {
            true
        } else if bright {
            false
        } else {
            rng.chance(0.45)
        };
        let (scale, progression) = if minor {
            (&MINOR, MINOR_PROGRESSIONS[rng.index(MINOR_PROGRESSIONS.len())])
        } else {
            (&MAJOR, MAJOR_PROGRESSIONS[rng.index(MAJOR_PROGRESSIONS.len())])
        };
        let bass_pattern = if calm { BASS_PATTERNS[2] } else { BASS_PATTERNS[rng.index(BASS_PATTERNS.len())] };
        Self {
            tempo,
            root_midi: 48 + rng.index(12) as i32,
            scale,
            progression,
            bass_pattern,
            rest_probability: if calm { 0.45 } else { rng.range(0.1, 0.3) },
            drums: !calm && (energetic || rng.chance(0.7)),
        }
    }

    /// MIDI note of a (possibly negative or multi-octave) scale degree.
    fn degree_to_midi(&self, degree: i32) -> i32 {
        let octave = degree.div_euclid(7);
        let step = degree.rem_euclid(7) as usize;
        self.root_midi + 12 * octave + self.scale[step]
    }
}

fn nearest_chord_tone(degree: i32, chord: &[i32]) -> i32 {
    let mut best = degree;
    let mut best_dist = i32::MAX;
    for &c in chord {
        // Compare within the octave band around `degree`.
        for candidate in [c - 7, c, c + 7, c + 14] {
            let d = (candidate - degree).abs();
            if d < best_dist {
                best_dist = d;
                best = candidate;
            }
        }
    }
    best
}

fn midi_to_hz(midi: i32) -> f64 {
    440.0 * 2f64.powf(f64::from(midi - 69) / 12.0)
}

struct Note {
    start: f64,
    length: f64,
    freq: f64,
    amp: f64,
}

#[derive(Clone, Copy)]
enum Voice {
    Bass,
    Pad,
    Lead,
}

/// Attack/decay/sustain/release envelope; times in seconds.
#[derive(Clone, Copy)]
struct Adsr {
    attack: f64,
    decay: f64,
    sustain: f64,
    release: f64,
}

impl Adsr {
    fn new(attack: f64, decay: f64, sustain: f64, release: f64) -> Self {
        Self { attack: attack.max(1e-4), decay: decay.max(1e-4), sustain, release: release.max(1e-4) }
    }

    /// Level at time `t` after note-on for a note held `held` seconds.
    fn level(&self, t: f64, held: f64) -> f64 {
        let sustained = |t: f64| {
            if t < self.attack {
                t / self.attack
            } else if t < self.attack + self.decay {
                1.0 - (1.0 - self.sustain) * (t - self.attack) / self.decay
            } else {
                self.sustain
            }
        };
        if t < held {
            sustained(t)
        } else {
            // Release from wherever the envelope was at note-off.
            let from = sustained(held);
            (from * (1.0 - (t - held) / self.release)).max(0.0)
        }
    }
}

fn render_note(mix: &mut [f64], sr: f64, note: &Note, env: Adsr, voice: Voice) {
    let first = (note.start * sr).round() as usize;
    let len = ((note.length + env.release) * sr).round() as usize;
    let last = (first + len).min(mix.len());
    if first >= last {
        return;
    }
    for (i, out) in mix[first..last].iter_mut().enumerate() {
        let t = i as f64 / sr;
        let level = env.level(t, note.length);
        if level <= 0.0 {
            continue;
        }
        let f = note.freq;
        let s = match voice {
            Voice::Bass => (TAU * f * t).sin() + 0.3 * (TAU * 2.0 * f * t).sin() + 0.1 * (TAU * 3.0 * f * t).sin(),
            Voice::Pad => {
                // Two slightly detuned stacks give a slow chorus shimmer.
                let mut acc = 0.0;
                for detune in [0.997, 1.003] {
                    let fd = f * detune;
                    acc += (TAU * fd * t).sin() + 0.4 * (TAU * 2.0 * fd * t).sin() + 0.15 * (TAU * 3.0 * fd * t).sin();
                }
                0.5 * acc
            }
            Voice::Lead => {
                // Delayed vibrato, like a player settling into the note.
                let vib = 1.0 + 0.004 * (TAU * 5.5 * t).sin() * (t / 0.2).min(1.0);
                let phase = TAU * f * vib * t;
                phase.sin() + (3.0 * phase).sin() / 9.0 + (5.0 * phase).sin() / 25.0
            }
        };
        *out += note.amp * level * s;
    }
}

fn render_kick(mix: &mut [f64], sr: f64, start: f64) {
    let first = (start * sr).round() as usize;
    let len = (0.3 * sr) as usize;
    let last = (first + len).min(mix.len());
    if first >= last {
        return;
    }
    let mut phase = 0.0;
    for (i, out) in mix[first..last].iter_mut().enumerate() {
        let t = i as f64 / sr;
        let freq = 45.0 + 75.0 * (-t / 0.04).exp();
        phase += TAU * freq / sr;
        *out += 0.35 * (-t / 0.12).exp() * phase.sin();
    }
}

fn render_hat(mix: &mut [f64], sr: f64, start: f64, rng: &mut Rng) {
    let first = (start * sr).round() as usize;
    let len = (0.05 * sr) as usize;
    let last = (first + len).min(mix.len());
    if first >= last {
        return;
    }
    let mut prev = 0.0;
    for (i, out) in mix[first..last].iter_mut().enumerate() {
        let t = i as f64 / sr;
        let noise = rng.range(-1.0, 1.0);
        // First difference tilts white noise towards the treble.
        *out += 0.05 * (-t / 0.015).exp() * (noise - prev);
        prev = noise;
    }
}

/// Fades the ends (no clicks) and normalises the peak to `peak`.
fn finish(mix: &mut [f64], sr: f64, peak: f64, fade_out_secs: f64) -> Vec<f32> {
    let n = mix.len();
    let fade_in = ((0.01 * sr) as usize).min(n / 2);
    let fade_out = ((fade_out_secs * sr) as usize).min(n / 10).max(fade_in);
    for (i, v) in mix.iter_mut().take(fade_in).enumerate() {
        *v *= i as f64 / fade_in as f64;
    }
    for (i, v) in mix.iter_mut().rev().take(fade_out).enumerate() {
        *v *= i as f64 / fade_out as f64;
    }
    let max = mix.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let gain = if max > 1e-9 { peak / max } else { 0.0 };
    mix.iter().map(|v| (v * gain) as f32).collect()
}

// ---------------------------------------------------------------------------
// Speech placeholder
// ---------------------------------------------------------------------------

/// Speech-like placeholder audio for `text`: a **sandbox vocoder, not
/// intelligible speech**.
///
/// No TTS model is available offline, so this only mimics the sound of talking
/// so pipelines and players can be exercised end to end: each word becomes
/// syllables of a glottal pulse train shaped by three formant resonators
/// picked from the word's vowels, with noise bursts for consonants, a falling
/// pitch contour (rising before `?`) and pauses between words (longer at
/// punctuation). Roughly 0.35 s per word, at least 0.5 s; deterministic for a
/// given text. Words beyond [`MAX_SYNTH_SECS`] worth are dropped, and a zero or
/// over-[`MAX_SAMPLE_RATE`] sample rate yields an empty buffer.
pub fn synthesize_speech_sandbox(text: &str, sample_rate: u32) -> Vec<f32> {
    if sample_rate == 0 || sample_rate > MAX_SAMPLE_RATE {
        return Vec::new();
    }
    let sr = f64::from(sample_rate);
    let words: Vec<&str> = text.split_whitespace().filter(|w| w.chars().any(char::is_alphanumeric)).collect();
    let mut rng = Rng::new(fnv1a64(text.as_bytes()));
    let base_f0 = rng.range(105.0, 135.0);

    let mut segments: Vec<Segment> = vec![Segment::silence(0.06)];
    let mut elapsed = 0.06;
    for (index, word) in words.iter().enumerate() {
        let word_segments = plan_word(word, index, words.len(), base_f0, &mut rng);
        let word_secs: f64 = word_segments.iter().map(|s| s.secs).sum();
        if elapsed + word_secs > MAX_SYNTH_SECS {
            break;
        }
        elapsed += word_secs;
        segments.extend(word_segments);
    }
    let total: f64 = segments.iter().map(|s| s.secs).sum();
    if total < 0.5 {
        segments.push(Segment::silence(0.5 - total));
    }

    let mut out = render_speech(&segments, sr, &mut rng);
    finish(&mut out, sr, 0.8, 0.02)
}

/// Articulation of one stretch of time.
#[derive(Clone, Copy, Debug)]
enum Sound {
    Silence,
    /// Pulse train through formants (vowels, nasals, liquids).
    Voiced {
        formants: [f64; 3],
        gain: f64,
    },
    /// Band-passed noise, optionally with quiet voicing underneath (z, v).
    Noise {
        centre: f64,
        bandwidth: f64,
        gain: f64,
        voiced: bool,
    },
}

#[derive(Clone, Copy, Debug)]
struct Segment {
    secs: f64,
    sound: Sound,
    /// Pitch at the start and end of the segment, in Hz.
    f0: (f64, f64),
}

impl Segment {
    fn silence(secs: f64) -> Self {
        Self { secs, sound: Sound::Silence, f0: (0.0, 0.0) }
    }
}

/// One letter's articulation class.
#[derive(Clone, Copy, Debug)]
enum Phone {
    Vowel([f64; 3]),
    Sonorant([f64; 3]),
    Fricative { centre: f64, bandwidth: f64, voiced: bool },
    Plosive { burst: f64 },
}

/// Schwa formants, used where no better vowel is known.
const NEUTRAL_VOWEL: [f64; 3] = [500.0, 1500.0, 2500.0];

fn classify(c: char) -> Phone {
    match c {
        'a' => Phone::Vowel([730.0, 1090.0, 2440.0]),
        'e' => Phone::Vowel([530.0, 1840.0, 2480.0]),
        'i' | 'y' => Phone::Vowel([300.0, 2250.0, 3000.0]),
        'o' => Phone::Vowel([570.0, 840.0, 2410.0]),
        'u' => Phone::Vowel([320.0, 870.0, 2240.0]),
        'm' | 'n' => Phone::Sonorant([280.0, 1000.0, 2200.0]),
        'l' => Phone::Sonorant([360.0, 1300.0, 2700.0]),
        'r' => Phone::Sonorant([420.0, 1300.0, 1600.0]),
        'w' => Phone::Sonorant([300.0, 650.0, 2200.0]),
        's' | 'c' | 'x' => Phone::Fricative { centre: 5500.0, bandwidth: 3000.0, voiced: false },
        'z' => Phone::Fricative { centre: 5000.0, bandwidth: 3000.0, voiced: true },
        'f' | 'h' => Phone::Fricative { centre: 2500.0, bandwidth: 4000.0, voiced: false },
        'v' => Phone::Fricative { centre: 2500.0, bandwidth: 4000.0, voiced: true },
        'j' => Phone::Fricative { centre: 2800.0, bandwidth: 1500.0, voiced: true },
        'p' | 'b' => Phone::Plosive { burst: 900.0 },
        't' | 'd' => Phone::Plosive { burst: 3500.0 },
        'k' | 'g' | 'q' => Phone::Plosive { burst: 2000.0 },
        // Digits and non-Latin letters are spoken as a neutral vowel.
        _ => Phone::Vowel(NEUTRAL_VOWEL),
    }
}

/// Turns one word into timed segments (including the pause after it).
fn plan_word(word: &str, index: usize, count: usize, base_f0: f64, rng: &mut Rng) -> Vec<Segment> {
    let letters: Vec<char> = word.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect();
    let phones: Vec<Phone> = letters.iter().map(|&c| classify(c)).collect();
    let voiced_secs = (0.12 + 0.03 * letters.len() as f64).clamp(0.18, 0.5);

    // Syllables: consonant onset + vowel nucleus; trailing consonants are the
    // last syllable's coda.
    let mut syllables: Vec<(Vec<Phone>, Vec<Phone>, Vec<Phone>)> = Vec::new();
    let mut onset = Vec::new();
    let mut nucleus = Vec::new();
    for &p in &phones {
        match p {
            Phone::Vowel(_) => nucleus.push(p),
            _ if !nucleus.is_empty() => {
                syllables.push((std::mem::take(&mut onset), std::mem::take(&mut nucleus), Vec::new()));
                onset.push(p);
            }
            _ => onset.push(p),
        }
    }
    if !nucleus.is_empty() {
        syllables.push((onset, nucleus, Vec::new()));
    } else if let Some(last) = syllables.last_mut() {
        last.2 = onset;
    } else {
        // No vowel at all ("hmm", "brr"): voice it on a neutral vowel.
        syllables.push((onset, vec![Phone::Vowel(NEUTRAL_VOWEL)], Vec::new()));
    }

    let question = word.ends_with('?');
    let sentence_end = word.ends_with(['.', '!', '?']);
    let clause_end = word.ends_with([',', ';', ':']);
    // Declination across the utterance plus a little per-word variety.
    let progress = if count > 1 { index as f64 / (count - 1) as f64 } else { 0.0 };
    let word_f0 = base_f0 * (1.05 - 0.12 * progress) * rng.range(0.96, 1.04);
    let f0_at = |x: f64| {
        let fall = 1.06 - 0.14 * x;
        let rise = if question { 1.0 + 0.35 * x * x } else { 1.0 };
        word_f0 * fall * rise
    };

    let syllable_secs = voiced_secs / syllables.len() as f64;
    let mut segments = Vec::new();
    let mut t = 0.0;
    for (onset, nucleus, coda) in &syllables {
        let consonants = onset.len() + coda.len();
        let consonant_secs = (0.045 * consonants as f64).min(0.45 * syllable_secs);
        let per_consonant = if consonants > 0 { consonant_secs / consonants as f64 } else { 0.0 };
        let vowel_secs = syllable_secs - consonant_secs;
        for &p in onset {
            push_consonant(&mut segments, p, per_consonant, &mut t, voiced_secs, &f0_at);
        }
        // Blend the nucleus vowels into one formant target (diphthongs).
        let mut formants = [0.0; 3];
        for p in nucleus {
            if let Phone::Vowel(f) = p {
                for k in 0..3 {
                    formants[k] += f[k] / nucleus.len() as f64;
                }
            }
        }
        segments.push(Segment {
            secs: vowel_secs,
            sound: Sound::Voiced { formants, gain: 1.0 },
            f0: (f0_at(t / voiced_secs), f0_at((t + vowel_secs) / voiced_secs)),
        });
        t += vowel_secs;
        for &p in coda {
            push_consonant(&mut segments, p, per_consonant, &mut t, voiced_secs, &f0_at);
        }
    }
    let pause = if sentence_end {
        0.32
    } else if clause_end {
        0.2
    } else {
        0.08
    };
    segments.push(Segment::silence(pause));
    segments
}

fn push_consonant(
    segments: &mut Vec<Segment>,
    phone: Phone,
    secs: f64,
    t: &mut f64,
    word_secs: f64,
    f0_at: &impl Fn(f64) -> f64,
) {
    let f0 = (f0_at(*t / word_secs), f0_at((*t + secs) / word_secs));
    match phone {
        Phone::Vowel(formants) | Phone::Sonorant(formants) => {
            segments.push(Segment { secs, sound: Sound::Voiced { formants, gain: 0.5 }, f0 })
        }
        Phone::Fricative { centre, bandwidth, voiced } => {
            segments.push(Segment { secs, sound: Sound::Noise { centre, bandwidth, gain: 0.35, voiced }, f0 })
        }
        Phone::Plosive { burst } => {
            // Closure silence, then a short release burst.
            segments.push(Segment::silence(secs * 0.6));
            segments.push(Segment {
                secs: secs * 0.4,
                sound: Sound::Noise { centre: burst, bandwidth: 1500.0, gain: 0.6, voiced: false },
                f0,
            });
        }
    }
    *t += secs;
}

/// RBJ constant-peak band-pass biquad: unity gain at the centre frequency
/// keeps formant levels predictable whatever the frequency.
#[derive(Clone, Copy, Default)]
struct BandPass {
    b0: f64,
    b2: f64,
    a1: f64,
    a2: f64,
    x1: f64,
    x2: f64,
    y1: f64,
    y2: f64,
}

impl BandPass {
    fn tune(&mut self, centre: f64, bandwidth: f64, sr: f64) {
        let centre = centre.clamp(20.0, 0.45 * sr);
        let w0 = TAU * centre / sr;
        let q = (centre / bandwidth.max(1.0)).max(0.3);
        let alpha = w0.sin() / (2.0 * q);
        let a0 = 1.0 + alpha;
        self.b0 = alpha / a0;
        self.b2 = -alpha / a0;
        self.a1 = -2.0 * w0.cos() / a0;
        self.a2 = (1.0 - alpha) / a0;
    }

    fn process(&mut self, x: f64) -> f64 {
        let y = self.b0 * x + self.b2 * self.x2 - self.a1 * self.y1 - self.a2 * self.y2;
        self.x2 = self.x1;
        self.x1 = x;
        self.y2 = self.y1;
        self.y1 = y;
        y
    }
}

/// Rosenberg glottal pulse shape over one period (`phase` in [0, 1)).
fn glottal_pulse(phase: f64) -> f64 {
    const OPEN: f64 = 0.4;
    const CLOSE: f64 = 0.16;
    if phase < OPEN {
        0.5 * (1.0 - (PI * phase / OPEN).cos())
    } else if phase < OPEN + CLOSE {
        (PI * (phase - OPEN) / (2.0 * CLOSE)).cos()
    } else {
        0.0
    }
}

fn render_speech(segments: &[Segment], sr: f64, rng: &mut Rng) -> Vec<f64> {
    const FORMANT_GAINS: [f64; 3] = [1.0, 0.55, 0.3];
    const FORMANT_BANDWIDTHS: [f64; 3] = [90.0, 110.0, 160.0];
    let total: usize = segments.iter().map(|s| (s.secs * sr).round() as usize).sum();
    let mut out = Vec::with_capacity(total);
    let mut formant_filters = [BandPass::default(); 3];
    let mut noise_filter = BandPass::default();
    let mut current = [500.0, 1500.0, 2500.0];
    // ~15 ms glide between formant targets, as articulators cannot jump.
    let glide = 1.0 - (-1.0 / (0.015 * sr)).exp();
    let ramp = (0.006 * sr).max(1.0);
    let mut phase = 0.0;
    let mut prev_pulse = 0.0;
    // One-pole low-pass on the source gives the natural downward spectral
    // tilt of a voice; without it the pulse train sounds buzzy.
    let tilt = 1.0 - (-TAU * 2500.0 / sr).exp();
    let mut source = 0.0;

    for seg in segments {
        let n = (seg.secs * sr).round() as usize;
        if let Sound::Noise { centre, bandwidth, .. } = seg.sound {
            noise_filter.tune(centre, bandwidth, sr);
        }
        for i in 0..n {
            let x = if n > 1 { i as f64 / (n - 1) as f64 } else { 0.0 };
            let env = (i as f64 / ramp).min((n - i) as f64 / ramp).min(1.0);
            let f0 = seg.f0.0 + (seg.f0.1 - seg.f0.0) * x;
            let voicing = match seg.sound {
                Sound::Voiced { .. } | Sound::Noise { voiced: true, .. } if f0 > 0.0 => {
                    phase += f0 / sr;
                    phase -= phase.floor();
                    let pulse = glottal_pulse(phase);
                    // Differentiating models radiation at the lips.
                    let d = (pulse - prev_pulse) * sr / (f0 * 8.0);
                    prev_pulse = pulse;
                    source += (d - source) * tilt;
                    source
                }
                _ => {
                    prev_pulse = 0.0;
                    0.0
                }
            };
            if let Sound::Voiced { formants, .. } = seg.sound {
                for k in 0..3 {
                    current[k] += (formants[k] - current[k]) * glide;
                }
            }
            if i % 32 == 0 {
                for k in 0..3 {
                    formant_filters[k].tune(current[k], FORMANT_BANDWIDTHS[k], sr);
                }
            }
            let breath = 0.04 * rng.range(-1.0, 1.0);
            let sample = match seg.sound {
                Sound::Silence => 0.0,
                Sound::Voiced { gain, .. } => {
                    let src = voicing + breath;
                    let mut acc = 0.0;
                    for (k, filter) in formant_filters.iter_mut().enumerate() {
                        acc += FORMANT_GAINS[k] * filter.process(src);
                    }
                    gain * acc
                }
                Sound::Noise { gain, voiced, .. } => {
                    let hiss = noise_filter.process(rng.range(-1.0, 1.0));
                    let buzz = if voiced { 0.3 * formant_filters[0].process(voicing) } else { 0.0 };
                    gain * (hiss + buzz)
                }
            };
            out.push(sample * env);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wav_roundtrip_and_duration() -> Result<(), MediaError> {
        let samples: Vec<f32> = (0..8000).map(|i| (i as f32 * 0.05).sin() * 0.5).collect();
        let wav = encode_wav(&samples, 8000)?;
        assert_eq!(wav.len(), 44 + 8000 * 2);
        assert!((wav_duration_secs(&wav)? - 1.0).abs() < 1e-9);
        let mut reader = hound::WavReader::new(Cursor::new(&wav)).map_err(|e| MediaError::Decode(e.to_string()))?;
        let back: Vec<i16> = reader.samples::<i16>().filter_map(Result::ok).collect();
        assert_eq!(back.len(), 8000);
        assert_eq!(back[100], (samples[100] * 32767.0).round() as i16);
        // Clipping and NaN are tolerated.
        assert!(encode_wav(&[2.0, -3.0, f32::NAN], 16000).is_ok());
        assert!(encode_wav(&samples, 0).is_err());
        assert!(wav_duration_secs(b"RIFF garbage").is_err());
        Ok(())
    }

    fn rms(x: &[f32]) -> f64 {
        (x.iter().map(|v| f64::from(*v) * f64::from(*v)).sum::<f64>() / x.len().max(1) as f64).sqrt()
    }

    #[test]
    fn music_is_deterministic_normalised_and_prompt_sensitive() {
        let a = synthesize_music("upbeat synth pop", 3, 2.0, 16000);
        assert_eq!(a.len(), 32000);
        assert_eq!(a, synthesize_music("upbeat synth pop", 3, 2.0, 16000));
        let peak = a.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        assert!(peak <= 0.9 && peak > 0.5, "peak {peak}");
        assert!(rms(&a) > 0.05, "music should not be near-silent");
        let b = synthesize_music("sad rainy piano", 3, 2.0, 16000);
        assert_ne!(a, b);
        assert_ne!(a, synthesize_music("upbeat synth pop", 4, 2.0, 16000));
        assert!(synthesize_music("x", 1, 0.0, 16000).is_empty());
        assert!(synthesize_music("x", 1, f64::NAN, 16000).is_empty());
        assert!(synthesize_music("x", 1, 1.0, 0).is_empty());
    }

    #[test]
    fn speech_sandbox_timing_and_determinism() -> Result<(), MediaError> {
        let sr = 16000;
        let text = "hello there this is a sandbox voice";
        let a = synthesize_speech_sandbox(text, sr);
        assert_eq!(a, synthesize_speech_sandbox(text, sr));
        let secs = a.len() as f64 / f64::from(sr);
        assert!((secs - 7.0 * 0.35).abs() < 0.6, "duration {secs}");
        assert!(rms(&a) > 0.02);
        assert!(a.iter().all(|v| v.is_finite() && v.abs() <= 0.81));
        assert_ne!(a, synthesize_speech_sandbox("completely different words here now", sr));
        // Floor of half a second, even for empty text.
        let empty = synthesize_speech_sandbox("", sr);
        assert!(empty.len() >= sr as usize / 2);
        let one = synthesize_speech_sandbox("hi", sr);
        assert!(one.len() >= sr as usize / 2);
        // Longer text, longer audio.
        assert!(synthesize_speech_sandbox("one two three four five six seven eight", sr).len() > a.len());
        let wav = encode_wav(&a, sr)?;
        assert!((wav_duration_secs(&wav)? - secs).abs() < 1e-6);
        Ok(())
    }
}
