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
//! chase's working set (or the run's earlier chase, where it chased again
//! over a larger set because of this very test): where the chase reads more than
//! [`crate::cache::MEMORY_RISE`] above it, beyond both intervals, latency
//! was still climbing over the octave below S, and memory is above the
//! figure. Two things may add to the rise without an unresolved level, and
//! the rise allowed grows by each: page walks, whose share on base pages
//! grows with the working set, by at most the share measured at S (the
//! chase against its window-by-window twin) less the share the measured TLB
//! levels give at S/2 (a lower bound there); and the largest level the run
//! knows, which serves up to C/S' of the sweep's point and C/S of the chase
//! (a Zen 4 guest's 32 MiB victim L3: an eighth of the sweep's top at 256
//! MiB, a thirty-second of a 1 GiB chase, 10 ns of a 150 ns memory, read as
//! a climb in 5 of 10 runs and chased again over 4 GiB for 8–14 s) — where
//! that level's share of the chase itself is too small to matter.

use crate::cache::{TlbShare, MEMORY_RISE};
use crate::chase::{curve_fastest, sweep_point, Fastest, MEM_SOURCE};
use hwcal_model::curve::MemSeries;
use hwcal_model::note::analysis as note;
use hwcal_model::{Note, Profile, Verdict};

/// The sweep point taken for half the chase's working set lies between a
/// quarter and two thirds of it, the nearest to half.
const BELOW: (f64, f64) = (0.25, 1.0 / 1.5);

/// A measurement over a smaller working set that a chase read climbed
/// above ([`climb_below`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Climb {
    /// The smaller measurement's working set (bytes) and reading (ns).
    pub at: f64,
    pub below: f64,
    /// The ns of the rise that page walks growing with the working set may
    /// explain.
    pub walks: f64,
    /// The ns of the rise the largest cache level already known may explain
    /// ([`known_residual`]).
    pub levels: f64,
    /// What the smaller measurement was.
    pub source: &'static str,
}

/// Whether a chase reading `fig` ns (its interval's low end `fig_lo`) over
/// `size` bytes, `share` ns of it page walks, still climbed above the
/// measurement of the same kind over the next smaller working set: the
/// earlier chase the run kept where it chased again over a larger set
/// ([`MemSeries::LatencyOver`]), else the cache sweep's point nearest half
/// of `size` (a quarter to two thirds of it). It climbed where it reads
/// more than [`MEMORY_RISE`] above that, beyond both intervals, and by more
/// than the page walks explain (the chase's share less the measured TLB
/// levels' share at the smaller set, where that ran on base pages;
/// `smaller_huge` says the earlier chase ran on huge pages the TLB saw).
/// The runner asks it to decide whether to chase again; the consistency
/// stage to judge the figure.
pub fn climb_below(
    p: &Profile,
    size: f64,
    (fig, fig_lo): (f64, f64),
    share: f64,
    chase_huge: bool,
) -> Option<Climb> {
    let (at, below, below_hi, source, huge) = earlier_chase(p, size)
        .map(|(at, f)| {
            let hi = f.ci95.map_or(f.ns, |[_, hi]| hi.max(f.ns));
            (at, f.ns, hi, "earlier mem chase", chase_huge)
        })
        .or_else(|| {
            let q = sweep_point(p, size / 2.0, |x| x >= BELOW.0 * size && x <= BELOW.1 * size)?;
            let hi = q.ci95.map_or(q.ns, |[_, hi]| hi.max(q.ns));
            let huge = crate::cache::huge_fraction(p).is_some_and(|f| f >= 0.9);
            Some((q.x, q.ns, hi, "cache sweep", huge))
        })?;
    let walks = if huge {
        share.max(0.0)
    } else {
        (share - TlbShare::from_profile(p).map_or(0.0, |t| t.at_bytes(at).0)).max(0.0)
    };
    let levels = known_residual(p, at, size) * fig;
    let rise = fig - below;
    (rise > MEMORY_RISE * fig + walks + levels && fig_lo > below_hi).then_some(Climb {
        at,
        below,
        walks,
        levels,
        source,
    })
}

/// The share of a chase a cache level the run already knows (found by the
/// sweep or stated by the machine, the largest of them) may still serve
/// over `at` bytes and no longer over `size`: a level of C serves at most
/// C/S of a random chase over S (a victim or random-replacement last level
/// does: Zen's L3s), so between the sweep's top (8× the stated last level,
/// C/S an eighth) and a chase four times larger the curve rises by up to
/// C/at − C/size of memory's latency with no level unresolved. Counted only
/// where that level's share of the chase itself is under
/// [`MEMORY_RISE`]: a known level still serving more of the chase (a level
/// of 384 MiB under a 1 GiB chase) leaves the figure below memory's, and
/// the climb stands.
fn known_residual(p: &Profile, at: f64, size: f64) -> f64 {
    let measured = p.caches.iter().flatten().map(|c| c.size_bytes);
    let stated = p
        .machine
        .iter()
        .flat_map(|m| &m.nominal_caches)
        .map(|c| c.size_bytes);
    let c = measured.chain(stated).max().unwrap_or(0) as f64;
    let share = |s: f64| if s > 0.0 { (c / s).min(1.0) } else { 1.0 };
    if c <= 0.0 || share(size) >= MEMORY_RISE {
        return 0.0;
    }
    (share(at) - share(size)).max(0.0)
}

/// The earlier chase kept by the run over fewer bytes than `size`: its
/// working set and fastest slice.
fn earlier_chase(p: &Profile, size: f64) -> Option<(f64, Fastest)> {
    p.raw
        .iter()
        .filter_map(|c| MemSeries::latency_over_mib(&c.id).map(|mib| (mib as f64 * 1048576.0, c.id.as_str())))
        .filter(|&(at, _)| at < size * BELOW.1)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .and_then(|(at, id)| curve_fastest(p, id).map(|f| (at, f)))
}

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
    let fig = head.latency_ns;
    let fig_lo = head.latency_ns_ci95.map_or(fig, |[lo, _]| lo.min(fig));
    let chase_huge = head.huge_pages;
    let Some(c) = climb_below(
        p,
        size,
        (fig, fig_lo),
        head.tlb_share_ns.unwrap_or(0.0),
        chase_huge,
    ) else {
        return Vec::new();
    };
    if let Some(m) = p.memory.as_mut() {
        // Holding the walks out does not stop a cache serving part of the
        // chase: the walk-free figure is as far below memory's.
        m.verdict = Verdict::Noisy;
        if m.latency_no_walks_verdict.is_some() {
            m.latency_no_walks_verdict = Some(Verdict::Noisy);
        }
    }
    vec![note(
        "consistency",
        "memory-converged",
        format!(
            "consistency: memory latency {fig:.1} ns is the mem chase over {}, but the {} read {:.1} ns over {} \
             ({:.0}% less, beyond both intervals{}): latency was still climbing below the chase's working set, so \
             a cache level still served part of it (one the sweep did not resolve) and memory is above the \
             figure: marked noisy",
            hwcal_model::human_bytes(size as u64),
            c.source,
            c.below,
            hwcal_model::human_bytes(c.at as u64),
            (fig - c.below) / fig * 100.0,
            explained(&c)
        ),
    )]
}

/// What of a climb's rise the note allows for: page walks growing with the
/// working set, the largest known level's share shrinking with it.
fn explained(c: &Climb) -> String {
    let mut parts = Vec::new();
    if c.walks > 0.0 {
        parts.push(format!(
            "page walks growing with the working set explain at most {:.1} ns of it",
            c.walks
        ));
    }
    if c.levels > 0.0 {
        parts.push(format!(
            "the largest known cache level serving less of it at most {:.1} ns",
            c.levels
        ));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("; {}", parts.join(", "))
    }
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

    /// A run whose sweep stopped at 256 MiB (8× a stated last level of
    /// `llc` bytes) reading `top` ns there, its 1 GiB chase `fig` ns.
    fn topped(fig: f64, top: f64, llc: u64) -> Profile {
        let mut p = run(fig, 0.0, top / 0.9);
        if let Some(c) = p.raw.first_mut() {
            c.points.truncate(1);
        }
        if llc > 0 {
            p.machine = Some(hwcal_model::MachineInfo {
                nominal_caches: vec![hwcal_model::NominalCache {
                    level: 3,
                    cache_type: "Unified".into(),
                    size_bytes: llc,
                    ..Default::default()
                }],
                ..Default::default()
            });
        }
        p
    }

    #[test]
    fn a_known_last_level_serving_less_of_a_larger_chase_is_no_climb() {
        // The Zen 4 guest (2 vCPUs, 32 MiB victim L3 stated): the sweep
        // reads 148 ns at its top of 256 MiB, where the L3 still serves up
        // to an eighth of the chase, and the walk-free 1 GiB chase 165 ns
        // (a thirty-second): a 10% rise that level explains.
        let mut p = topped(165.0, 148.0, 32 << 20);
        assert!(memory_converged(&mut p).is_empty());
        assert_eq!(p.memory.as_ref().unwrap().verdict, Verdict::Ok);
        // Nothing stated or found: the same rise is a level unresolved.
        let mut p = topped(165.0, 148.0, 0);
        assert_eq!(memory_converged(&mut p).len(), 1);
        // A known level of 384 MiB still serves over a third of the 1 GiB
        // chase: its figure is not memory's, and the climb stands.
        let mut p = topped(165.0, 148.0, 384 << 20);
        let notes = memory_converged(&mut p);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert_eq!(p.memory.as_ref().unwrap().verdict, Verdict::Noisy);
    }

    #[test]
    fn a_chase_run_again_larger_is_held_to_the_earlier_one() {
        // The run chased 1 GiB (198 ns), saw the sweep still climbing and
        // chased 4 GiB (230 ns): the earlier chase, not the sweep's point
        // over 2 GiB (there is none), is the measurement below it.
        let earlier = |ns: f64| RawCurve {
            id: MemSeries::LatencyOver { mib: 1024 }.thread(0),
            points: (0..6)
                .map(|i| RawPoint {
                    x: 5000.0,
                    y: ns * (1.0 + 0.002 * i as f64),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        let mut p = run(229.8, 0.0, 150.0);
        p.memory.as_mut().unwrap().size_bytes = Some(4 << 30);
        p.raw.push(earlier(198.3));
        let notes = memory_converged(&mut p);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].text.contains("earlier mem chase"), "{}", notes[0].text);
        // Within 5% of the earlier chase: converged, whatever the sweep's
        // smaller points read.
        let mut p = run(204.0, 0.0, 150.0);
        p.memory.as_mut().unwrap().size_bytes = Some(4 << 30);
        p.raw.push(earlier(198.3));
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
