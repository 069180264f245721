//! Still-image processing: codecs, classical enhancement/segmentation/inpainting
//! and deterministic procedural "sandbox" generators.
//!
//! The sandbox generators stand in for generative models when none is
//! configured: their output is a function of the prompt and seed only, so
//! tests and demos are reproducible.

use std::collections::VecDeque;
use std::io::Cursor;

use image::codecs::jpeg::JpegEncoder;
use image::imageops::{self, FilterType};
use image::{DynamicImage, GrayImage, ImageFormat, ImageReader, Limits, Rgb, RgbImage, RgbaImage};

use super::seed::{fnv1a64, prompt_seed, Rng};
use super::MediaError;

/// Largest width/height accepted from untrusted input; bounds decoder memory.
pub const MAX_IMAGE_DIM: u32 = 8192;

/// Most frames an animation helper will produce; matches the video decode cap.
pub const MAX_ANIMATION_FRAMES: u32 = 1800;

/// Decodes PNG or JPEG bytes (format sniffed from the content).
///
/// Dimensions above [`MAX_IMAGE_DIM`] are rejected before pixel data is
/// allocated, so hostile headers cannot exhaust memory.
pub fn decode_image(bytes: &[u8]) -> Result<DynamicImage, MediaError> {
    if bytes.is_empty() {
        return Err(MediaError::InvalidInput("empty image data".into()));
    }
    let mut reader =
        ImageReader::new(Cursor::new(bytes)).with_guessed_format().map_err(|e| MediaError::Decode(e.to_string()))?;
    match reader.format() {
        Some(ImageFormat::Png | ImageFormat::Jpeg) => {}
        Some(other) => {
            return Err(MediaError::InvalidInput(format!("unsupported image format {other:?}; expected PNG or JPEG")))
        }
        None => return Err(MediaError::InvalidInput("unrecognised image data; expected PNG or JPEG".into())),
    }
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_IMAGE_DIM);
    limits.max_image_height = Some(MAX_IMAGE_DIM);
    reader.limits(limits);
    reader.decode().map_err(|e| MediaError::Decode(e.to_string()))
}

/// Encodes any image as PNG, keeping alpha and 16-bit depth when present.
pub fn encode_png(img: &DynamicImage) -> Result<Vec<u8>, MediaError> {
    if img.width() == 0 || img.height() == 0 {
        return Err(MediaError::InvalidInput("cannot encode an empty image".into()));
    }
    // PNG has no float samples; quantise those rather than failing.
    let converted;
    let img = match img {
        DynamicImage::ImageRgb32F(_) => {
            converted = DynamicImage::ImageRgb16(img.to_rgb16());
            &converted
        }
        DynamicImage::ImageRgba32F(_) => {
            converted = DynamicImage::ImageRgba16(img.to_rgba16());
            &converted
        }
        _ => img,
    };
    let mut out = Vec::new();
    img.write_to(&mut Cursor::new(&mut out), ImageFormat::Png).map_err(|e| MediaError::Encode(e.to_string()))?;
    Ok(out)
}

/// Encodes an RGB image as baseline JPEG; `quality` is clamped to 1..=100.
pub fn encode_jpeg(img: &RgbImage, quality: u8) -> Result<Vec<u8>, MediaError> {
    if img.width() == 0 || img.height() == 0 {
        return Err(MediaError::InvalidInput("cannot encode an empty image".into()));
    }
    let mut out = Vec::new();
    JpegEncoder::new_with_quality(&mut out, quality.clamp(1, 100))
        .encode_image(img)
        .map_err(|e| MediaError::Encode(e.to_string()))?;
    Ok(out)
}

/// Upscales by an integer factor with Lanczos3, then applies a mild unsharp mask.
///
/// `factor` is clamped to 2..=4 and lowered further if the result would exceed
/// [`MAX_IMAGE_DIM`] on a side (a factor of 1 then only sharpens), because the
/// output must stay decodable by [`decode_image`]. Output is 8-bit RGB, or RGBA
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
    if resized.color().has_alpha() {
        let mut rgba = resized.to_rgba8();
        let blurred = imageops::blur(&rgba, sigma);
        for (p, b) in rgba.pixels_mut().zip(blurred.pixels()) {
            for c in 0..3 {
                p.0[c] = sharpen_channel(p.0[c], b.0[c]);
            }
        }
        DynamicImage::ImageRgba8(rgba)
    } else {
        let mut rgb = resized.to_rgb8();
        let blurred = imageops::blur(&rgb, sigma);
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

// ---------------------------------------------------------------------------
// Background removal
// ---------------------------------------------------------------------------

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

/// Separable box blur with clamped edges; two passes approximate a Gaussian.
/// Running sums keep it O(pixels) whatever the radius.
fn box_blur(data: &mut [f32], w: usize, h: usize, radius: usize) {
    let mut line = vec![0.0f32; w.max(h)];
    let mut blurred = vec![0.0f32; w.max(h)];
    for y in 0..h {
        let row = &mut data[y * w..(y + 1) * w];
        blur_1d(row, &mut blurred[..w], radius);
        row.copy_from_slice(&blurred[..w]);
    }
    for x in 0..w {
        for (y, v) in line[..h].iter_mut().enumerate() {
            *v = data[y * w + x];
        }
        blur_1d(&line[..h], &mut blurred[..h], radius);
        for (y, v) in blurred[..h].iter().enumerate() {
            data[y * w + x] = *v;
        }
    }
}

fn blur_1d(src: &[f32], dst: &mut [f32], radius: usize) {
    let n = src.len();
    if n == 0 {
        return;
    }
    let r = radius as isize;
    let at = |i: isize| f64::from(src[i.clamp(0, n as isize - 1) as usize]);
    let mut acc: f64 = (-r..=r).map(at).sum();
    let norm = 1.0 / (2 * radius + 1) as f64;
    for (i, d) in dst.iter_mut().enumerate() {
        *d = (acc * norm) as f32;
        let i = i as isize;
        acc += at(i + r + 1) - at(i - r);
    }
}

/// sRGB (D65) to CIELAB, where Euclidean distance tracks perceived difference.
fn srgb_to_lab(rgb: [u8; 3]) -> [f32; 3] {
    let lin = |c: u8| {
        let c = f32::from(c) / 255.0;
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    let (r, g, b) = (lin(rgb[0]), lin(rgb[1]), lin(rgb[2]));
    let x = (0.412_456_4 * r + 0.357_576_1 * g + 0.180_437_5 * b) / 0.950_47;
    let y = 0.212_672_9 * r + 0.715_152_2 * g + 0.072_175 * b;
    let z = (0.019_333_9 * r + 0.119_192 * g + 0.950_304_1 * b) / 1.088_83;
    let f = |t: f32| {
        if t > 0.008_856 {
            t.cbrt()
        } else {
            7.787 * t + 16.0 / 116.0
        }
    };
    let (fx, fy, fz) = (f(x), f(y), f(z));
    [116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)]
}

// ---------------------------------------------------------------------------
// Inpainting
// ---------------------------------------------------------------------------

/// Fills the pixels where `mask` > 127 from their surroundings.
///
/// Onion-peel fill (each ring of the hole, outside in, takes a distance-weighted
/// average of already-known pixels) gives a good start, then successive
/// over-relaxation solves Laplace's equation inside the hole so the fill is
/// the smoothest surface matching the hole boundary: exact for linear
/// gradients, plausible for smooth areas, blurry for texture. Relaxation work
/// is capped, so very large holes get a bounded-time, slightly less exact
/// fill. A mask of a different size is resized to the image first.
pub fn inpaint(img: &DynamicImage, mask: &GrayImage) -> Result<RgbImage, MediaError> {
    let mut rgb = img.to_rgb8();
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
    relax_hole(&mut data, &hole, wu, hu, layers.len());

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
fn onion_layers(hole: &[bool], w: usize, h: usize) -> Vec<Vec<usize>> {
    let mut depth = vec![u32::MAX; w * h];
    let mut queue = VecDeque::new();
    for i in 0..w * h {
        if !hole[i] {
            depth[i] = 0;
            queue.push_back(i);
        }
    }
    let mut layers: Vec<Vec<usize>> = Vec::new();
    while let Some(i) = queue.pop_front() {
        let (x, y) = (i % w, i / w);
        let next = depth[i] + 1;
        let neighbours =
            [(x > 0).then(|| i - 1), (x + 1 < w).then(|| i + 1), (y > 0).then(|| i - w), (y + 1 < h).then(|| i + w)];
        for j in neighbours.into_iter().flatten() {
            if depth[j] == u32::MAX {
                depth[j] = next;
                let layer = next as usize - 1;
                if layers.len() <= layer {
                    layers.resize_with(layer + 1, Vec::new);
                }
                layers[layer].push(j);
                queue.push_back(j);
            }
        }
    }
    layers
}

/// Fills each layer from pixels known before that layer started, so the
/// result does not depend on scan order.
fn onion_fill(data: &mut [[f32; 3]], hole: &[bool], layers: &[Vec<usize>], w: usize, h: usize) {
    const RADIUS: isize = 2;
    let mut known: Vec<bool> = hole.iter().map(|&b| !b).collect();
    for layer in layers {
        let mut values = Vec::with_capacity(layer.len());
        for &i in layer {
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
            data[i] = v;
            known[i] = true;
        }
    }
}

/// Successive over-relaxation of Laplace's equation over the hole, with the
/// known pixels as fixed boundary values and reflecting image edges.
fn relax_hole(data: &mut [[f32; 3]], hole: &[bool], w: usize, h: usize, depth: usize) {
    let idx: Vec<usize> = (0..w * h).filter(|&i| hole[i]).collect();
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
            let (x, y) = (i % w, i / w);
            let mut acc = [0.0f32; 3];
            let mut count = 0.0f32;
            let neighbours = [
                (x > 0).then(|| i - 1),
                (x + 1 < w).then(|| i + 1),
                (y > 0).then(|| i - w),
                (y + 1 < h).then(|| i + w),
            ];
            for j in neighbours.into_iter().flatten() {
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

// ---------------------------------------------------------------------------
// Sandbox generators
// ---------------------------------------------------------------------------

/// Deterministic procedural picture for `prompt` + `seed` (sandbox stand-in
/// for a text-to-image model).
///
/// Palette, gradient, glow, shapes and grain all derive from a stable FNV-1a
/// hash, so identical inputs give identical bytes and different prompts look
/// clearly different. Each side is clamped to [`MAX_IMAGE_DIM`].
pub fn sandbox_image(prompt: &str, seed: u64, width: u32, height: u32) -> RgbImage {
    let scene = Scene::new(prompt, seed);
    scene.render(width.min(MAX_IMAGE_DIM), height.min(MAX_IMAGE_DIM), 0.0)
}

/// Deterministic visible edit of `img` for `prompt` + `seed` (sandbox stand-in
/// for an instruction-edit model): colour grade, prompt-coloured tint and
/// vignette. Output has the input's size.
pub fn sandbox_edit(img: &DynamicImage, prompt: &str, seed: u64) -> RgbImage {
    let mut rgb = img.to_rgb8();
    let (w, h) = rgb.dimensions();
    if w == 0 || h == 0 {
        return rgb;
    }
    let mut rng = Rng::new(prompt_seed(prompt, seed));
    let tint = hsv_to_rgb(rng.unit() as f32, rng.range(0.5, 0.9) as f32, 1.0);
    let tint_strength = rng.range(0.2, 0.4) as f32;
    let gains = [rng.range(0.85, 1.15) as f32, rng.range(0.85, 1.15) as f32, rng.range(0.85, 1.15) as f32];
    let gamma = rng.range(0.8, 1.25) as f32;
    let saturation = rng.range(0.6, 1.5) as f32;
    let contrast = rng.range(0.9, 1.25) as f32;
    let vignette = rng.range(0.35, 0.6) as f32;

    let (cx, cy) = (w as f32 / 2.0, h as f32 / 2.0);
    let max_r2 = cx * cx + cy * cy;
    for (x, y, p) in rgb.enumerate_pixels_mut() {
        let mut c = [0.0f32; 3];
        for k in 0..3 {
            let v = f32::from(p.0[k]) / 255.0;
            c[k] = (v * gains[k]).clamp(0.0, 1.0).powf(gamma);
        }
        let luma = 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2];
        let (dx, dy) = (x as f32 + 0.5 - cx, y as f32 + 0.5 - cy);
        let falloff = 1.0 - vignette * ((dx * dx + dy * dy) / max_r2).powf(1.3);
        for k in 0..3 {
            let mut v = luma + (c[k] - luma) * saturation;
            v = (v - 0.5) * contrast + 0.5;
            v = v * (1.0 - tint_strength) + tint[k] * luma * tint_strength * 1.6;
            c[k] = v * falloff;
        }
        *p = Rgb(to_rgb8(c));
    }
    rgb
}

/// Ken-Burns animation over a still: the crop window glides and zooms smoothly
/// (eased) between two seed-chosen framings.
///
/// Odd sizes are rounded down to even (minimum 2) because H.264 4:2:0 needs
/// even dimensions; `frame_count` is capped at [`MAX_ANIMATION_FRAMES`] and
/// sizes at [`MAX_IMAGE_DIM`].
pub fn pan_zoom_frames(img: &DynamicImage, width: u32, height: u32, frame_count: u32, seed: u64) -> Vec<RgbImage> {
    let (w, h) = (even_dim(width), even_dim(height));
    let n = frame_count.min(MAX_ANIMATION_FRAMES);
    if n == 0 {
        return Vec::new();
    }
    let mut src = img.to_rgb8();
    if src.width() == 0 || src.height() == 0 {
        return (0..n).map(|_| RgbImage::new(w, h)).collect();
    }
    let mut rng = Rng::new(prompt_seed("pan-zoom", seed));
    let zoom_max = rng.range(1.15, 1.35);
    let (zoom_start, zoom_end) = if rng.chance(0.5) { (1.0, zoom_max) } else { (zoom_max, 1.0) };

    // Shrink large sources first so per-frame bilinear sampling never has to
    // minify (which would alias); keep enough pixels for the tightest zoom.
    let aspect = f64::from(w) / f64::from(h);
    let full_win_w = f64::from(src.width()).min(f64::from(src.height()) * aspect);
    let scale = f64::from(w) * zoom_max / full_win_w;
    if scale < 1.0 {
        let nw = ((f64::from(src.width()) * scale).round() as u32).max(1);
        let nh = ((f64::from(src.height()) * scale).round() as u32).max(1);
        src = imageops::resize(&src, nw, nh, FilterType::CatmullRom);
    }
    let (sw, sh) = (f64::from(src.width()), f64::from(src.height()));
    let (win_w, win_h) = if sw / sh > aspect { (sh * aspect, sh) } else { (sw, sw / aspect) };

    // Pan from one side of the free range to the other so motion is visible.
    let fx = rng.unit();
    let fy = rng.unit();
    let keyframe = |zoom: f64, ux: f64, uy: f64| {
        let (ww, wh) = (win_w / zoom, win_h / zoom);
        let cx = ww / 2.0 + (sw - ww) * ux;
        let cy = wh / 2.0 + (sh - wh) * uy;
        (cx, cy)
    };
    let start = keyframe(zoom_start, fx, fy);
    let end = keyframe(zoom_end, 1.0 - fx, 1.0 - fy);

    (0..n)
        .map(|i| {
            let t = if n > 1 { f64::from(i) / f64::from(n - 1) } else { 0.0 };
            let e = t * t * (3.0 - 2.0 * t);
            // Geometric zoom interpolation feels uniform to the eye.
            let zoom = zoom_start * (zoom_end / zoom_start).powf(e);
            let (ww, wh) = (win_w / zoom, win_h / zoom);
            let cx = (start.0 + (end.0 - start.0) * e).clamp(ww / 2.0, sw - ww / 2.0);
            let cy = (start.1 + (end.1 - start.1) * e).clamp(wh / 2.0, sh - wh / 2.0);
            let (x0, y0) = (cx - ww / 2.0, cy - wh / 2.0);
            let mut frame = RgbImage::new(w, h);
            for (ox, oy, p) in frame.enumerate_pixels_mut() {
                let sx = x0 + (f64::from(ox) + 0.5) * ww / f64::from(w) - 0.5;
                let sy = y0 + (f64::from(oy) + 0.5) * wh / f64::from(h) - 0.5;
                *p = sample_bilinear(&src, sx as f32, sy as f32);
            }
            frame
        })
        .collect()
}

/// Deterministic animated procedural scene (sandbox stand-in for a
/// text-to-video model): shapes drift on looping paths over a slowly turning
/// gradient, so the last frame flows back into the first.
///
/// Sizes are rounded down to even (minimum 2) and capped at [`MAX_IMAGE_DIM`];
/// `frame_count` is capped at [`MAX_ANIMATION_FRAMES`].
pub fn sandbox_motion_frames(prompt: &str, seed: u64, width: u32, height: u32, frame_count: u32) -> Vec<RgbImage> {
    let (w, h) = (even_dim(width), even_dim(height));
    let n = frame_count.min(MAX_ANIMATION_FRAMES);
    let scene = Scene::new(prompt, seed);
    (0..n).map(|i| scene.render(w, h, f64::from(i) / f64::from(n))).collect()
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

fn even_dim(v: u32) -> u32 {
    (v.min(MAX_IMAGE_DIM) & !1).max(2)
}

/// Bilinear sample with clamped edges.
fn sample_bilinear(img: &RgbImage, x: f32, y: f32) -> Rgb<u8> {
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

fn to_rgb8(c: [f32; 3]) -> [u8; 3] {
    [
        (c[0] * 255.0).round().clamp(0.0, 255.0) as u8,
        (c[1] * 255.0).round().clamp(0.0, 255.0) as u8,
        (c[2] * 255.0).round().clamp(0.0, 255.0) as u8,
    ]
}

/// HSV (all components in 0..1) to linear-ish RGB in 0..1.
fn hsv_to_rgb(h: f32, s: f32, v: f32) -> [f32; 3] {
    let h6 = (h.rem_euclid(1.0)) * 6.0;
    let sector = h6.floor();
    let f = h6 - sector;
    let p = v * (1.0 - s);
    let q = v * (1.0 - s * f);
    let t = v * (1.0 - s * (1.0 - f));
    match sector as u32 {
        0 => [v, t, p],
        1 => [q, v, p],
        2 => [p, v, t],
        3 => [p, q, v],
        4 => [t, p, v],
        _ => [v, p, q],
    }
}

#[derive(Debug, Clone, Copy)]
enum ShapeKind {
    Disc,
    Ring,
    Square,
}

/// One procedural shape, in coordinates where the shorter image side is 1.
#[derive(Debug, Clone)]
struct Shape {
    kind: ShapeKind,
    centre: (f32, f32),
    size: f32,
    colour: [f32; 3],
    opacity: f32,
    /// Looping motion: amplitude, whole-number cycles per loop and phase.
    amplitude: (f32, f32),
    cycles: (f32, f32),
    phase: (f32, f32),
    spin: f32,
}

/// Everything a sandbox picture derives from its prompt hash.
#[derive(Debug, Clone)]
struct Scene {
    top: [f32; 3],
    bottom: [f32; 3],
    angle: f32,
    glow_centre: (f32, f32),
    glow_colour: [f32; 3],
    glow_radius: f32,
    shapes: Vec<Shape>,
    noise_seed: u64,
    noise_cell: f32,
    noise_amp: f32,
}

impl Scene {
    fn new(prompt: &str, seed: u64) -> Self {
        let base = prompt_seed(prompt, seed);
        let mut rng = Rng::new(base);
        let hue = rng.unit() as f32;
        let harmony = [0.08f32, 0.33, 0.5, 0.58][rng.index(4)];
        let top = hsv_to_rgb(hue, rng.range(0.35, 0.8) as f32, rng.range(0.55, 0.95) as f32);
        let bottom = hsv_to_rgb(hue + harmony, rng.range(0.4, 0.9) as f32, rng.range(0.15, 0.5) as f32);
        let angle = rng.range(0.0, std::f64::consts::TAU) as f32;
        let glow_centre = (rng.range(0.2, 0.8) as f32, rng.range(0.2, 0.8) as f32);
        let glow_colour = hsv_to_rgb(hue + 0.5 * harmony, 0.3, 1.0);
        let glow_radius = rng.range(0.25, 0.6) as f32;

        // Each word contributes its own shape (hashed independently of order
        // and seed position) so prompts that differ by a word differ visibly.
        let mut shapes = Vec::new();
        let words: Vec<&str> = prompt.split_whitespace().take(8).collect();
        for (i, word) in words.iter().enumerate() {
            let word_hash = fnv1a64(word.to_lowercase().as_bytes()) ^ base.rotate_left(i as u32 * 7 + 1);
            shapes.push(Shape::random(&mut Rng::new(word_hash), hue, harmony));
        }
        while shapes.len() < 3 {
            shapes.push(Shape::random(&mut rng, hue, harmony));
        }
        Self {
            top,
            bottom,
            angle,
            glow_centre,
            glow_colour,
            glow_radius,
            shapes,
            noise_seed: rng.next_u64(),
            noise_cell: rng.range(0.04, 0.12) as f32,
            noise_amp: rng.range(0.03, 0.07) as f32,
        }
    }

    /// Renders the scene at loop position `t` in [0, 1).
    fn render(&self, w: u32, h: u32, t: f64) -> RgbImage {
        let mut img = RgbImage::new(w, h);
        if w == 0 || h == 0 {
            return img;
        }
        let unit = w.min(h) as f32;
        let (aw, ah) = (w as f32 / unit, h as f32 / unit);
        let tau = std::f32::consts::TAU;
        let t = t as f32;
        let angle = self.angle + 0.6 * (tau * t).sin();
        let (dir_x, dir_y) = (angle.cos(), angle.sin());
        let half_extent = 0.5 * (aw * dir_x.abs() + ah * dir_y.abs());
        let pixel = 1.0 / unit;

        // Resolve animated shape positions once per frame.
        let placed: Vec<(&Shape, f32, f32, f32)> = self
            .shapes
            .iter()
            .map(|s| {
                let cx = s.centre.0 * aw + s.amplitude.0 * (tau * (s.cycles.0 * t + s.phase.0)).sin();
                let cy = s.centre.1 * ah + s.amplitude.1 * (tau * (s.cycles.1 * t + s.phase.1)).cos();
                (s, cx, cy, s.spin * tau * t)
            })
            .collect();

        for (x, y, p) in img.enumerate_pixels_mut() {
            let u = (x as f32 + 0.5) / unit;
            let v = (y as f32 + 0.5) / unit;
            let g = (((u - aw / 2.0) * dir_x + (v - ah / 2.0) * dir_y) / (2.0 * half_extent.max(1e-3)) + 0.5)
                .clamp(0.0, 1.0);
            let mut c: [f32; 3] = std::array::from_fn(|k| self.top[k] * (1.0 - g) + self.bottom[k] * g);
            let (gx, gy) = (u - self.glow_centre.0 * aw, v - self.glow_centre.1 * ah);
            let glow = (-(gx * gx + gy * gy) / (self.glow_radius * self.glow_radius)).exp() * 0.45;
            for (ck, gk) in c.iter_mut().zip(self.glow_colour) {
                *ck += (gk - *ck) * glow;
            }
            for &(shape, cx, cy, rot) in &placed {
                let size = shape.size;
                let (dx, dy) = (u - cx, v - cy);
                let dist = match shape.kind {
                    ShapeKind::Disc => (dx * dx + dy * dy).sqrt() - size,
                    ShapeKind::Ring => ((dx * dx + dy * dy).sqrt() - size).abs() - size * 0.18,
                    ShapeKind::Square => {
                        let (s, co) = rot.sin_cos();
                        let (rx, ry) = (dx * co + dy * s, -dx * s + dy * co);
                        let r = size * 0.25;
                        let (qx, qy) = (rx.abs() - size + r, ry.abs() - size + r);
                        let outside = (qx.max(0.0).powi(2) + qy.max(0.0).powi(2)).sqrt();
                        outside + qx.max(qy).min(0.0) - r
                    }
                };
                // Anti-aliased edge about 1.5 px wide.
                let cover = (0.5 - dist / (1.5 * pixel)).clamp(0.0, 1.0) * shape.opacity;
                if cover > 0.0 {
                    // Subtle internal shading gives shapes some volume.
                    let shade = 1.0 - 0.25 * ((dy / size.max(1e-3)).clamp(-1.0, 1.0) * 0.5 + 0.5);
                    for (ck, sk) in c.iter_mut().zip(shape.colour) {
                        *ck += (sk * shade - *ck) * cover;
                    }
                }
            }
            let grain = value_noise(self.noise_seed, u / self.noise_cell, v / self.noise_cell) * 0.65
                + value_noise(self.noise_seed ^ 0x5555, u / (self.noise_cell * 0.4), v / (self.noise_cell * 0.4))
                    * 0.35;
            for ck in &mut c {
                *ck += (grain - 0.5) * self.noise_amp * 2.0;
            }
            *p = Rgb(to_rgb8(c));
        }
        img
    }
}

impl Shape {
    fn random(rng: &mut Rng, hue: f32, harmony: f32) -> Self {
        let kind = [ShapeKind::Disc, ShapeKind::Ring, ShapeKind::Square][rng.index(3)];
        let shape_hue = hue + [0.0, harmony, -harmony, 0.5][rng.index(4)] + rng.range(-0.05, 0.05) as f32;
        Self {
            kind,
            centre: (rng.range(0.15, 0.85) as f32, rng.range(0.15, 0.85) as f32),
            size: rng.range(0.06, 0.22) as f32,
            colour: hsv_to_rgb(shape_hue, rng.range(0.45, 0.95) as f32, rng.range(0.6, 1.0) as f32),
            opacity: rng.range(0.55, 0.95) as f32,
            amplitude: (rng.range(0.05, 0.25) as f32, rng.range(0.03, 0.18) as f32),
            cycles: ((1 + rng.index(2)) as f32, (1 + rng.index(2)) as f32),
            phase: (rng.unit() as f32, rng.unit() as f32),
            spin: [-1.0f32, 0.0, 1.0][rng.index(3)] * 0.25,
        }
    }
}

/// Smooth value noise in [0, 1] on an integer lattice hashed with `seed`.
fn value_noise(seed: u64, x: f32, y: f32) -> f32 {
    let (xf, yf) = (x.floor(), y.floor());
    let (fx, fy) = (x - xf, y - yf);
    let (xi, yi) = (xf as i64, yf as i64);
    let lattice = |ix: i64, iy: i64| {
        let h = super::seed::mix64(
            seed ^ (ix as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (iy as u64).wrapping_mul(0xc2b2_ae3d_27d4_eb4f),
        );
        (h >> 40) as f32 / (1u64 << 24) as f32
    };
    let sx = fx * fx * (3.0 - 2.0 * fx);
    let sy = fy * fy * (3.0 - 2.0 * fy);
    let top = lattice(xi, yi) * (1.0 - sx) + lattice(xi + 1, yi) * sx;
    let bottom = lattice(xi, yi + 1) * (1.0 - sx) + lattice(xi + 1, yi + 1) * sx;
    top * (1.0 - sy) + bottom * sy
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{Luma, Rgba};

    fn test_pattern(w: u32, h: u32) -> RgbImage {
        RgbImage::from_fn(w, h, |x, y| Rgb([(x * 7) as u8, (y * 5) as u8, ((x + y) * 3) as u8]))
    }

    #[test]
    fn png_roundtrip_preserves_pixels() -> Result<(), MediaError> {
        let img = DynamicImage::ImageRgb8(test_pattern(33, 17));
        let png = encode_png(&img)?;
        let back = decode_image(&png)?;
        assert_eq!(back.to_rgb8(), img.to_rgb8());
        let rgba = DynamicImage::ImageRgba8(RgbaImage::from_pixel(5, 4, Rgba([1, 2, 3, 4])));
        assert_eq!(decode_image(&encode_png(&rgba)?)?.to_rgba8(), rgba.to_rgba8());
        Ok(())
    }

    #[test]
    fn jpeg_roundtrip_keeps_size_and_colour() -> Result<(), MediaError> {
        let img = RgbImage::from_pixel(40, 24, Rgb([200, 40, 60]));
        let jpg = encode_jpeg(&img, 90)?;
        let back = decode_image(&jpg)?.to_rgb8();
        assert_eq!(back.dimensions(), (40, 24));
        let p = back.get_pixel(20, 12).0;
        assert!(p[0].abs_diff(200) < 10 && p[1].abs_diff(40) < 10 && p[2].abs_diff(60) < 10);
        Ok(())
    }

    #[test]
    fn decode_rejects_garbage_and_oversized() {
        assert!(matches!(decode_image(b""), Err(MediaError::InvalidInput(_))));
        assert!(decode_image(b"definitely not an image").is_err());
        // A PNG header claiming 9000x10 must be refused by the limits.
        let big = DynamicImage::ImageLuma8(GrayImage::new(MAX_IMAGE_DIM + 8, 1));
        let png = encode_png(&big).map_err(|e| e.to_string());
        assert!(png.is_ok());
        if let Ok(png) = png {
            assert!(decode_image(&png).is_err());
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
        let flat = DynamicImage::ImageRgb8(RgbImage::from_pixel(8, 8, Rgb([90, 90, 90])));
        assert!(upscale(&flat, 2).to_rgb8().pixels().all(|p| p.0 == [90, 90, 90]));
    }

    /// Red disc on a noisy grey backdrop.
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
        let fixed = inpaint(&DynamicImage::ImageRgb8(damaged), &mask)?;
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
        let out = inpaint(&img, &small)?;
        assert!(out.pixels().all(|p| p.0 == [50, 60, 70]));
        let full = GrayImage::from_pixel(40, 40, Luma([255]));
        assert!(matches!(inpaint(&img, &full), Err(MediaError::InvalidInput(_))));
        assert!(inpaint(&img, &GrayImage::new(0, 0)).is_err());
        Ok(())
    }

    #[test]
    fn sandbox_image_is_deterministic_and_prompt_sensitive() {
        let a = sandbox_image("a red fox in snow", 7, 64, 48);
        let b = sandbox_image("a red fox in snow", 7, 64, 48);
        let c = sandbox_image("a blue whale at dusk", 7, 64, 48);
        let d = sandbox_image("a red fox in snow", 8, 64, 48);
        assert_eq!(a.dimensions(), (64, 48));
        assert_eq!(a, b);
        assert!(mean_abs_diff(&a, &c) > 10.0);
        assert_ne!(a, d);
        // Not a flat fill.
        let first = a.get_pixel(0, 0);
        assert!(a.pixels().filter(|p| *p != first).count() > 1000);
    }

    #[test]
    fn sandbox_edit_is_deterministic_and_visible() {
        let src = DynamicImage::ImageRgb8(test_pattern(40, 30));
        let a = sandbox_edit(&src, "make it warmer", 1);
        assert_eq!(a.dimensions(), (40, 30));
        assert_eq!(a, sandbox_edit(&src, "make it warmer", 1));
        assert!(mean_abs_diff(&a, &src.to_rgb8()) > 5.0);
        assert_ne!(a, sandbox_edit(&src, "make it colder", 1));
    }

    #[test]
    fn pan_zoom_frames_move_smoothly() {
        let src = DynamicImage::ImageRgb8(sandbox_image("mountain lake", 3, 200, 120));
        let frames = pan_zoom_frames(&src, 65, 48, 10, 5);
        assert_eq!(frames.len(), 10);
        assert!(frames.iter().all(|f| f.dimensions() == (64, 48)));
        assert_ne!(frames[0], frames[9]);
        // Adjacent frames differ less than the endpoints do.
        let step = mean_abs_diff(&frames[4], &frames[5]);
        assert!(step < mean_abs_diff(&frames[0], &frames[9]));
        assert_eq!(frames, pan_zoom_frames(&src, 64, 48, 10, 5));
        assert!(pan_zoom_frames(&src, 64, 48, 0, 5).is_empty());
    }

    #[test]
    fn motion_frames_are_deterministic_and_animated() {
        let a = sandbox_motion_frames("dancing lights", 1, 48, 32, 6);
        assert_eq!(a.len(), 6);
        assert!(a.iter().all(|f| f.dimensions() == (48, 32)));
        assert_ne!(a[0], a[3]);
        assert_eq!(a, sandbox_motion_frames("dancing lights", 1, 48, 32, 6));
        assert_ne!(a, sandbox_motion_frames("quiet ocean", 1, 48, 32, 6));
    }

    #[test]
    fn resize_frames_resizes_all() {
        let frames = vec![test_pattern(30, 20), test_pattern(30, 20)];
        let out = resize_frames(&frames, 16, 10);
        assert_eq!(out.len(), 2);
        assert!(out.iter().all(|f| f.dimensions() == (16, 10)));
    }

    fn mean_abs_diff(a: &RgbImage, b: &RgbImage) -> f64 {
        let total: u64 = a.as_raw().iter().zip(b.as_raw()).map(|(x, y)| u64::from(x.abs_diff(*y))).sum();
        total as f64 / a.as_raw().len().max(1) as f64
    }
}
