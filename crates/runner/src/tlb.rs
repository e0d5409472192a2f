//! The TLB probe: TLB levels for 4 KiB and 2 MiB pages and the huge-page
//! penalty (The Calibrator's TLB figures, by the PS3 TLB note's method).
//!
//! Plan: 4 page counts per octave from 8 pages, each measured with 4 KiB
//! pages and with the same lines in a huge-page buffer (side by side, so
//! both see the same machine state), in three rounds; the difference is
//! analysed, the sweep refined at 32 counts per octave around each step and
//! the steps measured again, until they stay put. Then the same with one
//! page per 2 MiB.

pub use crate::points::TlbLayout;
use crate::points::{Hardware, PagePoints};
use crate::probe::{Plan, ProbeEntry, Progress};
use crate::Result;
use hwcal_analysis::levels::refine_boundaries;
use hwcal_analysis::tlb as tlb_analysis;
use hwcal_model::{Profile, RawCurve, RawPoint};
use hwcal_probes::cache::merge_point;
use hwcal_probes::pages::PageSizes;
use hwcal_probes::tlb::Layout;

pub const ENTRY: ProbeEntry = ProbeEntry {
    id: "tlb",
    description: "TLB levels, 4 KiB and 2 MiB pages, huge-page penalty (PS3 note)",
    opt_in: false,
    typical_s: 1.0,
    reads: &[],
    plan: |config, _| {
        Some(Box::new(Tlb {
            max_pages: 8192,
            max_huge_pages: 256,
            own_cpu: config.pinned_cpu,
        }))
    },
    analyze,
};

/// The TLB probe's plan: the largest page counts and the CPU it runs on.
#[derive(Debug, Clone, Copy)]
pub struct Tlb {
    pub max_pages: u64,
    pub max_huge_pages: u64,
    pub own_cpu: Option<usize>,
}

impl Plan for Tlb {
    fn run(&self, hw: &dyn Hardware, progress: &dyn Progress) -> Result<Profile> {
        // Raw curves only: the calibration analyses the merged profile.
        Ok(Profile {
            raw: measure(hw, self.max_pages, self.max_huge_pages, progress, self.own_cpu)?,
            ..Default::default()
        })
    }
}

fn curve(id: &str, y: &str, points: Vec<RawPoint>) -> RawCurve {
    RawCurve {
        id: id.into(),
        x_label: "pages".into(),
        y_label: y.into(),
        points,
    }
}

/// Integer page counts, 4 per octave, from `lo` to `hi`.
fn counts(lo: usize, hi: usize, per_octave: f64) -> Vec<usize> {
    let mut v: Vec<usize> = Vec::new();
    let mut k = 0.0;
    loop {
        let x = (lo as f64 * 2f64.powf(k / per_octave)).round() as usize;
        if x > hi {
            break;
        }
        if v.last() != Some(&x) {
            v.push(x);
        }
        k += 1.0;
    }
    if v.last() != Some(&hi) {
        v.push(hi);
    }
    v
}

fn insert(points: &mut Vec<RawPoint>, p: RawPoint) {
    let i = points.partition_point(|q| q.x < p.x);
    points.insert(i, p);
}

/// A test bench and the baselines measured beside it, with their points.
/// The first baseline is the one the refinement follows.
struct Benches {
    bases: Vec<(Box<dyn PagePoints>, Vec<RawPoint>)>,
}

impl Benches {
    /// Measure (or re-measure) the test and every baseline at n pages,
    /// side by side, so all of them see the same machine state.
    fn one(&mut self, test: &mut dyn PagePoints, pts: &mut Vec<RawPoint>, n: usize) -> Result<()> {
        merge_into(pts, test.point(n)?);
        for (b, bp) in self.bases.iter_mut() {
            if n <= b.max_pages() {
                merge_into(bp, b.point(n)?);
            }
        }
        Ok(())
    }

    /// The difference test − first baseline.
    fn difference(&self, pts: &[RawPoint]) -> Vec<tlb_analysis::DiffPoint> {
        let t = curve(tlb_analysis::SMALL, "", pts.to_vec());
        let b = curve(tlb_analysis::BASELINE, "", self.bases[0].1.clone());
        tlb_analysis::difference(&t, &b)
    }
}

fn merge_into(points: &mut Vec<RawPoint>, q: RawPoint) {
    match points.iter_mut().find(|p| p.x == q.x) {
        Some(p) => merge_point(p, q),
        None => insert(points, q),
    }
}

/// Measure a test curve and its baselines at `pages`, `rounds` times over
/// (keeping the minimum), then refine around the steps: new page counts
/// at 32 per octave next to each boundary, alternating with re-measuring
/// the boundary windows later in time, until the boundaries stay put.
///
/// Repetition matters here: the STLB and the page-walk caches are shared
/// with the other hardware thread, whose bursts of activity make steps
/// appear early; rounds spread in time see past them (noise only adds time).
fn sweep(
    hw: &dyn Hardware,
    test: &mut dyn PagePoints,
    benches: &mut Benches,
    (pages, rounds, budget_s): (&[usize], usize, f64),
) -> Result<Vec<RawPoint>> {
    let t0 = hw.now_s();
    let elapsed = || hw.now_s() - t0;
    let mut pts: Vec<RawPoint> = Vec::new();
    for r in 0..rounds {
        // Later rounds only while time allows (a busy machine is slow).
        if r > 0 && elapsed() > budget_s / 2.0 {
            break;
        }
        for &n in pages {
            benches.one(test, &mut pts, n)?;
        }
    }
    for round in 0..6 {
        if elapsed() > budget_s {
            break;
        }
        let d = benches.difference(&pts);
        let (_, pl) = tlb_analysis::levels(&d, 4096);
        let xs: Vec<f64> = d.iter().map(|q| q.pages).collect();
        if round % 2 == 0 {
            let new: Vec<usize> = refine_boundaries(&xs, &pl, 32.0)
                .into_iter()
                .map(|x| x.round() as usize)
                .filter(|&n| n <= test.max_pages() && !pts.iter().any(|p| p.x == n as f64))
                .collect();
            if new.is_empty() && round > 0 {
                break;
            }
            for n in new {
                benches.one(test, &mut pts, n)?;
            }
        } else {
            let windows: Vec<(f64, f64)> = pl
                .iter()
                .filter_map(|p| p.cross)
                .map(|j| (xs[j.saturating_sub(2)], xs[(j + 1).min(xs.len() - 1)]))
                .collect();
            let redo: Vec<usize> = xs
                .iter()
                .filter(|&&x| windows.iter().any(|&(lo, hi)| x >= lo && x <= hi))
                .map(|&x| x as usize)
                .collect();
            for n in redo {
                benches.one(test, &mut pts, n)?;
            }
        }
    }
    Ok(pts)
}

/// Page counts the retest walks for each level past the first that `pts`
/// show: up to [`RETEST_POINTS`] of the sweep's own counts from just past
/// its half-miss point to twice it, where its step has risen.
pub(crate) fn retest_counts(d: &[tlb_analysis::DiffPoint], max: usize) -> Vec<usize> {
    let (lv, _) = tlb_analysis::levels(d, 4096);
    let mut out: Vec<usize> = Vec::new();
    for l in lv.iter().filter(|l| l.level >= 2) {
        let e = l.entries as f64;
        let xs: Vec<usize> = d
            .iter()
            .map(|q| q.pages)
            .filter(|&x| x > 1.05 * e && x <= 2.0 * e && x <= max as f64)
            .map(|x| x.round() as usize)
            .collect();
        let step = xs.len().div_ceil(RETEST_POINTS).max(1);
        out.extend(xs.iter().step_by(step));
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The most page counts the retest takes per level.
const RETEST_POINTS: usize = 6;

/// The 4 KiB walk again over a second buffer of other pages
/// ([`retest_counts`]), twice over (the faster kept), against the same
/// baselines the sweep measured at those counts. A level that is a
/// structure's size steps at the same count over any pages; one that a
/// set-associative level's fullest sets made (where the first buffer's
/// pages fell) does not.
fn retest_points(
    hw: &dyn Hardware,
    benches: &Benches,
    pts: &[RawPoint],
    sizes: PageSizes,
) -> Result<Vec<RawPoint>> {
    let d = benches.difference(pts);
    let max = pts.iter().map(|p| p.x as usize).max().unwrap_or(0);
    let at = retest_counts(&d, max);
    let Some(&top) = at.last() else {
        return Ok(Vec::new());
    };
    let mut bench = hw.tlb_retest(top, sizes)?;
    let mut out = Vec::new();
    for _ in 0..2 {
        for &n in &at {
            merge_into(&mut out, bench.point(n)?);
        }
    }
    Ok(out)
}

/// Memory the probe may use: the test and its huge-page baseline take
/// 2.25 × n base pages; n shrinks (to 64 at least) to fit half of `avail`
/// (64 KiB pages make 8192 pages 512 MiB).
pub fn layout(max_pages: u64, max_huge_pages: u64, avail: usize, pages: PageSizes) -> TlbLayout {
    let mut n = max_pages as usize;
    if avail > 0 {
        let fit = (avail / 2).saturating_sub(pages.huge) * 4 / 9 / pages.base;
        n = n.min(fit.max(64));
    }
    let small_len = n * pages.base;
    TlbLayout {
        pages,
        n,
        small_len,
        dense_len: n * 64,
        baseline_need: small_len.div_ceil(pages.huge),
        baseline_len: small_len * 5 / 4 + pages.huge,
        // Each touched huge page costs a whole huge page of memory.
        huge_pages: (max_huge_pages as usize).min(avail / 4 / pages.huge).min(n),
    }
}

/// Run the TLB measurements on `hw`; returns the raw curves.
pub fn measure(
    hw: &dyn Hardware,
    max_pages: u64,
    max_huge_pages: u64,
    progress: &dyn Progress,
    own_cpu: Option<usize>,
) -> Result<Vec<RawCurve>> {
    let watch = hw.watch(own_cpu);
    hw.warm_up();
    let t0 = hw.now_s();
    let avail = hw.available_memory() as usize;
    let lay = layout(max_pages, max_huge_pages, avail, hw.page_sizes());
    let n = lay.n;
    let b = hw.tlb_benches(&lay)?;
    if b.huge_baseline.is_none() {
        progress.say("tlb: the TLB does not see huge pages; using the dense baseline");
    }
    let fractions = [b.test_huge_fraction, b.baseline_huge_fraction];
    let mut test = b.test;
    // The huge-page baseline leads where the TLB sees huge pages (it has
    // no TLB misses at any page count); the dense one always runs, as the
    // baseline where huge pages are not seen and as a cross-check.
    let mut benches = Benches {
        bases: match b.huge_baseline {
            Some(h) => vec![(h, Vec::new()), (b.dense, Vec::new())],
            None => vec![(b.dense, Vec::new())],
        },
    };
    let small_pts = sweep(hw, test.as_mut(), &mut benches, (&counts(8, n, 4.0), 3, 2.5))?;
    drop(test);
    let retest = retest_points(hw, &benches, &small_pts, lay.pages)?;
    progress.say(&format!(
        "tlb: 4 KiB pages, {} page counts in {:.1} s",
        small_pts.len(),
        hw.now_s() - t0
    ));
    let mut out = Vec::new();
    let (huge_pts, huge_frac) = match benches.bases[0].0.layout() {
        Layout::Spread => huge_page_sweep(hw, &lay, &mut benches, progress)?,
        Layout::Dense => {
            progress.say("tlb: 2 MiB pages not seen by the TLB; skipping the huge-page TLB test");
            (Vec::new(), Some(0.0))
        }
    };
    progress.say(&format!("tlb: done in {:.1} s", hw.now_s() - t0));
    out.push(watch.curve(tlb_analysis::NEIGHBOURS));
    out.push(curve(
        tlb_analysis::SMALL,
        "ns per access, 4 KiB pages",
        small_pts,
    ));
    if !retest.is_empty() {
        out.push(curve(
            tlb_analysis::RETEST,
            "ns per access, 4 KiB pages, a second buffer",
            retest,
        ));
    }
    for (b, pts) in benches.bases {
        let (id, label) = match b.layout() {
            Layout::Spread => (tlb_analysis::BASELINE, "ns per access, same lines in huge pages"),
            Layout::Dense => (tlb_analysis::DENSE, "ns per access, as many lines packed densely"),
        };
        out.push(curve(id, label, pts));
    }
    if !huge_pts.is_empty() {
        out.push(curve(
            tlb_analysis::HUGE,
            "ns per access, one line per 2 MiB page",
            huge_pts,
        ));
    }
    out.push(fraction_curve(fractions, huge_frac));
    Ok(out)
}

/// The 2 MiB-page test: one line per huge page, up to `max_huge_pages`
/// (and `n`, and what a quarter of available memory allows), against the
/// same baseline. Returns its points (none if skipped) and the share of its
/// buffer backed by huge pages (`None` if too little memory to try).
fn huge_page_sweep(
    hw: &dyn Hardware,
    lay: &TlbLayout,
    benches: &mut Benches,
    progress: &dyn Progress,
) -> Result<(Vec<RawPoint>, Option<f64>)> {
    if lay.huge_pages < 16 {
        return Ok((Vec::new(), None));
    }
    match hw.huge_page_test(lay.huge_pages)? {
        (Some(mut htest), f) => {
            let usable = htest.max_pages();
            let pts = sweep(hw, htest.as_mut(), benches, (&counts(8, usable, 4.0), 2, 1.0))?;
            Ok((pts, Some(f)))
        }
        (None, f) => {
            progress.say("tlb: 2 MiB pages not obtained; skipping the huge-page TLB test");
            Ok((Vec::new(), Some(f)))
        }
    }
}

/// The huge-page shares of the three buffers: `fractions` for the 4 KiB
/// test and the baseline, `huge_frac` for the 2 MiB test when it was tried.
fn fraction_curve(fractions: [f64; 2], huge_frac: Option<f64>) -> RawCurve {
    let mut fr = vec![
        RawPoint {
            x: 0.0,
            y: fractions[0],
            ..Default::default()
        },
        RawPoint {
            x: 1.0,
            y: fractions[1],
            ..Default::default()
        },
    ];
    if let Some(f) = huge_frac {
        fr.push(RawPoint {
            x: 2.0,
            y: f,
            ..Default::default()
        });
    }
    RawCurve {
        id: tlb_analysis::HUGE_FRACTION.into(),
        x_label: "buffer (0: 4 KiB test, 1: baseline, 2: 2 MiB test)".into(),
        y_label: "fraction backed by huge pages (smaps; for the 2 MiB test 0 if the TLB sees 4 KiB pages)"
            .into(),
        points: fr,
    }
}

/// The analysis hook: the TLB sections of a profile from its raw curves.
pub fn analyze(p: &mut Profile) -> bool {
    let Some(a) = tlb_analysis::analyze(p) else {
        return false;
    };
    p.tlbs = Some(a.levels);
    p.tlb_huge_pages = Some(a.comparison);
    // The analysis words its notes; every one of them is replaced on a
    // re-analysis (old profiles' plain `tlb: ` notes included).
    hwcal_model::note::refresh_analysis(
        &mut p.notes,
        "tlb",
        &hwcal_analysis::tlb::note_patterns(),
        a.notes,
    );
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwcal_probes::buffer::Buffer;
    use hwcal_probes::tlb::{slot_offset, PageBench};

    const SIZES: [usize; 3] = [4 << 10, 16 << 10, 64 << 10];

    /// The page size is read, not assumed: the plan for 4, 16 and 64 KiB
    /// base pages visits the same page counts, and every buffer is sized
    /// and aligned in whole pages of its own size.
    /// A curve with a 64-entry first level and a 1024-entry second: the
    /// retest takes a handful of the sweep's counts just past the second's
    /// half-miss point, none for the first.
    #[test]
    fn the_retest_walks_just_past_each_later_level() {
        let xs: Vec<f64> = counts(8, 4096, 16.0).into_iter().map(|n| n as f64).collect();
        let d: Vec<tlb_analysis::DiffPoint> = xs
            .iter()
            .map(|&x| {
                let y = if x <= 64.0 {
                    0.0
                } else if x <= 1024.0 {
                    2.0
                } else {
                    25.0
                };
                tlb_analysis::DiffPoint {
                    pages: x,
                    test_ns: y + 1.0,
                    base_ns: 1.0,
                    diff_ns: y,
                    diff_cycles: None,
                }
            })
            .collect();
        let at = retest_counts(&d, 4096);
        assert!(!at.is_empty() && at.len() <= RETEST_POINTS, "{at:?}");
        assert!(at.iter().all(|&n| n > 1024 && n <= 2100), "{at:?}");
    }

    #[test]
    fn plans_agree_across_page_sizes() {
        let plans: Vec<TlbLayout> = SIZES
            .iter()
            .map(|&b| layout(8192, 256, 64 << 30, PageSizes::for_base(b)))
            .collect();
        for l in &plans {
            let (base, huge) = (l.pages.base, l.pages.huge);
            assert_eq!(l.n, 8192, "{base}");
            assert_eq!(l.small_len, l.n * base);
            assert_eq!(l.dense_len, l.n * 64);
            assert!(l.baseline_need * huge >= l.small_len && (l.baseline_need - 1) * huge < l.small_len);
            assert!(l.baseline_len >= l.baseline_need * huge);
            assert_eq!(counts(8, l.n, 4.0), counts(8, plans[0].n, 4.0));
        }
        // Little memory: fewer pages, never below 64, and within half of it.
        let l = layout(8192, 256, 2 << 30, PageSizes::for_base(64 << 10));
        assert!(
            l.n >= 64 && l.n < 8192 && l.small_len * 9 / 4 + l.pages.huge <= 1 << 30,
            "{l:?}"
        );
        // A 512 MiB huge page each: too few to try the huge-page test.
        assert!(l.huge_pages < 16);
        assert_eq!(layout(8192, 256, 1 << 20, PageSizes::for_base(64 << 10)).n, 64);
        assert_eq!(
            layout(8192, 256, 64 << 30, PageSizes::for_base(4096)).huge_pages,
            256
        );
    }

    /// The buffer and page-chase code with injected page sizes: buffers in
    /// whole, aligned pages; page j's one line inside base page j; the
    /// chase runs.
    #[test]
    fn buffers_and_chases_follow_the_injected_page_size() {
        for base in SIZES {
            let p = PageSizes::for_base(base);
            let lay = layout(64, 0, 0, p);
            let b = Buffer::new_scattered_with(lay.small_len, 1, p).unwrap();
            assert_eq!(b.len() % base, 0);
            assert_eq!(b.len() / base, 64);
            assert_eq!(b.as_ptr() as usize % base, 0);
            assert_eq!(b.pages(), p);
            for j in 0..lay.n {
                let off = slot_offset(j, base, p);
                assert_eq!(off / base, j, "{base}: page {j} touched at {off}");
            }
            let mut test = PageBench::new(b, base, 7);
            assert_eq!(test.max_pages(), 64);
            test.policy.max_samples = 3;
            test.policy.min_samples = 1;
            test.policy.track_clock = false;
            assert!(test.point(64).unwrap().y.is_finite());
            assert!(test.point(65).is_err());
        }
    }
}
