//! The memory probe: micbench-mem in Rust. Random (dependent chase: latency) or
//! sequential (read / write / copy: bandwidth) access by N threads for a
//! fixed time, with CPU affinity and NUMA binding per thread (`-a
//! TID:cCPU:NODE`), per-thread buffers (`-L`), huge pages (THP or
//! hugetlbfs); plus a bandwidth sweep over thread counts with loaded latency
//! (Intel MLC style) and a NUMA latency matrix.
//!
//! Output keeps micbench's keys. Its `clk_per_op` counts TSC ticks, which on
//! the reference VM tick at 2.0 GHz while the core runs at 2.2–3.0 GHz; hwcal's
//! `clk_per_op` is in core cycles from the clock measured alongside every
//! ~20 ms slice, and micbench's figure is kept as `tsc_per_op`.

use crate::registry::{Plan, ProbeEntry};
use crate::{Context, Progress, Result, RunnerError};
use hwcal_analysis::mem::{slice_point, summarize};
use hwcal_analysis::mem_raw::noisy_note;
use hwcal_harness::Timer;
use hwcal_model::curve::MemSeries;
use hwcal_model::{
    human_bytes, Bandwidth, BandwidthPoint, LoadedLatencyPoint, MemResult, MemThread, MlpPoint, Note,
    NumaLatency, Profile, RawCurve,
};
use hwcal_probes::buffer::Backing;
use hwcal_probes::mem::{self as pm, Job, Prep, Prepared, RunPlan, Work, GRAIN, LINE};
use hwcal_probes::numa;
use hwcal_probes::pages::{base_page, huge_page};
use std::time::Instant;

mod short;
mod sweep;
pub mod syntax;

use short::run_short;
use sweep::run_sweep;

/// In `hwcal run`: a short memory section (≈2–3 s): latency over 1 GiB on
/// huge pages (and the same buffer window by window, for the page walks'
/// share), then read bandwidth with one thread and with every CPU.
pub const ENTRY: ProbeEntry = ProbeEntry {
    id: "mem",
    description: "memory latency (random chase, huge pages) and read bandwidth (1 and all threads)",
    opt_in: false,
    typical_s: 3.5,
    plan: |config, machine| {
        let cpus = if machine.online_cpus.is_empty() {
            config.pinned_cpu.into_iter().collect()
        } else {
            machine.online_cpus.clone()
        };
        Some(Box::new(Short {
            cpus,
            pinned: config.pinned_cpu,
        }))
    },
    analyze: hwcal_analysis::mem_raw::reanalyze,
};

/// The short section's plan: the online CPUs and the one `run` is pinned to.
#[derive(Debug, Clone)]
pub struct Short {
    pub cpus: Vec<usize>,
    pub pinned: Option<usize>,
}

impl Plan for Short {
    fn run(&self, progress: &dyn Progress) -> Result<Profile> {
        let mut p = Profile::default();
        run_short(&self.cpus, self.pinned, progress, &mut p)?;
        Ok(p)
    }
}

/// Sequential operation of a bandwidth measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemOp {
    Read,
    Write,
    Copy,
}

/// What `hwcal mem` measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One micbench-style measurement.
    Basic,
    /// Read, write, copy at 1..N threads, loaded latency, MLP.
    Sweep,
    /// Chase latency from every node's CPUs to every node's memory.
    NumaMatrix,
}

// ---------------------------------------------------------------------------
// Configuration.

/// Where one thread runs and where its memory lives.
#[derive(Debug, Clone, Copy)]
pub struct Place {
    pub cpu: Option<usize>,
    pub node: Option<u32>,
}

/// A validated `hwcal mem` request.
#[derive(Debug)]
pub struct Config {
    pub threads: usize,
    pub secs: f64,
    pub size: usize,
    pub random: bool,
    pub op: MemOp,
    pub local: bool,
    pub backing: Backing,
    pub nontemporal: bool,
    pub chains: usize,
    /// One per thread.
    pub places: Vec<Place>,
    /// NUMA nodes that have memory.
    pub mem_nodes: Vec<u32>,
    /// CPUs this process may run on.
    pub allowed: Vec<usize>,
}

/// `size` rounded up to whole pages of `backing`.
pub fn round_size(size: u64, backing: &Backing) -> u64 {
    let page = if *backing == Backing::Small {
        base_page()
    } else {
        huge_page()
    } as u64;
    size.div_ceil(page) * page
}

// ---------------------------------------------------------------------------
// Running.

fn op_name(op: MemOp) -> &'static str {
    match op {
        MemOp::Read => "read",
        MemOp::Write => "write",
        MemOp::Copy => "copy",
    }
}

/// The streaming work of one thread over `[off, off+len)` of `buf`.
fn stream_work(buf: &hwcal_probes::buffer::Buffer, off: usize, len: usize, op: MemOp, nt: bool) -> Work<'_> {
    let len = len / GRAIN * GRAIN;
    match op {
        MemOp::Read => Work::Read { buf, off, len },
        MemOp::Write => Work::Write {
            buf,
            off,
            len,
            nontemporal: nt,
        },
        MemOp::Copy => {
            // Copy the first half of the range onto the second half.
            let half = (len / 2) / GRAIN * GRAIN;
            Work::Copy {
                buf,
                src: off,
                dst: off + half,
                len: half,
                nontemporal: nt,
            }
        }
    }
}

fn prepared(results: Vec<Result<Prepared, hwcal_probes::ProbeError>>) -> Result<Vec<Prepared>> {
    results
        .into_iter()
        .map(|r| r.context("preparing the memory buffer"))
        .collect()
}

/// Verified page size and huge-page state of a set of buffers: the page
/// size is the one the TLB sees, `frac` what smaps says.
///
/// A hypervisor that backs guest memory with 4 KiB pages grants the guest
/// its huge pages (smaps counts them) while the TLB still holds 4 KiB
/// translations, so every random load still pays the TLB misses. smaps
/// cannot tell; a timing check can: a fresh 4 MiB THP buffer is checked
/// with the cache probe's TLB test (one line in each of 256 frames against
/// the same lines packed), and where its huge pages are 4 KiB to the TLB
/// the run's page size is reported as 4 KiB.
fn pages(backing: &Backing, bufs: &[&Prepared]) -> (u64, bool, f64) {
    let frac = match backing {
        Backing::Small => 0.0,
        Backing::HugetlbFile(_) => 1.0,
        Backing::Thp => bufs.iter().map(|b| b.huge_fraction).fold(1.0, f64::min),
    };
    let huge = frac >= 0.9 && (*backing != Backing::Thp || tlb_sees_huge_pages());
    (
        if huge {
            huge_page() as u64
        } else {
            base_page() as u64
        },
        huge,
        frac,
    )
}

/// Whether the TLB sees transparent huge pages on this machine (see
/// [`pages`]); false if the check cannot run.
fn tlb_sees_huge_pages() -> bool {
    hwcal_probes::cache::huge_buffer(2 * huge_page(), 1, 2 * huge_page(), false).is_ok_and(|(_, c)| c.head_ok)
}

/// Run `jobs`, keep one raw curve per thread (`{series}.t{tid}`) and
/// summarise them over `template`.
fn measure(
    label: &MemSeries,
    jobs: &[Job],
    plan: &RunPlan,
    template: MemResult,
    raw: &mut Vec<RawCurve>,
) -> Result<MemResult> {
    let runs = pm::run(jobs, plan).context("measuring")?;
    let mut curves = Vec::with_capacity(runs.len());
    for (tid, r) in runs.iter().enumerate() {
        curves.push(RawCurve {
            id: label.thread(tid),
            x_label: "ops (64-byte lines) in one timing slice".into(),
            y_label: "ns per op".into(),
            points: r
                .slices
                .iter()
                .map(|s| slice_point(s.ops, s.ns, s.mhz, s.cpu_ns))
                .collect(),
        });
    }
    let mut tpl = template;
    tpl.bytes_per_op = LINE as u64;
    if tpl.per_thread.len() != runs.len() {
        tpl.per_thread = (0..runs.len())
            .map(|i| MemThread {
                tid: i as u32,
                ..Default::default()
            })
            .collect();
    }
    for (t, (j, r)) in tpl.per_thread.iter_mut().zip(jobs.iter().zip(&runs)) {
        t.cpu = j.cpu;
        t.work = r.work.into();
        t.preemptions = r.preemptions;
    }
    let refs: Vec<&RawCurve> = curves.iter().collect();
    let mut res = summarize(&tpl, &refs, Timer::get().tsc_mhz());
    res.preemptions = runs.iter().map(|r| r.preemptions).sum();
    raw.extend(curves);
    Ok(res)
}

fn template(cfg_pattern: &str, op: &str, size: usize, local: bool, threads: usize) -> MemResult {
    MemResult {
        access_pattern: cfg_pattern.into(),
        op: op.into(),
        threads: threads as u32,
        local,
        size_bytes: size as u64,
        bytes_per_op: LINE as u64,
        kernel: if cfg_pattern == "random" {
            "chase".into()
        } else {
            pm::isa().name().into()
        },
        ..Default::default()
    }
}

fn stores(nt: bool) -> String {
    if nt { "non-temporal" } else { "regular" }.into()
}

/// The default run: one micbench-style measurement.
fn run_basic(cfg: &Config, progress: &dyn Progress, p: &mut Profile) -> Result<()> {
    let preps = basic_preps(cfg);
    let (bufs, setup_s) = prepare_timed(progress, &preps, "buffer(s)", cfg.size)?;
    let jobs = basic_jobs(cfg, &bufs);
    let plan = RunPlan {
        duration_ns: cfg.secs * 1e9,
        ..RunPlan::default()
    };
    progress.say(&format!("mem: measuring for {} s", cfg.secs));
    let op = basic_op(cfg);
    let tpl = basic_template(cfg, &bufs, op, setup_s);
    let mut res = measure(&MemSeries::Basic, &jobs, &plan, tpl, &mut p.raw)?;
    if !cfg.random {
        p.bandwidth = Some(basic_bandwidth(cfg, op, res.bytes_per_sec));
    }
    placement_notes(cfg, &bufs, p);
    res.setup_s = setup_s;
    drop(jobs);
    drop(bufs);
    p.mem = Some(res);
    Ok(())
}

/// The buffers of a basic run: with `-L` one per thread, prepared on that
/// thread's CPU and node; otherwise one shared buffer on thread 0's.
fn basic_preps(cfg: &Config) -> Vec<Prep> {
    if cfg.local {
        (0..cfg.threads)
            .map(|t| Prep {
                cpu: cfg.places[t].cpu,
                node: cfg.places[t].node,
                size: cfg.size,
                backing: cfg.backing.clone(),
                ring_entries: if cfg.random { cfg.chains } else { 0 },
                ring_cpus: Vec::new(),
                seed: 1 + t as u64,
                local_ring: false,
            })
            .collect()
    } else {
        vec![Prep {
            cpu: cfg.places[0].cpu,
            node: cfg.places[0].node,
            size: cfg.size,
            backing: cfg.backing.clone(),
            ring_entries: if cfg.random { cfg.threads * cfg.chains } else { 0 },
            // One buffer: every CPU helps write the cycle.
            ring_cpus: if cfg.places[0].cpu.is_some() {
                cfg.allowed.clone()
            } else {
                Vec::new()
            },
            seed: 1,
            local_ring: false,
        }]
    }
}

/// Prepare `preps` (saying so first) and time it: the setup time is
/// reported apart from the measurement. `noun` and `size` only word the
/// progress line.
fn prepare_timed(
    progress: &dyn Progress,
    preps: &[Prep],
    noun: &str,
    size: usize,
) -> Result<(Vec<Prepared>, f64)> {
    progress.say(&format!(
        "mem: preparing {} {noun} of {}",
        preps.len(),
        human_bytes(size as u64)
    ));
    let t0 = Instant::now();
    let bufs = prepared(pm::prepare_all(preps))?;
    Ok((bufs, t0.elapsed().as_secs_f64()))
}

/// One job per thread of a basic run: a chase (or k chains) from this
/// thread's entry points of the ring, or a stream over its own buffer or its
/// piece of the shared one.
fn basic_jobs<'a>(cfg: &Config, bufs: &'a [Prepared]) -> Vec<Job<'a>> {
    let mut jobs = Vec::with_capacity(cfg.threads);
    let shared_pieces = pm::split(
        bufs[0].buf.len().min(cfg.size.div_ceil(GRAIN) * GRAIN),
        cfg.threads,
    );
    for t in 0..cfg.threads {
        let b = if cfg.local { &bufs[t] } else { &bufs[0] };
        let work = if cfg.random && cfg.chains > 1 {
            // This thread's chains: evenly spaced entry points of the ring.
            let first = if cfg.local { 0 } else { t * cfg.chains };
            let mut starts = [0; pm::MAX_CHAINS];
            starts[..cfg.chains].copy_from_slice(&b.entries[first..first + cfg.chains]);
            Work::Chains {
                buf: &b.buf,
                starts,
                k: cfg.chains,
            }
        } else if cfg.random {
            Work::Chase {
                buf: &b.buf,
                start: if cfg.local { b.entries[0] } else { b.entries[t] },
            }
        } else if cfg.local {
            own_stream(cfg, b, cfg.op, cfg.nontemporal)
        } else {
            let (off, len) = shared_pieces[t];
            stream_work(&b.buf, off, len, cfg.op, cfg.nontemporal)
        };
        jobs.push(Job {
            cpu: cfg.places[t].cpu,
            work,
        });
    }
    jobs
}

/// A stream over the whole of a thread's own buffer (its first `cfg.size`
/// bytes: the buffer may be rounded up to whole pages).
fn own_stream<'a>(cfg: &Config, b: &'a Prepared, op: MemOp, nontemporal: bool) -> Work<'a> {
    stream_work(&b.buf, 0, cfg.size.min(b.buf.len()), op, nontemporal)
}

/// The `op` field of a basic run: the chase kind for random access, the
/// stream op otherwise.
fn basic_op(cfg: &Config) -> &'static str {
    if cfg.random && cfg.chains > 1 {
        "chains"
    } else if cfg.random {
        "chase"
    } else {
        op_name(cfg.op)
    }
}

/// The configuration half of a basic run's result: pattern, pages as
/// verified on the prepared buffers, placement of every thread.
fn basic_template(cfg: &Config, bufs: &[Prepared], op: &str, setup_s: f64) -> MemResult {
    let pattern = if cfg.random { "random" } else { "sequential" };
    let mut tpl = template(pattern, op, cfg.size, cfg.local, cfg.threads);
    let refs: Vec<&Prepared> = bufs.iter().collect();
    let (page, huge, frac) = pages(&cfg.backing, &refs);
    tpl.page_size_bytes = page;
    tpl.use_hugepages = huge;
    tpl.huge_fraction = frac;
    tpl.nontemporal = cfg.nontemporal && !cfg.random;
    tpl.setup_s = setup_s;
    tpl.numa_nodes = cfg.mem_nodes.len() as u32;
    tpl.chains = if cfg.random { cfg.chains as u32 } else { 0 };
    tpl.per_thread = (0..cfg.threads)
        .map(|t| MemThread {
            tid: t as u32,
            node: cfg.places[t].node,
            ..Default::default()
        })
        .collect();
    tpl
}

/// The bandwidth section of a sequential basic run: its one point, which is
/// also the headline figure of its op.
fn basic_bandwidth(cfg: &Config, op: &str, bytes_per_sec: f64) -> Bandwidth {
    let mut bw = Bandwidth {
        threads: cfg.threads as u32,
        size_bytes: cfg.size as u64,
        kernel: pm::isa().name().into(),
        stores: stores(cfg.nontemporal),
        scaling: vec![BandwidthPoint {
            threads: cfg.threads as u32,
            op: op.into(),
            bytes_per_sec,
        }],
        ..Default::default()
    };
    set_headline(&mut bw, cfg.op, bytes_per_sec);
    bw
}

/// Set the headline bandwidth figure of `op`.
fn set_headline(bw: &mut Bandwidth, op: MemOp, bytes_per_sec: f64) {
    let v = Some(bytes_per_sec);
    match op {
        MemOp::Read => bw.read_bytes_per_sec = v,
        MemOp::Write => bw.write_bytes_per_sec = v,
        MemOp::Copy => bw.copy_bytes_per_sec = v,
    }
}

/// Notes on huge pages, TLB reach, NUMA placement.
fn placement_notes(cfg: &Config, bufs: &[Prepared], p: &mut Profile) {
    let refs: Vec<&Prepared> = bufs.iter().collect();
    let (_, huge, frac) = pages(&cfg.backing, &refs);
    if cfg.backing == Backing::Thp && !huge {
        let text = if frac >= 0.9 {
            // The kernel gave huge pages, but the TLB check found 4 KiB
            // translations behind them (a host backing guest memory with
            // 4 KiB pages): "only 100%" would read as nonsense.
            "mem: transparent huge pages were requested and the kernel gave them, but the TLB does not see them \
             as huge (typically a host backing guest memory with 4 KiB pages): figures include 4 KiB page walks"
                .to_string()
        } else {
            format!(
                "mem: transparent huge pages were requested but only {:.0}% of the memory got them (THP mode, \
                 fragmentation); figures mix in 4 KiB page walks",
                frac * 100.0
            )
        };
        p.notes.push(Note::warning("mem", "thp_partial", text));
    }
    let reach = tlb_reach(p);
    if cfg.random && !huge && cfg.size as u64 > reach.map_or(8 << 20, |(_, b)| b) {
        let page = base_page();
        let what = match reach {
            Some((entries, bytes)) => format!(
                "the reach of this core's second-level TLB ({entries} entries × {} = {}, as the machine states it)",
                human_bytes(page as u64),
                human_bytes(bytes)
            ),
            None => "the reach of any second-level TLB (1–4k entries of 4 KiB pages on current cores: 4–16 MiB)"
                .to_string(),
        };
        let advice = if cfg.backing == Backing::Small {
            " Add --hugepages for DRAM latency alone (where the TLB sees them)."
        } else {
            ""
        };
        p.notes.push(Note::warning(
            "mem",
            "tlb_reach",
            format!(
                "mem: {} pages: the {} buffer spans {} pages, far beyond {what}, so most loads also pay a page \
                 walk: this latency is DRAM plus TLB misses.{advice}",
                human_bytes(page as u64),
                human_bytes(cfg.size as u64),
                cfg.size / page
            ),
        ));
    }
    for (i, b) in bufs.iter().enumerate() {
        if let Some(f) = b.on_node {
            if f < 0.99 {
                p.notes.push(Note::warning(
                    "mem",
                    "off_node",
                    format!(
                        "mem: buffer {i}: only {:.0}% of its pages are on the requested node",
                        f * 100.0
                    ),
                ));
            }
        }
    }
    numa_note(cfg.mem_nodes.len(), p);
}

/// The largest base-page TLB level the machine states (entries, reach in
/// bytes), where it is believable: a second level at least twice the
/// first (a hypervisor's CPUID can state 128 entries for a 4096-entry L2
/// DTLB, and the reach would then be understated 32-fold).
fn tlb_reach(p: &Profile) -> Option<(u64, u64)> {
    let page = base_page() as u64;
    let tlbs = &p.machine.as_ref()?.nominal_tlbs;
    let small: Vec<&hwcal_model::NominalTlb> = tlbs.iter().filter(|t| t.page_bytes == page).collect();
    let l1 = small.iter().filter(|t| t.level == 1).map(|t| t.entries).max();
    let top = small.iter().max_by_key(|t| (t.level, t.entries))?;
    if top.level >= 2 && l1.is_some_and(|e| top.entries < 2 * e) {
        return None;
    }
    Some((top.entries, top.entries * page))
}

fn numa_note(mem_nodes: usize, p: &mut Profile) {
    if mem_nodes <= 1 {
        p.notes.push(Note::info(
            "mem",
            "one_numa_node",
            "mem: this machine has one NUMA node with memory: every access is local, remote-memory latency cannot be measured here",
        ));
    }
}

/// `--numa-matrix`: chase latency from one CPU of every node to memory
/// bound to every node.
fn run_matrix(cfg: &Config, progress: &dyn Progress, p: &mut Profile) -> Result<()> {
    let cells = numa::plan_matrix(&numa::nodes(), &cfg.allowed);
    if cells.is_empty() {
        return Err(RunnerError::Failed(
            "no NUMA node has both a CPU we may use and memory".into(),
        ));
    }
    let plan = RunPlan {
        duration_ns: cfg.secs * 1e9 / cells.len() as f64,
        slice_ns: (cfg.secs * 1e9 / cells.len() as f64 / 10.0).clamp(1e6, 20e6),
        warm_up_ms: 50,
    };
    let mut matrix = Vec::new();
    let mut first = None;
    for (i, c) in cells.iter().enumerate() {
        progress.say(&format!(
            "mem: CPU {} (node {}) → memory node {}",
            c.cpu, c.cpu_node, c.mem_node
        ));
        let t0 = Instant::now();
        let bufs = prepared(pm::prepare_all(&[Prep {
            cpu: Some(c.cpu),
            node: Some(c.mem_node),
            size: cfg.size,
            backing: cfg.backing.clone(),
            ring_entries: 1,
            ring_cpus: cfg.allowed.clone(),
            seed: 1,
            local_ring: false,
        }]))?;
        let setup_s = t0.elapsed().as_secs_f64();
        let jobs = [Job {
            cpu: Some(c.cpu),
            work: Work::Chase {
                buf: &bufs[0].buf,
                start: bufs[0].entries[0],
            },
        }];
        let mut tpl = template("random", "chase", cfg.size, true, 1);
        let refs: Vec<&Prepared> = bufs.iter().collect();
        let (page, huge, frac) = pages(&cfg.backing, &refs);
        tpl.page_size_bytes = page;
        tpl.use_hugepages = huge;
        tpl.huge_fraction = frac;
        tpl.setup_s = setup_s;
        tpl.numa_nodes = cfg.mem_nodes.len() as u32;
        tpl.per_thread = vec![MemThread {
            tid: 0,
            node: Some(c.mem_node),
            ..Default::default()
        }];
        let r = measure(
            &MemSeries::Numa {
                cpu_node: c.cpu_node,
                mem_node: c.mem_node,
            },
            &jobs,
            &plan,
            tpl,
            &mut p.raw,
        )?;
        matrix.push(NumaLatency {
            cpu_node: c.cpu_node,
            cpu: c.cpu,
            mem_node: c.mem_node,
            ns_per_op: r.ns_per_op,
            clk_per_op: r.clk_per_op.is_finite().then_some(r.clk_per_op),
        });
        if i == 0 {
            placement_notes(&as_random(cfg), &bufs, p);
            first = Some(r);
        }
    }
    if let Some(mut r) = first {
        r.numa_matrix = matrix;
        p.mem = Some(r);
    }
    Ok(())
}

/// `hwcal mem`'s measurement in `mode` over `cfg`, into `p` (sections, raw
/// curves, notes); `start` is when the command started (the total time
/// reported includes the setup).
pub fn measure_command(
    cfg: &Config,
    mode: Mode,
    progress: &dyn Progress,
    p: &mut Profile,
    start: Instant,
) -> Result<()> {
    if cfg.threads > cfg.allowed.len() && cfg.places.iter().any(|pl| pl.cpu.is_some()) {
        p.notes.push(Note::warning(
            "mem",
            "oversubscribed",
            format!(
                "mem: {} threads on {} CPUs: threads share CPUs, so per-thread figures include time-slicing",
                cfg.threads,
                cfg.allowed.len()
            ),
        ));
    }
    match mode {
        Mode::Sweep => run_sweep(cfg, progress, p)?,
        Mode::NumaMatrix => run_matrix(cfg, progress, p)?,
        Mode::Basic => run_basic(cfg, progress, p)?,
    }
    let sweep = mode == Mode::Sweep;
    if let Some(m) = &mut p.mem {
        m.total_exec_time_s = start.elapsed().as_secs_f64();
        if m.setup_s > 1.0 {
            p.notes.push(Note::warning(
"mem",
"setup_time",
format!(
                "mem: preparing the buffers (the kernel zeroing every page{}) took {:.2} s on top of the {} s measured",
                if m.access_pattern == "random" || sweep { ", then writing the cycle" } else { "" },
                m.setup_s,
                cfg.secs
            )));
        }
        if !sweep {
            p.notes.extend(noisy_note(m));
        }
    }
    Ok(())
}

/// The same configuration in random (chase) mode, for the placement notes
/// of a sweep's latency points.
fn as_random(cfg: &Config) -> Config {
    Config {
        random: true,
        places: cfg.places.clone(),
        mem_nodes: cfg.mem_nodes.clone(),
        allowed: cfg.allowed.clone(),
        backing: cfg.backing.clone(),
        ..*cfg
    }
}
