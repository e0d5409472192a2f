//! The CPU's names from CPUID, for a guest or container that hides
//! `/proc/cpuinfo` (a sweep found the CPU stated as "(, family ? …)" while
//! CPUID answered): the vendor string (leaf 0), the signature's display
//! family, model and stepping (leaf 1, as the Intel SDM and AMD APM define
//! them, extended fields included), the brand string (leaves
//! 0x8000_0002–4) and the hypervisor-present bit (leaf 1, ECX bit 31).

/// What CPUID names the CPU.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuNames {
    pub vendor: String,
    pub model_name: String,
    pub family: Option<u32>,
    pub model: Option<u32>,
    pub stepping: Option<u32>,
    /// CPUID says a hypervisor runs this CPU.
    pub hypervisor: bool,
}

/// The display family, model and stepping of a leaf-1 signature: the
/// extended family adds to a base family of 15, and the extended model
/// extends families 6 and 15 (AMD: 15 and above).
pub fn signature(eax: u32) -> (u32, u32, u32) {
    let stepping = eax & 0xf;
    let base_model = (eax >> 4) & 0xf;
    let base_family = (eax >> 8) & 0xf;
    let ext_model = (eax >> 16) & 0xf;
    let ext_family = (eax >> 20) & 0xff;
    let family = if base_family == 15 {
        base_family + ext_family
    } else {
        base_family
    };
    let model = if base_family == 6 || base_family == 15 {
        (ext_model << 4) | base_model
    } else {
        base_model
    };
    (family, model, stepping)
}

/// Text from registers' little-endian bytes, NULs and padding trimmed.
pub fn register_text(regs: &[u32]) -> String {
    let bytes: Vec<u8> = regs.iter().flat_map(|r| r.to_le_bytes()).collect();
    String::from_utf8_lossy(&bytes)
        .trim_matches(char::from(0))
        .trim()
        .to_string()
}

/// One CPUID leaf (and subleaf): (EAX, EBX, ECX, EDX).
#[cfg(target_arch = "x86_64")]
pub(crate) fn cpuid(leaf: u32, sub: u32) -> (u32, u32, u32, u32) {
    #[allow(unused_unsafe)]
    // SAFETY: cpuid is available on every x86_64 CPU and only writes the four
    // result registers.
    let r = unsafe { core::arch::x86_64::__cpuid_count(leaf, sub) };
    (r.eax, r.ebx, r.ecx, r.edx)
}

/// The names CPUID gives on this CPU (`None` off x86).
#[cfg(target_arch = "x86_64")]
pub fn read() -> Option<CpuNames> {
    let (max, b, c, d) = cpuid(0, 0);
    let vendor = register_text(&[b, d, c]);
    let mut out = CpuNames {
        vendor,
        ..Default::default()
    };
    if max >= 1 {
        let (eax, _, ecx, _) = cpuid(1, 0);
        let (f, m, s) = signature(eax);
        (out.family, out.model, out.stepping) = (Some(f), Some(m), Some(s));
        out.hypervisor = ecx & (1 << 31) != 0;
    }
    let (ext_max, ..) = cpuid(0x8000_0000, 0);
    if ext_max >= 0x8000_0004 {
        let regs: Vec<u32> = (0x8000_0002u32..=0x8000_0004)
            .flat_map(|leaf| {
                let (a, b, c, d) = cpuid(leaf, 0);
                [a, b, c, d]
            })
            .collect();
        out.model_name = register_text(&regs);
    }
    Some(out)
}

/// The names CPUID gives on this CPU (`None` off x86).
#[cfg(not(target_arch = "x86_64"))]
pub fn read() -> Option<CpuNames> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_decode_to_the_display_family_and_model() {
        // Zen 5 (EPYC 9005): family 26 (15 + 11), model 2.
        assert_eq!(signature(0x00B0_0F21), (26, 2, 1));
        // Zen 3 (EPYC 7003): family 25, model 1, stepping 1.
        assert_eq!(signature(0x00A0_0F11), (25, 1, 1));
        // Sapphire Rapids: family 6, model 143 (0x8F), stepping 8.
        assert_eq!(signature(0x0008_06F8), (6, 143, 8));
        // A base family other than 6 or 15 keeps its base model.
        assert_eq!(signature(0x0001_0523), (5, 2, 3));
    }

    #[test]
    fn register_text_reads_little_endian_and_trims() {
        // "AuthenticAMD" in EBX, EDX, ECX order.
        assert_eq!(
            register_text(&[0x6874_7541, 0x6974_6E65, 0x444D_4163]),
            "AuthenticAMD"
        );
        assert_eq!(register_text(&[0x2020_4D41, 0x0000_0044]), "AM  D");
    }

    #[test]
    fn this_cpu_names_itself_where_cpuid_exists() {
        if let Some(n) = read() {
            assert!(!n.vendor.is_empty());
            assert!(n.family.is_some_and(|f| f >= 5), "{n:?}");
        }
    }
}
