//! The cache probe's steps after its sweep, as the runner plans them
//! (`hwcal_runner`'s cache probe) from what the analysis found in the
//! sweep: the idle-gap chase at the middle of each plateau (miss latency,
//! the Calibrator's second chase), the dependent-pair line tests with the
//! prefetchers that fool them, the flush-granule test of each level found
//! (x86 only, as `clflush` is), and the independent chains of the
//! memory-level-parallelism test (lmbench's `par_mem`).
//!
//! Closed forms throughout: none of these depends on which set a line
//! lands in beyond what the sweep's chase already models.

use crate::curves::{chase_ns, samples, sweep_sizes, Sampling};
use crate::model::{Model, Pages};
use hwcal_analysis::cache as cache_analysis;
use hwcal_model::{MachineInfo, RawCurve, RawPoint};
use hwcal_runner::cache as cache_plan;
use hwcal_stats::SplitMix64;

/// The offsets of the line tests and the flush test (bytes): the probes'.
const OFFSETS: [usize; 6] = hwcal_probes::flush::OFFSETS;

/// Dependent adds after each load of the idle-gap chase, one cycle each.
const IDLE_ADDS: f64 = hwcal_probes::cache::IDLE_ADDS as f64;

/// The line-size test's block: one primary slot per block, the pair's
/// second load `d` away inside it (the runner's).
const BLOCK: f64 = cache_plan::LINE_BLOCK as f64;

fn curve(id: &str, x_label: &str, y_label: &str, points: Vec<RawPoint>) -> RawCurve {
    RawCurve {
        id: id.into(),
        x_label: x_label.into(),
        y_label: y_label.into(),
        points,
    }
}

/// One noisy point at `x`: `at` gives a sample's noise-free time.
fn point(
    model: &Model,
    x: f64,
    sampling: Sampling,
    rng: &mut SplitMix64,
    at: impl FnMut(bool, f64, &mut SplitMix64) -> f64,
) -> RawPoint {
    let mut p = samples(model, (sampling, 0.0), true, rng, at);
    p.x = x;
    p
}

/// Every curve of the steps after the sweep `lat`, planned from the
/// analysis of it as the runner plans them.
pub fn after_sweep(
    model: &Model,
    lat: &RawCurve,
    machine: &MachineInfo,
    rng: &mut SplitMix64,
) -> Vec<RawCurve> {
    let huge = model.pages == Pages::Huge;
    let a = cache_analysis::analyze_sweep(lat, Some(if huge { 1.0 } else { 0.0 }), machine);
    let sizes: Vec<f64> = a.levels.iter().map(|l| l.size_bytes as f64).collect();
    let l1 = sizes.first().copied().unwrap_or(32768.0);
    let last = sizes.last().copied().unwrap_or(l1);
    // The chase buffer: the sweep's largest working set (before any
    // extension: that has a buffer of its own) and a quarter more; the line
    // tests and the chains run within it.
    let top = sweep_sizes(model).last().copied().unwrap_or(64.0 * 1048576.0);
    let mut out = vec![gap(model, (&a, lat, machine), rng)];
    out.extend(lines(model, l1, last, 1.25 * top, rng));
    if machine.arch == "x86_64" {
        out.extend(flush(model, &sizes, rng));
    }
    let last_stated = machine
        .nominal_caches
        .iter()
        .map(|c| c.size_bytes as f64)
        .fold(last, f64::max);
    out.push(mlp(model, last_stated, 1.25 * top, rng));
    out
}

/// `cache.gap`: an L1-resident point (it calibrates the gap's own cost),
/// then the middle of each plateau the analysis found and between each
/// pair of stated levels. The adds depend on
/// the loaded value, so the gap adds its cycles to every load and hides
/// nothing.
fn gap(
    model: &Model,
    (a, lat, machine): (&cache_analysis::CacheAnalysis, &RawCurve, &MachineInfo),
    rng: &mut SplitMix64,
) -> RawCurve {
    let gap_ns = IDLE_ADDS * 1000.0 / model.mhz;
    let mut xs = vec![4096.0];
    for x in cache_analysis::gap_sizes(a, lat, machine) {
        let x = (x / 64.0).round() * 64.0;
        if x > 4096.0 * 1.01 {
            xs.push(x);
        }
    }
    let points = xs
        .into_iter()
        .map(|x| {
            let mut p = samples(model, (Sampling::gap(), gap_ns), true, rng, |busy, share, r| {
                chase_ns(model, x, true, busy, share, r)
            });
            p.x = x;
            p
        })
        .collect();
    curve(
        cache_analysis::GAP,
        "working set (bytes)",
        "ns per load incl. idle gap",
        points,
    )
}

/// `cache.line.{1,2}.{fwd,bwd}`: each visit loads a primary slot, then
/// dependent on it the word `d` away. Test 1's primaries (twice L1's
/// lines) miss L1 and sit in L2; test 2's (at least four times the last
/// level, 8 MiB) miss every cache. The second load hits the primary's line
/// while |d| is under the line; past it, it pays the same miss again —
/// unless a prefetcher brought that line: L1's next-line prefetcher the
/// line after (forward only, and late: it hides most of the miss, not all
/// of it), an L2 neighbour-line prefetcher the line either side of a
/// memory miss (then L2 serves it). The pair layout uses 3/8 of the sets,
/// so its lines fill a level 8/3 times faster than a dense chase's.
fn lines(model: &Model, l1: f64, last: f64, cap: f64, rng: &mut SplitMix64) -> Vec<RawCurve> {
    let line = model.levels.first().map_or(64.0, |l| l.line as f64);
    let l1_ns = model.levels.first().map_or(1.0, |l| l.ns);
    let l2_ns = model.levels.get(1).map_or(l1_ns, |l| l.ns);
    let mut out = Vec::new();
    for (test, primaries) in cache_plan::line_tests(l1, last) {
        let primaries = primaries as f64;
        if primaries * BLOCK > cap {
            continue;
        }
        // The first load: the level a chase over the pairs' lines lives in,
        // and on base pages the TLB misses of a walk over their blocks.
        let first = |busy: bool, share: f64, lines: f64, r: &mut SplitMix64| {
            let mut ns = chase_ns(model, primaries * lines * 64.0 * 8.0 / 3.0, false, busy, share, r);
            if model.pages == Pages::Base {
                ns += model.tlb_penalty(&model.chase_tlb_miss(primaries * BLOCK / model.page as f64));
            }
            ns
        };
        for fwd in [true, false] {
            let points = OFFSETS
                .map(|d| d as f64)
                .into_iter()
                .map(|d| {
                    let x = if fwd { d } else { -d };
                    point(model, x, Sampling::sweep(), rng, |busy, share, r| {
                        if d < line {
                            return first(busy, share, 1.0, r) + l1_ns;
                        }
                        let one = first(busy, share, 2.0, r);
                        let neighbour = d < 2.0 * line;
                        let second = if neighbour && test == 2 && model.prefetch.neighbour {
                            l2_ns
                        } else if neighbour && fwd && model.prefetch.next_line {
                            l1_ns + 0.3 * (one - l1_ns)
                        } else {
                            one
                        };
                        one + second
                    })
                })
                .collect();
            out.push(curve(
                &cache_analysis::line_id(test, fwd),
                "offset d (bytes)",
                "ns per dependent pair",
                points,
            ));
        }
    }
    out
}

/// `cache.flush.N` for each level found: the targets warmed, pushed out of
/// the levels below by a walk over twice the level below's size (at most
/// the geometric middle of the two sizes), one target's line flushed, then
/// the word `d` past its base loaded: from memory while `d` is inside the
/// flushed line, from the level otherwise. Negative x: the all-hits
/// reference. A small buffer: no TLB misses.
fn flush(model: &Model, sizes: &[f64], rng: &mut SplitMix64) -> Vec<RawCurve> {
    let line = model.levels.first().map_or(64.0, |l| l.line as f64);
    let mut out = Vec::new();
    for k in 0..sizes.len() {
        // L1's targets are simply warm: a chase that small lives in L1.
        let evict = cache_plan::flush_evict(sizes, k).max(4096.0);
        let hit = |busy: bool, share: f64, r: &mut SplitMix64| chase_ns(model, evict, false, busy, share, r);
        let mut points = vec![point(model, -(OFFSETS[0] as f64), Sampling::fixed(3), rng, hit)];
        for d in OFFSETS.map(|d| d as f64) {
            points.push(point(model, d, Sampling::fixed(3), rng, |busy, share, r| {
                if d < line {
                    model.memory_ns
                } else {
                    hit(busy, share, r)
                }
            }));
        }
        out.push(curve(
            &cache_analysis::flush_id(k as u32 + 1),
            "offset d (bytes; negative: no flush, all hits)",
            "ns per load after flushing the target's line",
            points,
        ));
    }
    out
}

/// `cache.mlp`: k independent chases over a memory-sized footprint (8×
/// the last level found or stated, at least 64 MiB, at most the buffer): k misses in
/// flight, as many as the core's fill buffers hold, so a load costs the
/// memory latency over min(k, MLP).
fn mlp(model: &Model, last: f64, cap: f64, rng: &mut SplitMix64) -> RawCurve {
    let size = cache_plan::mlp_footprint(last, cap);
    let points = cache_plan::MLP_CHAINS
        .map(|k| k as f64)
        .into_iter()
        .map(|k| {
            point(model, k, Sampling::sweep(), rng, |busy, share, r| {
                chase_ns(model, size, true, busy, share, r) / k.min(model.mlp)
            })
        })
        .collect();
    curve(cache_analysis::MLP, "independent chains", "ns per load", points)
}
