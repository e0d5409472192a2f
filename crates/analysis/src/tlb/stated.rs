//! The TLB levels held to what the machine states: the stated figure's
//! plausibility, the half-miss point of a hashed set-associative level
//! with its stated ways, a first level whose step spreads too wide, and a
//! soft edge — each a cross-check a level must pass to be `ok`.

use hwcal_model::note::analysis as note;
use hwcal_model::{Note, Profile, TlbLevel, Verdict};

/// Where a second-level (set-associative, hashed) TLB's accesses are half
/// missed, as a fraction of its entries, when its stated `ways` are known:
/// a cyclic walk over N pages hashes them into E/W sets of W ways, each
/// set drawing a Poisson(W·N/E) share of the pages, and a set that drew
/// more than W misses every one of its pages (LRU on a cyclic walk). The
/// share of pages missed is then P(Poisson(W·x) ≥ W) at x = N/E (a
/// size-biased draw: a page sits in a set of k pages with weight k), and
/// it is one half at about x = 1 − 1/(3W): 0.84 with 2 ways, 0.92 with 4,
/// 0.98 with 16. A model of the TLB, not a threshold fitted to a machine.
pub fn half_miss_fraction(ways: u64) -> f64 {
    let w = ways.max(1);
    let missed = |x: f64| {
        let lambda = w as f64 * x;
        // P(Poisson(lambda) < w), summed term by term.
        let mut term = (-lambda).exp();
        let mut below = 0.0;
        for k in 0..w {
            below += term;
            term *= lambda / (k + 1) as f64;
        }
        1.0 - below
    };
    let (mut lo, mut hi) = (0.01, 2.0);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if missed(mid) < 0.5 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// How far a measured TLB level may sit from its stated size and still
/// agree with it (the cache sizes' tolerance: the refined sweep resolves
/// a step to a few percent).
pub const NOMINAL_TOLERANCE: f64 = 0.125;

/// Attach the nominal size (CPUID, or the per-core table) to each measured
/// level, correct a second level's half-miss point for its stated ways,
/// and note where the two disagree by more than [`NOMINAL_TOLERANCE`]: a
/// plausible stated figure the measured one contradicts leaves the level
/// noisy (which of the two is right, one run cannot tell). Returns the
/// levels (level, page size) a plausible stated figure confirms.
pub(super) fn nominal_cross_check(
    p: &Profile,
    (levels, notes): (&mut [TlbLevel], &mut Vec<Note>),
) -> Vec<(u32, u64)> {
    let mut confirmed = Vec::new();
    let Some(m) = &p.machine else {
        return confirmed;
    };
    let below: Vec<(u32, u64, u64)> = levels
        .iter()
        .map(|l| (l.level, l.page_bytes, l.entries))
        .collect();
    for l in levels.iter_mut() {
        let Some(n) = m
            .nominal_tlbs
            .iter()
            .find(|t| t.level == l.level && t.page_bytes == l.page_bytes)
        else {
            continue;
        };
        l.nominal_entries = Some(n.entries);
        let source = if n.source == "table" {
            "the per-core table"
        } else {
            "CPUID"
        };
        let pages = if l.page_bytes >= 2 << 20 { "2 MiB" } else { "4 KiB" };
        // A second-level TLB is several times the first (64-96 entries
        // before 1.5-4k behind them on every core): a stated figure not
        // even twice the level below, measured, is not this core's. A
        // hypervisor's CPUID leaves say such things (a Zen 5 guest's leaf
        // 0x80000006 reads 128 for a 4096-entry L2 DTLB).
        let under = below
            .iter()
            .find(|&&(lv, pg, _)| lv + 1 == l.level && pg == l.page_bytes)
            .map(|&(_, _, e)| e)
            .filter(|&e| n.entries < 2 * e && l.entries > n.entries);
        // Levels past the first are read where half the accesses miss
        // (`levels`); with the stated ways of a plausible stated level, the
        // half-miss point is taken back to the entries by the hashed
        // TLB's overflow model.
        if let (None, Some(w), true) = (under, n.ways.filter(|&w| w > 0), l.level >= 2) {
            let f = half_miss_fraction(w);
            let read = l.entries;
            l.entries = (read as f64 / f).round() as u64;
            l.entries_ci95 = l
                .entries_ci95
                .map(|[lo, hi]| [(lo as f64 / f).round() as u64, (hi as f64 / f).round() as u64]);
            notes.push(Note {
                severity: hwcal_model::Severity::Info,
                ..note(
                    "tlb",
                    &format!("l{}-ways-corrected", l.level),
                    format!(
                        "tlb: level {} ({pages} pages): half the accesses missed at {read} pages; {source} states \
                         {w} ways, and a hashed {w}-way TLB is half missed at {:.3} of its entries (its fullest \
                         sets overflow first), so it holds {} entries",
                        l.level, f, l.entries
                    ),
                )
            });
        }
        let r = l.entries as f64 / n.entries as f64;
        let what = format!(
            "l{}-{}-nominal-disagree",
            l.level,
            if l.page_bytes >= 2 << 20 { "2m" } else { "4k" }
        );
        let text = if let Some(e) = under {
            format!(
                "tlb: level {} measured {} entries; {source} states {} (as the hypervisor or firmware \
                 reports it), not even twice the {e} entries measured for the level below, which no \
                 second-level TLB is: the stated figure is not this core's, the measured one stands",
                l.level, l.entries, n.entries
            )
        } else if !(0.5..=2.0).contains(&r) {
            // More than twice or under half the stated level: the step
            // measured is not that level (a level's step was not seen and
            // the next one took its number, or a step that is no level
            // was), so neither figure is given as this level's.
            l.verdict = Verdict::Noisy;
            format!(
                "tlb: level {} ({pages} pages) measured {} entries, {source} says {} ({:+.0}%): more than a \
                 factor of two apart, the step measured is not that level (a level's step missed, or a \
                 step that is no TLB's); the level is marked noisy",
                l.level,
                l.entries,
                n.entries,
                (r - 1.0) * 100.0
            )
        } else if (r - 1.0).abs() > NOMINAL_TOLERANCE {
            // Two figures for one level, apart by more than a size is
            // measured to: one run cannot tell which is right, so the
            // measured one is not given as right.
            l.verdict = Verdict::Noisy;
            format!(
                "tlb: level {} ({pages} pages) measured {} entries, {source} says {} ({:+.0}%): the level is \
                 marked noisy (a plausible stated figure the measurement contradicts)",
                l.level,
                l.entries,
                n.entries,
                (r - 1.0) * 100.0
            )
        } else {
            confirmed.push((l.level, l.page_bytes));
            continue;
        };
        notes.push(note("tlb", &what, text));
    }
    confirmed
}

/// How far a first-level TLB's step may spread, from 10% to 75% of its
/// accesses missed, as the ratio of the two page counts: a first level is
/// small and fully (or highly) associative, so it starts to miss exactly
/// when the pages outgrow it and misses them all some 15–40% past its size
/// (Golden Cove's and Zen's L1 DTLBs, see [`levels`]): its whole step
/// lies within a factor of 1.5. Twice that spread is no one first level's
/// step.
pub const FIRST_LEVEL_MAX_SPREAD: f64 = 2.0;

/// The note for a first level whose step spreads over more than
/// [`FIRST_LEVEL_MAX_SPREAD`] with no plausible stated figure to confirm
/// it: two levels whose steps ran together (an L1 DTLB whose misses cost
/// little before a second level only a few times larger: a simulated
/// 64-entry L1 and 512-entry L2 read as one level of 340 entries from 222
/// to 621 pages, `ok`, the L2's figure 34% short).
pub(super) fn first_level_too_wide(l: &TlbLevel, confirmed: bool) -> Option<Note> {
    let (lo, hi) = (l.entries_low?, l.entries_high?);
    if confirmed || lo == 0 || (hi as f64) <= FIRST_LEVEL_MAX_SPREAD * lo as f64 {
        return None;
    }
    Some(note(
        "tlb",
        "l1-spread",
        format!(
            "tlb: level 1 ({} pages): its step runs from {lo} to {hi} pages, more than {FIRST_LEVEL_MAX_SPREAD}x: a \
             first-level TLB (small, fully associative) misses all its pages soon past its size, so this is \
             no one level's step (two levels run together?), and no plausible stated figure confirms its {} \
             entries: the level is marked noisy",
            if l.page_bytes >= 2 << 20 { "2 MiB" } else { "base" },
            l.entries
        ),
    ))
}

/// The note for a level whose step had not reached three quarters of the
/// way up by the largest page count measured (`top`): a soft edge (a
/// set-associative TLB with a replacement that is not LRU, and page walks
/// that slow as their own loads spill out of the caches) whose half-way
/// point depends on how far the sweep went. Zen 5's L2 DTLB (4096 entries)
/// rises from ~2500 to past 8192 pages and reads 4700–5000 "entries"
/// (`tests/data/zen5-run-*.json`, `zen5_runs_read_three_levels_and_one_memory_latency`):
/// such a figure is noisy unless a plausible stated figure agrees (`agrees`).
pub(super) fn soft_edge_note(l: &TlbLevel, top: f64, agrees: bool) -> Option<Note> {
    if l.entries_high.is_some() || l.level < 2 {
        return None;
    }
    let start = l.entries_low.map_or("?".into(), |v| v.to_string());
    Some(note(
        "tlb",
        &format!("l{}-soft-edge", l.level),
        format!(
            "tlb: level {} ({} pages): a soft step, starting near {start} pages and still rising at {top:.0} \
             pages, the largest count measured; its {} entries are where the curve is half-way to its top \
             there, and its end (and so the full miss latency) was not measured: take the start and the \
             half-way point as the range the size lies in; {}",
            l.level,
            if l.page_bytes >= 2 << 20 { "2 MiB" } else { "4 KiB" },
            l.entries,
            if agrees {
                "the stated figure agrees with it"
            } else {
                "no plausible stated figure agrees with it, so the level is marked noisy"
            }
        ),
    ))
}
