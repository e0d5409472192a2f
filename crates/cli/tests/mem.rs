//! `hwcal mem`: structure of the output and broad physical bounds on small
//! buffers and short runs (never tight timings), plus bad input → exit 2.

mod common;

use common::hwcal;
use predicates::prelude::*;
use serde_json::Value;

fn json(args: &[&str]) -> Value {
    let out = hwcal()
        .arg("mem")
        .args(args)
        .args(["--json", "-"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "hwcal mem {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    common::profile_json(&out.stdout).expect("JSON profile on stdout")
}

/// The profile after a round trip through `hwcal analyze`.
fn reanalyzed(p: &Value) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.json");
    std::fs::write(&file, serde_json::to_vec(p).unwrap()).unwrap();
    let out = hwcal()
        .arg("analyze")
        .arg(&file)
        .args(["--json", "-"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    common::profile_json(&out.stdout).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

#[test]
fn random_chase_has_micbench_figures() {
    let p = json(&["-R", "-s", "64K", "-t", "0.2"]);
    let m = &p["mem"];
    assert_eq!(m["access_pattern"], "random");
    assert_eq!(m["threads"], 1);
    assert_eq!(m["size_bytes"], 64 * 1024);
    assert!(m["total_ops"].as_u64().unwrap() > 1000);
    // A 64 KiB chase is cache-resident: between 0.1 ns and 1 µs per load.
    let ns = f(&m["ns_per_op"]);
    assert!(ns > 0.1 && ns < 1000.0, "{ns}");
    // ops_per_sec and ns_per_op describe the same single thread.
    assert!((f(&m["ops_per_sec"]) * ns / 1e9 - 1.0).abs() < 0.01);
    // Core cycles from a clock between 100 MHz and 10 GHz.
    let clk = f(&m["clk_per_op"]);
    assert!(clk / ns > 0.1 && clk / ns < 10.0, "{clk} cycles for {ns} ns");
    if let Some(tsc) = m["tsc_per_op"].as_f64() {
        assert!(tsc > 0.0);
    }
    assert_eq!(m["per_thread"].as_array().unwrap().len(), 1);
    assert!(m["slice_ns_per_op"]["n"].as_u64().unwrap() >= 1);
    assert!(p["raw"].as_array().unwrap().iter().any(|c| c["id"] == "mem.t0"));
    // Setup and run stay within a broad multiple of the requested time.
    assert!(f(&m["total_exec_time_s"]) < 0.2 + 10.0);
    assert!(f(&m["exec_time_s"]) >= 0.15);
    // Offline re-analysis of the raw slices gives the same figures.
    let q = reanalyzed(&p);
    for k in ["ns_per_op", "clk_per_op", "ops_per_sec", "exec_time_s"] {
        assert!(close(f(&q["mem"][k]), f(&m[k])), "{k}");
    }
}

#[test]
fn sequential_read_two_threads_shared_buffer() {
    let p = json(&["-m", "2", "-s", "2M", "-t", "0.2"]);
    let m = &p["mem"];
    assert_eq!(m["access_pattern"], "sequential");
    assert_eq!(m["op"], "read");
    assert_eq!(m["threads"], 2);
    assert_eq!(m["local"], false);
    assert_eq!(m["per_thread"].as_array().unwrap().len(), 2);
    let bw = &p["bandwidth"];
    let r = f(&bw["read_bytes_per_sec"]);
    // Between 100 MB/s and 10 TB/s.
    assert!(r > 1e8 && r < 1e13, "{r}");
    assert_eq!(bw["threads"], 2);
    assert!(bw["write_bytes_per_sec"].is_null());
}

#[test]
fn write_and_copy_local_buffers() {
    for (op, key) in [("write", "write_bytes_per_sec"), ("copy", "copy_bytes_per_sec")] {
        for nt in [false, true] {
            let mut args = vec!["--op", op, "-L", "-m", "2", "-s", "1M", "-t", "0.1"];
            if nt {
                args.push("--nontemporal");
            }
            let p = json(&args);
            assert_eq!(p["mem"]["local"], true);
            assert_eq!(p["mem"]["nontemporal"], nt);
            let v = f(&p["bandwidth"][key]);
            assert!(v > 1e8 && v < 1e13, "{op} nt={nt}: {v}");
            assert_eq!(
                p["bandwidth"]["stores"],
                if nt { "non-temporal" } else { "regular" }
            );
        }
    }
}

#[test]
fn text_output_uses_micbench_keys_and_states_the_clocks() {
    if common::emulated("text_output_uses_micbench_keys_and_states_the_clocks (NUMA policy)") {
        return;
    }
    // In words by default; micbench's keys on request.
    hwcal()
        .args(["mem", "-R", "-s", "32K", "-t", "0.1", "-a", "0:c0:0"])
        .assert()
        .success()
        .stdout(predicate::str::contains("latency "))
        .stdout(predicate::str::contains("access_pattern").not());
    hwcal()
        .args([
            "mem",
            "-R",
            "-s",
            "32K",
            "-t",
            "0.1",
            "-a",
            "0:c0:0",
            "--micbench",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("access_pattern  random"))
        .stdout(predicate::str::contains("multiplicity    1"))
        .stdout(predicate::str::contains("use_hugepages"))
        .stdout(predicate::str::contains("clk_per_op"))
        .stdout(predicate::str::contains("tsc_per_op"))
        .stdout(predicate::str::contains("ns_per_op"))
        .stdout(predicate::str::contains("core cycles"));
}

#[test]
fn parallel_chains_shorten_time_per_load() {
    let p = json(&["-R", "--chains", "4", "-m", "2", "-s", "4M", "-t", "0.2"]);
    let m = &p["mem"];
    assert_eq!(m["chains"], 4);
    assert_eq!(m["op"], "chains");
    assert!(m["total_ops"].as_u64().unwrap().is_multiple_of(4));
    assert!(f(&m["ns_per_op"]) > 0.0);
}

#[test]
fn huge_pages_are_reported_as_verified() {
    let p = json(&["-R", "--hugepages", "-s", "8M", "-t", "0.1"]);
    let m = &p["mem"];
    let frac = f(&m["huge_fraction"]);
    assert!((0.0..=1.0).contains(&frac));
    let huge = m["use_hugepages"].as_bool().unwrap();
    // Huge pages only where smaps has them, and only where the TLB sees
    // them too (not on a guest whose host backs it with 4 KiB pages).
    assert!(!huge || frac >= 0.9);
    assert_eq!(m["page_size_bytes"], if huge { 2 << 20 } else { 4096 });
}

#[test]
fn large_random_on_small_pages_explains_tlb_misses() {
    let out = hwcal()
        .args(["mem", "-R", "-s", "32M", "-t", "0.1"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("TLB") && s.contains("--hugepages"), "{s}");
}

#[test]
fn sweep_covers_ops_thread_counts_and_loaded_latency() {
    let p = json(&["--sweep", "-m", "2", "-s", "1M", "-t", "0.6"]);
    let bw = &p["bandwidth"];
    let scaling = bw["scaling"].as_array().unwrap();
    assert_eq!(scaling.len(), 6);
    for op in ["read", "write", "copy"] {
        assert!(scaling.iter().any(|s| s["op"] == op && s["threads"] == 2));
    }
    // Points are short (-t is shared by 13 of them) and tests run in
    // parallel: only positivity here, no bandwidth bound.
    assert!(scaling.iter().all(|s| f(&s["bytes_per_sec"]) > 0.0));
    let ll = bw["loaded_latency"].as_array().unwrap();
    assert_eq!(ll.len(), 2);
    assert_eq!(ll[0]["streaming_threads"], 0);
    assert!(ll.iter().all(|l| f(&l["latency_ns"]) > 0.1));
    assert!(f(&ll[1]["stream_bytes_per_sec"]) > 0.0);
    assert_eq!(p["mem"]["access_pattern"], "random");
    let mlp = bw["mlp"].as_array().unwrap();
    assert_eq!(mlp.len(), 5);
    assert_eq!(mlp[4]["chains"], 16);
    assert!(mlp
        .iter()
        .all(|m| f(&m["ns_per_load"]) > 0.0 && f(&m["speedup"]) > 0.0));
    let q = reanalyzed(&p);
    assert!(close(
        f(&q["bandwidth"]["mlp"][3]["speedup"]),
        f(&mlp[3]["speedup"])
    ));
    for (a, b) in q["bandwidth"]["scaling"].as_array().unwrap().iter().zip(scaling) {
        assert!(close(f(&a["bytes_per_sec"]), f(&b["bytes_per_sec"])));
    }
    let ll2 = q["bandwidth"]["loaded_latency"].as_array().unwrap();
    assert!(close(f(&ll2[1]["latency_ns"]), f(&ll[1]["latency_ns"])));
    assert!(close(
        f(&q["bandwidth"]["copy_bytes_per_sec"]),
        f(&bw["copy_bytes_per_sec"])
    ));
}

#[test]
fn numa_matrix_and_one_node_message() {
    if common::emulated("numa_matrix_and_one_node_message (NUMA policy)") {
        return;
    }
    let p = json(&["--numa-matrix", "-s", "1M", "-t", "0.1"]);
    let m = &p["mem"];
    let cells = m["numa_matrix"].as_array().unwrap();
    assert!(!cells.is_empty());
    assert!(cells.iter().all(|c| f(&c["ns_per_op"]) > 0.1));
    let nodes = m["numa_nodes"].as_u64().unwrap();
    let notes = p["notes"].to_string();
    if nodes <= 1 {
        assert_eq!(cells.len(), 1);
        assert!(
            notes.contains("remote-memory latency cannot be measured"),
            "{notes}"
        );
    } else {
        assert!(cells.len() as u64 >= nodes);
    }
}

#[test]
fn run_includes_a_memory_section() {
    let out = hwcal()
        .args(["run", "--only", "mem", "--no-save", "--json", "-"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let p: Value = common::profile_json(&out.stdout).unwrap();
    let lat = f(&p["mem"]["ns_per_op"]);
    assert!(lat > 1.0 && lat < 10_000.0, "{lat}");
    let bw = p["bandwidth"]["scaling"].as_array().unwrap();
    assert!(!bw.is_empty() && bw[0]["threads"] == 1);
    assert!(f(&p["bandwidth"]["read_bytes_per_sec"]) > 1e8);
    // The raw slices are kept and re-analysis reproduces the figures.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.json");
    std::fs::write(&file, &out.stdout).unwrap();
    let again = hwcal()
        .arg("analyze")
        .arg(&file)
        .args(["--json", "-"])
        .output()
        .unwrap();
    assert!(again.status.success());
    let q: Value = common::profile_json(&again.stdout).unwrap();
    let lat2 = f(&q["mem"]["ns_per_op"]);
    assert!((lat2 - lat).abs() / lat < 1e-6, "{lat} vs {lat2}");
}

#[test]
fn bad_input_is_a_one_line_usage_error() {
    let cases: &[(&[&str], &str)] = &[
        (&["-m", "0"], "at least one thread"),
        (&["-a", "0:c99999:0"], "CPU 99999"),
        (&["-a", "0:c0:99"], "NUMA node 99"),
        (&["-a", "zero"], "TID:cCPU:NODE"),
        (&["-a", "0:0:0"], "TID:cCPU:NODE"),
        (&["-m", "1", "-a", "1:c0:0"], "thread 1 does not exist"),
        (&["-m", "2", "-a", "0:c0:0", "-a", "0:c0:0"], "given twice"),
        (&["-s", "100T"], "available"),
        (&["-s", "12Q"], "unknown size unit"),
        (&["-s", "1K"], "at least 4K"),
        (&["-t", "0"], "seconds > 0"),
        (&["-t", "soon"], "seconds > 0"),
        (&["--hugetlbfile", "/nonexistent-dir/x/y"], "no such directory"),
        (&["--hugetlbfile", "/tmp"], "hugetlbfs"),
    ];
    for (args, msg) in cases {
        let out = hwcal().arg("mem").args(*args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(msg), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(!err.contains("panicked"));
    }
    hwcal().args(["mem", "-R", "--chains", "3"]).assert().code(2);
    hwcal().args(["mem", "--chains", "2"]).assert().code(2);
    // Random access has no --op.
    hwcal().args(["mem", "-R", "--op", "write"]).assert().code(2);
}

#[test]
fn save_stores_the_profile_in_the_given_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    hwcal()
        .env("HWCAL_DB", &db)
        .args(["mem", "-R", "-s", "64K", "-t", "0.1", "--save", "-q"])
        .assert()
        .success()
        .stderr(predicate::str::contains("stored as run 1"));
    assert!(db.exists());
}
