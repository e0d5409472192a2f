//! A level of a latency curve as the rest of hwcal reads it ([`Plateau`]),
//! each point's figure in cycles, and where a sweep is refined.
//!
//! The levels themselves are found by slope ([`crate::segments`]); a
//! level's size is placed by [`crate::cache`]. A level's effective size is
//! where its plateau *ends*, so a sweep measures densely around each end.

use hwcal_model::RawPoint;

/// A flat stretch of the curve.
#[derive(Debug, Clone, PartialEq)]
pub struct Plateau {
    /// Index of the first and last point on the plateau.
    pub first: usize,
    pub last: usize,
    /// Median y over the plateau's points.
    pub level: f64,
    /// Where the plateau ends: the interpolated boundary to the next
    /// plateau, or the last point's x for the last plateau.
    pub end_x: f64,
    /// Whether `end_x` is a real boundary (false for the last plateau,
    /// which runs off the measured range).
    pub bounded: bool,
    /// Index of the first point past the boundary (the boundary lies
    /// between it and the point before); where a sweep should be refined.
    pub cross: Option<usize>,
    /// Where the size came from a page-colour fit of the edge
    /// ([`crate::colour`]): the fit, and the most of the working set the
    /// level was seen to hold (the estimate the fit replaced).
    pub colour: Option<(crate::colour::ColourFit, f64)>,
    /// Where the edge was measured over several page placements but the
    /// page-colour model could not explain it (a disturbed edge).
    pub colour_rejected: bool,
    /// Where the last cache level is bounded not by a next plateau but by
    /// a climb that never settles within the sweep (a victim or non-LRU
    /// last level, whose hit share falls off slowly past its size): the
    /// index of the sweep's top point, whose latency stands in for the
    /// next level's when the size is read from the edge.
    pub tail_to: Option<usize>,
}

impl Plateau {
    /// Its size: where it ends when bounded, else its last point's working
    /// set.
    pub fn size(&self, xs: &[f64]) -> f64 {
        if self.bounded {
            self.end_x
        } else {
            xs[self.last]
        }
    }

    /// A bounded plateau over points `first..=last` at `level`, with
    /// nothing else known (the tests' plateau).
    #[cfg(test)]
    pub(crate) fn bare(first: usize, last: usize, level: f64) -> Plateau {
        Plateau {
            first,
            last,
            level,
            end_x: 0.0,
            bounded: true,
            cross: None,
            colour: None,
            colour_rejected: false,
            tail_to: None,
        }
    }

    /// A representative x well inside the plateau (geometric middle).
    pub fn middle_x(&self, xs: &[f64]) -> f64 {
        (xs[self.first] * xs[self.last]).sqrt()
    }
}

/// Cycles per load of a raw point: every sample converted with the clock
/// measured alongside it, then the minimum (the same statistic as `y`).
/// `None` when no clock was recorded.
pub fn point_cycles(p: &RawPoint) -> Option<f64> {
    let c = p
        .samples
        .iter()
        .zip(&p.mhz)
        .map(|(ns, mhz)| ns * mhz / 1000.0)
        .filter(|c| c.is_finite() && *c > 0.0)
        .fold(f64::INFINITY, f64::min);
    c.is_finite().then_some(c)
}

/// Points to add around each plateau boundary: `per_octave` per octave
/// over the two intervals before the crossing point (the boundary's
/// interval and the one before it, in case noise put it one off). New x
/// values only, sorted.
pub fn refine_boundaries(xs: &[f64], pl: &[Plateau], per_octave: f64) -> Vec<f64> {
    let mut out: Vec<f64> = Vec::new();
    for p in pl {
        let Some(j) = p.cross else { continue };
        for i in j.saturating_sub(1).max(1)..=j {
            fill(xs[i - 1], xs[i], per_octave, &mut out);
        }
    }
    sorted_unique(out)
}

/// Points strictly between `lo` and `hi`, `per_octave` per octave, evenly
/// in log.
fn fill(lo: f64, hi: f64, per_octave: f64, out: &mut Vec<f64>) {
    let oct = (hi / lo).log2();
    let k = (oct * per_octave).ceil() as usize;
    for s in 1..k {
        out.push(lo * 2f64.powf(oct * s as f64 / k as f64));
    }
}

/// `v` sorted, sizes within 0.1% of one another taken once.
fn sorted_unique(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(f64::total_cmp);
    v.dedup_by(|a, b| (*a / *b - 1.0).abs() < 1e-3);
    v
}

/// Points to add where each plateau's curve first leaves it: `per_octave`
/// per octave over the interval from the last point within `rise` (a
/// fraction: 0.05 is 5%) of the plateau's level, past its end, to the first
/// above it. [`refine_boundaries`] refines where the curve crosses a
/// quarter of the way to the *next plateau found*; where a level between
/// left no plateau in a coarse sweep (an L2 only a few times its L1, read
/// over four points), that crossing lies at the later edge, and the
/// level's own end — where its size is read — went unrefined (a simulated
/// L1 of 96 KiB read 80.6 KiB between points at 80.6 and 101.6 KiB).
/// `ys` are the points' latencies, in the plateaus' units. New x values
/// only, sorted.
pub fn refine_edge_starts(xs: &[f64], ys: &[f64], pl: &[Plateau], per_octave: f64, rise: f64) -> Vec<f64> {
    let mut out: Vec<f64> = Vec::new();
    let n = xs.len().min(ys.len());
    for p in pl {
        let Some(k) = (p.last + 1..n).find(|&k| ys[k] > p.level * (1.0 + rise)) else {
            continue;
        };
        fill(xs[k - 1], xs[k], per_octave, &mut out);
    }
    sorted_unique(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refine_edge_starts_fills_where_the_curve_first_leaves_its_plateau() {
        // An L1 plateau to 82.6 KiB, a point 2.6 times higher at 104 KiB,
        // and the next plateau found only at 832 KiB: the quarter crossing
        // lies far beyond, the edge start here.
        let xs = [32e3, 65e3, 82.6e3, 104e3, 131e3, 262e3, 416e3, 832e3];
        let ys = [0.67, 0.67, 0.674, 1.76, 2.97, 4.15, 7.4, 20.3];
        let pl = [Plateau {
            first: 0,
            last: 1,
            level: 0.67,
            end_x: 65e3,
            bounded: true,
            cross: Some(6),
            colour: None,
            colour_rejected: false,
            tail_to: None,
        }];
        let r = refine_edge_starts(&xs, &ys, &pl, 16.0, 0.05);
        assert!(!r.is_empty());
        assert!(r.iter().all(|&x| x > 82.6e3 && x < 104e3), "{r:?}");
        // A plateau the curve never leaves adds nothing.
        let flat = [0.67; 8];
        assert!(refine_edge_starts(&xs, &flat, &pl, 16.0, 0.05).is_empty());
    }

    #[test]
    fn refine_boundaries_fills_the_two_intervals_before_the_crossing() {
        let xs = [1.0, 2.0, 4.0, 8.0, 16.0];
        let pl = [Plateau {
            first: 0,
            last: 1,
            level: 1.0,
            end_x: 3.0,
            bounded: true,
            cross: Some(2),
            colour: None,
            colour_rejected: false,
            tail_to: None,
        }];
        let r = refine_boundaries(&xs, &pl, 4.0);
        assert_eq!(r.len(), 6, "{r:?}");
        assert!(r.iter().all(|&x| x > 1.0 && x < 4.0 && x != 2.0), "{r:?}");
    }

    #[test]
    fn cycles_use_each_samples_clock() {
        let p = RawPoint {
            x: 1.0,
            y: 2.0,
            samples: vec![2.0, 2.2],
            mhz: vec![2500.0, 2000.0],
        };
        assert!((point_cycles(&p).unwrap() - 4.4).abs() < 1e-9);
        let q = RawPoint {
            samples: vec![2.0],
            ..Default::default()
        };
        assert_eq!(point_cycles(&q), None);
    }
}
