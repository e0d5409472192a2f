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

pub use batch::runs_row;
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

/// The one comparison rule every view uses (`hwcal db compare`, `hwcal
/// report A B`, the site's pages): the runs side by side and, where each
/// side is one run of the same machine, judged against that machine's
/// history ([`with_history`]; empty where the views have none, as for
/// two machines).
pub fn judged(a: &[Profile], b: &[Profile], history: &[Profile]) -> Comparison {
    let mut c = compare_batches(a, b);
    if a.len() == 1 && b.len() == 1 {
        with_history(&mut c, history);
    }
    c
}

/// Two runs of one machine judged against its history: each row gets the
/// figure's [`usual_range`] over `history` (that machine's stored runs; at
/// least [`MIN_HISTORY`] of them hold the figure), and A and B both inside
/// it is no significant change ([`Row::mark`]). On a shared machine a run's
/// own interval is narrower than the scatter between runs (pages drawn
/// anew, vCPUs placed on other cores, a neighbour's load), and only the
/// machine's past shows that scatter.
pub fn with_history(c: &mut Comparison, history: &[Profile]) {
    if history.len() < MIN_HISTORY {
        return;
    }
    let mut seen: Vec<(&'static str, String, hwcal_model::FigureUnit, Vec<f64>)> = Vec::new();
    for h in history {
        // Only runs whose figure was itself `ok` say what is usual: a noisy
        // one (a busy host's memory at 610 ns) would widen the range until
        // no change stands out of it.
        for r in compare(h, h).rows.into_iter().filter(|r| !r.noisy) {
            let Some(v) = r.a.filter(|v| v.is_finite()) else {
                continue;
            };
            match seen
                .iter_mut()
                .find(|s| s.0 == r.section && s.1 == r.figure && s.2 == r.unit)
            {
                Some(s) => s.3.push(v),
                None => seen.push((r.section, r.figure, r.unit, vec![v])),
            }
        }
    }
    let mut banded = 0;
    for row in &mut c.rows {
        let Some(s) = seen
            .iter()
            .find(|s| s.0 == row.section && s.1 == row.figure && s.2 == row.unit)
        else {
            continue;
        };
        if s.3.len() >= MIN_HISTORY {
            row.usual = Some((usual_range(&s.3), s.3.len()));
            banded += 1;
        }
    }
    if banded > 0 {
        c.notes.push(format!(
            "history: A and B are runs of one machine; a figure inside its usual range over {} other \
             stored runs (its quartiles ± 3 interquartile ranges, at least ± 5% of its median) is run-to-run variation, not a change ('~')",
            history.len()
        ));
    }
}

/// The range a machine's next run of a figure is expected in, from its
/// past runs: Tukey's outer fences, the quartiles widened by 3
/// interquartile ranges (what his box plot calls "far out"; the inner
/// fences at 1.5 ranges mark a normal figure's run 0.7% of the time, and
/// on ten idle runs of a Zen 4 guest let 5.6% of pairwise comparisons
/// claim a change against 3.9% at the outer), never narrower than
/// ± [`VERDICT_THRESHOLD`] of the median (a change no comparison would
/// call is not one). Quartiles, not a standard deviation about the median:
/// a figure that takes two values run to run (two vCPUs placed on one
/// core complex or on two, c2c 24 or 33 ns) spreads its quartiles over
/// both, where the median absolute deviation sees only the commoner one
/// and calls every run of the other a change; and the outlier the range
/// is meant to catch moves neither. The one definition: comparisons of
/// two runs of a machine and the site's history both use it.
pub fn usual_range(values: &[f64]) -> [f64; 2] {
    let med = hwcal_stats::median(values);
    let (q1, q3) = (
        hwcal_stats::quantile(values, 0.25),
        hwcal_stats::quantile(values, 0.75),
    );
    let fence = 3.0 * (q3 - q1);
    let floor = VERDICT_THRESHOLD * med.abs();
    [(q1 - fence).min(med - floor), (q3 + fence).max(med + floor)]
}

/// Runs of a machine needed before its range says what is usual.
pub const MIN_HISTORY: usize = 3;

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
