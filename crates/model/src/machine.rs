//! What the machine says about itself (OS, CPUID, sysfs: its caches, TLBs,
//! NUMA nodes and identity) and how the timing harness was set up on it.
//! Nothing here is measured by a probe.

use crate::cores::{self, Midr};
use crate::serde_nan::nan_if_null;
#[cfg(feature = "schema")]
use crate::serde_nan::NanOrNumber;
use serde::{Deserialize, Serialize};

/// What the machine says about itself (OS, CPUID, sysfs). Nothing here is measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MachineInfo {
    pub hostname: String,
    pub arch: String,
    pub cpu_vendor: String,
    pub cpu_model_name: String,
    pub cpu_family: Option<u32>,
    pub cpu_model: Option<u32>,
    pub cpu_stepping: Option<u32>,
    pub logical_cpus: usize,
    pub online_cpus: Vec<usize>,
    pub kernel: String,
    pub hypervisor: Option<String>,
    /// Transparent huge pages mode: `always`, `madvise` or `never`.
    pub thp_mode: Option<String>,
    pub hugepages_reserved: u64,
    pub hugepage_size_bytes: Option<u64>,
    pub numa_nodes: Vec<NumaNode>,
    pub memory_total_bytes: u64,
    pub memory_available_bytes: u64,
    pub invariant_tsc: bool,
    pub cpu_flags: Vec<String>,
    pub nominal_caches: Vec<NominalCache>,
    /// Data TLBs as CPUID describes them (absent in older profiles).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nominal_tlbs: Vec<NominalTlb>,
    /// Which machine this is, for telling machines apart in a fleet (absent
    /// in older profiles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<MachineIdentity>,
    /// Arm: the MIDR_EL1 fields (implementer, variant, part, revision) that
    /// name the core; absent on x86 and in older profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub midr: Option<Midr>,
    /// Base page size, bytes (`sysconf(_SC_PAGESIZE)`: 4 KiB on x86, 4, 16
    /// or 64 KiB on Arm); absent in older profiles (which were 4 KiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_bytes: Option<u64>,
    /// Huge page sizes the kernel offers (`/sys/kernel/mm/hugepages/`),
    /// ascending.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hugepage_sizes: Vec<u64>,
    /// Arm: the smallest data cache line of the hierarchy, from CTR_EL0's
    /// DminLine field (4 << DminLine bytes); the nominal line size where
    /// sysfs states none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dminline_bytes: Option<u64>,
    /// Set when hwcal runs under an emulator (QEMU user mode): what was
    /// detected. Timing figures of such a run describe the emulator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulation: Option<String>,
}

impl MachineInfo {
    /// Whether the machine is an Arm one (its x86-only fields, the
    /// invariant TSC and CPUID family/model, mean nothing there).
    pub fn is_arm(&self) -> bool {
        self.arch == "aarch64" || self.arch == "arm" || self.midr.is_some()
    }

    /// The core generation from MIDR_EL1 on Arm, from vendor/family/model
    /// on x86; `None` where the tables do not know it.
    pub fn core_name(&self) -> Option<&'static str> {
        match &self.midr {
            Some(m) => m.core(),
            None => cores::x86_core(&self.cpu_vendor, self.cpu_family?, self.cpu_model?),
        }
    }

    /// Nominal data (or unified) cache at a level, as sysfs/CPUID state it.
    pub fn nominal_data_cache(&self, level: u32) -> Option<&NominalCache> {
        self.nominal_caches
            .iter()
            .find(|c| c.level == level && (c.cache_type == "Data" || c.cache_type == "Unified"))
    }
}

/// A machine's identity: a stable id and what the platform says it is.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MachineIdentity {
    /// A stable, non-reversible id (hex digest), the same on every run on
    /// this machine.
    pub machine_id: String,
    /// What the id was derived from: `dmi-product-uuid`, `machine-id` or
    /// `hostname` (the last is not unique across a fleet).
    pub id_source: String,
    /// The core generation (`Zen 3`, `Emerald Rapids`, `Neoverse N1`, ...;
    /// `unknown` where hwcal's table does not know the core).
    pub core: String,
    /// The platform's product name where it states one (DMI product name:
    /// a cloud instance type, a server model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NumaNode {
    pub node: u32,
    pub cpus: Vec<usize>,
    pub memory_bytes: Option<u64>,
}

/// A cache as the OS (sysfs) or CPUID leaf 4 describes it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NominalCache {
    pub level: u32,
    /// `Data`, `Instruction` or `Unified`.
    #[serde(rename = "type")]
    pub cache_type: String,
    pub size_bytes: u64,
    pub line_bytes: Option<u64>,
    pub ways: Option<u64>,
    pub sets: Option<u64>,
    /// CPUs sharing this cache (from `shared_cpu_list`).
    pub shared_cpus: Vec<usize>,
    /// `sysfs` or `cpuid`.
    pub source: String,
}

/// A data TLB as CPUID describes it (Intel leaf 0x18, AMD leaves
/// 0x8000_0005/6), or as a per-core table corrects it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NominalTlb {
    pub level: u32,
    pub page_bytes: u64,
    pub entries: u64,
    /// Associativity; `None` for fully associative or unknown.
    pub ways: Option<u64>,
    /// `cpuid`, or `table` where a known core's CPUID understates.
    pub source: String,
}

/// How the timing harness was set up for this run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct HarnessInfo {
    /// `tsc`, `cntvct` or `clock_monotonic_raw`.
    pub timer: String,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub timer_resolution_ns: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub timer_overhead_ns: f64,
    pub tsc_mhz: Option<f64>,
    /// Arm: the generic counter's frequency in use, MHz (CNTFRQ_EL0, or
    /// the rate measured against `CLOCK_MONOTONIC_RAW` where the register
    /// disagrees with it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter_mhz: Option<f64>,
    /// Arm: what CNTFRQ_EL0 stated, recorded only where it disagreed with
    /// the measured rate by more than 1% (and was therefore not used).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter_stated_mhz: Option<f64>,
    /// CPU the measuring thread was pinned to, if any.
    pub pinned_cpu: Option<usize>,
    /// Timing interval the harness considered long enough (lmbench's `enough`).
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub enough_ns: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nominal_cache_type_field_is_named_type() {
        let c = NominalCache {
            level: 1,
            cache_type: "Data".into(),
            size_bytes: 49152,
            ..Default::default()
        };
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["type"], "Data");
    }
}
