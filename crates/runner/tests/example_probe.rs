//! Adding a probe: one registry entry plus the probe's own measuring and
//! analysis code. This example (not shipped) adds a branch-mispredict probe
//! next to the registered ones; nothing else is edited. `hwcal run` reaches
//! it through the registry and [`calibrate`]; a subcommand of its own is a
//! [`calibrate_with`] call with the command's own plan (see `run_branch`),
//! the same path `hwcal cache` and `hwcal tlb` take. The run's
//! profile, its re-analysis, the text summary (its figure and its note),
//! the JSON, the HTML report (its figure in a table, its raw curve
//! plotted) and the comparison of two runs (text, JSON and HTML) all pick
//! it up: the probe states its results as named figures
//! (`hwcal_model::Figure`), which every exporter renders generically. A
//! probe whose figures deserve a table of their own layout still needs its
//! fields in `hwcal_model::Profile` and the exporters' tables.

use hwcal_model::note::refresh;
use hwcal_model::{figure, Direction, Figure, FigureUnit, Note, Profile, RawCurve, RawPoint};
use hwcal_report::compare::{compare, comparison_json, comparison_text};
use hwcal_report::html::{compare_report, HtmlExporter};
use hwcal_report::{Exporter, JsonExporter, TextExporter};
use hwcal_runner::{
    calibrate, calibrate_with, probes, select, Header, Plan, ProbeEntry, Progress, Real, RunConfig, Silent,
};

const CURVE: &str = "branch.mispredict";

/// The entry: id, description, plan, analysis.
const BRANCH: ProbeEntry = ProbeEntry {
    id: "branch",
    description: "branch-mispredict cost (random vs predictable branches)",
    opt_in: false,
    typical_s: 0.5,
    reads: &[],
    plan: |_, _| {
        Some(Box::new(Branch {
            patterns: vec![1, 2, 4, 8],
            flush_ns: 15.0,
        }))
    },
    analyze,
};

/// The plan: branch patterns to time (period of the taken/not-taken
/// sequence; a real probe would time a kernel per pattern), and the cost
/// of a flush on this (pretend) machine.
#[derive(Debug)]
struct Branch {
    patterns: Vec<u32>,
    flush_ns: f64,
}

impl Plan for Branch {
    fn run(
        &self,
        _hw: &dyn hwcal_runner::Hardware,
        progress: &dyn Progress,
    ) -> hwcal_runner::Result<Profile> {
        progress.say("branch: timing patterns");
        // Stand-in for the kernel: a predictable pattern costs 1 ns, a
        // pattern the predictor cannot follow 1 ns plus a 15 ns flush.
        let points = self
            .patterns
            .iter()
            .map(|&k| RawPoint {
                x: k as f64,
                y: if k >= 8 { 1.0 + self.flush_ns } else { 1.0 },
                ..Default::default()
            })
            .collect();
        // Raw data only: the calibration runs the entry's analysis.
        Ok(Profile {
            raw: vec![RawCurve {
                id: CURVE.into(),
                x_label: "pattern period".into(),
                y_label: "ns per branch".into(),
                points,
            }],
            ..Default::default()
        })
    }
}

/// The analysis: the cost is the step of the curve; a named figure and a
/// note carry it.
fn analyze(p: &mut Profile) -> bool {
    let Some(c) = p.raw_curve(CURVE) else { return false };
    let ys: Vec<f64> = c.points.iter().map(|q| q.y).collect();
    let cost = ys.iter().cloned().fold(f64::MIN, f64::max) - ys.iter().cloned().fold(f64::MAX, f64::min);
    let note = Note::info(
        "branch",
        "cost",
        format!("branch: a mispredict costs {cost:.1} ns"),
    );
    refresh(&mut p.notes, "branch", &["branch.cost"], vec![note]);
    let mut fig = Figure::new(
        "branch",
        "cost",
        "mispredict cost",
        cost,
        FigureUnit::Ns,
        Direction::Lower,
    );
    // A figure states its 95% interval (from its repetitions; this toy
    // curve has none, so ±1%): comparisons judge a change by it, and a
    // figure without one gets no better/worse.
    fig.ci95 = Some([cost * 0.99, cost * 1.01]);
    figure::refresh(&mut p.figures, "branch", vec![fig]);
    true
}

fn header(command: &str) -> Header {
    Header {
        command: command.into(),
        ..Header::default()
    }
}

/// What a `hwcal branch --flush-ns N` subcommand would do: its own plan,
/// through the one calibration path.
fn run_branch(flush_ns: f64) -> Profile {
    let plan = Branch {
        patterns: vec![1, 2, 4, 8],
        flush_ns,
    };
    let planner =
        move |_: &hwcal_model::MachineInfo| -> Vec<hwcal_runner::Planned> { vec![(BRANCH, Box::new(plan))] };
    calibrate_with(&Real, header("hwcal branch"), &[BRANCH], planner, &Silent).unwrap()
}

#[test]
fn a_new_probe_is_one_registry_entry() {
    let mut registry = probes();
    registry.push(BRANCH);
    let chosen = select(registry, &["branch".into()], &[]).unwrap();
    assert_eq!(
        chosen.len(),
        2,
        "branch, and io (opt-in, without a directory not planned)"
    );
    let config = RunConfig::default();
    let p = calibrate(
        &Real,
        &config,
        &chosen,
        header("hwcal run --only branch"),
        &Silent,
    )
    .unwrap();
    assert!(
        p.machine.is_some() && p.harness.is_some(),
        "the calibration describes the machine"
    );
    assert!(p.io.is_none());
    // Text: the figure and the note.
    let text = String::from_utf8(TextExporter.export(&p).unwrap()).unwrap();
    assert!(text.contains("  - branch: a mispredict costs 15.0 ns"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.contains("branch: mispredict cost") && l.ends_with("15.00 ns")),
        "{text}"
    );
    // JSON: the note's code, the figure, the raw curve.
    let json = String::from_utf8(JsonExporter.export(&p).unwrap()).unwrap();
    assert!(json.contains("\"code\": \"branch.cost\"") && json.contains(CURVE));
    assert!(json.contains("\"id\": \"branch.cost\"") && json.contains("\"unit\": \"ns\""));
    // HTML: the note, the figure's table, the curve's plot.
    let html = String::from_utf8(HtmlExporter::default().export(&p).unwrap()).unwrap();
    assert!(html.contains("a mispredict costs") && html.contains("pattern period"));
    assert!(html.contains("id=\"figures\"") && html.contains("<td class=\"l\">mispredict cost</td>"));
    assert!(html.contains("15.00 ns"));

    // Offline re-analysis (`hwcal analyze`) refreshes the note and the
    // figure, no copies.
    let mut back = hwcal_model::parse_profile(json.as_bytes()).unwrap();
    assert!((BRANCH.analyze)(&mut back));
    assert_eq!(back.notes, p.notes);
    assert_eq!(back.figures, p.figures);
}

#[test]
fn a_new_probe_is_compared_without_edits() {
    // A machine whose mispredicts cost twice as much.
    let (a, b) = (run_branch(15.0), run_branch(30.0));
    let c = compare(&a, &b);
    let row = c
        .rows
        .iter()
        .find(|r| r.figure == "branch: mispredict cost")
        .expect("the new probe's figure is compared");
    assert_eq!(row.ratio(), Some(2.0));
    assert_eq!(row.b_is_better(0.05), Some(false), "a higher cost is worse");
    let text = comparison_text(&c, "a", "b");
    assert!(
        text.lines().any(|l| l.contains("branch: mispredict cost")
            && l.contains("2.000 ± ")
            && l.ends_with("B worse")),
        "{text}"
    );
    let v: serde_json::Value = serde_json::from_slice(&comparison_json(&c, "a", "b")).unwrap();
    assert!(v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["figure"] == "branch: mispredict cost" && r["verdict"] == "worse" && r["ratio"] == 2.0));
    let html = compare_report(&a, "a", &b, "b", &[]);
    assert!(html.contains("branch: mispredict cost") && html.contains("2.000 ± "));
}
