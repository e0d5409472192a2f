//! The Calibrator's gnuplot files render with gnuplot after being moved,
//! with their data, to another directory: the scripts name their data and
//! output by file name only. Skipped, with a message, where gnuplot is not
//! installed (CI installs `gnuplot-nox`).

use hwcal_model::{Profile, RawCurve};
use hwcal_report::{Exporter, GnuplotExporter};
use std::path::PathBuf;
use std::process::Command;

fn gnuplot() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("HWCAL_GNUPLOT") {
        return Some(PathBuf::from(p)).filter(|p| p.exists());
    }
    ["/usr/bin/gnuplot", "/usr/local/bin/gnuplot"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

/// A recorded cache run with a recorded TLB run's curves and levels added:
/// what `hwcal run` writes, so all six files are due.
fn recorded_profile() -> Profile {
    let raw = |text: &str| -> Vec<RawCurve> {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        serde_json::from_value(v["raw"].clone()).unwrap()
    };
    let mut p = Profile {
        raw: raw(include_str!("../../analysis/tests/data/cache-quiet.json")),
        ..Default::default()
    };
    p.raw.extend(
        raw(include_str!("../../analysis/tests/data/tlb-1.json"))
            .into_iter()
            .filter(|c| c.id.starts_with("tlb.")),
    );
    p.caches = hwcal_analysis::cache::analyze(&p).map(|a| a.levels);
    p.tlbs = hwcal_analysis::tlb::analyze(&p).map(|a| a.levels);
    p
}

#[test]
fn six_files_render_after_being_moved() {
    let written = tempfile::tempdir().unwrap();
    let prefix = written.path().join("m");
    let files = GnuplotExporter {
        prefix: prefix.to_str().unwrap().to_string(),
    }
    .files(&recorded_profile())
    .unwrap();
    let mut names: Vec<String> = files
        .iter()
        .map(|f| {
            PathBuf::from(&f.name)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "m.TLB-miss-latency.data",
            "m.TLB-miss-latency.gp",
            "m.cache-miss-latency.data",
            "m.cache-miss-latency.gp",
            "m.cache-replace-time.data",
            "m.cache-replace-time.gp",
        ]
    );
    // Moved: written under one directory, rendered in another.
    let moved = tempfile::tempdir().unwrap();
    for (f, name) in files.iter().zip(files.iter().map(|f| {
        PathBuf::from(&f.name)
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    })) {
        std::fs::write(moved.path().join(name), &f.bytes).unwrap();
    }
    for f in files.iter().filter(|f| f.name.ends_with(".gp")) {
        let text = String::from_utf8(f.bytes.clone()).unwrap();
        assert!(
            !text.contains(written.path().to_str().unwrap()),
            "{}: no absolute path",
            f.name
        );
        assert!(text.starts_with("# Terminal") && text.contains("set terminal svg"));
    }
    let Some(bin) = gnuplot() else {
        println!("SKIPPED: gnuplot not found (apt-get install gnuplot-nox, or set HWCAL_GNUPLOT)");
        return;
    };
    // Rendered from another directory: each script works beside itself.
    let elsewhere = tempfile::tempdir().unwrap();
    for what in ["cache-miss-latency", "cache-replace-time", "TLB-miss-latency"] {
        let out = Command::new(&bin)
            .arg(moved.path().join(format!("m.{what}.gp")))
            .current_dir(elsewhere.path())
            .output()
            .expect("run gnuplot");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "gnuplot m.{what}.gp: {stderr}");
        assert!(
            !stderr.contains("Cannot") && !stderr.contains("No data") && !stderr.contains("empty"),
            "gnuplot m.{what}.gp: {stderr}"
        );
        let svg = std::fs::read_to_string(moved.path().join(format!("m.{what}.svg")))
            .unwrap_or_else(|e| panic!("m.{what}.svg: {e}"));
        assert!(
            svg.contains("<svg") && svg.contains("<path"),
            "m.{what}.svg drawn"
        );
    }
    assert_eq!(
        std::fs::read_dir(elsewhere.path()).unwrap().count(),
        0,
        "nothing written where gnuplot ran"
    );
    // Its data gone, a script fails (exit 1, saying why) and leaves no
    // empty plot behind.
    let what = "cache-replace-time";
    std::fs::remove_file(moved.path().join(format!("m.{what}.data"))).unwrap();
    std::fs::remove_file(moved.path().join(format!("m.{what}.svg"))).unwrap();
    let out = Command::new(&bin)
        .arg(format!("m.{what}.gp"))
        .current_dir(moved.path())
        .output()
        .expect("run gnuplot");
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("not found beside this script"), "{said}");
    assert!(
        !moved.path().join(format!("m.{what}.svg")).exists(),
        "no empty plot left"
    );
}
