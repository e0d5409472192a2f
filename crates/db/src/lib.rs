//! hwcal's results database, in the spirit of The Calibrator's "Calibrated
//! Hardware Database": every run's profile, kept whole so any figure (and
//! the raw curves behind it) can be shown, compared or re-analysed later.
//!
//! One SQLite file (bundled SQLite, no server). Each profile is one row: the
//! complete JSON profile, raw curves included, plus a few summary columns
//! copied out of it (host, CPU, command, key figures) so `hwcal db list` and
//! lookups need not parse every profile.
//!
//! Durability: the database runs in WAL mode and every write is one
//! transaction, so a process killed in the middle of an insert (kill -9,
//! power loss) leaves the file as it was before that insert: the row is
//! either all there or not there. The schema is versioned with SQLite's
//! `user_version` pragma; [`Db::open`] applies the missing migrations, each
//! in its own transaction, and refuses a file written by a newer hwcal.
#![forbid(unsafe_code)]

use hwcal_model::Profile;
use rusqlite::{params, Connection, OptionalExtension};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The schema version this code writes (SQLite `user_version`).
pub const SCHEMA_VERSION: i64 = 2;

/// Environment variable naming the database file (overridden by `--db`).
pub const ENV_VAR: &str = "HWCAL_DB";

/// Errors from the database.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("{path}: {source}")]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("cannot create directory {path}: {source}")]
    CreateDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot serialise the profile: {0}")]
    Serialise(#[from] serde_json::Error),
    #[error("no run with id {0} in the database")]
    NotFound(i64),
    #[error("stored run {id} is not a readable profile: {reason}")]
    Corrupt { id: i64, reason: String },
    #[error("{path}: database schema version {found} is newer than this hwcal supports ({supported})")]
    TooNew {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
    #[error("no database path: set {ENV_VAR}, XDG_DATA_HOME or HOME, or pass --db")]
    NoPath,
}

/// Where a stored profile came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Measured on this machine by an hwcal command.
    Run,
    /// Imported from a JSON file (possibly another machine's).
    Import,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Run => "run",
            Origin::Import => "import",
        }
    }
}

/// One row of `hwcal db list`: the summary columns of a stored profile.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub id: i64,
    /// When the profile was measured (the profile's own timestamp).
    pub created_unix: u64,
    /// When it was stored here (0 for rows migrated from schema 1).
    pub stored_unix: u64,
    pub origin: String,
    pub hostname: Option<String>,
    pub cpu_model: Option<String>,
    pub command: String,
    pub core_mhz: Option<f64>,
    /// Latency of the first cache level.
    pub l1_latency_ns: Option<f64>,
    /// Main-memory latency.
    pub memory_latency_ns: Option<f64>,
    pub read_bytes_per_sec: Option<f64>,
    /// Context switch, smallest ring measured (median µs).
    pub ctx_us: Option<f64>,
    /// Comma-separated sections the profile holds (`clock,caches,...`).
    pub sections: String,
}

/// The summary columns computed from a profile.
struct Columns {
    hostname: Option<String>,
    cpu_model: Option<String>,
    core_mhz: Option<f64>,
    l1_latency_ns: Option<f64>,
    memory_latency_ns: Option<f64>,
    read_bytes_per_sec: Option<f64>,
    ctx_us: Option<f64>,
    sections: String,
}

impl Columns {
    fn of(p: &Profile) -> Columns {
        Columns {
            hostname: p.machine.as_ref().map(|m| m.hostname.clone()),
            cpu_model: p.machine.as_ref().map(|m| m.cpu_model_name.clone()),
            core_mhz: p.clock.as_ref().map(|c| c.core_mhz),
            l1_latency_ns: p
                .caches
                .as_ref()
                .and_then(|c| c.iter().min_by_key(|l| l.level))
                .map(|l| l.latency_ns),
            memory_latency_ns: p.memory.as_ref().map(|m| m.latency_ns),
            read_bytes_per_sec: p.bandwidth.as_ref().and_then(|b| b.read_bytes_per_sec),
            ctx_us: p
                .context_switch
                .as_ref()
                .and_then(|c| c.points.iter().min_by_key(|q| q.nprocs))
                .map(|q| q.us_median),
            sections: sections(p).join(","),
        }
    }
}

/// The names of the sections a profile holds, in profile order.
pub fn sections(p: &Profile) -> Vec<&'static str> {
    let mut v = Vec::new();
    let mut add = |present: bool, name| {
        if present {
            v.push(name)
        }
    };
    add(p.machine.is_some(), "machine");
    add(p.clock.is_some(), "clock");
    add(p.caches.is_some(), "caches");
    add(p.memory.is_some(), "memory");
    add(p.tlbs.is_some(), "tlbs");
    add(p.mem.is_some(), "mem");
    add(p.bandwidth.is_some(), "bandwidth");
    add(p.context_switch.is_some(), "ctx");
    add(p.io.is_some(), "io");
    add(!p.raw.is_empty() || p.raw_clock.is_some(), "raw");
    v
}

/// The migrations, in order: `MIGRATIONS[i]` takes the schema from version
/// `i` to `i + 1`. Never edit a released step; append a new one.
const MIGRATIONS: [&str; 2] = [
    // 1: the first layout: the whole profile plus the columns `list` shows.
    "CREATE TABLE profiles (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        created_unix INTEGER NOT NULL,
        hostname TEXT,
        cpu_model TEXT,
        command TEXT NOT NULL,
        core_mhz REAL,
        memory_latency_ns REAL,
        profile_json TEXT NOT NULL
     );
     CREATE INDEX profiles_created ON profiles(created_unix);
     CREATE INDEX profiles_hostname ON profiles(hostname);",
    // 2: where a row came from, when it was stored, which sections it holds,
    // and more key figures for comparisons across machines. Existing rows
    // are back-filled from their JSON by `backfill_v2`.
    "ALTER TABLE profiles ADD COLUMN origin TEXT NOT NULL DEFAULT 'run';
     ALTER TABLE profiles ADD COLUMN stored_unix INTEGER NOT NULL DEFAULT 0;
     ALTER TABLE profiles ADD COLUMN schema_version INTEGER;
     ALTER TABLE profiles ADD COLUMN sections TEXT NOT NULL DEFAULT '';
     ALTER TABLE profiles ADD COLUMN l1_latency_ns REAL;
     ALTER TABLE profiles ADD COLUMN read_bytes_per_sec REAL;
     ALTER TABLE profiles ADD COLUMN ctx_us REAL;
     CREATE INDEX profiles_cpu_model ON profiles(cpu_model);",
];

/// An open results database.
pub struct Db {
    conn: Connection,
    path: PathBuf,
}

/// The default database file: `$HWCAL_DB`, else
/// `$XDG_DATA_HOME/hwcal/hwcal.db`, else `~/.local/share/hwcal/hwcal.db`.
/// Empty variables count as unset (as the XDG spec says).
pub fn default_path() -> Result<PathBuf, DbError> {
    default_path_from(|k| std::env::var_os(k))
}

/// [`default_path`] with the environment given as a lookup function.
pub fn default_path_from(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Result<PathBuf, DbError> {
    let var = |k: &str| env(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(p) = var(ENV_VAR) {
        return Ok(p);
    }
    // XDG: a relative XDG_DATA_HOME is invalid and must be ignored.
    if let Some(d) = var("XDG_DATA_HOME").filter(|d| d.is_absolute()) {
        return Ok(d.join("hwcal").join("hwcal.db"));
    }
    match var("HOME") {
        Some(h) => Ok(h.join(".local/share/hwcal/hwcal.db")),
        None => Err(DbError::NoPath),
    }
}

fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Db {
    /// Open (creating it and its directory if needed) and migrate the
    /// database at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Db, DbError> {
        let path = path.as_ref().to_path_buf();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !dir.is_dir() {
                std::fs::create_dir_all(dir).map_err(|source| DbError::CreateDir {
                    path: dir.to_path_buf(),
                    source,
                })?;
            }
        }
        let conn = Connection::open(&path).map_err(|source| DbError::Sqlite {
            path: path.clone(),
            source,
        })?;
        let mut db = Db { conn, path };
        db.setup()?;
        Ok(db)
    }

    fn err(&self) -> impl Fn(rusqlite::Error) -> DbError + '_ {
        |source| DbError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    fn setup(&mut self) -> Result<(), DbError> {
        // Another hwcal may be writing (two runs finishing together): wait.
        self.conn
            .busy_timeout(Duration::from_secs(10))
            .map_err(self.err())?;
        // WAL: a crash mid-write leaves the main file untouched; the
        // incomplete transaction in the log is discarded on the next open.
        self.conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))
            .map_err(self.err())?;
        self.conn
            .execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")
            .map_err(self.err())?;
        self.migrate()
    }

    /// The schema version of the open file.
    pub fn schema_version(&self) -> Result<i64, DbError> {
        self.conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(self.err())
    }

    fn migrate(&mut self) -> Result<(), DbError> {
        loop {
            // Read the version inside the write transaction so two processes
            // opening a fresh file cannot both apply the same step.
            let tx = self
                .conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(|source| DbError::Sqlite {
                    path: self.path.clone(),
                    source,
                })?;
            let v: i64 = tx
                .query_row("PRAGMA user_version", [], |r| r.get(0))
                .map_err(|source| DbError::Sqlite {
                    path: self.path.clone(),
                    source,
                })?;
            if v > SCHEMA_VERSION {
                return Err(DbError::TooNew {
                    path: self.path.clone(),
                    found: v,
                    supported: SCHEMA_VERSION,
                });
            }
            if v == SCHEMA_VERSION {
                return Ok(());
            }
            let step = || -> rusqlite::Result<()> {
                tx.execute_batch(MIGRATIONS[v as usize])?;
                if v + 1 == 2 {
                    backfill_v2(&tx)?;
                }
                tx.execute_batch(&format!("PRAGMA user_version = {}", v + 1))
            };
            step().map_err(|source| DbError::Sqlite {
                path: self.path.clone(),
                source,
            })?;
            tx.commit().map_err(|source| DbError::Sqlite {
                path: self.path.clone(),
                source,
            })?;
        }
    }

    /// The file this database lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Store a profile measured here; returns its id.
    pub fn insert(&mut self, p: &Profile) -> Result<i64, DbError> {
        self.insert_with_origin(p, Origin::Run)
    }

    /// Store a profile, saying where it came from; returns its id. One
    /// transaction: the row is stored completely or not at all.
    pub fn insert_with_origin(&mut self, p: &Profile, origin: Origin) -> Result<i64, DbError> {
        self.insert_with_hook(p, origin, || {})
    }

    /// [`Db::insert_with_origin`], calling `before_commit` once the row is
    /// written but not yet committed. For crash tests only (kill the process
    /// inside the transaction, deterministically).
    #[doc(hidden)]
    pub fn insert_with_hook(
        &mut self,
        p: &Profile,
        origin: Origin,
        before_commit: impl FnOnce(),
    ) -> Result<i64, DbError> {
        let json = serde_json::to_string(p)?;
        let c = Columns::of(p);
        let path = self.path.clone();
        let e = move |source| DbError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self.conn.transaction().map_err(&e)?;
        tx.execute(
            "INSERT INTO profiles (created_unix, hostname, cpu_model, command, core_mhz,
                memory_latency_ns, profile_json, origin, stored_unix, schema_version, sections,
                l1_latency_ns, read_bytes_per_sec, ctx_us)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            params![
                p.created_unix as i64,
                c.hostname,
                c.cpu_model,
                p.command,
                c.core_mhz,
                c.memory_latency_ns,
                json,
                origin.as_str(),
                now_unix() as i64,
                p.schema_version,
                c.sections,
                c.l1_latency_ns,
                c.read_bytes_per_sec,
                c.ctx_us,
            ],
        )
        .map_err(&e)?;
        let id = tx.last_insert_rowid();
        before_commit();
        tx.commit().map_err(&e)?;
        Ok(id)
    }

    /// Every stored profile's summary, oldest first.
    pub fn list(&self) -> Result<Vec<Summary>, DbError> {
        self.summaries("", [])
    }

    /// The summary of one stored profile.
    pub fn summary(&self, id: i64) -> Result<Summary, DbError> {
        self.summaries("WHERE id = ?1", [id])?
            .pop()
            .ok_or(DbError::NotFound(id))
    }

    fn summaries<P: rusqlite::Params>(&self, filter: &str, params: P) -> Result<Vec<Summary>, DbError> {
        let mut st = self
            .conn
            .prepare(&format!(
                "SELECT id, created_unix, stored_unix, origin, hostname, cpu_model, command, core_mhz,
                    l1_latency_ns, memory_latency_ns, read_bytes_per_sec, ctx_us, sections
                 FROM profiles {filter} ORDER BY id"
            ))
            .map_err(self.err())?;
        let rows = st
            .query_map(params, |r| {
                Ok(Summary {
                    id: r.get(0)?,
                    created_unix: r.get::<_, i64>(1)?.max(0) as u64,
                    stored_unix: r.get::<_, i64>(2)?.max(0) as u64,
                    origin: r.get(3)?,
                    hostname: r.get(4)?,
                    cpu_model: r.get(5)?,
                    command: r.get(6)?,
                    core_mhz: r.get(7)?,
                    l1_latency_ns: r.get(8)?,
                    memory_latency_ns: r.get(9)?,
                    read_bytes_per_sec: r.get(10)?,
                    ctx_us: r.get(11)?,
                    sections: r.get(12)?,
                })
            })
            .map_err(self.err())?;
        rows.collect::<Result<Vec<_>, _>>().map_err(self.err())
    }

    /// The stored profile with this id.
    pub fn get(&self, id: i64) -> Result<Profile, DbError> {
        let json: Option<String> = self
            .conn
            .query_row("SELECT profile_json FROM profiles WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()
            .map_err(self.err())?;
        let json = json.ok_or(DbError::NotFound(id))?;
        serde_json::from_str(&json).map_err(|e| DbError::Corrupt {
            id,
            reason: e.to_string(),
        })
    }

    /// The id of the most recently stored profile, if any.
    pub fn latest_id(&self) -> Result<Option<i64>, DbError> {
        self.conn
            .query_row("SELECT max(id) FROM profiles", [], |r| r.get(0))
            .map_err(self.err())
    }

    /// The id of a stored profile identical to `p` (same JSON), if any; so
    /// importing the same file twice can be recognised.
    pub fn find_identical(&self, p: &Profile) -> Result<Option<i64>, DbError> {
        let json = serde_json::to_string(p)?;
        self.conn
            .query_row(
                "SELECT min(id) FROM profiles WHERE created_unix = ?1 AND profile_json = ?2",
                params![p.created_unix as i64, json],
                |r| r.get(0),
            )
            .map_err(self.err())
    }

    /// The id of the most recently stored profile of a host, if any.
    pub fn latest_id_of_host(&self, hostname: &str) -> Result<Option<i64>, DbError> {
        self.conn
            .query_row(
                "SELECT max(id) FROM profiles WHERE hostname = ?1",
                [hostname],
                |r| r.get(0),
            )
            .map_err(self.err())
    }

    /// Remove a stored profile. [`DbError::NotFound`] if there is none.
    pub fn delete(&mut self, id: i64) -> Result<(), DbError> {
        let n = self
            .conn
            .execute("DELETE FROM profiles WHERE id = ?1", [id])
            .map_err(self.err())?;
        if n == 0 {
            return Err(DbError::NotFound(id));
        }
        Ok(())
    }
}

/// Fill schema 2's new columns of rows stored under schema 1 from their JSON.
/// A row whose JSON does not parse keeps the defaults (it still lists; `get`
/// reports it as corrupt).
fn backfill_v2(tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<()> {
    let rows: Vec<(i64, String)> = {
        let mut st = tx.prepare("SELECT id, profile_json FROM profiles")?;
        let it = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        it.collect::<rusqlite::Result<_>>()?
    };
    let mut up = tx.prepare(
        "UPDATE profiles SET schema_version = ?2, sections = ?3, l1_latency_ns = ?4,
            read_bytes_per_sec = ?5, ctx_us = ?6 WHERE id = ?1",
    )?;
    for (id, json) in rows {
        if let Ok(p) = serde_json::from_str::<Profile>(&json) {
            let c = Columns::of(&p);
            up.execute(params![
                id,
                p.schema_version,
                c.sections,
                c.l1_latency_ns,
                c.read_bytes_per_sec,
                c.ctx_us
            ])?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwcal_model::sample::full_profile;

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
        assert_eq!(db.schema_version().unwrap(), 2);
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
            .execute_batch("PRAGMA user_version = 99")
            .unwrap();
        let e = Db::open(&path).err().expect("must refuse");
        assert!(matches!(e, DbError::TooNew { found: 99, .. }), "{e}");
        assert!(e.to_string().contains("newer"));
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
    fn default_path_prefers_env_then_xdg_then_home() {
        let path = |vars: &[(&str, &str)]| {
            let vars: Vec<(String, String)> =
                vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
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
    }
}
