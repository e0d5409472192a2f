//! A process killed with SIGKILL in the middle of writes leaves a database
//! that opens, passes SQLite's integrity check and lists every run stored
//! before. The writer is this same test binary re-executed in "child" mode
//! (selected by an environment variable). Two ways to kill it: at arbitrary
//! moments of a loop of large inserts, and deterministically inside an open
//! transaction whose (multi-MB, so partly spilled to the WAL) row is written
//! but not committed.

use hwcal_db::{Db, Origin};
use hwcal_model::{sample::full_profile, RawCurve, RawPoint};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::Duration;

const CHILD_ENV: &str = "HWCAL_DB_CRASH_CHILD";

/// A profile of a few MB (a long raw curve), so each insert takes a while.
fn big_profile(i: u32) -> hwcal_model::Profile {
    let mut p = full_profile(i % 7);
    p.raw.push(RawCurve {
        id: "filler".into(),
        x_label: "i".into(),
        y_label: "v".into(),
        points: (0..60_000)
            .map(|k| RawPoint {
                x: k as f64,
                y: (k as f64 * 0.37 + i as f64).sin(),
                samples: vec![1.0 / (k as f64 + 1.5); 3],
                mhz: vec![],
            })
            .collect(),
    });
    p
}

/// Child mode: insert until killed, reporting each committed id on stdout.
#[test]
fn child_inserts_until_killed() {
    let Some(path) = std::env::var_os(CHILD_ENV) else {
        return; // normal test run: nothing to do
    };
    let mut db = Db::open(path).unwrap();
    for i in 0.. {
        let id = db.insert(&big_profile(i)).unwrap();
        println!("committed {id}");
    }
}

/// Child mode: one insert that stops inside its transaction and waits to be
/// killed.
#[test]
fn child_hangs_inside_a_transaction() {
    let Some(path) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let mut db = Db::open(path).unwrap();
    db.insert_with_hook(&big_profile(99), Origin::Run, || {
        println!("in transaction");
        std::thread::sleep(Duration::from_secs(60));
    })
    .unwrap();
    println!("committed (should have been killed)");
}

/// This test binary, re-executed through cargo's target runner where one
/// is set for this architecture (`qemu-aarch64 -L ...` when the aarch64
/// build is tested under emulation: the binary cannot be exec'd directly).
fn this_binary() -> Command {
    let exe = std::env::current_exe().unwrap();
    let arch = std::env::consts::ARCH.to_uppercase();
    let runner = std::env::vars()
        .find(|(k, _)| k.starts_with("CARGO_TARGET_") && k.ends_with("_RUNNER") && k.contains(&arch));
    match runner {
        Some((_, r)) if !r.trim().is_empty() => {
            let mut words = r.split_whitespace();
            let mut c = Command::new(words.next().unwrap());
            c.args(words).arg(exe);
            c
        }
        _ => Command::new(exe),
    }
}

fn spawn_child(test: &str, path: &Path) -> (Child, BufReader<ChildStdout>) {
    let mut child = this_binary()
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = BufReader::new(child.stdout.take().unwrap());
    (child, out)
}

/// Read the child's stdout until a line containing `marker`; the rest of
/// that line. (The marker may follow libtest's `test name ... ` on the
/// same line.)
fn wait_for(out: &mut BufReader<ChildStdout>, marker: &str) -> String {
    let mut line = String::new();
    loop {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "child ended early");
        if let Some(i) = line.find(marker) {
            return line[i + marker.len()..].trim().to_string();
        }
    }
}

/// The database opens, is intact, holds every id in `must_have`, and every
/// row reads back whole. Returns the ids present.
fn check_intact(path: &Path, must_have: &[i64]) -> Vec<i64> {
    let db = Db::open(path).expect("database opens after kill -9");
    let ok: String = rusqlite::Connection::open(path)
        .unwrap()
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    let ids: Vec<i64> = db.list().unwrap().iter().map(|s| s.id).collect();
    for id in must_have {
        assert!(ids.contains(id), "run {id} lost after kill -9 (have {ids:?})");
    }
    for id in &ids {
        db.get(*id).unwrap_or_else(|e| panic!("row {id}: {e}"));
    }
    ids
}

#[test]
fn sigkill_inside_a_transaction_leaves_no_row_and_loses_nothing() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tx.db");
    let earlier: Vec<i64> = {
        let mut db = Db::open(&path).unwrap();
        (0..3).map(|i| db.insert(&full_profile(i)).unwrap()).collect()
    };
    let (mut child, mut out) = spawn_child("child_hangs_inside_a_transaction", &path);
    wait_for(&mut out, "in transaction");
    // The uncommitted row is several MB: SQLite has spilled part of it to
    // the WAL by now, so recovery really has frames to discard.
    let wal = std::fs::metadata(dir.path().join("tx.db-wal")).map_or(0, |m| m.len());
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(wal > 1 << 20, "WAL holds {wal} bytes of the open transaction");
    let ids = check_intact(&path, &earlier);
    assert_eq!(ids, earlier, "the killed insert left no row");
    // And the database takes new rows afterwards.
    let id = Db::open(&path).unwrap().insert(&full_profile(4)).unwrap();
    assert!(id > *earlier.last().unwrap());
}

#[test]
fn sigkill_during_inserts_leaves_a_usable_database() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crash.db");
    let earlier: Vec<i64> = {
        let mut db = Db::open(&path).unwrap();
        (0..3).map(|i| db.insert(&full_profile(i)).unwrap()).collect()
    };
    for round in 0..3u64 {
        let (mut child, mut out) = spawn_child("child_inserts_until_killed", &path);
        let committed: Vec<i64> = (0..2)
            .map(|_| wait_for(&mut out, "committed ").parse().unwrap())
            .collect();
        // Building, serialising (~25 ms) and writing (~35 ms in SQLite) one
        // of these profiles takes ~70 ms here: kill at a different point of
        // the next insert each round.
        std::thread::sleep(Duration::from_millis(20 + 25 * round));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let must: Vec<i64> = earlier.iter().chain(&committed).copied().collect();
        check_intact(&path, &must);
    }
}
