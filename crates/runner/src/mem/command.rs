//! `hwcal mem`'s own measurements (one job, the NUMA matrix, the sweep) as
//! one plan: [`Command`], which the calibration runs like any probe's.

use crate::probe::{Plan, Progress};
use crate::{Result, RunnerError};
use hwcal_analysis::mem_raw::noisy_note;
use hwcal_model::curve::MemSeries;
use hwcal_model::{Bandwidth, BandwidthPoint, MemResult, MemThread, Note, NumaLatency, Profile};
use hwcal_probes::mem::{self as mem_kernels, Job, Prep, Prepared, RunTiming, Work, GRAIN};
use hwcal_probes::numa;
use std::time::Instant;

use super::job::*;
use super::sweep::run_sweep;

/// The default run: one micbench-style measurement.
pub(super) fn run_basic(cfg: &Config, progress: &dyn Progress, p: &mut Profile) -> Result<()> {
    let preps = basic_preps(cfg);
    let (bufs, setup_s) = prepare_timed(progress, &preps, "buffer(s)", cfg.size)?;
    let jobs = basic_jobs(cfg, &bufs);
    let plan = RunTiming {
        duration_ns: cfg.secs * 1e9,
        ..RunTiming::default()
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
pub(super) fn basic_preps(cfg: &Config) -> Vec<Prep> {
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

/// One job per thread of a basic run: a chase (or k chains) from this
/// thread's entry points of the ring, or a stream over its own buffer or its
/// piece of the shared one.
pub(super) fn basic_jobs<'a>(cfg: &Config, bufs: &'a [Prepared]) -> Vec<Job<'a>> {
    let mut jobs = Vec::with_capacity(cfg.threads);
    let shared_pieces = mem_kernels::split(
        bufs[0].buf.len().min(cfg.size.div_ceil(GRAIN) * GRAIN),
        cfg.threads,
    );
    for t in 0..cfg.threads {
        let b = if cfg.local { &bufs[t] } else { &bufs[0] };
        let work = if cfg.random && cfg.chains > 1 {
            // This thread's chains: evenly spaced entry points of the ring.
            let first = if cfg.local { 0 } else { t * cfg.chains };
            let mut starts = [0; mem_kernels::MAX_CHAINS];
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

/// The `op` field of a basic run: the chase kind for random access, the
/// stream op otherwise.
pub(super) fn basic_op(cfg: &Config) -> &'static str {
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
pub(super) fn basic_template(cfg: &Config, bufs: &[Prepared], op: &str, setup_s: f64) -> MemResult {
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
pub(super) fn basic_bandwidth(cfg: &Config, op: &str, bytes_per_sec: f64) -> Bandwidth {
    let mut bw = Bandwidth {
        threads: cfg.threads as u32,
        size_bytes: cfg.size as u64,
        kernel: mem_kernels::isa().name().into(),
        stores: stores(cfg.nontemporal),
        scaling: vec![BandwidthPoint {
            threads: cfg.threads as u32,
            op: op.into(),
            bytes_per_sec,
            ..Default::default()
        }],
        ..Default::default()
    };
    set_headline(&mut bw, cfg.op, bytes_per_sec);
    bw
}

/// `--numa-matrix`: chase latency from one CPU of every node to memory
/// bound to every node.
pub(super) fn run_matrix(cfg: &Config, progress: &dyn Progress, p: &mut Profile) -> Result<()> {
    let cells = numa::plan_matrix(&numa::nodes(), &cfg.allowed);
    if cells.is_empty() {
        return Err(RunnerError::Failed(
            "no NUMA node has both a CPU we may use and memory".into(),
        ));
    }
    let plan = RunTiming {
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
        let bufs = prepared(mem_kernels::prepare_all(&[Prep {
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
            verdict: Some(r.verdict),
            ns_per_op_ci95: r.ns_per_op_ci95,
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

/// `hwcal mem`'s own request as a plan: a validated configuration, the mode,
/// and when the command started (its total time is part of the section).
#[derive(Debug)]
pub struct Command {
    pub cfg: Config,
    pub mode: Mode,
    pub start: Instant,
}

impl Plan for Command {
    fn run(&self, _hw: &dyn crate::points::Hardware, progress: &dyn Progress) -> Result<Profile> {
        let mut p = Profile::default();
        measure_command(&self.cfg, self.mode, progress, &mut p, self.start)?;
        Ok(p)
    }
}
