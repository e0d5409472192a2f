//! Side-by-side comparison of two profiles, as The Calibrator's hardware
//! database let one set machines next to each other: every figure both runs
//! measured, matched by meaning (cache level with cache level, TLB level and
//! page size with the same, context-switch ring size with the same), and
//! the ratio B / A. Pure functions: analysis decides which figures pair up,
//! their ratios and which side is better; the CLI's text table, its JSON and
//! the HTML report (`hwcal_report`) all render the same [`Comparison`].
//!
//! A comparison must not mislead (issue 16): cache levels are paired by
//! what they are, not by their number (a busy run can show a spurious
//! extra level, and "L3 against L3" then sets a 4 MiB artefact against a
//! 32 MiB cache); bandwidth is compared at equal thread counts only; and a
//! figure noisy on either side gets no better/worse verdict.

use hwcal_model::Profile;

mod batch;
mod levels;
mod noisy;
mod row;
mod sections;

pub use levels::{match_levels, LevelMatch, SAME_CACHE_FACTOR};
pub use row::{Comparison, Mark, Row, SIGNIFICANCE, VERDICT_THRESHOLD};

use noisy::noisy_notes;
use sections::{
    compare_bandwidth, compare_caches, compare_clock, compare_ctx, compare_figures, compare_io, compare_mem,
    compare_memory, compare_tlbs,
};

/// Compare two profiles: rows for every section both hold.
pub fn compare(a: &Profile, b: &Profile) -> Comparison {
    let mut c = Comparison::default();
    // Every one-sided note comes first, in section order, before any
    // section's own notes.
    let n = &mut c.notes;
    let clock = both(n, "clock", &a.clock, &b.clock);
    let caches = both(n, "caches", &a.caches, &b.caches);
    let memory = both(n, "memory", &a.memory, &b.memory);
    let tlbs = both(n, "TLBs", &a.tlbs, &b.tlbs);
    let mem = both(n, "mem", &a.mem, &b.mem);
    let bw = both(n, "bandwidth", &a.bandwidth, &b.bandwidth);
    let ctx = both(n, "context switch", &a.context_switch, &b.context_switch);
    let io = both(n, "io", &a.io, &b.io);

    if let Some((x, y)) = clock {
        compare_clock(&mut c, x, y);
    }
    if let Some((x, y)) = caches {
        compare_caches(&mut c, x, y);
    }
    if let Some((x, y)) = memory {
        compare_memory(&mut c, x, y);
    }
    if let Some((x, y)) = tlbs {
        compare_tlbs(&mut c, x, y);
    }
    if let Some((x, y)) = mem {
        compare_mem(&mut c, x, y);
    }
    if let Some((x, y)) = bw {
        compare_bandwidth(&mut c, x, y);
    }
    if let Some((x, y)) = ctx {
        compare_ctx(&mut c, x, y);
    }
    if let Some((x, y)) = io {
        compare_io(&mut c, x, y);
    }
    compare_figures(&mut c, &a.figures, &b.figures);
    noisy_notes(&mut c.notes, a, b);
    let unjudged = c
        .rows
        .iter()
        .filter(|r| r.ratio().is_some() && !r.noisy && r.better != hwcal_model::Direction::Neither)
        .filter(|r| r.overlap().is_none())
        .count();
    if unjudged > 0 {
        c.notes.push(format!(
            "{unjudged} figure(s) lack a 95% interval on one side or both and get no better/worse: \
             one run of each cannot tell a change from its own scatter (compare batches of runs, \
             `hwcal run --repeat N`, to judge them by a rank test)"
        ));
    }
    c
}

/// Compare batch `a` with batch `b` (each one or more runs of a machine;
/// `hwcal run --repeat N`): two single runs as [`compare`] does, otherwise
/// each figure's medians, the runs behind them and the Mann–Whitney U
/// test over the runs (module `batch`).
pub fn compare_batches(a: &[Profile], b: &[Profile]) -> Comparison {
    batch::gather(a, b, compare)
}

/// Both sides of a section when both hold it; when only one does, a note
/// naming that side (a figure measured once has nothing to be compared with).
fn both<'p, T>(
    notes: &mut Vec<String>,
    name: &str,
    a: &'p Option<T>,
    b: &'p Option<T>,
) -> Option<(&'p T, &'p T)> {
    let (ha, hb) = (a.is_some(), b.is_some());
    if ha != hb {
        notes.push(format!(
            "{name}: only {} has this section; not compared",
            if ha { "A" } else { "B" }
        ));
    }
    a.as_ref().zip(b.as_ref())
}

#[cfg(test)]
mod tests;
