//! The measurements a probe's plan is made of, and the seam between a plan
//! and what it runs on: a chase over a buffer at a size and a page
//! placement, a dependent pair, k parallel chains, a flush granule, a
//! page walk, the clock the plan budgets its time by. hyperfine's
//! `Executor` runs one command and its mock lets the real warm-up, runs
//! and outlier logic run in tests; here [`Kernels`](crate::Kernels) runs
//! the probes' kernels on this machine and the simulator (`hwcal-sim`) computes each
//! point from a model, so the adaptive plans — the cache sweep, its
//! refinement, repair, retries and extension, the idle-gap chase, the
//! line tests, the chains, the TLB sweep and its refinement, the memory
//! section's chases — run unchanged on both.

use crate::Result;
use hwcal_model::{RawCurve, RawPoint};
use hwcal_probes::mem::{RunTiming, ThreadRun};
use hwcal_probes::pages::PageSizes;
use hwcal_probes::tlb::Layout;

/// A chase buffer: the points the cache plan measures on it.
pub trait ChasePoints {
    /// The largest working set this buffer holds (bytes).
    fn capacity(&self) -> usize;
    /// ns per load of a random chase over `bytes` (whole lines) of the
    /// buffer from logical offset `at` (another region: on 4 KiB pages
    /// another draw of page colours), with `gap_adds` dependent adds after
    /// each load; `fine`: the idle-gap chase's finer stopping rule.
    fn chase(&mut self, at: usize, bytes: usize, gap_adds: u32, fine: bool) -> Result<RawPoint>;
    /// ns per load of one lap of a random chase over the first `bytes` of
    /// the buffer, timed right after a walk over `scrub` bytes elsewhere in
    /// it has pushed the chase out of the levels smaller than the scrub
    /// (`hwcal_probes::cache::ChaseBench::cold_point`).
    fn cold(&mut self, bytes: usize, scrub: usize) -> Result<RawPoint>;
    /// The line-size test's dependent pairs: `primaries` visits of one per
    /// `block` bytes, the second load `d` bytes from the first.
    fn pair(&mut self, primaries: usize, d: i64, block: usize) -> Result<RawPoint>;
    /// `chains` independent chases over `bytes`: ns per load, all together.
    fn parallel(&mut self, bytes: usize, chains: usize) -> Result<RawPoint>;
    /// The worst TLB ratio of the first `huge_pages` huge pages (over 1.3:
    /// the TLB sees base pages there).
    fn head_tlb_ratio(&mut self, huge_pages: usize) -> Result<f64>;
}

/// A pool of base pages for the eviction test of a physically indexed
/// level (`hwcal_probes::sets`): its ways and page colours by timing.
pub trait SetPoints {
    /// Pages in the pool.
    fn pages(&self) -> usize;
    /// `rounds` rounds of the test: ns per load of a chase over page
    /// `target`'s lines right after they were loaded and then every line of
    /// `set`'s pages four times (slow where the set evicted them).
    fn evict(&mut self, target: usize, set: &[usize], rounds: usize) -> Result<Vec<f64>>;
}

/// A chase buffer with what its allocation found.
pub struct ChaseBuffer {
    pub points: Box<dyn ChasePoints>,
    /// Share of the buffer `smaps` reports as huge pages.
    pub huge_fraction: f64,
    /// The TLB sees huge pages in the buffer's head (where every size up
    /// to 16 MiB lives).
    pub head_huge: bool,
    /// ... and everywhere it checked.
    pub all_huge: bool,
}

/// One of the TLB probe's benches: a chase visiting one line per page (or
/// as many lines packed densely).
pub trait PagePoints {
    /// ns per access over `pages` pages.
    fn point(&mut self, pages: usize) -> Result<RawPoint>;
    /// Pages it can visit.
    fn max_pages(&self) -> usize;
    /// One line per page, or the dense baseline.
    fn layout(&self) -> Layout;
}

/// The TLB probe's benches for its base-page sweep.
pub struct TlbBenches {
    /// One line per base page, frames scattered.
    pub test: Box<dyn PagePoints>,
    /// Share of the test buffer in huge pages (smaps).
    pub test_huge_fraction: f64,
    /// The same lines in huge pages the TLB sees, where it sees them.
    pub huge_baseline: Option<Box<dyn PagePoints>>,
    /// Share of the baseline buffer in huge pages (0 where not seen).
    pub baseline_huge_fraction: f64,
    /// As many lines packed densely (always).
    pub dense: Box<dyn PagePoints>,
}

/// The memory section's buffers: the chase ring (its lines in one random
/// cycle, and window by window) and a stream buffer per thread.
pub trait MemPoints {
    /// The chase's pages: (page bytes, huge pages the TLB sees, the share
    /// of the buffers `smaps` reports as huge pages).
    fn pages(&self) -> (u64, bool, f64);
    /// Seconds the buffers took to prepare.
    fn setup_s(&self) -> f64;
    /// NUMA nodes with memory.
    fn numa_nodes(&self) -> u32;
    /// The chase around the ring for `timing`, one thread (`windowed`: the
    /// same lines window by window, which hardly walks the page tables;
    /// `None` where the ring has no such cycle).
    fn chase(&mut self, windowed: bool, timing: &RunTiming) -> Result<Option<Vec<ThreadRun>>>;
    /// `k` independent chases around the ring at once, one thread.
    fn chains(&mut self, k: usize, timing: &RunTiming) -> Result<Vec<ThreadRun>>;
    /// A sequential read of its own stream buffer by each of `threads`
    /// threads; `None` where streams are not measured (a simulated
    /// machine models no bandwidth).
    fn read(&mut self, threads: usize, timing: &RunTiming) -> Result<Option<Vec<ThreadRun>>>;
}

/// What the plans run on: see the module documentation.
pub trait Hardware {
    /// The CPUs of `cpus` a thread can really be pinned to.
    fn pinnable(&self, cpus: &[usize]) -> Vec<usize>;
    /// The memory section's buffers: a stream buffer of `stream` bytes per
    /// CPU of `order`, and a chase ring of `chase` bytes on the first.
    fn mem_buffers(&self, order: &[Option<usize>], sizes: (usize, usize)) -> Result<Box<dyn MemPoints>>;
    /// The base page and the huge page.
    fn page_sizes(&self) -> PageSizes;
    /// Memory available to a buffer now (bytes).
    fn available_memory(&self) -> u64;
    /// Seconds on a monotonic clock (budgets are differences of it).
    fn now_s(&self) -> f64;
    /// Wait `ms` milliseconds (for interference to pass).
    fn pause(&self, ms: u64);
    /// Spin until the core's clock is stable.
    fn warm_up(&self);
    /// Start watching how busy the other CPUs are.
    fn watch(&self, own_cpu: Option<usize>) -> Box<dyn Watching>;
    /// A chase buffer of `bytes` in huge pages where the TLB sees them.
    fn chase_buffer(&self, bytes: usize) -> Result<ChaseBuffer>;
    /// The flush-granule curve with the targets first pushed out of the
    /// levels below by a walk over `evict` bytes; `None` where the CPU
    /// cannot flush a line from user space.
    fn flush_granule(&self, evict: usize, seed: u64) -> Result<Option<Vec<RawPoint>>>;
    /// The TLB probe's base-page benches for the buffers of `lay` (the
    /// huge-page baseline only where the TLB sees its huge pages).
    fn tlb_benches(&self, lay: &TlbLayout) -> Result<TlbBenches>;
    /// The base-page test bench again over a second buffer of `pages`
    /// pages, frames scattered as the first's but other ones.
    fn tlb_retest(&self, pages: usize, sizes: PageSizes) -> Result<Box<dyn PagePoints>>;
    /// A pool of `pages` base pages of `page` bytes for the eviction test,
    /// lines of `line` bytes.
    fn set_pool(&self, pages: usize, page: usize, line: usize) -> Result<Box<dyn SetPoints>>;
    /// The 2 MiB-page test bench over up to `huge_pages` pages, and the
    /// share of its buffer in huge pages the TLB sees (`None` where not
    /// obtained).
    fn huge_page_test(&self, huge_pages: usize) -> Result<(Option<Box<dyn PagePoints>>, f64)>;
}

/// A watch on the other CPUs: its figure as a raw curve.
pub trait Watching {
    fn curve(&self, id: &str) -> RawCurve;
}

/// The sizes of the TLB probe's buffers for a page size: a pure function of
/// the plan, the memory available and the page sizes, so that 4, 16 and
/// 64 KiB base pages can be checked against each other without such a
/// kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TlbLayout {
    pub pages: PageSizes,
    /// Base pages the base-page test visits at most.
    pub n: usize,
    /// Bytes of the scattered base-page test buffer (n base pages).
    pub small_len: usize,
    /// Bytes of the dense baseline (n lines).
    pub dense_len: usize,
    /// Huge pages the huge-page baseline needs, and the bytes allocated
    /// for it (a quarter more, for pages failing the TLB check).
    pub baseline_need: usize,
    pub baseline_len: usize,
    /// Huge pages the huge-page test may visit (below 16: skipped).
    pub huge_pages: usize,
}
