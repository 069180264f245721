//! Where the subject probably is, before any colour model exists: superpixels (SLIC) scored by
//! how little they connect to the picture's border, then smoothed by a small least-squares
//! problem (Zhu, Liang, Wei & Sun, "Saliency Optimization from Robust Background Detection",
//! CVPR 2014). A subject that touches the frame along part of its outline still scores high,
//! unlike a flood fill from the border.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Superpixels the picture is divided into.
const SUPERPIXELS: usize = 400;
/// SLIC's weight of position against colour.
const COMPACTNESS: f32 = 10.0;
/// Colour distance (CIELAB) at which two regions stop counting as one surface.
const SIGMA_COLOUR: f32 = 10.0;
/// Colour steps below this are treated as the same surface when measuring connectivity.
const CLIP_COLOUR: f32 = 3.0;
/// Weight of the bottom edge against the others in the border evidence.
const BOTTOM_EDGE_WEIGHT: f32 = 0.3;
/// Spatial reach of the contrast term, as a share of the picture's size.
const SIGMA_SPACE: f32 = 0.25;

/// Superpixel labels of a picture and the regions' mean colour and position.
pub(crate) struct Superpixels {
    /// Region index of each pixel.
    pub(crate) labels: Vec<u32>,
    colour: Vec<[f32; 3]>,
    centre: Vec<[f32; 2]>,
    /// How much a region's touching the frame counts as evidence of background: subjects are
    /// often cut by the bottom edge (a portrait's shoulders, a cup's saucer), rarely by the top.
    on_border: Vec<f32>,
    neighbours: Vec<Vec<usize>>,
}

impl Superpixels {
    /// SLIC over CIELAB pixels of a `w`x`h` picture.
    pub(crate) fn new(lab: &[[f32; 3]], w: usize, h: usize) -> Self {
        let step = ((w * h) as f32 / SUPERPIXELS as f32).sqrt().max(2.0);
        let (gx, gy) = (((w as f32 / step).round() as usize).max(1), ((h as f32 / step).round() as usize).max(1));
        let mut seeds: Vec<([f32; 3], [f32; 2])> = Vec::with_capacity(gx * gy);
        for j in 0..gy {
            for i in 0..gx {
                let x = ((i as f32 + 0.5) * w as f32 / gx as f32) as usize;
                let y = ((j as f32 + 0.5) * h as f32 / gy as f32) as usize;
                let (x, y) = (x.min(w - 1), y.min(h - 1));
                seeds.push((lab[y * w + x], [x as f32, y as f32]));
            }
        }
        let mut labels = vec![0u32; w * h];
        let reach = step.ceil() as isize * 2;
        let weight = (COMPACTNESS / step).powi(2);
        let mut best = vec![f32::INFINITY; w * h];
        for _ in 0..8 {
            best.fill(f32::INFINITY);
            for (k, (c, p)) in seeds.iter().enumerate() {
                let (cx, cy) = (p[0] as isize, p[1] as isize);
                for y in (cy - reach).max(0)..(cy + reach + 1).min(h as isize) {
                    for x in (cx - reach).max(0)..(cx + reach + 1).min(w as isize) {
                        let i = y as usize * w + x as usize;
                        let l = lab[i];
                        let dc = (l[0] - c[0]).powi(2) + (l[1] - c[1]).powi(2) + (l[2] - c[2]).powi(2);
                        let ds = (x as f32 - p[0]).powi(2) + (y as f32 - p[1]).powi(2);
                        let d = dc + weight * ds;
                        if d < best[i] {
                            best[i] = d;
                            labels[i] = k as u32;
                        }
                    }
                }
            }
            let mut sums = vec![[0.0f64; 6]; seeds.len()];
            for (i, &k) in labels.iter().enumerate() {
                let s = &mut sums[k as usize];
                let l = lab[i];
                s[0] += f64::from(l[0]);
                s[1] += f64::from(l[1]);
                s[2] += f64::from(l[2]);
                s[3] += (i % w) as f64;
                s[4] += (i / w) as f64;
                s[5] += 1.0;
            }
            for (seed, s) in seeds.iter_mut().zip(&sums) {
                if s[5] > 0.0 {
                    let n = s[5];
                    *seed = (
                        [(s[0] / n) as f32, (s[1] / n) as f32, (s[2] / n) as f32],
                        [(s[3] / n) as f32, (s[4] / n) as f32],
                    );
                }
            }
        }
        Self::from_labels(labels, lab, w, h)
    }

    /// Region statistics of a labelling; empty labels are compacted away.
    fn from_labels(mut labels: Vec<u32>, lab: &[[f32; 3]], w: usize, h: usize) -> Self {
        let count = labels.iter().copied().max().map_or(0, |m| m as usize + 1);
        let mut remap = vec![u32::MAX; count];
        let mut next = 0u32;
        for l in labels.iter_mut() {
            if remap[*l as usize] == u32::MAX {
                remap[*l as usize] = next;
                next += 1;
            }
            *l = remap[*l as usize];
        }
        let n = next as usize;
        let mut sums = vec![[0.0f64; 6]; n];
        let mut on_border = vec![0.0f32; n];
        let mut adjacent = vec![Vec::<usize>::new(); n];
        let link = |a: usize, b: usize, adjacent: &mut Vec<Vec<usize>>| {
            if a != b && !adjacent[a].contains(&b) {
                adjacent[a].push(b);
                adjacent[b].push(a);
            }
        };
        for y in 0..h {
            for x in 0..w {
                let i = y * w + x;
                let k = labels[i] as usize;
                let l = lab[i];
                let s = &mut sums[k];
                s[0] += f64::from(l[0]);
                s[1] += f64::from(l[1]);
                s[2] += f64::from(l[2]);
                s[3] += x as f64;
                s[4] += y as f64;
                s[5] += 1.0;
                let edge = if y == 0 || x == 0 || x == w - 1 {
                    1.0
                } else if y == h - 1 {
                    BOTTOM_EDGE_WEIGHT
                } else {
                    0.0
                };
                on_border[k] = f32::max(on_border[k], edge);
                if x + 1 < w {
                    link(k, labels[i + 1] as usize, &mut adjacent);
                }
                if y + 1 < h {
                    link(k, labels[i + w] as usize, &mut adjacent);
                }
            }
        }
        let colour = sums.iter().map(|s| [(s[0] / s[5]) as f32, (s[1] / s[5]) as f32, (s[2] / s[5]) as f32]).collect();
        let size = w.max(h) as f64;
        let centre = sums.iter().map(|s| [(s[3] / s[5] / size) as f32, (s[4] / s[5] / size) as f32]).collect();
        Self { labels, colour, centre, on_border, neighbours: adjacent }
    }

    fn len(&self) -> usize {
        self.colour.len()
    }

    fn colour_distance(&self, a: usize, b: usize) -> f32 {
        let (p, q) = (self.colour[a], self.colour[b]);
        ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt()
    }

    /// Foreground likelihood of each region in [0, 1].
    pub(crate) fn saliency(&self) -> Vec<f32> {
        let n = self.len();
        if n < 2 {
            return vec![0.0; n];
        }
        // Boundary connectivity: the share of a region's colour-connected surface lying on the
        // border, against the square root of that surface's area.
        let mut background = vec![0.0f32; n];
        for (p, bg) in background.iter_mut().enumerate() {
            let geodesic = self.geodesic_from(p);
            let mut area = 0.0f32;
            let mut border = 0.0f32;
            for (q, &d) in geodesic.iter().enumerate() {
                let reach = (-d * d / (2.0 * SIGMA_COLOUR * SIGMA_COLOUR)).exp();
                area += reach;
                border += reach * self.on_border[q];
            }
            let connectivity = border / area.sqrt();
            *bg = 1.0 - (-connectivity * connectivity / 2.0).exp();
        }
        // Contrast against probable background nearby.
        let mut contrast = vec![0.0f32; n];
        for (p, ctr) in contrast.iter_mut().enumerate() {
            for (q, bg) in background.iter().enumerate() {
                let (a, b) = (self.centre[p], self.centre[q]);
                let ds = (a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2);
                let spatial = (-ds / (2.0 * SIGMA_SPACE * SIGMA_SPACE)).exp();
                *ctr += self.colour_distance(p, q) * spatial * bg;
            }
        }
        let top = contrast.iter().copied().fold(0.0f32, f32::max);
        if top <= f32::EPSILON {
            return vec![0.0; n];
        }
        let foreground: Vec<f32> = contrast.iter().map(|c| c / top).collect();
        self.optimise(&background, &foreground)
    }

    /// Minimises sum(bg s^2) + sum(fg (s - 1)^2) + sum(w_pq (s_p - s_q)^2) over neighbouring
    /// regions by Gauss-Seidel sweeps (the system is small and diagonally dominant).
    fn optimise(&self, background: &[f32], foreground: &[f32]) -> Vec<f32> {
        const MU: f32 = 0.1;
        let n = self.len();
        let smooth: Vec<Vec<(usize, f32)>> = (0..n)
            .map(|p| {
                self.neighbours[p]
                    .iter()
                    .map(|&q| {
                        let d = self.colour_distance(p, q);
                        (q, (-d * d / (2.0 * SIGMA_COLOUR * SIGMA_COLOUR)).exp() + MU)
                    })
                    .collect()
            })
            .collect();
        let mut s: Vec<f32> = foreground.to_vec();
        for _ in 0..200 {
            let mut change = 0.0f32;
            for p in 0..n {
                let mut num = foreground[p];
                let mut den = background[p] + foreground[p];
                for &(q, w) in &smooth[p] {
                    num += w * s[q];
                    den += w;
                }
                let next = if den > 0.0 { num / den } else { 0.0 };
                change = change.max((next - s[p]).abs());
                s[p] = next;
            }
            if change < 1e-4 {
                break;
            }
        }
        s
    }

    /// Shortest-path colour distance from region `from` to every region, steps under
    /// [`CLIP_COLOUR`] counting as nothing.
    fn geodesic_from(&self, from: usize) -> Vec<f32> {
        let n = self.len();
        let mut dist = vec![f32::INFINITY; n];
        dist[from] = 0.0;
        let mut heap = BinaryHeap::new();
        heap.push(Reverse((Ordered(0.0), from)));
        while let Some(Reverse((Ordered(d), p))) = heap.pop() {
            if d > dist[p] {
                continue;
            }
            for &q in &self.neighbours[p] {
                let step = (self.colour_distance(p, q) - CLIP_COLOUR).max(0.0);
                let nd = d + step;
                if nd < dist[q] {
                    dist[q] = nd;
                    heap.push(Reverse((Ordered(nd), q)));
                }
            }
        }
        dist
    }
}

/// A float with the total order the heap needs.
#[derive(Clone, Copy)]
struct Ordered(f32);

impl PartialEq for Ordered {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Ordered {}

impl PartialOrd for Ordered {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ordered {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A red square on grey, touching the bottom edge: the square scores high, the grey low.
    #[test]
    fn a_subject_touching_the_frame_stays_salient() {
        let (w, h) = (80, 60);
        let lab: Vec<[f32; 3]> = (0..w * h)
            .map(|i| {
                let (x, y) = (i % w, i / w);
                if (25..55).contains(&x) && y >= 20 {
                    [50.0, 60.0, 40.0]
                } else {
                    [60.0, 0.0, 2.0]
                }
            })
            .collect();
        let sp = Superpixels::new(&lab, w, h);
        let s = sp.saliency();
        let at = |x: usize, y: usize| s[sp.labels[y * w + x] as usize];
        assert!(at(40, 50) > 0.6, "subject {}", at(40, 50));
        assert!(at(40, 58) > 0.5, "subject at the edge {}", at(40, 58));
        assert!(at(5, 5) < 0.2, "backdrop {}", at(5, 5));
        assert!(at(70, 50) < 0.2, "backdrop {}", at(70, 50));
    }
}
