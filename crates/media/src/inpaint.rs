//! Inpainting: fills a masked hole smoothly from its surroundings.

use std::collections::VecDeque;

use image::imageops::{self, FilterType};
use image::{DynamicImage, GrayImage, Rgb, RgbImage};

use crate::filters::neighbours4;
use crate::MediaError;

/// Fills the pixels where `mask` > 127 from their surroundings.
///
/// Onion-peel fill (each ring of the hole, outside in, takes a distance-weighted
/// average of already-known pixels) gives a good start, then successive
/// over-relaxation solves Laplace's equation inside the hole so the fill is
/// the smoothest surface matching the hole boundary: exact for linear
/// gradients, plausible for smooth areas, blurry for texture. Relaxation work
/// is capped, so very large holes get a bounded-time, slightly less exact
/// fill. A mask of a different size is resized to the image first.
pub fn inpaint(img: DynamicImage, mask: &GrayImage) -> Result<RgbImage, MediaError> {
    let mut rgb = img.into_rgb8();
    let (w, h) = rgb.dimensions();
    if w == 0 || h == 0 {
        return Err(MediaError::InvalidInput("cannot inpaint an empty image".into()));
    }
    if mask.width() == 0 || mask.height() == 0 {
        return Err(MediaError::InvalidInput("inpainting mask is empty".into()));
    }
    let resized;
    let mask = if mask.dimensions() == (w, h) {
        mask
    } else {
        resized = imageops::resize(mask, w, h, FilterType::Triangle);
        &resized
    };
    let (wu, hu) = (w as usize, h as usize);
    let hole: Vec<bool> = mask.pixels().map(|p| p.0[0] > 127).collect();
    let hole_count = hole.iter().filter(|&&b| b).count();
    if hole_count == 0 {
        return Ok(rgb);
    }
    if hole_count == hole.len() {
        return Err(MediaError::InvalidInput("inpainting mask covers the whole image; nothing to fill from".into()));
    }

    let mut data: Vec<[f32; 3]> =
        rgb.pixels().map(|p| [f32::from(p.0[0]), f32::from(p.0[1]), f32::from(p.0[2])]).collect();
    let layers = onion_layers(&hole, wu, hu);
    onion_fill(&mut data, &hole, &layers, wu, hu);
    let depth = layers.len();
    drop(layers);
    relax_hole(&mut data, &hole, wu, hu, depth);

    for (i, p) in rgb.pixels_mut().enumerate() {
        if hole[i] {
            let v = data[i];
            *p = Rgb([
                v[0].round().clamp(0.0, 255.0) as u8,
                v[1].round().clamp(0.0, 255.0) as u8,
                v[2].round().clamp(0.0, 255.0) as u8,
            ]);
        }
    }
    Ok(rgb)
}

/// Groups hole pixels by their 4-connected distance to known pixels.
/// Pixel indices are `u32` (a picture has at most 40 megapixels): half the memory of `usize`.
fn onion_layers(hole: &[bool], w: usize, h: usize) -> Vec<Vec<u32>> {
    let mut depth = vec![u32::MAX; w * h];
    let mut queue = VecDeque::new();
    for i in 0..w * h {
        if !hole[i] {
            depth[i] = 0;
            queue.push_back(i);
        }
    }
    let mut layers: Vec<Vec<u32>> = Vec::new();
    while let Some(i) = queue.pop_front() {
        let next = depth[i] + 1;
        for j in neighbours4(i, w, h).into_iter().flatten() {
            if depth[j] == u32::MAX {
                depth[j] = next;
                let layer = next as usize - 1;
                if layers.len() <= layer {
                    layers.resize_with(layer + 1, Vec::new);
                }
                layers[layer].push(j as u32);
                queue.push_back(j);
            }
        }
    }
    layers
}

/// Fills each layer from pixels known before that layer started, so the
/// result does not depend on scan order.
fn onion_fill(data: &mut [[f32; 3]], hole: &[bool], layers: &[Vec<u32>], w: usize, h: usize) {
    const RADIUS: isize = 2;
    let mut known: Vec<bool> = hole.iter().map(|&b| !b).collect();
    for layer in layers {
        let mut values = Vec::with_capacity(layer.len());
        for &i in layer {
            let i = i as usize;
            let (x, y) = ((i % w) as isize, (i / w) as isize);
            let mut acc = [0.0f32; 3];
            let mut wsum = 0.0f32;
            for dy in -RADIUS..=RADIUS {
                for dx in -RADIUS..=RADIUS {
                    let (xx, yy) = (x + dx, y + dy);
                    if (dx, dy) == (0, 0) || xx < 0 || yy < 0 || xx >= w as isize || yy >= h as isize {
                        continue;
                    }
                    let j = yy as usize * w + xx as usize;
                    if !known[j] {
                        continue;
                    }
                    let wgt = 1.0 / (dx * dx + dy * dy) as f32;
                    for c in 0..3 {
                        acc[c] += wgt * data[j][c];
                    }
                    wsum += wgt;
                }
            }
            values.push(if wsum > 0.0 { [acc[0] / wsum, acc[1] / wsum, acc[2] / wsum] } else { data[i] });
        }
        for (&i, v) in layer.iter().zip(values) {
            data[i as usize] = v;
            known[i as usize] = true;
        }
    }
}

/// Successive over-relaxation of Laplace's equation over the hole, with the
/// known pixels as fixed boundary values and reflecting image edges.
fn relax_hole(data: &mut [[f32; 3]], hole: &[bool], w: usize, h: usize, depth: usize) {
    let idx: Vec<u32> = (0..w * h).filter(|&i| hole[i]).map(|i| i as u32).collect();
    // Near-optimal SOR factor for a region about `2 * depth` pixels across.
    let span = (2 * depth).max(2) as f32;
    let omega = 2.0 / (1.0 + (std::f32::consts::PI / span).sin());
    // Cap total work (~2e8 pixel updates) so huge holes stay bounded in time;
    // the onion-peel start is already a reasonable fill if we stop early.
    let budget = (200_000_000 / idx.len().max(1)).max(5);
    let iterations = (4 * depth).clamp(20, 500).min(budget);
    for _ in 0..iterations {
        let mut max_change = 0.0f32;
        for &i in &idx {
            let i = i as usize;
            let mut acc = [0.0f32; 3];
            let mut count = 0.0f32;
            for j in neighbours4(i, w, h).into_iter().flatten() {
                for c in 0..3 {
                    acc[c] += data[j][c];
                }
                count += 1.0;
            }
            if count == 0.0 {
                continue;
            }
            for c in 0..3 {
                let delta = omega * (acc[c] / count - data[i][c]);
                data[i][c] += delta;
                max_change = max_change.max(delta.abs());
            }
        }
        if max_change < 0.01 {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{Luma, Rgb};

    #[test]
    fn inpaint_restores_gradient() -> Result<(), MediaError> {
        let (w, h) = (64, 48);
        let gradient = RgbImage::from_fn(w, h, |x, y| Rgb([(x * 3) as u8, (y * 4) as u8, 100]));
        let mut damaged = gradient.clone();
        let mut mask = GrayImage::new(w, h);
        for y in 14..34 {
            for x in 20..44 {
                damaged.put_pixel(x, y, Rgb([255, 0, 255]));
                mask.put_pixel(x, y, Luma([255]));
            }
        }
        let fixed = inpaint(DynamicImage::ImageRgb8(damaged), &mask)?;
        let mut worst = 0u8;
        for (a, b) in fixed.pixels().zip(gradient.pixels()) {
            for c in 0..3 {
                worst = worst.max(a.0[c].abs_diff(b.0[c]));
            }
        }
        assert!(worst <= 3, "worst error {worst}");
        Ok(())
    }

    #[test]
    fn inpaint_resizes_mask_and_validates() -> Result<(), MediaError> {
        let img = DynamicImage::ImageRgb8(RgbImage::from_pixel(40, 40, Rgb([50, 60, 70])));
        let mut small = GrayImage::new(10, 10);
        small.put_pixel(5, 5, Luma([255]));
        small.put_pixel(4, 5, Luma([255]));
        let out = inpaint(img.clone(), &small)?;
        assert!(out.pixels().all(|p| p.0 == [50, 60, 70]));
        let full = GrayImage::from_pixel(40, 40, Luma([255]));
        assert!(matches!(inpaint(img.clone(), &full), Err(MediaError::InvalidInput(_))));
        assert!(inpaint(img, &GrayImage::new(0, 0)).is_err());
        Ok(())
    }
}
