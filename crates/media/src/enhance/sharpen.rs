//! Luma-only unsharp masking with a thresholded detail layer, in a few rows of working memory.

use image::RgbImage;

use super::luma;

pub(super) const SHARPEN_SIGMA: f32 = 1.0;
pub(super) const SHARPEN_AMOUNT: f32 = 0.4;
/// Luma differences below this many levels are left alone so flat areas
/// (walls, ceilings, sky) keep their smoothness instead of gaining grain.
pub(super) const SHARPEN_THRESHOLD: f32 = 2.0;

/// Normalised Gaussian taps covering ±3 sigma.
fn gaussian_kernel(sigma: f32) -> Vec<f32> {
    let radius = (3.0 * sigma).ceil().max(1.0) as i32;
    let taps: Vec<f32> = (-radius..=radius).map(|x| (-((x * x) as f32) / (2.0 * sigma * sigma)).exp()).collect();
    let sum: f32 = taps.iter().sum();
    taps.into_iter().map(|t| t / sum).collect()
}

/// Unsharp mask on luma only, adding the same detail to R, G and B so edges
/// get crisper without coloured halos.
///
/// Horizontally blurred rows live in a ring of `2r+1` buffers, so extra memory
/// is a few rows rather than a full float copy of a possibly 8K image. Rows
/// are sharpened in place top to bottom; each ring row is filled before its
/// source row is modified, so the blur always sees original pixels.
pub(super) fn unsharp_luma(img: &mut RgbImage, sigma: f32, amount: f32, threshold: f32) {
    let (w, h) = (img.width() as usize, img.height() as usize);
    if w == 0 || h == 0 || amount == 0.0 {
        return;
    }
    let kernel = gaussian_kernel(sigma);
    let radius = kernel.len() / 2;
    let ring_len = kernel.len();
    let mut ring = vec![vec![0.0f32; w]; ring_len];
    let mut ring_row: Vec<Option<usize>> = vec![None; ring_len];
    let mut luma_row = vec![0.0f32; w];
    let mut blurred = vec![0.0f32; w];
    let stride = w * 3;
    let data: &mut [u8] = img;

    for y in 0..h {
        for k in 0..ring_len {
            let row = (y + k).saturating_sub(radius).min(h - 1);
            let slot = row % ring_len;
            if ring_row[slot] != Some(row) {
                row_luma(&data[row * stride..(row + 1) * stride], &mut luma_row);
                blur_row(&luma_row, &kernel, &mut ring[slot]);
                ring_row[slot] = Some(row);
            }
        }
        blurred.fill(0.0);
        for (k, &tap) in kernel.iter().enumerate() {
            let row = (y + k).saturating_sub(radius).min(h - 1);
            for (b, &v) in blurred.iter_mut().zip(&ring[row % ring_len]) {
                *b += tap * v;
            }
        }
        let pixels = &mut data[y * stride..(y + 1) * stride];
        for (px, &blur) in pixels.chunks_exact_mut(3).zip(&blurred) {
            let detail = luma([f32::from(px[0]), f32::from(px[1]), f32::from(px[2])]) - blur;
            if detail.abs() <= threshold {
                continue;
            }
            let delta = amount * detail;
            for v in px.iter_mut() {
                *v = (f32::from(*v) + delta).round().clamp(0.0, 255.0) as u8;
            }
        }
    }
}

fn row_luma(pixels: &[u8], out: &mut [f32]) {
    for (o, px) in out.iter_mut().zip(pixels.chunks_exact(3)) {
        *o = luma([f32::from(px[0]), f32::from(px[1]), f32::from(px[2])]);
    }
}

/// 1-D convolution with edge samples repeated, so borders are not darkened.
fn blur_row(src: &[f32], kernel: &[f32], dst: &mut [f32]) {
    let n = src.len();
    let radius = kernel.len() / 2;
    for (i, d) in dst.iter_mut().enumerate() {
        *d = kernel.iter().enumerate().map(|(k, &tap)| tap * src[(i + k).saturating_sub(radius).min(n - 1)]).sum();
    }
}
