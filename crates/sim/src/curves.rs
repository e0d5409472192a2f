//! The raw curves the real cache and TLB probes produce, from a [`Model`]:
//! closed forms where the effect is a formula, the placement drawn where
//! the effect is chance (which page colour each 4 KiB page gets, which
//! TLB set each page hashes to).
//!
//! The chase is a random cyclic permutation of the lines of a buffer (the
//! probes' pointer chase): each line is touched once per lap, so a level
//! with LRU replacement keeps a line exactly when no more lines than it
//! has ways fall into the line's set, and misses it on every lap
//! otherwise. With 4 KiB pages on random frames a physically indexed
//! level of S sets sees S·line/4096 page colours; the pages drawn decide
//! how many land on each colour, and a colour with more pages than ways
//! misses all of them — the smeared edge recorded on Zen 3 (Kessler and
//! Hill, "Page placement algorithms for large real-indexed caches", 1992).
//! A victim level holds what the level above evicts, so the two together
//! serve the chase until it outgrows both.

use crate::model::{Level, Model, Pages, Replacement};
use hwcal_model::{RawCurve, RawPoint};
use hwcal_probes::cache::COLD_PASSES;
use hwcal_stats::SplitMix64;

/// A process-wide memo of one set simulation: each case (`key`) is
/// simulated once (`f`), whichever thread asks first.
pub(crate) type Memo<K> = std::sync::OnceLock<std::sync::Mutex<std::collections::HashMap<K, f64>>>;

/// `f()` for `key`, from `memo` where it was computed before.
pub(crate) fn memoised<K: std::hash::Hash + Eq>(
    memo: &'static Memo<K>,
    key: K,
    f: impl FnOnce() -> f64,
) -> f64 {
    let memo = memo.get_or_init(Default::default);
    if let Some(v) = memo.lock().ok().and_then(|g| g.get(&key).copied()) {
        return v;
    }
    let v = f();
    if let Ok(mut g) = memo.lock() {
        g.insert(key, v);
    }
    v
}

/// A uniform draw in [0, 1).
pub(crate) fn unit(rng: &mut SplitMix64) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// A standard normal draw (Box–Muller).
pub(crate) fn normal(rng: &mut SplitMix64) -> f64 {
    let u = unit(rng).max(1e-12);
    let v = unit(rng);
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

/// The fraction of a cyclic chase's loads that miss a set of `ways` ways
/// holding `n` of its lines under `replacement` (see [`Replacement`]):
/// none when they fit; under LRU all of them; otherwise what a simulation
/// of the set finds, so the analysis's closed form for a set that keeps
/// part of the chase (`hwcal_analysis::colour`) is checked rather than
/// assumed. Simulated up to four times the ways; past that, a closed form
/// the simulation meets there: random replacement's survival fixed point
/// (a line survives each miss between its visits with probability
/// 1 − 1/W: h = (1 − 1/W)^((1 − h)(n − 1))), adaptive insertion's kept
/// part (the fraction at 4W, scaled as (4W/n)², as the simulation falls
/// off from 3W to 4W), PLRU as LRU.
fn set_miss(n: u32, ways: u32, replacement: Replacement) -> f64 {
    if n <= ways {
        return 0.0;
    }
    match replacement {
        Replacement::Lru => return 1.0,
        Replacement::Plru if n > 4 * ways => return 1.0,
        Replacement::Random if n > 4 * ways => {
            let survive = 1.0 - 1.0 / ways as f64;
            let mut h = 0.0f64;
            for _ in 0..100 {
                h = survive.powf((1.0 - h) * (n as f64 - 1.0));
            }
            return 1.0 - h;
        }
        Replacement::Adaptive if n > 4 * ways => {
            let at = 1.0 - set_miss(4 * ways, ways, replacement);
            return 1.0 - at * ((4 * ways) as f64 / n as f64).powi(2);
        }
        _ => {}
    }
    static MEMO: Memo<(u32, u32, u8)> = Memo::new();
    memoised(&MEMO, (n, ways, replacement as u8), || {
        simulate_set(n, ways, replacement)
    })
}

/// One cache set under a replacement policy: the lines it holds, in
/// recency order (LRU, adaptive), in place with their MRU bits (PLRU) or
/// unordered (random).
pub(crate) struct Set {
    lines: Vec<u32>,
    mru: Vec<bool>,
    ways: usize,
    replacement: Replacement,
    rng: SplitMix64,
}

impl Set {
    pub(crate) fn new(ways: u32, replacement: Replacement, seed: u64) -> Set {
        let w = ways as usize;
        Set {
            lines: Vec::with_capacity(w),
            mru: vec![false; w],
            ways: w,
            replacement,
            rng: SplitMix64::new(seed),
        }
    }

    /// Load `line`: whether it hit.
    pub(crate) fn access(&mut self, line: u32) -> bool {
        let (w, set, mru) = (self.ways, &mut self.lines, &mut self.mru);
        let at = set.iter().position(|&l| l == line);
        match (self.replacement, at) {
            (Replacement::Plru, Some(i)) => touch(mru, i),
            (Replacement::Lru | Replacement::Adaptive, Some(i)) => {
                set.remove(i);
                set.insert(0, line);
            }
            (_, Some(_)) => {}
            (_, None) if set.len() < w => {
                set.push(line);
                if self.replacement == Replacement::Plru {
                    touch(mru, set.len() - 1);
                }
            }
            (Replacement::Plru, None) => {
                let victim = mru.iter().position(|&b| !b).unwrap_or(0);
                set[victim] = line;
                touch(mru, victim);
            }
            (Replacement::Random, None) => {
                let victim = self.rng.index(w);
                set[victim] = line;
            }
            (Replacement::Lru, None) => {
                set.pop();
                set.insert(0, line);
            }
            (Replacement::Adaptive, None) => {
                // Bimodal insertion: at the LRU end, one in 8 at the MRU end.
                set.pop();
                if self.rng.index(8) == 0 {
                    set.insert(0, line);
                } else {
                    set.push(line);
                }
            }
        }
        at.is_some()
    }
}

/// One set of `ways` ways under a cyclic chase over `n` lines: the miss
/// fraction in the steady state (200 laps, the first 20 uncounted).
fn simulate_set(n: u32, ways: u32, replacement: Replacement) -> f64 {
    let mut set = Set::new(
        ways,
        replacement,
        ((n as u64) << 32) | ((ways as u64) << 8) | replacement as u64,
    );
    let (mut hits, mut loads) = (0u64, 0u64);
    for lap in 0..200 {
        for line in 0..n {
            let hit = set.access(line);
            if lap >= 20 {
                loads += 1;
                hits += u64::from(hit);
            }
        }
    }
    1.0 - hits as f64 / loads as f64
}

/// The share of a set's `n` chase lines that one lap finds there after
/// the steady chase, then [`COLD_PASSES`] passes over `m` other lines (the
/// cold lap's scrub, `hwcal_probes::cache::ChaseBench::cold_point`), the
/// set simulated line by line (averaged over 8 draws of the policy's
/// randomness). Past 16 times its ways a set holds nothing of a cyclic
/// chase worth counting; a longer scrub only evicts more.
fn cold_set(n: u32, m: u32, ways: u32, replacement: Replacement) -> f64 {
    if n == 0 || n > 16 * ways {
        return 0.0;
    }
    let m = m.min(16 * ways);
    static MEMO: Memo<(u32, u32, u32, u8)> = Memo::new();
    memoised(&MEMO, (n, m, ways, replacement as u8), || {
        let mut hits = 0u64;
        const DRAWS: u64 = 8;
        for d in 0..DRAWS {
            let mut set = Set::new(ways, replacement, (u64::from(n) << 40) ^ (u64::from(m) << 16) ^ d);
            for _ in 0..30 {
                for line in 0..n {
                    set.access(line);
                }
            }
            for _ in 0..COLD_PASSES {
                for k in 0..m {
                    set.access(n + k);
                }
            }
            hits += (0..n).filter(|&line| set.access(line)).count() as u64;
        }
        hits as f64 / (DRAWS * u64::from(n)) as f64
    })
}

/// The share of a chase over `bytes` that a level of `size` bytes still
/// holds for the cold lap after a scrub over `scrub` bytes placed after
/// it ([`cold_set`] for each set by how many chase and scrub lines it
/// holds, [`over_sets`]; `rng` draws the chase's frames as for
/// [`miss_fraction`], `scrub_rng` the scrub's).
fn cold_fraction(
    size: f64,
    (ways, line, replacement): (u32, u64, Replacement),
    (bytes, scrub): (f64, f64),
    colour: u64,
    (rng, scrub_rng): (&mut SplitMix64, &mut SplitMix64),
) -> f64 {
    over_sets(
        (size, ways, line),
        (bytes, scrub),
        colour,
        (rng, Some(scrub_rng)),
        1.0,
        |n, m| cold_set(n, m, ways, replacement),
    )
}

/// The line-weighted mean of `per_set(chase lines, scrub lines)` over a
/// level of `size` bytes, `ways` ways and `line`-byte lines, for a chase
/// over `bytes` and a scrub over `scrub` bytes after it (`empty` where the
/// chase has no lines). `colour` is the page granule the placement is
/// random at (4 KiB frames; 0: contiguous, as 2 MiB pages are for any
/// level indexed within them): contiguous, the lines spread evenly over
/// the sets; on random frames each page lands on a colour (`rng` for the
/// chase's, `scrub_rng` for the scrub's) and every set of a colour holds
/// one line of each page on it.
fn over_sets(
    (size, ways, line): (f64, u32, u64),
    (bytes, scrub): (f64, f64),
    colour: u64,
    (rng, scrub_rng): (&mut SplitMix64, Option<&mut SplitMix64>),
    empty: f64,
    per_set: impl Fn(u32, u32) -> f64,
) -> f64 {
    let sets = (size / (ways as f64 * line as f64)).max(1.0);
    let colours = if colour == 0 {
        1
    } else {
        ((sets * line as f64) / colour as f64).floor().max(1.0) as u64
    };
    if colours <= 1 || bytes < colour as f64 {
        let q = bytes / line as f64 / sets;
        let r = (scrub / line as f64 / sets).round() as u32;
        let base = q.floor();
        let extra = q - base;
        let sum = extra * (base + 1.0) * per_set(base as u32 + 1, r)
            + (1.0 - extra) * base * per_set(base as u32, r);
        return if q > 0.0 { (sum / q).min(1.0) } else { empty };
    }
    let pages = (bytes / colour as f64).round().max(1.0) as u64;
    let mut load = vec![0u32; colours as usize];
    for _ in 0..pages {
        load[rng.index(colours as usize)] += 1;
    }
    let mut scrubbed = vec![0u32; colours as usize];
    if let Some(srng) = scrub_rng {
        for _ in 0..(scrub / colour as f64).round() as u64 {
            scrubbed[srng.index(colours as usize)] += 1;
        }
    }
    let sum: f64 = load
        .iter()
        .zip(&scrubbed)
        .map(|(&n, &m)| n as f64 * per_set(n, m))
        .sum();
    sum / pages as f64
}

/// PLRU's MRU bits on a touch of way `i`: set its bit; when that sets them
/// all, clear the others.
fn touch(mru: &mut [bool], i: usize) {
    mru[i] = true;
    if mru.iter().all(|&b| b) {
        mru.iter_mut().for_each(|b| *b = false);
        mru[i] = true;
    }
}

/// The fraction of a lap's lines that miss a level of `size` bytes with
/// `ways` ways and `line`-byte lines, for a chase over `bytes` ([`set_miss`]
/// for each set by how many of the chase's lines it holds, [`over_sets`]).
fn miss_fraction(
    size: f64,
    (ways, line, replacement): (u32, u64, Replacement),
    bytes: f64,
    colour: u64,
    rng: &mut SplitMix64,
) -> f64 {
    over_sets(
        (size, ways, line),
        (bytes, 0.0),
        colour,
        (rng, None),
        0.0,
        |n, _| set_miss(n, ways, replacement),
    )
}

/// The fraction of pages each TLB level misses when the TLB probe walks
/// `pages` pages, one load per page in a cycle: a fully associative first level misses from its size on
/// and more and more past it (not LRU), reaching all of them at 1.35× its
/// size; a set-associative level with a hashed index misses the pages of
/// every set that drew more than its ways.
pub(crate) fn tlb_miss(model: &Model, pages: f64, rng: &mut SplitMix64) -> Vec<f64> {
    let mut out: Vec<f64> = Vec::new();
    for t in &model.tlbs {
        let e = t.entries as f64;
        let m = if t.ways == 0 {
            ((pages - e) / (0.35 * e)).clamp(0.0, 1.0)
        } else {
            let sets = (t.entries / t.ways as u64).max(1) as usize;
            let n = pages.round().max(1.0) as u64;
            let mut load = vec![0u32; sets];
            for _ in 0..n {
                load[rng.index(sets)] += 1;
            }
            load.iter()
                .filter(|&&k| k > t.ways)
                .map(|&k| k as f64)
                .sum::<f64>()
                / n as f64
        };
        // A page a lower level holds, no higher level misses.
        let m = out.last().map_or(m, |&prev| m.min(prev));
        out.push(m);
    }
    out
}

/// The latency of one lap of a chase over `bytes` (ns per load): each
/// line served by the first level that keeps it, or memory. `busy` and
/// `share`: one sample's conditions (L1 and L2 halved by a busy sibling;
/// the guest's share of the shared level). `rng` draws the pages'
/// frames: one draw per level from its first number, so two chases over
/// a buffer's prefixes with the same placement see the same frames
/// under the same lines (a sweep's points, as on one real buffer).
pub(crate) fn chase_ns(
    model: &Model,
    bytes: f64,
    tlb_pages: bool,
    busy: bool,
    share: f64,
    rng: &mut SplitMix64,
) -> f64 {
    chase(model, bytes, tlb_pages, (busy, share), rng).0
}

/// ns per load of the cold lap (`hwcal_probes::cache::ChaseBench::cold_point`):
/// one lap over `bytes` right after a scrub over `scrub` bytes, each line
/// served by the first level that still holds it ([`cold_fraction`]), or
/// memory; page walks as for [`chase_ns`].
pub(crate) fn cold_ns(
    model: &Model,
    (bytes, scrub): (f64, f64),
    busy: bool,
    share: f64,
    rng: &mut SplitMix64,
) -> f64 {
    lap(model, bytes, Some(scrub), true, (busy, share), rng).0
}

/// [`chase_ns`] and the fraction of its loads memory serves.
pub(crate) fn chase(
    model: &Model,
    bytes: f64,
    tlb_pages: bool,
    (busy, share): (bool, f64),
    rng: &mut SplitMix64,
) -> (f64, f64) {
    lap(model, bytes, None, tlb_pages, (busy, share), rng)
}

/// A steady chase's lap ([`chase`]), or with `scrub` the cold lap after a
/// scrub of that many bytes ([`cold_ns`]).
fn lap(
    model: &Model,
    bytes: f64,
    scrub: Option<f64>,
    tlb_pages: bool,
    (busy, share): (bool, f64),
    rng: &mut SplitMix64,
) -> (f64, f64) {
    let colour = match model.pages {
        Pages::Base => model.page,
        Pages::Huge => model.huge_page(),
    };
    let frames = rng.next_u64();
    let mut served = 0.0;
    let mut ns = 0.0;
    let mut prev_miss = 1.0f64;
    let mut above: Option<&Level> = None;
    for (k, l) in model.levels.iter().enumerate() {
        // L1 is indexed by virtual address (VIPT): the buffer's virtual
        // pages are contiguous, so it sees no page colours.
        let colour = if k == 0 { 0 } else { colour };
        let mut size = l.size as f64;
        if busy && !l.shared {
            size /= 2.0;
        }
        if l.shared {
            size *= share;
        }
        if l.victim {
            size += above.map_or(0.0, |a| a.size as f64);
        }
        let mut draw = SplitMix64::new(frames ^ (k as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let geometry = (l.ways, l.line, l.replacement);
        let m = match scrub {
            None => miss_fraction(size, geometry, bytes, colour, &mut draw),
            Some(s) => {
                let mut scrub_draw =
                    SplitMix64::new(frames ^ 0x5C2B ^ (k as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03));
                1.0 - cold_fraction(size, geometry, (bytes, s), colour, (&mut draw, &mut scrub_draw))
            }
        }
        .min(prev_miss);
        ns += (prev_miss - m) * l.ns;
        served += prev_miss - m;
        prev_miss = m;
        above = Some(l);
    }
    ns += prev_miss * model.memory_ns;
    debug_assert!((served + prev_miss - 1.0).abs() < 1e-9);
    if tlb_pages && model.pages == Pages::Base {
        // The walks, and what their own entries cost once they miss the
        // caches (a guest whose page tables live in them).
        ns += model.tlb_penalty(&model.chase_tlb_miss(bytes / model.page as f64))
            + crate::guest::walk_extra_ns(model, bytes);
    }
    (ns, prev_miss)
}

/// The probes' timing block (`enough`): 100 µs.
const BLOCK_S: f64 = 1e-4;

/// How many samples a point takes: the harness's stopping rule (at least
/// `min`, then until the `best_k` fastest agree within `tolerance`, at
/// most `max`), so a simulated point's minimum is as precise as a real
/// one's under the same noise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    pub min: usize,
    pub max: usize,
    pub best_k: usize,
    pub tolerance: f64,
    /// How long one sample lasts, s: spikes come at a rate per unit of
    /// time, so a long sample meets more of them, each a smaller share.
    pub block_s: f64,
}

impl Sampling {
    /// Exactly `n` samples (one per page placement, or a probe's rounds).
    pub fn fixed(n: usize) -> Self {
        Sampling {
            min: n,
            max: n,
            best_k: 1,
            tolerance: 0.0,
            block_s: BLOCK_S,
        }
    }

    /// The same with samples of `s` seconds each.
    pub fn lasting(self, s: f64) -> Self {
        Sampling { block_s: s, ..self }
    }

    /// The cache probe's latency policy (sweep points, line pairs, chains).
    pub fn sweep() -> Self {
        Self::of(&hwcal_probes::cache::latency_policy())
    }

    /// The idle-gap chase's finer policy.
    pub fn gap() -> Self {
        Self::of(&hwcal_probes::cache::gap_policy())
    }

    fn of(p: &hwcal_harness::Policy) -> Self {
        Sampling {
            min: p.min_samples,
            max: p.max_samples,
            best_k: p.best_k,
            tolerance: p.tolerance,
            block_s: BLOCK_S,
        }
    }

    fn done(&self, s: &[f64]) -> bool {
        if s.len() >= self.max {
            return true;
        }
        if s.len() < self.min.max(self.best_k) {
            return false;
        }
        let mut sorted = s.to_vec();
        sorted.sort_by(f64::total_cmp);
        sorted[self.best_k - 1] <= sorted[0] * (1.0 + self.tolerance)
    }
}

/// Samples of one point: the chase's latency under each sample's noise,
/// as many as `sampling` takes. `placement`: the seed of the physical
/// pages every sample runs on (a point of a sweep, timed again on its
/// buffer), or `None` for another draw of pages each sample. `core_ns`: time spent in
/// the core alone (the idle gap's dependent adds): a fixed number of
/// cycles, which the memory system's jitter does not stretch; a spike (an
/// interrupt) lands anywhere in the sample.
pub(crate) fn samples(
    model: &Model,
    (sampling, core_ns): (Sampling, f64),
    placement: Option<u64>,
    rng: &mut SplitMix64,
    mut at: impl FnMut(bool, f64, &mut SplitMix64) -> f64,
) -> RawPoint {
    let nz = model.noise;
    // One guest share per point: the share moves between points of a sweep.
    let share = 1.0 - nz.share_moves * unit(rng);
    let mut s = Vec::with_capacity(sampling.min);
    // On fixed frames a sample's noise-free time depends on whether the
    // sibling is busy and nothing else: computed once each.
    let mut known: [Option<f64>; 2] = [None, None];
    while !sampling.done(&s) {
        let busy = unit(rng) < nz.busy;
        let base = match (placement, known[usize::from(busy)]) {
            (Some(_), Some(v)) => v,
            _ => {
                let mut pages = SplitMix64::new(placement.unwrap_or_else(|| rng.next_u64()));
                let v = at(busy, share, &mut pages);
                if placement.is_some() {
                    known[usize::from(busy)] = Some(v);
                }
                v
            }
        };
        let mut v = base * (1.0 + (nz.jitter * normal(rng)).abs()) + core_ns;
        // Spikes (an interrupt, the host's tick, a preemption) come at
        // `spikes` per 100 µs block and each takes 20–200 µs: a 100 µs
        // sample that meets one is 1.2–3× slower, a 10 ms slice that meets
        // a few some percent.
        let blocks = (sampling.block_s / BLOCK_S).max(1.0);
        let mut stolen = 0.0;
        let mut left = nz.spikes * blocks;
        while left > 0.0 {
            if unit(rng) < left.min(1.0) {
                stolen += 0.2 + 1.8 * unit(rng);
            }
            left -= 1.0;
        }
        v *= 1.0 + stolen / blocks;
        s.push(v);
    }
    let y = s.iter().copied().fold(f64::INFINITY, f64::min);
    RawPoint {
        x: 0.0,
        y,
        mhz: vec![model.mhz; s.len()],
        samples: s,
    }
}

/// One point of the cache sweep without noise (the quiet machine's
/// latency at `bytes`, on one draw of pages).
pub fn cache_point(model: &Model, bytes: f64, rng: &mut SplitMix64) -> f64 {
    chase_ns(model, bytes, true, false, 1.0, rng)
}

/// A one-point curve of a probe's conditions (`cache.huge_fraction`,
/// `*.neighbour_busy`).
pub fn fact(id: &str, label: &str, points: &[(f64, f64)]) -> RawCurve {
    RawCurve {
        id: id.into(),
        x_label: "-".into(),
        y_label: label.into(),
        points: points
            .iter()
            .map(|&(x, y)| RawPoint {
                x,
                y,
                ..Default::default()
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cold lap's set: an LRU set scrubbed with as many lines as it
    /// has ways keeps nothing of the chase; one scrubbed with none keeps
    /// all of a chase that fits; adaptive insertion lets a single scan go
    /// by but not the cold lap's passes.
    #[test]
    fn a_scrub_of_a_sets_ways_empties_it() {
        assert_eq!(cold_set(8, 8, 8, Replacement::Lru), 0.0);
        assert_eq!(cold_set(8, 0, 8, Replacement::Lru), 1.0);
        assert_eq!(cold_set(4, 2, 8, Replacement::Lru), 1.0);
        assert!(cold_set(8, 8, 8, Replacement::Adaptive) < 0.05);
        assert!(cold_set(8, 16, 8, Replacement::Random) < 0.05);
        // Past 16 times its ways a set holds nothing worth counting.
        assert_eq!(cold_set(200, 0, 8, Replacement::Random), 0.0);
    }

    #[test]
    fn contiguous_placement_has_a_sharp_edge_and_random_frames_a_smeared_one() {
        let mut rng = SplitMix64::new(1);
        let kib = 1024.0;
        // 1 MiB, 8 ways, 64 B lines: 32 colours of 4 KiB.
        let lru = (8, 64, Replacement::Lru);
        let at = |bytes: f64, colour: u64, rng: &mut SplitMix64| {
            miss_fraction(1024.0 * kib, lru, bytes, colour, rng)
        };
        assert_eq!(at(1000.0 * kib, 0, &mut rng), 0.0);
        // Just past it, the sets that drew one line more than their ways
        // miss (LRU, a cyclic chase), the rest still hit; at twice it, all.
        let past = at(1100.0 * kib, 0, &mut rng);
        assert!((0.5..0.7).contains(&past), "{past}");
        assert_eq!(at(2100.0 * kib, 0, &mut rng), 1.0);
        // On random frames some colours overflow well before the size...
        assert!(at(700.0 * kib, 4096, &mut rng) > 0.02);
        // ...and some still fit past it.
        assert!(at(1100.0 * kib, 4096, &mut rng) < 0.9);
        assert_eq!(at(16.0 * kib, 4096, &mut rng), 0.0);
    }

    #[test]
    fn random_replacement_keeps_part_of_an_overflowing_set() {
        assert_eq!(set_miss(8, 8, Replacement::Random), 0.0);
        assert_eq!(set_miss(9, 8, Replacement::Lru), 1.0);
        // Twice the ways: about a fifth of the loads still hit (the fixed
        // point of h = (1 - 1/W)^((1 - h)(n - 1)) is 0.2 for W = 8, n = 16).
        let m = set_miss(16, 8, Replacement::Random);
        assert!((0.74..0.86).contains(&m), "{m}");
        assert!(set_miss(9, 8, Replacement::Random) < 0.6);
        // The fixed point past four times the ways continues the simulation.
        let (sim, fixed) = (
            set_miss(32, 8, Replacement::Random),
            set_miss(33, 8, Replacement::Random),
        );
        assert!((fixed - sim).abs() < 0.02, "{sim} {fixed}");
    }

    #[test]
    fn plru_is_nearly_lru_and_adaptive_insertion_keeps_a_part_of_the_chase() {
        use Replacement::{Adaptive, Lru, Plru};
        assert_eq!(set_miss(16, 16, Plru), 0.0);
        assert_eq!(set_miss(16, 16, Adaptive), 0.0);
        // One line over: PLRU keeps little, not nothing; LRU nothing.
        let p = set_miss(17, 16, Plru);
        assert!((0.5..1.0).contains(&p), "{p}");
        assert_eq!(set_miss(17, 16, Lru), 1.0);
        // Bimodal insertion keeps a part of any chase: twice the ways
        // still hit about 40% of the time (Zen 5's L3 at twice its size:
        // 44%), four times about 14% (Zen 5: 10%), eight times a few %.
        let twice = set_miss(32, 16, Adaptive);
        assert!((0.5..0.7).contains(&twice), "{twice}");
        let four = set_miss(64, 16, Adaptive);
        assert!((0.8..0.92).contains(&four), "{four}");
        let eight = set_miss(128, 16, Adaptive);
        assert!((0.95..0.99).contains(&eight), "{eight}");
        // The closed form past 4W continues the simulation.
        let (sim, form) = (set_miss(64, 16, Adaptive), set_miss(65, 16, Adaptive));
        assert!(form >= sim && form - sim < 0.02, "{sim} {form}");
    }
}
