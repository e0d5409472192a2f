//! The comparison of two profiles as the CLI shows it: the text table
//! `hwcal db compare` prints, its JSON, and how a side is named. Which
//! figures pair up, their ratios B / A and which side is better are the
//! analysis crate's ([`hwcal_analysis::compare`], re-exported here); this
//! module only renders them. The HTML comparison page is
//! `crate::html::compare_report`.

use crate::format::{unit_json_name, value_with_unit};
use hwcal_model::{Direction, Profile};
use std::fmt::Write;

pub use crate::format::fmt_ratio;
pub use hwcal_analysis::compare::{
    compare, compare_batches, judged, match_levels, with_history, Comparison, LevelMatch, Mark, Row,
    SAME_CACHE_FACTOR, SIGNIFICANCE, VERDICT_THRESHOLD,
};

/// How the text table and the HTML page say a verdict.
pub fn mark_word(m: Mark) -> &'static str {
    match m {
        Mark::Better => "B better",
        Mark::Worse => "B worse",
        Mark::Noisy => "noisy",
        Mark::Same => "~ no significant change",
    }
}

/// The ratio with its uncertainty where both sides carry an interval
/// (`0.970 ± 0.030×`), else as [`fmt_ratio`].
pub fn fmt_ratio_pm(r: &Row) -> String {
    match (r.ratio(), r.ratio_pm()) {
        (Some(x), Some(pm)) => format!("{x:.3} ± {pm:.3}×"),
        _ => fmt_ratio(r.ratio()),
    }
}

/// `run 3 (Xeon ... on host, 2026-11-22 00:41 UTC)`: a stored run as the
/// commands name it.
pub fn run_label(id: i64, p: &Profile) -> String {
    format!(
        "run {id} ({}, {})",
        machine_label(p),
        crate::format_utc(p.created_unix)
    )
}

/// How `db compare` names a side it was given as `spec`: its one run's
/// label, or for several runs (a batch) the spec, their count and the
/// first one's label.
pub fn side_label(spec: &str, ids: &[i64], ps: &[Profile]) -> String {
    let label = match (ids.first(), ps.first()) {
        (Some(&id), Some(p)) => run_label(id, p),
        _ => return spec.to_string(),
    };
    match ids.len() {
        1 => label,
        n => format!("{spec}: {n} runs, {label}"),
    }
}

/// `Xeon Foo (host)`: how a side is named in headers.
pub fn machine_label(p: &Profile) -> String {
    match &p.machine {
        // The core as people name it first (the digest's word), the CPU's
        // own name beside it: "Zen 5 (AMD EPYC) on vm".
        Some(m) => match m.core_name() {
            Some(core) if !m.cpu_model_name.contains(core) => {
                format!("{core} ({}) on {}", m.cpu_model_name.trim(), m.hostname)
            }
            _ => format!("{} on {}", m.cpu_model_name.trim(), m.hostname),
        },
        None => "machine unknown".into(),
    }
}

/// The comparison as JSON (what `hwcal db compare --json` prints): the two
/// runs' labels, one object per row (`a`, `b`, `ratio` null where absent
/// or not comparable; `verdict` `better` / `worse` for B against A,
/// `noisy`, `same` (both intervals overlap: no significant change), or
/// null; each side's 95% interval and the ratio's ± where known) and the
/// notes.
pub fn comparison_json(c: &Comparison, label_a: &str, label_b: &str) -> Vec<u8> {
    use serde_json::{json, Value};
    let num = |v: Option<f64>| v.map_or(Value::Null, Value::from);
    let rows: Vec<Value> = c
        .rows
        .iter()
        .map(|r| {
            json!({
                "section": r.section,
                "figure": r.figure,
                "unit": unit_json_name(r.unit),
                "a": num(r.a),
                "b": num(r.b),
                "ratio": num(r.ratio()),
                "higher_is_better": match r.better {
                    Direction::Higher => Value::Bool(true),
                    Direction::Lower => Value::Bool(false),
                    Direction::Neither => Value::Null,
                },
                "noisy": r.noisy,
                "comparable": !r.unlike,
                "verdict": r.mark(VERDICT_THRESHOLD).map(|m| match m {
                    Mark::Better => "better",
                    Mark::Worse => "worse",
                    Mark::Noisy => "noisy",
                    Mark::Same => "same",
                }),
                "a_ci95": r.a_ci,
                "b_ci95": r.b_ci,
                "ratio_pm": num(r.ratio_pm()),
                "runs": r.runs,
                "p_value": num(r.p_value),
                "usual_range": r.usual.map(|(range, _)| range),
            })
        })
        .collect();
    let doc = json!({
        "a": label_a,
        "b": label_b,
        "verdict_threshold": VERDICT_THRESHOLD,
        "significance": SIGNIFICANCE,
        "rows": rows,
        "notes": c.notes,
    });
    let mut out = serde_json::to_vec_pretty(&doc).unwrap_or_default();
    out.push(b'\n');
    out
}

/// The comparison as a text table (what `hwcal db compare` prints).
pub fn comparison_text(c: &Comparison, label_a: &str, label_b: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "A = {label_a}");
    let _ = writeln!(s, "B = {label_b}");
    if c.rows.is_empty() {
        let _ = writeln!(s, "\nno figure measured by both runs");
    } else {
        let fw = c.rows.iter().map(|r| r.figure.chars().count()).max().unwrap_or(0);
        let _ = writeln!(
            s,
            "\n{:<9}  {:<fw$}  {:>14}  {:>14}  {:>17}",
            "section", "figure", "A", "B", "B/A"
        );
        for (i, r) in c.rows.iter().enumerate() {
            if i > 0 && c.rows[i - 1].section != r.section {
                s.push('\n');
            }
            let mark = r
                .mark(VERDICT_THRESHOLD)
                .map_or(String::new(), |m| format!("  {}", mark_word(m)));
            // Batches: the rank test's p and the runs behind each median.
            let mark = match (r.mark(VERDICT_THRESHOLD), r.usual) {
                (Some(Mark::Same), Some((_, n))) => format!("{mark} (within its usual range, {n} runs)"),
                _ => mark,
            };
            let mark = match (r.p_value, r.runs) {
                (Some(p), Some([na, nb])) if !mark.is_empty() => {
                    format!("{mark}  (p={p:.3}, {na}:{nb} runs)")
                }
                _ => mark,
            };
            let _ = writeln!(
                s,
                "{:<9}  {:<fw$}  {:>14}  {:>14}  {:>17}{mark}",
                r.section,
                r.figure,
                r.a.map_or("-".into(), |v| value_with_unit(r.unit, v)),
                r.b.map_or("-".into(), |v| value_with_unit(r.unit, v)),
                fmt_ratio_pm(r),
            );
        }
    }
    for n in &c.notes {
        let _ = writeln!(s, "note: {n}");
    }
    s
}

/// The table `hwcal db compare` prints: every column when `wide`
/// ([`comparison_text`]), else within [`FIT_WIDTH`] ([`comparison_text_fit`]).
pub fn comparison_table(c: &Comparison, label_a: &str, label_b: &str, wide: bool) -> String {
    match wide {
        true => comparison_text(c, label_a, label_b),
        false => comparison_text_fit(c, label_a, label_b, FIT_WIDTH),
    }
}

/// Columns `hwcal db compare` fits in unless `--wide` is asked.
pub const FIT_WIDTH: usize = 100;

/// A verdict in a word or two, for the narrow table's last column.
fn mark_short(m: Mark) -> &'static str {
    match m {
        Mark::Better => "B better",
        Mark::Worse => "B worse",
        Mark::Noisy => "noisy",
        Mark::Same => "~",
    }
}

/// The comparison in at most `width` columns (what `hwcal db compare`
/// prints; [`comparison_text`] is `--wide`): each section's name on a line
/// of its own above its rows instead of a column, the verdict in a word
/// (`~`: no significant change; `~ usual`: both in the machine's usual
/// range) with the rank test's p where there is one,
/// labels and notes wrapped at words. A figure's name too long for its
/// column is cut at a word: `--wide` and `--json` give every row whole,
/// with its usual range and the runs behind each median.
pub fn comparison_text_fit(c: &Comparison, label_a: &str, label_b: &str, width: usize) -> String {
    use hwcal_model::columns::{cut_at_word, wrap_words};
    let mut s = String::new();
    for (side, label) in [("A", label_a), ("B", label_b)] {
        for l in wrap_words(&format!("{side} = {label}"), width, "    ") {
            let _ = writeln!(s, "{l}");
        }
    }
    if c.rows.is_empty() {
        let _ = writeln!(s, "\nno figure measured by both runs");
    } else {
        let value = |r: &Row, v: Option<f64>| v.map_or("-".into(), |v| value_with_unit(r.unit, v));
        let cells: Vec<[String; 4]> = c
            .rows
            .iter()
            .map(|r| {
                let mark = r.mark(VERDICT_THRESHOLD);
                let mut m = mark.map_or(String::new(), |m| mark_short(m).to_string());
                // "~" because both runs sit in the machine's usual range,
                // not because their intervals overlap: said, it changes
                // how far the "~" can be trusted.
                if let (Some(Mark::Same), Some(_)) = (mark, r.usual) {
                    m.push_str(" usual");
                }
                if let (Some(p), Some(_)) = (r.p_value, mark) {
                    let _ = write!(m, " p={p:.3}");
                }
                [value(r, r.a), value(r, r.b), fmt_ratio_pm(r), m]
            })
            .collect();
        let w = |k: usize, head: &str| {
            cells
                .iter()
                .map(|c| c[k].chars().count())
                .chain([head.chars().count()])
                .max()
                .unwrap_or(0)
        };
        let (aw, bw, rw, mw) = (w(0, "A"), w(1, "B"), w(2, "B/A"), w(3, ""));
        // The figure's column gets what the others leave (2 columns of
        // indent, 2 between columns).
        let longest = c.rows.iter().map(|r| r.figure.chars().count()).max().unwrap_or(0);
        let fw = longest
            .min(width.saturating_sub(2 + aw + bw + rw + mw + 8))
            .max(12);
        let _ = writeln!(
            s,
            "\n{:<w$}  {:>aw$}  {:>bw$}  {:>rw$}",
            "section / figure",
            "A",
            "B",
            "B/A",
            w = fw + 2
        );
        for (i, (r, [a, b, ratio, mark])) in c.rows.iter().zip(&cells).enumerate() {
            if i == 0 || c.rows[i - 1].section != r.section {
                let _ = writeln!(
                    s,
                    "{}{}",
                    if i == 0 { "" } else { "\n" },
                    cut_at_word(r.section, width)
                );
            }
            let figure = cut_at_word(&r.figure, fw);
            let line = format!("  {figure:<fw$}  {a:>aw$}  {b:>bw$}  {ratio:>rw$}  {mark}");
            // A value wider than its share (a huge count) can still push
            // a line past the width: cut there rather than wrap.
            let _ = writeln!(s, "{}", cut_at_word(line.trim_end(), width));
        }
    }
    let legend = format!(
        "B/A: B's figure over A's, ± its 95% uncertainty; B better / B worse: the intervals apart and \
         B/A {:.0}% or more from 1; ~: no significant change (usual: both within the machine's usual \
         range); p: the rank test over batches; --wide: every column, --json: every field",
        VERDICT_THRESHOLD * 100.0
    );
    let _ = writeln!(s);
    for l in wrap_words(&legend, width, "  ") {
        let _ = writeln!(s, "{l}");
    }
    for n in &c.notes {
        for l in wrap_words(&format!("note: {n}"), width, "      ") {
            let _ = writeln!(s, "{l}");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwcal_model::sample::full_profile;
    use hwcal_model::Verdict;

    #[test]
    fn the_text_table_names_a_level_only_one_side_has() {
        let a = full_profile(0);
        let mut b = Profile::new("hwcal clock", 0);
        b.clock = a.clock.clone();
        let mut caches = a.caches.clone().unwrap();
        caches.pop(); // B has no L3
        b.caches = Some(caches);
        let t = comparison_text(&compare(&a, &b), "a", "b");
        assert!(t.contains("L3 (only A) latency"));
    }

    #[test]
    fn the_text_table_names_both_thread_counts() {
        let a = full_profile(0);
        let mut b = full_profile(0);
        let (ba, bb) = (a.bandwidth.as_ref().unwrap(), b.bandwidth.as_mut().unwrap());
        bb.threads = ba.threads * 8;
        let t = comparison_text(&compare(&a, &b), "a", "b");
        assert!(t.contains("read (A "), "{t}");
    }

    #[test]
    fn a_noisy_row_reads_noisy_not_worse() {
        let a = full_profile(0);
        let mut b = full_profile(5); // latencies × 1.5: B worse
        b.memory.as_mut().unwrap().verdict = Verdict::Noisy;
        let t = comparison_text(&compare(&a, &b), "a", "b");
        let line = t
            .lines()
            .find(|l| l.contains("memory latency") && l.contains(" ns"))
            .unwrap();
        assert!(line.ends_with("  noisy") && !line.contains("worse"), "{line}");
    }

    #[test]
    fn the_json_comparison_carries_every_row() {
        let mut b = full_profile(5);
        b.memory.as_mut().unwrap().verdict = Verdict::Noisy;
        let c = compare(&full_profile(0), &b);
        let v: serde_json::Value = serde_json::from_slice(&comparison_json(&c, "run 1", "run 2")).unwrap();
        assert_eq!(v["a"], "run 1");
        let rows = v["rows"].as_array().unwrap();
        assert_eq!(rows.len(), c.rows.len());
        let mem = rows
            .iter()
            .find(|r| r["figure"] == "memory latency" && r["unit"] == "ns")
            .unwrap();
        assert_eq!(mem["verdict"], "noisy");
        assert_eq!(mem["noisy"], true);
        assert_eq!(mem["higher_is_better"], false);
        let clock = rows.iter().find(|r| r["figure"] == "core clock").unwrap();
        assert_eq!(clock["verdict"], "worse");
        assert!((clock["ratio"].as_f64().unwrap() - 1.0 / 1.5).abs() < 1e-9);
        assert_eq!(v["notes"].as_array().unwrap().len(), c.notes.len());
    }

    /// Every line within 100 columns (characters), every row there, the
    /// wide table as it was.
    #[test]
    fn the_fitted_table_stays_within_100_columns() {
        let a = full_profile(0);
        let mut b = full_profile(5);
        b.memory.as_mut().unwrap().verdict = Verdict::Noisy;
        let c = compare(&a, &b);
        let long = "run 12 (Zen 5 (AMD EPYC 9B45 128-Core Processor) on a-rather-long-host-name, 2026-11-22 00:41 UTC)";
        let t = comparison_text_fit(&c, long, "run 13", FIT_WIDTH);
        for l in t.lines() {
            assert!(
                l.chars().count() <= FIT_WIDTH,
                "{} columns: {l}\n{t}",
                l.chars().count()
            );
        }
        let wide = comparison_text(&c, long, "run 13");
        assert!(
            wide.lines().any(|l| l.chars().count() > FIT_WIDTH),
            "the wide table is wider"
        );
        // Every row is there, under its section, with its verdict.
        for r in &c.rows {
            assert!(
                t.lines().any(|l| l.starts_with(&format!("  {}", r.figure))),
                "{}\n{t}",
                r.figure
            );
        }
        let mem = t
            .lines()
            .find(|l| l.contains("memory latency") && l.contains(" ns"))
            .unwrap();
        assert!(mem.ends_with("  noisy"), "{mem}");
        let clock = t.lines().find(|l| l.contains("core clock")).unwrap();
        assert!(clock.ends_with("B worse"), "{clock}");
        // The long label is wrapped, not cut.
        let joined = t
            .lines()
            .take(3)
            .flat_map(str::split_whitespace)
            .collect::<Vec<_>>()
            .join(" ");
        assert!(joined.contains("2026-11-22 00:41 UTC)"), "{t}");
    }
}
