//! White balance: the colour of the light read from the photo's edges (gray edge), and the
//! share of it a listing photographer would remove.

use image::RgbImage;

use super::notes::Intent;
use super::{luma, LUMA};

/// Minkowski norm of the gray-edge estimate: high enough that the strongest edges (window frames,
/// specular highlights), which show the colour of the light best, dominate the estimate.
const GRAY_EDGE_NORM: i32 = 6;
/// A pixel with every channel at or above this is clipped white and says nothing about the light.
const CLIP_LEVEL: u8 = 250;
/// Linear-light luma gradient above which a pixel counts as an edge when judging confidence.
const EDGE_GRADIENT: f32 = 0.01;
/// Share of edge pixels at which the estimate is fully trusted; flatter photos are corrected less.
const EDGE_SHARE_FULL_CONFIDENCE: f32 = 0.05;
/// Warmth of the light (half the natural log of its R/B ratio) left alone: rooms lit by lamps,
/// low sun and late light are meant to look warm, and well-exposed photos of such scenes (golden
/// hour, sandstone, a harbour at dusk) read from 0.1 to 0.25 of their own.
pub(super) const WARM_TOLERANCE: f32 = 0.15;
/// Correction per unit of warmth beyond the tolerance. Above one, so that the correction catches
/// up with a strong cast: one of 0.4 (a camera balanced for daylight under lamps) loses 0.3 and
/// keeps some glow, while a warmth up to the tolerance is kept whole.
pub(super) const WARM_CORRECTION: f32 = 1.2;
/// Share removed when the notes ask for warmth.
pub(super) const WARM_CORRECTION_WARM_NOTES: f32 = 0.4;
/// Share removed when the notes ask for a twilight look, whose lights are meant to glow.
pub(super) const WARM_CORRECTION_TWILIGHT: f32 = 0.5;
/// Blue casts are rarely intended indoors (shade, overcast windows), so all of one beyond a
/// narrow dead zone is removed; the dead zone spares the slight cool reading that blue sky and
/// fog give a gray-edge estimate of a daylight scene.
const COOL_TOLERANCE: f32 = 0.08;
pub(super) const COOL_CORRECTION: f32 = 1.0;
/// Green-magenta tint left alone. Magenta rarely comes from a light but often from content
/// (wood, skin, rugs), so it gets the wider tolerance; green comes from fluorescent and LED light.
const MAGENTA_TOLERANCE: f32 = 0.2;
const GREEN_TOLERANCE: f32 = 0.12;
/// Tint estimates are the least reliable (a saturated object, or one clipped in a single channel,
/// moves them), so less than a third is trusted.
const TINT_CORRECTION: f32 = 0.3;
/// Largest correction on either axis, in natural-log units (a gain of about 1.57).
pub(super) const MAX_LOG_CORRECTION: f32 = 0.45;
/// Green-magenta tint of an estimate up to which it reads as the light's, and from which it
/// reads as the scene's own colour (a field of green leaves, a purple dusk sky, a colour grade);
/// between the two the whole correction fades out. Lights lie near the warm-cool axis: lamps,
/// shade and daylight differ in warmth, and even fluorescent green is a small tint.
const CAST_PLAUSIBLE_TINT: f32 = 0.3;
const CAST_IMPLAUSIBLE_TINT: f32 = 0.5;
/// Warmth up to which an estimate reads as a lamp's (tungsten under a daylight balance is about
/// 0.5), and from which it reads as a sunset's or a colour grade's, fading out between.
const CAST_PLAUSIBLE_WARMTH: f32 = 0.45;
const CAST_IMPLAUSIBLE_WARMTH: f32 = 0.75;

/// The colour of the light as the gray-edge estimator sees it, and how far to trust it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Cast {
    /// Half the log of the light's R/B ratio; positive is warm.
    pub(super) warmth: f32,
    /// Log of the light's R-B geometric mean over G; positive is magenta.
    pub(super) tint: f32,
    pub(super) confidence: f32,
}

impl Cast {
    /// 1 for a cast a light gives, fading to 0 for one only a scene's own colour gives.
    pub(super) fn plausibility(&self) -> f32 {
        let tint = (self.tint.abs() - CAST_PLAUSIBLE_TINT) / (CAST_IMPLAUSIBLE_TINT - CAST_PLAUSIBLE_TINT);
        let warmth = (self.warmth - CAST_PLAUSIBLE_WARMTH) / (CAST_IMPLAUSIBLE_WARMTH - CAST_PLAUSIBLE_WARMTH);
        1.0 - tint.max(warmth).clamp(0.0, 1.0)
    }
}

/// Gray-edge illuminant estimate: the Minkowski mean of per-channel gradient
/// magnitudes in linear light.
///
/// Differences between neighbouring pixels cancel the surfaces' own colours far
/// better than plain averages do, so a room with a red sofa or a frame full of
/// blue sky is not mistaken for a cast (the failure of gray world). Pixels
/// clipped white in every channel are skipped. `None` when a channel has no
/// edges at all.
pub(super) fn estimate_cast(small: &RgbImage, linear: &[f32; 256]) -> Option<Cast> {
    let (w, h) = small.dimensions();
    if w < 2 || h < 2 {
        return None;
    }
    let clipped = |p: [u8; 3]| p.iter().all(|&v| v >= CLIP_LEVEL);
    let mut energy = [0.0f64; 3];
    let mut samples = 0u64;
    let mut edges = 0u64;
    for y in 0..h - 1 {
        for x in 0..w - 1 {
            let here = small.get_pixel(x, y).0;
            let right = small.get_pixel(x + 1, y).0;
            let below = small.get_pixel(x, y + 1).0;
            if clipped(here) || clipped(right) || clipped(below) {
                continue;
            }
            let mut edge_luma = 0.0f32;
            for c in 0..3 {
                let v = linear[usize::from(here[c])];
                let dx = linear[usize::from(right[c])] - v;
                let dy = linear[usize::from(below[c])] - v;
                let magnitude = (dx * dx + dy * dy).sqrt();
                energy[c] += f64::from(magnitude).powi(GRAY_EDGE_NORM);
                edge_luma += LUMA[c] * magnitude;
            }
            samples += 1;
            if edge_luma > EDGE_GRADIENT {
                edges += 1;
            }
        }
    }
    if samples == 0 || energy.iter().any(|&e| e <= 0.0) {
        return None;
    }
    let confidence = (edges as f32 / samples as f32 / EDGE_SHARE_FULL_CONFIDENCE).clamp(0.0, 1.0);
    Some(cast_of(energy.map(|e| (e / samples as f64).ln() / f64::from(GRAY_EDGE_NORM)), confidence))
}

/// The cast of a light whose colour has the natural logs `log_light`.
fn cast_of(log_light: [f64; 3], confidence: f32) -> Cast {
    Cast {
        warmth: ((log_light[0] - log_light[2]) / 2.0) as f32,
        tint: ((log_light[0] + log_light[2]) / 2.0 - log_light[1]) as f32,
        confidence,
    }
}

/// Linear-light gains that remove the part of the cast a photographer would.
///
/// Each axis has a dead zone (intended warmth or tint stays), only a share of
/// the rest is removed, the correction is capped and scaled by confidence.
pub(super) fn white_balance_gains(cast: &Cast, intent: &Intent) -> [f32; 3] {
    let warmth = if cast.warmth > 0.0 {
        dead_zone(cast.warmth, WARM_TOLERANCE, intent.warm_correction())
    } else {
        dead_zone(cast.warmth, COOL_TOLERANCE, intent.cool_correction())
    };
    let tint_tolerance = if cast.tint > 0.0 { MAGENTA_TOLERANCE } else { GREEN_TOLERANCE };
    let tint = dead_zone(cast.tint, tint_tolerance, TINT_CORRECTION);
    let trust = cast.confidence * cast.plausibility();
    let (warmth, tint) = (warmth * trust, tint * trust);
    let gains = [(-(warmth + tint)).exp(), 1.0, (warmth - tint).exp()];
    let norm = luma(gains);
    gains.map(|g| g / norm)
}

/// The correction for an estimate `v`: `share` of its excess beyond `tolerance`, capped.
fn dead_zone(v: f32, tolerance: f32, share: f32) -> f32 {
    let excess = (v.abs() - tolerance).max(0.0).copysign(v);
    (share * excess).clamp(-MAX_LOG_CORRECTION, MAX_LOG_CORRECTION)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_strongly_tinted_estimate_is_read_as_the_scene() {
        let cast = |tint| Cast { warmth: 0.3, tint, confidence: 1.0 };
        assert_eq!(cast(0.1).plausibility(), 1.0);
        assert_eq!(cast(-0.6).plausibility(), 0.0);
        assert!((cast(0.4).plausibility() - 0.5).abs() < 1e-6);
    }

    #[test]
    fn white_balance_correction_has_dead_zone_share_and_cap() {
        assert!((dead_zone(0.3, 0.05, 0.8) - 0.2).abs() < 1e-6);
        assert!((dead_zone(-0.3, 0.05, 1.0) + 0.25).abs() < 1e-6);
        assert_eq!(dead_zone(0.04, 0.05, 1.0), 0.0);
        assert_eq!(dead_zone(3.0, 0.0, 1.0), MAX_LOG_CORRECTION);
        let cast = Cast { warmth: 0.4, tint: 0.0, confidence: 1.0 };
        let gains = white_balance_gains(&cast, &Intent::default());
        assert!(gains[0] < gains[1] && gains[1] < gains[2], "{gains:?}");
        assert!((luma(gains) - 1.0).abs() < 1e-5, "{gains:?}");
        // A scene's own warm light, up to the tolerance, is kept whole.
        let golden = white_balance_gains(&Cast { warmth: WARM_TOLERANCE, ..cast }, &Intent::default());
        assert!(golden.iter().all(|&g| (g - 1.0).abs() < 1e-6), "{golden:?}");
        let unsure = white_balance_gains(&Cast { confidence: 0.0, ..cast }, &Intent::default());
        assert!(unsure.iter().all(|&g| (g - 1.0).abs() < 1e-6), "{unsure:?}");
    }
}
