//! `hwcal io`: structure of the figures, broad physical bounds, the test
//! file's life cycle (always removed: success, error, SIGINT, SIGTERM) and
//! the usage errors. Small files in temporary directories; no timing
//! assertions beyond "positive and finite".

mod common;

use common::hwcal;
use predicates::prelude::*;
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// Run `hwcal io DIR args --json -` and return the `io` section; checks the
/// directory is left empty.
fn io_json(args: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let out = hwcal()
        .arg("io")
        .arg(dir.path())
        .args(args)
        .args(["--json", "-", "-q"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        entries(dir.path()).is_empty(),
        "left behind: {:?}",
        entries(dir.path())
    );
    let p: Value = common::profile_json(&out.stdout).unwrap();
    p["io"].clone()
}

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64()
        .unwrap_or_else(|| panic!("{k} missing or not a number in {v}"))
}

fn check_figures(io: &Value) {
    // Under user-mode emulation the clock may not resolve the fastest I/O
    // (a page-cache hit): the minimum latency may read 0 there.
    let emulated = hwcal_harness::platform::emulation().is_some();
    for k in [
        "iops",
        "bytes_per_sec",
        "runtime_s",
        "lat_min_us",
        "lat_p50_us",
        "lat_p99_us",
        "lat_p999_us",
        "lat_max_us",
    ] {
        let x = f(io, k);
        let unresolved = emulated && k == "lat_min_us" && x == 0.0;
        assert!(x.is_finite() && (x > 0.0 || unresolved), "{k} = {x}");
    }
    // Percentiles are ordered and inside [min, max].
    let lat: Vec<f64> = [
        "lat_min_us",
        "lat_p50_us",
        "lat_p99_us",
        "lat_p999_us",
        "lat_max_us",
    ]
    .iter()
    .map(|k| f(io, k))
    .collect();
    assert!(lat.windows(2).all(|w| w[0] <= w[1]), "{lat:?}");
    // Broad physical bounds: an I/O takes more than 50 ns and less than 10 s.
    assert!((lat[0] > 0.05 || emulated) && lat[4] < 10e6, "{lat:?}");
    // bytes/s = IOPS × block size.
    let bs = f(io, "bs_bytes");
    assert!((f(io, "bytes_per_sec") / (f(io, "iops") * bs) - 1.0).abs() < 1e-6);
}

#[test]
fn help_describes_io() {
    hwcal()
        .args(["io", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("--iodepth"))
        .stdout(predicate::str::contains("--rwmix-read"))
        .stdout(predicate::str::contains("--force"));
}

#[test]
fn size_bound_runs_move_exactly_the_file_once() {
    // 1 MiB in 4 KiB blocks: 256 I/Os whatever the engine and thread count.
    for (engine, extra) in [("sync", "1"), ("psync", "1"), ("io_uring", "8")] {
        if engine == "io_uring" && common::emulated("the io_uring size-bound run") {
            continue;
        }
        for rw in ["read", "randwrite"] {
            let io = io_json(&[
                "--size",
                "1M",
                "--bs",
                "4k",
                "--rw",
                rw,
                "--engine",
                engine,
                "--iodepth",
                extra,
                "-m",
                "2",
            ]);
            assert_eq!(io["ios"], 256, "{engine} {rw}: {io}");
            assert_eq!(io["engine"], engine);
            assert_eq!(io["rw"], rw);
            assert_eq!(io["threads"], 2);
            assert_eq!(io["created_file"], true);
            assert_eq!(io["per_thread"].as_array().unwrap().len(), 2);
            let per: u64 = io["per_thread"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["ios"].as_u64().unwrap())
                .sum();
            assert_eq!(per, 256);
            check_figures(&io);
        }
    }
}

#[test]
fn time_bound_direct_random_read() {
    if common::emulated("time_bound_direct_random_read (io_uring)") {
        return;
    }
    let io = io_json(&[
        "--size",
        "4M",
        "--bs",
        "4k",
        "--rw",
        "randread",
        "--direct",
        "-t",
        "0.3",
        "--engine",
        "io_uring",
        "--iodepth",
        "4",
    ]);
    assert_eq!(io["direct"], true);
    assert_eq!(io["iodepth"], 4);
    assert_eq!(io["time_limit_s"], 0.3);
    check_figures(&io);
    let rt = f(&io, "runtime_s");
    assert!(rt > 0.2 && rt < 5.0, "runtime {rt}");
    // Mostly more than one pass in 0.3 s, but never fewer I/Os than were needed
    // to fill the time (each I/O < 10 s): at least one.
    assert!(io["ios"].as_u64().unwrap() >= 1);
}

#[test]
fn mixed_workload_counts_both_directions() {
    let io = io_json(&[
        "--size",
        "2M",
        "--bs",
        "4k",
        "--rw",
        "randrw",
        "--rwmix-read",
        "70",
        "-t",
        "0.3",
    ]);
    assert_eq!(io["rwmix_read"], 70);
    let (r, w) = (
        io["read_ios"].as_u64().unwrap(),
        io["write_ios"].as_u64().unwrap(),
    );
    assert_eq!(r + w, io["ios"].as_u64().unwrap());
    assert!(r > 0 && w > 0, "reads {r} writes {w}");
    if r + w > 1000 {
        let frac = r as f64 / (r + w) as f64;
        assert!((0.6..0.8).contains(&frac), "read fraction {frac}");
    }
    check_figures(&io);
}

#[test]
fn text_summary_has_the_figures() {
    let dir = tempfile::tempdir().unwrap();
    hwcal()
        .arg("io")
        .arg(dir.path())
        .args(["--size", "1M", "--bs", "64k", "--rw", "write", "-q"])
        .assert()
        .success()
        .stdout(predicate::str::contains("io (write bs=64 KiB engine=psync"))
        .stdout(predicate::str::contains("IOPS"))
        .stdout(predicate::str::contains("p99.9"));
    assert!(entries(dir.path()).is_empty());
}

#[test]
fn existing_file_read_in_place_write_needs_force() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("data.bin");
    let content: Vec<u8> = (0..1u32 << 18).map(|i| (i * 7) as u8).collect();
    std::fs::write(&file, &content).unwrap();
    // Reading an existing file is allowed and leaves it alone.
    let out = hwcal()
        .arg("io")
        .arg(&file)
        .args(["--rw", "read", "--bs", "4k", "--json", "-", "-q"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let p: Value = common::profile_json(&out.stdout).unwrap();
    assert_eq!(p["io"]["ios"], 64);
    assert_eq!(p["io"]["created_file"], false);
    assert_eq!(std::fs::read(&file).unwrap(), content);
    // Writing into it without --force is refused, and it is untouched.
    hwcal()
        .arg("io")
        .arg(&file)
        .args(["--rw", "randwrite"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("refusing to write"))
        .stderr(predicate::str::contains("--force"));
    assert_eq!(std::fs::read(&file).unwrap(), content);
    // With --force it is overwritten in place, and kept.
    hwcal()
        .arg("io")
        .arg(&file)
        .args(["--rw", "write", "--bs", "4k", "--force", "-q"])
        .assert()
        .success();
    assert!(file.exists());
    assert_eq!(std::fs::metadata(&file).unwrap().len(), content.len() as u64);
    assert_ne!(std::fs::read(&file).unwrap(), content);
    assert_eq!(entries(dir.path()), vec!["data.bin".to_string()]);
}

#[test]
fn bad_input_is_a_usage_error_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap().to_string();
    let cases: &[(&[&str], &str)] = &[
        (&["--direct", "--bs", "1000", "--size", "1M"], "multiple of 512"),
        (&["--size", "0"], "--size must be > 0"),
        (&["--size", "12q"], "unknown size unit"),
        (&["--bs", "0"], "--bs must be > 0"),
        (&["--size", "1M", "--bs", "2M"], "at least one block"),
        (&["--size", "1P"], "no space left"),
        (&["--size", "1M", "--iodepth", "8"], "only --engine io_uring"),
        (
            &["--size", "1M", "--rw", "randread", "--rwmix-read", "30"],
            "only applies",
        ),
        (&["--size", "1M", "-t", "0"], "--time"),
        (&["--size", "1M", "--rw", "sideways"], "invalid value"),
    ];
    for (args, msg) in cases {
        hwcal()
            .args(["io", &d])
            .args(*args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(*msg))
            .stderr(predicate::str::contains("panicked").not());
        assert!(
            entries(dir.path()).is_empty(),
            "{args:?} left {:?}",
            entries(dir.path())
        );
    }
    hwcal()
        .args(["io", &format!("{d}/no/such/dir"), "--size", "1M"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no such file or directory"));
}

/// Start a long run, wait until its test file exists (and `after` more),
/// send `signal`, and check it stops promptly with the file removed.
fn interrupted_run_cleans_up(signal: &str, size: &str, after: Duration, extra: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    if extra.contains(&"io_uring") && common::emulated("io_uring interrupted run") {
        return;
    }
    let mut child = common::hwcal_process()
        .arg("io")
        .arg(dir.path())
        .args([
            "--size",
            size,
            "--bs",
            "4k",
            "--rw",
            "randwrite",
            "-t",
            "60",
            "-m",
            "2",
            "-q",
        ])
        .args(extra)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while entries(dir.path()).is_empty() {
        assert!(t0.elapsed() < Duration::from_secs(30), "test file never appeared");
        assert!(child.try_wait().unwrap().is_none(), "hwcal exited early");
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(after);
    let st = std::process::Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let t1 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t1.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            panic!("hwcal did not stop within 20 s of {signal}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(err.contains("interrupted") && err.contains("removed"), "{err}");
    assert!(
        entries(dir.path()).is_empty(),
        "left behind: {:?}",
        entries(dir.path())
    );
}

#[test]
fn sigint_during_the_run_removes_the_test_file() {
    interrupted_run_cleans_up("-INT", "2M", Duration::from_millis(500), &[]);
}

#[test]
fn sigint_with_io_uring_in_flight_removes_the_test_file() {
    // I/Os in flight when the signal lands must complete before the
    // buffers and the file go away.
    let uring = ["--engine", "io_uring", "--iodepth", "16", "--direct"];
    interrupted_run_cleans_up("-INT", "4M", Duration::from_millis(500), &uring);
}

#[test]
fn sigterm_while_filling_removes_the_test_file() {
    interrupted_run_cleans_up("-TERM", "256M", Duration::ZERO, &[]);
}
