//! hwcal for a fleet (issue 16), end to end through the binary: every `db`
//! command and `run --save` against a real PostgreSQL server (started in a
//! temporary directory by the test), `db push` twice storing nothing twice,
//! one clear line and the right exit status for a wrong password, a server
//! that is down and a bad URL, `host:NAME` refused when ambiguous, and the
//! Slurm recipe (contrib/slurm) run for real on a single-node cluster that
//! the test starts and stops, its job array storing synthetic-machine runs
//! into PostgreSQL. Each part skips with a message where its packages are
//! not installed (.ci/run installs them).

#[path = "../../db/tests/support/pgserver.rs"]
mod pgserver;

mod common;

use common::{s, Env};
use hwcal_model::sample::full_profile;
use pgserver::PgServer;
use predicates::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(60);

/// Run hwcal with `--db DB`; (exit code, stdout, stderr).
fn at(e: &Env, db: &str, args: &[&str]) -> (i32, String, String) {
    let out = e
        .hwcal()
        .arg("--db")
        .arg(db)
        .args(args)
        .timeout(T)
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (
        out.status.code().unwrap_or(-1),
        text(&out.stdout),
        text(&out.stderr),
    )
}

/// Like [`at`], for a command that must succeed; its stdout.
fn ok(e: &Env, db: &str, args: &[&str]) -> String {
    let (code, out, err) = at(e, db, args);
    assert_eq!(code, 0, "hwcal --db {db} {args:?}: {err}");
    out
}

fn machine_id(variant: u32) -> String {
    full_profile(variant)
        .machine
        .unwrap()
        .identity
        .unwrap()
        .machine_id
}

/// Profiles of variants 0..n written as files.
fn files(e: &Env, n: u32) -> Vec<PathBuf> {
    (0..n).map(|v| e.profile_file(v)).collect()
}

#[test]
fn every_db_command_works_on_postgres() {
    let Some(pg) = PgServer::start() else { return };
    let url = pg.create_db("cli");
    let e = Env::new();
    let f = files(&e, 3);
    let out = ok(&e, &url, &["db", "import", s(&f[0]), s(&f[1]), s(&f[2])]);
    assert_eq!(out.matches("imported").count(), 3, "{out}");
    assert!(!out.contains(pgserver::PASSWORD));
    let out = ok(&e, &url, &["db", "import", s(&f[1])]);
    assert!(out.contains("already stored as run 2"), "{out}");

    // list: grouped by machine, as text and JSON; the URL from HWCAL_DB too.
    let list = ok(&e, &url, &["db", "list"]);
    for v in 0..3 {
        assert!(
            list.contains(&format!("machine {}", &machine_id(v)[..12])),
            "{list}"
        );
    }
    let env_list = e
        .hwcal()
        .env("HWCAL_DB", &url)
        .args(["db", "list"])
        .timeout(T)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&env_list.stdout), list);
    let rows: Value = serde_json::from_str(&ok(&e, &url, &["db", "list", "--json"])).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 3);
    assert_eq!(rows[1]["machine_id"], machine_id(1).as_str());
    assert_eq!(rows[1]["core"], "Sapphire Rapids");

    // show, compare, export, report, by id, latest, host: and machine:.
    assert!(ok(&e, &url, &["db", "show", "1"]).contains("run 1 (imported)"));
    let shown: Value = serde_json::from_str(&ok(&e, &url, &["db", "show", "latest", "--json"])).unwrap();
    assert_eq!(shown["run"]["id"], 3);
    assert_eq!(
        shown["profile"]["machine"]["identity"]["machine_id"],
        machine_id(2).as_str()
    );
    let m1 = format!("machine:{}", &machine_id(1)[..8]);
    assert!(ok(&e, &url, &["db", "compare", "host:synthetic-0", &m1]).contains("run 2"));
    let json: Value = serde_json::from_str(&ok(&e, &url, &["db", "export", &m1])).unwrap();
    assert_eq!(json["machine"]["hostname"], "synthetic-1");
    let csv = ok(&e, &url, &["db", "export", "--csv"]);
    assert_eq!(csv.lines().count(), 4, "{csv}");
    assert!(
        csv.starts_with("id,measured_unix,") && csv.contains("l1_size_kib") && csv.contains(&machine_id(2))
    );
    let md = ok(&e, &url, &["db", "export", "--markdown", "1", "3"]);
    assert_eq!(md.lines().count(), 4, "{md}");
    let html = e.path("r.html");
    ok(&e, &url, &["report", "latest", "--html", s(&html)]);
    assert!(std::fs::read_to_string(&html).unwrap().contains("synthetic-2"));

    // rm: several at once, all or none.
    let (code, _, err) = at(&e, &url, &["db", "rm", "3", "99"]);
    assert_eq!(code, 2, "{err}");
    assert!(ok(&e, &url, &["db", "rm", "1", "3"]).contains("removed run 3"));
    assert_eq!(
        serde_json::from_str::<Value>(&ok(&e, &url, &["db", "list", "--json"])).unwrap()[0]["id"],
        2
    );

    // run --save stores there (the synthetic machine: nothing is timed).
    let out = e
        .hwcal()
        .args(["--db", &url, "run", "--quiet"])
        .env("HWCAL_SYNTHETIC_MACHINE", "1")
        .timeout(T)
        .assert()
        .success()
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8_lossy(&out);
    assert!(
        err.contains("stored as run 4 in postgres://hwcal:***@127.0.0.1"),
        "{err}"
    );
    assert!(!err.contains(pgserver::PASSWORD));
    assert!(ok(&e, &url, &["db", "show", "4"]).contains("Sapphire Rapids"));
    // Nothing was written locally.
    assert!(!e.db().exists());
}

#[test]
fn push_stores_nothing_twice_and_failures_are_one_line() {
    let Some(pg) = PgServer::start() else { return };
    let url = pg.create_db("shared");
    let e = Env::new();
    let local = e.db();
    let f = files(&e, 3);
    e.hwcal()
        .args(["db", "import", s(&f[0]), s(&f[1]), s(&f[2])])
        .assert()
        .success();
    let l = s(&local);
    let out = ok(&e, l, &["db", "push", "--to", &url]);
    assert!(out.contains("3 copied, 0 already there"), "{out}");
    assert!(
        out.contains("postgres://hwcal:***@") && !out.contains(pgserver::PASSWORD),
        "{out}"
    );
    let out = ok(&e, l, &["db", "push", "--to", &url]);
    assert!(out.contains("0 copied, 3 already there"), "{out}");
    assert_eq!(pg.psql("shared", "SELECT count(*) FROM profiles"), "3");
    // A new local run goes up alone.
    e.import(4);
    assert!(ok(&e, l, &["db", "push", "--to", &url]).contains("1 copied, 3 already there"));
    // And a second shared store can take them from the first.
    let url2 = pg.create_db("shared2");
    assert!(ok(&e, &url, &["db", "push", "--to", &url2]).contains("4 copied"));

    // Failures: one line on stderr, exit 1 (connection) or 2 (usage).
    let before = e.list();
    let wrong = format!(
        "postgres://{}:wrong-pw@127.0.0.1:{}/shared",
        pgserver::USER,
        pg.port
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let down = format!("postgres://hwcal:pw@127.0.0.1:{port}/shared");
    for (to, code, says) in [
        (wrong.as_str(), 1, "password authentication failed"),
        (down.as_str(), 1, "error connecting to server"),
        (
            "postgres://hwcal@127.0.0.1:notaport/x",
            2,
            "not a usable PostgreSQL URL",
        ),
        ("mysql://h/db", 2, "scheme is not supported"),
        (l, 2, "is the database being pushed"),
    ] {
        let (c, out, err) = at(&e, l, &["db", "push", "--to", to]);
        assert_eq!(c, code, "{to}: {err}");
        assert!(out.is_empty(), "{out}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("hwcal: error: ") && err.contains(says),
            "{to}: {err}"
        );
        assert!(!err.contains("wrong-pw"), "{err}");
        if to != l {
            let (c, _, err) = at(&e, to, &["db", "list"]);
            assert_eq!(c, code, "{to}: {err}");
        }
    }
    assert_eq!(e.list(), before, "failures changed nothing locally");
    assert_eq!(e.ids().len(), 4);
}

#[test]
fn host_names_shared_by_machines_are_refused() {
    let e = Env::new();
    for v in [0, 1] {
        let mut p = full_profile(v);
        p.machine.as_mut().unwrap().hostname = "vm".into();
        let f = e.path(&format!("vm{v}.json"));
        std::fs::write(&f, serde_json::to_vec(&p).unwrap()).unwrap();
        e.hwcal().args(["db", "import", s(&f)]).assert().success();
    }
    e.hwcal()
        .args(["db", "show", "host:vm"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("host:vm is ambiguous").and(predicate::str::contains("machine:")));
    let m = format!("machine:{}", &machine_id(1)[..6]);
    e.hwcal()
        .args(["db", "show", &m])
        .assert()
        .success()
        .stdout(predicate::str::contains("run 2"));
    let list = e.list();
    assert!(
        list.contains(&format!("machine {}", &machine_id(0)[..12])),
        "{list}"
    );
    assert_eq!(e.ids(), vec![1, 2]);
}

/// Stops the single-node Slurm cluster when dropped (also on failure).
struct Cluster {
    dir: tempfile::TempDir,
    script: PathBuf,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(&self.script)
            .arg("stop")
            .arg(self.dir.path())
            .status();
    }
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn a_slurm_job_array_stores_its_runs_in_postgres() {
    // The job script runs the binary itself, not through cargo's target
    // runner: an emulated (aarch64) build cannot be run by slurmd.
    if common::emulated("a_slurm_job_array_stores_its_runs_in_postgres") {
        return;
    }
    let Some(pg) = PgServer::start() else { return };
    let url = pg.create_db("slurm");
    let script = repo().join("contrib/slurm/single-node-cluster.sh");
    let port = |_| {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    };
    let cluster = Cluster {
        dir: tempfile::Builder::new().prefix("hwcal-slurm-").tempdir().unwrap(),
        script: script.clone(),
    };
    let out = Command::new(&script)
        .arg("start")
        .arg(cluster.dir.path())
        .env("SLURMCTLD_PORT", port(0).to_string())
        .env("SLURMD_PORT", port(1).to_string())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(3) {
        eprintln!("{}", err.trim());
        return;
    }
    assert!(
        out.status.success(),
        "the single-node cluster did not start: {err}"
    );
    let conf = cluster.dir.path().join("slurm.conf");

    // The recipe's node count, as its header gives it (for partition
    // "fleet": this node and a down one), leaves the down node out: an array task per node
    // counted would wait for a node that never comes.
    let recipe = std::fs::read_to_string(repo().join("contrib/slurm/hwcal-array.sbatch")).unwrap();
    let count = recipe
        .lines()
        .find_map(|l| {
            l.trim_start_matches('#')
                .trim()
                .strip_prefix("N=$(")?
                .strip_suffix(')')
        })
        .expect("the node count in the recipe's header")
        .replace("-p batch", "-p fleet");
    let n = Command::new("sh")
        .args(["-c", &count])
        .env("SLURM_CONF", &conf)
        .output()
        .unwrap();
    let all = Command::new("sinfo")
        .args(["-h", "-N", "-o", "%N %t"])
        .env("SLURM_CONF", &conf)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&n.stdout).trim(),
        "1",
        "`{count}` over: {}",
        String::from_utf8_lossy(&all.stdout)
    );

    let work = cluster.dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let sbatch = Command::new("sbatch")
        .args(["--parsable", "--array=0-1"])
        .arg(format!("--chdir={}", work.display()))
        .arg(repo().join("contrib/slurm/hwcal-array.sbatch"))
        .env("SLURM_CONF", &conf)
        .env("HWCAL", assert_cmd::cargo::cargo_bin("hwcal"))
        .env("HWCAL_DB", &url)
        .env("HWCAL_SYNTHETIC_MACHINE", "1")
        .output()
        .unwrap();
    assert!(
        sbatch.status.success(),
        "sbatch: {}",
        String::from_utf8_lossy(&sbatch.stderr)
    );
    let job = String::from_utf8_lossy(&sbatch.stdout).trim().to_string();

    // Wait for the array to leave the queue (two exclusive tasks on one node
    // run one after the other: a few seconds; 90 s at most).
    let start = Instant::now();
    loop {
        let q = Command::new("squeue")
            .args(["-h", "-j", &job])
            .env("SLURM_CONF", &conf)
            .output()
            .unwrap();
        if q.status.success() && q.stdout.is_empty() {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "job {job} still queued after 90 s"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    let mut logs = String::new();
    for t in 0..2 {
        let log = std::fs::read_to_string(work.join(format!("hwcal-{job}_{t}.out"))).unwrap_or_default();
        assert!(
            log.contains(&format!("array task {t} of job {job}")),
            "task {t}: {log}"
        );
        logs += &log;
    }

    let e = Env::new();
    let list = ok(&e, &url, &["db", "list"]);
    assert!(
        list.contains(&format!("machine {}", &machine_id(0)[..12])),
        "{list}\n{logs}"
    );
    assert!(list.contains("2 runs"), "{list}\n{logs}");
    let rows: Value = serde_json::from_str(&ok(&e, &url, &["db", "list", "--json"])).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2, "{logs}");
    assert!(rows.iter().all(|r| r["machine_id"] == machine_id(0).as_str()));
    eprintln!(
        "slurm job array {job}: 2 runs stored in {} s",
        start.elapsed().as_secs()
    );
}

/// `hwcal db list --db 'postgres://…?sslmode=verify-full&sslrootcert=CA'`
/// against a server that takes TLS connections only (issue 41): imports
/// and lists with the CA that signed the server's certificate; refuses,
/// exit 1 and one clear line, a CA that did not, and plain text with a hint
/// to ask for TLS.
#[test]
fn db_commands_reach_a_tls_only_server_with_its_ca() {
    let Some(pg) = PgServer::start_tls() else { return };
    pg.create_db("tls");
    let url = |query: String| {
        format!(
            "postgres://{}:{}@localhost:{}/tls?{query}",
            pgserver::USER,
            pgserver::PASSWORD,
            pg.port
        )
    };
    let e = Env::new();
    let f = files(&e, 1);
    let good = url(format!("sslmode=verify-full&sslrootcert={}", pg.ca().display()));
    assert!(ok(&e, &good, &["db", "import", s(&f[0])]).contains("imported"));
    let list = ok(&e, &good, &["db", "list"]);
    assert!(
        list.contains(&format!("machine {}", &machine_id(0)[..12])),
        "{list}"
    );

    let bad = url(format!(
        "sslmode=verify-full&sslrootcert={}",
        pg.other_ca().display()
    ));
    let (code, _, err) = at(&e, &bad, &["db", "list"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("not signed by the CA"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(!err.contains(pgserver::PASSWORD), "{err}");

    let (code, _, err) = at(&e, &url("sslmode=disable".into()), &["db", "list"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("accepts only TLS"), "{err}");
}
