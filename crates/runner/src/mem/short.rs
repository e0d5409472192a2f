//! `hwcal run`'s short memory section (≈2–3 s): chase latency over 1 GiB
//! on huge pages (and the same buffer window by window, for the page
//! walks' share; again over 4 GiB where the 1 GiB chase still climbed
//! above the cache sweep, [`larger_chase`]), then read bandwidth with one
//! thread and with every CPU.
//! The plan asks its measurements of a [`MemPoints`]: the kernels on
//! prepared buffers here ([`kernel_buffers`]), or a simulated machine.

use crate::points::{Hardware, MemPoints};
use crate::probe::Progress;
use crate::Result;
use hwcal_analysis::mem_raw::noisy_note;
use hwcal_model::curve::MemSeries;
use hwcal_model::{Bandwidth, BandwidthPoint, MemResult, Note, Profile, RawCurve};
use hwcal_probes::buffer::Backing;
use hwcal_probes::mem::{self as mem_kernels, Job, Prep, Prepared, RunTiming, ThreadRun, Work};
use hwcal_probes::numa;

use super::job::*;

const SHORT_SIZE: usize = 256 << 20;

/// `hwcal run`'s memory section on `hw`: chase latency on a THP buffer,
/// then read bandwidth with one thread and with every pinnable CPU.
pub(super) fn run_short(
    hw: &dyn Hardware,
    (cpus, pinned): (&[usize], Option<usize>),
    progress: &dyn Progress,
    (sweep, p): (&Profile, &mut Profile),
) -> Result<()> {
    let start = hw.now_s();
    let cpus = hw.pinnable(cpus);
    let first = pinned.or_else(|| cpus.last().copied());
    // CPUs for the all-thread run: the pinned one first, then the others.
    let mut order: Vec<Option<usize>> = vec![first];
    order.extend(cpus.iter().rev().filter(|&&c| Some(c) != first).map(|&c| Some(c)));
    let n = order.len();
    let (stream, chase_size) = short_sizes(hw, n, CHASE_SIZE);
    if chase_size < CHASE_SIZE {
        // A smaller run that says so: the limits this process runs under
        // (a cgroup's memory limit, an rlimit) or the machine's free memory
        // left less room than the chase's usual gigabyte.
        let text = format!(
            "mem: the chase ran over {} instead of {}: the memory this process may use (the least of \
             MemAvailable, its cgroup's limit and its rlimits: {}) allows no more; memory latency is read \
             over the smaller working set",
            hwcal_model::human_bytes(chase_size as u64),
            hwcal_model::human_bytes(CHASE_SIZE as u64),
            hwcal_model::human_bytes(hw.available_memory())
        );
        progress.say(&text);
        p.notes.push(Note::warning("mem", "chase_smaller", text));
    }
    progress.say(&format!(
        "mem: preparing {} buffers of {}",
        n + 1,
        hwcal_model::human_bytes(stream as u64)
    ));
    let mut mem = hw.mem_buffers(&order, (stream, chase_size))?;
    let plan = RunTiming {
        duration_ns: 0.3e9,
        slice_ns: 10e6,
        warm_up_ms: 50,
    };
    let tpl = chase_template(chase_size, mem.as_ref());
    // The latency chases in short slices: memory latency is their fastest
    // (`analysis::consistency`), and only short slices have clean ones.
    let lat_plan = RunTiming {
        duration_ns: 0.4e9,
        slice_ns: LATENCY_SLICE_NS,
        ..plan
    };
    // The page walks' share, measured: the same buffer chased window by
    // window (`build_local_ring`), which misses the caches as often but
    // hardly ever walks the page tables. Only its raw curve is kept; the
    // consistency stage sets it beside the memory latency.
    let local_plan = RunTiming {
        duration_ns: 0.3e9,
        ..lat_plan
    };
    let runs = mem.chase(false, &lat_plan)?.unwrap_or_default();
    let local = mem.chase(true, &local_plan)?;
    let larger = larger_chase(
        hw,
        sweep,
        (chase_size, stream * n),
        tpl.use_hugepages,
        (&runs, local.as_deref()),
    );
    // The larger chase's buffer, with its own pages: THP may grant it
    // another share than the first.
    let mut bigger: Option<(usize, Box<dyn MemPoints>)> = match larger {
        Some(size) => {
            // The first chase stays in the profile, under its size, as the
            // measurement the larger one is judged against.
            let over = MemSeries::LatencyOver {
                mib: (chase_size >> 20) as u64,
            };
            record(&over, &runs, tpl.clone(), &mut p.raw);
            let text = format!(
                "mem: the chase over {} still read more than 5% above the cache sweep over half of it (a level the \
                 sweep did not resolve still serving part of it): chased again over {}",
                hwcal_model::human_bytes(chase_size as u64),
                hwcal_model::human_bytes(size as u64)
            );
            progress.say(&text);
            p.notes.push(Note::info("mem", "chase_larger", text));
            Some((size, hw.mem_buffers(&order[..1], (CHASE_STREAM, size))?))
        }
        None => None,
    };
    let (lat_mem, tpl, runs, local): (&mut dyn MemPoints, _, _, _) = match bigger.as_mut() {
        Some((size, b)) => {
            let tpl = chase_template(*size, b.as_ref());
            let runs = b.chase(false, &lat_plan)?.unwrap_or_default();
            let local = b.chase(true, &local_plan)?;
            (b.as_mut(), tpl, runs, local)
        }
        None => (mem.as_mut(), tpl, runs, local),
    };
    let lat = record(&MemSeries::Latency, &runs, tpl.clone(), &mut p.raw);
    if let Some(runs) = local {
        record(&MemSeries::LatencyLocal, &runs, tpl.clone(), &mut p.raw);
    }
    short_mlp(lat_mem, &lat_plan, tpl.size_bytes as usize, &mut p.raw)?;
    drop(bigger);
    p.bandwidth = short_bandwidth(mem.as_mut(), (n, stream), &plan, p)?;
    if !tpl.use_hugepages {
        p.notes.push(Note::warning(
            "mem",
            "latency_not_huge",
            format!(
                "mem: the latency buffer: {}",
                hwcal_model::pages::statement(true, Some(tpl.huge_fraction), Some(false))
            ),
        ));
    }
    let mut lat = lat;
    lat.total_exec_time_s = hw.now_s() - start;
    p.notes.extend(noisy_note(&lat));
    p.mem = Some(lat);
    Ok(())
}

/// The latency chases' slice (1 ms, where the bandwidth runs keep 10 ms).
/// Memory latency is a chase's fastest slice, as a cache level's is its
/// fastest sample: whatever else runs on the CPU (an interrupt, the
/// host's 250–1000 Hz tick, a vCPU's steal, a sibling's burst) only adds
/// time. Events that come every few milliseconds meet every 10 ms slice
/// alike, so its slices agree and their fastest is inflated by the share
/// of the run they took; a 1 ms slice misses most of them, and of the
/// run's ~400 some are clean. At 1 ms a slice still holds thousands of
/// loads (the mean of a random chase's latencies, steady to well under 1%),
/// and the clock readings around it (a few µs) stay outside its time.
const LATENCY_SLICE_NS: f64 = 1e6;

/// The latency chase's result template over `size` bytes of `buf`: its
/// pages as the TLB sees them, its setup time and NUMA nodes.
fn chase_template(size: usize, buf: &dyn MemPoints) -> MemResult {
    let (page, huge, frac) = buf.pages();
    let mut tpl = template("random", "chase", size, true, 1);
    tpl.page_size_bytes = page;
    tpl.use_hugepages = huge;
    tpl.huge_fraction = frac;
    tpl.setup_s = buf.setup_s();
    tpl.numa_nodes = buf.numa_nodes();
    tpl
}

/// How many times larger the chase runs again where the first had not
/// converged: two octaves, so that a level still serving part of the first
/// keeps at most a quarter of that share (C/S) of the second.
const LARGER: usize = 4;

/// The stream buffer the larger chase's buffers come with (one, on the
/// chase's CPU; the bandwidth runs keep the first buffers' streams).
const CHASE_STREAM: usize = 4 << 20;

/// The working set to chase again over, where the first chase over `size`
/// (`runs`, with its window-by-window twin `local` for the page walks'
/// share) still climbed above the cache sweep (in `sweep`) over half of it
/// (`hwcal_analysis::converged::climb_below`: memory latency does not grow
/// with the working set once every cache is passed, so a climb there is a
/// level the sweep did not resolve still serving part of the chase — a
/// memory-side L4 of 384 MiB against a 1 GiB chase — and the figure would
/// be below memory's). [`LARGER`] times `size`, where that and the buffers
/// already held (`held`) fit in half the available memory; `None` where
/// the chase converged, the sweep did not run, or memory is short.
fn larger_chase(
    hw: &dyn Hardware,
    p: &Profile,
    (size, held): (usize, usize),
    huge: bool,
    (runs, local): (&[ThreadRun], Option<&[ThreadRun]>),
) -> Option<usize> {
    let fastest = |r: &[ThreadRun]| {
        r.iter()
            .flat_map(|t| &t.slices)
            .filter(|s| s.ops > 0 && s.ns > 0.0)
            .map(|s| s.ns / s.ops as f64)
            .fold(f64::INFINITY, f64::min)
    };
    let fig = fastest(runs);
    if !fig.is_finite() {
        return None;
    }
    let share = local
        .map(fastest)
        .filter(|v| v.is_finite())
        .map_or(0.0, |l| (fig - l).max(0.0));
    hwcal_analysis::converged::climb_below(p, size as f64, (fig, fig), share, huge)?;
    let larger = size.checked_mul(LARGER)?;
    let avail = hw.available_memory() as usize;
    (avail > 0 && held + size + larger + CHASE_STREAM <= avail / 2).then_some(larger)
}

/// Chains of the memory-level-parallelism points.
const MLP_CHAINS: [usize; 5] = [1, 2, 4, 8, 16];

/// Memory-level parallelism over the latency chase's own buffer: k
/// independent chases around its ring at once (k = 1 is the chase again),
/// 0.1 s each, so that the table's single chase is memory latency over the
/// same working set (the cache probe's runs over the sweep's top, where a
/// slow-to-empty last level still serves part of the loads). Only the raw
/// curves are kept; the consistency stage sets the table beside memory
/// latency.
fn short_mlp(mem: &mut dyn MemPoints, plan: &RunTiming, size: usize, raw: &mut Vec<RawCurve>) -> Result<()> {
    let mlp_plan = RunTiming {
        duration_ns: 0.1e9,
        ..*plan
    };
    for k in MLP_CHAINS {
        let runs = mem.chains(k, &mlp_plan)?;
        let tpl = template("random", "chains", size, true, 1);
        record(&MemSeries::Mlp { chains: k as u32 }, &runs, tpl, raw);
    }
    Ok(())
}

/// Only CPUs a thread can really be pinned to (a cpuset may hide some
/// online ones).
pub(crate) fn pinnable(cpus: &[usize]) -> Vec<usize> {
    cpus.iter()
        .copied()
        .filter(|&c| {
            std::thread::spawn(move || hwcal_harness::pin::pin_to(c).is_ok())
                .join()
                .unwrap_or(false)
        })
        .collect()
}

/// The latency chase's buffer. Memory latency is only measured where the
/// chase has converged to it: a last level of C that does not replace in
/// LRU order (a victim L3) still serves about C/S of the loads of a chase
/// over S, and a guest's sysfs may state a slice of the L3 it really
/// reaches (Zen 3 guests: 8 MiB stated, 32 MiB per CCX). 1 GiB leaves ~3%
/// of hits against a 32 MiB L3; 256 MiB read Zen 5's memory 10% fast (146
/// ns where 1 GiB reads 160) and a Zen 3 guest's 12% fast (135 against
/// 153). Less where memory is short (see [`short_sizes`]).
const CHASE_SIZE: usize = 1 << 30;

/// Sizes of the stream buffers and of the chase buffer (`chase`, see
/// [`CHASE_SIZE`]) for `n` threads: 256 MiB each stream, less with many
/// CPUs (1 GiB in all, 64 MiB at least), and all of it within half the
/// available memory.
fn short_sizes(hw: &dyn Hardware, n: usize, chase: usize) -> (usize, usize) {
    let avail = hw.available_memory() as usize;
    let mut stream = SHORT_SIZE.min((1usize << 30) / n).max(64 << 20);
    let mut chase_size = chase;
    if avail > 0 && stream * n + chase_size > avail / 2 {
        let huge = hw.page_sizes().huge;
        stream = ((avail / 2) / (n + 1)).max(4 << 20) / huge * huge;
        chase_size = stream.max(huge);
        stream = stream.max(huge);
    }
    (stream, chase_size)
}

/// One THP stream buffer per CPU of `order`, each prepared on its CPU, then
/// the chase ring on the first CPU.
fn short_preps(order: &[Option<usize>], stream: usize, chase_size: usize) -> Vec<Prep> {
    let mut preps: Vec<Prep> = order
        .iter()
        .map(|&cpu| Prep {
            cpu,
            node: None,
            size: stream,
            backing: Backing::Thp,
            ring_entries: 0,
            ring_cpus: Vec::new(),
            seed: 0,
            local_ring: false,
        })
        .collect();
    preps.push(Prep {
        // Entry points for the parallel chases of `short_mlp`.
        ring_entries: mem_kernels::MAX_CHAINS,
        seed: 1,
        // The same lines chased window by window, for the page walks'
        // share of the latency (measured right after the full chase).
        local_ring: true,
        // Both cycles linked by every CPU (1 GiB of links is ~1 s on one).
        ring_cpus: order.iter().flatten().copied().collect(),
        size: chase_size,
        ..preps[0].clone()
    });
    preps
}

/// Read bandwidth with one thread and, if there are more CPUs, with all of
/// them, each thread on its own buffer; the last is the headline. `None`
/// where `mem` cannot stream (a simulated machine models no bandwidth).
fn short_bandwidth(
    mem: &mut dyn MemPoints,
    (n, stream): (usize, usize),
    plan: &RunTiming,
    p: &mut Profile,
) -> Result<Option<Bandwidth>> {
    let mut bw = Bandwidth {
        threads: n as u32,
        size_bytes: stream as u64,
        kernel: mem_kernels::isa().name().into(),
        stores: stores(false),
        ..Default::default()
    };
    let counts: Vec<usize> = if n > 1 { vec![1, n] } else { vec![1] };
    for k in counts {
        let Some(runs) = mem.read(k, plan)? else {
            return Ok(None);
        };
        let r = record(
            &MemSeries::Run {
                op: "read".into(),
                threads: k as u32,
            },
            &runs,
            template("sequential", "read", stream, true, k),
            &mut p.raw,
        );
        bw.scaling.push(BandwidthPoint {
            threads: k as u32,
            op: "read".into(),
            bytes_per_sec: r.bytes_per_sec,
            ..Default::default()
        });
        bw.read_bytes_per_sec = Some(r.bytes_per_sec);
    }
    Ok(Some(bw))
}

/// The section's buffers on this machine: one THP stream buffer per CPU
/// of `order` and the chase ring, prepared (see [`short_preps`]).
pub(crate) fn kernel_buffers(
    order: &[Option<usize>],
    (stream, chase_size): (usize, usize),
) -> Result<Box<dyn MemPoints>> {
    let preps = short_preps(order, stream, chase_size);
    let t0 = std::time::Instant::now();
    let bufs = prepared(mem_kernels::prepare_all(&preps))?;
    Ok(Box::new(KernelBuffers {
        order: order.to_vec(),
        bufs,
        stream,
        setup_s: t0.elapsed().as_secs_f64(),
    }))
}

/// [`kernel_buffers`]: the stream buffers, then the chase ring.
struct KernelBuffers {
    order: Vec<Option<usize>>,
    bufs: Vec<Prepared>,
    stream: usize,
    setup_s: f64,
}

impl KernelBuffers {
    fn ring(&self) -> &Prepared {
        &self.bufs[self.order.len()]
    }
}

impl MemPoints for KernelBuffers {
    fn pages(&self) -> (u64, bool, f64) {
        pages(&Backing::Thp, &self.bufs.iter().collect::<Vec<_>>())
    }
    fn setup_s(&self) -> f64 {
        self.setup_s
    }
    fn numa_nodes(&self) -> u32 {
        numa::nodes().iter().filter(|n| n.has_memory).count() as u32
    }
    fn chase(&mut self, windowed: bool, timing: &RunTiming) -> Result<Option<Vec<ThreadRun>>> {
        let ring = self.ring();
        let start = if windowed {
            ring.local_entry
        } else {
            Some(ring.entries[0])
        };
        let Some(start) = start else {
            return Ok(None);
        };
        let jobs = [Job {
            cpu: self.order[0],
            work: Work::Chase {
                buf: &ring.buf,
                start,
            },
        }];
        Ok(Some(run_jobs(&jobs, timing)?))
    }
    fn chains(&mut self, k: usize, timing: &RunTiming) -> Result<Vec<ThreadRun>> {
        let ring = self.ring();
        let mut starts = [0; mem_kernels::MAX_CHAINS];
        for (j, s) in starts.iter_mut().take(k).enumerate() {
            *s = ring.entries[j * mem_kernels::MAX_CHAINS / k];
        }
        let jobs = [Job {
            cpu: self.order[0],
            work: Work::Chains {
                buf: &ring.buf,
                starts,
                k,
            },
        }];
        run_jobs(&jobs, timing)
    }
    fn read(&mut self, threads: usize, timing: &RunTiming) -> Result<Option<Vec<ThreadRun>>> {
        let jobs: Vec<Job> = (0..threads)
            .map(|t| Job {
                cpu: self.order[t],
                work: stream_work(&self.bufs[t].buf, 0, self.stream, MemOp::Read, false),
            })
            .collect();
        Ok(Some(run_jobs(&jobs, timing)?))
    }
}
