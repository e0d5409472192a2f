//! What a memory run does: each thread's work and assignment, the run's
//! timing, what it returns, the check that no two jobs race on a range, and
//! the split of a range into per-thread pieces.

use super::kernels::{GRAIN, LINE};
use crate::buffer::Buffer;
use crate::error::ProbeError;

/// Most independent chains one thread follows at once.
pub const MAX_CHAINS: usize = 16;

/// What one thread does for the whole run.
#[derive(Debug, Clone, Copy)]
pub enum Work<'a> {
    /// Dependent chase from `start` (an entry point from [`build_ring`] on `buf`).
    Chase { buf: &'a Buffer, start: usize },
    /// `k` independent chases at once (entry points `starts[..k]`, k one of
    /// 1, 2, 4, 8, 16): loads of different chains overlap, so time per load
    /// shows the memory-level parallelism (lmbench `par_mem`, multichase -p).
    Chains {
        buf: &'a Buffer,
        starts: [usize; MAX_CHAINS],
        k: usize,
    },
    /// Stream-read `[off, off+len)` over and over.
    Read { buf: &'a Buffer, off: usize, len: usize },
    /// Stream-write `[off, off+len)`: regular stores (read-for-ownership
    /// plus write-back: what most programs do) or non-temporal ones.
    Write {
        buf: &'a Buffer,
        off: usize,
        len: usize,
        nontemporal: bool,
    },
    /// Copy `[src, src+len)` to `[dst, dst+len)`.
    Copy {
        buf: &'a Buffer,
        src: usize,
        dst: usize,
        len: usize,
        nontemporal: bool,
    },
}

impl Work<'_> {
    pub fn name(&self) -> &'static str {
        match self {
            Work::Chase { .. } => "chase",
            Work::Chains { .. } => "chains",
            Work::Read { .. } => "read",
            Work::Write { .. } => "write",
            Work::Copy { .. } => "copy",
        }
    }

    fn buf(&self) -> &Buffer {
        match self {
            Work::Chase { buf, .. }
            | Work::Chains { buf, .. }
            | Work::Read { buf, .. }
            | Work::Write { buf, .. }
            | Work::Copy { buf, .. } => buf,
        }
    }

    /// Byte ranges (offset, length) read and written.
    fn ranges(&self) -> (Vec<Range>, Vec<Range>) {
        match *self {
            Work::Chase { buf, .. } | Work::Chains { buf, .. } => (vec![(0, buf.len())], vec![]),
            Work::Read { off, len, .. } => (vec![(off, len)], vec![]),
            Work::Write { off, len, .. } => (vec![], vec![(off, len)]),
            Work::Copy { src, dst, len, .. } => (vec![(src, len)], vec![(dst, len)]),
        }
    }
}

/// A byte range of a buffer: (offset, length).
type Range = (usize, usize);

/// One thread's assignment.
#[derive(Debug, Clone, Copy)]
pub struct Job<'a> {
    pub cpu: Option<usize>,
    pub work: Work<'a>,
}

/// Timing of the run.
#[derive(Debug, Clone, Copy)]
pub struct RunTiming {
    /// Measured time per thread, ns.
    pub duration_ns: f64,
    /// Length of one slice (one clock reading per slice boundary), ns.
    pub slice_ns: f64,
    /// Spin at most this long before the start so the core clock settles.
    pub warm_up_ms: u64,
}

impl Default for RunTiming {
    fn default() -> Self {
        RunTiming {
            duration_ns: 1e9,
            slice_ns: 20e6,
            warm_up_ms: 100,
        }
    }
}

/// One slice of one thread.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slice {
    /// Operations (lines) completed.
    pub ops: u64,
    /// Wall time, ns (TSC-timed).
    pub ns: f64,
    /// TSC ticks (micbench's "clk"); equals ns on a non-TSC timer.
    pub ticks: f64,
    /// Core clock across the slice: mean of the readings before and after, MHz.
    pub mhz: f64,
    /// Time the thread was actually on its CPU during the slice, ns
    /// (`CLOCK_THREAD_CPUTIME_ID`); less than `ns` when other processes took
    /// the CPU. NaN if unavailable.
    pub cpu_ns: f64,
}

/// Everything one thread measured.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadRun {
    pub cpu: Option<usize>,
    pub work: &'static str,
    pub slices: Vec<Slice>,
    /// Involuntary context switches during the timed part (preemptions).
    pub preemptions: Option<u64>,
}

fn overlaps(a: (usize, usize), b: (usize, usize)) -> bool {
    a.0 < b.0 + b.1 && b.0 < a.0 + a.1
}

/// Check every job's ranges: inside its buffer, aligned for the kernels, and
/// no range written by one job touched by another (no data races).
pub fn validate(jobs: &[Job]) -> Result<(), ProbeError> {
    let bad = |m: String| Err(ProbeError::InvalidInput(m));
    for (i, j) in jobs.iter().enumerate() {
        let b = j.work.buf();
        let starts: &[usize] = match &j.work {
            Work::Chase { start, .. } => std::slice::from_ref(start),
            Work::Chains { starts, k, .. } => {
                if ![1, 2, 4, 8, 16].contains(k) {
                    return bad(format!("job {i}: {k} chains (use 1, 2, 4, 8 or 16)"));
                }
                &starts[..*k]
            }
            _ => &[],
        };
        let base = b.as_ptr() as usize;
        for &start in starts {
            if start < base || start + 8 > base + b.len() || !start.is_multiple_of(8) {
                return bad(format!("job {i}: chase start outside its buffer"));
            }
        }
        let (r, w) = j.work.ranges();
        for &(off, len) in r.iter().chain(&w) {
            if off + len > b.len() {
                return bad(format!(
                    "job {i}: range {off}+{len} outside a {}-byte buffer",
                    b.len()
                ));
            }
            if !matches!(j.work, Work::Chase { .. } | Work::Chains { .. })
                && (!off.is_multiple_of(LINE) || !len.is_multiple_of(GRAIN) || len == 0)
            {
                return bad(format!(
                    "job {i}: streaming range {off}+{len} must be {LINE}-aligned, a multiple of {GRAIN} bytes"
                ));
            }
        }
        if let Work::Copy { src, dst, len, .. } = j.work {
            if overlaps((src, len), (dst, len)) {
                return bad(format!("job {i}: copy source and destination overlap"));
            }
        }
        for (k, o) in jobs.iter().enumerate() {
            if k == i || !std::ptr::eq(o.work.buf(), b) {
                continue;
            }
            let (or, ow) = o.work.ranges();
            for &wr in &w {
                if or.iter().chain(&ow).any(|&x| overlaps(wr, x)) {
                    return bad(format!(
                        "jobs {i} and {k} touch the same bytes while {i} writes them"
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Split `len` bytes into `parts` GRAIN-aligned, disjoint pieces (the last
/// takes the remainder, rounded down to GRAIN). Pieces may be empty when
/// `len` is too small; callers check.
pub fn split(len: usize, parts: usize) -> Vec<(usize, usize)> {
    let parts = parts.max(1);
    let each = (len / parts) / GRAIN * GRAIN;
    (0..parts)
        .map(|k| {
            let off = k * each;
            let l = if k + 1 == parts {
                (len - off) / GRAIN * GRAIN
            } else {
                each
            };
            (off, l)
        })
        .collect()
}
