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
use hwcal_probes::buffer::{Backing, HUGE_PAGE, SMALL_PAGE};
use hwcal_probes::mem::{self as pm, Job, Prep, Prepared, RunPlan, Work, GRAIN, LINE};
use hwcal_probes::numa;
use std::time::Instant;

/// In `hwcal run`: a short memory section (≈1.5 s): latency over 256 MiB on
/// huge pages, then read bandwidth with one thread and with every CPU.
pub const ENTRY: ProbeEntry = ProbeEntry {
    id: "mem",
    description: "memory latency (random chase, huge pages) and read bandwidth (1 and all threads)",
    opt_in: false,
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
        SMALL_PAGE
    } else {
        HUGE_PAGE
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
        p.notes.push(Note::warning(
"mem",
"thp_partial",
format!(
            "mem: transparent huge pages were requested but only {:.0}% of the memory got them (THP mode, fragmentation); figures mix in 4 KiB page walks",
            frac * 100.0
        )));
    }
    if cfg.random && !huge && cfg.size > 8 << 20 {
        p.notes.push(Note::warning(
"mem",
"tlb_reach",
format!(
            "mem: 4 KiB pages: the {} buffer spans {} pages, far beyond the reach of the second-level TLB (~2048 entries × 4 KiB = 8 MiB on recent x86 cores), so most loads also pay a page walk: this latency is DRAM plus TLB misses. Add --hugepages for DRAM latency alone.",
            human_bytes(cfg.size as u64),
            cfg.size / SMALL_PAGE
        )));
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

fn numa_note(mem_nodes: usize, p: &mut Profile) {
    if mem_nodes <= 1 {
        p.notes.push(Note::info(
            "mem",
            "one_numa_node",
            "mem: this machine has one NUMA node with memory: every access is local, remote-memory latency cannot be measured here",
        ));
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
    progress: &'a dyn Progress,
}

/// `--sweep`: read, write, copy at 1..N threads, then loaded latency.
fn run_sweep(cfg: &Config, progress: &dyn Progress, p: &mut Profile) -> Result<()> {
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
                let label = MemSeries::Sweep {
                    op: op_name(op).into(),
                    threads: k as u32,
                };
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
            let r = measure(
                &MemSeries::Loaded { streams: s as u32 },
                &jobs,
                &self.plan,
                tpl,
                &mut p.raw,
            )?;
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
            let r = measure(
                &MemSeries::Mlp { chains: k as u32 },
                &jobs,
                &self.plan,
                tpl,
                &mut p.raw,
            )?;
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

// ---------------------------------------------------------------------------
// `hwcal run`'s short section and offline re-analysis.

const SHORT_SIZE: usize = 256 << 20;

/// `hwcal run`'s memory section: chase latency on a THP buffer, then read
/// bandwidth with one thread and with every pinnable CPU.
fn run_short(cpus: &[usize], pinned: Option<usize>, progress: &dyn Progress, p: &mut Profile) -> Result<()> {
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
    let lat = measure(&MemSeries::Latency, &jobs, &lat_plan, tpl, &mut p.raw)?;
    let bw = short_bandwidth(&order, &bufs, stream, &plan, p)?;
    if !huge {
        p.notes.push(Note::warning(
            "mem",
            "latency_not_huge",
            format!(
                "mem: only {:.0}% of the latency buffer got huge pages: the latency includes TLB misses",
                frac * 100.0
            ),
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
            &MemSeries::Run {
                op: "read".into(),
                threads: k as u32,
            },
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
