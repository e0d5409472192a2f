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

use crate::buffer::{Buffer, HUGE_PAGE, SMALL_PAGE};
use crate::cache::{link_seq, shuffled, time_chain, to_point, LOADS_PER_ITER};
use crate::chase::Rng;
use crate::ProbeError;
use hwcal_harness::Policy;
use hwcal_model::RawPoint;

/// Byte offset of the line page `j` is touched at, within its 4 KiB frame.
pub fn line_offset(j: usize) -> usize {
    ((j + (j >> 5)) & 63) * 64
}

/// Address (offset in the buffer) of the one slot of page `j` when pages
/// are `page_bytes` apart. Inside a 2 MiB page the 4 KiB frame `j mod 512`
/// is used, so bits 6..20 of the offset equal those of the 4 KiB layout:
/// the 2 MiB test touches lines with exactly the cache-set pattern of the
/// 4 KiB baseline, which therefore serves as its baseline too.
pub fn slot_offset(j: usize, page_bytes: usize) -> usize {
    if page_bytes >= HUGE_PAGE {
        j * page_bytes + (j % (page_bytes / SMALL_PAGE)) * SMALL_PAGE + line_offset(j)
    } else {
        j * page_bytes + line_offset(j)
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
    /// Distance between touched pages: 4 KiB or 2 MiB.
    stride: usize,
    layout: Layout,
    rng: Rng,
    pub policy: Policy,
}

impl PageBench {
    /// `buf` must hold `max_pages * stride` bytes.
    pub fn new(buf: Buffer, stride: usize, seed: u64) -> Self {
        let map = (0..buf.len() / stride).collect();
        PageBench {
            buf,
            map,
            stride,
            layout: Layout::Spread,
            rng: Rng::new(seed),
            policy: crate::cache::latency_policy(),
        }
    }

    /// The dense baseline: `buf` must hold `max_pages * 64` bytes; point(n)
    /// chases n lines packed side by side, in random order.
    pub fn dense(buf: Buffer, seed: u64) -> Self {
        let lines = buf.len() / 64;
        PageBench {
            buf,
            map: (0..lines).collect(),
            stride: 64,
            layout: Layout::Dense,
            rng: Rng::new(seed),
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
        let map = &self.map;
        let start = match self.layout {
            // Logical page j keeps its line pattern (slot_offset) but lives
            // in physical page map[j].
            Layout::Spread => link_seq(
                &self.buf,
                perm.iter().map(|&j| {
                    let j = j as usize;
                    slot_offset(j, stride) - j * stride + map[j] * stride
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

    #[test]
    fn offsets_spread_over_sets() {
        // Huge-page baseline: address bits 6..16 (a 2048-set cache) of the
        // first 2048 pages are all distinct.
        let sets: HashSet<usize> = (0..2048).map(|j| (slot_offset(j, 4096) >> 6) & 2047).collect();
        assert_eq!(sets.len(), 2048);
        // The note's (j*64)%4096 would give only 64.
        let folded: HashSet<usize> = (0..2048usize)
            .map(|j| ((j * 4096 + (j * 64) % 4096) >> 6) & 2047)
            .collect();
        assert_eq!(folded.len(), 64);
        // The 2 MiB layout has the same low 21 bits as the 4 KiB one.
        for j in 0..1000 {
            assert_eq!(
                slot_offset(j, HUGE_PAGE) % HUGE_PAGE,
                slot_offset(j, 4096) % HUGE_PAGE
            );
        }
    }

    #[test]
    fn page_chase_is_positive() {
        let buf = Buffer::new(64 * 4096, Backing::Small).unwrap();
        let mut b = PageBench::new(buf, 4096, 1);
        b.policy.max_samples = 5;
        b.policy.enough_ns = Some(20_000.0);
        assert!(b.point(64).unwrap().y > 0.0);
        assert!(b.point(65).is_err());
        assert!(b.point(0).is_err());
    }

    #[test]
    fn dense_baseline_packs_lines() {
        let buf = Buffer::new(4096, Backing::Small).unwrap();
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
        let b = Buffer::new_scattered(n * 4096, 7).unwrap();
        let Ok(mut f) = std::fs::File::open("/proc/self/pagemap") else {
            return;
        };
        let mut pfn = Vec::new();
        for k in 0..n {
            let va = b.as_ptr() as u64 + (k * 4096) as u64;
            let mut e = [0u8; 8];
            if f.seek(SeekFrom::Start(va / 4096 * 8)).is_err() || f.read_exact(&mut e).is_err() {
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
