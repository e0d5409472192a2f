//! The cache probe's steps after its sweep (`measure` runs them): the
//! idle-gap chase (miss latency), the cold laps (each level's latency with
//! the levels below scrubbed), the line-size tests (dependent pairs and
//! the flush granule), memory-level parallelism, and the curve of the
//! buffer's huge pages; with the raw-curve constructor every step uses.

use crate::points::{ChasePoints, Hardware};
use crate::probe::Progress;
use crate::Result;
use hwcal_analysis::cache as cache_analysis;
use hwcal_model::{MachineInfo, RawCurve, RawPoint};

/// Idle adds between loads for the miss-latency chase (~100 cycles, as The
/// Calibrator's delay).
const GAP_ADDS: u32 = hwcal_probes::cache::IDLE_ADDS;

/// Step 5's block: one primary slot per block, the pair's second load `d`
/// away inside it.
pub(crate) const LINE_BLOCK: usize = 2048;

/// Step 6's chain counts.
pub(crate) const MLP_CHAINS: [usize; 5] = [1, 2, 4, 8, 16];

/// Step 5's two tests, (test, primaries), for first and last levels found
/// of `l1` and `last` bytes: test 1 twice as many visits as L1 has lines
/// (misses L1, fits L2), test 2 touched lines at least 4× the last level
/// and 8 MiB (misses every cache); at least 64 visits each.
pub(crate) fn line_tests(l1: f64, last: f64) -> [(u32, usize); 2] {
    [
        (1, ((2.0 * l1 / 64.0) as usize).max(64)),
        (2, (((4.0 * last).max(8.0 * 1048576.0) / 128.0) as usize).max(64)),
    ]
}

/// Step 5b's eviction walk before level `k`'s flush test (levels found of
/// `sizes` bytes): twice the level below, at most the geometric middle of
/// the two, so the targets leave the levels below and stay in this one.
pub(crate) fn flush_evict(sizes: &[f64], k: usize) -> f64 {
    match k {
        0 => 0.0,
        _ => (2.0 * sizes[k - 1]).min((sizes[k - 1] * sizes[k]).sqrt()),
    }
}

/// The smallest cold lap: 256 loads, long against the timer.
const MIN_LAP: f64 = 16384.0;

/// Step 4b's cold laps, `(level, [(working set, scrub)])` for each level
/// past the first of the levels found (`sizes` bytes): laps over a
/// sixteenth and an eighth of the level (small, so that on base pages they
/// walk few pages and the TLB's share removed from them is small; at least
/// 16 KiB, 256 loads, so a lap is long against the timer), each after a
/// scrub that empties the levels
/// below — as large as L1 for L2 (L1 is indexed by virtual address, so a
/// contiguous scrub of its size puts as many lines in each of its sets as
/// it has ways), twice the level below past that (a level indexed by
/// physical address sees the scrub's pages at random colours, and twice
/// its size leaves hardly a set short of its ways). Only where the scrub
/// takes at most half the level, so the lap and the scrub fit it together
/// with over a third to spare; two sizes, so a lap that still depends on its
/// working set shows it. A level too small for its sixteenth to reach
/// 16 KiB (an L2 under 256 KiB) gets laps of 16 KiB and up to twice that,
/// the larger no further than a quarter of it and than leaves three eighths
/// to spare beside the scrub: one lap only reads nothing.
pub(crate) fn cold_plan(sizes: &[f64]) -> Vec<(u32, Vec<(usize, usize)>)> {
    let mut out = Vec::new();
    for k in 1..sizes.len() {
        let (below, own) = (sizes[k - 1], sizes[k]);
        let scrub = if k == 1 {
            (below / 4096.0).ceil() * 4096.0
        } else {
            2.0 * below
        };
        if scrub > own / 2.0 {
            continue;
        }
        // The standard laps, a sixteenth and an eighth; for a level too
        // small for that, 16 KiB and twice it, the larger no further than a
        // quarter of the level nor past the three eighths spare beside the
        // scrub.
        let lo = (own / 16.0).max(MIN_LAP);
        let hi = (own / 8.0)
            .max(2.0 * lo)
            .min((own / 4.0).min(5.0 / 8.0 * own - scrub));
        let laps: Vec<(usize, usize)> = [lo, hi]
            .iter()
            .filter(|&&ws| ws >= MIN_LAP && hi > lo)
            .map(|&ws| (((ws / 64.0).round() * 64.0) as usize, scrub as usize))
            .collect();
        if !laps.is_empty() {
            out.push((k as u32 + 1, laps));
        }
    }
    out
}

/// Step 6's footprint: 8× the last level (found or stated), at least
/// 64 MiB, at most `cap` (the bench's whole buffer).
pub(crate) fn mlp_footprint(last: f64, cap: f64) -> f64 {
    (8.0 * last).max(64.0 * 1048576.0).min(cap)
}

/// Step 3c's next octave (four sizes) past the sweep `lat`, or none: only
/// while its top still climbs (`cache_analysis::still_climbing`) or the
/// analysis of it finds no memory plateau (`memory_found`: the one rule
/// the analysis reports by, so the plan does not stop where the analysis
/// would give no memory figure), up to twice the top and within a quarter
/// of `avail` bytes of memory (the bench allocates a quarter more than its
/// largest working set), and not for less than 1.4× the top.
pub(crate) fn extension_sizes(lat: &RawCurve, memory_found: bool, avail: f64) -> Vec<f64> {
    let top = lat.points.iter().map(|p| p.x).fold(0.0, f64::max);
    let to = (2.0 * top).min(avail / 4.0 / 1.25);
    if to < 1.4 * top || (memory_found && !cache_analysis::still_climbing(lat)) {
        return Vec::new();
    }
    let mut xs: Vec<f64> = (1..=4)
        .map(|k| ((top * 2f64.powf(k as f64 / 4.0)).min(to) / 64.0).round() * 64.0)
        .filter(|&x| x > 1.05 * top)
        .collect();
    // Sizes clamped to `to` are one size.
    xs.dedup();
    xs
}

pub(super) fn curve(id: &str, x: &str, y: &str, points: Vec<RawPoint>) -> RawCurve {
    RawCurve {
        id: id.into(),
        x_label: x.into(),
        y_label: y.into(),
        points,
    }
}

/// Step 4, the idle-gap chase: an L1-resident calibration point, then the
/// middle of each plateau and between each pair of stated levels
/// (`cache_analysis::gap_sizes`).
pub(super) fn gap_points(
    bench: &mut dyn ChasePoints,
    a: &cache_analysis::CacheAnalysis,
    lat: &RawCurve,
    machine: &MachineInfo,
) -> Result<Vec<RawPoint>> {
    // A miss latency is a small step between two gap points: resolve them
    // finer (`fine`: the gap policy).
    let mut gap = vec![bench.chase(0, 4096, GAP_ADDS, true)?];
    for x in cache_analysis::gap_sizes(a, lat, machine) {
        let x = (x / 64.0).round() * 64.0;
        if x > 4096.0 * 1.01 {
            gap.push(bench.chase(0, x as usize, GAP_ADDS, true)?);
        }
    }
    Ok(gap)
}

/// Step 4b, the cold laps ([`cold_plan`]): one curve per level.
pub(super) fn cold_curves(bench: &mut dyn ChasePoints, sizes: &[f64]) -> Result<Vec<RawCurve>> {
    let mut out = Vec::new();
    for (level, laps) in cold_plan(sizes) {
        let mut pts = Vec::new();
        for &(ws, scrub) in &laps {
            if ws.div_ceil(4096) * 4096 + scrub > bench.capacity() {
                continue;
            }
            // A lap the timer could not resolve (a counter standing still
            // under emulation) is no reading: the level just has fewer laps.
            let p = bench.cold(ws, scrub)?;
            if p.y > 0.0 && p.y.is_finite() {
                pts.push(p);
            }
        }
        if let (false, Some(&(_, scrub))) = (pts.is_empty(), laps.first()) {
            // The scrub's size, at x = −scrub: what the analysis checks the
            // laps against (that it covers the level below, and fits beside
            // them in this one), whatever the levels it finds.
            pts.insert(
                0,
                RawPoint {
                    x: -(scrub as f64),
                    y: 0.0,
                    ..Default::default()
                },
            );
            out.push(curve(
                &cache_analysis::cold_id(level),
                "working set (bytes; x = -s: the scrub of s bytes)",
                "ns per load, one lap after the levels below were scrubbed",
                pts,
            ));
        }
    }
    Ok(out)
}

/// Step 5, line size. The pair layout uses 3/8 of the cache sets (see
/// `ChaseBench::pair_point`). Test 1: twice as many visits as L1 has
/// lines, which misses L1 and fits L2; test 2: touched lines at least 4×
/// the last cache level (and 8 MiB), which misses every cache. `l1` and
/// `last` are the sizes of the first and last levels found.
pub(super) fn line_curves(
    bench: &mut dyn ChasePoints,
    l1: f64,
    last: f64,
    progress: &dyn Progress,
) -> Result<Vec<RawCurve>> {
    const BLOCK: usize = LINE_BLOCK;
    let mut raw_lines: Vec<RawCurve> = Vec::new();
    for (test, primaries) in line_tests(l1, last) {
        if primaries * BLOCK > bench.capacity() {
            progress.say(&format!(
                "cache: buffer too small for line-size test {test} ({} MiB needed); skipped",
                (primaries * BLOCK) >> 20
            ));
            continue;
        }
        for fwd in [true, false] {
            let mut pts = Vec::new();
            for d in hwcal_probes::flush::OFFSETS {
                let d = if fwd { d as i64 } else { -(d as i64) };
                pts.push(bench.pair(primaries, d, BLOCK)?);
            }
            raw_lines.push(curve(
                &cache_analysis::line_id(test, fwd),
                "offset d (bytes)",
                "ns per dependent pair",
                pts,
            ));
        }
    }
    Ok(raw_lines)
}

/// Step 5b, the flush granule of each level (see `hwcal_probes::flush`):
/// the targets warmed, then pushed out of the levels below by a walk over
/// twice the level below's size (at most the geometric middle of the two
/// sizes, so they stay in this one). Skipped where the CPU cannot flush a
/// line from user space; the dependent pairs then stand alone.
pub(super) fn flush_curves(hw: &dyn Hardware, sizes: &[f64]) -> Result<Vec<RawCurve>> {
    let mut out = Vec::new();
    for k in 0..sizes.len() {
        let evict = flush_evict(sizes, k);
        let Some(points) = hw.flush_granule(evict as usize, 0xf1u64 + k as u64)? else {
            return Ok(out);
        };
        out.push(curve(
            &cache_analysis::flush_id(k as u32 + 1),
            "offset d (bytes; negative: no flush, all hits)",
            "ns per load after flushing the target's line",
            points,
        ));
    }
    Ok(out)
}

/// Step 6, memory-level parallelism over a memory-sized footprint
/// ([`mlp_footprint`]).
pub(super) fn mlp_points(bench: &mut dyn ChasePoints, last: f64, cap: f64) -> Result<Vec<RawPoint>> {
    let mlp_size = mlp_footprint(last, cap);
    let mut mlp = Vec::new();
    for k in MLP_CHAINS {
        mlp.push(bench.parallel(mlp_size as usize, k)?);
    }
    Ok(mlp)
}

/// The huge-page curve: the share of the `cap`-byte buffer backed by huge
/// pages, and whether the TLB saw them before and after the sweep.
pub(super) fn huge_curve(cap: f64, huge: f64, tlb_ok: bool, still_huge: bool) -> RawCurve {
    curve(
        cache_analysis::HUGE,
        "buffer (bytes)",
        "fraction backed by huge pages (x = 0 / -1: TLB check passed before / after the sweep)",
        vec![
            RawPoint {
                x: cap,
                y: huge,
                ..Default::default()
            },
            // x = 0: whether the TLB saw huge pages before the sweep (1) or
            // not (0); x = -1: the same check after the sweep.
            RawPoint {
                x: 0.0,
                y: if tlb_ok { 1.0 } else { 0.0 },
                ..Default::default()
            },
            RawPoint {
                x: -1.0,
                y: if still_huge { 1.0 } else { 0.0 },
                ..Default::default()
            },
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each lap and its scrub fit the level together, the scrub empties
    /// the level below (its size for a virtually indexed L1, twice past it),
    /// and a level too close to the one below gets no laps.
    #[test]
    fn cold_laps_and_their_scrub_fit_the_level() {
        let kib = 1024.0;
        let plan = cold_plan(&[48.0 * kib, 1024.0 * kib, 16384.0 * kib]);
        assert_eq!(plan.iter().map(|(l, _)| *l).collect::<Vec<_>>(), vec![2, 3]);
        let sizes = [48.0 * kib, 1024.0 * kib, 16384.0 * kib];
        for (level, laps) in &plan {
            let (below, own) = (sizes[*level as usize - 2], sizes[*level as usize - 1]);
            assert_eq!(laps.len(), 2);
            for &(ws, scrub) in laps {
                assert!((ws + scrub) as f64 <= 0.75 * own, "L{level}: {ws} + {scrub}");
                assert!(scrub as f64 >= below, "L{level}: scrub {scrub} under {below}");
            }
        }
        assert_eq!(plan[0].1[0].1, 48 << 10);
        assert_eq!(plan[1].1[0].1, 2 << 20);
        // An L2 of 1.5 times a 128 KiB L1: no room for a scrub beside a lap.
        assert!(cold_plan(&[128.0 * kib, 192.0 * kib]).is_empty());
        assert!(cold_plan(&[32.0 * kib]).is_empty());
        // A 200 KiB L2 over a 64 KiB L1: its sixteenth is under 16 KiB, so
        // its laps are 16 and 32 KiB: two laps, beside the scrub.
        let small = cold_plan(&[64.0 * kib, 200.0 * kib]);
        assert_eq!(small, vec![(2, vec![(16 << 10, 64 << 10), (32 << 10, 64 << 10)])]);
        // Over a 96 KiB L1 the larger stops at 29 KiB (125 − 96).
        let tight = cold_plan(&[96.0 * kib, 200.0 * kib]);
        assert_eq!(tight, vec![(2, vec![(16 << 10, 96 << 10), (29 << 10, 96 << 10)])]);
    }
}
