//! A figure from timed batches of one operation (the `c2c` and `os`
//! probes): the median of the batches' per-operation times, and a verdict
//! from how well they agree. Quiet batches of a system call or a handoff
//! agree within a few percent; an interrupt, a preemption or a busy SMT
//! sibling scatters them.

use hwcal_model::Verdict;

/// Interquartile range of the batches, relative to their median, past
/// which the figure is `noisy`.
pub const NOISY_IQR: f64 = 0.25;
/// Fewer batches than this give no spread to judge: `noisy`.
pub const MIN_BATCHES: usize = 5;

/// The batches of one operation, summarised.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Batches {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub verdict: Verdict,
    /// The median's 95% interval (order statistics; six batches or more).
    pub ci95: Option<[f64; 2]>,
}

/// The finite batches' median, extremes and verdict; `None` without any.
pub fn judge(samples: &[f64]) -> Option<Batches> {
    let mut s: Vec<f64> = samples.iter().copied().filter(|v| v.is_finite()).collect();
    if s.is_empty() {
        return None;
    }
    s.sort_by(f64::total_cmp);
    let median = hwcal_stats::median(&s);
    let iqr = hwcal_stats::quantile(&s, 0.75) - hwcal_stats::quantile(&s, 0.25);
    let quiet = s.len() >= MIN_BATCHES && iqr <= NOISY_IQR * median;
    Some(Batches {
        median,
        min: s[0],
        max: s[s.len() - 1],
        verdict: if quiet { Verdict::Ok } else { Verdict::Noisy },
        ci95: hwcal_stats::median_ci95(&s).map(|(lo, hi)| [lo, hi]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreeing_batches_are_ok_and_scattered_or_few_are_noisy() {
        let b = judge(&[1.0, 1.02, 0.99, 1.01, f64::NAN, 1.0]).unwrap();
        assert_eq!(
            (b.median, b.min, b.max, b.verdict),
            (1.0, 0.99, 1.02, Verdict::Ok)
        );
        assert_eq!(judge(&[1.0, 2.0, 1.1, 3.0, 1.2]).unwrap().verdict, Verdict::Noisy);
        assert_eq!(judge(&[1.0, 1.0, 1.0]).unwrap().verdict, Verdict::Noisy);
        assert!(judge(&[f64::NAN]).is_none());
    }
}
