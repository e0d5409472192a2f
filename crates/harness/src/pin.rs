//! CPU pinning. A measuring thread that migrates mid-sample loses its warm
//! caches and TLB and may land on a core at another clock, so hwcal pins it
//! to one CPU by default and reports which.

use crate::error::HarnessError;
use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::unistd::Pid;

/// CPUs this process may run on (as it was started: before hwcal pinned
/// itself).
pub fn allowed_cpus() -> Vec<usize> {
    // Once hwcal has pinned itself its own affinity names one CPU; what the
    // user allowed (taskset, a cgroup's cpuset, Slurm's binding) is the set
    // it had before.
    if let Some(before) = BEFORE_PINNING.get() {
        return before.clone();
    }
    current_cpus()
}

/// The process's CPUs before its first [`pin_to`].
static BEFORE_PINNING: std::sync::OnceLock<Vec<usize>> = std::sync::OnceLock::new();

/// The calling thread's affinity now.
fn current_cpus() -> Vec<usize> {
    match sched_getaffinity(Pid::from_raw(0)) {
        Ok(set) => (0..CpuSet::count())
            .filter(|&c| set.is_set(c).unwrap_or(false))
            .collect(),
        Err(_) => (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect(),
    }
}

/// The CPU hwcal pins to by default: the highest allowed one. CPU 0 usually
/// takes more device interrupts and housekeeping work.
pub fn default_cpu() -> Option<usize> {
    allowed_cpus().last().copied()
}

/// Pin the calling thread to `cpu`.
pub fn pin_to(cpu: usize) -> Result<(), HarnessError> {
    BEFORE_PINNING.get_or_init(current_cpus);
    let mut set = CpuSet::new();
    set.set(cpu).map_err(|_| HarnessError::NoSuchCpu(cpu))?;
    sched_setaffinity(Pid::from_raw(0), &set).map_err(|e| HarnessError::Pin(cpu, e.to_string()))
}

/// Restrict the calling thread to a set of CPUs.
pub fn pin_to_set(cpus: &[usize]) -> Result<(), HarnessError> {
    let mut set = CpuSet::new();
    for &c in cpus {
        set.set(c).map_err(|_| HarnessError::NoSuchCpu(c))?;
    }
    sched_setaffinity(Pid::from_raw(0), &set).map_err(|e| HarnessError::Pin(cpus[0], e.to_string()))
}

/// Undo pinning: allow every CPU in `cpus`.
pub fn unpin(cpus: &[usize]) -> Result<(), HarnessError> {
    if cpus.is_empty() {
        return Ok(());
    }
    pin_to_set(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pin_and_unpin() {
        let all = allowed_cpus();
        assert!(!all.is_empty());
        let cpu = default_cpu().unwrap();
        pin_to(cpu).unwrap();
        assert_eq!(current_cpus(), vec![cpu]);
        // What the process was allowed stays what it was allowed.
        assert_eq!(allowed_cpus(), all);
        unpin(&all).unwrap();
        assert_eq!(current_cpus(), all);
        assert!(matches!(pin_to(100_000), Err(HarnessError::NoSuchCpu(_))));
    }
}
