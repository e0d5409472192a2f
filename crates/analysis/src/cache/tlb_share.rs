//! The TLB's share of a random chase on base pages ([`TlbShare`], from
//! the TLB probe's measured levels of the machine's base page: 4, 16 or
//! 64 KiB), and the notes on the pages the chase ran on: the TLB's share
//! of memory latency, a buffer not all huge pages.

use hwcal_model::note::analysis as note;
use hwcal_model::{CacheLevel, MemoryLatency, Note, Profile, Verdict};

/// Where the chase's loads miss the TLB, from the measured TLB levels of
/// the base page P (the page the TLB probe's curves were measured with,
/// [`crate::tlb::page_sizes`]): a random chase over S bytes touches a page
/// picked at random among S/P on every load, so a level of E entries misses with
/// probability 1 − E/N once N = S/P exceeds E, and each miss costs that
/// level's miss latency. (The TLB probe's own curve is a cyclic walk, which
/// thrashes a TLB the moment it is outgrown; a random chase does not, so
/// its curve at the same page count would overstate the share near each
/// step.) The page walks of a chase over a large working set find their
/// page-table lines evicted by the data more often than the TLB probe's
/// walks do, so the share is a lower bound there.
#[derive(Debug, Clone, PartialEq)]
pub struct TlbShare {
    /// (entries, miss latency ns, miss latency cycles), by level.
    pub levels: Vec<(f64, f64, Option<f64>)>,
    /// The base page those levels map (bytes). Only 4 KiB was modelled
    /// once: on 16 KiB pages the walks past the TLB's reach were left in
    /// the sweep and made a level of their own (a simulated 3-level
    /// machine on 16 KiB pages read a phantom L3 of 15.9 MiB, `ok`).
    pub page: f64,
    /// Whether each level's figures were left not `ok` by the TLB analysis:
    /// the share it adds is a correction nothing confirmed.
    pub doubtful: Vec<bool>,
    /// Where on its step each level's entries may lie: the page counts
    /// where the step is 10% and 75% of the way up (how the TLB's ways and
    /// replacement place its entries on a soft edge is not known), or the
    /// entries themselves where the step was not measured.
    pub bands: Vec<(f64, f64)>,
}

impl TlbShare {
    /// From the base-page TLB levels a profile's TLB curves give; `None`
    /// without them.
    pub fn from_profile(p: &Profile) -> Option<TlbShare> {
        let a = crate::tlb::analyze(p).filter(|a| a.baseline_ok)?;
        let (base, _) = crate::tlb::page_sizes(p);
        let used: Vec<&hwcal_model::TlbLevel> = a
            .levels
            .iter()
            .filter(|l| l.page_bytes == base && l.miss_latency_ns.is_finite() && l.miss_latency_ns > 0.0)
            .collect();
        let levels: Vec<(f64, f64, Option<f64>)> = used
            .iter()
            .map(|l| (l.entries as f64, l.miss_latency_ns, l.miss_latency_cycles))
            .collect();
        (!levels.is_empty()).then_some(TlbShare {
            levels,
            page: base as f64,
            doubtful: used.iter().map(|l| l.verdict != Verdict::Ok).collect(),
            bands: used
                .iter()
                .map(|l| {
                    let e = l.entries as f64;
                    let lo = l.entries_low.map_or(e, |v| (v as f64).min(e));
                    (lo, l.entries_high.map_or(e, |v| (v as f64).max(e)))
                })
                .collect(),
        })
    }

    /// TLB time per load (ns, cycles) of a random chase over `bytes` of
    /// base pages.
    pub fn at_bytes(&self, bytes: f64) -> (f64, Option<f64>) {
        self.at(bytes / self.page)
    }

    /// The part of [`TlbShare::at_bytes`] (ns) that levels not `ok` add.
    pub fn doubtful_at_bytes(&self, bytes: f64) -> f64 {
        let pages = bytes / self.page;
        self.levels
            .iter()
            .zip(&self.doubtful)
            .filter(|(_, d)| **d)
            .map(|(&(e, n, _), _)| (1.0 - e / pages).max(0.0) * n)
            .sum()
    }

    /// How far the share at `bytes` can move with how each level replaces
    /// (ns): the share is read as a random chase's, each level past its
    /// entries E missing `1 − E/pages` of the loads, but a level that
    /// keeps less (LRU-like, as a first-level TLB under a cyclic walk)
    /// misses up to all of them once its step has begun. The gap,
    /// `E/pages` of its miss cost, is the model's own doubt; it fades as
    /// the working set outgrows the level.
    pub fn form_doubt_at_bytes(&self, bytes: f64) -> f64 {
        let pages = bytes / self.page;
        self.levels
            .iter()
            .zip(&self.bands)
            .filter(|(_, &(lo, _))| pages > lo)
            .map(|(&(e, n, _), _)| (e / pages).min(1.0) * n)
            .sum()
    }

    /// How far the share at `bytes` can move while every level's entries
    /// stay on its step (between the 10% and 75% points, [`Self::bands`]):
    /// the reading point on a soft edge that the TLB's ways and replacement
    /// decide, and nothing measured pins down.
    pub fn within_bands_at_bytes(&self, bytes: f64) -> f64 {
        let pages = bytes / self.page;
        let share = |e: f64, n: f64| (1.0 - e / pages).max(0.0) * n;
        self.levels
            .iter()
            .zip(&self.bands)
            .map(|(&(e, n, _), &(lo, hi))| {
                let at = share(e, n);
                (share(lo, n) - at).max(at - share(hi, n))
            })
            .sum()
    }

    /// The largest level's reach (bytes).
    pub fn reach(&self) -> Option<f64> {
        self.levels.iter().map(|l| l.0 * self.page).reduce(f64::max)
    }

    /// TLB time per load (ns, cycles) of a random chase over `pages` pages.
    pub fn at(&self, pages: f64) -> (f64, Option<f64>) {
        let mut ns = 0.0;
        let mut cy = Some(0.0);
        for &(e, n, c) in &self.levels {
            let miss = (1.0 - e / pages).max(0.0);
            ns += miss * n;
            cy = cy.zip(c).map(|(a, c)| a + miss * c);
        }
        (ns, cy)
    }
}

/// The note for a TLB share that cannot be right, if it cannot: the share
/// is time on top of the caches', so taking it out can never leave a
/// point faster than the sweep's fastest (L1). Where it does, the TLB
/// probe's levels were misread (a simulated machine whose second TLB level
/// is only four times its first: its first was read as 195 entries with
/// the second's miss cost, the L2 then reported at 260 MiB, `ok`).
pub(super) fn overshoot(curve: &hwcal_model::RawCurve, t: &TlbShare) -> Option<Note> {
    let pts: Vec<(f64, f64)> = curve
        .points
        .iter()
        .filter(|q| q.x > 0.0 && q.y.is_finite() && q.y > 0.0)
        .map(|q| (q.x, q.y))
        .collect();
    let floor = pts.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let &(x, y) = pts.iter().find(|(x, y)| y - t.at_bytes(*x).0 < 0.9 * floor)?;
    Some(note(
        "cache",
        "tlb-share-overshoot",
        format!(
            "cache: the TLB's share of the chase, modelled from the TLB probe's levels, is more than the sweep \
             shows: at {} it would leave {:.1} ns of a {y:.1} ns load, under L1's {floor:.1} ns; not taken out, \
             and every level is marked noisy (the TLB's levels were likely misread)",
            super::codes::size_text(x),
            y - t.at_bytes(x).0
        ),
    ))
}

/// The note on a curve corrected for TLB misses: how much of the memory
/// latency they are.
pub(super) fn tlb_note(tlb: Option<&TlbShare>, mem: Option<&MemoryLatency>) -> Option<Note> {
    tlb?;
    let m = mem?;
    let share = m.tlb_share_ns?;
    Some(note(
        "cache",
        "tlb-share",
        format!(
        "cache: the chase ran on {} pages as the TLB sees them; level sizes and latencies are judged with \
         the TLB's share removed (from the measured TLB levels), and of the sweep's {:.1} ns memory plateau \
         about {:.1} ns is TLB misses by that model (a lower bound: it leaves out that the page walks' own \
         loads miss the caches), so memory itself is at most {:.1} ns",
        super::codes::size_text(tlb?.page),
        m.latency_ns,
        share,
        m.latency_ns - share
    ),
    ))
}

/// The note for a chase buffer that was not all huge pages, if so.
pub(super) fn huge_page_note(huge_fraction: Option<f64>, base_page: Option<u64>) -> Option<Note> {
    let f = huge_fraction?;
    (f < 0.9).then(|| {
        note(
            "cache",
            "huge-pages-partial",
            format!(
                "cache: the chase buffer: {} (huge for {:.0}% of it by the TLB check before and after \
                 the sweep): the misses inflate the latencies past the L1 DTLB's reach (~384 KiB) and may \
                 show up as an extra level",
                hwcal_model::pages::on_base(
                    &hwcal_model::pages::statement(true, None, Some(false)),
                    base_page
                ),
                f * 100.0
            ),
        )
    })
}

/// Marks noisy each cache level (of the first `levels.len()` plateaus
/// `pl`) whose latency had a share taken out that a TLB level not `ok`
/// adds, where that share is more than the latency is resolved to (its 95%
/// interval, at least `resolution` of it: the sweep's settling tolerance): the
/// correction is as unconfirmed as the TLB figures it comes from, and an
/// error in it moves the latency beyond its own interval. (A simulated
/// guest's 48-entry L1 TLB read as 55, noisy; the 1.06 ns it took off
/// the L2's plateau left an L2 of 2.80 ns for 3.23, `ok`.) Every step to
/// or from the level follows it in the consistency stage.
pub(super) fn share_unconfirmed(
    levels: &mut [CacheLevel],
    xs: &[f64],
    pl: &[crate::levels::Plateau],
    tlb: Option<&TlbShare>,
    resolution: f64,
) -> Vec<Note> {
    let Some(t) = tlb else {
        return Vec::new();
    };
    mark_ok_levels(levels, xs, pl, |l, x| {
        let doubt = t.doubtful_at_bytes(x);
        let half = l
            .latency_ns_ci95
            .map_or(0.0, |[a, b]| 0.5 * (b - a))
            .max(resolution * l.latency_ns);
        (doubt > half).then(|| {
            note(
                "cache",
                &format!("l{}-tlb-share-unconfirmed", l.level),
                format!(
                    "cache: L{}: {doubt:.2} ns of TLB misses were taken out of its latency at {}, from TLB \
                     figures that are not ok; an error in them moves its {:.2} ns beyond what it is \
                     resolved to, so it is not confirmed",
                    l.level,
                    super::codes::size_text(x),
                    l.latency_ns
                ),
            )
        })
    })
}

/// Each `ok` level (of the first `levels.len()` plateaus `pl`) for which
/// `why` has a note at its plateau's middle: marked noisy, the notes
/// returned.
fn mark_ok_levels(
    levels: &mut [CacheLevel],
    xs: &[f64],
    pl: &[crate::levels::Plateau],
    why: impl Fn(&CacheLevel, f64) -> Option<Note>,
) -> Vec<Note> {
    let mut notes = Vec::new();
    for (l, p) in levels.iter_mut().zip(pl) {
        if l.verdict != Verdict::Ok {
            continue;
        }
        if let Some(n) = why(l, p.middle_x(xs)) {
            l.verdict = Verdict::Noisy;
            notes.push(n);
        }
    }
    notes
}

/// Marks noisy each `ok` cache level (of the first `levels.len()`
/// plateaus `pl`) whose TLB correction moves, where its latency is read,
/// by more than `latency_tolerance` of that latency while the TLB levels'
/// entries move along their steps ([`TlbShare::within_bands_at_bytes`]).
/// A plateau read inside a TLB level's edge (a shared level past the
/// second TLB level's reach on base pages) has its latency pinned only as
/// well as the edge's position: a simulated L3 read 11.17 ns for 10.37,
/// `ok`, corrected by a 768-entry, 8-way L2 TLB read as 806 (`ok`, 5% off)
/// on a step from 385 to 960 pages, which moves its correction by 7.6 ns
/// at 4.8 MiB.
pub(super) fn share_sensitive(
    levels: &mut [CacheLevel],
    xs: &[f64],
    pl: &[crate::levels::Plateau],
    tlb: Option<&TlbShare>,
    latency_tolerance: f64,
) -> Vec<Note> {
    let Some(t) = tlb else {
        return Vec::new();
    };
    mark_ok_levels(levels, xs, pl, |l, x| {
        let moves = t.within_bands_at_bytes(x);
        (moves > latency_tolerance * l.latency_ns).then(|| {
            note(
                "cache",
                &format!("l{}-tlb-share-sensitive", l.level),
                format!(
                    "cache: L{}: at {} its latency is read inside a TLB level's edge: {:.2} ns of TLB misses were \
                     taken out there, and TLB entries anywhere on their steps (where on a soft edge the TLB's ways \
                     and replacement put them) move that by {moves:.2} ns, more than {:.0}% of its {:.2} ns; its \
                     latency is not pinned; marked noisy",
                    l.level,
                    super::codes::size_text(x),
                    t.at_bytes(x).0,
                    latency_tolerance * 100.0,
                    l.latency_ns
                ),
            )
        })
    })
}

/// Marks noisy each `ok` cache level (of the first `levels.len()`
/// plateaus `pl`) read past the reach of a TLB level the machine states
/// (`stated`: its base-page entries) and the TLB analysis did not find —
/// where that analysis itself left a level not `ok`. The share removed
/// from the sweep is then the measured levels' alone, and the stated level's
/// misses stay in whatever it costs: a simulated guest's 72-entry L1 TLB,
/// with its 4096-entry L2 TLB read as one level of 3809 (noisy), left an
/// L3 of 21.8 ns reading 23.0, `ok` (generated seed 7, #1385). A TLB the
/// measurement trusts where the machine states another stays the
/// measurement's.
pub(super) fn share_unmeasured(
    levels: &mut [CacheLevel],
    xs: &[f64],
    pl: &[crate::levels::Plateau],
    tlb: Option<&TlbShare>,
    stated: &[f64],
) -> Vec<Note> {
    let Some(t) = tlb.filter(|t| t.doubtful.iter().any(|&d| d)) else {
        return Vec::new();
    };
    let Some(entries) = stated
        .iter()
        .copied()
        .filter(|&e| {
            e > 0.0
                && !t
                    .levels
                    .iter()
                    .any(|l| (l.0 / e).ln().abs() <= std::f64::consts::LN_2)
        })
        .reduce(f64::min)
    else {
        return Vec::new();
    };
    let reach = entries * t.page;
    mark_ok_levels(levels, xs, pl, |l, x| {
        (x > reach).then(|| {
            note(
                "cache",
                &format!("l{}-tlb-unmeasured", l.level),
                format!(
                    "cache: L{}: read at {}, past the reach of the {entries:.0}-entry TLB the machine states, which \
                     the TLB probe did not find (and a level it did find is not ok): that TLB's misses are still \
                     in its latency, by an amount nothing measured; marked noisy",
                    l.level,
                    super::codes::size_text(x),
                ),
            )
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::levels::Plateau;

    /// A sharp first level (50–60 pages on its step) and a soft second
    /// (385–960), as a simulated 8-way 768-entry L2 TLB read.
    fn share() -> TlbShare {
        TlbShare {
            levels: vec![(52.0, 1.75, None), (806.0, 21.86, None)],
            page: 4096.0,
            doubtful: vec![false, false],
            bands: vec![(50.0, 60.0), (385.0, 960.0)],
        }
    }

    /// Inside the soft level's step the correction moves by the step's
    /// width (at 1200 pages, (806 − 385)/1200 of its 21.86 ns), far past
    /// it hardly, and short of the first level's reach not at all.
    #[test]
    fn the_correction_moves_with_where_the_entries_lie_on_their_steps() {
        let t = share();
        let near = t.within_bands_at_bytes(1200.0 * 4096.0);
        let want = (806.0 - 385.0) / 1200.0 * 21.86 + (60.0 - 52.0) / 1200.0 * 1.75;
        assert!((near - want).abs() < 1e-9, "{near} {want}");
        assert!(t.within_bands_at_bytes(262144.0 * 4096.0) < 0.05);
        assert_eq!(t.within_bands_at_bytes(40.0 * 4096.0), 0.0);
    }

    #[test]
    fn a_latency_read_inside_a_tlb_edge_is_not_pinned() {
        let xs: Vec<f64> = [1000.0, 1200.0, 1500.0, 200_000.0, 262_144.0]
            .iter()
            .map(|p| p * 4096.0)
            .collect();
        let plateau = |first, last| Plateau::bare(first, last, 0.0);
        let level = |n, ns| CacheLevel {
            level: n,
            latency_ns: ns,
            verdict: Verdict::Ok,
            ..Default::default()
        };
        let mut levels = vec![level(3, 11.17), level(4, 120.0)];
        let notes = share_sensitive(
            &mut levels,
            &xs,
            &[plateau(0, 2), plateau(3, 4)],
            Some(&share()),
            0.05,
        );
        assert_eq!(levels[0].verdict, Verdict::Noisy);
        assert_eq!(levels[1].verdict, Verdict::Ok);
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].code, "cache.l3-tlb-share-sensitive");
    }

    /// A stated 72-entry TLB the probe did not find, beside a measured
    /// level that is not ok: levels read past 72 pages are not confirmed,
    /// those inside are; with every measured level ok, none is touched.
    #[test]
    fn a_stated_tlb_the_probe_missed_leaves_levels_past_its_reach_unconfirmed() {
        let xs: Vec<f64> = [8.0, 16.0, 32.0, 2000.0, 4000.0, 8000.0]
            .iter()
            .map(|p| p * 4096.0)
            .collect();
        let pl = [Plateau::bare(0, 2, 0.0), Plateau::bare(3, 5, 0.0)];
        let level = |n, ns| CacheLevel {
            level: n,
            latency_ns: ns,
            verdict: Verdict::Ok,
            ..Default::default()
        };
        let mut t = TlbShare {
            levels: vec![(3809.0, 25.9, None)],
            page: 4096.0,
            doubtful: vec![true],
            bands: vec![(3809.0, 3809.0)],
        };
        let mut levels = vec![level(2, 2.5), level(3, 23.0)];
        let notes = share_unmeasured(&mut levels, &xs, &pl, Some(&t), &[72.0, 4096.0]);
        assert_eq!(
            levels.iter().map(|l| l.verdict).collect::<Vec<_>>(),
            vec![Verdict::Ok, Verdict::Noisy]
        );
        assert_eq!(notes[0].code, "cache.l3-tlb-unmeasured");
        t.doubtful = vec![false];
        let mut levels = vec![level(2, 2.5), level(3, 23.0)];
        assert!(share_unmeasured(&mut levels, &xs, &pl, Some(&t), &[72.0, 4096.0]).is_empty());
        assert!(levels.iter().all(|l| l.verdict == Verdict::Ok));
    }
}
