//! `hwcal mem`: micbench-mem in Rust (the probe is `hwcal_runner::mem`).
//! This module parses and validates the flags (`-a TID:cCPU:NODE`
//! affinity, NUMA nodes, sizes against available memory) into a plain
//! `hwcal_runner::mem::Config`.

use crate::cli::CommonArgs;
use crate::common::{check_db, header, save_if_requested, Progress};
use crate::output::{check_dest, emit};
use anyhow::Result;
use clap::Args;
use hwcal_probes::buffer::Backing;
use hwcal_probes::numa;
use hwcal_runner::machine::from_env;
use hwcal_runner::mem::{placement, Command, Config, Mode, ENTRY};
use hwcal_runner::{calibrate_with, Planned};
use std::time::Instant;

/// Sequential operation of `hwcal mem`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MemOp {
    Read,
    Write,
    Copy,
}
#[derive(Debug, Args)]
pub struct MemArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Number of threads (micbench's multiplicity) [default: 1; with --sweep: every allowed CPU].
    #[arg(short = 'm', long = "threads", value_name = "N")]
    pub threads: Option<u32>,
    /// Seconds to measure (fractions allowed); buffer setup comes on top.
    #[arg(short = 't', long = "time", value_name = "SECS", default_value = "2")]
    pub time: String,
    /// Random access: a dependent pointer chase (latency). Default: sequential (bandwidth).
    #[arg(short = 'R', long)]
    pub random: bool,
    /// Sequential operation.
    #[arg(long, value_enum, default_value = "read", conflicts_with = "random")]
    pub op: MemOp,
    /// Buffer size, 1024-based suffixes k/M/G (e.g. 32K, 128KB, 1G).
    #[arg(
        short = 's',
        long,
        value_name = "SIZE",
        default_value = "256M",
        allow_hyphen_values = true
    )]
    pub size: String,
    /// Thread TID runs on CPU and its memory is bound to NUMA NODE (repeatable), e.g. -a 0:c0:0.
    #[arg(short = 'a', long = "affinity", value_name = "TID:cCPU:NODE")]
    pub affinity: Vec<String>,
    /// One buffer of SIZE per thread (default: one shared buffer of SIZE).
    #[arg(short = 'L', long)]
    pub local: bool,
    /// Back buffers with transparent huge pages (verified in /proc/self/smaps).
    #[arg(long, conflicts_with = "hugetlbfile")]
    pub hugepages: bool,
    /// Back buffers with a file on a hugetlbfs mount (a directory on it, or a file path in it).
    #[arg(long, value_name = "PATH")]
    pub hugetlbfile: Option<std::path::PathBuf>,
    /// Write and copy with non-temporal (streaming) stores instead of regular ones.
    #[arg(long, conflicts_with = "random")]
    pub nontemporal: bool,
    /// Bandwidth sweep: read, write, copy with 1..N threads, then loaded latency
    /// (one chasing thread while the others stream); -t is shared among the points.
    #[arg(long, conflicts_with_all = ["random", "numa_matrix"])]
    pub sweep: bool,
    /// Latency from every CPU node to every memory node (random chase); -t is shared among the cells.
    #[arg(long)]
    pub numa_matrix: bool,
    /// With -R: each thread follows K independent chases at once (1, 2, 4, 8, 16): time per
    /// load then shows memory-level parallelism instead of latency.
    #[arg(long, value_name = "K", default_value_t = 1, requires = "random")]
    pub chains: usize,
    /// After the summary (in words), every recorded key and value (micbench's -v): the whole
    /// result, one line per thread, per NUMA cell and per bandwidth point.
    #[arg(short = 'v', long)]
    pub verbose: bool,
    /// After the summary, micbench's key block (access_pattern, multiplicity, clk_per_op...).
    #[arg(long)]
    pub micbench: bool,
}

crate::subcommand! { pub COMMAND = "mem" in Measure: MemArgs => run,
"Memory latency and bandwidth (micbench-mem): random chase or sequential read/write/copy" }

// ---------------------------------------------------------------------------
// Configuration.

fn mode(a: &MemArgs) -> Mode {
    if a.sweep {
        Mode::Sweep
    } else if a.numa_matrix {
        Mode::NumaMatrix
    } else {
        Mode::Basic
    }
}

fn configure(a: &MemArgs) -> Result<Config> {
    let allowed = hwcal_harness::pin::allowed_cpus();
    let (threads, secs, size) =
        placement::parse_scalars(a.threads, a.sweep, &a.time, &a.size, a.chains, &allowed)?;
    let backing = match (&a.hugetlbfile, a.hugepages) {
        (Some(p), _) => Backing::HugetlbFile(placement::hugetlb_dir(p)?),
        (None, true) => Backing::Thp,
        (None, false) => Backing::Small,
    };
    let nodes = numa::nodes();
    let mem_nodes: Vec<u32> = nodes.iter().filter(|n| n.has_memory).map(|n| n.id).collect();
    let all_nodes: Vec<u32> = nodes.iter().map(|n| n.id).collect();
    let mut places = placement::default_places(a.common.cpu, a.common.no_pin, &allowed, threads)?;
    placement::apply_affinity(
        &a.affinity,
        threads,
        &allowed,
        &all_nodes,
        &mem_nodes,
        &mut places,
    )?;
    let cfg = Config {
        threads,
        secs,
        size: size as usize,
        random: a.random,
        op: match a.op {
            MemOp::Read => hwcal_runner::mem::MemOp::Read,
            MemOp::Write => hwcal_runner::mem::MemOp::Write,
            MemOp::Copy => hwcal_runner::mem::MemOp::Copy,
        },
        local: a.local || a.sweep,
        backing,
        nontemporal: a.nontemporal,
        chains: a.chains,
        places,
        mem_nodes,
        allowed,
    };
    cfg.check_fits(size, mode(a), &a.size)?;
    Ok(cfg)
}

pub fn run(a: MemArgs) -> Result<()> {
    let start = Instant::now();
    check_dest(a.common.json.as_deref())?;
    check_db(a.common.save)?;
    let cfg = configure(&a)?;
    let progress = Progress::new(a.common.quiet);
    let cpu = cfg.places[0].cpu;
    let mode = mode(&a);
    let command = Command { cfg, mode, start };
    let planner = move |_: &_| -> Vec<Planned> { vec![(ENTRY, Box::new(command))] };
    let p = calibrate_with(from_env().as_ref(), header(cpu), &[ENTRY], planner, &progress)?;
    emit(&p, a.common.json.as_deref())?;
    let keys = p
        .mem
        .as_ref()
        .filter(|_| a.micbench && a.common.json.as_deref() != Some("-"));
    if let Some(m) = keys {
        crate::out!("{}", hwcal_report::text::micbench(m));
    }
    if a.verbose && a.common.json.as_deref() != Some("-") {
        crate::out!("{}", hwcal_report::verbose::dump(&p)?);
    }
    save_if_requested(&p, a.common.save)?;
    Ok(())
}
