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

/// SQLite `application_id` of every hwcal database ("HWCa" in ASCII), set
/// when the file is created (and on older hwcal files when they are next
/// opened for writing), so hwcal can tell its files from other programs'.
pub const APPLICATION_ID: i32 = 0x4857_4361;

/// The tables an hwcal database holds (files written before the
/// application id existed are recognised by these).
const OUR_TABLES: [&str; 2] = ["profiles", "sqlite_sequence"];

/// How long a writer waits for another hwcal holding the database.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// How [`Db::open_with`] treats a path with no file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    /// Create the database (and its directory) if there is none: commands
    /// that store something.
    Create,
    /// Open only an existing database, never creating a file or a
    /// directory: commands that read (a missing file is [`DbError::Missing`]).
    Existing,
}

/// The text of an SQLite error without the code SQLite repeats.
fn sqlite_message(e: &rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqliteFailure(f, Some(msg)) => {
            if msg.is_empty() {
                f.to_string()
            } else {
                msg.clone()
            }
        }
        rusqlite::Error::SqliteFailure(f, None) => f.to_string(),
        e => e.to_string(),
    }
}

/// The URL scheme of a `--db` location, if it has one (`postgres://h/db`
/// gives `postgres`). A Windows drive or a plain path has none.
pub fn url_scheme(location: &str) -> Option<&str> {
    let (scheme, _) = location.split_once("://")?;
    let ok = !scheme.is_empty()
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    ok.then_some(scheme)
}

/// Check a `--db` location: a file path, or a URL of a supported scheme.
/// SQLite files are the only backend today, so every scheme is refused
/// (a backend added later is one more arm here).
pub fn check_location(location: &str) -> Result<(), DbError> {
    match url_scheme(location) {
        None => Ok(()),
        Some(scheme) => Err(DbError::UnsupportedScheme(
            location.to_string(),
            scheme.to_string(),
        )),
    }
}

/// Environment variable naming the database file (overridden by `--db`).
pub const ENV_VAR: &str = "HWCAL_DB";

/// Errors from the database.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// An SQLite failure, shown once (no repeated codes): the error's own
    /// text is not chained as a source, so `{:#}` does not print it twice.
    #[error("{path}: {}", sqlite_message(err))]
    Sqlite { path: PathBuf, err: rusqlite::Error },
    #[error("{path}: permission denied{}", if *.write { " (hwcal needs to write there)" } else { "" })]
    PermissionDenied { path: PathBuf, write: bool },
    #[error("{path}: cannot read it: {err}")]
    Unreadable { path: PathBuf, err: std::io::Error },
    #[error("{path}: no run yet (no database there; `hwcal run` or `hwcal db import` creates it)")]
    Missing { path: PathBuf },
    #[error("{path}: {why}; hwcal opens only its own databases and leaves this file untouched")]
    NotOurs { path: PathBuf, why: String },
    #[error("--db {0}: the {1}:// scheme is not supported (only SQLite files: give a file path)")]
    UnsupportedScheme(String, String),
    #[error("cannot create directory {path}: {err}")]
    CreateDir { path: PathBuf, err: std::io::Error },
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
    /// database at `path`: [`Db::open_with`] in [`OpenMode::Create`].
    pub fn open(path: impl AsRef<Path>) -> Result<Db, DbError> {
        Db::open_with(path, OpenMode::Create)
    }

    /// Open the database at `path`. An existing file is opened only if it
    /// is an hwcal database (its application id, or for files of older
    /// hwcal versions its tables); anything else is [`DbError::NotOurs`]
    /// and is neither written nor locked for writing. A new database is
    /// built complete in a temporary file next to `path` and then linked
    /// into place (no-clobber), so two hwcal processes creating the same
    /// database at once both end up using one complete file.
    pub fn open_with(path: impl AsRef<Path>, mode: OpenMode) -> Result<Db, DbError> {
        let path = path.as_ref().to_path_buf();
        if let Some(s) = path.to_str() {
            check_location(s)?;
        }
        if path.as_os_str().is_empty() {
            return Err(DbError::Missing { path });
        }
        loop {
            match std::fs::symlink_metadata(&path) {
                Ok(_) => return Db::open_existing(&path),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    if mode == OpenMode::Existing {
                        return Err(DbError::Missing { path });
                    }
                    if Db::create_new(&path)? {
                        return Db::open_existing(&path);
                    }
                    // Another process created it first: open theirs.
                }
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                    return Err(DbError::PermissionDenied { path, write: false })
                }
                Err(err) => return Err(DbError::Unreadable { path, err }),
            }
        }
    }

    /// Build a new, empty, migrated database in a temporary file in `path`'s
    /// directory and hard-link it to `path`. `Ok(false)` when `path` came
    /// into existence meanwhile (another creator won; nothing was changed).
    fn create_new(path: &Path) -> Result<bool, DbError> {
        let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
            Some(d) => d.to_path_buf(),
            None => PathBuf::from("."),
        };
        if !dir.is_dir() {
            std::fs::create_dir_all(&dir).map_err(|source| match source.kind() {
                std::io::ErrorKind::PermissionDenied => DbError::PermissionDenied {
                    path: dir.clone(),
                    write: true,
                },
                _ => DbError::CreateDir {
                    path: dir.clone(),
                    err: source,
                },
            })?;
        }
        let name = path
            .file_name()
            .map_or("hwcal.db".into(), |n| n.to_string_lossy().into_owned());
        let tmp = dir.join(format!(
            ".{name}.new-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        let _cleanup = RemoveOnDrop(tmp.clone());
        {
            let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE
                | rusqlite::OpenFlags::SQLITE_OPEN_CREATE
                | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
            let conn = Connection::open_with_flags(&tmp, flags).map_err(|err| match permission(&err) {
                true => DbError::PermissionDenied {
                    path: dir.clone(),
                    write: true,
                },
                false => DbError::Sqlite {
                    path: path.to_path_buf(),
                    err,
                },
            })?;
            let mut db = Db {
                conn,
                path: tmp.clone(),
            };
            db.setup()?;
            db.conn
                .execute_batch(&format!("PRAGMA application_id = {APPLICATION_ID}"))
                .map_err(db.err())?;
            db.conn.close().map_err(|(_, err)| DbError::Sqlite {
                path: tmp.clone(),
                err,
            })?;
        }
        match std::fs::hard_link(&tmp, path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
            Err(_) => {
                // No hard links here (some filesystems): rename only if the
                // name is still free; a loser of the small race still holds a
                // complete database, never a half-built one.
                if path.exists() {
                    return Ok(false);
                }
                std::fs::rename(&tmp, path).map_err(|err| DbError::Unreadable {
                    path: path.to_path_buf(),
                    err,
                })?;
                Ok(true)
            }
        }
    }

    /// Open an existing file if, and only if, it is an hwcal database.
    fn open_existing(path: &Path) -> Result<Db, DbError> {
        let p = path.to_path_buf();
        let md = std::fs::metadata(path).map_err(|source| match source.kind() {
            std::io::ErrorKind::PermissionDenied => DbError::PermissionDenied {
                path: p.clone(),
                write: false,
            },
            _ => DbError::Unreadable {
                path: p.clone(),
                err: source,
            },
        })?;
        if md.is_dir() {
            return Err(DbError::NotOurs {
                path: p,
                why: "is a directory".into(),
            });
        }
        if !md.is_file() {
            return Err(DbError::NotOurs {
                path: p,
                why: "not a regular file".into(),
            });
        }
        let mut head = [0u8; 100];
        let n = {
            use std::io::Read;
            let mut f = std::fs::File::open(path).map_err(|source| match source.kind() {
                std::io::ErrorKind::PermissionDenied => DbError::PermissionDenied {
                    path: p.clone(),
                    write: false,
                },
                _ => DbError::Unreadable {
                    path: p.clone(),
                    err: source,
                },
            })?;
            let mut n = 0;
            while n < head.len() {
                match f.read(&mut head[n..]) {
                    Ok(0) => break,
                    Ok(k) => n += k,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(err) => return Err(DbError::Unreadable { path: p, err }),
                }
            }
            n
        };
        let why = header_verdict(&head[..n]);
        if let Some(why) = why {
            return Err(DbError::NotOurs { path: p, why });
        }
        // hwcal writes to its database even to read it (WAL, migrations):
        // a file it may read but not write is named as such, not left to
        // SQLite's "attempt to write a readonly database".
        if let Err(e) = std::fs::OpenOptions::new().read(true).write(true).open(path) {
            if e.kind() == std::io::ErrorKind::PermissionDenied {
                return Err(DbError::PermissionDenied { path: p, write: true });
            }
        }
        let app_id = i32::from_be_bytes([head[68], head[69], head[70], head[71]]);
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(|err| match permission(&err) {
            true => DbError::PermissionDenied {
                path: p.clone(),
                write: true,
            },
            false => DbError::Sqlite { path: p.clone(), err },
        })?;
        let mut db = Db { conn, path: p };
        db.conn.busy_timeout(BUSY_TIMEOUT).map_err(db.err())?;
        if app_id != APPLICATION_ID {
            // Older hwcal files have no application id: recognise them by
            // their tables, read without writing anything.
            let tables: Vec<String> = {
                let mut st = db
                    .conn
                    .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
                    .map_err(db.err())?;
                let it = st.query_map([], |r| r.get(0)).map_err(db.err())?;
                it.collect::<Result<_, _>>().map_err(db.err())?
            };
            let ours = app_id == 0
                && tables.iter().any(|t| t == "profiles")
                && tables.iter().all(|t| OUR_TABLES.contains(&t.as_str()));
            if !ours {
                let why = if app_id != 0 {
                    format!("an SQLite database of another program (application id {app_id:#x})")
                } else if tables.is_empty() {
                    "an SQLite database without hwcal's tables".to_string()
                } else {
                    format!(
                        "an SQLite database of another program (tables: {})",
                        tables.join(", ")
                    )
                };
                return Err(DbError::NotOurs { path: db.path, why });
            }
        }
        db.setup()?;
        if app_id != APPLICATION_ID {
            db.conn
                .execute_batch(&format!("PRAGMA application_id = {APPLICATION_ID}"))
                .map_err(db.err())?;
        }
        Ok(db)
    }

    fn err(&self) -> impl Fn(rusqlite::Error) -> DbError + '_ {
        |err| DbError::Sqlite {
            path: self.path.clone(),
            err,
        }
    }

    fn setup(&mut self) -> Result<(), DbError> {
        // Another hwcal may be writing (two runs finishing together): wait.
        self.conn.busy_timeout(BUSY_TIMEOUT).map_err(self.err())?;
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
                .map_err(|err| DbError::Sqlite {
                    path: self.path.clone(),
                    err,
                })?;
            let v: i64 = tx
                .query_row("PRAGMA user_version", [], |r| r.get(0))
                .map_err(|err| DbError::Sqlite {
                    path: self.path.clone(),
                    err,
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
            step().map_err(|err| DbError::Sqlite {
                path: self.path.clone(),
                err,
            })?;
            tx.commit().map_err(|err| DbError::Sqlite {
                path: self.path.clone(),
                err,
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
        let e = move |err| DbError::Sqlite {
            path: path.clone(),
            err,
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

/// Why the first bytes of a file show it is not an hwcal database (None: an
/// SQLite file, to be checked further).
fn header_verdict(head: &[u8]) -> Option<String> {
    const MAGIC: &[u8] = b"SQLite format 3\0";
    if head.is_empty() {
        return Some("an empty file, not an hwcal database (remove it to let hwcal create one)".into());
    }
    if head.len() < 100 || !head.starts_with(MAGIC) {
        return Some("not an hwcal database (not an SQLite file)".into());
    }
    None
}

/// Whether SQLite failed to open a file for lack of permission.
fn permission(e: &rusqlite::Error) -> bool {
    matches!(
        e,
        rusqlite::Error::SqliteFailure(f, _)
            if matches!(f.code, rusqlite::ErrorCode::CannotOpen | rusqlite::ErrorCode::PermissionDenied | rusqlite::ErrorCode::ReadOnly)
    )
}

/// Removes a file when dropped (the temporary file of [`Db::create_new`],
/// whether it was linked into place or not, with its WAL side files).
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        for ext in ["-wal", "-shm", "-journal"] {
            let mut s = self.0.clone().into_os_string();
            s.push(ext);
            let _ = std::fs::remove_file(s);
        }
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
            .execute_batch(&format!(
                "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = 99"
            ))
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
    fn new_databases_carry_the_application_id() {
        let (_d, db) = temp_db();
        let id: i32 = db
            .conn
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
        let id: i32 = db
            .conn
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
        for loc in ["postgres://host/db", "x://y", "sqlite+foo://a", "HTTP://h"] {
            assert!(url_scheme(loc).is_some(), "{loc}");
            let e = check_location(loc).unwrap_err();
            assert!(e.to_string().contains("not supported"), "{e}");
            assert!(matches!(Db::open(loc), Err(DbError::UnsupportedScheme(..))));
        }
        assert!(!Path::new("postgres:").exists());
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
            err: rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(5),
                Some("database is locked".into()),
            ),
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
