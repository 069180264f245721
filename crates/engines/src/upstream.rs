//! Files produced at an upstream provider, taken in as our outputs: the type is read from the
//! bytes (never trusted from the provider's label), the size and length from the media itself,
//! and what was produced is counted for billing.

use crate::{EngineOutput, OutputFile};
use domain::validation::Produced;
use domain::{OutputKind, ValidatedJob};

/// What a provider's file is: its kind and format (read from its bytes), and its size or length.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FileInfo {
    /// Media kind.
    pub kind: OutputKind,
    /// File extension without the dot.
    pub extension: &'static str,
    /// Pixel width of images and videos.
    pub width: Option<u32>,
    /// Pixel height of images and videos.
    pub height: Option<u32>,
    /// Length of videos and recordings, seconds.
    pub duration_secs: Option<f64>,
}

impl FileInfo {
    /// The file with its bytes.
    pub fn with_bytes(self, bytes: Vec<u8>) -> OutputFile {
        let FileInfo { kind, extension, width, height, duration_secs } = self;
        OutputFile { bytes, kind, extension, width, height, duration_secs }
    }

    /// MIME type, such as `image/png`.
    pub fn content_type(&self) -> &'static str {
        crate::content_type_of(self.extension)
    }
}

impl OutputFile {
    /// What the file is, without its bytes.
    pub fn info(&self) -> FileInfo {
        FileInfo {
            kind: self.kind,
            extension: self.extension,
            width: self.width,
            height: self.height,
            duration_secs: self.duration_secs,
        }
    }
}

/// Reads what a downloaded file is: PNG, JPEG, WebP, MP4, WAV or MP3. Anything else, or a file
/// that does not parse as its type, is refused with the reason.
pub fn probe(bytes: &[u8]) -> Result<FileInfo, String> {
    let starts = |magic: &[u8]| bytes.starts_with(magic);
    let riff_of = |form: &[u8]| bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == form;
    let info =
        |kind, extension, width, height, duration_secs| FileInfo { kind, extension, width, height, duration_secs };
    if starts(b"\x89PNG\r\n\x1a\n") || starts(b"\xff\xd8\xff") || riff_of(b"WEBP") {
        let extension = if starts(b"\x89PNG") {
            "png"
        } else if starts(b"\xff\xd8") {
            "jpg"
        } else {
            "webp"
        };
        let (width, height) = image::ImageReader::new(std::io::Cursor::new(bytes))
            .with_guessed_format()
            .map_err(|e| e.to_string())
            .and_then(|reader| reader.into_dimensions().map_err(|e| e.to_string()))
            .map_err(|e| format!("the provider's {extension} image does not decode: {e}"))?;
        return Ok(info(OutputKind::Image, extension, Some(width), Some(height), None));
    }
    if bytes.len() >= 12 && &bytes[4..8] == b"ftyp" {
        let mp4 = media::video::probe_mp4(bytes).map_err(|e| format!("the provider's MP4 does not parse: {e}"))?;
        return Ok(info(OutputKind::Video, "mp4", Some(mp4.width), Some(mp4.height), Some(mp4.duration_secs)));
    }
    if riff_of(b"WAVE") {
        let secs =
            media::audio::wav_duration_secs(bytes).map_err(|e| format!("the provider's WAV does not parse: {e}"))?;
        return Ok(info(OutputKind::Audio, "wav", None, None, Some(secs)));
    }
    if media::recording::looks_like_mp3(bytes) {
        let secs = media::recording::mp3_duration_secs(bytes)
            .map_err(|e| format!("the provider's MP3 does not parse: {e}"))?;
        return Ok(info(OutputKind::Audio, "mp3", None, None, Some(secs)));
    }
    Err("the provider returned a file that is not PNG, JPEG, WebP, MP4, WAV or MP3".into())
}

/// A downloaded file with what it is (see [`probe`]).
pub fn output_file(bytes: Vec<u8>) -> Result<OutputFile, String> {
    Ok(probe(&bytes)?.with_bytes(bytes))
}

/// What `files` amount to for `job`'s price rule: images and pixels counted from the files,
/// seconds from the longest recording or video (the requested `duration` when the file does not
/// say), characters from the prompt.
pub fn produced(job: &ValidatedJob, files: &[FileInfo]) -> Produced {
    let images: Vec<&FileInfo> = files.iter().filter(|f| f.kind == OutputKind::Image).collect();
    let pixels = images.iter().map(|f| u64::from(f.width.unwrap_or(0)) * u64::from(f.height.unwrap_or(0))).sum();
    let stated =
        files.iter().filter_map(|f| f.duration_secs).fold(None, |m: Option<f64>, d| Some(m.map_or(d, |m| m.max(d))));
    let requested = job.params.get("duration").and_then(|d| d.as_f64().or_else(|| d.as_str()?.parse().ok()));
    let secs = stated.or(requested).unwrap_or(0.0);
    let frame_short_side = files
        .iter()
        .filter(|f| f.kind == OutputKind::Video)
        .filter_map(|f| Some(f.width?.min(f.height?)))
        .max()
        .unwrap_or(0);
    Produced {
        images: u32::try_from(images.len()).unwrap_or(u32::MAX),
        pixels,
        millis: (secs * 1000.0).round().max(0.0) as u64,
        chars: job.prompt.as_deref().map_or(0, |p| p.chars().count() as u64),
        frame_short_side,
        upscale: job.upscale(),
    }
}

/// Files of a provider's result as an engine's output (never sandbox media: a real model made them).
pub fn engine_output(job: &ValidatedJob, files: Vec<OutputFile>) -> EngineOutput {
    let infos: Vec<FileInfo> = files.iter().map(OutputFile::info).collect();
    EngineOutput { produced: produced(job, &infos), files, sandbox: false }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_come_from_the_bytes() {
        let png = media::codecs::encode_png(&image::DynamicImage::new_rgb8(3, 2)).unwrap();
        let file = output_file(png).unwrap();
        assert_eq!((file.extension, file.width, file.height), ("png", Some(3), Some(2)));
        let wav = media::audio::encode_wav(&vec![0.0; 22050], 22050).unwrap();
        let file = output_file(wav).unwrap();
        assert_eq!(file.extension, "wav");
        assert!((file.duration_secs.unwrap() - 1.0).abs() < 0.01);
        let mp3 = include_bytes!("../../media/tests/audio/speech-stereo.mp3").to_vec();
        let file = output_file(mp3).unwrap();
        assert_eq!((file.extension, file.kind), ("mp3", OutputKind::Audio));
        assert!((file.duration_secs.unwrap() - 6.19).abs() < 0.08);
        assert!(output_file(b"\xff\xfbnot really a frame".to_vec()).is_err());
        assert!(output_file(b"<html>expired</html>".to_vec()).is_err());
        assert!(output_file(b"\x89PNG\r\n\x1a\nbroken".to_vec()).is_err());
    }
}
