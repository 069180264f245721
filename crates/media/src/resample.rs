//! Resampling: integer upscaling with sharpening, frame resizing and sub-pixel windows.
//!
//! Convolution resampling runs on `fast_image_resize` (SSE4.1/AVX2/NEON kernels picked at run
//! time): several times faster than `image`'s scalar resize, which made an upscale cost more
//! than decoding and encoding together.

use fast_image_resize::images::{Image, ImageRef};
use fast_image_resize::{FilterType as Kernel, PixelType, ResizeAlg, ResizeOptions, Resizer};
use image::{DynamicImage, RgbImage, RgbaImage};

use crate::codecs::MAX_IMAGE_DIM;

/// The convolution kernel of a resize.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    /// Sharpest: for reductions and final upscales.
    Lanczos3,
    /// Slightly softer, no ringing: for enlarging photos that are then moved (the reel).
    CatmullRom,
    /// Softest and cheapest: for frames of a motion that only magnifies.
    Bilinear,
}

/// Resizes an RGB picture to `width` x `height` (each at least 1).
pub fn resize_rgb(img: &RgbImage, width: u32, height: u32, filter: Filter) -> RgbImage {
    let (w, h) = (width.max(1), height.max(1));
    if img.width() == 0 || img.height() == 0 {
        return RgbImage::new(w, h);
    }
    let out = convolve(img.as_raw(), img.dimensions(), (w, h), PixelType::U8x3, filter);
    RgbImage::from_raw(w, h, out).unwrap_or_else(|| RgbImage::new(w, h))
}

/// Resizes an RGBA picture to `width` x `height` (each at least 1), weighting colour by alpha
/// so transparent pixels do not bleed their colour into the edge.
pub fn resize_rgba(img: &RgbaImage, width: u32, height: u32, filter: Filter) -> RgbaImage {
    let (w, h) = (width.max(1), height.max(1));
    if img.width() == 0 || img.height() == 0 {
        return RgbaImage::new(w, h);
    }
    let out = convolve(img.as_raw(), img.dimensions(), (w, h), PixelType::U8x4, filter);
    RgbaImage::from_raw(w, h, out).unwrap_or_else(|| RgbaImage::new(w, h))
}

/// The `window` (left, top, width, height in source pixels, fractional) of an RGB picture
/// resampled to `width` x `height`: one frame of a pan or zoom, drawn by the SIMD kernels instead
/// of a bilinear sample per output pixel.
pub fn resize_window(
    img: &RgbImage,
    window: (f64, f64, f64, f64),
    width: u32,
    height: u32,
    filter: Filter,
) -> RgbImage {
    let (w, h) = (width.max(1), height.max(1));
    let mut out = RgbImage::new(w, h);
    resize_window_into(img, window, &mut out, (w, h), filter);
    out
}

/// [`resize_window`] into `out`, packed RGB of `size`: a renderer drawing many frames reuses
/// one buffer. A buffer of the wrong length is left as it is.
pub fn resize_window_into(
    img: &RgbImage,
    window: (f64, f64, f64, f64),
    out: &mut [u8],
    size: (u32, u32),
    filter: Filter,
) {
    let Ok(mut dst) = Image::from_slice_u8(size.0, size.1, out, PixelType::U8x3) else { return };
    if let Ok(src) = ImageRef::new(img.width(), img.height(), img.as_raw(), PixelType::U8x3) {
        let (left, top, cw, ch) = window;
        let options = ResizeOptions::new().resize_alg(ResizeAlg::Convolution(kernel(filter))).crop(left, top, cw, ch);
        let _ = Resizer::new().resize(&src, &mut dst, &options);
    }
}

fn kernel(filter: Filter) -> Kernel {
    match filter {
        Filter::Lanczos3 => Kernel::Lanczos3,
        Filter::CatmullRom => Kernel::CatmullRom,
        Filter::Bilinear => Kernel::Bilinear,
    }
}

/// One convolution resize of packed 8-bit pixels; the buffer sizes come from the typed images
/// above, so the library's size checks cannot fail (a failure would leave the output black).
fn convolve(src: &[u8], (sw, sh): (u32, u32), (dw, dh): (u32, u32), pixel: PixelType, filter: Filter) -> Vec<u8> {
    let mut dst = Image::new(dw, dh, pixel);
    if let Ok(src) = ImageRef::new(sw, sh, src, pixel) {
        let options = ResizeOptions::new().resize_alg(ResizeAlg::Convolution(kernel(filter)));
        let _ = Resizer::new().resize(&src, &mut dst, &options);
    }
    dst.into_vec()
}
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
    let resized = match img {
        _ if f == 1 => img.clone(),
        _ if img.color().has_alpha() => {
            DynamicImage::ImageRgba8(resize_rgba(&img.to_rgba8(), w * f, h * f, Filter::Lanczos3))
        }
        _ => DynamicImage::ImageRgb8(resize_rgb(&img.to_rgb8(), w * f, h * f, Filter::Lanczos3)),
    };
    // Interpolation blurs over roughly `f` pixels; a sigma of half that restores edge contrast
    // without ringing. Two box passes on the 8-bit samples approximate that Gaussian at a
    // fraction of the cost of a floating-point blur of the whole enlarged picture.
    let radius = box_radius(0.5 * f as f32);
    let (channels, mut samples, (rw, rh), alpha) = match resized {
        DynamicImage::ImageRgba8(rgba) => (4, rgba.as_raw().clone(), rgba.dimensions(), true),
        other => {
            let rgb = other.into_rgb8();
            let dims = rgb.dimensions();
            (3, rgb.into_raw(), dims, false)
        }
    };
    let threads = crate::job_threads();
    let blurred = box_blur_u8(&samples, (rw as usize, rh as usize), channels, radius, threads);
    let sharpened: Vec<u8> = (0..=u16::MAX).map(|i| sharpen_channel((i >> 8) as u8, i as u8)).collect();
    let row_len = rw as usize * channels;
    in_bands(&mut samples, row_len, threads, |first_row, band| {
        let blurred = &blurred[first_row * row_len..][..band.len()];
        // Bands start on a row, so a sample's place in its pixel is its place in the band's.
        for (i, (p, b)) in band.iter_mut().zip(blurred).enumerate() {
            if !(alpha && i % 4 == 3) {
                *p = sharpened[usize::from(*p) << 8 | usize::from(*b)];
            }
        }
    });
    if alpha {
        RgbaImage::from_raw(rw, rh, samples).map_or_else(|| img.clone(), DynamicImage::ImageRgba8)
    } else {
        RgbImage::from_raw(rw, rh, samples).map_or_else(|| img.clone(), DynamicImage::ImageRgb8)
    }
}

/// The box radius whose two passes come closest to a Gaussian of `sigma`
/// (two boxes of width `2r + 1` have variance `(2r^2 + 2r) / 3`).
fn box_radius(sigma: f32) -> usize {
    let r = (-1.0 + (1.0 + 6.0 * sigma * sigma).sqrt()) / 2.0;
    (r.round() as usize).max(1)
}

/// Two passes of a box blur of `radius` over packed 8-bit samples, rows then columns, edges
/// extended. Running sums make each pass cost the same whatever the radius.
fn box_blur_u8(src: &[u8], (w, h): (usize, usize), channels: usize, radius: usize, threads: usize) -> Vec<u8> {
    let mut a = src.to_vec();
    let mut b = vec![0u8; src.len()];
    for _ in 0..2 {
        blur_rows(&a, &mut b, w, channels, radius, threads);
        blur_columns(&b, &mut a, (w, h), channels, radius, threads);
    }
    a
}

/// `mean[sum]`: a window's sum divided by its width, rounded (a table beats a division per
/// sample).
fn mean_table(radius: usize) -> Vec<u8> {
    let width = (2 * radius + 1) as u32;
    (0..=255 * width).map(|sum| ((sum + width / 2) / width) as u8).collect()
}

fn blur_rows(src: &[u8], dst: &mut [u8], w: usize, channels: usize, radius: usize, threads: usize) {
    let mean = mean_table(radius);
    let row_len = w * channels;
    in_bands(dst, row_len, threads, |first_row, band| {
        for (y, out) in band.chunks_exact_mut(row_len).enumerate() {
            let row = &src[(first_row + y) * row_len..][..row_len];
            for c in 0..channels {
                let at = |x: usize| u32::from(row[x.min(w - 1) * channels + c]);
                let mut sum: u32 = u32::from(row[c]) * radius as u32 + (0..=radius).map(at).sum::<u32>();
                for x in 0..w {
                    out[x * channels + c] = mean[sum as usize];
                    sum += at(x + radius + 1);
                    sum -= at(x.saturating_sub(radius));
                }
            }
        }
    });
}

fn blur_columns(src: &[u8], dst: &mut [u8], (w, h): (usize, usize), channels: usize, radius: usize, threads: usize) {
    let mean = mean_table(radius);
    let row_len = w * channels;
    let row = |y: isize| &src[y.clamp(0, h as isize - 1) as usize * row_len..][..row_len];
    in_bands(dst, row_len, threads, |first_row, band| {
        // Each band starts its running sums afresh from the source rows around its first row.
        let first = first_row as isize;
        let mut sums = vec![0u32; row_len];
        for y in first - radius as isize..=first + radius as isize {
            for (s, &v) in sums.iter_mut().zip(row(y)) {
                *s += u32::from(v);
            }
        }
        for (k, out) in band.chunks_exact_mut(row_len).enumerate() {
            for (o, s) in out.iter_mut().zip(&sums) {
                *o = mean[*s as usize];
            }
            let y = first + k as isize;
            let (add, sub) = (row(y + radius as isize + 1), row(y - radius as isize));
            for ((s, &a), &d) in sums.iter_mut().zip(add).zip(sub) {
                *s = *s + u32::from(a) - u32::from(d);
            }
        }
    });
}

/// Runs `work` on bands of whole rows of `rows` (rows of `row_len` bytes), one band for each of
/// up to `threads` threads (what the job may use, [`crate::job_threads`]), each given its first
/// row's index. One thread runs it all in place.
fn in_bands(rows: &mut [u8], row_len: usize, threads: usize, work: impl Fn(usize, &mut [u8]) + Sync) {
    let count = rows.len() / row_len.max(1);
    let threads = threads.min(count).max(1);
    if threads == 1 {
        work(0, rows);
        return;
    }
    let band_rows = count.div_ceil(threads);
    std::thread::scope(|scope| {
        for (i, band) in rows.chunks_mut(band_rows * row_len).enumerate() {
            let work = &work;
            scope.spawn(move || work(i * band_rows, band));
        }
    });
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
                resize_rgb(f, w, h, Filter::Lanczos3)
            }
        })
        .collect()
}

/// Rounds a side down to even (H.264 4:2:0 needs even sides), at least 2, at most [`MAX_IMAGE_DIM`].
pub fn even_dim(v: u32) -> u32 {
    (v.min(MAX_IMAGE_DIM) & !1).max(2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_images::test_pattern;

    #[test]
    fn the_blur_in_bands_matches_the_blur_in_one_piece() {
        // 37 rows: bands of uneven height, the last shorter than the rest.
        let picture = test_pattern(23, 37);
        for (channels, samples) in
            [(3, picture.as_raw().clone()), (4, DynamicImage::ImageRgb8(picture).to_rgba8().into_raw())]
        {
            for radius in [1, 3] {
                let whole = box_blur_u8(&samples, (23, 37), channels, radius, 1);
                for threads in [2, 3, 8, 64] {
                    assert_eq!(
                        box_blur_u8(&samples, (23, 37), channels, radius, threads),
                        whole,
                        "{channels} {radius} {threads}"
                    );
                }
            }
        }
    }

    #[test]
    fn upscale_scales_and_clamps_factor() {
        let img = DynamicImage::ImageRgb8(test_pattern(10, 6));
        assert_eq!(upscale(&img, 3).to_rgb8().dimensions(), (30, 18));
        assert_eq!(upscale(&img, 9).to_rgb8().dimensions(), (40, 24));
        assert_eq!(upscale(&img, 0).to_rgb8().dimensions(), (20, 12));
        let rgba = DynamicImage::ImageRgba8(RgbaImage::new(4, 4));
        assert!(upscale(&rgba, 2).color().has_alpha());
        // A flat image must stay flat: sharpening adds no artefacts.
        let flat = DynamicImage::ImageRgb8(RgbImage::from_pixel(8, 8, image::Rgb([90, 90, 90])));
        assert!(upscale(&flat, 2).to_rgb8().pixels().all(|p| p.0 == [90, 90, 90]));
    }

    /// The SIMD resize agrees with `image`'s scalar Lanczos3: under one level on average (the
    /// two differ only at hard edges, by how they clamp the overshoot).
    #[test]
    fn resize_matches_the_reference_lanczos() {
        let img = test_pattern(97, 61);
        for (w, h) in [(40, 25), (194, 122), (300, 70)] {
            let ours = resize_rgb(&img, w, h, Filter::Lanczos3);
            let reference = image::imageops::resize(&img, w, h, image::imageops::FilterType::Lanczos3);
            let worst = ours
                .as_raw()
                .iter()
                .zip(reference.as_raw())
                .map(|(a, b)| (i16::from(*a) - i16::from(*b)).unsigned_abs())
                .max()
                .unwrap_or(0);
            let mean = ours
                .as_raw()
                .iter()
                .zip(reference.as_raw())
                .map(|(a, b)| f64::from((i16::from(*a) - i16::from(*b)).unsigned_abs()))
                .sum::<f64>()
                / ours.as_raw().len() as f64;
            assert!(mean < 1.0 && worst <= 48, "{w}x{h}: mean {mean:.2}, worst {worst}");
        }
        let rgba = RgbaImage::from_pixel(8, 8, image::Rgba([10, 200, 30, 255]));
        assert!(resize_rgba(&rgba, 3, 5, Filter::CatmullRom).pixels().all(|p| p.0 == [10, 200, 30, 255]));
    }

    #[test]
    fn resize_frames_resizes_all() {
        let frames = vec![test_pattern(30, 20), test_pattern(30, 20)];
        let out = resize_frames(&frames, 16, 10);
        assert_eq!(out.len(), 2);
        assert!(out.iter().all(|f| f.dimensions() == (16, 10)));
    }
}
