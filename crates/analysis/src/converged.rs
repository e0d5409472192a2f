//! Memory latency is a plateau: the `mem` chase's figure stands for memory
//! only where the cache sweep has stopped climbing below its working set.
//!
//! Past every cache, a random chase's latency no longer depends on the
//! working set (The Calibrator's and lmbench's `lat_mem_rd` plateau). A
//! level of C bytes serves at most C/S of a chase over S (√(C/S) with a
//! pair prefetcher, `cache::capacity`), so while any level still serves
//! part of it the curve rises as S grows. The `mem` chase over S is taken
//! for memory when S is at least 8x the last level *found*; where a level
//! went unfound (a memory-side L4 of 384 MiB merged into an L3, or no
//! cache stated at all) that factor says nothing, and a simulated guest
//! read 198 ns over 1 GiB, `ok`, for a memory of 232 ns while its own
//! sweep rose from 149 ns at 512 MiB to 199 ns at 1 GiB.
//!
//! The second measurement here is the sweep's own point over half the
//! chase's working set: where the chase reads more than
//! [`crate::cache::MEMORY_RISE`] above it, beyond both intervals, latency
//! was still climbing over the octave below S, and memory is above the
//! figure. Only page walks may add to the rise without a cache level: on
//! base pages their share grows with the working set, by at most the share
//! measured at S (the chase against its window-by-window twin) less the
//! share the measured TLB levels give at S/2 (a lower bound there), and the
//! rise allowed grows by that much.

use crate::cache::{TlbShare, MEMORY_RISE};
use crate::consistency::MEM_SOURCE;
use hwcal_model::note::analysis as note;
use hwcal_model::{Note, Profile, Verdict};

/// The sweep point taken for half the chase's working set lies within this
/// ratio of it (the sweep's points are about a quarter octave apart).
const NEAR: f64 = 1.25;

/// Relation `memory-converged` (see the module docs).
pub(crate) fn memory_converged(p: &mut Profile) -> Vec<Note> {
    let Some(head) = p.memory.as_ref() else {
        return Vec::new();
    };
    // The sweep's own figure is held to its plateau's top by the cache
    // analysis (`cache.memory-climbing`).
    if head.source.as_deref() != Some(MEM_SOURCE) {
        return Vec::new();
    }
    let Some(size) = head.size_bytes.filter(|&s| s > 0).map(|s| s as f64) else {
        return Vec::new();
    };
    let half = size / 2.0;
    let Some(point) = p.raw_curve(crate::cache::LATENCY).and_then(|c| {
        c.points
            .iter()
            .filter(|q| q.x > 0.0 && q.x.max(half) <= NEAR * q.x.min(half))
            .min_by(|a, b| (a.x / half).ln().abs().total_cmp(&(b.x / half).ln().abs()))
    }) else {
        return Vec::new();
    };
    let samples: Vec<f64> = point
        .samples
        .iter()
        .copied()
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let below = samples.iter().copied().reduce(f64::min).unwrap_or(point.y);
    let below_hi = crate::bootstrap::minimum_interval(&samples).map_or(below, |[_, hi]| hi.max(below));
    let (fig, fig_lo) = (
        head.latency_ns,
        head.latency_ns_ci95
            .map_or(head.latency_ns, |[lo, _]| lo.min(head.latency_ns)),
    );
    let at = point.x;
    let walks = walk_growth(p, head.tlb_share_ns.unwrap_or(0.0), at);
    let rise = fig - below;
    if !(rise > MEMORY_RISE * fig + walks && fig_lo > below_hi) {
        return Vec::new();
    }
    let Some(m) = p.memory.as_mut() else {
        return Vec::new();
    };
    m.verdict = Verdict::Noisy;
    vec![note(
        "consistency",
        "memory-converged",
        format!(
            "consistency: memory latency {fig:.1} ns is the mem chase over {}, but the cache sweep read {below:.1} ns \
             over {} ({:.0}% less, beyond both intervals{}): latency was still climbing over the octave below the \
             chase's working set, so a cache level still served part of it (one the sweep did not resolve) and \
             memory is above the figure: marked noisy",
            hwcal_model::human_bytes(size as u64),
            hwcal_model::human_bytes(at as u64),
            rise / fig * 100.0,
            if walks > 0.0 {
                format!("; page walks growing with the working set explain at most {walks:.1} ns of it")
            } else {
                String::new()
            }
        ),
    )]
}

/// How much more the page walks may cost the chase over its working set
/// than the sweep at `at` bytes: the chase's walk share `share` (ns) less
/// the share the measured TLB levels give at `at`, where the sweep ran on
/// base pages; the whole share where it ran on huge pages the TLB saw
/// (its points carry no walks).
fn walk_growth(p: &Profile, share: f64, at: f64) -> f64 {
    let sweep_huge = crate::cache::huge_fraction(p).is_some_and(|f| f >= 0.9);
    let at_sweep = if sweep_huge {
        0.0
    } else {
        TlbShare::from_profile(p).map_or(0.0, |t| t.at_bytes(at).0)
    };
    (share - at_sweep).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwcal_model::{MemoryLatency, RawCurve, RawPoint};

    /// A run whose headline is a 1 GiB chase at `fig` ns (page walks
    /// `share` ns of it) and whose sweep reads `half` ns over 512 MiB.
    fn run(fig: f64, share: f64, half: f64) -> Profile {
        let samples = |base: f64| {
            (0..8)
                .map(|i| base * (1.0 + 0.001 * i as f64))
                .collect::<Vec<f64>>()
        };
        Profile {
            memory: Some(MemoryLatency {
                latency_ns: fig,
                latency_ns_ci95: Some([fig, fig * 1.002]),
                source: Some(MEM_SOURCE.into()),
                size_bytes: Some(1 << 30),
                tlb_share_ns: (share > 0.0).then_some(share),
                verdict: Verdict::Ok,
                ..Default::default()
            }),
            raw: vec![RawCurve {
                id: crate::cache::LATENCY.into(),
                points: [(256u64 << 20, half * 0.9), (512 << 20, half)]
                    .iter()
                    .map(|&(x, y)| RawPoint {
                        x: x as f64,
                        y,
                        samples: samples(y),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn a_chase_over_a_still_climbing_curve_is_not_memory() {
        // The simulated four-level guest's curve: 149 ns at 512 MiB, 198
        // at 1 GiB, with no page walks (as on huge pages the TLB sees).
        let mut p = run(198.3, 0.0, 148.6);
        let notes = memory_converged(&mut p);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert_eq!(notes[0].code, "consistency.memory-converged");
        assert_eq!(p.memory.as_ref().unwrap().verdict, Verdict::Noisy);
        // The same rise with 42.6 ns of walks at 1 GiB and no TLB level
        // measured to say how many the sweep paid at 512 MiB: the walks
        // may have grown by all of it, and 42.6 + 9.9 ns explain 49.7.
        let mut p = run(198.3, 42.6, 148.6);
        assert!(memory_converged(&mut p).is_empty());
    }

    #[test]
    fn a_flat_curve_or_one_the_walks_explain_stands() {
        // Real Emerald Rapids, huge pages: 128.2 ns at 512 MiB, 125.7 at
        // 1 GiB.
        let mut p = run(125.7, 0.0, 128.2);
        assert!(memory_converged(&mut p).is_empty());
        // A 4% rise, under the plateau's 5%.
        let mut p = run(154.3, 0.0, 149.0);
        assert!(memory_converged(&mut p).is_empty());
        // A nested-paging guest: 60 ns of rise, 200 ns of walks at 1 GiB.
        let mut p = run(390.0, 200.0, 330.0);
        assert!(memory_converged(&mut p).is_empty());
        assert_eq!(p.memory.as_ref().unwrap().verdict, Verdict::Ok);
    }

    #[test]
    fn the_sweeps_own_figure_is_left_to_the_cache_analysis() {
        let mut p = run(198.3, 0.0, 148.6);
        p.memory.as_mut().unwrap().source = Some(crate::cache::SWEEP_SOURCE.into());
        assert!(memory_converged(&mut p).is_empty());
    }
}
