//! Naming a core's microarchitecture ("generation") from what the CPU says
//! about itself: x86 vendor/family/model (CPUID leaf 1) and the Arm MIDR_EL1
//! implementer/part fields (`/proc/cpuinfo` "CPU implementer" / "CPU part").
//!
//! The marketing name (`cpu_model_name`) is useless on cloud guests
//! ("Intel(R) Xeon(R) Processor", "AMD EPYC"), while the family/model pair
//! names the core exactly, and the core is what decides the cache and TLB
//! figures hwcal compares. Tables follow the vendors' published model numbers
//! (Intel SDM vol. 4 model list, AMD's family 17h/19h/1Ah PPRs, Arm's TRMs).

/// The core generation of an x86 CPU, or `None` where the table does not
/// know the family/model pair.
pub fn x86_core(vendor: &str, family: u32, model: u32) -> Option<&'static str> {
    match vendor {
        "GenuineIntel" => intel_core(family, model),
        "AuthenticAMD" | "HygonGenuine" => amd_core(family, model),
        _ => None,
    }
}

fn intel_core(family: u32, model: u32) -> Option<&'static str> {
    if family != 6 {
        return None;
    }
    Some(match model {
        0x3F => "Haswell",
        0x4F | 0x56 => "Broadwell",
        0x4E | 0x5E => "Skylake",
        0x55 => "Skylake-SP/Cascade Lake",
        0x8E | 0x9E => "Kaby/Coffee Lake",
        0x6A | 0x6C => "Ice Lake-SP",
        0x7D | 0x7E => "Ice Lake",
        0x8C | 0x8D => "Tiger Lake",
        0x97 | 0x9A => "Alder Lake",
        0xB7 | 0xBA | 0xBF => "Raptor Lake",
        0xAA | 0xAC => "Meteor Lake",
        0x8F => "Sapphire Rapids",
        0xCF => "Emerald Rapids",
        0xAD | 0xAE => "Granite Rapids",
        0xAF => "Sierra Forest",
        0xC5 | 0xC6 => "Arrow Lake",
        0xBD => "Lunar Lake",
        _ => return None,
    })
}

fn amd_core(family: u32, model: u32) -> Option<&'static str> {
    Some(match (family, model) {
        (0x17, 0x00..=0x2F) => "Zen/Zen+",
        (0x17, _) => "Zen 2",
        (0x18, _) => "Zen (Hygon Dhyana)",
        (0x19, 0x10..=0x1F) | (0x19, 0x60..=0x7F) => "Zen 4",
        (0x19, 0xA0..=0xAF) => "Zen 4c",
        (0x19, 0x40..=0x4F) => "Zen 3+",
        (0x19, _) => "Zen 3",
        (0x1A, _) => "Zen 5",
        _ => return None,
    })
}

/// The core of an Arm CPU from MIDR_EL1's implementer and part number.
pub fn arm_core(implementer: u32, part: u32) -> Option<&'static str> {
    Some(match (implementer, part) {
        (0x41, 0xD03) => "Cortex-A53",
        (0x41, 0xD05) => "Cortex-A55",
        (0x41, 0xD07) => "Cortex-A57",
        (0x41, 0xD08) => "Cortex-A72",
        (0x41, 0xD0B) => "Cortex-A76",
        (0x41, 0xD0C) => "Neoverse N1",
        (0x41, 0xD0D) => "Cortex-A77",
        (0x41, 0xD40) => "Neoverse V1",
        (0x41, 0xD41) => "Cortex-A78",
        (0x41, 0xD44) => "Cortex-X1",
        (0x41, 0xD46) => "Cortex-A510",
        (0x41, 0xD47) => "Cortex-A710",
        (0x41, 0xD48) => "Cortex-X2",
        (0x41, 0xD49) => "Neoverse N2",
        (0x41, 0xD4F) => "Neoverse V2",
        (0x41, 0xD84) => "Neoverse V3",
        (0x41, 0xD8E) => "Neoverse N3",
        (0x43, 0x0AF) => "ThunderX2",
        (0x46, 0x001) => "A64FX",
        (0x48, 0xD01) => "Kunpeng 920 (TSV110)",
        (0xC0, 0xAC3..=0xAC5) => "AmpereOne",
        _ => return None,
    })
}

/// The name shown where no table entry matched.
pub const UNKNOWN_CORE: &str = "unknown";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_machines_in_the_reference_figures_are_named() {
        assert_eq!(x86_core("AuthenticAMD", 25, 1), Some("Zen 3"));
        assert_eq!(x86_core("AuthenticAMD", 25, 0x11), Some("Zen 4"));
        assert_eq!(x86_core("GenuineIntel", 6, 143), Some("Sapphire Rapids"));
        assert_eq!(x86_core("GenuineIntel", 6, 207), Some("Emerald Rapids"));
        assert_eq!(x86_core("GenuineIntel", 6, 0xAD), Some("Granite Rapids"));
        assert_eq!(arm_core(0x41, 0xD0C), Some("Neoverse N1"));
        assert_eq!(arm_core(0x41, 0xD4F), Some("Neoverse V2"));
    }

    #[test]
    fn unknown_pairs_are_not_guessed() {
        assert_eq!(x86_core("GenuineIntel", 15, 6), None);
        assert_eq!(x86_core("CentaurHauls", 6, 15), None);
        assert_eq!(arm_core(0x61, 0x22), None);
    }
}
