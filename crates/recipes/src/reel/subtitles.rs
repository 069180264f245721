//! The reel's captions as SubRip (`.srt`) and WebVTT (`.vtt`) files, with the times they are on
//! screen, for platforms that show their own captions and for accessibility.

use serde::Serialize;

/// One caption and when it shows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cue {
    /// Seconds from the start.
    pub start_seconds: f64,
    /// Seconds from the start.
    pub end_seconds: f64,
    /// The caption's lines, joined with newlines.
    pub text: String,
}

/// The cues as SubRip: numbered blocks, `HH:MM:SS,mmm` times.
pub fn srt(cues: &[Cue]) -> String {
    let mut out = String::new();
    for (i, cue) in cues.iter().enumerate() {
        out.push_str(&format!(
            "{}\n{} --> {}\n{}\n\n",
            i + 1,
            timestamp(cue.start_seconds, ','),
            timestamp(cue.end_seconds, ','),
            cue.text
        ));
    }
    out
}

/// The cues as WebVTT: a header and `HH:MM:SS.mmm` times.
pub fn vtt(cues: &[Cue]) -> String {
    let mut out = String::from("WEBVTT\n\n");
    for (i, cue) in cues.iter().enumerate() {
        out.push_str(&format!(
            "{}\n{} --> {}\n{}\n\n",
            i + 1,
            timestamp(cue.start_seconds, '.'),
            timestamp(cue.end_seconds, '.'),
            // "-->" may not appear in a WebVTT cue's text.
            cue.text.replace("-->", "->")
        ));
    }
    out
}

fn timestamp(seconds: f64, separator: char) -> String {
    let millis = (seconds.max(0.0) * 1000.0).round() as u64;
    format!(
        "{:02}:{:02}:{:02}{separator}{:03}",
        millis / 3_600_000,
        millis / 60_000 % 60,
        millis / 1000 % 60,
        millis % 1000
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_formats_carry_the_same_cues() {
        let cues = vec![
            Cue { start_seconds: 0.3, end_seconds: 4.25, text: "$525,000\n3 bd | 2 ba".into() },
            Cue { start_seconds: 62.001, end_seconds: 3725.5, text: "a --> b".into() },
        ];
        assert_eq!(
            srt(&cues),
            "1\n00:00:00,300 --> 00:00:04,250\n$525,000\n3 bd | 2 ba\n\n2\n00:01:02,001 --> 01:02:05,500\na --> b\n\n"
        );
        let vtt = vtt(&cues);
        assert!(vtt.starts_with("WEBVTT\n\n1\n00:00:00.300 --> 00:00:04.250\n$525,000\n"), "{vtt}");
        assert!(vtt.contains("a -> b"));
    }
}
