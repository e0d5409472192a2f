//! The eviction test behind a physically indexed cache's ways and page
//! colours, from timing alone (Vila, Köpf and Morales, "Theory and
//! Practice of Finding Eviction Sets", S&P 2019; Liu et al., "Last-Level
//! Cache Side-Channel Attacks are Practical", S&P 2015).
//!
//! A pool of base pages on whatever physical frames the kernel (and on a
//! guest, the host) gave them. Every line of a page falls in the sets of one
//! page colour of a physically indexed level, so page `x` is evicted from
//! that level by a set of pages exactly when the set holds at least as many
//! pages of `x`'s colour as the level has ways. The test loads every line of
//! the target page, then every line of the set's pages four times, then times a
//! dependent chase over the target's lines: where they stayed, the chase
//! runs at the level's latency; where the set evicted them, at the next
//! level's. Timing the target's lines together (not one load, whose
//! difference is one tick of a guest's coarse counter) keeps the contrast
//! tens of ticks wide, and one line of the target page (not in the chase)
//! is loaded just before it so that the chase does not pay the page walk
//! the set's pages caused.

use crate::buffer::{Backing, Buffer};
use crate::error::ProbeError;
use hwcal_harness::Timer;
use hwcal_stats::SplitMix64;

/// Passes over the set's pages between loading the target and timing it:
/// the first brings the set's lines in, the others make sure a set that
/// keeps part of what overflows it (random replacement) has met enough
/// misses to evict the target where it can (the Zen 5 guest's L2, one page
/// past its ways: about a third of the target's lines after two passes,
/// clearly more after four).
pub const PASSES: usize = 4;

/// The lines of a page the test uses (the first of them warms the page
/// walk, the rest are timed): colour is a page's, so any of its lines
/// tell it, and a test over half a 4 KiB page's lines costs half the time
/// (a sixty-fourth of a 64 KiB page's), while 31 timed loads still span
/// several ticks of a guest's coarse counter between kept and evicted.
pub const SPAN: usize = 32;

/// A pool of base pages for the eviction test.
pub struct SetPool {
    buf: Buffer,
    /// The order the set's lines are loaded in within each page: shuffled,
    /// so that no stream or stride prefetcher runs ahead of the loads and
    /// brings lines of other frames (of any colour) into the level.
    walk: Vec<usize>,
    page: usize,
    line: usize,
    pages: usize,
}

impl SetPool {
    /// `pages` base pages (transparent huge pages refused for the range, so
    /// that each page lands on a frame of its own), the [`SPAN`] lines of
    /// each it uses touched and its timed ones linked into one random
    /// dependent cycle.
    pub fn new(pages: usize, page: usize, line: usize, seed: u64) -> Result<SetPool, ProbeError> {
        if pages < 2 || page < 4 * line || !page.is_power_of_two() || !line.is_power_of_two() || line < 8 {
            return Err(ProbeError::InvalidInput(format!(
                "a set pool needs at least 2 pages of a power-of-two size with room for 4 lines (asked {pages} × {page} B, {line} B lines)"
            )));
        }
        let buf = Buffer::new(pages * page, Backing::Small)?;
        let mut rng = SplitMix64::new(seed);
        let lines = (page / line).min(SPAN);
        let mut walk: Vec<usize> = (0..lines).map(|l| l * line).collect();
        for i in (1..walk.len()).rev() {
            let j = rng.index(i + 1);
            walk.swap(i, j);
        }
        let pool = SetPool {
            buf,
            walk,
            page,
            line,
            pages,
        };
        for p in 0..pages {
            // Line 0 is the page-walk warmer; lines 1.. form the timed cycle.
            let mut order: Vec<usize> = (1..lines).collect();
            for i in (1..order.len()).rev() {
                let j = rng.index(i + 1);
                order.swap(i, j);
            }
            let offs: Vec<usize> = order.iter().map(|l| p * page + l * line).collect();
            crate::chase::link(&pool.buf, &offs)?;
        }
        Ok(pool)
    }

    /// Pages in the pool.
    pub fn pages(&self) -> usize {
        self.pages
    }

    fn page_addr(&self, p: usize) -> usize {
        self.buf.as_ptr() as usize + p * self.page
    }

    /// One round of the eviction test: ns per load of the chase over page
    /// `target`'s lines after loading them, then every line of `set`'s
    /// pages [`PASSES`] times.
    fn round(&self, target: usize, set: &[usize], timer: &Timer) -> f64 {
        let lines = self.walk.len();
        let start = self.page_addr(target) + self.line;
        let mut sink = 0usize;
        // SAFETY: every address read below is a line of a page of the pool
        // (indices checked by the caller), inside the live mapping `buf`
        // owns; the timed cycle was linked by `chase::link` over lines of
        // the target page only, so following it never leaves the page.
        unsafe {
            let p = crate::chase::chase(start, (lines - 1) as u64);
            sink ^= p;
            for _ in 0..PASSES {
                for &q in set {
                    let base = self.page_addr(q);
                    for &o in &self.walk {
                        sink = sink.wrapping_add(std::ptr::read_volatile((base + o) as *const usize));
                    }
                }
            }
            sink ^= std::ptr::read_volatile(self.page_addr(target) as *const usize);
            std::hint::black_box(sink);
            // The fence and the serialised counter read keep the timed chase
            // after the loads above.
            crate::cache::fence();
            let t0 = timer.now();
            let p = crate::chase::chase(start, (lines - 1) as u64);
            crate::cache::fence();
            let t1 = timer.now();
            std::hint::black_box(p);
            // The kernel runs whole blocks of 16 loads round the cycle.
            timer.elapsed_ns(t0, t1) / ((lines - 1).div_ceil(16) * 16) as f64
        }
    }

    /// `rounds` rounds of the eviction test of `target` by `set` (see the
    /// module docs): ns per load of the target's chase, one per round.
    pub fn evict(&self, target: usize, set: &[usize], rounds: usize) -> Result<Vec<f64>, ProbeError> {
        if target >= self.pages || set.iter().any(|&q| q >= self.pages || q == target) {
            return Err(ProbeError::InvalidInput(
                "an eviction test names a page outside the pool or the target itself".into(),
            ));
        }
        let timer = Timer::get();
        Ok((0..rounds.max(1))
            .map(|_| self.round(target, set, timer))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_eviction_test_returns_a_time_per_round() {
        let pool = SetPool::new(64, 4096, 64, 1).unwrap();
        let set: Vec<usize> = (1..64).collect();
        let t = pool.evict(0, &set, 3).unwrap();
        assert_eq!(t.len(), 3);
        // A coarse counter (an emulator's, a 24 MHz Arm one) may read no
        // tick over a chase this short: never negative, never NaN.
        assert!(t.iter().all(|&v| v.is_finite() && v >= 0.0), "{t:?}");
        assert!(pool.evict(0, &[0], 1).is_err());
        assert!(pool.evict(64, &[1], 1).is_err());
        assert!(SetPool::new(1, 4096, 64, 1).is_err());
    }
}
