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
        // Implementer 0 is reserved for software; QEMU's `-cpu max` (TCG)
        // reports it with part 'Q'.
        (0x00, 0x051) => "QEMU max (emulated)",
        (0x41, 0xD03) => "Cortex-A53",
        (0x41, 0xD04) => "Cortex-A35",
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
        (0x41, 0xD0E) => "Cortex-A76AE",
        (0x43, 0x0AF) => "ThunderX2",
        (0x4E, 0x004) => "Carmel",
        (0x50, 0x000) => "X-Gene",
        (0x46, 0x001) => "A64FX",
        (0x48, 0xD01) => "Kunpeng 920 (TSV110)",
        // Ampere Altra and Altra Max are Neoverse N1 cores and report Arm's
        // own MIDR (0x41/0xD0C); Ampere's own cores carry its code.
        (0xC0, 0xAC3..=0xAC5) => "AmpereOne",
        (0x51, 0x001) => "Oryon",
        _ => return None,
    })
}

/// The name shown where no table entry matched.
pub const UNKNOWN_CORE: &str = "unknown";

/// An Arm core's identification register MIDR_EL1, split into its fields
/// (Arm ARM D19.2: implementer 31:24, variant 23:20, architecture 19:16,
/// part number 15:4, revision 3:0). `r{variant}p{revision}` is Arm's name
/// for the core's revision.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Midr {
    pub implementer: u32,
    pub variant: u32,
    pub part: u32,
    pub revision: u32,
}

impl Midr {
    /// Split a raw MIDR_EL1 value (sysfs `midr_el1`, or `mrs midr_el1`).
    pub fn from_raw(v: u64) -> Midr {
        Midr {
            implementer: ((v >> 24) & 0xff) as u32,
            variant: ((v >> 20) & 0xf) as u32,
            part: ((v >> 4) & 0xfff) as u32,
            revision: (v & 0xf) as u32,
        }
    }

    /// From an Arm `/proc/cpuinfo` ("CPU implementer : 0x41", "CPU part :
    /// 0xd0c", ...: the first processor's block). `None` where the file is
    /// not an Arm one (under QEMU user mode it is the host's).
    pub fn from_cpuinfo(cpuinfo: &str) -> Option<Midr> {
        let field = |key: &str| {
            cpuinfo
                .lines()
                .find(|l| l.split(':').next().map(str::trim) == Some(key))
                .and_then(|l| l.split_once(':'))
                .and_then(|(_, v)| parse_num(v.trim()))
        };
        Some(Midr {
            implementer: field("CPU implementer")?,
            variant: field("CPU variant").unwrap_or(0),
            part: field("CPU part")?,
            revision: field("CPU revision").unwrap_or(0),
        })
    }

    /// The core name, where the table knows the implementer/part pair.
    pub fn core(&self) -> Option<&'static str> {
        arm_core(self.implementer, self.part)
    }

    /// The implementer's name (Arm's list of implementer codes).
    pub fn vendor(&self) -> String {
        arm_implementer(self.implementer)
            .map_or_else(|| format!("implementer {:#x}", self.implementer), String::from)
    }
}

/// "0x41" or "65" as a number.
fn parse_num(s: &str) -> Option<u32> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// The company behind a MIDR_EL1 implementer code.
pub fn arm_implementer(code: u32) -> Option<&'static str> {
    Some(match code {
        0x00 => "software-defined",
        0x41 => "Arm",
        0x42 => "Broadcom",
        0x43 => "Cavium",
        0x46 => "Fujitsu",
        0x48 => "HiSilicon",
        0x4E => "NVIDIA",
        0x50 => "Applied Micro",
        0x51 => "Qualcomm",
        0x61 => "Apple",
        0x6D => "Microsoft",
        0xC0 => "Ampere",
        _ => return None,
    })
}

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
    fn midr_fields_from_the_register_and_from_cpuinfo() {
        // Neoverse N1 r3p1 (AWS Graviton2 / Ampere Altra).
        let m = Midr::from_raw(0x0000_0000_413f_d0c1);
        assert_eq!(
            m,
            Midr {
                implementer: 0x41,
                variant: 3,
                part: 0xd0c,
                revision: 1
            }
        );
        assert_eq!((m.core(), m.vendor().as_str()), (Some("Neoverse N1"), "Arm"));
        let cpuinfo = "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd\n\
                       CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\n\
                       CPU part\t: 0xd0c\nCPU revision\t: 1\n\nprocessor\t: 1\n";
        assert_eq!(Midr::from_cpuinfo(cpuinfo), Some(m));
        // An x86 /proc/cpuinfo (QEMU user mode shows the host's) has none.
        assert_eq!(
            Midr::from_cpuinfo("vendor_id\t: AuthenticAMD\ncpu family\t: 25\n"),
            None
        );
        assert_eq!(Midr::from_raw(0x461f_0011).core(), Some("A64FX"));
        assert_eq!(Midr::from_raw(0xc00f_ac30).vendor(), "Ampere");
        assert_eq!(Midr::from_raw(0x120f_0010).vendor(), "implementer 0x12");
        // QEMU's -cpu max.
        assert_eq!(Midr::from_raw(0x000f_0510).core(), Some("QEMU max (emulated)"));
    }

    #[test]
    fn unknown_pairs_are_not_guessed() {
        assert_eq!(x86_core("GenuineIntel", 15, 6), None);
        assert_eq!(x86_core("CentaurHauls", 6, 15), None);
        assert_eq!(arm_core(0x61, 0x22), None);
    }
}
