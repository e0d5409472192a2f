//! The random cycles the memory chase follows: a keyed Feistel permutation
//! of the buffer's lines linked in address order ([`build_ring`]), and a
//! second cycle that visits the lines window by window so that the chase
//! hardly walks the page tables ([`build_local_ring`]).

use super::kernels::LINE;
use crate::buffer::Buffer;
use crate::error::ProbeError;
use hwcal_harness::pin;
use hwcal_stats::SplitMix64;

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
    pub fn new(n: u64, rng: &mut SplitMix64) -> Perm {
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
    let perm = Perm::new(n as u64, &mut SplitMix64::new(seed));
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
    let mut rng = SplitMix64::new(seed);
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
