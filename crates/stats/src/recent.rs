//! A machine's *current* figure: the median of its last [`RECENT`] runs
//! that measured it, with the range they span. One definition for every
//! place that says what a machine does now — `db list`, `db show`, the
//! site's index and charts, the Markdown export — so none of them shows
//! one run's value, which a noisy run can move, as the machine's.

/// How many of a machine's newest runs its current figure is the median of.
pub const RECENT: usize = 5;

/// A current figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Recent {
    pub median: f64,
    /// The smallest and largest of the runs behind it.
    pub range: [f64; 2],
    /// How many runs (at most [`RECENT`]).
    pub runs: usize,
}

/// The current figure from a machine's values, newest run first (runs
/// without the figure, or with a value that is not finite, are skipped):
/// the median of the first [`RECENT`]. `None` without any.
pub fn recent(newest_first: &[f64]) -> Option<Recent> {
    let v: Vec<f64> = newest_first
        .iter()
        .copied()
        .filter(|x| x.is_finite())
        .take(RECENT)
        .collect();
    if v.is_empty() {
        return None;
    }
    let mut sorted = v.clone();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    // The middle value, or the mean of the two middle ones.
    let median = (sorted[(n - 1) / 2] + sorted[n / 2]) / 2.0;
    let (lo, hi) = (sorted[0], sorted[n - 1]);
    Some(Recent {
        median,
        range: [lo, hi],
        runs: v.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_the_newest_five_that_hold_the_figure() {
        // An outlier among the newest five does not move it; the sixth,
        // older run is not counted; a missing value is skipped.
        let v = [10.0, f64::NAN, 11.0, 50.0, 10.5, 9.5, 1000.0];
        let r = recent(&v).unwrap();
        assert_eq!((r.median, r.range, r.runs), (10.5, [9.5, 50.0], 5));
        assert_eq!(recent(&[f64::NAN]), None);
        assert_eq!(recent(&[3.0]).unwrap().median, 3.0);
    }
}
