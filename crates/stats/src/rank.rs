//! The Mann–Whitney U test (Wilcoxon rank-sum): are two sets of repeated
//! measurements of one figure drawn from the same distribution? Go's
//! benchstat decides "~" (no change) with it, because repeated runs of a
//! machine are neither normal nor equal in spread (a busy neighbour makes a
//! long right tail), and a rank test assumes neither.
//!
//! The p-value is exact (the U distribution counted by dynamic programming)
//! when the samples are small and have no ties — the common case of 3–10
//! runs per side — and otherwise the normal approximation with the tie
//! correction and a continuity correction (Mann & Whitney 1947; Lehmann,
//! *Nonparametrics*, 1975, ch. 1).

/// The test's outcome.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankTest {
    /// U of the first sample: pairs (x, y) with x > y, ties counted half.
    pub u: f64,
    /// Two-sided p-value: the probability, were both samples from one
    /// distribution, of a U at least this far from its mean.
    pub p: f64,
    /// Whether `p` is exact (small samples, no ties) or approximate.
    pub exact: bool,
}

/// The two-sided Mann–Whitney U test of `x` against `y` (NaNs left out);
/// `None` when either sample is empty.
pub fn mann_whitney(x: &[f64], y: &[f64]) -> Option<RankTest> {
    let x: Vec<f64> = x.iter().copied().filter(|v| !v.is_nan()).collect();
    let y: Vec<f64> = y.iter().copied().filter(|v| !v.is_nan()).collect();
    let (n1, n2) = (x.len(), y.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let mut u = 0.0;
    let mut ties = false;
    for a in &x {
        for b in &y {
            if a > b {
                u += 1.0;
            } else if a == b {
                u += 0.5;
                ties = true;
            }
        }
    }
    // Ties within a sample also change the null distribution.
    let mut all: Vec<f64> = x.iter().chain(&y).copied().collect();
    all.sort_by(f64::total_cmp);
    ties |= all.windows(2).any(|w| w[0] == w[1]);
    let mean = (n1 * n2) as f64 / 2.0;
    if !ties && n1 * n2 <= 2500 {
        let p = exact_two_sided(n1, n2, u);
        return Some(RankTest { u, p, exact: true });
    }
    // Normal approximation, variance corrected for ties: Σ(t³ − t) over
    // the groups of equal values.
    let n = (n1 + n2) as f64;
    let mut tie_sum = 0.0;
    let mut i = 0;
    while i < all.len() {
        let j = all[i..].iter().take_while(|v| **v == all[i]).count();
        let t = j as f64;
        tie_sum += t * t * t - t;
        i += j;
    }
    let var = (n1 * n2) as f64 / 12.0 * ((n + 1.0) - tie_sum / (n * (n - 1.0)));
    if var <= 0.0 {
        // Every value equal: nothing tells the samples apart.
        return Some(RankTest {
            u,
            p: 1.0,
            exact: false,
        });
    }
    let z = ((u - mean).abs() - 0.5).max(0.0) / var.sqrt();
    Some(RankTest {
        u,
        p: (2.0 * normal_upper_tail(z)).min(1.0),
        exact: false,
    })
}

/// Exact two-sided p-value of U for samples of n1 and n2 without ties:
/// the number of arrangements with U' ≤ min(U, n1·n2 − U), doubled, over
/// all C(n1 + n2, n1) arrangements.
fn exact_two_sided(n1: usize, n2: usize, u: f64) -> f64 {
    // counts[i][j][k]: arrangements of i values of x and j of y with U = k,
    // built up one value at a time (the largest value is an x: it adds j).
    let max = n1 * n2;
    let mut prev: Vec<Vec<f64>> = vec![vec![0.0; max + 1]; n2 + 1];
    for row in prev.iter_mut() {
        row[0] = 1.0; // zero x values: U = 0 whatever j is
    }
    for _i in 1..=n1 {
        let mut cur: Vec<Vec<f64>> = vec![vec![0.0; max + 1]; n2 + 1];
        for j in 0..=n2 {
            for k in 0..=max {
                // The largest value is an x (it beats all j y values)...
                let mut c = if k >= j { prev[j][k - j] } else { 0.0 };
                // ... or a y (it beats no x).
                if j > 0 {
                    c += cur[j - 1][k];
                }
                cur[j][k] = c;
            }
        }
        prev = cur;
    }
    let dist = &prev[n2];
    let total: f64 = dist.iter().sum();
    let lo = u.min(max as f64 - u).floor() as usize;
    let tail: f64 = dist[..=lo.min(max)].iter().sum();
    (2.0 * tail / total).min(1.0)
}

/// P(Z > z) for a standard normal Z (Abramowitz & Stegun 7.1.26 for erfc,
/// absolute error under 1.5e-7: ample for a 5% decision).
fn normal_upper_tail(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erfc = poly * (-x * x).exp();
    if x >= 0.0 {
        erfc / 2.0
    } else {
        1.0 - erfc / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fully_separated_samples_of_five_give_the_exact_minimum() {
        // All of y above all of x: U = 0, p = 2 / C(10, 5) = 2 / 252.
        let t = mann_whitney(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]).unwrap();
        assert_eq!(t.u, 0.0);
        assert!(t.exact);
        assert!((t.p - 2.0 / 252.0).abs() < 1e-12, "{}", t.p);
    }

    #[test]
    fn interleaved_samples_are_not_significant() {
        let t = mann_whitney(&[1.0, 3.0, 5.0, 7.0, 9.0], &[2.0, 4.0, 6.0, 8.0, 10.0]).unwrap();
        assert!(t.p > 0.5, "{t:?}");
        // Symmetric: swapping the samples gives the same p.
        let s = mann_whitney(&[2.0, 4.0, 6.0, 8.0, 10.0], &[1.0, 3.0, 5.0, 7.0, 9.0]).unwrap();
        assert!((s.p - t.p).abs() < 1e-12);
    }

    #[test]
    fn known_table_value() {
        // n1 = n2 = 4, U = 1: P(U <= 1) = 2 / 70, two-sided 4 / 70.
        let t = mann_whitney(&[1.0, 2.0, 3.0, 5.0], &[4.0, 6.0, 7.0, 8.0]).unwrap();
        assert_eq!(t.u, 1.0);
        assert!((t.p - 4.0 / 70.0).abs() < 1e-12, "{}", t.p);
    }

    #[test]
    fn ties_use_the_corrected_normal_approximation() {
        let t = mann_whitney(&[1.0, 1.0, 2.0, 2.0, 3.0], &[2.0, 3.0, 3.0, 4.0, 4.0]).unwrap();
        assert!(!t.exact && t.p > 0.01 && t.p < 0.3, "{t:?}");
        let same = mann_whitney(&[5.0; 4], &[5.0; 3]).unwrap();
        assert_eq!(same.p, 1.0);
        assert!(mann_whitney(&[], &[1.0]).is_none());
        // Large samples: the approximation agrees with a clear shift.
        let x: Vec<f64> = (0..60).map(|i| i as f64).collect();
        let y: Vec<f64> = (0..60).map(|i| i as f64 + 40.5).collect();
        assert!(mann_whitney(&x, &y).unwrap().p < 1e-6);
    }

    #[test]
    fn the_normal_tail_is_accurate() {
        assert!((normal_upper_tail(1.959_964) - 0.025).abs() < 1e-6);
        assert!((normal_upper_tail(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_upper_tail(-1.0) - 0.841_344_7).abs() < 1e-6);
    }
}
