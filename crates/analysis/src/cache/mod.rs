//! From the raw curves of `hwcal cache` to cache levels, memory latency and
//! memory-level parallelism (The Calibrator's figures, lmbench `par_mem`).
//!
//! Raw curves read here (ids):
//! * `cache.latency` — ns per load of a random dependent chase vs working
//!   set (bytes), clock per sample;
//! * `cache.gap` — the same chase with an idle gap of dependent adds after
//!   each load, at a few sizes: the first point is L1-resident and
//!   calibrates the gap's cost, the others sit in the middle of a plateau;
//! * `cache.line.{1,2}.{fwd,bwd}` — ns per dependent pair vs offset `d`,
//!   with a footprint that misses L1 (test 1: L1's line) or every cache
//!   (test 2: the line of the levels below memory);
//! * `cache.mlp` — ns per load with k independent chases (x = k);
//! * `cache.huge_fraction` — share of the chase buffer backed by huge pages.
//!
//! Figures, in the Calibrator's meaning: a level's *latency* is its plateau;
//! its *replace time* is plateau(i+1) − plateau(i) with misses back to back
//! (the plain chase); its *miss latency* is the same difference with an
//! idle memory system between misses (the gap chase).
//!
//! This module holds the entry points ([`analyze`], [`analyze_curves`],
//! [`analyze_curves_tlb`], [`analyze_sweep`]) and the result
//! ([`CacheAnalysis`]); the steps live in the submodules:
//! * `codes` — the note catalogue, raw curve ids, the size formatter;
//! * `sweep` — the latency curve as the analysis reads it, and the busy check;
//! * `tlb_share` — the TLB's share of a chase on base pages;
//! * `edge` — a level's edge: held capacity and the page-colour fit;
//! * `plateaus` — the curve's plateaus and where each ends;
//! * `levels` — cache levels from plateaus, with their notes;
//! * `confirm` — whether a level's size has a second figure behind it;
//! * `envelope` — whether the stated size and ways can make a level's edge at all;
//! * `slope` — whether a plateau is flat enough for its level to be a latency;
//! * `steps` — whether a level's step has two level plateaus behind it;
//! * `memory` — memory latency and memory-level parallelism;
//! * `intervals` — the figures' 95% intervals by a residual bootstrap;
//! * `twice` — whether a level's latency, read twice (plateau, gap point), agrees.

mod capacity;
mod codes;
mod cold;
mod confirm;
mod edge;
mod envelope;
mod intervals;
mod levels;
mod memory;
mod plateaus;
pub mod sets;
mod slope;
mod steps;
mod sweep;
mod tlb_share;
mod twice;

#[cfg(test)]
mod tests;

pub use crate::neighbours::{neighbour_note, NEIGHBOUR_BUSY_LIMIT};
pub use codes::{cold_id, flush_id, line_id, note_patterns, NOTE_CODES};
pub use edge::{held_capacity, placement_mean};
pub use levels::{whole_cycle_note, NOMINAL_SIZE_TOLERANCE, WHOLE_CYCLE_TOLERANCE};
pub use memory::{judge_mlp, mlp_points, MEMORY_RISE, MIN_MEMORY_NS, MIN_MEMORY_STEP, SWEEP_SOURCE};
pub(crate) use plateaus::nominal_sizes;
pub use sweep::busy_note;
pub use tlb_share::TlbShare;

use crate::levels::Plateau;
use crate::line::line_size;
use edge::colour_points;
use hwcal_model::note::analysis as note;
use hwcal_model::{CacheLevel, MachineInfo, MemoryLatency, Note, Profile, RawCurve, Verdict};
use intervals::{intervals, Intervals};
use levels::{
    cache_level, cache_reach, idle_points, level_in_doubt, level_notes, line_nominal_note, miss_disagrees,
    missing_level_notes, no_memory_note, private_excess, private_shortfall, step_to_memory, step_unsettled,
    unfound_level_notes, unstated_levels, whole_lines,
};
use memory::{ends_in_memory, memory_latency};
use plateaus::plateaus;
use sweep::Sweep;
use tlb_share::{huge_page_note, tlb_note};

pub use hwcal_model::curve::{
    CACHE_COLOUR as COLOUR, CACHE_GAP as GAP, CACHE_HUGE_FRACTION as HUGE, CACHE_LATENCY as LATENCY,
    CACHE_MLP as MLP, CACHE_NEIGHBOURS as NEIGHBOURS,
};

/// Everything the analysis found.
#[derive(Debug, Clone, Default)]
pub struct CacheAnalysis {
    pub levels: Vec<CacheLevel>,
    pub memory: Option<MemoryLatency>,
    /// Coded notes (see [`NOTE_CODES`]).
    pub notes: Vec<Note>,
    /// Plateaus of the latency curve (for plots).
    pub plateaus: Vec<Plateau>,
}

/// The share of the sweep's buffer on huge pages the TLB saw: point x = 0
/// of `cache.huge_fraction` (when present) says whether the TLB saw them,
/// and a failed check counts as no huge pages.
pub(crate) fn huge_fraction(p: &Profile) -> Option<f64> {
    p.raw_curve(HUGE).and_then(|c| {
        let tlb_ok = !c.points.iter().any(|q| q.x <= 0.0 && q.y < 0.5);
        c.points
            .iter()
            .find(|q| q.x > 0.0)
            .map(|q| if tlb_ok { q.y } else { 0.0 })
    })
}

/// Analyse the cache curves of a profile. `None` if it has no latency curve.
pub fn analyze(p: &Profile) -> Option<CacheAnalysis> {
    let curve = p.raw_curve(LATENCY)?;
    let machine = p.machine.clone().unwrap_or_default();
    let tlb = TlbShare::from_profile(p);
    let side = CompanionCurves {
        tlb: tlb.as_ref(),
        colour: p.raw_curve(COLOUR),
        gap: p.raw_curve(GAP),
        lines: [1, 2].map(|t| (p.raw_curve(&line_id(t, true)), p.raw_curve(&line_id(t, false)))),
        mlp: p.raw_curve(MLP),
        cold: p
            .raw
            .iter()
            .filter(|c| c.id.starts_with(hwcal_model::curve::CACHE_COLD_PREFIX))
            .collect(),
        sets: sets::Structure::from_profile(p),
    };
    let mut a = analyze_with(curve, &side, huge_fraction(p), &machine, true);
    flush_lines(p, &mut a);
    if let Some(n) = neighbour_note(p, NEIGHBOURS, "cache") {
        mark_noisy(&mut a, n);
    }
    Some(a)
}

/// Each level's line from its flush-granule curve where there is one (a
/// method prefetchers cannot fool); the dependent pairs stay as a
/// cross-check, and where neither gives a line a note says why.
fn flush_lines(p: &Profile, a: &mut CacheAnalysis) {
    // Where the pair test read more than the flush granule at one level,
    // prefetchers fooled it in this run: a line only it measured elsewhere
    // is not stated (Zen 5's L3 read 256 B by pairs, 64 B by its CPUID).
    let mut overread: Option<(u32, u64, u64)> = None;
    for l in &mut a.levels {
        let pairs = l.line_bytes;
        let flush = p
            .raw_curve(&flush_id(l.level))
            .and_then(crate::line::line_from_flush);
        match (flush, pairs) {
            (Some(f), _) => {
                l.line_bytes = Some(f);
                l.line_method = Some("clflush".into());
                let stale = format!("cache.l{}-line-nominal-disagree", l.level);
                a.notes.retain(|n| n.code != stale);
                if let Some(n) = l.nominal_line_bytes.filter(|&n| n != f) {
                    a.notes.push(line_nominal_note(l.level, f, n));
                }
                if let Some(q) = pairs.filter(|&q| q != f) {
                    if q > f {
                        overread.get_or_insert((l.level, q, f));
                    }
                    a.notes.push(note(
                        "cache",
                        &format!("l{}-line-prefetched", l.level),
                        format!(
                            "L{}: dependent pairs of loads read {q} B lines, the flush granule {f} B: \
                         prefetchers fetched neighbouring lines with the one asked for",
                            l.level
                        ),
                    ));
                }
            }
            (None, Some(_)) => l.line_method = Some("pairs".into()),
            (None, None) => a.notes.push(note(
                "cache",
                &format!("l{}-line-unmeasured", l.level),
                format!(
                    "L{}: line size not measured ({})",
                    l.level,
                    if p.raw_curve(&flush_id(l.level)).is_some() {
                        "the flush test saw no clear contrast between a flushed line and a cached one"
                    } else {
                        "no flush test in this profile, and the pair test saw no clear miss"
                    }
                ),
            )),
        }
    }
    // A line only the pair test measured is stated only where nothing
    // contradicts it: not where that test over-read elsewhere in this run,
    // nor where the CPU states another line and no flush test arbitrated
    // (Zen 3's L1 read 256 B by pairs, 64 B by sysfs).
    for l in a
        .levels
        .iter_mut()
        .filter(|l| l.line_method.as_deref() == Some("pairs"))
    {
        let Some(read) = l.line_bytes else { continue };
        let why = match (overread, l.nominal_line_bytes) {
            (Some((at, q, f)), _) => format!(
                "in this run that test read more than the flush granule at L{at} ({q} B against {f} B: prefetchers)"
            ),
            (None, Some(n)) if n != read => {
                format!("the CPU states {n} B, and no flush test was there to tell which is right")
            }
            _ => continue,
        };
        (l.line_bytes, l.line_method) = (None, None);
        a.notes
            .retain(|n| n.code != format!("cache.l{}-line-nominal-disagree", l.level));
        a.notes.push(note(
            "cache",
            &format!("l{}-line-unconfirmed", l.level),
            format!(
                "L{}: line size not stated: only the pair test measured it ({read} B), and {why}",
                l.level
            ),
        ));
    }
}

/// The analysis proper, on the curves themselves.
pub fn analyze_curves(
    curve: &RawCurve,
    gap: Option<&RawCurve>,
    lines: [(Option<&RawCurve>, Option<&RawCurve>); 2],
    mlp: Option<&RawCurve>,
    huge_fraction: Option<f64>,
    machine: &MachineInfo,
) -> CacheAnalysis {
    analyze_curves_tlb(curve, None, None, gap, lines, mlp, huge_fraction, machine)
}

/// As [`analyze_curves`], with the TLB's share removed from the latency
/// curve first where the chase ran on base pages as the TLB sees them, and
/// the private levels' edges over several page placements (`colour`, see
/// `edge::colour_points`) for their page-colour fit.
#[allow(clippy::too_many_arguments)]
pub fn analyze_curves_tlb(
    curve: &RawCurve,
    tlb: Option<&TlbShare>,
    colour: Option<&RawCurve>,
    gap: Option<&RawCurve>,
    lines: [(Option<&RawCurve>, Option<&RawCurve>); 2],
    mlp: Option<&RawCurve>,
    huge_fraction: Option<f64>,
    machine: &MachineInfo,
) -> CacheAnalysis {
    let side = CompanionCurves {
        tlb,
        colour,
        gap,
        lines,
        mlp,
        cold: Vec::new(),
        sets: None,
    };
    analyze_with(curve, &side, huge_fraction, machine, true)
}

/// The levels and memory of a bare latency sweep, without the figures'
/// intervals: what the cache probe asks while it decides where to measure
/// more (the bootstrap would only cost time there; the profile's figures
/// come from [`analyze`]).
pub fn analyze_sweep(curve: &RawCurve, huge_fraction: Option<f64>, machine: &MachineInfo) -> CacheAnalysis {
    analyze_with(curve, &CompanionCurves::default(), huge_fraction, machine, false)
}

/// The curves beside the latency sweep that [`analyze_curves_tlb`] reads
/// (none for a bare sweep).
#[derive(Default)]
struct CompanionCurves<'a> {
    tlb: Option<&'a TlbShare>,
    colour: Option<&'a RawCurve>,
    gap: Option<&'a RawCurve>,
    lines: [(Option<&'a RawCurve>, Option<&'a RawCurve>); 2],
    mlp: Option<&'a RawCurve>,
    /// The cold laps, a curve per level (`cache.cold.{level}`).
    cold: Vec<&'a RawCurve>,
    /// The eviction-set search's structure, or why it cannot stand.
    sets: Option<Result<sets::Structure, String>>,
}

/// [`analyze_curves_tlb`], with or without the figures' intervals.
fn analyze_with(
    curve: &RawCurve,
    side: &CompanionCurves,
    huge_fraction: Option<f64>,
    machine: &MachineInfo,
    with_intervals: bool,
) -> CacheAnalysis {
    let CompanionCurves {
        tlb,
        colour,
        gap,
        lines,
        mlp,
        ref cold,
        ref sets,
    } = *side;
    let mut out = CacheAnalysis::default();
    let huge = huge_fraction.is_some_and(|f| f >= 0.9);
    let tlb = tlb.filter(|_| !huge);
    let overshoot = tlb.and_then(|t| tlb_share::overshoot(curve, t));
    let tlb = tlb.filter(|_| overshoot.is_none());
    let mut sw = Sweep::new(curve, tlb);
    if !huge {
        sw.colour = colour_points(colour, tlb, None);
        sw.colour_draws = colour
            .and_then(|c| c.points.iter().map(|q| q.samples.len()).min())
            .unwrap_or(0);
    }
    let busy = busy_note(&sw.pts);
    // The level the eviction sets counted (on base pages only: on huge
    // pages the sweep's edge is the level's own).
    let sets = sets.as_ref().filter(|_| !huge);
    let count = match sets {
        Some(Ok(s)) => Some(s),
        _ => None,
    };
    let plateaus::Plateaus {
        pl,
        merged,
        counted: placed,
    } = plateaus(&sw, machine, !huge, busy.is_some(), count);
    out.notes.extend(merged);
    if pl.is_empty() {
        out.notes.push(note(
            "cache",
            "no-plateau",
            "cache: no latency plateau found; no levels reported",
        ));
        return out;
    }
    let last_is_memory = ends_in_memory(&pl, &sw.xs, machine);
    let n_cache = if last_is_memory { pl.len() - 1 } else { pl.len() };
    let idle = gap.map(|g| idle_points(g, &sw.pts, tlb)).unwrap_or_default();
    let line = lines.map(|(fwd, bwd)| line_size(fwd, bwd));
    let mut contradicted = None;
    // The level below an inserted one: its size as read before (`Placed`).
    let mut moved_edge: Option<(usize, f64)> = None;
    let counted = match (sets, placed) {
        (Some(Ok(s)), Some(plateaus::Placed::At(k))) => Some((k, s, false)),
        (Some(Ok(s)), Some(plateaus::Placed::Inserted(k, before))) => {
            moved_edge = Some((k - 1, before));
            Some((k, s, true))
        }
        (Some(Err(why)), _) => {
            out.notes.push(sets::unused_note(why));
            None
        }
        (_, Some(plateaus::Placed::Nowhere(why, against))) => {
            out.notes.push(match against {
                Some(k) => sets::disagree_note(k as u32 + 1, &why),
                None => sets::unused_note(&why),
            });
            contradicted = against;
            None
        }
        _ => None,
    };
    // The level the count was read for (sized by it, or contradicted by
    // it), and the count: no later level holds no more than it
    // (`sets::within_note`).
    let count_of = match sets {
        Some(Ok(s)) => counted.map(|(k, ..)| k).or(contradicted).map(|k| (k, s.size())),
        _ => None,
    };
    // Levels whose latency the cold laps gave (see `cold`).
    let mut adopted: Vec<u32> = Vec::new();
    let mut counted_levels: Vec<u32> = Vec::new();
    let mut moved: Vec<u32> = Vec::new();
    for k in 0..n_cache {
        let mut level = cache_level(&sw, &pl, k, &idle, line, machine);
        let sized = counted.filter(|(at, ..)| *at == k).map(|(_, s, new)| (s, new));
        if let Some((s, inserted)) = sized {
            // Counted, not read from a spread edge: every check below
            // (the stated size, where the curve began to climb, what the
            // levels can serve) now judges this size.
            let swept = (!inserted).then_some(level.size_bytes as f64);
            out.notes.push(sets::counted_note(level.level, s, swept));
            if inserted {
                // Its plateau is only the sweep's points below the count,
                // on a climb: their scatter does not judge the level, and
                // its latency stands only where its cold laps give it
                // (below).
                level.verdict = Verdict::Ok;
            }
            level.size_bytes = s.size().round() as u64;
            counted_levels.push(level.level);
        }
        out.notes.extend(level_notes(&pl[k], &level, machine));
        if private_shortfall(&level, &pl[k], machine) || private_excess(&level, &pl[k], machine) {
            level.verdict = Verdict::Noisy;
        }
        if let Some(n) = confirm::size_unconfirmed(&level, &pl[k], machine, !huge && sized.is_none()) {
            level.verdict = Verdict::Noisy;
            out.notes.push(n);
        }
        if let Some((_, before)) = moved_edge.filter(|(at, _)| *at == k) {
            let now = level.size_bytes as f64;
            if (now / before).ln().abs() > NOMINAL_SIZE_TOLERANCE.ln_1p() {
                level.verdict = Verdict::Noisy;
                out.notes.push(sets::edge_moved_note(level.level, now, before));
            }
        }
        if contradicted == Some(k) {
            // Two measurements of the level disagree (`plateaus::Placed`).
            level.verdict = Verdict::Noisy;
        }
        if let Some((at, c)) = count_of
            .filter(|&(at, c)| k > at && (level.size_bytes as f64) < c * (1.0 + NOMINAL_SIZE_TOLERANCE))
        {
            level.verdict = Verdict::Noisy;
            out.notes.push(sets::within_note(
                level.level,
                level.size_bytes as f64,
                (at as u32 + 1, c),
            ));
        }
        if let Some(n) = confirm::shared_excess(&level, &pl[k], machine) {
            level.verdict = Verdict::Noisy;
            out.notes.push(n);
        }
        // The laps that can read this level (the run's own numbering first).
        let fit = (
            out.levels.last().map_or(f64::INFINITY, |b| b.size_bytes as f64),
            level.size_bytes as f64,
        );
        let laps = cold
            .iter()
            .filter(|c| c.id == cold_id(level.level))
            .chain(cold.iter().filter(|c| c.id != cold_id(level.level)))
            .find_map(|c| cold::Cold::read(c, tlb, fit));
        let (lap_notes, was) = cold::judge(&mut level, laps.as_ref(), &sw, &pl, k);
        out.notes.extend(lap_notes);
        if was.is_none() && sized.is_some_and(|(_, inserted)| inserted) {
            level.verdict = Verdict::Noisy;
            out.notes.push(sets::unread_note(level.level));
        }
        if let Some(was) = was {
            adopted.push(level.level);
            // The steps beside it were read to and from the plateau; where
            // the laps moved the latency by more than half the spread a
            // level may have, they are read again (`cold::restep`).
            if (level.latency_ns / was - 1.0).abs() > slope::MAX_SPREAD / 2.0 {
                moved.push(level.level);
            }
        }
        if let Some(n) = sized.and_then(|(s, _)| sets::kept_disagrees(level.level, s, level.latency_ns)) {
            level.verdict = Verdict::Noisy;
            out.notes.push(n);
        }
        out.notes.extend(miss_disagrees(&mut level));
        // The step to a cache level's plateau (memory's has its own checks,
        // and DRAM's samples rarely agree to 0.5% on a guest).
        if level.verdict == Verdict::Ok && k + 1 < n_cache && level_in_doubt(&sw, &pl[k + 1]) {
            out.notes.push(step_unsettled(&mut level));
        }
        if k + 1 < n_cache {
            out.notes.extend(steps::step_unconfirmed(&mut level, &pl[k + 1]));
        }
        out.levels.push(level);
    }
    if let (Some((held, climbed)), Some(l1)) = (
        edge::l1_overheld(&sw, &pl, NOMINAL_SIZE_TOLERANCE),
        out.levels.first_mut(),
    ) {
        l1.verdict = Verdict::Noisy;
        out.notes.push(levels::l1_overheld_note(held, climbed));
    }
    // Where no set can overflow before the working set passes the
    // capacity — L1 (virtually indexed) on any pages, every level on huge
    // pages — no level holds more than where its curve began to climb.
    for (k, l) in out.levels.iter_mut().enumerate().filter(|(k, _)| *k == 0 || huge) {
        let size = l.size_bytes as f64;
        if let Some(began) = edge::overheld(&sw, &pl, (k, size), NOMINAL_SIZE_TOLERANCE) {
            l.verdict = Verdict::Noisy;
            out.notes.push(levels::overheld_note(l.level, size, began));
        }
    }
    for (k, l) in out.levels.iter_mut().enumerate() {
        let size = l.size_bytes as f64;
        if let Some(began) = edge::bracketed(&sw, &pl, (k, size, huge), NOMINAL_SIZE_TOLERANCE) {
            l.verdict = Verdict::Noisy;
            out.notes.push(levels::bracketed_note(l.level, size, began));
        }
    }
    if !huge {
        let mut memo = crate::colour::Memo::default();
        for (k, l) in out.levels.iter_mut().enumerate() {
            if let (Some(p), Some(next)) = (pl.get(k), pl.get(k + 1)) {
                out.notes
                    .extend(envelope::stated_contradicted(l, &sw, p, next, machine, &mut memo));
            }
        }
    }
    let sizes: Vec<f64> = out.levels.iter().map(|l| l.size_bytes as f64).collect();
    for (k, l) in out.levels.iter_mut().enumerate() {
        out.notes.extend(capacity::served_between(
            l,
            &sw,
            &pl,
            k,
            &sizes[..=k],
            NOMINAL_SIZE_TOLERANCE,
        ));
        let below = sizes[..k].iter().sum::<f64>();
        // The cold laps answer what this asks (how much of the plateau the
        // levels below served) by measurement.
        if adopted.contains(&l.level) {
            continue;
        }
        out.notes.extend(capacity::latency_unresolved(
            l,
            &sw,
            &pl,
            k,
            below,
            NOMINAL_SIZE_TOLERANCE,
        ));
    }
    out.notes
        .extend(confirm::numbering_in_doubt(&mut out.levels, machine));
    out.notes
        .extend(unstated_levels(&mut out.levels, machine, !huge, tlb));
    if last_is_memory {
        let (prev_end, reach) = cache_reach(&sw, &pl, n_cache);
        let missing = missing_level_notes(machine, n_cache, prev_end, reach);
        if !missing.is_empty() {
            if let Some(l) = out.levels.last_mut() {
                out.notes.push(step_to_memory(l));
                let fitted = pl.get(n_cache.wrapping_sub(1)).and_then(|p| p.colour);
                out.notes
                    .extend(fitted.map(|(_, held)| levels::colour_through_missing(l, held)));
            }
        } else {
            out.notes.extend(steps::last_step_unranked(&mut out.levels));
        }
        out.notes.extend(missing);
        out.memory = Some(memory_latency(&sw, pl.last().unwrap(), reach, mlp, huge_fraction));
        out.notes.extend(tlb_note(tlb, out.memory.as_ref()));
        out.notes.extend(out.memory.as_ref().and_then(memory::mlp_note));
    } else {
        out.notes.push(no_memory_note(&sw, &pl));
        out.notes.extend(unfound_level_notes(machine, &sw, &pl));
    }
    for n in busy.into_iter().chain(overshoot) {
        mark_noisy(&mut out, n);
    }
    if with_intervals {
        let stepless: Vec<bool> = out.levels.iter().map(|l| l.replace_time_ns.is_none()).collect();
        // An adopted latency's interval is its cold laps', not the plateau's.
        let kept: Vec<(u32, Option<[f64; 2]>)> = out
            .levels
            .iter()
            .filter(|l| adopted.contains(&l.level))
            .map(|l| (l.level, l.latency_ns_ci95))
            .collect();
        attach_intervals(
            &mut out,
            intervals(&sw, &pl, n_cache, colour, tlb, machine, !huge),
        );
        for (l, _) in out.levels.iter_mut().zip(stepless).filter(|(_, s)| *s) {
            l.replace_time_ns_ci95 = None;
        }
        for (level, ci) in kept {
            if let Some(l) = out.levels.iter_mut().find(|l| l.level == level) {
                l.latency_ns_ci95 = ci;
            }
        }
        // A counted size is the count's, not the sweep's scatter's.
        for l in out
            .levels
            .iter_mut()
            .filter(|l| counted_levels.contains(&l.level))
        {
            l.size_bytes_ci95 = Some([l.size_bytes, l.size_bytes]);
        }
        // A moved level's idle-gap point is a steady chase too: where it
        // reads the laps' latency (within what either resolves), the level
        // below did not serve it, and the miss latencies beside it stand.
        let unconfirmed: Vec<u32> = out
            .levels
            .iter()
            .enumerate()
            .filter(|(_, l)| moved.contains(&l.level))
            .filter(|(k, l)| {
                // Within what either reading resolves: a miss latency is a
                // difference, and a level's 5% can be a step's 10%.
                let laps = l.latency_ns_ci95.map_or(0.0, |[lo, hi]| (hi - lo) / 2.0);
                levels::idle_at(&idle, &sw, &pl, *k)
                    .is_none_or(|g| (g.ns - l.latency_ns).abs() > g.resolution.max(laps))
            })
            .map(|(_, l)| l.level)
            .collect();
        out.notes
            .extend(cold::restep(&mut out.levels, &moved, &unconfirmed));
        out.notes.extend(twice::latency_unconfirmed(
            &mut out.levels,
            &sw,
            &pl,
            &idle,
            &moved,
        ));
        out.notes.extend(tlb_share::share_unconfirmed(
            &mut out.levels,
            &sw.xs,
            &pl,
            tlb,
            levels::SETTLED.1,
        ));
        out.notes.extend(tlb_share::share_sensitive(
            &mut out.levels,
            &sw.xs,
            &pl,
            tlb,
            slope::MAX_SPREAD,
        ));
        let stated: Vec<f64> = machine
            .nominal_tlbs
            .iter()
            .filter(|n| tlb.is_some_and(|t| n.page_bytes as f64 == t.page))
            .map(|n| n.entries as f64)
            .collect();
        out.notes.extend(tlb_share::share_unmeasured(
            &mut out.levels,
            &sw.xs,
            &pl,
            tlb,
            &stated,
        ));
        if let (true, Some(m)) = (last_is_memory, out.memory.as_mut()) {
            out.notes.extend(memory::climbing(&sw, &pl[n_cache], m));
        }
    }
    out.notes
        .extend(huge_page_note(huge_fraction, machine.page_bytes));
    if let Some(n) = whole_cycle_note(&out.levels) {
        // L1's own figures are off (its cycles, and its ns too where
        // another thread slowed the loads): not a level to report as
        // measured.
        out.levels[0].verdict = Verdict::Noisy;
        out.notes.push(n);
    }
    out.plateaus = pl;
    out
}

/// A run too disturbed to trust (a busy sweep, busy neighbours): its note,
/// and every level and memory noisy.
fn mark_noisy(out: &mut CacheAnalysis, n: Note) {
    out.notes.push(n);
    for l in &mut out.levels {
        l.verdict = Verdict::Noisy;
    }
    if let Some(m) = &mut out.memory {
        m.verdict = Verdict::Noisy;
    }
}

/// The run's 95% intervals onto its levels (sizes in whole lines, as the
/// sizes themselves) and memory.
fn attach_intervals(out: &mut CacheAnalysis, iv: Intervals) {
    for (k, l) in out.levels.iter_mut().enumerate() {
        l.latency_ns_ci95 = iv.latency.get(k).copied().flatten();
        l.replace_time_ns_ci95 = iv.replace.get(k).copied().flatten();
        l.size_bytes_ci95 = iv
            .size
            .get(k)
            .copied()
            .flatten()
            .map(|[a, b]| [whole_lines(a), whole_lines(b)]);
    }
    if let Some(m) = &mut out.memory {
        m.latency_ns_ci95 = iv.memory;
    }
}

/// Whether the sweep's top still climbs: its largest point more than 5%
/// slower than the point nearest half its size. Memory's plateau is flat
/// to a few percent; a last level that keeps part of any chase (adaptive
/// insertion) or page walks that miss the caches more as the set grows
/// keep it climbing, and the runner then sweeps further.
pub fn still_climbing(curve: &RawCurve) -> bool {
    let pts: Vec<(f64, f64)> = curve
        .points
        .iter()
        .filter(|q| q.x > 0.0 && q.y.is_finite())
        .map(|q| (q.x, q.y))
        .collect();
    let Some(&(top, y)) = pts.iter().max_by(|a, b| a.0.total_cmp(&b.0)) else {
        return false;
    };
    let near_half = |q: &&(f64, f64)| (q.0 / (top / 2.0)).ln().abs();
    pts.iter()
        .min_by(|a, b| near_half(a).total_cmp(&near_half(b)))
        .is_some_and(|&(x, h)| x < 0.8 * top && y > 1.05 * h)
}

/// Sizes in the middle of each plateau.
pub fn representative_sizes(a: &CacheAnalysis, curve: &RawCurve) -> Vec<f64> {
    let mut xs: Vec<f64> = curve.points.iter().map(|q| q.x).collect();
    xs.sort_by(f64::total_cmp);
    a.plateaus.iter().map(|p| p.middle_x(&xs)).collect()
}

/// Where the idle-gap chase is run: the middle of each plateau of the bare
/// sweep, and a point on each stated level past the one below it. The
/// runner reads the sweep before the TLB's share is known, and on 4 KiB
/// pages a level that spans many pages (an L3 past the TLB's reach) climbs
/// with the page walks instead of forming a plateau; the final analysis,
/// with the share removed, finds it — and needs a gap point on it (a
/// simulated Neoverse N1 and Raptor Lake on 4 KiB pages had none, so no L2
/// miss latency). That point is four times the level below (which then
/// keeps almost none of it, even with random replacement), at most the
/// geometric middle of the two: the smallest size the upper level serves
/// alone, so the fewest page walks to take out. Their share is modelled
/// from the TLB probe's levels, and it is least certain near a level's
/// reach, where it turns on and a few percent in the entries measured
/// move it by ns (points at the middle of N1's L3 and at 8 MiB on Raptor
/// Lake and Neoverse V2, whose second TLB level reaches 8 MiB, read L2
/// miss latencies 6–8% short): so the point stays under 85% of the
/// largest stated base-page TLB level's reach where that leaves the level
/// below at least 2.5 times over. Sizes within a quarter of one another
/// are measured once, the smaller kept.
pub fn gap_sizes(a: &CacheAnalysis, curve: &RawCurve, machine: &MachineInfo) -> Vec<f64> {
    let mut stated: Vec<f64> = machine
        .nominal_caches
        .iter()
        .filter(|c| c.cache_type != "Instruction")
        .map(|c| c.size_bytes as f64)
        .collect();
    stated.sort_by(f64::total_cmp);
    stated.dedup();
    let page = machine.page_bytes.unwrap_or(4096);
    let reach = machine
        .nominal_tlbs
        .iter()
        .filter(|t| t.page_bytes == page)
        .map(|t| (t.entries * page) as f64)
        .reduce(f64::max)
        .unwrap_or(f64::INFINITY);
    let between = stated.windows(2).map(|w| {
        let x = (4.0 * w[0]).min((w[0] * w[1]).sqrt());
        x.min(0.85 * reach).max((2.5 * w[0]).min(x))
    });
    let mut xs: Vec<f64> = representative_sizes(a, curve)
        .into_iter()
        .chain(between)
        .collect();
    xs.sort_by(f64::total_cmp);
    let mut out: Vec<f64> = Vec::new();
    for x in xs {
        if out.last().is_none_or(|&l| x > 1.25 * l) {
            out.push(x);
        }
    }
    out
}
