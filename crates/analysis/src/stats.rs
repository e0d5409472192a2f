//! The shared statistics, as the analyses use them.

pub use hwcal_stats::{
    linear_regression as regression, mad, mean_sd, median, median_ci95, min_and_next, quantile, recent,
    spread, Recent, RECENT,
};

/// A 95% interval of a mean over timing slices, about `centre` (the mean
/// of every operation, which weights the slices by their operations):
/// ±1.96 standard errors of the slices' mean. `None` under five slices.
/// The `mem` section's figures and the memory latency taken from its
/// chase both use it, so one chase gives one interval.
pub fn mean_ci95(slices: &[f64], centre: f64) -> Option<[f64; 2]> {
    let n = slices.len();
    if n < 5 {
        return None;
    }
    let (_, sd) = mean_sd(slices)?;
    let h = 1.96 * sd / (n as f64).sqrt();
    Some([(centre - h).max(0.0), centre + h])
}

/// A 95% interval of `a / b` from the two figures' own intervals: their
/// relative half-widths added in quadrature (the delta method for a ratio
/// of independent figures), about the ratio. `None` where either side has
/// no interval or a value that is not positive.
pub fn ratio_ci95(a: f64, a_ci: Option<[f64; 2]>, b: f64, b_ci: Option<[f64; 2]>) -> Option<[f64; 2]> {
    let ([a0, a1], [b0, b1]) = (a_ci?, b_ci?);
    if !(a > 0.0 && b > 0.0) {
        return None;
    }
    let (ra, rb) = ((a1 - a0) / 2.0 / a, (b1 - b0) / 2.0 / b);
    let r = a / b;
    let h = r * (ra * ra + rb * rb).sqrt();
    h.is_finite().then(|| [(r - h).max(0.0), r + h])
}
