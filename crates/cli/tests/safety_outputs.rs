//! The second safety sweep (issue 26): outputs that replace a file whole or
//! not at all and never through a link, a database read without write
//! access and never written when damaged, a closed or full stdout/stderr
//! that is no panic, exports safe to open, and a password that reaches no
//! output of any format.
//!
//! Tests that need root (a small or read-only tmpfs) skip with a message
//! elsewhere.

mod common;

use common::{s, Env};
use hwcal_model::sample::full_profile;
use std::path::{Path, PathBuf};
use std::process::Output;

fn is_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// A tmpfs of `kib` KiB at `dir`, unmounted when dropped; `None` (with a
/// message) where this test may not mount one.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, kib: u32, test: &str) -> Option<Tmpfs> {
        if !is_root() {
            eprintln!("{test}: skipped: mounting a tmpfs needs root");
            return None;
        }
        std::fs::create_dir_all(dir).unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs", s(dir)])
            .status()
            .is_ok_and(|st| st.success());
        if !ok {
            eprintln!("{test}: skipped: cannot mount a tmpfs here");
            return None;
        }
        Some(Tmpfs(dir.to_path_buf()))
    }
    fn remount_read_only(&self) -> bool {
        std::process::Command::new("mount")
            .args(["-o", "remount,ro", s(&self.0)])
            .status()
            .is_ok_and(|st| st.success())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

fn out(o: &Output) -> String {
    format!(
        "status {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Run `c`, which must exit with `code` (the command, its status and both
/// streams shown otherwise); its output.
fn exits(c: &mut assert_cmd::Command, code: i32) -> Output {
    let o = c.output().unwrap();
    assert_eq!(o.status.code(), Some(code), "{c:?}\n{}", out(&o));
    o
}

/// Names in `dir` that an interrupted write could leave behind.
fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".hwcal-"))
        .collect()
}

#[test]
fn a_full_disk_leaves_the_earlier_output_whole() {
    let e = Env::new();
    e.import(0);
    let Some(fs) = Tmpfs::mount(
        &e.path("small"),
        64,
        "a_full_disk_leaves_the_earlier_output_whole",
    ) else {
        return;
    };
    let keep = fs.0.join("keep.html");
    std::fs::write(&keep, "the good report").unwrap();
    // Fill the file system but a few KiB: the report does not fit.
    let fill = vec![0u8; 40 * 1024];
    std::fs::write(fs.0.join("filler"), fill).unwrap();
    let o = exits(e.hwcal().args(["report", "1", "--html", s(&keep)]), 1);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("keep.html"),
        "{}",
        out(&o)
    );
    assert_eq!(std::fs::read_to_string(&keep).unwrap(), "the good report");
    assert!(temporaries(&fs.0).is_empty(), "{:?}", temporaries(&fs.0));
    // The same for a profile: `analyze --json` over a good one.
    let p = e.profile_file(1);
    exits(e.hwcal().args(["analyze", s(&p), "--json", s(&keep)]), 1);
    assert_eq!(std::fs::read_to_string(&keep).unwrap(), "the good report");
    assert!(temporaries(&fs.0).is_empty());
}

#[test]
fn a_database_on_a_full_disk_is_read_and_says_why_it_cannot_store() {
    let e = Env::new();
    let test = "a_database_on_a_full_disk_is_read_and_says_why_it_cannot_store";
    let Some(fs) = Tmpfs::mount(&e.path("full"), 2048, test) else {
        return;
    };
    let db = fs.0.join("hwcal.db");
    let with_db = |args: &[&str]| e.hwcal().arg("--db").arg(&db).args(args).output().unwrap();
    let p = e.profile_file(0);
    assert!(with_db(&["db", "import", s(&p)]).status.success());
    // Fill the file system to the last block.
    let mut n = 0;
    while std::fs::write(fs.0.join(format!("fill{n}")), vec![0u8; 64 * 1024]).is_ok() {
        n += 1;
    }
    let _ = std::fs::write(fs.0.join("last"), vec![0u8; 4096]);
    let before = std::fs::read(&db).unwrap();
    let q = e.profile_file(1);
    let o = with_db(&["db", "import", s(&q)]);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("full"), "{err}");
    assert_eq!(std::fs::read(&db).unwrap(), before);
    for args in [
        vec!["db", "list"],
        vec!["db", "show", "1"],
        vec!["report", "1", "--html", "-"],
    ] {
        let o = with_db(&args);
        assert!(o.status.success(), "{args:?}: {}", out(&o));
    }
}

#[test]
fn an_output_never_replaces_the_database_or_an_input() {
    let e = Env::new();
    e.import(0);
    let before = std::fs::read(e.db()).unwrap();
    // The database under another name (a hard link).
    let alias = e.path("x.json");
    std::fs::hard_link(e.db(), &alias).unwrap();
    let p = e.profile_file(1);
    let o = exits(e.hwcal().args(["analyze", s(&p), "--json", s(&alias)]), 2);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("the results database"),
        "{}",
        out(&o)
    );
    assert_eq!(std::fs::read(e.db()).unwrap(), before);
    exits(e.hwcal().args(["report", "1", "--html", s(&alias)]), 2);
    assert_eq!(std::fs::read(e.db()).unwrap(), before);
    // The profile read, by its own name and as one of --gnuplot's files.
    exits(e.hwcal().args(["analyze", s(&p), "--json", s(&p)]), 2);
    let input = e.path("g.cache-miss-latency.data");
    std::fs::copy(&p, &input).unwrap();
    let kept = std::fs::read(&input).unwrap();
    let prefix = e.path("g");
    let o = exits(e.hwcal().args(["analyze", s(&input), "--gnuplot", s(&prefix)]), 2);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("an input"),
        "{}",
        out(&o)
    );
    assert_eq!(std::fs::read(&input).unwrap(), kept);
}

#[test]
fn outputs_do_not_follow_or_replace_links() {
    let e = Env::new();
    e.import(0);
    let p = e.profile_file(1);
    let target = e.path("precious.txt");
    std::fs::write(&target, "precious").unwrap();
    let link = e.path("out.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let dangling = e.path("dangling.json");
    let nowhere = e.path("nowhere.json");
    std::os::unix::fs::symlink(&nowhere, &dangling).unwrap();
    for dest in [&link, &dangling] {
        for args in [
            vec!["analyze", s(&p), "--json", s(dest)],
            vec!["report", "1", "--html", s(dest)],
            vec!["db", "export", "1", "--json", s(dest)],
        ] {
            let o = exits(e.hwcal().args(&args), 2);
            assert!(
                String::from_utf8_lossy(&o.stderr).contains("symbolic link"),
                "{}",
                out(&o)
            );
        }
    }
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious");
    assert!(!nowhere.exists());
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    // A site whose `runs` is a link into a directory hwcal did not create.
    let site = e.path("site");
    e.hwcal().args(["db", "site", s(&site)]).assert().success();
    let theirs = e.path("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::write(theirs.join("1.html"), "theirs").unwrap();
    std::fs::remove_dir_all(site.join("runs")).unwrap();
    std::os::unix::fs::symlink(&theirs, site.join("runs")).unwrap();
    exits(e.hwcal().args(["db", "site", s(&site)]), 2);
    assert_eq!(std::fs::read_to_string(theirs.join("1.html")).unwrap(), "theirs");
    assert_eq!(std::fs::read_dir(&theirs).unwrap().count(), 1);
}

/// Overwrite a page in the middle of an SQLite file with garbage.
fn damage(db: &Path) {
    use std::io::{Seek, SeekFrom, Write};
    let len = std::fs::metadata(db).unwrap().len();
    assert!(len >= 3 * 4096, "{len}");
    let mut f = std::fs::OpenOptions::new().write(true).open(db).unwrap();
    f.seek(SeekFrom::Start(4096)).unwrap();
    f.write_all(&[0xA5; 4096]).unwrap();
}

#[test]
fn a_damaged_database_is_not_written() {
    let e = Env::new();
    for v in 0..4 {
        e.import(v);
    }
    damage(&e.db());
    let damaged = std::fs::read(e.db()).unwrap();
    let p = e.profile_file(9);
    let o = exits(e.hwcal().args(["db", "import", s(&p)]), 1);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("damaged"), "{}", out(&o));
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert_eq!(std::fs::read(e.db()).unwrap(), damaged, "nothing written");
}

#[test]
fn a_database_on_a_read_only_mount_is_read_and_not_written() {
    let e = Env::new();
    let Some(fs) = Tmpfs::mount(
        &e.path("ro"),
        8192,
        "a_database_on_a_read_only_mount_is_read_and_not_written",
    ) else {
        return;
    };
    let db = fs.0.join("hwcal.db");
    let with_db = |args: &[&str]| e.hwcal().arg("--db").arg(&db).args(args).output().unwrap();
    for v in 0..2 {
        let p = e.profile_file(v);
        assert!(with_db(&["db", "import", s(&p)]).status.success());
    }
    assert!(fs.remount_read_only(), "remount read-only");
    for args in [
        vec!["db", "list"],
        vec!["db", "show", "1"],
        vec!["db", "compare", "1", "2"],
        vec!["db", "export", "--csv"],
        vec!["report", "2", "--html", "-"],
    ] {
        let o = with_db(&args);
        assert!(o.status.success(), "{args:?}: {}", out(&o));
    }
    let p = e.profile_file(5);
    let o = with_db(&["db", "import", s(&p)]);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("read-only file system"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn a_mistyped_db_path_is_an_error_not_an_empty_database() {
    let e = Env::new();
    let missing = e.path("typo/hwcal.db");
    for args in [
        vec!["db", "list"],
        vec!["db", "list", "--json"],
        vec!["db", "export", "--csv"],
    ] {
        let o = exits(e.hwcal().arg("--db").arg(&missing).args(&args), 2);
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("no database there"),
            "{}",
            out(&o)
        );
    }
    assert!(!e.path("typo").exists());
    // The default location before the first run is simply empty.
    e.hwcal().args(["db", "list"]).assert().success();
}

/// Run `args` with stdout or stderr on `/dev/full`.
fn to_full(e: &Env, args: &[&str], stdout: bool) -> Output {
    let full = || std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let mut c = process(e);
    c.args(args);
    if stdout {
        c.stdout(full());
    } else {
        c.stderr(full());
    }
    c.output().unwrap()
}

/// The binary as a plain process (its streams can be redirected), in `e`.
fn process(e: &Env) -> std::process::Command {
    let mut c = common::hwcal_process();
    c.env("HWCAL_DB", e.db())
        .env("HOME", e.dir.path())
        .env("XDG_DATA_HOME", e.dir.path().join("xdg"));
    c
}

#[test]
fn a_full_stdout_or_stderr_is_a_failure_or_lost_never_a_panic() {
    let e = Env::new();
    e.import(0);
    // The report is written; its "wrote" line is lost, not a panic.
    let html = e.path("r.html");
    let o = to_full(&e, &["report", "1", "--html", s(&html)], false);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    assert!(html.is_file());
    // Help and version that cannot be written are a failure.
    for args in [vec!["--help"], vec!["--version"], vec!["db", "--help"]] {
        let o = to_full(&e, &args, true);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", out(&o));
    }
    // A listing that cannot be written is a failure, not a panic.
    let o = to_full(&e, &["db", "list"], true);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    // Both streams full: still no panic (101).
    let full = || std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let o = process(&e)
        .args(["db", "show", "99"])
        .stdout(full())
        .stderr(full())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn exports_are_safe_to_open() {
    let e = Env::new();
    let mut p = full_profile(0);
    p.machine.as_mut().unwrap().hostname = "=HYPERLINK(\"http://evil\")".into();
    p.command = "hwcal run <script>alert(1)</script> @SUM(A1)".into();
    let f = e.path("evil.json");
    std::fs::write(&f, serde_json::to_vec(&p).unwrap()).unwrap();
    e.hwcal().args(["db", "import", s(&f)]).assert().success();
    let csv = common::stdout_of(e.hwcal().args(["db", "export", "--csv"]));
    let row = csv.lines().nth(1).unwrap();
    assert!(row.contains(",\"'=HYPERLINK(\"\"http://evil\"\")\","), "{row}");
    assert!(
        !row.split(',').any(|c| c.starts_with('=') || c.starts_with('@')),
        "{row}"
    );
    let md = common::stdout_of(e.hwcal().args(["db", "export", "--markdown"]));
    assert!(!md.contains("<script") && md.contains("&lt;script&gt;"), "{md}");
}

#[test]
fn one_unreadable_run_does_not_hide_the_others() {
    let e = Env::new();
    for v in 0..3 {
        e.import(v);
    }
    {
        let c = rusqlite::Connection::open(e.db()).unwrap();
        c.execute(
            "UPDATE profiles SET profile_json = '{\"not\": 1}' WHERE id = 2",
            [],
        )
        .unwrap();
    }
    let o = exits(e.hwcal().args(["db", "export", "--csv"]), 1);
    let csv = String::from_utf8_lossy(&o.stdout);
    assert_eq!(csv.lines().count(), 3, "header and two runs: {csv}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("run 2 left out"),
        "{}",
        out(&o)
    );
    let site = e.path("site");
    exits(e.hwcal().args(["db", "site", s(&site)]), 1);
    assert!(site.join("runs/1.html").is_file() && site.join("runs/3.html").is_file());
    assert!(!site.join("runs/2.html").exists());
}

#[test]
fn control_characters_in_paths_are_shown_escaped() {
    let e = Env::new();
    e.import(0);
    let name = e.path("a\x1b[31mred\x07.html");
    let o = e
        .hwcal()
        .args(["report", "1", "--html"])
        .arg(&name)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", out(&o));
    assert!(name.is_file());
    assert!(
        !o.stderr.contains(&0x1b) && !o.stderr.contains(&0x07),
        "{}",
        out(&o)
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("\\x1b"),
        "{}",
        out(&o)
    );
}

#[test]
fn a_long_machine_prefix_is_one_usage_line() {
    let e = Env::new();
    e.import(0);
    let sel = format!("machine:{}", "a".repeat(5000));
    let o = exits(e.hwcal().args(["db", "show", &sel]), 2);
    assert_eq!(
        String::from_utf8_lossy(&o.stderr).lines().count(),
        1,
        "{}",
        out(&o)
    );
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().filter_map(|e| e.ok()) {
        let p = entry.path();
        if p.is_dir() {
            all.extend(files_under(&p));
        } else {
            all.push(p);
        }
    }
    all
}

#[test]
fn a_stored_password_reaches_no_output_of_any_format() {
    const PW: &str = "S3cretPW";
    let e = Env::new();
    // A profile written before hwcal masked passwords (or by hand).
    let mut p = full_profile(0);
    p.command = format!("hwcal run --db postgres://u:{PW}@db.example/x --to=postgresql://v:{PW}@h/y");
    let f = e.path("old.json");
    std::fs::write(&f, serde_json::to_vec(&p).unwrap()).unwrap();
    e.hwcal().args(["db", "import", s(&f)]).assert().success();
    e.import(1);
    let site = e.path("site");
    let html = e.path("r.html");
    let json = e.path("a.json");
    let runs: Vec<Vec<&str>> = vec![
        vec!["db", "list"],
        vec!["db", "list", "--json"],
        vec!["db", "show", "1"],
        vec!["db", "show", "1", "--json"],
        vec!["db", "compare", "1", "2"],
        vec!["db", "compare", "1", "2", "--json"],
        vec!["db", "export", "1"],
        vec!["db", "export", "--csv"],
        vec!["db", "export", "--markdown"],
        vec!["report", "1", "--html", s(&html)],
        vec!["report", "1", "2", "--html", "-"],
        vec!["report", s(&f), "--html", "-"],
        vec!["analyze", s(&f)],
        vec!["analyze", s(&f), "--json", s(&json)],
        vec!["db", "site", s(&site)],
        // An error line that quotes a URL.
        vec!["--db", "postgres://u:S3cretPW@127.0.0.1:1/x", "db", "list"],
    ];
    for args in runs {
        let o = e.hwcal().args(&args).output().unwrap();
        let all = [o.stdout.as_slice(), o.stderr.as_slice()].concat();
        assert!(
            !String::from_utf8_lossy(&all).contains(PW),
            "{args:?}: {}",
            out(&o)
        );
    }
    let mut files = files_under(&site);
    files.extend([html, json, e.db()]);
    for file in files {
        let bytes = std::fs::read(&file).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(PW),
            "{}",
            file.display()
        );
    }
}

/// A database that takes connections but refuses to store (a role without
/// INSERT, a full disk, a lock held too long): the run's profile is kept in
/// a file of its own, `--json` is still written, and the command fails
/// saying where the profile is; the next run stores it.
#[test]
fn a_run_the_database_refuses_is_kept_not_lost() {
    let e = Env::new();
    e.import(0);
    {
        let c = rusqlite::Connection::open(e.db()).unwrap();
        c.execute_batch(
            "CREATE TRIGGER refuse BEFORE INSERT ON profiles BEGIN SELECT RAISE(ABORT, 'no insert for this role'); END;",
        )
        .unwrap();
    }
    let json = e.path("out.json");
    let o = exits(
        e.hwcal()
            .env("HWCAL_SYNTHETIC_MACHINE", "1")
            .env_remove("XDG_STATE_HOME")
            .args(["run", "--quiet", "--only", "clock", "--json", s(&json)]),
        1,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("not stored") && err.contains("db import"),
        "{}",
        out(&o)
    );
    assert!(json.is_file(), "--json still written: {}", out(&o));
    let kept: Vec<PathBuf> = std::fs::read_dir(e.path(".local/state/hwcal/unsaved"))
        .unwrap()
        .map(|d| d.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    {
        let c = rusqlite::Connection::open(e.db()).unwrap();
        c.execute_batch("DROP TRIGGER refuse;").unwrap();
    }
    // The next run stores the kept one first, then its own.
    let o = exits(
        e.hwcal()
            .env("HWCAL_SYNTHETIC_MACHINE", "1")
            .env_remove("XDG_STATE_HOME")
            .args(["run", "--only", "clock"]),
        0,
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("when the database refused it"),
        "{}",
        out(&o)
    );
    assert!(!kept[0].exists());
    let c = rusqlite::Connection::open(e.db()).unwrap();
    let n: i64 = c
        .query_row("SELECT count(*) FROM profiles", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 3, "the imported run, the kept one and the new one");
}

/// Buffers are sized from what this process may use, not from the
/// machine's free memory: under `ulimit -v` (or a cgroup's memory.max)
/// the available memory hwcal plans with is within that limit.
#[test]
fn the_memory_hwcal_plans_with_is_within_its_rlimit() {
    // An emulator reserves the guest's address space up front: no room
    // under a 3 GB limit.
    if common::emulated("the_memory_hwcal_plans_with_is_within_its_rlimit") {
        return;
    }
    let o = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "ulimit -v 3000000 && exec {} info --json -",
            assert_cmd::cargo::cargo_bin("hwcal").display()
        ))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let avail = v["machine"]["memory_available_bytes"].as_u64().unwrap();
    assert!(avail > 0 && avail <= 3_000_000 * 1024, "{avail}");
}

/// `hwcal analyze -` reads the profile from standard input, as the
/// simulator's `sim profile` output is meant to be piped.
#[test]
fn analyze_reads_a_profile_from_standard_input() {
    let e = Env::new();
    let f = e.profile_file(0);
    let o = e
        .hwcal()
        .args(["analyze", "-"])
        .pipe_stdin(&f)
        .unwrap()
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("L1"), "{}", out(&o));
}
