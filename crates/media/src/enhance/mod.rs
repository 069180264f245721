//! Classical real-estate listing photo enhancement.
//!
//! Listing photos are usually shot quickly on phones or in mixed indoor
//! lighting, so they tend to be dull, colour-cast, under-exposed and slightly
//! soft, and handheld shots lean. This module makes the fixes a listing
//! photographer would make by hand, with no model weights, and is fully
//! deterministic so the same upload always yields the same result:
//!
//! - white balance from a gray-edge estimate of the light, correcting casts
//!   only beyond what a warm-lit or twilight scene plausibly intends, and not
//!   the glow of a sunset;
//! - a black point that removes haze (in full where the whites are dulled too,
//!   in part where they are not, as in fog and overcast light), exposure raised
//!   in linear light towards a mid-grey key (or kept at a pale scene's own)
//!   without pushing highlights into clipping, or lowered for a photo clipped
//!   over much of it, and a tone curve that lifts dark scenes' shadows while
//!   keeping midtone contrast;
//! - mild large-radius local contrast ("clarity"), vibrance, the styles the
//!   notes ask for (warmer, brighter, more contrast, twilight, ...) and a
//!   thresholded unsharp mask;
//! - on request, rotation that makes leaning vertical lines vertical.
//!
//! Decisions are made once on a downsampled copy and returned as
//! [`Adjustments`], a manifest of every adjustment applied, so callers can
//! inspect or log what was done. Apart from the input and the output image the
//! work needs only per-row buffers and buffers the size of the statistics
//! copy; straightening briefly holds the unrotated image beside the rotated one.

use image::imageops::{self, FilterType};
use image::{DynamicImage, RgbImage};
use serde::Serialize;

use crate::filters::box_blur;

mod notes;
mod sharpen;
mod straighten;
mod white_balance;

use notes::Intent;
use white_balance::{estimate_cast, white_balance_gains, Cast, WARM_TOLERANCE};

use sharpen::{unsharp_luma, SHARPEN_AMOUNT, SHARPEN_SIGMA, SHARPEN_THRESHOLD};
pub use straighten::straighten_verticals;

/// Longest side of the copy used for statistics; keeps planning cheap on large photos.
const STATS_MAX_SIDE: u32 = 512;

/// Rec. 709 luma weights, matching the sRGB primaries the photos are encoded in.
const LUMA: [f32; 3] = [0.2126, 0.7152, 0.0722];

/// Percentiles of the darkest and brightest channel that define the black and white levels.
const BLACK_PERCENTILE: f64 = 0.005;
const WHITE_PERCENTILE: f64 = 0.995;
/// Shadows this close to black are taken as intended; only a floor above it is treated as haze.
const BLACK_TOLERANCE: f32 = 0.02;
/// A floor up to this far above the tolerance is taken as haze and removed; of a higher one only
/// a share is, since fog, overcast light and pale scenes have high floors of their own.
const SURE_HAZE: f32 = 0.06;
const HIGH_FLOOR_SHARE: f32 = 0.3;
/// Brightest-channel ceilings between which a high floor goes from a veil's (removed in full, at
/// or below the first) to a pale scene's (the share above, at or above the second): a veil dulls
/// the whites as it lifts the blacks, a pale scene keeps them.
const VEILED_WHITE: f32 = 0.80;
const PALE_SCENE_WHITE: f32 = 0.97;
/// Largest black point, so a genuinely pale scene (snow, white kitchen) is not crushed.
const BLACK_MAX: f32 = 0.35;
/// Display level the brightest highlights may be raised to; above it detail would start to clip.
const WHITE_TARGET: f32 = 0.88;
/// Largest exposure increase, in stops.
const MAX_EXPOSURE_EV: f32 = 2.0;
/// Largest exposure decrease, in stops, for an over-exposed photo.
const MAX_DARKENING_EV: f32 = 0.6;
/// Share of pixels clipped in their brightest channel up to which a photo reads as exposed as
/// meant (a window, a lamp, a patch of sky), and from which it reads as fully over-exposed;
/// darkening is allowed in proportion between the two.
const CLIPPED_SHARE_NONE: f32 = 0.05;
const CLIPPED_SHARE_FULL: f32 = 0.15;
/// A channel at or above this display level, after white balance, is clipped (a channel clipped
/// by a colour cast is scaled below it by the balance: the cast, not the exposure, clipped it).
const CLIPPED_LEVEL: f32 = 0.995;
/// Smallest white-balance gain on a channel clipped as uploaded (at [`CLIPPED_LEVEL`] before the
/// balance) that leaves it counted as clipped: a cast strong enough to clip a channel is
/// corrected by more than a tenth, while the slight correction a clipped photo's estimate gives
/// (a few percent) would otherwise hide its clipped whites and leave an over-exposed photo
/// undarkened.
const CAST_CLIPPED_GAIN: f32 = 0.9;

/// Clarity blur radius as a fraction of the long side: large enough to act on objects (walls,
/// furniture), not texture.
const LOCAL_CONTRAST_RADIUS: f32 = 0.02;
/// Detail is compressed smoothly past this luma difference, so the halo at a bright window
/// frame stays faint.
const LOCAL_CONTRAST_LIMIT: f32 = 0.2;

/// Twilight split toning: darker than the pivot goes bluer, brighter (lit windows, lamps) warmer,
/// by this much per unit of luma away from the pivot.
const TWILIGHT_SPLIT: f32 = 0.08;
const TWILIGHT_PIVOT: f32 = 0.45;

/// How far a photo's levels may sit from a healthy one's before it reads as needing work: its
/// darkest channel's floor above black (haze, a flat profile), its brightest channel's ceiling
/// below white (dull), its median away from the key (exposure), and a cast beyond the tolerance.
/// At these distances the default finishing is applied in full; a photo inside all of them gets
/// a share of it in proportion, so one that needs nothing is barely touched.
const NEED_BLACK_FLOOR: f32 = 0.10;
const NEED_WHITE_CEILING: f32 = 0.15;
const NEED_KEY_DISTANCE: f32 = 0.15;
const NEED_CAST: f32 = 0.10;
/// Levels healthy photos reach: a floor this close to black, a ceiling this close to white.
const HEALTHY_BLACK: f32 = 0.03;
const HEALTHY_WHITE: f32 = 0.92;

/// Every adjustment chosen for one photo: a manifest callers can log or return
/// so it is clear why the output looks the way it does.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Adjustments {
    /// Degrees the photo was rotated to make its vertical lines vertical, positive
    /// counter-clockwise; 0 when not asked for or when no confident tilt was found.
    pub verticals_rotation_degrees: f32,
    /// Estimated colour of the light on the warm-cool axis: half the natural log of
    /// its red/blue ratio, positive for warm (tungsten), negative for cool (shade).
    pub cast_warmth: f32,
    /// Estimated colour of the light on the green-magenta axis: natural log of the
    /// red-blue geometric mean over green, positive for magenta.
    pub cast_tint: f32,
    /// Trust in the cast estimate, 0..=1, from how much edge structure the photo has.
    pub white_balance_confidence: f32,
    /// Per-channel (R, G, B) gains applied in linear light, normalised to keep luminance.
    pub white_balance_gains: [f32; 3],
    /// Display level (0..=1, after white balance) that becomes black, removing haze.
    pub black_point: f32,
    /// Exposure change in stops, applied in linear light (1.0 doubles the light).
    pub exposure_ev: f32,
    /// Tone-curve shadow lift; positive brightens shadows and leaves highlights, negative deepens them.
    pub shadow_lift: f32,
    /// Strength of the midtone S-curve (0 = none).
    pub midtone_contrast: f32,
    /// Amount of large-radius local contrast ("clarity") added to midtones.
    pub local_contrast: f32,
    /// Vibrance: maximum chroma boost as a fraction (0.08 = +8%), applied fully to muted pixels.
    pub saturation: f32,
    /// Fractional red gain and blue cut applied last (negative cools), e.g. 0.06 for "warmer".
    pub warmth: f32,
    /// Strength of the twilight split toning (0 = off): bluer shadows, warmer lights.
    pub twilight: f32,
    /// Unsharp-mask amount applied to luma (0 = none).
    pub sharpen_amount: f32,
}

impl Adjustments {
    /// Corrections that leave geometry, tone and colour untouched, used for empty images.
    fn identity(intent: &Intent) -> Self {
        Self {
            verticals_rotation_degrees: 0.0,
            cast_warmth: 0.0,
            cast_tint: 0.0,
            white_balance_confidence: 0.0,
            white_balance_gains: [1.0; 3],
            black_point: 0.0,
            exposure_ev: 0.0,
            shadow_lift: 0.0,
            midtone_contrast: 0.0,
            local_contrast: 0.0,
            saturation: intent.saturation(),
            warmth: intent.warmth(),
            twilight: intent.twilight(),
            sharpen_amount: 0.0,
        }
    }
}

/// Decides every adjustment for a photo without modifying it.
///
/// Returns exactly the manifest [`enhance_listing_photo`] applies for the same
/// photo and notes. Statistics come from a copy no larger than 512 px on its long
/// side, so the cost is bounded regardless of upload size. `notes` steers the
/// style: "brighter"/"moody", "vivid"/"natural", "warmer"/"cooler",
/// "more contrast"/"soft", "twilight" (or "dusk", "blue hour"), and
/// "straighten"/"verticals" to level leaning vertical lines. A style word after
/// "less", "not", "no" or "without" asks for the opposite.
pub fn plan_enhancement(img: &DynamicImage, notes: &str) -> Adjustments {
    let intent = Intent::parse(notes);
    let (rgb, rotation) = prepare(img, &intent, false);
    if rgb.width() == 0 || rgb.height() == 0 {
        return Adjustments::identity(&intent);
    }
    plan_rgb(&rgb, &intent, rotation).adjustments
}

/// Produces an enhanced RGB version of a listing photo.
///
/// Same as [`enhance_listing_photo_with`] without forcing vertical correction
/// (notes asking to "straighten" still get it), returning only the image. The
/// output has the input's size unless it was straightened. Any alpha channel
/// is dropped.
pub fn enhance_listing_photo(img: &DynamicImage, notes: &str) -> RgbImage {
    enhance_listing_photo_with(img, notes, false).0
}

/// Enhances a listing photo and returns it with the manifest of what was applied.
///
/// When `straighten` is set, or the notes ask for it, leaning verticals are
/// first levelled as by [`straighten_verticals`] (which crops slightly); the
/// tone and colour corrections planned as by [`plan_enhancement`] then follow,
/// and a mild unsharp mask on luma finishes. Deterministic: identical input,
/// notes and flag always give identical output.
pub fn enhance_listing_photo_with(img: &DynamicImage, notes: &str, straighten: bool) -> (RgbImage, Adjustments) {
    let intent = Intent::parse(notes);
    let (mut out, rotation) = prepare(img, &intent, straighten);
    if out.width() == 0 || out.height() == 0 {
        return (out, Adjustments::identity(&intent));
    }
    let plan = plan_rgb(&out, &intent, rotation);
    apply_tone_and_colour(&mut out, &plan);
    unsharp_luma(&mut out, SHARPEN_SIGMA, plan.adjustments.sharpen_amount, SHARPEN_THRESHOLD);
    (out, plan.adjustments)
}

/// Converts to RGB and levels the verticals when asked, returning the degrees rotated.
fn prepare(img: &DynamicImage, intent: &Intent, straighten: bool) -> (RgbImage, f32) {
    let rgb = img.to_rgb8();
    if !(straighten || intent.straighten) {
        return (rgb, 0.0);
    }
    straighten::level(rgb)
}

/// The adjustments plus the statistics copy they were planned on, which also
/// carries the local-contrast base.
struct Plan {
    adjustments: Adjustments,
    small: RgbImage,
}

/// Plans the corrections for a non-empty photo.
fn plan_rgb(rgb: &RgbImage, intent: &Intent, rotation: f32) -> Plan {
    let small = stats_copy(rgb, STATS_MAX_SIDE);
    let linear = linear_table();
    let cast = estimate_cast(&small, &linear);
    let gains = cast.map_or([1.0; 3], |cast| white_balance_gains(&cast, intent));
    let balanced: [[f32; 256]; 3] = std::array::from_fn(|c| std::array::from_fn(|v| srgb_encode(linear[v] * gains[c])));

    // Levels from the darkest and brightest channel, so a saturated colour
    // counts as bright or dark as it looks rather than by its luma.
    // The same pass counts the pixels clipped in a channel by the exposure rather than a cast.
    let mut darkest = [0u64; 256];
    let mut brightest = [0u64; 256];
    let mut clipped = 0u64;
    for p in small.pixels() {
        let c = lookup(&balanced, p.0);
        let top = c[0].max(c[1]).max(c[2]);
        darkest[level_index(c[0].min(c[1]).min(c[2]))] += 1;
        brightest[level_index(top)] += 1;
        clipped += u64::from(top >= CLIPPED_LEVEL || clipped_by_exposure(p.0, gains));
    }
    let n = u64::from(small.width()) * u64::from(small.height());
    let black = level_value(percentile(&darkest, n, BLACK_PERCENTILE));
    let white = level_value(percentile(&brightest, n, WHITE_PERCENTILE));
    let black_point = black_point(black, white);

    // Exposure: raise the median towards the key, but never lift the
    // highlights past the white target, so an intentionally dark scene with
    // bright lights (dusk, a lamp-lit room) keeps its mood.
    let floor = 1.0 / 255.0;
    let key_levelled = median_luma(&small, |p| lookup(&balanced, p).map(|v| level(v, black_point))).max(floor);
    let white_levelled = level(white, black_point).max(floor);
    let original_key = median_luma(&small, |p| p.map(|v| f32::from(v) / 255.0));
    let over_exposure = over_exposure(clipped as f32 / n.max(1) as f32);
    // A pale scene (overcast, fog, a white room) sits above the key as uploaded: levelling its
    // floor must not leave its midtones darker than they were, unless it reads as over-exposed.
    let key_goal = if intent.is_plain() && over_exposure == 0.0 {
        intent.key_target().max(original_key)
    } else {
        intent.key_target()
    };
    let key_gain = srgb_decode(key_goal) / srgb_decode(key_levelled);
    let white_gain = srgb_decode(WHITE_TARGET) / srgb_decode(white_levelled);
    // Darkening only for a photo that reads as over-exposed (much of it clipped), as far as it
    // reads so.
    let exposure_ev =
        key_gain.min(white_gain).max(1e-6).log2().clamp(-MAX_DARKENING_EV * over_exposure, MAX_EXPOSURE_EV);
    let exposure = exposure_ev.exp2();
    let key = median_luma(&small, |p| {
        lookup(&balanced, p).map(|v| srgb_encode(srgb_decode(level(v, black_point)) * exposure))
    });
    // With no style asked for, a photo that already looks right gets little finishing: a
    // listing photographer does not re-grade a good photo.
    let finishing = if intent.is_plain() { need(black, white, original_key, intent.key_target(), cast) } else { 1.0 };

    let adjustments = Adjustments {
        verticals_rotation_degrees: rotation,
        cast_warmth: cast.map_or(0.0, |cast| cast.warmth),
        cast_tint: cast.map_or(0.0, |cast| cast.tint),
        white_balance_confidence: cast.map_or(0.0, |cast| cast.confidence),
        white_balance_gains: gains,
        black_point,
        exposure_ev,
        shadow_lift: intent.shadow_lift(key),
        midtone_contrast: finishing * intent.midtone_contrast(),
        local_contrast: finishing * intent.local_contrast(),
        saturation: finishing * intent.saturation(),
        warmth: intent.warmth(),
        twilight: intent.twilight(),
        sharpen_amount: finishing * SHARPEN_AMOUNT,
    };
    Plan { adjustments, small }
}

/// How much a photo needs correcting, 0 (its levels, exposure and colour look right) to 1, from
/// its darkest channel's floor `black` and brightest channel's ceiling `white` (both after white
/// balance), its median display luma `key` as uploaded against the `target`, and the warmth of
/// the estimated `cast` beyond the warm tolerance (its tint is not counted).
fn need(black: f32, white: f32, key: f32, target: f32, cast: Option<Cast>) -> f32 {
    let hazy = (black - HEALTHY_BLACK) / NEED_BLACK_FLOOR;
    let dull = (HEALTHY_WHITE - white) / NEED_WHITE_CEILING;
    let exposure = (key - target).abs() / NEED_KEY_DISTANCE;
    let cast = cast.map_or(0.0, |c| (c.warmth.abs() - WARM_TOLERANCE).max(0.0) * c.confidence / NEED_CAST);
    hazy.max(dull).max(exposure).max(cast).clamp(0.0, 1.0)
}

/// Whether a pixel has a channel clipped as uploaded that the white balance `gains` leave near
/// its level: the exposure clipped it, not a colour cast.
fn clipped_by_exposure(p: [u8; 3], gains: [f32; 3]) -> bool {
    p.iter().zip(gains).any(|(&v, gain)| level_value(v) >= CLIPPED_LEVEL && gain >= CAST_CLIPPED_GAIN)
}

/// How sure it is that a photo is over-exposed, 0 to 1, from the `share` of its pixels clipped
/// in their brightest channel: a well-exposed photo clips a window or a patch of sky, an
/// over-exposed one much of its bright half.
fn over_exposure(share: f32) -> f32 {
    ((share - CLIPPED_SHARE_NONE) / (CLIPPED_SHARE_FULL - CLIPPED_SHARE_NONE)).clamp(0.0, 1.0)
}

/// The display level made black, from the darkest channel's floor `black` and the brightest
/// channel's ceiling `white`: a floor near black is haze and goes; of a higher one, all goes
/// where the whites are dulled too (a veil lifts the blacks and dulls the whites), and only a
/// share where they are not (fog, overcast light and pale scenes have high floors of their own).
fn black_point(black: f32, white: f32) -> f32 {
    let floor = (black - BLACK_TOLERANCE).max(0.0);
    let dullness = ((PALE_SCENE_WHITE - white) / (PALE_SCENE_WHITE - VEILED_WHITE)).clamp(0.0, 1.0);
    let share = HIGH_FLOOR_SHARE + (1.0 - HIGH_FLOOR_SHARE) * dullness;
    (floor.min(SURE_HAZE) + share * (floor - SURE_HAZE).max(0.0)).min(BLACK_MAX)
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

/// sRGB transfer function: display value (0..=1) to linear light.
fn srgb_decode(v: f32) -> f32 {
    if v <= 0.04045 {
        v / 12.92
    } else {
        ((v + 0.055) / 1.055).powf(2.4)
    }
}

/// Inverse sRGB transfer function, clamping to the displayable range.
fn srgb_encode(v: f32) -> f32 {
    let v = v.clamp(0.0, 1.0);
    if v <= 0.003_130_8 {
        v * 12.92
    } else {
        1.055 * v.powf(1.0 / 2.4) - 0.055
    }
}

/// Linear light of every 8-bit sRGB level.
fn linear_table() -> [f32; 256] {
    std::array::from_fn(|v| srgb_decode(v as f32 / 255.0))
}

/// Per-channel table lookup of an 8-bit pixel.
fn lookup(tables: &[[f32; 256]; 3], p: [u8; 3]) -> [f32; 3] {
    [tables[0][usize::from(p[0])], tables[1][usize::from(p[1])], tables[2][usize::from(p[2])]]
}

/// Histogram bin of a display value.
fn level_index(v: f32) -> usize {
    (v * 255.0).round().clamp(0.0, 255.0) as usize
}

fn level_value(level: u8) -> f32 {
    f32::from(level) / 255.0
}

/// Maps `black` to 0 and keeps 1 at 1.
fn level(v: f32, black: f32) -> f32 {
    ((v - black) / (1.0 - black)).clamp(0.0, 1.0)
}

/// Median display luma of the statistics copy after `map`.
fn median_luma(small: &RgbImage, map: impl Fn([u8; 3]) -> [f32; 3]) -> f32 {
    let mut hist = [0u64; 256];
    for p in small.pixels() {
        hist[level_index(luma(map(p.0)))] += 1;
    }
    let n: u64 = hist.iter().sum();
    if n == 0 {
        return 0.0;
    }
    level_value(percentile(&hist, n, 0.5))
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

/// Shadow lift then a midtone S-curve pivoting on mid-grey.
///
/// The lift `x(1-x)^4` peaks at x = 0.2 and fades to nothing in the
/// highlights, which keeps them from washing out; the S-curve restores the
/// midtone contrast a lift alone would flatten. Both stay monotonic for the
/// strengths used here.
fn tone_curve(x: f32, lift: f32, contrast: f32) -> f32 {
    let lifted = x + lift * x * (1.0 - x).powi(4);
    lifted + contrast * lifted * (1.0 - lifted) * (2.0 * lifted - 1.0)
}

/// Per-channel map from an 8-bit input value to a display value combining
/// white balance, black point, exposure and the tone curve; every pixel then
/// costs three lookups.
fn tone_lut(adj: &Adjustments) -> [[f32; 256]; 3] {
    let linear = linear_table();
    let exposure = adj.exposure_ev.exp2();
    let mut lut = [[0.0f32; 256]; 3];
    for (table, gain) in lut.iter_mut().zip(adj.white_balance_gains) {
        for (out, &light) in table.iter_mut().zip(linear.iter()) {
            let levelled = level(srgb_encode(light * gain), adj.black_point);
            let exposed = srgb_encode(srgb_decode(levelled) * exposure);
            *out = tone_curve(exposed, adj.shadow_lift, adj.midtone_contrast);
        }
    }
    lut
}

/// Large-radius blur of the toned luma at statistics resolution, sampled
/// bilinearly per output pixel.
///
/// The blur is smooth at that scale, so a full-size float plane (4 bytes per
/// pixel on a 40 MP photo) would add nothing but memory.
struct LumaBase {
    width: usize,
    height: usize,
    values: Vec<f32>,
}

impl LumaBase {
    fn new(small: &RgbImage, lut: &[[f32; 256]; 3]) -> Self {
        let (width, height) = (small.width() as usize, small.height() as usize);
        let mut values: Vec<f32> = small.pixels().map(|p| luma(lookup(lut, p.0))).collect();
        let radius = ((LOCAL_CONTRAST_RADIUS * width.max(height) as f32).round() as usize).max(1);
        // Three box passes approximate a Gaussian with sigma close to the radius.
        for _ in 0..3 {
            box_blur(&mut values, width, height, radius);
        }
        Self { width, height, values }
    }

    /// Blurred luma between four statistics-copy pixels, given bilinear positions from [`sample_axis`].
    fn bilinear(&self, (x0, x1, tx): (usize, usize, f32), (y0, y1, ty): (usize, usize, f32)) -> f32 {
        let at = |x: usize, y: usize| self.values[y * self.width + x];
        let top = at(x0, y0) * (1.0 - tx) + at(x1, y0) * tx;
        let bottom = at(x0, y1) * (1.0 - tx) + at(x1, y1) * tx;
        top * (1.0 - ty) + bottom * ty
    }
}

/// Bilinear sampling positions along one axis: for each of `full` output indices, the two
/// neighbouring indices among `small` and the weight of the second, with pixel centres aligned.
/// Computed once per row and column rather than per pixel.
fn sample_axis(full: u32, small: usize) -> Vec<(usize, usize, f32)> {
    let last = small.saturating_sub(1);
    let scale = small as f64 / f64::from(full);
    (0..full)
        .map(|i| {
            let f = ((f64::from(i) + 0.5) * scale - 0.5).clamp(0.0, last as f64);
            let i0 = f.floor() as usize;
            (i0, (i0 + 1).min(last), (f - f.floor()) as f32)
        })
        .collect()
}

/// Applies white balance, levels, exposure, tone curve, local contrast,
/// vibrance, twilight toning and warmth in one pass.
fn apply_tone_and_colour(img: &mut RgbImage, plan: &Plan) {
    let adj = &plan.adjustments;
    let lut = tone_lut(adj);
    let base = LumaBase::new(&plan.small, &lut);
    let warm = [1.0 + adj.warmth, 1.0, 1.0 - adj.warmth];
    let (w, h) = img.dimensions();
    let columns = sample_axis(w, base.width);
    let rows = sample_axis(h, base.height);
    for (x, y, p) in img.enumerate_pixels_mut() {
        let toned = lookup(&lut, p.0);
        let y_toned = luma(toned);
        // Clarity: detail against the large-scale base, softly limited so big
        // steps (a window against a wall) do not halo, and weighted to the
        // midtones so blacks and whites are not pushed into clipping.
        let detail = y_toned - base.bilinear(columns[x as usize], rows[y as usize]);
        let detail = detail / (1.0 + detail.abs() / LOCAL_CONTRAST_LIMIT);
        let clarity = adj.local_contrast * detail * 4.0 * y_toned * (1.0 - y_toned);
        let c = toned.map(|v| v + clarity);
        let y_clear = luma(c);
        let chroma = c[0].max(c[1]).max(c[2]) - c[0].min(c[1]).min(c[2]);
        // Vibrance: muted pixels get the full boost, already-vivid ones (signage,
        // painted walls) far less, so they do not clip or turn garish.
        let boost = 1.0 + adj.saturation * (1.0 - 0.6 * chroma);
        let tone = adj.twilight * TWILIGHT_SPLIT * (y_clear - TWILIGHT_PIVOT);
        let split = [tone, 0.0, -tone];
        for (i, out) in p.0.iter_mut().enumerate() {
            let v = (y_clear + (c[i] - y_clear) * boost + split[i]) * warm[i];
            *out = (v * 255.0).round().clamp(0.0, 255.0) as u8;
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_healthy_photo_needs_nothing_and_a_flat_or_dark_one_everything() {
        assert_eq!(need(0.0, 1.0, KEY_DEFAULT, KEY_DEFAULT, None), 0.0);
        assert_eq!(need(0.25, 0.75, KEY_DEFAULT, KEY_DEFAULT, None), 1.0);
        assert_eq!(need(0.0, 1.0, 0.2, KEY_DEFAULT, None), 1.0);
        let warm = Cast { warmth: 0.3, tint: 0.0, confidence: 1.0 };
        assert_eq!(need(0.0, 1.0, KEY_DEFAULT, KEY_DEFAULT, Some(warm)), 1.0);
    }

    #[test]
    fn a_channel_clipped_by_the_exposure_counts_and_one_clipped_by_a_cast_does_not() {
        // A white sky under the slight correction an estimate gives a clipped photo.
        assert!(clipped_by_exposure([255, 255, 255], [1.02, 0.99, 0.97]));
        // A red channel clipped by a warm cast, which the balance lowers by a fifth.
        assert!(!clipped_by_exposure([255, 200, 150], [0.8, 1.02, 1.2]));
        assert!(!clipped_by_exposure([250, 240, 230], [1.0, 1.0, 1.0]));
    }

    use super::notes::{
        KEY_DEFAULT, LIFT_MAX_BRIGHT, LIFT_MIN_BRIGHT, LIFT_MOODY, SAT_DEFAULT, SAT_NATURAL, SAT_VIVID, WARMTH_SHIFT,
    };
    use super::straighten::rotate_and_crop;
    use super::*;
    use image::Rgb;

    /// A dull, low-contrast "interior" (soft gradient, a window-like bright
    /// block, a dark sofa-like block, some texture) seen through `cast`, a
    /// per-channel multiplication like a wrong camera white balance.
    fn dull_scene(w: u32, h: u32, cast: [f32; 3]) -> RgbImage {
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
            Rgb([0, 1, 2].map(|i| (squeeze(base[i]) * cast[i]).min(255.0) as u8))
        })
    }

    fn dull_blue_scene(w: u32, h: u32) -> RgbImage {
        dull_scene(w, h, [0.85, 1.0, 1.2])
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

    /// A level room, 320 x 240: warm wall, two dark door frames, a bright
    /// window, a floor and a fine texture.
    fn room() -> RgbImage {
        RgbImage::from_fn(320, 240, |x, y| {
            let wall = 150.0 + 0.1 * x as f32;
            let mut c = [wall, wall * 0.95, wall * 0.85];
            let frame = |left: u32| (left..left + 12).contains(&x) && y > 30;
            if frame(60) || frame(200) {
                c = [70.0, 50.0, 40.0];
            }
            if (110..170).contains(&x) && (41..140).contains(&y) {
                c = [230.0, 235.0, 240.0];
            }
            if y > 200 {
                c = [120.0, 90.0, 60.0];
            }
            let texture = if (x / 3 + y / 5) % 2 == 1 { 6.0 } else { 0.0 };
            Rgb(c.map(|v| (v + texture).clamp(0.0, 255.0) as u8))
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

    fn red_blue(img: &RgbImage) -> f64 {
        let m = channel_means(img);
        m[0] / m[2].max(1.0)
    }

    fn luma_percentile_range(img: &RgbImage) -> f32 {
        let mut hist = [0u64; 256];
        for p in img.pixels() {
            hist[luma(p.0.map(f32::from)).round().clamp(0.0, 255.0) as usize] += 1;
        }
        let n = hist.iter().sum();
        f32::from(percentile(&hist, n, 0.99)) - f32::from(percentile(&hist, n, 0.01))
    }

    fn mean_abs_diff(a: &RgbImage, b: &RgbImage) -> f64 {
        let total: u64 = a.as_raw().iter().zip(b.as_raw()).map(|(&x, &y)| u64::from(x.abs_diff(y))).sum();
        total as f64 / a.as_raw().len().max(1) as f64
    }

    fn enhance(img: &RgbImage, notes: &str) -> RgbImage {
        enhance_listing_photo(&DynamicImage::ImageRgb8(img.clone()), notes)
    }

    #[test]
    fn dull_blue_photo_gains_contrast_and_loses_cast() {
        let input = dull_blue_scene(160, 120);
        let out = enhance(&input, "");
        assert_eq!(out.dimensions(), input.dimensions());
        let (before, after) = (luma_percentile_range(&input), luma_percentile_range(&out));
        assert!(after > before + 60.0, "luma range {before} -> {after}");
        // Measured against what the uncast scene becomes: the cast beyond the cool dead zone is
        // removed, so most of it goes.
        let clean = red_blue(&enhance(&dull_scene(160, 120, [1.0; 3]), ""));
        let (cast_in, cast_out) = (red_blue(&input), red_blue(&out));
        assert!(cast_in < clean * 0.8, "input R/B {cast_in} vs clean {clean}");
        let left = (clean - cast_out) / (clean - cast_in);
        assert!((0.0..0.5).contains(&left), "output R/B {cast_out} vs clean {clean}, input {cast_in}");
        let plan = plan_enhancement(&DynamicImage::ImageRgb8(input), "");
        let [r, g, b] = plan.white_balance_gains;
        assert!(b < 1.0 && b < r && b < g, "{plan:?}");
        assert!(plan.cast_warmth < 0.0 && plan.white_balance_confidence > 0.5, "{plan:?}");
        assert!(plan.black_point > 0.0 && plan.exposure_ev > 0.0, "{plan:?}");
    }

    #[test]
    fn warm_light_is_corrected_only_in_part() {
        let warm = dull_scene(160, 120, [1.15, 1.0, 0.8]);
        let clean = red_blue(&enhance(&dull_scene(160, 120, [1.0; 3]), ""));
        let default = red_blue(&enhance(&warm, ""));
        assert!(default > clean * 1.05 && default < red_blue(&warm), "{default} vs clean {clean}");
        // Asking for warmth keeps more of it.
        assert!(red_blue(&enhance(&warm, "keep it warm")) > default * 1.1);
        let plan = plan_enhancement(&DynamicImage::ImageRgb8(warm), "");
        assert!(plan.cast_warmth > 0.0 && plan.white_balance_gains[2] > 1.0, "{plan:?}");
    }

    #[test]
    fn notes_steer_brightness_and_warmth() {
        let input = dull_blue_scene(128, 96);
        let default = enhance(&input, "");
        let brighter = enhance(&input, "Please make it BRIGHTER and airy!");
        let moody = enhance(&input, "moody evening feel");
        assert!(mean_luma(&brighter) > mean_luma(&default) + 4.0);
        assert!(mean_luma(&moody) < mean_luma(&default) - 3.0);

        let warmer = enhance(&input, "warmer, golden hour");
        let cooler = enhance(&input, "Cooler tones");
        let (warm, cool, neutral) = (red_blue(&warmer), red_blue(&cooler), red_blue(&default));
        assert!(warm > neutral * 1.03, "{warm} vs {neutral}");
        assert!(cool < neutral / 1.03, "{cool} vs {neutral}");
    }

    #[test]
    fn notes_parsing_is_word_based_and_case_insensitive() {
        let img = DynamicImage::ImageRgb8(dull_blue_scene(32, 24));
        let plan = |notes: &str| plan_enhancement(&img, notes);
        assert_eq!(plan("Make the garden POP, vivid").saturation, SAT_VIVID);
        assert_eq!(plan("keep it natural").saturation, SAT_NATURAL);
        let default = plan("");
        assert_eq!(default.saturation, SAT_DEFAULT);
        // Substrings inside other words must not trigger a style.
        let none = plan("popcorn ceiling, warmth-free, enlightened, straightforward");
        assert_eq!(none, default);
        assert_eq!(plan("Warm").warmth, WARMTH_SHIFT);
        assert_eq!(plan("COOL").warmth, -WARMTH_SHIFT);
        assert_eq!(plan("warm but cool").warmth, 0.0);
        assert_eq!(plan("less warm").warmth, -WARMTH_SHIFT);

        let bright = plan("bright");
        assert!(bright.shadow_lift >= LIFT_MIN_BRIGHT && bright.exposure_ev >= default.exposure_ev, "{bright:?}");
        assert_eq!(plan("moody").shadow_lift, LIFT_MOODY);
        let contrast = plan("more contrast");
        assert!(contrast.midtone_contrast > default.midtone_contrast);
        assert!(contrast.local_contrast > default.local_contrast);
        assert_eq!(plan("less contrast").midtone_contrast, 0.0);

        let twilight = plan("Blue hour exterior");
        assert_eq!((twilight.twilight, plan("twilight").twilight, plan("at dusk").twilight), (1.0, 1.0, 1.0));
        assert!(twilight.midtone_contrast > default.midtone_contrast);
        assert_eq!(plan("blue walls, one hour").twilight, 0.0);
    }

    #[test]
    fn enhancement_is_deterministic() {
        let input = DynamicImage::ImageRgb8(dull_blue_scene(97, 61));
        let a = enhance_listing_photo(&input, "vivid warmer");
        let b = enhance_listing_photo(&input, "vivid warmer");
        assert_eq!(a, b);
        assert_eq!(plan_enhancement(&input, "x"), plan_enhancement(&input, "x"));
        // The plan is exactly the manifest of what enhancement applies.
        let (image, manifest) = enhance_listing_photo_with(&input, "vivid warmer", false);
        assert_eq!(image, a);
        assert_eq!(manifest, plan_enhancement(&input, "vivid warmer"));
    }

    #[test]
    fn well_exposed_photo_changes_little() {
        let input = well_exposed_scene(128, 128);
        let plan = plan_enhancement(&DynamicImage::ImageRgb8(input.clone()), "");
        assert_eq!(plan.black_point, 0.0, "{plan:?}");
        assert!(plan.exposure_ev < 0.1 && plan.shadow_lift < 0.1, "{plan:?}");
        let diff = mean_abs_diff(&input, &enhance(&input, ""));
        assert!(diff < 8.0, "mean abs diff {diff}");
    }

    #[test]
    fn blue_sky_scene_is_not_fully_neutralised() {
        // Mostly sky: gray world would kill the blue; gray edge sees only one edge.
        let input = RgbImage::from_fn(64, 64, |_, y| if y < 48 { Rgb([90, 150, 235]) } else { Rgb([90, 120, 60]) });
        let plan = plan_enhancement(&DynamicImage::ImageRgb8(input.clone()), "");
        let limit = white_balance::MAX_LOG_CORRECTION.exp() * 1.1;
        assert!(plan.white_balance_gains.iter().all(|&g| g < limit && g > 1.0 / limit), "{plan:?}");
        let sky = enhance(&input, "").get_pixel(10, 10).0;
        assert!(sky[2] > sky[0] + 60, "sky became {sky:?}");
    }

    #[test]
    fn tone_curve_is_monotonic_and_keeps_the_ends() {
        for (lift, contrast) in [(0.0, 0.0), (LIFT_MAX_BRIGHT, 0.1), (LIFT_MOODY, 0.45), (0.3, 0.45)] {
            assert!(tone_curve(0.0, lift, contrast).abs() < 1e-6);
            assert!((tone_curve(1.0, lift, contrast) - 1.0).abs() < 1e-6);
            let samples: Vec<f32> = (0..=100).map(|i| tone_curve(i as f32 / 100.0, lift, contrast)).collect();
            assert!(samples.windows(2).all(|pair| pair[1] >= pair[0]), "lift {lift} contrast {contrast}");
        }
        assert!(tone_curve(0.2, 0.3, 0.0) > 0.2 && tone_curve(0.2, LIFT_MOODY, 0.0) < 0.2);
        assert!(tone_curve(0.3, 0.0, 0.2) < 0.3 && tone_curve(0.7, 0.0, 0.2) > 0.7);
    }

    #[test]
    fn handles_degenerate_inputs() {
        let empty = DynamicImage::ImageRgb8(RgbImage::new(0, 5));
        assert_eq!(enhance_listing_photo(&empty, "bright").dimensions(), (0, 5));
        assert_eq!(enhance_listing_photo_with(&empty, "", true).0.dimensions(), (0, 5));
        assert_eq!(plan_enhancement(&empty, "").exposure_ev, 0.0);

        let flat = DynamicImage::ImageRgb8(RgbImage::from_pixel(7, 3, Rgb([128, 128, 128])));
        let out = enhance_listing_photo(&flat, "straighten");
        assert_eq!(out.dimensions(), (7, 3));
        assert!(out.pixels().all(|p| p.0[0] == p.0[1] && p.0[1] == p.0[2]), "grey stays grey");

        let black = DynamicImage::ImageRgb8(RgbImage::new(5, 5));
        assert!(enhance_listing_photo(&black, "brighter").pixels().all(|p| p.0 == [0, 0, 0]));

        let one = DynamicImage::ImageRgb8(RgbImage::from_pixel(1, 1, Rgb([10, 200, 30])));
        assert_eq!(enhance_listing_photo_with(&one, "vivid", true).0.dimensions(), (1, 1));

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
    fn straighten_levels_a_leaning_room() {
        let level = room();
        let leaning = rotate_and_crop(&level, 2.5);
        assert!(leaning.width() < 320 && leaning.height() < 240);
        let (straight, degrees) = straighten_verticals(&leaning);
        assert!((degrees + 2.5).abs() < 0.3, "rotated {degrees}");
        assert!(straight.width() < leaning.width() && straight.height() < leaning.height());
        // No empty corners: every corner still shows the scene.
        let (w, h) = straight.dimensions();
        for (x, y) in [(0, 0), (w - 1, 0), (0, h - 1), (w - 1, h - 1)] {
            assert!(straight.get_pixel(x, y).0.iter().any(|&v| v > 40), "corner ({x}, {y})");
        }
        let (_, residual) = straighten_verticals(&straight);
        assert!(residual.abs() < 0.3, "residual {residual}");

        // The other way round, and nothing to do on the level room.
        let (_, degrees) = straighten_verticals(&rotate_and_crop(&level, -4.0));
        assert!((degrees - 4.0).abs() < 0.3, "rotated {degrees}");
        let (same, zero) = straighten_verticals(&level);
        assert_eq!((zero, same.dimensions()), (0.0, level.dimensions()));
    }

    #[test]
    fn straighten_leaves_unclear_photos_alone() {
        // Noise has edges in every direction and no dominant vertical.
        let noise = RgbImage::from_fn(200, 150, |x, y| {
            let v = ((x * 7919 + y * 104_729) ^ (x * y)) % 251;
            Rgb([v as u8; 3])
        });
        assert_eq!(straighten_verticals(&noise).1, 0.0);
        // A smooth gradient has no strong edges at all.
        let gradient = RgbImage::from_fn(200, 150, |x, _| Rgb([(x + 20) as u8; 3]));
        assert_eq!(straighten_verticals(&gradient), (gradient.clone(), 0.0));
        assert_eq!(straighten_verticals(&RgbImage::new(2, 2)).1, 0.0);
    }

    #[test]
    fn straighten_is_wired_through_flag_and_notes() {
        let leaning = DynamicImage::ImageRgb8(rotate_and_crop(&room(), 2.5));
        let (out, manifest) = enhance_listing_photo_with(&leaning, "", true);
        assert!((manifest.verticals_rotation_degrees + 2.5).abs() < 0.3, "{manifest:?}");
        assert!(out.width() < leaning.width());
        assert_eq!(enhance_listing_photo(&leaning, "").dimensions(), (leaning.width(), leaning.height()));
        assert_eq!(plan_enhancement(&leaning, "").verticals_rotation_degrees, 0.0);
        let asked = plan_enhancement(&leaning, "please straighten the verticals");
        assert_eq!(asked.verticals_rotation_degrees, manifest.verticals_rotation_degrees);
        assert_eq!(enhance_listing_photo(&leaning, "fix the vertical lines").dimensions(), out.dimensions());
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
