//! Running a job: check it against the target, start one worker thread per
//! `threads` (each pinned, with its own descriptor and buffers), start them
//! together, report progress every second, and collect their figures.

use super::cursor::Cursor;
use super::file::{invalidate, open_target, seed_from_time, TestFile};
use super::job::{os, Engine, IoError, IoJob, IoRun, ThreadStats};
use super::shared::{Padded, Shared};
use super::sync::sync_loop;
use super::uring;
use crate::buffer::{Backing, Buffer};
use hwcal_harness::Histogram;
use hwcal_stats::SplitMix64;
use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// Run the job on `target`. The calling thread coordinates: it calls
/// `tick(ios_done, elapsed_s)` about every second while the workers run
/// (for progress) and records I/Os per interval. Returns
/// [`IoError::Interrupted`] if `stop` was raised before the end, after
/// every I/O in flight completed.
pub fn run(
    job: &IoJob,
    target: &TestFile,
    stop: &AtomicBool,
    tick: &mut dyn FnMut(u64, f64),
) -> Result<IoRun, IoError> {
    if job.bs == 0 || job.size < job.bs || job.threads == 0 || job.iodepth == 0 {
        return Err(IoError::Refused(
            "block size, size, threads and iodepth must be > 0".into(),
        ));
    }
    if job.size > target.size {
        return Err(IoError::Refused(format!(
            "{} holds {} bytes, fewer than --size {}",
            target.path.display(),
            target.size,
            job.size
        )));
    }
    if job.bs > u32::MAX as u64 / 2 {
        return Err(IoError::Refused("block size too large (max 1 GiB)".into()));
    }
    let shared = Shared {
        stop,
        abort: AtomicBool::new(false),
        done: (0..job.threads).map(|_| Padded(AtomicU64::new(0))).collect(),
        start: Barrier::new(job.threads as usize + 1),
    };
    if !job.direct {
        if let Ok(f) = File::open(&target.path) {
            invalidate(&f);
        }
    }
    let seed = seed_from_time();
    let interval = Duration::from_millis(1000);
    let (results, wall_ns, interval_ios) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..job.threads)
            .map(|tid| {
                let shared = &shared;
                s.spawn(move || worker(job, target, tid, seed, shared))
            })
            .collect();
        // Workers open their files and buffers, then wait here, so the
        // clock starts when all are ready.
        shared.start.wait();
        let started = Instant::now();
        let mut last_total = 0u64;
        let mut interval_ios = Vec::new();
        let mut next_tick = started + interval;
        while !handles.iter().all(|h| h.is_finished()) {
            std::thread::sleep(Duration::from_millis(20));
            let now = Instant::now();
            if now >= next_tick {
                let total: u64 = shared.done.iter().map(|d| d.0.load(Ordering::Relaxed)).sum();
                interval_ios.push(total - last_total);
                last_total = total;
                next_tick += interval;
                tick(total, (now - started).as_secs_f64());
            }
        }
        let results: Vec<Result<ThreadStats, IoError>> = handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(IoError::Refused("an I/O thread panicked".into())))
            })
            .collect();
        let wall = results
            .iter()
            .filter_map(|r| r.as_ref().ok())
            .map(|t| t.elapsed_ns)
            .fold(0.0, f64::max);
        (results, wall, interval_ios)
    });
    let mut threads = Vec::new();
    for r in results {
        threads.push(r?);
    }
    if stop.load(Ordering::Relaxed) {
        return Err(IoError::Interrupted);
    }
    Ok(IoRun {
        threads,
        wall_ns,
        interval_ios,
        interval_s: interval.as_secs_f64(),
    })
}

fn worker(job: &IoJob, target: &TestFile, tid: u32, seed: u64, sh: &Shared) -> Result<ThreadStats, IoError> {
    // Any failure before the barrier must still arrive at it, or the
    // coordinator waits forever: prepare, wait, then report.
    let prep = prepare(job, target, tid);
    if prep.is_err() {
        sh.abort.store(true, Ordering::SeqCst);
    }
    sh.start.wait();
    let (file, buf) = prep?;
    let mut st = ThreadStats {
        tid,
        read_ios: 0,
        write_ios: 0,
        bytes: 0,
        elapsed_ns: 0.0,
        hist: Histogram::new(),
    };
    if sh.halted() {
        return Ok(st);
    }
    let cur = Cursor::new(job, tid, seed);
    let r = match job.engine {
        Engine::Sync | Engine::Psync => sync_loop(job, &file, &buf, cur, tid, sh, &mut st),
        Engine::IoUring => uring::run(job, &file, buf, cur, tid, sh, &mut st),
    };
    if let Err(e) = r {
        sh.abort.store(true, Ordering::SeqCst);
        return Err(explain_direct(e, job.direct, job.bs, &target.path));
    }
    Ok(st)
}

/// An EINVAL from an I/O under O_DIRECT means the kernel refused the
/// alignment (block size or offset not a multiple of the device's logical
/// block) or the filesystem refuses direct I/O: say so instead of a bare
/// "Invalid argument".
pub(super) fn explain_direct(e: IoError, direct: bool, bs: u64, path: &Path) -> IoError {
    match e {
        IoError::Os(_, ref ioe) if direct && ioe.raw_os_error() == Some(libc::EINVAL) => {
            IoError::Refused(format!(
                "{}: O_DIRECT I/O of {bs} bytes refused (EINVAL): the block size must be a multiple of the \
                 device's logical block size (see /sys/block/*/queue/logical_block_size), or the \
                 filesystem does not support O_DIRECT; run without --direct or choose another --bs",
                path.display(),
            ))
        }
        e => e,
    }
}

/// Open the target and allocate this thread's page-aligned buffers (one
/// block per I/O in flight), filled with incompressible data for writes.
fn prepare(job: &IoJob, target: &TestFile, tid: u32) -> Result<(File, Buffer), IoError> {
    if !job.cpus.is_empty() {
        let cpu = job.cpus[tid as usize % job.cpus.len()];
        hwcal_harness::pin::pin_to(cpu).map_err(|e| {
            os(
                format!("pinning I/O thread {tid}"),
                std::io::Error::other(e.to_string()),
            )
        })?;
    }
    let file = open_target(&target.path, job.pattern.writes(), job.direct)?;
    let depth = if job.engine == Engine::IoUring {
        job.iodepth as usize
    } else {
        1
    };
    let len = job.bs as usize * depth;
    let buf = Buffer::new(len, Backing::Small)
        .map_err(|e| os("allocating I/O buffers", std::io::Error::other(e.to_string())))?;
    // SAFETY: the buffer is `buf.len() >= len` writable bytes owned here,
    // not yet shared with the kernel.
    let bytes = unsafe { std::slice::from_raw_parts_mut(buf.as_ptr(), len) };
    SplitMix64::new(seed_from_time() ^ tid as u64).fill_bytes(bytes);
    Ok((file, buf))
}
