//! `hwcal run` end to end on the synthetic machine (CLI → runner →
//! analysis → exporters → database → report), deterministic and instant:
//! the test binary is built with `hwcal-runner/synthetic` (a dev-dependency
//! feature) and `HWCAL_SYNTHETIC_MACHINE=1` selects the synthetic machine,
//! whose probes return the curves and figures of
//! `hwcal_model::sample::full_profile(0)` instead of running kernels.

mod common;

use assert_cmd::Command;
use common::stdout_of as stdout;
use hwcal_model::Profile;
use std::path::Path;

/// `hwcal` on the synthetic machine, with the test's own database.
fn hwcal(dir: &Path) -> Command {
    let mut c = common::hwcal();
    c.env("HWCAL_SYNTHETIC_MACHINE", "1")
        .env("HWCAL_DB", dir.join("runs.db"))
        .env("HOME", dir)
        .env("XDG_DATA_HOME", dir.join("xdg"));
    c
}

/// `hwcal run` with every probe (io on the temporary directory); returns
/// the JSON profile it wrote.
fn run(dir: &Path, name: &str) -> Profile {
    let json = dir.join(name);
    let io = dir.join("io");
    std::fs::create_dir_all(&io).unwrap();
    let mut c = hwcal(dir);
    c.args(["run", "--quiet", "--no-pin", "--io"])
        .arg(&io)
        .arg("--json")
        .arg(&json);
    let text = stdout(&mut c);
    // The digest: one screen, the detail behind a hint.
    assert!(text.contains("\nL1 ") && text.contains("memory "), "{text}");
    assert!(text.contains("detail: hwcal db show latest --detail"), "{text}");
    assert!(!text.contains("caches:"), "{text}");
    assert!(text.lines().count() <= 25, "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    assert!(!text.contains('\x1b'), "no colour off a terminal: {text}");
    hwcal_model::parse_profile(&std::fs::read(&json).unwrap()).unwrap()
}

#[test]
fn run_db_report_on_the_synthetic_machine() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = run(d, "a.json");
    assert_eq!(p.machine.as_ref().unwrap().hostname, "synthetic-0");
    for (section, present) in [
        ("clock", p.clock.is_some()),
        ("caches", p.caches.as_ref().is_some_and(|c| c.len() >= 2)),
        ("tlbs", p.tlbs.is_some()),
        ("mem", p.mem.is_some()),
        ("bandwidth", p.bandwidth.is_some()),
        ("context_switch", p.context_switch.is_some()),
        ("io", p.io.is_some()),
    ] {
        assert!(present, "section {section} missing");
    }
    // The cache figures come from the analysis of the synthetic curves.
    assert!(p.raw.iter().any(|c| c.id == hwcal_model::curve::CACHE_LATENCY));
    assert!(p.notes.iter().all(|n| !n.code.is_empty()));

    // Deterministic: a second run gives the same figures and notes.
    let q = run(d, "b.json");
    assert_eq!((&p.caches, &p.tlbs, &p.notes), (&q.caches, &q.tlbs, &q.notes));
    assert_eq!(p.raw, q.raw);

    // Both runs were stored once each, with the machine.
    let list = stdout(hwcal(d).args(["db", "list"]));
    assert_eq!(list.matches("synthetic-0").count(), 2, "{list}");
    let show = stdout(hwcal(d).args(["db", "show", "1", "--detail"]));
    assert!(show.contains("caches:") && show.contains("io"), "{show}");

    // The stored profile re-renders: an HTML report of it and of both.
    let html = d.join("r.html");
    hwcal(d)
        .args(["report", "1", "--html"])
        .arg(&html)
        .assert()
        .success();
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>") && page.contains("synthetic-0"));
    hwcal(d)
        .args(["report", "1", "2", "--html"])
        .arg(&html)
        .assert()
        .success();

    // And the offline analysis of the written profile agrees with the run.
    let again = stdout(
        hwcal(d)
            .arg("analyze")
            .arg(d.join("a.json"))
            .args(["--json", "-"]),
    );
    let r = hwcal_model::parse_profile(again.as_bytes()).unwrap();
    assert_eq!((&r.caches, &r.tlbs), (&p.caches, &p.tlbs));
}

/// `run --repeat N --warmup W`: N runs stored as one batch, the
/// repeatability table printed; two batches of the same (synthetic, so
/// identical) machine compared by `db compare batch:A batch:B` show no
/// significant change, with the runs behind each median and the p-value.
#[test]
fn repeated_runs_form_a_batch_and_batches_compare_by_rank_test() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut batches = Vec::new();
    for _ in 0..2 {
        let mut c = hwcal(d);
        c.args([
            "run",
            "--quiet",
            "--no-pin",
            "--only",
            "clock,cache,ctx",
            "--repeat",
            "3",
            "--warmup",
            "1",
        ]);
        let text = stdout(&mut c);
        assert!(
            text.contains("median") && text.contains("seconds per run"),
            "{text}"
        );
        let line = text
            .lines()
            .find(|l| l.starts_with("batch "))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(line.contains("stored as runs"), "{line}");
        batches.push(
            line.split_whitespace()
                .nth(1)
                .unwrap()
                .trim_end_matches(':')
                .to_string(),
        );
        // Batch ids are the start second and the process: distinct processes.
    }
    assert_ne!(batches[0], batches[1]);
    let list = stdout(hwcal(d).args(["db", "list"]));
    assert_eq!(
        list.lines().filter(|l| l.contains(" run ")).count(),
        6,
        "warm-ups are not stored: {list}"
    );
    let table = stdout(hwcal(d).args(["db", "show"]).arg(format!("batch:{}", batches[0])));
    assert!(
        table.contains(": runs 1-3") && table.contains("median"),
        "{table}"
    );
    let show = stdout(hwcal(d).args(["db", "show", "latest"]));
    assert!(
        show.contains(&format!("run 3 of 3 of batch {}", batches[1])),
        "{show}"
    );
    let out = stdout(
        hwcal(d)
            .args(["db", "compare", "--json"])
            .arg(format!("batch:{}", batches[0]))
            .arg(format!("batch:{}", batches[1])),
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = v["rows"].as_array().unwrap();
    let memory = rows
        .iter()
        .find(|r| r["figure"] == "memory latency" && r["unit"] == "ns")
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(memory["runs"], serde_json::json!([3, 3]));
    assert!(memory["p_value"].as_f64().unwrap() > 0.05);
    assert!(
        rows.iter()
            .all(|r| r["verdict"] != "better" && r["verdict"] != "worse"),
        "the same machine is neither better nor worse: {out}"
    );
    // A batch id that names nothing is the user's mistake.
    hwcal(d)
        .args(["db", "compare", "batch:ffff", "1"])
        .assert()
        .code(2);
}
