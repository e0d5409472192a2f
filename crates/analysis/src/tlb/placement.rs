//! Whether a TLB level's step is a structure's size or where a buffer's
//! pages fell: the same walk over a second buffer of other pages.
//!
//! A set-associative TLB level misses first in its fullest sets, and which
//! sets a buffer's pages fill depends on the pages. Where one set draws
//! more pages than it has ways well short of the level's entries, the walk
//! steps there: part of the pages miss, the curve rises, and the rise looks
//! like a level of its own (a simulated 512-entry, 8-way L2 TLB stepped at
//! 158 pages, +2.4 ns, and read as a second TLB level of 158 entries,
//! `ok`, beside a third of 508: generated seed 13, #520). A structure's
//! size does not depend on which pages fill it. So the walk is taken again
//! over a second buffer (`tlb.4k.retest`, the runner's `retest_points`)
//! at the page counts just past each later level's half-miss point, against
//! the same baseline: a level whose step the second buffer does not
//! reproduce — less than half the first's rise above the plateau before
//! it, over the same page counts — was made by the first buffer's pages,
//! and is noisy unless a plausible stated figure confirms it.

use crate::levels::Plateau;
use crate::stats::median;
use hwcal_model::note::analysis as note;
use hwcal_model::{Note, TlbLevel, Verdict};

/// A difference curve: (pages, ns over the baseline) per point.
type Diff = [(f64, f64)];

/// Mean of `d`'s differences (ns) at the page counts `at` (those it has).
fn mean_at(d: &Diff, at: &[f64]) -> Option<f64> {
    let v: Vec<f64> = at
        .iter()
        .filter_map(|&x| d.iter().find(|q| (q.0 / x - 1.0).abs() < 1e-4))
        .map(|q| q.1)
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Mark noisy each base-page level past the first (`page` bytes) whose
/// step the retest `again` (differences over the second buffer) does not
/// reproduce; `small` and `pl` are the first buffer's differences and
/// plateaus, `confirmed` the levels a plausible stated figure confirms.
pub(super) fn unreproduced(
    levels: &mut [TlbLevel],
    (small, pl, again): (&Diff, &[Plateau], &Diff),
    page: u64,
    confirmed: &[(u32, u64)],
) -> Vec<Note> {
    let mut notes = Vec::new();
    for l in levels.iter_mut() {
        if l.page_bytes != page
            || l.level < 2
            || l.verdict != Verdict::Ok
            || confirmed.contains(&(l.level, page))
        {
            continue;
        }
        let Some(before) = pl.get(l.level as usize - 1) else {
            continue;
        };
        let flat: Vec<f64> = small
            .get(before.first..=before.last.min(small.len().saturating_sub(1)))
            .unwrap_or(&[])
            .iter()
            .map(|q| q.1)
            .collect();
        if flat.is_empty() {
            continue;
        }
        let base = median(&flat);
        let e = l.entries as f64;
        let at: Vec<f64> = again
            .iter()
            .map(|q| q.0)
            .filter(|&x| x > e && x <= 2.0 * e)
            .collect();
        let (Some(first), Some(second)) = (mean_at(small, &at), mean_at(again, &at)) else {
            continue;
        };
        let (rise, again_rise) = (first - base, second - base);
        if rise <= 0.0 || again_rise >= rise / 2.0 {
            continue;
        }
        l.verdict = Verdict::Noisy;
        notes.push(note(
            "tlb",
            &format!("l{}-placement", l.level),
            format!(
                "tlb: level {} (4 KiB pages, {} entries): over a second buffer of other pages its step did not \
                 come back (from {:.0} to {:.0} pages it rose {:.2} ns over the plateau before it, the second \
                 buffer {:.2} ns): where the first buffer's pages fell made it (a set-associative level's \
                 fullest sets), not a structure's size; no plausible stated figure confirms it: noisy",
                l.level,
                l.entries,
                at.first().copied().unwrap_or(e),
                at.last().copied().unwrap_or(e),
                rise,
                again_rise
            ),
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(pts: &[(f64, f64)]) -> Vec<(f64, f64)> {
        pts.to_vec()
    }

    fn level(level: u32, entries: u64) -> TlbLevel {
        TlbLevel {
            level,
            page_bytes: 4096,
            entries,
            verdict: Verdict::Ok,
            ..Default::default()
        }
    }

    /// The first buffer steps at 158 pages (+2.4 ns over its 1.95 ns
    /// plateau); the second reads the plateau there: no level.
    #[test]
    fn a_step_the_second_buffer_does_not_show_is_noisy() {
        let small = d(&[
            (64.0, 1.95),
            (128.0, 1.95),
            (155.0, 1.95),
            (164.0, 4.4),
            (200.0, 4.3),
            (300.0, 4.2),
        ]);
        let pl = [
            Plateau::bare(0, 0, 0.0),
            Plateau::bare(0, 2, 1.95),
            Plateau::bare(3, 5, 4.3),
        ];
        let again = d(&[(164.0, 1.96), (200.0, 1.97), (300.0, 2.3)]);
        let mut lv = [level(1, 48), level(2, 158)];
        let notes = unreproduced(&mut lv, (&small, &pl, &again), 4096, &[]);
        assert_eq!(lv[1].verdict, Verdict::Noisy);
        assert_eq!(lv[0].verdict, Verdict::Ok);
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].code, "tlb.l2-placement");
        // The same step over the second buffer: it stands.
        let again = d(&[(164.0, 4.3), (200.0, 4.35), (300.0, 4.1)]);
        let mut lv = [level(1, 48), level(2, 158)];
        assert!(unreproduced(&mut lv, (&small, &pl, &again), 4096, &[]).is_empty());
        assert_eq!(lv[1].verdict, Verdict::Ok);
        // A level a stated figure confirms is not second-guessed.
        let again = d(&[(164.0, 1.96), (200.0, 1.97), (300.0, 2.3)]);
        let mut lv = [level(1, 48), level(2, 158)];
        assert!(unreproduced(&mut lv, (&small, &pl, &again), 4096, &[(2, 4096)]).is_empty());
    }
}
