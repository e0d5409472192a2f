//! The arguments of the two lmbench/fio-style commands, `ctx` and `io`,
//! whose flags keep those tools' names and meanings.

use super::common_args::CommonArgs;
use clap::Args;

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
        value_parser = parse_kb
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

fio's names for the same options work too: --ioengine, --runtime, --rwmixread, --numjobs,
--filename=PATH, --direct=1.

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
    #[arg(long, visible_alias = "rwmixread", value_name = "P", value_parser = clap::value_parser!(u32).range(0..=100))]
    pub rwmix_read: Option<u32>,
    /// Block size of each I/O (k, M, G suffixes, 1024-based).
    #[arg(long, default_value = "4k", value_name = "SIZE", allow_hyphen_values = true)]
    pub bs: String,
    /// Size of the test file, or of the part of an existing file/device used
    /// (default: 1G for a new file, the whole existing file or device).
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub size: Option<String>,
    /// Bypass the page cache (O_DIRECT); --bs must be a multiple of 512. fio's --direct=1 and
    /// --direct=0 are accepted too.
    #[arg(long, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", default_value = "false", hide_default_value = true,
          value_name = "0|1", value_parser = clap::builder::BoolishValueParser::new())]
    pub direct: bool,
    /// I/O engine.
    #[arg(long, visible_alias = "ioengine", value_enum, default_value_t = IoEngineArg::Psync)]
    pub engine: IoEngineArg,
    /// I/Os in flight per thread (io_uring only).
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub iodepth: u32,
    /// Worker threads, each with its own file descriptor (and ring).
    #[arg(short = 'm', long, visible_alias = "numjobs", default_value_t = 1, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=256))]
    pub threads: u32,
    /// Run for SECS seconds, looping over the file; without it each thread
    /// moves its share of --size once.
    #[arg(short = 't', long, visible_alias = "runtime", value_name = "SECS")]
    pub time: Option<f64>,
    /// Allow writing into an existing file or block device (destroys its data).
    #[arg(long)]
    pub force: bool,
    /// PATH given fio's way (--filename=PATH) instead of as the positional argument.
    #[arg(long, value_name = "PATH", conflicts_with = "path")]
    pub filename: Option<std::path::PathBuf>,
    /// With --force: allow writing into a block device that is mounted, used as swap or held
    /// by another device, or whose partitions are (destroys the filesystem; fio's
    /// allow_mounted_write).
    #[arg(long, requires = "force")]
    pub allow_mounted_write: bool,
}

impl IoArgs {
    /// Fold fio's `--filename` into the positional PATH.
    pub fn normalize(mut self) -> Self {
        if self.path.is_none() {
            self.path = self.filename.take();
        }
        self
    }
}

/// A whole number of KB (`hwcal ctx -s`), with a clear word for a negative one.
fn parse_kb(s: &str) -> Result<u64, String> {
    if s.trim().starts_with('-') {
        return Err(format!("'{s}': a size cannot be negative"));
    }
    s.trim()
        .parse()
        .map_err(|_| format!("'{s}': not a whole number of KB"))
}
