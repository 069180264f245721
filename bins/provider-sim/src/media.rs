//! Output media: real files made by the workspace's local engines, cached by what distinguishes
//! them (kind, size, length) so that thousands of jobs do not make the same file again, and
//! served under a token per output so that each URL can expire on its own.

use crate::ids::random_hex_id;
use crate::sync::lock;
use bytes::Bytes;
use domain::GenerateRequest;
use engines::Catalog;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::OnceCell;

/// Smallest and largest image side the image engine takes.
const IMAGE_SIDES: (u32, u32) = (256, 2048);
/// Image side when the input names none.
const DEFAULT_IMAGE_SIDE: u32 = 512;
/// Most images one job makes.
const MAX_IMAGES: u32 = 4;
/// Video lengths the video engine takes, seconds.
const VIDEO_SECONDS: (u32, u32) = (1, 10);
/// Video length when the input names none, seconds.
const DEFAULT_VIDEO_SECONDS: u32 = 5;
/// Frame size of every video (the engine's 360p).
const VIDEO_SIZE: (u32, u32) = (640, 360);
/// Longest text read aloud; speech is cached per kind, so a longer text would only slow the
/// first job down.
const MAX_SPEECH_CHARS: usize = 500;
/// Text read aloud when the input has none.
const DEFAULT_SPEECH: &str = "This recording comes from the provider simulator.";
/// Prompt of every generated picture and video: the cache shares files between jobs, so the
/// content must not depend on any one job.
const VISUAL_PROMPT: &str = "provider simulator output";

/// What kind of media a model produces, guessed from its name as a client's catalog would.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    Image,
    Video,
    Audio,
    /// Audio answered as MP3 (names with `mp3`): a recorded voice, stereo at 44.1 kHz, as many
    /// providers deliver speech and music.
    Mp3,
}

impl Kind {
    /// The kind of media made by the app path or model name `name`.
    pub fn of(name: &str) -> Kind {
        let name = name.to_lowercase();
        let has = |words: &[&str]| words.iter().any(|w| name.contains(w));
        if has(&["mp3"]) {
            Kind::Mp3
        } else if has(&["video", "i2v", "t2v", "kling", "veo", "luma", "wan"]) {
            Kind::Video
        } else if has(&["tts", "speech", "music", "audio", "voice"]) {
            Kind::Audio
        } else {
            Kind::Image
        }
    }

    /// File extension of this kind's media.
    pub fn extension(self) -> &'static str {
        match self {
            Kind::Image => "png",
            Kind::Video => "mp4",
            Kind::Audio => "wav",
            Kind::Mp3 => "mp3",
        }
    }

    /// MIME type of this kind's media.
    pub fn content_type(self) -> &'static str {
        engines::content_type_of(self.extension())
    }
}

/// What distinguishes one generated file from another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct MediaKey {
    /// Media kind.
    pub kind: Kind,
    /// Pixel width (0 for audio).
    pub width: u32,
    /// Pixel height (0 for audio).
    pub height: u32,
    /// Length in seconds (0 for images and speech).
    pub duration: u32,
}

/// The media a job's input asks for.
pub(crate) struct MediaRequest {
    /// Which file.
    pub key: MediaKey,
    /// How many copies (images only; otherwise 1).
    pub count: u32,
    /// Text to read aloud (speech only).
    pub text: String,
}

/// A generated file.
pub(crate) struct MediaFile {
    /// Its bytes.
    pub bytes: Bytes,
    /// Its MIME type.
    pub content_type: &'static str,
}

/// Why a file could not be made.
#[derive(Debug, thiserror::Error)]
pub(crate) enum MediaError {
    /// The engine refused or failed the job.
    #[error("media generation failed: {0}")]
    Engine(String),
}

/// Why a download is refused.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DownloadError {
    /// No such URL, or it expired.
    #[error("not found")]
    NotFound,
    /// The file could not be made.
    #[error(transparent)]
    Media(#[from] MediaError),
}

/// A media URL's token.
struct Token {
    key: MediaKey,
    text: Arc<str>,
    downloads: u64,
}

/// The media cache and the tokens that name its files.
pub(crate) struct MediaStore {
    catalog: Arc<Catalog>,
    cache: Mutex<HashMap<MediaKey, Arc<OnceCell<Arc<MediaFile>>>>>,
    tokens: Mutex<HashMap<String, Token>>,
}

impl MediaStore {
    /// An empty store using the built-in engines.
    pub fn new() -> MediaStore {
        MediaStore {
            catalog: Arc::new(Catalog::builtin()),
            cache: Mutex::new(HashMap::new()),
            tokens: Mutex::new(HashMap::new()),
        }
    }

    /// A new token naming the file `key` (read from `text` for speech); the URL path is
    /// `/media/{token}.{extension}`.
    pub fn register(&self, request: &MediaRequest) -> String {
        let token = random_hex_id();
        let entry = Token { key: request.key, text: request.text.as_str().into(), downloads: 0 };
        lock(&self.tokens).insert(token.clone(), entry);
        token
    }

    /// The file `key`, made on first use; concurrent callers wait for one generation. For speech,
    /// the first caller's `text` is what is read.
    pub async fn file(&self, key: MediaKey, text: &str) -> Result<Arc<MediaFile>, MediaError> {
        let cell = lock(&self.cache).entry(key).or_default().clone();
        let file = cell
            .get_or_try_init(|| {
                let catalog = self.catalog.clone();
                let text = text.to_string();
                async move {
                    tokio::task::spawn_blocking(move || generate(&catalog, key, &text))
                        .await
                        .map_err(|e| MediaError::Engine(format!("generation task ended: {e}")))?
                        .map(Arc::new)
                }
            })
            .await?;
        Ok(file.clone())
    }

    /// The file behind the URL file name `name` (`{token}.{extension}`); `use_up` counts a
    /// download of it. With `expire`, a URL already downloaded is not found.
    pub async fn download(&self, name: &str, expire: bool, use_up: bool) -> Result<Arc<MediaFile>, DownloadError> {
        let (token, extension) = name.rsplit_once('.').ok_or(DownloadError::NotFound)?;
        let (key, text) = {
            let mut tokens = lock(&self.tokens);
            let entry = tokens.get_mut(token).ok_or(DownloadError::NotFound)?;
            if entry.key.kind.extension() != extension || (expire && entry.downloads > 0) {
                return Err(DownloadError::NotFound);
            }
            if use_up {
                entry.downloads += 1;
            }
            (entry.key, entry.text.clone())
        };
        Ok(self.file(key, &text).await?)
    }
}

/// The media a job of `kind` with model input `input` produces.
pub(crate) fn request_for(kind: Kind, input: &Map<String, Value>) -> MediaRequest {
    match kind {
        Kind::Image => {
            let (width, height) = image_size(input);
            let count = ["num_images", "num_outputs"]
                .iter()
                .find_map(|k| input.get(*k).and_then(number))
                .map_or(1, |n| n.clamp(1.0, f64::from(MAX_IMAGES)) as u32);
            MediaRequest { key: MediaKey { kind, width, height, duration: 0 }, count, text: String::new() }
        }
        Kind::Video => {
            let duration = input.get("duration").and_then(number).map_or(DEFAULT_VIDEO_SECONDS, |d| {
                d.round().clamp(f64::from(VIDEO_SECONDS.0), f64::from(VIDEO_SECONDS.1)) as u32
            });
            let (width, height) = VIDEO_SIZE;
            MediaRequest { key: MediaKey { kind, width, height, duration }, count: 1, text: String::new() }
        }
        Kind::Audio | Kind::Mp3 => {
            let text = ["text", "prompt"]
                .iter()
                .find_map(|k| input.get(*k).and_then(Value::as_str))
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .unwrap_or(DEFAULT_SPEECH);
            let text: String = text.chars().take(MAX_SPEECH_CHARS).collect();
            MediaRequest { key: MediaKey { kind, width: 0, height: 0, duration: 0 }, count: 1, text }
        }
    }
}

/// A number given as a JSON number or as a string starting with digits (`"5"`, `"5s"`).
fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => {
            let digits: String = s.trim().chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
            digits.parse().ok()
        }
        _ => None,
    }
    .filter(|n: &f64| n.is_finite())
}

/// The picture size an input asks for: fal's `image_size` (a size or a named preset), else
/// `width`/`height`, clamped to what the image engine makes.
fn image_size(input: &Map<String, Value>) -> (u32, u32) {
    let named = |name: &str| match name {
        "square_hd" => Some((1024, 1024)),
        "square" => Some((512, 512)),
        "landscape_4_3" => Some((1024, 768)),
        "landscape_16_9" => Some((1024, 576)),
        "portrait_4_3" => Some((768, 1024)),
        "portrait_16_9" => Some((576, 1024)),
        _ => None,
    };
    let side = |map: &Map<String, Value>, key: &str| map.get(key).and_then(number);
    let (width, height) = match input.get("image_size") {
        Some(Value::String(name)) => named(name).map(|(w, h)| (Some(w.into()), Some(h.into()))),
        Some(Value::Object(size)) => Some((side(size, "width"), side(size, "height"))),
        _ => None,
    }
    .unwrap_or_else(|| (side(input, "width"), side(input, "height")));
    let clamp = |n: Option<f64>| {
        n.map_or(DEFAULT_IMAGE_SIDE, |n| n.round().clamp(f64::from(IMAGE_SIDES.0), f64::from(IMAGE_SIDES.1)) as u32)
    };
    (clamp(width), clamp(height))
}

/// A recorded voice encoded by LAME (stereo, 44.1 kHz, 96 kb/s, an ID3v2 tag, 6.2 s).
const RECORDED_MP3: &[u8] = include_bytes!("../../../crates/media/tests/audio/speech-stereo.mp3");

/// Makes the file `key` with the local engines (MP3 is a fixed recording: no local engine encodes
/// MP3). CPU-bound: runs on a blocking thread.
fn generate(catalog: &Catalog, key: MediaKey, text: &str) -> Result<MediaFile, MediaError> {
    let (engine, prompt, params) = match key.kind {
        Kind::Mp3 => return Ok(MediaFile { content_type: "audio/mpeg", bytes: Bytes::from_static(RECORDED_MP3) }),
        Kind::Image => (
            "beta-image",
            VISUAL_PROMPT,
            json!({"width": key.width, "height": key.height, "num_images": 1, "output_format": "png"}),
        ),
        Kind::Video => ("lambda-t2v", VISUAL_PROMPT, json!({"duration": key.duration, "resolution": "360p"})),
        Kind::Audio => ("tts", text, json!({})),
    };
    let spec = catalog.get(engine).ok_or_else(|| MediaError::Engine(format!("no engine {engine}")))?;
    let request: GenerateRequest = serde_json::from_value(json!({"model": engine, "prompt": prompt, "params": params}))
        .map_err(|e| MediaError::Engine(e.to_string()))?;
    let job = spec.validate(&request).map_err(|e| MediaError::Engine(e.to_string()))?;
    let output =
        engines::local::run(spec, &job, &engines::Inputs::default()).map_err(|e| MediaError::Engine(e.to_string()))?;
    let file = output.files.into_iter().next().ok_or_else(|| MediaError::Engine(format!("{engine} made no file")))?;
    if file.extension != key.kind.extension() {
        return Err(MediaError::Engine(format!("{engine} made a .{} file", file.extension)));
    }
    Ok(MediaFile { content_type: file.content_type(), bytes: Bytes::from(file.bytes) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn kinds_follow_the_model_name() {
        assert_eq!(Kind::of("fal-ai/flux-pro/v1.1-ultra"), Kind::Image);
        assert_eq!(Kind::of("fal-ai/kling-video/v2/master/text-to-video"), Kind::Video);
        assert_eq!(Kind::of("minimax/Speech-02-HD"), Kind::Audio);
        assert_eq!(Kind::of("acme/speech-mp3"), Kind::Mp3);
        assert_eq!(Kind::of("black-forest-labs/flux-schnell"), Kind::Image);
    }

    #[test]
    fn image_sizes_come_from_fal_presets_objects_or_width_and_height() {
        let size = |v: Value| request_for(Kind::Image, &input(v)).key;
        let key = size(json!({"image_size": "landscape_16_9"}));
        assert_eq!((key.width, key.height), (1024, 576));
        let key = size(json!({"image_size": {"width": 300, "height": 9000}}));
        assert_eq!((key.width, key.height), (300, 2048));
        let key = size(json!({"width": 100, "height": "640"}));
        assert_eq!((key.width, key.height), (256, 640));
        let key = size(json!({"image_size": "unknown"}));
        assert_eq!((key.width, key.height), (512, 512));
        assert_eq!(request_for(Kind::Image, &input(json!({"num_images": 9}))).count, 4);
    }

    #[test]
    fn video_lengths_are_clamped_and_read_from_strings() {
        let duration = |v: Value| request_for(Kind::Video, &input(v)).key.duration;
        assert_eq!(duration(json!({"duration": "5"})), 5);
        assert_eq!(duration(json!({"duration": "8s"})), 8);
        assert_eq!(duration(json!({"duration": 60})), 10);
        assert_eq!(duration(json!({})), 5);
    }

    #[test]
    fn speech_reads_text_or_prompt() {
        assert_eq!(request_for(Kind::Audio, &input(json!({"prompt": "hi"}))).text, "hi");
        assert_eq!(request_for(Kind::Audio, &input(json!({"text": " "}))).text, DEFAULT_SPEECH);
    }
}
