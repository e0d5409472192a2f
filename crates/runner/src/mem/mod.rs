//! The memory probe: micbench-mem in Rust. Random (dependent chase: latency) or
//! sequential (read / write / copy: bandwidth) access by N threads for a
//! fixed time, with CPU affinity and NUMA binding per thread (`-a
//! TID:cCPU:NODE`), per-thread buffers (`-L`), huge pages (THP or
//! hugetlbfs); plus a bandwidth sweep over thread counts with loaded latency
//! (Intel MLC style) and a NUMA latency matrix.
//!
//! Output keeps micbench's keys. Its `clk_per_op` counts TSC ticks, which
//! tick at a fixed rate (the invariant TSC) while the core's clock moves
//! with turbo and power state; hwcal's `clk_per_op` is in core cycles from
//! the clock measured alongside every ~20 ms slice, and micbench's figure is
//! kept as `tsc_per_op`.

use crate::probe::{Plan, ProbeEntry, Progress};
use crate::Result;
use hwcal_model::Profile;

mod command;
mod job;
pub mod placement;
pub(crate) mod short;
mod sweep;
pub mod syntax;

pub use command::{measure_command, Command};
pub use job::{round_size, Config, MemOp, Mode, Place};
use short::run_short;

/// In `hwcal run`: a short memory section (≈2–3 s): latency over 1 GiB on
/// huge pages (and the same buffer window by window, for the page walks'
/// share), then read bandwidth with one thread and with every CPU.
pub const ENTRY: ProbeEntry = ProbeEntry {
    id: "mem",
    description: "memory latency (random chase, huge pages) and read bandwidth (1 and all threads)",
    opt_in: false,
    typical_s: 3.5,
    reads: &[],
    plan: |config, machine| {
        // The bandwidth phase's threads only on CPUs this process may use.
        let cpus = if machine.online_cpus.is_empty() {
            config.pinned_cpu.into_iter().collect()
        } else {
            crate::c2c::within_allowed(&machine.online_cpus)
        };
        Some(Box::new(Short {
            cpus,
            pinned: config.pinned_cpu,
            sweep: Profile::default(),
        }))
    },
    analyze: hwcal_analysis::mem_raw::reanalyze,
};

/// The short section's plan: the online CPUs and the one `run` is pinned
/// to, and what the run measured before it that the chase is judged
/// against (the cache sweep's and the TLB's curves, with the machine).
#[derive(Debug, Clone)]
pub struct Short {
    pub cpus: Vec<usize>,
    pub pinned: Option<usize>,
    pub sweep: Profile,
}

impl Plan for Short {
    fn run(&self, hw: &dyn crate::points::Hardware, progress: &dyn Progress) -> Result<Profile> {
        let mut p = Profile::default();
        run_short(hw, (&self.cpus, self.pinned), progress, (&self.sweep, &mut p))?;
        Ok(p)
    }

    fn sees(&mut self, so_far: &Profile) {
        self.sweep = Profile {
            machine: so_far.machine.clone(),
            raw: so_far
                .raw
                .iter()
                .filter(|c| matches!(hwcal_model::curve::probe_of(&c.id), Some("cache" | "tlb")))
                .cloned()
                .collect(),
            ..Profile::default()
        };
    }
}
