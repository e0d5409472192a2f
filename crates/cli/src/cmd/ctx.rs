//! `hwcal ctx`: context-switch latency, lmbench lat_ctx's ring of processes
//! and pipes (seed 001), with lat_ctx's options and output format (the
//! probe is `hwcal_runner::ctx`).

use crate::cli::CommonArgs;
use crate::common::{check_db, header, save_if_requested, Progress};
use crate::output::{check_dest, Dest, Outputs};
use anyhow::Result;
use clap::Args;
use hwcal_harness::Timer;
use hwcal_probes::ctx::{Kind, Placement, RingSetup};
use hwcal_report::{CtxTableExporter, JsonExporter, XgraphExporter};
use hwcal_runner::ctx::{Ctx, RingCpus, ENTRY};
use hwcal_runner::machine::from_env;
use hwcal_runner::{calibrate_with, Planned};

/// Where `hwcal ctx` puts the ring members.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CtxCpus {
    /// Every member on one CPU (--cpu, default the highest allowed): each hop is at least one switch.
    Same,
    /// Members round-robin over the allowed CPUs: each hop is a cross-CPU wake-up.
    Spread,
    /// No pinning: the scheduler decides.
    None,
}

#[derive(Debug, Args)]
#[command(after_help = "\
Output: lat_ctx's xgraph format on stdout, one block per size:
  \"size=0k ovr=0.58 placement=same cpus=1 processes P=1
  2 1.30
  4 2.42
The title gives the array size and the overhead subtracted (µs); each line is
the number of processes and the median time per hop (µs), lat_ctx's \"context
switch\". --summary prints min / median ± MAD / max instead, with the switches
per hop the kernel counted (more than 1 when waking the next member preempts
the writer) and µs per real switch; --json FILE the full profile.")]
pub struct CtxArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Parallelism: rings running at once (one is timed while the others load the CPUs).
    #[arg(short = 'P', long = "parallel", default_value_t = 1, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=64))]
    pub parallel: u32,
    /// Warm-up rounds (discarded) before the timed ones.
    #[arg(short = 'W', long = "warmups", default_value_t = 3, value_name = "N",
          value_parser = clap::value_parser!(u32).range(0..=1000))]
    pub warmups: u32,
    /// Repetitions: timed samples (~0.2 ms blocks) per ring size.
    #[arg(short = 'N', long = "repetitions", default_value_t = 101, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub repetitions: u32,
    /// KB of array each process sums before passing the token on (repeat -s or give a list: -s 0,16,64).
    #[arg(
        short = 's',
        long = "size",
        value_name = "KB",
        value_delimiter = ',',
        default_value = "0",
        allow_hyphen_values = true,
        value_parser = hwcal_runner::ctx::parse_kb
    )]
    pub size: Vec<u64>,
    /// Placement of the ring members [default: same, or none with --no-pin].
    #[arg(long, value_enum, value_name = "WHERE")]
    pub cpus: Option<CtxCpus>,
    /// Length of one timed sample, µs (short samples let the median shed preemptions by other tasks).
    #[arg(long, default_value_t = 200, value_name = "US",
          value_parser = clap::value_parser!(u32).range(10..=1_000_000))]
    pub block_us: u32,
    /// Ring of threads of one process instead of processes.
    #[arg(long)]
    pub threads: bool,
    /// Print the summary table (min, median ± MAD, max, switches per hop, µs per switch) instead of xgraph lines.
    #[arg(long)]
    pub summary: bool,
    /// Number of processes in each ring (the timing process counts; 2 or more).
    #[arg(required = true, value_name = "NPROCS")]
    pub nprocs: Vec<u32>,
}

crate::subcommand! { pub COMMAND = "ctx" in Measure: CtxArgs => run,
"Context-switch latency (lmbench lat_ctx): a ring of processes passing a token over pipes" }

fn placement(a: &CtxArgs) -> Result<Placement> {
    let asked = a.cpus.map(|c| match c {
        CtxCpus::Same => RingCpus::Same,
        CtxCpus::Spread => RingCpus::Spread,
        CtxCpus::None => RingCpus::None,
    });
    Ok(hwcal_runner::ctx::placement(
        asked,
        a.common.cpu,
        a.common.no_pin,
    )?)
}

pub fn run(a: CtxArgs) -> Result<()> {
    check_dest(a.common.json.as_deref())?;
    check_db(a.common.save)?;
    let progress = Progress::new(a.common.quiet);
    let placement = placement(&a)?;
    let plan = RingSetup {
        nprocs: a.nprocs.clone(),
        parallel: a.parallel,
        warmups: a.warmups,
        repetitions: a.repetitions,
        placement,
        kind: if a.threads { Kind::Threads } else { Kind::Processes },
        enough_ns: a.block_us as f64 * 1e3,
    };
    let mut sizes: Vec<u64> = Vec::new();
    for &s in &a.size {
        if !sizes.contains(&s) {
            sizes.push(s);
        }
    }
    hwcal_runner::ctx::check_limits(&plan, &sizes)?;
    let _ = Timer::get();
    let cpu = plan.placement.cpu_of(0);
    let ctx_plan = Ctx {
        sizes_kb: sizes,
        rounds: 1,
        ring: plan,
    };
    let planner = move |_: &_| -> Vec<Planned> { vec![(ENTRY, Box::new(ctx_plan))] };
    let p = calibrate_with(from_env().as_ref(), header(cpu), &[ENTRY], planner, &progress)?;
    if let Some(cs) = &p.context_switch {
        progress.say(&format!("ctx: done in {:.2} s", cs.duration_ms / 1e3));
    }
    for n in &p.notes {
        crate::say!("note: {n}");
    }
    let json = a.common.json.as_deref();
    let mut outputs = Outputs::default();
    if json != Some("-") {
        match a.summary {
            true => outputs.add(CtxTableExporter, Dest::Stdout),
            false => outputs.add(XgraphExporter, Dest::Stdout),
        };
    }
    if let Some(path) = json {
        let path = path.to_string();
        outputs.add(JsonExporter, Dest::File { flag: "--json", path });
    }
    outputs.write(&p)?;
    save_if_requested(&p, a.common.save).map(drop)
}
