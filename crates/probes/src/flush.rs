//! Line size by the flush granule, a method prefetchers cannot fool.
//!
//! The Calibrator's strided walk and even dependent pairs of loads read a
//! line size that the prefetchers make up: on Zen 3 neighbouring lines
//! arrive with the one asked for, and the pair test reads 128–256 B. Here
//! nothing is ever fetched early, because the decisive load is the *first*
//! touch after a flush: a set of target lines is brought into the cache,
//! then for each target at `A + d` the address `A` is flushed
//! (`clflush`, which evicts the whole line holding `A` from every cache
//! level), and then the targets are loaded by a dependent chase. A target
//! in the flushed line (|d| below the line size) comes from memory; one in
//! the next line is still cached. A prefetcher can only turn misses into
//! hits, and nothing in the timed chase asks for the flushed lines' data
//! before the load that is timed, so the first `d` that hits is the line.
//!
//! Each target's line sits 256-aligned (the largest line tested), so for
//! any line size up to that the flushed address and `A + d` share a line
//! exactly while `d` is below it. The targets can be warmed in L1 or,
//! with an eviction walk after warming, in a later level: the hit then
//! comes from that level, and the granule is measured for it.

use crate::buffer::{Backing, Buffer};
use crate::cache::{fence, link_seq, shuffled};
use crate::chase::chase;
use crate::error::ProbeError;
use hwcal_harness::Timer;
use hwcal_model::RawPoint;
use hwcal_stats::SplitMix64;

/// Offsets tested, bytes.
pub const OFFSETS: [usize; 6] = [8, 16, 32, 64, 128, 256];
/// Alignment of each target's base (the largest line the test can see).
pub const ALIGN: usize = 256;
/// Bytes between two targets' bases: one target per 1 KiB keeps 64
/// targets within 16 pages (well inside every L1 DTLB).
const BLOCK: usize = 1024;

/// Whether this build can flush a line from user space.
pub fn supported() -> bool {
    cfg!(target_arch = "x86_64")
}

/// The flush-granule bench: `targets` targets and an eviction region.
pub struct FlushBench {
    buf: Buffer,
    evict: Option<Buffer>,
    targets: usize,
    rng: SplitMix64,
}

impl FlushBench {
    /// `targets` targets; `evict_bytes` > 0 walks that many bytes after
    /// warming, to push the targets out of the levels smaller than that.
    pub fn new(targets: usize, evict_bytes: usize, seed: u64) -> Result<Self, ProbeError> {
        if !supported() {
            return Err(ProbeError::Unsupported(
                "flushing a cache line from user space".into(),
            ));
        }
        if targets == 0 {
            return Err(ProbeError::InvalidInput("no targets".into()));
        }
        let buf = Buffer::new(targets * BLOCK, Backing::Small)?;
        let evict = if evict_bytes > 0 {
            Some(Buffer::new(evict_bytes, Backing::Small)?)
        } else {
            None
        };
        Ok(FlushBench {
            buf,
            evict,
            targets,
            rng: SplitMix64::new(seed),
        })
    }

    /// Base offset of target k: 256-aligned, at one of three positions
    /// in its block (so `+256` stays inside it) that rotate to spread the
    /// targets over the L1 sets.
    fn base(k: usize) -> usize {
        k * BLOCK + (k % 3) * ALIGN
    }

    /// ns per target load: with the targets' own lines flushed first
    /// (`flush` true) or not (the all-hits reference), targets at `+d`.
    /// The minimum over `reps` repetitions (noise only adds time).
    pub fn point(&mut self, d: usize, flush: bool, reps: usize) -> Result<RawPoint, ProbeError> {
        if d == 0 || d >= BLOCK - 2 * ALIGN {
            return Err(ProbeError::InvalidInput(format!("offset {d}")));
        }
        let order = shuffled(self.targets, &mut self.rng);
        let start = link_seq(&self.buf, order.iter().map(|&k| Self::base(k as usize) + d))?;
        let base = self.buf.as_ptr() as usize;
        let timer = Timer::get();
        let mut samples = Vec::with_capacity(reps);
        for _ in 0..reps.max(1) {
            // SAFETY: `start` is a slot of the chain just linked in
            // `self.buf`; the chase only follows that chain.
            unsafe { chase(start, self.targets as u64) };
            if let Some(e) = &self.evict {
                evict_walk(e);
            }
            if flush {
                for k in 0..self.targets {
                    // SAFETY: base + Self::base(k) lies inside `self.buf`
                    // (k < targets, each block BLOCK bytes).
                    unsafe { flush_line(base + Self::base(k)) };
                }
            }
            fence();
            let t0 = timer.now();
            // SAFETY: as above.
            let end = unsafe { chase(start, self.targets as u64) };
            let t1 = timer.now();
            std::hint::black_box(end);
            let ns = timer.elapsed_ns(t0, t1) - timer.overhead_ns();
            samples.push((ns / self.targets as f64).max(0.0));
        }
        let y = samples.iter().copied().fold(f64::INFINITY, f64::min);
        Ok(RawPoint {
            x: if flush { d as f64 } else { -(d as f64) },
            y,
            samples,
            mhz: Vec::new(),
        })
    }
}

/// Read one word per line of `e`, front to back: pushes earlier data out of
/// the levels smaller than `e`.
fn evict_walk(e: &Buffer) {
    let p = e.as_ptr() as *const u64;
    let mut acc = 0u64;
    for i in (0..e.len() / 8).step_by(8) {
        // SAFETY: i * 8 < e.len(); the buffer is a live mapping.
        acc = acc.wrapping_add(unsafe { p.add(i).read_volatile() });
    }
    std::hint::black_box(acc);
}

/// Evict the line holding `addr` from every cache level.
///
/// # Safety
/// `addr` must point into live memory of this process.
#[cfg(target_arch = "x86_64")]
unsafe fn flush_line(addr: usize) {
    // SAFETY: the caller guarantees `addr` is mapped; clflush only
    // writes back and invalidates the line.
    unsafe { core::arch::x86_64::_mm_clflush(addr as *const u8) };
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn flush_line(_addr: usize) {}

/// Run the whole test: the all-hits reference at the smallest offset, then
/// each offset with flushes, `rounds` times interleaved (so a burst of
/// noise spreads over the offsets). Points: x = d for flushed loads, x =
/// −d for the reference.
pub fn granule_curve(bench: &mut FlushBench, rounds: usize) -> Result<Vec<RawPoint>, ProbeError> {
    let mut pts: Vec<RawPoint> = Vec::new();
    for _ in 0..rounds.max(1) {
        let mut put = |q: RawPoint| match pts.iter_mut().find(|p| p.x == q.x) {
            Some(p) => crate::cache::merge_point(p, q),
            None => pts.push(q),
        };
        put(bench.point(OFFSETS[0], false, 3)?);
        for d in OFFSETS {
            put(bench.point(d, true, 3)?);
        }
    }
    Ok(pts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bases_are_aligned_and_leave_room() {
        for k in 0..1000 {
            let b = FlushBench::base(k);
            assert_eq!(b % ALIGN, 0);
            assert!(b % BLOCK + ALIGN + 256 <= BLOCK);
        }
    }

    #[test]
    fn flushed_line_is_slower_than_the_next_line() {
        if !supported() {
            return;
        }
        let mut b = FlushBench::new(64, 0, 1).unwrap();
        let c = granule_curve(&mut b, 2).unwrap();
        let at = |x: f64| c.iter().find(|p| p.x == x).unwrap().y;
        // d = 8 is always in the flushed line; the reference never flushes.
        assert!(at(8.0) > at(-8.0), "{c:?}");
        assert!(c.iter().all(|p| p.y.is_finite() && p.y >= 0.0));
    }
}
