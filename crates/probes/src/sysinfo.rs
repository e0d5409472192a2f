//! What the machine says about itself: /proc, sysfs and CPUID. Nothing here
//! is measured; hwcal shows these nominal figures beside the measured ones.

use hwcal_model::{MachineInfo, NominalCache, NumaNode};
use std::fs;
use std::path::Path;

fn read(path: impl AsRef<Path>) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// Parse a kernel CPU list such as `0-3,8,10-11`.
pub fn parse_cpu_list(s: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.trim().parse::<usize>(), b.trim().parse::<usize>()) {
                    out.extend(a..=b);
                }
            }
            None => {
                if let Ok(a) = part.trim().parse() {
                    out.push(a);
                }
            }
        }
    }
    out
}

/// Parse a sysfs cache size such as `48K`, `2048K`, `105M`.
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1024),
        'M' | 'm' => (&s[..s.len() - 1], 1024 * 1024),
        'G' | 'g' => (&s[..s.len() - 1], 1024 * 1024 * 1024),
        _ => (s, 1),
    };
    num.trim().parse::<u64>().ok().map(|n| n * mult)
}

fn meminfo_kb(meminfo: &str, key: &str) -> Option<u64> {
    meminfo
        .lines()
        .find(|l| l.starts_with(key) && l[key.len()..].starts_with(':'))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
}

/// Free memory available to hwcal, bytes (MemAvailable).
pub fn available_memory() -> u64 {
    read("/proc/meminfo")
        .and_then(|m| meminfo_kb(&m, "MemAvailable"))
        .map_or(0, |kb| kb * 1024)
}

/// The bracketed choice in a sysfs selector such as `always [madvise] never`.
pub fn bracketed(s: &str) -> Option<String> {
    let a = s.find('[')?;
    let b = s[a..].find(']')? + a;
    Some(s[a + 1..b].to_string())
}

/// THP mode (`always`, `madvise`, `never`), if the kernel has THP.
pub fn thp_mode() -> Option<String> {
    read("/sys/kernel/mm/transparent_hugepage/enabled").and_then(|s| bracketed(&s))
}

fn sysfs_caches() -> Vec<NominalCache> {
    let mut out = Vec::new();
    for i in 0..16 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{i}");
        let Some(level) = read(format!("{dir}/level")).and_then(|v| v.parse().ok()) else {
            break;
        };
        let num = |f: &str| read(format!("{dir}/{f}")).and_then(|v| v.parse::<u64>().ok());
        out.push(NominalCache {
            level,
            cache_type: read(format!("{dir}/type")).unwrap_or_default(),
            size_bytes: read(format!("{dir}/size"))
                .and_then(|s| parse_size(&s))
                .unwrap_or(0),
            line_bytes: num("coherency_line_size"),
            ways: num("ways_of_associativity"),
            sets: num("number_of_sets"),
            shared_cpus: read(format!("{dir}/shared_cpu_list"))
                .map(|s| parse_cpu_list(&s))
                .unwrap_or_default(),
            source: "sysfs".into(),
        });
    }
    out
}

#[cfg(target_arch = "x86_64")]
fn cpuid(leaf: u32, sub: u32) -> (u32, u32, u32, u32) {
    #[allow(unused_unsafe)]
    // SAFETY: cpuid is available on every x86_64 CPU and only writes the four
    // result registers.
    let r = unsafe { core::arch::x86_64::__cpuid_count(leaf, sub) };
    (r.eax, r.ebx, r.ecx, r.edx)
}

/// Caches from CPUID leaf 4 (Intel deterministic cache parameters).
#[cfg(target_arch = "x86_64")]
fn cpuid_caches() -> Vec<NominalCache> {
    let (max_leaf, ..) = cpuid(0, 0);
    if max_leaf < 4 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for sub in 0..16 {
        let (eax, ebx, ecx, _) = cpuid(4, sub);
        let ty = eax & 0x1f;
        if ty == 0 {
            break;
        }
        let level = (eax >> 5) & 7;
        let line = (ebx & 0xfff) as u64 + 1;
        let parts = ((ebx >> 12) & 0x3ff) as u64 + 1;
        let ways = ((ebx >> 22) & 0x3ff) as u64 + 1;
        let sets = ecx as u64 + 1;
        out.push(NominalCache {
            level,
            cache_type: match ty {
                1 => "Data",
                2 => "Instruction",
                _ => "Unified",
            }
            .into(),
            size_bytes: line * parts * ways * sets,
            line_bytes: Some(line),
            ways: Some(ways),
            sets: Some(sets),
            shared_cpus: Vec::new(),
            source: "cpuid".into(),
        });
    }
    out
}

#[cfg(not(target_arch = "x86_64"))]
fn cpuid_caches() -> Vec<NominalCache> {
    Vec::new()
}

/// The hypervisor vendor from CPUID leaf 0x4000_0000, or sysfs/DMI.
fn hypervisor(flags: &[String]) -> Option<String> {
    #[cfg(target_arch = "x86_64")]
    if flags.iter().any(|f| f == "hypervisor") {
        let (_, b, c, d) = cpuid(0x4000_0000, 0);
        let bytes: Vec<u8> = [b, c, d].iter().flat_map(|r| r.to_le_bytes()).collect();
        let sig = String::from_utf8_lossy(&bytes)
            .trim_matches(char::from(0))
            .trim()
            .to_string();
        let name = match sig.as_str() {
            "KVMKVMKVM" => "KVM".to_string(),
            "Microsoft Hv" => "Hyper-V".to_string(),
            "VMwareVMware" => "VMware".to_string(),
            "XenVMMXenVMM" => "Xen".to_string(),
            "TCGTCGTCGTCG" => "QEMU TCG".to_string(),
            s if !s.is_empty() => s.to_string(),
            _ => "unknown".to_string(),
        };
        return Some(name);
    }
    let _ = flags;
    read("/sys/hypervisor/type").filter(|s| !s.is_empty())
}

/// Gather everything the OS and CPU state about this machine.
pub fn machine_info() -> MachineInfo {
    let cpuinfo = read("/proc/cpuinfo").unwrap_or_default();
    let field = |key: &str| {
        cpuinfo
            .lines()
            .find(|l| l.split(':').next().map(str::trim) == Some(key))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    };
    let flags: Vec<String> = field("flags")
        .or_else(|| field("Features"))
        .unwrap_or_default()
        .split_whitespace()
        .map(String::from)
        .collect();
    let meminfo = read("/proc/meminfo").unwrap_or_default();
    let mut nodes = Vec::new();
    for n in 0..1024u32 {
        let dir = format!("/sys/devices/system/node/node{n}");
        if !Path::new(&dir).exists() {
            if n > 64 {
                break;
            }
            continue;
        }
        let mem = read(format!("{dir}/meminfo")).and_then(|m| {
            m.lines()
                .find(|l| l.contains("MemTotal:"))
                .and_then(|l| l.split_whitespace().rev().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
                .map(|kb| kb * 1024)
        });
        nodes.push(NumaNode {
            node: n,
            cpus: read(format!("{dir}/cpulist"))
                .map(|s| parse_cpu_list(&s))
                .unwrap_or_default(),
            memory_bytes: mem,
        });
    }
    let mut caches = sysfs_caches();
    if caches.is_empty() {
        caches = cpuid_caches();
    }
    let online = read("/sys/devices/system/cpu/online")
        .map(|s| parse_cpu_list(&s))
        .unwrap_or_default();
    let possible = read("/sys/devices/system/cpu/possible")
        .map(|s| parse_cpu_list(&s).len())
        .unwrap_or(online.len());
    MachineInfo {
        hostname: read("/proc/sys/kernel/hostname").unwrap_or_default(),
        arch: std::env::consts::ARCH.into(),
        cpu_vendor: field("vendor_id")
            .or_else(|| field("CPU implementer"))
            .unwrap_or_default(),
        cpu_model_name: field("model name").unwrap_or_default(),
        cpu_family: field("cpu family").and_then(|v| v.parse().ok()),
        cpu_model: field("model").and_then(|v| v.parse().ok()),
        cpu_stepping: field("stepping").and_then(|v| v.parse().ok()),
        logical_cpus: possible.max(online.len()),
        online_cpus: online,
        kernel: format!(
            "{} {}",
            read("/proc/sys/kernel/ostype").unwrap_or_default(),
            read("/proc/sys/kernel/osrelease").unwrap_or_default()
        )
        .trim()
        .to_string(),
        hypervisor: hypervisor(&flags),
        thp_mode: thp_mode(),
        hugepages_reserved: meminfo_kb(&meminfo, "HugePages_Total").unwrap_or(0),
        hugepage_size_bytes: meminfo_kb(&meminfo, "Hugepagesize").map(|kb| kb * 1024),
        numa_nodes: nodes,
        memory_total_bytes: meminfo_kb(&meminfo, "MemTotal").unwrap_or(0) * 1024,
        memory_available_bytes: meminfo_kb(&meminfo, "MemAvailable").unwrap_or(0) * 1024,
        invariant_tsc: hwcal_harness::timer::invariant_tsc(),
        cpu_flags: flags,
        nominal_caches: caches,
    }
}

/// CPUID leaf-4 caches, for cross-checking sysfs (empty off x86).
pub fn nominal_caches_cpuid() -> Vec<NominalCache> {
    cpuid_caches()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsers() {
        assert_eq!(parse_cpu_list("0-3,8,10-11"), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_cpu_list(""), Vec::<usize>::new());
        assert_eq!(parse_size("48K"), Some(48 * 1024));
        assert_eq!(parse_size("105M"), Some(105 << 20));
        assert_eq!(parse_size("x"), None);
        assert_eq!(bracketed("always [madvise] never").as_deref(), Some("madvise"));
        assert_eq!(meminfo_kb("MemTotal:  100 kB\nMemFree: 5 kB", "MemFree"), Some(5));
    }

    #[test]
    fn machine_info_is_plausible() {
        let m = machine_info();
        assert!(!m.arch.is_empty());
        assert!(m.logical_cpus >= 1);
        assert!(m.memory_total_bytes > 0);
        for c in &m.nominal_caches {
            assert!(c.level >= 1 && c.level <= 5);
        }
    }
}
