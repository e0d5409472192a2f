//! A cache level's latency measured twice: the sweep's plateau, and the
//! idle-gap chase's point on that plateau.
//!
//! On a cache level the idle gap changes nothing about a load: the chase
//! is dependent either way, one load in flight, and a hit costs the same
//! whether the memory system was idle before it or not (the gap's own
//! cycles are calibrated out on L1, `levels::idle_points`). So the gap
//! chase's point inside a plateau is a second, independent measurement of
//! that level's latency: taken at another time, with its own samples
//! (finer-resolved, up to 49 of them), under its own disturbances. Where
//! the two disagree beyond both intervals, one of them did not measure the
//! level: the plateau's points each met a disturbance in every sample (on
//! a host with frequent interrupts, the long samples of a large working
//! set never run clean, and their minima all read high — a level whose
//! points' fastest samples agree among themselves, so neither the scatter
//! nor the settling test sees it), or a shared level's share moved between
//! the sweep and the gap chase, so one of them read part of its loads as
//! misses. Which one is right, nothing measured tells; the level's latency
//! is not confirmed, it is marked noisy, and every step to or from it
//! follows it (the consistency stage leaves out a step to a level not
//! `ok`).
//!
//! A disagreement in ns alone is no contradiction where the core clock
//! moved between the two: a hit costs a fixed number of cycles, and every
//! sample carries the clock measured alongside it, so two readings that
//! agree in cycles both measured the level (an info note says so).

use super::levels::{idle_at, Idle, SETTLED};
use super::sweep::Sweep;
use crate::bootstrap::minimum_interval;
use crate::levels::Plateau;
use hwcal_model::note::analysis as note;
use hwcal_model::{CacheLevel, Note, Verdict};

/// A reading with its 95% interval (the value itself where none).
fn bounds(v: f64, ci: Option<[f64; 2]>) -> [f64; 2] {
    ci.map_or([v, v], |[a, b]| [a.min(v), b.max(v)])
}

/// Whether the gap point (`gap`, its interval `gap_ci`) contradicts the
/// plateau's level (`level`, interval `level_ci`): the two intervals do
/// not overlap. Each is taken at least as wide as its measurement resolves
/// it: the plateau's to [`SETTLED`]'s tolerance (a point's minimum stands
/// once its fastest samples agree that closely), the gap point's to
/// `gap_res` ns (`Idle::resolution`). The level is the plateau's reported
/// latency, not the sweep at the gap point's size: where the plateau's own
/// points there read as the gap point does and the level still reads
/// otherwise, the reported latency is what is not confirmed.
pub(super) fn disagrees(
    level: f64,
    level_ci: Option<[f64; 2]>,
    gap: f64,
    gap_ci: Option<[f64; 2]>,
    gap_res: f64,
) -> bool {
    let res = SETTLED.1 * level;
    let [a, b] = bounds(level, level_ci);
    let [a, b] = [a.min(level - res), b.max(level + res)];
    let [c, d] = bounds(gap, gap_ci);
    let [c, d] = [c.min(gap - gap_res), d.max(gap + gap_res)];
    d < a || c > b
}

/// Marks noisy each cache level (of the first `n_cache` plateaus) whose
/// plateau the idle-gap chase's point on it contradicts ([`disagrees`]),
/// with a note giving both readings. Needs the levels' latency intervals
/// attached (without them the plateau's interval is its value alone).
pub(super) fn latency_unconfirmed(
    levels: &mut [CacheLevel],
    sw: &Sweep,
    pl: &[Plateau],
    idle: &[Idle],
    cold: &[u32],
) -> Vec<Note> {
    let mut notes = Vec::new();
    for (k, l) in levels.iter_mut().enumerate() {
        // The idle-gap chase is a steady chase too: where the cold laps
        // gave the latency because the level below serves part of one, it
        // reads that share as the sweep did, and is no check on them.
        if cold.contains(&l.level) {
            continue;
        }
        let Some(g) = idle_at(idle, sw, pl, k) else {
            continue;
        };
        let g_ci = minimum_interval(&g.samples);
        if !disagrees(l.latency_ns, l.latency_ns_ci95, g.ns, g_ci, g.resolution) {
            continue;
        }
        if let Some(n) = clock_moved(l, g, g_ci) {
            notes.push(n);
            continue;
        }
        l.verdict = Verdict::Noisy;
        notes.push(note(
            "cache",
            &format!("l{}-latency-disagree", l.level),
            format!(
                "L{n}: latency not confirmed: its plateau reads {:.2} ns and the idle-gap chase, a second \
                 measurement of the same level at {}, reads {:.2} ns, apart beyond both intervals (the \
                 plateau's points met a disturbance in every sample, or a shared level's share moved between \
                 the two); marked noisy, and the steps to and from it are as doubtful",
                l.latency_ns,
                super::codes::size_text(g.x),
                g.ns,
                n = l.level
            ),
        ));
    }
    notes
}

/// Where the two readings disagree in ns but agree in cycles: a hit in a
/// cache is a fixed number of core cycles, so when the core clock moved
/// between the sweep and the gap chase (a guest's host changing its turbo
/// level over seconds: an Emerald Rapids guest ran its sweep at 2696 MHz
/// and its gap chase at 2898, L2 reading 5.93 and 5.59 ns, 16.0 and 16.2
/// cycles), both measured the level, each at its own clock. Every sample
/// carries the clock measured alongside it, so the cycles are a reading of
/// their own, not the ns rescaled by one figure. The intervals and the gap
/// point's resolution scale with each reading's own clock. `None` where
/// either reading has no clock, or where the cycles disagree too.
fn clock_moved(l: &CacheLevel, g: &Idle, g_ci: Option<[f64; 2]>) -> Option<Note> {
    let (lc, gc) = (l.latency_cycles?, g.cycles?);
    if !(lc > 0.0 && gc > 0.0 && l.latency_ns > 0.0 && g.ns > 0.0) {
        return None;
    }
    // Each reading's clock (GHz): its cycles over its ns.
    let (kl, kg) = (lc / l.latency_ns, gc / g.ns);
    let scale = |ci: Option<[f64; 2]>, k: f64| ci.map(|[a, b]| [a * k, b * k]);
    if disagrees(
        lc,
        scale(l.latency_ns_ci95, kl),
        gc,
        scale(g_ci, kg),
        g.resolution * kg,
    ) {
        return None;
    }
    Some(Note::info(
        "cache",
        &format!("l{}-latency-clock", l.level),
        format!(
            "cache: L{n}: its plateau ({:.2} ns at ~{:.0} MHz) and the idle-gap chase at {} ({:.2} ns at ~{:.0} \
             MHz) agree in cycles ({:.1} and {:.1}): the core clock moved between the two; the latency in ns \
             holds at the sweep's clock",
            l.latency_ns,
            kl * 1000.0,
            super::codes::size_text(g.x),
            g.ns,
            kg * 1000.0,
            lc,
            gc,
            n = l.level
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plateau_read_high_against_its_gap_point_disagrees() {
        // Heavy spikes: the plateau's median point 7% high (a simulated
        // L3 of 34.6 ns read 37.2), the gap point (49 samples) found a
        // clean sample on the same level.
        assert!(disagrees(
            37.17,
            Some([36.03, 38.18]),
            34.73,
            Some([34.70, 34.80]),
            0.13
        ));
    }

    #[test]
    fn readings_within_their_resolution_agree() {
        assert!(!disagrees(
            21.9,
            Some([21.7, 22.1]),
            22.0,
            Some([21.95, 22.1]),
            0.05
        ));
        // A plateau pinned to 0.2% and a gap point 0.6% off it, within the
        // 0.1% of the gap chase's whole time (54.6 and 49.1 ns) each
        // stands to.
        assert!(!disagrees(
            7.84,
            Some([7.83, 7.86]),
            7.89,
            Some([7.886, 7.90]),
            0.10
        ));
        // Without intervals, the resolutions alone.
        assert!(!disagrees(20.0, None, 20.15, None, 0.1));
        assert!(disagrees(20.0, None, 20.5, None, 0.1));
    }

    fn level(ns: f64, cy: f64, ci: [f64; 2]) -> CacheLevel {
        CacheLevel {
            level: 2,
            size_bytes: 2 << 20,
            latency_ns: ns,
            latency_cycles: Some(cy),
            latency_ns_ci95: Some(ci),
            ..CacheLevel::default()
        }
    }

    fn gap(ns: f64, cy: Option<f64>) -> Idle {
        Idle {
            x: 369.0 * 1024.0,
            ns,
            cycles: cy,
            samples: vec![ns; 5],
            // 0.1% of the gap point's and the L1 calibration's whole
            // times (40.0 and 36.2 ns on that guest).
            resolution: 0.076,
            share_doubt: 0.0,
        }
    }

    #[test]
    fn readings_apart_in_ns_but_one_in_cycles_mean_the_clock_moved() {
        // The Emerald Rapids guest's L2: the sweep at 2696 MHz, the gap
        // chase at 2898.
        let l = level(5.93, 15.98, [5.92, 5.94]);
        let g = gap(5.59, Some(16.20));
        let g_ci = Some([5.585, 5.595]);
        assert!(disagrees(5.93, l.latency_ns_ci95, g.ns, g_ci, g.resolution));
        let n = clock_moved(&l, &g, g_ci).expect("the cycles agree");
        assert_eq!(n.code, "cache.l2-latency-clock");
        assert!(n.text.contains("2696") || n.text.contains("2695"), "{}", n.text);
    }

    #[test]
    fn readings_apart_in_cycles_too_are_no_clock_move() {
        // The same clock for both (a share that moved): 30 and 34 ns, 90
        // and 102 cycles.
        let l = level(30.0, 90.0, [29.8, 30.2]);
        assert!(clock_moved(&l, &gap(34.0, Some(102.0)), Some([33.9, 34.2])).is_none());
        // No clock recorded with the gap chase: nothing to tell them by.
        assert!(clock_moved(&l, &gap(34.0, None), Some([33.9, 34.2])).is_none());
    }

    #[test]
    fn a_gap_point_above_a_level_whose_share_moved_disagrees() {
        // The guest's share of a shared L3 shrank before the gap chase:
        // part of its loads missed to memory.
        assert!(disagrees(
            30.0,
            Some([29.8, 30.2]),
            34.0,
            Some([33.9, 34.2]),
            0.15
        ));
    }
}
