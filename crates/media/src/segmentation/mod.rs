//! Background removal: where the subject is, from a salient-object network shipped in the binary,
//! refined by iterated graph cuts between a subject and a background colour model, with a
//! feathered alpha edge.

mod gmm;
mod grabcut;
mod maxflow;
mod subject_model;

use image::imageops;
use image::{DynamicImage, ImageBuffer, Luma, RgbaImage};

use crate::filters::{box_blur, neighbours4};
use crate::MediaError;

/// Most pixels the mask is computed on; larger pictures are analysed at a reduced size and the
/// feathered mask is scaled up, so the cost of a cut-out hardly depends on the photo's size.
pub const ANALYSIS_MAX_PIXELS: u64 = 160_000;

/// Lowest likelihood split taken as the subject's outline: below it the network's faint marks are
/// noise, not a subject it doubts.
const MIN_SPLIT: f32 = 0.1;

/// Cuts the subject out of a picture.
///
/// A salient-object network (U²-Net-p, run by `tract`) says how likely each pixel is to belong
/// to the picture's main subject; that likelihood seeds a GrabCut-style loop of colour mixtures
/// and minimum graph cuts that settles the outline on colour edges at up to
/// [`ANALYSIS_MAX_PIXELS`]. Background gets alpha 0, foreground 255, with a soft ramp between;
/// an existing alpha channel is respected. A picture where the network finds nothing comes back
/// fully transparent. Larger pictures are analysed at that size and the mask scaled up. The
/// error is the service's: the shipped network could not run.
pub fn remove_background(img: DynamicImage) -> Result<RgbaImage, MediaError> {
    let (w, h) = (img.width(), img.height());
    if w == 0 || h == 0 {
        return Ok(img.into_rgba8());
    }
    let pixels = u64::from(w) * u64::from(h);
    let (aw, ah) = if pixels > ANALYSIS_MAX_PIXELS {
        let scale = (ANALYSIS_MAX_PIXELS as f64 / pixels as f64).sqrt();
        (((f64::from(w) * scale) as u32).max(1), ((f64::from(h) * scale) as u32).max(1))
    } else {
        (w, h)
    };
    // The mask is found before the picture is widened to RGBA, so a large picture is held once
    // (as decoded) while the network runs, not as well in its wider copy: the job's memory limit
    // is met by the largest picture accepted.
    let analysed = if (aw, ah) == (w, h) {
        img.to_rgb8()
    } else {
        img.resize_exact(aw, ah, imageops::FilterType::Triangle).to_rgb8()
    };
    let alpha = feathered_mask(&analysed)?;
    drop(analysed);
    let mut out = img.into_rgba8();
    if (aw, ah) == (w, h) {
        for (p, a) in out.pixels_mut().zip(alpha) {
            p.0[3] = p.0[3].min(alpha_byte(a));
        }
    } else {
        apply_scaled_mask(&mut out, &alpha, aw as usize, ah as usize);
    }
    Ok(out)
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
fn feathered_mask(rgb: &image::RgbImage) -> Result<Vec<f32>, MediaError> {
    let (w, h) = rgb.dimensions();
    let (wu, hu) = (w as usize, h as usize);
    let n = wu * hu;

    let Some(likelihood) = subject_model::subject_likelihood(rgb)? else {
        return Ok(vec![0.0; n]);
    };
    let side = subject_model::SIDE as u32;
    let square = ImageBuffer::<Luma<f32>, Vec<f32>>::from_raw(side, side, likelihood)
        .ok_or_else(|| MediaError::Inference("the subject likelihood has the wrong size".into()))?;
    let mut prior = imageops::resize(&square, w, h, imageops::FilterType::Triangle).into_raw();
    calibrate(&mut prior);

    let colours: Vec<[f32; 3]> = rgb.pixels().map(|p| p.0.map(f32::from)).collect();
    let mut fg = grabcut::cut(&colours, &prior, wu, hu);
    drop((colours, prior));

    majority_filter(&mut fg, wu, hu);
    keep_large_components(&mut fg, wu, hu);
    fill_small_holes(&mut fg, wu, hu, n / 1000);

    let feather = (w.min(h) / 200).max(1) as usize;
    let mut alpha: Vec<f32> = fg.iter().map(|&f| if f { 1.0 } else { 0.0 }).collect();
    box_blur(&mut alpha, wu, hu, feather);
    Ok(alpha)
}

/// Moves the likelihood's natural split to one half. The network is confident on most pictures
/// (its values gather near 0 and 1, split at one half), but on some it marks the whole subject
/// faintly (a fifth to a half, against a background near 0); Otsu's threshold finds that split,
/// and the values are stretched piecewise so it lands at one half, where the graph cut starts.
fn calibrate(likelihood: &mut [f32]) {
    let split = otsu(likelihood).clamp(MIN_SPLIT, 0.5);
    for p in likelihood.iter_mut() {
        *p = if *p < split { 0.5 * *p / split } else { 0.5 + 0.5 * (*p - split) / (1.0 - split) };
    }
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

/// Otsu's threshold of values in [0, 1]: the cut that best separates them into two classes.
fn otsu(values: &[f32]) -> f32 {
    const BINS: usize = 256;
    let mut histogram = [0u64; BINS];
    for &v in values {
        histogram[((v.clamp(0.0, 1.0) * (BINS - 1) as f32).round()) as usize] += 1;
    }
    let total = values.len() as f64;
    let sum: f64 = histogram.iter().enumerate().map(|(i, &c)| i as f64 * c as f64).sum();
    let (mut below, mut below_sum, mut best, mut best_at) = (0.0, 0.0, 0.0, 0);
    for (i, &c) in histogram.iter().enumerate() {
        below += c as f64;
        below_sum += i as f64 * c as f64;
        let above = total - below;
        if below == 0.0 || above == 0.0 {
            continue;
        }
        let between = below * above * (below_sum / below - (sum - below_sum) / above).powi(2);
        if between > best {
            best = between;
            best_at = i;
        }
    }
    (best_at as f32 + 0.5) / (BINS - 1) as f32
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

/// Keeps the foreground islands of at least a fifth of the largest one's area (a second flower,
/// a detached hand) and drops specks the cut left in the background.
fn keep_large_components(mask: &mut [bool], w: usize, h: usize) {
    let islands = components(mask, w, h, true);
    let largest = islands.iter().map(Vec::len).max().unwrap_or(0);
    for island in islands.iter().filter(|c| c.len() * 5 < largest) {
        for &i in island {
            mask[i] = false;
        }
    }
}

/// Fills background pockets of under `max_size` pixels that do not reach the picture's edge:
/// specular highlights and shadows inside the subject, not the gap in a cup's handle.
fn fill_small_holes(mask: &mut [bool], w: usize, h: usize, max_size: usize) {
    for hole in components(mask, w, h, false) {
        let touches_edge = hole.iter().any(|&i| i % w == 0 || i % w == w - 1 || i < w || i >= w * (h - 1));
        if hole.len() < max_size && !touches_edge {
            for i in hole {
                mask[i] = true;
            }
        }
    }
}

/// The 4-connected components of the pixels whose mask value is `value`.
fn components(mask: &[bool], w: usize, h: usize, value: bool) -> Vec<Vec<usize>> {
    let mut seen = vec![false; w * h];
    let mut out = Vec::new();
    let mut stack = Vec::new();
    for start in 0..w * h {
        if mask[start] != value || seen[start] {
            continue;
        }
        let mut component = Vec::new();
        seen[start] = true;
        stack.push(start);
        while let Some(i) = stack.pop() {
            component.push(i);
            for j in neighbours4(i, w, h).into_iter().flatten() {
                if mask[j] == value && !seen[j] {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
        out.push(component);
    }
    out
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
        let cut = remove_background(DynamicImage::ImageRgb8(disc_scene(w, h))).expect("cut");
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
        // 4.8 megapixels: analysed at ANALYSIS_MAX_PIXELS, the mask scaled back up.
        let (w, h) = (2400, 2000);
        let cut = remove_background(DynamicImage::ImageRgb8(disc_scene(w, h))).expect("cut");
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
    fn a_picture_with_no_subject_comes_back_transparent() {
        let flat = DynamicImage::ImageRgb8(RgbImage::from_pixel(20, 20, Rgb([10, 200, 10])));
        assert!(remove_background(flat.clone()).expect("cut").pixels().all(|p| p.0[3] == 0));
        let mut rng = Rng::new(7);
        let noise = RgbImage::from_fn(200, 200, |_, _| Rgb([0; 3].map(|_: u8| (rng.unit() * 255.0) as u8)));
        let cut = remove_background(DynamicImage::ImageRgb8(noise)).expect("cut");
        assert!(cut.pixels().all(|p| p.0[3] == 0), "noise has no subject");
        assert_eq!(remove_background(DynamicImage::ImageRgb8(RgbImage::new(0, 0))).expect("cut").dimensions(), (0, 0));
    }
}
