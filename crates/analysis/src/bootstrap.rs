//! 95% intervals by the bootstrap (Efron and Tibshirani, *An Introduction
//! to the Bootstrap*, 1993: ch. 9 for resampling residuals, ch. 13 for
//! percentile intervals): a figure is derived again from many synthetic
//! copies of its data, each as the measurement could have come out given
//! the scatter it showed, and its interval is the 2.5th to 97.5th
//! percentile of the copies' figures.
//!
//! The copies are drawn from a fixed seed: the same data give the same
//! interval, so `hwcal analyze` on a saved profile reproduces the figure
//! and its interval alike.

use crate::stats::{quantile, regression};

/// Copies per interval: enough for the 2.5th and 97.5th percentiles to
/// sit five copies in from each end.
pub const REPLICATES: usize = 200;

/// The seed of every interval (any constant does; a fixed one makes the
/// intervals a function of the data).
pub const SEED: u64 = 0x6877_6361_6c5f_6369;

/// The resampler's generator: the shared SplitMix64 ([`hwcal_stats::SplitMix64`],
/// Steele, Lea and Flood, OOPSLA 2014) seeded with the raw seed, drawing
/// indices by modulus. The draws are part of every stored interval, so
/// their arithmetic is fixed: the same seed gives the same indices.
#[derive(Debug, Clone)]
pub struct Rng(hwcal_stats::SplitMix64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(hwcal_stats::SplitMix64::new(seed))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A uniform index below `n` (`n` > 0; the bias of a 64-bit modulus is
    /// far below what a percentile of 200 copies resolves).
    pub fn below(&mut self, n: usize) -> usize {
        debug_assert!(n > 0, "an index below 0");
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// One element of `v`, uniformly (`None` for an empty slice).
    pub fn pick(&mut self, v: &[f64]) -> Option<f64> {
        (!v.is_empty()).then(|| v[self.below(v.len())])
    }
}

/// The 2.5th and 97.5th percentiles of the copies' figures. `None` when
/// under half the copies gave a finite figure: then the figure itself is
/// too fragile for an interval to mean anything.
pub fn percentile_interval(copies: &[f64]) -> Option<[f64; 2]> {
    let v: Vec<f64> = copies.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() || 2 * v.len() < copies.len() {
        return None;
    }
    Some([quantile(&v, 0.025), quantile(&v, 0.975)])
}

/// [`percentile_interval`] moved so that the copies' median falls on
/// `figure`: the copies are drawn about a smoothed model of the data, so
/// their median can sit a little off the figure the raw data gave; their
/// spread, not their centre, is what the interval reports.
pub fn interval_about(copies: &[f64], figure: f64) -> Option<[f64; 2]> {
    let [lo, hi] = percentile_interval(copies)?;
    if !figure.is_finite() {
        return None;
    }
    // `quantile` leaves NaNs out, as the percentiles did.
    let mid = quantile(copies, 0.5);
    Some([figure - (mid - lo), figure + (hi - mid)])
}

/// A 95% interval of `combine(min a, min b)` (a difference or ratio of
/// two points' fastest samples): both sample sets drawn again with
/// replacement and their minima combined, about the figure the data gave.
/// A resampled minimum moves only as far as the samples near it are
/// apart: one lucky sample alone below the rest widens the interval to the
/// next, several at the floor pin it. `None` under three samples a side.
pub fn minima_interval(a: &[f64], b: &[f64], combine: fn(f64, f64) -> f64) -> Option<[f64; 2]> {
    let (a, b): (Vec<f64>, Vec<f64>) = (
        a.iter().copied().filter(|v| v.is_finite()).collect(),
        b.iter().copied().filter(|v| v.is_finite()).collect(),
    );
    if a.len() < 3 || b.len() < 3 {
        return None;
    }
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let mut rng = Rng::new(SEED);
    let mut min_of = |v: &[f64]| {
        (0..v.len())
            .filter_map(|_| rng.pick(v))
            .fold(f64::INFINITY, f64::min)
    };
    let copies: Vec<f64> = (0..REPLICATES)
        .map(|_| {
            let x = min_of(&a);
            combine(x, min_of(&b))
        })
        .collect();
    interval_about(&copies, combine(min(&a), min(&b)))
}

/// A 95% interval of a point's fastest sample ([`minima_interval`] of one
/// set).
pub fn minimum_interval(v: &[f64]) -> Option<[f64; 2]> {
    minima_interval(v, v, |a, _| a)
}

/// How far each of `ys` sits from a straight line through them in log₂ x,
/// relative to the line: the points' scatter with the slope taken out (a
/// plateau may climb on its own: a VM's share of a shared level, TLB
/// misses). Empty under three points, where a line leaves no scatter to
/// see.
pub fn relative_residuals(xs: &[f64], ys: &[f64]) -> Vec<f64> {
    let n = xs.len().min(ys.len());
    if n < 3 {
        return Vec::new();
    }
    let lx: Vec<f64> = xs[..n].iter().map(|x| x.log2()).collect();
    let (icpt, slope, _) = regression(&lx, &ys[..n]);
    lx.iter()
        .zip(&ys[..n])
        .filter_map(|(&x, &y)| {
            let fit = icpt + slope * x;
            (fit > 0.0).then(|| y / fit - 1.0)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_is_seeded_and_spreads_its_indices() {
        let mut a = Rng::new(SEED);
        let mut b = Rng::new(SEED);
        let xs: Vec<u64> = (0..5).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..5).map(|_| b.next_u64()).collect();
        assert_eq!(xs, ys);
        let mut counts = [0usize; 10];
        for _ in 0..10_000 {
            counts[a.below(10)] += 1;
        }
        assert!(counts.iter().all(|&c| (800..1200).contains(&c)), "{counts:?}");
        assert_eq!(a.pick(&[]), None);
    }

    #[test]
    fn the_drawn_indices_are_fixed_for_the_seed() {
        // Stored intervals depend on these draws: SplitMix64 from the raw
        // seed, index = draw mod n.
        let mut r = Rng::new(SEED);
        let picks: Vec<usize> = (0..6).map(|_| r.below(1000)).collect();
        assert_eq!(picks, [990, 630, 941, 308, 241, 980]);
    }

    #[test]
    fn percentiles_of_the_copies_and_too_few_of_them() {
        let v: Vec<f64> = (0..=200).map(|i| i as f64).collect();
        let [lo, hi] = percentile_interval(&v).unwrap();
        assert!((lo - 5.0).abs() < 1e-9 && (hi - 195.0).abs() < 1e-9, "{lo} {hi}");
        let mostly_nan = [1.0, f64::NAN, f64::NAN, f64::NAN];
        assert_eq!(percentile_interval(&mostly_nan), None);
        assert_eq!(percentile_interval(&[]), None);
        let [lo, hi] = interval_about(&v, 110.0).unwrap();
        assert!((lo - 15.0).abs() < 1e-9 && (hi - 205.0).abs() < 1e-9, "{lo} {hi}");
        assert_eq!(interval_about(&v, f64::NAN), None);
    }

    #[test]
    fn residuals_leave_out_the_slope() {
        let xs: Vec<f64> = (0..8).map(|i| 1024.0 * 2f64.powi(i)).collect();
        let sloped: Vec<f64> = (0..8).map(|i| 10.0 + i as f64).collect();
        assert!(relative_residuals(&xs, &sloped).iter().all(|r| r.abs() < 1e-9));
        let bumpy: Vec<f64> = (0..8).map(|i| if i % 2 == 0 { 10.5 } else { 9.5 }).collect();
        let r = relative_residuals(&xs, &bumpy);
        assert_eq!(r.len(), 8);
        assert!(r.iter().all(|r| (r.abs() - 0.05).abs() < 0.02), "{r:?}");
        assert!(relative_residuals(&xs[..2], &sloped[..2]).is_empty());
    }
}
