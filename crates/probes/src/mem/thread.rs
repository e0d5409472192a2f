//! The timed runner: one pinned thread per job warms up, waits for the
//! others at a barrier, then measures slices of ~20 ms, each with its op
//! count, wall and CPU time, preemptions and the core clock around it.

use super::kernels::{copy_kernel, isa, read_kernel, write_kernel, Isa, LINE};
use super::plan::{validate, Job, RunTiming, Slice, ThreadRun, Work, MAX_CHAINS};
use crate::chase;
use crate::error::ProbeError;
use hwcal_harness::{clockref, pin, Timer};
use std::sync::Barrier;

/// Involuntary context switches of the calling thread so far.
fn preemptions_now() -> Option<u64> {
    // SAFETY: getrusage fills the rusage struct we own; RUSAGE_THREAD is
    // Linux-specific and only reads the calling thread's counters.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; `ru` is a valid, writable rusage.
    let r = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    (r == 0).then_some(ru.ru_nivcsw as u64)
}

/// CPU time the calling thread has used, ns (NaN if unavailable).
fn thread_cpu_ns() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec we own; the thread CPU-time
    // clock always exists on Linux.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if r == 0 {
        ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64
    } else {
        f64::NAN
    }
}

/// Per-thread mutable state of the streaming/chasing loop.
struct Cursor {
    pos: usize,
    chunk: usize,
    p: usize,
    ps: [usize; MAX_CHAINS],
    sink: u64,
    pass: u64,
}

impl Cursor {
    /// Do one chunk of work; returns ops (lines) done.
    #[inline]
    fn step(&mut self, w: &Work, isa: Isa) -> u64 {
        match *w {
            Work::Chase { .. } => {
                // SAFETY: the cursor starts on the ring `build_ring` wrote in
                // this thread's buffer, which outlives the run, and the
                // chase only moves it along that ring.
                self.p = unsafe { chase::chase(self.p, self.chunk as u64) };
                // chase() rounds up to a multiple of 16 loads.
                (self.chunk as u64).div_ceil(16) * 16
            }
            Work::Chains { k, .. } => {
                // `chunk` counts loads over all chains.
                let per = (self.chunk / k).max(1) as u64;
                let ps = &mut self.ps;
                fn go<const K: usize>(ps: &mut [usize; MAX_CHAINS], loads: u64) {
                    let mut a = [0usize; K];
                    a.copy_from_slice(&ps[..K]);
                    // SAFETY: as for the single chase: every pointer is a
                    // slot of the ring in this thread's live buffer.
                    let r = unsafe { chase::chase_parallel::<K>(a, loads) };
                    ps[..K].copy_from_slice(&r);
                }
                match k {
                    1 => go::<1>(ps, per),
                    2 => go::<2>(ps, per),
                    4 => go::<4>(ps, per),
                    8 => go::<8>(ps, per),
                    _ => go::<16>(ps, per),
                }
                per * k as u64
            }
            Work::Read { buf, off, len } => {
                let c = self.chunk.min(len - self.pos);
                // SAFETY: validate() checked [off, off+len) lies in `buf`,
                // is aligned and not written by any other job; pos and c are
                // multiples of GRAIN with pos + c <= len.
                self.sink ^= unsafe { read_kernel(isa, buf.as_ptr().add(off + self.pos), c) };
                self.advance(c, len)
            }
            Work::Write {
                buf,
                off,
                len,
                nontemporal,
            } => {
                let c = self.chunk.min(len - self.pos);
                // SAFETY: as for Read, and validate() checked no other job
                // touches these bytes.
                unsafe { write_kernel(isa, buf.as_ptr().add(off + self.pos), c, self.pass, nontemporal) };
                self.advance(c, len)
            }
            Work::Copy {
                buf,
                src,
                dst,
                len,
                nontemporal,
            } => {
                let c = self.chunk.min(len - self.pos);
                // SAFETY: as for Read (source) and Write (destination);
                // validate() checked the two ranges do not overlap.
                unsafe {
                    copy_kernel(
                        isa,
                        buf.as_ptr().add(src + self.pos),
                        buf.as_ptr().add(dst + self.pos),
                        c,
                        nontemporal,
                    )
                };
                self.advance(c, len)
            }
        }
    }

    fn advance(&mut self, c: usize, len: usize) -> u64 {
        self.pos += c;
        if self.pos >= len {
            self.pos = 0;
            self.pass += 1;
        }
        (c / LINE) as u64
    }
}

/// First chunk size: loads for a chase (over all its chains), bytes for a
/// stream; the timed loop doubles it until a chunk takes long enough.
fn first_chunk(work: &Work) -> usize {
    match work {
        Work::Chase { .. } | Work::Chains { .. } => 1024,
        _ => 16 * 1024,
    }
}

impl Cursor {
    /// A cursor at the start of `work`: the chase at its ring entry, the
    /// chains at theirs, streams at offset 0 on their first pass.
    fn new(work: &Work) -> Cursor {
        Cursor {
            pos: 0,
            chunk: first_chunk(work),
            p: match *work {
                Work::Chase { start, .. } => start,
                _ => 0,
            },
            ps: match *work {
                Work::Chains { starts, .. } => starts,
                _ => [0; MAX_CHAINS],
            },
            sink: 0,
            pass: 1,
        }
    }
}

/// One job's thread: pin, warm up, wait for the others at the barrier,
/// then measure, counting the preemptions around the measurement.
fn run_thread(job: &Job, plan: &RunTiming, barrier: &Barrier) -> Result<ThreadRun, ProbeError> {
    let timer = Timer::get();
    let isa = isa();
    let mut cur = Cursor::new(&job.work);
    let ns_per_tick = timer.ns_per_tick();
    let to_ticks = |ns: f64| (ns / ns_per_tick).max(1.0) as u64;
    let pinned = match job.cpu {
        Some(c) => pin::pin_to(c).map_err(ProbeError::from),
        None => Ok(()),
    };
    if pinned.is_ok() {
        warm_up(job, plan, &mut cur, isa, timer, to_ticks);
    }
    // Everyone waits here, even a thread that failed to pin, so no thread
    // is left waiting forever.
    barrier.wait();
    pinned?;
    let sw0 = preemptions_now();
    let slices = timed_slices(job, plan, cur, isa, timer, to_ticks);
    let preemptions = match (sw0, preemptions_now()) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a)),
        _ => None,
    };
    Ok(ThreadRun {
        cpu: job.cpu,
        work: job.work.name(),
        slices,
        preemptions,
    })
}

/// Before the barrier, on the pinned CPU: let the core clock settle, then
/// make one pass over the region, and restart the chunk size.
fn warm_up(
    job: &Job,
    plan: &RunTiming,
    cur: &mut Cursor,
    isa: Isa,
    timer: &Timer,
    to_ticks: impl Fn(f64) -> u64,
) {
    clockref::warm_up(timer, plan.warm_up_ms);
    // Warm the caches and TLB with one pass over the region, at most
    // ~20 ms: a cache-sized buffer evicted since it was prepared would
    // otherwise make the first slices of a short run read DRAM; for a
    // DRAM-sized buffer a partial pass changes nothing.
    let region = match job.work {
        Work::Chase { buf, .. } | Work::Chains { buf, .. } => buf.len(),
        Work::Read { len, .. } | Work::Write { len, .. } | Work::Copy { len, .. } => len,
    };
    let until = timer.now() + to_ticks(20e6);
    let mut done = 0usize;
    while done < region && timer.now() < until {
        done += cur.step(&job.work, isa) as usize * LINE;
    }
    cur.chunk = first_chunk(&job.work);
}

/// The measurement proper: slices of `plan.slice_ns` until
/// `plan.duration_ns` has passed, each with its op count, wall and CPU
/// time and the core clock around it. The cursor is owned here so the
/// timed loop works on a local, as it always has.
fn timed_slices(
    job: &Job,
    plan: &RunTiming,
    mut cur: Cursor,
    isa: Isa,
    timer: &Timer,
    to_ticks: impl Fn(f64) -> u64,
) -> Vec<Slice> {
    // A chunk should take >= 50 µs so the timer read between chunks costs
    // < 0.1%, and <= ~1 ms so the run ends close to its deadline.
    let chunk_target = to_ticks(50e3);
    let chunk_cap = match job.work {
        Work::Chase { .. } | Work::Chains { .. } => 1 << 20,
        _ => 4 << 20,
    };
    let mut slices = Vec::new();
    let mut mhz_prev = clockref::core_mhz_now(timer);
    let start = timer.now();
    let end = start + to_ticks(plan.duration_ns);
    let slice_ticks = to_ticks(plan.slice_ns);
    loop {
        let c0 = thread_cpu_ns();
        let t0 = timer.now();
        let slice_end = (t0 + slice_ticks).min(end);
        let mut ops = 0u64;
        let mut t = t0;
        // At least one chunk per slice (the clock reading before this slice
        // may already have crossed the deadline): no empty slices.
        loop {
            let chunk_start = t;
            ops += cur.step(&job.work, isa);
            t = timer.now();
            if t - chunk_start < chunk_target && cur.chunk < chunk_cap {
                cur.chunk *= 2;
            }
            if t >= slice_end {
                break;
            }
        }
        let c1 = thread_cpu_ns();
        let mhz = clockref::core_mhz_now(timer);
        let ticks = t - t0;
        let ns = timer.elapsed_ns(t0, t);
        slices.push(Slice {
            ops,
            ns,
            ticks: ticks as f64,
            mhz: 0.5 * (mhz_prev + mhz),
            // The CPU clock ticks at scheduler granularity: never more than the wall time.
            cpu_ns: (c1 - c0).min(ns),
        });
        mhz_prev = mhz;
        if t >= end {
            break;
        }
    }
    std::hint::black_box((cur.sink, cur.p, cur.ps));
    slices
}

/// Run every job on its own thread for `plan.duration_ns`, all starting
/// together after a barrier. Returns one [`ThreadRun`] per job, in order.
pub fn run(jobs: &[Job], plan: &RunTiming) -> Result<Vec<ThreadRun>, ProbeError> {
    if jobs.is_empty() {
        return Err(ProbeError::InvalidInput("no threads to run".into()));
    }
    validate(jobs)?;
    let barrier = Barrier::new(jobs.len());
    std::thread::scope(|s| {
        let hs: Vec<_> = jobs
            .iter()
            .map(|j| {
                let b = &barrier;
                s.spawn(move || run_thread(j, plan, b))
            })
            .collect();
        hs.into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(ProbeError::InvalidInput("measuring thread panicked".into())))
            })
            .collect()
    })
}
