//! TLB probe: one dependent load per page over a growing number of pages in
//! random order (the PS3 TLB note's experiment, as a chase so each load's
//! latency is seen), against a baseline that touches the very same cache
//! lines without TLB misses.
//!
//! Line placement matters. The note reads `page j, offset (j*64) % 4096`:
//! with 4 KiB pages the physical frames scatter those lines over the cache,
//! but in the huge-page baseline the address bits 6..16 of page j are then a
//! function of `j mod 64` alone, so all lines fold onto 64 of the 2048 L2
//! sets and the "cache only" curve thrashes from ~1024 pages on. Here the
//! line index within page j is `(j + j/32) mod 64`: for the first 2048
//! pages every (4 KiB page slot mod 32, line) pair, i.e. every L2 set of a
//! 2048-set cache, is used once, and consecutive pages use different L1 sets.
//!
//! Two baselines. Where the TLB really sees 2 MiB pages, the same lines in a
//! huge-page buffer (the note's own comparison). Everywhere, the *dense*
//! baseline of lmbench's `tlb` and the Chips and Cheese TLB test: the same
//! number of lines packed side by side, so n lines live in n/64 pages and
//! stay within the L1 DTLB's reach up to 64 × 64 = 4096 lines. Both chases
//! hold n lines spread evenly over the L1 sets, so they sit in the same
//! cache level at every n the first two TLB levels care about.
//!
//! Page sizes are a parameter ([`PageSizes`], carried by the buffer): with
//! 16 or 64 KiB base pages (Arm) one load per *base page* is what misses
//! the TLB, and the line pattern is generalised so that the same 2048-set
//! coverage holds. Coalescing: AMD's L2 DTLB merges runs of contiguous 4 KiB
//! translations and Arm TLBs honour the contiguous bit (16 × 4 KiB or
//! 32 × 64 KiB in one entry); the 4 KiB-page test therefore runs in a
//! buffer whose frames are scattered (`Buffer::new_scattered`), on every
//! architecture.

use crate::buffer::Buffer;
use crate::cache::{link_seq, shuffled, time_chain, to_point, LOADS_PER_ITER};
use crate::error::ProbeError;
use crate::pages::PageSizes;
use hwcal_harness::Policy;
use hwcal_model::RawPoint;
use hwcal_stats::SplitMix64;

/// Byte offset of the line base page `j` is touched at, within its page
/// of `base` bytes. Address bits 6..16 (a 2048-set cache) of the first 2048
/// pages are all distinct: with `k` page-number bits below bit 17 (5 for
/// 4 KiB pages, 3 for 16 KiB, 1 for 64 KiB) the line index is
/// `(j + j >> k) mod lines`, which over `j = 2^k a + b` is
/// `((2^k + 1) a + b) mod lines`, one-to-one in `a`. For 4 KiB pages this is
/// `(j + j/32) mod 64`.
pub fn line_offset(j: usize, base: usize) -> usize {
    let lines = (base / 64).max(1);
    let page_bits = base.trailing_zeros() as usize;
    let line = if page_bits < 17 {
        j + (j >> (17 - page_bits))
    } else {
        j
    };
    (line % lines) * 64
}

/// Address (offset in the buffer) of the one slot of page `j` when pages
/// are `page_bytes` apart. Inside a huge page the base page `j mod
/// (huge/base)` is used, so the offset's bits below the huge page equal
/// those of the base-page layout: the huge-page test touches lines with
/// exactly the cache-set pattern of the base-page baseline, which
/// therefore serves as its baseline too.
pub fn slot_offset(j: usize, page_bytes: usize, pages: PageSizes) -> usize {
    let line = line_offset(j, pages.base);
    if page_bytes >= pages.huge {
        j * page_bytes + (j % (page_bytes / pages.base)) * pages.base + line
    } else {
        j * page_bytes + line
    }
}

/// Where the touched lines lie.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// One line per page, at [`slot_offset`] (the test, and the huge-page
    /// baseline).
    Spread,
    /// n lines packed into n × 64 bytes (the dense baseline).
    Dense,
}

/// Measures one chase per page count in one buffer (relinked per point).
pub struct PageBench {
    buf: Buffer,
    /// Which stride-sized page of the buffer logical page j uses (all, in
    /// order, by default; only the checked-clean ones for 2 MiB pages).
    map: Vec<usize>,
    /// Distance between touched pages: a base page or a huge page.
    stride: usize,
    pages: PageSizes,
    layout: Layout,
    rng: SplitMix64,
    pub policy: Policy,
}

impl PageBench {
    /// `buf` must hold `max_pages * stride` bytes.
    pub fn new(buf: Buffer, stride: usize, seed: u64) -> Self {
        let map = (0..buf.len() / stride).collect();
        let pages = buf.pages();
        PageBench {
            buf,
            map,
            stride,
            pages,
            layout: Layout::Spread,
            rng: SplitMix64::new(seed),
            policy: crate::cache::latency_policy(),
        }
    }

    /// The dense baseline: `buf` must hold `max_pages * 64` bytes; point(n)
    /// chases n lines packed side by side, in random order.
    pub fn dense(buf: Buffer, seed: u64) -> Self {
        let lines = buf.len() / 64;
        let pages = buf.pages();
        PageBench {
            buf,
            map: (0..lines).collect(),
            stride: 64,
            pages,
            layout: Layout::Dense,
            rng: SplitMix64::new(seed),
            policy: crate::cache::latency_policy(),
        }
    }

    pub fn layout(&self) -> Layout {
        self.layout
    }

    pub fn buffer(&self) -> &Buffer {
        &self.buf
    }

    /// Use only these stride-sized pages of the buffer (e.g. the 2 MiB
    /// pages the TLB check passed), in this order.
    pub fn use_pages(&mut self, pages: Vec<usize>) {
        let n = self.buf.len() / self.stride;
        self.map = pages.into_iter().filter(|&p| p < n).collect();
    }

    /// Pages this bench can visit.
    pub fn max_pages(&self) -> usize {
        self.map.len()
    }

    /// ns per access of a random chase visiting one line in each of
    /// `pages` pages.
    pub fn point(&mut self, pages: usize) -> Result<RawPoint, ProbeError> {
        if pages == 0 || pages > self.max_pages() {
            return Err(ProbeError::InvalidInput(format!(
                "{pages} pages: this buffer holds {}",
                self.max_pages()
            )));
        }
        let perm = shuffled(pages, &mut self.rng);
        let stride = self.stride;
        let sizes = self.pages;
        let map = &self.map;
        let start = match self.layout {
            // Logical page j keeps its line pattern (slot_offset) but lives
            // in physical page map[j].
            Layout::Spread => link_seq(
                &self.buf,
                perm.iter().map(|&j| {
                    let j = j as usize;
                    slot_offset(j, stride, sizes) - j * stride + map[j] * stride
                }),
            )?,
            Layout::Dense => link_seq(&self.buf, perm.iter().map(|&j| j as usize * 64))?,
        };
        // Several walks of warm-up: the TLBs and the page-walk caches must
        // reach their steady state, not only the data caches.
        // SAFETY: `start` is a slot of the chain just linked in `self.buf`.
        let est = unsafe { time_chain(start, pages * 4, 0, &self.policy) };
        Ok(to_point(pages as f64, &est, LOADS_PER_ITER))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::Backing;
    use std::collections::HashSet;

    const X86: PageSizes = PageSizes {
        base: 4096,
        huge: 2 << 20,
    };

    #[test]
    fn offsets_spread_over_sets() {
        // Huge-page baseline: address bits 6..16 (a 2048-set cache) of the
        // first 2048 pages are all distinct, for every base page size.
        for base in [4usize << 10, 16 << 10, 64 << 10, 256 << 10] {
            let p = PageSizes::for_base(base);
            let sets: HashSet<usize> = (0..2048).map(|j| (slot_offset(j, base, p) >> 6) & 2047).collect();
            assert_eq!(sets.len(), 2048, "{base}");
        }
        // The note's (j*64)%4096 would give only 64.
        let folded: HashSet<usize> = (0..2048usize)
            .map(|j| ((j * 4096 + (j * 64) % 4096) >> 6) & 2047)
            .collect();
        assert_eq!(folded.len(), 64);
        // The 4 KiB pattern is the one hwcal always used: (j + j/32) mod 64.
        for j in 0..5000 {
            assert_eq!(line_offset(j, 4096), ((j + (j >> 5)) & 63) * 64);
        }
        // The huge-page layout has the same low bits as the base-page one.
        for p in [X86, PageSizes::for_base(64 << 10)] {
            for j in 0..1000 {
                assert_eq!(
                    slot_offset(j, p.huge, p) % p.huge,
                    slot_offset(j, p.base, p) % p.huge
                );
            }
        }
    }

    #[test]
    fn page_chase_is_positive() {
        let base = crate::pages::base_page();
        let buf = Buffer::new(64 * base, Backing::Small).unwrap();
        let mut b = PageBench::new(buf, base, 1);
        b.policy.max_samples = 5;
        b.policy.enough_ns = Some(20_000.0);
        assert!(b.point(64).unwrap().y > 0.0);
        assert!(b.point(65).is_err());
        assert!(b.point(0).is_err());
    }

    #[test]
    fn dense_baseline_packs_lines() {
        let buf = Buffer::with_pages(4096, Backing::Small, X86).unwrap();
        let mut b = PageBench::dense(buf, 2);
        b.policy.max_samples = 5;
        b.policy.enough_ns = Some(20_000.0);
        assert_eq!(b.max_pages(), 64);
        assert_eq!(b.layout(), Layout::Dense);
        assert!(b.point(64).unwrap().y > 0.0);
        assert!(b.point(65).is_err());
    }

    /// Frames of a scattered buffer are not in virtual order (readable
    /// only as root: unprivileged pagemap reads give zero frame numbers,
    /// and then there is nothing to check).
    #[test]
    fn scattered_buffer_breaks_contiguous_runs() {
        use std::io::{Read, Seek, SeekFrom};
        let n = 512;
        let base = crate::pages::base_page();
        let b = Buffer::new_scattered(n * base, 7).unwrap();
        let Ok(mut f) = std::fs::File::open("/proc/self/pagemap") else {
            return;
        };
        let mut pfn = Vec::new();
        for k in 0..n {
            let va = b.as_ptr() as u64 + (k * base) as u64;
            let mut e = [0u8; 8];
            if f.seek(SeekFrom::Start(va / base as u64 * 8)).is_err() || f.read_exact(&mut e).is_err() {
                return;
            }
            let v = u64::from_le_bytes(e);
            pfn.push(v & ((1 << 55) - 1));
        }
        if pfn.iter().all(|&p| p == 0) {
            eprintln!("pagemap gives no frame numbers (not root): nothing to check");
            return;
        }
        let adjacent = pfn.windows(2).filter(|w| w[1] == w[0] + 1).count();
        assert!(
            adjacent < n / 8,
            "{adjacent} of {n} neighbouring pages are physically adjacent"
        );
    }
}
