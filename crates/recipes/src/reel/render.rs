//! Drawing one reel frame: each still sampled at sub-pixel precision through its moving frame,
//! cross-fades, caption plates faded in and out, and the end card.
//!
//! Every still is cropped to its widest frame and resampled once (Lanczos) so that frame is
//! exactly the reel's size; the moving frame is never larger, so per-frame sampling only ever
//! magnifies, which bilinear interpolation does without the shimmer of minifying.

use super::framing::{Frame, Motion};
use super::layout::{Plate, HEIGHT, WIDTH};
use super::timeline::Timeline;
use image::RgbImage;
use media::resample::{resize_rgb, resize_window_into, Filter};

/// A still ready to be filmed: resampled so its widest frame is the reel's size.
pub struct Still {
    image: RgbImage,
    motion: Motion,
}

impl Still {
    /// Crops `photo` to the widest frame of `motion` (plus a pixel of margin for interpolation)
    /// and resamples it to the reel's size.
    pub fn new(photo: &RgbImage, motion: Motion) -> Still {
        let wide = if motion.from.width >= motion.to.width { motion.from } else { motion.to };
        let scale = f64::from(HEIGHT) / wide.height;
        let (pw, ph) = (f64::from(photo.width()), f64::from(photo.height()));
        let x0 = (wide.x - 1.0).floor().max(0.0);
        let y0 = (wide.y - 1.0).floor().max(0.0);
        let x1 = (wide.x + wide.width + 1.0).ceil().min(pw);
        let y1 = (wide.y + wide.height + 1.0).ceil().min(ph);
        let crop =
            image::imageops::crop_imm(photo, x0 as u32, y0 as u32, (x1 - x0) as u32, (y1 - y0) as u32).to_image();
        let out_w = (((x1 - x0) * scale).round() as u32).max(1);
        let out_h = (((y1 - y0) * scale).round() as u32).max(1);
        let filter = if scale < 1.0 { Filter::Lanczos3 } else { Filter::CatmullRom };
        let image = resize_rgb(&crop, out_w, out_h, filter);
        // The motion in the resampled image's pixels.
        let sx = f64::from(out_w) / (x1 - x0);
        let sy = f64::from(out_h) / (y1 - y0);
        let map =
            |f: Frame| Frame { x: (f.x - x0) * sx, y: (f.y - y0) * sy, width: f.width * sx, height: f.height * sy };
        Still { image, motion: Motion { from: map(motion.from), to: map(motion.to) } }
    }

    /// Samples the still through its frame at `progress` (0 to 1) into `out` (RGB, reel size).
    fn film(&self, progress: f64, out: &mut [u8]) {
        let frame = self.motion.from.lerp(&self.motion.to, progress);
        resize_window_into(
            &self.image,
            (frame.x, frame.y, frame.width, frame.height),
            out,
            (WIDTH, HEIGHT),
            Filter::Bilinear,
        );
    }
}

/// Everything needed to draw any frame of one reel.
pub struct Reel {
    /// The stills, in slot order.
    pub stills: Vec<Still>,
    /// Each still's caption plate.
    pub plates: Vec<Option<Plate>>,
    /// The closing card (reel-sized RGB), when there is one.
    pub end_card: Option<RgbImage>,
    /// When each piece shows.
    pub timeline: Timeline,
}

impl Reel {
    /// Draws the frame at `t` seconds into `out` (RGB, reel size); `scratch` is a second buffer
    /// of the same size, used during cross-fades. `captions_at_full` forces every caption on
    /// screen to full opacity (for the cover).
    pub fn draw(&self, t: f64, out: &mut [u8], scratch: &mut [u8], captions_at_full: bool) {
        let shot = self.timeline.shot(t);
        self.draw_piece(shot.current, t, out);
        if let Some((outgoing, weight)) = shot.outgoing {
            self.draw_piece(outgoing, t, scratch);
            // Integer blend in 1/256ths: a float round per byte costs a libm call per sample.
            let w = (weight.clamp(0.0, 1.0) * 256.0).round() as u32;
            for (o, &s) in out.iter_mut().zip(scratch.iter()) {
                *o = ((u32::from(*o) * w + u32::from(s) * (256 - w) + 128) >> 8) as u8;
            }
        }
        for (slot, plate) in self.plates.iter().enumerate() {
            let Some(plate) = plate else { continue };
            let opacity =
                if captions_at_full && slot == shot.current { 1.0 } else { self.timeline.caption_opacity(slot, t) };
            if opacity > 0.0 {
                overlay(out, plate, opacity as f32);
            }
        }
    }

    fn draw_piece(&self, slot: usize, t: f64, out: &mut [u8]) {
        match self.stills.get(slot) {
            Some(still) => still.film(self.timeline.progress(slot, t), out),
            None => match &self.end_card {
                Some(card) => out.copy_from_slice(card),
                None => out.fill(0),
            },
        }
    }
}

/// Composites a premultiplied plate over the RGB frame at `opacity`.
fn overlay(out: &mut [u8], plate: &Plate, opacity: f32) {
    let (pw, ph) = (plate.pixmap.width() as usize, plate.pixmap.height() as usize);
    let (left, top) = (plate.rect.x.round() as usize, plate.rect.y.round() as usize);
    let data = plate.pixmap.data();
    for y in 0..ph {
        let oy = top + y;
        if oy >= HEIGHT as usize {
            break;
        }
        for x in 0..pw {
            let ox = left + x;
            if ox >= WIDTH as usize {
                break;
            }
            let p = &data[(y * pw + x) * 4..(y * pw + x) * 4 + 4];
            let alpha = f32::from(p[3]) / 255.0 * opacity;
            if alpha <= 0.0 {
                continue;
            }
            let o = &mut out[(oy * WIDTH as usize + ox) * 3..(oy * WIDTH as usize + ox) * 3 + 3];
            for c in 0..3 {
                o[c] = (f32::from(o[c]) * (1.0 - alpha) + f32::from(p[c]) * opacity).round().clamp(0.0, 255.0) as u8;
            }
        }
    }
}

/// A premultiplied, opaque pixmap as RGB.
pub fn pixmap_to_rgb(pixmap: &tiny_skia::Pixmap) -> RgbImage {
    let rgb: Vec<u8> = pixmap.data().chunks_exact(4).flat_map(|p| [p[0], p[1], p[2]]).collect();
    RgbImage::from_raw(pixmap.width(), pixmap.height(), rgb).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::super::framing::plan;
    use super::*;
    use image::Rgb;

    #[test]
    fn filming_is_smooth_between_frames() {
        // A fine checkerboard is the worst case for shimmer: consecutive frames of a slow push-in
        // must differ little and evenly.
        let photo = RgbImage::from_fn(2400, 1600, |x, y| {
            if (x / 8 + y / 8) % 2 == 0 {
                Rgb([220, 220, 220])
            } else {
                Rgb([40, 40, 40])
            }
        });
        let still = Still::new(&photo, plan(&photo, 9.0 / 16.0, false));
        assert!(still.image.height() >= HEIGHT && still.image.height() <= HEIGHT + 2);
        let size = (WIDTH * HEIGHT * 3) as usize;
        let (mut a, mut b) = (vec![0u8; size], vec![0u8; size]);
        let mut diffs = Vec::new();
        for step in 0..10 {
            still.film(f64::from(step) / 150.0, &mut a);
            still.film(f64::from(step + 1) / 150.0, &mut b);
            let mean: f64 = a.iter().zip(&b).map(|(&x, &y)| f64::from(x.abs_diff(y))).sum::<f64>() / size as f64;
            diffs.push(mean);
        }
        let (lo, hi) = diffs.iter().fold((f64::MAX, 0.0f64), |(lo, hi), &d| (lo.min(d), hi.max(d)));
        assert!(hi < 40.0 && hi - lo < 15.0, "{diffs:?}");
    }
}
