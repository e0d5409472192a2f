//! Adding a probe: one registry entry plus the probe's own measuring and
//! analysis code. This example (not shipped) adds a branch-mispredict probe
//! next to the registered ones; nothing else is edited, and the run's
//! profile, its re-analysis, the notes in the text summary, the JSON and
//! the HTML report (its raw curve is plotted with the other probes') all
//! pick it up. A probe whose figures deserve their own table still needs
//! its fields in `hwcal_model::Profile` and the exporters' tables.

use hwcal_model::note::refresh;
use hwcal_model::{Note, Profile, RawCurve, RawPoint};
use hwcal_report::{html::HtmlExporter, Exporter, JsonExporter, TextExporter};
use hwcal_runner::{
    absorb, plan, probes, select, Machine, Plan, ProbeEntry, Progress, Real, RunConfig, Silent,
};

const CURVE: &str = "branch.mispredict";

/// The entry: id, description, plan, analysis.
const BRANCH: ProbeEntry = ProbeEntry {
    id: "branch",
    description: "branch-mispredict cost (random vs predictable branches)",
    opt_in: false,
    plan: |_, _| {
        Some(Box::new(Branch {
            patterns: vec![1, 2, 4, 8],
        }))
    },
    analyze,
};

/// The plan: branch patterns to time (period of the taken/not-taken
/// sequence; a real probe would time a kernel per pattern).
#[derive(Debug)]
struct Branch {
    patterns: Vec<u32>,
}

impl Plan for Branch {
    fn run(&self, progress: &dyn Progress) -> hwcal_runner::Result<Profile> {
        progress.say("branch: timing patterns");
        // Stand-in for the kernel: a predictable pattern costs 1 ns, a
        // pattern the predictor cannot follow 1 ns plus a 15 ns flush.
        let points = self
            .patterns
            .iter()
            .map(|&k| RawPoint {
                x: k as f64,
                y: if k >= 8 { 16.0 } else { 1.0 },
                ..Default::default()
            })
            .collect();
        let mut p = Profile {
            raw: vec![RawCurve {
                id: CURVE.into(),
                x_label: "pattern period".into(),
                y_label: "ns per branch".into(),
                points,
            }],
            ..Default::default()
        };
        analyze(&mut p);
        Ok(p)
    }
}

/// The analysis: the cost is the step of the curve; a note carries it.
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
    true
}

#[test]
fn a_new_probe_is_one_registry_entry() {
    let mut registry = probes();
    registry.push(BRANCH);
    let chosen = select(registry, &["branch".into()], &[]).unwrap();
    let plans = plan(&chosen, &RunConfig::default(), &Real.info());
    assert_eq!(plans.len(), 1, "only the branch probe (io has no directory)");

    let mut p = Profile::new("hwcal run --only branch", 0);
    for (entry, plan) in &plans {
        absorb(&mut p, Real.run(entry, plan.as_ref(), &Silent).unwrap());
    }
    let text = String::from_utf8(TextExporter.export(&p).unwrap()).unwrap();
    assert!(text.contains("  - branch: a mispredict costs 15.0 ns"), "{text}");
    let json = String::from_utf8(JsonExporter.export(&p).unwrap()).unwrap();
    assert!(json.contains("\"code\": \"branch.cost\"") && json.contains(CURVE));
    let html = String::from_utf8(HtmlExporter::default().export(&p).unwrap()).unwrap();
    assert!(html.contains("a mispredict costs") && html.contains("pattern period"));

    // Offline re-analysis (`hwcal analyze`) refreshes the note, no copy.
    let mut back = hwcal_model::parse_profile(json.as_bytes()).unwrap();
    assert!((BRANCH.analyze)(&mut back));
    assert_eq!(back.notes, p.notes);
}
