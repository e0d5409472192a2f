//! Memory access benchmark kernels (micbench-mem, lmbench `bw_mem`, Intel
//! MLC's loaded latency) and the time-bounded multi-threaded runner.
//!
//! Two access patterns, as micbench-mem has them:
//! - **random**: a dependent pointer chase (the [`crate::chase`] kernel)
//!   around one pseudo-random cycle of 64-byte lines ([`build_ring`]: a
//!   keyed Feistel permutation, written in parallel). Each load's address is the
//!   previous load's value, so loads never overlap and time per load is the
//!   latency of wherever the line lives;
//! - **sequential**: streaming read, write or copy with the widest vector
//!   loads/stores the CPU has (AVX-512, else AVX2, else a plain u64 loop),
//!   so the core issues as many line requests as its fill buffers allow and
//!   the figure is bandwidth, not instruction throughput. lmbench's `bw_mem
//!   rd` sums 4-byte integers; a 64-byte load per line keeps the core far
//!   from being the bottleneck even for cache-resident sizes.
//!
//! Every thread runs for a fixed wall-clock time (micbench's `-t`) cut into
//! slices of ~20 ms. Between slices the thread measures its core clock with
//! the add chain ([`clockref::core_mhz_now`], ~5 µs), so cycles per op are
//! computed with the clock of that moment: a core's clock moves with turbo
//! and power management (under a hypervisor, with the host's), while the
//! TSC (which micbench counts as "clk") ticks at a fixed rate. Slices are returned raw; summarising
//! them is `hwcal_analysis::mem`'s job.
//!
//! Files: [`kernels`] (the streaming kernels), [`ring`] (the random
//! cycles), [`prepare`] (buffers), [`plan`] (the jobs and their check),
//! [`thread`] (the timed runner), [`hugetlbfs`] (mount points).

mod hugetlbfs;
mod kernels;
mod plan;
mod prepare;
mod ring;
mod thread;

pub use hugetlbfs::{hugetlbfs_mounts, parse_hugetlbfs_mounts};
pub use kernels::{isa, Isa, GRAIN, LINE};
pub use plan::{split, validate, Job, RunTiming, Slice, ThreadRun, Work, MAX_CHAINS};
pub use prepare::{prepare_all, Prep, Prepared};
pub use ring::{build_local_ring, build_ring, Perm, LOCAL_OFFSET, LOCAL_WINDOW_PAGES};
pub use thread::run;

#[cfg(test)]
mod tests;
