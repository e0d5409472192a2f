//! Cache probes: the latency-vs-working-set curve (The Calibrator, done with
//! a random dependent chase instead of a strided walk), the same chase with an
//! idle gap between loads (Calibrator's "miss latency" vs "replace time"),
//! the line size by dependent pairs of loads, and memory-level parallelism
//! (lmbench `par_mem`).
//!
//! Every figure here is a time per load measured by the harness with the
//! core clock taken alongside each sample; conversion to levels is the
//! analysis crate's job. Kernels never print.

use crate::buffer::Buffer;
use crate::chase::{chase, chase_parallel, chase_with_gap};
use crate::error::ProbeError;
use hwcal_harness::{measure, Estimate, Policy};
use hwcal_model::RawPoint;
use hwcal_stats::SplitMix64;

/// Dependent loads per harness iteration: the harness auto-sizes the number
/// of iterations, each iteration is one `chase` call of this many loads.
pub const LOADS_PER_ITER: u64 = 64;

/// A warm-up walk never needs more than this many loads: past a few MiB the
/// chain no longer fits any cache, so the steady state (every load misses)
/// is reached almost at once, and walking a 400 MiB chain fully would take
/// a second.
pub const WARM_CAP_LOADS: u64 = 1 << 17;

/// Largest |d| (and line size) the pair test can see.
pub const PAIR_ALIGN: usize = 256;

/// The numbers 0..n in random order (Fisher–Yates). `u32` halves the memory
/// traffic of shuffling a chain of millions of slots.
pub fn shuffled(n: usize, rng: &mut SplitMix64) -> Vec<u32> {
    assert!(n <= u32::MAX as usize, "at most 2^32 slots");
    let mut p: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        let j = rng.index(i + 1);
        p.swap(i, j);
    }
    p
}

/// Link the byte offsets yielded by `offs` into one cycle in `buf` (each
/// slot receives the absolute address of the next; the last points back to
/// the first). Returns the first slot's address. Unlike
/// [`crate::chase::link`] this takes an iterator, so multi-million-slot
/// chains need no order table beside the permutation.
pub fn link_seq(buf: &Buffer, offs: impl Iterator<Item = usize>) -> Result<usize, ProbeError> {
    let base = buf.as_ptr() as usize;
    let check = |o: usize| {
        if o & 7 != 0 || o + 8 > buf.len() {
            Err(ProbeError::InvalidInput(format!(
                "slot offset {o} outside buffer"
            )))
        } else {
            Ok(())
        }
    };
    let mut first: Option<usize> = None;
    let mut prev: Option<usize> = None;
    for o in offs {
        check(o)?;
        if let Some(p) = prev {
            // SAFETY: p was checked to be 8-byte aligned with p + 8 <= len,
            // so the write stays inside the live mapping owned by `buf`.
            unsafe { ((base + p) as *mut usize).write(base + o) };
        } else {
            first = Some(o);
        }
        prev = Some(o);
    }
    let (Some(f), Some(l)) = (first, prev) else {
        return Err(ProbeError::InvalidInput("empty chase".into()));
    };
    // SAFETY: as above; l was checked.
    unsafe { ((base + l) as *mut usize).write(base + f) };
    Ok(base + f)
}

/// One random cycle over the `footprint / 64` lines at `region .. region +
/// footprint` (slot at the start of each line). Returns the start address
/// and the permutation (position k of the walk visits line `perm[k]`).
pub fn line_cycle(
    buf: &Buffer,
    region: usize,
    footprint: usize,
    rng: &mut SplitMix64,
) -> Result<(usize, Vec<u32>), ProbeError> {
    let n = footprint / 64;
    if n == 0 || region + footprint > buf.len() {
        return Err(ProbeError::InvalidInput(format!(
            "bad chase geometry: footprint {footprint} at {region}, buffer {}",
            buf.len()
        )));
    }
    let perm = shuffled(n, rng);
    let start = link_seq(buf, perm.iter().map(|&i| region + i as usize * 64))?;
    Ok((start, perm))
}

/// The timing policy for one latency point: minimum over samples (noise
/// only adds time), blocks of 100 µs (thousands of loads even at DRAM
/// latency, so one timer read is negligible), stop once the best three
/// agree within 0.5%.
/// Working sets above this (well past any private cache) are timed in long
/// blocks; see [`ChaseBench::point`].
pub const LONG_BLOCK_FROM: usize = 16 << 20;

pub fn latency_policy() -> Policy {
    Policy {
        enough_ns: Some(100_000.0),
        min_samples: 5,
        max_samples: 25,
        best_k: 3,
        tolerance: 0.005,
        budget_ns: 40e6,
        ..Policy::default()
    }
}

/// The timing policy for a point of the idle-gap chase: the latency
/// policy with the best three held to 0.1% and up to 49 samples. A miss
/// latency is the difference of two such points, each carrying the gap's
/// own ~100 cycles (25–40 ns) on a step of a few ns (L1 to L2): 0.5% of
/// the point is 5% of the step, so the points must be resolved five times
/// finer than the sweep's. Cheap: five points of 100 µs blocks.
pub fn gap_policy() -> Policy {
    Policy {
        max_samples: 49,
        tolerance: 0.001,
        ..latency_policy()
    }
}

/// Turn an estimate of `loads` loads per iteration into a raw point (ns per
/// load per sample, with the clock measured alongside each sample).
pub fn to_point(x: f64, est: &Estimate, loads: u64) -> RawPoint {
    let l = loads as f64;
    RawPoint {
        x,
        y: est.ns() / l,
        samples: est.samples.iter().map(|s| s.ns / l).collect(),
        mhz: est.samples.iter().map(|s| s.mhz).collect(),
    }
}

/// Whether the TLB really sees 2 MiB pages at `offset` in `buf`: a chase
/// touching one line in each of 256 consecutive 4 KiB frames (1 MiB, far
/// beyond the 4 KiB reach of an L1 DTLB) against the same number of lines
/// packed into 16 KiB. Both are L1-resident, so with real huge pages they
/// run at the same speed; if the translations are 4 KiB (THP refused, or
/// a hypervisor backing guest memory with small pages, which `smaps`
/// cannot see) the spread chase pays a TLB miss per load. Returns the
/// ratio spread / packed (≈ 1 when huge pages are effective).
pub fn tlb_ratio(buf: &Buffer, offset: usize, rng: &mut SplitMix64) -> Result<f64, ProbeError> {
    const N: usize = 256;
    // One line in each of N base pages inside the huge page at `offset`.
    let base = buf.pages().base;
    if offset + N * base > buf.len() {
        return Err(ProbeError::InvalidInput(
            "TLB check does not fit the buffer".into(),
        ));
    }
    let p = Policy {
        enough_ns: Some(20_000.0),
        min_samples: 5,
        max_samples: 10,
        budget_ns: 5e6,
        track_clock: false,
        ..latency_policy()
    };
    let mut time = |offs: &mut dyn Iterator<Item = usize>| -> Result<f64, ProbeError> {
        let perm: Vec<usize> = offs.collect();
        let order = shuffled(N, rng);
        let start = link_seq(buf, order.iter().map(|&k| perm[k as usize]))?;
        // SAFETY: `start` was just linked in `buf`, which outlives the timing.
        Ok(unsafe { time_chain(start, N * 4, 0, &p) }.ns())
    };
    let packed = time(&mut (0..N).map(|k| offset + k * 64))?;
    let spread = time(&mut (0..N).map(|k| offset + k * base + (k % 64) * 64))?;
    Ok(spread / packed)
}

/// How far a huge-page buffer passed the TLB check.
#[derive(Debug, Clone, PartialEq)]
pub struct HugeCheck {
    /// Share of the buffer `smaps` reports as huge pages.
    pub smaps_fraction: f64,
    /// Every huge page in the densely checked head passed [`tlb_ratio`].
    pub head_ok: bool,
    /// Every huge page checked (the head, then every 8th) passed.
    pub all_ok: bool,
    /// Indices of the 2 MiB pages that passed the check.
    pub clean: Vec<usize>,
}

/// A huge-page buffer whose huge pages the TLB really sees: allocate, check
/// `smaps`, then [`tlb_ratio`] on every 2 MiB page of the first `dense`
/// bytes and on every 8th page beyond; if the head fails, allocate again
/// (up to `attempts` times, keeping the failed buffers until the end so the
/// next one lands on other memory). Returns the best buffer and its check.
///
/// With `keep_going` the check visits every page (and goes on after a
/// failure), so `clean` lists all usable pages, for probes that can pick
/// their pages.
pub fn huge_buffer(
    len: usize,
    attempts: usize,
    dense: usize,
    keep_going: bool,
) -> Result<(Buffer, HugeCheck), ProbeError> {
    let mut rng = SplitMix64::new(0x7b1);
    let mut failed: Vec<(Buffer, HugeCheck)> = Vec::new();
    for _ in 0..attempts.max(1) {
        let b = Buffer::new(len, crate::buffer::Backing::Thp)?;
        let f = b.huge_fraction();
        let mut c = HugeCheck {
            smaps_fraction: f,
            head_ok: f >= 0.9,
            all_ok: f >= 0.9,
            clean: Vec::new(),
        };
        if c.head_ok {
            let huge = b.pages().huge;
            let pages = b.len() / huge;
            for k in 0..pages {
                let head = k * huge < dense;
                if !head && !keep_going && k % 8 != 0 {
                    continue;
                }
                if tlb_ratio(&b, k * huge, &mut rng)? > 1.3 {
                    c.all_ok = false;
                    if head {
                        c.head_ok = false;
                        if !keep_going {
                            break;
                        }
                    }
                } else {
                    c.clean.push(k);
                }
            }
        }
        if c.head_ok {
            return Ok((b, c));
        }
        failed.push((b, c));
    }
    Ok(failed.pop().expect("at least one attempt"))
}

/// Dependent adds between loads in [`chase_idle`].
pub const IDLE_ADDS: u32 = 100;

/// Scrub passes before each cold lap ([`ChaseBench::cold_point`]): a level
/// with adaptive insertion puts one new line in 8 (or 32) at its MRU end,
/// so a scrub as large as it must go by 8 to 32 times before no old line
/// is left.
pub const COLD_PASSES: usize = 32;

/// Timed laps per cold point: the figure is their fastest (interference
/// only adds time).
pub const COLD_REPS: usize = 9;

/// A chase with [`IDLE_ADDS`] dependent single-cycle adds after every load,
/// fully unrolled: the next address exists only after the adds, so each
/// miss starts from an idle memory system (The Calibrator's miss latency).
/// Unrolled rather than looped so the gap is a pure latency chain: a loop
/// with a taken branch per add is throughput-bound, and slows down whenever
/// the sibling hardware thread is busy, which made the gap's cost noisy.
///
/// # Safety
/// As for [`chase`]: `start` must be a slot of a chain on a live buffer.
#[inline(never)]
pub unsafe fn chase_idle(start: usize, loads: u64) -> usize {
    let mut p = start;
    #[cfg(target_arch = "x86_64")]
    {
        let zero: usize = 0;
        let mut n = loads.max(1);
        // SAFETY: `p` points into a chain built by `link`/`link_seq` on a
        // live buffer (caller contract, as for `chase`); the loads only read
        // chain slots, and adding a register holding zero leaves `p`
        // unchanged. n >= 1 so the loop ends.
        unsafe {
            core::arch::asm!(
                "2:",
                "mov {p}, qword ptr [{p}]",
                ".rept 100",
                "add {p}, {z}",
                ".endr",
                "dec {n}",
                "jnz 2b",
                p = inout(reg) p,
                z = in(reg) zero,
                n = inout(reg) n,
                options(nostack, readonly)
            );
        }
        let _ = n;
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        // SAFETY: the caller's contract is `chase_with_gap`'s.
        p = unsafe { crate::chase::chase_with_gap(p, loads, IDLE_ADDS) };
    }
    p
}

/// Order the flushes (or a scrub's loads) before the timed loads.
pub(crate) fn fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: mfence has no operands and only orders memory accesses.
    unsafe {
        core::arch::x86_64::_mm_mfence()
    };
    #[cfg(not(target_arch = "x86_64"))]
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
}

/// Fold a repeated measurement of the same point into `into`: every sample
/// is kept, the figure of record stays the minimum.
pub fn merge_point(into: &mut RawPoint, q: RawPoint) {
    into.y = into.y.min(q.y);
    into.samples.extend(q.samples);
    into.mhz.extend(q.mhz);
}

/// Time a dependent chase that starts at `start` over a chain of `slots`
/// slots: walk it once (capped at [`WARM_CAP_LOADS`]) so the caches hold
/// what they hold in the steady state, then sample. `gap` > 0 inserts that
/// many dependent adds after each load (idle memory system between misses).
///
/// # Safety
/// As for [`chase`]: `start` must be a slot of a chain on a buffer that
/// outlives the call.
pub unsafe fn time_chain(start: usize, slots: usize, gap: u32, policy: &Policy) -> Estimate {
    let warm = (slots as u64).clamp(LOADS_PER_ITER, WARM_CAP_LOADS);
    // SAFETY: `p` starts at the caller's chain slot and the kernels only
    // ever move it to another slot of the same chain (so in all four chases).
    let mut p = unsafe { chase(start, warm) };
    if gap == 0 {
        // SAFETY: `p` is a slot of the caller's chain (see above).
        measure(policy, &mut |n| p = unsafe { chase(p, n * LOADS_PER_ITER) })
    } else if gap == IDLE_ADDS {
        // SAFETY: `p` is a slot of the caller's chain (see above).
        measure(policy, &mut |n| p = unsafe { chase_idle(p, n * LOADS_PER_ITER) })
    } else {
        measure(policy, &mut |n| {
            // SAFETY: `p` is a slot of the caller's chain (see above).
            p = unsafe { chase_with_gap(p, n * LOADS_PER_ITER, gap) }
        })
    }
}

/// Measures latency points in one huge-page (if available) buffer, one
/// point at a time: each point's chain is built in the same region, warmed,
/// then sampled back to back, so no other point evicts it between samples.
pub struct ChaseBench {
    buf: Buffer,
    /// Logical 2 MiB page k lives in the buffer's 2 MiB page `map[k]`
    /// (`None`: the identity). Lets the bench skip pages the TLB check
    /// rejected while keeping every layout inside a 2 MiB page unchanged.
    map: Option<Vec<usize>>,
    rng: SplitMix64,
    pub policy: Policy,
}

impl ChaseBench {
    pub fn new(buf: Buffer, seed: u64) -> Self {
        ChaseBench {
            buf,
            map: None,
            rng: SplitMix64::new(seed),
            policy: latency_policy(),
        }
    }

    /// Use only these 2 MiB pages of the buffer, in this order.
    pub fn use_huge_pages(&mut self, pages: Vec<usize>) {
        let n = self.buf.len() / self.buf.pages().huge;
        self.map = Some(pages.into_iter().filter(|&p| p < n).collect());
    }

    /// Buffer offset of logical offset `o`.
    fn phys(&self, o: usize) -> usize {
        let h = self.buf.pages().huge;
        match &self.map {
            Some(m) => m[o / h] * h + o % h,
            None => o,
        }
    }

    pub fn buffer(&self) -> &Buffer {
        &self.buf
    }

    /// [`tlb_ratio`] of the first `pages` logical 2 MiB pages (the worst):
    /// whether the huge pages are still huge to the TLB. A hypervisor that
    /// tracks dirty pages (snapshots, migration) may split them into 4 KiB
    /// mappings when the chains are rewritten, after the allocation check.
    pub fn head_tlb_ratio(&mut self, pages: usize) -> Result<f64, ProbeError> {
        let mut worst: f64 = 0.0;
        let h = self.buf.pages().huge;
        for k in 0..pages.min(self.capacity() / h) {
            let off = self.phys(k * h);
            worst = worst.max(tlb_ratio(&self.buf, off, &mut self.rng)?);
        }
        Ok(worst)
    }

    /// Largest footprint this bench can measure.
    pub fn capacity(&self) -> usize {
        match &self.map {
            Some(m) => m.len() * self.buf.pages().huge,
            None => self.buf.len(),
        }
    }

    /// One random cycle over the first `size` bytes (logical), one slot per
    /// line. Returns the start address and the permutation.
    fn cycle(&mut self, size: usize) -> Result<(usize, Vec<u32>), ProbeError> {
        self.cycle_at(0, size)
    }

    /// As [`Self::cycle`], over the `size` bytes from logical offset `at`.
    fn cycle_at(&mut self, at: usize, size: usize) -> Result<(usize, Vec<u32>), ProbeError> {
        let perm = shuffled(size / 64, &mut self.rng);
        let start = link_seq(&self.buf, perm.iter().map(|&i| self.phys(at + i as usize * 64)))?;
        Ok((start, perm))
    }

    /// ns per load of a random chase over `size` bytes (rounded down to
    /// whole lines), with `gap` idle adds between loads.
    pub fn point(&mut self, size: usize, gap: u32) -> Result<RawPoint, ProbeError> {
        self.point_at(0, size, gap)
    }

    /// As [`Self::point`], over the `size` bytes from logical offset `at`
    /// (line-aligned; the region is clamped to the buffer): other physical
    /// pages than the prefix [`Self::point`] measures, so on 4 KiB pages
    /// another draw of page colours.
    pub fn point_at(&mut self, at: usize, size: usize, gap: u32) -> Result<RawPoint, ProbeError> {
        let size = (size / 64 * 64).clamp(64, self.capacity() / 64 * 64);
        let at = (at / 64 * 64).min(self.capacity() / 64 * 64 - size);
        let (start, _) = self.cycle_at(at, size)?;
        // Past the caches every load's latency is a draw from a wide
        // distribution (DRAM row hits and misses, refresh): the minimum over
        // 100 µs blocks (~700 loads) picks lucky blocks and reads several
        // percent below the mean latency. 2 ms blocks (~13k loads) average
        // that out; the minimum then only removes interruptions.
        let policy = if size > LONG_BLOCK_FROM {
            Policy {
                enough_ns: Some(2e6),
                budget_ns: self.policy.budget_ns.max(60e6),
                ..self.policy.clone()
            }
        } else {
            self.policy.clone()
        };
        // SAFETY: `start` is a slot of the cycle just linked in `self.buf`.
        let est = unsafe { time_chain(start, size / 64, gap, &policy) };
        Ok(to_point(size as f64, &est, LOADS_PER_ITER))
    }

    /// ns per load of one lap of a random chase over `size` bytes taken
    /// right after the levels below have been scrubbed: the chase is walked
    /// once, then [`COLD_REPS`] times a walk of `scrub` bytes elsewhere in
    /// the buffer, [`COLD_PASSES`] times over, and one timed lap of the
    /// chase. Within one lap every line is loaded once, so a line the
    /// scrub pushed out of the levels below cannot come back into them
    /// before its turn: the lap reads the level that holds the chase with
    /// none of the share a level below keeps of a steady chase (random
    /// replacement and adaptive insertion keep part of every set that
    /// overflows them, and a steady chase's plateau then reads below the
    /// level's hit latency). Passes, because a level that inserts new
    /// lines at its LRU end (adaptive insertion) lets a single scan go by
    /// and keeps what it held; each pass promotes a few more of the
    /// scrub's lines and pushes the old ones out. The scrub sits after the
    /// chase region (page-aligned), so both fit `size + scrub` bytes.
    pub fn cold_point(&mut self, size: usize, scrub: usize) -> Result<RawPoint, ProbeError> {
        let size = (size / 64 * 64).max(64);
        let scrub_at = size.div_ceil(4096) * 4096;
        let scrub = scrub / 64 * 64;
        if scrub_at + scrub > self.capacity() {
            return Err(ProbeError::InvalidInput(format!(
                "a cold lap over {size} B after a {scrub} B scrub does not fit the {} B buffer",
                self.capacity()
            )));
        }
        let (start, _) = self.cycle_at(0, size)?;
        let lines = (size / 64) as u64;
        let base = self.buf.as_ptr() as usize;
        let scrub_lines: Vec<usize> = (0..scrub / 64)
            .map(|i| base + self.phys(scrub_at + i * 64))
            .collect();
        let timer = hwcal_harness::Timer::get();
        // SAFETY: `start` is a slot of the cycle just linked in `self.buf`;
        // a whole lap returns to it.
        let mut p = unsafe { chase(start, lines) };
        let mut samples = Vec::with_capacity(COLD_REPS);
        let mut mhz = Vec::with_capacity(COLD_REPS);
        for _ in 0..COLD_REPS {
            let mut acc = 0u64;
            for _ in 0..COLD_PASSES {
                for &a in &scrub_lines {
                    // SAFETY: every address is `base` plus an offset of the
                    // scrub region, inside the live buffer, 8-aligned.
                    acc = acc.wrapping_add(unsafe { (a as *const u64).read_volatile() });
                }
            }
            std::hint::black_box(acc);
            fence();
            let t0 = timer.now();
            // SAFETY: as above; `p` is the cycle's start again.
            p = unsafe { chase(p, lines) };
            let t1 = timer.now();
            samples.push(((timer.elapsed_ns(t0, t1) - timer.overhead_ns()) / lines as f64).max(0.0));
            mhz.push(hwcal_harness::clockref::core_mhz_now(timer));
        }
        std::hint::black_box(p);
        // A lap the timer did not see pass (0 after its overhead) is no
        // sample; with none left the point reads 0, which callers drop.
        let kept: Vec<usize> = (0..samples.len()).filter(|&i| samples[i] > 0.0).collect();
        let samples: Vec<f64> = kept.iter().map(|&i| samples[i]).collect();
        let mhz: Vec<f64> = if mhz.len() == COLD_REPS {
            kept.iter().map(|&i| mhz[i]).collect()
        } else {
            mhz
        };
        let y = samples.iter().copied().fold(f64::INFINITY, f64::min);
        let y = if y.is_finite() { y } else { 0.0 };
        Ok(RawPoint {
            x: size as f64,
            y,
            samples,
            mhz: mhz.into_iter().filter(|m| m.is_finite()).collect(),
        })
    }

    /// Line size by dependent pairs: `primaries` random visits, each a load
    /// of a slot followed by a dependent load `d` bytes away (`d` negative
    /// for the backward test). The second load hits the line the first just
    /// brought in while |d| < line size, and misses beyond.
    ///
    /// Layout: one visit per `block` bytes. The primary slot sits at the
    /// start (forward test) or the last word (backward test) of a
    /// [`PAIR_ALIGN`]-aligned chunk, so for any line size up to that
    /// alignment the second load stays in the primary's line exactly while
    /// |d| < line. The chunk lies in the middle half of the block, so ±d
    /// never reaches another visit's lines, and its position rotates by a
    /// hash of the visit number so the lines spread over the cache sets
    /// instead of folding onto a few.
    pub fn pair_point(&mut self, primaries: usize, d: i64, block: usize) -> Result<RawPoint, ProbeError> {
        let chunks = block / PAIR_ALIGN;
        let need = primaries * block;
        if need > self.capacity()
            || chunks < 4
            || d.unsigned_abs() as usize > PAIR_ALIGN
            || d == 0
            || !block.is_power_of_two()
            || block > self.buf.pages().huge
        {
            return Err(ProbeError::InvalidInput(format!(
                "line-size test: {primaries} visits of {block} B (d = {d}) do not fit {} B",
                self.capacity()
            )));
        }
        let perm = shuffled(primaries, &mut self.rng);
        // Chunks 1 ..= chunks-2 leave a whole chunk of room on both sides.
        let rot =
            move |k: usize| ((k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as usize % (chunks - 2);
        let word = if d > 0 { 0 } else { PAIR_ALIGN - 8 };
        let prim = move |k: usize| k * block + (1 + rot(k)) * PAIR_ALIGN + word;
        // A visit stays inside its block, so inside one 2 MiB page.
        let offs = perm.iter().flat_map(|&k| {
            let a = prim(k as usize);
            [self.phys(a), self.phys((a as i64 + d) as usize)]
        });
        let start = link_seq(&self.buf, offs)?;
        // Each iteration of `chase` is LOADS_PER_ITER loads = half as many pairs.
        // SAFETY: `start` is a slot of the chain just linked in `self.buf`.
        let est = unsafe { time_chain(start, 2 * primaries, 0, &self.policy) };
        Ok(to_point(d as f64, &est, LOADS_PER_ITER / 2))
    }

    /// Memory-level parallelism: `k` independent chases through one random
    /// cycle over `size` bytes, started evenly spaced along the cycle so
    /// they never meet. Returns ns per load (all chains together).
    pub fn parallel_point(&mut self, size: usize, k: usize) -> Result<RawPoint, ProbeError> {
        let size = (size / 64 * 64).min(self.capacity() / 64 * 64);
        let (_, perm) = self.cycle(size)?;
        let base = self.buf.as_ptr() as usize;
        let n = perm.len();
        let starts: Vec<usize> = (0..k)
            .map(|c| base + self.phys(perm[c * n / k] as usize * 64))
            .collect();
        const STEPS: u64 = 256;
        macro_rules! par {
            ($k:literal) => {{
                let mut s: [usize; $k] = std::array::from_fn(|i| starts[i]);
                // SAFETY: every start is a slot of the cycle linked in
                // `self.buf` (base + a cycle offset), alive for the call.
                s = unsafe { chase_parallel::<$k>(s, 4096) };
                measure(&self.policy, &mut |iters| {
                    // SAFETY: as above; the chains stay on the cycle.
                    s = unsafe { chase_parallel::<$k>(s, iters * STEPS) }
                })
            }};
        }
        let est = match k {
            1 => par!(1),
            2 => par!(2),
            4 => par!(4),
            8 => par!(8),
            16 => par!(16),
            _ => {
                return Err(ProbeError::InvalidInput(format!(
                    "{k} chains: use 1, 2, 4, 8 or 16"
                )))
            }
        };
        Ok(to_point(k as f64, &est, STEPS * k as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::Backing;

    #[test]
    fn line_cycle_visits_every_line_once() {
        let buf = Buffer::new(64 * 1024, Backing::Small).unwrap();
        let mut rng = SplitMix64::new(3);
        let (start, perm) = line_cycle(&buf, 4096, 32 * 1024, &mut rng).unwrap();
        assert_eq!(perm.len(), 512);
        // SAFETY: `start` is a slot of the cycle just linked in `buf`.
        unsafe {
            assert_eq!(chase(start, 512), start);
            assert_ne!(chase(start, 256), start);
            assert_eq!(chase_idle(start, 512), start);
            assert_ne!(chase_idle(start, 3), start);
        }
        assert!(line_cycle(&buf, 60 * 1024, 32 * 1024, &mut rng).is_err());
    }

    #[test]
    fn small_bench_points_are_positive() {
        // Timed loads: under emulation the counter can stand still across a
        // whole sample, and a zero is the emulator's, not the probe's.
        if hwcal_harness::platform::skip_if_emulated("small_bench_points_are_positive") {
            return;
        }
        let buf = Buffer::new(1 << 20, Backing::Small).unwrap();
        let mut b = ChaseBench::new(buf, 1);
        b.policy.max_samples = 5;
        b.policy.enough_ns = Some(20_000.0);
        let p = b.point(16 * 1024, 0).unwrap();
        assert!(p.y > 0.0 && p.y.is_finite());
        let g = b.point(16 * 1024, 20).unwrap();
        assert!(g.y > p.y, "a gap of adds makes each load slower");
        for d in [8, -8, 256, -256] {
            assert!(b.pair_point(256, d, 1024).unwrap().y > 0.0);
        }
        assert!(b.pair_point(256, 512, 1024).is_err());
        assert!(b.pair_point(256, 0, 1024).is_err());
        for k in [1, 2, 4] {
            assert!(b.parallel_point(256 * 1024, k).unwrap().y > 0.0);
        }
        assert!(b.parallel_point(256 * 1024, 3).is_err());
        // A cold lap reads a positive time, one per timed lap, and refuses a
        // scrub that does not fit beside the chase.
        let c = b.cold_point(64 * 1024, 128 * 1024).unwrap();
        assert!(c.y > 0.0 && c.y.is_finite(), "{c:?}");
        assert_eq!(c.samples.len(), COLD_REPS);
        assert!(b.cold_point(512 * 1024, 768 * 1024).is_err());
    }
}
