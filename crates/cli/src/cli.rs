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
    /// Storage I/O: IOPS, bandwidth and latency percentiles (micbench-io, fio).
    Io(IoArgs),
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

/// Access pattern of `hwcal io` (fio's `rw=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum IoRw {
    Read,
    Write,
    Randread,
    Randwrite,
    /// Sequential, mixed reads and writes (see --rwmix-read).
    Rw,
    /// Random, mixed reads and writes (see --rwmix-read).
    Randrw,
}

/// How `hwcal io` issues I/Os (fio's `ioengine=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum IoEngineArg {
    /// lseek + read/write.
    Sync,
    /// pread/pwrite.
    Psync,
    /// io_uring with --iodepth I/Os in flight per thread.
    #[value(name = "io_uring")]
    IoUring,
}

#[derive(Debug, Args)]
#[command(after_help = "\
PATH is a directory (default: the current one) in which hwcal creates a uniquely named
test file of --size bytes, fills it, and removes it at the end, on error and on Ctrl-C.
PATH may also be an existing file or block device: read patterns use it as it is;
writing into it needs --force (its data is overwritten and it is not removed).

Buffered (non --direct) runs drop the file's pages from the page cache before the run and
at the start of every pass over the file, as fio does (invalidate=1), so they measure the
device behind readahead and write-back, not memory. Use --direct to measure the device alone.")]
pub struct IoArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Directory for the test file, or an existing file or block device.
    pub path: Option<std::path::PathBuf>,
    /// Access pattern.
    #[arg(long, value_enum, default_value_t = IoRw::Randread)]
    pub rw: IoRw,
    /// Percentage of reads for --rw rw|randrw (default 50).
    #[arg(long, value_name = "P", value_parser = clap::value_parser!(u32).range(0..=100))]
    pub rwmix_read: Option<u32>,
    /// Block size of each I/O (k, M, G suffixes, 1024-based).
    #[arg(long, default_value = "4k", value_name = "SIZE")]
    pub bs: String,
    /// Size of the test file, or of the part of an existing file/device used
    /// (default: 1G for a new file, the whole existing file or device).
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Bypass the page cache (O_DIRECT); --bs must be a multiple of 512.
    #[arg(long)]
    pub direct: bool,
    /// I/O engine.
    #[arg(long, value_enum, default_value_t = IoEngineArg::Psync)]
    pub engine: IoEngineArg,
    /// I/Os in flight per thread (io_uring only).
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub iodepth: u32,
    /// Worker threads, each with its own file descriptor (and ring).
    #[arg(short = 'm', long, default_value_t = 1, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=256))]
    pub threads: u32,
    /// Run for SECS seconds, looping over the file; without it each thread
    /// moves its share of --size once.
    #[arg(short = 't', long, value_name = "SECS")]
    pub time: Option<f64>,
    /// Allow writing into an existing file or block device (destroys its data).
    #[arg(long)]
    pub force: bool,
}
