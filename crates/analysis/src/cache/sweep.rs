//! The latency sweep as the analysis reads it ([`Sweep`]: valid points in
//! size order, the TLB's share removed, the cleaned curve), the spread of a
//! plateau's points, and the check for a sweep run on a busy machine.

use super::tlb_share::TlbShare;
use crate::levels::point_cycles;
use crate::segments::clean;
use crate::stats::median;
use hwcal_model::note::analysis as note;
use hwcal_model::{Note, RawCurve, RawPoint};

fn rel_spread(ys: &[f64]) -> f64 {
    let m = median(ys);
    if m <= 0.0 {
        return 0.0;
    }
    let dev: Vec<f64> = ys.iter().map(|y| (y - m).abs()).collect();
    median(&dev) / m
}

/// The spread of a plateau's points around the straight line (in log
/// size) through them, relative to their median: a sloped plateau (a
/// VM's share of a shared L3, memory climbing with TLB misses) is not
/// noise, points that scatter around its slope are.
pub(super) fn detrended_spread(xs: &[f64], ys: &[f64]) -> f64 {
    let n = xs.len().min(ys.len());
    if n < 3 {
        return rel_spread(ys);
    }
    let lx: Vec<f64> = xs[..n].iter().map(|x| x.log2()).collect();
    let (mx, my) = (
        lx.iter().sum::<f64>() / n as f64,
        ys[..n].iter().sum::<f64>() / n as f64,
    );
    let sxx: f64 = lx.iter().map(|x| (x - mx) * (x - mx)).sum();
    let sxy: f64 = lx.iter().zip(&ys[..n]).map(|(x, y)| (x - mx) * (y - my)).sum();
    let b = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let m = median(&ys[..n]);
    if m <= 0.0 {
        return 0.0;
    }
    let res: Vec<f64> = lx
        .iter()
        .zip(&ys[..n])
        .map(|(x, y)| (y - (my + b * (x - mx))).abs())
        .collect();
    median(&res) / m
}

/// The latency curve as the analysis reads it: the valid points (positive
/// size, finite positive latency) sorted by working set, with their sizes
/// and latencies side by side. With a TLB model, `ys` and `cy` have the
/// TLB's share removed (`raw_ys` keeps the measured figures).
pub(super) struct Sweep {
    pub(super) pts: Vec<RawPoint>,
    pub(super) xs: Vec<f64>,
    pub(super) ys: Vec<f64>,
    pub(super) raw_ys: Vec<f64>,
    /// Cycles per load (each sample with its own clock), if recorded.
    pub(super) cy: Option<Vec<f64>>,
    /// The TLB share removed at each point (ns, cycles).
    pub(super) share: Vec<(f64, Option<f64>)>,
    /// `ys` cleaned (`segments::clean`): where the edges are read.
    pub(super) clean: Vec<f64>,
    /// The private levels' edges averaged over page placements, TLB share
    /// removed (working set, ns); empty without them.
    pub(super) colour: Vec<(f64, f64, f64)>,
    /// How many page placements each of `colour`'s points averages (the
    /// fewest of any point).
    pub(super) colour_draws: usize,
}

impl Sweep {
    pub(super) fn new(curve: &RawCurve, tlb: Option<&TlbShare>) -> Self {
        let mut pts: Vec<RawPoint> = curve
            .points
            .iter()
            .filter(|q| q.x > 0.0 && q.y.is_finite() && q.y > 0.0)
            .cloned()
            .collect();
        pts.sort_by(|a, b| a.x.total_cmp(&b.x));
        let xs: Vec<f64> = pts.iter().map(|q| q.x).collect();
        let raw_ys: Vec<f64> = pts.iter().map(|q| q.y).collect();
        let raw_cy: Option<Vec<f64>> = pts.iter().map(point_cycles).collect();
        let share: Vec<(f64, Option<f64>)> = xs
            .iter()
            .map(|&x| tlb.map_or((0.0, Some(0.0)), |t| t.at_bytes(x)))
            .collect();
        let ys: Vec<f64> = raw_ys.iter().zip(&share).map(|(y, s)| y - s.0).collect();
        let clean = clean(&ys);
        let cy = raw_cy.and_then(|c| c.iter().zip(&share).map(|(c, s)| s.1.map(|v| c - v)).collect());
        Sweep {
            pts,
            xs,
            ys,
            raw_ys,
            cy,
            share,
            clean,
            colour: Vec::new(),
            colour_draws: 0,
        }
    }

    /// Median cycles per load over points `first..=last`.
    pub(super) fn cycles(&self, first: usize, last: usize) -> Option<f64> {
        self.cy.as_ref().map(|c| median(&c[first..=last]))
    }
}

/// Whether the sweep ran on a busy machine. Two signs: points that did not
/// *settle* (their three best samples more than 2% apart), and points slower
/// than some larger working set by over 15% (impossible for a cache
/// hierarchy: a larger set cannot be faster, so something else was using
/// the caches or memory, and kept at it while the point was re-measured).
/// When either concerns a good share of the curve, the figures are flagged
/// instead of trusted.
pub fn busy_note(pts: &[RawPoint]) -> Option<Note> {
    let unsettled = pts
        .iter()
        .filter(|p| {
            let mut s: Vec<f64> = p.samples.iter().copied().filter(|v| v.is_finite()).collect();
            s.sort_by(f64::total_cmp);
            s.len() >= 3 && s[2] > 1.02 * s[0]
        })
        .count();
    let mut suffix_min = f64::INFINITY;
    let mut inverted = 0;
    for p in pts.iter().rev() {
        if p.y > 1.15 * suffix_min {
            inverted += 1;
        }
        suffix_min = suffix_min.min(p.y);
    }
    let n = pts.len();
    (n >= 6 && (3 * unsettled > n || 10 * inverted > n)).then(|| {
        note("cache", "busy", format!(
            "cache: the machine was busy: {unsettled} of {n} sizes did not settle (best three samples \
             more than 2% apart) and {inverted} were slower than a larger size; sizes and latencies may be off"
        ))
    })
}
