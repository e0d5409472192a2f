//! The clock tick as the greatest common divisor of expression timings
//! (McVoy & Staelin, "mhz: Anatomy of a micro-benchmark", USENIX 1998, §4).
//!
//! Each expression takes an integral number of cycles, so every timing is a
//! multiple of the tick `b`. For guesses `b_i = min(e) / i`, every observation
//! (and every pairwise difference, plus the origin) is assigned an integer
//! cycle count `round(y / b_i)` and a line is fitted through (cycles, time);
//! the fit's slope is the refined tick and its χ² says how well the guess
//! explains the data. Multiples of the right guess fit equally well, so a
//! guess only wins if `i² · χ²` beats the best so far: the first fit that
//! explains the data is kept.
//!
//! One noisy value can spoil a GCD, so [`gcd_robust`] computes the tick for
//! every subset with at least two clearly different timings (> 5% apart) and
//! returns the most common answer, as mhz does.

use crate::stats::{median, regression};

/// Largest cycle count assumed for the shortest expression in a set.
pub const MAX_COUNT: usize = 6;

/// The paper's `gcd()`: the tick (in the unit of `e`) explaining all timings.
/// `None` when there is nothing to fit (fewer than one positive timing).
pub fn gcd_tick(e: &[f64]) -> Option<f64> {
    let e: Vec<f64> = e.iter().copied().filter(|v| v.is_finite() && *v > 0.0).collect();
    let min_e = e.iter().copied().fold(f64::INFINITY, f64::min);
    if !min_e.is_finite() {
        return None;
    }
    // Dataset: the timings, their pairwise differences, and the origin.
    let mut y = e.clone();
    for i in 0..e.len() {
        for j in i + 1..e.len() {
            y.push((e[i] - e[j]).abs());
        }
    }
    y.push(0.0);
    let mut best: Option<(f64, f64)> = None; // (tick, chi2)
    for i in 1..=MAX_COUNT {
        let guess = min_e / i as f64;
        let x: Vec<f64> = y.iter().map(|v| (v / guess + 0.5).floor()).collect();
        let (_a, slope, chi2) = regression(&x, &y);
        if slope <= 0.0 {
            continue;
        }
        let weighted = (i * i) as f64 * chi2;
        match best {
            None => best = Some((slope, chi2)),
            Some((_, min_chi2)) if weighted < min_chi2 => best = Some((slope, chi2)),
            _ => {}
        }
    }
    best.map(|(tick, _)| tick)
}

/// Whether a subset has two timings that differ by more than 5%, i.e. at
/// least two different cycle counts (the paper's `classes()` test).
fn has_two_classes(e: &[f64]) -> bool {
    let lo = e.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = e.iter().copied().fold(0.0, f64::max);
    lo > 0.0 && hi > lo * 1.05
}

/// The most common tick over all valid subsets (at least two timings, two
/// classes). Answers within 1% of each other count as the same; the result
/// is the median of the largest such group. Falls back to [`gcd_tick`] on
/// the whole set when no subset is valid.
pub fn gcd_robust(e: &[f64]) -> Option<f64> {
    let e: Vec<f64> = e.iter().copied().filter(|v| v.is_finite() && *v > 0.0).collect();
    let n = e.len();
    if n == 0 {
        return None;
    }
    if n > 16 {
        return gcd_tick(&e);
    }
    let mut ticks = Vec::new();
    for mask in 1u32..(1 << n) {
        if mask.count_ones() < 2 {
            continue;
        }
        let sub: Vec<f64> = (0..n).filter(|i| mask & (1 << i) != 0).map(|i| e[i]).collect();
        if !has_two_classes(&sub) {
            continue;
        }
        if let Some(t) = gcd_tick(&sub) {
            ticks.push(t);
        }
    }
    if ticks.is_empty() {
        return gcd_tick(&e);
    }
    ticks.sort_by(f64::total_cmp);
    // Largest window of ticks within 1% of its first member.
    let (mut best_lo, mut best_len) = (0, 0);
    let mut hi = 0;
    for lo in 0..ticks.len() {
        if hi < lo {
            hi = lo;
        }
        while hi + 1 < ticks.len() && ticks[hi + 1] <= ticks[lo] * 1.01 {
            hi += 1;
        }
        if hi - lo + 1 > best_len {
            best_len = hi - lo + 1;
            best_lo = lo;
        }
    }
    Some(median(&ticks[best_lo..best_lo + best_len]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic noise in [-amp, amp] (no RNG crate needed).
    fn jitter(i: usize, amp: f64) -> f64 {
        let x = ((i as f64 + 1.0) * 12.9898).sin() * 43758.5453;
        (x - x.floor() - 0.5) * 2.0 * amp
    }

    #[test]
    fn relatively_prime_counts_give_the_tick() {
        let tick = 0.4; // 2500 MHz
        let cycles = [5.0, 2.0, 2.0, 1.0, 2.0, 2.0, 2.0, 3.0, 3.0];
        let e: Vec<f64> = cycles
            .iter()
            .enumerate()
            .map(|(i, c)| c * tick * (1.0 + jitter(i, 0.002)))
            .collect();
        let t = gcd_tick(&e).unwrap();
        assert!((t / tick - 1.0).abs() < 0.005, "{t}");
        let t = gcd_robust(&e).unwrap();
        assert!((t / tick - 1.0).abs() < 0.005, "{t}");
    }

    #[test]
    fn shortest_expression_need_not_be_one_cycle() {
        // 3 and 5 cycles only: the tick is min/3.
        let tick = 0.5;
        let t = gcd_tick(&[3.0 * tick, 5.0 * tick]).unwrap();
        assert!((t - tick).abs() < 1e-9, "{t}");
    }

    #[test]
    fn common_factor_halves_the_apparent_speed() {
        // All counts even: the paper's 60 MHz-instead-of-120 MHz case.
        let tick = 1.0 / 120.0 * 1000.0; // 8.33 ns
        let e = [2.0 * tick, 4.0 * tick, 6.0 * tick];
        let t = gcd_tick(&e).unwrap();
        assert!((t - 2.0 * tick).abs() / tick < 1e-6, "{t}");
    }

    #[test]
    fn an_outlier_is_rejected_by_the_subset_mode() {
        let tick = 0.4;
        let cycles = [5.0, 2.0, 2.0, 1.0, 2.0, 2.0, 2.0, 3.0, 3.0];
        let mut e: Vec<f64> = cycles.iter().map(|c| c * tick).collect();
        e[8] *= 1.37; // an interrupt landed in one expression's block
        let t = gcd_robust(&e).unwrap();
        assert!((t / tick - 1.0).abs() < 0.005, "{t}");
    }

    #[test]
    fn degenerate_input() {
        assert_eq!(gcd_tick(&[]), None);
        assert_eq!(gcd_tick(&[0.0, -1.0]), None);
        assert!(gcd_robust(&[f64::NAN]).is_none());
        // One class only: falls back to the whole-set fit.
        assert!(gcd_robust(&[1.0, 1.001]).is_some());
    }
}
