//! The PostgreSQL store against a real server (started by the test in a
//! temporary directory, see `support/pgserver.rs`; skipped with a message
//! where PostgreSQL is not installed): the same behaviour as the SQLite
//! store, migrations from an older schema, clear errors for a wrong
//! password, a server that is down and a bad URL, and a push killed in the
//! middle (this test binary re-executed as the pushing child and killed
//! inside a transaction) leaving both stores consistent.

#[path = "support/pgserver.rs"]
mod pgserver;

use hwcal_db::{Db, DbError, OpenMode, Origin, Selector};
use hwcal_model::sample::full_profile;
use pgserver::PgServer;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

const CHILD_ENV: &str = "HWCAL_PG_PUSH_CHILD";

#[test]
fn postgres_store() {
    let Some(pg) = PgServer::start() else { return };
    let url = pg.create_db("store");
    // Reading commands create nothing: an empty database is "no run yet".
    let e = Db::open_with(&url, OpenMode::Existing).err().expect("empty");
    assert!(matches!(e, DbError::Missing { .. }), "{e}");
    assert!(!e.to_string().contains(pgserver::PASSWORD), "{e}");
    assert_eq!(
        pg.psql(
            "store",
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"
        ),
        "0"
    );

    let mut db = Db::open(&url).unwrap();
    assert_eq!(db.schema_version().unwrap(), hwcal_db::SCHEMA_VERSION);
    assert!(db.path().display().to_string().contains("hwcal:***@127.0.0.1"));
    assert!(db.list().unwrap().is_empty());
    assert_eq!(db.latest_id().unwrap(), None);
    let (a, b) = (full_profile(0), full_profile(1));
    let ia = db.insert(&a).unwrap();
    let ib = db.insert_with_origin(&b, Origin::Import).unwrap();
    assert!(ib > ia);
    assert_eq!(db.get(ia).unwrap(), a, "the whole profile, bit for bit");
    assert_eq!(db.get(ib).unwrap(), b);
    assert_eq!(db.find_identical(&b).unwrap(), Some(ib));
    assert_eq!(db.find_identical(&full_profile(5)).unwrap(), None);
    let l = db.list().unwrap();
    assert_eq!(l.len(), 2);
    assert_eq!((l[0].origin.as_str(), l[1].origin.as_str()), ("run", "import"));
    assert_eq!(
        l[0].machine_id,
        a.machine
            .as_ref()
            .unwrap()
            .identity
            .as_ref()
            .map(|i| i.machine_id.clone())
    );
    assert_eq!(l[0].core.as_deref(), Some("Sapphire Rapids"));
    assert_eq!(l[0].memory_latency_ns, Some(145.0));
    assert_eq!(db.summary(ib).unwrap(), l[1]);
    let sel = |s: &str| s.parse::<Selector>().unwrap();
    assert_eq!(db.resolve(&sel("latest")).unwrap(), ib);
    assert_eq!(db.resolve(&sel("host:synthetic-0")).unwrap(), ia);
    let m = &l[1].machine_id.clone().unwrap()[..6];
    assert_eq!(db.resolve(&sel(&format!("machine:{m}"))).unwrap(), ib);
    assert!(matches!(db.resolve(&sel("host:none")), Err(DbError::NoMatch(_))));
    db.delete(ia).unwrap();
    assert!(matches!(db.delete(ia), Err(DbError::NotFound(_))));
    assert!(matches!(db.get(ia), Err(DbError::NotFound(_))));
    // Reopened (and through the unix socket): the same rows, no migration.
    let db2 = Db::open(pg.socket_url("store")).unwrap();
    assert_eq!(db2.list().unwrap().len(), 1);
    assert_eq!(pg.psql("store", "SELECT version FROM hwcal_schema"), "3");
}

#[test]
fn postgres_errors_are_one_clear_line() {
    let Some(pg) = PgServer::start() else { return };
    let wrong = format!(
        "postgres://{}:wrong@127.0.0.1:{}/postgres",
        pgserver::USER,
        pg.port
    );
    let e = Db::open(&wrong).err().expect("wrong password");
    let msg = e.to_string();
    assert!(matches!(e, DbError::Postgres { .. }) && !e.is_usage(), "{msg}");
    assert!(msg.contains("password authentication failed"), "{msg}");
    assert!(!msg.contains("wrong@") && !msg.contains('\n'), "{msg}");
    let e = Db::open(pg.url("nosuchdb")).err().expect("no such database");
    assert!(e.to_string().contains("does not exist"), "{e}");
    // A port nobody listens on: refused at once, not a hang.
    let down = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let e = Db::open(format!("postgres://u:p@127.0.0.1:{down}/db"))
        .err()
        .expect("down");
    assert!(matches!(e, DbError::Postgres { .. }), "{e}");
    assert!(e.to_string().contains("error connecting to server"), "{e}");
    for bad in ["postgres://u@h:port/db", "postgres://u@h/db?sslmode=bogus"] {
        let e = Db::open(bad).err().expect("bad url");
        assert!(matches!(e, DbError::BadUrl { .. }) && e.is_usage(), "{bad}: {e}");
    }
    // Another program's `profiles` table is left alone.
    pg.create_db("other");
    pg.psql(
        "other",
        "CREATE TABLE profiles (x int); INSERT INTO profiles VALUES (1)",
    );
    let e = Db::open(pg.url("other")).err().expect("not ours");
    assert!(matches!(e, DbError::NotOurs { .. }), "{e}");
    assert_eq!(pg.psql("other", "SELECT count(*) FROM profiles"), "1");
    assert_eq!(
        pg.psql(
            "other",
            "SELECT count(*) FROM pg_tables WHERE tablename = 'hwcal_schema'"
        ),
        "0"
    );
}

/// A database an older hwcal left at schema 1 is migrated, its rows
/// back-filled (machine id, run key) as the SQLite store does.
#[test]
fn postgres_migrates_an_older_schema() {
    let Some(pg) = PgServer::start() else { return };
    let url = pg.create_db("old");
    let p = full_profile(2);
    let json = serde_json::to_string(&p).unwrap().replace('\'', "''");
    pg.psql(
        "old",
        &format!(
            "CREATE TABLE hwcal_schema (version BIGINT NOT NULL); INSERT INTO hwcal_schema VALUES (1);
             CREATE TABLE profiles (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                created_unix BIGINT NOT NULL, hostname TEXT, cpu_model TEXT, command TEXT NOT NULL,
                core_mhz DOUBLE PRECISION, memory_latency_ns DOUBLE PRECISION, profile_json TEXT NOT NULL);
             CREATE INDEX profiles_created ON profiles(created_unix);
             CREATE INDEX profiles_hostname ON profiles(hostname);
             INSERT INTO profiles (created_unix, hostname, command, profile_json)
                VALUES ({}, 'synthetic-2', 'x', '{json}');",
            p.created_unix
        ),
    );
    let db = Db::open(&url).unwrap();
    assert_eq!(db.schema_version().unwrap(), 3);
    let l = db.list().unwrap();
    assert_eq!(l.len(), 1);
    assert!(l[0].machine_id.is_some() && l[0].sections.contains("ctx"));
    assert_eq!(db.find_identical(&p).unwrap(), Some(l[0].id));
    assert_eq!(db.get(l[0].id).unwrap(), p);
}

/// Child mode: push, stopping inside the transaction of the third run.
#[test]
fn child_pushes_until_killed() {
    let Some(arg) = std::env::var(CHILD_ENV).ok() else {
        return;
    };
    let (local, url) = arg.split_once('\n').unwrap();
    let src = Db::open_with(local, OpenMode::Existing).unwrap();
    let mut to = Db::open(url).unwrap();
    let mut n = 0;
    src.push_with_hook(&mut to, &mut |_| {
        n += 1;
        if n == 3 {
            println!("in transaction");
            std::thread::sleep(std::time::Duration::from_secs(60));
        }
    })
    .unwrap();
    println!("pushed (should have been killed)");
}

#[test]
fn a_push_killed_midway_leaves_both_stores_consistent() {
    // The child is this test binary run directly, without cargo's target
    // runner: an emulated (aarch64) build cannot start it.
    if hwcal_harness::platform::skip_if_emulated("a_push_killed_midway_leaves_both_stores_consistent") {
        return;
    }
    let Some(pg) = PgServer::start() else { return };
    let url = pg.create_db("fleet");
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("local.db");
    let mut src = Db::open(&local).unwrap();
    for v in 0..6 {
        src.insert(&full_profile(v)).unwrap();
    }
    let before = src.list().unwrap();
    drop(src);

    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "child_pushes_until_killed",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, format!("{}\n{url}", local.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains("in transaction") {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "the child ended early");
    }
    child.kill().unwrap();
    child.wait().unwrap();

    // Two whole runs arrived, the third's transaction died with the child.
    let src = Db::open_with(&local, OpenMode::Existing).unwrap();
    assert_eq!(src.list().unwrap(), before, "push changed the local store");
    let mut to = Db::open(&url).unwrap();
    let remote = to.list().unwrap();
    assert_eq!(remote.len(), 2, "{remote:?}");
    for (r, l) in remote.iter().zip(&before) {
        assert_eq!(to.get(r.id).unwrap(), src.get(l.id).unwrap());
    }
    // Pushing again completes it; a third push stores nothing.
    let r = src.push_to(&mut to).unwrap();
    assert_eq!((r.copied.len(), r.present.len()), (4, 2));
    let r = src.push_to(&mut to).unwrap();
    assert_eq!((r.copied.len(), r.present.len()), (0, 6));
    assert_eq!(to.list().unwrap().len(), 6);

    // Two pushes at once (a second shared database) store each run once.
    let url2 = pg.create_db("fleet2");
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let (local, url2) = (local.clone(), url2.clone());
            std::thread::spawn(move || {
                let src = Db::open_with(&local, OpenMode::Existing).unwrap();
                src.push_to(&mut Db::open(&url2).unwrap()).unwrap().copied.len()
            })
        })
        .collect();
    let copied: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(copied, 6);
    assert_eq!(Db::open(&url2).unwrap().list().unwrap().len(), 6);
}
