//! The results database and reports through the CLI. Every test uses its
//! own temporary database (HWCAL_DB, with HOME and XDG_DATA_HOME pointed at
//! the temporary directory too), never the user's. Profiles are synthetic
//! (every section filled), so the sections measured by other probes are
//! exercised here as well.

mod common;

use common::{s, Env};
use hwcal_model::sample::full_profile;
use predicates::prelude::*;

#[test]
fn empty_database_lists_nothing_and_creates_nothing() {
    let e = Env::new();
    e.hwcal()
        .args(["db", "list"])
        .assert()
        .success()
        .stdout(predicate::str::contains("no runs stored"));
    assert!(!e.db().exists(), "listing must not create the database");
}

#[test]
fn import_list_show_export_rm() {
    let e = Env::new();
    let a = e.import(0);
    let b = e.import(4);
    assert!(b > a);
    let list = e.list();
    assert!(
        list.contains("synthetic-0") && list.contains("synthetic-4"),
        "{list}"
    );
    assert!(list.contains("import") && list.contains("145.0"), "{list}");
    assert_eq!(e.ids(), vec![a, b]);

    e.hwcal()
        .args(["db", "show", &a.to_string(), "--detail"])
        .assert()
        .success()
        .stdout(predicate::str::contains(format!("run {a} (imported)")))
        .stdout(predicate::str::contains("clock:"))
        .stdout(predicate::str::contains("caches:"))
        .stdout(predicate::str::contains("context switch"));

    // Export gives back exactly the profile that was imported.
    let out = e
        .hwcal()
        .args(["db", "export", &b.to_string()])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let back = hwcal_report::parse_profile(&out).unwrap();
    assert_eq!(back, full_profile(4));
    let f = e.path("exported.json");
    e.hwcal()
        .args(["db", "export", "latest", "--json", s(&f)])
        .assert()
        .success();
    assert_eq!(
        hwcal_report::parse_profile(&std::fs::read(&f).unwrap()).unwrap(),
        full_profile(4)
    );
    // ...and importing it again is recognised, not stored twice.
    e.hwcal()
        .args(["db", "import", s(&f)])
        .assert()
        .success()
        .stdout(predicate::str::contains(format!("already stored as run {b}")));
    assert_eq!(e.ids().len(), 2);

    e.hwcal()
        .args(["db", "rm", &a.to_string()])
        .assert()
        .success()
        .stdout(predicate::str::contains(format!("removed run {a}")));
    assert!(!e.ids().contains(&a));
    e.hwcal().args(["db", "rm", &a.to_string()]).assert().code(2);
}

#[test]
fn compare_prints_ratios_side_by_side() {
    let e = Env::new();
    let a = e.import(0);
    let b = e.import(5); // latencies × 1.5, clock ÷ 1.5
    let out = e
        .hwcal()
        .args(["db", "compare", &a.to_string(), &b.to_string()])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8(out).unwrap();
    let line = |needle: &str| {
        out.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle:?} in\n{out}"))
            .to_string()
    };
    // With both sides' intervals, the ratio's ± too.
    assert!(line("memory latency").contains("1.500 ± "), "{out}");
    assert!(line("core clock  ").contains("0.667 ± "), "{out}");
    assert!(
        line("L2 TLB (4 KiB pages) miss latency").contains("1.500 ± "),
        "{out}"
    );
    assert!(line("64 KiB: 8 procs").contains("1.500"));
    assert!(line("IOPS").contains("0.667 ± "), "{out}");
    assert!(line("memory latency").contains("B worse"));
    assert!(out.contains("synthetic-0") && out.contains("synthetic-5"));
    // Machines by name: each host's latest run.
    let by_host = e
        .hwcal()
        .args(["db", "compare", "host:synthetic-0", "host:synthetic-5"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(String::from_utf8(by_host).unwrap(), out);
    // The same comparison for scripts: one object per row, the notes.
    let json = e
        .hwcal()
        .args(["db", "compare", "--json", &a.to_string(), &b.to_string()])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let rows = v["rows"].as_array().unwrap();
    let mem = rows
        .iter()
        .find(|r| r["figure"] == "memory latency" && r["unit"] == "ns")
        .unwrap();
    assert!((mem["ratio"].as_f64().unwrap() - 1.5).abs() < 1e-9);
    assert_eq!(mem["verdict"], "worse");
    assert!(v["a"].as_str().unwrap().contains("synthetic-0"));
    assert!(v["notes"].is_array());
    e.hwcal()
        .args(["db", "compare", "host:synthetic-0", "host:nowhere"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no run of host 'nowhere'"));
}

#[test]
fn bad_ids_are_usage_errors() {
    let e = Env::new();
    let a = e.import(0);
    for args in [
        vec!["db", "show", "abc"],
        vec!["db", "show", "0"],
        vec!["db", "show", "999"],
        vec!["db", "export", "1.5"],
        vec!["db", "rm", "999"],
        vec!["db", "compare", "1", "x"],
        vec!["db", "compare", "1", "999"],
    ] {
        e.hwcal()
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("run id").or(predicate::str::contains("no run with id")))
            .stderr(predicate::str::contains("panicked").not());
    }
    e.hwcal()
        .args(["db", "show", "999"])
        .assert()
        .stderr(predicate::str::contains("no run with id 999"));
    // Nothing was removed by the failed commands.
    assert_eq!(e.ids(), vec![a]);
}

#[test]
fn malformed_and_wrong_schema_imports_are_rejected() {
    let e = Env::new();
    let cases: [(&str, &[u8], &str); 4] = [
        ("garbage.json", b"this is not json", "not valid JSON"),
        (
            "future.json",
            b"{\"schema_version\": 99, \"tool\": \"hwcal\"}",
            "schema_version 99",
        ),
        (
            "other.json",
            b"{\"name\": \"something else\"}",
            "no schema_version",
        ),
        (
            "broken.json",
            b"{\"schema_version\": 1, \"tool\": 5}",
            "not an hwcal profile",
        ),
    ];
    for (name, bytes, msg) in cases {
        let f = e.path(name);
        std::fs::write(&f, bytes).unwrap();
        e.hwcal()
            .args(["db", "import", s(&f)])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(msg))
            .stderr(predicate::str::contains(name));
    }
    e.hwcal()
        .args(["db", "import", s(&e.path("missing.json"))])
        .assert()
        .code(2);
    // Well-formed, but a 10^300 ns memory latency: no machine measured
    // that, so import does not take it; analyze re-derives the figure from
    // the raw curves and says so.
    let mut p = full_profile(1);
    p.memory.as_mut().unwrap().latency_ns = 1e300;
    let f = e.path("absurd.json");
    std::fs::write(&f, serde_json::to_vec(&p).unwrap()).unwrap();
    e.hwcal()
        .args(["db", "import"])
        .arg(s(&f))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("memory.latency_ns"));
    e.hwcal()
        .args(["analyze", "--json", "-"])
        .arg(s(&f))
        .assert()
        .success()
        .stdout(predicate::str::contains("implausible_replaced"))
        .stdout(predicate::str::contains("memory.latency_ns"));
    // A megabyte of host name: refused with a line that names the field,
    // not one that prints the name (it printed 3.7 MB from `db compare`).
    let mut p = full_profile(2);
    p.machine.as_mut().unwrap().hostname = "h".repeat(1 << 20);
    let f = e.path("long-host.json");
    std::fs::write(&f, serde_json::to_vec(&p).unwrap()).unwrap();
    let out = e.hwcal().args(["db", "import"]).arg(s(&f)).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("machine.hostname is 1048576 bytes"),
        "{}",
        &err[..err.len().min(300)]
    );
    assert!(err.len() < 1000, "{} bytes of error", err.len());
    assert!(e.ids().is_empty(), "no row from a rejected import");
}

#[test]
fn db_option_overrides_the_environment_in_any_position() {
    let e = Env::new();
    let other = e.path("other/elsewhere.db");
    let f = e.profile_file(1);
    e.hwcal()
        .args(["--db", s(&other), "db", "import", s(&f)])
        .assert()
        .success();
    e.hwcal()
        .args(["db", "list", "--db", s(&other)])
        .assert()
        .success()
        .stdout(predicate::str::contains("synthetic-1"));
    assert!(other.exists());
    assert!(e.ids().is_empty(), "HWCAL_DB's database untouched");
    // A directory, or a file that is not a database, is refused cleanly.
    e.hwcal()
        .args(["db", "list", "--db", s(e.dir.path())])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is a directory"));
    let junk = e.path("junk.db");
    std::fs::write(&junk, vec![b'j'; 8192]).unwrap();
    e.hwcal()
        .args(["db", "list", "--db", s(&junk)])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not an hwcal database"))
        .stderr(predicate::str::contains("panicked").not());
}

#[test]
fn reports_single_latest_and_comparison() {
    let e = Env::new();
    // No run yet: the default (latest) has nothing to show.
    e.hwcal()
        .args(["report", "--html", s(&e.path("none.html"))])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no run yet"));
    let a = e.import(0);
    let b = e.import(3);
    let latest = e.path("latest.html");
    e.hwcal()
        .args(["report", "--html", s(&latest)])
        .assert()
        .success();
    let html = std::fs::read_to_string(&latest).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains(&format!("run {b}")) && html.contains("synthetic-3"));
    assert_eq!(
        html.matches("<svg").count(),
        4,
        "cache, TLB, bandwidth, ctx plots"
    );
    for id in [
        "machine",
        "clock",
        "caches",
        "tlbs",
        "mem",
        "bandwidth",
        "ctx",
        "io",
    ] {
        assert!(html.contains(&format!("<section id=\"{id}\">")), "{id}");
    }

    let cmp = e.path("cmp.html");
    e.hwcal()
        .args(["report", &a.to_string(), &b.to_string(), "--html", s(&cmp)])
        .assert()
        .success();
    let html = std::fs::read_to_string(&cmp).unwrap();
    assert!(html.contains("hwcal comparison") && html.contains("1.300×"));
    assert!(html.contains(">A: latency<") && html.contains(">B: latency<"));

    // A profile file works in place of an id; stdout with "-".
    let f = e.profile_file(2);
    e.hwcal()
        .args(["report", s(&f), "--html", "-"])
        .assert()
        .success()
        .stdout(predicate::str::contains("synthetic-2"));

    e.hwcal()
        .args(["report", "77", "--html", s(&e.path("x.html"))])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no run with id 77"));
    e.hwcal()
        .args(["report", "nonsense", "--html", s(&e.path("x.html"))])
        .assert()
        .code(2);
    e.hwcal()
        .args(["report", "1", "--html", "/nonexistent-dir/r.html"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("does not exist"));
    e.hwcal()
        .args(["report", "1", "2", "3", "--html", "x.html"])
        .assert()
        .code(2);
}

/// Probe ids `hwcal run` knows, so a test can skip them all (a run that
/// measures nothing but still builds, prints, saves and reports a profile).
fn all_probe_ids(e: &Env) -> String {
    let out = e
        .hwcal()
        .args(["run", "--list"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let ids: Vec<String> = String::from_utf8(out)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    ids.join(",")
}

#[test]
fn run_saves_unless_told_not_to_and_writes_html() {
    let e = Env::new();
    // Only the clock (0.2 s): the test is about storing, not measuring.
    let html = e.path("run.html");
    e.hwcal()
        .args(["run", "-q", "--only", "clock", "--html", s(&html)])
        .assert()
        .success()
        .stderr(predicate::str::contains("stored as run 1"))
        .stdout(predicate::str::contains("\nclock     "));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<section id=\"machine\">"));
    assert_eq!(e.ids(), vec![1]);
    assert!(e.list().contains(" run "), "origin run");

    e.hwcal()
        .args(["run", "-q", "--only", "clock", "--no-save"])
        .assert()
        .success()
        .stderr(predicate::str::contains("stored").not());
    assert_eq!(e.ids(), vec![1], "--no-save stores nothing");
    e.hwcal().args(["run", "--no-save", "--save"]).assert().code(2);
    // A bad database or report path fails before measuring anything.
    e.hwcal()
        .args(["run", "--only", "clock", "--db", s(e.dir.path())])
        .assert()
        .code(2);
    e.hwcal()
        .args(["run", "--only", "clock", "--html", "/nonexistent-dir/r.html"])
        .assert()
        .code(2);
    assert_eq!(e.ids(), vec![1]);
    // Skipping every probe leaves nothing to measure: a usage error, no row.
    let skip = all_probe_ids(&e);
    e.hwcal()
        .args(["run", "--skip", &skip])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nothing to measure"));
    assert_eq!(e.ids(), vec![1]);
}

#[test]
fn clock_saves_only_with_save_and_with_machine_info() {
    let e = Env::new();
    e.hwcal()
        .args(["clock", "--batches", "4", "--retries", "1", "-q", "--save"])
        .assert()
        .success()
        .stderr(predicate::str::contains("stored as run 1"));
    let out = e
        .hwcal()
        .args(["db", "export", "1"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let p = hwcal_report::parse_profile(&out).unwrap();
    let c = p.clock.expect("clock stored");
    assert!(c.core_mhz > 100.0 && c.core_mhz < 10_000.0, "{}", c.core_mhz);
    assert!(p.raw_clock.is_some(), "raw data stored");
    assert!(p.machine.is_some(), "machine info added for the database");
    assert!(p.command.contains("clock"));
    // Without --save nothing is stored.
    e.hwcal()
        .args(["clock", "--batches", "4", "--retries", "1", "-q"])
        .assert()
        .success();
    assert_eq!(e.ids(), vec![1]);
}

/// `hwcal db list | head` and the like: when the reader of stdout has gone,
/// the listing, `show`, `compare` and `run --list` end quietly with exit 0,
/// not with a "failed printing to stdout" panic (exit 101).
#[test]
fn closed_stdout_is_not_a_panic() {
    let e = Env::new();
    let id = e.import(1);
    e.import(2);
    let ids = id.to_string();
    for args in [
        vec!["db", "list"],
        vec!["db", "show", ids.as_str()],
        vec!["db", "compare", "1", "2"],
        vec!["run", "--list"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = common::hwcal_process()
            .args(&args)
            .env("HWCAL_DB", e.db())
            .env("HOME", e.dir.path())
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
    }
}

/// `db import --reanalyse`: the figures stored are this hwcal's reading of
/// the raw curves. The Zen 5 profile in shared/reference was written by an
/// hwcal that read its L3 as memory (11.5 ns, `ok`); as imported it keeps
/// that, re-analysed it stores the memory it measured (over 100 ns).
#[test]
fn import_reanalyse_stores_this_analysis_reading() {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/reference/machines/zen5-2vcpu.run-b.json");
    if !file.is_file() {
        eprintln!("{} not found: skipped", file.display());
        return;
    }
    let memory = |e: &Env, id: &str| -> f64 {
        let out = e.hwcal().args(["db", "export", id]).output().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["memory"]["latency_ns"].as_f64().unwrap()
    };
    let e = Env::new();
    e.hwcal().args(["db", "import"]).arg(&file).assert().success();
    assert!(memory(&e, "latest") < 20.0, "as recorded");
    e.hwcal()
        .args(["db", "import", "--reanalyse"])
        .arg(&file)
        .assert()
        .success()
        .stdout(predicate::str::contains("imported"));
    assert!(memory(&e, "latest") > 100.0, "as re-analysed");
    let out = e
        .hwcal()
        .args(["db", "show", "latest", "--detail"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("re-derived from the raw curves"));
}

#[test]
fn list_filters_by_machine_time_and_count() {
    let e = Env::new();
    for v in [0, 1, 2] {
        e.import(v);
    }
    let list = |args: &[&str]| {
        let out = e
            .hwcal()
            .args(["db", "list", "--json"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v.as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_i64().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(list(&[]).len(), 3);
    assert_eq!(list(&["--limit", "1"]), vec![*e.ids().last().unwrap()]);
    assert_eq!(list(&["--machine", "synthetic-1"]).len(), 1);
    assert_eq!(list(&["--since", "1970-01-01"]).len(), 3);
    assert!(list(&["--since", "2100-01-01"]).is_empty());
    e.hwcal().args(["db", "list", "--since", "soon"]).assert().code(2);
}

/// `db list` and `db compare` fit 100 columns (characters, not bytes)
/// unless `--wide`, which prints every column as before; the digest of
/// `db show` fits $COLUMNS (80 or 100) where stdout is not a terminal.
#[test]
fn list_compare_and_the_digest_fit_their_width() {
    let e = Env::new();
    let (a, b) = (e.import(0).to_string(), e.import(5).to_string());
    let out = |args: &[&str], columns: &str| {
        let o = e.hwcal().args(args).env("COLUMNS", columns).assert().success();
        String::from_utf8(o.get_output().stdout.clone()).unwrap()
    };
    let widest = |t: &str| t.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    // A pipe with no $COLUMNS: the fitted tables all the same.
    let list = out(&["db", "list"], "");
    assert!(widest(&list) <= 100, "{list}");
    let wide = out(&["db", "list", "--wide"], "");
    assert!(widest(&wide) > 100, "{wide}");
    assert!(wide.lines().next().unwrap().contains("  cpu  "), "{wide}");
    assert!(
        wide.lines().next().unwrap().ends_with("ctx µs  sections"),
        "{wide}"
    );
    assert_eq!(
        list.lines().count(),
        wide.lines().count(),
        "the same runs\n{list}\n{wide}"
    );
    let cmp = out(&["db", "compare", &a, &b], "");
    assert!(widest(&cmp) <= 100, "{cmp}");
    let cmp_wide = out(&["db", "compare", "--wide", &a, &b], "");
    assert!(
        cmp_wide.lines().any(|l| l.starts_with("section    figure")),
        "{cmp_wide}"
    );
    // Every row of the wide table is in the fitted one, with its verdict.
    for l in cmp_wide.lines().filter(|l| l.contains('×')) {
        let figure = l[11..].split("  ").next().unwrap().trim();
        assert!(
            cmp.lines().any(|c| c.starts_with(&format!("  {figure}"))),
            "{figure}\n{cmp}"
        );
    }
    let mem = cmp
        .lines()
        .find(|l| l.contains("memory latency") && l.contains(" ns"))
        .unwrap();
    assert!(mem.ends_with("B worse"), "{mem}");
    // The digest: every line within the terminal's columns, the header aside.
    for columns in ["80", "100"] {
        let show = out(&["db", "show", &a], columns);
        let digest: String = show.lines().skip(2).collect::<Vec<_>>().join("\n");
        assert!(widest(&digest) <= columns.parse().unwrap(), "{columns}:\n{show}");
        assert!(digest
            .lines()
            .any(|l| l.chars().count() == columns.parse::<usize>().unwrap()));
    }
}
