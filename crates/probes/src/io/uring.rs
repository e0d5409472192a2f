//! The io_uring engine: one ring per thread, `iodepth` I/Os in flight.
//! Every submission entry points into `buf`, which must stay alive and
//! untouched until its completion is reaped; the loop therefore never
//! returns with I/Os in flight (it drains them first), and leaks the
//! buffer if it cannot.

use super::cursor::{Cursor, NextIo};
use super::file::invalidate_range;
use super::job::{os, IoError, IoJob, ThreadStats};
use super::shared::{account, stamp, Shared};
use crate::buffer::Buffer;
use hwcal_harness::Timer;
use io_uring::{opcode, types, IoUring};
use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::sync::atomic::Ordering;

fn setup_error(e: std::io::Error) -> IoError {
    match e.raw_os_error() {
        Some(libc::ENOSYS) => IoError::Refused(
            "io_uring is not available in this kernel (ENOSYS); use --engine psync".into(),
        ),
        Some(libc::EPERM) | Some(libc::EACCES) => IoError::Refused(
            "io_uring is disabled here (EPERM: kernel.io_uring_disabled or a seccomp filter); use --engine psync"
                .into(),
        ),
        _ => os("setting up io_uring", e),
    }
}

/// A ring set up as fio's io_uring engine does: completion queue as
/// deep as the submission queue; COOP_TASKRUN (no inter-processor
/// interrupt to run completion work while the thread is busy) and
/// SINGLE_ISSUER + DEFER_TASKRUN (completion work runs when the thread
/// asks for events), which save a large part of the per-I/O CPU cost at
/// high queue depth. Older kernels refuse the flags with EINVAL: drop
/// them one step at a time.
fn new_ring(depth: u32) -> std::io::Result<IoUring> {
    let einval = |e: &std::io::Error| e.raw_os_error() == Some(libc::EINVAL);
    let full = IoUring::builder()
        .setup_cqsize(depth)
        .setup_coop_taskrun()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(depth);
    match full {
        Err(e) if einval(&e) => {}
        r => return r,
    }
    match IoUring::builder()
        .setup_cqsize(depth)
        .setup_coop_taskrun()
        .build(depth)
    {
        Err(e) if einval(&e) => IoUring::new(depth),
        r => r,
    }
}

pub(super) fn run(
    job: &IoJob,
    file: &File,
    buf: Buffer,
    mut cur: Cursor,
    tid: u32,
    sh: &Shared,
    st: &mut ThreadStats,
) -> Result<(), IoError> {
    let timer = Timer::get();
    let depth = job.iodepth as usize;
    let ring = new_ring(depth as u32).map_err(setup_error)?;
    let mut q = Queue::new(ring, file, &buf, job.bs as usize, depth);
    let t0 = timer.now();
    let deadline = job
        .time_limit
        .map(|d| t0 + (d.as_nanos() as f64 / timer.ns_per_tick()) as u64);
    q.end = t0;
    loop {
        // Refill the queue.
        if q.issuing && (sh.halted() || deadline.is_some_and(|d| timer.now() >= d)) {
            q.issuing = false;
        }
        q.refill(job, file, &mut cur, tid, timer);
        if q.inflight == 0 || q.failure.is_some() {
            break;
        }
        match q.ring.submit_and_wait(1) {
            Ok(_) => {}
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR) | Some(libc::EBUSY)) => {}
            Err(e) => {
                q.failure = Some(os("io_uring_enter", e));
                break;
            }
        }
        q.reap(job, st, timer);
        sh.done[tid as usize].0.store(q.n, Ordering::Relaxed);
    }
    // Only io_uring_enter failing can leave I/Os in flight: wait for them.
    if !q.drain() {
        // The kernel may still write into the buffer: never
        // unmap it.
        std::mem::forget(buf);
        return Err(q
            .failure
            .take()
            .unwrap_or_else(|| IoError::Refused("io_uring: lost completions".into())));
    }
    st.elapsed_ns = timer.elapsed_ns(t0, q.end);
    let failure = q.failure.take();
    // The ring goes before the buffer its entries pointed into.
    drop(q);
    drop(buf);
    failure.map_or(Ok(()), Err)
}

/// The ring and the state of its `depth` slots: the I/O in slot `i`
/// uses block `i` of the buffer at `base`, so a slot is reused only
/// once its completion is reaped. `base` is a raw pointer because `run`
/// must be able to leak the buffer while the ring is still alive.
struct Queue {
    ring: IoUring,
    fd: types::Fd,
    base: *mut u8,
    bs: usize,
    // Per slot: issue time and direction of the I/O using that slot's block.
    issued: Vec<u64>,
    is_write: Vec<bool>,
    offsets: Vec<u64>,
    free: Vec<usize>,
    inflight: usize,
    /// Time of the last completion.
    end: u64,
    /// The first failure; once set, no more I/Os are issued.
    failure: Option<IoError>,
    issuing: bool,
    /// I/Os completed.
    n: u64,
    /// I/Os issued (the sequence number stamped into written blocks).
    seq: u64,
}

impl Queue {
    fn new(ring: IoUring, file: &File, buf: &Buffer, bs: usize, depth: usize) -> Queue {
        Queue {
            ring,
            fd: types::Fd(file.as_raw_fd()),
            base: buf.as_ptr(),
            bs,
            issued: vec![0u64; depth],
            is_write: vec![false; depth],
            offsets: vec![0u64; depth],
            free: (0..depth).rev().collect(),
            inflight: 0,
            end: 0,
            failure: None,
            issuing: true,
            n: 0,
            seq: 0,
        }
    }

    /// Issue the cursor's next I/Os into the free slots, each handed to
    /// the kernel at once, until no slot is free or issuing stops (the
    /// cursor is done, or a submission failed).
    fn refill(&mut self, job: &IoJob, file: &File, cur: &mut Cursor, tid: u32, timer: &Timer) {
        let bs = self.bs;
        while self.issuing {
            let Some(&slot) = self.free.last() else { break };
            let Some(NextIo { off, write, new_pass }) = cur.next() else {
                self.issuing = false;
                break;
            };
            if new_pass && !job.direct {
                invalidate_range(file, cur.pass_range());
            }
            self.free.pop();
            // SAFETY: slot < depth, so the block lies inside the buffer
            // of depth * bs bytes.
            let p = unsafe { self.base.add(slot * bs) };
            if write {
                // The slot is free: no I/O in flight uses its block.
                stamp(p, bs, self.seq, tid);
            }
            self.seq += 1;
            let e = if write {
                opcode::Write::new(self.fd, p, bs as u32).offset(off).build()
            } else {
                opcode::Read::new(self.fd, p, bs as u32).offset(off).build()
            }
            .user_data(slot as u64);
            // SAFETY: the entry references block `slot` of `buf` and the
            // open `file`; both outlive the I/O because `run` reaps every
            // completion (or leaks `buf`) before returning, and the slot
            // is not reused until its completion is reaped. The ring has
            // >= depth entries and at most depth are queued, so the push
            // cannot overflow.
            let pushed = unsafe { self.ring.submission().push(&e) };
            if pushed.is_err() {
                self.free.push(slot);
                break;
            }
            self.issued[slot] = timer.now();
            self.is_write[slot] = write;
            self.offsets[slot] = off;
            self.inflight += 1;
            // Hand each I/O to the kernel at once (fio's default
            // iodepth_batch_submit=1) rather than batching the refill:
            // a batch holds back I/Os that could already be in flight, so
            // the device idles between bursts and loses IOPS at high
            // iodepth.
            match self.ring.submit() {
                Ok(_) => {}
                // Retried by the next io_uring_enter in `run`.
                Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR) | Some(libc::EBUSY)) => {}
                Err(e) => {
                    self.failure = Some(os("io_uring_enter", e));
                    self.issuing = false;
                }
            }
        }
    }

    /// Reap the completions in the queue: free their slots and account
    /// each I/O, or keep the first error (a failed or short transfer)
    /// and stop issuing.
    fn reap(&mut self, job: &IoJob, st: &mut ThreadStats, timer: &Timer) {
        let bs = self.bs;
        let now = timer.now();
        for cqe in self.ring.completion() {
            let slot = cqe.user_data() as usize;
            self.inflight -= 1;
            self.free.push(slot);
            self.end = now;
            let res = cqe.result();
            let what = if self.is_write[slot] { "write" } else { "read" };
            if res < 0 {
                self.failure.get_or_insert_with(|| {
                    os(
                        format!("{what} at offset {}", self.offsets[slot]),
                        std::io::Error::from_raw_os_error(-res),
                    )
                });
                self.issuing = false;
            } else if res as usize != bs {
                self.failure.get_or_insert_with(|| {
                    os(
                        format!(
                            "short {what} at offset {}: {res} of {bs} bytes",
                            self.offsets[slot]
                        ),
                        std::io::Error::from_raw_os_error(libc::EIO),
                    )
                });
                self.issuing = false;
            } else {
                account(
                    st,
                    self.is_write[slot],
                    job.bs,
                    timer.elapsed_ns(self.issued[slot], now),
                );
                self.n += 1;
            }
        }
    }

    /// Wait for every I/O still in flight. False if the ring cannot be
    /// waited on any more: the kernel may then still use the buffer.
    fn drain(&mut self) -> bool {
        while self.inflight > 0 {
            match self.ring.submit_and_wait(self.inflight) {
                Ok(_) => {}
                Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR) | Some(libc::EBUSY)) => {}
                Err(_) => return false,
            }
            self.inflight -= self.ring.completion().count();
        }
        true
    }
}
