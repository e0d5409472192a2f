//! hwcal's statistics over repeated timings (lmbench 2.0 §7, criterion's habit of
//! keeping statistics in one place).
//!
//! Capability figures (latency of a level, the clock) are the *minimum*: noise
//! on a timing only ever adds time, so the smallest sample is closest to the
//! machine's capability. Intrinsically variable figures (context switch, I/O)
//! are the *median* with the median absolute deviation as spread.
//!
//! Pure functions with no clock: the harness uses them while sampling, the
//! analysis when it re-derives figures from raw data.
#![forbid(unsafe_code)]

mod rank;
mod recent;
mod rng;

pub use rank::{mann_whitney, RankTest};
pub use recent::{recent, Recent, RECENT};
pub use rng::SplitMix64;

use hwcal_model::Spread;

/// Median of a slice (NaNs are ignored). 0 for an empty slice.
pub fn median(xs: &[f64]) -> f64 {
    quantile(xs, 0.5)
}

/// Linear-interpolated quantile `q` in [0, 1]. 0 for an empty slice.
pub fn quantile(xs: &[f64], q: f64) -> f64 {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let pos = q.clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

/// A 95% confidence interval of the median that assumes nothing about the
/// distribution: the order statistics j and k around the middle with
/// j = n/2 − 0.98·√n and k = n/2 + 0.98·√n (the normal approximation of
/// the binomial count of samples below the median). `None` under 6
/// finite samples, where the interval would be the whole range.
pub fn median_ci95(xs: &[f64]) -> Option<(f64, f64)> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    let n = v.len();
    if n < 6 {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let h = 0.98 * (n as f64).sqrt();
    let j = ((n as f64 / 2.0 - h).floor().max(1.0) as usize).min(n) - 1;
    let k = ((n as f64 / 2.0 + h).ceil() as usize).clamp(1, n) - 1;
    Some((v[j], v[k]))
}

/// Mean and sample standard deviation (n − 1) of `xs`; `None` under two
/// values.
pub fn mean_sd(xs: &[f64]) -> Option<(f64, f64)> {
    let n = xs.len();
    if n < 2 {
        return None;
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    Some((mean, var.sqrt()))
}

/// Median absolute deviation (unscaled).
pub fn mad(xs: &[f64]) -> f64 {
    let m = median(xs);
    let dev: Vec<f64> = xs.iter().map(|x| (x - m).abs()).collect();
    median(&dev)
}

/// min / median / max / MAD of the samples.
pub fn spread(xs: &[f64]) -> Spread {
    let v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return Spread::default();
    }
    Spread {
        n: v.len(),
        min: v.iter().copied().fold(f64::INFINITY, f64::min),
        max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        median: median(&v),
        mad: mad(&v),
    }
}

/// The `k` smallest values, ascending.
pub fn smallest(xs: &[f64], k: usize) -> Vec<f64> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    v.truncate(k);
    v
}

/// The stopping rule: the `k` best (smallest) samples agree within `tol`
/// (relative, e.g. 0.005). A stable minimum means more samples would not move
/// the capability estimate, so sampling can stop early.
pub fn best_k_agree(xs: &[f64], k: usize, tol: f64) -> bool {
    let k = k.max(1);
    let best = smallest(xs, k);
    if best.len() < k || best[0] <= 0.0 {
        return false;
    }
    (best[k - 1] - best[0]) / best[0] <= tol
}

/// The mhz paper's acceptance test: the estimate computed from the minima and
/// the one computed from the next-to-minima agree within `tol` (relative) or
/// `abs` (absolute).
pub fn min_next_min_agree(from_min: f64, from_next: f64, tol: f64, abs: f64) -> bool {
    let d = (from_min - from_next).abs();
    d <= abs || d <= tol * from_min.abs().max(from_next.abs())
}

/// Smallest and second-smallest finite values (mhz's min / next-min).
pub fn min_and_next(xs: &[f64]) -> Option<(f64, f64)> {
    let v = smallest(xs, 2);
    match v.len() {
        0 => None,
        1 => Some((v[0], v[0])),
        _ => Some((v[0], v[1])),
    }
}

/// Least-squares line y = a + b x. Returns (a, b, chi2) where chi2 is the sum
/// of squared residuals. Degenerate input (all x equal) gives b = 0.
pub fn linear_regression(x: &[f64], y: &[f64]) -> (f64, f64, f64) {
    let n = x.len().min(y.len());
    if n == 0 {
        return (0.0, 0.0, 0.0);
    }
    let nf = n as f64;
    let mx = x[..n].iter().sum::<f64>() / nf;
    let my = y[..n].iter().sum::<f64>() / nf;
    let sxx: f64 = x[..n].iter().map(|xi| (xi - mx) * (xi - mx)).sum();
    let sxy: f64 = x[..n]
        .iter()
        .zip(&y[..n])
        .map(|(xi, yi)| (xi - mx) * (yi - my))
        .sum();
    let b = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let a = my - b * mx;
    let chi2 = x[..n]
        .iter()
        .zip(&y[..n])
        .map(|(xi, yi)| {
            let r = yi - (a + b * xi);
            r * r
        })
        .sum();
    (a, b, chi2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_interval_brackets_the_median() {
        let xs: Vec<f64> = (1..=51).map(f64::from).collect();
        let (lo, hi) = median_ci95(&xs).unwrap();
        assert!(lo < 26.0 && hi > 26.0 && lo >= 17.0 && hi <= 35.0, "{lo} {hi}");
        assert_eq!(median_ci95(&[1.0, 2.0, 3.0]), None);
    }

    #[test]
    fn median_and_quantiles() {
        assert_eq!(median(&[]), 0.0);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.0), 1.0);
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0, 5.0], 1.0), 5.0);
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.25), 2.0);
    }

    #[test]
    fn mean_and_sample_sd() {
        let (m, sd) = mean_sd(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(m, 5.0);
        assert!((sd - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert_eq!(mean_sd(&[1.0]), None);
    }

    #[test]
    fn mad_ignores_one_outlier() {
        let xs = [10.0, 10.1, 9.9, 10.0, 1000.0];
        assert!((mad(&xs) - 0.1).abs() < 1e-9);
        let s = spread(&xs);
        assert_eq!(s.n, 5);
        assert_eq!(s.min, 9.9);
        assert_eq!(s.max, 1000.0);
        assert_eq!(s.median, 10.0);
    }

    #[test]
    fn spread_skips_non_finite() {
        let s = spread(&[f64::NAN, 1.0, f64::INFINITY, 3.0]);
        assert_eq!(s.n, 2);
        assert_eq!(s.median, 2.0);
    }

    #[test]
    fn stopping_rule() {
        // Best three within 0.5%: stop.
        assert!(best_k_agree(&[100.0, 140.0, 100.3, 100.4, 500.0], 3, 0.005));
        // Third best 2% above the best: keep sampling.
        assert!(!best_k_agree(&[100.0, 102.0, 101.0], 3, 0.005));
        // Not enough samples yet.
        assert!(!best_k_agree(&[100.0, 100.0], 3, 0.005));
        // A zero or negative time never counts as stable.
        assert!(!best_k_agree(&[0.0, 0.0, 0.0], 3, 0.005));
    }

    #[test]
    fn min_next_min() {
        assert!(min_next_min_agree(2500.0, 2510.0, 0.01, 1.0));
        assert!(!min_next_min_agree(2500.0, 2600.0, 0.01, 1.0));
        assert!(min_next_min_agree(50.0, 50.9, 0.0, 1.0));
    }

    #[test]
    fn regression_recovers_line() {
        let x = [0.0, 1.0, 2.0, 3.0];
        let y = [1.0, 3.0, 5.0, 7.0];
        let (a, b, chi2) = linear_regression(&x, &y);
        assert!((a - 1.0).abs() < 1e-12 && (b - 2.0).abs() < 1e-12 && chi2 < 1e-20);
        let (_, b, _) = linear_regression(&[1.0, 1.0], &[2.0, 3.0]);
        assert_eq!(b, 0.0);
    }
}
