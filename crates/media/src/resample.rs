//! Resampling: integer upscaling with sharpening, frame resizing and sub-pixel sampling.

use image::imageops::{self, FilterType};
use image::{DynamicImage, Rgb, RgbImage};

use crate::codecs::MAX_IMAGE_DIM;
/// Upscales by an integer factor with Lanczos3, then applies a mild unsharp mask.
///
/// `factor` is clamped to 2..=4 and lowered further if the result would exceed
/// [`MAX_IMAGE_DIM`] on a side (a factor of 1 then only sharpens), because the
/// output must stay decodable by [`crate::codecs::decode_image`]. Output is 8-bit RGB, or RGBA
/// when the input has alpha.
pub fn upscale(img: &DynamicImage, factor: u32) -> DynamicImage {
    let (w, h) = (img.width(), img.height());
    let mut f = factor.clamp(2, 4);
    while f > 1 && (w.saturating_mul(f) > MAX_IMAGE_DIM || h.saturating_mul(f) > MAX_IMAGE_DIM) {
        f -= 1;
    }
    if w == 0 || h == 0 {
        return img.clone();
    }
    let resized = if f > 1 { img.resize_exact(w * f, h * f, FilterType::Lanczos3) } else { img.clone() };
    // Interpolation blurs over roughly `f` pixels; a sigma of half that
    // restores edge contrast without ringing.
    let sigma = 0.5 * f as f32;
    // `fast_blur` (three box passes) works in two 8-bit buffers; a Gaussian `blur` would hold
    // floating-point copies of the whole enlarged picture.
    if resized.color().has_alpha() {
        let mut rgba = resized.into_rgba8();
        let blurred = imageops::fast_blur(&rgba, sigma);
        for (p, b) in rgba.pixels_mut().zip(blurred.pixels()) {
            for c in 0..3 {
                p.0[c] = sharpen_channel(p.0[c], b.0[c]);
            }
        }
        DynamicImage::ImageRgba8(rgba)
    } else {
        let mut rgb = resized.into_rgb8();
        let blurred = imageops::fast_blur(&rgb, sigma);
        for (p, b) in rgb.pixels_mut().zip(blurred.pixels()) {
            for c in 0..3 {
                p.0[c] = sharpen_channel(p.0[c], b.0[c]);
            }
        }
        DynamicImage::ImageRgb8(rgb)
    }
}

/// Unsharp-mask one sample; the threshold keeps flat noisy areas untouched.
fn sharpen_channel(orig: u8, blurred: u8) -> u8 {
    const AMOUNT: f32 = 0.6;
    const THRESHOLD: f32 = 2.0;
    let diff = f32::from(orig) - f32::from(blurred);
    if diff.abs() <= THRESHOLD {
        return orig;
    }
    (f32::from(orig) + AMOUNT * diff).round().clamp(0.0, 255.0) as u8
}

/// Resizes every frame to `width` x `height` with Lanczos3.
pub fn resize_frames(frames: &[RgbImage], width: u32, height: u32) -> Vec<RgbImage> {
    let (w, h) = (width.min(MAX_IMAGE_DIM), height.min(MAX_IMAGE_DIM));
    frames
        .iter()
        .map(|f| {
            if w == 0 || h == 0 || f.width() == 0 || f.height() == 0 {
                RgbImage::new(w, h)
            } else if f.dimensions() == (w, h) {
                f.clone()
            } else {
                imageops::resize(f, w, h, FilterType::Lanczos3)
            }
        })
        .collect()
}

/// Rounds a side down to even (H.264 4:2:0 needs even sides), at least 2, at most [`MAX_IMAGE_DIM`].
pub fn even_dim(v: u32) -> u32 {
    (v.min(MAX_IMAGE_DIM) & !1).max(2)
}

/// Bilinear sample with clamped edges.
pub fn sample_bilinear(img: &RgbImage, x: f32, y: f32) -> Rgb<u8> {
    let max_x = img.width() as f32 - 1.0;
    let max_y = img.height() as f32 - 1.0;
    let x = x.clamp(0.0, max_x);
    let y = y.clamp(0.0, max_y);
    let (x0, y0) = (x.floor(), y.floor());
    let (fx, fy) = (x - x0, y - y0);
    let (x0, y0) = (x0 as u32, y0 as u32);
    let x1 = (x0 + 1).min(img.width() - 1);
    let y1 = (y0 + 1).min(img.height() - 1);
    let p00 = img.get_pixel(x0, y0).0;
    let p10 = img.get_pixel(x1, y0).0;
    let p01 = img.get_pixel(x0, y1).0;
    let p11 = img.get_pixel(x1, y1).0;
    let mut out = [0u8; 3];
    for c in 0..3 {
        let top = f32::from(p00[c]) * (1.0 - fx) + f32::from(p10[c]) * fx;
        let bottom = f32::from(p01[c]) * (1.0 - fx) + f32::from(p11[c]) * fx;
        out[c] = (top * (1.0 - fy) + bottom * fy).round().clamp(0.0, 255.0) as u8;
    }
    Rgb(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_images::test_pattern;
    use image::RgbaImage;

    #[test]
    fn upscale_scales_and_clamps_factor() {
        let img = DynamicImage::ImageRgb8(test_pattern(10, 6));
        assert_eq!(upscale(&img, 3).to_rgb8().dimensions(), (30, 18));
        assert_eq!(upscale(&img, 9).to_rgb8().dimensions(), (40, 24));
        assert_eq!(upscale(&img, 0).to_rgb8().dimensions(), (20, 12));
        let rgba = DynamicImage::ImageRgba8(RgbaImage::new(4, 4));
        assert!(upscale(&rgba, 2).color().has_alpha());
        // A flat image must stay flat: sharpening adds no artefacts.
        let flat = DynamicImage::ImageRgb8(RgbImage::from_pixel(8, 8, Rgb([90, 90, 90])));
        assert!(upscale(&flat, 2).to_rgb8().pixels().all(|p| p.0 == [90, 90, 90]));
    }

    #[test]
    fn resize_frames_resizes_all() {
        let frames = vec![test_pattern(30, 20), test_pattern(30, 20)];
        let out = resize_frames(&frames, 16, 10);
        assert_eq!(out.len(), 2);
        assert!(out.iter().all(|f| f.dimensions() == (16, 10)));
    }
}
