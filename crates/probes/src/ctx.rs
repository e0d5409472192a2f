//! Context-switch latency: lmbench's `lat_ctx` (McVoy & Staelin), redone
//! with a fine timer.
//!
//! Method (lat_ctx man page, seed 001): `n` members — processes, or threads
//! with `Kind::Threads` — form a ring of pipes and pass a token around. Each
//! member reads the token, sums its own array of `size` KB, and writes the
//! token to the next member. The calling thread is member 0: it writes the
//! token, waits for it to come back, sums its array, and times whole round
//! trips with the TSC. With every member on one CPU, each hop is at least
//! one real switch: the writer wakes the reader, then blocks in `read`, and
//! the scheduler has exactly one runnable task to go to (unless the wake-up
//! preempted the writer: see below).
//!
//! One round trip is `n` × (write + read + sum + switch). The overhead —
//! write a token into a pipe, read it back, sum the array, all in one
//! process and therefore with hot caches — is measured interleaved with the
//! rings and subtracted per hop (in `hwcal_analysis::ctx`). What remains is
//! the switch itself *including* the cost of refilling caches that the other
//! members evicted: with big arrays and many members the working sets no
//! longer fit and the "switch" grows, exactly as lat_ctx defines it.
//!
//! Differences from lat_ctx: blocks of ~0.2 ms timed with the TSC instead of
//! lmbench's long `gettimeofday` intervals, so a scheduler tick or another
//! tenant spoils only a few samples and the median sheds them; all rings of a
//! size are alive at once and sampled interleaved (round-robin), so clock
//! drift and bursts of noise hit every ring alike; the sum is a compact
//! unrolled loop over 64-bit words rather than lat_ctx's ~2.7k-instruction
//! unrolled body, so the instruction cache is polluted less.
//!
//! What lat_ctx does not see: a hop is not always one switch. The members'
//! switch counters (`/proc/<pid>/status`) are read before and after the
//! timed samples. In a 2-member ring each hop is one switch; from 3 members
//! on, waking the next member can preempt the writer before it blocks in
//! its own `read` (EEVDF on Linux 6.x may, on a sizeable fraction of the
//! hops, since the woken member's deadline can be earlier than the
//! writer's), and the writer then runs again only to block: two switches
//! for that hop. [`SwitchCount`] carries the counts so the analysis
//! can give the cost of one switch beside lat_ctx's cost of one hop.
//!
//! Children are forked after every buffer is allocated; after `fork` a child
//! only makes system calls (prctl, sched_setaffinity, close_range, read,
//! write, _exit) and touches memory it already owns — no allocation, no
//! locks, no printing — so forking from a multithreaded process is safe.
//! Children die with the parent (`PR_SET_PDEATHSIG`), on a closed pipe (EOF
//! or `EPIPE`), and by `SIGKILL` + `waitpid` when a ring is dropped, so no
//! zombie or orphan outlives a measurement, whatever the exit path.

use crate::error::ProbeError;
use hwcal_harness::bench::{measure_interleaved, Overhead, Policy, Stat};
use hwcal_harness::Timer;
use hwcal_model::SwitchCount;
use member::{cpu_set_of, fork_member, write_token, ChildSpec};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

mod member;

pub use member::sum_words;
/// The ring pieces another probe reuses (`os`: lmbench's pipe round trip
/// is a two-member ring).
pub(crate) use member::{member_loop, pass, pipe};

/// Largest ring hwcal builds (lat_ctx stops at 20). Bounded so that a typo
/// cannot fork thousands of processes; the process-count limit
/// (`RLIMIT_NPROC`) is checked separately by the caller.
pub const MAX_NPROCS: u32 = 1024;

/// Where the ring members run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// Every member on this CPU: each hop is at least one switch on one run queue.
    Same(usize),
    /// Member `i` on `cpus[i % cpus.len()]`: hops are cross-CPU wake-ups.
    Spread(Vec<usize>),
    /// No pinning: the scheduler places and migrates members.
    None,
}

impl Placement {
    /// `same`, `spread` or `none`, as in the profile.
    pub fn name(&self) -> &'static str {
        match self {
            Placement::Same(_) => "same",
            Placement::Spread(_) => "spread",
            Placement::None => "none",
        }
    }

    /// The CPUs used, in member order (empty when unpinned).
    pub fn cpus(&self) -> Vec<usize> {
        match self {
            Placement::Same(c) => vec![*c],
            Placement::Spread(v) => v.clone(),
            Placement::None => Vec::new(),
        }
    }

    /// CPU of ring member `i` (0 = the timing thread).
    pub fn cpu_of(&self, member: usize) -> Option<usize> {
        match self {
            Placement::Same(c) => Some(*c),
            Placement::Spread(v) if !v.is_empty() => Some(v[member % v.len()]),
            _ => None,
        }
    }
}

/// What the ring members are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Forked processes (lat_ctx): a switch changes address space.
    Processes,
    /// Threads of this process: a switch keeps the address space and TLB.
    Threads,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Processes => "processes",
            Kind::Threads => "threads",
        }
    }
}

/// One context-switch measurement at one array size.
#[derive(Debug, Clone)]
pub struct RingSetup {
    /// Ring sizes, each ≥ 2 (the timing thread counts as a member).
    pub nprocs: Vec<u32>,
    /// Rings running at once (`-P`); the extra `parallel - 1` rings pass
    /// their own tokens freely while one ring is timed.
    pub parallel: u32,
    /// Discarded rounds before the timed ones (`-W`).
    pub warmups: u32,
    /// Timed samples per ring (`-N`).
    pub repetitions: u32,
    pub placement: Placement,
    pub kind: Kind,
    /// Length of one timed block. Short (~0.2 ms) so most blocks fall
    /// between two preemptions by another task and the median is clean.
    pub enough_ns: f64,
}

impl Default for RingSetup {
    fn default() -> Self {
        RingSetup {
            nprocs: vec![2, 4, 8],
            parallel: 1,
            warmups: 3,
            repetitions: 101,
            placement: Placement::None,
            kind: Kind::Processes,
            enough_ns: 200_000.0,
        }
    }
}

/// The samples of one point: a time per sample and the core clock measured
/// right before and after that sample (NaN where it could not be measured).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    pub us: Vec<f64>,
    pub mhz: Vec<f64>,
}

/// Raw timings of one array size.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeRaw {
    pub size_kb: u64,
    /// One process passing the token to itself and summing, µs per pass.
    pub overhead: Series,
    /// Per ring size: µs per hop (round trip / nprocs) of every sample,
    /// overhead not yet subtracted.
    pub hops: Vec<(u32, Series)>,
    /// Per ring size (same order as `hops`): the members' switches per
    /// trip, `None` where the kernel's counters could not be read.
    pub switches: Vec<Option<SwitchCount>>,
}

/// One ring. Dropping it stops every member and reaps every child.
pub struct Ring {
    nprocs: u32,
    /// The timing thread's ends (write to member 1, read from member n−1);
    /// `None` for a free-running ring.
    ends: Option<(OwnedFd, OwnedFd)>,
    pids: Vec<libc::pid_t>,
    /// Kernel thread ids of thread members (for their switch counters).
    tids: Vec<libc::pid_t>,
    threads: Vec<JoinHandle<()>>,
    stop: Arc<AtomicBool>,
    /// Round trips run so far through the timing thread's ends.
    trips_done: std::cell::Cell<u64>,
}

impl Ring {
    /// Build a ring of `nprocs` members. If `timed`, the calling thread is
    /// member 0 and the ring waits for its token; otherwise member 0 is a
    /// child too and starts a token circulating at once (a `-P` load ring).
    /// `arr` is the array each forked member copies (its length is the
    /// size); thread members allocate their own.
    fn spawn(
        nprocs: u32,
        kind: Kind,
        placement: &Placement,
        arr: &mut [u64],
        timed: bool,
    ) -> Result<Ring, ProbeError> {
        let n = nprocs as usize;
        let mut ring = Ring {
            nprocs,
            ends: None,
            pids: Vec::with_capacity(n),
            tids: Vec::new(),
            threads: Vec::new(),
            stop: Arc::new(AtomicBool::new(false)),
            trips_done: std::cell::Cell::new(0),
        };
        // SAFETY: getpid cannot fail.
        let parent = unsafe { libc::getpid() };
        // Pipe i carries the token from member i to member i+1 (mod n).
        // Built incrementally so only a handful of descriptors are open at
        // once, whatever n (the default limit is 1024 descriptors).
        let (rd0, wr0) = pipe()?;
        let mut prev_rd = rd0; // read end of pipe i-1
        for i in 1..n {
            let (rd, wr) = pipe()?;
            ring.add_member(kind, placement, i, prev_rd, wr, arr, false, parent)?;
            prev_rd = rd;
        }
        // prev_rd is now pipe n-1's read end: member 0 reads it.
        if timed {
            ring.ends = Some((wr0, prev_rd));
        } else {
            ring.add_member(kind, placement, 0, prev_rd, wr0, arr, true, parent)?;
        }
        Ok(ring)
    }

    #[allow(clippy::too_many_arguments)]
    fn add_member(
        &mut self,
        kind: Kind,
        placement: &Placement,
        index: usize,
        rd: OwnedFd,
        wr: OwnedFd,
        arr: &mut [u64],
        inject: bool,
        parent: libc::pid_t,
    ) -> Result<(), ProbeError> {
        let cpu = placement.cpu_of(index);
        match kind {
            Kind::Processes => {
                let spec = ChildSpec {
                    rd: rd.as_raw_fd(),
                    wr: wr.as_raw_fd(),
                    arr: arr.as_mut_ptr(),
                    len: arr.len(),
                    cpu: cpu.map(cpu_set_of),
                    inject,
                    parent,
                };
                let pid = fork_member(&spec)?;
                self.pids.push(pid);
                // The parent's copies of the member's ends close here.
            }
            Kind::Threads => {
                let len = arr.len();
                let stop = Arc::clone(&self.stop);
                let (tid_tx, tid_rx) = std::sync::mpsc::channel();
                let h = std::thread::Builder::new()
                    .name(format!("ctx-{index}"))
                    .spawn(move || {
                        // SAFETY: gettid(2) takes no arguments and cannot fail.
                        let tid = unsafe { libc::syscall(libc::SYS_gettid) } as libc::pid_t;
                        let _ = tid_tx.send(tid);
                        if let Some(c) = cpu {
                            // Best effort: the parent validated the CPUs.
                            let _ = hwcal_harness::pin::pin_to(c);
                        }
                        // Each thread its own array, first touched here.
                        let salt = index as u64;
                        let own: Vec<u64> = (0..len as u64).map(|i| i ^ salt).collect();
                        if inject && !write_token(wr.as_raw_fd(), 0) {
                            return;
                        }
                        member_loop(rd.as_raw_fd(), wr.as_raw_fd(), &own, Some(&stop));
                        // rd and wr drop here: the neighbours see EOF/EPIPE.
                    })
                    .map_err(ProbeError::Io)?;
                self.threads.push(h);
                if let Ok(tid) = tid_rx.recv() {
                    self.tids.push(tid);
                }
            }
        }
        Ok(())
    }

    /// `iters` timed round trips; false if the ring broke.
    fn trips(&self, iters: u64, arr: &[u64], tok: &mut u64) -> bool {
        self.trips_done.set(self.trips_done.get() + iters);
        match &self.ends {
            Some((wr, rd)) => pass(wr.as_raw_fd(), rd.as_raw_fd(), iters, arr, tok),
            None => false,
        }
    }

    /// Voluntary and involuntary switches of the members other than the
    /// timing thread (whose counters mix every ring and the overhead loop),
    /// summed; `None` if any counter is unreadable.
    fn switch_counts(&self) -> Option<(u64, u64)> {
        let paths: Vec<String> = if self.pids.is_empty() {
            self.tids
                .iter()
                .map(|t| format!("/proc/self/task/{t}/status"))
                .collect()
        } else {
            self.pids.iter().map(|p| format!("/proc/{p}/status")).collect()
        };
        if paths.is_empty() {
            return None;
        }
        let mut sum = (0, 0);
        for p in paths {
            let (v, i) = parse_switches(&std::fs::read_to_string(p).ok()?)?;
            sum = (sum.0 + v, sum.1 + i);
        }
        Some(sum)
    }

    /// Members whose switches `switch_counts` sums.
    fn counted_members(&self) -> usize {
        if self.pids.is_empty() {
            self.tids.len()
        } else {
            self.pids.len()
        }
    }
}

/// `voluntary_ctxt_switches` and `nonvoluntary_ctxt_switches` from the text
/// of a `/proc/.../status` file.
fn parse_switches(status: &str) -> Option<(u64, u64)> {
    let field = |name: &str| -> Option<u64> {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))?
            .trim()
            .parse()
            .ok()
    };
    Some((
        field("voluntary_ctxt_switches:")?,
        field("nonvoluntary_ctxt_switches:")?,
    ))
}

/// Switches per member per trip between two snapshots of a ring.
fn switches_between(ring: &Ring, before: Option<(u64, u64)>, trips_before: u64) -> Option<SwitchCount> {
    let (v0, i0) = before?;
    let (v1, i1) = ring.switch_counts()?;
    let trips = ring.trips_done.get().checked_sub(trips_before)?;
    let members = ring.counted_members();
    if trips == 0 || members == 0 || v1 < v0 || i1 < i0 {
        return None;
    }
    let per = (trips * members as u64) as f64;
    Some(SwitchCount {
        voluntary: (v1 - v0) as f64 / per,
        involuntary: (i1 - i0) as f64 / per,
    })
}

impl Drop for Ring {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Closing the timing thread's ends breaks the ring: member 1 reads
        // EOF, exits, and the break runs round the ring.
        self.ends = None;
        for &pid in &self.pids {
            // SAFETY: `pid` is a child of this process that has not been
            // reaped yet, so the id cannot have been reused.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        for &pid in &self.pids {
            loop {
                // SAFETY: waiting for our own child; a null status is allowed.
                let r = unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
                if r >= 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                    break;
                }
            }
        }
        for h in self.threads.drain(..) {
            let _ = h.join();
        }
    }
}

/// Pin the calling (timing) thread where member 0 belongs.
fn place_self(placement: &Placement) -> Result<(), ProbeError> {
    if let Some(c) = placement.cpu_of(0) {
        hwcal_harness::pin::pin_to(c)?;
    }
    Ok(())
}

fn policy(samples: u32, enough_ns: f64) -> Policy {
    Policy {
        enough_ns: Some(enough_ns),
        min_samples: samples as usize,
        max_samples: samples as usize,
        stat: Stat::Median,
        // The core clock can drift from second to second (turbo, power
        // management, a hypervisor's host sharing the core); a short add chain (~5 µs) around each 0.2 ms block
        // gives each sample its own clock, hence a cycle figure that does
        // not drift.
        track_clock: true,
        overhead: Overhead::TimerRead,
        // A generous cap: the plan is bounded by `-N` anyway.
        budget_ns: 60e9,
        ..Policy::median()
    }
}

/// What `sample` returns: the overhead series, then per timed ring its
/// per-hop series and its switch counts.
struct Sampled {
    overhead: Series,
    hops: Vec<Series>,
    switches: Vec<Option<SwitchCount>>,
}

/// Warm up, then sample the overhead and every timed ring interleaved.
/// Returns µs per pass (overhead) and µs per hop (each ring).
fn sample(
    plan: &RingSetup,
    self_pipe: &(OwnedFd, OwnedFd),
    rings: &[&Ring],
    arr: &[u64],
) -> Result<Sampled, ProbeError> {
    // One untimed round trip per ring: it returns only once every member
    // has started and written its own copy of the array, so no timed block
    // (even with -W 0) includes a member's start-up.
    let mut t = 0u64;
    if !rings.iter().all(|r| r.trips(1, arr, &mut t)) {
        return Err(ProbeError::Failed("a context-switch ring did not start".into()));
    }
    let broken = std::cell::Cell::new(false);
    let (srd, swr) = (self_pipe.0.as_raw_fd(), self_pipe.1.as_raw_fd());
    let mut tok0 = 0u64;
    let mut ovr = |iters: u64| {
        // Once a ring broke, every point returns at once so the run ends quickly.
        if !broken.get() && !pass(swr, srd, iters, arr, &mut tok0) {
            broken.set(true);
        }
    };
    let mut ring_fns: Vec<Box<dyn FnMut(u64) + '_>> = rings
        .iter()
        .map(|r| {
            let broken = &broken;
            let mut tok = 0u64;
            Box::new(move |iters: u64| {
                if !broken.get() && !r.trips(iters, arr, &mut tok) {
                    broken.set(true);
                }
            }) as Box<dyn FnMut(u64) + '_>
        })
        .collect();
    let mut points: Vec<&mut dyn FnMut(u64)> = vec![&mut ovr];
    for f in ring_fns.iter_mut() {
        points.push(f.as_mut());
    }
    if plan.warmups > 0 {
        measure_interleaved(&policy(plan.warmups, plan.enough_ns), &mut points);
    }
    // The kernel's switch counters bracket exactly the timed samples (the
    // ring members sleep while other rings are sampled, so their counters
    // move only with their own ring's trips).
    let before: Vec<(Option<(u64, u64)>, u64)> = rings
        .iter()
        .map(|r| (r.switch_counts(), r.trips_done.get()))
        .collect();
    let est = measure_interleaved(&policy(plan.repetitions, plan.enough_ns), &mut points);
    let switches = rings
        .iter()
        .zip(before)
        .map(|(r, (b, t))| switches_between(r, b, t))
        .collect();
    if broken.get() {
        return Err(ProbeError::Failed(
            "a context-switch ring broke (a member exited or was killed)".into(),
        ));
    }
    let series = |e: &hwcal_harness::Estimate, div: f64| Series {
        us: e.ns_samples().iter().map(|ns| ns / 1e3 / div).collect(),
        mhz: e.mhz_samples(),
    };
    let overhead = series(&est[0], 1.0);
    let hops = rings
        .iter()
        .zip(&est[1..])
        .map(|(r, e)| series(e, r.nprocs as f64))
        .collect();
    Ok(Sampled {
        overhead,
        hops,
        switches,
    })
}

/// Check a plan; the message is fit for the user.
pub fn validate(plan: &RingSetup) -> Result<(), ProbeError> {
    if plan.nprocs.is_empty() {
        return Err(ProbeError::InvalidInput("no ring size given".into()));
    }
    if let Some(&n) = plan.nprocs.iter().find(|&&n| !(2..=MAX_NPROCS).contains(&n)) {
        return Err(ProbeError::InvalidInput(format!(
            "a ring of {n} is not possible: NPROCS must be between 2 and {MAX_NPROCS}"
        )));
    }
    if plan.parallel == 0 || plan.repetitions == 0 {
        return Err(ProbeError::InvalidInput("-P and -N must be at least 1".into()));
    }
    if let Placement::Spread(v) = &plan.placement {
        if v.is_empty() {
            return Err(ProbeError::InvalidInput("spread placement without CPUs".into()));
        }
    }
    Ok(())
}

/// Processes (or threads) alive at once besides the caller, for a plan.
pub fn members_alive(plan: &RingSetup) -> u64 {
    let n: Vec<u64> = plan.nprocs.iter().map(|&n| n as u64).collect();
    if plan.parallel == 1 {
        // Every ring of the size at once; the caller is member 0 of each.
        n.iter().map(|n| n - 1).sum()
    } else {
        // One ring size at a time: the timed ring plus P−1 load rings.
        n.iter()
            .map(|n| (n - 1) + (plan.parallel as u64 - 1) * n)
            .max()
            .unwrap_or(0)
    }
}

/// Measure one array size: all rings of the plan, the overhead alongside.
/// The calling thread is left pinned where member 0 belongs.
pub fn measure_size(plan: &RingSetup, size_kb: u64) -> Result<SizeRaw, ProbeError> {
    validate(plan)?;
    let words = usize::try_from(size_kb.saturating_mul(1024) / 8)
        .map_err(|_| ProbeError::InvalidInput(format!("-s {size_kb}: too large")))?;
    // Calibrate the timer before any fork (children never use it, but the
    // calibration spins for ~20 ms and should not compete with them).
    let _ = Timer::get();
    place_self(&plan.placement)?;
    let mut arr: Vec<u64> = Vec::new();
    arr.try_reserve_exact(words)
        .map_err(|e| ProbeError::Alloc(words * 8, e.to_string()))?;
    arr.extend((0..words as u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)));
    let self_pipe = pipe()?;
    let mut raw = SizeRaw {
        size_kb,
        overhead: Series::default(),
        hops: Vec::new(),
        switches: Vec::new(),
    };
    if plan.parallel == 1 {
        let mut rings = Vec::with_capacity(plan.nprocs.len());
        for &n in &plan.nprocs {
            rings.push(Ring::spawn(n, plan.kind, &plan.placement, &mut arr, true)?);
        }
        let refs: Vec<&Ring> = rings.iter().collect();
        let got = sample(plan, &self_pipe, &refs, &arr)?;
        raw.overhead = got.overhead;
        raw.hops = plan.nprocs.iter().copied().zip(got.hops).collect();
        raw.switches = got.switches;
    } else {
        // -P: one ring size at a time, timed while P−1 copies of it pass
        // their own tokens; the overhead is sampled alongside each, under
        // the same load, as lat_ctx runs its overhead loop in parallel too.
        let mut all_ovr = Series::default();
        for &n in &plan.nprocs {
            let timed = Ring::spawn(n, plan.kind, &plan.placement, &mut arr, true)?;
            let mut load = Vec::new();
            for _ in 1..plan.parallel {
                load.push(Ring::spawn(n, plan.kind, &plan.placement, &mut arr, false)?);
            }
            let mut got = sample(plan, &self_pipe, &[&timed], &arr)?;
            drop(load);
            all_ovr.us.extend(got.overhead.us);
            all_ovr.mhz.extend(got.overhead.mhz);
            raw.hops.push((n, got.hops.remove(0)));
            raw.switches.push(got.switches.remove(0));
        }
        raw.overhead = all_ovr;
    }
    Ok(raw)
}

/// The process-count limit (`RLIMIT_NPROC`, soft), from /proc/self/limits.
/// `None` if unlimited or unknown.
pub fn process_limit() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = s.lines().find(|l| l.starts_with("Max processes"))?;
    line["Max processes".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sum_is_exact() {
        let v: Vec<u64> = (1..=1003).collect();
        assert_eq!(sum_words(&v), 1003 * 1004 / 2);
        assert_eq!(sum_words(&[]), 0);
        assert_eq!(sum_words(&[u64::MAX, 2]), 1);
    }

    #[test]
    fn placement_round_robin() {
        let p = Placement::Spread(vec![3, 5]);
        assert_eq!(p.cpu_of(0), Some(3));
        assert_eq!(p.cpu_of(1), Some(5));
        assert_eq!(p.cpu_of(2), Some(3));
        assert_eq!(Placement::Same(7).cpu_of(9), Some(7));
        assert_eq!(Placement::None.cpu_of(0), None);
        assert_eq!(p.name(), "spread");
    }

    #[test]
    fn validation() {
        let mut p = RingSetup::default();
        assert!(validate(&p).is_ok());
        p.nprocs = vec![2, 1];
        assert!(validate(&p).is_err());
        p.nprocs = vec![MAX_NPROCS + 1];
        assert!(validate(&p).is_err());
        p.nprocs = vec![];
        assert!(validate(&p).is_err());
        p.nprocs = vec![4, 8];
        assert_eq!(members_alive(&p), 3 + 7);
        p.parallel = 2;
        assert_eq!(members_alive(&p), 7 + 8);
    }

    fn small(kind: Kind) -> RingSetup {
        RingSetup {
            nprocs: vec![2, 3],
            warmups: 1,
            repetitions: 5,
            enough_ns: 20_000.0,
            kind,
            placement: Placement::None,
            ..RingSetup::default()
        }
    }

    #[test]
    fn parses_switch_counters() {
        let st = "Name:\tx\nvoluntary_ctxt_switches:\t120\nnonvoluntary_ctxt_switches:\t7\n";
        assert_eq!(parse_switches(st), Some((120, 7)));
        assert_eq!(parse_switches("Name:\tx\n"), None);
    }

    fn check(raw: &SizeRaw, n: usize) {
        // Every trip makes each member leave the CPU at least once (it
        // blocks in read); broad bound above for preemptions and ticks.
        assert_eq!(raw.switches.len(), raw.hops.len());
        for s in raw.switches.iter().flatten() {
            assert!(s.per_hop() > 0.1 && s.per_hop() < 20.0, "{s:?}");
        }
        assert_eq!(raw.overhead.us.len(), n);
        assert_eq!(raw.overhead.mhz.len(), n);
        assert_eq!(raw.hops.len(), 2);
        for (_, h) in &raw.hops {
            assert_eq!(h.mhz.len(), n);
            let h = &h.us;
            assert_eq!(h.len(), n);
            // Broad physical bounds: a pipe hop takes more than 10 ns and
            // (even on a loaded VM) less than 100 ms.
            assert!(h.iter().all(|&x| x > 0.01 && x < 1e5), "{h:?}");
        }
    }

    fn children() -> usize {
        // Our forked ring members that still exist (zombies included): our
        // children with our own command name, so a program another test
        // runs meanwhile (`mkfifo`) is not counted.
        let me = std::process::id().to_string();
        let comm = |s: &str| {
            s.split_once('(')
                .and_then(|(_, r)| r.rsplit_once(')'))
                .map(|(c, _)| c.to_string())
        };
        let own = comm(&std::fs::read_to_string("/proc/self/stat").unwrap());
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("stat")).ok())
            .filter(|s| {
                let after = s.rsplit(')').next().unwrap_or("");
                after.split_whitespace().nth(1) == Some(me.as_str()) && comm(s) == own
            })
            .count()
    }

    #[test]
    fn process_ring_measures_and_reaps() {
        let raw = measure_size(&small(Kind::Processes), 4).unwrap();
        check(&raw, 5);
        assert_eq!(children(), 0, "children left behind");
        let mut p = small(Kind::Processes);
        p.parallel = 2;
        let raw = measure_size(&p, 0).unwrap();
        assert_eq!(raw.hops.len(), 2);
        assert_eq!(children(), 0, "children left behind");
    }

    #[test]
    fn thread_ring_measures_and_stops() {
        let raw = measure_size(&small(Kind::Threads), 4).unwrap();
        check(&raw, 5);
        let mut p = small(Kind::Threads);
        p.parallel = 2;
        measure_size(&p, 0).unwrap();
    }
}
