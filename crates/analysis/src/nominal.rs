//! Cross-checks of the nominal figures: where two sources of the same
//! stated figure disagree (a hypervisor often rewrites one of them), say so
//! (DESIGN.md, principle 2).

use hwcal_model::{MachineInfo, NominalCache, Note};

/// Where sysfs (in `machine.nominal_caches`) and CPUID leaf 4 (`cpuid`)
/// state different sizes for the same cache, one note per cache.
pub fn cross_check(machine: &MachineInfo, cpuid: &[NominalCache]) -> Vec<Note> {
    let mut notes = Vec::new();
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

#[cfg(test)]
mod tests {
    use super::*;

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
