//! Background removal: classical foreground/background segmentation with a feathered alpha edge.

use std::collections::VecDeque;

use image::imageops;
use image::{DynamicImage, RgbaImage};

use crate::colour::srgb_to_lab;
use crate::filters::box_blur;

/// Cuts the subject out of a picture whose border shows background.
///
/// Classical pipeline, no model: the border colours are clustered (k-means in
/// CIELAB), a flood fill from the border claims every connected pixel that
/// matches a background cluster (or continues a smooth background gradient),
/// specks are cleaned up and the mask edge is feathered. Background gets alpha
/// 0, foreground 255, with a soft ramp between; an existing alpha channel is
/// respected. Works well for product shots and studio portraits; a subject
/// coloured like its backdrop will be partly removed.
pub fn remove_background(img: &DynamicImage) -> RgbaImage {
    let mut out = img.to_rgba8();
    let (w, h) = out.dimensions();
    if w == 0 || h == 0 {
        return out;
    }
    let (wu, hu) = (w as usize, h as usize);
    let n = wu * hu;

    // Blurring first keeps sensor noise from breaking the flood fill.
    let smoothed = imageops::blur(&img.to_rgb8(), 1.0);
    let lab: Vec<[f32; 3]> = smoothed.pixels().map(|p| srgb_to_lab(p.0)).collect();

    let band = (w.min(h) / 64).max(1) as usize;
    let border = border_indices(wu, hu, band);
    let stride = (border.len() / 4096).max(1);
    let samples: Vec<[f32; 3]> = border.iter().step_by(stride).map(|&i| lab[i]).collect();
    let model = BackgroundModel::fit(&samples);

    let score: Vec<f32> = lab.iter().map(|c| model.score(c)).collect();
    let background = flood_background(&lab, &score, wu, hu);

    let mut fg: Vec<bool> = background.iter().map(|&b| !b).collect();
    majority_filter(&mut fg, wu, hu);
    remove_small_components(&mut fg, wu, hu, (n / 2000).max(16));

    let feather = (w.min(h) / 150).max(1) as usize;
    let mut alpha: Vec<f32> = fg.iter().map(|&f| if f { 1.0 } else { 0.0 }).collect();
    box_blur(&mut alpha, wu, hu, feather);
    box_blur(&mut alpha, wu, hu, feather);

    for (p, a) in out.pixels_mut().zip(alpha) {
        let computed = (a * 255.0).round().clamp(0.0, 255.0) as u8;
        p.0[3] = p.0[3].min(computed);
    }
    out
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
        let cut = remove_background(&DynamicImage::ImageRgb8(disc_scene(w, h)));
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
    fn remove_background_of_uniform_image_is_transparent() {
        let flat = DynamicImage::ImageRgb8(RgbImage::from_pixel(20, 20, Rgb([10, 200, 10])));
        assert!(remove_background(&flat).pixels().all(|p| p.0[3] == 0));
        assert_eq!(remove_background(&DynamicImage::ImageRgb8(RgbImage::new(0, 0))).dimensions(), (0, 0));
    }
}
