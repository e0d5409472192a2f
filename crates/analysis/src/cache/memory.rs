//! Memory as the cache sweep sees it: whether the last plateau is memory
//! at all, memory latency from its far end (TLB share beside it), and the
//! memory-level parallelism of k independent chases (lmbench `par_mem`).

use super::sweep::{detrended_spread, Sweep};
use crate::levels::{point_cycles, Plateau};
use crate::stats::median;
use hwcal_model::note::analysis as note;
use hwcal_model::{MachineInfo, MemoryLatency, MlpPoint, Note, RawCurve, Verdict};

/// No DRAM answers a dependent load at a random address faster than this
/// (ns): client DDR4/DDR5 with huge pages reads 60–80 ns, servers 90–150
/// ns, while no cache level has been this slow on a core hwcal has met
/// below an L3 slice of a large mesh (~40–50 ns). A plateau faster than
/// this is a cache, whatever the sweep's size.
pub const MIN_MEMORY_NS: f64 = 40.0;

/// How much slower memory is than the last cache level at least: from ~2.5x
/// (a large server mesh's L3) to ~10x (a client's or a VM's small share).
/// A last plateau less than this above the one before is a cache level.
pub const MIN_MEMORY_STEP: f64 = 1.5;

/// Whether the last of plateaus at these latencies can be memory: slower
/// than any cache, and a clear step above the last level that is surely a
/// cache (faster than [`MIN_MEMORY_NS`]; a plateau between that one and
/// the last, itself as slow as memory, is memory that moved while a busy
/// sweep ran, or a slow L3 slice, and says nothing against it).
pub(super) fn memory_like(levels: &[f64]) -> bool {
    let Some((&last, before)) = levels.split_last() else {
        return false;
    };
    let cache = before.iter().rev().find(|&&v| v < MIN_MEMORY_NS);
    !before.is_empty() && last >= MIN_MEMORY_NS && cache.is_none_or(|&c| last >= MIN_MEMORY_STEP * c)
}

/// Whether the last plateau is memory rather than a cache level: it can be
/// memory ([`memory_like`]), and where the sweep stopped short of the
/// nominal last-level cache it is slower than 50 ns (an L3 slice of a
/// large mesh can reach ~45 ns).
pub(super) fn ends_in_memory(pl: &[Plateau], xs: &[f64], machine: &MachineInfo) -> bool {
    let max_x = xs.last().copied().unwrap_or(0.0);
    let nominal_llc = machine
        .nominal_caches
        .iter()
        .filter(|c| c.cache_type != "Instruction")
        .max_by_key(|c| c.level);
    let levels: Vec<f64> = pl.iter().map(|p| p.level).collect();
    let Some(last) = levels.last() else {
        return false;
    };
    memory_like(&levels) && (!matches!(nominal_llc, Some(c) if max_x < c.size_bytes as f64) || *last >= 50.0)
}

/// What [`MemoryLatency::source`] says of a figure from the sweep's memory
/// plateau.
pub const SWEEP_SOURCE: &str = "cache sweep";

/// The parallel-chase points, each with its speed-up over one chase.
pub fn mlp_points(mlp: Option<&RawCurve>) -> Vec<MlpPoint> {
    mlp.map(|c| {
        let one = c.points.iter().find(|q| q.x == 1.0);
        // Each point is its fastest sample; the intervals resample them.
        c.points
            .iter()
            .map(|q| MlpPoint {
                chains: q.x as u32,
                ns_per_load: q.y,
                speedup: one.map_or(f64::NAN, |o| o.y / q.y),
                ns_per_load_ci95: crate::bootstrap::minimum_interval(&q.samples),
                speedup_ci95: one.and_then(|o| {
                    crate::bootstrap::minima_interval(&o.samples, &q.samples, |one, k| one / k)
                }),
                verdict: None,
            })
            .collect::<Vec<_>>()
    })
    .map(|mut v| {
        judge_mlp(&mut v);
        v
    })
    .unwrap_or_default()
}

/// The note on a memory-level-parallelism table [`judge_mlp`] put in
/// doubt: which speed-up exceeds its chains.
pub(super) fn mlp_note(m: &MemoryLatency) -> Option<Note> {
    let q = m
        .mlp
        .iter()
        .filter(|q| q.chains >= 1)
        .max_by(|a, b| (a.speedup / f64::from(a.chains)).total_cmp(&(b.speedup / f64::from(b.chains))))?;
    if !m.mlp.iter().any(|q| q.verdict == Some(Verdict::Noisy)) {
        return None;
    }
    Some(note(
        "cache",
        "mlp-superlinear",
        format!(
            "cache: memory-level parallelism: {} chains read {:.1}x one chase, more than {} independent \
             chases can overlap; the single chase every speed-up divides was disturbed, or the chains hit \
             a cache it missed, so the table is marked noisy",
            q.chains, q.speedup, q.chains
        ),
    ))
}

/// Judges a memory-level-parallelism table in place and returns whether
/// it is in doubt. K independent chases overlap at most K misses, so over
/// one footprint no speed-up exceeds its chain count (Little's law: the
/// loads in flight bound the throughput); one that does beyond its
/// interval means the single chase every point divides was disturbed (a
/// neighbour, a share that moved) or the chains' footprint hit a cache
/// the single chase missed — a simulated guest read 18.8× with 16 chains,
/// marked `ok` with its memory figure. Then every point is `noisy`, as
/// they share that divisor; else none has a verdict of its own: the table
/// stands with the memory figure whose chases it shares (a memory latency
/// that moved between two chases of one footprint moves the speed-ups
/// too).
pub fn judge_mlp(points: &mut [MlpPoint]) -> bool {
    let impossible = points.iter().any(|q| {
        let low = q.speedup_ci95.map_or(q.speedup, |ci| ci[0]);
        q.chains >= 1 && low > f64::from(q.chains)
    });
    for q in points.iter_mut() {
        q.verdict = impossible.then_some(Verdict::Noisy);
    }
    impossible
}

/// Memory latency from its plateau `m`, with the caches' reach and the
/// memory-level parallelism.
pub(super) fn memory_latency(
    sw: &Sweep,
    m: &Plateau,
    reach: f64,
    mlp: Option<&RawCurve>,
    huge_fraction: Option<f64>,
) -> MemoryLatency {
    let huge = huge_fraction.is_some_and(|f| f >= 0.9);
    let mlp_pts = mlp_points(mlp);
    let idx = memory_points(sw, m);
    let ns: Vec<f64> = idx.iter().map(|&i| sw.raw_ys[i]).collect();
    let raw_cy: Option<Vec<f64>> = idx.iter().map(|&i| point_cycles(&sw.pts[i])).collect();
    let share_ns: Vec<f64> = idx.iter().map(|&i| sw.share[i].0).collect();
    let share_cy: Option<Vec<f64>> = idx.iter().map(|&i| sw.share[i].1).collect();
    let tlb_share = median(&share_ns);
    MemoryLatency {
        latency_ns: median(&ns),
        latency_cycles: raw_cy.map(|c| median(&c)),
        huge_pages: huge,
        cache_reach_bytes: Some(reach as u64),
        mlp: mlp_pts,
        verdict: if detrended_spread(&sw.xs[m.first..=m.last], &sw.ys[m.first..=m.last]) > 0.05 {
            Verdict::Noisy
        } else {
            Verdict::Ok
        },
        tlb_share_ns: (tlb_share > 0.0).then_some(tlb_share),
        tlb_share_cycles: share_cy.filter(|_| tlb_share > 0.0).map(|c| median(&c)),
        latency_ns_ci95: None,
        source: Some(SWEEP_SOURCE.into()),
        size_bytes: idx.last().map(|&i| sw.xs[i].round() as u64),
        latency_no_walks_ns: None,
        latency_no_walks_ns_ci95: None,
        latency_no_walks_verdict: None,
        measures: Vec::new(),
    }
}

/// The points memory latency is read from: the far end of its plateau
/// (sizes at least 4× where it starts), whose first sizes are within
/// tolerance of memory but still get a few hits from the last cache. The
/// figure is the measured one, TLB misses included; their share is
/// reported beside it.
pub(super) fn memory_points(sw: &Sweep, m: &Plateau) -> Vec<usize> {
    let far: Vec<usize> = (m.first..=m.last)
        .filter(|&i| sw.xs[i] >= 4.0 * sw.xs[m.first])
        .collect();
    if far.len() >= 3 {
        far
    } else {
        (m.first..=m.last).collect()
    }
}

/// How far above the memory figure a measurement over a larger working set
/// may read before latency is taken to be still climbing there (memory's
/// plateau is flat to a few percent; the consistency stage's `memory-mlp`
/// relation holds the single chase to the same).
pub const MEMORY_RISE: f64 = 0.05;

/// The memory plateau `m` whose top point still climbs: it reads more than
/// [`MEMORY_RISE`] above the figure (the median of the plateau's far end)
/// and its own interval lies wholly above the figure's. The figure is then
/// an average over a climb, below memory latency at the size it is given
/// for (a simulated machine on 16 KiB pages: 116 ns reported `ok` where
/// memory was 136 ns at 256 MiB): memory is marked noisy, with a note.
pub(super) fn climbing(sw: &Sweep, m: &Plateau, mem: &mut MemoryLatency) -> Option<Note> {
    let top = sw.pts.get(m.last)?;
    let fig = mem.latency_ns;
    let top_lo = crate::bootstrap::minimum_interval(&top.samples).map_or(top.y, |[lo, _]| lo.min(top.y));
    let fig_hi = mem.latency_ns_ci95.map_or(fig, |[_, hi]| hi.max(fig));
    if !(top.y > (1.0 + MEMORY_RISE) * fig && top_lo > fig_hi) {
        return None;
    }
    mem.verdict = Verdict::Noisy;
    Some(note(
        "cache",
        "memory-climbing",
        format!(
            "cache: memory latency {fig:.1} ns is the median of its plateau's far end, but the plateau's top point \
             reads {:.1} ns at {} ({:.0}% above it, beyond both intervals): latency still climbs there (a last \
             level keeping part of any chase, or page walks whose own loads miss more as the set grows), so \
             memory is at least that at the top: marked noisy",
            top.y,
            super::codes::size_text(top.x),
            (top.y / fig - 1.0) * 100.0
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(chains: u32, speedup: f64, ci: Option<[f64; 2]>) -> MlpPoint {
        MlpPoint {
            chains,
            ns_per_load: 100.0 / speedup,
            speedup,
            speedup_ci95: ci,
            ..Default::default()
        }
    }

    #[test]
    fn a_speed_up_over_its_chain_count_puts_the_whole_table_in_doubt() {
        // The shape of a simulated guest whose single chase was slowed by
        // a moving share: 2.28x with 2 chains, 18.8x with 16.
        let mut t = vec![
            point(1, 1.0, Some([0.99, 1.0])),
            point(2, 2.28, Some([2.27, 2.30])),
            point(4, 4.0, Some([3.98, 4.02])),
            point(16, 18.8, Some([18.7, 18.9])),
        ];
        assert!(judge_mlp(&mut t));
        assert!(t.iter().all(|q| q.verdict == Some(Verdict::Noisy)));
        let m = MemoryLatency {
            mlp: t,
            ..Default::default()
        };
        let n = mlp_note(&m).expect("a note");
        assert_eq!(n.code, "cache.mlp-superlinear");
        assert!(n.text.contains("16 chains read 18.8x"), "{}", n.text);
    }

    #[test]
    fn speed_ups_within_their_chains_or_their_interval_stand() {
        // 16.3x with an interval reaching under 16 is the luck of the
        // minima, not an impossibility; sublinear scaling is the rule.
        let mut t = vec![
            point(1, 1.0, None),
            point(2, 1.95, None),
            point(8, 6.8, Some([6.7, 6.9])),
            point(16, 16.3, Some([15.6, 16.9])),
        ];
        assert!(!judge_mlp(&mut t));
        assert!(t.iter().all(|q| q.verdict.is_none()));
        let m = MemoryLatency {
            mlp: t,
            ..Default::default()
        };
        assert!(mlp_note(&m).is_none());
        // Without an interval the figure itself is held to the bound.
        let mut bare = vec![point(1, 1.0, None), point(4, 4.5, None)];
        assert!(judge_mlp(&mut bare));
    }
}
