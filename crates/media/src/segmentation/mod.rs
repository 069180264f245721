//! Background removal: classical foreground/background segmentation with a feathered alpha edge.

use std::collections::VecDeque;

use image::imageops;
use image::{DynamicImage, RgbaImage};

use crate::colour::srgb_to_lab;
use crate::filters::box_blur;

/// Most pixels the mask is computed on; larger pictures are analysed at a reduced size and the
/// feathered mask is scaled up, so a 40-megapixel photo needs its cut-out plus a few tens of
/// megabytes, not gigabytes of per-pixel colour data.
pub const ANALYSIS_MAX_PIXELS: u64 = 4_000_000;

/// Cuts the subject out of a picture whose border shows background.
///
/// Classical pipeline, no model: the border colours are clustered (k-means in
/// CIELAB), a flood fill from the border claims every connected pixel that
/// matches a background cluster (or continues a smooth background gradient),
/// specks are cleaned up and the mask edge is feathered. Background gets alpha
/// 0, foreground 255, with a soft ramp between; an existing alpha channel is
/// respected. Works well for product shots and studio portraits; a subject
/// coloured like its backdrop will be partly removed. Pictures over
/// [`ANALYSIS_MAX_PIXELS`] are analysed at that size and the mask scaled up.
pub fn remove_background(img: DynamicImage) -> RgbaImage {
    let mut out = img.into_rgba8();
    let (w, h) = out.dimensions();
    if w == 0 || h == 0 {
        return out;
    }
    let pixels = u64::from(w) * u64::from(h);
    let (aw, ah) = if pixels > ANALYSIS_MAX_PIXELS {
        let scale = (ANALYSIS_MAX_PIXELS as f64 / pixels as f64).sqrt();
        (((f64::from(w) * scale) as u32).max(1), ((f64::from(h) * scale) as u32).max(1))
    } else {
        (w, h)
    };
    let analysed = if (aw, ah) == (w, h) {
        DynamicImage::ImageRgba8(out.clone()).to_rgb8()
    } else {
        DynamicImage::ImageRgba8(imageops::resize(&out, aw, ah, imageops::FilterType::Triangle)).to_rgb8()
    };
    let alpha = feathered_mask(&analysed);
    drop(analysed);
    if (aw, ah) == (w, h) {
        for (p, a) in out.pixels_mut().zip(alpha) {
            p.0[3] = p.0[3].min(alpha_byte(a));
        }
    } else {
        apply_scaled_mask(&mut out, &alpha, aw as usize, ah as usize);
    }
    out
}

/// The share of `cutout`'s pixels kept (alpha at least half): 0 when nothing was told apart from
/// the background, 1 when nothing was removed.
pub fn kept_share(cutout: &RgbaImage) -> f64 {
    let total = u64::from(cutout.width()) * u64::from(cutout.height());
    if total == 0 {
        return 0.0;
    }
    let kept = cutout.pixels().filter(|p| p.0[3] >= 128).count() as u64;
    kept as f64 / total as f64
}

/// The foreground mask of `rgb` with a feathered edge: 1 foreground, 0 background.
fn feathered_mask(rgb: &image::RgbImage) -> Vec<f32> {
    let (w, h) = rgb.dimensions();
    let (wu, hu) = (w as usize, h as usize);
    let n = wu * hu;

    // Blurring first keeps sensor noise from breaking the flood fill.
    let smoothed = imageops::blur(rgb, 1.0);
    let lab: Vec<[f32; 3]> = smoothed.pixels().map(|p| srgb_to_lab(p.0)).collect();
    drop(smoothed);

    let band = (w.min(h) / 64).max(1) as usize;
    let border = border_indices(wu, hu, band);
    let stride = (border.len() / 4096).max(1);
    let samples: Vec<[f32; 3]> = border.iter().step_by(stride).map(|&i| lab[i]).collect();
    let model = BackgroundModel::fit(&samples);

    let score: Vec<f32> = lab.iter().map(|c| model.score(c)).collect();
    let background = flood_background(&lab, &score, wu, hu);
    drop((lab, score));

    let mut fg: Vec<bool> = background.iter().map(|&b| !b).collect();
    majority_filter(&mut fg, wu, hu);
    remove_small_components(&mut fg, wu, hu, (n / 2000).max(16));

    let feather = (w.min(h) / 150).max(1) as usize;
    let mut alpha: Vec<f32> = fg.iter().map(|&f| if f { 1.0 } else { 0.0 }).collect();
    box_blur(&mut alpha, wu, hu, feather);
    box_blur(&mut alpha, wu, hu, feather);
    alpha
}

fn alpha_byte(a: f32) -> u8 {
    (a * 255.0).round().clamp(0.0, 255.0) as u8
}

/// Lowers `out`'s alpha to the `aw`x`ah` mask scaled up bilinearly, a pixel at a time.
fn apply_scaled_mask(out: &mut RgbaImage, mask: &[f32], aw: usize, ah: usize) {
    let (w, h) = (out.width() as usize, out.height() as usize);
    let (sx, sy) = (aw as f32 / w as f32, ah as f32 / h as f32);
    let at = |x: usize, y: usize| mask[y.min(ah - 1) * aw + x.min(aw - 1)];
    for (y, row) in out.rows_mut().enumerate() {
        let fy = ((y as f32 + 0.5) * sy - 0.5).max(0.0);
        let (y0, ty) = (fy as usize, fy.fract());
        for (x, p) in row.enumerate() {
            let fx = ((x as f32 + 0.5) * sx - 0.5).max(0.0);
            let (x0, tx) = (fx as usize, fx.fract());
            let top = at(x0, y0) * (1.0 - tx) + at(x0 + 1, y0) * tx;
            let bottom = at(x0, y0 + 1) * (1.0 - tx) + at(x0 + 1, y0 + 1) * tx;
            p.0[3] = p.0[3].min(alpha_byte(top * (1.0 - ty) + bottom * ty));
        }
    }
}

/// Clustered colour model of the image border.
struct BackgroundModel {
    centres: Vec<[f32; 3]>,
    radii: Vec<f32>,
}

impl BackgroundModel {
    /// Fits up to three k-means clusters; clusters holding few border samples
    /// are dropped because they are usually the subject touching the edge.
    fn fit(samples: &[[f32; 3]]) -> Self {
        const K: usize = 3;
        const MIN_RADIUS: f32 = 6.0;
        const MAX_RADIUS: f32 = 30.0;
        if samples.is_empty() {
            return Self { centres: Vec::new(), radii: Vec::new() };
        }
        // Deterministic farthest-point initialisation.
        let mut centres = vec![mean_lab(samples)];
        while centres.len() < K {
            let far = samples.iter().copied().max_by(|a, b| nearest(&centres, a).1.total_cmp(&nearest(&centres, b).1));
            match far {
                Some(p) if nearest(&centres, &p).1 > 1.0 => centres.push(p),
                _ => break,
            }
        }
        let mut assignment = vec![0usize; samples.len()];
        for _ in 0..12 {
            for (a, s) in assignment.iter_mut().zip(samples) {
                *a = nearest(&centres, s).0;
            }
            for (k, centre) in centres.iter_mut().enumerate() {
                let members: Vec<[f32; 3]> =
                    samples.iter().zip(&assignment).filter(|(_, &a)| a == k).map(|(s, _)| *s).collect();
                if !members.is_empty() {
                    *centre = mean_lab(&members);
                }
            }
        }
        let total = samples.len() as f32;
        let mut kept_centres = Vec::new();
        let mut radii = Vec::new();
        let mut largest: Option<(usize, usize)> = None;
        for (k, centre) in centres.iter().enumerate() {
            let dists: Vec<f32> =
                samples.iter().zip(&assignment).filter(|(_, &a)| a == k).map(|(s, _)| lab_dist(s, centre)).collect();
            if largest.is_none_or(|(_, c)| dists.len() > c) {
                largest = Some((k, dists.len()));
            }
            if (dists.len() as f32) < 0.08 * total {
                continue;
            }
            let rms = (dists.iter().map(|d| d * d).sum::<f32>() / dists.len() as f32).sqrt();
            kept_centres.push(*centre);
            radii.push((3.0 * rms).clamp(MIN_RADIUS, MAX_RADIUS));
        }
        if kept_centres.is_empty() {
            if let Some((k, _)) = largest {
                kept_centres.push(centres[k]);
                radii.push(MIN_RADIUS);
            }
        }
        Self { centres: kept_centres, radii }
    }

    /// Distance to the closest cluster in units of that cluster's radius:
    /// below 1 means "looks like background".
    fn score(&self, c: &[f32; 3]) -> f32 {
        self.centres.iter().zip(&self.radii).map(|(m, r)| lab_dist(c, m) / r).fold(f32::INFINITY, f32::min)
    }
}

/// Index and distance of the centre closest to `p`.
fn nearest(centres: &[[f32; 3]], p: &[f32; 3]) -> (usize, f32) {
    centres.iter().enumerate().map(|(i, c)| (i, lab_dist(c, p))).fold((0, f32::INFINITY), |best, cur| {
        if cur.1 < best.1 {
            cur
        } else {
            best
        }
    })
}

fn mean_lab(samples: &[[f32; 3]]) -> [f32; 3] {
    let mut acc = [0.0f64; 3];
    for s in samples {
        for c in 0..3 {
            acc[c] += f64::from(s[c]);
        }
    }
    let n = samples.len().max(1) as f64;
    [(acc[0] / n) as f32, (acc[1] / n) as f32, (acc[2] / n) as f32]
}

fn lab_dist(a: &[f32; 3], b: &[f32; 3]) -> f32 {
    let d0 = a[0] - b[0];
    let d1 = a[1] - b[1];
    let d2 = a[2] - b[2];
    (d0 * d0 + d1 * d1 + d2 * d2).sqrt()
}

/// Indices of all pixels within `band` of the image edge.
fn border_indices(w: usize, h: usize, band: usize) -> Vec<usize> {
    let band_x = band.min(w.div_ceil(2));
    let band_y = band.min(h.div_ceil(2));
    let mut out = Vec::new();
    for y in 0..h {
        let edge_row = y < band_y || y >= h - band_y;
        for x in 0..w {
            if edge_row || x < band_x || x >= w - band_x {
                out.push(y * w + x);
            }
        }
    }
    out
}

/// Flood fill from the image edge through background-like pixels.
fn flood_background(lab: &[[f32; 3]], score: &[f32], w: usize, h: usize) -> Vec<bool> {
    // A small colour step lets the fill follow smooth backdrop gradients
    // (vignettes, sky) that drift outside the border clusters, but only up to
    // a looser score so it cannot wander deep into the subject.
    const STEP: f32 = 2.5;
    const LOOSE_SCORE: f32 = 2.5;
    let mut bg = vec![false; w * h];
    let mut queue = VecDeque::new();
    for i in border_indices(w, h, 1) {
        if score[i] < 1.0 && !bg[i] {
            bg[i] = true;
            queue.push_back(i);
        }
    }
    while let Some(i) = queue.pop_front() {
        let (x, y) = (i % w, i / w);
        let mut visit = |j: usize| {
            if bg[j] {
                return;
            }
            let smooth = lab_dist(&lab[i], &lab[j]) < STEP && score[j] < LOOSE_SCORE;
            if score[j] < 1.0 || smooth {
                bg[j] = true;
                queue.push_back(j);
            }
        };
        if x > 0 {
            visit(i - 1);
        }
        if x + 1 < w {
            visit(i + 1);
        }
        if y > 0 {
            visit(i - w);
        }
        if y + 1 < h {
            visit(i + w);
        }
    }
    bg
}

/// 3x3 majority vote; removes single-pixel specks and pinholes in the mask.
fn majority_filter(mask: &mut [bool], w: usize, h: usize) {
    let src = mask.to_vec();
    for y in 0..h {
        for x in 0..w {
            let mut on = 0;
            let mut total = 0;
            for yy in y.saturating_sub(1)..(y + 2).min(h) {
                for xx in x.saturating_sub(1)..(x + 2).min(w) {
                    total += 1;
                    if src[yy * w + xx] {
                        on += 1;
                    }
                }
            }
            mask[y * w + x] = on * 2 > total;
        }
    }
}

/// Clears 4-connected foreground islands smaller than `min_size` pixels.
fn remove_small_components(mask: &mut [bool], w: usize, h: usize, min_size: usize) {
    let mut seen = vec![false; w * h];
    let mut component = Vec::new();
    let mut stack = Vec::new();
    for start in 0..w * h {
        if !mask[start] || seen[start] {
            continue;
        }
        component.clear();
        seen[start] = true;
        stack.push(start);
        while let Some(i) = stack.pop() {
            component.push(i);
            let (x, y) = (i % w, i / w);
            let neighbours = [
                (x > 0).then(|| i - 1),
                (x + 1 < w).then(|| i + 1),
                (y > 0).then(|| i - w),
                (y + 1 < h).then(|| i + w),
            ];
            for j in neighbours.into_iter().flatten() {
                if mask[j] && !seen[j] {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
        if component.len() < min_size {
            for &i in &component {
                mask[i] = false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed::Rng;
    use image::{Rgb, RgbImage};

    fn disc_scene(w: u32, h: u32) -> RgbImage {
        let mut rng = Rng::new(42);
        let (cx, cy, r) = (w as f32 / 2.0, h as f32 / 2.0, w.min(h) as f32 * 0.3);
        RgbImage::from_fn(w, h, |x, y| {
            let noise = (rng.unit() * 20.0 - 10.0) as f32;
            let (dx, dy) = (x as f32 - cx, y as f32 - cy);
            if dx * dx + dy * dy < r * r {
                Rgb([(210.0 + noise) as u8, (30.0 + noise) as u8, (35.0 + noise) as u8])
            } else {
                let g = (128.0 + noise) as u8;
                Rgb([g, g, g.saturating_add(4)])
            }
        })
    }

    #[test]
    fn remove_background_isolates_disc() {
        let (w, h) = (96, 80);
        let cut = remove_background(DynamicImage::ImageRgb8(disc_scene(w, h)));
        assert_eq!(cut.dimensions(), (w, h));
        let alpha = |x, y| cut.get_pixel(x, y).0[3];
        assert_eq!(alpha(w / 2, h / 2), 255);
        assert_eq!(alpha(w / 2 + 10, h / 2 - 8), 255);
        for (x, y) in [(0, 0), (w - 1, 0), (0, h - 1), (w - 1, h - 1), (3, h / 2), (w / 2, 2)] {
            assert_eq!(alpha(x, y), 0, "corner/edge ({x},{y}) should be transparent");
        }
        // Mask area should be close to the disc area (pi * r^2).
        let opaque = cut.pixels().filter(|p| p.0[3] > 127).count() as f32;
        let r = w.min(h) as f32 * 0.3;
        let expected = std::f32::consts::PI * r * r;
        assert!((opaque - expected).abs() / expected < 0.12, "opaque {opaque} vs {expected}");
        // Feathered edge: some partial alpha exists.
        assert!(cut.pixels().any(|p| p.0[3] > 0 && p.0[3] < 255));
    }

    #[test]
    fn a_picture_over_the_analysis_size_gets_the_scaled_up_mask() {
        // 4.8 megapixels: analysed at 4, the mask scaled back up.
        let (w, h) = (2400, 2000);
        let cut = remove_background(DynamicImage::ImageRgb8(disc_scene(w, h)));
        assert_eq!(cut.dimensions(), (w, h));
        let alpha = |x, y| cut.get_pixel(x, y).0[3];
        assert_eq!(alpha(w / 2, h / 2), 255);
        for (x, y) in [(0, 0), (w - 1, h - 1), (5, h / 2), (w / 2, 5)] {
            assert_eq!(alpha(x, y), 0, "({x},{y})");
        }
        let opaque = cut.pixels().filter(|p| p.0[3] > 127).count() as f32;
        let r = w.min(h) as f32 * 0.3;
        let expected = std::f32::consts::PI * r * r;
        assert!((opaque - expected).abs() / expected < 0.03, "opaque {opaque} vs {expected}");
        // The edge ramps over a band, not a step: a scaled-up mask must not come out blocky.
        let ramp = (0..w).filter(|&x| (1..255).contains(&alpha(x, h / 2))).count();
        assert!((4..200).contains(&ramp), "{ramp} partial pixels across the disc's edges");
    }

    #[test]
    fn remove_background_of_uniform_image_is_transparent() {
        let flat = DynamicImage::ImageRgb8(RgbImage::from_pixel(20, 20, Rgb([10, 200, 10])));
        assert!(remove_background(flat.clone()).pixels().all(|p| p.0[3] == 0));
        assert_eq!(remove_background(DynamicImage::ImageRgb8(RgbImage::new(0, 0))).dimensions(), (0, 0));
    }
}
