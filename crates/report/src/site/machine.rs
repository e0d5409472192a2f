//! Which machine a run belongs to, and the name the site gives it.
//!
//! A fleet's guests often all call themselves `vm` and "Intel(R) Xeon(R)
//! Processor", so neither the hostname nor the marketing name tells machines
//! apart. The machine id (`MachineInfo::identity`, from the DMI product UUID
//! or `/etc/machine-id`) does; profiles written before it existed fall back
//! to hostname + CPU model name + family/model, which at least keeps
//! different CPUs apart, and are counted with an identified machine when
//! exactly one identified machine has that same fallback.

use hwcal_model::{cores, Profile};
use std::collections::BTreeMap;

/// A machine as the site names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineKey {
    /// Stable and safe as a file name: `m-<machine id>` where the profile
    /// has an identity, else `h-<16 hex digits>` hashed from the fallback.
    pub key: String,
    /// Whether `key` comes from the machine id (rather than the fallback).
    pub identified: bool,
    /// The fallback text (hostname, CPU model name, family/model), kept for
    /// matching older runs to an identified machine.
    pub fallback: String,
    /// The core generation (`Zen 3`, `Emerald Rapids`), else the CPU model
    /// name, else `unknown`.
    pub core: String,
    pub cpus: usize,
    pub hostname: String,
    pub cpu_model_name: String,
    /// What the platform says it is (DMI product name), with the hypervisor.
    pub platform: String,
    /// The machine id and what it was derived from, where recorded.
    pub machine_id: Option<(String, String)>,
}

impl MachineKey {
    /// `Zen 3 · 2 CPUs · vm`.
    pub fn display(&self) -> String {
        format!(
            "{} · {} CPU{} · {}",
            self.core,
            self.cpus,
            if self.cpus == 1 { "" } else { "s" },
            self.hostname
        )
    }
}

/// FNV-1a, 64 bits: a hash that stays the same across Rust releases and
/// platforms (std's `DefaultHasher` promises neither), so a machine's page
/// keeps its file name from one site build to the next.
fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// A file-name-safe form of an id: itself where it is short and plain
/// (the hex digests hwcal writes), else its hash (a profile is untrusted
/// input and could carry `../` or a thousand characters).
fn safe_id(id: &str) -> String {
    let plain = !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if plain {
        id.to_string()
    } else {
        format!("{:016x}", fnv1a(id))
    }
}

/// The machine a profile was measured on: its key (the machine id where
/// present, else a stable fallback) and its display fields.
pub fn machine_key(p: &Profile) -> MachineKey {
    let Some(m) = &p.machine else {
        return MachineKey {
            key: format!("h-{:016x}", fnv1a("")),
            identified: false,
            fallback: String::new(),
            core: "unknown".into(),
            cpus: 0,
            hostname: "unknown host".into(),
            cpu_model_name: String::new(),
            platform: String::new(),
            machine_id: None,
        };
    };
    let opt = |v: Option<u32>| v.map_or("?".into(), |v| v.to_string());
    let fallback = format!(
        "{}\n{}\n{}\n{}",
        m.hostname,
        m.cpu_model_name.trim(),
        opt(m.cpu_family),
        opt(m.cpu_model)
    );
    let id = m.identity.as_ref().filter(|i| !i.machine_id.trim().is_empty());
    let named = |s: &str| Some(s.trim().to_string()).filter(|s| !s.is_empty() && s != "unknown");
    let core = id
        .and_then(|i| named(&i.core))
        .or_else(|| match (m.cpu_family, m.cpu_model) {
            (Some(f), Some(md)) => cores::x86_core(&m.cpu_vendor, f, md).map(str::to_string),
            _ => None,
        })
        .or_else(|| named(&m.cpu_model_name))
        .unwrap_or_else(|| "unknown".into());
    let product = id
        .and_then(|i| i.product.as_deref())
        .map(str::trim)
        .filter(|s| !s.is_empty());
    let platform = match (product, m.hypervisor.as_deref()) {
        (Some(p), Some(h)) => format!("{p} ({h} guest)"),
        (Some(p), None) => p.to_string(),
        (None, Some(h)) => format!("{h} guest"),
        (None, None) => String::new(),
    };
    MachineKey {
        key: match id {
            Some(i) => format!("m-{}", safe_id(i.machine_id.trim())),
            None => format!("h-{:016x}", fnv1a(&fallback)),
        },
        identified: id.is_some(),
        fallback,
        core,
        cpus: m.logical_cpus,
        hostname: m.hostname.clone(),
        cpu_model_name: m.cpu_model_name.trim().to_string(),
        platform,
        machine_id: id.map(|i| (i.machine_id.trim().to_string(), i.id_source.clone())),
    }
}

/// The machine key each of `keys` is counted under: its own, except that a
/// run without a machine id joins the identified machine with the same
/// fallback when there is exactly one such machine (the same host before
/// hwcal recorded ids). Two identified machines sharing a fallback (two
/// guests both called `vm` on the same CPU) leave such a run on its own.
///
/// One machine id seen with two CPUs (a cloned image's /etc/machine-id, a
/// guest moved to another host type) is two machines to calibrate: each
/// such key gets its CPU's fingerprint appended (`m-ID-1a2b3c4d`); a
/// machine id with one CPU keeps its plain key.
pub fn resolve(keys: &[&MachineKey]) -> Vec<String> {
    let cpu = |k: &MachineKey| format!("{}\n{}", k.cpu_model_name, k.core);
    let mut cpus: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for k in keys.iter().filter(|k| k.identified) {
        let v = cpus.entry(k.key.as_str()).or_default();
        if !v.contains(&cpu(k)) {
            v.push(cpu(k));
        }
    }
    let split = |k: &MachineKey| match cpus.get(k.key.as_str()) {
        Some(v) if v.len() > 1 => format!("{}-{:08x}", k.key, fnv1a(&cpu(k)) as u32),
        _ => k.key.clone(),
    };
    let mut identified: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for k in keys.iter().filter(|k| k.identified) {
        let (v, key) = (identified.entry(k.fallback.as_str()).or_default(), split(k));
        if !v.contains(&key) {
            v.push(key);
        }
    }
    keys.iter()
        .map(|k| match identified.get(k.fallback.as_str()) {
            Some(ids) if !k.identified && ids.len() == 1 => ids[0].clone(),
            _ if k.identified => split(k),
            _ => k.key.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwcal_model::{sample, MachineIdentity};

    /// A sample profile without a machine id (as written before hwcal
    /// recorded one).
    fn full_profile(variant: u32) -> Profile {
        let mut p = sample::full_profile(variant);
        p.machine.as_mut().unwrap().identity = None;
        p
    }

    fn with_id(mut p: Profile, id: &str, core: &str) -> Profile {
        p.machine.as_mut().unwrap().identity = Some(MachineIdentity {
            machine_id: id.into(),
            id_source: "machine-id".into(),
            core: core.into(),
            product: Some("Standard_D2s_v5".into()),
        });
        p
    }

    #[test]
    fn the_machine_id_is_the_key_where_present() {
        let k = machine_key(&with_id(full_profile(0), "ab12", "Emerald Rapids"));
        assert_eq!(k.key, "m-ab12");
        assert!(k.identified);
        assert_eq!(k.core, "Emerald Rapids");
        assert_eq!(k.display(), "Emerald Rapids · 2 CPUs · synthetic-0");
        assert_eq!(k.platform, "Standard_D2s_v5 (KVM guest)");
        assert_eq!(k.machine_id, Some(("ab12".into(), "machine-id".into())));
    }

    #[test]
    fn without_an_id_the_fallback_is_stable_and_names_the_core() {
        let a = machine_key(&full_profile(0));
        assert!(!a.identified);
        assert!(a.key.starts_with("h-") && a.key.len() == 18, "{}", a.key);
        // The same machine in another run: the same key, whatever was measured.
        assert_eq!(machine_key(&full_profile(0)).key, a.key);
        let mut other_run = full_profile(0);
        other_run.created_unix += 86_400;
        other_run.caches = None;
        assert_eq!(machine_key(&other_run).key, a.key);
        // Another hostname, or another CPU model: another machine.
        assert_ne!(machine_key(&full_profile(1)).key, a.key);
        let mut zen = full_profile(0);
        let m = zen.machine.as_mut().unwrap();
        (m.cpu_vendor, m.cpu_family, m.cpu_model) = ("AuthenticAMD".into(), Some(0x19), Some(0x01));
        let z = machine_key(&zen);
        assert_ne!(z.key, a.key);
        // The core from the vendor's family/model when the profile names none.
        assert_eq!(a.core, "Sapphire Rapids");
        assert_eq!(z.core, "Zen 3");
        // The key of a known FNV-1a input (the hash must never change).
        assert_eq!(fnv1a(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a("a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn an_unknown_core_falls_back_to_the_model_name() {
        let mut p = with_id(full_profile(0), "x", "unknown");
        let m = p.machine.as_mut().unwrap();
        (m.cpu_vendor, m.cpu_model_name) = ("SomeVendor".into(), "  Foo CPU 9000 ".into());
        assert_eq!(machine_key(&p).core, "Foo CPU 9000");
        let mut none = Profile::new("hwcal clock", 1);
        assert_eq!(machine_key(&none).core, "unknown");
        none.machine = None;
        assert!(machine_key(&none).key.starts_with("h-"));
    }

    #[test]
    fn untrusted_ids_become_safe_file_names() {
        for bad in ["../../etc/passwd", "a b", "é", &"x".repeat(65)] {
            let k = machine_key(&with_id(full_profile(0), bad, "Zen 3")).key;
            assert!(
                k.len() == 18 && k[2..].bytes().all(|b| b.is_ascii_hexdigit()),
                "{bad:?} gave {k}"
            );
        }
        // Whitespace around an id does not make another machine.
        assert_eq!(
            machine_key(&with_id(full_profile(0), " ab12\n", "Zen 3")).key,
            "m-ab12"
        );
    }

    #[test]
    fn older_runs_join_the_one_identified_machine_of_their_fallback() {
        let old = machine_key(&full_profile(0));
        let new = machine_key(&with_id(full_profile(0), "aa", "Sapphire Rapids"));
        let other = machine_key(&full_profile(2));
        assert_eq!(
            resolve(&[&old, &new, &other]),
            ["m-aa", "m-aa", other.key.as_str()]
        );
        // Two identified machines with the same fallback: the old run stays apart.
        let twin = machine_key(&with_id(full_profile(0), "bb", "Sapphire Rapids"));
        assert_eq!(
            resolve(&[&old, &new, &twin, &new]),
            [old.key.as_str(), "m-aa", "m-bb", "m-aa"]
        );
    }
}
