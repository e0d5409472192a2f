//! Storage I/O kernels: the jobs of micbench-io and fio.
//!
//! Method (micbench-io, seed 002; fio as the yardstick): N threads, each with
//! its own file descriptor, issue block-sized reads and/or writes at
//! sequential or uniformly random block-aligned offsets of one test file,
//! for a fixed time or until each thread has moved its share of the file.
//! Every I/O is timed on the harness timer (TSC) from issue to completion
//! (fio's total `lat`, submission plus completion) and recorded into a
//! log-linear histogram, so latency percentiles are right to < 1% without
//! keeping every sample.
//!
//! Engines, as fio names them: `sync` (lseek + read/write, seeking only when
//! the position changes), `psync` (pread/pwrite) and `io_uring` (one ring per
//! thread, `iodepth` I/Os in flight; plain IORING_OP_READ/WRITE, no
//! registered buffers or polling, each I/O submitted as soon as its slot is
//! free and at least one completion awaited when the queue is full, like
//! fio's defaults).
//!
//! Why the page cache matters: a buffered read of a file that was just
//! written is served from memory, not the device, and a time-bound run that
//! loops over a file smaller than RAM would read (or overwrite) memory from
//! its second pass on. Like fio (`invalidate=1`), the file's pages are
//! dropped with `posix_fadvise(DONTNEED)` before the run and again at the
//! start of every pass (which also starts writing back dirty pages), so
//! buffered figures are those of the device behind the kernel's readahead
//! and write-back, as fio's are; without the per-pass invalidation every
//! pass after the first would run at memory speed, several times the
//! device's. `O_DIRECT` bypasses the cache:
//! it needs buffers, offsets and sizes aligned to the device's logical block
//! (512 B or 4 KiB).
//!
//! Test-file life cycle: [`TestFile::create`] makes a uniquely named file
//! with `O_EXCL` and removes it on drop, on every path (errors and
//! interruption included): the kernels poll a stop flag the caller's signal
//! handler sets, finish the I/Os in flight and return normally.
//!
//! Files: [`job`] (the job and its results), [`file`] (the test file),
//! [`cursor`] (each thread's next I/O), [`shared`] (what the threads share),
//! [`sync`] and [`uring`] (the engines), [`run`] (the coordinator) and
//! [`safety`] (which targets may be opened at all).

mod cursor;
mod file;
mod job;
mod run;
pub mod safety;
mod shared;
mod sync;
mod uring;

pub use file::{remove_leftovers, TestFile};
pub use job::{Engine, IoError, IoJob, IoRun, Pattern, ThreadStats};
pub use run::run;

#[cfg(test)]
mod tests;
