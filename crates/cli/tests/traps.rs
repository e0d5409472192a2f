//! The command-line traps a new user met (issue 30), one test each: an
//! option refused where a sibling command takes it, a required option with
//! an obvious default, a global option that did nothing, two opposite
//! flags in one help, silent file writes, file names offered where probe
//! names belong, two error prefixes.

mod common;
use common::{s, Env};
use predicates::prelude::*;

#[test]
fn analyze_writes_html_like_run() {
    let e = Env::new();
    let f = e.profile_file(0);
    let html = e.path("a.html");
    e.hwcal()
        .args(["analyze", s(&f), "--html", s(&html)])
        .assert()
        .success()
        .stderr(predicate::str::contains(format!("wrote {}", html.display())));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>") && page.contains("id=\"summary\""));
    // The same place twice is refused before anything is written.
    e.hwcal()
        .args(["analyze", s(&f), "--html", s(&html), "--json", s(&html)])
        .assert()
        .code(2);
}

#[test]
fn report_names_its_file_and_never_replaces_one() {
    let e = Env::new();
    e.import(0);
    let f = e.profile_file(1);
    for _ in 0..2 {
        e.hwcal()
            .current_dir(e.dir.path())
            .arg("report")
            .assert()
            .success();
    }
    e.hwcal()
        .current_dir(e.dir.path())
        .args(["report", s(&f)])
        .assert()
        .success()
        .stderr(predicate::str::contains("wrote p1.html"));
    for name in [
        "hwcal-report-latest.html",
        "hwcal-report-latest-2.html",
        "p1.html",
    ] {
        let page = std::fs::read_to_string(e.path(name)).unwrap_or_else(|err| panic!("{name}: {err}"));
        assert!(page.contains("<html"), "{name}");
    }
}

#[test]
fn db_is_taken_only_where_it_acts() {
    let e = Env::new();
    let db = e.path("other.db");
    for args in [
        vec!["info", "--db", s(&db)],
        vec!["--db", s(&db), "schema"],
        vec!["--db", s(&db), "completions", "bash"],
        vec!["--db", s(&db), "validate", "profiles", "x.json"],
    ] {
        e.hwcal()
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicate::str::starts_with("hwcal: error:"));
    }
    let help = common::stdout_of(e.hwcal().args(["info", "--help"]));
    assert!(!help.contains("--db"), "{help}");
    // Where it acts, before or after the subcommand, at any depth.
    e.hwcal()
        .args(["db", "import", s(&e.profile_file(0)), "--db", s(&db)])
        .assert()
        .success();
    let list = common::stdout_of(e.hwcal().args(["db", "list", "--db", s(&db)]));
    assert!(list.contains("synthetic-0"), "{list}");
    let list = common::stdout_of(e.hwcal().args(["--db", s(&db), "db", "list"]));
    assert!(list.contains("synthetic-0"), "{list}");
    assert!(!e.db().exists(), "the default database untouched");
}

#[test]
fn run_help_shows_one_of_save_and_no_save() {
    let help = common::stdout_of(common::hwcal().args(["run", "--help"]));
    assert!(help.contains("--no-save") && !help.contains("--save "), "{help}");
    // Still accepted (the other measuring commands document it).
    let clock = common::stdout_of(common::hwcal().args(["clock", "--help"]));
    assert!(clock.contains("--save"));
}

#[test]
fn every_file_written_is_said_unless_quiet() {
    let e = Env::new();
    let json = e.path("i.json");
    e.hwcal()
        .args(["info", "--json", s(&json)])
        .assert()
        .success()
        .stderr(predicate::str::contains(format!(
            "hwcal: wrote {}",
            json.display()
        )));
    let f = e.profile_file(0);
    let prefix = e.path("g");
    let out = e
        .hwcal()
        .args(["analyze", s(&f), "--gnuplot", s(&prefix)])
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(stderr.matches("hwcal: wrote ").count() >= 2, "{stderr}");
    // -q: silent.
    let os = e.path("o.json");
    e.hwcal()
        .args(["os", "-q", "--only", "null", "--batches", "5", "--json", s(&os)])
        .assert()
        .success()
        .stderr(predicate::str::contains("wrote").not());
    assert!(os.is_file());
    // ... and so are the commands that only write files.
    let html = e.path("q.html");
    e.hwcal()
        .args(["analyze", s(&f), "-q", "--html", s(&html)])
        .assert()
        .success()
        .stderr(predicate::str::is_empty());
    let html2 = e.path("q2.html");
    e.hwcal()
        .args(["report", s(&f), "--quiet", "--html", s(&html2)])
        .assert()
        .success()
        .stderr(predicate::str::is_empty());
    assert!(html.is_file() && html2.is_file());
}

#[test]
fn probe_names_are_checked_and_completed() {
    common::hwcal()
        .args(["run", "--only", "nosuch"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("possible values").and(predicate::str::contains("clock")));
    let bash = common::stdout_of(common::hwcal().args(["completions", "bash"]));
    // bash completes every --only (run's probes, os's operations) from
    // names, never from file names.
    let lines: Vec<&str> = bash.lines().collect();
    let after: Vec<&str> = (1..lines.len())
        .filter(|&k| lines[k - 1].trim() == "--only)")
        .map(|k| lines[k])
        .collect();
    assert!(after.len() >= 2, "{after:?}");
    assert!(
        after.iter().any(|l| l.contains("clock") && l.contains("cache")),
        "{after:?}"
    );
    assert!(after.iter().all(|l| !l.contains("compgen -f")), "{after:?}");
    common::hwcal().args(["os", "--only", "nosuch"]).assert().code(2);
    common::hwcal().args(["c2c", "--method", "mesi"]).assert().code(2);
}

#[test]
fn every_error_has_one_prefix() {
    // clap's (an unknown option) and hwcal's own (a missing file).
    common::hwcal()
        .arg("--nosuch")
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with("hwcal: error:"));
    common::hwcal()
        .args(["analyze", "/nonexistent/x.json"])
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with("hwcal: error:"));
}
