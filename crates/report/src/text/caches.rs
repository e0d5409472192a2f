//! The caches block of the terminal summary: the levels found beside the
//! nominal ones, their intervals, and the memory latency with the pages it
//! was measured on.

use crate::format::{noisy_mark, ns_cy};
use hwcal_model::*;
use std::fmt::Write;

pub fn caches(levels: &[CacheLevel], memory: Option<&MemoryLatency>) -> String {
    caches_pages(levels, memory, BufferPages::default())
}

/// What the cache probe's buffer was backed by: the part smaps counted in
/// huge pages ([`cache_smaps_huge_fraction`]) and the machine's base page.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BufferPages {
    pub smaps_huge: Option<f64>,
    pub base_page: Option<u64>,
}

/// The [`BufferPages`] of a profile.
pub fn buffer_pages(p: &Profile) -> BufferPages {
    BufferPages {
        smaps_huge: cache_smaps_huge_fraction(p),
        base_page: p.machine.as_ref().and_then(|m| m.page_bytes),
    }
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
pub fn memory_pages(m: &MemoryLatency, pages: BufferPages) -> String {
    // The memory latency's buffer always asks for huge pages.
    let s = hwcal_model::pages::statement(true, pages.smaps_huge, Some(m.huge_pages));
    hwcal_model::pages::on_base(&s, pages.base_page)
}

/// The caches block, with the pages statement of [`memory_pages`].
pub fn caches_pages(levels: &[CacheLevel], memory: Option<&MemoryLatency>, pages: BufferPages) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "caches:");
    // Units in the header and "ns (cy)" cells: the table fits 100 columns
    // with a `(noisy)` mark.
    let _ = writeln!(
        s,
        "  {:>5} {:>9} {:>9} {:>5}  {:>16}  {:>16}  {:>16}",
        "level", "size", "nominal", "line", "latency ns (cy)", "miss ns (cy)", "replace ns (cy)"
    );
    let cell = |ns: Option<f64>, cy: Option<f64>| match (ns, cy) {
        (Some(n), Some(c)) if c.is_finite() => format!("{n:.2} ({c:.1})"),
        (Some(n), _) => format!("{n:.2}"),
        (None, _) => "-".to_string(),
    };
    for c in levels {
        let _ = writeln!(
            s,
            "  {:>5} {:>9} {:>9} {:>5}  {:>16}  {:>16}  {:>16}{}",
            c.level,
            measured_bytes(c.size_bytes),
            c.nominal_size_bytes.map_or("?".into(), human_bytes),
            c.line_bytes.map_or("?".into(), |l| format!("{l} B")),
            cell(Some(c.latency_ns), c.latency_cycles),
            cell(c.miss_latency_ns, c.miss_latency_cycles),
            cell(c.replace_time_ns, c.replace_time_cycles),
            noisy_mark(c.verdict)
        );
    }
    if let Some(m) = memory {
        let line = format!(
            "  memory latency {} ({}{}){}",
            ns_cy(m.latency_ns, m.latency_cycles).trim(),
            memory_source(m),
            memory_pages(m, pages),
            noisy_mark(m.verdict)
        );
        s += &crate::format::wrap(&line, 100, 4);
        if let Some(l) = m.latency_no_walks_ns {
            let line = format!(
                "  without page walks {l:.2} ns (measured: the same buffer chased in windows the TLB holds; page walks {:.1} ns){}",
                (m.latency_ns - l).max(0.0),
                m.latency_no_walks_verdict.map_or("", noisy_mark)
            );
            s += &crate::format::wrap(&line, 100, 4);
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
        s += &crate::format::wrap(&format!("  {iv}"), 100, 4);
    }
    for p in memory.map_or(&[][..], |m| &m.mlp[..]) {
        let _ = writeln!(
            s,
            "  {:>2} parallel chases: {:7.2} ns per load ({:.2}× one chase){}",
            p.chains,
            p.ns_per_load,
            p.speedup,
            if p.verdict == Some(hwcal_model::Verdict::Noisy) {
                " — noisy"
            } else {
                ""
            }
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
