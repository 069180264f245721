//! reel: up to three listing stills and the listing's details to a vertical video an agent posts
//! as it is: 1080x1920 at 30 fps, H.264 with fast start, each still framed around its subject and
//! moved with an eased push-in or pull-out, cross-fades, captions on plates inside the platforms'
//! safe zone, an end card with the agent's contact, optional voiceover and music as an AAC track,
//! plus a cover frame and the captions as SRT and WebVTT.
//!
//! Frames are drawn and encoded one at a time on two threads (drawing and encoding overlap on two
//! cores); only the compressed video grows, so memory stays bounded whatever the length.

pub mod framing;
pub mod layout;
pub mod render;
pub mod soundtrack;
pub mod subtitles;
pub mod timeline;

use crate::listing::Listing;
use crate::{blocking, decode_image, RecipeError, RecipeOutput};
use domain::limits::{CAPTION_MAX_CHARS, REEL_MAX_SECS, REEL_MIN_SECS};
use domain::reel::{ReelRequest, REEL_MAX_PHOTOS};
use domain::validation::check_input_url;
use domain::{GenerateRequest, ValidationError};
use engines::{Engines, OutputFile};
use layout::{Brand, Line, Role, HEIGHT, WIDTH};
use render::{Reel, Still};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use subtitles::Cue;
use timeline::{Timeline, FPS};

/// Length when none is asked for, seconds.
const DEFAULT_DURATION_SECS: f64 = 15.0;
/// The engines the audio comes from.
const SPEECH_ENGINE: &str = "tts";
const MUSIC_ENGINE: &str = "omicron2";
const MUSIC_PROMPT: &str = "light warm acoustic background music for a home tour";
/// JPEG quality of the cover.
const COVER_QUALITY: u8 = 90;

/// One checked still.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReelPhotoJob {
    /// The photo's URL.
    pub url: String,
    /// Its caption, trimmed.
    pub caption: Option<String>,
}

/// A checked reel request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReelJob {
    /// 1 to 3 stills.
    pub photos: Vec<ReelPhotoJob>,
    /// The details, formatted.
    pub listing: Listing,
    /// Length, seconds.
    pub duration_secs: f64,
    /// Speak a script from the details.
    pub voiceover: bool,
    /// Lay a music bed under it.
    pub music: bool,
    /// Colours.
    pub brand: Brand,
}

/// Checks a request; the error names the field.
pub fn prepare(request: ReelRequest) -> Result<ReelJob, ValidationError> {
    let count = request.photos.len();
    if count == 0 || count > REEL_MAX_PHOTOS {
        return Err(ValidationError::new("photos", format!("give 1 to {REEL_MAX_PHOTOS} photos (got {count})")));
    }
    let photos = request
        .photos
        .into_iter()
        .enumerate()
        .map(|(i, photo)| {
            let url = check_input_url(&photo.url).map_err(|m| ValidationError::new(format!("photos[{i}].url"), m))?;
            let caption = photo.caption.map(|c| c.split_whitespace().collect::<Vec<_>>().join(" "));
            if caption.as_ref().is_some_and(|c| c.chars().count() > CAPTION_MAX_CHARS) {
                return Err(ValidationError::new(
                    format!("photos[{i}].caption"),
                    format!("at most {CAPTION_MAX_CHARS} characters"),
                ));
            }
            Ok(ReelPhotoJob { url, caption: caption.filter(|c| !c.is_empty()) })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let listing = Listing::from_details(&request.details).map_err(|(field, m)| ValidationError::new(field, m))?;
    let params = request.params;
    let duration_secs = params.duration.unwrap_or(DEFAULT_DURATION_SECS);
    if !(REEL_MIN_SECS..=REEL_MAX_SECS).contains(&duration_secs) {
        return Err(ValidationError::new(
            "params.duration",
            format!("between {REEL_MIN_SECS} and {REEL_MAX_SECS} seconds"),
        ));
    }
    let mut brand = Brand::default();
    if let Some(colors) = params.brand {
        for (field, value, slot) in
            [("primary", colors.primary, &mut brand.primary), ("accent", colors.accent, &mut brand.accent)]
        {
            if let Some(value) = value {
                *slot = crate::colour::parse_hex(&value).ok_or_else(|| {
                    ValidationError::new(format!("params.brand.{field}"), "expected a colour as #RRGGBB")
                })?;
            }
        }
    }
    Ok(ReelJob {
        photos,
        listing,
        duration_secs,
        voiceover: params.voiceover.unwrap_or(false),
        music: params.music.unwrap_or(false),
        brand,
    })
}

/// Fetches and frames the stills, makes the audio on the speech and music engines when asked,
/// then draws and encodes the reel. The photos are decoded before any audio engine runs: an
/// unusable photo fails the reel before it spends anything at a provider.
pub async fn run(engines: &Engines, job: &ReelJob) -> Result<RecipeOutput, RecipeError> {
    let mut photos = Vec::with_capacity(job.photos.len());
    for (i, photo) in job.photos.iter().enumerate() {
        photos.push(engines.fetcher().fetch(&format!("photos[{i}]"), &photo.url).await?);
    }
    let (stills, crops) = blocking(move || frame_photos(photos)).await?;
    let script = job.voiceover.then(|| job.listing.script());
    // The mix cuts sound at the reel's end, so no more than a second past it is decoded.
    let audio_secs = job.duration_secs + 1.0;
    let voice = match &script {
        Some(script) => Some(engine_audio(engines, SPEECH_ENGINE, script, json!({}), audio_secs).await?),
        None => None,
    };
    let music = if job.music {
        let seconds = job.duration_secs.ceil();
        let params = json!({"duration": seconds as i64});
        Some(engine_audio(engines, MUSIC_ENGINE, MUSIC_PROMPT, params, audio_secs).await?)
    } else {
        None
    };
    let job = job.clone();
    blocking(move || {
        let audio = (voice.is_some() || music.is_some()).then(|| {
            soundtrack::mix(
                voice.as_ref().map(|(s, r)| (s.as_slice(), *r)),
                music.as_ref().map(|(s, r)| (s.as_slice(), *r)),
                f64::from(Timeline::new(job.photos.len(), job.duration_secs, job.listing.has_contact()).frames)
                    / f64::from(FPS),
            )
        });
        make(&job, stills, crops, audio, script)
    })
    .await
}

/// Runs an audio engine (local, or routed to a provider that may answer WAV or MP3 of any
/// channel count) and returns up to `max_secs` of its sound as mono samples with their rate.
async fn engine_audio(
    engines: &Engines,
    engine: &str,
    prompt: &str,
    params: Value,
    max_secs: f64,
) -> Result<(Vec<f32>, u32), RecipeError> {
    let spec = engines.catalog().get(engine).ok_or_else(|| {
        RecipeError::Failed(format!("the {engine} engine the reel's audio needs is not in the catalog"))
    })?;
    let request = GenerateRequest {
        model: engine.to_string(),
        prompt: Some(prompt.to_string()),
        image_url: None,
        video_url: None,
        audio_url: None,
        params: params.as_object().cloned(),
        ..GenerateRequest::default()
    };
    let job = spec.validate(&request).map_err(|e| RecipeError::Failed(format!("{engine}: {e}")))?;
    let output = engines.run(&job).await?;
    let file =
        output.files.into_iter().next().ok_or_else(|| RecipeError::Failed(format!("{engine} produced no audio")))?;
    media::recording::decode_recording(&file.bytes, max_secs)
        .map_err(|e| RecipeError::Failed(format!("{engine} audio: {e}")))
}

/// Decodes each fetched photo and plans its motion: the stills, and each one's crop for the result.
fn frame_photos(photos: Vec<Vec<u8>>) -> Result<(Vec<Still>, Vec<Value>), RecipeError> {
    let aspect = f64::from(WIDTH) / f64::from(HEIGHT);
    let mut stills = Vec::with_capacity(photos.len());
    let mut crops = Vec::with_capacity(photos.len());
    for (i, bytes) in photos.into_iter().enumerate() {
        // One decoded photo at a time: each is reduced to reel size before the next is read.
        let photo = decode_image(&bytes, &format!("photos[{i}]"))?.into_rgb8();
        drop(bytes);
        let motion = framing::plan(&photo, aspect, i % 2 == 1);
        crops.push(
            json!({"source": {"width": photo.width(), "height": photo.height()}, "from": motion.from, "to": motion.to}),
        );
        stills.push(Still::new(&photo, motion));
    }
    Ok((stills, crops))
}

/// Draws and encodes the reel; the CPU-bound part.
fn make(
    job: &ReelJob,
    stills: Vec<Still>,
    crops: Vec<Value>,
    audio: Option<Vec<f32>>,
    script: Option<String>,
) -> Result<RecipeOutput, RecipeError> {
    let (reel, cues, caption_boxes) = assemble(job, stills);
    let video = encode(&reel, audio.as_deref())?;
    let cover = cover(&reel)?;
    let duration = reel.timeline.duration();
    let result = json!({
        "width": WIDTH,
        "height": HEIGHT,
        "fps": FPS,
        "frames": reel.timeline.frames,
        "duration_seconds": duration,
        "audio": audio.is_some(),
        "voiceover": job.voiceover,
        "music": job.music,
        "voiceover_script": script,
        "safe_zone": layout::safe_zone(),
        "captions": caption_boxes,
        "photos": crops,
    });
    let files = vec![
        OutputFile::video(video, WIDTH, HEIGHT, duration),
        OutputFile::image(cover, "jpg", WIDTH, HEIGHT),
        OutputFile::text(subtitles::srt(&cues).into_bytes(), "srt"),
        OutputFile::text(subtitles::vtt(&cues).into_bytes(), "vtt"),
    ];
    Ok(RecipeOutput { files, result })
}

/// Draws every frame of `job`'s reel from its photos (the bytes behind its photo URLs, in
/// order) and hands each to `each` as it is drawn: the very pictures the service gives the
/// encoder, for measuring what encoding loses.
pub fn draw_frames(
    job: &ReelJob,
    photos: Vec<Vec<u8>>,
    mut each: impl FnMut(&image::RgbImage) -> Result<(), RecipeError>,
) -> Result<(), RecipeError> {
    let (stills, _) = frame_photos(photos)?;
    let (reel, _, _) = assemble(job, stills);
    for_each_frame(&reel, &mut each)
}

/// The reel to draw, its subtitle cues and its captions' boxes.
fn assemble(job: &ReelJob, stills: Vec<Still>) -> (Reel, Vec<Cue>, Vec<Value>) {
    let timeline = Timeline::new(job.photos.len(), job.duration_secs, job.listing.has_contact());
    let slot_lines = caption_lines(job);
    let plates: Vec<_> = slot_lines.iter().map(|lines| layout::caption_plate(lines, &job.brand)).collect();
    let contact = contact_lines(&job.listing);
    let (end_card, end_card_boxes) = match layout::end_card(&contact, &job.brand) {
        Some((pixmap, boxes)) if timeline.end_card => (Some(render::pixmap_to_rgb(&pixmap)), boxes),
        _ => (None, Vec::new()),
    };
    let mut cues = Vec::new();
    let mut caption_boxes = Vec::new();
    for (slot, (lines, plate)) in slot_lines.iter().zip(&plates).enumerate() {
        let Some(plate) = plate else { continue };
        let (from, until) = timeline.caption_window(slot);
        let text = lines.iter().map(|l| l.text.as_str()).collect::<Vec<_>>().join("\n");
        cues.push(Cue { start_seconds: from, end_seconds: until, text: text.clone() });
        caption_boxes.push(json!({"start_seconds": from, "end_seconds": until, "text": text, "box": plate.rect}));
    }
    if timeline.end_card && end_card.is_some() {
        let slot = timeline.slots[timeline.slots.len() - 1];
        let text = contact.iter().map(|l| l.text.as_str()).collect::<Vec<_>>().join("\n");
        cues.push(Cue { start_seconds: slot.start + 0.3, end_seconds: slot.end, text: text.clone() });
        for b in &end_card_boxes {
            caption_boxes.push(json!({"start_seconds": slot.start, "end_seconds": slot.end, "text": text, "box": b}));
        }
    }
    (Reel { stills, plates, end_card, timeline }, cues, caption_boxes)
}

/// Each still's caption: its own caption, then a share of the details (the headline and price
/// first, the facts next, the address last; what does not get a still of its own joins the last).
fn caption_lines(job: &ReelJob) -> Vec<Vec<Line>> {
    let listing = &job.listing;
    let line = |text: &Option<String>, role| text.clone().map(|text| Line { text, role });
    let cards: Vec<Vec<Line>> = [
        vec![line(&listing.headline, Role::Title), line(&listing.price, Role::Price)],
        vec![line(&listing.facts, Role::Body)],
        vec![line(&listing.address, Role::Body)],
    ]
    .into_iter()
    .map(|card| card.into_iter().flatten().collect::<Vec<_>>())
    .filter(|card| !card.is_empty())
    .collect();
    let slots = job.photos.len();
    let mut lines: Vec<Vec<Line>> = job
        .photos
        .iter()
        .map(|p| p.caption.iter().map(|c| Line { text: c.clone(), role: Role::Title }).collect())
        .collect();
    for (i, card) in cards.into_iter().enumerate() {
        lines[i.min(slots - 1)].extend(card);
    }
    lines
}

/// The end card's lines.
fn contact_lines(listing: &Listing) -> Vec<Line> {
    [(&listing.agent_name, Role::Title), (&listing.brokerage, Role::Body), (&listing.phone, Role::Price)]
        .into_iter()
        .filter_map(|(text, role)| text.clone().map(|text| Line { text, role }))
        .collect()
}

/// Draws every frame and encodes it as it is drawn; the encoder compresses on a thread of its own
/// while the next frame is drawn when the job may use more than one core.
fn encode(reel: &Reel, audio: Option<&[f32]>) -> Result<Vec<u8>, RecipeError> {
    let failed = |e: media::MediaError| RecipeError::Failed(format!("encoding the reel: {e}"));
    let aac = audio.map(|samples| media::aac::encode(samples, soundtrack::SAMPLE_RATE)).transpose().map_err(failed)?;
    let mut encoder = media::video::VideoEncoder::new(WIDTH, HEIGHT, FPS).map_err(failed)?;
    for_each_frame(reel, |frame| encoder.push(frame).map_err(failed))?;
    encoder.finish(aac).map_err(failed)
}

/// Draws the reel's frames in order into one buffer, handing each to `each`.
fn for_each_frame(
    reel: &Reel,
    mut each: impl FnMut(&image::RgbImage) -> Result<(), RecipeError>,
) -> Result<(), RecipeError> {
    let mut frame = image::RgbImage::new(WIDTH, HEIGHT);
    let mut scratch = vec![0u8; (WIDTH * HEIGHT * 3) as usize];
    for index in 0..reel.timeline.frames {
        reel.draw(reel.timeline.time_of(index), &mut frame, &mut scratch, false);
        each(&frame)?;
    }
    Ok(())
}

/// The cover: the first still with its caption fully on screen.
fn cover(reel: &Reel) -> Result<Vec<u8>, RecipeError> {
    let size = (WIDTH * HEIGHT * 3) as usize;
    let mut frame = image::RgbImage::new(WIDTH, HEIGHT);
    let mut scratch = vec![0u8; size];
    let first = reel.timeline.slots[0];
    let (from, until) = reel.timeline.caption_window(0);
    let t = ((from + until) / 2.0).clamp(first.start, first.end);
    reel.draw(t, &mut frame, &mut scratch, true);
    media::codecs::encode_jpeg(&frame, COVER_QUALITY)
        .map_err(|e| RecipeError::Failed(format!("encoding the cover: {e}")))
}
