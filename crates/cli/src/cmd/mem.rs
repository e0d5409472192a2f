//! `hwcal mem`: micbench-mem in Rust. Random (dependent chase: latency) or
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

use crate::cli::{MemArgs, MemOp};
use crate::common::{
    check_db, check_dest, command_line, emit, now_unix, parse_size, save_if_requested, Progress,
};
use crate::registry::ProbeEntry;
use crate::usage;
use anyhow::{Context, Result};
use hwcal_analysis::mem::{slice_point, summarize};
use hwcal_harness::{harness_info, Timer};
use hwcal_model::{
    Bandwidth, BandwidthPoint, LoadedLatencyPoint, MemResult, MemThread, MlpPoint, NumaLatency, Profile,
    RawCurve,
};
use hwcal_probes::buffer::{Backing, HUGE_PAGE, SMALL_PAGE};
use hwcal_probes::mem::{self as pm, Job, Prep, Prepared, RunPlan, Work, GRAIN, LINE};
use hwcal_probes::numa;
use std::time::Instant;

/// In `hwcal run`: a short memory section (≈1.5 s): latency over 256 MiB on
/// huge pages, then read bandwidth with one thread and with every CPU.
pub const ENTRY: ProbeEntry = ProbeEntry {
    id: "mem",
    description: "memory latency (random chase, huge pages) and read bandwidth (1 and all threads)",
    measure: |ctx, p| {
        let cpus = if ctx.machine.online_cpus.is_empty() {
            ctx.pinned_cpu.into_iter().collect()
        } else {
            ctx.machine.online_cpus.clone()
        };
        run_short(&cpus, ctx.pinned_cpu, &ctx.progress, p)
    },
    reanalyze: |p| Ok(reanalyze(p)),
};

// ---------------------------------------------------------------------------
// Parsing.

/// One `-a TID:cCPU:NODE` setting (micbench's syntax: `-a 0:c0:1` runs thread
/// 0 on CPU 0 with its memory on node 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Affinity {
    pub tid: u32,
    pub cpu: usize,
    pub node: u32,
}

pub fn parse_affinity(s: &str) -> Result<Affinity, String> {
    let bad = || format!("affinity '{s}': expected TID:cCPU:NODE, e.g. 0:c0:0");
    let parts: Vec<&str> = s.trim().split(':').collect();
    let [tid, cpu, node] = parts[..] else {
        return Err(bad());
    };
    let cpu = cpu.strip_prefix('c').ok_or_else(bad)?;
    let num = |x: &str| -> Result<u64, String> {
        if x.is_empty() || !x.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        x.parse::<u64>().map_err(|_| bad())
    };
    Ok(Affinity {
        tid: u32::try_from(num(tid)?).map_err(|_| bad())?,
        cpu: usize::try_from(num(cpu)?).map_err(|_| bad())?,
        node: u32::try_from(num(node)?).map_err(|_| bad())?,
    })
}

/// Seconds for `-t`: positive, finite, at most a day.
pub fn parse_secs(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 86_400.0 => Ok(v),
        _ => Err(format!(
            "time '{s}': expected seconds > 0 (fractions allowed), at most 86400"
        )),
    }
}

// ---------------------------------------------------------------------------
// Configuration.

#[derive(Debug, Clone, Copy)]
struct Place {
    cpu: Option<usize>,
    node: Option<u32>,
}

#[derive(Debug)]
struct Config {
    threads: usize,
    secs: f64,
    size: usize,
    random: bool,
    op: MemOp,
    local: bool,
    backing: Backing,
    nontemporal: bool,
    chains: usize,
    places: Vec<Place>,
    mem_nodes: Vec<u32>,
    allowed: Vec<usize>,
}

fn round_size(size: u64, backing: &Backing) -> u64 {
    let page = if *backing == Backing::Small {
        SMALL_PAGE
    } else {
        HUGE_PAGE
    } as u64;
    size.div_ceil(page) * page
}

fn hugetlb_dir(path: &std::path::Path) -> Result<std::path::PathBuf> {
    let dir = if path.is_dir() {
        path.to_path_buf()
    } else {
        match path.parent().filter(|p| p.is_dir()) {
            Some(p) => p.to_path_buf(),
            None => usage!("--hugetlbfile {}: no such directory", path.display()),
        }
    };
    let canon = dir.canonicalize().unwrap_or(dir.clone());
    let mounts = pm::hugetlbfs_mounts();
    if !mounts.iter().any(|m| canon.starts_with(m)) {
        usage!(
            "--hugetlbfile {}: not on a hugetlbfs mount (mounted: {}); mount one with `mount -t hugetlbfs none DIR` and reserve pages in /proc/sys/vm/nr_hugepages",
            path.display(),
            if mounts.is_empty() {
                "none".to_string()
            } else {
                mounts.iter().map(|m| m.display().to_string()).collect::<Vec<_>>().join(", ")
            }
        );
    }
    Ok(dir)
}

fn configure(a: &MemArgs) -> Result<Config> {
    let allowed = hwcal_harness::pin::allowed_cpus();
    let (threads, secs, size) = parse_scalars(a, &allowed)?;
    let backing = match (&a.hugetlbfile, a.hugepages) {
        (Some(p), _) => Backing::HugetlbFile(hugetlb_dir(p)?),
        (None, true) => Backing::Thp,
        (None, false) => Backing::Small,
    };
    let nodes = numa::nodes();
    let mem_nodes: Vec<u32> = nodes.iter().filter(|n| n.has_memory).map(|n| n.id).collect();
    let all_nodes: Vec<u32> = nodes.iter().map(|n| n.id).collect();
    let mut places = default_places(a, &allowed, threads)?;
    apply_affinity(a, threads, &allowed, &all_nodes, &mem_nodes, &mut places)?;
    let cfg = Config {
        threads,
        secs,
        size: size as usize,
        random: a.random,
        op: a.op,
        local: a.local || a.sweep,
        backing,
        nontemporal: a.nontemporal,
        chains: a.chains,
        places,
        mem_nodes,
        allowed,
    };
    check_memory(a, &cfg, size)?;
    check_split(a, &cfg)?;
    Ok(cfg)
}

/// The plain numbers of the command line (thread count, seconds, size,
/// chains), each checked in turn so the first bad one is the one reported.
/// A sweep defaults to one thread per allowed CPU, anything else to one.
fn parse_scalars(a: &MemArgs, allowed: &[usize]) -> Result<(usize, f64, u64)> {
    let threads = match a.threads {
        Some(0) => usage!("--threads 0: at least one thread is needed"),
        Some(n) if n > 4096 => usage!("--threads {n}: at most 4096"),
        Some(n) => n as usize,
        None if a.sweep => allowed.len().max(1),
        None => 1,
    };
    let secs = match parse_secs(&a.time) {
        Ok(v) => v,
        Err(e) => usage!("{e}"),
    };
    let size = match parse_size(&a.size) {
        Ok(v) => v,
        Err(e) => usage!("{e}"),
    };
    if size < 4096 {
        usage!("size {size} bytes: at least 4K is needed (one page)");
    }
    if ![1, 2, 4, 8, 16].contains(&a.chains) {
        usage!("--chains {}: use 1, 2, 4, 8 or 16", a.chains);
    }
    Ok((threads, secs, size))
}

/// Placement before `-a`: no node binding, and unless `--no-pin`, thread 0
/// on --cpu or the highest allowed CPU (the one hwcal pins to everywhere),
/// the others on the next ones down, wrapping round when threads outnumber
/// CPUs.
fn default_places(a: &MemArgs, allowed: &[usize], threads: usize) -> Result<Vec<Place>> {
    let mut desc = allowed.to_vec();
    desc.reverse();
    if let Some(c) = a.common.cpu {
        if !allowed.contains(&c) {
            usage!("--cpu {c}: no such CPU or not allowed (allowed: {allowed:?})");
        }
        desc.retain(|&x| x != c);
        desc.insert(0, c);
    }
    Ok((0..threads)
        .map(|i| Place {
            cpu: if a.common.no_pin || desc.is_empty() {
                None
            } else {
                Some(desc[i % desc.len()])
            },
            node: None,
        })
        .collect())
}

/// Apply the `-a TID:cCPU:NODE` settings over the default placement: each
/// names an existing thread at most once, an allowed CPU and a NUMA node
/// that has memory (binding to a memory-less node would silently fall back).
fn apply_affinity(
    a: &MemArgs,
    threads: usize,
    allowed: &[usize],
    all_nodes: &[u32],
    mem_nodes: &[u32],
    places: &mut [Place],
) -> Result<()> {
    let mut seen = Vec::new();
    for s in &a.affinity {
        let af = match parse_affinity(s) {
            Ok(v) => v,
            Err(e) => usage!("{e}"),
        };
        if af.tid as usize >= threads {
            usage!(
                "affinity '{s}': thread {} does not exist (threads are 0..{})",
                af.tid,
                threads - 1
            );
        }
        if seen.contains(&af.tid) {
            usage!("affinity '{s}': thread {} given twice", af.tid);
        }
        seen.push(af.tid);
        if !allowed.contains(&af.cpu) {
            usage!(
                "affinity '{s}': CPU {} does not exist or is not allowed (allowed: {allowed:?})",
                af.cpu
            );
        }
        if !all_nodes.contains(&af.node) {
            usage!(
                "affinity '{s}': NUMA node {} does not exist (nodes: {all_nodes:?})",
                af.node
            );
        }
        if !mem_nodes.contains(&af.node) {
            usage!(
                "affinity '{s}': NUMA node {} has no memory (memory nodes: {mem_nodes:?})",
                af.node
            );
        }
        places[af.tid as usize] = Place {
            cpu: Some(af.cpu),
            node: Some(af.node),
        };
    }
    Ok(())
}

/// Memory: every buffer must fit in what the kernel says is available
/// (the random cycle lives inside the buffer; no side table). `size` is the
/// size asked for, before rounding to whole pages.
fn check_memory(a: &MemArgs, cfg: &Config, size: u64) -> Result<()> {
    let threads = cfg.threads;
    let one = round_size(size, &cfg.backing);
    let buffers = if a.sweep {
        threads as u64 + 1
    } else if a.numa_matrix {
        1
    } else if cfg.local {
        threads as u64
    } else {
        1
    };
    let need = one.saturating_mul(buffers);
    let avail = hwcal_probes::sysinfo::available_memory();
    if avail > 0 && need > avail / 10 * 9 {
        usage!(
            "size {}: {} buffer(s) need {} MiB but only {} MiB of memory is available",
            a.size,
            buffers,
            need >> 20,
            avail >> 20
        );
    }
    Ok(())
}

/// The buffer must hold the work it is split into: at least two lines per
/// chase on a ring, and on a shared buffer at least one grain per thread
/// (two for copy: source and destination halves).
fn check_split(a: &MemArgs, cfg: &Config) -> Result<()> {
    let threads = cfg.threads;
    if cfg.random {
        let lines = cfg.size / LINE;
        let chains = cfg.chains * if cfg.local { 1 } else { threads };
        if lines < 2 * chains {
            usage!(
                "size {}: {lines} lines are too few for {chains} chase(s) on one buffer",
                a.size
            );
        }
    }
    if !cfg.random && !cfg.local {
        let piece = cfg.size / threads;
        let need = if cfg.op == MemOp::Copy { 2 * GRAIN } else { GRAIN };
        if piece < need {
            usage!("size {}: too small to split among {threads} threads", a.size);
        }
    }
    Ok(())
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

/// Verified page size and huge-page state of a set of buffers.
fn pages(backing: &Backing, bufs: &[&Prepared]) -> (u64, bool, f64) {
    let frac = match backing {
        Backing::Small => 0.0,
        Backing::HugetlbFile(_) => 1.0,
        Backing::Thp => bufs.iter().map(|b| b.huge_fraction).fold(1.0, f64::min),
    };
    let huge = frac >= 0.9;
    (
        if huge { HUGE_PAGE as u64 } else { SMALL_PAGE as u64 },
        huge,
        frac,
    )
}

/// Run `jobs`, keep one raw curve per thread (`{label}.t{tid}`) and
/// summarise them over `template`.
fn measure(
    label: &str,
    jobs: &[Job],
    plan: &RunPlan,
    template: MemResult,
    raw: &mut Vec<RawCurve>,
) -> Result<MemResult> {
    let runs = pm::run(jobs, plan).context("measuring")?;
    let mut curves = Vec::with_capacity(runs.len());
    for (tid, r) in runs.iter().enumerate() {
        curves.push(RawCurve {
            id: format!("{label}.t{tid}"),
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
fn run_basic(cfg: &Config, progress: &Progress, p: &mut Profile) -> Result<()> {
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
    let mut res = measure("mem", &jobs, &plan, tpl, &mut p.raw)?;
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
        }]
    }
}

/// Prepare `preps` (saying so first) and time it: the setup time is
/// reported apart from the measurement. `noun` and `size` only word the
/// progress line.
fn prepare_timed(
    progress: &Progress,
    preps: &[Prep],
    noun: &str,
    size: usize,
) -> Result<(Vec<Prepared>, f64)> {
    progress.say(&format!(
        "mem: preparing {} {noun} of {}",
        preps.len(),
        hwcal_report::text::human_bytes(size as u64)
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
        p.notes.push(format!(
            "mem: transparent huge pages were requested but only {:.0}% of the memory got them (THP mode, fragmentation); figures mix in 4 KiB page walks",
            frac * 100.0
        ));
    }
    if cfg.random && !huge && cfg.size > 8 << 20 {
        p.notes.push(format!(
            "mem: 4 KiB pages: the {} buffer spans {} pages, far beyond the reach of the second-level TLB (~2048 entries × 4 KiB = 8 MiB on recent x86 cores), so most loads also pay a page walk: this latency is DRAM plus TLB misses. Add --hugepages for DRAM latency alone.",
            hwcal_report::text::human_bytes(cfg.size as u64),
            cfg.size / SMALL_PAGE
        ));
    }
    for (i, b) in bufs.iter().enumerate() {
        if let Some(f) = b.on_node {
            if f < 0.99 {
                p.notes.push(format!(
                    "mem: buffer {i}: only {:.0}% of its pages are on the requested node",
                    f * 100.0
                ));
            }
        }
    }
    numa_note(cfg.mem_nodes.len(), p);
}

fn numa_note(mem_nodes: usize, p: &mut Profile) {
    if mem_nodes <= 1 {
        p.notes.push(
            "mem: this machine has one NUMA node with memory: every access is local, remote-memory latency cannot be measured here".into(),
        );
    }
}

/// Chain counts of a sweep's memory-level-parallelism points.
const MLP_CHAINS: [usize; 5] = [1, 2, 4, 8, 16];

/// What every step of a sweep shares: the configuration, the buffers (one
/// stream buffer per thread, then the chaser's ring) and the plan of one
/// point.
struct Sweep<'a> {
    cfg: &'a Config,
    bufs: &'a [Prepared],
    plan: RunPlan,
    progress: &'a Progress,
}

/// `--sweep`: read, write, copy at 1..N threads, then loaded latency.
fn run_sweep(cfg: &Config, progress: &Progress, p: &mut Profile) -> Result<()> {
    let n = cfg.threads;
    let preps = sweep_preps(cfg);
    let (bufs, setup_s) = prepare_timed(progress, &preps, "buffers", cfg.size)?;
    let points = 3 * n + n + MLP_CHAINS.len();
    let sw = Sweep {
        cfg,
        bufs: &bufs,
        plan: RunPlan {
            duration_ns: cfg.secs * 1e9 / points as f64,
            slice_ns: (cfg.secs * 1e9 / points as f64 / 10.0).clamp(1e6, 20e6),
            warm_up_ms: 20,
        },
        progress,
    };
    let refs: Vec<&Prepared> = bufs.iter().collect();
    let (page, huge, frac) = pages(&cfg.backing, &refs);
    let mut bw = Bandwidth {
        threads: n as u32,
        size_bytes: cfg.size as u64,
        kernel: pm::isa().name().into(),
        stores: stores(cfg.nontemporal),
        ..Default::default()
    };
    sw.scaling(&mut bw, p)?;
    let latency = sw.loaded_latency((page, huge, frac), &mut bw, p)?;
    sw.mlp(&mut bw, p)?;
    if let Some(mut l) = latency {
        l.setup_s = setup_s;
        l.numa_nodes = cfg.mem_nodes.len() as u32;
        p.mem = Some(l);
    }
    p.bandwidth = Some(bw);
    placement_notes(&as_random(cfg), &bufs, p);
    Ok(())
}

/// A sweep's buffers: one stream buffer per thread (prepared on its own
/// CPU), plus the chaser's ring on thread 0's CPU.
fn sweep_preps(cfg: &Config) -> Vec<Prep> {
    let mut preps: Vec<Prep> = (0..cfg.threads)
        .map(|t| Prep {
            cpu: cfg.places[t].cpu,
            node: cfg.places[t].node,
            size: cfg.size,
            backing: cfg.backing.clone(),
            ring_entries: 0,
            ring_cpus: Vec::new(),
            seed: 0,
        })
        .collect();
    preps.push(Prep {
        ring_entries: pm::MAX_CHAINS,
        seed: 1,
        ..preps[0].clone()
    });
    preps
}

impl Sweep<'_> {
    /// The chaser's ring, after the stream buffers.
    fn ring(&self) -> &Prepared {
        &self.bufs[self.cfg.threads]
    }

    /// Stream job `t`: its own CPU, over its own buffer.
    fn stream_job(&self, t: usize, op: MemOp, nontemporal: bool) -> Job<'_> {
        Job {
            cpu: self.cfg.places[t].cpu,
            work: own_stream(self.cfg, &self.bufs[t], op, nontemporal),
        }
    }

    /// Bandwidth scaling: every op at 1..N threads, each on its own buffer;
    /// the N-thread figure of each op is its headline.
    fn scaling(&self, bw: &mut Bandwidth, p: &mut Profile) -> Result<()> {
        let (cfg, n) = (self.cfg, self.cfg.threads);
        for op in [MemOp::Read, MemOp::Write, MemOp::Copy] {
            for k in 1..=n {
                self.progress
                    .say(&format!("mem: {} with {k} thread(s)", op_name(op)));
                let jobs: Vec<Job> = (0..k).map(|t| self.stream_job(t, op, cfg.nontemporal)).collect();
                let tpl = template("sequential", op_name(op), cfg.size, true, k);
                let label = format!("bw.{}.{k}t", op_name(op));
                let r = measure(&label, &jobs, &self.plan, tpl, &mut p.raw)?;
                bw.scaling.push(BandwidthPoint {
                    threads: k as u32,
                    op: op_name(op).into(),
                    bytes_per_sec: r.bytes_per_sec,
                });
                if k == n {
                    set_headline(bw, op, r.bytes_per_sec);
                }
            }
        }
        Ok(())
    }

    /// Loaded latency: thread 0 chases its ring while s = 0..N-1 threads
    /// read. Returns the unloaded (s = 0) result, the sweep's latency.
    fn loaded_latency(
        &self,
        (page, huge, frac): (u64, bool, f64),
        bw: &mut Bandwidth,
        p: &mut Profile,
    ) -> Result<Option<MemResult>> {
        let (cfg, n) = (self.cfg, self.cfg.threads);
        let ring = self.ring();
        let mut latency = None;
        for s in 0..n {
            self.progress
                .say(&format!("mem: latency with {s} streaming thread(s)"));
            let mut jobs = vec![Job {
                cpu: cfg.places[0].cpu,
                work: Work::Chase {
                    buf: &ring.buf,
                    start: ring.entries[0],
                },
            }];
            jobs.extend((1..=s).map(|t| self.stream_job(t, MemOp::Read, false)));
            let mut tpl = template("random", "chase", cfg.size, true, jobs.len());
            tpl.page_size_bytes = page;
            tpl.use_hugepages = huge;
            tpl.huge_fraction = frac;
            let r = measure(&format!("loaded.{s}"), &jobs, &self.plan, tpl, &mut p.raw)?;
            let chaser = &r.per_thread[0];
            bw.loaded_latency.push(LoadedLatencyPoint {
                streaming_threads: s as u32,
                latency_ns: chaser.ns_per_op,
                latency_cycles: chaser.clk_per_op.is_finite().then_some(chaser.clk_per_op),
                stream_bytes_per_sec: r.per_thread[1..].iter().fold(0.0, |a, t| a + t.bytes_per_sec),
            });
            if s == 0 {
                latency = Some(r);
            }
        }
        Ok(latency)
    }

    /// Memory-level parallelism: thread 0 alone, k chains around the ring,
    /// each speedup relative to the single chain.
    fn mlp(&self, bw: &mut Bandwidth, p: &mut Profile) -> Result<()> {
        let ring = self.ring();
        for k in MLP_CHAINS {
            self.progress.say(&format!("mem: {k} parallel chase(s)"));
            let mut starts = [0; pm::MAX_CHAINS];
            for (j, s) in starts.iter_mut().take(k).enumerate() {
                *s = ring.entries[j * pm::MAX_CHAINS / k];
            }
            let jobs = [Job {
                cpu: self.cfg.places[0].cpu,
                work: Work::Chains {
                    buf: &ring.buf,
                    starts,
                    k,
                },
            }];
            let tpl = template("random", "chains", self.cfg.size, true, 1);
            let r = measure(&format!("mlp.{k}"), &jobs, &self.plan, tpl, &mut p.raw)?;
            let base = bw.mlp.first().map_or(r.ns_per_op, |m| m.ns_per_load);
            bw.mlp.push(MlpPoint {
                chains: k as u32,
                ns_per_load: r.ns_per_op,
                speedup: base / r.ns_per_op,
            });
        }
        Ok(())
    }
}

/// `--numa-matrix`: chase latency from one CPU of every node to memory
/// bound to every node.
fn run_matrix(cfg: &Config, progress: &Progress, p: &mut Profile) -> Result<()> {
    let cells = numa::plan_matrix(&numa::nodes(), &cfg.allowed);
    if cells.is_empty() {
        anyhow::bail!("no NUMA node has both a CPU we may use and memory");
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
            &format!("numa.c{}.n{}", c.cpu_node, c.mem_node),
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

pub fn run(a: MemArgs) -> Result<()> {
    let start = Instant::now();
    check_dest(a.common.json.as_deref())?;
    check_db(a.common.save)?;
    let cfg = configure(&a)?;
    let progress = Progress::new(a.common.quiet);
    let mut p = Profile::new(command_line(), now_unix());
    p.harness = Some(harness_info(cfg.places[0].cpu));
    if cfg.threads > cfg.allowed.len() && cfg.places.iter().any(|pl| pl.cpu.is_some()) {
        p.notes.push(format!(
            "mem: {} threads on {} CPUs: threads share CPUs, so per-thread figures include time-slicing",
            cfg.threads,
            cfg.allowed.len()
        ));
    }
    if a.sweep {
        run_sweep(&cfg, &progress, &mut p)?;
    } else if a.numa_matrix {
        run_matrix(&cfg, &progress, &mut p)?;
    } else {
        run_basic(&cfg, &progress, &mut p)?;
    }
    if let Some(m) = &mut p.mem {
        m.total_exec_time_s = start.elapsed().as_secs_f64();
        if m.setup_s > 1.0 {
            p.notes.push(format!(
                "mem: preparing the buffers (the kernel zeroing every page{}) took {:.2} s on top of the {} s measured",
                if m.access_pattern == "random" || a.sweep { ", then writing the cycle" } else { "" },
                m.setup_s,
                cfg.secs
            ));
        }
        if !a.sweep {
            p.notes.extend(noisy_note(m));
        }
    }
    emit(&p, a.common.json.as_deref())?;
    if a.verbose && a.common.json.as_deref() != Some("-") {
        crate::out!("{}", crate::cmd::mem_verbose::dump(&p)?);
    }
    save_if_requested(&p, a.common.save)?;
    Ok(())
}

// ---------------------------------------------------------------------------
// `hwcal run`'s short section and offline re-analysis.

const SHORT_SIZE: usize = 256 << 20;

/// `hwcal run`'s memory section: chase latency on a THP buffer, then read
/// bandwidth with one thread and with every pinnable CPU.
fn run_short(cpus: &[usize], pinned: Option<usize>, progress: &Progress, p: &mut Profile) -> Result<()> {
    let start = Instant::now();
    let cpus = pinnable(cpus);
    let first = pinned.or_else(|| cpus.last().copied());
    // CPUs for the all-thread run: the pinned one first, then the others.
    let mut order: Vec<Option<usize>> = vec![first];
    order.extend(cpus.iter().rev().filter(|&&c| Some(c) != first).map(|&c| Some(c)));
    let n = order.len();
    let (stream, chase_size) = short_sizes(n);
    let preps = short_preps(&order, stream, chase_size);
    let (bufs, setup_s) = prepare_timed(progress, &preps, "buffers", stream)?;
    let plan = RunPlan {
        duration_ns: 0.3e9,
        slice_ns: 10e6,
        warm_up_ms: 50,
    };
    let refs: Vec<&Prepared> = bufs.iter().collect();
    let (page, huge, frac) = pages(&Backing::Thp, &refs);
    let mut tpl = template("random", "chase", chase_size, true, 1);
    tpl.page_size_bytes = page;
    tpl.use_hugepages = huge;
    tpl.huge_fraction = frac;
    tpl.setup_s = setup_s;
    tpl.numa_nodes = numa::nodes().iter().filter(|n| n.has_memory).count() as u32;
    let lat_plan = RunPlan {
        duration_ns: 0.4e9,
        ..plan
    };
    let ring = &bufs[n];
    let jobs = [Job {
        cpu: first,
        work: Work::Chase {
            buf: &ring.buf,
            start: ring.entries[0],
        },
    }];
    let lat = measure("mem.latency", &jobs, &lat_plan, tpl, &mut p.raw)?;
    let bw = short_bandwidth(&order, &bufs, stream, &plan, p)?;
    if !huge {
        p.notes.push(format!(
            "mem: only {:.0}% of the latency buffer got huge pages: the latency includes TLB misses",
            frac * 100.0
        ));
    }
    let mut lat = lat;
    lat.total_exec_time_s = start.elapsed().as_secs_f64();
    p.notes.extend(noisy_note(&lat));
    p.mem = Some(lat);
    p.bandwidth = Some(bw);
    Ok(())
}

/// Only CPUs a thread can really be pinned to (a cpuset may hide some
/// online ones).
fn pinnable(cpus: &[usize]) -> Vec<usize> {
    cpus.iter()
        .copied()
        .filter(|&c| {
            std::thread::spawn(move || hwcal_harness::pin::pin_to(c).is_ok())
                .join()
                .unwrap_or(false)
        })
        .collect()
}

/// Sizes of the stream buffers and of the chase buffer for `n` threads:
/// 256 MiB each (2.5× the nominal L3 of the reference machine), less with
/// many CPUs (1 GiB in all, 64 MiB at least), and all of it within half the
/// available memory.
fn short_sizes(n: usize) -> (usize, usize) {
    let avail = hwcal_probes::sysinfo::available_memory() as usize;
    let mut stream = SHORT_SIZE.min((1usize << 30) / n).max(64 << 20);
    let mut chase_size = SHORT_SIZE;
    if avail > 0 && stream * n + chase_size > avail / 2 {
        stream = ((avail / 2) / (n + 1)).max(4 << 20) / HUGE_PAGE * HUGE_PAGE;
        chase_size = stream.max(HUGE_PAGE);
        stream = stream.max(HUGE_PAGE);
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
        })
        .collect();
    preps.push(Prep {
        ring_entries: 1,
        seed: 1,
        size: chase_size,
        ..preps[0].clone()
    });
    preps
}

/// Read bandwidth with one thread and, if there are more CPUs, with all of
/// them, each thread on its own buffer; the last is the headline.
fn short_bandwidth(
    order: &[Option<usize>],
    bufs: &[Prepared],
    stream: usize,
    plan: &RunPlan,
    p: &mut Profile,
) -> Result<Bandwidth> {
    let n = order.len();
    let mut bw = Bandwidth {
        threads: n as u32,
        size_bytes: stream as u64,
        kernel: pm::isa().name().into(),
        stores: stores(false),
        ..Default::default()
    };
    let counts: Vec<usize> = if n > 1 { vec![1, n] } else { vec![1] };
    for k in counts {
        let jobs: Vec<Job> = (0..k)
            .map(|t| Job {
                cpu: order[t],
                work: stream_work(&bufs[t].buf, 0, stream, MemOp::Read, false),
            })
            .collect();
        let r = measure(
            &format!("mem.read.{k}t"),
            &jobs,
            plan,
            template("sequential", "read", stream, true, k),
            &mut p.raw,
        )?;
        bw.scaling.push(BandwidthPoint {
            threads: k as u32,
            op: "read".into(),
            bytes_per_sec: r.bytes_per_sec,
        });
        bw.read_bytes_per_sec = Some(r.bytes_per_sec);
    }
    Ok(bw)
}

/// The raw curves `{prefix}.t0`, `{prefix}.t1`, … in thread order.
fn thread_curves(p: &Profile, prefix: &str) -> Vec<RawCurve> {
    let tid = |c: &RawCurve| {
        c.id.strip_prefix(prefix)
            .and_then(|r| r.strip_prefix(".t"))
            .and_then(|t| t.parse::<u32>().ok())
    };
    let mut v: Vec<RawCurve> = p.raw.iter().filter(|c| tid(c).is_some()).cloned().collect();
    v.sort_by_key(|c| tid(c));
    v
}

/// Recompute every `mem` and `bandwidth` figure from the raw slices stored
/// by `hwcal mem` (`mem.t*`, sweep `bw.*` / `loaded.*`, matrix `numa.*`) or
/// by `hwcal run` (`mem.latency.*`, `mem.read.*`). Configuration fields are
/// kept as stored. Returns whether any raw data was found.
fn reanalyze(p: &mut Profile) -> bool {
    let tsc = p.harness.as_ref().and_then(|h| h.tsc_mhz);
    let mut any = false;
    if let Some(m) = p.mem.clone() {
        any |= reanalyze_mem(p, &m, tsc);
        let mut matrix = m.numa_matrix.clone();
        any |= reanalyze_matrix(p, &m, &mut matrix, tsc);
        if let Some(mm) = &mut p.mem {
            mm.numa_matrix = matrix;
        }
    }
    if let Some(mut bw) = p.bandwidth.clone() {
        any |= reanalyze_scaling(p, &mut bw, tsc);
        set_headlines(&mut bw);
        any |= reanalyze_mlp(p, &mut bw, tsc);
        any |= reanalyze_loaded(p, &mut bw, tsc);
        p.bandwidth = Some(bw);
    }
    any
}

/// The `mem` section from the first set of per-thread curves found (a run's
/// latency, a basic run, a sweep's unloaded latency), over the stored `m`.
fn reanalyze_mem(p: &mut Profile, m: &MemResult, tsc: Option<f64>) -> bool {
    let prefix = ["mem.latency", "mem", "loaded.0"]
        .into_iter()
        .find(|pre| !thread_curves(p, pre).is_empty());
    let Some(pre) = prefix else {
        return false;
    };
    let curves = thread_curves(p, pre);
    let r: Vec<&RawCurve> = curves.iter().collect();
    let mut new = summarize(m, &r, tsc);
    new.preemptions = m.preemptions;
    new.numa_matrix = m.numa_matrix.clone();
    p.mem = Some(new);
    true
}

/// Every NUMA matrix cell that has its raw curve (`numa.c{cpu}.n{mem}`).
fn reanalyze_matrix(p: &Profile, m: &MemResult, matrix: &mut [NumaLatency], tsc: Option<f64>) -> bool {
    let mut any = false;
    for cell in matrix.iter_mut() {
        let curves = thread_curves(p, &format!("numa.c{}.n{}", cell.cpu_node, cell.mem_node));
        if curves.is_empty() {
            continue;
        }
        let r: Vec<&RawCurve> = curves.iter().collect();
        let tpl = template("random", "chase", m.size_bytes as usize, true, 1);
        let x = summarize(&tpl, &r, tsc);
        cell.ns_per_op = x.ns_per_op;
        cell.clk_per_op = x.clk_per_op.is_finite().then_some(x.clk_per_op);
        any = true;
    }
    any
}

/// Every bandwidth point from its curves (`hwcal run`'s `mem.*` or a sweep's
/// `bw.*`); a basic sequential run's one point has no curves of its own and
/// takes the recomputed `mem` figure.
fn reanalyze_scaling(p: &Profile, bw: &mut Bandwidth, tsc: Option<f64>) -> bool {
    let mut any = false;
    let basic = p.mem.as_ref().filter(|m| m.access_pattern == "sequential");
    for pt in bw.scaling.iter_mut() {
        let mut curves = thread_curves(p, &format!("mem.{}.{}t", pt.op, pt.threads));
        if curves.is_empty() {
            curves = thread_curves(p, &format!("bw.{}.{}t", pt.op, pt.threads));
        }
        if !curves.is_empty() {
            let r: Vec<&RawCurve> = curves.iter().collect();
            let tpl = template("sequential", &pt.op, bw.size_bytes as usize, true, curves.len());
            pt.bytes_per_sec = summarize(&tpl, &r, tsc).bytes_per_sec;
            any = true;
        } else if let Some(m) = basic.filter(|m| m.op == pt.op && m.threads == pt.threads) {
            pt.bytes_per_sec = m.bytes_per_sec;
        }
    }
    any
}

/// The headline figures: each op at the largest thread count measured.
fn set_headlines(bw: &mut Bandwidth) {
    for op in ["read", "write", "copy"] {
        if let Some(best) = bw.scaling.iter().filter(|s| s.op == op).max_by_key(|s| s.threads) {
            let v = Some(best.bytes_per_sec);
            match op {
                "read" => bw.read_bytes_per_sec = v,
                "write" => bw.write_bytes_per_sec = v,
                _ => bw.copy_bytes_per_sec = v,
            }
        }
    }
}

/// The memory-level-parallelism points (`mlp.{k}`), speedups relative to
/// the first point recomputed.
fn reanalyze_mlp(p: &Profile, bw: &mut Bandwidth, tsc: Option<f64>) -> bool {
    let mut any = false;
    let mut base = None;
    for m in bw.mlp.iter_mut() {
        let curves = thread_curves(p, &format!("mlp.{}", m.chains));
        if curves.is_empty() {
            continue;
        }
        let r: Vec<&RawCurve> = curves.iter().collect();
        let tpl = template("random", "chains", bw.size_bytes as usize, true, 1);
        m.ns_per_load = summarize(&tpl, &r, tsc).ns_per_op;
        let b = *base.get_or_insert(m.ns_per_load);
        m.speedup = b / m.ns_per_load;
        any = true;
    }
    any
}

/// The loaded-latency points (`loaded.{s}`): thread 0 is the chaser, the
/// others the streams whose bandwidth is summed.
fn reanalyze_loaded(p: &Profile, bw: &mut Bandwidth, tsc: Option<f64>) -> bool {
    let mut any = false;
    for l in bw.loaded_latency.iter_mut() {
        let curves = thread_curves(p, &format!("loaded.{}", l.streaming_threads));
        if curves.is_empty() {
            continue;
        }
        let r: Vec<&RawCurve> = curves.iter().collect();
        let tpl = template("random", "chase", bw.size_bytes as usize, true, curves.len());
        let x = summarize(&tpl, &r, tsc);
        let chaser = &x.per_thread[0];
        l.latency_ns = chaser.ns_per_op;
        l.latency_cycles = chaser.clk_per_op.is_finite().then_some(chaser.clk_per_op);
        l.stream_bytes_per_sec = x.per_thread[1..].iter().fold(0.0, |a, t| a + t.bytes_per_sec);
        any = true;
    }
    any
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

/// Why a mem figure is marked noisy, naming what triggered it.
fn noisy_note(m: &MemResult) -> Option<String> {
    use hwcal_analysis::mem::{MIN_ONCPU, NOISY_REL};
    if m.verdict != hwcal_model::Verdict::Noisy {
        return None;
    }
    let mut why = Vec::new();
    if let Some(f) = m.oncpu_fraction.filter(|&f| f < MIN_ONCPU) {
        why.push(format!(
            "the measuring threads were on the CPU only {:.0}% of the time ({} preemption(s))",
            f * 100.0,
            m.preemptions.unwrap_or(0)
        ));
    }
    if let Some(s) = m.slice_ns_per_op.as_ref().filter(|s| s.median > 0.0) {
        let rel = s.mad / s.median;
        let gap = (m.ns_per_op - s.median).abs() / s.median;
        if rel > NOISY_REL {
            why.push(format!(
                "the timing slices spread by {:.0}% (MAD/median)",
                rel * 100.0
            ));
        }
        if gap > NOISY_REL {
            why.push(format!(
                "the mean ({:.1} ns/op) is {:.0}% off the median slice ({:.1})",
                m.ns_per_op,
                gap * 100.0,
                s.median
            ));
        }
    }
    if why.is_empty() {
        why.push("too few timing slices to judge".into());
    }
    Some(format!(
        "mem: noisy: {}; the machine was busy, rerun on a quiet machine (meanwhile the on-CPU figure{} is the better estimate)",
        why.join("; "),
        m.oncpu_ns_per_op.map_or(String::new(), |v| format!(", {v:.1} ns/op,"))
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affinity_is_micbench_syntax() {
        assert_eq!(
            parse_affinity("0:c0:0"),
            Ok(Affinity {
                tid: 0,
                cpu: 0,
                node: 0
            })
        );
        assert_eq!(
            parse_affinity("3:c17:1"),
            Ok(Affinity {
                tid: 3,
                cpu: 17,
                node: 1
            })
        );
        for bad in [
            "", "0", "0:0:0", "0:c0", "0:c0:0:0", "a:c0:0", "0:c:0", "0:cx:0", "0:c0:", "-1:c0:0", "0:c-1:0",
            "0:c0:n1",
        ] {
            let e = parse_affinity(bad).unwrap_err();
            assert!(e.contains("TID:cCPU:NODE"), "{bad}: {e}");
        }
    }

    #[test]
    fn seconds() {
        assert_eq!(parse_secs("0.5"), Ok(0.5));
        assert_eq!(parse_secs("10"), Ok(10.0));
        for bad in ["0", "-1", "nan", "inf", "x", "1e9"] {
            assert!(parse_secs(bad).is_err(), "{bad}");
        }
    }
}
