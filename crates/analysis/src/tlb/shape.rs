//! Checks on the shape of the steps a TLB level was read on, where no
//! stated figure confirms it: two neighbouring steps of one height, and a
//! step whose top overshoots the plateau after it. Each leaves the level
//! `noisy` with a note; neither moves a figure.

use crate::levels::Plateau;
use hwcal_model::note::analysis as note;
use hwcal_model::{Note, TlbLevel, Verdict};

/// Whether two 95% intervals overlap.
fn overlap(a: [f64; 2], b: [f64; 2]) -> bool {
    a[0] <= b[1] && b[0] <= a[1]
}

/// Neighbouring levels of one page size whose miss steps agree within
/// their intervals: each TLB miss goes to a slower structure than the one
/// before it (an L1 DTLB miss is a few cycles to the second level; a miss
/// there is a page walk, several dependent loads through the caches), so
/// two real levels' steps differ in height. Two steps of one height are
/// one level's soft edge seen twice (or a cache effect of the test's
/// one-line-per-page layout beside a real step: a simulated 32-entry L1
/// DTLB at +1.19 ns and a "level" of 102 entries at +1.25 ns, `ok`), and
/// which of them is the level cannot be told: neither is `ok` unless a
/// plausible stated figure confirms it (`confirmed`).
pub(super) fn steps_agree(levels: &mut [TlbLevel], confirmed: &[(u32, u64)], notes: &mut Vec<Note>) {
    let n = levels.len();
    let mut hit = vec![false; n];
    for i in 0..n {
        for j in i + 1..n {
            let (a, b) = (&levels[i], &levels[j]);
            if a.page_bytes != b.page_bytes || b.level != a.level + 1 {
                continue;
            }
            if let (Some(x), Some(y)) = (a.miss_latency_ns_ci95, b.miss_latency_ns_ci95) {
                if overlap(x, y) {
                    hit[i] = true;
                    hit[j] = true;
                }
            }
        }
    }
    for (l, _) in levels.iter_mut().zip(&hit).filter(|(_, &h)| h) {
        if l.verdict != Verdict::Ok || confirmed.contains(&(l.level, l.page_bytes)) {
            continue;
        }
        l.verdict = Verdict::Noisy;
        notes.push(note(
            "tlb",
            &format!("l{}-steps-agree", l.level),
            format!(
                "tlb: level {} ({} pages, {} entries): its miss step (+{:.2} ns) agrees within the intervals \
                 with a neighbouring level's; each TLB miss goes to a slower structure, so two real levels' \
                 steps differ: this is one level's edge seen twice (or a cache effect beside it), which of \
                 the two is the level cannot be told, and no plausible stated figure confirms it: noisy",
                l.level,
                if l.page_bytes >= 2 << 20 { "2 MiB" } else { "base" },
                l.entries,
                l.miss_latency_ns
            ),
        ));
    }
}

/// Levels (of the difference curve `ys`, in the unit its plateaus `pl`
/// were found in, the i-th bounded
/// plateau ending at the i-th level, as [`super::levels`] built them)
/// whose step overshoots: the step's rise and the first points of the
/// plateau past it (and those between the two plateaus) peak above the upper plateau's
/// median by more than the share of the step's height where the entries
/// are read (a quarter for the first level, a
/// half past it). Past a TLB's size its misses only grow (every page is
/// missed once a lap once the pages outgrow it), so the TLB's own cost
/// does not fall after its step; a difference that peaks after the step
/// and falls back carries a cache effect of the test's layout (one line a
/// page meeting the L1 data cache's sets differently from the baseline),
/// and the step's top — the height the entries are read against — is not
/// the TLB's (a simulated 48-entry L1 DTLB read 55, `ok`, against a top
/// that fell from +3.9 to +2.3 ns). Returns the indices of such levels in
/// `levels` (those of page size `page`, in order).
pub(super) fn overshoots(ys: &[f64], pl: &[Plateau]) -> Vec<usize> {
    let m = crate::segments::median3(ys);
    let bounded: Vec<usize> = (0..pl.len()).filter(|&k| pl[k].bounded).collect();
    let mut out = Vec::new();
    for (i, &k) in bounded.iter().enumerate() {
        let (Some(a), Some(b)) = (pl.get(k), pl.get(k + 1)) else {
            continue;
        };
        let last = b.last.min(ys.len().saturating_sub(1));
        if last < b.first + 2 || a.last >= b.first {
            continue;
        }
        // The step's top: from the first point past the lower plateau to
        // the third of the upper one, on the running median of three (no
        // single point makes a peak).
        let peak = m[a.last + 1..=b.first + 2]
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        let frac = if i == 0 { 0.25 } else { 0.5 };
        let height = b.level - a.level;
        if height > 0.0 && peak - b.level > frac * height {
            out.push(i);
        }
    }
    out
}

/// Levels past the first whose miss step is smaller, beyond both
/// intervals, than the level's before them (of one page size). A level's
/// step is what a miss in it costs over a hit: the next structure's hit
/// time. Each further structure is larger and farther, and the last of
/// them is a page walk (dependent loads through the caches), so the
/// increments grow: an L1 DTLB miss that hits the second level costs a few
/// cycles, a miss there a walk of tens. A step smaller than the one
/// before it is no structure's hit time but a share of misses: the first
/// sets of a set-associative or hashed next level overflowing long before
/// its entries are used, each such miss a whole walk but only a few of
/// them (a simulated 4-way, 1024-entry L2 TLB whose first sets overflowed
/// at 232 pages: a "level" of 237 entries at +2.6 cycles after an L1 DTLB
/// step of +8.9, `ok`). Such a level is `noisy` unless a plausible stated
/// figure confirms it (`confirmed`).
pub(super) fn steps_shrink(levels: &mut [TlbLevel], confirmed: &[(u32, u64)], notes: &mut Vec<Note>) {
    let step = |l: &TlbLevel| l.miss_latency_ns_ci95.unwrap_or([l.miss_latency_ns; 2]);
    for j in 1..levels.len() {
        let Some(i) = (0..j).rev().find(|&i| {
            levels[i].page_bytes == levels[j].page_bytes && levels[i].level + 1 == levels[j].level
        }) else {
            continue;
        };
        let (before, this) = (step(&levels[i]), step(&levels[j]));
        let prev_ns = levels[i].miss_latency_ns;
        let l = &mut levels[j];
        if this[1] >= before[0] || l.verdict != Verdict::Ok || confirmed.contains(&(l.level, l.page_bytes)) {
            continue;
        }
        l.verdict = Verdict::Noisy;
        notes.push(note(
            "tlb",
            &format!("l{}-step-shrinks", l.level),
            format!(
                "tlb: level {} ({} pages, {} entries): its miss step (+{:.2} ns) is smaller than the level \
                 before it (+{:.2} ns), beyond both intervals; each further structure costs more to reach \
                 than the one before, so this step is no structure's hit time but a share of misses (the first \
                 sets of the next level overflowing), and no plausible stated figure confirms it: noisy",
                l.level,
                if l.page_bytes >= 2 << 20 { "2 MiB" } else { "base" },
                l.entries,
                l.miss_latency_ns,
                prev_ns,
            ),
        ));
    }
}

/// The note for a level whose step overshoots (see [`overshoots`]).
pub(super) fn overshoot_note(l: &TlbLevel) -> Note {
    note(
        "tlb",
        &format!("l{}-overshoot", l.level),
        format!(
            "tlb: level {} ({} pages, {} entries): the curve peaks just past the step and falls back to the \
             plateau after it; a TLB's misses only grow past its size, so the peak is a cache effect of the \
             test's layout and the step's height the entries are read against is not the TLB's; no plausible \
             stated figure confirms it: noisy",
            l.level,
            if l.page_bytes >= 2 << 20 { "2 MiB" } else { "base" },
            l.entries
        ),
    )
}

/// Where a first level's step starts, by the line through its 10% and
/// 25% points taken down to zero: a first-level TLB is fully (or highly)
/// associative, so it starts to miss exactly when the pages outgrow it,
/// and its misses then grow about linearly with the pages past its size
/// (a replacement that is not LRU); its foot is its entries.
pub fn first_level_foot(l: &TlbLevel) -> Option<f64> {
    let (lo, at) = (l.entries_low? as f64, l.entries as f64);
    (at > lo).then(|| lo - (at - lo) * 0.10 / 0.15)
}

/// The note for a first level whose two readings of one step disagree:
/// its entries are read where a quarter of the accesses miss (some 9%
/// past the size on a first level's linear step), its foot
/// ([`first_level_foot`]) where the misses begin. On one level's step the
/// two agree within the size tolerance; apart by more, the step's height
/// holds a second rise beside the level's own (a cache effect of the test's
/// layout run into it: a simulated 64-entry L1 DTLB ramps to +2.35 ns at
/// 87 pages, then a rise to +5.4 ns by 108 took the quarter point to 77,
/// `ok`), and where the level lies on it cannot be told. `confirmed`: a
/// plausible stated figure agrees.
/// `tolerance`: how far a size may be measured off (the TLB's size
/// tolerance).
pub(super) fn foot_note(l: &TlbLevel, confirmed: bool, tolerance: f64) -> Option<Note> {
    if confirmed || l.level != 1 {
        return None;
    }
    let foot = first_level_foot(l)?;
    if foot <= 0.0 || l.entries as f64 <= (1.0 + tolerance) * foot {
        return None;
    }
    Some(note(
        "tlb",
        "l1-foot",
        format!(
            "tlb: level 1 ({} pages): {} entries is where a quarter of the accesses miss, but the step starts              near {foot:.0} pages, more than {:.1}% below; a first-level TLB misses from its size on, about              linearly, so on its own step the two agree: this step holds a second rise beside the level's,              and no plausible stated figure confirms it: noisy",
            if l.page_bytes >= 2 << 20 { "2 MiB" } else { "base" },
            l.entries,
            tolerance * 100.0
        ),
    ))
}

/// The note for a difference curve whose first plateau sits above the
/// zero its first points read: below the first TLB's size the test and
/// its baseline both hit in the TLB, so the curve starts at zero and the
/// first plateau is that zero. One raised above it (by more than the
/// segments' merge margin) took in the first TLB's step and what follows
/// (a dense baseline that takes TLB misses of its own past its first
/// level's reach, 64 lines a page, so that the difference falls back: a
/// simulated 32-entry L1 DTLB left no step, and a 4096-entry L2 read as a
/// first level of 3521, `ok`): no level read on it is the one it is
/// numbered.
///
/// `ys`: the curve in its plateaus' unit (`unit`), `margin` the
/// segments' merge margin in it.
pub(super) fn first_plateau_raised(ys: &[f64], pl: &[Plateau], margin: f64, unit: &str) -> Option<Note> {
    let first = pl.first()?;
    if ys.len() < 3 {
        return None;
    }
    let zero = crate::stats::median(&ys[..3]);
    if first.level - zero <= margin {
        return None;
    }
    Some(note(
        "tlb",
        "first-plateau-raised",
        format!(
            "tlb: the 4 KiB curve's first plateau sits at {:.1} {}, above the {zero:.1} its first points read,              where every page fits the first TLB: the first TLB's step was merged into a later level, so no              level is the one it is numbered; levels no plausible stated figure confirms are noisy",
            first.level, unit
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(level: u32, miss: f64, ci: [f64; 2]) -> TlbLevel {
        TlbLevel {
            level,
            page_bytes: 4096,
            entries: 32 << (2 * level),
            miss_latency_ns: miss,
            miss_latency_ns_ci95: Some(ci),
            verdict: Verdict::Ok,
            ..Default::default()
        }
    }

    /// A step smaller than the one before it (the first sets of the next
    /// level overflowing): noisy; the first level and a taller third stay;
    /// a stated figure, or intervals that overlap, leave it alone.
    #[test]
    fn a_step_smaller_than_the_one_before_is_noisy() {
        let three = || {
            vec![
                level(1, 2.63, [2.60, 2.66]),
                level(2, 1.94, [1.90, 2.00]),
                level(3, 21.45, [21.0, 21.9]),
            ]
        };
        let mut lv = three();
        let mut notes = Vec::new();
        steps_shrink(&mut lv, &[], &mut notes);
        let verdicts: Vec<Verdict> = lv.iter().map(|l| l.verdict).collect();
        assert_eq!(verdicts, [Verdict::Ok, Verdict::Noisy, Verdict::Ok]);
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].code, "tlb.l2-step-shrinks");
        let mut lv = three();
        steps_shrink(&mut lv, &[(2, 4096)], &mut Vec::new());
        assert_eq!(lv[1].verdict, Verdict::Ok);
        let mut lv = three();
        lv[1].miss_latency_ns_ci95 = Some([1.5, 2.7]);
        steps_shrink(&mut lv, &[], &mut Vec::new());
        assert_eq!(lv[1].verdict, Verdict::Ok);
    }

    /// Two steps of one height: both noisy; a third, far taller, stays.
    #[test]
    fn two_steps_of_one_height_are_noisy() {
        let mut lv = vec![
            level(1, 1.19, [1.188, 1.190]),
            level(2, 1.25, [0.88, 1.49]),
            level(3, 21.4, [20.9, 21.8]),
        ];
        let mut notes = Vec::new();
        steps_agree(&mut lv, &[], &mut notes);
        assert_eq!(lv[0].verdict, Verdict::Noisy);
        assert_eq!(lv[1].verdict, Verdict::Noisy);
        assert_eq!(lv[2].verdict, Verdict::Ok);
        assert!(notes.iter().any(|n| n.code == "tlb.l2-steps-agree"));
        // A stated figure confirming the first keeps it ok.
        let mut lv = vec![level(1, 1.19, [1.1, 1.3]), level(2, 1.25, [0.88, 1.49])];
        steps_agree(&mut lv, &[(1, 4096)], &mut Vec::new());
        assert_eq!(lv[0].verdict, Verdict::Ok);
        assert_eq!(lv[1].verdict, Verdict::Noisy);
        // Steps apart: nothing.
        let mut lv = vec![level(1, 2.5, [2.3, 2.7]), level(2, 25.0, [24.0, 26.0])];
        steps_agree(&mut lv, &[], &mut Vec::new());
        assert!(lv.iter().all(|l| l.verdict == Verdict::Ok));
    }

    fn pts(ys: &[f64]) -> Vec<f64> {
        ys.to_vec()
    }

    fn plateau(first: usize, last: usize, level: f64, bounded: bool) -> Plateau {
        Plateau {
            bounded,
            ..Plateau::bare(first, last, level)
        }
    }

    /// A first level's linear step from 64 (quarter point 69.6) agrees
    /// with its foot; one whose quarter point a second rise took to 77
    /// (10% point 69) does not.
    #[test]
    fn a_first_level_read_past_its_foot_is_noisy() {
        let mut l = TlbLevel {
            level: 1,
            page_bytes: 4096,
            entries: 70,
            entries_low: Some(66),
            verdict: Verdict::Ok,
            ..Default::default()
        };
        assert!((first_level_foot(&l).unwrap() - 63.3).abs() < 0.5);
        assert!(foot_note(&l, false, 0.125).is_none());
        l.entries = 77;
        l.entries_low = Some(69);
        let n = foot_note(&l, false, 0.125).unwrap();
        assert_eq!(n.code, "tlb.l1-foot");
        assert!(foot_note(&l, true, 0.125).is_none());
    }

    /// A curve at zero for its first points under a first plateau at +8
    /// is raised; one whose first plateau is its zero is not.
    #[test]
    fn a_first_plateau_above_zero_is_raised() {
        let d = pts(&[0.0, 0.0, 0.0, 8.0, 8.0, 8.0, 8.0, 8.0, 8.0]);
        let n = first_plateau_raised(&d, &[plateau(0, 8, 8.0, false)], 1.4, "cycles").unwrap();
        assert_eq!(n.code, "tlb.first-plateau-raised");
        assert!(first_plateau_raised(
            &d,
            &[plateau(0, 2, 0.0, true), plateau(3, 8, 8.0, false)],
            1.4,
            "cycles"
        )
        .is_none());
    }

    /// A step whose top falls back (3.9 → 2.3) overshoots; a flat top
    /// does not.
    #[test]
    fn a_step_that_peaks_and_falls_back_overshoots() {
        let falling = pts(&[
            0.0, 0.0, 0.0, 0.0, 1.5, 3.9, 3.6, 3.3, 3.0, 2.8, 2.6, 2.4, 2.3, 2.3,
        ]);
        let pl = [plateau(0, 3, 0.0, true), plateau(5, 13, 2.7, false)];
        assert_eq!(overshoots(&falling, &pl), vec![0]);
        let flat = pts(&[
            0.0, 0.0, 0.0, 0.0, 1.5, 2.7, 2.8, 2.6, 2.7, 2.7, 2.6, 2.8, 2.7, 2.7,
        ]);
        assert!(overshoots(&flat, &pl).is_empty());
    }
}
