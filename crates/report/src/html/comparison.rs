//! The HTML comparison of two runs: both machines side by side, the table
//! of ratios B / A, and both runs' curves on the same plots.

use super::cards::notes_with_severity;
use super::plots::{bandwidth_plot, ctx_plot, other_plots};
use super::widgets::{figure, folded, notes_list, page, section, table_l};
use crate::compare::{judged, mark_word, Comparison, Mark};
use crate::format::{esc, format_utc, value_with_unit};
use crate::plots::{cache_latency as cache_plot, tlb_curves as tlb_plot, Side};
use hwcal_model::*;

pub(super) fn comparison_table(c: &Comparison) -> String {
    if c.rows.is_empty() {
        return "<p>No figure was measured by both runs.</p>\n".into();
    }
    let rows: Vec<Vec<String>> = c
        .rows
        .iter()
        .map(|r| {
            let (class, word) = match r.mark(crate::compare::VERDICT_THRESHOLD) {
                Some(m @ Mark::Better) => (" class=\"better\"", mark_word(m)),
                Some(m @ Mark::Worse) => (" class=\"worse\"", mark_word(m)),
                Some(m @ Mark::Noisy) => (" class=\"noisy\"", mark_word(m)),
                Some(m @ Mark::Same) => ("", mark_word(m)),
                None => ("", ""),
            };
            vec![
                esc(r.section),
                esc(&r.figure),
                r.a.map_or("-".into(), |v| esc(&value_with_unit(r.unit, v))),
                r.b.map_or("-".into(), |v| esc(&value_with_unit(r.unit, v))),
                format!("<span{class}>{}</span>", esc(&crate::compare::fmt_ratio_pm(r))),
                format!("<span{class}>{word}</span>"),
            ]
        })
        .collect();
    table_l(&["section", "figure", "A", "B", "B / A", ""], &rows, 2)
}

pub(super) fn machines_side_by_side(a: &Profile, b: &Profile) -> String {
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
/// the table of ratios, and both runs' curves on the same plots; each row
/// judged by the rule `db compare` uses, against `history` (the machine's
/// stored runs where both are one machine's, else empty).
pub fn compare_report(a: &Profile, label_a: &str, b: &Profile, label_b: &str, history: &[Profile]) -> String {
    let sides = [Side { tag: "A", p: a }, Side { tag: "B", p: b }];
    let c = judged(std::slice::from_ref(a), std::slice::from_ref(b), history);
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
