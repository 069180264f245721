//! Iterated graph cut between a subject and a background colour model (GrabCut), started from
//! a subject likelihood instead of a user's rectangle.

use super::gmm::Gmm;
use super::maxflow::Graph;

/// Rounds of refitting the colour models and cutting again.
const ROUNDS: usize = 5;
/// Weight of the edge term: how much a cut through flat colour costs.
const SMOOTHNESS: f64 = 50.0;
/// Weight of the subject likelihood against the colour models.
const PRIOR_WEIGHT: f64 = 2.0;
/// The colour models are first fitted only on pixels the prior is this sure of, so a part of the
/// subject the prior doubts does not teach the background model its colours.
const SURE: f32 = 0.6;
/// Fewest sure pixels worth fitting a colour model on; below it the first models use every pixel.
const MIN_SEED_PIXELS: usize = 64;
/// Energies are scaled to integers for an exact max-flow.
const SCALE: f64 = 64.0;

/// The subject mask of a `w`x`h` picture of `colours` (RGB, 0 to 255), given each pixel's prior
/// likelihood of being subject.
pub(crate) fn cut(colours: &[[f32; 3]], prior: &[f32], w: usize, h: usize) -> Vec<bool> {
    let mut subject: Vec<bool> = prior.iter().map(|&p| p >= 0.5).collect();
    let neighbours = neighbour_weights(colours, w, h);
    let mut last_changed = usize::MAX;
    for round in 0..ROUNDS {
        let pick = |want: bool| -> Vec<[f32; 3]> {
            colours.iter().zip(&subject).filter(|(_, &s)| s == want).map(|(c, _)| *c).collect()
        };
        let confident = |want: bool| -> Vec<[f32; 3]> {
            let sure = |p: f32| if want { p >= SURE } else { p <= 1.0 - SURE };
            colours.iter().zip(prior).filter(|(_, &p)| sure(p)).map(|(c, _)| *c).collect()
        };
        let first = |want: bool| {
            let sure = confident(want);
            if sure.len() >= MIN_SEED_PIXELS {
                sure
            } else {
                pick(want)
            }
        };
        let (fg, bg) = if round == 0 { (first(true), first(false)) } else { (pick(true), pick(false)) };
        let (Some(fg), Some(bg)) = (Gmm::fit(&fg), Gmm::fit(&bg)) else {
            break;
        };
        let mut graph = Graph::new(w * h, neighbours.len());
        for (i, (c, &p)) in colours.iter().zip(prior).enumerate() {
            let p = f64::from(p).clamp(0.02, 0.98);
            let as_subject = fg.cost(c) - PRIOR_WEIGHT * p.ln();
            let as_background = bg.cost(c) - PRIOR_WEIGHT * (1.0 - p).ln();
            let (s, t) = (as_background.min(as_subject), as_subject.min(as_background));
            // Only the difference matters: the cheaper label costs nothing.
            graph.set_terminals(i, ((as_background - s) * SCALE) as i64, ((as_subject - t) * SCALE) as i64);
        }
        for &(i, j, weight) in &neighbours {
            let cap = (weight * SCALE).round() as i64;
            graph.add_edge(i as usize, j as usize, cap, cap);
        }
        let next = graph.source_side();
        let changed = next.iter().zip(&subject).filter(|(a, b)| a != b).count();
        subject = next;
        if changed * 2000 < w * h || changed >= last_changed {
            break;
        }
        last_changed = changed;
    }
    subject
}

/// The 8-neighbour edges with GrabCut's contrast-sensitive weights:
/// `SMOOTHNESS * exp(-beta * |dc|^2) / distance`, beta from the picture's mean contrast.
fn neighbour_weights(colours: &[[f32; 3]], w: usize, h: usize) -> Vec<(u32, u32, f64)> {
    let diff = |a: usize, b: usize| -> f64 {
        let (p, q) = (colours[a], colours[b]);
        (0..3).map(|k| f64::from(p[k] - q[k]).powi(2)).sum()
    };
    let mut pairs: Vec<(u32, u32, f64)> = Vec::with_capacity(4 * w * h);
    for y in 0..h {
        for x in 0..w {
            let i = y * w + x;
            if x + 1 < w {
                pairs.push((i as u32, (i + 1) as u32, 1.0));
            }
            if y + 1 < h {
                pairs.push((i as u32, (i + w) as u32, 1.0));
                if x + 1 < w {
                    pairs.push((i as u32, (i + w + 1) as u32, std::f64::consts::SQRT_2));
                }
                if x > 0 {
                    pairs.push((i as u32, (i + w - 1) as u32, std::f64::consts::SQRT_2));
                }
            }
        }
    }
    let mean = pairs.iter().map(|&(a, b, _)| diff(a as usize, b as usize)).sum::<f64>() / pairs.len().max(1) as f64;
    let beta = if mean > 0.0 { 1.0 / (2.0 * mean) } else { 0.0 };
    for pair in pairs.iter_mut() {
        let d = diff(pair.0 as usize, pair.1 as usize);
        pair.2 = SMOOTHNESS * (-beta * d).exp() / pair.2;
    }
    pairs
}
