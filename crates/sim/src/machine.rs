//! A [`Model`] as the runner's [`Machine`]: `calibrate` plans its probes
//! from the machine description the model gives, and each probe returns
//! the raw curves the real one would, so the real analysis — the same
//! code `hwcal run` runs — derives every figure.
//!
//! The cache and TLB probes are simulated; the others return nothing
//! (their figures are not modelled yet).

use crate::model::Model;
use crate::points::SimHardware;
use hwcal_model::{HarnessInfo, MachineIdentity, MachineInfo, NominalCache, Profile};
use hwcal_runner::{Hardware, Machine, Plan, ProbeEntry, Progress};

/// See the module documentation.
#[derive(Debug, Clone)]
pub struct Sim {
    pub model: Model,
    /// The virtual clock, seconds, carried from one probe to the next as
    /// a real run's time runs on (a drifting memory is where the clock has
    /// brought it, whichever probe measures).
    clock: std::cell::Cell<f64>,
}

impl Sim {
    /// A simulated machine whose run starts at time 0.
    pub fn new(model: Model) -> Self {
        Sim {
            model,
            clock: std::cell::Cell::new(0.0),
        }
    }

    /// Seconds of virtual time the probes run so far took.
    pub fn elapsed_s(&self) -> f64 {
        self.clock.get()
    }

    /// The seed of probe `id`'s draws: the model's seed and the probe, so
    /// each probe's draws are its own whatever order they run in.
    fn seed(&self, id: &str) -> u64 {
        let h = id.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
        });
        self.model.seed ^ h
    }
}

impl Machine for Sim {
    fn info(&self) -> MachineInfo {
        let m = &self.model;
        let cpus: Vec<usize> = (0..m.vcpus).collect();
        // What sysfs and CPUID tell the guest, which may not be the truth.
        let (nominal_caches, nominal_tlbs) = crate::guest::stated(m);
        MachineInfo {
            hostname: "sim".into(),
            arch: if m.vendor.starts_with("Genuine") || m.vendor.starts_with("Authentic") {
                "x86_64"
            } else {
                "aarch64"
            }
            .into(),
            cpu_vendor: m.vendor.clone(),
            cpu_model_name: format!("simulated {}", m.core),
            logical_cpus: m.vcpus,
            online_cpus: cpus,
            kernel: "simulated".into(),
            hypervisor: Some("KVM".into()),
            thp_mode: Some(crate::guest::thp_mode(m).into()),
            hugepage_size_bytes: Some(m.huge_page()),
            memory_total_bytes: 64 << 30,
            memory_available_bytes: m.guest.memory_limit.unwrap_or(48 << 30),
            invariant_tsc: true,
            cpu_flags: vec!["constant_tsc".into(), "nonstop_tsc".into(), "clflush".into()],
            nominal_caches,
            nominal_tlbs,
            identity: Some(MachineIdentity {
                machine_id: format!("{:032x}", m.seed),
                id_source: "simulation".into(),
                core: m.core.clone(),
                product: None,
            }),
            page_bytes: Some(m.page),
            ..Default::default()
        }
    }

    fn cpuid_caches(&self) -> Vec<NominalCache> {
        Vec::new()
    }

    fn harness(&self, pinned_cpu: Option<usize>) -> HarnessInfo {
        HarnessInfo {
            timer: "tsc".into(),
            timer_resolution_ns: 0.5,
            timer_overhead_ns: 10.0,
            tsc_mhz: Some(self.model.mhz),
            pinned_cpu,
            enough_ns: 20_000.0,
            ..Default::default()
        }
    }

    fn run(
        &self,
        probe: &ProbeEntry,
        plan: &dyn Plan,
        progress: &dyn Progress,
    ) -> hwcal_runner::Result<Profile> {
        progress.say(&format!("{}: simulated", probe.id));
        match probe.id {
            // The runner's own plans, on the model's points.
            "cache" | "tlb" | "mem" => {
                let hw = SimHardware::new(&self.model, &self.info(), self.seed(probe.id))
                    .starting_at(self.clock.get());
                let p = plan.run(&hw, progress);
                self.clock.set(hw.now_s());
                p
            }
            _ => Ok(Profile::default()),
        }
    }
}
