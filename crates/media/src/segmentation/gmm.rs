//! Gaussian mixture colour models, fitted by hard expectation-maximisation as GrabCut does
//! (Rother, Kolmogorov & Blake, "GrabCut", SIGGRAPH 2004).

/// Components per model: enough for a textured backdrop or a multi-coloured subject.
const COMPONENTS: usize = 5;
/// Most samples a model is fitted on; larger sets are strided.
const MAX_SAMPLES: usize = 20_000;
/// Added to each covariance diagonal so a flat region cannot make a component singular.
const REGULARISATION: f64 = 2.0;

struct Component {
    mean: [f64; 3],
    inverse: [[f64; 3]; 3],
    /// ln(weight) - ln(det(covariance)) / 2.
    log_norm: f64,
}

/// A mixture of up to [`COMPONENTS`] full-covariance Gaussians over colours.
pub(crate) struct Gmm {
    components: Vec<Component>,
}

impl Gmm {
    /// Fits the mixture to `samples`: k-means for the first assignment, then two rounds of
    /// assigning each sample to its most likely component and re-estimating.
    pub(crate) fn fit(samples: &[[f32; 3]]) -> Option<Self> {
        let stride = samples.len().div_ceil(MAX_SAMPLES).max(1);
        let samples: Vec<[f64; 3]> = samples.iter().step_by(stride).map(|s| s.map(f64::from)).collect();
        if samples.len() < COMPONENTS * 4 {
            return None;
        }
        let mut assignment = kmeans(&samples, COMPONENTS);
        let mut model = Self::estimate(&samples, &assignment)?;
        for _ in 0..2 {
            for (a, s) in assignment.iter_mut().zip(&samples) {
                *a = model.most_likely(s);
            }
            model = Self::estimate(&samples, &assignment)?;
        }
        Some(model)
    }

    /// -ln p(colour), up to a constant shared by all models.
    pub(crate) fn cost(&self, colour: &[f32; 3]) -> f64 {
        let x = colour.map(f64::from);
        let terms: Vec<f64> = self.components.iter().map(|c| c.log_norm - 0.5 * mahalanobis(c, &x)).collect();
        let top = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = terms.iter().map(|t| (t - top).exp()).sum();
        -(top + sum.ln())
    }

    fn most_likely(&self, x: &[f64; 3]) -> usize {
        let score = |c: &Component| c.log_norm - 0.5 * mahalanobis(c, x);
        (0..self.components.len())
            .max_by(|&a, &b| score(&self.components[a]).total_cmp(&score(&self.components[b])))
            .unwrap_or(0)
    }

    fn estimate(samples: &[[f64; 3]], assignment: &[usize]) -> Option<Self> {
        let k = assignment.iter().copied().max().unwrap_or(0) + 1;
        let mut count = vec![0usize; k];
        let mut sum = vec![[0.0f64; 3]; k];
        let mut prod = vec![[[0.0f64; 3]; 3]; k];
        for (s, &a) in samples.iter().zip(assignment) {
            count[a] += 1;
            for r in 0..3 {
                sum[a][r] += s[r];
                for c in 0..3 {
                    prod[a][r][c] += s[r] * s[c];
                }
            }
        }
        let total = samples.len() as f64;
        let mut components = Vec::new();
        for j in 0..k {
            if count[j] < 4 {
                continue;
            }
            let n = count[j] as f64;
            let mean = sum[j].map(|v| v / n);
            let mut cov = [[0.0f64; 3]; 3];
            for r in 0..3 {
                for c in 0..3 {
                    cov[r][c] = prod[j][r][c] / n - mean[r] * mean[c];
                }
                cov[r][r] += REGULARISATION;
            }
            let det = determinant(&cov);
            if det <= 0.0 || !det.is_finite() {
                continue;
            }
            components.push(Component {
                mean,
                inverse: inverse(&cov, det),
                log_norm: (n / total).ln() - 0.5 * det.ln(),
            });
        }
        (!components.is_empty()).then_some(Self { components })
    }
}

fn mahalanobis(c: &Component, x: &[f64; 3]) -> f64 {
    let d = [x[0] - c.mean[0], x[1] - c.mean[1], x[2] - c.mean[2]];
    let mut m = 0.0;
    for r in 0..3 {
        for col in 0..3 {
            m += d[r] * c.inverse[r][col] * d[col];
        }
    }
    m
}

fn determinant(m: &[[f64; 3]; 3]) -> f64 {
    m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
        + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
}

fn inverse(m: &[[f64; 3]; 3], det: f64) -> [[f64; 3]; 3] {
    let c = |r0: usize, c0: usize, r1: usize, c1: usize| m[r0][c0] * m[r1][c1] - m[r0][c1] * m[r1][c0];
    [
        [c(1, 1, 2, 2) / det, -c(0, 1, 2, 2) / det, c(0, 1, 1, 2) / det],
        [-c(1, 0, 2, 2) / det, c(0, 0, 2, 2) / det, -c(0, 0, 1, 2) / det],
        [c(1, 0, 2, 1) / det, -c(0, 0, 2, 1) / det, c(0, 0, 1, 1) / det],
    ]
}

/// Deterministic k-means: farthest-point seeds, then ten Lloyd rounds.
fn kmeans(samples: &[[f64; 3]], k: usize) -> Vec<usize> {
    let dist = |a: &[f64; 3], b: &[f64; 3]| (0..3).map(|i| (a[i] - b[i]).powi(2)).sum::<f64>();
    let mut centres = vec![samples[0]];
    while centres.len() < k {
        let far = samples.iter().max_by(|a, b| {
            let da = centres.iter().map(|c| dist(a, c)).fold(f64::INFINITY, f64::min);
            let db = centres.iter().map(|c| dist(b, c)).fold(f64::INFINITY, f64::min);
            da.total_cmp(&db)
        });
        match far {
            Some(p) if centres.iter().all(|c| dist(p, c) > 1e-6) => centres.push(*p),
            _ => break,
        }
    }
    let nearest = |s: &[f64; 3], centres: &[[f64; 3]]| {
        (0..centres.len()).min_by(|&a, &b| dist(s, &centres[a]).total_cmp(&dist(s, &centres[b]))).unwrap_or(0)
    };
    let mut assignment = vec![0; samples.len()];
    for _ in 0..10 {
        for (a, s) in assignment.iter_mut().zip(samples) {
            *a = nearest(s, &centres);
        }
        let mut sum = vec![[0.0; 3]; centres.len()];
        let mut count = vec![0usize; centres.len()];
        for (s, &a) in samples.iter().zip(&assignment) {
            count[a] += 1;
            for i in 0..3 {
                sum[a][i] += s[i];
            }
        }
        for (j, centre) in centres.iter_mut().enumerate() {
            if count[j] > 0 {
                *centre = sum[j].map(|v| v / count[j] as f64);
            }
        }
    }
    assignment
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_colour_costs_less_under_the_model_fitted_to_it() {
        let reds: Vec<[f32; 3]> = (0..400).map(|i| [200.0 + (i % 11) as f32, 30.0 + (i % 7) as f32, 40.0]).collect();
        let greys: Vec<[f32; 3]> = (0..400).map(|i| [120.0 + (i % 13) as f32, 121.0, 119.0 + (i % 5) as f32]).collect();
        let (red, grey) = (Gmm::fit(&reds).expect("red model"), Gmm::fit(&greys).expect("grey model"));
        assert!(red.cost(&[205.0, 33.0, 40.0]) < grey.cost(&[205.0, 33.0, 40.0]));
        assert!(grey.cost(&[125.0, 121.0, 120.0]) < red.cost(&[125.0, 121.0, 120.0]));
        assert!(Gmm::fit(&reds[..5]).is_none(), "too few samples make no model");
    }
}
