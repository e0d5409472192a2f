//! This machine behind the measurement-point seam ([`crate::points`]):
//! each point runs the probes' kernels — the chase bench, the TLB's page
//! benches, the flush granule, the memory section's prepared buffers —
//! through the harness.

use crate::points::{
    ChaseBuffer, ChasePoints, Hardware, MemPoints, PagePoints, SetPoints, TlbBenches, TlbLayout, Watching,
};
use crate::{Context, Result};
use hwcal_harness::{clockref, Timer};
use hwcal_model::{RawCurve, RawPoint};
use hwcal_probes::buffer::{Backing, Buffer};
use hwcal_probes::cache::{huge_buffer, ChaseBench};
use hwcal_probes::pages::PageSizes;
use hwcal_probes::tlb::{Layout, PageBench};

impl Watching for hwcal_probes::neighbours::Watch {
    fn curve(&self, id: &str) -> RawCurve {
        hwcal_probes::neighbours::Watch::curve(self, id)
    }
}

/// This machine: the probes' kernels.
#[derive(Debug, Clone, Copy, Default)]
pub struct Kernels;

fn epoch() -> std::time::Instant {
    static E: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    *E.get_or_init(std::time::Instant::now)
}

impl ChasePoints for ChaseBench {
    fn capacity(&self) -> usize {
        ChaseBench::capacity(self)
    }
    fn chase(&mut self, at: usize, bytes: usize, gap_adds: u32, fine: bool) -> Result<RawPoint> {
        if !fine {
            return Ok(self.point_at(at, bytes, gap_adds)?);
        }
        let sweep = std::mem::replace(&mut self.policy, hwcal_probes::cache::gap_policy());
        let p = self.point_at(at, bytes, gap_adds);
        self.policy = sweep;
        Ok(p?)
    }
    fn cold(&mut self, bytes: usize, scrub: usize) -> Result<RawPoint> {
        Ok(self.cold_point(bytes, scrub)?)
    }
    fn pair(&mut self, primaries: usize, d: i64, block: usize) -> Result<RawPoint> {
        Ok(self.pair_point(primaries, d, block)?)
    }
    fn parallel(&mut self, bytes: usize, chains: usize) -> Result<RawPoint> {
        Ok(self.parallel_point(bytes, chains)?)
    }
    fn head_tlb_ratio(&mut self, huge_pages: usize) -> Result<f64> {
        Ok(ChaseBench::head_tlb_ratio(self, huge_pages)?)
    }
}

impl PagePoints for PageBench {
    fn point(&mut self, pages: usize) -> Result<RawPoint> {
        Ok(PageBench::point(self, pages)?)
    }
    fn max_pages(&self) -> usize {
        PageBench::max_pages(self)
    }
    fn layout(&self) -> Layout {
        PageBench::layout(self)
    }
}

/// The longest run of consecutive page indices in `clean` (sorted).
fn longest_run(clean: &[usize]) -> &[usize] {
    let mut best: &[usize] = &[];
    let mut i = 0;
    while i < clean.len() {
        let mut j = i + 1;
        while j < clean.len() && clean[j] == clean[j - 1] + 1 {
            j += 1;
        }
        if j - i > best.len() {
            best = &clean[i..j];
        }
        i = j;
    }
    best
}

impl Hardware for Kernels {
    fn pinnable(&self, cpus: &[usize]) -> Vec<usize> {
        crate::mem::short::pinnable(cpus)
    }
    fn mem_buffers(&self, order: &[Option<usize>], sizes: (usize, usize)) -> Result<Box<dyn MemPoints>> {
        crate::mem::short::kernel_buffers(order, sizes)
    }
    fn page_sizes(&self) -> PageSizes {
        PageSizes::system()
    }
    fn available_memory(&self) -> u64 {
        hwcal_probes::sysinfo::available_memory()
    }
    fn now_s(&self) -> f64 {
        epoch().elapsed().as_secs_f64()
    }
    fn pause(&self, ms: u64) {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
    fn warm_up(&self) {
        clockref::warm_up(Timer::get(), 300);
    }
    fn watch(&self, own_cpu: Option<usize>) -> Box<dyn Watching> {
        Box::new(hwcal_probes::neighbours::Watch::start(own_cpu))
    }

    fn chase_buffer(&self, bytes: usize) -> Result<ChaseBuffer> {
        // Huge pages keep TLB misses out of the curve; `huge_buffer` also
        // checks that the TLB really sees them (a hypervisor may back guest
        // memory with 4 KiB pages whatever the guest's smaps says) and
        // retries otherwise. Every 2 MiB page is checked; the head (where
        // every size up to 16 MiB lives) must pass or the buffer is
        // reallocated, and past it the bench uses only the pages that
        // passed (the caller allocates a quarter extra for that).
        let (buf, check) = huge_buffer(bytes, 4, 16 << 20, true).context("allocating the chase buffer")?;
        let huge = hwcal_probes::pages::huge_page();
        let mut bench = ChaseBench::new(buf, 0x5eed);
        if check.head_ok && check.clean.len() * huge >= bytes * 2 / 5 {
            bench.use_huge_pages(check.clean.clone());
        }
        Ok(ChaseBuffer {
            points: Box::new(bench),
            huge_fraction: check.smaps_fraction,
            head_huge: check.head_ok,
            all_huge: check.all_ok,
        })
    }

    fn flush_granule(&self, evict: usize, seed: u64) -> Result<Option<Vec<RawPoint>>> {
        use hwcal_probes::flush::{granule_curve, supported, FlushBench};
        if !supported() {
            return Ok(None);
        }
        let mut b = FlushBench::new(64, evict, seed)?;
        Ok(Some(granule_curve(&mut b, 3)?))
    }

    fn tlb_retest(&self, pages: usize, sizes: PageSizes) -> Result<Box<dyn PagePoints>> {
        let buf = Buffer::new_scattered_with(pages.max(1) * sizes.base, 0x2e7e57, sizes)
            .context("allocating the second base-page buffer")?;
        Ok(Box::new(PageBench::new(buf, sizes.base, 0x2e7)))
    }

    fn set_pool(&self, pages: usize, page: usize, line: usize) -> Result<Box<dyn SetPoints>> {
        let pool = hwcal_probes::sets::SetPool::new(pages, page, line, 0x5e75)
            .context("allocating the eviction test's page pool")?;
        Ok(Box::new(pool))
    }

    fn tlb_benches(&self, lay: &TlbLayout) -> Result<TlbBenches> {
        // Frames scattered: no run of contiguous pages a coalescing TLB
        // (AMD's PTE coalescing, Arm's contiguous bit) could fold into one
        // entry (see `Buffer::new_scattered`).
        let small = Buffer::new_scattered_with(lay.small_len, 0x5ca7, lay.pages)
            .context("allocating the base-page buffer")?;
        let test_huge_fraction = small.huge_fraction();
        let dense = PageBench::dense(
            Buffer::with_pages(lay.dense_len, Backing::Small, lay.pages)
                .context("allocating the dense baseline")?,
            0xd5e,
        );
        // The baseline must be free of TLB misses: huge pages the TLB
        // really sees. Every 2 MiB page is checked (a hypervisor may back
        // some with 4 KiB pages) and the baseline uses only those that
        // passed; each keeps its place in the line pattern, so the cache
        // behaviour is unchanged.
        let (n, need) = (lay.n, lay.baseline_need);
        let (base, check) =
            huge_buffer(lay.baseline_len, 4, 0, true).context("allocating the huge-page baseline")?;
        let base_ok = check.smaps_fraction >= 0.9 && check.clean.len() >= need;
        let (huge_baseline, baseline_huge_fraction) = if base_ok {
            let mut baseline = PageBench::new(base, lay.pages.base, 0xba5e);
            // Consecutive pages where possible (the 2 MiB TLB's sets are
            // indexed by page number; gaps crowd some of them).
            let run = longest_run(&check.clean);
            let huge: &[usize] = if run.len() >= need { run } else { &check.clean };
            let per = lay.pages.per_huge();
            baseline.use_pages((0..n).map(|j| huge[j / per] * per + j % per).collect());
            (
                Some(Box::new(baseline) as Box<dyn PagePoints>),
                check.smaps_fraction,
            )
        } else {
            (None, 0.0)
        };
        Ok(TlbBenches {
            test: Box::new(PageBench::new(small, lay.pages.base, 0x71b)),
            test_huge_fraction,
            huge_baseline,
            baseline_huge_fraction,
            dense: Box::new(dense),
        })
    }

    fn huge_page_test(&self, huge_pages: usize) -> Result<(Option<Box<dyn PagePoints>>, f64)> {
        let huge = self.page_sizes().huge;
        // Allocate a quarter more than needed and use only the 2 MiB pages
        // the TLB check passed: a hypervisor may back some of them with
        // 4 KiB pages, and a test through those would measure 4 KiB again.
        let (hb, hc) = huge_buffer(huge_pages * huge * 5 / 4, 1, usize::MAX, true)
            .context("allocating the 2 MiB-page buffer")?;
        // Prefer the longest run of consecutive clean pages: TLB sets are
        // indexed by page number, and gaps would crowd some sets early.
        let best = longest_run(&hc.clean);
        let pages: Vec<usize> = if best.len() >= 64 {
            best.to_vec()
        } else {
            hc.clean.clone()
        };
        let usable = pages.len().min(huge_pages);
        let f = if usable >= 16 { hc.smaps_fraction } else { 0.0 };
        if f < 0.9 {
            return Ok((None, f));
        }
        let mut htest = PageBench::new(hb, huge, 0x2b);
        htest.use_pages(pages[..usable].to_vec());
        Ok((Some(Box::new(htest)), f))
    }
}

impl SetPoints for hwcal_probes::sets::SetPool {
    fn pages(&self) -> usize {
        hwcal_probes::sets::SetPool::pages(self)
    }

    fn evict(&mut self, target: usize, set: &[usize], rounds: usize) -> Result<Vec<f64>> {
        Ok(hwcal_probes::sets::SetPool::evict(self, target, set, rounds)?)
    }
}
