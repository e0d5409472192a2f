//! A machine's figures over time, as a team watches a machine: each key
//! figure's runs in order with the band of its usual spread, and the runs
//! that left it marked (a BIOS change, a noisy neighbour, a DIMM gone); and
//! across machines, each key figure's *current* value — the median of the
//! machine's last [`RECENT`] runs, with the range they span — as a bar per
//! machine beside the index table.
//!
//! The band is the usual range a comparison of two of the machine's runs
//! is judged by (`hwcal_analysis::compare::usual_range`: Tukey's outer fences,
//! the quartiles ± 3 interquartile ranges, never narrower than ± 5% of
//! the median), so the site
//! calls out no run a comparison would let pass.

use super::catalogue::{Machine, Site};
use super::facts::RunFacts;
use crate::format::esc;
use crate::svg::{Marker, Plot, Series};
use std::fmt::Write;

/// Runs a machine's current figure is the median of (the one definition,
/// `hwcal_stats::recent`).
pub const RECENT: usize = hwcal_analysis::stats::RECENT;

/// One figure the history and the charts follow.
pub(super) struct KeyFigure {
    pub name: &'static str,
    pub unit: &'static str,
    /// The figure of a run, in `unit`.
    pub get: fn(&RunFacts) -> Option<f64>,
    /// Whether the run marked it noisy: such a run is drawn, but says
    /// nothing of what is usual (the comparisons' rule,
    /// `hwcal_analysis::compare::with_history`).
    pub noisy: fn(&RunFacts) -> bool,
}

fn level_noisy(r: &RunFacts, n: u32) -> bool {
    r.level(n).is_some_and(|l| l.latency.noisy)
}

fn level_ns(r: &RunFacts, n: u32) -> Option<f64> {
    r.level(n).map(|l| l.latency.value)
}

fn level_mib(r: &RunFacts, n: u32) -> Option<f64> {
    r.level(n).map(|l| l.size_bytes as f64 / (1 << 20) as f64)
}

pub(super) const KEY_FIGURES: [KeyFigure; 8] = [
    KeyFigure {
        name: "memory latency",
        unit: "ns",
        get: |r| r.memory_ns.map(|f| f.value),
        noisy: |r| r.memory_ns.is_some_and(|f| f.noisy),
    },
    KeyFigure {
        name: "L1 latency",
        unit: "ns",
        get: |r| level_ns(r, 1),
        noisy: |r| level_noisy(r, 1),
    },
    KeyFigure {
        name: "L2 latency",
        unit: "ns",
        get: |r| level_ns(r, 2),
        noisy: |r| level_noisy(r, 2),
    },
    KeyFigure {
        name: "L3 latency",
        unit: "ns",
        get: |r| level_ns(r, 3),
        noisy: |r| level_noisy(r, 3),
    },
    KeyFigure {
        name: "L2 size",
        unit: "MiB",
        get: |r| level_mib(r, 2),
        noisy: |r| level_noisy(r, 2),
    },
    KeyFigure {
        name: "L3 size",
        unit: "MiB",
        get: |r| level_mib(r, 3),
        noisy: |r| level_noisy(r, 3),
    },
    KeyFigure {
        name: "read bandwidth",
        unit: "GB/s",
        get: |r| r.read_bps.map(|f| f.value / 1e9),
        noisy: |r| r.read_bps.is_some_and(|f| f.noisy),
    },
    KeyFigure {
        name: "context switch, 2 processes",
        unit: "µs",
        get: |r| r.ctx2_us.map(|f| f.value),
        noisy: |r| r.ctx2_us.is_some_and(|f| f.noisy),
    },
];

/// The band of a figure's usual spread over `values`: the comparisons'
/// usual range (`hwcal_analysis::compare::usual_range`), from three runs on.
pub fn band(values: &[f64]) -> Option<[f64; 2]> {
    (values.len() >= 3).then(|| hwcal_analysis::compare::usual_range(values))
}

/// A machine's values of `f`, oldest first: (run id, value).
fn series(m: &Machine, f: &KeyFigure) -> Vec<(i64, f64)> {
    m.runs
        .iter()
        .rev()
        .filter_map(|r| Some((r.id, (f.get)(r)?)))
        .collect()
}

/// A current figure: the median, the range of the runs behind it, and how
/// many there were.
pub(super) type Current = (f64, [f64; 2], usize);

/// The machine's current value of `f` (`hwcal_stats::recent`: the median
/// of its last [`RECENT`] runs that hold it), their range and how many.
pub(super) fn current(m: &Machine, f: &KeyFigure) -> Option<Current> {
    let v: Vec<f64> = m.runs.iter().filter_map(|r| (f.get)(r)).collect();
    hwcal_analysis::stats::recent(&v).map(|r| (r.median, r.range, r.runs))
}

/// The machine page's history: one plot per key figure with at least
/// three runs, the band drawn, the runs outside it in their own series and
/// named below; nothing for a machine with fewer runs.
pub(super) fn history_section(m: &Machine) -> String {
    let mut plots = String::new();
    let mut left: Vec<String> = Vec::new();
    for f in &KEY_FIGURES {
        let s = series(m, f);
        // The band from the runs that were themselves ok, as the
        // comparisons' usual range.
        let values: Vec<f64> = m
            .runs
            .iter()
            .filter(|r| !(f.noisy)(r))
            .filter_map(|r| (f.get)(r))
            .collect();
        let Some([lo, hi]) = band(&values) else { continue };
        let outside: Vec<&(i64, f64)> = s.iter().filter(|p| p.1 < lo || p.1 > hi).collect();
        for (id, v) in &outside {
            left.push(format!(
                "run {id}: {} {v:.2} {} (usual {lo:.2}–{hi:.2})",
                f.name, f.unit
            ));
        }
        let indexed = |pts: &[&(i64, f64)]| -> Vec<(f64, f64)> {
            pts.iter()
                .map(|p| (s.iter().position(|q| q.0 == p.0).unwrap_or(0) as f64 + 1.0, p.1))
                .collect()
        };
        let all: Vec<&(i64, f64)> = s.iter().collect();
        let mut plot = Plot {
            title: format!("{} over the runs", f.name),
            x_label: "run, oldest to newest".into(),
            y_label: f.unit.into(),
            width: 460,
            height: 260,
            series: vec![Series {
                name: "each run".into(),
                points: indexed(&all),
            }],
            markers: vec![
                Marker::Y(lo, format!("usual range {lo:.2}–{hi:.2}")),
                Marker::Y(hi, String::new()),
            ],
            ..Default::default()
        };
        if !outside.is_empty() {
            plot.series.push(Series {
                name: "outside the usual range".into(),
                points: indexed(&outside),
            });
        }
        let _ = write!(plots, "<figure class=\"history\">\n{}</figure>\n", plot.render());
    }
    if plots.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "<section id=\"history\">\n<h2>History</h2>\n<p class=\"sub\">Each key figure run by run; the \
         dotted lines bound its usual range (Tukey's outer fences: the runs' quartiles ± 3 interquartile \
         ranges, at least ± 5% of their median); a run outside it is drawn apart and named below.</p>\n",
    );
    s += &plots;
    if left.is_empty() {
        s += "<p>Every run is within its usual range.</p>\n";
    } else {
        s += "<p>Outside the usual range:</p>\n<ul class=\"left\">\n";
        for l in &left {
            let _ = writeln!(s, "<li>{}</li>", esc(l));
        }
        s += "</ul>\n";
    }
    s + "</section>\n"
}

/// The index's charts: per key figure, one bar per machine holding it
/// (its current value, the range of its recent runs beside the number).
pub(super) fn charts_section(site: &Site) -> String {
    let mut s = String::new();
    for f in KEY_FIGURES.iter().filter(|f| {
        matches!(
            f.name,
            "memory latency" | "L2 size" | "L3 size" | "read bandwidth" | "context switch, 2 processes"
        )
    }) {
        let rows: Vec<(&Machine, Current)> = site
            .machines
            .iter()
            .filter_map(|m| Some((m, current(m, f)?)))
            .collect();
        let Some(max) = rows
            .iter()
            .map(|r| r.1 .1[1])
            .reduce(f64::max)
            .filter(|m| *m > 0.0)
        else {
            continue;
        };
        let _ = write!(
            s,
            "<figure class=\"bars\"><figcaption>{} ({})</figcaption>\n<table class=\"bars\">\n",
            esc(f.name),
            esc(f.unit)
        );
        for (m, (med, [lo, hi], n)) in rows {
            let pct = |v: f64| (v / max * 100.0).clamp(0.0, 100.0);
            let _ = writeln!(
                s,
                "<tr><td class=\"l\"><a href=\"machines/{key}.html\">{name}</a></td><td class=\"bar\">\
                 <span class=\"range\" style=\"left:{l:.1}%;width:{w:.1}%\"></span>\
                 <span class=\"fill\" style=\"width:{p:.1}%\"></span></td>\
                 <td>{med:.2}</td><td class=\"sub\">{lo:.2}–{hi:.2}, {n} run{s}</td></tr>",
                key = esc(&m.key.key),
                name = esc(&m.key.display()),
                l = pct(lo),
                w = (pct(hi) - pct(lo)).max(0.3),
                p = pct(med),
                s = if n == 1 { "" } else { "s" },
            );
        }
        s += "</table></figure>\n";
    }
    if s.is_empty() {
        return s;
    }
    format!(
        "<section id=\"charts\">\n<h2>Across machines</h2>\n<p class=\"sub\">Each machine's current figure: \
         the median of its last {RECENT} runs (the bar), the range those runs span (the band behind it, and \
         the numbers). The table above shows each machine's latest run.</p>\n{s}</section>\n"
    )
}
