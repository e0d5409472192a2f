//! `hwcal info`: the machine as the OS and CPUID describe it.

use crate::cli::InfoArgs;
use crate::common::{check_dest, command_line, emit, now_unix};
use anyhow::Result;
use hwcal_model::Profile;

pub fn run(a: InfoArgs) -> Result<()> {
    check_dest(a.json.as_deref())?;
    let mut p = Profile::new(command_line(), now_unix());
    p.machine = Some(hwcal_probes::sysinfo::machine_info());
    p.notes = nominal_cross_check();
    emit(&p, a.json.as_deref())
}

/// Where sysfs and CPUID leaf 4 disagree, say so (VMs often rewrite one).
pub fn nominal_cross_check() -> Vec<String> {
    let m = hwcal_probes::sysinfo::machine_info();
    let cpuid = hwcal_probes::sysinfo::nominal_caches_cpuid();
    let mut notes = Vec::new();
    for c in &cpuid {
        if let Some(s) = m
            .nominal_caches
            .iter()
            .find(|s| s.level == c.level && s.cache_type == c.cache_type && s.source == "sysfs")
        {
            if s.size_bytes != c.size_bytes {
                notes.push(format!(
                    "L{} {}: sysfs says {} bytes, CPUID leaf 4 says {} bytes",
                    c.level, c.cache_type, s.size_bytes, c.size_bytes
                ));
            }
        }
    }
    notes
}
