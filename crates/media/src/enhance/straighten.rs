//! Levelling leaning verticals: the dominant tilt of near-vertical edges, and a rotation that
//! removes it with a crop that leaves no empty corners.

use image::{Rgb, RgbImage};

use super::{luma, stats_copy};

/// Longest side of the copy searched for vertical lines: finer than the statistics copy so a tilt
/// of a few tenths of a degree still moves a long edge by whole pixels.
const TILT_MAX_SIDE: u32 = 768;

/// Edges leaning further than this from vertical are not treated as verticals.
const MAX_TILT_DEGREES: f32 = 10.0;
const TILT_BIN_DEGREES: f32 = 0.25;
/// Sobel magnitude (on 0..=255 luma) of an edge worth measuring: a step of about 12 levels.
const TILT_EDGE_MAGNITUDE: f32 = 48.0;
/// Edges within this many degrees of the histogram peak are averaged into the estimate.
const TILT_PEAK_WINDOW: f32 = 1.0;
/// The peak must hold this share of the near-vertical edge weight (a uniform spread gives about
/// 0.1): textures and converging verticals spread out, a leaning room does not.
const TILT_MIN_SHARE: f64 = 0.25;
/// The peak's edges must cover this share of the pixels, i.e. be real lines rather than a few specks.
const TILT_MIN_SUPPORT: f64 = 0.003;
/// Smaller tilts are not worth the resampling and crop.
const TILT_MIN_DEGREES: f32 = 0.1;

/// Rotates a photo so its near-vertical lines (walls, door frames, windows)
/// become vertical, and returns it with the degrees rotated (positive
/// counter-clockwise).
///
/// The tilt is the peak of a histogram of strong edges within ±10° of
/// vertical, weighted by edge strength. The rotated photo is cropped to the
/// largest centred rectangle of the original aspect ratio that has no empty
/// corners. When no single tilt dominates (no clear verticals, converging
/// verticals, texture) or it is below 0.1°, the photo comes back unchanged
/// with 0.
pub fn straighten_verticals(img: &RgbImage) -> (RgbImage, f32) {
    level(img.clone())
}

/// [`straighten_verticals`] on an owned photo, which comes back as it was when no tilt is found.
pub(super) fn level(img: RgbImage) -> (RgbImage, f32) {
    match vertical_tilt(&img) {
        Some(degrees) => (rotate_and_crop(&img, degrees), degrees),
        None => (img, 0.0),
    }
}

/// Dominant tilt of near-vertical edges in degrees (the counter-clockwise
/// rotation that makes them vertical), or `None` when no tilt is confidently
/// dominant or it is negligible.
fn vertical_tilt(img: &RgbImage) -> Option<f32> {
    let small = stats_copy(img, TILT_MAX_SIDE);
    let (w, h) = (small.width() as usize, small.height() as usize);
    if w < 3 || h < 3 {
        return None;
    }
    let lumas: Vec<f32> = small.pixels().map(|p| luma(p.0.map(f32::from))).collect();
    let at = |x: usize, y: usize| lumas[y * w + x];
    let max_slope = MAX_TILT_DEGREES.to_radians().tan();
    let bins = (2.0 * MAX_TILT_DEGREES / TILT_BIN_DEGREES).round() as usize + 1;
    let mut hist = vec![0.0f64; bins];
    // (angle, weight) of every strong near-vertical edge pixel.
    let mut edges: Vec<(f32, f32)> = Vec::new();
    for y in 1..h - 1 {
        for x in 1..w - 1 {
            let gx = (at(x + 1, y - 1) + 2.0 * at(x + 1, y) + at(x + 1, y + 1))
                - (at(x - 1, y - 1) + 2.0 * at(x - 1, y) + at(x - 1, y + 1));
            let gy = (at(x - 1, y + 1) + 2.0 * at(x, y + 1) + at(x + 1, y + 1))
                - (at(x - 1, y - 1) + 2.0 * at(x, y - 1) + at(x + 1, y - 1));
            let magnitude = gx.hypot(gy);
            if gx == 0.0 || magnitude < TILT_EDGE_MAGNITUDE || gy.abs() > gx.abs() * max_slope {
                continue;
            }
            // The gradient of a vertical edge is horizontal; its angle from
            // horizontal is the edge's lean from vertical.
            let angle = (gy / gx).atan().to_degrees();
            let bin = ((angle + MAX_TILT_DEGREES) / TILT_BIN_DEGREES).round().clamp(0.0, (bins - 1) as f32) as usize;
            hist[bin] += f64::from(magnitude);
            edges.push((angle, magnitude));
        }
    }
    // Smooth so a peak split across neighbouring bins still wins.
    const SMOOTHING: [f64; 5] = [1.0, 2.0, 3.0, 2.0, 1.0];
    let smoothed = |i: usize| -> f64 {
        SMOOTHING
            .iter()
            .enumerate()
            .filter_map(|(k, &weight)| (i + k).checked_sub(2).and_then(|j| hist.get(j)).map(|&v| weight * v))
            .sum()
    };
    let (mut peak, mut best) = (0usize, f64::MIN);
    for i in 0..bins {
        let value = smoothed(i);
        if value > best {
            (peak, best) = (i, value);
        }
    }
    let peak_angle = peak as f32 * TILT_BIN_DEGREES - MAX_TILT_DEGREES;
    let total: f64 = edges.iter().map(|&(_, weight)| f64::from(weight)).sum();
    let (weight_near, weighted_angle, count_near) = edges
        .iter()
        .filter(|&&(angle, _)| (angle - peak_angle).abs() <= TILT_PEAK_WINDOW)
        .fold((0.0f64, 0.0f64, 0usize), |(weight_sum, angle_sum, count), &(angle, weight)| {
            (weight_sum + f64::from(weight), angle_sum + f64::from(weight) * f64::from(angle), count + 1)
        });
    if total <= 0.0 || weight_near <= 0.0 {
        return None;
    }
    let share = weight_near / total;
    let support = count_near as f64 / (w * h) as f64;
    if share < TILT_MIN_SHARE || support < TILT_MIN_SUPPORT {
        return None;
    }
    let tilt = (weighted_angle / weight_near) as f32;
    (tilt.abs() >= TILT_MIN_DEGREES).then_some(tilt)
}

/// Rotates counter-clockwise by `degrees` about the centre (bilinear) and crops
/// to the largest centred rectangle of the same aspect ratio with no empty corners.
pub(super) fn rotate_and_crop(img: &RgbImage, degrees: f32) -> RgbImage {
    let (w, h) = (f64::from(img.width()), f64::from(img.height()));
    if img.width() == 0 || img.height() == 0 {
        return img.clone();
    }
    let angle = f64::from(degrees).to_radians();
    let (cos, sin) = (angle.cos(), angle.sin());
    let (c, s) = (cos.abs(), sin.abs());
    // A centred crop of scale k fits when its rotated corners stay inside the original.
    let scale = (w / (w * c + h * s)).min(h / (w * s + h * c));
    let out_w = ((w * scale).floor() as u32).max(1);
    let out_h = ((h * scale).floor() as u32).max(1);
    let (half_out_w, half_out_h) = (f64::from(out_w) / 2.0, f64::from(out_h) / 2.0);
    RgbImage::from_fn(out_w, out_h, |ox, oy| {
        let u = f64::from(ox) + 0.5 - half_out_w;
        let v = f64::from(oy) + 0.5 - half_out_h;
        let sx = (w / 2.0 + u * cos - v * sin - 0.5).clamp(0.0, w - 1.0);
        let sy = (h / 2.0 + u * sin + v * cos - 0.5).clamp(0.0, h - 1.0);
        bilinear(img, sx, sy)
    })
}

/// Bilinear sample at a position inside the image.
fn bilinear(img: &RgbImage, x: f64, y: f64) -> Rgb<u8> {
    let (x0, y0) = (x.floor() as u32, y.floor() as u32);
    let (x1, y1) = ((x0 + 1).min(img.width() - 1), (y0 + 1).min(img.height() - 1));
    let (tx, ty) = ((x - x.floor()) as f32, (y - y.floor()) as f32);
    let (a, b) = (img.get_pixel(x0, y0).0, img.get_pixel(x1, y0).0);
    let (c, d) = (img.get_pixel(x0, y1).0, img.get_pixel(x1, y1).0);
    Rgb(std::array::from_fn(|i| {
        let top = f32::from(a[i]) * (1.0 - tx) + f32::from(b[i]) * tx;
        let bottom = f32::from(c[i]) * (1.0 - tx) + f32::from(d[i]) * tx;
        (top * (1.0 - ty) + bottom * ty).round().clamp(0.0, 255.0) as u8
    }))
}
