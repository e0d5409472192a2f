//! The comparison page's verdicts, decided here and only rendered by the
//! page's script: for every two machines, each figure both measured is
//! judged over their recent runs (the last [`RECENT`]) by the rule every
//! comparison over runs follows (`hwcal_analysis::compare::runs_row`:
//! medians, the Mann–Whitney U test, `~` unless p < 0.05, better/worse
//! only past 5% as well) — the same verdict `db compare batch:...` gives.
//!
//! Pairs grow as the square of the machines: the verdicts are embedded for
//! up to [`MAX_MACHINES`] machines (a few hundred kilobytes); past that the
//! page shows the ratios and says the verdicts are left to `hwcal db
//! compare`.

use super::catalogue::{Machine, Site};
use super::facts::Fig;
use super::history::RECENT;
use hwcal_analysis::compare::{runs_row, Mark, Row, SIGNIFICANCE, VERDICT_THRESHOLD};
use hwcal_model::{Direction, FigureUnit};
use serde_json::{json, Map, Value};

/// Machines up to which the page carries every pair's verdicts.
pub const MAX_MACHINES: usize = 60;

/// One figure of a machine over its recent runs.
struct Series {
    label: String,
    better: Direction,
    /// How it was measured (thread count, ctx size, I/O job): two sides
    /// measured differently are not judged.
    how: String,
    values: Vec<f64>,
    noisy: usize,
}

/// A machine's figures over its recent runs, under the labels the page
/// shows (the comparison's `figures` in `pages::machine_json`).
fn series(m: &Machine) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    let mut add = |label: String, better: Direction, how: String, f: Option<Fig>| {
        let Some(f) = f else { return };
        match out.iter_mut().find(|s| s.label == label) {
            // Only runs measured as the latest was: the latest run's
            // setting names the figure.
            Some(s) if s.how == how => {
                s.values.push(f.value);
                s.noisy += usize::from(f.noisy);
            }
            Some(_) => {}
            None => out.push(Series {
                label,
                better,
                how,
                values: vec![f.value],
                noisy: usize::from(f.noisy),
            }),
        }
    };
    for r in m.runs.iter().take(RECENT) {
        for f in r.figures() {
            add(f.label, f.better, f.how, Some(f.fig));
        }
    }
    out
}

/// The verdict of B's series against A's: [text, class, ratio text].
fn judge(a: &Series, b: &Series) -> Value {
    if a.how != b.how {
        return json!([
            format!("measured differently: {} vs {}", a.how, b.how),
            "noisy",
            ""
        ]);
    }
    let proto = Row::new("site", a.label.clone(), FigureUnit::Count, a.better);
    // Noisy in most runs on either side: not to be judged.
    let noisy = a.noisy * 2 > a.values.len() || b.noisy * 2 > b.values.len();
    let row = runs_row(proto, &a.values, &b.values, noisy);
    let runs = format!("{}:{} runs", a.values.len(), b.values.len());
    let p = row.p_value.map_or(String::new(), |p| format!("p={p:.2}, "));
    let (text, class) = match row.mark(VERDICT_THRESHOLD) {
        Some(Mark::Better) => (format!("B better ({p}{runs})"), "better"),
        Some(Mark::Worse) => (format!("B worse ({p}{runs})"), "worse"),
        Some(Mark::Noisy) => ("noisy: no verdict".to_string(), "noisy"),
        Some(Mark::Same) => (format!("~ no significant change ({p}{runs})"), ""),
        None if row.p_value.is_some_and(|p| p < SIGNIFICANCE) => (format!("within 5% ({p}{runs})"), ""),
        None => (String::new(), ""),
    };
    let ratio = row.ratio().map_or(String::new(), |r| format!("{r:.3}\u{d7}"));
    json!([text, class, ratio])
}

/// Every ordered pair's verdicts, `{"A B": {label: [text, class, ratio]}}`;
/// `None` past [`MAX_MACHINES`].
pub(super) fn verdicts(site: &Site) -> Option<Value> {
    if site.machines.len() > MAX_MACHINES {
        return None;
    }
    let all: Vec<(&str, Vec<Series>)> = site
        .machines
        .iter()
        .map(|m| (m.key.key.as_str(), series(m)))
        .collect();
    let mut pairs = Map::new();
    for (ka, sa) in &all {
        for (kb, sb) in &all {
            if ka == kb {
                continue;
            }
            let mut rows = Map::new();
            for a in sa {
                if let Some(b) = sb.iter().find(|b| b.label == a.label) {
                    rows.insert(a.label.clone(), judge(a, b));
                }
            }
            pairs.insert(format!("{ka} {kb}"), Value::Object(rows));
        }
    }
    Some(Value::Object(pairs))
}
