//! The machine block of the terminal summary: CPU, kernel, memory, huge
//! pages, NUMA, the caches the system reports, and the harness (pinning,
//! timer, counter) the figures were measured with.

use hwcal_model::*;
use std::fmt::Write;

pub fn machine(m: &MachineInfo) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "machine:");
    match arm_cpu(m) {
        Some(arm) => {
            let _ = writeln!(s, "  cpu        {} ({arm})", m.cpu_model_name);
        }
        None => {
            let _ = writeln!(
                s,
                "  cpu        {} ({}, family {} model {} stepping {})",
                m.cpu_model_name,
                m.cpu_vendor,
                m.cpu_family.map_or("?".into(), |v| v.to_string()),
                m.cpu_model.map_or("?".into(), |v| v.to_string()),
                m.cpu_stepping.map_or("?".into(), |v| v.to_string()),
            );
        }
    }
    if let Some(e) = &m.emulation {
        let _ = writeln!(s, "  emulation  {e}: timings describe the emulator");
    }
    let _ = writeln!(
        s,
        "  cpus       {} logical, online {:?}",
        m.logical_cpus, m.online_cpus
    );
    if let Some(id) = &m.identity {
        let _ = writeln!(s, "  core       {}", id.core);
        let _ = writeln!(s, "  machine id {} (from {})", id.machine_id, id.id_source);
        if let Some(product) = &id.product {
            let _ = writeln!(s, "  product    {product}");
        }
    }
    let _ = writeln!(s, "  kernel     {} ({})", m.kernel, m.arch);
    let _ = writeln!(
        s,
        "  hypervisor {}",
        m.hypervisor.as_deref().unwrap_or("none detected")
    );
    let _ = writeln!(
        s,
        "  memory     {} total, {} available",
        human_bytes(m.memory_total_bytes),
        human_bytes(m.memory_available_bytes)
    );
    let _ = writeln!(
        s,
        "  huge pages THP {}, {} reserved{}",
        m.thp_mode.as_deref().unwrap_or("unavailable"),
        m.hugepages_reserved,
        m.hugepage_size_bytes
            .map_or(String::new(), |b| format!(" of {}", human_bytes(b)))
    );
    let nodes: Vec<String> = m
        .numa_nodes
        .iter()
        .map(|n| format!("node{} cpus {:?}", n.node, n.cpus))
        .collect();
    let _ = writeln!(
        s,
        "  numa       {}",
        if nodes.is_empty() {
            "no NUMA information".into()
        } else {
            nodes.join("; ")
        }
    );
    if let Some(pages) = page_sizes(m) {
        let _ = writeln!(s, "  pages      {pages}");
    }
    // x86 only: Arm has no TSC (its generic counter is invariant by
    // architecture).
    if !m.is_arm() {
        let _ = writeln!(
            s,
            "  invariant TSC {}",
            if m.invariant_tsc { "yes" } else { "no" }
        );
    }
    if !m.nominal_caches.is_empty() {
        let _ = writeln!(s, "  nominal caches ({}):", m.nominal_caches[0].source);
        let _ = writeln!(s, "    level type         size      line  ways  shared by");
        for c in &m.nominal_caches {
            let _ = writeln!(
                s,
                "    L{}    {:<11} {:>9} {:>5}  {:>4}  {:?}",
                c.level,
                c.cache_type,
                human_bytes(c.size_bytes),
                c.line_bytes.map_or("?".into(), |v| format!("{v} B")),
                c.ways.map_or("?".into(), |v| v.to_string()),
                c.shared_cpus
            );
        }
    }
    s
}

/// An Arm CPU's identification in words (implementer, MIDR part number and
/// Arm's `rVpR` revision); `None` for an x86 machine, whose CPUID
/// family/model/stepping are shown instead.
pub(crate) fn arm_cpu(m: &MachineInfo) -> Option<String> {
    if !m.is_arm() {
        return None;
    }
    Some(match &m.midr {
        Some(r) => format!(
            "{}, part {:#05x} r{}p{}",
            m.cpu_vendor, r.part, r.variant, r.revision
        ),
        None => m.cpu_vendor.clone(),
    })
}

/// The base page and the huge page sizes, where they are not x86's
/// (shown for every Arm machine, and any with other than 4 KiB pages).
pub(crate) fn page_sizes(m: &MachineInfo) -> Option<String> {
    let base = m.page_bytes?;
    if base == 4096 && !m.is_arm() {
        return None;
    }
    let huge: Vec<String> = m.hugepage_sizes.iter().map(|&b| human_bytes(b)).collect();
    Some(format!(
        "base {}{}",
        human_bytes(base),
        if huge.is_empty() {
            String::new()
        } else {
            format!(", huge {}", huge.join(", "))
        }
    ))
}

pub fn harness(h: &HarnessInfo) -> String {
    format!(
        "harness:\n  timer {} (resolution {:.2} ns, read overhead {:.1} ns){}{}, pinned to {}\n  \
         timing slices of at least {:.0} µs (lmbench's `enough`: the timer's error under 1%)\n",
        h.timer,
        h.timer_resolution_ns,
        h.timer_overhead_ns,
        h.tsc_mhz.map_or(String::new(), |t| format!(", TSC {t:.1} MHz")),
        counter(h),
        h.pinned_cpu.map_or("no CPU".into(), |c| format!("CPU {c}")),
        h.enough_ns / 1e3
    )
}

/// Arm's generic counter rate, and CNTFRQ_EL0's claim where it was wrong.
pub(crate) fn counter(h: &HarnessInfo) -> String {
    match (h.counter_mhz, h.counter_stated_mhz) {
        (Some(c), Some(s)) => format!(", counter {c:.1} MHz (measured; CNTFRQ_EL0 says {s:.1})"),
        (Some(c), None) => format!(", counter {c:.1} MHz"),
        _ => String::new(),
    }
}
