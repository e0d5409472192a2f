//! A [`Model`] as the runner's [`Machine`]: `calibrate` plans its probes
//! from the machine description the model gives, and each probe returns
//! the raw curves the real one would, so the real analysis — the same
//! code `hwcal run` runs — derives every figure.
//!
//! The cache and TLB probes are simulated; the others return nothing
//! (their figures are not modelled yet).

use crate::model::Model;
use crate::points::SimHardware;
use hwcal_model::{HarnessInfo, MachineIdentity, MachineInfo, NominalCache, NominalTlb, Profile};
use hwcal_runner::{Machine, Plan, ProbeEntry, Progress};

/// See the module documentation.
#[derive(Debug, Clone)]
pub struct Sim {
    pub model: Model,
}

impl Sim {
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
        let nominal_caches = m
            .levels
            .iter()
            .enumerate()
            .map(|(i, l)| NominalCache {
                level: i as u32 + 1,
                cache_type: if i == 0 { "Data" } else { "Unified" }.into(),
                size_bytes: l.size,
                line_bytes: Some(l.line),
                ways: Some(l.ways as u64),
                sets: Some(l.size / l.line / l.ways.max(1) as u64),
                shared_cpus: if l.shared { cpus.clone() } else { vec![0] },
                source: "sysfs".into(),
            })
            .collect();
        let nominal_tlbs = m
            .tlbs
            .iter()
            .enumerate()
            .map(|(i, t)| NominalTlb {
                level: i as u32 + 1,
                page_bytes: m.page,
                entries: t.entries,
                ways: (t.ways > 0).then_some(t.ways as u64),
                source: "model".into(),
            })
            .collect();
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
            thp_mode: Some("madvise".into()),
            hugepage_size_bytes: Some(m.huge_page()),
            memory_total_bytes: 64 << 30,
            memory_available_bytes: 48 << 30,
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
            "cache" | "tlb" | "mem" => plan.run(&SimHardware::new(&self.model, &self.info(), self.seed(probe.id)), progress),
            _ => Ok(Profile::default()),
        }
    }
}
