//! `hwcal ctx` (lat_ctx): output structure, JSON fields, placements, the
//! thread variant, usage errors, and the `hwcal run` section. Real-hardware
//! runs assert only structure and broad physical bounds, never timings.

mod common;

use common::hwcal;
use predicates::prelude::*;
use serde_json::Value;

/// Few, short samples: these tests check structure, not figures.
const QUICK: [&str; 5] = ["-N", "9", "-W", "1", "-q"];

fn ctx_json(args: &[&str]) -> Value {
    let out = hwcal()
        .arg("ctx")
        .args(QUICK)
        .args(args)
        .args(["--json", "-"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    common::profile_json(&out).expect("ctx --json - prints a profile")
}

/// A switch time: finite, never negative, under 100 ms even on a loaded VM.
fn plausible_us(v: &Value) -> f64 {
    let x = v.as_f64().expect("a number");
    assert!(x.is_finite() && (0.0..1e5).contains(&x), "{x}");
    x
}

fn check_points(points: &Value, nprocs: &[u64]) {
    let pts = points.as_array().unwrap();
    assert_eq!(pts.len(), nprocs.len());
    for (p, &n) in pts.iter().zip(nprocs) {
        assert_eq!(p["nprocs"], n);
        let min = plausible_us(&p["us_min"]);
        let med = plausible_us(&p["us_median"]);
        let max = plausible_us(&p["us_max"]);
        assert!(min <= med && med <= max, "{p}");
        assert!(p["us_mad"].as_f64().unwrap() >= 0.0);
        assert!(p["overhead_exceeds"].is_boolean());
        assert!(matches!(p["verdict"].as_str(), Some("ok" | "noisy")));
        if let Some(sw) = p["switches_per_hop"].as_f64() {
            assert!(sw > 0.1 && sw < 20.0, "{p}");
            let per = plausible_us(&p["us_per_switch"]);
            assert!((per * sw - med).abs() <= 1e-6 * med.max(1.0), "{p}");
        }
    }
}

/// With the whole ring on one CPU, a member must leave the CPU at least
/// once per trip for the next one to run: the kernel's counters must show
/// at least one switch per hop (a little slack for the window's edges).
fn check_one_cpu_switches(points: &Value) {
    for p in points.as_array().unwrap() {
        let sw = p["switches_per_hop"]
            .as_f64()
            .unwrap_or_else(|| panic!("switch counts missing: {p}"));
        assert!(sw >= 0.95, "{p}");
        let pre = p["preempted_per_hop"].as_f64().unwrap();
        assert!((0.0..=sw).contains(&pre), "{p}");
    }
}

#[test]
fn xgraph_output_like_lat_ctx() {
    let out = hwcal()
        .args(["ctx", "-s", "0", "2", "4"])
        .args(QUICK)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines[0].starts_with("\"size=0k ovr="), "{text}");
    assert!(lines[0].contains("placement=same"), "{text}");
    for (line, n) in lines[1..].iter().zip(["2", "4"]) {
        let mut f = line.split_whitespace();
        assert_eq!(f.next(), Some(n));
        let us: f64 = f.next().unwrap().parse().unwrap();
        assert!((0.0..1e5).contains(&us), "{line}");
        assert_eq!(f.next(), None);
    }
}

#[test]
fn several_sizes_give_one_block_each() {
    let out = hwcal()
        .args(["ctx", "-s", "0,4", "-s", "16", "2"])
        .args(QUICK)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let titles: Vec<&str> = text.lines().filter(|l| l.starts_with('"')).collect();
    assert_eq!(titles.len(), 3, "{text}");
    assert!(titles[1].starts_with("\"size=4k "));
    assert!(titles[2].starts_with("\"size=16k "));
}

#[test]
fn json_profile_fields() {
    let v = ctx_json(&["-s", "0", "-s", "8", "2", "3"]);
    let c = &v["context_switch"];
    assert_eq!(c["placement"], "same");
    assert_eq!(c["kind"], "processes");
    assert_eq!(c["size_kb"], 0);
    assert_eq!(c["parallel"], 1);
    assert_eq!(c["repetitions"], 9);
    assert_eq!(c["cpus"].as_array().unwrap().len(), 1);
    plausible_us(&c["overhead_us"]);
    check_points(&c["points"], &[2, 3]);
    check_one_cpu_switches(&c["points"]);
    let sizes = c["sizes"].as_array().unwrap();
    assert_eq!(sizes.len(), 1);
    assert_eq!(sizes[0]["size_kb"], 8);
    check_points(&sizes[0]["points"], &[2, 3]);
    // Raw data kept: per-hop samples and the overhead samples of each size.
    let ids: Vec<&str> = v["raw"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    for id in [
        "ctx.s0k",
        "ctx.s0k.overhead",
        "ctx.s0k.switches",
        "ctx.s8k",
        "ctx.s8k.overhead",
        "ctx.s8k.switches",
    ] {
        assert!(ids.contains(&id), "{ids:?}");
    }
    assert_eq!(v["raw"][0]["points"][0]["samples"].as_array().unwrap().len(), 9);
}

#[test]
fn placements_and_threads() {
    let v = ctx_json(&["--cpus", "spread", "2"]);
    assert_eq!(v["context_switch"]["placement"], "spread");
    check_points(&v["context_switch"]["points"], &[2]);
    let v = ctx_json(&["--cpus", "none", "2"]);
    assert_eq!(v["context_switch"]["placement"], "none");
    assert!(v["context_switch"]["cpus"].as_array().unwrap().is_empty());
    let v = ctx_json(&["--no-pin", "2"]);
    assert_eq!(v["context_switch"]["placement"], "none");
    let v = ctx_json(&["--threads", "2", "4"]);
    assert_eq!(v["context_switch"]["kind"], "threads");
    check_points(&v["context_switch"]["points"], &[2, 4]);
    check_one_cpu_switches(&v["context_switch"]["points"]);
    let v = ctx_json(&["-P", "2", "2"]);
    assert_eq!(v["context_switch"]["parallel"], 2);
    check_points(&v["context_switch"]["points"], &[2]);
}

#[test]
fn summary_table() {
    hwcal()
        .args(["ctx", "--summary", "2"])
        .args(QUICK)
        .assert()
        .success()
        .stdout(predicate::str::contains("context switch"))
        .stdout(predicate::str::contains("median"))
        .stdout(predicate::str::contains("placement same"));
}

#[test]
fn a_64_process_ring_works() {
    let v = ctx_json(&["64"]);
    check_points(&v["context_switch"]["points"], &[64]);
}

#[test]
fn bad_input_is_a_usage_error() {
    let cases: &[&[&str]] = &[
        &["ctx"],
        &["ctx", "1"],
        &["ctx", "0"],
        &["ctx", "2", "-3"],
        &["ctx", "100000"],
        &["ctx", "-s", "-1", "2"],
        &["ctx", "-s", "1000000000", "2"],
        &["ctx", "-P", "0", "2"],
        &["ctx", "-N", "0", "2"],
        &["ctx", "--cpus", "everywhere", "2"],
        &["ctx", "--cpu", "99999", "2"],
        &["ctx", "--no-pin", "--cpus", "same", "2"],
        &["ctx", "--cpus", "none", "--cpu", "0", "2"],
    ];
    for args in cases {
        hwcal()
            .args(*args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("panicked").not());
    }
    hwcal()
        .args(["ctx", "1"])
        .assert()
        .stderr(predicate::str::contains("at least 2"));
    hwcal()
        .args(["ctx", "-s", "1000000000", "2"])
        .assert()
        .stderr(predicate::str::contains("memory"));
}

#[test]
fn run_has_a_short_ctx_section_and_analyze_redoes_it() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("run.json");
    hwcal()
        .args([
            "run",
            "--only",
            "ctx",
            "-q",
            "--no-save",
            "--json",
            f.to_str().unwrap(),
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("\nctx       "));
    let v: Value = common::profile_json(&std::fs::read(&f).unwrap()).unwrap();
    let c = &v["context_switch"];
    assert_eq!(c["size_kb"], 0);
    check_points(&c["points"], &[2, 8]);
    assert_eq!(c["sizes"][0]["size_kb"], 64);
    check_points(&c["sizes"][0]["points"], &[2, 8]);
    let out = hwcal()
        .args(["analyze", f.to_str().unwrap(), "--json", "-"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let w: Value = common::profile_json(&out).unwrap();
    assert_close(&w["context_switch"], &v["context_switch"]);
}

/// Equal up to float rounding (serde_json's default float parser may differ
/// from the printed value in the last bit).
fn assert_close(a: &Value, b: &Value) {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            assert!(
                (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0),
                "{x} vs {y}"
            );
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len());
            x.iter().zip(y).for_each(|(x, y)| assert_close(x, y));
        }
        (Value::Object(x), Value::Object(y)) => {
            assert_eq!(x.keys().collect::<Vec<_>>(), y.keys().collect::<Vec<_>>());
            x.iter().for_each(|(k, x)| assert_close(x, &y[k]));
        }
        _ => assert_eq!(a, b),
    }
}
