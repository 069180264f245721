//! listing-enhance: a raw listing photo to one a listing photographer would deliver (white
//! balance, exposure, local contrast, colour, optional vertical correction), exported for where
//! it is going (MLS, web or print), with a manifest of every adjustment made.

use crate::{blocking, decode_image, RecipeError, RecipeOutput};
use domain::limits::NOTES_MAX_CHARS;
use domain::recipe::{ExportPreset, ImageFormat, ListingEnhanceRequest};
use domain::validation::check_input_url;
use domain::ValidationError;
use engines::{Engines, OutputFile};
use image::{DynamicImage, RgbImage};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// MLS uploads: long edge and file size limits most boards publish.
const MLS_LONG_EDGE: u32 = 2048;
const MLS_MAX_BYTES: usize = 3_000_000;
const WEB_LONG_EDGE: u32 = 1600;

/// A checked listing-enhance request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ListingEnhanceJob {
    /// The photo.
    pub image_url: String,
    /// Guidance from `notes` and `prompt`.
    pub notes: String,
    /// Where the result is going.
    pub preset: ExportPreset,
    /// File format.
    pub format: ImageFormat,
    /// Correct converging verticals.
    pub straighten: bool,
}

/// Checks a request and settles its export: MLS JPEG by default; `output_format: "png"` alone
/// means a full-resolution PNG.
pub fn prepare(request: ListingEnhanceRequest) -> Result<ListingEnhanceJob, ValidationError> {
    let image_url = check_input_url(&request.image_url).map_err(|m| ValidationError::new("image_url", m))?;
    let notes =
        [request.prompt, request.notes].into_iter().flatten().filter(|n| !n.trim().is_empty()).collect::<Vec<_>>();
    let notes = notes.join(". ");
    if notes.chars().count() > NOTES_MAX_CHARS {
        return Err(ValidationError::new("notes", format!("at most {NOTES_MAX_CHARS} characters")));
    }
    let params = request.params;
    let (preset, format) = match (params.preset, params.output_format) {
        (Some(ExportPreset::Mls), Some(ImageFormat::Png)) => {
            return Err(ValidationError::new(
                "params.output_format",
                "MLS exports are JPEG; use preset web or print for PNG",
            ))
        }
        (None, Some(ImageFormat::Png)) => (ExportPreset::Print, ImageFormat::Png),
        (preset, format) => (preset.unwrap_or_default(), format.unwrap_or_default()),
    };
    Ok(ListingEnhanceJob { image_url, notes, preset, format, straighten: params.straighten.unwrap_or(false) })
}

/// Fetches the photo, enhances it and exports it.
pub async fn run(engines: &Engines, job: &ListingEnhanceJob) -> Result<RecipeOutput, RecipeError> {
    let bytes = engines.fetcher().fetch("image_url", &job.image_url).await?;
    let job = job.clone();
    blocking(move || {
        let photo = decode_image(&bytes, "image_url")?;
        drop(bytes);
        let source = json!({"width": photo.width(), "height": photo.height()});
        let photo = match job.preset {
            ExportPreset::Mls => shrink_for_export(photo, MLS_LONG_EDGE),
            ExportPreset::Web => shrink_for_export(photo, WEB_LONG_EDGE),
            ExportPreset::Print => photo,
        };
        let (enhanced, adjustments) = media::enhance::enhance_listing_photo_with(&photo, &job.notes, job.straighten);
        let export = export(enhanced, job.preset, job.format)?;
        let result = json!({
            "preset": job.preset,
            "format": job.format,
            "width": export.width,
            "height": export.height,
            "bytes": export.bytes.len(),
            "source": source,
            "adjustments": adjustments,
        });
        let file = OutputFile::image(export.bytes, export.extension, export.width, export.height);
        Ok(RecipeOutput { files: vec![file], result })
    })
    .await
}

/// An encoded result.
struct Export {
    bytes: Vec<u8>,
    extension: &'static str,
    width: u32,
    height: u32,
}

/// Resizes and encodes for `preset`; MLS JPEGs step their quality down until under the size limit.
fn export(image: RgbImage, preset: ExportPreset, format: ImageFormat) -> Result<Export, RecipeError> {
    let image = match preset {
        ExportPreset::Mls => fit_long_edge(image, MLS_LONG_EDGE),
        ExportPreset::Web => fit_long_edge(image, WEB_LONG_EDGE),
        ExportPreset::Print => image,
    };
    let (width, height) = image.dimensions();
    let failed = |e: media::MediaError| RecipeError::Failed(e.to_string());
    let (bytes, extension) = match (format, preset) {
        (ImageFormat::Png, _) => (media::codecs::encode_png(&DynamicImage::ImageRgb8(image)).map_err(failed)?, "png"),
        (ImageFormat::Jpeg, ExportPreset::Mls) => {
            let mut quality = 92;
            loop {
                let bytes = media::codecs::encode_jpeg(&image, quality).map_err(failed)?;
                if bytes.len() < MLS_MAX_BYTES || quality <= 50 {
                    break (bytes, "jpg");
                }
                quality -= 6;
            }
        }
        (ImageFormat::Jpeg, ExportPreset::Web) => (media::codecs::encode_jpeg(&image, 85).map_err(failed)?, "jpg"),
        (ImageFormat::Jpeg, ExportPreset::Print) => (media::codecs::encode_jpeg(&image, 95).map_err(failed)?, "jpg"),
    };
    Ok(Export { bytes, extension, width, height })
}

/// A photo far larger than its export is first reduced by area averaging to twice the export's
/// long edge (the export's own resampling then has detail to work with): enhancing 40 megapixels
/// for a 2,048-pixel export would hold gigabytes for nothing.
fn shrink_for_export(photo: DynamicImage, long_edge: u32) -> DynamicImage {
    let (w, h) = (photo.width(), photo.height());
    let working = long_edge.saturating_mul(2);
    if w.max(h) <= working {
        return photo;
    }
    let ratio = f64::from(working) / f64::from(w.max(h));
    let (nw, nh) = (((f64::from(w) * ratio).round() as u32).max(1), ((f64::from(h) * ratio).round() as u32).max(1));
    DynamicImage::ImageRgb8(image::imageops::thumbnail(&photo.into_rgb8(), nw, nh))
}

/// Scales down (never up) so the long edge is at most `long_edge`.
fn fit_long_edge(image: RgbImage, long_edge: u32) -> RgbImage {
    let (w, h) = image.dimensions();
    if w.max(h) <= long_edge {
        return image;
    }
    let ratio = f64::from(long_edge) / f64::from(w.max(h));
    let (nw, nh) = (((f64::from(w) * ratio).round() as u32).max(1), ((f64::from(h) * ratio).round() as u32).max(1));
    media::resample::resize_rgb(&image, nw, nh, media::resample::Filter::Lanczos3)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn prepared(params: serde_json::Value) -> Result<ListingEnhanceJob, ValidationError> {
        prepare(
            serde_json::from_value(json!({"image_url": "https://e.com/a.jpg", "notes": "warmer", "params": params}))
                .unwrap(),
        )
    }

    #[test]
    fn presets_default_to_mls_jpeg() {
        let job = prepared(json!({})).unwrap();
        assert_eq!((job.preset, job.format, job.notes.as_str()), (ExportPreset::Mls, ImageFormat::Jpeg, "warmer"));
        let png = prepared(json!({"output_format": "png"})).unwrap();
        assert_eq!((png.preset, png.format), (ExportPreset::Print, ImageFormat::Png));
        assert_eq!(
            prepared(json!({"preset": "mls", "output_format": "png"})).unwrap_err().field,
            "params.output_format"
        );
    }

    #[test]
    fn mls_export_fits_the_board_limits() {
        // A noisy 3000x2000 photo: hard to compress, larger than the MLS long edge.
        let mut seed = 7u32;
        let noisy = RgbImage::from_fn(3000, 2000, |_, _| {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            image::Rgb([(seed >> 24) as u8, (seed >> 16) as u8, (seed >> 8) as u8])
        });
        let export = export(noisy, ExportPreset::Mls, ImageFormat::Jpeg).unwrap();
        assert_eq!((export.width, export.height), (2048, 1365));
        assert!(export.bytes.len() < MLS_MAX_BYTES, "{} bytes", export.bytes.len());
    }
}
