//! Cache levels from the sweep's plateaus ([`hwcal_model::CacheLevel`]:
//! size, latency, replace time, miss latency from the idle-gap chase), and
//! the notes on them: sizes and lines against the nominal ones, levels the
//! sweep found no plateau for, the whole-cycle check of L1's latency.

use super::codes::size_text;
use super::sweep::{detrended_spread, Sweep};
use super::tlb_share::TlbShare;
use crate::levels::{point_cycles, Plateau};
use crate::segments::crossing;
use hwcal_model::note::analysis as note;
use hwcal_model::{CacheLevel, MachineInfo, Note, RawCurve, RawPoint, Verdict};

/// Latency in ns at or nearest to `x` on a curve (log-x nearest).
fn nearest(pts: &[RawPoint], x: f64) -> Option<&RawPoint> {
    pts.iter()
        .min_by(|a, b| ((a.x / x).ln().abs()).total_cmp(&(b.x / x).ln().abs()))
}

/// Gap-chase points with the gap's own cost removed, per sample with that
/// sample's clock: (x, ns, cycles). On 4 KiB pages the TLB's share at each
/// size is removed too, as the sweep's is (`Sweep::new`): the gap chase runs
/// at the middle of each plateau, where a level that spans many pages pays
/// more page walks than at the plateau's start, and a miss latency with
/// them left in reads the page walks as the next level's (a simulated
/// Emerald Rapids on 4 KiB pages: L2 miss latency 62 ns for a 33 ns step).
pub(super) fn idle_points(gap: &RawCurve, plain: &[RawPoint], tlb: Option<&TlbShare>) -> Vec<Idle> {
    let Some(cal) = gap.points.first() else {
        return Vec::new();
    };
    let (Some(gc), Some(pc)) = (
        point_cycles(cal),
        nearest(plain, cal.x)
            .filter(|p| (p.x / cal.x - 1.0).abs() < 0.01)
            .and_then(point_cycles),
    ) else {
        return Vec::new();
    };
    // Cycles the gap itself costs per load (core-bound, so exact in cycles).
    let g = gc - pc;
    gap.points
        .iter()
        .map(|p| {
            let (share_ns, share_cy) = tlb.map_or((0.0, Some(0.0)), |t| t.at_bytes(p.x));
            let samples: Vec<f64> = p
                .samples
                .iter()
                .zip(&p.mhz)
                .map(|(ns, mhz)| ns - g * 1000.0 / mhz - share_ns)
                .filter(|v| v.is_finite())
                .collect();
            Idle {
                x: p.x,
                ns: samples.iter().copied().fold(f64::INFINITY, f64::min),
                cycles: point_cycles(p).zip(share_cy).map(|(c, s)| c - g - s),
                samples,
                // Both the point and the calibration it is taken against
                // stand to the gap policy's resolution of their whole time.
                resolution: GAP_SETTLED * (p.y + cal.y),
                share_doubt: tlb.map_or(0.0, |t| t.within_bands_at_bytes(p.x)),
            }
        })
        .filter(|i| i.ns.is_finite())
        .collect()
}

/// One size of the idle-gap chase with the gap's own cycles taken out: the
/// fastest sample (the load with the memory system idle, nothing queued
/// before it), in ns and cycles, and every sample, for its interval.
#[derive(Debug, Clone)]
pub(super) struct Idle {
    pub(super) x: f64,
    pub(super) ns: f64,
    pub(super) cycles: Option<f64>,
    pub(super) samples: Vec<f64>,
    /// How far the reading stands (ns): [`GAP_SETTLED`] of this point's
    /// and of the L1 calibration point's whole time, gap included.
    pub(super) resolution: f64,
    /// How far the TLB's share taken out of it could move with the TLB
    /// levels' entries anywhere on their steps (ns; 0 off every step).
    pub(super) share_doubt: f64,
}

/// How closely the idle-gap chase's fastest samples must agree for a point
/// to stand: the probe's gap policy (`hwcal_probes::cache::gap_policy`:
/// the 3 fastest within 0.1%). Its points carry the gap's own ~100 cycles,
/// so they are resolved to 0.1% of that whole time, not of the load's.
pub const GAP_SETTLED: f64 = 0.001;

/// The note for a sweep that shows no memory plateau: where it ended on the
/// last level's plateau, or on a climb that never settled (the last level
/// still serving part of the loads at the sweep's top).
pub(super) fn no_memory_note(sw: &Sweep, pl: &[Plateau]) -> Note {
    let n = sw.xs.len();
    let tail = pl.last().and_then(|p| p.tail_to.map(|_| p));
    let text = match tail {
        Some(p) => {
            let from = (p.last + 1).max(n.saturating_sub(3));
            let pts: Vec<String> = (from..n)
                .map(|i| format!("{:.0} ns at {}", sw.raw_ys[i], size_text(sw.xs[i])))
                .collect();
            format!(
                "memory: past L{} (to about {}) latency still climbs at the top of the sweep ({}): the \
                 last level keeps serving part of the loads there (a victim or non-LRU cache loses its hits \
                 slowly), so the sweep never reached memory latency and gives no memory figure",
                pl.len(),
                size_text(p.end_x),
                pts.join(", ")
            )
        }
        None => "memory: the sweep ended before latency reached memory; no memory latency".to_string(),
    };
    note("cache", "no-memory", text)
}

/// Stated levels the sweep spanned but found no plateau for, where it
/// reached no memory plateau either (with one, [`missing_level_notes`]
/// says how much capacity they add at most): each is reported missing,
/// with where the last level found ends.
pub(super) fn unfound_level_notes(machine: &MachineInfo, sw: &Sweep, pl: &[Plateau]) -> Vec<Note> {
    let top = sw.xs.last().copied().unwrap_or(0.0);
    let end = pl.last().map_or(0.0, |p| plateau_size(p, &sw.xs));
    (pl.len() as u32 + 1..=4)
        .filter_map(|level| machine.nominal_data_cache(level).map(|n| (level, n)))
        .filter(|(_, n)| (n.size_bytes as f64) < top)
        .map(|(level, n)| {
            note(
                "cache",
                &format!("l{level}-no-plateau"),
                format!(
                    "L{level} (nominal {}): no plateau of its own in the sweep (up to {}), which ended before \
                     memory; the last level found, L{}, ends at {}",
                    size_text(n.size_bytes as f64),
                    size_text(top),
                    pl.len(),
                    size_text(end)
                ),
            )
        })
        .collect()
}

/// How far the first level's latency in cycles may sit from a whole number
/// before the cycle figures are called into doubt: four times the ±0.05
/// quiet runs read L1 and L2 to (5.0 and 16.0 cycles on the Sapphire Rapids
/// fixtures, checked in `tests/recorded.rs`).
pub const WHOLE_CYCLE_TOLERANCE: f64 = 0.2;

/// A cross-check of the clock the cycle figures were converted with. An L1
/// hit's load-to-use latency is a fixed number of pipeline stages, hence a
/// whole number of core cycles on every CPU. When the measured figure is
/// not, either the add chain timed beside the loads ran at another rate
/// than the loads saw (on a VM, another tenant on this core's SMT sibling
/// slows the add chain while the minimum over load blocks is not slowed),
/// or the loads themselves were slowed by the sibling. Either way the cycle
/// figures of the run are uncertain by about that much, and in the second
/// case the ns figures are slow too, so L1 is marked noisy.
pub fn whole_cycle_note(levels: &[CacheLevel]) -> Option<Note> {
    let c = levels.first()?.latency_cycles?;
    if !(c.is_finite() && c >= 1.5) {
        return None;
    }
    let whole = c.round();
    if (c - whole).abs() <= WHOLE_CYCLE_TOLERANCE {
        return None;
    }
    let pct = (c / whole - 1.0) * 100.0;
    Some(note(
        "cache",
        "cycles-not-whole",
        format!(
        "cache: L1 latency is {c:.2} cycles, not a whole number (a load's latency is a whole number of core \
         cycles): the add-chain clock beside the loads read about {:.0}% {} the rate the loads ran at (then \
         the ns figures stand), or another thread on this core slowed the loads (then they are slow in ns \
         too); cycle figures in this run are uncertain by that much, and L1 is marked noisy",
        pct.abs(),
        if pct < 0.0 { "below" } else { "above" }
    ),
    ))
}

/// A size in bytes to the nearest 64-byte line, as every size is reported.
pub(super) fn whole_lines(b: f64) -> u64 {
    ((b / 64.0).round() * 64.0) as u64
}

/// Whether a level reads larger than the stated size of a cache private to
/// this CPU, beyond [`NOMINAL_SIZE_TOLERANCE`]: physically impossible (one
/// thread on one core holds at most its private cache), so the size read
/// is not the level's — a page-colour fit that replaced the held capacity
/// by up to twice it, or an edge smeared into the next level (a simulated
/// L2 of 1 MiB, 8-way with random replacement, under a 6 MiB L3 read
/// 2.53 MiB, `ok`). The level is marked noisy; the same size and margin as
/// the "effective size" note of [`level_notes`], so a flagged level always
/// carries that note.
pub(super) fn private_excess(l: &CacheLevel, p: &Plateau, machine: &MachineInfo) -> bool {
    let Some(n) = machine.nominal_data_cache(l.level) else {
        return false;
    };
    n.shared_cpus.len() <= 1
        && p.bounded
        && l.size_bytes as f64 > (1.0 + NOMINAL_SIZE_TOLERANCE) * n.size_bytes as f64
}

/// Levels past the ones the machine states, when the sweep found more than
/// it states: each level past the stated private ones is `ok` only where a
/// second, independent measurement shows it — the idle-gap chase, run at
/// another time, has a point on its plateau and on the next one and reads
/// the same step (its miss latency survived [`miss_disagrees`]) — and,
/// on pages the TLB sees as base pages, it does not end where a TLB
/// level's reach ends (the sweep and the gap chase both have the TLB's
/// modelled share taken out, so neither is independent of that model
/// there, and the model is least certain there: a hashed TLB's fullest
/// sets overflow from ~0.7× its entries, and a random chase's miss share
/// 1 − E/P reaches half only at 2× them). A level not shown again is
/// marked noisy, and so is every level above it (their numbers depend on
/// it). A busy Zen 3 guest on 4 KiB pages, whose host's memory latency
/// moved during the sweep, read "L4 210 MiB 167 ns", `ok`, with 3 levels
/// stated; a simulated L3 of 256 MiB on 16 KiB pages read an L3 of
/// 18.6 MiB (its L2 TLB's reach) and an L4 of 166 MiB, both `ok`.
pub(super) fn unstated_levels(
    levels: &mut [CacheLevel],
    machine: &MachineInfo,
    base_pages: bool,
    tlb: Option<&TlbShare>,
) -> Vec<Note> {
    let stated = super::plateaus::nominal_sizes(machine).len();
    if stated == 0 || levels.len() <= stated {
        return Vec::new();
    }
    let private = (1..=4)
        .take_while(|&l| {
            machine
                .nominal_data_cache(l)
                .is_some_and(|c| c.shared_cpus.len() <= 1)
        })
        .count();
    let page = machine.page_bytes.unwrap_or(4096) as f64;
    let reaches: Vec<f64> = if base_pages {
        let stated_reach = machine
            .nominal_tlbs
            .iter()
            .filter(|t| t.page_bytes as f64 == page)
            .map(|t| t.entries as f64 * page)
            .reduce(f64::max);
        let measured = tlb.and_then(TlbShare::reach);
        stated_reach.into_iter().chain(measured).collect()
    } else {
        Vec::new()
    };
    let found = levels.len();
    let mut notes = Vec::new();
    let mut doubt: Option<u32> = None;
    for l in levels.iter_mut().skip(private) {
        let size = l.size_bytes as f64;
        let at_reach = reaches
            .iter()
            .find(|&&r| size >= r / std::f64::consts::SQRT_2 && size <= 2.0 * r);
        let why = match (doubt, at_reach, l.miss_latency_ns) {
            (Some(d), _, _) => format!("the level below it, L{d}, is not confirmed, so its number is not either"),
            (None, Some(&r), _) => format!(
                "it ends where the TLB's reach ends ({} of pages the TLB sees as {}), where the TLB's modelled \
                 share, taken out of the sweep and of the idle-gap chase alike, is least certain",
                size_text(r),
                size_text(page)
            ),
            (None, None, None) => "the idle-gap chase shows no step from it to the next plateau (no point on \
                 both, or a step more than twice apart from the sweep's)"
                .to_string(),
            (None, None, Some(_)) => continue,
        };
        doubt.get_or_insert(l.level);
        l.verdict = Verdict::Noisy;
        notes.push(note(
            "cache",
            &format!("l{}-unstated", l.level),
            format!(
                "cache: L{} ({} at {:.1} ns): the sweep found {found} cache levels where the machine states \
                 {stated}, and no second measurement confirms this one: {why}; marked noisy",
                l.level,
                size_text(size),
                l.latency_ns
            ),
        ));
    }
    notes
}

/// Where 10% and 90% of the loads miss a level on its way to the next.
fn edge(sw: &Sweep, pl: &[Plateau], k: usize) -> (Option<u64>, Option<u64>) {
    let Some(n) = pl.get(k + 1) else {
        return (None, None);
    };
    let p = &pl[k];
    let at = |f: f64| {
        crossing(
            &sw.xs,
            &sw.clean,
            p.first,
            n.first,
            p.level + f * (n.level - p.level),
        )
        .map(|x| x.round() as u64)
    };
    (at(0.1), at(0.9))
}

/// The sweep's latency at `x` (TLB share removed), linear in log size
/// between the points either side.
fn sweep_at(sw: &Sweep, x: f64) -> Option<f64> {
    let i = sw.xs.iter().position(|&v| v >= x)?;
    if i == 0 || sw.xs[i] <= x {
        return Some(sw.ys[i]);
    }
    let (x0, x1) = (sw.xs[i - 1].ln(), sw.xs[i].ln());
    let t = (x.ln() - x0) / (x1 - x0);
    Some(sw.ys[i - 1] + t * (sw.ys[i] - sw.ys[i - 1]))
}

/// The idle-gap latency (ns, cycles) measured on plateau `k`: of the gap
/// points within its extent, the one where the sweep itself reads nearest
/// the plateau's level (not the first: the runner puts one at four times
/// the level below and one in the plateau's middle). A gap point inside a plateau's extent
/// need not sit on its level: past a level with adaptive insertion or
/// random replacement, that level still serves part of a chase several
/// times its size, so the next plateau's first part reads low (a
/// simulated L1 of 32 KiB, adaptive, still read 10.7 ns at 128 KiB on an
/// L2 plateau of 12.1 ns, and the gap point there read an L1 miss latency
/// 14% short); the idle chase at that size reads low alike.
pub(super) fn idle_at<'a>(idle: &'a [Idle], sw: &Sweep, pl: &[Plateau], k: usize) -> Option<&'a Idle> {
    let p = pl.get(k)?;
    let off = |i: &Idle| sweep_at(sw, i.x).map_or(f64::INFINITY, |y| (y - p.level).abs());
    // Each point's distance from the level, and as much again as the TLB
    // share taken out of it could move: on a TLB step that share depends
    // on where the TLB's entries lie, which nothing measured pins down (a
    // simulated L2's gap point at 78 pages, just past a 72-entry first
    // TLB, put its miss latency 7% high where the point at 50 pages, off
    // the step, was exact).
    let doubt = |i: &Idle| off(i) + i.share_doubt;
    idle.iter()
        .filter(|i| i.x >= sw.xs[p.first] * 0.999 && i.x <= sw.xs[p.last] * 1.001)
        .min_by(|a, b| doubt(a).total_cmp(&doubt(b)))
}

/// A level's size: the boundary to the next plateau, or the largest size
/// measured when the plateau runs off the sweep.
pub(super) fn plateau_size(p: &Plateau, xs: &[f64]) -> f64 {
    p.size(xs)
}

/// Cache level `k + 1` from plateau `k`: its size and latency, its replace
/// time (the step to the next plateau with misses back to back) and miss
/// latency (the same step on the idle-gap chase), with the nominal figures
/// beside them. `line` holds the line sizes of tests 1 (L1) and 2 (the
/// levels beyond).
pub(super) fn cache_level(
    sw: &Sweep,
    pl: &[Plateau],
    k: usize,
    idle: &[Idle],
    line: [Option<u64>; 2],
    machine: &MachineInfo,
) -> CacheLevel {
    let p = &pl[k];
    let level = k as u32 + 1;
    let cy = sw.cycles(p.first, p.last);
    let next = if k + 1 < pl.len() { Some(&pl[k + 1]) } else { None };
    let replace = next.map(|n| {
        (
            n.level - p.level,
            sw.cycles(n.first, n.last).zip(cy).map(|(a, b)| a - b),
        )
    });
    let (edge_start, edge_end) = edge(sw, pl, k);
    let gaps = idle_at(idle, sw, pl, k).zip(idle_at(idle, sw, pl, k + 1));
    let miss = gaps.map(|(a, b)| (b.ns - a.ns, a.cycles.zip(b.cycles).map(|(a, b)| b - a)));
    let nominal = machine.nominal_data_cache(level);
    let size = plateau_size(p, &sw.xs);
    let spread = detrended_spread(&sw.xs[p.first..=p.last], &sw.ys[p.first..=p.last]);
    CacheLevel {
        level,
        size_bytes: whole_lines(size),
        line_bytes: if level == 1 { line[0] } else { line[1] },
        latency_ns: p.level,
        latency_cycles: cy,
        miss_latency_ns: miss.map(|m| m.0),
        miss_latency_cycles: miss.and_then(|m| m.1),
        replace_time_ns: replace.map(|r| r.0),
        replace_time_cycles: replace.and_then(|r| r.1),
        nominal_size_bytes: nominal.map(|c| c.size_bytes),
        // Arm: CTR_EL0's smallest line where sysfs states none.
        nominal_line_bytes: nominal.and_then(|c| c.line_bytes).or(machine.dminline_bytes),
        verdict: if spread > 0.05 || unsettled(sw, p) {
            Verdict::Noisy
        } else {
            Verdict::Ok
        },
        edge_start_bytes: edge_start,
        edge_end_bytes: edge_end,
        line_method: None,
        // Filled in by [`intervals`], which re-derives every level at once.
        latency_ns_ci95: None,
        size_bytes_ci95: None,
        replace_time_ns_ci95: None,
        miss_latency_ns_ci95: gaps
            .and_then(|(a, b)| crate::bootstrap::minima_interval(&a.samples, &b.samples, |a, b| b - a)),
    }
}

/// How many of a point's fastest samples must agree, and within what, for
/// its minimum to stand: the cache probe's stopping rule
/// (`hwcal_probes::cache::latency_policy`: the 3 fastest within 0.5%),
/// which a point that ran to its sample cap never met.
pub const SETTLED: (usize, f64) = (3, 0.005);

/// Whether a point's repetitions agree ([`SETTLED`]); a point with fewer
/// samples than that (an older profile) cannot tell, and counts as settled.
fn settled(p: &RawPoint) -> bool {
    let (k, tol) = SETTLED;
    let mut s: Vec<f64> = p.samples.iter().copied().filter(|v| v.is_finite()).collect();
    if s.len() < k {
        return true;
    }
    s.sort_by(f64::total_cmp);
    s[k - 1] <= s[0] * (1.0 + tol)
}

/// Whether most of a plateau's points ran to their sample cap without
/// their fastest samples agreeing: its level (their median) then rests on
/// minima that every sample's disturbance raised — on a machine with
/// heavy spikes, the points of a large working set, whose samples last
/// longest, meet a spike in every sample (a simulated L3 plateau read
/// 21.5 ns on its settled first half and 23.4 ns, its median, on the
/// rest). Such a level is marked noisy, and the step to it is not stated
/// ([`step_unsettled`]).
pub(super) fn unsettled(sw: &Sweep, p: &Plateau) -> bool {
    let n = p.last + 1 - p.first;
    let bad = sw.pts[p.first..=p.last].iter().filter(|q| !settled(q)).count();
    2 * bad > n
}

/// Whether a plateau's level is in doubt by its own points: they scatter
/// more than 5% about its trend, or most of them never settled
/// ([`unsettled`]). The same test marks a level noisy in [`cache_level`].
pub(super) fn level_in_doubt(sw: &Sweep, p: &Plateau) -> bool {
    detrended_spread(&sw.xs[p.first..=p.last], &sw.ys[p.first..=p.last]) > 0.05 || unsettled(sw, p)
}

/// A level whose own plateau stands but whose replace time steps to a
/// cache level's plateau in doubt ([`level_in_doubt`]):
/// the replace time is that plateau's level less this one's, so it is as
/// doubtful as the next level, while this level's verdict says only how
/// its own figures stand. The replace time is left out, with the reason;
/// the miss latency, from the idle-gap chase's own points, stays.
pub(super) fn step_unsettled(l: &mut CacheLevel) -> Note {
    l.replace_time_ns = None;
    l.replace_time_cycles = None;
    l.replace_time_ns_ci95 = None;
    note(
        "cache",
        &format!("l{}-replace-unsettled", l.level),
        format!(
            "L{n}: replace time not stated: it is the step from L{n}'s plateau to the next one, and the next \
             plateau's level is in doubt (its points scatter more than 5%, or most of them ran to their sample \
             cap without their fastest samples agreeing)",
            n = l.level
        ),
    )
}

/// Notes on one cache level: a size that is only a lower bound (the sweep
/// ended on its plateau), and a size or line that disagrees with the
/// nominal one.
pub(super) fn level_notes(p: &Plateau, l: &CacheLevel, machine: &MachineInfo) -> Vec<Note> {
    let mut notes = Vec::new();
    let level = l.level;
    // The reported size, so the notes and `private_shortfall` judge alike.
    let size = l.size_bytes as f64;
    if !p.bounded {
        let text = format!(
            "L{level}: its plateau runs to the largest size measured ({}); its size is at least that \
             (raise --max-size to see memory)",
            size_text(size)
        );
        notes.push(note("cache", &format!("l{level}-size-lower-bound"), text));
    }
    if let Some((fit, held)) = p.colour {
        let (lo, hi) = fit.spread;
        let rivals = if fit.ambiguous() {
            format!(
                "other replacement policies explain the edge nearly as well with {} to {}, so \
                 the edge alone does not pin the capacity down; the stated size is among them",
                size_text(lo),
                size_text(hi)
            )
        } else {
            "no capacity more than a colour away explains the edge nearly as well under any \
             replacement policy"
                .to_string()
        };
        let text = format!(
            "L{level}: on base pages (no huge pages to the TLB) its edge is spread by page colouring \
             (some of its page colours overflow while others still have room); the capacity that \
             explains the edge under random page placement is {} ({} replacement: {rivals}; a whole \
             number of colours, so to within {}; fit within {:.0}% of the loads at {} sizes on the \
             edge), where it was seen to hold at most {}",
            size_text(fit.capacity),
            fit.policy.name(),
            size_text(fit.colour_bytes),
            fit.rms * 100.0,
            fit.inside,
            size_text(held)
        );
        notes.push(note("cache", &format!("l{level}-colour-fit"), text));
    }
    if let Some(n) = machine.nominal_data_cache(level) {
        let r = size / n.size_bytes as f64;
        if p.bounded && (r - 1.0).abs() > NOMINAL_SIZE_TOLERANCE {
            let what = if r >= 1.0 {
                "over-nominal"
            } else if n.shared_cpus.len() > 1 {
                "short-shared"
            } else {
                "short-private"
            };
            let text = format!(
                "L{level}: effective size {} but nominal {} ({}){}",
                size_text(size),
                size_text(n.size_bytes as f64),
                n.source,
                if r < 1.0 && n.shared_cpus.len() > 1 {
                    "; a shared cache of which this CPU (or VM) gets only part"
                } else if r >= 1.0 && n.shared_cpus.len() <= 1 {
                    "; the cache is private to this CPU, and one core cannot hold more than its private cache: \
                     the edge was read past the level's end (a next level's hits, or a page-colour fit beyond \
                     the stated size), so the size is not stated as right and the level is marked noisy"
                } else if r < 1.0 {
                    "; the cache is private to this CPU, so another thread on the same physical core held part \
                     of it during the sweep (on a VM possibly the host's other hyperthread, which /proc/stat \
                     cannot show) or, on 4 KiB pages, physical pages collided in its sets; re-run to see the \
                     full size"
                } else {
                    ""
                }
            );
            notes.push(note("cache", &format!("l{level}-{what}"), text));
        }
        if let (Some(nl), Some(ml)) = (n.line_bytes, l.line_bytes) {
            if nl != ml {
                notes.push(line_nominal_note(level, ml, nl));
            }
        }
    }
    notes
}

/// A measured line size that is not the nominal one.
pub(super) fn line_nominal_note(level: u32, measured: u64, nominal: u64) -> Note {
    note(
        "cache",
        &format!("l{level}-line-nominal-disagree"),
        format!("L{level}: measured line {measured} B, nominal {nominal} B"),
    )
}

/// How far a level's effective size may stray from its nominal one before a
/// note (and, for a private cache read short, a noisy verdict) says so: the
/// refined sweep resolves sizes to about 4%.
pub const NOMINAL_SIZE_TOLERANCE: f64 = 0.125;

/// Whether a level reads well below the nominal size of a cache private to
/// this CPU. One thread alone fills a private cache completely (L1 is
/// virtually indexed, and on huge pages a physically indexed L2 sees no
/// page-colour conflicts either), so a shortfall means the run was
/// disturbed — typically by an SMT sibling this guest cannot see — and the
/// level is marked noisy rather than reported as the hardware's size. On
/// base pages a physically indexed level beyond L1 loses capacity to page
/// colouring without any disturbance; where its edge was measured over
/// several page placements the page-colour fit sizes it (or rejects it),
/// so a level still short there was sized short by the fit, or its edge
/// was too disturbed for the fit to accept. Where no fit sized it (ways
/// not stated, or only the sweep's one placement and the model did not
/// explain it) the held capacity of that one placement is short by an
/// amount nothing measured: a size short of the stated one is then not
/// confirmed either, and is judged as well. (Judged only with a fit
/// before: a simulated L1 with random replacement kept part of the chase
/// past its size, the slow fall-off read as an "L2" of 108 KiB against a
/// stated private 1 MiB, `ok`, and the real L2 as an L3.)
pub(super) fn private_shortfall(l: &CacheLevel, p: &Plateau, machine: &MachineInfo) -> bool {
    let Some(n) = machine.nominal_data_cache(l.level) else {
        return false;
    };
    let private = n.shared_cpus.len() <= 1;
    // The same size and margin as the "effective size" note of
    // `level_notes`, so a flagged level always carries that note.
    let size = l.size_bytes as f64;
    private && p.bounded && size < (1.0 - NOMINAL_SIZE_TOLERANCE) * n.size_bytes as f64
}

/// Where the last cache level's plateau ends (`prev_end`) and the working
/// set from which latency is within 10% of memory (`reach`), the memory
/// plateau being `pl[n_cache]`.
pub(super) fn cache_reach(sw: &Sweep, pl: &[Plateau], n_cache: usize) -> (f64, f64) {
    let mem_level = pl[n_cache].level;
    let prev_end = if n_cache > 0 {
        pl[n_cache - 1].end_x
    } else {
        sw.xs[0]
    };
    // Where the curve gets within 10% of memory latency: the working set
    // the whole cache hierarchy can serve to this CPU.
    let reach = sw
        .xs
        .iter()
        .zip(&sw.ys)
        .find(|&(&x, &y)| x > prev_end && y >= 0.9 * mem_level)
        .map_or(sw.xs[pl[n_cache].first], |(&x, _)| x);
    (prev_end, reach)
}

/// A level whose two measurements of its step disagree by more than twice:
/// the idle-gap chase's miss latency (one point on each plateau, measured
/// after the sweep) against the replace time (the plateaus themselves).
/// On a cache-to-cache step they differ by tens of percent at most (the
/// Calibrator's idle and loaded steps); twice or half is a level that was
/// not the same when the gap chase ran — a guest's share of the L3 that
/// shrank in between (a live Emerald Rapids run: the gap point on its
/// 6 MiB L3 read memory's latency, an L2 miss latency of 92 ns against a
/// 35 ns replace time). The miss latency is left out, with both figures.
pub(super) fn miss_disagrees(l: &mut CacheLevel) -> Option<Note> {
    let (miss, replace) = (l.miss_latency_ns?, l.replace_time_ns?);
    if miss > 0.0 && replace > 0.0 && (0.5..=2.0).contains(&(miss / replace)) {
        return None;
    }
    l.miss_latency_ns = None;
    l.miss_latency_cycles = None;
    l.miss_latency_ns_ci95 = None;
    // The gap chase's reading is not printed: a step at or below zero, or
    // more than twice the plateaus' own, is no figure a cache gives (a
    // report once said "the idle-gap chase read −28.4 ns for the step").
    let read = if miss <= 0.0 {
        "no step at all (the level past it no slower)"
    } else if miss > replace {
        "a step more than twice"
    } else {
        "a step less than half"
    };
    let step = if replace > 0.0 {
        format!("the step the sweep's plateaus put at {replace:.1} ns (replace time)")
    } else {
        "the sweep's step between the plateaus".to_string()
    };
    Some(note(
        "cache",
        &format!("l{}-miss-disagree", l.level),
        format!(
            "L{}: miss latency not stated: the idle-gap chase read {read} against {step}: the level was not the \
             same when the gap chase ran (a shared level's share that moved)",
            l.level
        ),
    ))
}

/// The last level found when the machine states more levels past it that
/// the sweep did not find: the step from its plateau goes to memory, not
/// to the next level, so it is neither the level's miss latency nor its
/// replace time (a simulated Raptor Lake guest whose moving L3 share left
/// no plateau read an L2 miss latency of 93 ns for a 12 ns step). Both
/// are left out, with the reason.
pub(super) fn step_to_memory(l: &mut CacheLevel) -> Note {
    l.withdraw_steps();
    note(
        "cache",
        &format!("l{}-step-unmeasured", l.level),
        format!(
            "L{n}: miss latency and replace time not stated: the machine states a level past L{n} that the \
             sweep did not find, so the step from L{n}'s plateau goes to memory, not to the next level",
            n = l.level
        ),
    )
}

/// The last level's size from a page-colour fit of its edge where that edge
/// runs to memory through a stated level the sweep did not find: the fit
/// reads the missing level's hits as this level's, so its capacity is not
/// this level's (a simulated guest's L2 of 2.5 MiB, beside an L3 of 8 MiB
/// whose moving share left no plateau, fitted at the 4 MiB a CPU model's
/// table stated, `ok`). Marked noisy, with `held`, what the level was
/// seen to hold, for comparison.
pub(super) fn colour_through_missing(l: &mut CacheLevel, held: f64) -> Note {
    l.verdict = Verdict::Noisy;
    note(
        "cache",
        &format!("l{}-colour-through-missing", l.level),
        format!(
            "L{n}: its size ({}) is a page-colour fit of an edge that runs to memory through a stated \
             level the sweep did not find, so the fit counts that level's hits as L{n}'s; it was seen to \
             hold {}; marked noisy",
            size_text(l.size_bytes as f64),
            size_text(held),
            n = l.level
        ),
    )
}

/// Nominal levels without a plateau of their own: how much capacity they
/// add at most, from the last level's end to where memory latency is reached.
pub(super) fn missing_level_notes(
    machine: &MachineInfo,
    n_cache: usize,
    prev_end: f64,
    reach: f64,
) -> Vec<Note> {
    let max_nominal = machine
        .nominal_caches
        .iter()
        .filter(|c| c.cache_type != "Instruction")
        .map(|c| c.level)
        .max()
        .unwrap_or(0);
    let mut notes = Vec::new();
    for level in (n_cache as u32 + 1)..=max_nominal {
        if let Some(n) = machine.nominal_data_cache(level) {
            let text = format!(
                "L{level} (nominal {}): no plateau of its own; past L{} ({}) latency reaches memory \
                 level by {}, so it adds at most {} of usable capacity here{}",
                size_text(n.size_bytes as f64),
                level - 1,
                size_text(prev_end),
                size_text(reach),
                size_text((reach - prev_end).max(0.0)),
                if n.shared_cpus.len() > 1 {
                    " (a cache shared beyond this CPU: a VM gets only a slice of it)"
                } else {
                    ""
                }
            );
            notes.push(note("cache", &format!("l{level}-no-plateau"), text));
        }
    }
    notes
}

/// The note for L1, or a level past it on huge pages, that held more than
/// where it began to climb ([`super::edge::overheld`]).
pub(super) fn overheld_note(level: u32, held: f64, began: f64) -> Note {
    note(
        "cache",
        &format!("l{level}-overheld"),
        format!(
            "L{level}: its edge reads as holding {} where its curve had already begun to climb at {}; {} \
             no set overflows before the working set passes the capacity, so it can never \
             hold more than where it began to climb: the misses were read against a next level too slow \
             to have served them (a level between with no plateau of its own), so its size and step are \
             not confirmed and L{level} is marked noisy",
            size_text(held),
            size_text(began),
            if level == 1 {
                "L1 is indexed within the page, so"
            } else {
                "on huge pages"
            }
        ),
    )
}

/// The note for a level whose size lies between what it was seen to hold
/// and where it began to climb, with no point of the sweep between them
/// ([`super::edge::bracketed`]).
pub(super) fn bracketed_note(level: u32, held: f64, began: f64) -> Note {
    note(
        "cache",
        &format!("l{level}-bracketed"),
        format!(
            "L{level}: its size reads {} (the most it was seen to hold, a lower bound) and its curve began to \
             climb at {} (an upper bound: no set overflows before the working set passes the capacity), more \
             than a size is measured to apart, with no point of the sweep between them: the capacity lies \
             anywhere between the two; marked noisy",
            size_text(held),
            size_text(began)
        ),
    )
}

/// The note for an L1 edge that held more than where it began to climb
/// ([`super::edge::l1_overheld`]).
pub(super) fn l1_overheld_note(held: f64, climbed: f64) -> Note {
    note(
        "cache",
        "l1-edge-overheld",
        format!(
            "L1: its edge reads as holding {} where it began to climb at {}; a virtually indexed L1 misses \
             nothing before its capacity, so it can never hold more than where it began to climb: the misses \
             were read against a next level too slow to have served them (a level between with no plateau of \
             its own), so its size and step are not confirmed and L1 is marked noisy",
            size_text(held),
            size_text(climbed)
        ),
    )
}
