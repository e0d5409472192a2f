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
) -> Vec<Note> {
    let mut notes = Vec::new();
    for (k, l) in levels.iter_mut().enumerate() {
        let Some(g) = idle_at(idle, sw, pl, k) else {
            continue;
        };
        let g_ci = minimum_interval(&g.samples);
        if !disagrees(l.latency_ns, l.latency_ns_ci95, g.ns, g_ci, g.resolution) {
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
