//! A [`Model`]'s measurement points: the simulated side of the runner's
//! [`Hardware`] seam. The runner's plans — the cache sweep with its
//! refinement, repair, retries and extension, the colour placements, the
//! idle-gap chase, the line tests, the flush granule, the chains, the TLB
//! sweep and its refinement, the `mem` section's chase, windowed chase and
//! chains — run unchanged and ask for points; each point
//! is computed from the model (`curves`: which level serves each line,
//! what the TLBs miss) under the harness's stopping rule and the model's
//! noise. Nothing here plans.
//!
//! A buffer draws its physical frames once: every point over a prefix of
//! it sees the same frames under the same lines (page colours nest from
//! one size to the next, as on one real buffer), a point at another
//! offset another draw. Time is virtual: each point advances a clock by
//! what its samples would take on the real machine, so the plans' budgets
//! and the model's drifting memory see the time pass.

use crate::curves::{chase, chase_ns, cold_ns, samples, tlb_miss, Sampling};
use crate::model::{Model, Pages};
use hwcal_model::{MachineInfo, RawCurve, RawPoint};
use hwcal_probes::mem::{RunTiming, Slice, ThreadRun};
use hwcal_probes::pages::PageSizes;
use hwcal_probes::tlb::Layout;
use hwcal_runner::{ChaseBuffer, ChasePoints, Hardware, MemPoints, PagePoints, TlbBenches, Watching};
use hwcal_stats::SplitMix64;
use std::cell::RefCell;
use std::rc::Rc;

/// The offsets of the line tests and the flush test (bytes): the probes'.
const OFFSETS: [usize; 6] = hwcal_probes::flush::OFFSETS;

/// The virtual clock and the draws every point shares.
#[derive(Debug)]
struct State {
    rng: SplitMix64,
    /// Seconds since the machine started measuring.
    clock: f64,
    /// Buffers allocated so far (each draws its own frames).
    buffers: u64,
}

/// A simulated machine's points (see the module documentation).
#[derive(Debug, Clone)]
pub struct SimHardware {
    model: Rc<Model>,
    available: u64,
    x86: bool,
    state: Rc<RefCell<State>>,
}

impl SimHardware {
    /// The points of `model` described as `info` (its available memory and
    /// architecture), its draws seeded by `seed`.
    pub fn new(model: &Model, info: &MachineInfo, seed: u64) -> Self {
        SimHardware {
            model: Rc::new(model.clone()),
            available: info.memory_available_bytes,
            x86: info.arch == "x86_64",
            state: Rc::new(RefCell::new(State {
                rng: SplitMix64::new(seed),
                clock: 0.0,
                buffers: 0,
            })),
        }
    }

    /// The model as it is now: its memory latency where the clock has
    /// brought it (a neighbour's traffic: `guest::memory_ns_at`).
    fn model_now(&self) -> Model {
        let t = self.state.borrow().clock;
        Model {
            memory_ns: crate::guest::memory_ns_at(&self.model, t),
            ..(*self.model).clone()
        }
    }

    /// The same, its clock at `t` seconds (where the run's earlier probes
    /// left it).
    pub fn starting_at(self, t: f64) -> Self {
        self.state.borrow_mut().clock = t;
        self
    }

    /// A seed for a new buffer's frames.
    fn new_buffer(&self) -> u64 {
        let mut st = self.state.borrow_mut();
        st.buffers += 1;
        st.rng.next_u64()
    }

    /// One point: `at` a sample's noise-free time (busy sibling, guest
    /// share, the pages' draw), sampled under `sampling` on the frames of
    /// `placement`; the clock advances by the point's time, `lines` loads
    /// a lap.
    fn point(
        &self,
        x: f64,
        (sampling, core_ns, placement): (Sampling, f64, Option<u64>),
        lines: f64,
        at: impl FnMut(bool, f64, &mut SplitMix64) -> f64,
    ) -> RawPoint {
        let mut st = self.state.borrow_mut();
        let mut p = samples(&self.model, (sampling, core_ns), placement, &mut st.rng, at);
        p.x = x;
        st.clock += point_seconds(&p, lines, sampling.block_s);
        p
    }
}

/// What a point takes on the real machine (`probes::cache::time_chain`):
/// linking the chain (a store per line; stores overlap, so a few ns
/// each), a warm-up walk of one lap capped at 2^17 loads, then its
/// samples, each a block of `block_s`.
fn point_seconds(p: &RawPoint, lines: f64, block_s: f64) -> f64 {
    let warm = lines.min(hwcal_probes::cache::WARM_CAP_LOADS as f64) * p.y * 1e-9;
    let link = lines * p.y.min(5.0) * 1e-9;
    p.samples.len() as f64 * block_s + warm + link
}

/// The cache probe's sampling for a chase over `bytes`: its blocks are
/// 2 ms past 16 MiB (`probes::cache::LONG_BLOCK_FROM`), else 100 µs.
fn chase_sampling(s: Sampling, bytes: f64) -> Sampling {
    if bytes > hwcal_probes::cache::LONG_BLOCK_FROM as f64 {
        s.lasting(2e-3)
    } else {
        s
    }
}

impl Hardware for SimHardware {
    fn pinnable(&self, cpus: &[usize]) -> Vec<usize> {
        cpus.to_vec()
    }
    fn mem_buffers(
        &self,
        order: &[Option<usize>],
        (_, chase): (usize, usize),
    ) -> hwcal_runner::Result<Box<dyn MemPoints>> {
        // Linking the ring's two cycles: a store per line, overlapped.
        let setup_s = chase as f64 / 64.0 * 5e-9;
        self.pause((setup_s * 1e3) as u64);
        Ok(Box::new(SimMem {
            hw: self.clone(),
            bytes: chase as f64,
            frames: self.new_buffer(),
            cpu: order.first().copied().flatten(),
            setup_s,
        }))
    }
    fn page_sizes(&self) -> PageSizes {
        PageSizes::for_base(self.model.page as usize)
    }
    fn available_memory(&self) -> u64 {
        self.available
    }
    fn now_s(&self) -> f64 {
        self.state.borrow().clock
    }
    fn pause(&self, ms: u64) {
        self.state.borrow_mut().clock += ms as f64 * 1e-3;
    }
    fn warm_up(&self) {
        self.pause(300);
    }
    fn watch(&self, _own_cpu: Option<usize>) -> Box<dyn Watching> {
        Box::new(Busy(self.model.noise.busy))
    }

    fn chase_buffer(&self, bytes: usize) -> hwcal_runner::Result<ChaseBuffer> {
        let huge = self.model.pages == Pages::Huge;
        let frames = self.new_buffer();
        // Huge pages the TLB sees: the bench keeps the pages that passed,
        // the buffer's length in whole huge pages; base pages: all of it.
        let h = self.model.huge_page() as usize;
        let capacity = match bytes / h * h {
            whole if huge && whole >= bytes * 2 / 5 => whole,
            _ => bytes,
        };
        Ok(ChaseBuffer {
            points: Box::new(SimChase {
                hw: self.clone(),
                capacity,
                frames,
            }),
            huge_fraction: if huge { 1.0 } else { 0.0 },
            head_huge: huge,
            all_huge: huge,
        })
    }

    /// The targets warmed, pushed out of the levels below by a walk over
    /// `evict` bytes, one target's line flushed, then the word `d` past its
    /// base loaded: from memory while `d` is inside the flushed line, from
    /// the level otherwise. Negative x: the all-hits reference. A small
    /// buffer: no TLB misses. x86 only, as `clflush` is.
    fn flush_granule(&self, evict: usize, _seed: u64) -> hwcal_runner::Result<Option<Vec<RawPoint>>> {
        if !self.x86 {
            return Ok(None);
        }
        let m = self.model_now();
        let line = m.levels.first().map_or(64.0, |l| l.line as f64);
        // L1's targets are simply warm: a chase that small lives in L1.
        let evict = (evict as f64).max(4096.0);
        let frames = self.new_buffer();
        let hit = |busy: bool, share: f64, r: &mut SplitMix64| chase_ns(&m, evict, false, busy, share, r);
        let fixed = (Sampling::fixed(3), 0.0, Some(frames));
        let mut points = vec![self.point(-(OFFSETS[0] as f64), fixed, 64.0, hit)];
        for d in OFFSETS.map(|d| d as f64) {
            points.push(self.point(d, fixed, 64.0, |busy, share, r| {
                if d < line {
                    m.memory_ns
                } else {
                    hit(busy, share, r)
                }
            }));
        }
        Ok(Some(points))
    }

    fn tlb_benches(&self, lay: &hwcal_runner::TlbLayout) -> hwcal_runner::Result<TlbBenches> {
        // The probe maps its test buffer with base pages whatever the
        // machine's huge-page setting; the huge-page baseline and the
        // 2 MiB TLB are not modelled, so the dense baseline leads.
        let bench = |walks: bool| SimPages {
            hw: self.clone(),
            max: lay.n,
            walks,
            frames: self.new_buffer(),
        };
        Ok(TlbBenches {
            test: Box::new(bench(true)),
            test_huge_fraction: 0.0,
            huge_baseline: None,
            baseline_huge_fraction: 0.0,
            dense: Box::new(bench(false)),
        })
    }

    fn tlb_retest(
        &self,
        pages: usize,
        _sizes: hwcal_probes::pages::PageSizes,
    ) -> hwcal_runner::Result<Box<dyn PagePoints>> {
        Ok(Box::new(SimPages {
            hw: self.clone(),
            max: pages,
            walks: true,
            frames: self.new_buffer(),
        }))
    }

    fn set_pool(
        &self,
        pages: usize,
        _page: usize,
        _line: usize,
    ) -> hwcal_runner::Result<Box<dyn hwcal_runner::SetPoints>> {
        let seed = self.new_buffer();
        Ok(Box::new(SimSets {
            pool: crate::sets::SimPool::new(&self.model, pages, seed),
            hw: self.clone(),
        }))
    }

    fn huge_page_test(&self, _huge_pages: usize) -> hwcal_runner::Result<(Option<Box<dyn PagePoints>>, f64)> {
        Ok((None, 0.0))
    }
}

/// The other CPUs' busy share: the model's.
struct Busy(f64);

impl Watching for Busy {
    fn curve(&self, id: &str) -> RawCurve {
        crate::curves::fact(id, "busy fraction of the other CPUs", &[(0.0, self.0)])
    }
}

/// A simulated page pool for the eviction test.
struct SimSets {
    pool: crate::sets::SimPool,
    hw: SimHardware,
}

impl hwcal_runner::SetPoints for SimSets {
    fn pages(&self) -> usize {
        self.pool.pages
    }

    /// Each round: the set's lines loaded [`hwcal_probes::sets::PASSES`]
    /// times (independent loads that overlap: about a ns each, 0.4 ns from
    /// L2 and 1.4 ns from L3 on the Zen 5 guest), then the target's chase.
    fn evict(&mut self, target: usize, set: &[usize], rounds: usize) -> hwcal_runner::Result<Vec<f64>> {
        if target >= self.pool.pages || set.iter().any(|&q| q >= self.pool.pages || q == target) {
            return Err(hwcal_probes::ProbeError::InvalidInput(
                "an eviction test names a page outside the pool or the target itself".into(),
            )
            .into());
        }
        let m = self.hw.model_now();
        let lines = ((m.page / 64) as f64).min(hwcal_probes::sets::SPAN as f64);
        let mut st = self.hw.state.borrow_mut();
        let out: Vec<f64> = (0..rounds.max(1))
            .map(|_| {
                let busy = crate::curves::unit(&mut st.rng) < m.noise.busy;
                let ns = crate::sets::noisy(self.pool.ns(&m, target, set, busy), &m, &mut st.rng);
                let passes = hwcal_probes::sets::PASSES as f64;
                st.clock += (set.len() as f64 * lines * passes + lines * ns) * 1e-9;
                ns
            })
            .collect();
        Ok(out)
    }
}

/// A simulated chase buffer.
struct SimChase {
    hw: SimHardware,
    capacity: usize,
    /// The seed of its frames.
    frames: u64,
}

impl SimChase {
    /// The frames under the region from `at`.
    fn placement(&self, at: usize) -> u64 {
        self.frames ^ (at as u64).wrapping_mul(0xA24B_AED4_963E_E407)
    }
}

impl ChasePoints for SimChase {
    fn capacity(&self) -> usize {
        self.capacity
    }

    fn chase(
        &mut self,
        at: usize,
        bytes: usize,
        gap_adds: u32,
        fine: bool,
    ) -> hwcal_runner::Result<RawPoint> {
        let size = (bytes / 64 * 64).clamp(64, self.capacity / 64 * 64);
        let at = (at / 64 * 64).min(self.capacity / 64 * 64 - size);
        let m = self.hw.model_now();
        let sampling = chase_sampling(
            if fine { Sampling::gap() } else { Sampling::sweep() },
            size as f64,
        );
        // The gap's adds are core cycles, which the memory system's jitter
        // does not stretch.
        let core_ns = gap_adds as f64 * 1000.0 / m.mhz;
        let x = size as f64;
        Ok(self.hw.point(
            x,
            (sampling, core_ns, Some(self.placement(at))),
            x / 64.0,
            |busy, share, r| chase_ns(&m, x, true, busy, share, r),
        ))
    }

    /// One lap after a scrub placed page-aligned after the chase, as the
    /// kernel places it (its frames drawn apart from the chase's).
    fn cold(&mut self, bytes: usize, scrub: usize) -> hwcal_runner::Result<RawPoint> {
        let size = (bytes / 64 * 64).max(64);
        let scrub = scrub / 64 * 64;
        if size.div_ceil(4096) * 4096 + scrub > self.capacity {
            return Err(hwcal_probes::ProbeError::InvalidInput(format!(
                "a cold lap over {size} B after a {scrub} B scrub does not fit the {} B buffer",
                self.capacity
            ))
            .into());
        }
        let m = self.hw.model_now();
        let x = size as f64;
        Ok(self.hw.point(
            x,
            (chase_sampling(Sampling::sweep(), x), 0.0, Some(self.placement(0))),
            x / 64.0,
            |busy, share, r| cold_ns(&m, (x, scrub as f64), busy, share, r),
        ))
    }

    /// Each visit loads a primary slot, then dependent on it the word `d`
    /// away. The second load hits the primary's line while |d| is under
    /// the line; past it, it pays the same miss again — unless a
    /// prefetcher brought that line: L1's next-line prefetcher the line
    /// after (forward only, and late: it hides most of the miss, not all
    /// of it), an L2 neighbour-line prefetcher the line either side of a
    /// memory miss (then L2 serves it). The pair layout uses 3/8 of the
    /// sets, so its lines fill a level 8/3 times faster than a dense
    /// chase's; on base pages the walk over its blocks misses the TLB.
    fn pair(&mut self, primaries: usize, d: i64, block: usize) -> hwcal_runner::Result<RawPoint> {
        if primaries * block > self.capacity || d == 0 {
            return Err(hwcal_probes::ProbeError::InvalidInput(format!(
                "line-size test: {primaries} visits of {block} B (d = {d}) do not fit {} B",
                self.capacity
            ))
            .into());
        }
        let m = self.hw.model_now();
        let line = m.levels.first().map_or(64.0, |l| l.line as f64);
        let l1_ns = m.levels.first().map_or(1.0, |l| l.ns);
        let l2_ns = m.levels.get(1).map_or(l1_ns, |l| l.ns);
        let (n, dist, fwd) = (primaries as f64, d.unsigned_abs() as f64, d > 0);
        let walks = if m.pages == Pages::Base {
            let pages = n * block as f64 / m.page as f64;
            m.tlb_penalty(&m.chase_tlb_miss(pages)) + crate::guest::walk_extra_ns_at(&m, pages, 2.0 * n)
        } else {
            0.0
        };
        let first = |busy: bool, share: f64, lines: f64, r: &mut SplitMix64| {
            let (ns, memory) = chase(&m, n * lines * 64.0 * 8.0 / 3.0, false, (busy, share), r);
            (ns + walks, memory)
        };
        let placement = Some(self.frames ^ 0x9a1 ^ primaries as u64);
        Ok(self.hw.point(
            d as f64,
            (Sampling::sweep(), 0.0, placement),
            2.0 * n,
            |busy, share, r| {
                if dist < line {
                    return first(busy, share, 1.0, r).0 + l1_ns;
                }
                let (one, memory) = first(busy, share, 2.0, r);
                let neighbour = dist < 2.0 * line;
                let second = if neighbour && m.prefetch.neighbour {
                    // The neighbour comes with each miss to memory.
                    memory * l2_ns + (1.0 - memory) * one
                } else if neighbour && fwd && m.prefetch.next_line {
                    l1_ns + 0.3 * (one - l1_ns)
                } else {
                    one
                };
                one + second
            },
        ))
    }

    /// k independent chases over a footprint: k misses in flight, as many
    /// as the core's fill buffers hold, so a load costs the chase's latency
    /// over min(k, MLP).
    fn parallel(&mut self, bytes: usize, chains: usize) -> hwcal_runner::Result<RawPoint> {
        let size = (bytes / 64 * 64).min(self.capacity / 64 * 64) as f64;
        let m = self.hw.model_now();
        let k = chains as f64;
        Ok(self.hw.point(
            k,
            (
                chase_sampling(Sampling::sweep(), size),
                0.0,
                Some(self.placement(0)),
            ),
            size / 64.0,
            |busy, share, r| chase_ns(&m, size, true, busy, share, r) / k.min(m.mlp),
        ))
    }

    fn head_tlb_ratio(&mut self, _huge_pages: usize) -> hwcal_runner::Result<f64> {
        Ok(if self.hw.model.pages == Pages::Huge {
            1.0
        } else {
            2.5
        })
    }
}

/// A simulated TLB bench: one line per base page (`walks`), or as many
/// lines packed densely.
struct SimPages {
    hw: SimHardware,
    max: usize,
    walks: bool,
    frames: u64,
}

impl PagePoints for SimPages {
    fn point(&mut self, pages: usize) -> hwcal_runner::Result<RawPoint> {
        if pages == 0 || pages > self.max {
            return Err(hwcal_probes::ProbeError::InvalidInput(format!(
                "{pages} pages: this buffer holds {}",
                self.max
            ))
            .into());
        }
        let m = self.hw.model_now();
        let (n, walks) = (pages as f64, self.walks);
        Ok(self.hw.point(
            n,
            (Sampling::sweep(), 0.0, Some(self.frames)),
            4.0 * n,
            |busy, share, r| {
                // The lines alone: a dense buffer of `pages` lines.
                let mut ns = chase_ns(&m, n * 64.0, false, busy, share, r);
                if walks {
                    ns += m.tlb_penalty(&tlb_miss(&m, n, r)) + crate::guest::walk_extra_ns_at(&m, n, n);
                }
                ns
            },
        ))
    }
    fn max_pages(&self) -> usize {
        self.max
    }
    fn layout(&self) -> Layout {
        if self.walks {
            Layout::Spread
        } else {
            Layout::Dense
        }
    }
}

/// The memory section's ring, simulated: slices of a chase over the whole
/// ring (its cache misses and, unless windowed, its page walks), or of k
/// chains; streams are not modelled.
struct SimMem {
    hw: SimHardware,
    bytes: f64,
    frames: u64,
    cpu: Option<usize>,
    setup_s: f64,
}

impl SimMem {
    /// One thread's slices of `timing`, each a sample of `at`'s ns per load.
    fn run(
        &self,
        (work, timing): (&'static str, &RunTiming),
        at: impl FnMut(bool, f64, &mut SplitMix64) -> f64,
    ) -> Vec<ThreadRun> {
        let n = (timing.duration_ns / timing.slice_ns).round().max(1.0) as usize;
        let p = self.hw.point(
            self.bytes,
            (
                Sampling::fixed(n).lasting(timing.slice_ns * 1e-9),
                0.0,
                Some(self.frames),
            ),
            self.bytes / 64.0,
            at,
        );
        self.hw.pause(timing.warm_up_ms);
        let mhz = self.hw.model.mhz;
        let slices = p
            .samples
            .iter()
            .map(|&ns| Slice {
                ops: (timing.slice_ns / ns) as u64,
                ns: timing.slice_ns,
                ticks: timing.slice_ns * mhz / 1e3,
                mhz,
                cpu_ns: timing.slice_ns,
            })
            .collect();
        vec![ThreadRun {
            cpu: self.cpu,
            work,
            slices,
            preemptions: Some(0),
        }]
    }
}

impl MemPoints for SimMem {
    fn pages(&self) -> (u64, bool, f64) {
        let m = &self.hw.model;
        match m.pages {
            Pages::Huge => (m.huge_page(), true, 1.0),
            Pages::Base => (m.page, false, 0.0),
        }
    }
    fn setup_s(&self) -> f64 {
        self.setup_s
    }
    fn numa_nodes(&self) -> u32 {
        1
    }
    fn chase(&mut self, windowed: bool, timing: &RunTiming) -> hwcal_runner::Result<Option<Vec<ThreadRun>>> {
        let (m, x) = (self.hw.model_now(), self.bytes);
        Ok(Some(self.run(("chase", timing), |busy, share, r| {
            chase(&m, x, !windowed, (busy, share), r).0
        })))
    }
    fn chains(&mut self, k: usize, timing: &RunTiming) -> hwcal_runner::Result<Vec<ThreadRun>> {
        let (m, x) = (self.hw.model_now(), self.bytes);
        Ok(self.run(("chains", timing), |busy, share, r| {
            chase_ns(&m, x, true, busy, share, r) / (k as f64).min(m.mlp)
        }))
    }
    fn read(&mut self, _threads: usize, _timing: &RunTiming) -> hwcal_runner::Result<Option<Vec<ThreadRun>>> {
        Ok(None)
    }
}
