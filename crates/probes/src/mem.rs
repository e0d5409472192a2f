//! Memory access benchmark kernels (micbench-mem, lmbench `bw_mem`, Intel
//! MLC's loaded latency) and the time-bounded multi-threaded runner.
//!
//! Two access patterns, as micbench-mem has them:
//! - **random**: a dependent pointer chase (the [`crate::chase`] kernel)
//!   around one pseudo-random cycle of 64-byte lines ([`build_ring`]: a
//!   keyed Feistel permutation, written in parallel). Each load's address is the
//!   previous load's value, so loads never overlap and time per load is the
//!   latency of wherever the line lives;
//! - **sequential**: streaming read, write or copy with the widest vector
//!   loads/stores the CPU has (AVX-512, else AVX2, else a plain u64 loop),
//!   so the core issues as many line requests as its fill buffers allow and
//!   the figure is bandwidth, not instruction throughput. lmbench's `bw_mem
//!   rd` sums 4-byte integers; a 64-byte load per line keeps the core far
//!   from being the bottleneck even for cache-resident sizes.
//!
//! Every thread runs for a fixed wall-clock time (micbench's `-t`) cut into
//! slices of ~20 ms. Between slices the thread measures its core clock with
//! the add chain ([`clockref::core_mhz_now`], ~5 µs), so cycles per op are
//! computed with the clock of that moment: on the reference VM the core
//! moves between 2.2 and 3.0 GHz while the TSC (which micbench counts as
//! "clk") ticks at a fixed 2.0 GHz. Slices are returned raw; summarising
//! them is `hwcal_analysis::mem`'s job.

use crate::buffer::{Backing, Buffer};
use crate::chase::{self, Rng};
use crate::ProbeError;
use hwcal_harness::{clockref, pin, Timer};
use std::sync::{Barrier, OnceLock};

/// Bytes per operation: one cache line. A random op is one dependent load
/// (one line fetched); a sequential op is one line read, written or copied.
pub const LINE: usize = 64;
/// Granularity of the streaming kernels (one unrolled iteration: 4 × 64 B).
pub const GRAIN: usize = 256;
/// Most independent chains one thread follows at once.
pub const MAX_CHAINS: usize = 16;

/// The vector width the streaming kernels use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isa {
    Avx512,
    Avx2,
    Scalar,
}

impl Isa {
    pub fn name(self) -> &'static str {
        match self {
            Isa::Avx512 => "avx512",
            Isa::Avx2 => "avx2",
            Isa::Scalar => "scalar",
        }
    }
}

/// The best kernel this CPU runs (runtime detection, cached).
pub fn isa() -> Isa {
    static ISA: OnceLock<Isa> = OnceLock::new();
    *ISA.get_or_init(|| {
        if std::env::var_os("HWCAL_MEM_ISA").is_some_and(|v| v == "scalar") {
            return Isa::Scalar;
        }
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                return Isa::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                return Isa::Avx2;
            }
        }
        Isa::Scalar
    })
}

// ---------------------------------------------------------------------------
// Streaming kernels. Callers guarantee: `p`/`src`/`dst` 64-byte aligned,
// `len` a multiple of GRAIN, the range inside a live mapping, and no other
// thread writing the range being read or touching the range being written.

#[cfg(target_arch = "x86_64")]
mod x86 {
    use core::arch::x86_64::*;

    /// # Safety
    /// AVX-512F present; see the module contract above.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn read512(p: *const u8, len: usize) -> u64 {
        // Four independent accumulators: the xors are off the load path, so
        // the loop is bound by the loads alone.
        let (mut a0, mut a1, mut a2, mut a3) = (
            _mm512_setzero_si512(),
            _mm512_setzero_si512(),
            _mm512_setzero_si512(),
            _mm512_setzero_si512(),
        );
        let mut off = 0;
        while off < len {
            let q = p.add(off);
            a0 = _mm512_xor_si512(a0, _mm512_load_si512(q as *const _));
            a1 = _mm512_xor_si512(a1, _mm512_load_si512(q.add(64) as *const _));
            a2 = _mm512_xor_si512(a2, _mm512_load_si512(q.add(128) as *const _));
            a3 = _mm512_xor_si512(a3, _mm512_load_si512(q.add(192) as *const _));
            off += 256;
        }
        let x = _mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a2, a3));
        _mm512_reduce_add_epi64(x) as u64
    }

    /// # Safety
    /// AVX-512F present; see the module contract above.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn write512(p: *mut u8, len: usize, val: u64, nt: bool) {
        let v = _mm512_set1_epi64(val as i64);
        let mut off = 0;
        if nt {
            while off < len {
                let q = p.add(off);
                _mm512_stream_si512(q as *mut _, v);
                _mm512_stream_si512(q.add(64) as *mut _, v);
                _mm512_stream_si512(q.add(128) as *mut _, v);
                _mm512_stream_si512(q.add(192) as *mut _, v);
                off += 256;
            }
            _mm_sfence();
        } else {
            while off < len {
                let q = p.add(off);
                _mm512_store_si512(q as *mut _, v);
                _mm512_store_si512(q.add(64) as *mut _, v);
                _mm512_store_si512(q.add(128) as *mut _, v);
                _mm512_store_si512(q.add(192) as *mut _, v);
                off += 256;
            }
        }
    }

    /// # Safety
    /// AVX-512F present; see the module contract above.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn copy512(src: *const u8, dst: *mut u8, len: usize, nt: bool) {
        let mut off = 0;
        while off < len {
            let s = src.add(off);
            let d = dst.add(off);
            let v0 = _mm512_load_si512(s as *const _);
            let v1 = _mm512_load_si512(s.add(64) as *const _);
            let v2 = _mm512_load_si512(s.add(128) as *const _);
            let v3 = _mm512_load_si512(s.add(192) as *const _);
            if nt {
                _mm512_stream_si512(d as *mut _, v0);
                _mm512_stream_si512(d.add(64) as *mut _, v1);
                _mm512_stream_si512(d.add(128) as *mut _, v2);
                _mm512_stream_si512(d.add(192) as *mut _, v3);
            } else {
                _mm512_store_si512(d as *mut _, v0);
                _mm512_store_si512(d.add(64) as *mut _, v1);
                _mm512_store_si512(d.add(128) as *mut _, v2);
                _mm512_store_si512(d.add(192) as *mut _, v3);
            }
            off += 256;
        }
        if nt {
            _mm_sfence();
        }
    }

    /// # Safety
    /// AVX2 present; see the module contract above.
    #[target_feature(enable = "avx2")]
    pub unsafe fn read256(p: *const u8, len: usize) -> u64 {
        let (mut a0, mut a1, mut a2, mut a3) = (
            _mm256_setzero_si256(),
            _mm256_setzero_si256(),
            _mm256_setzero_si256(),
            _mm256_setzero_si256(),
        );
        let mut off = 0;
        while off < len {
            let q = p.add(off) as *const __m256i;
            a0 = _mm256_xor_si256(a0, _mm256_load_si256(q));
            a1 = _mm256_xor_si256(a1, _mm256_load_si256(q.add(1)));
            a2 = _mm256_xor_si256(a2, _mm256_load_si256(q.add(2)));
            a3 = _mm256_xor_si256(a3, _mm256_load_si256(q.add(3)));
            a0 = _mm256_xor_si256(a0, _mm256_load_si256(q.add(4)));
            a1 = _mm256_xor_si256(a1, _mm256_load_si256(q.add(5)));
            a2 = _mm256_xor_si256(a2, _mm256_load_si256(q.add(6)));
            a3 = _mm256_xor_si256(a3, _mm256_load_si256(q.add(7)));
            off += 256;
        }
        let x = _mm256_xor_si256(_mm256_xor_si256(a0, a1), _mm256_xor_si256(a2, a3));
        let mut out = [0u64; 4];
        _mm256_storeu_si256(out.as_mut_ptr() as *mut __m256i, x);
        out[0] ^ out[1] ^ out[2] ^ out[3]
    }

    /// # Safety
    /// AVX2 present; see the module contract above.
    #[target_feature(enable = "avx2")]
    pub unsafe fn write256(p: *mut u8, len: usize, val: u64, nt: bool) {
        let v = _mm256_set1_epi64x(val as i64);
        let mut off = 0;
        while off < len {
            let q = p.add(off) as *mut __m256i;
            for k in 0..8 {
                if nt {
                    _mm256_stream_si256(q.add(k), v);
                } else {
                    _mm256_store_si256(q.add(k), v);
                }
            }
            off += 256;
        }
        if nt {
            _mm_sfence();
        }
    }

    /// # Safety
    /// AVX2 present; see the module contract above.
    #[target_feature(enable = "avx2")]
    pub unsafe fn copy256(src: *const u8, dst: *mut u8, len: usize, nt: bool) {
        let mut off = 0;
        while off < len {
            let s = src.add(off) as *const __m256i;
            let d = dst.add(off) as *mut __m256i;
            let mut v = [_mm256_setzero_si256(); 8];
            for (k, x) in v.iter_mut().enumerate() {
                *x = _mm256_load_si256(s.add(k));
            }
            for (k, x) in v.iter().enumerate() {
                if nt {
                    _mm256_stream_si256(d.add(k), *x);
                } else {
                    _mm256_store_si256(d.add(k), *x);
                }
            }
            off += 256;
        }
        if nt {
            _mm_sfence();
        }
    }
}

/// # Safety
/// See the module contract above (alignment, length, live range, no race).
unsafe fn read_scalar(p: *const u8, len: usize) -> u64 {
    let q = p as *const u64;
    let mut a = [0u64; 4];
    let mut i = 0;
    while i < len / 8 {
        a[0] ^= q.add(i).read();
        a[1] ^= q.add(i + 1).read();
        a[2] ^= q.add(i + 2).read();
        a[3] ^= q.add(i + 3).read();
        i += 4;
    }
    a[0] ^ a[1] ^ a[2] ^ a[3]
}

/// # Safety
/// As [`read_scalar`].
unsafe fn write_scalar(p: *mut u8, len: usize, val: u64) {
    let q = p as *mut u64;
    for i in 0..len / 8 {
        q.add(i).write_volatile(val);
    }
}

/// Read `len` bytes at `p`; returns a value derived from every byte so the
/// loads cannot be dropped.
///
/// # Safety
/// `p` 64-byte aligned, `len` a multiple of [`GRAIN`], `[p, p+len)` inside a
/// live mapping that no other thread writes meanwhile.
#[inline]
unsafe fn read_kernel(isa: Isa, p: *const u8, len: usize) -> u64 {
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => x86::read512(p, len),
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => x86::read256(p, len),
        _ => read_scalar(p, len),
    }
}

/// Fill `len` bytes at `p` with `val`.
///
/// # Safety
/// As [`read_kernel`], and no other thread reads or writes the range.
#[inline]
unsafe fn write_kernel(isa: Isa, p: *mut u8, len: usize, val: u64, nt: bool) {
    // Non-temporal stores exist only in the x86 SIMD kernels.
    #[cfg(not(target_arch = "x86_64"))]
    let _ = nt;
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => x86::write512(p, len, val, nt),
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => x86::write256(p, len, val, nt),
        _ => write_scalar(p, len, val),
    }
}

/// Copy `len` bytes from `src` to `dst` (ranges must not overlap).
///
/// # Safety
/// As [`read_kernel`] for `src` and [`write_kernel`] for `dst`.
#[inline]
unsafe fn copy_kernel(isa: Isa, src: *const u8, dst: *mut u8, len: usize, nt: bool) {
    // Non-temporal stores exist only in the x86 SIMD kernels.
    #[cfg(not(target_arch = "x86_64"))]
    let _ = nt;
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => x86::copy512(src, dst, len, nt),
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => x86::copy256(src, dst, len, nt),
        _ => std::ptr::copy_nonoverlapping(src, dst, len),
    }
}

// ---------------------------------------------------------------------------
// The random cycle.

/// Rounds of the Feistel network (four make a keyed pseudo-random
/// permutation, Luby–Rackoff).
const ROUNDS: usize = 4;

/// A keyed pseudo-random bijection of `[0, n)`: a balanced Feistel network
/// over the smallest even number of bits covering `n`, walked until the
/// result falls inside `[0, n)` (cycle walking; fewer than 4 steps expected).
/// Both directions cost a few multiplies, with no table.
#[derive(Debug, Clone)]
pub struct Perm {
    n: u64,
    half: u32,
    mask: u64,
    keys: [u64; ROUNDS],
}

impl Perm {
    pub fn new(n: u64, rng: &mut Rng) -> Perm {
        let bits = (64 - n.saturating_sub(1).leading_zeros()).max(2);
        let half = bits.div_ceil(2);
        Perm {
            n: n.max(1),
            half,
            mask: (1u64 << half) - 1,
            keys: std::array::from_fn(|_| rng.next_u64()),
        }
    }

    #[inline]
    fn f(&self, x: u64, k: u64) -> u64 {
        let mut h = (x ^ k).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^= h >> 29;
        h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h ^= h >> 32;
        h & self.mask
    }

    #[inline]
    fn enc(&self, x: u64) -> u64 {
        let (mut l, mut r) = (x >> self.half, x & self.mask);
        for &k in &self.keys {
            let t = l ^ self.f(r, k);
            l = r;
            r = t;
        }
        (l << self.half) | r
    }

    #[inline]
    fn dec(&self, y: u64) -> u64 {
        let (mut l, mut r) = (y >> self.half, y & self.mask);
        for &k in self.keys.iter().rev() {
            let t = r ^ self.f(l, k);
            r = l;
            l = t;
        }
        (l << self.half) | r
    }

    /// Position `k` of the order → slot. `k < n`.
    #[inline]
    pub fn apply(&self, k: u64) -> u64 {
        let mut y = self.enc(k);
        while y >= self.n {
            y = self.enc(y);
        }
        y
    }

    /// Slot → its position in the order. `slot < n`.
    #[inline]
    pub fn invert(&self, slot: u64) -> u64 {
        let mut x = self.dec(slot);
        while x >= self.n {
            x = self.dec(x);
        }
        x
    }
}

/// Link the first `footprint` bytes of `buf` into one pseudo-random cycle
/// of line-sized slots (slot `perm(0)` → `perm(1)` → … → `perm(n-1)` →
/// `perm(0)`) for the [`chase::chase`] kernel, and return `entries` entry
/// points spaced evenly around it, so that threads sharing one buffer chase
/// disjoint stretches of the cycle instead of walking in lock step.
///
/// Why not [`chase::random_cycle`]: it shuffles a successor table, walks it
/// (one dependent cache miss per slot) and links in random order (one more
/// miss per slot); for 1 GiB that is 1–2 s, more than the whole budget of
/// `-t` plus 1 s. Here every slot `s` is written in address order with the
/// address of slot `perm(perm⁻¹(s) + 1)`: sequential stores, no table, and
/// the slots are split among `cpus` (one pinned worker each). The order is
/// as unpredictable to prefetchers as a shuffled one.
pub fn build_ring(
    buf: &Buffer,
    footprint: usize,
    entries: usize,
    seed: u64,
    cpus: &[usize],
) -> Result<Vec<usize>, ProbeError> {
    let n = footprint / LINE;
    if n < 2 || footprint > buf.len() {
        return Err(ProbeError::InvalidInput(format!(
            "random access needs at least 2 lines inside the buffer (footprint {footprint}, buffer {})",
            buf.len()
        )));
    }
    let perm = Perm::new(n as u64, &mut Rng::new(seed));
    let base = buf.as_ptr() as usize;
    let link = |lo: usize, hi: usize| {
        for s in lo..hi {
            let k = perm.invert(s as u64) + 1;
            let next = perm.apply(if k == n as u64 { 0 } else { k }) as usize;
            // SAFETY: s < n = footprint / LINE and footprint <= buf.len(),
            // so the 8-byte slot at s * LINE lies inside the live mapping;
            // workers get disjoint [lo, hi) ranges, so no slot is written
            // twice, and nothing reads the buffer until they are joined.
            unsafe { ((base + s * LINE) as *mut usize).write(base + next * LINE) };
        }
    };
    if cpus.len() <= 1 {
        link(0, n);
    } else {
        let parts = cpus.len();
        let res: Vec<Result<(), ProbeError>> = std::thread::scope(|sc| {
            let hs: Vec<_> = cpus
                .iter()
                .enumerate()
                .map(|(i, &cpu)| {
                    let link = &link;
                    sc.spawn(move || {
                        pin::pin_to(cpu)?;
                        link(i * n / parts, (i + 1) * n / parts);
                        Ok(())
                    })
                })
                .collect();
            hs.into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(ProbeError::InvalidInput("ring worker panicked".into())))
                })
                .collect()
        });
        res.into_iter().collect::<Result<Vec<()>, _>>()?;
    }
    let e = entries.clamp(1, n);
    Ok((0..e)
        .map(|k| base + perm.apply((k * n / e) as u64) as usize * LINE)
        .collect())
}

/// Pages in one window of [`build_local_ring`]: within the second-level
/// TLB of every core hwcal knows (1024–4096 entries for 4 KiB pages), far
/// beyond the first level (64–96), so a chase inside one window misses
/// the L1 DTLB as the full chase does but hardly ever walks the page
/// tables.
pub const LOCAL_WINDOW_PAGES: usize = 256;

/// Where [`build_local_ring`] keeps its links inside each line it uses:
/// past the word of [`build_ring`]'s cycle, so both cycles live in one
/// buffer and can be chased one after the other without relinking.
pub const LOCAL_OFFSET: usize = 8;

/// Link a second cycle through the even lines of the first `footprint`
/// bytes of `buf` that visits them window by window, for a chase without
/// page walks (multichase's TLB locality, made fair to DRAM): window `w`
/// holds pages `w, w + W, w + 2W, …` (`W` windows of
/// [`LOCAL_WINDOW_PAGES`] pages of `page` bytes each), its lines are
/// visited in pseudo-random order, and the windows follow each other in
/// pseudo-random order. Every line is still visited once per cycle, so
/// every load misses the caches as in the full chase; but a window's pages
/// all fit the second-level TLB, so only the first load to each page of a
/// window walks the page tables (one in `page / 128` loads) instead of
/// nearly every one. The window's pages are spread `W` pages apart, not
/// side by side, so that its loads do not find DRAM rows open more often
/// than a chase over the whole buffer does (a contiguous window would, and
/// read faster for a reason that is not the TLB). Only even lines are
/// used: an adjacent-line prefetcher that fetches a missed line's 128-byte
/// buddy would otherwise turn later loads in the window into cache hits.
///
/// Links are written at [`LOCAL_OFFSET`] of each line (the word
/// [`build_ring`] uses is left alone), in address order. Returns an entry
/// point, or `None` where the footprint holds fewer than two windows.
pub fn build_local_ring(
    buf: &Buffer,
    footprint: usize,
    page: usize,
    seed: u64,
    cpus: &[usize],
) -> Option<usize> {
    let lines_per_page = page / LINE;
    let slots_per_page = lines_per_page / 2;
    let pages = footprint.min(buf.len()) / page;
    let windows = pages / LOCAL_WINDOW_PAGES;
    if slots_per_page == 0 || windows < 2 {
        return None;
    }
    let m = (LOCAL_WINDOW_PAGES * slots_per_page) as u64;
    let mut rng = Rng::new(seed);
    let inner = Perm::new(m, &mut rng);
    let outer = Perm::new(windows as u64, &mut rng);
    let base = buf.as_ptr() as usize;
    // Slot j of window w: page w + (j / slots) * W, even line 2 (j % slots).
    let addr = |w: u64, j: u64| {
        let pg = w as usize + (j as usize / slots_per_page) * windows;
        base + pg * page + 2 * (j as usize % slots_per_page) * LINE + LOCAL_OFFSET
    };
    let link = |lo: usize, hi: usize| {
        for pg in lo..hi {
            let (w, i) = ((pg % windows) as u64, (pg / windows) as u64);
            for l in 0..slots_per_page as u64 {
                let j = i * slots_per_page as u64 + l;
                let k = inner.invert(j) + 1;
                let next = if k < m {
                    addr(w, inner.apply(k))
                } else {
                    let kw = outer.invert(w) + 1;
                    let nw = outer.apply(if kw == windows as u64 { 0 } else { kw });
                    addr(nw, inner.apply(0))
                };
                // SAFETY: `addr` stays below base + windows * 256 * page <=
                // base + footprint.min(buf.len()) (pg < windows * 256 and
                // the line offset plus 8 bytes is inside the page), so the
                // 8-byte word lies inside the live mapping; every (w, j) is
                // written once (workers get disjoint page ranges), and
                // nothing reads the buffer while it is linked.
                unsafe { (addr(w, j) as *mut usize).write(next) };
            }
        }
    };
    let total = windows * LOCAL_WINDOW_PAGES;
    if cpus.len() <= 1 {
        link(0, total);
    } else {
        let parts = cpus.len();
        std::thread::scope(|sc| {
            for (i, &cpu) in cpus.iter().enumerate() {
                let link = &link;
                sc.spawn(move || {
                    // Unpinned is only slower: the links are the same.
                    let _ = pin::pin_to(cpu);
                    link(i * total / parts, (i + 1) * total / parts);
                });
            }
        });
    }
    Some(addr(outer.apply(0), inner.apply(0)))
}

// ---------------------------------------------------------------------------
// Buffer preparation (in parallel, on the thread's own CPU and node).

/// One buffer to prepare.
#[derive(Debug, Clone)]
pub struct Prep {
    /// CPU to prepare on (first touch happens there).
    pub cpu: Option<usize>,
    /// NUMA node to bind the buffer to.
    pub node: Option<u32>,
    pub size: usize,
    pub backing: Backing,
    /// Entry points of a random cycle to build (0: no cycle, streaming use).
    pub ring_entries: usize,
    /// CPUs that write the cycle (split among them); empty: the preparing thread.
    pub ring_cpus: Vec<usize>,
    pub seed: u64,
    /// Also link the window-by-window cycle of [`build_local_ring`] (for a
    /// chase without page walks).
    pub local_ring: bool,
}

/// A prepared buffer.
#[derive(Debug)]
pub struct Prepared {
    pub buf: Buffer,
    /// Chase entry points (empty without a cycle).
    pub entries: Vec<usize>,
    /// Entry point of the window-by-window cycle, where one was linked.
    pub local_entry: Option<usize>,
    /// Wall time to map, touch and link, ns.
    pub setup_ns: f64,
    /// Share of the buffer on huge pages (smaps), 0..1.
    pub huge_fraction: f64,
    /// Share of sampled pages on the requested node, when one was requested
    /// and the kernel can tell.
    pub on_node: Option<f64>,
}

fn prepare_one(p: &Prep) -> Result<Prepared, ProbeError> {
    let t0 = Timer::wall_ns();
    if let Some(c) = p.cpu {
        pin::pin_to(c)?;
    }
    if let Some(n) = p.node {
        crate::numa::bind_thread_memory(n)?;
    }
    let buf = Buffer::new(p.size, p.backing.clone());
    if p.node.is_some() {
        crate::numa::reset_thread_policy();
    }
    let buf = buf?;
    let mut on_node = None;
    if let Some(n) = p.node {
        on_node = crate::numa::fraction_on_node(&buf, n, 64);
        if on_node.is_some_and(|f| f < 0.99) {
            // The policy did not place everything (e.g. pre-allocated
            // hugetlbfs pages): migrate, then check again.
            crate::numa::mbind_range(buf.as_ptr(), buf.len(), n)?;
            on_node = crate::numa::fraction_on_node(&buf, n, 64);
        }
    }
    let entries = if p.ring_entries > 0 {
        build_ring(&buf, p.size.min(buf.len()), p.ring_entries, p.seed, &p.ring_cpus)?
    } else {
        Vec::new()
    };
    let local_entry = if p.local_ring {
        build_local_ring(
            &buf,
            p.size.min(buf.len()),
            crate::pages::base_page(),
            p.seed ^ 0x10ca1,
            &p.ring_cpus,
        )
    } else {
        None
    };
    let huge_fraction = match p.backing {
        Backing::Small => 0.0,
        _ => buf.huge_fraction(),
    };
    Ok(Prepared {
        buf,
        entries,
        local_entry,
        setup_ns: (Timer::wall_ns() - t0) as f64,
        huge_fraction,
        on_node,
    })
}

/// Prepare every buffer at once, each on its own thread pinned to its CPU
/// (so pages are first touched, and zeroed by the kernel, in parallel and
/// on the right node). Results come back in order.
pub fn prepare_all(preps: &[Prep]) -> Vec<Result<Prepared, ProbeError>> {
    std::thread::scope(|s| {
        let hs: Vec<_> = preps.iter().map(|p| s.spawn(move || prepare_one(p))).collect();
        hs.into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(ProbeError::InvalidInput("buffer preparation panicked".into())))
            })
            .collect()
    })
}

// ---------------------------------------------------------------------------
// The timed runner.

/// What one thread does for the whole run.
#[derive(Debug, Clone, Copy)]
pub enum Work<'a> {
    /// Dependent chase from `start` (an entry point from [`build_ring`] on `buf`).
    Chase { buf: &'a Buffer, start: usize },
    /// `k` independent chases at once (entry points `starts[..k]`, k one of
    /// 1, 2, 4, 8, 16): loads of different chains overlap, so time per load
    /// shows the memory-level parallelism (lmbench `par_mem`, multichase -p).
    Chains {
        buf: &'a Buffer,
        starts: [usize; MAX_CHAINS],
        k: usize,
    },
    /// Stream-read `[off, off+len)` over and over.
    Read { buf: &'a Buffer, off: usize, len: usize },
    /// Stream-write `[off, off+len)`: regular stores (read-for-ownership
    /// plus write-back: what most programs do) or non-temporal ones.
    Write {
        buf: &'a Buffer,
        off: usize,
        len: usize,
        nontemporal: bool,
    },
    /// Copy `[src, src+len)` to `[dst, dst+len)`.
    Copy {
        buf: &'a Buffer,
        src: usize,
        dst: usize,
        len: usize,
        nontemporal: bool,
    },
}

impl Work<'_> {
    pub fn name(&self) -> &'static str {
        match self {
            Work::Chase { .. } => "chase",
            Work::Chains { .. } => "chains",
            Work::Read { .. } => "read",
            Work::Write { .. } => "write",
            Work::Copy { .. } => "copy",
        }
    }

    fn buf(&self) -> &Buffer {
        match self {
            Work::Chase { buf, .. }
            | Work::Chains { buf, .. }
            | Work::Read { buf, .. }
            | Work::Write { buf, .. }
            | Work::Copy { buf, .. } => buf,
        }
    }

    /// Byte ranges (offset, length) read and written.
    fn ranges(&self) -> (Vec<Range>, Vec<Range>) {
        match *self {
            Work::Chase { buf, .. } | Work::Chains { buf, .. } => (vec![(0, buf.len())], vec![]),
            Work::Read { off, len, .. } => (vec![(off, len)], vec![]),
            Work::Write { off, len, .. } => (vec![], vec![(off, len)]),
            Work::Copy { src, dst, len, .. } => (vec![(src, len)], vec![(dst, len)]),
        }
    }
}

/// A byte range of a buffer: (offset, length).
type Range = (usize, usize);

/// One thread's assignment.
#[derive(Debug, Clone, Copy)]
pub struct Job<'a> {
    pub cpu: Option<usize>,
    pub work: Work<'a>,
}

/// Timing of the run.
#[derive(Debug, Clone, Copy)]
pub struct RunPlan {
    /// Measured time per thread, ns.
    pub duration_ns: f64,
    /// Length of one slice (one clock reading per slice boundary), ns.
    pub slice_ns: f64,
    /// Spin at most this long before the start so the core clock settles.
    pub warm_up_ms: u64,
}

impl Default for RunPlan {
    fn default() -> Self {
        RunPlan {
            duration_ns: 1e9,
            slice_ns: 20e6,
            warm_up_ms: 100,
        }
    }
}

/// One slice of one thread.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slice {
    /// Operations (lines) completed.
    pub ops: u64,
    /// Wall time, ns (TSC-timed).
    pub ns: f64,
    /// TSC ticks (micbench's "clk"); equals ns on a non-TSC timer.
    pub ticks: f64,
    /// Core clock across the slice: mean of the readings before and after, MHz.
    pub mhz: f64,
    /// Time the thread was actually on its CPU during the slice, ns
    /// (`CLOCK_THREAD_CPUTIME_ID`); less than `ns` when other processes took
    /// the CPU. NaN if unavailable.
    pub cpu_ns: f64,
}

/// Everything one thread measured.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadRun {
    pub cpu: Option<usize>,
    pub work: &'static str,
    pub slices: Vec<Slice>,
    /// Involuntary context switches during the timed part (preemptions).
    pub preemptions: Option<u64>,
}

fn overlaps(a: (usize, usize), b: (usize, usize)) -> bool {
    a.0 < b.0 + b.1 && b.0 < a.0 + a.1
}

/// Check every job's ranges: inside its buffer, aligned for the kernels, and
/// no range written by one job touched by another (no data races).
pub fn validate(jobs: &[Job]) -> Result<(), ProbeError> {
    let bad = |m: String| Err(ProbeError::InvalidInput(m));
    for (i, j) in jobs.iter().enumerate() {
        let b = j.work.buf();
        let starts: &[usize] = match &j.work {
            Work::Chase { start, .. } => std::slice::from_ref(start),
            Work::Chains { starts, k, .. } => {
                if ![1, 2, 4, 8, 16].contains(k) {
                    return bad(format!("job {i}: {k} chains (use 1, 2, 4, 8 or 16)"));
                }
                &starts[..*k]
            }
            _ => &[],
        };
        let base = b.as_ptr() as usize;
        for &start in starts {
            if start < base || start + 8 > base + b.len() || !start.is_multiple_of(8) {
                return bad(format!("job {i}: chase start outside its buffer"));
            }
        }
        let (r, w) = j.work.ranges();
        for &(off, len) in r.iter().chain(&w) {
            if off + len > b.len() {
                return bad(format!(
                    "job {i}: range {off}+{len} outside a {}-byte buffer",
                    b.len()
                ));
            }
            if !matches!(j.work, Work::Chase { .. } | Work::Chains { .. })
                && (!off.is_multiple_of(LINE) || !len.is_multiple_of(GRAIN) || len == 0)
            {
                return bad(format!(
                    "job {i}: streaming range {off}+{len} must be {LINE}-aligned, a multiple of {GRAIN} bytes"
                ));
            }
        }
        if let Work::Copy { src, dst, len, .. } = j.work {
            if overlaps((src, len), (dst, len)) {
                return bad(format!("job {i}: copy source and destination overlap"));
            }
        }
        for (k, o) in jobs.iter().enumerate() {
            if k == i || !std::ptr::eq(o.work.buf(), b) {
                continue;
            }
            let (or, ow) = o.work.ranges();
            for &wr in &w {
                if or.iter().chain(&ow).any(|&x| overlaps(wr, x)) {
                    return bad(format!(
                        "jobs {i} and {k} touch the same bytes while {i} writes them"
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Involuntary context switches of the calling thread so far.
fn preemptions_now() -> Option<u64> {
    // SAFETY: getrusage fills the rusage struct we own; RUSAGE_THREAD is
    // Linux-specific and only reads the calling thread's counters.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; `ru` is a valid, writable rusage.
    let r = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    (r == 0).then_some(ru.ru_nivcsw as u64)
}

/// CPU time the calling thread has used, ns (NaN if unavailable).
fn thread_cpu_ns() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec we own; the thread CPU-time
    // clock always exists on Linux.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if r == 0 {
        ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64
    } else {
        f64::NAN
    }
}

/// Per-thread mutable state of the streaming/chasing loop.
struct Cursor {
    pos: usize,
    chunk: usize,
    p: usize,
    ps: [usize; MAX_CHAINS],
    sink: u64,
    pass: u64,
}

impl Cursor {
    /// Do one chunk of work; returns ops (lines) done.
    #[inline]
    fn step(&mut self, w: &Work, isa: Isa) -> u64 {
        match *w {
            Work::Chase { .. } => {
                // SAFETY: the cursor starts on the ring `build_ring` wrote in
                // this thread's buffer, which outlives the run, and the
                // chase only moves it along that ring.
                self.p = unsafe { chase::chase(self.p, self.chunk as u64) };
                // chase() rounds up to a multiple of 16 loads.
                (self.chunk as u64).div_ceil(16) * 16
            }
            Work::Chains { k, .. } => {
                // `chunk` counts loads over all chains.
                let per = (self.chunk / k).max(1) as u64;
                let ps = &mut self.ps;
                fn go<const K: usize>(ps: &mut [usize; MAX_CHAINS], loads: u64) {
                    let mut a = [0usize; K];
                    a.copy_from_slice(&ps[..K]);
                    // SAFETY: as for the single chase: every pointer is a
                    // slot of the ring in this thread's live buffer.
                    let r = unsafe { chase::chase_parallel::<K>(a, loads) };
                    ps[..K].copy_from_slice(&r);
                }
                match k {
                    1 => go::<1>(ps, per),
                    2 => go::<2>(ps, per),
                    4 => go::<4>(ps, per),
                    8 => go::<8>(ps, per),
                    _ => go::<16>(ps, per),
                }
                per * k as u64
            }
            Work::Read { buf, off, len } => {
                let c = self.chunk.min(len - self.pos);
                // SAFETY: validate() checked [off, off+len) lies in `buf`,
                // is aligned and not written by any other job; pos and c are
                // multiples of GRAIN with pos + c <= len.
                self.sink ^= unsafe { read_kernel(isa, buf.as_ptr().add(off + self.pos), c) };
                self.advance(c, len)
            }
            Work::Write {
                buf,
                off,
                len,
                nontemporal,
            } => {
                let c = self.chunk.min(len - self.pos);
                // SAFETY: as for Read, and validate() checked no other job
                // touches these bytes.
                unsafe { write_kernel(isa, buf.as_ptr().add(off + self.pos), c, self.pass, nontemporal) };
                self.advance(c, len)
            }
            Work::Copy {
                buf,
                src,
                dst,
                len,
                nontemporal,
            } => {
                let c = self.chunk.min(len - self.pos);
                // SAFETY: as for Read (source) and Write (destination);
                // validate() checked the two ranges do not overlap.
                unsafe {
                    copy_kernel(
                        isa,
                        buf.as_ptr().add(src + self.pos),
                        buf.as_ptr().add(dst + self.pos),
                        c,
                        nontemporal,
                    )
                };
                self.advance(c, len)
            }
        }
    }

    fn advance(&mut self, c: usize, len: usize) -> u64 {
        self.pos += c;
        if self.pos >= len {
            self.pos = 0;
            self.pass += 1;
        }
        (c / LINE) as u64
    }
}

/// First chunk size: loads for a chase (over all its chains), bytes for a
/// stream; the timed loop doubles it until a chunk takes long enough.
fn first_chunk(work: &Work) -> usize {
    match work {
        Work::Chase { .. } | Work::Chains { .. } => 1024,
        _ => 16 * 1024,
    }
}

impl Cursor {
    /// A cursor at the start of `work`: the chase at its ring entry, the
    /// chains at theirs, streams at offset 0 on their first pass.
    fn new(work: &Work) -> Cursor {
        Cursor {
            pos: 0,
            chunk: first_chunk(work),
            p: match *work {
                Work::Chase { start, .. } => start,
                _ => 0,
            },
            ps: match *work {
                Work::Chains { starts, .. } => starts,
                _ => [0; MAX_CHAINS],
            },
            sink: 0,
            pass: 1,
        }
    }
}

/// One job's thread: pin, warm up, wait for the others at the barrier,
/// then measure, counting the preemptions around the measurement.
fn run_thread(job: &Job, plan: &RunPlan, barrier: &Barrier) -> Result<ThreadRun, ProbeError> {
    let timer = Timer::get();
    let isa = isa();
    let mut cur = Cursor::new(&job.work);
    let ns_per_tick = timer.ns_per_tick();
    let to_ticks = |ns: f64| (ns / ns_per_tick).max(1.0) as u64;
    let pinned = match job.cpu {
        Some(c) => pin::pin_to(c).map_err(ProbeError::from),
        None => Ok(()),
    };
    if pinned.is_ok() {
        warm_up(job, plan, &mut cur, isa, timer, to_ticks);
    }
    // Everyone waits here, even a thread that failed to pin, so no thread
    // is left waiting forever.
    barrier.wait();
    pinned?;
    let sw0 = preemptions_now();
    let slices = timed_slices(job, plan, cur, isa, timer, to_ticks);
    let preemptions = match (sw0, preemptions_now()) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a)),
        _ => None,
    };
    Ok(ThreadRun {
        cpu: job.cpu,
        work: job.work.name(),
        slices,
        preemptions,
    })
}

/// Before the barrier, on the pinned CPU: let the core clock settle, then
/// make one pass over the region, and restart the chunk size.
fn warm_up(
    job: &Job,
    plan: &RunPlan,
    cur: &mut Cursor,
    isa: Isa,
    timer: &Timer,
    to_ticks: impl Fn(f64) -> u64,
) {
    clockref::warm_up(timer, plan.warm_up_ms);
    // Warm the caches and TLB with one pass over the region, at most
    // ~20 ms: a cache-sized buffer evicted since it was prepared would
    // otherwise make the first slices of a short run read DRAM; for a
    // DRAM-sized buffer a partial pass changes nothing.
    let region = match job.work {
        Work::Chase { buf, .. } | Work::Chains { buf, .. } => buf.len(),
        Work::Read { len, .. } | Work::Write { len, .. } | Work::Copy { len, .. } => len,
    };
    let until = timer.now() + to_ticks(20e6);
    let mut done = 0usize;
    while done < region && timer.now() < until {
        done += cur.step(&job.work, isa) as usize * LINE;
    }
    cur.chunk = first_chunk(&job.work);
}

/// The measurement proper: slices of `plan.slice_ns` until
/// `plan.duration_ns` has passed, each with its op count, wall and CPU
/// time and the core clock around it. The cursor is owned here so the
/// timed loop works on a local, as it always has.
fn timed_slices(
    job: &Job,
    plan: &RunPlan,
    mut cur: Cursor,
    isa: Isa,
    timer: &Timer,
    to_ticks: impl Fn(f64) -> u64,
) -> Vec<Slice> {
    // A chunk should take >= 50 µs so the timer read between chunks costs
    // < 0.1%, and <= ~1 ms so the run ends close to its deadline.
    let chunk_target = to_ticks(50e3);
    let chunk_cap = match job.work {
        Work::Chase { .. } | Work::Chains { .. } => 1 << 20,
        _ => 4 << 20,
    };
    let mut slices = Vec::new();
    let mut mhz_prev = clockref::core_mhz_now(timer);
    let start = timer.now();
    let end = start + to_ticks(plan.duration_ns);
    let slice_ticks = to_ticks(plan.slice_ns);
    loop {
        let c0 = thread_cpu_ns();
        let t0 = timer.now();
        let slice_end = (t0 + slice_ticks).min(end);
        let mut ops = 0u64;
        let mut t = t0;
        // At least one chunk per slice (the clock reading before this slice
        // may already have crossed the deadline): no empty slices.
        loop {
            let chunk_start = t;
            ops += cur.step(&job.work, isa);
            t = timer.now();
            if t - chunk_start < chunk_target && cur.chunk < chunk_cap {
                cur.chunk *= 2;
            }
            if t >= slice_end {
                break;
            }
        }
        let c1 = thread_cpu_ns();
        let mhz = clockref::core_mhz_now(timer);
        let ticks = t - t0;
        let ns = timer.elapsed_ns(t0, t);
        slices.push(Slice {
            ops,
            ns,
            ticks: ticks as f64,
            mhz: 0.5 * (mhz_prev + mhz),
            // The CPU clock ticks at scheduler granularity: never more than the wall time.
            cpu_ns: (c1 - c0).min(ns),
        });
        mhz_prev = mhz;
        if t >= end {
            break;
        }
    }
    std::hint::black_box((cur.sink, cur.p, cur.ps));
    slices
}

/// Run every job on its own thread for `plan.duration_ns`, all starting
/// together after a barrier. Returns one [`ThreadRun`] per job, in order.
pub fn run(jobs: &[Job], plan: &RunPlan) -> Result<Vec<ThreadRun>, ProbeError> {
    if jobs.is_empty() {
        return Err(ProbeError::InvalidInput("no threads to run".into()));
    }
    validate(jobs)?;
    let barrier = Barrier::new(jobs.len());
    std::thread::scope(|s| {
        let hs: Vec<_> = jobs
            .iter()
            .map(|j| {
                let b = &barrier;
                s.spawn(move || run_thread(j, plan, b))
            })
            .collect();
        hs.into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(ProbeError::InvalidInput("measuring thread panicked".into())))
            })
            .collect()
    })
}

/// Split `len` bytes into `parts` GRAIN-aligned, disjoint pieces (the last
/// takes the remainder, rounded down to GRAIN). Pieces may be empty when
/// `len` is too small; callers check.
pub fn split(len: usize, parts: usize) -> Vec<(usize, usize)> {
    let parts = parts.max(1);
    let each = (len / parts) / GRAIN * GRAIN;
    (0..parts)
        .map(|k| {
            let off = k * each;
            let l = if k + 1 == parts {
                (len - off) / GRAIN * GRAIN
            } else {
                each
            };
            (off, l)
        })
        .collect()
}

/// Mount points of hugetlbfs file systems (from `/proc/mounts`).
pub fn hugetlbfs_mounts() -> Vec<std::path::PathBuf> {
    std::fs::read_to_string("/proc/mounts")
        .map(|s| parse_hugetlbfs_mounts(&s))
        .unwrap_or_default()
}

/// The hugetlbfs mount points listed in a `/proc/mounts` text.
pub fn parse_hugetlbfs_mounts(mounts: &str) -> Vec<std::path::PathBuf> {
    mounts
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_dev, dir, fs) = (f.next()?, f.next()?, f.next()?);
            (fs == "hugetlbfs").then(|| std::path::PathBuf::from(dir.replace("\\040", " ")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_read_write_copy() {
        let b = Buffer::new(64 * 1024, Backing::Small).unwrap();
        let isa = isa();
        for k in [isa, Isa::Scalar] {
            // SAFETY: the buffer is ours, aligned, 64 KiB (multiple of GRAIN).
            unsafe {
                write_kernel(k, b.as_ptr(), 32 * 1024, 0x0101_0101_0101_0101, false);
                write_kernel(k, b.as_ptr().add(32 * 1024), 32 * 1024, 7, true);
                // Reading an even number of identical lines xors to zero.
                assert_eq!(read_kernel(k, b.as_ptr(), 32 * 1024), 0);
                copy_kernel(k, b.as_ptr(), b.as_ptr().add(32 * 1024), 32 * 1024, false);
                assert_eq!(*(b.as_ptr().add(40 * 1024) as *const u64), 0x0101_0101_0101_0101);
                write_kernel(k, b.as_ptr(), 256, 0, false);
                *(b.as_ptr() as *mut u64) = 5;
                assert_eq!(read_kernel(k, b.as_ptr(), 256), 5);
            }
        }
    }

    #[test]
    fn ring_is_one_cycle_with_spread_entries() {
        let b = Buffer::new(64 * 1024, Backing::Small).unwrap();
        let e = build_ring(&b, 64 * 1024, 4, 3, &[]).unwrap();
        assert_eq!(e.len(), 4);
        // 1024 lines: 1024 loads (a multiple of 16) come back to the start.
        for &s in &e {
            // SAFETY: `s` is an entry of the ring just built in `b`.
            assert_eq!(unsafe { chase::chase(s, 1024) }, s);
        }
        // Entry 1 is 256 steps after entry 0.
        // SAFETY: as above.
        assert_eq!(unsafe { chase::chase(e[0], 256) }, e[1]);
        assert!(build_ring(&b, 64, 1, 1, &[]).is_err());
        // Split among workers (unpinned CPUs are fine for the test: use the
        // ones we may run on), and an n that is not a power of two.
        let cpus = hwcal_harness::pin::allowed_cpus();
        let n = 1000;
        let e = build_ring(&b, n * LINE, 1, 5, &cpus).unwrap();
        let mut seen = vec![false; n];
        let mut p = e[0];
        for _ in 0..n {
            let slot = (p - b.as_ptr() as usize) / LINE;
            assert!(slot < n && !seen[slot]);
            seen[slot] = true;
            // SAFETY: p is a slot address inside the buffer (checked above).
            p = unsafe { *(p as *const usize) };
        }
        assert_eq!(p, e[0]);
    }

    #[test]
    fn the_local_ring_visits_every_even_line_window_by_window() {
        // Three windows of 256 pages of 4 KiB, and a page left over.
        let page = 4096;
        let size = (3 * LOCAL_WINDOW_PAGES + 1) * page;
        let b = Buffer::new(size, Backing::Small).unwrap();
        // The full ring first: the local one must leave its words alone.
        let e = build_ring(&b, size, 1, 3, &[]).unwrap();
        let cpus = hwcal_harness::pin::allowed_cpus();
        let start = build_local_ring(&b, size, page, 9, &cpus).unwrap();
        let base = b.as_ptr() as usize;
        let per_window = LOCAL_WINDOW_PAGES * page / (2 * LINE);
        let n = 3 * per_window;
        let mut seen = vec![false; size / LINE];
        let (mut p, mut pages_of_window) = (start, std::collections::BTreeSet::new());
        for step in 0..n {
            let off = p - base;
            assert_eq!(off % LINE, LOCAL_OFFSET, "step {step}");
            let line = off / LINE;
            assert!(line.is_multiple_of(2) && line < 3 * LOCAL_WINDOW_PAGES * page / LINE && !seen[line]);
            seen[line] = true;
            // A window's pages are spread 3 apart (page % 3 is its window).
            pages_of_window.insert((off / page) % 3);
            if (step + 1) % per_window == 0 {
                assert_eq!(pages_of_window.len(), 1, "one window at a time");
                pages_of_window.clear();
            }
            // SAFETY: p is a word of the local ring inside `b` (checked above).
            p = unsafe { *(p as *const usize) };
        }
        assert_eq!(p, start, "one cycle through every even line");
        // The full ring is intact.
        // SAFETY: `e[0]` is an entry of the full ring in `b`.
        assert_eq!(unsafe { chase::chase(e[0], (size / LINE) as u64) }, e[0]);
        // Fewer than two windows: no local ring.
        assert!(build_local_ring(&b, LOCAL_WINDOW_PAGES * page, page, 1, &[]).is_none());
    }

    #[test]
    fn perm_is_a_bijection_with_its_inverse() {
        let mut rng = Rng::new(11);
        for n in [2u64, 3, 5, 16, 17, 100, 1023, 4096, 5000] {
            let p = Perm::new(n, &mut rng);
            let mut seen = vec![false; n as usize];
            for k in 0..n {
                let s = p.apply(k);
                assert!(s < n && !seen[s as usize], "n={n}");
                seen[s as usize] = true;
                assert_eq!(p.invert(s), k);
            }
        }
        // Consecutive positions land far apart (no stride for a prefetcher).
        let p = Perm::new(1 << 20, &mut rng);
        let near = (0..1000u64)
            .filter(|&k| p.apply(k).abs_diff(p.apply(k + 1)) < 64)
            .count();
        assert!(near < 5, "{near}");
    }

    #[test]
    fn validation_rejects_races_and_bad_ranges() {
        let b = Buffer::new(64 * 1024, Backing::Small).unwrap();
        let r = |off, len| Job {
            cpu: None,
            work: Work::Read { buf: &b, off, len },
        };
        let w = |off, len| Job {
            cpu: None,
            work: Work::Write {
                buf: &b,
                off,
                len,
                nontemporal: false,
            },
        };
        assert!(validate(&[r(0, 4096), r(0, 4096)]).is_ok());
        assert!(validate(&[w(0, 4096), w(4096, 4096)]).is_ok());
        assert!(validate(&[w(0, 4096), r(0, 4096)]).is_err());
        assert!(validate(&[r(0, 100)]).is_err());
        assert!(validate(&[r(60 * 1024, 8192)]).is_err());
        let c = Job {
            cpu: None,
            work: Work::Copy {
                buf: &b,
                src: 0,
                dst: 1024,
                len: 2048,
                nontemporal: false,
            },
        };
        assert!(validate(&[c]).is_err());
    }

    #[test]
    fn short_runs_give_slices() {
        let b = Buffer::new(256 * 1024, Backing::Small).unwrap();
        let starts = build_ring(&b, 128 * 1024, 1, 9, &[]).unwrap();
        let plan = RunPlan {
            duration_ns: 30e6,
            slice_ns: 10e6,
            warm_up_ms: 1,
        };
        let jobs = [
            Job {
                cpu: None,
                work: Work::Chase {
                    buf: &b,
                    start: starts[0],
                },
            },
            Job {
                cpu: None,
                work: Work::Copy {
                    buf: &b,
                    src: 128 * 1024,
                    dst: 192 * 1024,
                    len: 64 * 1024,
                    nontemporal: false,
                },
            },
        ];
        // The chase reads the whole buffer, the copy writes part of it.
        assert!(run(&jobs, &plan).is_err());
        let b2 = Buffer::new(128 * 1024, Backing::Small).unwrap();
        let jobs = [
            jobs[0],
            Job {
                cpu: None,
                work: Work::Copy {
                    buf: &b2,
                    src: 0,
                    dst: 64 * 1024,
                    len: 64 * 1024,
                    nontemporal: false,
                },
            },
        ];
        let runs = run(&jobs, &plan).unwrap();
        assert_eq!(runs.len(), 2);
        // Four chains around one ring.
        let e = build_ring(&b2, 64 * 1024, 4, 2, &[]).unwrap();
        let mut starts = [0; MAX_CHAINS];
        starts[..4].copy_from_slice(&e);
        let chains = |k| Job {
            cpu: None,
            work: Work::Chains { buf: &b2, starts, k },
        };
        assert!(validate(&[chains(3)]).is_err());
        let r = run(&[chains(4)], &plan).unwrap();
        assert!(r[0].slices.iter().all(|s| s.ops > 0 && s.ops % 4 == 0));
        assert_eq!(r[0].work, "chains");
        for r in &runs {
            assert!(!r.slices.is_empty());
            assert!(r.slices.iter().all(|s| s.ns > 0.0 && s.ops > 0));
            // The last slice stops at the deadline, not after another full
            // run; the bound is loose because on a loaded 2-core machine the
            // thread can be kept off the CPU for tens of ms inside a slice.
            assert!(
                r.slices.last().unwrap().ns < 1e9,
                "the last slice ends near the deadline"
            );
            assert!(r
                .slices
                .iter()
                .all(|s| s.cpu_ns.is_nan() || (0.0..=s.ns).contains(&s.cpu_ns)));
            // At least one slice's worth: on a loaded 2-core machine a
            // thread can be kept off the CPU for most of a 30 ms run.
            let ns: f64 = r.slices.iter().map(|s| s.ns).sum();
            assert!(ns > 0.9 * plan.slice_ns && ns < 2e9, "{ns}");
        }
    }

    #[test]
    fn splitting_and_mounts() {
        assert_eq!(split(4096, 2), vec![(0, 2048), (2048, 2048)]);
        assert_eq!(split(1000, 1), vec![(0, 768)]);
        let m = "none /dev/hugepages hugetlbfs rw 0 0\nproc /proc proc rw 0 0\n";
        assert_eq!(
            parse_hugetlbfs_mounts(m),
            vec![std::path::PathBuf::from("/dev/hugepages")]
        );
    }
}
