//! From the raw curves of `hwcal tlb` to TLB levels (The Calibrator's TLB
//! figures, by the PS3 TLB note's method).
//!
//! Raw curves (x = pages, y = ns per access, clock per sample):
//! * `tlb.4k` — one line per 4 KiB page, random page order;
//! * `tlb.baseline` — the same lines in a huge-page buffer: the same cache
//!   behaviour without TLB misses;
//! * `tlb.2m` — one line per 2 MiB page; its lines have the same cache-set
//!   pattern as the 4 KiB layout, so `tlb.baseline` is its baseline too;
//! * `tlb.huge_fraction` — huge-page share of the buffers (x = 0: 4 KiB
//!   test, 1: baseline, 2: 2 MiB test).
//!
//! The difference test − baseline is the TLB's own cost. It is flat at zero
//! while the pages fit the first TLB, and steps up each time the page count
//! outgrows a level: the level's entries are where its plateau ends, its miss
//! latency is the height of the next step.

use crate::levels::{plateaus_alt, point_cycles, Options, Plateau};
use crate::stats::median;
use hwcal_model::{Profile, RawCurve, TlbHugePageComparison, TlbLevel, Verdict};

pub use hwcal_model::curve::{
    TLB_BASELINE as BASELINE, TLB_HUGE as HUGE, TLB_HUGE_FRACTION as HUGE_FRACTION,
    TLB_NEIGHBOURS as NEIGHBOURS, TLB_SMALL as SMALL,
};

/// One point of a difference curve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiffPoint {
    pub pages: f64,
    pub test_ns: f64,
    pub base_ns: f64,
    pub diff_ns: f64,
    pub diff_cycles: Option<f64>,
}

/// Baseline (ns, cycles) at `x` pages, interpolated linearly in log x
/// between the nearest measured page counts (exact when measured).
fn base_at(base: &[(f64, f64, Option<f64>)], x: f64) -> Option<(f64, Option<f64>)> {
    let i = base.iter().position(|b| b.0 >= x * 0.9999)?;
    let b1 = base[i];
    if (b1.0 / x - 1.0).abs() < 1e-4 || i == 0 {
        return ((b1.0 / x - 1.0).abs() < 0.02).then_some((b1.1, b1.2));
    }
    let b0 = base[i - 1];
    let f = (x / b0.0).ln() / (b1.0 / b0.0).ln();
    let c = b0.2.zip(b1.2).map(|(c0, c1)| c0 + f * (c1 - c0));
    Some((b0.1 + f * (b1.1 - b0.1), c))
}

/// test − baseline at every page count of `test` the baseline covers.
pub fn difference(test: &RawCurve, baseline: &RawCurve) -> Vec<DiffPoint> {
    let mut base: Vec<(f64, f64, Option<f64>)> = baseline
        .points
        .iter()
        .map(|p| (p.x, p.y, point_cycles(p)))
        .collect();
    base.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<DiffPoint> = test
        .points
        .iter()
        .filter_map(|p| {
            let (bn, bc) = base_at(&base, p.x)?;
            Some(DiffPoint {
                pages: p.x,
                test_ns: p.y,
                base_ns: bn,
                diff_ns: p.y - bn,
                diff_cycles: point_cycles(p).zip(bc).map(|(a, b)| a - b),
            })
        })
        .collect();
    out.sort_by(|a, b| a.pages.total_cmp(&b.pages));
    out
}

/// Detection options for a difference curve: it starts at zero, so the
/// tolerance is absolute (half a nanosecond, about one L1 hit's worth).
///
/// The boundary sits 20% of the way up each step. A linearly indexed TLB
/// (Golden Cove's L1 DTLB) is clean up to its capacity and then climbs over
/// about one set-count of pages, at a rate set by its replacement policy;
/// the STLB here starts to miss in some sets at ~80% of its capacity (as a
/// hashed set index would) and is about a quarter of the way up its step at
/// capacity. 20% reads both within a few percent of their documented sizes
/// on the reference machine (fixtures in tests/data).
pub fn options() -> Options {
    Options {
        rel_tol: 0.12,
        abs_tol: 0.5,
        min_points: 2,
        min_octaves: 0.5,
        boundary_frac: 0.2,
        boundary_rel_cap: f64::INFINITY,
    }
}

/// TLB levels in a difference curve of pages of `page_bytes`.
///
/// A page walk that hits the caches is core-bound, so the steps are found
/// on the difference in cycles (each sample converted with its own clock;
/// test and baseline may have run at different clock speeds); without
/// clock data, on ns.
pub fn levels(d: &[DiffPoint], page_bytes: u64) -> (Vec<TlbLevel>, Vec<Plateau>) {
    let xs: Vec<f64> = d.iter().map(|p| p.pages).collect();
    let ns: Vec<f64> = d.iter().map(|p| p.diff_ns).collect();
    let cy: Option<Vec<f64>> = d.iter().map(|p| p.diff_cycles).collect();
    let pl = match &cy {
        Some(c) => {
            // 0.5 ns is about 1.4 cycles at the reference machine's clock.
            let o = Options {
                abs_tol: 1.4,
                ..options()
            };
            plateaus_alt(&xs, c, None, &o)
        }
        None => plateaus_alt(&xs, &ns, None, &options()),
    };
    let med = |v: &dyn Fn(&DiffPoint) -> Option<f64>, p: &Plateau| -> Option<f64> {
        let c: Option<Vec<f64>> = d[p.first..=p.last].iter().map(v).collect();
        c.map(|c| median(&c))
    };
    let ns_of = |p: &Plateau| med(&|q: &DiffPoint| Some(q.diff_ns), p).unwrap_or(f64::NAN);
    let cy_of = |p: &Plateau| med(&|q: &DiffPoint| q.diff_cycles, p);
    let mut out = Vec::new();
    for k in 0..pl.len().saturating_sub(1) {
        let (a, b) = (&pl[k], &pl[k + 1]);
        if b.level <= a.level {
            continue;
        }
        out.push(TlbLevel {
            level: out.len() as u32 + 1,
            page_bytes,
            entries: a.end_x.round() as u64,
            miss_latency_ns: ns_of(b) - ns_of(a),
            miss_latency_cycles: cy_of(b).zip(cy_of(a)).map(|(b, a)| b - a),
            verdict: Verdict::Ok,
        });
    }
    (out, pl)
}

/// Everything `hwcal tlb` reports.
#[derive(Debug, Clone, Default)]
pub struct TlbAnalysis {
    pub levels: Vec<TlbLevel>,
    pub comparison: Vec<TlbHugePageComparison>,
    pub notes: Vec<String>,
    /// Difference curves (4 KiB, 2 MiB) and their plateaus, for plots.
    pub small: Vec<DiffPoint>,
    pub small_plateaus: Vec<Plateau>,
    pub huge: Vec<DiffPoint>,
    pub huge_plateaus: Vec<Plateau>,
}

/// Analyse the TLB curves of a profile; `None` without a 4 KiB curve and
/// its baseline.
pub fn analyze(p: &Profile) -> Option<TlbAnalysis> {
    let small = p.raw_curve(SMALL)?;
    let base = p.raw_curve(BASELINE)?;
    let frac = |x: f64| {
        p.raw_curve(HUGE_FRACTION)
            .and_then(|c| c.points.iter().find(|q| q.x == x))
            .map(|q| q.y)
    };
    let mut a = TlbAnalysis::default();
    // The baseline must be free of TLB misses: while its lines are
    // L1-resident (up to 512 pages) it has to be flat. A rise means the
    // "huge" pages are 4 KiB to the TLB (THP refused, or a hypervisor
    // backing guest memory with small pages).
    let flat: Vec<f64> = base
        .points
        .iter()
        .filter(|q| q.x <= 512.0)
        .filter_map(point_cycles)
        .collect();
    let m = median(&flat);
    let high = flat.iter().filter(|&&c| c > 1.3 * m).count();
    if frac(1.0).is_some_and(|f| f < 0.9) || high >= 3 {
        a.notes.push(
            "tlb: the huge-page baseline has TLB misses of its own (huge pages refused, or backed by \
             4 KiB pages underneath); the 4 KiB levels are understated or missing"
                .into(),
        );
    }
    a.small = difference(small, base);
    let (lv, pl) = levels(&a.small, 4096);
    a.levels.extend(lv);
    // The note's comparison: at each plateau past the first, and at the
    // largest page count.
    let mut at: Vec<usize> = pl.iter().skip(1).map(|q| (q.first + q.last) / 2).collect();
    if !a.small.is_empty() {
        at.push(a.small.len() - 1);
    }
    at.dedup();
    for i in at {
        let q = a.small[i];
        a.comparison.push(TlbHugePageComparison {
            pages: q.pages as u64,
            span_bytes: q.pages as u64 * 4096,
            small_pages_ns: q.test_ns,
            huge_pages_ns: q.base_ns,
            penalty_ns: q.diff_ns,
            penalty_cycles: q.diff_cycles,
        });
    }
    if a.levels.is_empty() {
        a.notes
            .push("tlb: no step in the 4 KiB curve: no TLB level found in the measured range".into());
    }
    a.small_plateaus = pl;
    if frac(2.0).is_some_and(|f| f < 0.9) {
        a.notes.push(
            "tlb: 2 MiB pages were not obtained (or the TLB saw 4 KiB pages in them); no huge-page TLB figures"
                .into(),
        );
    } else if let Some(h) = p.raw_curve(HUGE) {
        {
            a.huge = difference(h, base);
            let (lv, pl) = levels(&a.huge, 2 << 20);
            let max = a.huge.last().map_or(0.0, |q| q.pages);
            a.notes.push(format!(
                "tlb: 2 MiB pages measured up to {max:.0} pages ({:.0} MiB){}",
                max * 2.0,
                if lv.is_empty() { "; no step found" } else { "" }
            ));
            a.levels.extend(lv);
            a.huge_plateaus = pl;
        }
    }
    if let Some(n) = crate::cache::neighbour_note(p, NEIGHBOURS, "tlb") {
        a.notes.push(n);
        for l in &mut a.levels {
            l.verdict = Verdict::Noisy;
        }
    }
    Some(a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwcal_model::RawPoint;

    fn curve(id: &str, f: impl Fn(f64) -> f64, max: f64) -> RawCurve {
        let mut points = Vec::new();
        let mut x = 8.0;
        while x <= max {
            let y = f(x);
            points.push(RawPoint {
                x: x.round(),
                y,
                samples: vec![y],
                mhz: vec![2500.0],
            });
            x *= 2f64.powf(0.125);
        }
        RawCurve {
            id: id.into(),
            points,
            ..Default::default()
        }
    }

    /// Golden-Cove-like: 96-entry L1 DTLB (6-way: the overflowing sets
    /// thrash over 96..112 pages), 2048-entry STLB, a baseline that moves
    /// from L1 to L2 hits at 768 lines.
    fn golden_cove() -> Profile {
        let base = |x: f64| if x <= 768.0 { 2.0 } else { 6.4 };
        let ramp = |x: f64, n: f64, h: f64| ((x - n) / (n / 6.0)).clamp(0.0, 1.0) * h;
        let mut p = Profile::default();
        p.raw.push(curve(BASELINE, base, 16384.0));
        p.raw.push(curve(
            SMALL,
            |x| base(x) + ramp(x, 96.0, 2.8) + ramp(x, 2048.0, 9.0),
            16384.0,
        ));
        p.raw.push(curve(HUGE, |x| base(x) + ramp(x, 32.0, 2.8), 256.0));
        p
    }

    #[test]
    fn finds_dtlb_stlb_and_huge_dtlb() {
        let a = analyze(&golden_cove()).unwrap();
        let small: Vec<&TlbLevel> = a.levels.iter().filter(|l| l.page_bytes == 4096).collect();
        assert_eq!(small.len(), 2, "{:?}", a.levels);
        assert!(
            (small[0].entries as f64 - 96.0).abs() <= 8.0,
            "{}",
            small[0].entries
        );
        assert!(
            (small[1].entries as f64 / 2048.0 - 1.0).abs() <= 0.125,
            "{}",
            small[1].entries
        );
        assert!((small[0].miss_latency_ns - 2.8).abs() < 0.3);
        assert!((small[0].miss_latency_cycles.unwrap() - 7.0).abs() < 0.8);
        assert!((small[1].miss_latency_ns - 9.0).abs() < 0.5);
        let huge: Vec<&TlbLevel> = a.levels.iter().filter(|l| l.page_bytes == 2 << 20).collect();
        assert_eq!(huge.len(), 1);
        assert!(
            (huge[0].entries as f64 - 32.0).abs() <= 4.0,
            "{}",
            huge[0].entries
        );
        let last = a.comparison.last().unwrap();
        assert!(last.pages > 14000, "{}", last.pages);
        assert!((last.penalty_ns - 11.8).abs() < 0.2);
        assert!(a.notes.iter().any(|n| n.contains("2 MiB pages measured up to")));
    }

    #[test]
    fn flat_difference_has_no_levels() {
        let mut p = Profile::default();
        p.raw.push(curve(BASELINE, |_| 2.0, 4096.0));
        p.raw.push(curve(SMALL, |_| 2.05, 4096.0));
        let a = analyze(&p).unwrap();
        assert!(a.levels.is_empty());
        assert!(a.notes.iter().any(|n| n.contains("no TLB level")));
        assert!(analyze(&Profile::default()).is_none());
    }
}
