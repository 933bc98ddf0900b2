//! A small Gaussian-process surrogate for Bayesian optimisation.
//!
//! Matern 5/2 kernel on unit-box coordinates (isotropic: with tens of points a per-axis length
//! scale overfits), targets standardised by the caller, amplitude profiled out analytically and
//! the length scale and noise ratio chosen by maximising the log marginal likelihood over a
//! small grid. A grid rather than gradient ascent keeps the fit deterministic, branch-free and
//! identical natively and in WebAssembly. The kernel matrix is factorised by Cholesky with
//! growing jitter, so a singular matrix (duplicate inputs) never panics.

/// Length scales tried, as multiples of sqrt(dimensions) (the unit box's diagonal).
pub const SCALES: &[f64] = &[0.06, 0.12, 0.22, 0.4, 0.7];
/// Noise variances tried, relative to the signal variance.
pub const NOISES: &[f64] = &[1e-4, 0.01, 0.1];

/// A fitted Gaussian process: posterior mean and standard deviation at any unit-box point.
#[derive(Clone, Debug)]
pub struct Gp {
    /// Training inputs, already multiplied by `weights`.
    x: Vec<Vec<f64>>,
    /// Per-axis multipliers of unit coordinates (automatic relevance); empty: all 1.
    pub weights: Vec<f64>,
    /// Lower Cholesky factor of C + noise*I (unit-amplitude kernel), row-major n*n.
    chol: Vec<f64>,
    /// (C + noise*I)^-1 y.
    alpha: Vec<f64>,
    /// Profiled signal variance.
    pub amplitude: f64,
    /// Length scale in unit-box distance.
    pub length_scale: f64,
    /// Noise variance relative to the amplitude.
    pub noise: f64,
    /// Profile log marginal likelihood of the chosen hyperparameters.
    pub log_likelihood: f64,
}

/// Matern 5/2 correlation at distance `r` for length scale `l`.
pub fn matern52(r: f64, l: f64) -> f64 {
    let s = libm::sqrt(5.0) * r / l;
    (1.0 + s + s * s / 3.0) * libm::exp(-s)
}

fn sq_dist(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

/// In-place Cholesky of a symmetric n*n matrix (lower triangle written). False if not positive
/// definite.
fn cholesky(a: &mut [f64], n: usize) -> bool {
    for j in 0..n {
        let mut d = a[j * n + j];
        for k in 0..j {
            d -= a[j * n + k] * a[j * n + k];
        }
        if !(d > 0.0 && d.is_finite()) {
            return false;
        }
        let d = libm::sqrt(d);
        a[j * n + j] = d;
        for i in j + 1..n {
            let mut s = a[i * n + j];
            for k in 0..j {
                s -= a[i * n + k] * a[j * n + k];
            }
            a[i * n + j] = s / d;
        }
    }
    true
}

/// Solves L v = b in place (L lower triangular, row-major).
fn forward(l: &[f64], n: usize, b: &mut [f64]) {
    for i in 0..n {
        let row = &l[i * n..i * n + i];
        let s: f64 = row.iter().zip(&b[..i]).map(|(a, c)| a * c).sum();
        b[i] = (b[i] - s) / l[i * n + i];
    }
}

/// Solves L^T v = b in place.
fn backward(l: &[f64], n: usize, b: &mut [f64]) {
    for i in (0..n).rev() {
        let mut s = b[i];
        for k in i + 1..n {
            s -= l[k * n + i] * b[k];
        }
        b[i] = s / l[i * n + i];
    }
}

impl Gp {
    /// Factorises the correlation matrix `corr` plus noise; returns (factor, alpha, amplitude,
    /// profile log likelihood), or None if it cannot be factorised even with jitter.
    fn factor(corr: &[f64], y: &[f64], noise: f64) -> Option<(Vec<f64>, Vec<f64>, f64, f64)> {
        let n = y.len();
        if n == 0 || y.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let mut jitter = 0.0;
        for _ in 0..6 {
            let mut k = corr.to_vec();
            for i in 0..n {
                k[i * n + i] += noise + jitter;
            }
            if cholesky(&mut k, n) {
                let mut alpha = y.to_vec();
                forward(&k, n, &mut alpha);
                let quad: f64 = alpha.iter().map(|a| a * a).sum();
                backward(&k, n, &mut alpha);
                let amplitude = (quad / n as f64).max(1e-12);
                let logdet: f64 = (0..n).map(|i| libm::log(k[i * n + i])).sum();
                let nf = n as f64;
                let ll = -0.5 * nf * libm::log(amplitude) - logdet
                    - 0.5 * nf * (1.0 + libm::log(2.0 * core::f64::consts::PI));
                return Some((k, alpha, amplitude, ll));
            }
            jitter = if jitter == 0.0 { 1e-8 } else { jitter * 100.0 };
        }
        None
    }

    /// Fits with the given length scale and noise ratio.
    pub fn fit(x: &[Vec<f64>], y: &[f64], length_scale: f64, noise: f64) -> Option<Gp> {
        let l = length_scale.max(1e-6);
        let corr: Vec<f64> = distances(x).iter().map(|&r| matern52(r, l)).collect();
        let (chol, alpha, amplitude, ll) = Gp::factor(&corr, y, noise.max(0.0))?;
        Some(Gp { x: x.to_vec(), weights: Vec::new(), chol, alpha, amplitude, length_scale: l, noise, log_likelihood: ll })
    }

    /// Fits every (scale, noise) pair of the grids (scales as multiples of sqrt(dimensions))
    /// and keeps the one with the highest marginal likelihood.
    pub fn fit_best(x: &[Vec<f64>], y: &[f64], scales: &[f64], noises: &[f64]) -> Option<Gp> {
        let dim = x.first().map_or(1, |p| p.len()).max(1);
        let dist = distances(x);
        let mut best: Option<Gp> = None;
        for &s in scales {
            let l = (s * libm::sqrt(dim as f64)).max(1e-6);
            let corr: Vec<f64> = dist.iter().map(|&r| matern52(r, l)).collect();
            for &nz in noises {
                if let Some((chol, alpha, amplitude, ll)) = Gp::factor(&corr, y, nz) {
                    if best.as_ref().is_none_or(|b| ll > b.log_likelihood) {
                        best = Some(Gp { x: Vec::new(), weights: Vec::new(), chol, alpha, amplitude, length_scale: l, noise: nz, log_likelihood: ll });
                    }
                }
            }
        }
        best.map(|g| Gp { x: x.to_vec(), ..g })
    }

    fn scale(&self, u: &[f64]) -> Vec<f64> {
        if self.weights.is_empty() {
            u.to_vec()
        } else {
            u.iter().zip(&self.weights).map(|(a, w)| a * w).collect()
        }
    }

    /// Fits with per-axis multipliers `weights` on the unit coordinates.
    pub fn fit_weighted(x: &[Vec<f64>], y: &[f64], length_scale: f64, noise: f64, weights: &[f64]) -> Option<Gp> {
        let xs: Vec<Vec<f64>> = x.iter().map(|p| p.iter().zip(weights).map(|(a, w)| a * w).collect()).collect();
        let g = Gp::fit(&xs, y, length_scale, noise)?;
        Some(Gp { weights: weights.to_vec(), ..g })
    }

    /// Automatic relevance: one pass over the axes, trying each axis's multiplier at a few
    /// multiples and keeping changes that raise the marginal likelihood (length scale and noise
    /// fixed). Axes that do not matter shrink towards 0, ones that matter grow.
    pub fn refine_relevance(self, x: &[Vec<f64>], y: &[f64]) -> Gp {
        let d = x.first().map_or(0, |p| p.len());
        let mut w = if self.weights.len() == d { self.weights.clone() } else { vec![1.0; d] };
        let mut best = self;
        for i in 0..d {
            let base = w[i];
            for f in [0.25, 0.5, 2.0] {
                w[i] = (base * f).clamp(1.0 / 64.0, 16.0);
                if let Some(g) = Gp::fit_weighted(x, y, best.length_scale, best.noise, &w) {
                    if g.log_likelihood > best.log_likelihood + 1e-9 {
                        best = g;
                    }
                }
            }
            w[i] = best.weights.get(i).copied().unwrap_or(1.0);
        }
        best
    }

    /// Number of training points.
    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// True for an empty model (never produced by the constructors).
    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }

    /// Posterior mean and standard deviation (of the latent function) at `u`.
    pub fn predict(&self, u: &[f64]) -> (f64, f64) {
        let u = &self.scale(u);
        let n = self.x.len();
        let mut k: Vec<f64> = self.x.iter().map(|p| matern52(libm::sqrt(sq_dist(p, u)), self.length_scale)).collect();
        let mean: f64 = k.iter().zip(&self.alpha).map(|(a, b)| a * b).sum();
        forward(&self.chol, n, &mut k);
        let vv: f64 = k.iter().map(|v| v * v).sum();
        let var = self.amplitude * (1.0 - vv).max(0.0);
        (mean, libm::sqrt(var))
    }
}

impl Gp {
    /// Posterior means and standard deviations at many points at once. The triangular solve
    /// runs over all points together (row updates of length `us.len()`), which vectorises.
    pub fn predict_many(&self, us: &[Vec<f64>]) -> Vec<(f64, f64)> {
        let (n, m) = (self.x.len(), us.len());
        let us: Vec<Vec<f64>> = us.iter().map(|u| self.scale(u)).collect();
        let mut k = vec![0.0; n * m];
        for (i, p) in self.x.iter().enumerate() {
            for (j, u) in us.iter().enumerate() {
                k[i * m + j] = matern52(libm::sqrt(sq_dist(p, u)), self.length_scale);
            }
        }
        let mut mean = vec![0.0; m];
        for i in 0..n {
            let a = self.alpha[i];
            for (mj, kj) in mean.iter_mut().zip(&k[i * m..(i + 1) * m]) {
                *mj += a * kj;
            }
        }
        // Forward substitution L V = K, one row of V (all points) at a time.
        let mut vv = vec![0.0; m];
        for i in 0..n {
            let (done, rest) = k.split_at_mut(i * m);
            let row = &mut rest[..m];
            for j in 0..i {
                let l = self.chol[i * n + j];
                if l != 0.0 {
                    for (r, d) in row.iter_mut().zip(&done[j * m..(j + 1) * m]) {
                        *r -= l * d;
                    }
                }
            }
            let d = self.chol[i * n + i];
            for (r, acc) in row.iter_mut().zip(vv.iter_mut()) {
                *r /= d;
                *acc += *r * *r;
            }
        }
        mean.into_iter()
            .zip(vv)
            .map(|(mu, v)| (mu, libm::sqrt(self.amplitude * (1.0 - v).max(0.0))))
            .collect()
    }
}

/// Pairwise Euclidean distances, row-major n*n.
fn distances(x: &[Vec<f64>]) -> Vec<f64> {
    let n = x.len();
    let mut d = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..i {
            let r = libm::sqrt(sq_dist(&x[i], &x[j]));
            d[i * n + j] = r;
            d[j * n + i] = r;
        }
    }
    d
}

/// Standard normal density.
pub fn norm_pdf(z: f64) -> f64 {
    libm::exp(-0.5 * z * z) / libm::sqrt(2.0 * core::f64::consts::PI)
}

/// Standard normal cumulative distribution.
pub fn norm_cdf(z: f64) -> f64 {
    0.5 * libm::erfc(-z / core::f64::consts::SQRT_2)
}

/// Expected improvement below `best` (minimisation) with exploration margin `xi`.
pub fn expected_improvement(mean: f64, std: f64, best: f64, xi: f64) -> f64 {
    let d = best - mean - xi;
    if std <= 1e-12 {
        return d.max(0.0);
    }
    let z = d / std;
    (d * norm_cdf(z) + std * norm_pdf(z)).max(0.0)
}

/// Probability of improving below `best` by at least `xi`.
pub fn probability_of_improvement(mean: f64, std: f64, best: f64, xi: f64) -> f64 {
    if std <= 1e-12 {
        return if mean < best - xi { 1.0 } else { 0.0 };
    }
    norm_cdf((best - xi - mean) / std)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data() -> (Vec<Vec<f64>>, Vec<f64>) {
        let x: Vec<Vec<f64>> = (0..8).map(|i| vec![i as f64 / 7.0, 0.5]).collect();
        let y: Vec<f64> = x.iter().map(|p| libm::sin(6.0 * p[0])).collect();
        (x, y)
    }

    #[test]
    fn interpolates_training_points() {
        let (x, y) = data();
        let g = Gp::fit(&x, &y, 0.3, 1e-6).unwrap();
        for (p, t) in x.iter().zip(&y) {
            let (m, s) = g.predict(p);
            assert!((m - t).abs() < 1e-3, "mean {m} vs {t}");
            assert!(s < 0.05, "std {s}");
        }
        let best = Gp::fit_best(&x, &y, SCALES, NOISES).unwrap();
        assert!(best.log_likelihood.is_finite());
        let us = vec![vec![0.1, 0.3], vec![0.9, 0.9], x[2].clone()];
        for (u, (m, s)) in us.iter().zip(best.predict_many(&us)) {
            let (m1, s1) = best.predict(u);
            assert!((m - m1).abs() < 1e-9 && (s - s1).abs() < 1e-9);
        }
    }

    #[test]
    fn variance_grows_away_from_data() {
        let (x, y) = data();
        let g = Gp::fit_best(&x, &y, SCALES, NOISES).unwrap();
        let near = g.predict(&[0.5, 0.5]).1;
        let far = g.predict(&[0.5, 1.0]).1;
        assert!(far > near, "far {far} near {near}");
    }

    #[test]
    fn duplicate_points_do_not_panic() {
        let x = vec![vec![0.2, 0.2]; 5];
        let y = vec![1.0, 1.0, 2.0, 2.0, 1.5];
        let g = Gp::fit(&x, &y, 0.3, 0.0).unwrap();
        assert!(g.predict(&[0.2, 0.2]).0.is_finite());
        assert!(Gp::fit(&x, &[f64::NAN; 5], 0.3, 0.0).is_none());
    }

    #[test]
    fn acquisition_prefers_low_mean_and_high_std() {
        assert!(expected_improvement(0.0, 1.0, 0.5, 0.0) > expected_improvement(1.0, 1.0, 0.5, 0.0));
        assert!(expected_improvement(1.0, 2.0, 0.5, 0.0) > expected_improvement(1.0, 0.1, 0.5, 0.0));
        assert!(probability_of_improvement(0.0, 1.0, 0.5, 0.0) > 0.5);
    }
}
