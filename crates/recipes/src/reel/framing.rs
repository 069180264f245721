//! Framing a still for a 9:16 screen around its subject, not by a blind centre crop, and the
//! slow push-in or pull-out that moves it.
//!
//! The subject is where the photo has detail and colour that stand out (edges, a lit window, a
//! bright kitchen island), weighed against a mild preference for the middle: a saliency map on a
//! small copy, summed over every candidate window.

use image::imageops::FilterType;
use image::RgbImage;
use media::filters::box_blur;

/// Longest side of the copy saliency is computed on.
const SALIENCY_SIDE: u32 = 256;
/// How much the middle of the photo is preferred, as the sigma of a Gaussian over the half-width.
const CENTRE_PRIOR_SIGMA: f64 = 0.6;
/// How far the motion zooms: the tight frame is this much smaller than the wide one.
const ZOOM: f64 = 1.10;

/// A rectangle in source pixels.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Frame {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width.
    pub width: f64,
    /// Height.
    pub height: f64,
}

impl Frame {
    /// The frame `t` of the way from `self` to `other`.
    pub fn lerp(&self, other: &Frame, t: f64) -> Frame {
        let mix = |a: f64, b: f64| a + (b - a) * t;
        Frame {
            x: mix(self.x, other.x),
            y: mix(self.y, other.y),
            width: mix(self.width, other.width),
            height: mix(self.height, other.height),
        }
    }
}

/// Where a still's camera starts and ends, in source pixels.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Motion {
    /// The frame at the start of the still's slot.
    pub from: Frame,
    /// The frame at its end.
    pub to: Frame,
}

/// Frames `photo` for a `aspect` (width / height) screen around its subject and plans the
/// camera's motion: a push in on the subject, or, when `pull_out`, the reverse.
pub fn plan(photo: &RgbImage, aspect: f64, pull_out: bool) -> Motion {
    let (w, h) = (f64::from(photo.width()), f64::from(photo.height()));
    let saliency = Saliency::of(photo);
    // The widest window of the screen's shape that fits the photo.
    let (win_w, win_h) = if w / h > aspect { (h * aspect, h) } else { (w, w / aspect) };
    let x = saliency.best_offset(true, win_w / w) * w;
    let y = saliency.best_offset(false, win_h / h) * h;
    let wide = Frame { x, y, width: win_w, height: win_h };
    // The tight frame keeps the subject's centre where it sits in the wide one.
    let (fx, fy) = saliency.centroid_in(&wide, w, h);
    let (tight_w, tight_h) = (win_w / ZOOM, win_h / ZOOM);
    let tight = Frame {
        x: (fx - tight_w / 2.0).clamp(wide.x, wide.x + wide.width - tight_w),
        y: (fy - tight_h / 2.0).clamp(wide.y, wide.y + wide.height - tight_h),
        width: tight_w,
        height: tight_h,
    };
    if pull_out {
        Motion { from: tight, to: wide }
    } else {
        Motion { from: wide, to: tight }
    }
}

/// A saliency map of a small copy of the photo.
struct Saliency {
    map: Vec<f64>,
    w: usize,
    h: usize,
}

impl Saliency {
    fn of(photo: &RgbImage) -> Saliency {
        let scale = f64::from(SALIENCY_SIDE) / f64::from(photo.width().max(photo.height()));
        let (sw, sh) = if scale < 1.0 {
            (
                ((f64::from(photo.width()) * scale).round() as u32).max(1),
                ((f64::from(photo.height()) * scale).round() as u32).max(1),
            )
        } else {
            photo.dimensions()
        };
        let small = image::imageops::resize(photo, sw, sh, FilterType::Triangle);
        let (w, h) = (sw as usize, sh as usize);
        let pixels: Vec<[f32; 3]> = small.pixels().map(|p| p.0.map(f32::from)).collect();
        let luma: Vec<f32> = pixels.iter().map(|c| 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]).collect();
        let n = pixels.len().max(1) as f32;
        let mean = pixels.iter().fold([0.0f32; 3], |acc, c| [acc[0] + c[0], acc[1] + c[1], acc[2] + c[2]]);
        let mean = mean.map(|v| v / n);
        let mut edges = vec![0.0f32; w * h];
        let mut distinct = vec![0.0f32; w * h];
        for y in 0..h {
            for x in 0..w {
                let at = |dx: isize, dy: isize| {
                    let xx = (x as isize + dx).clamp(0, w as isize - 1) as usize;
                    let yy = (y as isize + dy).clamp(0, h as isize - 1) as usize;
                    luma[yy * w + xx]
                };
                edges[y * w + x] = (at(1, 0) - at(-1, 0)).hypot(at(0, 1) - at(0, -1));
                let c = pixels[y * w + x];
                distinct[y * w + x] =
                    ((c[0] - mean[0]).powi(2) + (c[1] - mean[1]).powi(2) + (c[2] - mean[2]).powi(2)).sqrt();
            }
        }
        // Detail counts where it clusters, not single specks: blur before combining.
        let radius = (w.max(h) / 32).max(1);
        box_blur(&mut edges, w, h, radius);
        box_blur(&mut distinct, w, h, radius);
        let normalise = |v: &mut Vec<f32>| {
            let max = v.iter().copied().fold(0.0f32, f32::max);
            if max > 0.0 {
                v.iter_mut().for_each(|x| *x /= max);
            }
        };
        normalise(&mut edges);
        normalise(&mut distinct);
        let map = (0..w * h)
            .map(|i| {
                let (x, y) = ((i % w) as f64 + 0.5, (i / w) as f64 + 0.5);
                let dx = (x / w as f64 - 0.5) / 0.5;
                let dy = (y / h as f64 - 0.5) / 0.5;
                let prior = (-(dx * dx + dy * dy) / (2.0 * CENTRE_PRIOR_SIGMA * CENTRE_PRIOR_SIGMA)).exp();
                f64::from(0.6 * edges[i] + 0.4 * distinct[i]) * prior + 1e-6
            })
            .collect();
        Saliency { map, w, h }
    }

    /// The offset (fraction of the side) of the window covering `share` of the width (or
    /// height) that holds the most saliency.
    fn best_offset(&self, horizontal: bool, share: f64) -> f64 {
        if share >= 0.999 {
            return 0.0;
        }
        let len = if horizontal { self.w } else { self.h };
        let profile: Vec<f64> = (0..len)
            .map(|i| {
                if horizontal {
                    (0..self.h).map(|y| self.map[y * self.w + i]).sum()
                } else {
                    self.map[i * self.w..(i + 1) * self.w].iter().sum()
                }
            })
            .collect();
        // Window sums at fractional offsets, so the answer does not snap to the small grid.
        let mut prefix = vec![0.0; len + 1];
        for (i, v) in profile.iter().enumerate() {
            prefix[i + 1] = prefix[i] + v;
        }
        let cumulative = |pos: f64| {
            let pos = pos.clamp(0.0, len as f64);
            let i = (pos.floor() as usize).min(len - 1);
            prefix[i] + profile[i] * (pos - i as f64)
        };
        let window = share * len as f64;
        let steps = 200;
        let (mut best, mut best_sum) = (0.0, f64::MIN);
        for step in 0..=steps {
            let offset = (len as f64 - window) * f64::from(step) / f64::from(steps);
            let sum = cumulative(offset + window) - cumulative(offset);
            if sum > best_sum {
                (best, best_sum) = (offset, sum);
            }
        }
        best / len as f64
    }

    /// The saliency-weighted centre of `frame` (source pixels of a `w` x `h` photo).
    fn centroid_in(&self, frame: &Frame, w: f64, h: f64) -> (f64, f64) {
        let (sx, sy) = (self.w as f64 / w, self.h as f64 / h);
        let x0 = (frame.x * sx).floor().max(0.0) as usize;
        let y0 = (frame.y * sy).floor().max(0.0) as usize;
        let x1 = (((frame.x + frame.width) * sx).ceil() as usize).min(self.w);
        let y1 = (((frame.y + frame.height) * sy).ceil() as usize).min(self.h);
        let (mut total, mut cx, mut cy) = (0.0, 0.0, 0.0);
        for y in y0..y1 {
            for x in x0..x1 {
                let v = self.map[y * self.w + x];
                total += v;
                cx += v * (x as f64 + 0.5);
                cy += v * (y as f64 + 0.5);
            }
        }
        if total <= 0.0 {
            return (frame.x + frame.width / 2.0, frame.y + frame.height / 2.0);
        }
        (cx / total / sx, cy / total / sy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::Rgb;

    /// A plain wall with a detailed, colourful subject (a "window") at `subject_x`.
    fn scene(subject_x: u32) -> RgbImage {
        RgbImage::from_fn(1600, 900, |x, y| {
            let inside = x.abs_diff(subject_x) < 120 && y.abs_diff(450) < 160;
            if inside {
                if (x / 12 + y / 12) % 2 == 0 {
                    Rgb([250, 220, 120])
                } else {
                    Rgb([40, 90, 160])
                }
            } else {
                Rgb([182, 176, 168])
            }
        })
    }

    #[test]
    fn the_frame_follows_the_subject_not_the_centre() {
        for subject_x in [250, 800, 1350] {
            let motion = plan(&scene(subject_x), 9.0 / 16.0, false);
            let wide = motion.from;
            assert!((wide.height - 900.0).abs() < 1e-9 && (wide.width - 506.25).abs() < 1e-9, "{wide:?}");
            assert!(wide.x <= f64::from(subject_x) - 120.0 + 5.0, "{subject_x}: {wide:?}");
            assert!(wide.x + wide.width >= f64::from(subject_x) + 120.0 - 5.0, "{subject_x}: {wide:?}");
            // The tight frame stays inside the wide one and is 1/ZOOM of it.
            let tight = motion.to;
            assert!((tight.width * ZOOM - wide.width).abs() < 1e-6);
            assert!(tight.x >= wide.x - 1e-9 && tight.x + tight.width <= wide.x + wide.width + 1e-9);
            assert!(tight.y >= wide.y - 1e-9 && tight.y + tight.height <= wide.y + wide.height + 1e-9);
        }
    }

    #[test]
    fn portrait_photos_are_framed_vertically_and_motion_can_reverse() {
        let tall = RgbImage::from_fn(900, 2400, |_, y| if y > 1800 { Rgb([200, 40, 40]) } else { Rgb([90, 90, 90]) });
        let motion = plan(&tall, 9.0 / 16.0, true);
        assert_eq!(motion.to.width, 900.0);
        assert!(motion.to.y > 0.0, "{motion:?}");
        assert!(motion.from.width < motion.to.width);
    }
}
