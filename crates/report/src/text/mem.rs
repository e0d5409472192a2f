//! The `mem` block of the terminal summary: one memory benchmark's
//! configuration, figures, kernel, threads and NUMA placement, in words
//! ([`mem_facts`]); micbench's own keys (`use_hugepages false`,
//! `ops_per_sec 6.4e6`) are for those who know them: `hwcal mem --micbench`,
//! the JSON, and the HTML report's folded table ([`micbench_rows`]).

use crate::format::noisy_mark;
use hwcal_model::*;
use std::fmt::Write;

pub fn mem(m: &MemResult) -> String {
    let mut s = mem_heading(m);
    for (k, v) in mem_facts(m) {
        let _ = writeln!(s, "  {k:<11} {v}");
    }
    if let Some(p) = m.preemptions {
        if p > 0 {
            let _ = writeln!(
                s,
                "  {:<11} {p}  (measuring threads descheduled by others)",
                "preemptions"
            );
        }
    }
    mem_threads(&mut s, m);
    mem_numa(&mut s, m);
    s
}

/// micbench's key block alone, as `hwcal mem --micbench` prints it.
pub fn micbench(m: &MemResult) -> String {
    let mut s = String::from("mem (micbench's keys):\n");
    for (k, v) in micbench_rows(m) {
        let _ = writeln!(s, "  {k:<15} {v}");
    }
    s
}

/// What the benchmark ran, as every rendering names it: `random chase, 1
/// thread, 256 MiB`.
pub fn mem_test(m: &MemResult) -> String {
    format!(
        "{} {}, {} thread{}, {}",
        m.access_pattern,
        m.op,
        m.threads,
        if m.threads == 1 { "" } else { "s" },
        human_bytes(m.size_bytes)
    )
}

/// The `mem (...)` heading line: pattern, op, threads, size, which pages
/// backed the buffer (huge pages change the latency), and the verdict.
fn mem_heading(m: &MemResult) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "mem ({}):{}", mem_test(m), noisy_mark(m.verdict));
    s += &crate::format::wrap(&format!("  pages       {}", mem_pages(m)), 100, 14);
    s
}

/// The benchmark in words: the figure it measured (a latency, a time per
/// load over several chases, or a rate) with its cycles and the spread of
/// its timing slices, the kernel, and how much work that took.
pub fn mem_facts(m: &MemResult) -> Vec<(&'static str, String)> {
    let mut rows = Vec::new();
    let cycles = match m.core_mhz {
        Some(c) => format!(
            " = {:.1} cy (core {:.0} MHz, {:.0}–{:.0} between slices)",
            m.clk_per_op, c.median, c.min, c.max
        ),
        None if m.clk_per_op.is_finite() && m.clk_per_op > 0.0 => format!(" = {:.1} cy", m.clk_per_op),
        None => String::new(),
    };
    let slices = m
        .slice_ns_per_op
        .map(|sp| format!("median {:.2} ns, {:.2}–{:.2}", sp.median, sp.min, sp.max));
    if m.access_pattern == "random" && m.chains <= 1 {
        rows.push(("latency", format!("{:.2} ns per load{cycles}", m.ns_per_op)));
    } else if m.access_pattern == "random" {
        rows.push((
            "per load",
            format!(
                "{:.2} ns{cycles}: {} chases at once, so a throughput, not a latency",
                m.ns_per_op, m.chains
            ),
        ));
    } else {
        rows.push((
            "bandwidth",
            format!(
                "{:.2} GB/s ({:.2} ns per {} B{cycles})",
                m.bytes_per_sec / 1e9,
                m.ns_per_op,
                m.bytes_per_op
            ),
        ));
    }
    if let Some(sl) = slices {
        rows.push(("slices", sl));
    }
    rows.push(("kernel", mem_kernel(m)));
    let unit = if m.access_pattern == "random" {
        "loads"
    } else {
        "ops"
    };
    rows.push((
        "work",
        format!(
            "{} {unit} in {:.3} s; setup {:.2} s (map, touch{})",
            grouped(m.total_ops),
            m.exec_time_s,
            m.setup_s,
            if m.access_pattern == "random" {
                ", link"
            } else {
                ""
            }
        ),
    ));
    rows
}

/// 2589696 as "2,589,696": a count of operations read at a glance.
fn grouped(n: u64) -> String {
    let d = n.to_string();
    let mut out = String::new();
    for (i, c) in d.chars().enumerate() {
        if i > 0 && (d.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// micbench's key/value block, each figure with what it was measured
/// against (core clock, TSC rate, per-slice spread) and the kernel used.
pub fn micbench_rows(m: &MemResult) -> Vec<(&'static str, String)> {
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

/// Which pages backed the `mem` buffer: what `page_size`/`use_hugepages`
/// say, with smaps' share of huge pages; the one statement text and HTML
/// print.
pub fn mem_pages(m: &MemResult) -> String {
    // `use_hugepages` is what the TLB check confirmed; smaps' share says
    // what the kernel granted (a share with huge pages not confirmed means
    // they were asked: `hwcal run` asks THP for its buffers).
    let granted = m.huge_fraction.is_finite().then_some(m.huge_fraction);
    let asked = m.use_hugepages || granted.is_some_and(|g| g > 0.0);
    let size = (m.use_hugepages && m.page_size_bytes > 4096).then_some(m.page_size_bytes);
    hwcal_model::pages::sized(asked, granted, asked.then_some(m.use_hugepages), size)
}
