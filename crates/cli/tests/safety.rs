//! Nothing destroyed, nothing silently dropped, nothing injected: the
//! fault-injection and hostile-input suite (issue 15).
//!
//! - I/O targets: kernel pseudo files, devices, FIFOs, tmpfs with --direct
//!   and a mounted block device (a real loop device with ext4 when root,
//!   `losetup` and `mkfs.ext4` are available; skipped with a message
//!   otherwise) are refused with exit 2 and left intact.
//! - Databases: another program's SQLite file is never changed, read-only
//!   commands create nothing, URL schemes are usage errors, 100 concurrent
//!   first saves into a new database all land, SIGKILL at random moments of
//!   imports and of measuring commands' saves leaves an intact database with
//!   every committed run.
//! - Hostile profiles: escape sequences are shown, never obeyed; absurd
//!   raw values, wrong types and oversized or endless files are refused.
//! - `--save` is honoured (or refused before measuring) everywhere; output
//!   destinations are checked together.
//!
//! Every test uses its own temporary directory and database.

mod common;

use assert_cmd::Command;
use hwcal_model::sample::full_profile;
use predicates::prelude::*;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    fn db(&self) -> PathBuf {
        self.path("data/hwcal.db")
    }
    fn hwcal(&self) -> Command {
        let mut c = Command::cargo_bin("hwcal").unwrap();
        c.env("HWCAL_DB", self.db())
            .env("HOME", self.dir.path())
            .env("XDG_DATA_HOME", self.dir.path().join("xdg"))
            .current_dir(self.dir.path());
        c
    }
    fn write_profile(&self, name: &str, p: &hwcal_model::Profile) -> PathBuf {
        let f = self.path(name);
        std::fs::write(&f, serde_json::to_vec_pretty(p).unwrap()).unwrap();
        f
    }
    /// Every entry under the temporary directory, recursively.
    fn tree(&self) -> Vec<PathBuf> {
        fn walk(d: &Path, out: &mut Vec<PathBuf>) {
            for e in std::fs::read_dir(d).unwrap().flatten() {
                out.push(e.path());
                if e.path().is_dir() {
                    walk(&e.path(), out);
                }
            }
        }
        let mut v = Vec::new();
        walk(self.dir.path(), &mut v);
        v.sort();
        v
    }
}

fn is_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn have(tool: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn sh(cmd: &str, args: &[&str]) -> std::process::Output {
    std::process::Command::new(cmd).args(args).output().unwrap()
}

// ---------------------------------------------------------------- io targets

#[test]
fn kernel_files_devices_and_fifos_are_not_io_targets() {
    let e = Env::new();
    let fifo = e.path("fifo");
    let fifo_ok = sh("mkfifo", &[s(&fifo)]).status.success();
    let mut cases: Vec<(String, &str)> = vec![
        ("/sys/kernel/mm/transparent_hugepage/enabled".into(), "/sys"),
        ("/proc/self/status".into(), "/proc"),
        ("/dev/null".into(), "/dev"),
        ("/dev/zero".into(), "/dev"),
    ];
    if fifo_ok {
        cases.push((s(&fifo).into(), "FIFO"));
    }
    for (target, why) in cases {
        if !Path::new(&target).exists() {
            continue;
        }
        for rw in ["write", "read"] {
            e.hwcal()
                .args(["io", &target, "--rw", rw, "--force", "--size", "4k", "-q"])
                .timeout(Duration::from_secs(60))
                .assert()
                .code(2)
                .stderr(predicate::str::contains(why))
                // Never told to add the --force it already has.
                .stderr(predicate::str::contains("add --force").not());
        }
    }
    if fifo_ok {
        // Without --force too: the answer is "not a target", not "add --force".
        e.hwcal()
            .args(["io", s(&fifo), "--rw", "write"])
            .timeout(Duration::from_secs(60))
            .assert()
            .code(2)
            .stderr(predicate::str::contains("FIFO"))
            .stderr(predicate::str::contains("--force").not());
    }
}

#[test]
fn direct_on_tmpfs_is_refused() {
    let e = Env::new();
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() {
        eprintln!("skipped: no /dev/shm");
        return;
    }
    e.hwcal()
        .args(["io", "/dev/shm", "--direct", "--size", "1M", "-q"])
        .timeout(Duration::from_secs(60))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("tmpfs"))
        .stderr(predicate::str::contains("memory"));
    // A tmpfs mounted elsewhere (root only) gets the same answer.
    if is_root() && have("mount") {
        let m = e.path("tmpfs");
        std::fs::create_dir(&m).unwrap();
        if sh("mount", &["-t", "tmpfs", "-o", "size=8m", "tmpfs", s(&m)])
            .status
            .success()
        {
            let out = e
                .hwcal()
                .args(["io", s(&m), "--direct", "--size", "1M", "-q"])
                .timeout(Duration::from_secs(60))
                .output()
                .unwrap();
            sh("umount", &[s(&m)]);
            assert_eq!(out.status.code(), Some(2), "{out:?}");
            assert!(String::from_utf8_lossy(&out.stderr).contains("tmpfs"));
        }
    }
}

/// A loop device with an ext4 filesystem, detached (and unmounted) on drop.
struct Loop {
    dev: String,
    mounts: Vec<PathBuf>,
}

impl Drop for Loop {
    fn drop(&mut self) {
        for m in self.mounts.iter().rev() {
            let _ = sh("umount", &[s(m)]);
        }
        let _ = sh("losetup", &["-d", &self.dev]);
    }
}

fn loop_tools() -> Result<(), String> {
    if !is_root() {
        return Err("not root".into());
    }
    for t in ["losetup", "mkfs.ext4", "mount", "umount", "e2fsck"] {
        if !have(t) {
            return Err(format!("no {t}"));
        }
    }
    Ok(())
}

fn attach(img: &Path, partscan: bool) -> Option<Loop> {
    let mut args = vec!["-f", "--show"];
    if partscan {
        args.push("-P");
    }
    args.push(s(img));
    let out = sh("losetup", &args);
    let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && dev.starts_with("/dev/")).then_some(Loop { dev, mounts: vec![] })
}

/// `hwcal io --force` on a mounted, formatted loop device refuses (exit 2)
/// and the filesystem stays clean (e2fsck); `--allow-mounted-write` is the
/// explicit way past, and an unmounted device may be written with --force.
#[test]
fn a_mounted_block_device_is_never_written() {
    if let Err(why) = loop_tools() {
        eprintln!("skipped: loop-device test needs root, losetup and mkfs.ext4 ({why})");
        return;
    }
    let e = Env::new();
    let img = e.path("disk.img");
    std::fs::File::create(&img).unwrap().set_len(64 << 20).unwrap();
    let Some(mut lp) = attach(&img, false) else {
        eprintln!("skipped: losetup cannot attach a loop device here");
        return;
    };
    assert!(sh("mkfs.ext4", &["-q", "-F", &lp.dev]).status.success());
    let mnt = e.path("mnt");
    std::fs::create_dir(&mnt).unwrap();
    if !sh("mount", &[&lp.dev, s(&mnt)]).status.success() {
        eprintln!("skipped: cannot mount a loop device here");
        return;
    }
    lp.mounts.push(mnt.clone());
    std::fs::write(mnt.join("precious.txt"), b"keep me").unwrap();
    for rw in ["write", "randwrite", "randrw"] {
        e.hwcal()
            .args(["io", &lp.dev, "--rw", rw, "--force", "--size", "1M", "-q"])
            .timeout(Duration::from_secs(60))
            .assert()
            .code(2)
            .stderr(predicate::str::contains("mounted on"))
            .stderr(predicate::str::contains("--allow-mounted-write"));
    }
    // --direct does not get around it either, nor a path through a symlink.
    let link = e.path("disk-link");
    std::os::unix::fs::symlink(&lp.dev, &link).unwrap();
    e.hwcal()
        .args([
            "io",
            s(&link),
            "--rw",
            "write",
            "--force",
            "--direct",
            "--size",
            "1M",
            "-q",
        ])
        .timeout(Duration::from_secs(60))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("mounted on"));
    // Reading a mounted device harms nothing and is allowed.
    e.hwcal()
        .args([
            "io", &lp.dev, "--rw", "randread", "--size", "1M", "-q", "--no-pin",
        ])
        .timeout(Duration::from_secs(60))
        .assert()
        .success();
    assert!(sh("umount", &[s(&mnt)]).status.success());
    lp.mounts.clear();
    let fsck = sh("e2fsck", &["-fn", &lp.dev]);
    assert!(
        fsck.status.success(),
        "filesystem damaged: {}",
        String::from_utf8_lossy(&fsck.stdout)
    );
    // Unmounted: --force writes, and says what it writes into.
    e.hwcal()
        .args([
            "io", &lp.dev, "--rw", "write", "--force", "--size", "1M", "-q", "--no-pin",
        ])
        .timeout(Duration::from_secs(60))
        .assert()
        .success()
        .stderr(predicate::str::contains("writing into block device"));
}

/// A block device in use as swap is refused like a mounted one.
#[test]
fn a_swap_device_is_never_written() {
    if let Err(why) = loop_tools() {
        eprintln!("skipped: swap test needs root and losetup ({why})");
        return;
    }
    if !have("mkswap") || !have("swapon") || !have("swapoff") {
        eprintln!("skipped: swap test needs mkswap, swapon and swapoff");
        return;
    }
    let e = Env::new();
    let img = e.path("swap.img");
    std::fs::File::create(&img).unwrap().set_len(16 << 20).unwrap();
    let Some(lp) = attach(&img, false) else {
        eprintln!("skipped: losetup cannot attach a loop device here");
        return;
    };
    assert!(sh("mkswap", &[&lp.dev]).status.success());
    if !sh("swapon", &[&lp.dev]).status.success() {
        eprintln!("skipped: swapon refused here");
        return;
    }
    let out = e
        .hwcal()
        .args(["io", &lp.dev, "--rw", "write", "--force", "--size", "1M", "-q"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    sh("swapoff", &[&lp.dev]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("swap"), "{out:?}");
}

/// A partition of the disk is mounted: the whole disk is refused too.
#[test]
fn a_disk_with_a_mounted_partition_is_never_written() {
    if let Err(why) = loop_tools() {
        eprintln!("skipped: partition test needs root, losetup and mkfs.ext4 ({why})");
        return;
    }
    if !have("sfdisk") {
        eprintln!("skipped: partition test needs sfdisk");
        return;
    }
    let e = Env::new();
    let img = e.path("parted.img");
    std::fs::File::create(&img).unwrap().set_len(64 << 20).unwrap();
    let mut sf = std::process::Command::new("sfdisk")
        .args(["-q", s(&img)])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    use std::io::Write;
    sf.stdin
        .take()
        .unwrap()
        .write_all(b"label: dos\n,32M,L\n")
        .unwrap();
    if !sf.wait().unwrap().success() {
        eprintln!("skipped: sfdisk failed");
        return;
    }
    let Some(mut lp) = attach(&img, true) else {
        eprintln!("skipped: losetup -P cannot attach a loop device here");
        return;
    };
    let part = format!("{}p1", lp.dev);
    // The partition node may appear a moment later.
    for _ in 0..50 {
        if Path::new(&part).exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    if !Path::new(&part).exists() {
        eprintln!("skipped: no partition device {part} (no udev/devtmpfs partition nodes here)");
        return;
    }
    assert!(sh("mkfs.ext4", &["-q", "-F", &part]).status.success());
    let mnt = e.path("pmnt");
    std::fs::create_dir(&mnt).unwrap();
    if !sh("mount", &[&part, s(&mnt)]).status.success() {
        eprintln!("skipped: cannot mount the partition here");
        return;
    }
    lp.mounts.push(mnt.clone());
    e.hwcal()
        .args(["io", &lp.dev, "--rw", "write", "--force", "--size", "1M", "-q"])
        .timeout(Duration::from_secs(60))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("partition"));
    assert!(sh("umount", &[s(&mnt)]).status.success());
    lp.mounts.clear();
    assert!(sh("e2fsck", &["-fn", &part]).status.success());
}

// ---------------------------------------------------------------- databases

/// Another program's SQLite file: every command refuses it with exit 2 and
/// its bytes are unchanged, with no WAL or journal file beside it.
#[test]
fn another_programs_database_is_never_touched() {
    let e = Env::new();
    let other = e.path("otherapp.db");
    {
        let c = rusqlite::Connection::open(&other).unwrap();
        c.execute_batch(
            "CREATE TABLE accounts (name TEXT, balance INTEGER); INSERT INTO accounts VALUES ('a', 1);",
        )
        .unwrap();
    }
    let before = std::fs::read(&other).unwrap();
    let f = e.write_profile("p.json", &full_profile(1));
    let html = e.path("r.html");
    let cmds: Vec<Vec<&str>> = vec![
        vec!["db", "list"],
        vec!["db", "show", "1"],
        vec!["db", "show", "latest"],
        vec!["db", "export", "1"],
        vec!["db", "compare", "1", "2"],
        vec!["db", "rm", "1"],
        vec!["db", "import", s(&f)],
        vec!["report", "--html", s(&html)],
        vec!["clock", "--save", "--batches", "4"],
        vec!["io", ".", "--save", "--size", "1M"],
        vec!["ctx", "--save", "2"],
        vec!["cache", "--save"],
        vec!["tlb", "--save"],
        vec!["run", "--only", "clock"],
    ];
    for args in cmds {
        e.hwcal()
            .args(["--db", s(&other)])
            .args(&args)
            .timeout(Duration::from_secs(60))
            .assert()
            .code(2)
            .stderr(
                predicate::str::contains("not an hwcal database")
                    .or(predicate::str::contains("another program")),
            )
            .stderr(predicate::function(|t: &str| t.lines().count() == 1));
        assert_eq!(
            std::fs::read(&other).unwrap(),
            before,
            "{args:?} changed the file"
        );
    }
    for ext in ["-wal", "-shm", "-journal"] {
        assert!(!e.path(&format!("otherapp.db{ext}")).exists(), "{ext} created");
    }
    assert!(!html.exists());
    // Text files and empty files are not databases either.
    for (name, bytes) in [("notes.txt", &b"my notes\n"[..]), ("empty.db", &b""[..])] {
        let p = e.path(name);
        std::fs::write(&p, bytes).unwrap();
        e.hwcal()
            .args(["--db", s(&p), "db", "import", s(&f)])
            .assert()
            .code(2);
        assert_eq!(std::fs::read(&p).unwrap(), bytes);
    }
}

#[test]
fn read_only_commands_create_nothing() {
    let e = Env::new();
    let before = e.tree();
    let missing = e.path("no/such/dir/hwcal.db");
    for args in [
        vec!["db", "show", "1"],
        vec!["db", "show", "latest"],
        vec!["db", "export", "1"],
        vec!["db", "compare", "1", "2"],
        vec!["db", "rm", "1"],
        vec!["report", "--html", "-"],
    ] {
        for db in [None, Some(&missing)] {
            let mut c = e.hwcal();
            if let Some(d) = db {
                c.args(["--db", s(d)]);
            }
            c.args(&args)
                .assert()
                .code(2)
                .stderr(predicate::str::contains("no run"));
        }
    }
    // A --db that names nothing is a mistyped path, not an empty database;
    // the default location before the first run is simply empty.
    e.hwcal()
        .args(["--db", s(&missing), "db", "list"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no database there"));
    e.hwcal()
        .args(["db", "list"])
        .assert()
        .success()
        .stdout(predicate::str::contains("no runs stored yet"));
    assert_eq!(e.tree(), before, "a read-only command created something");
}

#[test]
fn url_schemes_are_usage_errors_and_create_nothing() {
    let e = Env::new();
    let f = e.write_profile("p.json", &full_profile(0));
    let before = e.tree();
    // postgres:// URLs are a store of their own (tests/fleet.rs).
    for url in ["x://y", "sqlite://a.db", "file:///tmp/x.db"] {
        for args in [
            vec!["db", "list"],
            vec!["db", "import", s(&f)],
            vec!["clock", "--save"],
        ] {
            e.hwcal()
                .args(["--db", url])
                .args(&args)
                .assert()
                .code(2)
                .stderr(predicate::str::contains("scheme is not supported"));
        }
        // From the environment too.
        e.hwcal()
            .env("HWCAL_DB", url)
            .args(["db", "list"])
            .assert()
            .code(2);
    }
    e.hwcal().args(["--db", "", "db", "list"]).assert().code(2);
    assert_eq!(e.tree(), before);
}

/// The measuring commands that offer --save check the database before
/// measuring (a bad --db fails at once) and `validate` does not offer it.
#[test]
fn save_is_honoured_or_not_offered() {
    let e = Env::new();
    for cmd in [
        vec!["cache"],
        vec!["tlb"],
        vec!["ctx", "2"],
        vec!["io", "."],
        vec!["mem"],
        vec!["clock"],
    ] {
        e.hwcal()
            .args(["--db", "x://nowhere"])
            .args(&cmd)
            .args(["--save", "--quiet"])
            .timeout(Duration::from_secs(30))
            .assert()
            .code(2)
            .stderr(predicate::str::contains("not supported"));
    }
    for flag in ["--save", "--json"] {
        e.hwcal()
            .args(["validate", "clock", flag])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("unexpected argument"));
    }
    // io and ctx store their run (quick ones).
    let data = e.path("iodir");
    std::fs::create_dir(&data).unwrap();
    e.hwcal()
        .args([
            "io",
            s(&data),
            "--size",
            "1M",
            "-t",
            "0.1",
            "--save",
            "-q",
            "--no-pin",
        ])
        .timeout(Duration::from_secs(60))
        .assert()
        .success()
        .stderr(predicate::str::contains("stored as run 1"));
    e.hwcal()
        .args(["ctx", "-N", "3", "-W", "0", "2", "--save", "-q"])
        .timeout(Duration::from_secs(60))
        .assert()
        .success()
        .stderr(predicate::str::contains("stored as run 2"));
    // The sections each run measured: a column of `--wide` only.
    e.hwcal()
        .args(["db", "list", "--wide"])
        .assert()
        .success()
        .stdout(predicate::str::contains("io").and(predicate::str::contains("ctx")));
    // run keeps --save as the (default) alias and --no-save.
    e.hwcal()
        .args(["run", "--save", "--no-save", "--list"])
        .assert()
        .code(2);
}

/// Many processes saving into a database that does not exist yet: every
/// one succeeds and every run is stored.
#[test]
fn concurrent_first_saves_all_land() {
    const N: usize = 100;
    let e = Env::new();
    let files: Vec<PathBuf> = (0..N)
        .map(|i| {
            let mut p = full_profile((i % 7) as u32);
            p.created_unix += i as u64; // each a different run
            e.write_profile(&format!("p{i}.json"), &p)
        })
        .collect();
    let db = e.path("new/dir/hwcal.db");
    let children: Vec<_> = files
        .iter()
        .map(|f| {
            common::hwcal_process()
                .args(["--db", s(&db), "db", "import", s(f)])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut failed = Vec::new();
    for c in children {
        let out = c.wait_with_output().unwrap();
        if !out.status.success() {
            failed.push(String::from_utf8_lossy(&out.stderr).into_owned());
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {N} failed: {:?}",
        failed.len(),
        &failed[..failed.len().min(3)]
    );
    let conn = rusqlite::Connection::open(&db).unwrap();
    let n: i64 = conn
        .query_row("SELECT count(*) FROM profiles", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n as usize, N);
    let ok: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    // No temporary files left behind.
    let stray: Vec<_> = std::fs::read_dir(db.parent().unwrap())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".new-"))
        .collect();
    assert!(stray.is_empty(), "{stray:?}");
}

/// SIGKILL at spread-out moments of imports (database creation included):
/// the database passes SQLite's integrity check and holds every run whose
/// import reported success.
#[test]
fn kills_during_imports_lose_nothing_committed() {
    let e = Env::new();
    let mut big = full_profile(3);
    big.raw.push(hwcal_model::RawCurve {
        id: "filler".into(),
        x_label: "i".into(),
        y_label: "v".into(),
        points: (0..40_000)
            .map(|k| hwcal_model::RawPoint {
                x: k as f64,
                y: (k as f64 * 0.37).sin(),
                samples: vec![1.0 / (k as f64 + 1.5); 3],
                mhz: vec![],
            })
            .collect(),
    });
    let db = e.path("k/hwcal.db");
    let mut committed = 0usize;
    let mut killed = 0usize;
    // How long one import takes here (creating the database): kill delays
    // are spread over 0..1.3x that, deterministically.
    let t0 = std::time::Instant::now();
    big.created_unix = 1_700_000_000;
    let f = e.write_profile("big.json", &big);
    e.hwcal()
        .args(["--db", s(&db), "db", "import", s(&f)])
        .assert()
        .success();
    committed += 1;
    let span_us = (t0.elapsed().as_micros() as u64 * 13 / 10).max(1000);
    std::fs::remove_file(&db).unwrap();
    committed -= 1;
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for i in 0..20u64 {
        big.created_unix = 1_800_000_000 + i;
        let f = e.write_profile("big.json", &big);
        let mut c = common::hwcal_process()
            .args(["--db", s(&db), "db", "import", s(&f)])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        std::thread::sleep(Duration::from_micros(x % span_us));
        let _ = c.kill();
        let st = c.wait().unwrap();
        if st.success() {
            committed += 1;
        } else {
            killed += 1;
        }
        if db.exists() {
            let conn = rusqlite::Connection::open(&db).unwrap();
            let ok: String = conn
                .query_row("PRAGMA integrity_check", [], |r| r.get(0))
                .unwrap();
            assert_eq!(ok, "ok", "after import {i}");
            let n: i64 = conn
                .query_row("SELECT count(*) FROM profiles", [], |r| r.get(0))
                .unwrap();
            assert!(
                n as usize >= committed,
                "import {i}: {n} rows, {committed} committed"
            );
        }
    }
    eprintln!("{committed} imports completed, {killed} killed");
    // The database (whatever state the kills left) still opens in hwcal.
    if db.exists() {
        e.hwcal().args(["--db", s(&db), "db", "list"]).assert().success();
    }
}

/// SIGKILL at spread-out moments of measuring commands with --save (a short
/// context-switch ring: measure, print, store): every run that exited 0 is
/// stored and the database stays intact.
#[test]
fn kills_during_measuring_saves_lose_nothing_committed() {
    let e = Env::new();
    let db = e.path("m/hwcal.db");
    let args = ["ctx", "-N", "3", "-W", "0", "2", "--save", "-q"];
    let t0 = std::time::Instant::now();
    let first = common::hwcal_process()
        .args(["--db", s(&db)])
        .args(args)
        .output()
        .unwrap();
    assert!(first.status.success(), "{first:?}");
    let span_us = (t0.elapsed().as_micros() as u64 * 12 / 10).max(1000);
    let mut committed = 1usize;
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    for i in 0..12 {
        let mut c = common::hwcal_process()
            .args(["--db", s(&db)])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        std::thread::sleep(Duration::from_micros(x % span_us));
        let _ = c.kill();
        if c.wait().unwrap().success() {
            committed += 1;
        }
        let conn = rusqlite::Connection::open(&db).unwrap();
        let ok: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(ok, "ok", "after run {i}");
        let n: i64 = conn
            .query_row("SELECT count(*) FROM profiles", [], |r| r.get(0))
            .unwrap();
        assert!(
            n as usize >= committed,
            "run {i}: {n} rows, {committed} committed"
        );
    }
    e.hwcal().args(["--db", s(&db), "db", "list"]).assert().success();
}

/// A database hwcal may not read, or not write, is named as a permission
/// problem (not "does not exist", not an SQLite message). As root the
/// commands run as `nobody` through setpriv; skipped when that is not
/// possible.
#[test]
fn permission_problems_are_named() {
    use std::os::unix::fs::PermissionsExt;
    let e = Env::new();
    let as_user = |args: &[&str]| -> std::process::Output {
        let mut c = if is_root() {
            // The binary, through cargo's target runner where one is set.
            let bin = common::hwcal_process();
            let mut c = std::process::Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(bin.get_program())
                .args(bin.get_args());
            c
        } else {
            common::hwcal_process()
        };
        c.env("HWCAL_DB", e.db())
            .env("HOME", e.dir.path())
            .args(args)
            .output()
            .unwrap()
    };
    if is_root() && (!have("setpriv") || as_user(&["--version"]).status.code() != Some(0)) {
        eprintln!("skipped: running as root without a way to drop privileges (setpriv)");
        return;
    }
    let perm = |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    perm(e.dir.path(), 0o755);
    let f = e.write_profile("p.json", &full_profile(0));
    perm(&f, 0o644);
    e.hwcal().args(["db", "import", s(&f)]).assert().success();
    perm(&e.path("data"), 0o755);
    // A database the user may read but not write (a team's shared file,
    // in a directory they may not write either) is read, read-only.
    perm(&e.db(), 0o444);
    for args in [
        vec!["db", "list"],
        vec!["db", "show", "1"],
        vec!["db", "export", "--csv"],
    ] {
        let out = as_user(&args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for (mode, args) in [
        (0o000, vec!["db", "list"]),
        (0o000, vec!["db", "show", "1"]),
        (0o444, vec!["db", "import", s(&f)]),
    ] {
        perm(&e.db(), mode);
        let out = as_user(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{mode:o} {args:?}: {err}");
        assert!(err.contains("permission denied"), "{mode:o} {args:?}: {err}");
        assert!(
            !err.contains("does not exist") && !err.contains("readonly"),
            "{err}"
        );
    }
    perm(&e.db(), 0o644);
    // A directory the user cannot create the database in.
    perm(&e.path("data"), 0o555);
    let other = e.path("data/new.db");
    let out = as_user(&["--db", s(&other), "db", "import", s(&f)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("permission denied"));
    perm(&e.path("data"), 0o755);
}

// ---------------------------------------------------------- hostile profiles

fn no_escapes(out: &[u8]) -> bool {
    let t = String::from_utf8_lossy(out);
    !out.contains(&0x1b)
        && !out.contains(&0x07)
        && !out.contains(&b'\r')
        && !t.contains('\u{9b}')
        && !t.contains('\u{202e}')
}

#[test]
fn escape_sequences_in_profiles_are_shown_not_obeyed() {
    let e = Env::new();
    let mut p = full_profile(2);
    {
        let m = p.machine.as_mut().unwrap();
        m.hostname = "evil\x1b]0;pwned\x07\nFORGED 99 line".into();
        m.cpu_model_name = "\x1b[2J\x1b[HCPU\u{9b}31m\u{202e}".into();
    }
    p.command = "hwcal run\r\x1b[1Aoverwritten".into();
    p.notes
        .push(hwcal_model::Note::legacy("note \x1b[5mblink\x1b[0m"));
    let f = e.write_profile("evil.json", &p);
    let runs = [
        vec!["db", "import", s(&f)],
        vec!["db", "list"],
        vec!["db", "show", "1"],
        vec!["db", "compare", "1", "1"],
        vec!["analyze", s(&f)],
        vec!["db", "import", s(&f)], // "already stored" message
    ];
    for args in runs {
        let out = e.hwcal().args(&args).assert().success().get_output().clone();
        assert!(
            no_escapes(&out.stdout),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(
            no_escapes(&out.stderr),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            !text.lines().any(|l| l.starts_with("FORGED")),
            "{args:?}: a hostname started a line: {text}"
        );
    }
    // The JSON keeps the data (escaped as JSON does), so nothing is lost.
    let out = e
        .hwcal()
        .args(["db", "export", "1"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert!(no_escapes(&out), "{}", String::from_utf8_lossy(&out));
    let back = hwcal_report::parse_profile(&out).unwrap();
    assert_eq!(back.machine.unwrap().hostname, p.machine.unwrap().hostname);
    // An output never goes over the database itself.
    let before = std::fs::read(e.db()).unwrap();
    for args in [
        vec!["db", "export", "1", "--json"],
        vec!["analyze", s(&f), "--json"],
    ] {
        e.hwcal()
            .args(&args)
            .arg(s(&e.db()))
            .assert()
            .code(2)
            .stderr(predicate::str::contains("is the results database"));
    }
    assert_eq!(std::fs::read(e.db()).unwrap(), before);
    // A file name with an escape sequence, in an error message.
    let bad = e.path("x\x1b[2J.json");
    e.hwcal()
        .args(["analyze", s(&bad)])
        .assert()
        .code(2)
        .stderr(predicate::function(|t: &str| !t.contains('\x1b')));
}

#[test]
fn absurd_raw_values_are_refused() {
    let e = Env::new();
    type Mutation = fn(&mut hwcal_model::Profile);
    let cases: [(&str, Mutation, &str); 4] = [
        (
            "negative size",
            |p| p.raw[0].points[0].x = -4096.0,
            "points[0].x = -4096",
        ),
        (
            "1e14 ns latency",
            |p| {
                for q in &mut p.raw[0].points {
                    q.y = 1e14;
                    q.samples = vec![1e14];
                }
            },
            "1e14",
        ),
        (
            "negative latency",
            |p| p.raw[0].points[3].samples = vec![-5.0],
            "samples = -5",
        ),
        (
            "negative figure",
            |p| p.caches.as_mut().unwrap()[0].miss_latency_ns = Some(-0.42),
            "miss_latency_ns = -0.42",
        ),
    ];
    for (what, mutate, msg) in cases {
        let mut p = full_profile(1);
        mutate(&mut p);
        let f = e.write_profile("absurd.json", &p);
        // A derived figure is re-derived by analyze from the raw curves
        // (with a note); only import refuses it.
        let derived = what == "negative figure";
        if derived {
            e.hwcal()
                .args(["analyze", "--json", "-", s(&f)])
                .assert()
                .success()
                .stdout(predicate::str::contains("implausible_replaced"))
                .stdout(predicate::str::contains("-0.42").and(predicate::str::contains("re-derived")));
        }
        for cmd in ["analyze", "import"] {
            if derived && cmd == "analyze" {
                continue;
            }
            let mut c = e.hwcal();
            if cmd == "import" {
                c.args(["db", "import"]);
            } else {
                c.arg("analyze");
            }
            c.arg(s(&f))
                .assert()
                .code(2)
                .stderr(predicate::str::contains(msg.replace("1e14", "100000000000000")))
                .stderr(predicate::str::contains("panicked").not());
        }
        let _ = what;
    }
    assert!(!e.db().exists(), "nothing stored from refused imports");
}

#[test]
fn wrong_types_huge_and_endless_files_are_refused() {
    let e = Env::new();
    let f = e.path("s.json");
    std::fs::write(&f, br#"{"schema_version": "1", "tool": "hwcal"}"#).unwrap();
    e.hwcal()
        .args(["db", "import", s(&f)])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is a string"));
    let big = e.path("big.json");
    std::fs::File::create(&big).unwrap().set_len(65 << 20).unwrap();
    for args in [
        vec!["db", "import", s(&big)],
        vec!["analyze", s(&big)],
        vec!["db", "import", "/dev/urandom"],
        vec!["analyze", "/dev/zero"],
    ] {
        e.hwcal()
            .args(&args)
            .timeout(Duration::from_secs(20))
            .assert()
            .code(2)
            .stderr(predicate::str::contains("MiB").or(predicate::str::contains("not a regular file")));
    }
    assert!(!e.db().exists());
}

// ---------------------------------------------------------------- outputs

#[test]
fn output_destinations_are_checked_together() {
    let e = Env::new();
    let f = e.write_profile("p.json", &full_profile(1));
    let before = e.tree();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["run", "--only", "clock", "--json", "-", "--html", "-"],
            "stdout",
        ),
        (
            vec!["run", "--only", "clock", "--json", "o.x", "--html", "./o.x"],
            "same file",
        ),
        (vec!["info", "--json", ""], "empty path"),
        (vec!["run", "--only", "clock", "--html", ""], "empty path"),
        (vec!["report", "--html", ""], "empty path"),
        (vec!["db", "export", "1", "--json", ""], "empty path"),
        (
            vec!["analyze", s(&f), "--plot", "/nonexistent-hwcal/dir"],
            "does not exist",
        ),
        (
            vec!["analyze", s(&f), "--json", "/nonexistent-hwcal/x.json"],
            "does not exist",
        ),
        (
            vec!["analyze", s(&f), "--gnuplot", "/nonexistent-hwcal/x"],
            "does not exist",
        ),
        (
            vec!["analyze", s(&f), "--gnuplot", "x\nsystem('touch pwned')"],
            "control character",
        ),
        (vec!["analyze", s(&f), "--gnuplot", "it's"], "quote"),
        (vec!["report", s(&f), "--html", s(&f)], "same file"),
    ];
    for (args, msg) in cases {
        e.hwcal()
            .args(&args)
            .timeout(Duration::from_secs(30))
            .assert()
            .code(2)
            .stderr(predicate::str::contains(msg));
    }
    assert!(!Path::new("/nonexistent-hwcal").exists());
    assert_eq!(e.tree(), before, "a refused command wrote something");
    // --plot creates DIR itself when its parent exists.
    e.hwcal()
        .args([
            "analyze",
            s(&f),
            "--plot",
            s(&e.path("plots")),
            "--gnuplot",
            s(&e.path("g")),
        ])
        .assert()
        .success();
    assert!(e.path("plots").is_dir());
}

/// A password in `--db` (any form the driver reads) never reaches the
/// recorded command line of a profile, nor any message. `info` records
/// the command without connecting to the database.
#[test]
fn a_database_password_is_never_recorded() {
    let e = Env::new();
    for args in [
        vec![
            "--db",
            "postgres://u:S3cretPW@127.0.0.1:1/x",
            "info",
            "--json",
            "-",
        ],
        vec!["--db=postgres://u:S3cretPW@127.0.0.1:1/x", "info", "--json", "-"],
        vec![
            "--db",
            "postgres://slash:ab/S3cretPW@127.0.0.1:1/x",
            "info",
            "--json",
            "-",
        ],
        vec![
            "--db",
            "postgres://q:ab?S3cretPW@127.0.0.1:1/x",
            "info",
            "--json",
            "-",
        ],
        vec![
            "--db",
            "postgresql://127.0.0.1:1/x?pass%77ord=S3cretPW",
            "info",
            "--json",
            "-",
        ],
    ] {
        let out = e.hwcal().args(&args).output().unwrap();
        let all = [out.stdout.as_slice(), out.stderr.as_slice()].concat();
        let text = String::from_utf8_lossy(&all);
        assert!(!text.contains("S3cretPW"), "{args:?}: {text}");
        if out.status.success() {
            let p: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let cmd = p["command"].as_str().unwrap();
            assert!(cmd.contains("***") && cmd.contains("127.0.0.1:1"), "{cmd}");
        }
    }
}

/// An argument that is not UTF-8 (a file name in another encoding) is
/// recorded lossily, never a panic.
#[test]
fn a_non_utf8_argument_does_not_panic() {
    use std::os::unix::ffi::OsStrExt;
    let e = Env::new();
    let name = std::ffi::OsStr::from_bytes(b"./\xff.db");
    let out = e
        .hwcal()
        .arg("--db")
        .arg(name)
        .args(["os", "--only", "null", "--batches", "5", "--json", "-"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !err.contains("panicked"), "{err}");
    let p: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        p["command"].as_str().unwrap().contains(".db os"),
        "{}",
        p["command"]
    );
}

/// A hostile profile under the input cap with a sweep of a million points
/// is refused at once (the analysis would need gigabytes), and the
/// refusal reads the file without building a value tree of it.
#[test]
fn a_million_point_sweep_is_refused_not_analysed() {
    let e = Env::new();
    let mut p = full_profile(1);
    let c = p
        .raw
        .iter_mut()
        .find(|c| c.id == "cache.latency")
        .expect("the sample profile has a cache sweep");
    c.points = (0..1_000_000)
        .map(|i| hwcal_model::RawPoint {
            x: 4096.0 + i as f64,
            y: 1.0,
            ..Default::default()
        })
        .collect();
    let f = e.path("huge.json");
    std::fs::write(&f, serde_json::to_vec(&p).unwrap()).unwrap();
    for cmd in [vec!["analyze"], vec!["db", "import"]] {
        e.hwcal()
            .args(&cmd)
            .arg(s(&f))
            .timeout(Duration::from_secs(120))
            .assert()
            .code(2)
            .stderr(predicate::str::contains("1000000 points, more than 10000"));
    }
}

/// `db import` stores every file even when its reader stops after the
/// first line (`| head -1`): a broken pipe must not end the import
/// half-way.
#[test]
fn an_import_is_whole_when_its_reader_stops_early() {
    // The child is started without the target runner (a plain process, to
    // hold its pipe): an emulated build cannot run that way.
    if common::emulated("an_import_is_whole_when_its_reader_stops_early (a plain child process)") {
        return;
    }
    let e = Env::new();
    let files: Vec<PathBuf> = (1..=8)
        .map(|i| e.write_profile(&format!("r{i}.json"), &full_profile(i)))
        .collect();
    let bin = assert_cmd::cargo::cargo_bin("hwcal");
    let mut child = std::process::Command::new(&bin)
        .env("HWCAL_DB", e.db())
        .env("HOME", e.path(""))
        .args(["db", "import"])
        .args(&files)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes away before the first line (the worst case of
    // `| head -1`): every write to stdout fails from then on.
    drop(child.stdout.take());
    let _ = child.wait().unwrap();
    let out = e.hwcal().args(["db", "list", "--json"]).output().unwrap();
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows.as_array().map(Vec::len), Some(8), "{rows}");
}

/// A guest or container that hides `/proc/cpuinfo` and
/// `/sys/devices/system/cpu` (bind-mounted over in a private mount
/// namespace here): the profile said "(, family ? …)" and "0 logical,
/// online []" though CPUID answers and the process has CPUs to run on.
/// Needs root for the mount namespace; skipped with a message otherwise.
#[test]
fn hidden_cpuinfo_and_cpu_sysfs_still_name_the_cpu_and_its_cpus() {
    let bin = <std::process::Command as assert_cmd::cargo::CommandCargoExt>::cargo_bin("hwcal").unwrap();
    let script = format!(
        "mount -t tmpfs none /sys/devices/system/cpu && mount --bind /dev/null /proc/cpuinfo && exec {} info --json -",
        bin.get_program().to_string_lossy()
    );
    let out = match std::process::Command::new("unshare")
        .args(["-m", "sh", "-c", &script])
        .output()
    {
        Ok(o) if o.status.success() => o,
        Ok(o) => {
            eprintln!(
                "skipped: no private mount namespace here ({})",
                String::from_utf8_lossy(&o.stderr).trim()
            );
            return;
        }
        Err(e) => {
            eprintln!("skipped: unshare not available ({e})");
            return;
        }
    };
    let p: hwcal_model::Profile = serde_json::from_slice(&out.stdout).unwrap();
    let m = p.machine.unwrap();
    assert!(
        !m.online_cpus.is_empty() && m.logical_cpus >= 1,
        "{:?}",
        m.online_cpus
    );
    if cfg!(target_arch = "x86_64") {
        assert!(!m.cpu_vendor.is_empty(), "{m:?}");
        assert!(m.cpu_family.is_some() && m.cpu_model.is_some(), "{m:?}");
    }
}

/// A full disk stops a `db site` build part of the way (issue 41: the next
/// build refused to complete it): it fails with the reason, leaves no
/// temporary file, and once there is room the next build completes the
/// site. A small tmpfs stands in for the disk (root only; skipped with a
/// message otherwise).
#[test]
fn a_site_build_a_full_disk_stopped_completes_once_there_is_room() {
    if !is_root() || !have("mount") {
        eprintln!("skipped: mounting a small tmpfs needs root and mount");
        return;
    }
    let e = Env::new();
    for v in 0..6 {
        let f = e.write_profile(&format!("p{v}.json"), &full_profile(v));
        e.hwcal().args(["db", "import", s(&f)]).assert().success();
    }
    let m = e.path("small");
    std::fs::create_dir(&m).unwrap();
    if !sh("mount", &["-t", "tmpfs", "-o", "size=64k", "tmpfs", s(&m)])
        .status
        .success()
    {
        eprintln!("skipped: cannot mount a tmpfs here");
        return;
    }
    let site = m.join("site");
    let full = e.hwcal().args(["db", "site", s(&site)]).output().unwrap();
    let grown = sh("mount", &["-o", "remount,size=16m", s(&m)]);
    let again = e.hwcal().args(["db", "site", s(&site)]).output().unwrap();
    let leftovers: Vec<PathBuf> = std::fs::read_dir(site.join("runs"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    let pages = site.join("index.html").is_file();
    sh("umount", &[s(&m)]);
    assert_eq!(full.status.code(), Some(1), "{full:?}");
    assert!(
        String::from_utf8_lossy(&full.stderr).contains("No space left"),
        "{full:?}"
    );
    assert!(grown.status.success(), "{grown:?}");
    assert!(again.status.success(), "{again:?}");
    assert!(pages, "no index after the second build");
    assert!(
        leftovers
            .iter()
            .all(|p| p.extension().is_some_and(|x| x == "html")),
        "{leftovers:?}"
    );
    assert_eq!(leftovers.len(), 6, "{leftovers:?}");
}

/// `hwcal os` interrupted (SIGINT) while its scratch directory exists
/// leaves nothing in TMPDIR (issue 41, low: "temp files left by SIGINT in
/// `hwcal os`": its `hwcal-os-PID-TAG` directory stayed behind).
#[test]
fn an_interrupted_os_probe_leaves_no_scratch_behind() {
    let e = Env::new();
    let tmp = e.path("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let mut child = common::hwcal_process()
        .args(["os", "--batches", "400", "--json"])
        .arg(e.path("os.json"))
        .env("TMPDIR", &tmp)
        .env("HWCAL_DB", e.db())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Interrupt while the scratch directory is there (or once the probe
    // has run for a second, if it was never seen).
    let t0 = std::time::Instant::now();
    while std::fs::read_dir(&tmp).unwrap().next().is_none() && t0.elapsed() < Duration::from_secs(1) {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let _ = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let t1 = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(t1.elapsed() < Duration::from_secs(60), "hwcal os did not stop");
        std::thread::sleep(Duration::from_millis(10));
    }
    let left: Vec<PathBuf> = std::fs::read_dir(&tmp)
        .unwrap()
        .flatten()
        .map(|d| d.path())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
