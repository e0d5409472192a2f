//! The PostgreSQL store against a real server (started by the test in a
//! temporary directory, see `support/pgserver.rs`; skipped with a message
//! where PostgreSQL is not installed): the same behaviour as the SQLite
//! store, migrations from an older schema, clear errors for a wrong
//! password, a server that is down and a bad URL, and a push killed in the
//! middle (this test binary re-executed as the pushing child and killed
//! inside a transaction) leaving both stores consistent. A server that
//! stops answering (its postmaster, or the backend of an open store,
//! stopped with SIGSTOP) is an error within the time limit, not a hang; a
//! negative stored schema version is refused; libpq's `key=value`
//! connection string opens the database.

#[path = "support/pgserver.rs"]
mod pgserver;

use hwcal_db::{Db, DbError, OpenMode, Origin, Selector};
use hwcal_model::sample::full_profile;
use pgserver::{Paused, PgServer};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const CHILD_ENV: &str = "HWCAL_PG_PUSH_CHILD";

/// The stop tests' child: what to do (`open` or `list`) and the URL.
const STOP_CHILD_ENV: &str = "HWCAL_PG_STOP_CHILD";

/// The db crate's variable that shortens its time limits (set in a child
/// process only, so the other tests, running in this one, keep theirs).
const TIMEOUT_ENV: &str = "HWCAL_PG_TIMEOUT_S";

/// How much later than its limit an error may arrive (a loaded CI machine).
const MARGIN: Duration = Duration::from_secs(10);

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
    // The server ends the session (an administrator, a restart): the
    // next call says why, in one line, rather than only "connection closed".
    let db = Db::open(pg.create_db("ended")).unwrap();
    let backends = pg.hwcal_backends("ended");
    assert_eq!(backends.len(), 1, "{backends:?}");
    // Waits (up to 5 s) until the backend is gone.
    pg.psql(
        "postgres",
        &format!("SELECT pg_terminate_backend({}, 5000)", backends[0]),
    );
    let e = db.list().expect_err("a terminated session");
    let msg = e.to_string();
    assert!(matches!(e, DbError::Postgres { .. }), "{msg}");
    assert!(msg.contains("terminating connection"), "{msg}");
    assert!(!msg.contains('\n') && !msg.contains(pgserver::PASSWORD), "{msg}");
    drop(db);
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

/// A stored schema version below 0 (no hwcal wrote it) is refused in one
/// line, for reading and for writing commands alike, and left as it is:
/// not a panic in the migration list. One above this hwcal's is "too new".
#[test]
fn postgres_refuses_a_negative_schema_version() {
    let Some(pg) = PgServer::start() else { return };
    let url = pg.create_db("negative");
    drop(Db::open(&url).unwrap());
    pg.psql("negative", "UPDATE hwcal_schema SET version = -1");
    for mode in [OpenMode::Create, OpenMode::Existing] {
        let e = Db::open_with(&url, mode).err().expect("a negative version");
        assert!(matches!(e, DbError::BadVersion { found: -1, .. }), "{e}");
        let msg = e.to_string();
        assert!(msg.contains("version -1 is not one hwcal ever wrote"), "{msg}");
        assert!(!msg.contains('\n') && !msg.contains(pgserver::PASSWORD), "{msg}");
    }
    assert_eq!(pg.psql("negative", "SELECT version FROM hwcal_schema"), "-1");
    pg.psql("negative", "UPDATE hwcal_schema SET version = 99");
    let e = Db::open(&url).err().expect("a newer version");
    assert!(
        matches!(e, DbError::TooNew { found: 99, .. }) && e.is_usage(),
        "{e}"
    );
    assert_eq!(pg.psql("negative", "SELECT version FROM hwcal_schema"), "99");
}

/// libpq's `key=value` connection string is the same database as the URL
/// (not a file named after it), and no message shows its password.
#[test]
fn postgres_opens_a_libpq_connection_string() {
    let Some(pg) = PgServer::start() else { return };
    let url = pg.create_db("kv");
    let kv = |pw: &str| {
        format!(
            "host=127.0.0.1 port={} user={} password={pw} dbname=kv",
            pg.port,
            pgserver::USER
        )
    };
    let right = kv(pgserver::PASSWORD);
    let mut db = Db::open(&right).unwrap();
    let id = db.insert(&full_profile(3)).unwrap();
    let shown = db.path().display().to_string();
    assert_eq!(
        shown,
        format!(
            "host=127.0.0.1 port={} user=hwcal password=*** dbname=kv",
            pg.port
        )
    );
    assert_eq!(Db::open(&url).unwrap().get(id).unwrap(), full_profile(3));
    let e = Db::open(kv("wrong-secret")).err().expect("wrong password");
    let msg = e.to_string();
    assert!(msg.contains("password authentication failed"), "{msg}");
    assert!(!msg.contains("wrong-secret") && !msg.contains('\n'), "{msg}");
    assert!(!std::path::Path::new(&right).exists(), "a file was created");
}

/// Run `f` on a thread; its result and how long it took. A result that has
/// not come within `limit` fails the test (the thread is left behind)
/// rather than hang it.
fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> (Duration, T) {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let t = Instant::now();
        let r = f();
        let _ = tx.send((t.elapsed(), r));
    });
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("no result within {limit:?}: it hangs"))
}

/// This test binary re-run as a child of the stop tests, with a shortened
/// time limit in its environment; killed when dropped.
struct StopChild {
    child: std::process::Child,
    lines: mpsc::Receiver<String>,
}

impl StopChild {
    fn start(mode: &str, url: &str, limit_s: u64) -> StopChild {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "child_of_the_stop_tests",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(STOP_CHILD_ENV, format!("{mode}\n{url}"))
            .env(TIMEOUT_ENV, limit_s.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = mpsc::channel();
        // Lines are read on a thread so the test can wait with a deadline.
        std::thread::spawn(move || {
            for l in out.lines().map_while(Result::ok) {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        StopChild { child, lines }
    }

    /// The first of the child's reports that starts with `prefix`, within
    /// `limit`. libtest's lines are skipped; the first report follows
    /// libtest's `test NAME ... ` on the same line.
    fn line(&self, prefix: &str, limit: Duration) -> String {
        let end = Instant::now() + limit;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) if l.contains(prefix) => return l[l.find(prefix).unwrap()..].to_string(),
                Ok(_) => {}
                Err(_) => panic!("no `{prefix}` line from the child within {limit:?}: it hangs"),
            }
        }
    }

    fn go(&mut self) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(b"go\n").unwrap();
        stdin.flush().unwrap();
    }
}

impl Drop for StopChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The seconds a child's report line gives (`list: 2.0 s: ...`).
fn seconds(line: &str) -> f64 {
    line.split_once(": ")
        .and_then(|(_, rest)| rest.split_once(" s: "))
        .and_then(|(s, _)| s.parse().ok())
        .unwrap_or_else(|| panic!("no time in {line:?}"))
}

/// Child mode of the stop tests: `open` opens the database and reports how
/// that went; `list` opens it, says so, waits for a line on stdin (the
/// parent stops its backend meanwhile), then lists the runs twice.
#[test]
fn child_of_the_stop_tests() {
    let Some(arg) = std::env::var(STOP_CHILD_ENV).ok() else {
        return;
    };
    let (mode, url) = arg.split_once('\n').unwrap();
    let report = |what: &str, t: Instant, e: Option<DbError>| {
        let e = e.map_or("no error".to_string(), |e| e.to_string());
        println!("{what}: {:.1} s: {e}", t.elapsed().as_secs_f64());
    };
    let t = Instant::now();
    let opened = Db::open(url);
    if mode == "open" {
        report("open", t, opened.err());
        return;
    }
    let db = opened.unwrap();
    println!("opened");
    let mut go = String::new();
    std::io::stdin().read_line(&mut go).unwrap();
    let t = Instant::now();
    report("list", t, db.list().err());
    let t = Instant::now();
    report("again", t, db.latest_id().err());
}

/// A postmaster that accepts connections (the kernel does, for a stopped
/// process) and then says nothing: opening the store ends with one error
/// line once the connecting limit runs out, the URL's `connect_timeout=`
/// or the default (here shortened through the variable), never a hang.
#[test]
fn a_stopped_postmaster_is_an_error_not_a_hang() {
    // The child is this test binary run directly, without cargo's target
    // runner: an emulated (aarch64) build cannot start it.
    if hwcal_harness::platform::skip_if_emulated("a_stopped_postmaster_is_an_error_not_a_hang") {
        return;
    }
    let Some(pg) = PgServer::start() else { return };
    let url = pg.create_db("stopped");
    drop(Db::open(&url).unwrap());
    let _paused = Paused::new(pg.postmaster_pid());

    // The URL's limit covers startup and authentication, not only the
    // socket's connect (which succeeds here).
    let one_s = format!("{url}?connect_timeout=1");
    let (took, e) = within(Duration::from_secs(1) + MARGIN, move || {
        Db::open(one_s).err().map(|e| e.to_string())
    });
    let e = e.expect("a stopped server was opened");
    assert!(
        e.contains("no answer from the server within 1 s (connecting: startup and authentication; connect_timeout= in the URL sets this limit)"),
        "{e}"
    );
    assert!(!e.contains(pgserver::PASSWORD) && !e.contains('\n'), "{e}");
    assert!(e.starts_with("postgres://hwcal:***@127.0.0.1:"), "{e}");
    assert!(took >= Duration::from_millis(900), "{took:?}: {e}");

    // Without connect_timeout= the default limit applies (10 s, shortened
    // to 2 s through the variable in the child).
    let child = StopChild::start("open", &url, 2);
    let l = child.line("open:", Duration::from_secs(2) + MARGIN);
    assert!(
        l.contains("no answer from the server within 2 s (connecting: startup and authentication; connect_timeout= in the URL or HWCAL_PG_TIMEOUT_S sets this limit)"),
        "{l}"
    );
    assert!(seconds(&l) >= 1.9, "{l}");
}

/// The backend of an open store stops (the server is up, the connection
/// too, but nothing answers): the next statement ends with one error line
/// once the statement limit runs out, and a later call on the same store
/// fails at once instead of waiting again.
#[test]
fn a_stopped_backend_is_an_error_not_a_hang() {
    if hwcal_harness::platform::skip_if_emulated("a_stopped_backend_is_an_error_not_a_hang") {
        return;
    }
    let Some(pg) = PgServer::start() else { return };
    let url = pg.create_db("midway");
    let mut child = StopChild::start("list", &url, 2);
    child.line("opened", MARGIN * 3);
    let backends = pg.hwcal_backends("midway");
    assert_eq!(backends.len(), 1, "{backends:?}");
    let _paused = Paused::new(backends[0]);
    child.go();
    let l = child.line("list:", Duration::from_secs(2) + MARGIN);
    assert!(
        l.contains(
            "no answer from the server within 2 s (listing the runs; HWCAL_PG_TIMEOUT_S sets this limit)"
        ),
        "{l}"
    );
    assert!(l.contains(": postgres://hwcal:***@127.0.0.1:"), "{l}");
    assert!(seconds(&l) >= 1.9, "{l}");
    let l = child.line("again:", MARGIN);
    assert!(
        l.contains("the server stopped answering earlier: no answer"),
        "{l}"
    );
    assert!(seconds(&l) < 1.0, "{l}");
}

/// Reading needs read rights only (issue 41, medium 2): a role granted
/// SELECT alone lists, shows and exports the runs (every read ran the
/// migration's `CREATE TABLE IF NOT EXISTS`, which it may not), and is
/// refused a store with the server's reason; a role with no rights on
/// hwcal's tables is told so, not that there is no database there.
#[test]
fn a_role_that_may_only_read_reads() {
    let Some(pg) = PgServer::start() else { return };
    let url = pg.create_db("ro");
    let mut db = Db::open(&url).unwrap();
    let id = db.insert(&full_profile(2)).unwrap();
    drop(db);
    pg.psql(
        "ro",
        "CREATE ROLE reader LOGIN PASSWORD 'reader-pw'; \
         CREATE ROLE stranger LOGIN PASSWORD 'stranger-pw'; \
         REVOKE CREATE ON SCHEMA public FROM PUBLIC; \
         GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader",
    );
    let as_role = |user: &str, pw: &str| format!("postgres://{user}:{pw}@127.0.0.1:{}/ro", pg.port);

    let reader = as_role("reader", "reader-pw");
    let db = Db::open_with(&reader, OpenMode::Read).unwrap();
    assert_eq!(db.list().unwrap().len(), 1);
    assert_eq!(db.get(id).unwrap(), full_profile(2));
    drop(db);
    let e = Db::open_with(&reader, OpenMode::Create)
        .and_then(|mut db| db.insert(&full_profile(4)))
        .expect_err("a reader cannot store");
    assert!(e.to_string().contains("permission denied"), "{e}");

    let e = Db::open_with(as_role("stranger", "stranger-pw"), OpenMode::Read)
        .err()
        .expect("no rights");
    assert!(!matches!(e, DbError::Missing { .. }), "{e}");
    assert!(e.to_string().contains("permission denied"), "{e}");
    assert!(!e.to_string().contains("stranger-pw"), "{e}");
}

/// A server that takes TLS connections only, as managed PostgreSQL
/// services do: `sslmode=verify-full` with the CA that signed its
/// certificate stores and reads; plain text is refused with a hint to ask
/// for TLS; a CA that signed nothing of the server's, and a host name the
/// certificate does not give, are refused (verify-ca, which checks no
/// name, takes the latter); `require` without a CA checks no certificate.
#[test]
fn a_tls_only_server_is_reached_with_its_ca_and_no_other() {
    let Some(pg) = PgServer::start_tls() else { return };
    pg.create_db("tls");
    let url = |host: &str, query: &str| {
        format!(
            "postgres://{}:{}@{host}:{}/tls?{query}",
            pgserver::USER,
            pgserver::PASSWORD,
            pg.port
        )
    };
    let ca = pg.ca().display().to_string();
    let full = url("localhost", &format!("sslmode=verify-full&sslrootcert={ca}"));
    let mut db = Db::open(&full).unwrap();
    let id = db.insert(&full_profile(3)).unwrap();
    drop(db);
    let db = Db::open_with(&full, OpenMode::Read).unwrap();
    assert_eq!(db.get(id).unwrap(), full_profile(3));
    drop(db);
    // The server's own view: hwcal's connection is encrypted.
    // (Checked through a fresh connection while one is open.)
    let db = Db::open_with(&full, OpenMode::Read).unwrap();
    assert_eq!(
        pg.psql(
            "postgres",
            "SELECT bool_and(s.ssl) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) \
             WHERE a.application_name = 'hwcal'"
        ),
        "t"
    );
    drop(db);

    let refused = |u: &str, what: &str| {
        let e = Db::open_with(u, OpenMode::Read)
            .err()
            .unwrap_or_else(|| panic!("{what}: opened"));
        let m = e.to_string();
        assert!(!m.contains(pgserver::PASSWORD), "{m}");
        m
    };
    let m = refused(&url("127.0.0.1", "sslmode=disable"), "plain text");
    assert!(m.contains("accepts only TLS") && m.contains("sslmode="), "{m}");
    let other = pg.other_ca().display().to_string();
    let m = refused(
        &url("localhost", &format!("sslmode=verify-full&sslrootcert={other}")),
        "other CA",
    );
    assert!(m.contains("not signed by the CA"), "{m}");
    let m = refused(
        &url("localhost", &format!("sslmode=verify-ca&sslrootcert={other}")),
        "other CA, verify-ca",
    );
    assert!(m.contains("not signed by the CA"), "{m}");
    let m = refused(
        &url("127.0.0.1", &format!("sslmode=verify-full&sslrootcert={ca}")),
        "wrong name",
    );
    assert!(m.contains("does not name the host"), "{m}");
    let m = refused(
        &url("localhost", "sslmode=verify-full&sslrootcert=/nonexistent/ca.pem"),
        "no CA file",
    );
    assert!(m.contains("/nonexistent/ca.pem"), "{m}");

    for ok in [
        url("127.0.0.1", &format!("sslmode=verify-ca&sslrootcert={ca}")),
        url("127.0.0.1", "sslmode=require"),
        url("127.0.0.1", "sslmode=prefer"),
        url("127.0.0.1", ""),
    ] {
        let db = Db::open_with(&ok, OpenMode::Read).unwrap_or_else(|e| panic!("{ok}: {e}"));
        assert_eq!(db.list().unwrap().len(), 1);
    }
}

/// A push that the server stops part of the way (its backend terminated
/// inside the third run's transaction) says how far it got, and pushing
/// again copies the rest (issue 41: "an interrupted push does not say how
/// far it got").
#[test]
fn a_push_stopped_midway_says_how_far_it_got() {
    let Some(pg) = PgServer::start() else { return };
    let url = pg.create_db("halfway");
    let dir = tempfile::tempdir().unwrap();
    let mut src = Db::open(dir.path().join("local.db")).unwrap();
    for v in 0..5 {
        src.insert(&full_profile(v)).unwrap();
    }
    let mut to = Db::open(&url).unwrap();
    let mut n = 0;
    let e = src
        .push_with_hook(&mut to, &mut |_| {
            n += 1;
            if n == 3 {
                let killed = pg.psql(
                    "postgres",
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
                     WHERE application_name = 'hwcal' AND datname = 'halfway'",
                );
                assert_eq!(killed, "1");
            }
        })
        .expect_err("the third run's commit fails");
    let m = e.to_string();
    assert!(
        matches!(
            e,
            DbError::PushStopped {
                copied: 2,
                total: 5,
                ..
            }
        ),
        "{m}"
    );
    assert!(
        m.contains("after copying 2 of 5 runs") && m.contains("push again"),
        "{m}"
    );
    assert!(!m.contains(pgserver::PASSWORD), "{m}");
    drop(to);
    let mut to = Db::open(&url).unwrap();
    let r = src.push_to(&mut to).unwrap();
    assert_eq!((r.copied.len(), r.present.len()), (3, 2));
}

/// A `hwcal_schema` with two rows (another program, a hand-made copy):
/// every way in says which table is wrong and leaves it alone, where the
/// driver said only "query returned an unexpected number of rows".
#[test]
fn two_schema_rows_are_named_not_a_row_count() {
    let Some(pg) = PgServer::start() else { return };
    let url = pg.create_db("tworows");
    drop(Db::open(&url).unwrap());
    pg.psql(
        "tworows",
        "INSERT INTO hwcal_schema (version) SELECT version FROM hwcal_schema",
    );
    for mode in [OpenMode::Read, OpenMode::Existing, OpenMode::Create] {
        let e = Db::open_with(&url, mode).err().expect("two rows");
        let m = e.to_string();
        assert!(matches!(e, DbError::NotOurs { .. }), "{mode:?}: {m}");
        assert!(
            m.contains("`hwcal_schema` table holds more than the one row"),
            "{m}"
        );
        assert!(!m.contains("unexpected number of rows"), "{m}");
    }
    assert_eq!(pg.psql("tworows", "SELECT count(*) FROM hwcal_schema"), "2");
}
