//! Is this real hardware? Detecting user-mode emulation (QEMU's
//! `qemu-aarch64` running hwcal's aarch64 build on an x86_64 host, as CI
//! does; Rosetta/FEX the other way round).
//!
//! Under user-mode emulation every instruction is translated, so latencies,
//! clocks and bandwidths describe the emulator, not a CPU; the counter
//! (`cntvct_el0`) is the host's clock scaled to a made-up frequency. hwcal
//! still runs there (CI tests the aarch64 build that way) but must say that
//! its figures mean nothing, and tests that time the hardware skip.
//!
//! The tell: an emulator translates system calls but not the host's
//! `/sys/devices/system/cpu/modalias` (`cpu:type:x86,...` on an x86 host,
//! `cpu:type:aarch64:...` on an Arm one), and QEMU before 8.1 passes the
//! host's `/proc/cpuinfo` through unchanged. Either naming another
//! architecture than the one this binary was built for means emulation.
//! (Full-system emulation, `qemu-system-aarch64`, is not detected: there the
//! guest kernel is a real aarch64 kernel.)

use std::sync::OnceLock;

/// What emulation was detected, from the raw facts: this binary's `arch`
/// (`std::env::consts::ARCH`), the sysfs CPU `modalias` and `/proc/cpuinfo`.
/// `None`: no sign of emulation.
pub fn detect(arch: &str, modalias: Option<&str>, cpuinfo: Option<&str>) -> Option<String> {
    fn family(a: &str) -> &str {
        match a {
            "x86_64" | "x86" => "x86",
            "aarch64" | "arm" => "arm",
            other => other,
        }
    }
    let ours = family(arch);
    // `cpu:type:x86,ven0002fam0019mod0001:feature:...`, `cpu:type:aarch64:feature:...`
    let host = modalias
        .and_then(|m| m.trim().strip_prefix("cpu:type:"))
        .and_then(|t| t.split([',', ':']).next())
        .filter(|t| !t.is_empty())
        .map(family)
        .or_else(|| {
            let c = cpuinfo?;
            let has = |k: &str| c.lines().any(|l| l.split(':').next().map(str::trim) == Some(k));
            if has("vendor_id") && has("cpu family") {
                Some("x86")
            } else if has("CPU implementer") {
                Some("arm")
            } else {
                None
            }
        })?;
    (host != ours).then(|| {
        let host_arch = match host {
            "x86" => "x86_64",
            "arm" => "aarch64",
            h => h,
        };
        format!("user-mode emulation ({arch} binary on a {host_arch} host, e.g. qemu-{arch})")
    })
}

/// [`detect`] on this machine, computed once. Set `HWCAL_EMULATION=0` to
/// ignore the detection (`1` forces it, for tests of the emulated path).
pub fn emulation() -> Option<&'static str> {
    static E: OnceLock<Option<String>> = OnceLock::new();
    E.get_or_init(|| match std::env::var("HWCAL_EMULATION").as_deref() {
        Ok("0") => None,
        Ok("1") => Some("user-mode emulation (forced by HWCAL_EMULATION=1)".into()),
        _ => detect(
            std::env::consts::ARCH,
            std::fs::read_to_string("/sys/devices/system/cpu/modalias")
                .ok()
                .as_deref(),
            std::fs::read_to_string("/proc/cpuinfo").ok().as_deref(),
        ),
    })
    .as_deref()
}

/// For tests that time the hardware: true (after printing why on stderr)
/// when running under emulation, where timings describe the emulator and
/// some system calls (io_uring, NUMA policy) do not exist.
pub fn skip_if_emulated(test: &str) -> bool {
    match emulation() {
        Some(e) => {
            eprintln!(
                "skipping {test}: running under {e}; its timings and system calls are not the hardware's"
            );
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emulation_is_told_by_the_host_architecture() {
        let x86 = Some("cpu:type:x86,ven0002fam0019mod0001:feature:,0000,0001");
        let arm = Some("cpu:type:aarch64:feature:,0000,0001,0002");
        assert_eq!(detect("x86_64", x86, None), None);
        assert_eq!(detect("aarch64", arm, None), None);
        let e = detect("aarch64", x86, None).unwrap();
        assert!(e.contains("aarch64 binary on a x86_64 host"), "{e}");
        assert!(detect("x86_64", arm, None).is_some());
        // Without sysfs, the host's /proc/cpuinfo (QEMU before 8.1).
        let amd = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n";
        let n1 = "processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n";
        assert!(detect("aarch64", None, Some(amd)).is_some());
        assert_eq!(detect("aarch64", None, Some(n1)), None);
        assert_eq!(detect("x86_64", None, Some(amd)), None);
        // Nothing known: no claim.
        assert_eq!(detect("aarch64", None, None), None);
        assert_eq!(detect("aarch64", Some("garbage"), None), None);
    }
}
