//! Memory latency measured twice over the same working set: the `mem`
//! section's chase and the cache sweep's own point at that size.
//!
//! The two are the same random dependent chase over the same number of
//! bytes, timed by different loops (the sweep's samples, the chase's 1 ms
//! slices), each figure the fastest of its repetitions. No working-set
//! effect can separate them — the last level keeps the same share of both,
//! the page walks miss alike — so where they disagree beyond both
//! intervals one of them was disturbed in every repetition, and memory's
//! headline, whichever it came from, is not `ok` (a simulated guest under
//! heavy interrupt load read 135.5 ns on the sweep's 1 GiB point against
//! 126.1 ns on the chase over the same 1 GiB; the headline, the sweep's
//! 2 GiB plateau, stood at 135.9 ns for a memory of 123.5 ns, `ok`). This
//! is the rule of The Calibrator's authors applied to hwcal's own two
//! measurements: a figure is only as good as its agreement with an
//! independent one.

use hwcal_model::note::analysis as note;
use hwcal_model::{MemoryMeasure, Note, Profile, Verdict};

/// The consistency stage's terms for this relation: how far apart the two
/// may be before their intervals are consulted (`floor`: the agreement a
/// latency chase's own fastest slices must reach, since two timings of
/// one chase cannot be held to less than one is held to against itself)
/// and what counts as the same working set (`same`, a ratio of sizes).
pub(crate) struct Terms {
    pub floor: f64,
    pub same: f64,
}

/// Relation `memory-same-footprint` (see the module docs) for the run's
/// `mem` chase `chase`.
pub(crate) fn same_footprint(p: &mut Profile, chase: Option<MemoryMeasure>, t: &Terms) -> Vec<Note> {
    let Some(chase) = chase else {
        return Vec::new();
    };
    let Some(size) = chase.size_bytes.filter(|&s| s > 0) else {
        return Vec::new();
    };
    let same = |x: f64| x.max(size as f64) <= t.same * x.min(size as f64);
    let Some(crate::chase::SweepPoint {
        x: at,
        ns: fastest,
        ci95: b_ci,
    }) = crate::chase::sweep_point(p, size as f64, same)
    else {
        return Vec::new();
    };
    let (a, a_ci) = (chase.latency_ns, chase.latency_ns_ci95);
    let apart = (fastest - a).abs() > t.floor * a.min(fastest);
    let beyond = match (a_ci, b_ci) {
        (Some([al, ah]), Some([bl, bh])) => ah < bl || bh < al,
        _ => false,
    };
    if !(apart && beyond) {
        return Vec::new();
    }
    let Some(m) = p.memory.as_mut() else {
        return Vec::new();
    };
    m.verdict = Verdict::Noisy;
    // The chase's own figure is the other half of the contradiction: which
    // of the two was disturbed nothing measured tells, so neither stands.
    if let Some(c) = p
        .mem
        .as_mut()
        .filter(|_| chase.source == crate::chase::MEM_SOURCE)
    {
        c.verdict = Verdict::Noisy;
    }
    let pct = (fastest / a - 1.0) * 100.0;
    vec![note(
        "consistency",
        "memory-same-footprint",
        format!(
            "consistency: the cache sweep's point over {} reads {fastest:.1} ns and the {} over {} reads \
             {a:.1} ns ({pct:+.0}%), beyond both intervals: the same chase over the same working set, so one of \
             them was disturbed in every repetition; memory marked noisy{}",
            hwcal_model::human_bytes(at as u64),
            chase.source,
            hwcal_model::human_bytes(size),
            if chase.source == crate::chase::MEM_SOURCE {
                ", and the mem chase's own figure with it"
            } else {
                ""
            }
        ),
    )]
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwcal_model::{MemResult, MemoryLatency, RawCurve, RawPoint};

    /// A run whose `mem` chase over 1 GiB has slices around `chase` ns
    /// and whose sweep has a point over 1 GiB with samples around `sweep`.
    fn run(chase: f64, sweep: f64) -> Profile {
        let jitter = |base: f64| {
            (0..12)
                .map(|i| base * (1.0 + 0.0015 * i as f64))
                .collect::<Vec<f64>>()
        };
        let slices = RawCurve {
            id: hwcal_model::curve::MemSeries::Latency.thread(0),
            points: jitter(chase)
                .into_iter()
                .enumerate()
                .map(|(i, y)| RawPoint {
                    x: i as f64 + 1.0,
                    y,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        let sw = RawCurve {
            id: crate::cache::LATENCY.into(),
            points: vec![RawPoint {
                x: (1u64 << 30) as f64,
                y: sweep,
                samples: jitter(sweep),
                ..Default::default()
            }],
            ..Default::default()
        };
        Profile {
            mem: Some(MemResult {
                access_pattern: "random".into(),
                threads: 1,
                chains: 1,
                size_bytes: 1 << 30,
                ns_per_op: chase,
                verdict: Verdict::Ok,
                ..Default::default()
            }),
            memory: Some(MemoryLatency {
                latency_ns: sweep,
                verdict: Verdict::Ok,
                ..Default::default()
            }),
            raw: vec![slices, sw],
            ..Default::default()
        }
    }

    fn check(p: &mut Profile) -> Vec<Note> {
        let chase = p.mem.as_ref().map(|m| MemoryMeasure {
            source: "mem chase".into(),
            size_bytes: Some(m.size_bytes),
            latency_ns: m.ns_per_op,
            latency_ns_ci95: Some([m.ns_per_op, m.ns_per_op * 1.003]),
        });
        same_footprint(
            p,
            chase,
            &Terms {
                floor: 0.01,
                same: 1.25,
            },
        )
    }

    #[test]
    fn the_same_chase_timed_twice_must_agree() {
        // The simulated heavy-interrupt guest: 126 against 135.5 ns.
        let mut p = run(126.1, 135.5);
        let notes = check(&mut p);
        assert_eq!(notes.len(), 1);
        assert_eq!(p.memory.as_ref().unwrap().verdict, Verdict::Noisy);
        // The chase's own figure is the other half: not `ok` either.
        assert_eq!(p.mem.as_ref().unwrap().verdict, Verdict::Noisy);
        // Within 1%: the two timings agree, nothing said.
        let mut p = run(126.1, 126.9);
        assert!(check(&mut p).is_empty());
        assert_eq!(p.memory.as_ref().unwrap().verdict, Verdict::Ok);
        assert_eq!(p.mem.as_ref().unwrap().verdict, Verdict::Ok);
    }
}
