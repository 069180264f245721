//! The kit's photos: decoded one at a time and reduced to what the pieces can use, then cropped
//! around their subject for each slot and placed at the pixels the slot needs (300 ppi in print),
//! never enlarged: a photo smaller than its slot is placed as it is, and its resolution reported.

use crate::reel::framing;
use crate::RecipeError;
use image::RgbImage;

/// What the hero must keep: the flyer's full-bleed hero at 300 ppi is 2,625 px wide (Letter),
/// the story 1,920 px tall.
const HERO_NEEDS: (u32, u32) = (2700, 1920);
/// What every other photo must keep: one strip photo alone spans the flyer's 7.5 in (2,250 px at
/// 300 ppi) and is 467 px tall.
const OTHER_NEEDS: (u32, u32) = (2250, 480);
/// JPEG quality of placed photos.
const QUALITY: u8 = 88;

/// A photo ready to place.
#[derive(Clone, Debug)]
pub struct Placed {
    /// JPEG bytes.
    pub jpeg: Vec<u8>,
    /// Pixels placed.
    pub width: u32,
    /// Pixels placed.
    pub height: u32,
}

/// Where the templates get their photos.
pub trait PhotoSlots {
    /// Photo `index` cropped to the shape of `want` (pixels) and at most that size; `None` when
    /// there is no such photo.
    fn place(&mut self, index: usize, want: (u32, u32)) -> Option<Placed>;
}

/// The decoded photos.
#[derive(Default)]
pub struct Photos {
    images: Vec<RgbImage>,
    failure: Option<String>,
}

impl Photos {
    /// Decodes the next photo (the first is the hero) and keeps it reduced to what the pieces can
    /// use, so memory holds one full-size photo at a time; the error names the photo.
    pub fn add(&mut self, bytes: Vec<u8>) -> Result<(), RecipeError> {
        let i = self.images.len();
        let image = media::codecs::decode_image(&bytes)
            .map_err(|e| RecipeError::InvalidInput(format!("photos[{i}]: not a usable PNG or JPEG image ({e})")))?;
        drop(bytes);
        self.images.push(reduce(image.into_rgb8(), if i == 0 { HERO_NEEDS } else { OTHER_NEEDS }));
        Ok(())
    }

    /// An encoding failure met while placing, if any.
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }
}

impl PhotoSlots for Photos {
    fn place(&mut self, index: usize, want: (u32, u32)) -> Option<Placed> {
        let photo = self.images.get(index)?;
        let (want_w, want_h) = (want.0.max(1), want.1.max(1));
        let frame = framing::plan(photo, f64::from(want_w) / f64::from(want_h), false).from;
        let (x, y) = (frame.x.round().max(0.0) as u32, frame.y.round().max(0.0) as u32);
        let crop_w = (frame.width.round() as u32).clamp(1, photo.width() - x.min(photo.width() - 1));
        let crop_h = (frame.height.round() as u32).clamp(1, photo.height() - y.min(photo.height() - 1));
        let crop = image::imageops::crop_imm(photo, x, y, crop_w, crop_h).to_image();
        // Never enlarge: a smaller crop is placed as it is and stretched by the renderer.
        let scale = (f64::from(want_w) / f64::from(crop_w)).min(1.0);
        let placed = if scale < 1.0 {
            media::resample::resize_rgb(
                &crop,
                want_w,
                (f64::from(crop_h) * scale).round().max(1.0) as u32,
                media::resample::Filter::CatmullRom,
            )
        } else {
            crop
        };
        match media::codecs::encode_jpeg(&placed, QUALITY) {
            Ok(jpeg) => Some(Placed { jpeg, width: placed.width(), height: placed.height() }),
            Err(e) => {
                self.failure = Some(format!("photos[{index}]: {e}"));
                None
            }
        }
    }
}

/// `image` reduced as far as it can be while still at least `needs` (width, height) wherever
/// its shape allows: any crop the pieces take keeps the pixels its slot needs.
fn reduce(image: RgbImage, needs: (u32, u32)) -> RgbImage {
    let scale = (f64::from(needs.0) / f64::from(image.width())).max(f64::from(needs.1) / f64::from(image.height()));
    if scale >= 1.0 {
        return image;
    }
    let w = (f64::from(image.width()) * scale).round().max(1.0) as u32;
    let h = (f64::from(image.height()) * scale).round().max(1.0) as u32;
    // Area averaging straight into the small picture: a filtered resize would first hold a
    // floating-point copy as wide as the original (170 MB for a 40-megapixel photo).
    image::imageops::thumbnail(&image, w, h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crops_take_the_slot_shape_and_are_never_enlarged() {
        let photo = RgbImage::from_fn(600, 400, |x, y| image::Rgb([(x % 256) as u8, (y % 256) as u8, 90]));
        let mut photos = Photos { images: vec![photo], failure: None };
        let big = photos.place(0, (2000, 1000)).unwrap();
        assert_eq!((big.width, big.height), (600, 300));
        let small = photos.place(0, (300, 300)).unwrap();
        assert_eq!((small.width, small.height), (300, 300));
        assert!(photos.place(1, (10, 10)).is_none());
        let decoded = media::codecs::decode_image(&small.jpeg).unwrap();
        assert_eq!((decoded.width(), decoded.height()), (300, 300));
    }
}
