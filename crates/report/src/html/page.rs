//! The HTML report of one run: the summary card, the notes, then each
//! section's table and plots; raw curves folded away at the end.

use super::cards::{notes_with_severity, subtitle, summary_card};
use super::plots::{bandwidth_plot, ctx_plot, other_plots};
use super::tables::{
    bandwidth_table, caches_table, clock_table, ctx_table, figures_table, harness_table, io_table,
    machine_table, mem_table, tlb_table,
};
use super::widgets::{figure, folded, page, section};
use crate::format::esc;
use crate::plots::{cache_latency as cache_plot, tlb_curves as tlb_plot, Side};
use hwcal_model::*;

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
                crate::text::buffer_pages(p),
            );
        }
        if let Some(plot) = cache_plot(&sides) {
            h += &figure(
                &plot,
                "Dashed vertical lines: where each level's plateau ends (its effective capacity); \
                 dotted horizontal line: the memory plateau.",
            );
        }
        if let Some(plot) = crate::plots::line_size(p) {
            h += &figure(
                &plot,
                "Line size: the flushed line reads as a miss up to its end; dashed: the line each \
                 level settled on and by which method.",
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
    if let Some(svg) = crate::heatmap::c2c_svg(p) {
        add(
            "c2c",
            "Core-to-core latency",
            format!(
                "<figure>\n{svg}<figcaption>{}</figcaption>\n</figure>\n",
                esc(
                    "One-way handoff of a cache line between two CPUs (CAS ping-pong); \
                     red outline: the pair's batches disagree (noisy)."
                )
            ),
        );
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
