//! The HTML report: one self-contained page (inline CSS, inline SVG plots,
//! no script, no external resource) that can be mailed or archived and
//! opened anywhere. A single run shows machine info, every measured
//! section's table and the curves behind them (the cache latency curve with
//! the detected levels marked, as The Calibrator's gnuplot output did; the
//! TLB curves; context switch vs processes; bandwidth vs threads). A
//! comparison overlays two runs on the same plots and tabulates B / A.

use crate::compare::{compare, fmt_ratio, machine_label, Comparison, Mark};
use crate::plots::{cache_latency as cache_plot, curve_points, tlb_curves as tlb_plot, Side};
use crate::svg::{Plot, Series};
use crate::text::human_bytes;
use crate::{format_utc, Exporter, ReportError};
use hwcal_model::*;
use std::fmt::Write;

/// Renders one profile as an HTML page.
#[derive(Debug, Clone, Default)]
pub struct HtmlExporter {
    /// Page title; default "hwcal report — <machine>".
    pub title: Option<String>,
}

impl Exporter for HtmlExporter {
    fn name(&self) -> &'static str {
        "html"
    }
    fn files(&self, profile: &Profile) -> Result<Vec<crate::NamedFile>, ReportError> {
        let title = self
            .title
            .clone()
            .unwrap_or_else(|| format!("hwcal report — {}", machine_label(profile)));
        Ok(crate::NamedFile::single(report(profile, &title).into_bytes()))
    }
}

pub use crate::esc;

pub(crate) const CSS: &str = "
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0;color:#222;background:#f6f7f9}
main{max-width:1100px;margin:0 auto;padding:1em 1.5em 3em}
header{background:#1f3b57;color:#fff;padding:1.2em 1.5em}
header h1{margin:0;font-size:1.5em}
header p{margin:.3em 0 0;opacity:.85}
nav{margin:.8em 0;font-size:.9em}
nav a{margin-right:1em;color:#1f5f99}
section{background:#fff;border:1px solid #dde1e6;border-radius:6px;padding:.6em 1.2em 1em;margin:1em 0}
h2{font-size:1.2em;border-bottom:1px solid #e4e7eb;padding-bottom:.3em}
h3{font-size:1em;margin:1em 0 .4em}
table{border-collapse:collapse;margin:.4em 0;font-size:.9em}
th,td{padding:.25em .7em;border-bottom:1px solid #eceff2;text-align:right;white-space:nowrap}
th{background:#f0f3f6;text-align:center}
td.l,th.l{text-align:left}
table.kv td:first-child{text-align:left;color:#555}
table.kv td{text-align:left;white-space:normal}
.noisy{color:#b35900;font-weight:600}
.better{color:#1a7f37;font-weight:600}
.worse{color:#c62828;font-weight:600}
figure{margin:1em 0}
figure svg{max-width:100%;height:auto;border:1px solid #e4e7eb}
figcaption{font-size:.85em;color:#555;margin-top:.3em}
ul.notes li{margin:.2em 0}
footer{color:#777;font-size:.8em;text-align:center;margin-top:2em}
.sub{color:#666;font-size:.9em}
section.summary{border:2px solid #1f3b57}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(15em,1fr));gap:.5em .8em}
.card{border:1px solid #e4e7eb;border-radius:4px;padding:.35em .6em;background:#fafbfc}
.card .k{font-size:.8em;color:#555}
.card .v{font-size:1.1em;font-weight:600}
.card .d{font-size:.8em;color:#555}
.ok{color:#1a7f37}
li.warning::marker{color:#c62828}
.sev{display:inline-block;min-width:5.5em;margin-right:.4em;font-size:.75em;font-weight:700;text-transform:uppercase}
.sev.warning{color:#b35900}
.sev.info{color:#1f5f99}
details{margin:.6em 0}
summary{cursor:pointer;color:#1f5f99}
@media print{
 @page{size:A4;margin:12mm}
 body{background:#fff;font-size:9pt}
 header{background:none;color:#000;padding:0 0 .3em;border-bottom:2px solid #000}
 header h1{font-size:13pt}
 main{max-width:none;padding:0}
 nav,footer{display:none}
 section{border:none;border-radius:0;padding:0;margin:.5em 0}
 section.summary{border:1px solid #000;padding:.3em .5em}
 h2{font-size:11pt;margin:.6em 0 .2em;break-after:avoid}
 table,figure,.card,li{break-inside:avoid}
 th,td{padding:.1em .4em}
 figure{display:inline-block;width:49%;vertical-align:top;margin:.2em 0}
 figure svg{width:100%;max-height:7cm}
 figcaption{font-size:7pt}
 #harness,#raw,.print-hide{display:none}
 details>:not(summary){display:none}
 details summary{list-style:none;color:#555}
 .cards{grid-template-columns:repeat(4,1fr)}
}
";

fn page(title: &str, subtitle: &str, nav: &[(&str, &str)], body: &str) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"hwcal {}\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n\
         <header><h1>{}</h1><p>{}</p></header>\n<main>\n",
        env!("CARGO_PKG_VERSION"),
        esc(title),
        esc(title),
        esc(subtitle)
    );
    if !nav.is_empty() {
        s.push_str("<nav>");
        for (id, name) in nav {
            let _ = write!(s, "<a href=\"#{id}\">{}</a>", esc(name));
        }
        s.push_str("</nav>\n");
    }
    s.push_str(body);
    let _ = write!(
        s,
        "<footer>Generated by hwcal {}. Self-contained: no scripts, no external resources.</footer>\n\
         </main>\n</body>\n</html>\n",
        env!("CARGO_PKG_VERSION")
    );
    s
}

fn section(id: &str, title: &str, inner: &str) -> String {
    format!(
        "<section id=\"{id}\">\n<h2>{}</h2>\n{inner}</section>\n",
        esc(title)
    )
}

/// A table from a header row and body rows of already-escaped cells. The
/// first column is left-aligned.
fn table(head: &[&str], rows: &[Vec<String>]) -> String {
    table_l(head, rows, 1)
}

/// A table whose first `nleft` columns are text (left-aligned).
fn table_l(head: &[&str], rows: &[Vec<String>], nleft: usize) -> String {
    let class = |i: usize| if i < nleft { " class=\"l\"" } else { "" };
    let mut s = String::from("<table>\n<tr>");
    for (i, h) in head.iter().enumerate() {
        let _ = write!(s, "<th{}>{}</th>", class(i), esc(h));
    }
    s.push_str("</tr>\n");
    for r in rows {
        s.push_str("<tr>");
        for (i, c) in r.iter().enumerate() {
            let _ = write!(s, "<td{}>{c}</td>", class(i));
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
    s
}

/// Key/value table of (key, escaped value).
fn kv(rows: &[(&str, String)]) -> String {
    let mut s = String::from("<table class=\"kv\">\n");
    for (k, v) in rows {
        let _ = writeln!(s, "<tr><td>{}</td><td>{v}</td></tr>", esc(k));
    }
    s.push_str("</table>\n");
    s
}

fn verdict(v: Verdict) -> String {
    match v {
        Verdict::Ok => "ok".into(),
        Verdict::Noisy => "<span class=\"noisy\">noisy</span>".into(),
    }
}

fn f2(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.2}")
    } else {
        "-".into()
    }
}

fn o2(v: Option<f64>) -> String {
    v.map_or("-".into(), f2)
}

fn o1(v: Option<f64>) -> String {
    v.filter(|v| v.is_finite())
        .map_or("-".into(), |v| format!("{v:.1}"))
}

fn gbs(v: Option<f64>) -> String {
    v.filter(|v| v.is_finite())
        .map_or("-".into(), |v| format!("{:.2} GB/s", v / 1e9))
}

fn figure(plot: &Plot, caption: &str) -> String {
    format!(
        "<figure>\n{}<figcaption>{}</figcaption>\n</figure>\n",
        plot.render(),
        esc(caption)
    )
}

// ---------------------------------------------------------------- tables

/// The machine section: identity rows, then the nominal caches.
fn machine_table(m: &MachineInfo) -> String {
    machine_kv(m) + &nominal_caches_table(&m.nominal_caches)
}

/// The machine's identity as key/value rows: CPU, kernel, hypervisor,
/// memory, huge pages, NUMA and TSC, each of which bears on how the
/// measured figures should be read.
fn machine_kv(m: &MachineInfo) -> String {
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
fn nominal_caches_table(caches: &[NominalCache]) -> String {
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

fn harness_table(h: &HarnessInfo) -> String {
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

fn clock_table(c: &ClockResult, x86: bool) -> String {
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

fn caches_table(levels: &[CacheLevel], memory: Option<&MemoryLatency>, smaps_huge: Option<f64>) -> String {
    let mut rows: Vec<Vec<String>> = levels
        .iter()
        .map(|c| {
            vec![
                format!("L{}", c.level),
                human_bytes(c.size_bytes),
                c.nominal_size_bytes.map_or("?".into(), human_bytes),
                c.line_bytes.map_or("?".into(), |l| format!("{l} B")),
                f2(c.latency_ns),
                o1(c.latency_cycles),
                o2(c.miss_latency_ns),
                o1(c.miss_latency_cycles),
                o2(c.replace_time_ns),
                o1(c.replace_time_cycles),
                verdict(c.verdict),
            ]
        })
        .collect();
    if let Some(m) = memory {
        rows.push(vec![
            "memory".into(),
            "".into(),
            "".into(),
            "".into(),
            f2(m.latency_ns),
            o1(m.latency_cycles),
            "".into(),
            "".into(),
            "".into(),
            "".into(),
            verdict(m.verdict),
        ]);
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
            esc(&crate::text::memory_pages(m, smaps_huge))
        );
        if !m.mlp.is_empty() {
            s += "<h3>Memory-level parallelism</h3>\n";
            let rows: Vec<Vec<String>> = m
                .mlp
                .iter()
                .map(|p| {
                    vec![
                        p.chains.to_string(),
                        f2(p.ns_per_load),
                        format!("{:.2}×", p.speedup),
                    ]
                })
                .collect();
            s += &table(&["parallel chases", "ns per load", "speed-up"], &rows);
        }
    }
    s
}

fn tlb_table(t: &[TlbLevel]) -> String {
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
                f2(l.miss_latency_ns),
                o1(l.miss_latency_cycles),
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

fn mem_table(m: &MemResult) -> String {
    let mut s = kv(&[
        ("access_pattern", esc(&m.access_pattern)),
        ("op", esc(&m.op)),
        ("multiplicity (threads)", m.threads.to_string()),
        ("local", m.local.to_string()),
        ("size", human_bytes(m.size_bytes)),
        ("page_size", human_bytes(m.page_size_bytes)),
        ("use_hugepages", m.use_hugepages.to_string()),
        ("pages", esc(&crate::text::mem_pages(m))),
        ("total_ops", m.total_ops.to_string()),
        ("exec_time", format!("{:.6} s", m.exec_time_s)),
        ("ops_per_sec", format!("{:.6e}", m.ops_per_sec)),
        ("ns_per_op", format!("{:.3}", m.ns_per_op)),
        ("clk_per_op", format!("{:.3}", m.clk_per_op)),
        (
            "tsc_per_op",
            m.tsc_per_op.map_or("n/a".into(), |v| format!("{v:.3}")),
        ),
        (
            "bytes_per_sec",
            format!("{:.6e} ({})", m.bytes_per_sec, gbs(Some(m.bytes_per_sec))),
        ),
        ("verdict", verdict(m.verdict)),
    ]);
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
                    gbs(Some(t.bytes_per_sec)),
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

fn bandwidth_table(b: &Bandwidth) -> String {
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
        ("read", gbs(b.read_bytes_per_sec)),
        ("write", gbs(b.write_bytes_per_sec)),
        ("copy", gbs(b.copy_bytes_per_sec)),
    ]);
    if !b.scaling.is_empty() {
        s += "<h3>Scaling with threads</h3>\n";
        let rows: Vec<Vec<String>> = b
            .scaling
            .iter()
            .map(|p| vec![esc(&p.op), p.threads.to_string(), gbs(Some(p.bytes_per_sec))])
            .collect();
        s += &table(&["op", "threads", "bandwidth"], &rows);
    }
    if !b.loaded_latency.is_empty() {
        s += "<h3>Loaded latency</h3>\n";
        let rows: Vec<Vec<String>> = b
            .loaded_latency
            .iter()
            .map(|l| {
                vec![
                    l.streaming_threads.to_string(),
                    f2(l.latency_ns),
                    gbs(Some(l.stream_bytes_per_sec)),
                ]
            })
            .collect();
        s += &table(&["streaming threads", "latency ns", "stream bandwidth"], &rows);
    }
    s
}

fn ctx_points_table(points: &[CtxPoint]) -> String {
    let rows: Vec<Vec<String>> = points
        .iter()
        .map(|p| {
            vec![
                p.nprocs.to_string(),
                f2(p.us_min),
                f2(p.us_median),
                f2(p.us_mad),
                p.switches_per_hop.map_or("–".into(), f2),
                p.us_per_switch.map_or("–".into(), f2),
                verdict(p.verdict),
            ]
        })
        .collect();
    table(
        &[
            "processes",
            "min µs/hop",
            "median µs/hop",
            "MAD µs",
            "switches/hop",
            "µs/switch",
            "verdict",
        ],
        &rows,
    )
}

fn ctx_table(c: &ContextSwitch) -> String {
    let mut s = kv(&[
        ("kind", esc(&c.kind)),
        ("placement", esc(&c.placement)),
        ("parallel rings", c.parallel.to_string()),
    ]);
    for z in c.all_sizes() {
        let _ = writeln!(
            s,
            "<h3>Process size {} KB (overhead {:.2} µs subtracted)</h3>",
            z.size_kb, z.overhead_us
        );
        s += &ctx_points_table(&z.points);
    }
    s
}

fn io_table(io: &IoResult) -> String {
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
fn figures_table(f: &[Figure]) -> String {
    let rows: Vec<Vec<String>> = f
        .iter()
        .map(|f| {
            vec![
                esc(&f.probe),
                esc(&f.name),
                f.value
                    .map_or("-".into(), |v| esc(&crate::compare::Unit::from(f.unit).format(v))),
                verdict(f.verdict),
            ]
        })
        .collect();
    table_l(&["probe", "figure", "value", "verdict"], &rows, 2)
}

fn notes_list<T: std::fmt::Display>(notes: &[T]) -> String {
    let mut s = String::from("<ul class=\"notes\">\n");
    for n in notes {
        let _ = writeln!(s, "<li>{}</li>", esc(&n.to_string()));
    }
    s.push_str("</ul>\n");
    s
}

// ---------------------------------------------------------------- plots

fn ctx_plot(sides: &[Side]) -> Option<Plot> {
    let mut plot = Plot {
        title: "Context switch time vs processes in the ring".into(),
        x_label: "processes".into(),
        y_label: "µs (median): per hop, and per switch where counted".into(),
        log_x: true,
        ..Default::default()
    };
    for s in sides {
        let Some(c) = &s.p.context_switch else { continue };
        for z in c.all_sizes() {
            let (kb, points) = (z.size_kb, &z.points);
            if points.is_empty() {
                continue;
            }
            plot.series.push(Series {
                name: s.name(&format!("{kb} KB, per hop (lat_ctx)")),
                points: points.iter().map(|p| (p.nprocs as f64, p.us_median)).collect(),
            });
            // Per real switch (kernel-counted switches per hop): where a hop
            // is more than one switch the two curves part.
            let per_switch: Vec<(f64, f64)> = points
                .iter()
                .filter_map(|p| Some((p.nprocs as f64, p.us_per_switch?)))
                .collect();
            if !per_switch.is_empty() {
                plot.series.push(Series {
                    name: s.name(&format!("{kb} KB, per switch")),
                    points: per_switch,
                });
            }
        }
    }
    (!plot.series.is_empty()).then_some(plot)
}

fn bandwidth_plot(sides: &[Side]) -> Option<Plot> {
    let mut plot = Plot {
        title: "Memory bandwidth vs threads".into(),
        x_label: "threads".into(),
        y_label: "GB/s".into(),
        // Thread counts double (1, 2, 4, ...): a log2 axis ticks at each.
        log_x: true,
        ..Default::default()
    };
    for s in sides {
        let Some(b) = &s.p.bandwidth else { continue };
        let mut ops: Vec<&str> = Vec::new();
        for p in &b.scaling {
            if !ops.contains(&p.op.as_str()) {
                ops.push(&p.op);
            }
        }
        for op in ops {
            let mut pts: Vec<(f64, f64)> = b
                .scaling
                .iter()
                .filter(|p| p.op == op)
                .map(|p| (p.threads as f64, p.bytes_per_sec / 1e9))
                .collect();
            pts.sort_by(|x, y| x.0.total_cmp(&y.0));
            plot.series.push(Series {
                name: s.name(op),
                points: pts,
            });
        }
    }
    (!plot.series.is_empty()).then_some(plot)
}

/// One-point (or few-point) diagnostics: a fraction or a load figure
/// recorded for the JSON, not a curve; never drawn.
pub fn is_diagnostic(c: &RawCurve) -> bool {
    const DIAGNOSTICS: [&str; 3] = [".neighbour_busy", ".huge_fraction", ".overhead"];
    c.points.len() < 2 || DIAGNOSTICS.iter().any(|d| c.id.ends_with(d))
}

/// Raw curves no dedicated plot shows (another probe's), one plot each;
/// diagnostics ([`is_diagnostic`]) left out.
fn other_plots(sides: &[Side]) -> Vec<Plot> {
    let mut ids: Vec<&str> = Vec::new();
    for s in sides {
        for c in &s.p.raw {
            if c.id != curve::CACHE_LATENCY
                && curve::probe_of(&c.id) != Some("tlb")
                && !is_diagnostic(c)
                && !ids.contains(&c.id.as_str())
            {
                ids.push(&c.id);
            }
        }
    }
    ids.into_iter()
        .map(|id| {
            let mut plot = Plot {
                title: format!("Raw curve {id}"),
                ..Default::default()
            };
            for s in sides {
                if let Some(c) = s.p.raw_curve(id) {
                    let (lo, hi) = c
                        .points
                        .iter()
                        .fold((f64::INFINITY, 0f64), |(lo, hi), p| (lo.min(p.x), hi.max(p.x)));
                    // Sizes and counts spanning decades read best on a log axis.
                    plot.log_x |= lo > 0.0 && hi / lo >= 16.0;
                    plot.x_bytes |= c.x_label.to_lowercase().contains("bytes");
                    plot.x_label = c.x_label.clone();
                    plot.y_label = c.y_label.clone();
                    plot.series.push(Series {
                        name: s.name(id),
                        points: curve_points(c),
                    });
                }
            }
            plot
        })
        .collect()
}

// ---------------------------------------------------------------- pages

fn subtitle(p: &Profile) -> String {
    format!(
        "{} · measured {} · hwcal {}",
        p.command,
        format_utc(p.created_unix),
        p.tool_version
    )
}

/// One figure of the summary card: what, the value, a detail line, the
/// verdict (None where the probe gives none).
struct Card {
    key: String,
    value: String,
    detail: String,
    verdict: Option<Verdict>,
}

fn card(
    key: impl Into<String>,
    value: impl Into<String>,
    detail: impl Into<String>,
    verdict: Option<Verdict>,
) -> Card {
    Card {
        key: key.into(),
        value: value.into(),
        detail: detail.into(),
        verdict,
    }
}

/// The key figures of a run, in the order a reader asks for them.
fn summary_cards(p: &Profile) -> Vec<Card> {
    let mut v = Vec::new();
    if let Some(m) = &p.machine {
        let gen = format!(
            "{} family {} model {}{}",
            m.cpu_vendor,
            m.cpu_family.map_or("?".into(), |v| v.to_string()),
            m.cpu_model.map_or("?".into(), |v| v.to_string()),
            m.hypervisor
                .as_deref()
                .map_or(String::new(), |h| format!(", guest of {h}"))
        );
        v.push(card(
            "machine",
            m.cpu_model_name.clone(),
            format!("{}, {} logical CPUs", m.hostname, m.logical_cpus),
            None,
        ));
        v.push(card("core", gen, m.kernel.clone(), None));
    }
    if let Some(c) = &p.clock {
        v.push(card(
            "clock",
            format!("{:.0} MHz", c.core_mhz),
            format!(
                "min {:.0}, max {:.0} over the run",
                c.core_mhz_min, c.core_mhz_max
            ),
            Some(c.verdict),
        ));
    }
    for c in p.caches.iter().flatten() {
        v.push(card(
            format!("L{} cache", c.level),
            format!("{} · {:.2} ns", human_bytes(c.size_bytes), c.latency_ns),
            format!(
                "effective size; {}{}",
                c.line_bytes.map_or("line ?".into(), |l| format!("{l} B line")),
                c.latency_cycles
                    .map_or(String::new(), |cy| format!(", {cy:.1} cycles"))
            ),
            Some(c.verdict),
        ));
    }
    for t in p.tlbs.iter().flatten() {
        v.push(card(
            format!("L{} TLB ({} pages)", t.level, human_bytes(t.page_bytes)),
            format!("{} entries", t.entries),
            format!(
                "reach {}, miss {:.2} ns",
                human_bytes(t.entries.saturating_mul(t.page_bytes)),
                t.miss_latency_ns
            ),
            Some(t.verdict),
        ));
    }
    if let Some(m) = &p.memory {
        v.push(card(
            "memory latency",
            format!("{:.1} ns", m.latency_ns),
            format!(
                "{}{}",
                crate::text::memory_source(m),
                crate::text::memory_pages(m, crate::text::cache_smaps_huge_fraction(p))
            ),
            Some(m.verdict),
        ));
    }
    if let Some(b) = &p.bandwidth {
        let parts: Vec<String> = [
            ("read", b.read_bytes_per_sec),
            ("write", b.write_bytes_per_sec),
            ("copy", b.copy_bytes_per_sec),
        ]
        .iter()
        .filter_map(|(n, v)| v.filter(|v| v.is_finite()).map(|v| format!("{n} {:.1}", v / 1e9)))
        .collect();
        if !parts.is_empty() {
            v.push(card(
                "bandwidth (GB/s)",
                parts.join(" · "),
                format!(
                    "{} thread{}, {} buffer",
                    b.threads,
                    if b.threads == 1 { "" } else { "s" },
                    human_bytes(b.size_bytes)
                ),
                None,
            ));
        }
    }
    if let Some(m) = &p.mem {
        v.push(card(
            "mem",
            format!("{:.2} ns/op", m.ns_per_op),
            format!("{} {}, {}", m.access_pattern, m.op, crate::text::mem_pages(m)),
            Some(m.verdict),
        ));
    }
    if let Some(c) = &p.context_switch {
        let two = c.all_sizes().into_iter().find_map(|z| {
            z.points
                .iter()
                .find(|q| q.nprocs == 2)
                .map(|q| (z.size_kb, q.clone()))
        });
        if let Some((kb, q)) = two {
            v.push(card(
                "context switch",
                format!("{:.2} µs", q.us_median),
                format!("2 processes, {kb} KB, median per hop"),
                Some(q.verdict),
            ));
        }
    }
    if let Some(io) = &p.io {
        v.push(card(
            "I/O",
            format!("{:.0} IOPS", io.iops),
            format!(
                "{} {}, p99 {:.1} µs",
                io.rw,
                human_bytes(io.bs_bytes),
                io.lat_p99_us
            ),
            None,
        ));
    }
    v
}

fn summary_card(p: &Profile) -> String {
    let cards = summary_cards(p);
    if cards.is_empty() {
        return String::new();
    }
    let mut s = String::from("<div class=\"cards\">\n");
    for c in cards {
        let verdict = match c.verdict {
            Some(Verdict::Ok) => " <span class=\"ok\">ok</span>".to_string(),
            Some(Verdict::Noisy) => " <span class=\"noisy\">noisy</span>".to_string(),
            None => String::new(),
        };
        let _ = writeln!(
            s,
            "<div class=\"card\"><div class=\"k\">{}{verdict}</div><div class=\"v\">{}</div><div class=\"d\">{}</div></div>",
            esc(&c.key),
            esc(&c.value),
            esc(&c.detail)
        );
    }
    s.push_str("</div>\n");
    s
}

/// Notes with their severity, warnings first (each group keeps its order).
fn notes_with_severity(notes: &[(&str, &Note)]) -> String {
    let mut s = String::from("<ul class=\"notes\">\n");
    for want in [Severity::Warning, Severity::Info] {
        for (tag, n) in notes.iter().filter(|(_, n)| n.severity == want) {
            let (class, word) = match n.severity {
                Severity::Warning => ("warning", "warning"),
                Severity::Info => ("info", "info"),
            };
            let _ = writeln!(
                s,
                "<li class=\"{class}\"><span class=\"sev {class}\">{word}</span>{}{}</li>",
                if tag.is_empty() {
                    String::new()
                } else {
                    format!("<b>{}:</b> ", esc(tag))
                },
                esc(&n.text)
            );
        }
    }
    s.push_str("</ul>\n");
    s
}

/// Raw curves folded away: closed `<details>`, one per curve.
fn folded(plots: &[Plot]) -> String {
    plots
        .iter()
        .map(|pl| {
            format!(
                "<details>\n<summary>{}</summary>\n{}</details>\n",
                esc(&pl.title),
                figure(pl, "")
            )
        })
        .collect()
}

/// The report of one profile as a complete HTML document: the summary
/// card, the notes, then each section; raw curves folded away at the end.
pub fn report(p: &Profile, title: &str) -> String {
    let sides = [Side { tag: "", p }];
    let mut body = String::new();
    let mut nav: Vec<(&str, &str)> = Vec::new();
    let card = summary_card(p);
    if !card.is_empty() {
        nav.push(("summary", "Summary"));
        body += &format!("<section id=\"summary\" class=\"summary\">\n<h2>Summary</h2>\n{card}</section>\n");
    }
    let mut add = |id: &'static str, name: &'static str, html: String| {
        nav.push((id, name));
        body += &section(id, name, &html);
    };
    if !p.notes.is_empty() {
        let notes: Vec<(&str, &Note)> = p.notes.iter().map(|n| ("", n)).collect();
        add("notes", "Notes", notes_with_severity(&notes));
    }
    if let Some(m) = &p.machine {
        add("machine", "Machine", machine_table(m));
    }
    if let Some(h) = &p.harness {
        add("harness", "Timing harness", harness_table(h));
    }
    if let Some(c) = &p.clock {
        let x86 = !p.machine.as_ref().is_some_and(|m| m.is_arm());
        add("clock", "Clock", clock_table(c, x86));
    }
    if p.caches.is_some() || p.memory.is_some() || p.raw_curve(curve::CACHE_LATENCY).is_some() {
        let mut h = String::new();
        if p.caches.is_some() || p.memory.is_some() {
            h += &caches_table(
                p.caches.as_deref().unwrap_or(&[]),
                p.memory.as_ref(),
                crate::text::cache_smaps_huge_fraction(p),
            );
        }
        if let Some(plot) = cache_plot(&sides) {
            h += &figure(
                &plot,
                "Dashed vertical lines: where each level's plateau ends (its effective capacity); \
                 dotted horizontal line: the memory plateau.",
            );
        }
        add("caches", "Caches and memory latency", h);
    }
    let tplot = tlb_plot(&sides);
    if p.tlbs.is_some() || tplot.is_some() {
        let mut h = p.tlbs.as_deref().map(tlb_table).unwrap_or_default();
        if let Some(plot) = tplot {
            h += &figure(
                &plot,
                "One load per page in random page order; steps are TLB levels.",
            );
        }
        add("tlbs", "TLBs", h);
    }
    if let Some(m) = &p.mem {
        add("mem", "Memory benchmark (mem)", mem_table(m));
    }
    if let Some(b) = &p.bandwidth {
        let mut h = bandwidth_table(b);
        if let Some(plot) = bandwidth_plot(&sides) {
            h += &figure(&plot, "Sequential bandwidth by number of threads.");
        }
        add("bandwidth", "Bandwidth", h);
    }
    if let Some(c) = &p.context_switch {
        let mut h = ctx_table(c);
        if let Some(plot) = ctx_plot(&sides) {
            h += &figure(
                &plot,
                "Token passed around a ring of processes (lmbench lat_ctx).",
            );
        }
        add("ctx", "Context switch", h);
    }
    if let Some(io) = &p.io {
        add("io", "I/O", io_table(io));
    }
    if !p.figures.is_empty() {
        add("figures", "Other figures", figures_table(&p.figures));
    }
    let others = other_plots(&sides);
    if !others.is_empty() {
        add(
            "raw",
            "Other raw curves",
            format!(
                "<p class=\"sub\">The measurements behind the figures above, folded away; \
                 one-point diagnostics are in the JSON only.</p>\n{}",
                folded(&others)
            ),
        );
    }
    page(title, &subtitle(p), &nav, &body)
}

fn comparison_table(c: &Comparison) -> String {
    if c.rows.is_empty() {
        return "<p>No figure was measured by both runs.</p>\n".into();
    }
    let rows: Vec<Vec<String>> = c
        .rows
        .iter()
        .map(|r| {
            let (class, word) = match r.mark(crate::compare::VERDICT_THRESHOLD) {
                Some(m @ Mark::Better) => (" class=\"better\"", m.word()),
                Some(m @ Mark::Worse) => (" class=\"worse\"", m.word()),
                Some(m @ Mark::Noisy) => (" class=\"noisy\"", m.word()),
                None => ("", ""),
            };
            vec![
                esc(r.section),
                esc(&r.figure),
                r.a.map_or("-".into(), |v| esc(&r.unit.format(v))),
                r.b.map_or("-".into(), |v| esc(&r.unit.format(v))),
                format!("<span{class}>{}</span>", esc(&fmt_ratio(r.ratio()))),
                format!("<span{class}>{word}</span>"),
            ]
        })
        .collect();
    table_l(&["section", "figure", "A", "B", "B / A", ""], &rows, 2)
}

fn machines_side_by_side(a: &Profile, b: &Profile) -> String {
    let field = |p: &Profile, f: &dyn Fn(&MachineInfo) -> String| p.machine.as_ref().map_or("-".into(), f);
    type Getter = Box<dyn Fn(&MachineInfo) -> String>;
    let fields: Vec<(&str, Getter)> = vec![
        ("host", Box::new(|m| m.hostname.clone())),
        ("CPU", Box::new(|m| m.cpu_model_name.clone())),
        ("logical CPUs", Box::new(|m| m.logical_cpus.to_string())),
        ("kernel", Box::new(|m| m.kernel.clone())),
        (
            "hypervisor",
            Box::new(|m| m.hypervisor.clone().unwrap_or_else(|| "none detected".into())),
        ),
        ("memory", Box::new(|m| human_bytes(m.memory_total_bytes))),
        (
            "THP",
            Box::new(|m| m.thp_mode.clone().unwrap_or_else(|| "unavailable".into())),
        ),
    ];
    let mut rows: Vec<Vec<String>> = vec![
        vec!["command".into(), esc(&a.command), esc(&b.command)],
        vec![
            "measured".into(),
            esc(&format_utc(a.created_unix)),
            esc(&format_utc(b.created_unix)),
        ],
    ];
    for (name, g) in &fields {
        rows.push(vec![esc(name), esc(&field(a, g)), esc(&field(b, g))]);
    }
    table_l(&["", "A", "B"], &rows, 3)
}

/// A comparison of two profiles as a complete HTML document: both machines,
/// the table of ratios, and both runs' curves on the same plots.
pub fn compare_report(a: &Profile, label_a: &str, b: &Profile, label_b: &str) -> String {
    let sides = [Side { tag: "A", p: a }, Side { tag: "B", p: b }];
    let c = compare(a, b);
    let mut body = String::new();
    let mut nav: Vec<(&str, &str)> = Vec::new();
    let mut add = |id: &'static str, name: &'static str, html: String| {
        nav.push((id, name));
        body += &section(id, name, &html);
    };
    let mut h = comparison_table(&c);
    if !c.notes.is_empty() {
        h += &notes_list(&c.notes);
    }
    h += "<p class=\"sub\">B / A is each figure of B divided by A's; green where B is faster by more \
          than 5%, red where slower.</p>\n";
    add("figures", "B / A: figures side by side", h);
    // One overlaid plot per figure, both runs on the same axes.
    let mut plots = String::new();
    if let Some(p) = cache_plot(&sides) {
        plots += &figure(
            &p,
            "Load latency of both runs; levels and memory plateau marked per run.",
        );
    }
    if let Some(p) = tlb_plot(&sides) {
        plots += &figure(&p, "TLB curves of both runs.");
    }
    if let Some(p) = ctx_plot(&sides) {
        plots += &figure(&p, "Context switch of both runs.");
    }
    if let Some(p) = bandwidth_plot(&sides) {
        plots += &figure(&p, "Bandwidth scaling of both runs.");
    }
    if !plots.is_empty() {
        add("plots", "Curves", plots);
    }
    let mut notes: Vec<(&str, &Note)> = a.notes.iter().map(|n| ("A", n)).collect();
    notes.extend(b.notes.iter().map(|n| ("B", n)));
    if !notes.is_empty() {
        add("notes", "Notes", notes_with_severity(&notes));
    }
    add(
        "machines",
        "Machines",
        format!(
            "<p><b>A</b> = {}<br><b>B</b> = {}</p>\n{}",
            esc(label_a),
            esc(label_b),
            machines_side_by_side(a, b)
        ),
    );
    let others = other_plots(&sides);
    if !others.is_empty() {
        add("raw", "Other raw curves", folded(&others));
    }
    page(
        "hwcal comparison of two runs",
        &format!("A = {label_a} · B = {label_b}"),
        &nav,
        &body,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwcal_model::sample::full_profile;

    /// Tags are balanced: every opened element that needs closing is closed.
    fn assert_balanced(html: &str) {
        for tag in [
            "html", "body", "main", "section", "table", "tr", "figure", "svg", "ul", "nav",
        ] {
            let open = html.matches(&format!("<{tag}>")).count() + html.matches(&format!("<{tag} ")).count();
            let close = html.matches(&format!("</{tag}>")).count();
            assert_eq!(open, close, "<{tag}> opened {open}, closed {close}");
        }
    }

    #[test]
    fn single_report_has_every_section_table_and_plot() {
        let p = full_profile(0);
        let html = String::from_utf8(HtmlExporter::default().export(&p).unwrap()).unwrap();
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert_balanced(&html);
        // Each figure's own interval, under the cache table.
        assert!(html.contains("95% intervals (this run&#39;s scatter): L1 "));
        for id in [
            "machine",
            "harness",
            "clock",
            "caches",
            "tlbs",
            "mem",
            "bandwidth",
            "ctx",
            "io",
            "notes",
        ] {
            assert!(
                html.contains(&format!("<section id=\"{id}\">")),
                "missing section {id}"
            );
        }
        // Plots: cache, TLB, bandwidth, ctx.
        assert_eq!(html.matches("<svg").count(), 4);
        assert!(html.contains("Load latency vs working-set size"));
        assert!(html.contains(">L1 48 KiB<") && html.contains(">memory 145 ns<"));
        assert!(html.contains(">L2 4 KiB: 2048<"), "TLB reach marker");
        assert!(html.contains("Memory bandwidth vs threads") && html.contains("Context switch time vs"));
        // Escaping: the synthetic CPU name has markup characters.
        assert!(html.contains("Synthetic Xeon &lt;test&gt; &amp; Co"));
        assert!(!html.contains("<test>"));
        assert!(html.contains("class=\"noisy\""));
        // Self-contained: nothing fetched from anywhere.
        assert!(!html.contains("<script") && !html.contains("<link") && !html.contains("src="));
        let svg_ns = html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count();
        assert_eq!(
            html.matches("http").count(),
            svg_ns,
            "only the SVG namespace may be a URL"
        );
        assert!(!html.contains("NaN") && !html.contains(">inf") && !html.contains("-inf"));
    }

    #[test]
    fn sections_absent_from_the_profile_are_absent_from_the_page() {
        let mut p = Profile::new("hwcal clock", 0);
        p.clock = full_profile(0).clock;
        let html = report(&p, "t");
        assert_balanced(&html);
        assert!(html.contains("<section id=\"clock\">"));
        for id in [
            "machine",
            "caches",
            "tlbs",
            "mem",
            "bandwidth",
            "ctx",
            "io",
            "raw",
        ] {
            assert!(
                !html.contains(&format!("<section id=\"{id}\">")),
                "{id} should be absent"
            );
        }
        assert!(!html.contains("<svg"));
    }

    #[test]
    fn unknown_raw_curves_get_their_own_plot() {
        let mut p = Profile::new("hwcal mem", 0);
        p.raw.push(RawCurve {
            id: "mem.threads".into(),
            x_label: "threads".into(),
            y_label: "GB/s".into(),
            points: vec![
                RawPoint {
                    x: 1.0,
                    y: 10.0,
                    ..Default::default()
                },
                RawPoint {
                    x: 2.0,
                    y: 15.0,
                    ..Default::default()
                },
            ],
        });
        let html = report(&p, "t");
        assert!(html.contains("<section id=\"raw\">") && html.contains("Raw curve mem.threads"));
    }

    #[test]
    fn comparison_overlays_both_runs_and_tabulates_ratios() {
        let (a, b) = (full_profile(0), full_profile(5));
        let html = compare_report(&a, "run 1", &b, "run 2");
        assert_balanced(&html);
        assert!(html.contains("run 1") && html.contains("run 2"));
        assert!(html.contains("synthetic-0") && html.contains("synthetic-5"));
        assert_eq!(html.matches("<svg").count(), 4);
        assert!(html.contains(">A: latency<") && html.contains(">B: latency<"));
        assert!(html.contains(">A: 4 KiB pages<") && html.contains(">B: one line per 2 MiB page<"));
        // Memory latency 145 → 217.5 ns: ratio 1.5, B worse.
        assert!(html.contains("145.00 ns") && html.contains("217.50 ns"));
        assert!(html.contains("1.500×") && html.contains("class=\"worse\""));
        assert!(!html.contains("NaN"));
    }

    #[test]
    fn summary_then_notes_then_sections_and_raw_curves_folded() {
        let mut p = full_profile(0);
        p.raw.push(RawCurve {
            id: "cache.neighbour_busy".into(),
            points: vec![RawPoint {
                x: 0.0,
                y: 0.01,
                ..Default::default()
            }],
            ..Default::default()
        });
        p.raw.push(RawCurve {
            id: "tlb.huge_fraction".into(),
            points: (0..3)
                .map(|i| RawPoint {
                    x: i as f64,
                    y: 0.0,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        });
        p.raw.push(RawCurve {
            id: "mem.read.2t.t0".into(),
            points: (1..4)
                .map(|i| RawPoint {
                    x: i as f64,
                    y: 10.0,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        });
        let html = report(&p, "t");
        assert_balanced(&html);
        let at = |id: &str| html.find(&format!("id=\"{id}\"")).unwrap_or(usize::MAX);
        assert!(at("summary") < at("notes") && at("notes") < at("machine"));
        assert!(at("machine") < at("caches") && at("caches") < at("raw"));
        // Severity shown; key figures in the card, sizes as everywhere else.
        assert!(html.contains("<span class=\"sev warning\">warning</span>"));
        assert!(html.contains(">48 KiB · 2.10 ns<"));
        assert!(html.contains(">145.0 ns<") && html.contains(">1.66 µs<"));
        // Raw curves folded; one-point and fraction diagnostics not drawn.
        assert!(html.contains("<details>\n<summary>Raw curve mem.read.2t.t0</summary>"));
        assert!(!html.contains("Raw curve cache.neighbour_busy"));
        assert!(!html.contains("Raw curve tlb.huge_fraction"));
        assert!(html.contains("@media print") && html.contains("break-inside:avoid"));
        // The mem section says what page_size/use_hugepages say, as the text does.
        let m = p.mem.as_ref().unwrap();
        let pages = crate::text::mem_pages(m);
        assert!(html.contains(&esc(&pages)) && crate::text::summary(&p).contains(&pages));
    }

    #[test]
    fn comparison_leads_with_the_ratio_table() {
        let html = compare_report(&full_profile(0), "a", &full_profile(5), "b");
        let at = |id: &str| html.find(&format!("id=\"{id}\"")).unwrap_or(usize::MAX);
        assert!(at("figures") < at("plots") && at("plots") < at("machines"));
        assert!(html.find("<svg").unwrap() > at("figures"));
    }
}
