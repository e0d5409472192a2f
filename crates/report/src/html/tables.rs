//! One HTML table per measured section (machine, harness, clock, caches,
//! TLBs, `mem`, bandwidth, context switch, I/O, named figures), each the
//! counterpart of the terminal summary's block.

use super::widgets::{kv, table, table_l, verdict};
use crate::format::{esc, opt_gb_per_s, opt_one_decimal, opt_two_decimals, two_decimals};
use hwcal_model::*;
use std::fmt::Write;

/// The machine section: identity rows, then the nominal caches.
pub(super) fn machine_table(m: &MachineInfo) -> String {
    machine_kv(m) + &nominal_caches_table(&m.nominal_caches)
}

/// The machine's identity as key/value rows: CPU, kernel, hypervisor,
/// memory, huge pages, NUMA and TSC, each of which bears on how the
/// measured figures should be read.
pub(super) fn machine_kv(m: &MachineInfo) -> String {
    let opt = |v: Option<u32>| v.map_or("?".into(), |v| v.to_string());
    let nodes: Vec<String> = m
        .numa_nodes
        .iter()
        .map(|n| format!("node {}: CPUs {:?}", n.node, n.cpus))
        .collect();
    let ident = match crate::text::arm_cpu(m) {
        Some(arm) => ("vendor, part, revision", esc(&arm)),
        None => (
            "vendor / family / model / stepping",
            esc(&format!(
                "{} / {} / {} / {}",
                m.cpu_vendor,
                opt(m.cpu_family),
                opt(m.cpu_model),
                opt(m.cpu_stepping)
            )),
        ),
    };
    let mut rows = vec![
        ("host", esc(&m.hostname)),
        ("CPU", esc(&m.cpu_model_name)),
        ident,
        ("architecture", esc(&m.arch)),
        (
            "core / machine id / product",
            esc(&m.identity.as_ref().map_or("not recorded".into(), |id| {
                format!(
                    "{} / {} (from {}) / {}",
                    id.core,
                    id.machine_id,
                    id.id_source,
                    id.product.as_deref().unwrap_or("-")
                )
            })),
        ),
        (
            "CPUs",
            esc(&format!("{} logical, online {:?}", m.logical_cpus, m.online_cpus)),
        ),
        ("kernel", esc(&m.kernel)),
        (
            "hypervisor",
            esc(m.hypervisor.as_deref().unwrap_or("none detected")),
        ),
        (
            "memory",
            esc(&format!(
                "{} total, {} available",
                human_bytes(m.memory_total_bytes),
                human_bytes(m.memory_available_bytes)
            )),
        ),
        (
            "huge pages",
            esc(&format!(
                "THP {}, {} reserved{}",
                m.thp_mode.as_deref().unwrap_or("unavailable"),
                m.hugepages_reserved,
                m.hugepage_size_bytes
                    .map_or(String::new(), |b| format!(" of {}", human_bytes(b)))
            )),
        ),
        (
            "NUMA",
            esc(&if nodes.is_empty() {
                "no NUMA information".into()
            } else {
                nodes.join("; ")
            }),
        ),
    ];
    if let Some(p) = crate::text::page_sizes(m) {
        rows.push(("pages", esc(&p)));
    }
    if let Some(e) = &m.emulation {
        rows.push(("emulation", esc(&format!("{e}: timings describe the emulator"))));
    }
    // x86 only: Arm has no TSC.
    if !m.is_arm() {
        rows.push((
            "invariant TSC",
            (if m.invariant_tsc { "yes" } else { "no" }).into(),
        ));
    }
    kv(&rows)
}

/// The caches the system reports (not measured), headed by where the
/// figures came from, to set beside the levels the probes found; nothing
/// when the system reported none.
pub(super) fn nominal_caches_table(caches: &[NominalCache]) -> String {
    let mut s = String::new();
    if caches.is_empty() {
        return s;
    }
    let _ = writeln!(s, "<h3>Nominal caches ({})</h3>", esc(&caches[0].source));
    let rows: Vec<Vec<String>> = caches
        .iter()
        .map(|c| {
            vec![
                format!("L{}", c.level),
                esc(&c.cache_type),
                human_bytes(c.size_bytes),
                c.line_bytes.map_or("?".into(), |v| format!("{v} B")),
                c.ways.map_or("?".into(), |v| v.to_string()),
                esc(&format!("{:?}", c.shared_cpus)),
            ]
        })
        .collect();
    s += &table_l(
        &["level", "type", "size", "line", "ways", "shared by CPUs"],
        &rows,
        2,
    );
    s
}

pub(super) fn harness_table(h: &HarnessInfo) -> String {
    kv(&[
        ("timer", esc(&h.timer)),
        ("resolution", format!("{:.2} ns", h.timer_resolution_ns)),
        ("read overhead", format!("{:.1} ns", h.timer_overhead_ns)),
        match h.counter_mhz {
            Some(_) => ("counter", esc(crate::text::counter(h).trim_start_matches(", "))),
            None => ("TSC", h.tsc_mhz.map_or("-".into(), |t| format!("{t:.1} MHz"))),
        },
        (
            "pinned to",
            h.pinned_cpu.map_or("no CPU".into(), |c| format!("CPU {c}")),
        ),
        ("enough (1% timing error)", format!("{:.0} µs", h.enough_ns / 1e3)),
    ])
}

pub(super) fn clock_table(c: &ClockResult, x86: bool) -> String {
    let mut rows = vec![
        (
            "core clock",
            format!(
                "<b>{:.1} MHz</b> (min {:.1}, max {:.1} over the run)",
                c.core_mhz, c.core_mhz_min, c.core_mhz_max
            ),
        ),
        ("add chain", format!("{:.1} MHz", c.chain_mhz)),
        (
            "mhz GCD",
            match c.gcd_mhz {
                Some(g) => format!(
                    "{g:.1} MHz ({} of {} batches accepted; methods agree within {})",
                    c.gcd_rounds_accepted,
                    c.gcd_rounds_attempted,
                    c.agreement_pct.map_or("?".into(), |a| format!("{a:.2}%"))
                ),
                None => format!(
                    "n/a ({} of {} batches accepted)",
                    c.gcd_rounds_accepted, c.gcd_rounds_attempted
                ),
            },
        ),
        (
            "TSC",
            c.tsc_mhz.map_or("n/a".into(), |t| {
                format!("{t:.1} MHz (core/TSC = {:.3})", c.core_mhz / t)
            }),
        ),
        ("verdict", verdict(c.verdict)),
    ];
    // Arm has no TSC: no "n/a" row there.
    if !x86 && c.tsc_mhz.is_none() {
        rows.retain(|(k, _)| *k != "TSC");
    }
    kv(&rows)
}

pub(super) fn caches_table(
    levels: &[CacheLevel],
    memory: Option<&MemoryLatency>,
    pages: crate::text::BufferPages,
) -> String {
    let mut rows: Vec<Vec<String>> = levels
        .iter()
        .map(|c| {
            vec![
                format!("L{}", c.level),
                human_bytes(c.size_bytes),
                c.nominal_size_bytes.map_or("?".into(), human_bytes),
                c.line_bytes.map_or("?".into(), |l| format!("{l} B")),
                two_decimals(c.latency_ns),
                opt_one_decimal(c.latency_cycles),
                opt_two_decimals(c.miss_latency_ns),
                opt_one_decimal(c.miss_latency_cycles),
                opt_two_decimals(c.replace_time_ns),
                opt_one_decimal(c.replace_time_cycles),
                verdict(c.verdict),
            ]
        })
        .collect();
    if let Some(m) = memory {
        // Memory, then DRAM's latency with the page walks held out (the
        // digest's lead figure), each in its own verdict.
        let row = |name: &str, ns: f64, cy: Option<f64>, v: Verdict| {
            let mut r = vec![name.to_string(), "".into(), "".into(), "".into()];
            r.extend([two_decimals(ns), opt_one_decimal(cy)]);
            r.extend(std::iter::repeat_n(String::new(), 4));
            r.push(verdict(v));
            r
        };
        rows.push(row("memory", m.latency_ns, m.latency_cycles, m.verdict));
        if let Some(l) = m.latency_no_walks_ns {
            let v = m.latency_no_walks_verdict.unwrap_or(m.verdict);
            rows.push(row("memory, no page walks", l, m.no_walks_cycles(), v));
        }
    }
    let mut s = table(
        &[
            "level",
            "size",
            "nominal",
            "line",
            "latency ns",
            "cy",
            "miss latency ns",
            "cy",
            "replace time ns",
            "cy",
            "verdict",
        ],
        &rows,
    );
    let iv = crate::text::level_intervals(levels, memory);
    if !iv.is_empty() {
        let _ = writeln!(s, "<p class=\"sub\">{}.</p>", esc(&iv));
    }
    if let Some(m) = memory {
        let _ = writeln!(
            s,
            "<p class=\"sub\">Memory latency measured on {}.</p>",
            esc(&crate::text::memory_pages(m, pages))
        );
        if !m.mlp.is_empty() {
            s += "<h3>Memory-level parallelism</h3>\n";
            let rows: Vec<Vec<String>> = m
                .mlp
                .iter()
                .map(|p| {
                    vec![
                        p.chains.to_string(),
                        two_decimals(p.ns_per_load),
                        format!("{:.2}×", p.speedup),
                    ]
                })
                .collect();
            s += &table(&["parallel chases", "ns per load", "speed-up"], &rows);
        }
    }
    s
}

pub(super) fn tlb_table(t: &[TlbLevel]) -> String {
    if t.is_empty() {
        return "<p>No TLB level detected.</p>\n".into();
    }
    let rows: Vec<Vec<String>> = t
        .iter()
        .map(|l| {
            vec![
                format!("L{}", l.level),
                human_bytes(l.page_bytes),
                l.entries.to_string(),
                human_bytes(l.entries.saturating_mul(l.page_bytes)),
                two_decimals(l.miss_latency_ns),
                opt_one_decimal(l.miss_latency_cycles),
                verdict(l.verdict),
            ]
        })
        .collect();
    table(
        &[
            "level",
            "page size",
            "entries",
            "reach",
            "miss latency ns",
            "cy",
            "verdict",
        ],
        &rows,
    )
}

pub(super) fn mem_table(m: &MemResult) -> String {
    let mut rows: Vec<(&str, String)> = vec![("test", esc(&crate::text::mem_test(m)))];
    rows.extend(crate::text::mem_facts(m).into_iter().map(|(k, v)| (k, esc(&v))));
    rows.push(("pages", esc(&crate::text::mem_pages(m))));
    rows.push(("verdict", verdict(m.verdict)));
    let mut s = kv(&rows);
    // micbench's own keys, for those who compare with it: folded away on
    // screen, left out on paper.
    let keys: Vec<(&str, String)> = crate::text::micbench_rows(m)
        .into_iter()
        .map(|(k, v)| (k, esc(&v)))
        .collect();
    s += &format!(
        "<details class=\"print-hide\"><summary>micbench's keys</summary>\n{}</details>\n",
        kv(&keys)
    );
    if !m.per_thread.is_empty() {
        let rows: Vec<Vec<String>> = m
            .per_thread
            .iter()
            .map(|t| {
                vec![
                    t.tid.to_string(),
                    t.cpu.map_or("-".into(), |c| c.to_string()),
                    t.node.map_or("-".into(), |c| c.to_string()),
                    format!("{:.3}", t.ns_per_op),
                    format!("{:.3}", t.clk_per_op),
                    opt_gb_per_s(Some(t.bytes_per_sec)),
                ]
            })
            .collect();
        // Per-thread detail: on screen, not on paper.
        s += "<div class=\"print-hide\">\n";
        s += &table(&["thread", "CPU", "node", "ns/op", "clk/op", "bandwidth"], &rows);
        s += "</div>\n";
    }
    s
}

pub(super) fn bandwidth_table(b: &Bandwidth) -> String {
    let mut s = kv(&[
        (
            "setting",
            format!(
                "{} thread{}, {} buffer",
                b.threads,
                if b.threads == 1 { "" } else { "s" },
                human_bytes(b.size_bytes)
            ),
        ),
        ("read", opt_gb_per_s(b.read_bytes_per_sec)),
        ("write", opt_gb_per_s(b.write_bytes_per_sec)),
        ("copy", opt_gb_per_s(b.copy_bytes_per_sec)),
    ]);
    if !b.scaling.is_empty() {
        s += "<h3>Scaling with threads</h3>\n";
        let rows: Vec<Vec<String>> = b
            .scaling
            .iter()
            .map(|p| {
                vec![
                    esc(&p.op),
                    p.threads.to_string(),
                    opt_gb_per_s(Some(p.bytes_per_sec)),
                    p.bytes_per_sec_ci95.map_or("-".into(), |[lo, hi]| {
                        format!("{:.2}–{:.2} GB/s", lo / 1e9, hi / 1e9)
                    }),
                    p.verdict.map_or("-", Verdict::as_str).to_string(),
                ]
            })
            .collect();
        s += &table(&["op", "threads", "bandwidth", "95% interval", "verdict"], &rows);
    }
    if !b.loaded_latency.is_empty() {
        s += "<h3>Loaded latency</h3>\n";
        let rows: Vec<Vec<String>> = b
            .loaded_latency
            .iter()
            .map(|l| {
                vec![
                    l.streaming_threads.to_string(),
                    two_decimals(l.latency_ns),
                    opt_gb_per_s(Some(l.stream_bytes_per_sec)),
                ]
            })
            .collect();
        s += &table(&["streaming threads", "latency ns", "stream bandwidth"], &rows);
    }
    s
}

pub(super) fn ctx_points_table(points: &[CtxPoint]) -> String {
    let rows: Vec<Vec<String>> = points
        .iter()
        .map(|p| {
            vec![
                p.nprocs.to_string(),
                two_decimals(p.us_min),
                two_decimals(p.us_median),
                two_decimals(p.us_mad),
                p.switches_per_hop.map_or("–".into(), two_decimals),
                p.us_per_switch.map_or("–".into(), two_decimals),
                verdict(p.verdict),
            ]
        })
        .collect();
    table(
        &[
            "processes",
            "min µs per hop",
            "median µs per hop",
            "MAD µs",
            "switches per hop",
            "µs per switch",
            "verdict",
        ],
        &rows,
    )
}

pub(super) fn ctx_table(c: &ContextSwitch) -> String {
    let mut s = kv(&[
        ("kind", esc(&c.kind)),
        ("placement", esc(&c.placement)),
        ("parallel rings", c.parallel.to_string()),
    ]);
    for z in c.all_sizes() {
        let _ = writeln!(
            s,
            "<h3>Process size {} KiB (overhead {:.2} µs subtracted)</h3>",
            z.size_kb, z.overhead_us
        );
        s += &ctx_points_table(&z.points);
    }
    s
}

pub(super) fn io_table(io: &IoResult) -> String {
    let mut s = kv(&[
        (
            "job",
            esc(&format!(
                "{}{} bs={} engine={} iodepth={} threads={} direct={} size={}",
                io.rw,
                io.rwmix_read.map_or(String::new(), |r| format!(" (read {r}%)")),
                human_bytes(io.bs_bytes),
                io.engine,
                io.iodepth,
                io.threads,
                io.direct,
                human_bytes(io.size_bytes)
            )),
        ),
        ("file", esc(&io.path)),
        ("runtime", format!("{:.2} s", io.runtime_s)),
        ("IOPS", format!("{:.0}", io.iops)),
        ("throughput", format!("{:.1} MB/s", io.bytes_per_sec / 1e6)),
    ]);
    s += &table(
        &["latency", "min", "p50", "p99", "p99.9", "max"],
        &[vec![
            "µs".into(),
            format!("{:.1}", io.lat_min_us),
            format!("{:.1}", io.lat_p50_us),
            format!("{:.1}", io.lat_p99_us),
            format!("{:.1}", io.lat_p999_us),
            format!("{:.1}", io.lat_max_us),
        ]],
    );
    if !io.per_thread.is_empty() {
        let rows: Vec<Vec<String>> = io
            .per_thread
            .iter()
            .map(|t| {
                vec![
                    t.tid.to_string(),
                    t.ios.to_string(),
                    format!("{:.0}", t.iops),
                    format!("{:.1}", t.bytes_per_sec / 1e6),
                    format!("{:.1}", t.lat_p50_us),
                    format!("{:.1}", t.lat_p99_us),
                ]
            })
            .collect();
        s += "<div class=\"print-hide\">\n";
        s += &table(&["thread", "I/Os", "IOPS", "MB/s", "p50 µs", "p99 µs"], &rows);
        s += "</div>\n";
    }
    s
}

/// Named figures of probes without a section of their own.
pub(super) fn figures_table(f: &[Figure]) -> String {
    let rows: Vec<Vec<String>> = f
        .iter()
        .map(|f| {
            vec![
                esc(&f.probe),
                esc(&f.name),
                f.value
                    .map_or("-".into(), |v| esc(&crate::format::value_with_unit(f.unit, v))),
                verdict(f.verdict),
            ]
        })
        .collect();
    table_l(&["probe", "figure", "value", "verdict"], &rows, 2)
}
