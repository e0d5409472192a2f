//! `hwcal os` and `hwcal c2c`: each a probe's own files plus a registry
//! line; here their commands run end to end (the forking OS operations in
//! this test's own process, away from the probes crate's tests), with broad
//! physical bounds only.

mod common;
use common::{hwcal, profile_json};
use serde_json::Value;

fn figure(p: &Value, id: &str) -> f64 {
    p["figures"]
        .as_array()
        .and_then(|f| f.iter().find(|f| f["id"] == id))
        .and_then(|f| f["value"].as_f64())
        .unwrap_or_else(|| panic!("figure {id} missing in {p}"))
}

#[test]
fn os_latencies_are_named_figures_within_broad_bounds() {
    let out = hwcal()
        .args(["os", "--batches", "5", "--json", "-"])
        .assert()
        .success();
    let p = profile_json(&out.get_output().stdout).unwrap();
    for id in [
        "null",
        "read",
        "stat",
        "open_close",
        "sig_catch",
        "fork_exit",
        "fork_exec",
        "page_fault",
        "page_fault_file",
        "pipe",
        "unix",
    ] {
        let us = figure(&p, &format!("os.{id}"));
        // More than a nanosecond, less than 100 ms (emulation included).
        assert!(us > 1e-3 && us < 1e5, "os.{id} = {us} µs");
    }
    // A system call costs less than a process.
    assert!(figure(&p, "os.null") < figure(&p, "os.fork_exit"));
    // A pipe moves more than 1 MB/s and less than 1 TB/s.
    let bw = figure(&p, "os.pipe_bw");
    assert!(bw > 1e6 && bw < 1e12, "os.pipe_bw = {bw} B/s");
    hwcal().args(["os", "--only", "nosuch"]).assert().code(2);
}

#[test]
fn c2c_measures_every_pair_or_says_there_is_none() {
    let out = hwcal()
        .args(["c2c", "--batches", "5", "--json", "-"])
        .assert()
        .success();
    let p = profile_json(&out.get_output().stdout).unwrap();
    let cpus = hwcal_harness::pin::allowed_cpus().len();
    if cpus >= 2 {
        let ns = figure(&p, "c2c.fastest");
        assert!(ns > 1.0 && ns < 1e6, "{ns}");
        // One pair (two CPUs) is one figure; more pairs add the slowest.
        if cpus > 2 {
            assert!(figure(&p, "c2c.slowest") >= ns);
        } else {
            assert!(!p.to_string().contains("\"c2c.slowest\""), "{p}");
        }
    }
    hwcal().args(["c2c", "--cpus", "0,99999"]).assert().code(2);
    hwcal().args(["c2c", "--cpus", "x"]).assert().code(2);
}

/// Under `taskset -c 0` (issue 41, medium 5): `hwcal c2c` is a usage error
/// that names the one CPU allowed, not an exit 0 with nothing said, and a
/// run measures no pair outside the allowed CPUs — its profile has no
/// core-to-core figure and says why. Skipped where `taskset` is missing or
/// the machine has one CPU.
#[test]
fn c2c_keeps_to_the_cpus_it_is_allowed() {
    let online = hwcal_harness::pin::allowed_cpus();
    let have_taskset = std::process::Command::new("taskset").arg("-V").output().is_ok();
    if online.len() < 2 || !have_taskset || common::emulated("c2c_keeps_to_the_cpus_it_is_allowed") {
        eprintln!("skipped: needs taskset and two CPUs");
        return;
    }
    let bin = common::hwcal_process();
    let cpu = online[0].to_string();
    let alone = std::process::Command::new("taskset")
        .args(["-c", &cpu])
        .arg(bin.get_program())
        .arg("c2c")
        .output()
        .unwrap();
    assert_eq!(alone.status.code(), Some(2), "{alone:?}");
    assert!(
        String::from_utf8_lossy(&alone.stderr).contains("two CPUs"),
        "{alone:?}"
    );
    let run = std::process::Command::new("taskset")
        .args(["-c", &cpu])
        .arg(bin.get_program())
        .args(["run", "--only", "c2c", "--no-save", "--json", "-"])
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    let p = profile_json(&run.stdout).unwrap();
    let ids: Vec<&str> = p["figures"]
        .as_array()
        .map(|f| f.iter().filter_map(|f| f["id"].as_str()).collect())
        .unwrap_or_default();
    assert!(ids.iter().all(|id| !id.starts_with("c2c.")), "{ids:?}");
    let notes = p["notes"].as_array().cloned().unwrap_or_default();
    assert!(notes.iter().any(|n| n["code"] == "c2c.one_cpu"), "{notes:?}");
}
