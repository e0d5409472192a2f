//! Where each I/O thread's next I/O goes (its sequential slice, or uniform
//! random blocks of the whole file) and whether it reads or writes.

use super::job::IoJob;
use hwcal_stats::SplitMix64;

/// Where each thread's next I/O goes and whether it reads or writes.
pub(super) struct Cursor {
    rng: SplitMix64,
    random: bool,
    read_pct: u32,
    bs: u64,
    /// Blocks of the whole target (random offsets range over all of it).
    nblocks: u64,
    /// This thread's sequential region, in blocks: [first, end).
    first: u64,
    end: u64,
    next_seq: u64,
    /// I/Os left in a size-bound run (u64::MAX when time-bound).
    left: u64,
    /// I/Os per pass (this thread's share of the file) and issued so far.
    share: u64,
    issued: u64,
}

/// One I/O to issue.
#[derive(Debug, Clone, Copy)]
pub(super) struct NextIo {
    pub(super) off: u64,
    pub(super) write: bool,
    /// The first I/O of a new pass over this thread's share of the file
    /// (time-bound runs loop).
    pub(super) new_pass: bool,
}

impl Cursor {
    pub(super) fn new(job: &IoJob, tid: u32, seed: u64) -> Cursor {
        let nblocks = job.size / job.bs;
        let t = job.threads as u64;
        // Sequential threads each stream through their own slice of the
        // file (micbench-io's layout), so N threads never read the same
        // blocks; random threads range over the whole file.
        let first = nblocks * tid as u64 / t;
        let end = nblocks * (tid as u64 + 1) / t;
        let share = end - first;
        Cursor {
            rng: SplitMix64::new(seed ^ (tid as u64).wrapping_mul(0x9E37_79B9)),
            random: job.pattern.random(),
            read_pct: job.pattern.read_pct(job.rwmix_read),
            bs: job.bs,
            nblocks,
            first,
            end,
            next_seq: first,
            left: if job.time_limit.is_some() { u64::MAX } else { share },
            share: share.max(1),
            issued: 0,
        }
    }

    /// Byte range this thread's passes cover: its slice when sequential,
    /// the whole file when random.
    pub(super) fn pass_range(&self) -> (u64, u64) {
        if self.random {
            (0, self.nblocks * self.bs)
        } else {
            (self.first * self.bs, (self.end - self.first) * self.bs)
        }
    }

    /// The next I/O, or None when a size-bound share is done.
    #[inline]
    pub(super) fn next(&mut self) -> Option<NextIo> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let new_pass = self.issued > 0 && self.issued.is_multiple_of(self.share);
        self.issued += 1;
        let block = if self.random {
            self.rng.below(self.nblocks)
        } else {
            let b = self.next_seq;
            self.next_seq += 1;
            if self.next_seq >= self.end {
                self.next_seq = self.first;
            }
            b
        };
        let write = match self.read_pct {
            100 => false,
            0 => true,
            p => self.rng.below(100) >= p as u64,
        };
        Some(NextIo {
            off: block * self.bs,
            write,
            new_pass,
        })
    }
}
