//! The database through its public API, on SQLite files (the PostgreSQL
//! store is tested against a real server in `tests/postgres.rs`).

use super::*;
use crate::store::Columns;
use hwcal_model::sample::full_profile;
use rusqlite::{params, Connection};
use sqlite::MIGRATIONS;
use std::path::PathBuf;

fn temp_db() -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("sub/dir/hwcal.db")).unwrap();
    (dir, db)
}

#[test]
fn roundtrip_list_get_delete() {
    let (_d, mut db) = temp_db();
    assert_eq!(db.schema_version().unwrap(), SCHEMA_VERSION);
    assert!(db.list().unwrap().is_empty());
    assert_eq!(db.latest_id().unwrap(), None);
    let a = full_profile(0);
    let b = full_profile(3);
    let ia = db.insert(&a).unwrap();
    let ib = db.insert_with_origin(&b, Origin::Import).unwrap();
    assert!(ib > ia);
    assert_eq!(db.get(ia).unwrap(), a, "the whole profile, raw curves included");
    assert_eq!(db.get(ib).unwrap(), b);
    assert_eq!(db.latest_id().unwrap(), Some(ib));
    assert_eq!(db.latest_id_of_host("synthetic-0").unwrap(), Some(ia));
    assert_eq!(db.latest_id_of_host("nowhere").unwrap(), None);
    assert_eq!(db.find_identical(&a).unwrap(), Some(ia));
    assert_eq!(db.find_identical(&full_profile(9)).unwrap(), None);
    let l = db.list().unwrap();
    assert_eq!(l.len(), 2);
    assert_eq!(l[0].id, ia);
    assert_eq!(l[0].hostname.as_deref(), Some("synthetic-0"));
    assert_eq!(l[0].origin, "run");
    assert_eq!(l[1].origin, "import");
    assert_eq!(db.summary(ib).unwrap(), l[1]);
    assert_eq!(l[0].core_mhz, a.clock.as_ref().map(|c| c.core_mhz));
    assert_eq!(l[0].memory_latency_ns, Some(145.0));
    assert_eq!(l[0].l1_latency_ns, Some(a.caches.as_ref().unwrap()[0].latency_ns));
    assert!(l[0].sections.starts_with("machine,clock,caches,memory,tlbs"));
    assert!(l[0].sections.ends_with("io,raw"));
    db.delete(ia).unwrap();
    assert!(matches!(db.get(ia), Err(DbError::NotFound(i)) if i == ia));
    assert!(matches!(db.summary(ia), Err(DbError::NotFound(_))));
    assert!(matches!(db.delete(ia), Err(DbError::NotFound(_))));
    assert_eq!(db.list().unwrap().len(), 1);
    // Several at once: all or none.
    assert!(matches!(db.delete_all(&[ib, ia]), Err(DbError::NotFound(i)) if i == ia));
    assert_eq!(db.list().unwrap().len(), 1);
    // Ids are never reused (AUTOINCREMENT): a deleted run's id stays dead.
    let ic = db.insert(&a).unwrap();
    assert!(ic > ib);
}

#[test]
fn a_minimal_profile_has_null_figures() {
    let (_d, mut db) = temp_db();
    let p = Profile::new("hwcal info", 5);
    let id = db.insert(&p).unwrap();
    let l = db.list().unwrap();
    assert_eq!(l[0].id, id);
    assert_eq!(l[0].core_mhz, None);
    assert_eq!(l[0].hostname, None);
    assert_eq!(l[0].sections, "");
    assert_eq!(db.get(id).unwrap(), p);
}

#[test]
fn reopening_keeps_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.db");
    let id = Db::open(&path).unwrap().insert(&full_profile(1)).unwrap();
    let db = Db::open(&path).unwrap();
    assert_eq!(db.get(id).unwrap(), full_profile(1));
}

#[test]
fn migrates_a_version_1_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    let p = full_profile(2);
    {
        // A file as the first release wrote it: schema 1, one row.
        let c = Connection::open(&path).unwrap();
        c.execute_batch(MIGRATIONS[0]).unwrap();
        c.execute_batch("PRAGMA user_version = 1").unwrap();
        c.execute(
            "INSERT INTO profiles (created_unix, hostname, cpu_model, command, core_mhz,
                memory_latency_ns, profile_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                p.created_unix as i64,
                "synthetic-2",
                "Synthetic Xeon",
                p.command,
                2000.0,
                174.0,
                serde_json::to_string(&p).unwrap()
            ],
        )
        .unwrap();
        c.execute(
            "INSERT INTO profiles (created_unix, command, profile_json) VALUES (1, 'x', 'garbage')",
            [],
        )
        .unwrap();
    }
    let mut db = Db::open(&path).unwrap();
    assert_eq!(db.schema_version().unwrap(), SCHEMA_VERSION);
    let l = db.list().unwrap();
    assert_eq!(l.len(), 2);
    assert_eq!(l[0].origin, "run");
    assert_eq!(l[0].stored_unix, 0);
    // Back-filled from the JSON.
    assert_eq!(l[0].l1_latency_ns, Some(p.caches.as_ref().unwrap()[0].latency_ns));
    assert!(l[0].sections.contains("ctx"));
    assert_eq!(
        l[0].ctx_us,
        Some(p.context_switch.as_ref().unwrap().points[0].us_median)
    );
    assert_eq!(db.get(l[0].id).unwrap(), p);
    // Schema 3's columns too: machine and run key.
    assert_eq!(l[0].machine_id, Columns::of(&p).machine_id);
    assert!(l[0].machine_id.is_some());
    assert_eq!(l[0].core.as_deref(), Some("Sapphire Rapids"));
    assert_eq!(db.find_identical(&p).unwrap(), Some(l[0].id));
    // The unreadable row lists, and reads as corrupt rather than panicking.
    assert_eq!(l[1].sections, "");
    assert!(matches!(db.get(l[1].id), Err(DbError::Corrupt { .. })));
    // New rows go in under the new schema.
    let id = db.insert(&p).unwrap();
    assert!(db.list().unwrap().iter().any(|s| s.id == id && s.stored_unix > 0));
}

#[test]
fn refuses_a_newer_schema() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.db");
    Connection::open(&path)
        .unwrap()
        .execute_batch(&format!(
            "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = 99"
        ))
        .unwrap();
    let e = Db::open(&path).err().expect("must refuse");
    assert!(matches!(e, DbError::TooNew { found: 99, .. }), "{e}");
    assert!(e.to_string().contains("newer"));
}

#[test]
fn refuses_a_negative_schema_version_without_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("neg.db");
    Connection::open(&path)
        .unwrap()
        .execute_batch(&format!(
            "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = -5"
        ))
        .unwrap();
    let e = Db::open(&path).err().expect("must refuse");
    assert!(matches!(e, DbError::BadVersion { found: -5, .. }), "{e}");
    assert!(e.to_string().contains("left alone"));
}

#[test]
fn a_file_that_does_not_match_its_stated_version_is_one_line_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lowered.db");
    drop(Db::open(&path).unwrap());
    // Someone lowers the version: the next step's columns exist already.
    Connection::open(&path)
        .unwrap()
        .execute_batch("PRAGMA user_version = 1")
        .unwrap();
    let e = Db::open(&path).err().expect("must refuse");
    assert!(matches!(e, DbError::Migration { from: 1, .. }), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("duplicate column name") && !msg.contains('\n'),
        "{msg}"
    );
    let v: i64 = Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, 1, "the failed step was rolled back");
}

#[test]
fn not_a_database_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("junk.db");
    std::fs::write(&path, vec![b'x'; 4096]).unwrap();
    let e = Db::open(&path).err().expect("must refuse");
    assert!(e.to_string().contains("junk.db"), "{e}");
}

#[test]
fn new_databases_carry_the_application_id() {
    let (_d, db) = temp_db();
    let id: i32 = Connection::open(db.path())
        .unwrap()
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .unwrap();
    assert_eq!(id, APPLICATION_ID);
    // No temporary file is left next to it.
    let dir = db.path().parent().unwrap();
    let names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(names.is_empty(), "{names:?}");
}

/// Another program's SQLite file is refused and left byte for byte as
/// it was (no tables added, no WAL switch, no user_version).
#[test]
fn another_programs_database_is_not_touched() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &str); 3] = [
        (
            "other.db",
            "CREATE TABLE notes (t TEXT); INSERT INTO notes VALUES ('x');",
        ),
        (
            "appid.db",
            "PRAGMA application_id = 1234; CREATE TABLE profiles (id INTEGER);",
        ),
        (
            "mixed.db",
            "CREATE TABLE profiles (id INTEGER); CREATE TABLE mine (x);",
        ),
    ];
    for (name, sql) in cases {
        let path = dir.path().join(name);
        Connection::open(&path).unwrap().execute_batch(sql).unwrap();
        let before = std::fs::read(&path).unwrap();
        for mode in [OpenMode::Create, OpenMode::Existing] {
            let e = Db::open_with(&path, mode).err().expect("must refuse");
            assert!(matches!(e, DbError::NotOurs { .. }), "{name}: {e}");
            assert!(
                e.to_string().contains("another program") || e.to_string().contains("hwcal's tables"),
                "{e}"
            );
        }
        assert_eq!(std::fs::read(&path).unwrap(), before, "{name} changed");
        let mut wal = path.clone().into_os_string();
        wal.push("-wal");
        assert!(!Path::new(&wal).exists(), "{name}: a WAL file was created");
    }
    // An empty file and a text file are not databases either.
    for (name, bytes) in [("empty.db", &b""[..]), ("text.db", &b"hello\n"[..])] {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let e = Db::open(&path).err().expect("must refuse");
        assert!(matches!(e, DbError::NotOurs { .. }), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
    }
}

#[test]
fn an_older_hwcal_file_without_application_id_is_adopted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.db");
    {
        let c = Connection::open(&path).unwrap();
        c.execute_batch(MIGRATIONS[0]).unwrap();
        c.execute_batch("PRAGMA user_version = 1").unwrap();
    }
    let db = Db::open_with(&path, OpenMode::Existing).unwrap();
    let id: i32 = Connection::open(db.path())
        .unwrap()
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .unwrap();
    assert_eq!(id, APPLICATION_ID);
    assert_eq!(db.schema_version().unwrap(), SCHEMA_VERSION);
}

#[test]
fn existing_mode_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no/such/dir/hwcal.db");
    let e = Db::open_with(&path, OpenMode::Existing).err().expect("missing");
    assert!(matches!(e, DbError::Missing { .. }), "{e}");
    assert!(!dir.path().join("no").exists());
}

#[test]
fn url_schemes_are_refused_before_anything_is_created() {
    for loc in ["x://y", "sqlite+foo://a", "HTTP://h"] {
        assert!(url_scheme(loc).is_some(), "{loc}");
        let e = check_location(loc).unwrap_err();
        assert!(e.to_string().contains("not supported"), "{e}");
        assert!(matches!(Db::open(loc), Err(DbError::UnsupportedScheme(..))));
    }
    assert!(!Path::new("x:").exists());
    // A PostgreSQL URL is a location (tested against a server elsewhere);
    // a malformed one is a usage error before any connection.
    check_location("postgres://host/db").unwrap();
    let e = Db::open("postgres://u@h:notaport/db").err().expect("bad port");
    assert!(matches!(e, DbError::BadUrl { .. }) && e.is_usage(), "{e}");
    for loc in ["/tmp/x.db", "a/b.db", "C:\\x.db", "./weird:name.db", "://x"] {
        assert_eq!(url_scheme(loc), None, "{loc}");
    }
}

#[test]
fn concurrent_creators_share_one_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("race.db");
    let threads: Vec<_> = (0..16)
        .map(|i| {
            let path = path.clone();
            std::thread::spawn(move || {
                let mut db = Db::open(&path).unwrap();
                db.insert(&full_profile(i % 4)).unwrap()
            })
        })
        .collect();
    let mut ids: Vec<i64> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 16);
    assert_eq!(Db::open(&path).unwrap().list().unwrap().len(), 16);
}

#[test]
fn errors_name_sqlite_once() {
    let e = DbError::Sqlite {
        path: "/x.db".into(),
        err: rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(5), Some("database is locked".into())),
    };
    let chain = format!("{:#}", anyhow_like(&e));
    assert_eq!(chain.matches("locked").count(), 1, "{chain}");
}

/// `{:#}` of anyhow: the error and its sources joined by ": ".
fn anyhow_like(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(c) = src {
        s.push_str(": ");
        s.push_str(&c.to_string());
        src = c.source();
    }
    s
}

#[test]
fn default_path_prefers_env_then_xdg_then_home() {
    let path = |vars: &[(&str, &str)]| {
        let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        default_path_from(move |k| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.into()))
    };
    let all = [
        ("HWCAL_DB", "/x/my.db"),
        ("XDG_DATA_HOME", "/data"),
        ("HOME", "/home/u"),
    ];
    assert_eq!(path(&all).unwrap(), PathBuf::from("/x/my.db"));
    assert_eq!(
        path(&[("HWCAL_DB", ""), ("XDG_DATA_HOME", "/data"), ("HOME", "/home/u")]).unwrap(),
        PathBuf::from("/data/hwcal/hwcal.db")
    );
    assert_eq!(
        path(&[("XDG_DATA_HOME", "relative/ignored"), ("HOME", "/home/u")]).unwrap(),
        PathBuf::from("/home/u/.local/share/hwcal/hwcal.db")
    );
    assert!(matches!(path(&[]), Err(DbError::NoPath)));
    // A relative HOME is no home: the database would follow the working
    // directory.
    assert!(matches!(path(&[("HOME", "rel/home")]), Err(DbError::NoPath)));
}

/// A database with runs of two machines, and one host name shared by both
/// (look-alike guests all called `vm`).
fn fleet_db() -> (tempfile::TempDir, Db, [i64; 4]) {
    let (d, mut db) = temp_db();
    let vm = |variant: u32| {
        let mut p = full_profile(variant);
        p.machine.as_mut().unwrap().hostname = "vm".into();
        p
    };
    let a1 = db.insert(&vm(0)).unwrap();
    let b1 = db.insert(&vm(1)).unwrap();
    let a2 = db.insert(&full_profile(0)).unwrap();
    let mut old = full_profile(2);
    old.machine.as_mut().unwrap().identity = None;
    let old = db.insert(&old).unwrap();
    (d, db, [a1, b1, a2, old])
}

#[test]
fn latest_is_the_run_measured_last_not_the_one_stored_last() {
    let (_d, mut db) = temp_db();
    let mut newer = full_profile(0);
    newer.created_unix += 3600;
    let newer = db.insert(&newer).unwrap();
    // An older run imported afterwards takes a higher id...
    let older = db.insert_with_origin(&full_profile(0), Origin::Import).unwrap();
    assert!(older > newer);
    // ...but "latest" is still the newest measurement, as on the site.
    assert_eq!(db.latest_id().unwrap(), Some(newer));
    assert_eq!(db.latest_id_of_host("synthetic-0").unwrap(), Some(newer));
}

#[test]
fn selectors_name_runs_and_refuse_ambiguity() {
    let (_d, db, [a1, b1, a2, old]) = fleet_db();
    let sel = |s: &str| s.parse::<Selector>();
    let resolve = |s: &str| db.resolve(&sel(s).unwrap());
    assert_eq!(resolve("7").unwrap(), 7);
    assert_eq!(resolve("latest").unwrap(), old);
    assert_eq!(resolve("host:synthetic-0").unwrap(), a2);
    assert_eq!(resolve("host:synthetic-2").unwrap(), old);
    let e = resolve("host:vm").unwrap_err();
    assert!(matches!(e, DbError::Ambiguous(_)) && e.is_usage(), "{e}");
    assert!(
        e.to_string().contains("2 machines") && e.to_string().contains("machine:"),
        "{e}"
    );
    let ma = full_profile(0).machine.unwrap().identity.unwrap().machine_id;
    let mb = full_profile(1).machine.unwrap().identity.unwrap().machine_id;
    assert_eq!(resolve(&format!("machine:{ma}")).unwrap(), a2);
    assert_eq!(resolve(&format!("machine:{}", mb.to_uppercase())).unwrap(), b1);
    assert_eq!(resolve(&format!("machine:{}", &ma[..4])).unwrap(), a2);
    // A prefix both ids share is ambiguous; one no id has matches nothing.
    assert!(matches!(resolve("machine:0"), Err(DbError::Ambiguous(_))));
    assert!(matches!(resolve("machine:ffff"), Err(DbError::NoMatch(_))));
    assert!(matches!(resolve("host:nowhere"), Err(DbError::NoMatch(_))));
    for bad in ["0", "-1", "x", "machine:", "machine:xyz", "machine:a%"] {
        assert!(sel(bad).is_err(), "{bad}");
    }
    assert_eq!(a1, 1);
}

#[test]
fn list_groups_runs_by_machine() {
    let (_d, db, [a1, b1, a2, old]) = fleet_db();
    let rows = db.list().unwrap();
    let groups = by_machine(&rows);
    let ids: Vec<Vec<i64>> = groups
        .iter()
        .map(|g| g.runs.iter().map(|r| r.id).collect())
        .collect();
    assert_eq!(ids, vec![vec![a1, a2], vec![b1], vec![old]]);
    assert_eq!(groups[2].machine_id, None);
    let t = groups[0].title();
    assert!(
        t.starts_with("machine 005a17e7c000: Sapphire Rapids, QEMU"),
        "{t}"
    );
    assert!(t.ends_with("2 runs"), "{t}");
    assert!(groups[2].title().contains("no machine id"));
    // The summary carries the identity columns, and serialises for --json.
    let j = serde_json::to_value(&rows[0]).unwrap();
    assert_eq!(j["machine_id"], serde_json::json!(rows[0].machine_id));
    assert_eq!(j["core"], "Sapphire Rapids");
}

#[test]
fn push_copies_each_run_once_and_only_reads_the_source() {
    let (_d, src, ids) = fleet_db();
    let before = src.list().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut to = Db::open(dir.path().join("to.db")).unwrap();
    // One run is there already (imported by hand).
    to.insert_with_origin(&full_profile(1), Origin::Import).unwrap();
    let r = src.push_to(&mut to).unwrap();
    assert_eq!(r.copied.len(), 4, "{r:?}");
    assert!(r.present.is_empty() && r.unreadable.is_empty());
    let again = src.push_to(&mut to).unwrap();
    assert!(again.copied.is_empty());
    assert_eq!(again.present.len(), 4);
    assert_eq!(to.list().unwrap().len(), 5);
    assert_eq!(src.list().unwrap(), before, "push changed its source");
    for (local, remote) in r.copied {
        assert_eq!(src.get(local).unwrap(), to.get(remote).unwrap());
        assert_eq!(
            src.summary(local).unwrap().origin,
            to.summary(remote).unwrap().origin
        );
    }
    assert_eq!(ids.len(), 4);
}

/// `kill -9` while a new database was built left its hidden build file and
/// that file's `-wal` and `-shm` for good (issue 41). Opening the database
/// to write removes those of a creator that is gone and whose files are
/// old, and nothing else: a fresh build (another process's, under way), a
/// live process's, names of another pattern.
#[test]
fn a_killed_creators_build_files_are_removed_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let make = |name: &str, aged: bool| {
        let p = dir.path().join(name);
        let f = std::fs::File::create(&p).unwrap();
        if aged {
            f.set_modified(old).unwrap();
        }
        p
    };
    // PID 99999999 is beyond any pid_max: no such process.
    let dead: Vec<PathBuf> = ["", "-wal", "-shm", "-journal"]
        .iter()
        .map(|s| make(&format!(".hwcal.db.new-99999999-1234{s}"), true))
        .collect();
    let kept = [
        make(".hwcal.db.new-99999999-5678", false),
        make(&format!(".hwcal.db.new-{}-1", std::process::id()), true),
        make(".hwcal.db.new-notes.txt", true),
        make(".other.db.new-99999999-1", true),
    ];
    // Both ways in: creating the database, and opening it again to write.
    drop(Db::open(dir.path().join("hwcal.db")).unwrap());
    for p in &dead {
        assert!(!p.exists(), "{} left", p.display());
    }
    for p in &kept {
        assert!(p.exists(), "{} removed", p.display());
    }
    let again = make(".hwcal.db.new-99999999-9-wal", true);
    drop(Db::open(dir.path().join("hwcal.db")).unwrap());
    assert!(!again.exists());
    drop(Db::open_with(dir.path().join("hwcal.db"), OpenMode::Read).unwrap());
}
