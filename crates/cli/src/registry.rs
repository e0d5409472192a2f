//! The probe registry: every probe `hwcal run` knows, as a table entry
//! (uarch-bench / multichase style) rather than a hard-coded branch.
//! Adding a probe to the full calibration means adding one line here.

use crate::common::Progress;
use anyhow::Result;
use hwcal_model::{MachineInfo, Profile};

/// What a probe gets from `hwcal run`.
pub struct RunCtx {
    pub progress: Progress,
    pub pinned_cpu: Option<usize>,
    pub machine: MachineInfo,
}

/// One registered probe.
pub struct ProbeEntry {
    pub id: &'static str,
    pub description: &'static str,
    /// Measure and fill the probe's sections of the profile (raw data too).
    pub measure: fn(&RunCtx, &mut Profile) -> Result<()>,
    /// Recompute the probe's figures from the raw data in a profile; `Ok(false)`
    /// if the profile holds no raw data of this probe.
    pub reanalyze: fn(&mut Profile) -> Result<bool>,
}

/// Every probe, in the order `hwcal run` runs them.
pub fn probes() -> Vec<ProbeEntry> {
    vec![
        crate::cmd::clock::ENTRY,
        // The TLB before the caches: where the TLB sees 4 KiB pages the
        // cache analysis removes the TLB's share with the TLB's curves.
        crate::cmd::tlb::ENTRY,
        crate::cmd::cache::ENTRY,
        crate::cmd::mem::ENTRY,
        crate::cmd::ctx::ENTRY,
    ]
}

/// Look up probes by id; unknown ids are a usage error.
pub fn select(only: &[String], skip: &[String]) -> Result<Vec<ProbeEntry>> {
    let all = probes();
    for id in only.iter().chain(skip) {
        if !all.iter().any(|p| p.id == id) {
            let ids: Vec<&str> = all.iter().map(|p| p.id).collect();
            crate::usage!("unknown probe '{id}' (known: {})", ids.join(", "));
        }
    }
    Ok(all
        .into_iter()
        .filter(|p| (only.is_empty() || only.iter().any(|o| o == p.id)) && !skip.iter().any(|s| s == p.id))
        .collect())
}
