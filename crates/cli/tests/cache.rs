//! `hwcal cache` and `hwcal tlb`: usage errors, and real-hardware smoke
//! tests with small bounds that assert structure and broad physical bounds
//! only (never tight timings: the suite runs on a noisy 2-vCPU VM).

mod common;

use common::hwcal;
use predicates::prelude::*;
use serde_json::Value;

fn json_of(args: &[&str]) -> Value {
    let out = hwcal()
        .args(args)
        .args(["--json", "-", "--quiet"])
        .assert()
        .success();
    common::profile_json(&out.get_output().stdout).expect("valid JSON on stdout")
}

#[test]
fn bad_inputs_are_usage_errors() {
    for args in [
        &["cache", "--max-size", "lots"][..],
        &["cache", "--max-size", "1K"],
        &["cache", "--max-size", "999999G"],
        &["cache", "--gnuplot", "/nonexistent-dir/m"],
        &["tlb", "--max-pages", "3"],
        &["tlb", "--max-huge-pages", "many"],
    ] {
        hwcal()
            .args(args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("panicked").not());
    }
}

#[test]
fn run_lists_cache_and_tlb() {
    hwcal()
        .args(["run", "--list"])
        .assert()
        .success()
        .stdout(predicate::str::contains("cache"))
        .stdout(predicate::str::contains("tlb"));
}

#[test]
fn cache_smoke_with_small_bound_and_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("m").to_string_lossy().into_owned();
    let svg = dir.path().join("svg");
    let json = dir.path().join("p.json");
    hwcal()
        .args([
            "cache",
            "--max-size",
            "1M",
            "--quiet",
            "--gnuplot",
            &prefix,
            "--plot",
        ])
        .arg(&svg)
        .arg("--json")
        .arg(&json)
        .assert()
        .success()
        .stdout(predicate::str::contains("caches:"));
    let p: Value = common::profile_json(&std::fs::read(&json).unwrap()).unwrap();
    let levels = p["caches"].as_array().expect("caches section");
    assert!(!levels.is_empty());
    let l1 = &levels[0];
    assert_eq!(l1["level"], 1);
    let ns = l1["latency_ns"].as_f64().unwrap();
    assert!(ns > 0.1 && ns < 100.0, "L1 latency {ns}");
    assert!(l1["size_bytes"].as_u64().unwrap() >= 4096);
    // Raw curves are kept, within the bound.
    let raw = p["raw"].as_array().unwrap();
    let lat = raw
        .iter()
        .find(|c| c["id"] == "cache.latency")
        .expect("latency curve");
    let pts = lat["points"].as_array().unwrap();
    assert!(pts.len() >= 5);
    assert!(pts
        .iter()
        .all(|q| q["x"].as_f64().unwrap() <= 1048576.0 && q["y"].as_f64().unwrap() > 0.0));
    // Calibrator files and SVG plots.
    for suffix in ["cache-miss-latency", "cache-replace-time"] {
        for ext in ["data", "gp"] {
            let f = format!("{prefix}.{suffix}.{ext}");
            assert!(std::fs::metadata(&f).map(|m| m.len() > 0).unwrap_or(false), "{f}");
        }
    }
    let s = std::fs::read_to_string(svg.join("cache-latency.svg")).unwrap();
    assert!(s.starts_with("<svg") || s.contains("<svg"));

    // `hwcal analyze` redoes the analysis offline and finds the same levels.
    let out = hwcal()
        .arg("analyze")
        .arg(&json)
        .args(["--json", "-"])
        .assert()
        .success();
    let q: Value = common::profile_json(&out.get_output().stdout).unwrap();
    // Same levels; figures equal up to the last bits JSON's decimal floats
    // can change.
    let (a, b) = (p["caches"].as_array().unwrap(), q["caches"].as_array().unwrap());
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert_eq!(x["level"], y["level"]);
        assert_eq!(x["line_bytes"], y["line_bytes"]);
        for k in ["size_bytes", "latency_ns"] {
            let (u, v) = (x[k].as_f64().unwrap(), y[k].as_f64().unwrap());
            assert!((u - v).abs() <= 1e-6 * u.abs().max(1.0), "{k}: {u} vs {v}");
        }
    }
}

#[test]
fn tlb_smoke_with_small_bound() {
    if common::emulated("tlb_smoke_with_small_bound (timings)") {
        return;
    }
    let p = json_of(&["tlb", "--max-pages", "256", "--max-huge-pages", "0"]);
    assert!(p["tlbs"].is_array());
    let raw = p["raw"].as_array().unwrap();
    // The dense baseline always; the huge-page one only where the TLB
    // sees huge pages.
    for id in ["tlb.4k", "tlb.dense", "tlb.baseline"] {
        let Some(c) = raw.iter().find(|c| c["id"] == id) else {
            assert_eq!(id, "tlb.baseline", "{id} missing");
            continue;
        };
        let pts = c["points"].as_array().unwrap();
        assert!(pts.len() >= 5);
        for q in pts {
            let (x, y) = (q["x"].as_f64().unwrap(), q["y"].as_f64().unwrap());
            assert!((8.0..=256.0).contains(&x) && y > 0.1 && y < 1000.0, "{x} {y}");
        }
    }
    for l in p["tlbs"].as_array().unwrap() {
        assert!(l["entries"].as_u64().unwrap() >= 8);
        assert_eq!(l["page_bytes"], 4096);
        let base = l["baseline"].as_str().unwrap();
        assert!(base == "dense" || base == "huge_pages", "{base}");
    }
}

/// `validate cache --keep DIR` writes each run's profile, which `validate
/// profiles` reads back; a run file already there is refused before
/// anything is measured, and --keep belongs to `validate cache` only.
#[test]
fn validate_cache_keeps_each_run_and_never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let keep = dir.path().join("runs");
    let keep_s = keep.to_string_lossy().into_owned();
    for what in ["clock", "profiles"] {
        hwcal()
            .args(["validate", what, "--keep", &keep_s])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("--keep"));
    }
    assert!(!keep.exists());
    // An old run in the way: refused at once, left as it was.
    std::fs::create_dir(&keep).unwrap();
    let old = keep.join("run-01.json");
    std::fs::write(&old, "old").unwrap();
    hwcal()
        .args(["validate", "cache", "--runs", "1", "--keep", &keep_s, "-q"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("never overwritten"));
    assert_eq!(std::fs::read_to_string(&old).unwrap(), "old");
    if common::emulated("validate cache --keep (a whole cache and TLB run)") {
        return;
    }
    std::fs::remove_file(&old).unwrap();
    hwcal()
        .args(["validate", "cache", "--runs", "2", "--keep", &keep_s, "-q"])
        .timeout(std::time::Duration::from_secs(300))
        .assert()
        .success()
        .stdout(predicate::str::contains("cache levels found"));
    let runs: Vec<String> = ["run-01.json", "run-02.json"]
        .iter()
        .map(|f| keep.join(f).to_string_lossy().into_owned())
        .collect();
    for r in &runs {
        let p = common::profile_json(&std::fs::read(r).unwrap()).expect("a profile");
        assert!(p["caches"].as_array().is_some_and(|c| !c.is_empty()), "{r}");
    }
    hwcal()
        .args(["validate", "profiles", &runs[0], &runs[1]])
        .assert()
        .success()
        .stdout(predicate::str::contains("noisy verdicts"));
}
