//! The summary card at the top of a report (the key figures of a run, in
//! the order a reader asks for them), the page subtitle and the notes
//! listed by severity.

use crate::format::{esc, format_utc};
use hwcal_model::*;
use std::fmt::Write;

pub(super) fn subtitle(p: &Profile) -> String {
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

pub(super) fn summary_card(p: &Profile) -> String {
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
pub(super) fn notes_with_severity(notes: &[(&str, &Note)]) -> String {
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
