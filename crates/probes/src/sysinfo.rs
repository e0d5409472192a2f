//! What the machine says about itself: /proc, sysfs and CPUID. Nothing here
//! is measured; hwcal shows these nominal figures beside the measured ones.

use hwcal_model::{MachineInfo, NominalCache, NominalTlb, NumaNode};
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

/// Memory available to hwcal, bytes: the machine's MemAvailable, less
/// where this process is held to less — its cgroup's `memory.max` (a
/// container, a Slurm job, a systemd unit: exceed it and the kernel kills
/// the process) and its address-space and data rlimits (`ulimit -v`/`-d`:
/// exceed them and allocations fail) — each less what is already used.
/// 0 where MemAvailable cannot be read and nothing else limits.
pub fn available_memory() -> u64 {
    let machine = read("/proc/meminfo")
        .and_then(|m| meminfo_kb(&m, "MemAvailable"))
        .map(|kb| kb * 1024);
    let limits = [cgroup_headroom(), rlimit_headroom(false), rlimit_headroom(true)];
    machine
        .into_iter()
        .chain(limits.into_iter().flatten())
        .min()
        .unwrap_or(0)
}

/// What this process's cgroup (v2, or v1's memory controller) and every
/// cgroup above it still allow: the least of limit − usage; `None` where
/// none sets a limit.
fn cgroup_headroom() -> Option<u64> {
    let own = read("/proc/self/cgroup")?;
    let mut least: Option<u64> = None;
    let mut take = |limit: Option<String>, used: Option<String>| {
        let limit = limit.and_then(|v| v.trim().parse::<u64>().ok());
        let used = used.and_then(|v| v.trim().parse::<u64>().ok()).unwrap_or(0);
        // v1 states "no limit" as a huge number near 2^63.
        if let Some(l) = limit.filter(|&l| l < 1 << 60) {
            let room = l.saturating_sub(used);
            least = Some(least.map_or(room, |m: u64| m.min(room)));
        }
    };
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, ctrl, path) = (parts.next(), parts.next(), parts.next());
        let (Some(ctrl), Some(path)) = (ctrl, path) else {
            continue;
        };
        let (base, max, cur) = match ctrl {
            "" => ("/sys/fs/cgroup", "memory.max", "memory.current"),
            c if c.split(',').any(|x| x == "memory") => (
                "/sys/fs/cgroup/memory",
                "memory.limit_in_bytes",
                "memory.usage_in_bytes",
            ),
            _ => continue,
        };
        // The cgroup and each ancestor: a parent's limit binds its children.
        let mut dir = std::path::PathBuf::from(format!("{base}{}", path.trim_end_matches('/')));
        loop {
            take(read(dir.join(max)), read(dir.join(cur)));
            if dir.as_os_str().len() <= base.len() || !dir.pop() {
                break;
            }
        }
    }
    least
}

/// What the address-space rlimit (or, with `data`, the data rlimit) still
/// allows this process, bytes: its soft limit less the `/proc/self/status`
/// figure it is counted against (VmSize, VmData); `None` where unlimited.
fn rlimit_headroom(data: bool) -> Option<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // The constants are named at each call: their C type differs between C
    // libraries.
    // SAFETY: getrlimit writes one rlimit into a live local.
    let rc = unsafe {
        if data {
            libc::getrlimit(libc::RLIMIT_DATA, &mut r)
        } else {
            libc::getrlimit(libc::RLIMIT_AS, &mut r)
        }
    };
    if rc != 0 || r.rlim_cur == libc::RLIM_INFINITY {
        return None;
    }
    let status_key = if data { "VmData" } else { "VmSize" };
    let used = read("/proc/self/status")
        .and_then(|s| meminfo_kb(&s, status_key))
        .map_or(0, |kb| kb * 1024);
    Some(r.rlim_cur.saturating_sub(used))
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
use crate::cpu_names::cpuid;

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
    // Under QEMU user mode /proc/cpuinfo is the host's (an x86 one for the
    // aarch64 build): its fields describe another CPU and are not used.
    let ours = hwcal_harness::platform::detect(std::env::consts::ARCH, None, Some(&cpuinfo)).is_none();
    let field = |key: &str| {
        if !ours {
            return None;
        }
        cpuinfo
            .lines()
            .find(|l| l.split(':').next().map(str::trim) == Some(key))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    };
    // A guest or container may hide /proc/cpuinfo while CPUID answers: the
    // CPU's names then come from CPUID (x86).
    let hidden = field("vendor_id").is_none() && field("CPU implementer").is_none();
    let names = if hidden { crate::cpu_names::read() } else { None }.unwrap_or_default();
    let mut flags: Vec<String> = field("flags")
        .or_else(|| field("Features"))
        .unwrap_or_default()
        .split_whitespace()
        .map(String::from)
        .collect();
    if flags.is_empty() && names.hypervisor {
        flags.push("hypervisor".into());
    }
    let vendor = field("vendor_id").or_else(|| Some(names.vendor.clone()).filter(|v| !v.is_empty()));
    let family = field("cpu family").and_then(|v| v.parse().ok()).or(names.family);
    let model = field("model").and_then(|v| v.parse().ok()).or(names.model);
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
    let online = online_cpus(
        read("/sys/devices/system/cpu/online").as_deref(),
        &hwcal_harness::pin::allowed_cpus(),
    );
    let possible = read("/sys/devices/system/cpu/possible")
        .map(|s| parse_cpu_list(&s).len())
        .unwrap_or(online.len());
    // Arm: the core from MIDR_EL1; the line size from CTR_EL0 where sysfs
    // states none (many Arm servers export no cache information).
    let midr = crate::arm::midr(&cpuinfo);
    let dminline = crate::arm::dminline_bytes();
    for c in caches
        .iter_mut()
        .filter(|c| c.line_bytes.is_none() && c.cache_type != "Instruction")
    {
        c.line_bytes = dminline;
    }
    let mut info = MachineInfo {
        hostname: read("/proc/sys/kernel/hostname").unwrap_or_default(),
        arch: std::env::consts::ARCH.into(),
        cpu_vendor: match midr {
            Some(m) => m.vendor(),
            None => vendor
                .clone()
                .or_else(|| field("CPU implementer"))
                .unwrap_or_default(),
        },
        cpu_model_name: match midr {
            Some(m) => m
                .core()
                .map_or_else(|| format!("{} part {:#05x}", m.vendor(), m.part), String::from),
            None => field("model name").unwrap_or(names.model_name),
        },
        cpu_family: family,
        cpu_model: model,
        cpu_stepping: field("stepping").and_then(|v| v.parse().ok()).or(names.stepping),
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
        memory_available_bytes: available_memory(),
        invariant_tsc: hwcal_harness::timer::invariant_tsc(),
        nominal_tlbs: nominal_tlbs(vendor.as_deref().unwrap_or(""), family, model),
        cpu_flags: flags,
        nominal_caches: caches,
        identity: Some(crate::identity::identity(
            &crate::identity::read(),
            vendor.as_deref().unwrap_or(""),
            family,
            model,
        )),
        midr,
        page_bytes: Some(crate::pages::base_page() as u64),
        hugepage_sizes: crate::pages::hugepage_sizes(),
        dminline_bytes: dminline,
        emulation: hwcal_harness::platform::emulation().map(String::from),
    };
    // On Arm the core is named from MIDR_EL1, not from x86's family/model.
    if let (Some(m), Some(id)) = (info.midr, info.identity.as_mut()) {
        id.core = m.core().unwrap_or(hwcal_model::cores::UNKNOWN_CORE).to_string();
    }
    info
}

/// The online CPUs from sysfs's list, or, where sysfs is hidden or says
/// nothing (a container that masks `/sys/devices/system/cpu`: the profile
/// said "0 logical, online []" and the core-to-core line vanished), the
/// CPUs this process may run on — online by definition.
pub fn online_cpus(sysfs: Option<&str>, allowed: &[usize]) -> Vec<usize> {
    let listed = sysfs.map(parse_cpu_list).unwrap_or_default();
    if listed.is_empty() {
        allowed.to_vec()
    } else {
        listed
    }
}

/// Data TLBs from CPUID, corrected by [`TLB_TABLE`] where a core is known
/// to understate. Empty off x86 or where the hypervisor zeroes the leaves.
pub fn nominal_tlbs(vendor: &str, family: Option<u32>, model: Option<u32>) -> Vec<NominalTlb> {
    let mut v = cpuid_tlbs(vendor);
    apply_tlb_table(&mut v, vendor, family, model);
    v
}

/// A core whose CPUID understates one of its TLBs.
struct TlbFix {
    vendor: &'static str,
    family: u32,
    models: &'static [u32],
    level: u32,
    page_bytes: u64,
    /// What CPUID reports...
    reported: u64,
    /// ...and what the vendor documents.
    documented: u64,
}

/// Golden Cove and Raptor Cove (Sapphire/Emerald Rapids, Alder/Raptor
/// Lake P-cores) report a 64-entry L1 load DTLB for 4 KiB pages; Intel's
/// optimisation manual gives 96.
const TLB_TABLE: &[TlbFix] = &[TlbFix {
    vendor: "GenuineIntel",
    family: 6,
    models: &[143, 207, 151, 154, 183, 186, 191],
    level: 1,
    page_bytes: 4096,
    reported: 64,
    documented: 96,
}];

fn apply_tlb_table(v: &mut [NominalTlb], vendor: &str, family: Option<u32>, model: Option<u32>) {
    for f in TLB_TABLE {
        if vendor != f.vendor || family != Some(f.family) || !model.is_some_and(|m| f.models.contains(&m)) {
            continue;
        }
        for t in v.iter_mut() {
            if t.level == f.level && t.page_bytes == f.page_bytes && t.entries == f.reported {
                t.entries = f.documented;
                t.source = "table".into();
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
fn cpuid_tlbs(vendor: &str) -> Vec<NominalTlb> {
    let mut out = Vec::new();
    let tlb = |level: u32, page: u64, entries: u64, ways: Option<u64>| NominalTlb {
        level,
        page_bytes: page,
        entries,
        ways,
        source: "cpuid".into(),
    };
    if vendor == "AuthenticAMD" || vendor == "HygonGenuine" {
        let (max_ext, ..) = cpuid(0x8000_0000, 0);
        if max_ext >= 0x8000_0005 {
            // L1: EBX for 4 KiB pages, EAX for 2 MiB; bits 23:16 entries,
            // 31:24 associativity (0xff fully associative).
            let (eax, ebx, ..) = cpuid(0x8000_0005, 0);
            for (reg, page) in [(ebx, 4096u64), (eax, 2 << 20)] {
                let entries = ((reg >> 16) & 0xff) as u64;
                let assoc = (reg >> 24) & 0xff;
                if entries > 0 {
                    out.push(tlb(1, page, entries, (assoc != 0xff).then_some(assoc as u64)));
                }
            }
        }
        if max_ext >= 0x8000_0006 {
            // L2: bits 27:16 entries, 31:28 an associativity code.
            let (eax, ebx, ..) = cpuid(0x8000_0006, 0);
            for (reg, page) in [(ebx, 4096u64), (eax, 2 << 20)] {
                let entries = ((reg >> 16) & 0xfff) as u64;
                if entries > 0 {
                    out.push(tlb(2, page, entries, amd_l2_ways((reg >> 28) & 0xf)));
                }
            }
        }
    } else {
        let (max_leaf, ..) = cpuid(0, 0);
        if max_leaf >= 0x18 {
            let (max_sub, ..) = cpuid(0x18, 0);
            for sub in 0..=max_sub.min(32) {
                let (_, ebx, ecx, edx) = cpuid(0x18, sub);
                let ty = edx & 0x1f;
                // 1 data, 3 unified, 4 load-only.
                if !matches!(ty, 1 | 3 | 4) {
                    continue;
                }
                let level = (edx >> 5) & 7;
                let ways = ((ebx >> 16) & 0xffff) as u64;
                let entries = ways * ecx as u64;
                let full = (edx >> 8) & 1 == 1;
                for (bit, page) in [(0, 4096u64), (1, 2 << 20), (3, 1 << 30)] {
                    if entries > 0 && (ebx >> bit) & 1 == 1 {
                        out.push(tlb(level, page, entries, (!full).then_some(ways)));
                    }
                }
            }
        }
    }
    out.sort_by_key(|t| (t.page_bytes, t.level));
    out.dedup_by_key(|t| (t.page_bytes, t.level));
    out
}

/// AMD's 4-bit L2 associativity code (CPUID 0x8000_0006).
#[cfg(target_arch = "x86_64")]
fn amd_l2_ways(code: u32) -> Option<u64> {
    match code {
        1 => Some(1),
        2 => Some(2),
        4 => Some(4),
        6 => Some(8),
        8 => Some(16),
        0xa => Some(32),
        0xb => Some(48),
        0xc => Some(64),
        0xd => Some(96),
        0xe => Some(128),
        _ => None,
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn cpuid_tlbs(_vendor: &str) -> Vec<NominalTlb> {
    Vec::new()
}

/// CPUID leaf-4 caches, for cross-checking sysfs (empty off x86).
pub fn nominal_caches_cpuid() -> Vec<NominalCache> {
    cpuid_caches()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_sysfs_cpus_fall_back_to_the_allowed_ones() {
        assert_eq!(online_cpus(Some("0-3\n"), &[1, 2]), vec![0, 1, 2, 3]);
        assert_eq!(online_cpus(None, &[0, 1]), vec![0, 1]);
        assert_eq!(online_cpus(Some(""), &[2]), vec![2]);
    }

    #[test]
    fn golden_cove_dtlb_is_corrected() {
        let mut v = vec![NominalTlb {
            level: 1,
            page_bytes: 4096,
            entries: 64,
            ways: Some(4),
            source: "cpuid".into(),
        }];
        apply_tlb_table(&mut v, "GenuineIntel", Some(6), Some(207));
        assert_eq!((v[0].entries, v[0].source.as_str()), (96, "table"));
        let mut z = v.clone();
        z[0].entries = 64;
        apply_tlb_table(&mut z, "AuthenticAMD", Some(25), Some(1));
        assert_eq!(z[0].entries, 64);
    }

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
