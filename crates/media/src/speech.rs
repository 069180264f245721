//! Real text-to-speech through the eSpeak NG synthesizer when it is installed (Debian package
//! `espeak-ng`; no network or model download at run time). Callers fall back to the sandbox
//! vocoder in [`crate::audio`] when it is not.

use crate::MediaError;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The synthesizer binary looked up on `PATH`.
pub const SYNTHESIZER: &str = "espeak-ng";

/// Longest a synthesis may take before the synthesizer is killed: far more than any accepted
/// prompt needs (eSpeak NG speaks a few thousand words a second), so only a hung process hits it.
pub const SYNTHESIS_DEADLINE: Duration = Duration::from_secs(60);

/// Speaking rate, words per minute: a calm narration pace.
const WORDS_PER_MINUTE: &str = "160";

/// The eSpeak NG voice for one of the catalog's `voice` values.
fn voice(name: &str) -> &'static str {
    match name {
        "warm" => "en-us+m3",
        "bright" => "en-us+f3",
        _ => "en-us",
    }
}

/// Speaks `text` with `voice_name` and returns WAV bytes, or `None` when the synthesizer is not
/// installed.
pub fn speak(text: &str, voice_name: &str) -> Option<Result<Vec<u8>, MediaError>> {
    let mut command = Command::new(SYNTHESIZER);
    command.args(["-v", voice(voice_name), "-s", WORDS_PER_MINUTE, "--stdin", "-w", "/dev/stdout"]);
    synthesize(command, text, SYNTHESIS_DEADLINE)
}

/// Runs a synthesizer `command` on `text` (sent through stdin, never the command line, so it
/// cannot be read as options) and returns what it writes; the process is killed at `deadline`.
/// `None` when the program is not installed.
fn synthesize(mut command: Command, text: &str, deadline: Duration) -> Option<Result<Vec<u8>, MediaError>> {
    let child = match command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn() {
        Ok(child) => child,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => return Some(Err(MediaError::Encode(format!("cannot start {SYNTHESIZER}: {e}")))),
    };
    Some(run(child, text, deadline))
}

fn run(mut child: std::process::Child, text: &str, deadline: Duration) -> Result<Vec<u8>, MediaError> {
    let fail = |what: &str| MediaError::Encode(format!("{SYNTHESIZER}: {what}"));
    // Writing and reading on their own threads, so neither pipe can block the deadline.
    let mut stdin = child.stdin.take().ok_or_else(|| fail("no stdin"))?;
    let text = text.to_owned();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        stdin.write_all(text.as_bytes())
    });
    let mut stdout = child.stdout.take().ok_or_else(|| fail("no stdout"))?;
    let reader = std::thread::spawn(move || {
        let mut wav = Vec::new();
        stdout.read_to_end(&mut wav).map(|_| wav)
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| fail(&e.to_string()))? {
            break status;
        }
        if started.elapsed() >= deadline {
            // Killing closes the pipes, so both threads end.
            let _ = child.kill();
            let _ = child.wait();
            return Err(fail(&format!("took longer than {} s and was stopped", deadline.as_secs_f64())));
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let wav = reader.join().map_err(|_| fail("reader crashed"))?.map_err(|e| fail(&e.to_string()))?;
    // A synthesizer that exits without reading everything closes stdin early: not an error by itself.
    let _ = writer.join();
    if !status.success() {
        return Err(fail(&format!("exited with {status}")));
    }
    Ok(wav)
}

#[cfg(test)]
mod deadline_tests {
    use super::*;

    #[test]
    fn a_synthesizer_that_hangs_is_stopped_at_the_deadline() {
        let mut hang = Command::new("sleep");
        hang.arg("30");
        let started = Instant::now();
        let result = synthesize(hang, "hello", Duration::from_millis(300)).expect("sleep is installed");
        assert!(result.unwrap_err().to_string().contains("was stopped"));
        assert!(started.elapsed() < Duration::from_secs(10));
        let mut echo = Command::new("cat");
        echo.arg("-");
        let bytes = synthesize(echo, "RIFF", Duration::from_secs(10)).unwrap().unwrap();
        assert_eq!(bytes, b"RIFF");
        assert!(synthesize(Command::new("no-such-synthesizer-here"), "x", Duration::from_secs(1)).is_none());
    }
}

/// Reads the samples of a 16-bit PCM WAV as floats, tolerating the unknown-length header a
/// synthesizer writes to a pipe.
pub fn wav_samples(wav: &[u8]) -> Result<(Vec<f32>, u32), MediaError> {
    let bad = |what: &str| MediaError::Decode(format!("speech WAV: {what}"));
    if wav.len() < 44 || &wav[0..4] != b"RIFF" || &wav[8..12] != b"WAVE" {
        return Err(bad("not a RIFF/WAVE stream"));
    }
    let mut offset = 12;
    let mut sample_rate = None;
    while offset + 8 <= wav.len() {
        let id = &wav[offset..offset + 4];
        let size = u32::from_le_bytes([wav[offset + 4], wav[offset + 5], wav[offset + 6], wav[offset + 7]]) as usize;
        let body = offset + 8;
        if id == b"fmt " {
            if body + 16 > wav.len() {
                return Err(bad("short fmt chunk"));
            }
            let channels = u16::from_le_bytes([wav[body + 2], wav[body + 3]]);
            let bits = u16::from_le_bytes([wav[body + 14], wav[body + 15]]);
            if channels != 1 || bits != 16 {
                return Err(bad("expected mono 16-bit PCM"));
            }
            sample_rate = Some(u32::from_le_bytes([wav[body + 4], wav[body + 5], wav[body + 6], wav[body + 7]]));
        } else if id == b"data" {
            let rate = sample_rate.ok_or_else(|| bad("data before fmt"))?;
            // A piped header carries a placeholder length: take what is actually there.
            let end = body.saturating_add(size).min(wav.len());
            let samples = wav[body..end]
                .chunks_exact(2)
                .map(|s| f32::from(i16::from_le_bytes([s[0], s[1]])) / f32::from(i16::MAX))
                .collect();
            return Ok((samples, rate));
        }
        offset = body.saturating_add(size).saturating_add(size % 2);
    }
    Err(bad("no data chunk"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_piped_wav_headers() {
        let mut wav = b"RIFF\xff\xff\xff\xffWAVEfmt ".to_vec();
        wav.extend_from_slice(&16u32.to_le_bytes());
        wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
        wav.extend_from_slice(&1u16.to_le_bytes()); // mono
        wav.extend_from_slice(&22_050u32.to_le_bytes());
        wav.extend_from_slice(&44_100u32.to_le_bytes());
        wav.extend_from_slice(&2u16.to_le_bytes());
        wav.extend_from_slice(&16u16.to_le_bytes());
        wav.extend_from_slice(b"data\xff\xff\xff\xff");
        wav.extend_from_slice(&[0, 0, 0xff, 0x7f, 0x01, 0x80]);
        let (samples, rate) = wav_samples(&wav).unwrap();
        assert_eq!(rate, 22_050);
        assert_eq!(samples.len(), 3);
        assert!((samples[1] - 1.0).abs() < 1e-6 && samples[2] < -0.99);
        assert!(wav_samples(b"RIFF").is_err());
    }
}
