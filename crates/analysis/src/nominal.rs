//! Cross-checks of the nominal figures: where two sources of the same
//! stated figure disagree (a hypervisor often rewrites one of them), say so
//! (DESIGN.md, principle 2).

use hwcal_model::{MachineInfo, NominalCache, Note};

/// Where sysfs (in `machine.nominal_caches`) and CPUID leaf 4 (`cpuid`)
/// state different sizes for the same cache, one note per cache; and, first,
/// a warning where the run is emulated.
pub fn cross_check(machine: &MachineInfo, cpuid: &[NominalCache]) -> Vec<Note> {
    let mut notes: Vec<Note> = emulation_note(machine).into_iter().collect();
    for c in cpuid {
        if let Some(s) = machine
            .nominal_caches
            .iter()
            .find(|s| s.level == c.level && s.cache_type == c.cache_type && s.source == "sysfs")
        {
            if s.size_bytes != c.size_bytes {
                notes.push(Note::warning(
                    "machine",
                    "nominal_mismatch",
                    format!(
                        "L{} {}: sysfs says {} bytes, CPUID leaf 4 says {} bytes",
                        c.level, c.cache_type, s.size_bytes, c.size_bytes
                    ),
                ));
            }
        }
    }
    notes
}

/// Under emulation (QEMU user mode) every timing describes the emulator's
/// translated code, and the OS figures (sysfs caches) the host: say so.
pub fn emulation_note(machine: &MachineInfo) -> Option<Note> {
    let e = machine.emulation.as_deref()?;
    Some(Note::warning(
        "machine",
        "emulated",
        format!(
            "running under {e}: the timing figures (clock, latencies, bandwidths, TLB and cache levels) \
             describe the emulator, not the hardware, and are not trustworthy; sysfs figures describe the host"
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emulated_runs_say_their_timings_mean_nothing() {
        let mut m = MachineInfo::default();
        assert!(cross_check(&m, &[]).is_empty());
        m.emulation = Some("user-mode emulation (aarch64 binary on a x86_64 host, e.g. qemu-aarch64)".into());
        let n = cross_check(&m, &[]);
        assert_eq!(n.len(), 1);
        assert!(n[0].to_string().contains("not trustworthy"), "{}", n[0]);
    }

    fn cache(size: u64, source: &str) -> NominalCache {
        NominalCache {
            level: 3,
            cache_type: "Unified".into(),
            size_bytes: size,
            source: source.into(),
            ..Default::default()
        }
    }

    #[test]
    fn disagreeing_sources_are_noted() {
        let m = MachineInfo {
            nominal_caches: vec![cache(105 << 20, "sysfs")],
            ..Default::default()
        };
        assert!(cross_check(&m, &[cache(105 << 20, "cpuid")]).is_empty());
        let n: Vec<String> = cross_check(&m, &[cache(32 << 20, "cpuid")])
            .iter()
            .map(|n| n.to_string())
            .collect();
        assert_eq!(
            n,
            vec![format!(
                "L3 Unified: sysfs says {} bytes, CPUID leaf 4 says {} bytes",
                105u64 << 20,
                32u64 << 20
            )]
        );
    }
}
