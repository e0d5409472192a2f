//! Whether a level's step — its replace time and miss latency, The
//! Calibrator's two measurements of what a miss in it costs — has the two
//! plateaus behind it that it is the difference of.
//!
//! Both figures are differences of two latencies read on the plateaus of
//! adjacent levels (the sweep's for the replace time, the idle-gap chase's
//! at a point on each plateau for the miss latency). Where the miss
//! latency and the replace time agree, they agree only because they read
//! the same plateaus: neither can confirm that a plateau is a level's.
//! What a plateau must show to be one is its own: every load of a chase
//! that fits a level and not the one below hits that level, so its latency
//! does not depend on the working set, and the plateau's points agree —
//! which takes more than the two points any line passes through. And the
//! last level's step to memory is its miss latency only where that level
//! is the last one, which the levels below it decide.

use crate::levels::Plateau;
use hwcal_model::note::analysis as note;
use hwcal_model::{CacheLevel, Note, Verdict};

/// The fewest points a plateau needs for its trend to be tested: a line
/// passes through any two points, so one or two show nothing about
/// whether the latency there is a level's or a point on a climb.
pub const MIN_PLATEAU_POINTS: usize = 3;

/// Why the step of a level `ok` by its own plateau to the cache level of
/// plateau `next` is not confirmed, if it is not: the next plateau has
/// too few points to show it is flat ([`MIN_PLATEAU_POINTS`]), so its one
/// or two points may as well lie on the climb to that level as on it.
/// This level's own plateau is its own latency's matter (its verdict);
/// what the step adds to it is the next one.
fn next_in_doubt(next: &Plateau) -> Option<String> {
    let points = next.last + 1 - next.first;
    (points < MIN_PLATEAU_POINTS).then(|| {
        format!(
            "the next level's plateau (at {:.2} ns) has {points} point{} only, too few to show it is flat (a \
             level's latency, not a point on a climb)",
            next.level,
            if points == 1 { "" } else { "s" }
        )
    })
}

/// Leaves out the step of a level `ok` by its own plateau whose step goes
/// to a cache level's plateau (`next`) that does not pin that level's
/// latency down ([`next_in_doubt`]): the step is the difference of the two
/// latencies. Both figures are left out, with the reason.
pub(super) fn step_unconfirmed(l: &mut CacheLevel, next: &Plateau) -> Option<Note> {
    if l.verdict != Verdict::Ok || (l.replace_time_ns.is_none() && l.miss_latency_ns.is_none()) {
        return None;
    }
    let why = next_in_doubt(next)?;
    l.withdraw_steps();
    Some(note(
        "cache",
        &format!("l{}-step-unconfirmed", l.level),
        format!(
            "L{n}: miss latency and replace time not stated: they step from L{n}'s plateau to the next one, and \
             {why}",
            n = l.level
        ),
    ))
}

/// Leaves out the step to memory of the last cache level found where a
/// level below it is in doubt (not `ok`): that level may be no level at
/// all (the slow fall-off of an L1 with random replacement or adaptive
/// insertion read as a level of its own), and then the last level found
/// is the one below its number, and the step from it to memory skips the
/// stated level the sweep did not find (a simulated Apple-like core read
/// L1, a noisy "L2" of 161 KiB and an "L3" of 1016 KiB at 2.6 ns, the real
/// L2, whose miss latency read 174 ns, `ok`, for a 14 ns step to the L3
/// the sweep missed). Its number depends on the levels below, as in
/// `levels::unstated_levels`; the step is left out, with the reason.
pub(super) fn last_step_unranked(levels: &mut [CacheLevel]) -> Option<Note> {
    let (last, below) = levels.split_last_mut()?;
    let doubt = below.iter().find(|l| l.verdict != Verdict::Ok)?.level;
    if last.verdict != Verdict::Ok || (last.replace_time_ns.is_none() && last.miss_latency_ns.is_none()) {
        return None;
    }
    last.withdraw_steps();
    Some(note(
        "cache",
        &format!("l{}-step-unranked", last.level),
        format!(
            "L{n}: miss latency and replace time not stated: L{n} is the last level found and steps to memory, \
             but L{doubt} below it is in doubt, and if it is not a level of its own L{n} is the level below its \
             number and its step to memory skips a level the sweep did not find",
            n = last.level
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(n: u32, step: f64, verdict: Verdict) -> CacheLevel {
        CacheLevel {
            level: n,
            verdict,
            miss_latency_ns: Some(step),
            miss_latency_cycles: Some(step * 3.0),
            miss_latency_ns_ci95: Some([step - 0.1, step + 0.1]),
            replace_time_ns: Some(step),
            replace_time_cycles: Some(step * 3.0),
            replace_time_ns_ci95: Some([step - 0.1, step + 0.1]),
            ..Default::default()
        }
    }

    /// A plateau of one or two points cannot show it is flat: the step to
    /// it is left out (a simulated L3 of 20.4 ns read on one point at
    /// 15.7 ns, on the climb to it past a random L2: the L2's step read
    /// 10.6 ns for 15.3, `ok`).
    #[test]
    fn a_step_to_a_plateau_of_two_points_is_left_out() {
        for next in [Plateau::bare(4, 5, 15.65), Plateau::bare(5, 5, 15.7)] {
            let mut l = level(2, 10.6, Verdict::Ok);
            let n = step_unconfirmed(&mut l, &next).expect("a note");
            assert_eq!(n.code, "cache.l2-step-unconfirmed");
            assert_eq!(
                (l.miss_latency_ns, l.miss_latency_cycles, l.miss_latency_ns_ci95),
                (None, None, None)
            );
            assert_eq!(
                (l.replace_time_ns, l.replace_time_cycles, l.replace_time_ns_ci95),
                (None, None, None)
            );
        }
        // Three points are a plateau whose flatness can be seen.
        let mut l = level(2, 10.6, Verdict::Ok);
        assert!(step_unconfirmed(&mut l, &Plateau::bare(3, 5, 15.7)).is_none());
        assert_eq!(l.replace_time_ns, Some(10.6));
        // A level already noisy keeps its (flagged) figures.
        let mut l = level(2, 10.6, Verdict::Noisy);
        assert!(step_unconfirmed(&mut l, &Plateau::bare(5, 5, 15.7)).is_none());
        assert_eq!(l.miss_latency_ns, Some(10.6));
    }

    /// The simulated Apple-like core read L1, a noisy "L2" of 161 KiB (its
    /// random L1's slow fall-off) and an "L3" of 1016 KiB at 2.6 ns, the
    /// real L2, whose step to memory read 174 ns, `ok`, for the 14 ns step
    /// to the L3 the sweep missed. With a level below in doubt the last
    /// level's step to memory is left out; with every level below `ok` it
    /// stays.
    #[test]
    fn the_last_step_to_memory_over_a_level_in_doubt_is_left_out() {
        let mut levels = vec![
            level(1, 1.3, Verdict::Ok),
            level(2, 0.54, Verdict::Noisy),
            level(3, 173.7, Verdict::Ok),
        ];
        let n = last_step_unranked(&mut levels).expect("a note");
        assert_eq!(n.code, "cache.l3-step-unranked");
        assert_eq!(
            (levels[2].miss_latency_ns, levels[2].replace_time_ns),
            (None, None)
        );
        assert_eq!(levels[1].replace_time_ns, Some(0.54));

        let mut levels = vec![level(1, 1.3, Verdict::Ok), level(2, 171.0, Verdict::Ok)];
        assert!(last_step_unranked(&mut levels).is_none());
        assert_eq!(levels[1].replace_time_ns, Some(171.0));
    }
}
