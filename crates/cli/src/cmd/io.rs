//! `hwcal io`: storage IOPS, bandwidth and latency percentiles, the jobs of
//! micbench-io with fio's vocabulary (rw, bs, size, direct, ioengine,
//! iodepth). This module validates the flags into a plain
//! `hwcal_runner::io::IoSpec`; the runner owns the test file's life cycle.

use crate::cli::CommonArgs;
use crate::common::{check_db, header, save_if_requested, Progress};
use crate::output::{check_dest, emit};
use anyhow::Result;
use clap::Args;
use hwcal_probes::io::{Engine, Pattern};
use hwcal_runner::io::{worker_cpus, IoSpec, ENTRY};
use hwcal_runner::machine::from_env;
use hwcal_runner::{calibrate_with, Planned};
use std::path::PathBuf;

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

crate::subcommand! { pub COMMAND = "io" in Measure: IoArgs => |a: IoArgs| run(a.normalize()),
"Storage I/O: IOPS, bandwidth and latency percentiles (micbench-io, fio)" }

fn pattern(rw: IoRw) -> Pattern {
    match rw {
        IoRw::Read => Pattern::Read,
        IoRw::Write => Pattern::Write,
        IoRw::Randread => Pattern::RandRead,
        IoRw::Randwrite => Pattern::RandWrite,
        IoRw::Rw => Pattern::ReadWrite,
        IoRw::Randrw => Pattern::RandRw,
    }
}

fn engine(e: IoEngineArg) -> Engine {
    match e {
        IoEngineArg::Sync => Engine::Sync,
        IoEngineArg::Psync => Engine::Psync,
        IoEngineArg::IoUring => Engine::IoUring,
    }
}

pub fn run(a: IoArgs) -> Result<()> {
    check_dest(a.common.json.as_deref())?;
    check_db(a.common.save)?;
    let progress = Progress::new(a.common.quiet);
    let spec = validate(&a)?;
    // The worker threads' first CPU is the one the harness section names.
    let cpu = spec.cpus.first().copied();
    let planner = move |_: &_| -> Vec<Planned> { vec![(ENTRY, Box::new(spec))] };
    let p = calibrate_with(from_env().as_ref(), header(cpu), &[ENTRY], planner, &progress)?;
    emit(&p, a.common.json.as_deref())?;
    save_if_requested(&p, a.common.save).map(drop)
}

/// Check the flags that need no filesystem: block size (O_DIRECT needs
/// 512-byte multiples), --size, --time, and the options that only some
/// engines or patterns honour, so a request is refused rather than
/// silently run as something else.
fn validate(a: &IoArgs) -> Result<IoSpec> {
    let pat = pattern(a.rw);
    let eng = engine(a.engine);
    let (bs, size) = hwcal_runner::io::parse_sizes(&a.bs, a.size.as_deref())?;
    let spec = IoSpec {
        path: a.path.clone().unwrap_or_else(|| PathBuf::from(".")),
        pattern: pat,
        rwmix_read: a.rwmix_read,
        bs,
        size,
        direct: a.direct,
        engine: eng,
        iodepth: a.iodepth,
        threads: a.threads,
        time: a.time,
        force: a.force,
        allow_mounted_write: a.allow_mounted_write,
        cpus: worker_cpus(a.common.cpu, a.common.no_pin)?,
    };
    spec.check()?;
    Ok(spec)
}
