//! The machines the runner measures on: the real one (sysfs, CPUID and the
//! kernels), or the synthetic one of the end-to-end tests, chosen by
//! [`from_env`]. The trait they implement is [`Machine`](crate::Machine).

use crate::probe::{Machine, Plan, ProbeEntry, Progress};
use crate::{usage, Context, Result};
use hwcal_model::{HarnessInfo, MachineInfo, NominalCache, Profile};

/// The real machine: sysfs, CPUID and the kernels.
#[derive(Debug, Clone, Copy, Default)]
pub struct Real;

impl Machine for Real {
    fn info(&self) -> MachineInfo {
        hwcal_probes::sysinfo::machine_info()
    }
    fn cpuid_caches(&self) -> Vec<NominalCache> {
        hwcal_probes::sysinfo::nominal_caches_cpuid()
    }
    fn harness(&self, pinned_cpu: Option<usize>) -> HarnessInfo {
        hwcal_harness::harness_info(pinned_cpu)
    }
    fn run(&self, _probe: &ProbeEntry, plan: &dyn Plan, progress: &dyn Progress) -> Result<Profile> {
        plan.run(&crate::kernels::Kernels, progress)
    }
}

/// Environment variable that selects the synthetic machine in a binary
/// built with the `synthetic` feature (the CLI's integration tests are):
/// `HWCAL_SYNTHETIC_MACHINE=1 hwcal run ...`. Hidden: not for users.
pub const SYNTHETIC_ENV: &str = "HWCAL_SYNTHETIC_MACHINE";

/// The machine to measure on: the synthetic one when built with the
/// `synthetic` feature and [`SYNTHETIC_ENV`] is set, else the real one.
pub fn from_env() -> Box<dyn Machine> {
    #[cfg(feature = "synthetic")]
    if std::env::var_os(SYNTHETIC_ENV).is_some_and(|v| !v.is_empty()) {
        return Box::new(crate::synthetic::Synthetic);
    }
    Box::new(Real)
}

/// Pin the measuring thread: to `cpu` (which must be allowed), else to
/// [`hwcal_harness::pin::default_cpu`], unless `no_pin`; returns the CPU
/// pinned to.
pub fn pin(cpu: Option<usize>, no_pin: bool) -> Result<Option<usize>> {
    if no_pin {
        return Ok(None);
    }
    let allowed = hwcal_harness::pin::allowed_cpus();
    let cpu = match cpu {
        Some(c) => {
            if !allowed.contains(&c) {
                usage!("--cpu {c}: no such CPU or not allowed (allowed: {allowed:?})");
            }
            c
        }
        None => match hwcal_harness::pin::default_cpu() {
            Some(c) => c,
            None => return Ok(None),
        },
    };
    hwcal_harness::pin::pin_to(cpu).with_context(|| format!("pinning to CPU {cpu}"))?;
    Ok(Some(cpu))
}

/// The CPUs this process may run on (its affinity mask).
pub fn allowed_cpus() -> Vec<usize> {
    hwcal_harness::pin::allowed_cpus()
}
