//! Which machine this is: a stable machine id, the core generation and the
//! platform's product name, so runs from a fleet of look-alike guests (all
//! host `vm`, all "AMD EPYC") can be told apart (issue 16).
//!
//! The id follows systemd's advice for `/etc/machine-id` (machine-id(5)):
//! never expose the raw id, hash it with an application-specific key. The
//! sources, best first:
//! 1. the DMI/SMBIOS product UUID (`/sys/class/dmi/id/product_uuid`): set
//!    per VM by every cloud and hypervisor, per board by the vendor, and not
//!    copied when a disk image is cloned. Readable by root only, so a run as
//!    an ordinary user falls back to the next source (and gets another id).
//! 2. `/etc/machine-id` (systemd, dbus): per installation; a cloned image
//!    that was not reset shares it, a container has its image's.
//! 3. the host name: not unique across a fleet, recorded as such.
//!
//! Firmware placeholders (an all-zero or all-F UUID, "To Be Filled By
//! O.E.M.") are skipped: many boards ship them, and hashing one would give
//! a whole rack the same id. Everything here is a pure function of the
//! files' contents; [`read`] is the thin I/O.

use hwcal_model::MachineIdentity;
use sha2::{Digest, Sha256};

/// The key every id is hashed with, so the digest is hwcal's own and the
/// raw UUID or machine id cannot be looked up from it.
const ID_KEY: &str = "hwcal machine id v1";

/// Hex digits of the digest kept (128 bits: no collisions in any fleet).
const ID_HEX_LEN: usize = 32;

/// What the machine id and product are read from (file contents, trimmed).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IdentitySources {
    /// `/sys/class/dmi/id/product_uuid`.
    pub product_uuid: Option<String>,
    /// `/etc/machine-id`.
    pub machine_id: Option<String>,
    pub hostname: String,
    /// `/sys/class/dmi/id/sys_vendor`.
    pub sys_vendor: Option<String>,
    /// `/sys/class/dmi/id/product_name`.
    pub product_name: Option<String>,
}

/// Read the identity sources of this machine (missing files are `None`).
pub fn read() -> IdentitySources {
    let f = |p: &str| std::fs::read_to_string(p).ok().map(|s| s.trim().to_string());
    IdentitySources {
        product_uuid: f("/sys/class/dmi/id/product_uuid"),
        machine_id: f("/etc/machine-id"),
        hostname: f("/proc/sys/kernel/hostname").unwrap_or_default(),
        sys_vendor: f("/sys/class/dmi/id/sys_vendor"),
        product_name: f("/sys/class/dmi/id/product_name"),
    }
}

/// A UUID that names a machine: 32 hex digits (dashes aside), not all the
/// same digit (firmware leaves `00000000-...` or `FFFFFFFF-...`).
fn real_uuid(s: &str) -> Option<String> {
    let hex: String = s
        .chars()
        .filter(|c| *c != '-')
        .collect::<String>()
        .to_ascii_lowercase();
    let ok = hex.len() == 32 && hex.chars().all(|c| c.is_ascii_hexdigit());
    let first = hex.chars().next()?;
    (ok && !hex.chars().all(|c| c == first)).then_some(hex)
}

/// `/etc/machine-id`: 32 lower-case hex digits, not all zero
/// (`uninitialized` and an empty file mean "not set yet").
fn real_machine_id(s: &str) -> Option<String> {
    real_uuid(s.trim()).filter(|h| h.len() == 32)
}

/// The SHA-256 of the key, the source and the raw id, in hex, cut to
/// [`ID_HEX_LEN`] digits.
fn digest(source: &str, raw: &str) -> String {
    let mut h = Sha256::new();
    for part in [ID_KEY, source, raw] {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    hex[..ID_HEX_LEN].to_string()
}

/// Product names firmware leaves when the vendor did not set one: they say
/// nothing about the machine, so they are not recorded.
fn placeholder(s: &str) -> bool {
    let l = s.trim().to_ascii_lowercase();
    const GENERIC: [&str; 10] = [
        "",
        "to be filled by o.e.m.",
        "default string",
        "system product name",
        "system manufacturer",
        "not specified",
        "not applicable",
        "none",
        "o.e.m.",
        "123456789",
    ];
    GENERIC.contains(&l.as_str()) || l.chars().all(|c| c == '0' || c == ' ')
}

/// The platform's name for itself: the DMI vendor and product name
/// ("Amazon EC2 m7i.large", "Google Google Compute Engine" shortened to
/// "Google Compute Engine", "QEMU Standard PC (Q35 + ICH9, 2009)"). A
/// hypervisor's default machine type is kept: it names the hypervisor and
/// chipset, which is what a guest can say about its platform; only firmware
/// placeholders are dropped.
pub fn product(sys_vendor: Option<&str>, product_name: Option<&str>) -> Option<String> {
    let name = product_name.map(str::trim).filter(|n| !placeholder(n))?;
    match sys_vendor.map(str::trim).filter(|v| !placeholder(v)) {
        Some(v) if !name.to_ascii_lowercase().starts_with(&v.to_ascii_lowercase()) => {
            // "Google" + "Google Compute Engine": the name already says it.
            let first = v.split_whitespace().next().unwrap_or(v);
            if name.starts_with(first) {
                Some(name.to_string())
            } else {
                Some(format!("{v} {name}"))
            }
        }
        _ => Some(name.to_string()),
    }
}

/// The machine id and where it came from (see the module documentation).
pub fn machine_id(src: &IdentitySources) -> (String, &'static str) {
    if let Some(u) = src.product_uuid.as_deref().and_then(real_uuid) {
        return (digest("dmi-product-uuid", &u), "dmi-product-uuid");
    }
    if let Some(m) = src.machine_id.as_deref().and_then(real_machine_id) {
        return (digest("machine-id", &m), "machine-id");
    }
    (digest("hostname", src.hostname.trim()), "hostname")
}

/// The core generation: x86 from vendor/family/model (CPUID leaf 1 as
/// `/proc/cpuinfo` shows it); `unknown` where the table does not know it.
// Hook for Arm: name the core from MIDR_EL1's implementer/part here
// (`hwcal_model::cores::arm_core`), done on the Arm branch (issue 18).
pub fn core(vendor: &str, family: Option<u32>, model: Option<u32>) -> String {
    let x86 = match (family, model) {
        (Some(f), Some(m)) => hwcal_model::cores::x86_core(vendor, f, m),
        _ => None,
    };
    x86.unwrap_or("unknown").to_string()
}

/// The identity from its sources and the CPU's vendor/family/model.
pub fn identity(
    src: &IdentitySources,
    vendor: &str,
    family: Option<u32>,
    model: Option<u32>,
) -> MachineIdentity {
    let (machine_id, id_source) = machine_id(src);
    MachineIdentity {
        machine_id,
        id_source: id_source.to_string(),
        core: core(vendor, family, model),
        product: product(src.sys_vendor.as_deref(), src.product_name.as_deref()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(uuid: Option<&str>, mid: Option<&str>, host: &str) -> IdentitySources {
        IdentitySources {
            product_uuid: uuid.map(String::from),
            machine_id: mid.map(String::from),
            hostname: host.into(),
            ..Default::default()
        }
    }

    #[test]
    fn the_best_source_wins_and_is_named() {
        let uuid = "4C4C4544-0042-3510-8052-B4C04F4E4B32";
        let mid = "3d1219c7c4c5404aaa1f6d2a48adfda4";
        let (a, s) = machine_id(&src(Some(uuid), Some(mid), "vm"));
        assert_eq!(s, "dmi-product-uuid");
        assert_eq!(a.len(), ID_HEX_LEN);
        assert!(a
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        // Case and dashes of the UUID do not matter; the raw id is not shown.
        let (b, _) = machine_id(&src(Some(&uuid.to_lowercase().replace('-', "")), None, "x"));
        assert_eq!(a, b);
        assert!(!a.contains("4c4c4544"));
        let (c, s) = machine_id(&src(None, Some(mid), "vm"));
        assert_eq!(s, "machine-id");
        assert_ne!(a, c);
        assert!(!c.contains(&mid[..8]));
        let (d, s) = machine_id(&src(None, None, "vm"));
        assert_eq!(s, "hostname");
        assert_ne!(c, d);
        // Stable: the same sources give the same id.
        assert_eq!(machine_id(&src(None, Some(mid), "other")).0, c);
    }

    #[test]
    fn firmware_placeholders_are_skipped() {
        let mid = "3d1219c7c4c5404aaa1f6d2a48adfda4";
        for bogus in [
            "00000000-0000-0000-0000-000000000000",
            "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF",
            "ffffffff-ffff-ffff-ffff-ffffffffffff",
            "",
            "Not Settable",
            "03000200-0400",
        ] {
            assert_eq!(
                machine_id(&src(Some(bogus), Some(mid), "h")).1,
                "machine-id",
                "{bogus}"
            );
        }
        for bogus in ["", "uninitialized", "00000000000000000000000000000000"] {
            assert_eq!(machine_id(&src(None, Some(bogus), "h")).1, "hostname", "{bogus}");
        }
    }

    #[test]
    fn product_names_the_platform_or_nothing() {
        let p = |v: Option<&str>, n: Option<&str>| product(v, n);
        assert_eq!(
            p(Some("Amazon EC2"), Some("m7i.large")).as_deref(),
            Some("Amazon EC2 m7i.large")
        );
        assert_eq!(
            p(Some("Google"), Some("Google Compute Engine")).as_deref(),
            Some("Google Compute Engine")
        );
        assert_eq!(
            p(Some("QEMU"), Some("Standard PC (Q35 + ICH9, 2009)")).as_deref(),
            Some("QEMU Standard PC (Q35 + ICH9, 2009)")
        );
        assert_eq!(
            p(Some("Microsoft Corporation"), Some("Virtual Machine")).as_deref(),
            Some("Microsoft Corporation Virtual Machine")
        );
        assert_eq!(
            p(Some("Dell Inc."), Some("Dell PowerEdge R750")).as_deref(),
            Some("Dell PowerEdge R750")
        );
        assert_eq!(
            p(Some("To Be Filled By O.E.M."), Some("X570 AORUS")).as_deref(),
            Some("X570 AORUS")
        );
        for bogus in [
            "To Be Filled By O.E.M.",
            "Default string",
            "System Product Name",
            " ",
            "0",
        ] {
            assert_eq!(p(Some("ASUS"), Some(bogus)), None, "{bogus}");
        }
        assert_eq!(p(None, None), None);
    }

    #[test]
    fn core_is_named_or_unknown() {
        assert_eq!(core("AuthenticAMD", Some(0x19), Some(0x01)), "Zen 3");
        assert_eq!(core("GenuineIntel", Some(6), Some(0xCF)), "Emerald Rapids");
        assert_eq!(core("GenuineIntel", Some(6), Some(0x8F)), "Sapphire Rapids");
        assert_eq!(core("GenuineIntel", Some(6), Some(0x01)), "unknown");
        assert_eq!(core("", None, None), "unknown");
        let id = identity(&src(None, None, "vm"), "AuthenticAMD", Some(0x19), Some(0x11));
        assert_eq!((id.core.as_str(), id.id_source.as_str()), ("Zen 4", "hostname"));
        assert_eq!(id.product, None);
    }
}
