//! The simulator held to real machines: a model built from a recorded
//! profile (its nominal caches, the latencies and TLB levels the analysis
//! measured, the pages its chase ran on) simulates the cache sweep at the
//! recorded working sets, and the two curves are compared where the
//! simulator could be wrong — the shape between the plateaus: where each
//! edge is crossed half-way, and how far every point of the curve is from
//! the recorded one. The plateaus' own latencies come from the recording,
//! so agreeing on them proves nothing; the edges and the climbs do.

use crate::curves::cache_point;
use crate::model::{Level, Model, Noise, Pages, Prefetch, Replacement, Tlb};
use hwcal_model::{Profile, RawCurve};
use hwcal_stats::SplitMix64;

/// A model of the machine a profile recorded, or `None` without the
/// figures it needs (levels, memory, a cache sweep).
pub fn model_of(p: &Profile) -> Option<Model> {
    let m = p.machine.as_ref()?;
    let caches = p.caches.as_ref()?;
    let memory = p.memory.as_ref()?;
    let amd = m.cpu_vendor.contains("AMD");
    // The corpus's policies: L1 LRU, L2 random, the shared level as the
    // corpus's core of that name has it (adaptive on Intel's otherwise).
    let core = m.core_name().unwrap_or("");
    let llc = crate::corpus::llc_of(core).unwrap_or(if m.cpu_vendor.contains("Intel") {
        Replacement::Adaptive
    } else {
        Replacement::Lru
    });
    let levels: Vec<Level> = caches
        .iter()
        .map(|c| {
            let nominal = m.nominal_data_cache(c.level);
            let shared = nominal.is_some_and(|n| n.shared_cpus.len() > 1) || c.level >= 3;
            Level {
                // A private level's size is the core's; a shared one's is
                // the guest's share of it, which the recording measured.
                size: if shared {
                    c.size_bytes
                } else {
                    nominal.map_or(c.size_bytes, |n| n.size_bytes)
                },
                ways: nominal.and_then(|n| n.ways).unwrap_or(8) as u32,
                line: nominal.and_then(|n| n.line_bytes).unwrap_or(64),
                ns: c.latency_ns,
                shared,
                victim: amd && c.level >= 3,
                replacement: match c.level {
                    1 => Replacement::Lru,
                    2 => Replacement::Random,
                    _ => llc,
                },
            }
        })
        .collect();
    let tlbs = p
        .tlbs
        .iter()
        .flatten()
        .filter(|t| t.page_bytes == 4096)
        .map(|t| Tlb {
            entries: t.entries,
            ways: if t.level == 1 { 0 } else { 8 },
            miss_ns: t.miss_latency_ns.max(0.0),
        })
        .collect();
    // Huge only where the buffer was and the TLB check before and after
    // the sweep (the points at x = 0 and -1) saw it so: a host backing
    // the guest with 4 KiB pages gives huge pages the TLB never sees.
    let huge = p
        .raw_curve("cache.huge_fraction")
        .is_some_and(|c| !c.points.is_empty() && c.points.iter().all(|q| q.y >= 0.9));
    Some(Model {
        name: format!("{} (recorded)", m.core_name().unwrap_or("?")),
        core: m.core_name().unwrap_or("?").into(),
        vendor: m.cpu_vendor.clone(),
        mhz: p.clock.as_ref().map_or(3000.0, |c| c.core_mhz),
        levels,
        memory_ns: memory.latency_ns - memory.tlb_share_ns.unwrap_or(0.0),
        tlbs,
        pages: if huge { Pages::Huge } else { Pages::Base },
        page: m.page_bytes.unwrap_or(4096),
        vcpus: m.logical_cpus,
        // The recorded speedup at the most chains: the misses it kept in flight.
        mlp: memory
            .mlp
            .iter()
            .map(|q| q.speedup)
            .filter(|s| s.is_finite())
            .fold(1.0, f64::max),
        prefetch: Prefetch::default(),
        noise: Noise::default(),
        seed: 1,
        guest: crate::model::Guest::default(),
    })
}

/// How the simulated sweep compares with a recorded one.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    pub model: Model,
    /// Per edge (level k to the next, or memory): the working set where the
    /// recorded and the simulated curve first cross half-way between the
    /// two plateaus, and how many sweep steps (four per octave) apart.
    pub edges: Vec<(u32, f64, f64, f64)>,
    /// The median and largest relative difference between the curves,
    /// point by point.
    pub median_diff: f64,
    pub max_diff: f64,
}

/// The first working set past `from` where `curve` reaches `level`.
fn crossing(xs: &[f64], ys: &[f64], from: f64, level: f64) -> Option<f64> {
    xs.iter()
        .zip(ys)
        .find(|(x, y)| **x >= from && **y >= level)
        .map(|(x, _)| *x)
}

/// Simulate the recorded sweep's working sets on the model of `p`, its
/// figures derived again from its raw curves by this analysis first (a
/// recording keeps the figures of the version that wrote it: Zen 5's
/// run-b its L3 as memory).
pub fn calibrate(p: &Profile) -> Option<Calibration> {
    let mut p = p.clone();
    hwcal_runner::reanalyse_stored(&mut p).ok()?;
    let p = &p;
    let model = model_of(p)?;
    let rec: &RawCurve = p.raw_curve("cache.latency")?;
    let xs: Vec<f64> = rec.points.iter().map(|q| q.x).collect();
    let ys: Vec<f64> = rec.points.iter().map(|q| q.y).collect();
    let mut rng = SplitMix64::new(model.seed);
    let sim: Vec<f64> = xs.iter().map(|&x| cache_point(&model, x, &mut rng)).collect();
    let mut edges = Vec::new();
    for (k, l) in model.levels.iter().enumerate() {
        let next = model
            .levels
            .get(k + 1)
            .map_or(crate::guest::memory_truth(&model, l.size as f64 * 4.0), |n| n.ns);
        let mid = (l.ns + next) / 2.0;
        let from = l.size as f64 / 4.0;
        if let (Some(a), Some(b)) = (crossing(&xs, &ys, from, mid), crossing(&xs, &sim, from, mid)) {
            edges.push((k as u32 + 1, a, b, 4.0 * (b / a).log2().abs()));
        }
    }
    let mut diffs: Vec<f64> = ys.iter().zip(&sim).map(|(r, s)| ((s - r) / r).abs()).collect();
    diffs.sort_by(f64::total_cmp);
    Some(Calibration {
        model,
        edges,
        median_diff: diffs.get(diffs.len() / 2).copied().unwrap_or(f64::NAN),
        max_diff: diffs.last().copied().unwrap_or(f64::NAN),
    })
}
