//! Tests of the HTML report and comparison pages on the synthetic sample
//! profiles: sections, plots, order, escaping.

use super::*;
use hwcal_model::sample::full_profile;
use hwcal_model::*;

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
    assert!(html.contains(">L1 48 KiB<") && html.contains(">memory 145 ns (this sweep)<"));
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
        "c2c",
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
    let html = compare_report(&a, "run 1", &b, "run 2", &[]);
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
    assert!(
        html.contains(">48 KiB<") && html.contains(">2.10 ns = "),
        "{html}"
    );
    assert!(html.contains(">145.0 ns") && html.contains(">1.66 µs per switch<"));
    // The card is the terminal digest's lines: the core's name, not CPUID's numbers.
    for l in crate::text::digest_lines(&p) {
        assert!(
            html.contains(&format!("<div class=\"k\">{}", esc(&l.label))),
            "{}",
            l.label
        );
    }
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
    let html = compare_report(&full_profile(0), "a", &full_profile(5), "b", &[]);
    let at = |id: &str| html.find(&format!("id=\"{id}\"")).unwrap_or(usize::MAX);
    assert!(at("figures") < at("plots") && at("plots") < at("machines"));
    assert!(html.find("<svg").unwrap() > at("figures"));
}

#[test]
fn core_to_core_latency_is_a_heat_map_with_its_figures() {
    let mut p = crate::heatmap::tests::profile();
    hwcal_analysis::c2c::reanalyze(&mut p);
    let html = report(&p, "t");
    assert_balanced(&html);
    assert!(html.contains("<section id=\"c2c\">"), "{html}");
    assert!(html.contains("<title>CPU 0 ↔ 2: 80.0 ns</title>"));
    assert!(html.contains("fastest pair, one way") && html.contains("<section id=\"figures\">"));
}

#[test]
fn the_report_and_db_compare_judge_every_row_by_one_rule() {
    use crate::compare::{judged, mark_word, Comparison, Mark, VERDICT_THRESHOLD};
    // B's memory 10% slower: worse by its own intervals, but inside the
    // range the machine's history spans (its runs from 130 to 170 ns).
    let a = full_profile(0);
    let with_mem = |ns: f64| {
        let mut p = full_profile(0);
        let m = p.memory.as_mut().unwrap();
        m.latency_ns = ns;
        m.latency_ns_ci95 = Some([ns * 0.999, ns * 1.001]);
        p
    };
    let base = a.memory.as_ref().unwrap().latency_ns;
    let b = with_mem(base * 1.1);
    let history: Vec<Profile> = [0.9, 1.0, 1.1, 1.2].iter().map(|f| with_mem(base * f)).collect();
    let c = judged(std::slice::from_ref(&a), std::slice::from_ref(&b), &history);
    let alone = judged(std::slice::from_ref(&a), std::slice::from_ref(&b), &[]);
    let row = |c: &Comparison| {
        c.rows
            .iter()
            .find(|r| r.figure == "memory latency" && r.unit == FigureUnit::Ns)
            .and_then(|r| r.mark(VERDICT_THRESHOLD))
    };
    assert_eq!(row(&alone), Some(Mark::Worse));
    assert_eq!(
        row(&c),
        Some(Mark::Same),
        "the history is what db compare applies"
    );
    // The report's table is the same comparison: every row's word, in order.
    let html = compare_report(&a, "a", &b, "b", &history);
    let words: Vec<&str> = c
        .rows
        .iter()
        .filter_map(|r| r.mark(VERDICT_THRESHOLD).map(mark_word))
        .collect();
    let mut at = 0;
    for w in words {
        let found = html[at..].find(&format!(">{}</span>", crate::format::esc(w)));
        at += found.unwrap_or_else(|| panic!("row word {w} missing after byte {at}")) + 1;
    }
}
