//! A process killed with SIGKILL in the middle of writes leaves a database
//! that opens, passes SQLite's integrity check and lists every run stored
//! before. The writer is this same test binary re-executed in "child" mode
//! (selected by an environment variable), inserting large profiles in a loop
//! so the kill very likely lands inside a transaction.

use hwcal_db::Db;
use hwcal_model::{sample::full_profile, RawCurve, RawPoint};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
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
    for round in 0..5u64 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "child_inserts_until_killed",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, &path)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut committed = Vec::new();
        let mut line = String::new();
        while committed.len() < 2 {
            line.clear();
            assert!(out.read_line(&mut line).unwrap() > 0, "child ended early");
            if let Some(id) = line.trim().strip_prefix("committed ") {
                committed.push(id.parse::<i64>().unwrap());
            }
        }
        // Building, serialising (~25 ms) and writing (~35 ms in SQLite) one
        // of these profiles takes ~70 ms here: kill at a different point of
        // the next insert each round, so some kills land inside the write.
        std::thread::sleep(Duration::from_millis(20 + 15 * round));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();

        let db = Db::open(&path).expect("database opens after kill -9");
        let ok: String = rusqlite::Connection::open(&path)
            .unwrap()
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(ok, "ok");
        let ids: Vec<i64> = db.list().unwrap().iter().map(|s| s.id).collect();
        for id in earlier.iter().chain(&committed) {
            assert!(ids.contains(id), "run {id} lost after kill -9 (have {ids:?})");
        }
        // No half-written row: every listed row reads back as a whole profile.
        for id in &ids {
            db.get(*id).unwrap_or_else(|e| panic!("row {id}: {e}"));
        }
    }
}
