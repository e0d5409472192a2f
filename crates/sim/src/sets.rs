//! The eviction test (`hwcal_probes::sets`) on a modelled machine: a pool
//! of base pages, each on a frame of its own drawn once, so each page keeps
//! its sets in every physically indexed level for the whole search, as on
//! a real pool. A test loads the target page, then every line of the
//! set's pages four times ([`hwcal_probes::sets::PASSES`]), then times the target's lines: each level's set of
//! the target's colour (and offset) is simulated line by line
//! ([`crate::curves::Set`]) under that access pattern, and each target
//! line is served by the first level that kept it.

use crate::curves::{memoised, normal, Memo, Set};
use crate::model::{Model, Replacement};
use hwcal_stats::SplitMix64;

/// A level's sets and the lines a page holds of it.
fn geometry(m: &Model, k: usize) -> (u64, u64) {
    let l = &m.levels[k];
    let sets = (l.size / (u64::from(l.ways.max(1)) * l.line)).max(1);
    (sets, (m.page / l.line).max(1))
}

/// How many of the lines a test uses of a page whose first line falls in
/// set `first` fall in set `s` of a level of `sets` sets (`lp` of them, in
/// consecutive sets modulo the level's sets).
fn cover(first: u64, s: u64, lp: u64, sets: u64) -> u64 {
    let d = (s + sets - first) % sets;
    if d >= lp {
        0
    } else {
        (lp - 1 - d) / sets + 1
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The share of rounds in which a target line is gone from a set of `ways`
/// ways after the pattern: the target, then `n` other lines [`hwcal_probes::sets::PASSES`] times (steady
/// state over 40 rounds after 8; [`Set`] line by line). Memoised.
pub(crate) fn evicted(n: u32, ways: u32, replacement: Replacement) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let n = n.min(8 * ways.max(1));
    static MEMO: Memo<(u32, u32, u8)> = Memo::new();
    memoised(&MEMO, (n, ways, replacement as u8), || {
        let mut set = Set::new(ways, replacement, (u64::from(n) << 20) ^ u64::from(ways));
        let mut gone = 0u32;
        const ROUNDS: u32 = 48;
        for round in 0..ROUNDS {
            // The timed access is each round's first.
            if !set.access(0) && round >= 8 {
                gone += 1;
            }
            for _ in 0..hwcal_probes::sets::PASSES {
                for line in 1..=n {
                    set.access(line);
                }
            }
        }
        f64::from(gone) / f64::from(ROUNDS - 8)
    })
}

/// A simulated pool: where every page's first line falls in every level.
/// A line's set is its frame's line number modulo the level's sets, so a
/// page's lines fill consecutive sets: with a power-of-two number of sets
/// at least a page's lines, a page has one colour (the sets it fills);
/// with any other number (a 1.25 MiB 8-way level has 2560) pages of one
/// frame alignment overlap others in part, as the real index would make
/// them. L1 is indexed by virtual address: the pool's pages in order.
pub(crate) struct SimPool {
    first: Vec<Vec<u64>>,
    pub pages: usize,
}

impl SimPool {
    /// `pages` pages of `m`, their frames drawn from `seed`.
    pub(crate) fn new(m: &Model, pages: usize, seed: u64) -> SimPool {
        let mut rng = SplitMix64::new(seed);
        let first = (0..m.levels.len())
            .map(|k| {
                let (sets, lp) = geometry(m, k);
                (0..pages)
                    .map(|p| {
                        let frame = if k == 0 { p as u64 } else { rng.next_u64() >> 24 };
                        ((u128::from(frame) * u128::from(lp)) % u128::from(sets)) as u64
                    })
                    .collect()
            })
            .collect();
        SimPool { first, pages }
    }

    /// The share of the target's lines a level no longer holds after the
    /// pattern, `ways` ways: each set the target fills holds the set's
    /// pages' lines there and the target's own; the sets come in blocks of
    /// gcd(lines a page, sets), every page filling whole blocks.
    fn evicted_share(&self, m: &Model, k: usize, (target, set): (usize, &[usize]), ways: u32) -> f64 {
        let (sets, per_page) = geometry(m, k);
        // The first SPAN lines of each page (`hwcal_probes::sets::SPAN`);
        // pages start a whole page of lines apart, so the blocks that every
        // page fills whole are gcd(lines a page, sets) sets long, cut to
        // the span.
        let lp = per_page.min(hwcal_probes::sets::SPAN as u64);
        let g = gcd(per_page, sets).min(lp);
        let a = self.first[k][target];
        let (mut gone, mut lines) = (0.0, 0.0);
        for b in 0..lp.min(sets).div_ceil(g) {
            let s = (a + b * g) % sets;
            let own = cover(a, s, lp, sets);
            let n = set
                .iter()
                .map(|&q| cover(self.first[k][q], s, lp, sets))
                .sum::<u64>()
                + own
                - 1;
            gone += own as f64 * evicted(n.min(u64::from(u32::MAX)) as u32, ways, m.levels[k].replacement);
            lines += own as f64;
        }
        gone / lines
    }

    /// ns per load of the target's lines after the pattern, noise-free,
    /// `busy`: a sibling holding half of L1's and L2's ways.
    pub(crate) fn ns(&self, m: &Model, target: usize, set: &[usize], busy: bool) -> f64 {
        let (mut ns, mut reach) = (0.0, 1.0);
        for (k, l) in m.levels.iter().enumerate() {
            let ways = if busy && !l.shared {
                (l.ways / 2).max(1)
            } else {
                l.ways
            };
            let e = self.evicted_share(m, k, (target, set), ways);
            ns += reach * (1.0 - e) * l.ns;
            reach *= e;
        }
        ns + reach * m.memory_ns
    }
}

/// One round's reading of `ns`: the target's 63 lines each evicted or not
/// (their count varies round to round) and the machine's jitter.
pub(crate) fn noisy(ns: f64, m: &Model, rng: &mut SplitMix64) -> f64 {
    ns * (1.0 + (m.noise.jitter * normal(rng)).abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_one_line_short_of_its_ways_keeps_the_target_and_one_more_evicts_it() {
        for r in [Replacement::Lru, Replacement::Plru, Replacement::Random] {
            assert_eq!(evicted(15, 16, r), 0.0, "{r:?}");
            assert!(evicted(16, 16, r) >= 0.3, "{r:?}: {}", evicted(16, 16, r));
            assert!(evicted(64, 16, r) >= 0.9, "{r:?}");
        }
        assert_eq!(evicted(16, 16, Replacement::Lru), 1.0);
    }
}
