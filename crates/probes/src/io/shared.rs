//! What the I/O threads share with the coordinator (stop and abort flags,
//! per-thread progress counters) and the per-I/O bookkeeping both engines
//! do: stamping a block about to be written, recording a finished I/O.

use super::job::ThreadStats;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;

/// What a worker shares with the coordinator.
pub(super) struct Shared<'a> {
    pub(super) stop: &'a AtomicBool,
    /// Set when any worker fails, so the others stop too.
    pub(super) abort: AtomicBool,
    /// Per-thread completed I/Os, for progress (one cache line each).
    pub(super) done: Vec<Padded>,
    pub(super) start: Barrier,
}

#[repr(align(128))]
pub(super) struct Padded(pub(super) AtomicU64);

impl Shared<'_> {
    #[inline]
    pub(super) fn halted(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.abort.load(Ordering::Relaxed)
    }
}

/// Make each 512-byte sector of a block about to be written unique (its
/// first 8 bytes: thread, I/O number, sector), so storage that deduplicates
/// or compresses cannot short-cut rewrites of the same buffer; the job of
/// fio's `scramble_buffers`, at one store per sector (~1 µs per MiB), which
/// is negligible next to the I/O.
#[inline]
pub(super) fn stamp(block: *mut u8, bs: usize, seq: u64, tid: u32) {
    let tag = seq.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ ((tid as u64) << 56);
    let mut off = 0;
    while off + 8 <= bs {
        // SAFETY: off + 8 <= bs, so the 8 bytes lie inside the block, which
        // no I/O in flight uses (callers guarantee); unaligned writes are fine.
        unsafe { block.add(off).cast::<u64>().write_unaligned(tag ^ off as u64) };
        off += 512;
    }
}

/// Record one finished I/O.
#[inline]
pub(super) fn account(st: &mut ThreadStats, write: bool, bytes: u64, ns: f64) {
    if write {
        st.write_ios += 1;
    } else {
        st.read_ios += 1;
    }
    st.bytes += bytes;
    st.hist.record(ns.max(0.0) as u64);
}
