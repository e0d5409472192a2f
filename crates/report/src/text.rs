//! The terminal summary, in the spirit of The Calibrator's: one block per
//! measured section, nominal figures beside measured ones, every figure with
//! its unit, and the noise verdict wherever a figure is not trustworthy.

use hwcal_model::*;
use std::fmt::Write;

pub use hwcal_model::{human_bytes, measured_bytes};

/// `1.23 ns = 3 cy` or just `1.23 ns`.
pub fn ns_cy(ns: f64, cy: Option<f64>) -> String {
    match cy {
        Some(c) if c.is_finite() => format!("{ns:8.2} ns = {c:5.1} cy"),
        _ => format!("{ns:8.2} ns"),
    }
}

fn opt_ns_cy(ns: Option<f64>, cy: Option<f64>) -> String {
    match ns {
        Some(n) => ns_cy(n, cy),
        None => format!("{:>19}", "-"),
    }
}

fn noisy_mark(v: Verdict) -> &'static str {
    match v {
        Verdict::Ok => "",
        Verdict::Noisy => "  (noisy)",
    }
}

/// The whole summary: every section the profile holds.
pub fn summary(p: &Profile) -> String {
    let mut s = String::new();
    if let Some(m) = &p.machine {
        s += &machine(m);
    }
    if let Some(h) = &p.harness {
        s += &harness(h);
    }
    if let Some(c) = &p.clock {
        // Arm has no TSC: no "TSC n/a" line there.
        s += &clock_for(c, !p.machine.as_ref().is_some_and(|m| m.is_arm()));
    }
    if p.caches.is_some() || p.memory.is_some() {
        s += &caches_pages(
            p.caches.as_deref().unwrap_or(&[]),
            p.memory.as_ref(),
            cache_smaps_huge_fraction(p),
        );
    }
    if let Some(t) = &p.tlbs {
        s += &tlbs(t);
    }
    if let Some(c) = p.tlb_huge_pages.as_deref().filter(|c| !c.is_empty()) {
        s += &tlb_huge_pages(c);
    }
    if let Some(m) = &p.mem {
        s += &mem(m);
    }
    if let Some(b) = &p.bandwidth {
        s += &bandwidth(b);
    }
    if let Some(c) = &p.context_switch {
        s += &context_switch(c);
    }
    if let Some(io) = &p.io {
        s += &io_section(io);
    }
    if !p.figures.is_empty() {
        s += &figures(&p.figures);
    }
    if !p.notes.is_empty() {
        s += "\nnotes:\n";
        for n in &p.notes {
            let _ = writeln!(s, "  - {n}");
        }
    }
    s
}

/// Named figures of probes without a section of their own, one line each.
pub fn figures(f: &[Figure]) -> String {
    let mut s = String::from("\nfigures:\n");
    let w = f
        .iter()
        .map(|f| f.probe.len() + f.name.len() + 2)
        .max()
        .unwrap_or(0);
    for f in f {
        let value = f
            .value
            .map_or("-".into(), |v| crate::compare::Unit::from(f.unit).format(v));
        let what = format!("{}: {}", f.probe, f.name);
        let _ = writeln!(s, "  {what:<w$}  {value:>14}{}", noisy_mark(f.verdict));
    }
    s
}

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
        "harness:\n  timer {} (resolution {:.2} ns, read overhead {:.1} ns){}{}, pinned to {}, enough = {:.0} µs\n",
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

pub fn clock(c: &ClockResult) -> String {
    clock_for(c, true)
}

/// The clock section; the TSC line only where the machine has one
/// (`x86`) or a TSC rate was recorded.
fn clock_for(c: &ClockResult, x86: bool) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "clock:{}", noisy_mark(c.verdict));
    let ci = c
        .core_mhz_ci95
        .map_or(String::new(), |[a, b]| format!("95% {a:.1}–{b:.1}, "));
    let _ = writeln!(
        s,
        "  core        {:8.1} MHz   ({ci}min {:.1}, max {:.1} over the run)",
        c.core_mhz, c.core_mhz_min, c.core_mhz_max
    );
    let _ = writeln!(s, "  add chain   {:8.1} MHz", c.chain_mhz);
    match c.gcd_mhz {
        Some(g) => {
            let _ = writeln!(
                s,
                "  mhz GCD     {:8.1} MHz   ({} of {} batches accepted; methods agree within {:.2}%)",
                g,
                c.gcd_rounds_accepted,
                c.gcd_rounds_attempted,
                c.agreement_pct.unwrap_or(f64::NAN)
            );
        }
        None => {
            let _ = writeln!(
                s,
                "  mhz GCD          n/a    ({} of {} batches accepted)",
                c.gcd_rounds_accepted, c.gcd_rounds_attempted
            );
        }
    }
    match c.tsc_mhz {
        Some(t) => {
            let _ = writeln!(
                s,
                "  TSC         {:8.1} MHz   (core/TSC = {:.3})",
                t,
                c.core_mhz / t
            );
        }
        None if x86 => {
            let _ = writeln!(s, "  TSC              n/a");
        }
        None => {}
    }
    let _ = writeln!(s, "  verdict     {}", c.verdict.as_str());
    s
}

pub fn caches(levels: &[CacheLevel], memory: Option<&MemoryLatency>) -> String {
    caches_pages(levels, memory, None)
}

/// The part of the cache probe's buffer the kernel backed with huge pages
/// (smaps, recorded in the `cache.huge_fraction` diagnostic at the
/// buffer's size), if recorded.
pub fn cache_smaps_huge_fraction(p: &Profile) -> Option<f64> {
    p.raw_curve("cache.huge_fraction")?
        .points
        .iter()
        .find(|q| q.x > 0.0)
        .map(|q| q.y)
        .filter(|y| y.is_finite())
}

/// Which measurement the memory latency is and over what working set
/// (empty for older profiles, which say neither): the consistency stage
/// reports one figure per run, and this says which.
pub fn memory_source(m: &MemoryLatency) -> String {
    let size = m.size_bytes.map(human_bytes);
    match (m.source.as_deref(), size) {
        (Some("mem chase"), Some(s)) => format!("random chase over {s}, the mem section's; "),
        (Some(src), Some(s)) => format!("{src} up to {s}; "),
        (Some(src), None) => format!("{src}; "),
        (None, _) => String::new(),
    }
}

/// Which pages the cache probe's memory latency was measured on: the one
/// statement text and HTML print, from the TLB check (`huge_pages`) and
/// what smaps said, so a buffer the kernel backed with huge pages that the
/// TLB still saw as 4 KiB pages is said to be exactly that.
pub fn memory_pages(m: &MemoryLatency, smaps_huge: Option<f64>) -> String {
    match (m.huge_pages, smaps_huge) {
        (true, _) => "huge pages, verified by the TLB check".into(),
        (false, Some(f)) if f > 0.0 => format!(
            "4 KiB pages as the TLB saw them, TLB misses included; smaps counted {:.0}% of the buffer in huge pages, but the TLB check failed",
            f * 100.0
        ),
        (false, _) => "4 KiB pages, TLB misses included".into(),
    }
}

/// Which pages backed the `mem` buffer: what `page_size`/`use_hugepages`
/// say, with smaps' share of huge pages; the one statement text and HTML
/// print.
pub fn mem_pages(m: &MemResult) -> String {
    if m.use_hugepages {
        if m.huge_fraction >= 0.9 || m.huge_fraction <= 0.0 {
            format!("{} pages", human_bytes(m.page_size_bytes))
        } else {
            format!(
                "{} pages requested, {:.0}% huge in smaps",
                human_bytes(m.page_size_bytes),
                m.huge_fraction * 100.0
            )
        }
    } else if m.huge_fraction >= 0.9 {
        format!(
            "4 KiB pages to the TLB ({:.0}% huge pages in smaps)",
            m.huge_fraction * 100.0
        )
    } else if m.huge_fraction > 0.0 {
        format!("4 KiB pages ({:.0}% huge)", m.huge_fraction * 100.0)
    } else {
        "4 KiB pages".into()
    }
}

/// The caches block, with the pages statement of [`memory_pages`].
pub fn caches_pages(
    levels: &[CacheLevel],
    memory: Option<&MemoryLatency>,
    smaps_huge: Option<f64>,
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "caches:");
    let _ = writeln!(
        s,
        "  level      size   (nominal)  line         latency              miss-latency          replace-time"
    );
    for c in levels {
        let _ = writeln!(
            s,
            "  {:>5} {:>9}  ({:>9})  {:>4}  {}  {}  {}{}",
            c.level,
            measured_bytes(c.size_bytes),
            c.nominal_size_bytes.map_or("?".into(), human_bytes),
            c.line_bytes.map_or("?".into(), |l| format!("{l} B")),
            ns_cy(c.latency_ns, c.latency_cycles),
            opt_ns_cy(c.miss_latency_ns, c.miss_latency_cycles),
            opt_ns_cy(c.replace_time_ns, c.replace_time_cycles),
            noisy_mark(c.verdict)
        );
    }
    if let Some(m) = memory {
        let _ = writeln!(
            s,
            "  memory latency {} ({}{}){}",
            ns_cy(m.latency_ns, m.latency_cycles).trim(),
            memory_source(m),
            memory_pages(m, smaps_huge),
            noisy_mark(m.verdict)
        );
        if let Some(l) = m.latency_no_walks_ns {
            let _ = writeln!(
                s,
                "  without page walks {l:.2} ns (measured: the same buffer chased in windows the TLB holds; page walks {:.1} ns)",
                (m.latency_ns - l).max(0.0)
            );
        }
        if let Some(r) = m.cache_reach_bytes {
            let _ = writeln!(
                s,
                "  caches reach     {} (past it the cache sweep reads within 10% of its memory plateau)",
                human_bytes(r)
            );
        }
    }
    let iv = level_intervals(levels, memory);
    if !iv.is_empty() {
        let _ = writeln!(s, "  {iv}");
    }
    for p in memory.map_or(&[][..], |m| &m.mlp[..]) {
        let _ = writeln!(
            s,
            "  {:>2} parallel chases: {:7.2} ns per load ({:.2}× one chase)",
            p.chains, p.ns_per_load, p.speedup
        );
    }
    s
}

/// The levels' and memory's 95% intervals on one line, where the profile
/// states them (empty for older profiles, so their text is unchanged); the
/// one wording text and HTML print.
pub fn level_intervals(levels: &[CacheLevel], memory: Option<&MemoryLatency>) -> String {
    let mut parts: Vec<String> = levels
        .iter()
        .filter(|c| c.size_bytes_ci95.is_some() || c.latency_ns_ci95.is_some())
        .map(|c| {
            let mut v = Vec::new();
            if let Some([a, b]) = c.size_bytes_ci95 {
                v.push(format!("{}–{}", human_bytes(a), human_bytes(b)));
            }
            if let Some([a, b]) = c.latency_ns_ci95 {
                v.push(format!("{a:.2}–{b:.2} ns"));
            }
            format!("L{} {}", c.level, v.join(", "))
        })
        .collect();
    if let Some([a, b]) = memory.and_then(|m| m.latency_ns_ci95) {
        parts.push(format!("memory {a:.1}–{b:.1} ns"));
    }
    if parts.is_empty() {
        return String::new();
    }
    format!("95% intervals (this run's scatter): {}", parts.join("; "))
}

pub fn tlbs(t: &[TlbLevel]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "TLBs:");
    let _ = writeln!(s, "  level  entries  page size        miss-latency");
    for l in t {
        let _ = writeln!(
            s,
            "  {:>5}  {:>7}  {:>9}  {}{}{}",
            l.level,
            l.entries,
            human_bytes(l.page_bytes),
            ns_cy(l.miss_latency_ns, l.miss_latency_cycles),
            noisy_mark(l.verdict),
            tlb_details(l)
        );
    }
    if t.is_empty() {
        let _ = writeln!(s, "  (no TLB level detected)");
    }
    s
}

/// The step's width, the nominal size and the baseline, where recorded
/// (empty for older profiles, so their text is unchanged).
fn tlb_details(l: &TlbLevel) -> String {
    let mut parts = Vec::new();
    match (l.entries_low, l.entries_high) {
        (Some(lo), Some(hi)) => parts.push(format!("step {lo}–{hi}")),
        // A soft step the sweep did not see finish (tlb.l{N}-soft-edge).
        (Some(lo), None) if l.level >= 2 => parts.push(format!("step from {lo}, end not measured")),
        _ => {}
    }
    if let Some(n) = l.nominal_entries {
        parts.push(format!("nominal {n}"));
    }
    match l.baseline.as_deref() {
        Some("dense") => parts.push("vs dense lines".into()),
        Some("huge_pages") => parts.push("vs huge pages".into()),
        _ => {}
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("  ({})", parts.join("; "))
    }
}

/// The PS3 note's comparison: the same page walk in 4 KiB and huge pages.
pub fn tlb_huge_pages(c: &[TlbHugePageComparison]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "TLB penalty, 4 KiB vs huge pages (one access per page, random order):"
    );
    let _ = writeln!(s, "    pages       span   4 KiB pages   huge pages       penalty");
    for q in c {
        let _ = writeln!(
            s,
            "  {:>7}  {:>9}  {:>9.2} ns  {:>8.2} ns  {}",
            q.pages,
            human_bytes(q.span_bytes),
            q.small_pages_ns,
            q.huge_pages_ns,
            ns_cy(q.penalty_ns, q.penalty_cycles).trim()
        );
    }
    s
}

pub fn mem(m: &MemResult) -> String {
    let mut s = mem_heading(m);
    for (k, v) in mem_rows(m) {
        let _ = writeln!(s, "  {k:<15} {v}");
    }
    if let Some(p) = m.preemptions {
        if p > 0 {
            let _ = writeln!(
                s,
                "  {:<15} {p}  (measuring threads descheduled by others)",
                "preemptions"
            );
        }
    }
    mem_threads(&mut s, m);
    mem_numa(&mut s, m);
    s
}

/// The `mem (...)` heading line: pattern, op, threads, size, which pages
/// backed the buffer (huge pages change the latency), and the verdict.
fn mem_heading(m: &MemResult) -> String {
    let mut s = String::new();
    let pages = mem_pages(m);
    let _ = writeln!(
        s,
        "mem ({} {}, {} thread{}, {}, {}):{}",
        m.access_pattern,
        m.op,
        m.threads,
        if m.threads == 1 { "" } else { "s" },
        human_bytes(m.size_bytes),
        pages,
        noisy_mark(m.verdict)
    );
    s
}

/// micbench's key/value block, each figure with what it was measured
/// against (core clock, TSC rate, per-slice spread) and the kernel used.
fn mem_rows(m: &MemResult) -> Vec<(&'static str, String)> {
    let mhz = m.core_mhz.map_or(String::new(), |c| {
        format!(
            "  core cycles; core {:.0} MHz median ({:.0}–{:.0}) measured between slices",
            c.median, c.min, c.max
        )
    });
    let tsc = m.tsc_mhz.map_or(String::new(), |t| {
        format!("  TSC ticks at {t:.0} MHz (micbench's clk_per_op)")
    });
    let slices = m.slice_ns_per_op.map_or(String::new(), |sp| {
        format!(
            "  mean; per slice: median {:.3}, min {:.3}, max {:.3}",
            sp.median, sp.min, sp.max
        )
    });
    vec![
        ("access_pattern", m.access_pattern.clone()),
        ("multiplicity", m.threads.to_string()),
        ("local", m.local.to_string()),
        ("page_size", m.page_size_bytes.to_string()),
        ("size", m.size_bytes.to_string()),
        ("use_hugepages", m.use_hugepages.to_string()),
        ("total_ops", m.total_ops.to_string()),
        ("total_clk", format!("{:.0}", m.total_clk)),
        ("exec_time", format!("{:.6}", m.exec_time_s)),
        ("ops_per_sec", format!("{:.6e}", m.ops_per_sec)),
        ("clk_per_op", format!("{:.3}{mhz}", m.clk_per_op)),
        (
            "tsc_per_op",
            m.tsc_per_op.map_or("n/a".into(), |v| format!("{v:.3}{tsc}")),
        ),
        ("ns_per_op", format!("{:.3}{slices}", m.ns_per_op)),
        (
            "bytes_per_sec",
            format!(
                "{:.6e}  ({:.2} GB/s, {} B per op)",
                m.bytes_per_sec,
                m.bytes_per_sec / 1e9,
                m.bytes_per_op
            ),
        ),
        ("kernel", mem_kernel(m)),
        (
            "setup_time",
            format!(
                "{:.3}  (map, touch{})",
                m.setup_s,
                if m.access_pattern == "random" {
                    ", link"
                } else {
                    ""
                }
            ),
        ),
        ("total_exec_time", format!("{:.6}", m.total_exec_time_s)),
    ]
}

/// What the timed loop did: a dependent chase (or several independent ones,
/// whose time per load is not a latency), loads, or which kind of stores.
fn mem_kernel(m: &MemResult) -> String {
    if m.access_pattern == "random" && m.chains > 1 {
        format!(
            "{} independent chases per thread (memory-level parallelism: ns_per_op is time per load, not latency)",
            m.chains
        )
    } else if m.access_pattern == "random" {
        "dependent chase (64-byte lines, pseudo-random cycle)".to_string()
    } else if m.op == "read" {
        format!("{} loads", m.kernel)
    } else {
        format!(
            "{} {} stores",
            m.kernel,
            if m.nontemporal { "non-temporal" } else { "regular" }
        )
    }
}

/// One line per thread, when there are several or any was placed on a NUMA
/// node: a slow thread or a remote node shows here, not in the mean.
fn mem_threads(s: &mut String, m: &MemResult) {
    if m.per_thread.len() > 1 || m.per_thread.iter().any(|t| t.node.is_some()) {
        for t in &m.per_thread {
            let _ = writeln!(
                s,
                "  thread {:>2} {:<5} cpu {:>3} node {:>2}: {:9.3} ns/op {:9.3} clk/op {:>8} tsc/op {:7.2} GB/s",
                t.tid,
                t.work,
                t.cpu.map_or("-".into(), |c| c.to_string()),
                t.node.map_or("-".into(), |c| c.to_string()),
                t.ns_per_op,
                t.clk_per_op,
                // Not recorded (no TSC, or an older profile): a dash, not NaN.
                t.tsc_per_op.map_or("-".into(), |v| format!("{v:.3}")),
                t.bytes_per_sec / 1e9
            );
        }
    }
}

/// The NUMA latency matrix, when measured: one row per CPU node, one column
/// per memory node, `-` where a pair was not measured.
fn mem_numa(s: &mut String, m: &MemResult) {
    if m.numa_matrix.is_empty() {
        return;
    }
    let mut mem_nodes: Vec<u32> = m.numa_matrix.iter().map(|c| c.mem_node).collect();
    mem_nodes.sort_unstable();
    mem_nodes.dedup();
    let mut cpu_nodes: Vec<(u32, usize)> = m.numa_matrix.iter().map(|c| (c.cpu_node, c.cpu)).collect();
    cpu_nodes.sort_unstable();
    cpu_nodes.dedup();
    let _ = writeln!(
        s,
        "  NUMA latency, ns (cycles): rows = CPU node, columns = memory node"
    );
    let mut head = format!("  {:>14}", "");
    for n in &mem_nodes {
        let _ = write!(head, " {:>18}", format!("mem {n}"));
    }
    let _ = writeln!(s, "{head}");
    for (cn, cpu) in cpu_nodes {
        let mut row = format!("  {:>14}", format!("node {cn} (cpu {cpu})"));
        for n in &mem_nodes {
            let cell = m
                .numa_matrix
                .iter()
                .find(|c| c.cpu_node == cn && c.mem_node == *n)
                .map_or("-".into(), |c| match c.clk_per_op {
                    Some(cy) => format!("{:.1} ({:.0})", c.ns_per_op, cy),
                    None => format!("{:.1}", c.ns_per_op),
                });
            let _ = write!(row, " {cell:>18}");
        }
        let _ = writeln!(s, "{row}");
    }
}

pub fn bandwidth(b: &Bandwidth) -> String {
    let mut s = String::new();
    bandwidth_headline(&mut s, b);
    bandwidth_scaling(&mut s, b);
    bandwidth_mlp(&mut s, b);
    bandwidth_loaded_latency(&mut s, b);
    s
}

/// The headline figures with the setup they were measured with (threads,
/// size per thread, kernel and kind of stores), and what a copy figure
/// counts, since it is half the memory traffic.
fn bandwidth_headline(s: &mut String, b: &Bandwidth) {
    let gbs = |v: Option<f64>| v.map_or("n/a".into(), |v| format!("{:.2} GB/s", v / 1e9));
    let _ = writeln!(
        s,
        "bandwidth ({} thread{}, {} per thread{}):\n  read {}, write {}, copy {}",
        b.threads,
        if b.threads == 1 { "" } else { "s" },
        human_bytes(b.size_bytes),
        if b.kernel.is_empty() {
            String::new()
        } else {
            format!(
                ", {} kernel, {} stores",
                b.kernel,
                if b.stores.is_empty() { "regular" } else { &b.stores }
            )
        },
        gbs(b.read_bytes_per_sec),
        gbs(b.write_bytes_per_sec),
        gbs(b.copy_bytes_per_sec)
    );
    if b.copy_bytes_per_sec.is_some() || b.scaling.iter().any(|p| p.op == "copy") {
        let _ = writeln!(
            s,
            "  (copy counts bytes copied, as lmbench bw_mem cp; the memory traffic is twice that)"
        );
    }
}

/// GB/s by thread count, one column per operation in the order first
/// measured; written only when more than one point was measured.
fn bandwidth_scaling(s: &mut String, b: &Bandwidth) {
    if b.scaling.len() <= 1 {
        return;
    }
    let mut ops: Vec<&str> = Vec::new();
    for p in &b.scaling {
        if !ops.contains(&p.op.as_str()) {
            ops.push(&p.op);
        }
    }
    let mut threads: Vec<u32> = b.scaling.iter().map(|p| p.threads).collect();
    threads.sort_unstable();
    threads.dedup();
    let mut head = format!("  {:>8}", "threads");
    for o in &ops {
        let _ = write!(head, " {:>12}", format!("{o} GB/s"));
    }
    let _ = writeln!(s, "{head}");
    for t in threads {
        let mut row = format!("  {t:>8}");
        for o in &ops {
            let v = b
                .scaling
                .iter()
                .find(|p| p.threads == t && p.op == *o)
                .map_or("-".into(), |p| format!("{:.2}", p.bytes_per_sec / 1e9));
            let _ = write!(row, " {v:>12}");
        }
        let _ = writeln!(s, "{row}");
    }
}

/// Memory-level parallelism: ns per load with k independent chases.
fn bandwidth_mlp(s: &mut String, b: &Bandwidth) {
    if !b.mlp.is_empty() {
        let pts: Vec<String> = b
            .mlp
            .iter()
            .map(|m| format!("{}: {:.1} ns ({:.2}×)", m.chains, m.ns_per_load, m.speedup))
            .collect();
        let _ = writeln!(s, "  parallel chases, ns per load: {}", pts.join(", "));
    }
}

/// Latency of a chasing thread while others stream, one line per number
/// of streaming threads (0 is the idle memory system).
fn bandwidth_loaded_latency(s: &mut String, b: &Bandwidth) {
    for l in &b.loaded_latency {
        let _ = writeln!(
            s,
            "  latency with {} streaming thread(s): {:.1} ns{}{}",
            l.streaming_threads,
            l.latency_ns,
            l.latency_cycles
                .map_or(String::new(), |c| format!(" = {c:.0} cy")),
            if l.streaming_threads == 0 {
                " (idle memory system)".to_string()
            } else {
                format!(
                    " (the streams read {:.2} GB/s meanwhile)",
                    l.stream_bytes_per_sec / 1e9
                )
            }
        );
    }
}

/// How the ring was placed, for humans.
pub fn ctx_placement(c: &ContextSwitch) -> String {
    let list = |v: &[usize]| v.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",");
    match c.placement.as_str() {
        "same" => format!(
            "same: every member on CPU {}, each hop at least one switch",
            list(&c.cpus)
        ),
        "spread" => format!("spread: members round-robin over CPUs {}", list(&c.cpus)),
        "none" => "none: unpinned, the scheduler places members".into(),
        other => other.to_string(),
    }
}

/// The context-switch block: per size, the overhead that was subtracted and
/// per ring size min / median ± MAD / max, µs per hop (lat_ctx's "switch"),
/// then the switches per hop the kernel counted and µs per real switch.
pub fn context_switch(c: &ContextSwitch) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "context switch (lat_ctx ring of {}; placement {}):",
        c.kind,
        ctx_placement(c)
    );
    let _ = writeln!(
        s,
        "  {} ring(s) at once, {} samples per point after {} warm-up round(s); µs per hop (lat_ctx's \
         \"switch\"), with the overhead (token pass + array sum in one process, hot caches) subtracted; \
         sw/hop = switches per hop counted by the kernel, µs/switch = median / sw/hop",
        c.parallel.max(1),
        c.repetitions,
        c.warmups
    );
    let _ = writeln!(
        s,
        "  {:>8} {:>10} {:>6} {:>8} {:>8} {:>7} {:>8} {:>9} {:>7} {:>9}",
        "size", "overhead", "procs", "min", "median", "±MAD", "max", "median cy", "sw/hop", "µs/switch"
    );
    for z in c.all_sizes() {
        for (i, p) in z.points.iter().enumerate() {
            let (sz, ov) = if i == 0 {
                (format!("{} KB", z.size_kb), format!("{:.2} µs", z.overhead_us))
            } else {
                (String::new(), String::new())
            };
            let cy = p.cycles_median.map_or("-".to_string(), |c| format!("{c:.0}"));
            let sw = p.switches_per_hop.map_or("-".to_string(), |c| format!("{c:.2}"));
            let per = p.us_per_switch.map_or("-".to_string(), |c| format!("{c:.2}"));
            let _ = writeln!(
                s,
                "  {:>8} {:>10} {:>6} {:>8.2} {:>8.2} {:>7.2} {:>8.2} {:>9} {:>7} {:>9}{}{}",
                sz,
                ov,
                p.nprocs,
                p.us_min,
                p.us_median,
                p.us_mad,
                p.us_max,
                cy,
                sw,
                per,
                if p.overhead_exceeds {
                    "  (overhead ≥ hop in some samples: clamped to 0)"
                } else {
                    ""
                },
                noisy_mark(p.verdict)
            );
        }
    }
    s
}

/// fio-style rate: `123.4 MB/s (117.7 MiB/s)`.
fn rate(bps: f64) -> String {
    format!("{:.1} MB/s ({:.1} MiB/s)", bps / 1e6, bps / (1u64 << 20) as f64)
}

pub fn io_section(io: &IoResult) -> String {
    let mut s = String::new();
    let mix = match io.rwmix_read {
        Some(r) => format!(" rwmix_read={r}%"),
        None => String::new(),
    };
    let _ = writeln!(
        s,
        "io ({}{mix} bs={} engine={} iodepth={} threads={}{}):",
        io.rw,
        human_bytes(io.bs_bytes),
        io.engine,
        io.iodepth,
        io.threads,
        if io.direct { " direct" } else { " buffered" },
    );
    let _ = writeln!(
        s,
        "  target     {} ({} used{}), {}",
        io.path,
        human_bytes(io.size_bytes),
        if io.created_file {
            ", created and removed"
        } else {
            ""
        },
        match io.time_limit_s {
            Some(t) => format!("time-bound {t} s, ran {:.2} s", io.runtime_s),
            None => format!("one pass in {:.2} s", io.runtime_s),
        }
    );
    let _ = writeln!(
        s,
        "  total      {:.0} IOPS, {}, {} I/Os",
        io.iops,
        rate(io.bytes_per_sec),
        io.ios
    );
    if io.read_ios > 0 && io.write_ios > 0 && io.runtime_s > 0.0 {
        let _ = writeln!(
            s,
            "             reads {:.0} IOPS, writes {:.0} IOPS",
            io.read_ios as f64 / io.runtime_s,
            io.write_ios as f64 / io.runtime_s
        );
    }
    let _ = writeln!(
        s,
        "  latency    min {:.1}  p50 {:.1}  p99 {:.1}  p99.9 {:.1}  max {:.1}  mean {:.1}  (µs)",
        io.lat_min_us, io.lat_p50_us, io.lat_p99_us, io.lat_p999_us, io.lat_max_us, io.lat_mean_us
    );
    if io.iops_intervals.len() >= 2 {
        let v = &io.iops_intervals;
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(0.0, f64::max);
        let _ = writeln!(s, "  per second IOPS from {lo:.0} to {hi:.0} over {} s", v.len());
    }
    if io.per_thread.len() > 1 {
        for t in &io.per_thread {
            let _ = writeln!(
                s,
                "  thread {:<3} {:.0} IOPS, {}, latency µs min {:.1} p50 {:.1} p99 {:.1} p99.9 {:.1} max {:.1}",
                t.tid,
                t.iops,
                rate(t.bytes_per_sec),
                t.lat_min_us,
                t.lat_p50_us,
                t.lat_p99_us,
                t.lat_p999_us,
                t.lat_max_us
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An Arm machine (64 KiB pages, emulated) shows its core and no x86
    /// field; the x86 sample keeps its CPUID line and invariant TSC.
    #[test]
    fn arm_machines_show_no_x86_fields() {
        let mut p = hwcal_model::sample::full_profile(0);
        let x86 = summary(&p);
        assert!(
            x86.contains("family 6 model") && x86.contains("invariant TSC yes"),
            "{x86}"
        );
        assert!(x86.contains("TSC  ") && !x86.contains("pages      base"), "{x86}");
        let m = p.machine.as_mut().unwrap();
        m.arch = "aarch64".into();
        m.cpu_vendor = "Arm".into();
        m.cpu_model_name = "Neoverse N1".into();
        (m.cpu_family, m.cpu_model, m.cpu_stepping) = (None, None, None);
        m.midr = Some(hwcal_model::Midr::from_raw(0x413f_d0c1));
        m.invariant_tsc = false;
        m.page_bytes = Some(64 << 10);
        m.hugepage_sizes = vec![2 << 20, 512 << 20, 16 << 30];
        m.emulation = Some("user-mode emulation".into());
        let h = p.harness.as_mut().unwrap();
        (h.timer, h.tsc_mhz, h.counter_mhz) = ("cntvct".into(), None, Some(25.0));
        p.clock.as_mut().unwrap().tsc_mhz = None;
        let arm = summary(&p);
        assert!(
            arm.contains("cpu        Neoverse N1 (Arm, part 0xd0c r3p1)"),
            "{arm}"
        );
        assert!(
            arm.contains("pages      base 64 KiB, huge 2 MiB, 512 MiB, 16 GiB"),
            "{arm}"
        );
        assert!(arm.contains("emulation  user-mode emulation"), "{arm}");
        assert!(arm.contains("counter 25.0 MHz"), "{arm}");
        assert!(!arm.contains("TSC") && !arm.contains("family"), "{arm}");
        let html = crate::html::report(&p, "arm");
        assert!(html.contains("Neoverse N1") && html.contains("r3p1"));
        assert!(!html.contains("invariant TSC") && !html.contains(">TSC<"));
    }

    #[test]
    fn measured_sizes_keep_three_figures() {
        assert_eq!(measured_bytes(39107), "38.2 KiB");
        assert_eq!(measured_bytes(2_128_609), "2.03 MiB");
        assert_eq!(measured_bytes(49152), "48 KiB");
        // One figure, one value: the same text wherever a size is printed.
        assert_eq!(human_bytes(490_373), measured_bytes(490_373));
        assert_eq!(human_bytes(490_373), "479 KiB");
        assert_eq!(measured_bytes(110_100_480), "105 MiB");
        assert_eq!(measured_bytes(640), "640 B");
    }

    #[test]
    fn sizes() {
        assert_eq!(human_bytes(48 * 1024), "48 KiB");
        assert_eq!(human_bytes(1280 * 1024), "1.25 MiB");
        assert_eq!(human_bytes(105 << 20), "105 MiB");
        assert_eq!(human_bytes(100), "100 B");
    }

    #[test]
    fn figures_not_recorded_print_as_dashes_not_nan() {
        // The synthetic profiles leave optional figures (per-thread TSC
        // ticks among them) unset; the summary must not print NaN for them.
        for v in 0..3 {
            let t = summary(&hwcal_model::sample::full_profile(v));
            assert!(!t.contains("NaN"), "variant {v}:\n{t}");
        }
    }

    #[test]
    fn mem_and_bandwidth_sections() {
        let mut p = Profile::new("hwcal mem", 0);
        p.mem = Some(MemResult {
            access_pattern: "random".into(),
            op: "chase".into(),
            threads: 1,
            size_bytes: 1 << 30,
            page_size_bytes: 2 << 20,
            use_hugepages: true,
            huge_fraction: 1.0,
            ns_per_op: 150.0,
            clk_per_op: 390.0,
            tsc_per_op: Some(300.0),
            tsc_mhz: Some(2000.0),
            numa_matrix: vec![NumaLatency {
                cpu_node: 0,
                cpu: 1,
                mem_node: 0,
                ns_per_op: 150.0,
                clk_per_op: Some(390.0),
            }],
            ..Default::default()
        });
        p.bandwidth = Some(Bandwidth {
            threads: 2,
            size_bytes: 256 << 20,
            read_bytes_per_sec: Some(20e9),
            scaling: vec![
                BandwidthPoint {
                    threads: 1,
                    op: "read".into(),
                    bytes_per_sec: 11e9,
                },
                BandwidthPoint {
                    threads: 2,
                    op: "read".into(),
                    bytes_per_sec: 20e9,
                },
            ],
            ..Default::default()
        });
        let s = summary(&p);
        for key in [
            "access_pattern",
            "multiplicity",
            "clk_per_op",
            "tsc_per_op",
            "ns_per_op",
            "use_hugepages",
        ] {
            assert!(s.contains(key), "{key}");
        }
        assert!(s.contains("2 MiB pages") && s.contains("micbench's clk_per_op"));
        assert!(s.contains("150.0 (390)") && s.contains("11.00") && s.contains("20.00 GB/s"));
    }

    #[test]
    fn intervals_are_printed_where_the_profile_states_them() {
        let p = hwcal_model::sample::full_profile(0);
        let s = summary(&p);
        let line = s
            .lines()
            .find(|l| l.contains("95% intervals"))
            .unwrap_or_else(|| panic!("{s}"));
        assert!(
            line.contains("L1 ") && line.contains("L3 ") && line.contains("memory "),
            "{line}"
        );
        assert!(s.contains("MHz   (95% "), "{s}");
        // An older profile without them prints as it did.
        let mut old = p.clone();
        for l in old.caches.as_mut().unwrap() {
            l.latency_ns_ci95 = None;
            l.size_bytes_ci95 = None;
        }
        old.memory.as_mut().unwrap().latency_ns_ci95 = None;
        old.clock.as_mut().unwrap().core_mhz_ci95 = None;
        let t = summary(&old);
        assert!(!t.contains("95%"), "{t}");
    }

    #[test]
    fn summary_shows_noisy_clock() {
        let mut p = Profile::new("hwcal clock", 0);
        p.clock = Some(ClockResult {
            core_mhz: 2500.0,
            verdict: Verdict::Noisy,
            ..Default::default()
        });
        let s = summary(&p);
        assert!(s.contains("(noisy)") && s.contains("2500.0 MHz"));
    }

    #[test]
    fn io_section_shows_totals_mix_and_threads() {
        let t = |tid| IoThread {
            tid,
            ios: 500,
            iops: 1000.0,
            bytes_per_sec: 4096e3,
            ..Default::default()
        };
        let io = IoResult {
            rw: "randrw".into(),
            rwmix_read: Some(70),
            bs_bytes: 4096,
            size_bytes: 1 << 30,
            engine: "io_uring".into(),
            iodepth: 32,
            threads: 2,
            direct: true,
            runtime_s: 1.0,
            iops: 2000.0,
            bytes_per_sec: 8192e3,
            ios: 1000,
            read_ios: 700,
            write_ios: 300,
            lat_p999_us: 123.4,
            per_thread: vec![t(0), t(1)],
            ..Default::default()
        };
        let s = io_section(&io);
        assert!(
            s.contains("randrw rwmix_read=70% bs=4 KiB engine=io_uring iodepth=32 threads=2 direct"),
            "{s}"
        );
        assert!(s.contains("2000 IOPS, 8.2 MB/s"), "{s}");
        assert!(s.contains("reads 700 IOPS, writes 300 IOPS"), "{s}");
        assert!(s.contains("p99.9 123.4"), "{s}");
        assert!(s.contains("thread 1"), "{s}");
    }
}
