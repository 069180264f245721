//! Classical real-estate listing photo enhancement.
//!
//! Listing photos are usually shot quickly on phones or in mixed indoor
//! lighting, so they tend to be dull, colour-cast and slightly soft. This module
//! applies the fixes a photo editor would make by hand (white balance, levels,
//! exposure, vibrance, warmth, sharpening) with no model weights, and is fully
//! deterministic so the same upload always yields the same result.
//!
//! Decisions are made once by [`plan_enhancement`] on a downsampled copy and
//! then applied to every pixel, so callers can inspect or log what was done.

use image::imageops::{self, FilterType};
use image::{DynamicImage, RgbImage};

/// Longest side of the copy used for statistics; keeps planning cheap on large photos.
const STATS_MAX_SIDE: u32 = 512;

/// Rec. 709 luma weights, matching the sRGB primaries the photos are encoded in.
const LUMA: [f32; 3] = [0.2126, 0.7152, 0.0722];

/// White-balance gain bounds: strong enough to fix tungsten/shade casts, weak
/// enough that a frame dominated by blue sky or green lawn is not neutralised.
const GAIN_MIN: f32 = 0.75;
const GAIN_MAX: f32 = 1.35;

/// Fraction of pixels clipped at each end by the levels stretch.
const LEVELS_CLIP: f64 = 0.005;
/// A luminance range already wider than this counts as full contrast.
const LEVELS_SKIP_RANGE: u8 = 240;
/// Narrowest range the stretch may expand to full scale (at most 4x contrast),
/// so a near-uniform wall or sky does not turn into amplified noise.
const LEVELS_MIN_RANGE: u8 = 64;

const GAMMA_MIN: f32 = 0.6;
const GAMMA_MAX: f32 = 1.6;

const TARGET_DEFAULT: f32 = 0.50;
const TARGET_BRIGHT: f32 = 0.56;
const TARGET_MOODY: f32 = 0.46;

const SAT_DEFAULT: f32 = 0.15;
const SAT_VIVID: f32 = 0.30;
const SAT_NATURAL: f32 = 0.05;

const WARMTH_SHIFT: f32 = 0.04;

const SHARPEN_SIGMA: f32 = 1.0;
const SHARPEN_AMOUNT: f32 = 0.6;
/// Luma differences below this many levels are left alone so flat areas
/// (walls, ceilings, sky) keep their smoothness instead of gaining grain.
const SHARPEN_THRESHOLD: f32 = 2.0;

const BRIGHT_WORDS: &[&str] = &["bright", "brighter", "brighten", "airy", "light", "lighter"];
const MOODY_WORDS: &[&str] = &["moody", "darker", "darken"];
const VIVID_WORDS: &[&str] = &["vivid", "vibrant", "saturated", "pop", "pops", "punchy"];
const NATURAL_WORDS: &[&str] = &["natural", "subtle"];
const WARM_WORDS: &[&str] = &["warm", "warmer", "golden"];
const COOL_WORDS: &[&str] = &["cool", "cooler"];

/// The corrections chosen for one photo, exposed so callers and tests can see
/// (and log) why the output looks the way it does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Adjustments {
    /// Per-channel (R, G, B) gray-world gains, each within 0.75..=1.35.
    pub white_balance_gains: [f32; 3],
    /// Luminance (after white balance) that is mapped to 0.
    pub black_point: u8,
    /// Luminance (after white balance) that is mapped to 255.
    pub white_point: u8,
    /// Exponent applied to normalised channels; below 1 brightens, above 1 darkens.
    pub gamma: f32,
    /// Maximum chroma boost as a fraction (0.15 = +15%), applied fully to muted pixels.
    pub saturation: f32,
    /// Fractional red gain and blue cut (negative cools), e.g. 0.04 for "warmer".
    pub warmth: f32,
}

impl Adjustments {
    /// Corrections that leave tone and colour untouched, used for empty images.
    fn identity(intent: &Intent) -> Self {
        Self {
            white_balance_gains: [1.0; 3],
            black_point: 0,
            white_point: 255,
            gamma: 1.0,
            saturation: intent.saturation(),
            warmth: intent.warmth(),
        }
    }
}

/// Stylistic requests parsed from the free-text notes.
#[derive(Debug, Default, Clone, Copy)]
struct Intent {
    bright: bool,
    moody: bool,
    vivid: bool,
    natural: bool,
    warm: bool,
    cool: bool,
}

impl Intent {
    fn parse(notes: &str) -> Self {
        let mut intent = Self::default();
        for word in notes.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
            let word = word.to_lowercase();
            let word = word.as_str();
            intent.bright |= BRIGHT_WORDS.contains(&word);
            intent.moody |= MOODY_WORDS.contains(&word);
            intent.vivid |= VIVID_WORDS.contains(&word);
            intent.natural |= NATURAL_WORDS.contains(&word);
            intent.warm |= WARM_WORDS.contains(&word);
            intent.cool |= COOL_WORDS.contains(&word);
        }
        intent
    }

    // Contradictory requests cancel out rather than letting word order decide.
    fn target_luminance(&self) -> f32 {
        match (self.bright, self.moody) {
            (true, false) => TARGET_BRIGHT,
            (false, true) => TARGET_MOODY,
            _ => TARGET_DEFAULT,
        }
    }

    fn saturation(&self) -> f32 {
        match (self.vivid, self.natural) {
            (true, false) => SAT_VIVID,
            (false, true) => SAT_NATURAL,
            _ => SAT_DEFAULT,
        }
    }

    fn warmth(&self) -> f32 {
        match (self.warm, self.cool) {
            (true, false) => WARMTH_SHIFT,
            (false, true) => -WARMTH_SHIFT,
            _ => 0.0,
        }
    }
}

/// Decides the white balance, levels, exposure, saturation and warmth for a
/// photo without modifying it.
///
/// Statistics come from a copy no larger than 512 px on its long side, so the
/// cost is bounded regardless of upload size. `notes` steers the style
/// (e.g. "brighter", "moody", "vivid", "natural", "warmer", "cool").
pub fn plan_enhancement(img: &DynamicImage, notes: &str) -> Adjustments {
    plan_rgb(&img.to_rgb8(), &Intent::parse(notes))
}

/// Produces an enhanced, same-sized RGB version of a listing photo.
///
/// Applies the corrections from [`plan_enhancement`] followed by a mild
/// unsharp mask on luma. Deterministic: identical input and notes always give
/// identical output. Any alpha channel is dropped.
pub fn enhance_listing_photo(img: &DynamicImage, notes: &str) -> RgbImage {
    let mut out = img.to_rgb8();
    if out.width() == 0 || out.height() == 0 {
        return out;
    }
    let adj = plan_rgb(&out, &Intent::parse(notes));
    apply_tone_and_colour(&mut out, &adj);
    unsharp_luma(&mut out, SHARPEN_SIGMA, SHARPEN_AMOUNT, SHARPEN_THRESHOLD);
    out
}

fn plan_rgb(rgb: &RgbImage, intent: &Intent) -> Adjustments {
    if rgb.width() == 0 || rgb.height() == 0 {
        return Adjustments::identity(intent);
    }
    let small = stats_copy(rgb, STATS_MAX_SIDE);
    let gains = gray_world_gains(&small);
    let (black_point, white_point) = levels_points(&small, gains);
    let lut = tone_lut(gains, black_point, white_point, 1.0);
    let gamma = solve_gamma(&small, &lut, intent.target_luminance());
    Adjustments {
        white_balance_gains: gains,
        black_point,
        white_point,
        gamma,
        saturation: intent.saturation(),
        warmth: intent.warmth(),
    }
}

/// Downsamples with a triangle filter (averaging, so noise does not skew the
/// percentiles) when the image exceeds `max_side`; otherwise copies as-is.
fn stats_copy(rgb: &RgbImage, max_side: u32) -> RgbImage {
    let (w, h) = rgb.dimensions();
    let long = w.max(h);
    if long <= max_side {
        return rgb.clone();
    }
    let scale = f64::from(max_side) / f64::from(long);
    let nw = ((f64::from(w) * scale).round() as u32).clamp(1, max_side);
    let nh = ((f64::from(h) * scale).round() as u32).clamp(1, max_side);
    imageops::resize(rgb, nw, nh, FilterType::Triangle)
}

fn luma(c: [f32; 3]) -> f32 {
    LUMA[0] * c[0] + LUMA[1] * c[1] + LUMA[2] * c[2]
}

/// Gray-world gains that pull each channel mean onto the mean luminance.
///
/// Clipped highlights and near-black pixels carry no reliable colour, so they
/// are left out of the means unless almost nothing else remains.
fn gray_world_gains(small: &RgbImage) -> [f32; 3] {
    let mut informative = [0.0f64; 3];
    let mut informative_n = 0u64;
    let mut all = [0.0f64; 3];
    let mut all_n = 0u64;
    for p in small.pixels() {
        let c = p.0.map(f32::from);
        for (acc, v) in all.iter_mut().zip(c) {
            *acc += f64::from(v);
        }
        all_n += 1;
        let max = c[0].max(c[1]).max(c[2]);
        if max < 250.0 && luma(c) >= 8.0 {
            for (acc, v) in informative.iter_mut().zip(c) {
                *acc += f64::from(v);
            }
            informative_n += 1;
        }
    }
    let (sums, n) =
        if informative_n * 100 >= all_n && informative_n > 0 { (informative, informative_n) } else { (all, all_n) };
    if n == 0 {
        return [1.0; 3];
    }
    let means = sums.map(|s| (s / n as f64) as f32);
    let target = luma(means);
    means.map(|m| if m > 0.5 { (target / m).clamp(GAIN_MIN, GAIN_MAX) } else { 1.0 })
}

/// Luminance percentiles (after white balance) for the levels stretch, or the
/// identity range when the photo already spans nearly the full scale.
fn levels_points(small: &RgbImage, gains: [f32; 3]) -> (u8, u8) {
    let mut hist = [0u64; 256];
    for p in small.pixels() {
        let c = [0, 1, 2].map(|i| f32::from(p.0[i]) * gains[i]);
        hist[luma(c).round().clamp(0.0, 255.0) as usize] += 1;
    }
    let n: u64 = hist.iter().sum();
    if n == 0 {
        return (0, 255);
    }
    let low = percentile(&hist, n, LEVELS_CLIP);
    let high = percentile(&hist, n, 1.0 - LEVELS_CLIP);
    if high.saturating_sub(low) > LEVELS_SKIP_RANGE {
        return (0, 255);
    }
    widen_range(low, high, LEVELS_MIN_RANGE)
}

/// Smallest histogram level whose cumulative share reaches `q`.
fn percentile(hist: &[u64; 256], n: u64, q: f64) -> u8 {
    let needed = ((n as f64) * q).ceil().max(1.0) as u64;
    let mut cumulative = 0u64;
    for (level, &count) in hist.iter().enumerate() {
        cumulative += count;
        if cumulative >= needed {
            return level as u8;
        }
    }
    255
}

/// Grows `low..=high` symmetrically (staying inside 0..=255) to at least `min` wide.
fn widen_range(low: u8, high: u8, min: u8) -> (u8, u8) {
    let (low, high) = (i32::from(low), i32::from(high.max(low)));
    let min = i32::from(min);
    if high - low >= min {
        return (low as u8, high as u8);
    }
    let mid2 = low + high;
    let mut lo = (mid2 - min) / 2;
    let mut hi = lo + min;
    if lo < 0 {
        hi -= lo;
        lo = 0;
    }
    if hi > 255 {
        lo -= hi - 255;
        hi = 255;
    }
    (lo.clamp(0, 255) as u8, hi.clamp(0, 255) as u8)
}

/// Per-channel map from an 8-bit input value to a normalised 0..=1 output
/// combining white balance, levels and gamma; every pixel then costs three lookups.
fn tone_lut(gains: [f32; 3], black: u8, white: u8, gamma: f32) -> [[f32; 256]; 3] {
    let black = f32::from(black);
    let span = (f32::from(white) - black).max(1.0);
    let mut lut = [[0.0f32; 256]; 3];
    for (channel, table) in lut.iter_mut().enumerate() {
        for (v, out) in table.iter_mut().enumerate() {
            let levelled = ((v as f32 * gains[channel] - black) / span).clamp(0.0, 1.0);
            *out = levelled.powf(gamma);
        }
    }
    lut
}

/// Finds the gamma whose output mean luminance hits `target`, within the clamp.
///
/// The mean of a per-channel power is linear in per-channel histograms, so
/// each bisection step costs 768 `powf` calls rather than a pass over pixels.
fn solve_gamma(small: &RgbImage, levelled: &[[f32; 256]; 3], target: f32) -> f32 {
    let mut hist = [[0u64; 256]; 3];
    for p in small.pixels() {
        for (channel, h) in hist.iter_mut().enumerate() {
            h[usize::from(p.0[channel])] += 1;
        }
    }
    let n: u64 = hist[0].iter().sum();
    if n == 0 {
        return 1.0;
    }
    let mean_after = |gamma: f32| -> f32 {
        let mut total = 0.0f64;
        for channel in 0..3 {
            let channel_sum: f64 = hist[channel]
                .iter()
                .zip(levelled[channel].iter())
                .filter(|(&count, _)| count > 0)
                .map(|(&count, &v)| count as f64 * f64::from(v.powf(gamma)))
                .sum();
            total += f64::from(LUMA[channel]) * channel_sum;
        }
        (total / n as f64) as f32
    };
    // Output mean falls monotonically as gamma rises, so bisection is safe.
    if mean_after(GAMMA_MIN) <= target {
        return GAMMA_MIN;
    }
    if mean_after(GAMMA_MAX) >= target {
        return GAMMA_MAX;
    }
    let (mut lo, mut hi) = (GAMMA_MIN, GAMMA_MAX);
    for _ in 0..32 {
        let mid = 0.5 * (lo + hi);
        if mean_after(mid) > target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// Applies white balance, levels, gamma, vibrance and warmth in one pass.
fn apply_tone_and_colour(img: &mut RgbImage, adj: &Adjustments) {
    let lut = tone_lut(adj.white_balance_gains, adj.black_point, adj.white_point, adj.gamma);
    let warm = [1.0 + adj.warmth, 1.0, 1.0 - adj.warmth];
    for p in img.pixels_mut() {
        let c = [lut[0][usize::from(p.0[0])], lut[1][usize::from(p.0[1])], lut[2][usize::from(p.0[2])]];
        let y = luma(c);
        let chroma = c[0].max(c[1]).max(c[2]) - c[0].min(c[1]).min(c[2]);
        // Vibrance: muted pixels get the full boost, already-vivid ones (signage,
        // painted walls) far less, so they do not clip or turn garish.
        let boost = 1.0 + adj.saturation * (1.0 - 0.6 * chroma);
        for (i, out) in p.0.iter_mut().enumerate() {
            let v = (y + (c[i] - y) * boost) * warm[i];
            *out = (v * 255.0).round().clamp(0.0, 255.0) as u8;
        }
    }
}

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
fn unsharp_luma(img: &mut RgbImage, sigma: f32, amount: f32, threshold: f32) {
    let (w, h) = (img.width() as usize, img.height() as usize);
    if w == 0 || h == 0 {
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

#[cfg(test)]
mod tests {
    use super::*;
    use image::Rgb;

    /// A dull, low-contrast "interior" with a blue cast: soft gradient, a
    /// window-like bright block, a dark sofa-like block and some texture.
    fn dull_blue_scene(w: u32, h: u32) -> RgbImage {
        RgbImage::from_fn(w, h, |x, y| {
            let fx = x as f32 / w as f32;
            let fy = y as f32 / h as f32;
            let mut base = [0.35 + 0.3 * fx, 0.33 + 0.25 * fy, 0.3 + 0.2 * (fx + fy) * 0.5];
            if (w / 8..w / 3).contains(&x) && (h / 8..h / 2).contains(&y) {
                base = [0.95, 0.93, 0.9];
            }
            if (w / 2..w * 7 / 8).contains(&x) && (h * 5 / 8..h * 7 / 8).contains(&y) {
                base = [0.15, 0.2, 0.1];
            }
            let texture = if (x / 4 + y / 4) % 2 == 0 { 0.03 } else { -0.03 };
            let squeeze = |v: f32| 60.0 + (v + texture).clamp(0.0, 1.0) * 110.0;
            Rgb([squeeze(base[0]) as u8, squeeze(base[1]) as u8, (squeeze(base[2]) + 20.0) as u8])
        })
    }

    /// A neutral, full-range, mid-exposed scene that needs little correction.
    fn well_exposed_scene(w: u32, h: u32) -> RgbImage {
        RgbImage::from_fn(w, h, |x, y| {
            let fx = x as f32 / (w - 1) as f32;
            let fy = y as f32 / (h - 1) as f32;
            let v = 0.5 * (fx + fy);
            let tint = 0.06 * ((fx * 6.0).sin());
            let mut c = [v + tint, v, v - tint];
            // A dark door frame and a bright window, as most interiors have.
            if x < w / 16 {
                c = [0.02, 0.02, 0.03];
            } else if x >= w - w / 16 {
                c = [0.98, 0.98, 0.97];
            }
            Rgb(c.map(|c| (c.clamp(0.0, 1.0) * 255.0).round() as u8))
        })
    }

    fn channel_means(img: &RgbImage) -> [f64; 3] {
        let mut sums = [0.0f64; 3];
        for p in img.pixels() {
            for (s, v) in sums.iter_mut().zip(p.0) {
                *s += f64::from(v);
            }
        }
        let n = f64::from(img.width() * img.height()).max(1.0);
        sums.map(|s| s / n)
    }

    fn mean_luma(img: &RgbImage) -> f64 {
        let m = channel_means(img);
        (0..3).map(|i| f64::from(LUMA[i]) * m[i]).sum()
    }

    fn luma_percentile_range(img: &RgbImage) -> f32 {
        let mut hist = [0u64; 256];
        for p in img.pixels() {
            hist[luma(p.0.map(f32::from)).round().clamp(0.0, 255.0) as usize] += 1;
        }
        let n = hist.iter().sum();
        f32::from(percentile(&hist, n, 0.99)) - f32::from(percentile(&hist, n, 0.01))
    }

    fn cast(img: &RgbImage) -> f64 {
        let m = channel_means(img);
        m.iter().cloned().fold(f64::MIN, f64::max) - m.iter().cloned().fold(f64::MAX, f64::min)
    }

    fn mean_abs_diff(a: &RgbImage, b: &RgbImage) -> f64 {
        let total: u64 = a.as_raw().iter().zip(b.as_raw()).map(|(&x, &y)| u64::from(x.abs_diff(y))).sum();
        total as f64 / a.as_raw().len().max(1) as f64
    }

    #[test]
    fn dull_blue_photo_gains_contrast_and_loses_cast() {
        let input = dull_blue_scene(160, 120);
        let out = enhance_listing_photo(&DynamicImage::ImageRgb8(input.clone()), "");
        assert_eq!(out.dimensions(), input.dimensions());
        let (before, after) = (luma_percentile_range(&input), luma_percentile_range(&out));
        assert!(after > before + 60.0, "luma range {before} -> {after}");
        let (cast_before, cast_after) = (cast(&input), cast(&out));
        assert!(cast_after < cast_before * 0.5, "cast {cast_before} -> {cast_after}");
        let plan = plan_enhancement(&DynamicImage::ImageRgb8(input), "");
        let [r, g, b] = plan.white_balance_gains;
        assert!(b < 1.0 && b < r && b < g, "{plan:?}");
        assert!(plan.black_point > 0 && plan.white_point < 255, "{plan:?}");
    }

    #[test]
    fn notes_steer_brightness_and_warmth() {
        let input = DynamicImage::ImageRgb8(dull_blue_scene(128, 96));
        let default = enhance_listing_photo(&input, "");
        let brighter = enhance_listing_photo(&input, "Please make it BRIGHTER and airy!");
        let moody = enhance_listing_photo(&input, "moody evening feel");
        assert!(mean_luma(&brighter) > mean_luma(&default) + 5.0);
        assert!(mean_luma(&moody) < mean_luma(&default) - 3.0);

        let warmer = enhance_listing_photo(&input, "warmer, golden hour");
        let cooler = enhance_listing_photo(&input, "Cooler tones");
        let rb = |img: &RgbImage| {
            let m = channel_means(img);
            m[0] / m[2].max(1.0)
        };
        assert!(rb(&warmer) > rb(&default) * 1.03, "{} vs {}", rb(&warmer), rb(&default));
        assert!(rb(&cooler) < rb(&default) / 1.03, "{} vs {}", rb(&cooler), rb(&default));
    }

    #[test]
    fn notes_parsing_is_word_based_and_case_insensitive() {
        let img = DynamicImage::ImageRgb8(dull_blue_scene(32, 24));
        let vivid = plan_enhancement(&img, "Make the garden POP, vivid");
        assert_eq!(vivid.saturation, SAT_VIVID);
        assert_eq!(plan_enhancement(&img, "keep it natural").saturation, SAT_NATURAL);
        assert_eq!(plan_enhancement(&img, "").saturation, SAT_DEFAULT);
        // Substrings inside other words must not trigger a style.
        let none = plan_enhancement(&img, "popcorn ceiling, warmth-free, enlightened");
        assert_eq!((none.saturation, none.warmth), (SAT_DEFAULT, 0.0));
        assert_eq!(plan_enhancement(&img, "Warm").warmth, WARMTH_SHIFT);
        assert_eq!(plan_enhancement(&img, "COOL").warmth, -WARMTH_SHIFT);
        assert_eq!(plan_enhancement(&img, "warm but cool").warmth, 0.0);
        let bright = plan_enhancement(&img, "bright");
        let default = plan_enhancement(&img, "");
        assert!(bright.gamma < default.gamma);
        assert!((GAMMA_MIN..=GAMMA_MAX).contains(&bright.gamma));
    }

    #[test]
    fn enhancement_is_deterministic() {
        let input = DynamicImage::ImageRgb8(dull_blue_scene(97, 61));
        let a = enhance_listing_photo(&input, "vivid warmer");
        let b = enhance_listing_photo(&input, "vivid warmer");
        assert_eq!(a, b);
        assert_eq!(plan_enhancement(&input, "x"), plan_enhancement(&input, "x"));
    }

    #[test]
    fn well_exposed_photo_changes_little() {
        let input = well_exposed_scene(128, 128);
        let plan = plan_enhancement(&DynamicImage::ImageRgb8(input.clone()), "");
        assert_eq!((plan.black_point, plan.white_point), (0, 255), "{plan:?}");
        assert!((plan.gamma - 1.0).abs() < 0.1, "{plan:?}");
        let out = enhance_listing_photo(&DynamicImage::ImageRgb8(input.clone()), "");
        let diff = mean_abs_diff(&input, &out);
        assert!(diff < 8.0, "mean abs diff {diff}");
    }

    #[test]
    fn blue_sky_scene_is_not_fully_neutralised() {
        // Mostly sky: gray world would kill the blue, the gain clamp must not.
        let input = RgbImage::from_fn(64, 64, |_, y| if y < 48 { Rgb([90, 150, 235]) } else { Rgb([90, 120, 60]) });
        let plan = plan_enhancement(&DynamicImage::ImageRgb8(input.clone()), "");
        assert!(plan.white_balance_gains.iter().all(|g| (GAIN_MIN..=GAIN_MAX).contains(g)), "{plan:?}");
        let out = enhance_listing_photo(&DynamicImage::ImageRgb8(input), "");
        let sky = out.get_pixel(10, 10).0;
        assert!(sky[2] > sky[0] + 60, "sky became {sky:?}");
    }

    #[test]
    fn handles_degenerate_inputs() {
        let empty = DynamicImage::ImageRgb8(RgbImage::new(0, 5));
        assert_eq!(enhance_listing_photo(&empty, "bright").dimensions(), (0, 5));
        assert_eq!(plan_enhancement(&empty, "").gamma, 1.0);

        let flat = DynamicImage::ImageRgb8(RgbImage::from_pixel(7, 3, Rgb([128, 128, 128])));
        let out = enhance_listing_photo(&flat, "");
        assert_eq!(out.dimensions(), (7, 3));
        let plan = plan_enhancement(&flat, "");
        assert!(plan.white_point - plan.black_point >= LEVELS_MIN_RANGE, "{plan:?}");

        let black = DynamicImage::ImageRgb8(RgbImage::new(5, 5));
        assert!(enhance_listing_photo(&black, "brighter").pixels().all(|p| p.0 == [0, 0, 0]));

        let one = DynamicImage::ImageRgb8(RgbImage::from_pixel(1, 1, Rgb([10, 200, 30])));
        assert_eq!(enhance_listing_photo(&one, "vivid").dimensions(), (1, 1));

        let rgba = DynamicImage::ImageRgba8(image::RgbaImage::from_pixel(4, 6, image::Rgba([50, 60, 70, 0])));
        assert_eq!(enhance_listing_photo(&rgba, "").dimensions(), (4, 6));
    }

    #[test]
    fn stats_copy_caps_long_side() {
        let img = dull_blue_scene(200, 50);
        let small = stats_copy(&img, 64);
        assert_eq!(small.dimensions(), (64, 16));
        assert_eq!(stats_copy(&img, 512).dimensions(), (200, 50));
    }

    #[test]
    fn widen_range_keeps_bounds() {
        assert_eq!(widen_range(100, 110, 64), (73, 137));
        assert_eq!(widen_range(0, 5, 64), (0, 64));
        assert_eq!(widen_range(250, 255, 64), (191, 255));
        assert_eq!(widen_range(10, 200, 64), (10, 200));
    }

    #[test]
    fn sharpening_increases_edge_contrast_only() {
        let mut img = RgbImage::from_fn(32, 8, |x, _| if x < 16 { Rgb([80, 80, 80]) } else { Rgb([160, 160, 160]) });
        unsharp_luma(&mut img, SHARPEN_SIGMA, SHARPEN_AMOUNT, SHARPEN_THRESHOLD);
        assert!(img.get_pixel(15, 4).0[0] < 80 && img.get_pixel(16, 4).0[0] > 160);
        assert_eq!(img.get_pixel(2, 4).0, [80, 80, 80]);
        assert_eq!(img.get_pixel(29, 4).0, [160, 160, 160]);
    }
}
