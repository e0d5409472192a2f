//! The I/O probe's job description (fio's `rw=`, `ioengine=`, `bs=`, ...),
//! its errors and its per-thread and per-run results.

use hwcal_harness::Histogram;
use std::time::Duration;

/// Access pattern (fio's `rw=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    Read,
    Write,
    RandRead,
    RandWrite,
    /// Sequential mixed reads and writes.
    ReadWrite,
    /// Random mixed reads and writes.
    RandRw,
}

impl Pattern {
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Read => "read",
            Pattern::Write => "write",
            Pattern::RandRead => "randread",
            Pattern::RandWrite => "randwrite",
            Pattern::ReadWrite => "rw",
            Pattern::RandRw => "randrw",
        }
    }
    pub fn random(self) -> bool {
        matches!(self, Pattern::RandRead | Pattern::RandWrite | Pattern::RandRw)
    }
    pub fn mixed(self) -> bool {
        matches!(self, Pattern::ReadWrite | Pattern::RandRw)
    }
    /// Whether the job writes to the target.
    pub fn writes(self) -> bool {
        !matches!(self, Pattern::Read | Pattern::RandRead)
    }
    /// Percentage of reads, given the mix asked for mixed patterns.
    pub fn read_pct(self, rwmix_read: u32) -> u32 {
        match self {
            Pattern::Read | Pattern::RandRead => 100,
            Pattern::Write | Pattern::RandWrite => 0,
            _ => rwmix_read.min(100),
        }
    }
}

/// How I/Os are issued (fio's `ioengine=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Sync,
    Psync,
    IoUring,
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Sync => "sync",
            Engine::Psync => "psync",
            Engine::IoUring => "io_uring",
        }
    }
}

/// One I/O job.
#[derive(Debug, Clone)]
pub struct IoJob {
    pub pattern: Pattern,
    /// Percentage of reads for mixed patterns (ignored otherwise).
    pub rwmix_read: u32,
    /// Block size, bytes.
    pub bs: u64,
    /// Bytes of the target the job works on, from offset 0; a multiple of `bs`.
    pub size: u64,
    pub direct: bool,
    pub engine: Engine,
    /// I/Os in flight per thread (io_uring only; 1 otherwise).
    pub iodepth: u32,
    pub threads: u32,
    /// Run for this long (looping over the file); `None`: each thread moves
    /// its share of `size` once (size-bound).
    pub time_limit: Option<Duration>,
    /// Pin thread i to `cpus[i % len]` (empty: no pinning).
    pub cpus: Vec<usize>,
}

/// Errors of the I/O probe.
#[derive(Debug, thiserror::Error)]
pub enum IoError {
    /// The job cannot run as asked on this target or system (O_DIRECT
    /// refused, io_uring unavailable, no space): the user has to change it.
    #[error("{0}")]
    Refused(String),
    /// The stop flag was raised (SIGINT/SIGTERM) before the job finished.
    #[error("interrupted")]
    Interrupted,
    #[error("{0}: {1}")]
    Os(String, std::io::Error),
}

pub(super) fn os(ctx: impl Into<String>, e: std::io::Error) -> IoError {
    IoError::Os(ctx.into(), e)
}

/// Figures of one worker thread.
#[derive(Debug, Clone)]
pub struct ThreadStats {
    pub tid: u32,
    pub read_ios: u64,
    pub write_ios: u64,
    pub bytes: u64,
    /// From the common start to this thread's last completion, ns.
    pub elapsed_ns: f64,
    /// Per-I/O latency, ns.
    pub hist: Histogram,
}

impl ThreadStats {
    pub fn ios(&self) -> u64 {
        self.read_ios + self.write_ios
    }
}

/// Result of [`run`].
#[derive(Debug, Clone)]
pub struct IoRun {
    pub threads: Vec<ThreadStats>,
    /// From the common start until the last thread finished, ns.
    pub wall_ns: f64,
    /// I/Os completed in each reporting interval (see [`run`]'s `tick`).
    pub interval_ios: Vec<u64>,
    pub interval_s: f64,
}

impl IoRun {
    /// All threads' latencies together.
    pub fn total_hist(&self) -> Histogram {
        let mut h = Histogram::new();
        for t in &self.threads {
            h.merge(&t.hist);
        }
        h
    }
    pub fn ios(&self) -> u64 {
        self.threads.iter().map(|t| t.ios()).sum()
    }
    pub fn bytes(&self) -> u64 {
        self.threads.iter().map(|t| t.bytes).sum()
    }
}
