//! The TLB block of the terminal summary: the levels per page size and the
//! huge-page comparison.

use crate::format::{noisy_mark, ns_cy};
use hwcal_model::*;
use std::fmt::Write;

pub fn tlbs(t: &[TlbLevel]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "TLBs:");
    let _ = writeln!(s, "  level  entries  page size        miss-latency");
    for l in t {
        let row = format!(
            "  {:>5}  {:>7}  {:>9}  {}{}{}",
            l.level,
            l.entries,
            human_bytes(l.page_bytes),
            ns_cy(l.miss_latency_ns, l.miss_latency_cycles),
            noisy_mark(l.verdict),
            tlb_details(l)
        );
        s += &crate::format::wrap(&row, 100, 8);
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
