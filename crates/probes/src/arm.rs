//! What an Arm core says about itself: MIDR_EL1 (who made it, which core,
//! which revision) and CTR_EL0 (the cache line size).
//!
//! MIDR_EL1 is read, in order of preference, from sysfs
//! (`/sys/devices/system/cpu/cpu0/regs/identification/midr_el1`, the
//! kernel's copy), from `/proc/cpuinfo` ("CPU implementer", "CPU part", ...)
//! and finally from the register itself: Linux (and QEMU user mode) trap an
//! EL0 `mrs` of the ID registers and emulate it where `AT_HWCAP` has
//! `HWCAP_CPUID`. The last is what names the core under `qemu-aarch64`,
//! whose sysfs and (before QEMU 8.1) `/proc/cpuinfo` are the host's.
//!
//! CTR_EL0.DminLine (bits 19:16) is log2 of the smallest data cache line in
//! words: the line is `4 << DminLine` bytes. Linux lets EL0 read CTR_EL0
//! (SCTLR_EL1.UCT, or trap-and-emulate on cores with errata).

use hwcal_model::Midr;

/// MIDR_EL1 of CPU 0, where this is an Arm machine (`None` elsewhere).
pub fn midr(cpuinfo: &str) -> Option<Midr> {
    if !cfg!(target_arch = "aarch64") {
        return None;
    }
    std::fs::read_to_string("/sys/devices/system/cpu/cpu0/regs/identification/midr_el1")
        .ok()
        .and_then(|s| u64::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok())
        .map(Midr::from_raw)
        .or_else(|| Midr::from_cpuinfo(cpuinfo))
        .or_else(|| midr_register().map(Midr::from_raw))
}

/// The smallest data cache line in the hierarchy, bytes, from CTR_EL0
/// (`None` off aarch64).
pub fn dminline_bytes() -> Option<u64> {
    ctr_el0().map(|ctr| 4u64 << ((ctr >> 16) & 0xf))
}

#[cfg(target_arch = "aarch64")]
fn midr_register() -> Option<u64> {
    // HWCAP_CPUID (bit 11): the kernel emulates EL0 reads of the ID
    // registers. Without it the mrs below would raise SIGILL.
    const HWCAP_CPUID: libc::c_ulong = 1 << 11;
    // SAFETY: getauxval only reads the process's auxiliary vector.
    let hwcap = unsafe { libc::getauxval(libc::AT_HWCAP) };
    if hwcap & HWCAP_CPUID == 0 {
        return None;
    }
    let v: u64;
    // SAFETY: with HWCAP_CPUID the kernel traps and emulates this EL0 read
    // of MIDR_EL1; it only writes the output register and touches no memory.
    unsafe {
        core::arch::asm!("mrs {v}, midr_el1", v = out(reg) v, options(nostack, nomem, preserves_flags));
    }
    Some(v)
}

#[cfg(not(target_arch = "aarch64"))]
fn midr_register() -> Option<u64> {
    None
}

#[cfg(target_arch = "aarch64")]
fn ctr_el0() -> Option<u64> {
    let v: u64;
    // SAFETY: Linux permits (or traps and emulates) EL0 reads of CTR_EL0;
    // the read only writes the output register and touches no memory.
    unsafe {
        core::arch::asm!("mrs {v}, ctr_el0", v = out(reg) v, options(nostack, nomem, preserves_flags));
    }
    Some(v)
}

#[cfg(not(target_arch = "aarch64"))]
fn ctr_el0() -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arm_facts_only_on_arm() {
        let line = dminline_bytes();
        if cfg!(target_arch = "aarch64") {
            // 4 << DminLine: 16..=2048 bytes by the field's width; 64 on
            // every core in the table, 256 on A64FX.
            let l = line.unwrap();
            assert!(l.is_power_of_two() && (16..=2048).contains(&l), "{l}");
            // Something names the core: sysfs, cpuinfo or the register.
            assert!(midr("").is_some());
        } else {
            assert_eq!(line, None);
            assert_eq!(midr("CPU implementer\t: 0x41\nCPU part\t: 0xd0c\n"), None);
        }
    }
}
