//! Command-line definition (clap). Validation beyond syntax happens in
//! `common` and the command modules, into plain config structs.

use clap::{Args, Parser, Subcommand};

pub const AFTER_HELP: &str = "\
Exit status:
  0  success (figures the machine was too noisy to measure are still printed, marked \"noisy\")
  1  a measurement or file operation failed
  2  invalid usage or input (bad flag, value, CPU, size, path)

Every measuring command pins itself to one CPU (the highest allowed) unless
--cpu or --no-pin says otherwise, and writes its figures as a JSON profile with
--json FILE (\"-\" for stdout, which then replaces the text summary).";

/// hwcal: measure what this machine really does.
///
/// Core clock, caches, TLBs, memory, context switches and I/O, each figure
/// with its spread and a noise verdict.
#[derive(Debug, Parser)]
#[command(name = "hwcal", version, about, long_about = None, after_help = AFTER_HELP)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The full calibration: machine info and every registered probe.
    Run(RunArgs),
    /// What the OS and CPUID say about this machine (nothing measured).
    Info(InfoArgs),
    /// Core clock by two methods (lmbench mhz's GCD and a dependent add chain), and the TSC.
    Clock(ClockArgs),
    /// Re-run the analysis on a saved JSON profile's raw data.
    Analyze(AnalyzeArgs),
    /// Memory latency and bandwidth (micbench-mem): random chase or sequential read/write/copy.
    Mem(MemArgs),
}

/// Options every measuring command shares.
#[derive(Debug, Args, Clone, Default)]
pub struct CommonArgs {
    /// Write the JSON profile to FILE ("-" for stdout).
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Pin the measuring thread to this CPU (default: the highest allowed CPU).
    #[arg(long, value_name = "N", conflicts_with = "no_pin")]
    pub cpu: Option<usize>,
    /// Do not pin the measuring thread.
    #[arg(long)]
    pub no_pin: bool,
    /// No progress messages on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Run only these probes (comma-separated; see --list).
    #[arg(long, value_delimiter = ',', value_name = "PROBES")]
    pub only: Vec<String>,
    /// Skip these probes (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "PROBES")]
    pub skip: Vec<String>,
    /// List the registered probes and exit.
    #[arg(long)]
    pub list: bool,
}

#[derive(Debug, Args)]
pub struct InfoArgs {
    /// Write the JSON profile to FILE ("-" for stdout).
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
}

#[derive(Debug, Args)]
pub struct ClockArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Batches to collect; each gives one estimate per method (more = longer, steadier).
    #[arg(long, default_value_t = 24, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub batches: u32,
    /// Attempts before reporting "noisy" (like mhz's retries before "too busy").
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub retries: u32,
}

#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// A JSON profile written by `hwcal ... --json`.
    pub file: std::path::PathBuf,
    /// Write the re-analysed profile to FILE ("-" for stdout).
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
}

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
    #[arg(short = 's', long, value_name = "SIZE", default_value = "256M")]
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
}
