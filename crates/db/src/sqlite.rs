//! The SQLite store: one file (bundled SQLite, no server), the default.
//!
//! Durability: the database runs in WAL mode and every write is one
//! transaction, so a process killed in the middle of an insert (kill -9,
//! power loss) leaves the file as it was before that insert: the row is
//! either all there or not there. The schema is versioned with SQLite's
//! `user_version` pragma; opening applies the missing migrations, each in
//! its own transaction, and refuses a file written by a newer hwcal.

use crate::defaults::SCHEMA_VERSION;
use crate::error::{first_line, message, DbError};
use crate::store::{Columns, Filter, OpenMode, Row, Store, Summary};
use hwcal_model::Profile;
use rusqlite::{params, Connection, OptionalExtension};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// SQLite `application_id` of every hwcal database ("HWCa" in ASCII), set
/// when the file is created (and on older hwcal files when they are next
/// opened for writing), so hwcal can tell its files from other programs'.
pub const APPLICATION_ID: i32 = 0x4857_4361;

/// The tables an hwcal database holds (files written before the
/// application id existed are recognised by these).
const OUR_TABLES: [&str; 2] = ["profiles", "sqlite_sequence"];

/// How long a writer waits for another hwcal holding the database.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// `path` for an SQLite `file:` URI: the characters URIs give a meaning
/// (`%`, `?`, `#`) and every byte past ASCII percent-encoded.
fn uri_path(path: &Path) -> String {
    let mut out = String::new();
    for b in path.to_string_lossy().bytes() {
        match b {
            b'%' | b'?' | b'#' | 0x80.. => out.push_str(&format!("%{b:02X}")),
            _ => out.push(b as char),
        }
    }
    out
}

/// A stored schema version this hwcal can read (perhaps after migrating):
/// not below 0 (no hwcal wrote that) and not newer than this code.
fn readable_version(path: &Path, v: i64) -> Result<(), DbError> {
    if v < 0 {
        return Err(DbError::BadVersion {
            path: path.to_path_buf(),
            found: v,
        });
    }
    if v > SCHEMA_VERSION {
        return Err(DbError::TooNew {
            path: path.to_path_buf(),
            found: v,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(())
}

/// Whether SQLite says the file itself is damaged or no database.
fn corrupt(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _)
        if matches!(f.code, rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase))
}

/// The migrations, in order: `MIGRATIONS[i]` takes the schema from version
/// `i` to `i + 1`. Never edit a released step; append a new one.
pub(crate) const MIGRATIONS: [&str; 3] = [
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
    // 3: which machine a run is of (issue 16: a fleet in one database) and
    // the run's key (SHA-256 of its JSON), which `push` and `import` use to
    // store a run once. Back-filled by `backfill`.
    "ALTER TABLE profiles ADD COLUMN machine_id TEXT;
     ALTER TABLE profiles ADD COLUMN core TEXT;
     ALTER TABLE profiles ADD COLUMN product TEXT;
     ALTER TABLE profiles ADD COLUMN run_key TEXT;
     CREATE INDEX profiles_machine_id ON profiles(machine_id);
     CREATE INDEX profiles_run_key ON profiles(run_key);",
];

/// How old a new database's build file must be before another process
/// takes it for abandoned: a build takes milliseconds.
const STALE_BUILD_S: u64 = 600;

/// Remove what a killed creator of the database at `path` left beside it:
/// its build file `.NAME.new-PID-NANOS` and that file's `-wal`, `-shm` and
/// `-journal` (a `kill -9` mid-build left them, hidden, for good). Only
/// names of exactly that pattern, older than [`STALE_BUILD_S`], and whose
/// process is gone from this machine — or older than an hour, where the
/// process may be another host's on a shared file system, whose number
/// means nothing here. Failures are ignored: a leftover is untidy, never
/// harmful.
fn sweep_stale_builds(path: &Path) {
    let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(d) => d.to_path_buf(),
        None => PathBuf::from("."),
    };
    let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return;
    };
    let prefix = format!(".{name}.new-");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    for e in entries.flatten() {
        let file = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = file.strip_prefix(&prefix) else {
            continue;
        };
        let stem = ["-wal", "-shm", "-journal"]
            .iter()
            .find_map(|s| rest.strip_suffix(s))
            .unwrap_or(rest);
        let Some((pid, nanos)) = stem.split_once('-') else {
            continue;
        };
        let (Ok(pid), true) = (
            pid.parse::<u32>(),
            !nanos.is_empty() && nanos.bytes().all(|b| b.is_ascii_digit()),
        ) else {
            continue;
        };
        let age = e
            .metadata()
            .ok()
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.elapsed().ok())
            .map_or(0, |d| d.as_secs());
        let gone = !Path::new(&format!("/proc/{pid}")).exists();
        if age >= STALE_BUILD_S && (gone || age >= 6 * STALE_BUILD_S) && pid != std::process::id() {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// An open SQLite store.
pub(crate) struct Sqlite {
    conn: Connection,
    path: PathBuf,
}

fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Sqlite {
    /// Open the database at `path`. An existing file is opened only if it
    /// is an hwcal database (its application id, or for files of older
    /// hwcal versions its tables); anything else is [`DbError::NotOurs`]
    /// and is neither written nor locked for writing. A new database is
    /// built complete in a temporary file next to `path` and then linked
    /// into place (no-clobber), so two hwcal processes creating the same
    /// database at once both end up using one complete file.
    pub fn open_with(path: &Path, mode: OpenMode) -> Result<Sqlite, DbError> {
        let path = path.to_path_buf();
        if path.as_os_str().is_empty() {
            return Err(DbError::Missing { path });
        }
        loop {
            match std::fs::symlink_metadata(&path) {
                Ok(_) => {
                    if mode.creates() {
                        sweep_stale_builds(&path);
                    }
                    return Sqlite::open_existing(&path, mode);
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    if !mode.creates() {
                        return Err(DbError::Missing { path });
                    }
                    if Sqlite::create_new(&path)? {
                        return Sqlite::open_existing(&path, mode);
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
        sweep_stale_builds(path);
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
            let mut db = Sqlite {
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

    /// Open an existing file if, and only if, it is an hwcal database. In
    /// [`OpenMode::Read`] a file hwcal may not write is opened read-only.
    fn open_existing(path: &Path, mode: OpenMode) -> Result<Sqlite, DbError> {
        let p = path.to_path_buf();
        // A file we may not read is a permission problem; anything else
        // that fails to read it, unreadable (for the metadata and the header).
        let unreadable = |source: std::io::Error| match source.kind() {
            std::io::ErrorKind::PermissionDenied => DbError::PermissionDenied {
                path: p.clone(),
                write: false,
            },
            _ => DbError::Unreadable {
                path: p.clone(),
                err: source,
            },
        };
        let md = std::fs::metadata(path).map_err(unreadable)?;
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
            let mut f = std::fs::File::open(path).map_err(unreadable)?;
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
            let read_only = e.kind() == std::io::ErrorKind::PermissionDenied
                || e.kind() == std::io::ErrorKind::ReadOnlyFilesystem;
            if read_only && mode == OpenMode::Read {
                return Sqlite::open_read_only(path);
            }
            if e.kind() == std::io::ErrorKind::ReadOnlyFilesystem {
                return Err(DbError::ReadOnly { path: p });
            }
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
        let mut db = Sqlite { conn, path: p };
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
        // A reader writes nothing, so it need not pay for the check.
        if mode != OpenMode::Read {
            db.check_intact()?;
        }
        if let Err(e) = db.setup() {
            // A reader needs none of what setting up writes (the WAL
            // switch, a migration): a full disk or a directory where the
            // WAL index cannot be made still lets it read.
            return match mode {
                OpenMode::Read => Sqlite::open_read_only(path).map_err(|_| e),
                _ => Err(e),
            };
        }
        if app_id != APPLICATION_ID {
            db.conn
                .execute_batch(&format!("PRAGMA application_id = {APPLICATION_ID}"))
                .map_err(db.err())?;
        }
        Ok(db)
    }

    /// Open `path`, already known to be an hwcal database header-wise,
    /// without writing anything: no WAL switch, no migration, no application
    /// id. A WAL file normally needs its `-shm` index written even to read;
    /// where that cannot be (a read-only mount, a directory hwcal may not
    /// write), the file is opened as immutable, which is right for a file
    /// nobody can be writing on a read-only mount.
    fn open_read_only(path: &Path) -> Result<Sqlite, DbError> {
        let p = path.to_path_buf();
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let probe = |conn: &Connection| conn.query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0));
        let conn = match Connection::open_with_flags(path, flags) {
            Ok(c) if probe(&c).is_ok() => c,
            _ => {
                let uri = format!("file:{}?immutable=1", uri_path(path));
                Connection::open_with_flags(&uri, flags | rusqlite::OpenFlags::SQLITE_OPEN_URI)
                    .map_err(|err| DbError::Sqlite { path: p.clone(), err })?
            }
        };
        let db = Sqlite { conn, path: p };
        db.conn.busy_timeout(BUSY_TIMEOUT).map_err(db.err())?;
        let v = db.version()?;
        readable_version(&db.path, v)?;
        if v < SCHEMA_VERSION {
            return Err(DbError::NeedsUpgrade {
                path: db.path,
                found: v,
            });
        }
        Ok(db)
    }

    /// Refuse to write into a file SQLite finds damaged: an insert into a
    /// malformed b-tree can succeed and lose the row, or damage more. The
    /// quick check reads every page once, which every command that stores
    /// pays once: 20-30 ms for 300 stored runs (95 MB) from the page cache.
    fn check_intact(&self) -> Result<(), DbError> {
        let malformed = |why: String| DbError::Malformed {
            path: self.path.clone(),
            why,
        };
        match self
            .conn
            .query_row("PRAGMA quick_check(1)", [], |r| r.get::<_, String>(0))
        {
            Ok(v) if v == "ok" => Ok(()),
            Ok(v) => Err(malformed(first_line(&v))),
            Err(e) if corrupt(&e) => Err(malformed(message(&e))),
            // Not a verdict on the file (a full disk, a lock): said as is.
            Err(err) => Err(DbError::Sqlite {
                path: self.path.clone(),
                err,
            }),
        }
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
    fn version(&self) -> Result<i64, DbError> {
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
            readable_version(&self.path, v)?;
            if v == SCHEMA_VERSION {
                return Ok(());
            }
            let step = || -> rusqlite::Result<()> {
                tx.execute_batch(MIGRATIONS[v as usize])?;
                if v + 1 >= 2 {
                    backfill(&tx, v + 1)?;
                }
                tx.execute_batch(&format!("PRAGMA user_version = {}", v + 1))
            };
            // A step that fails on a file hwcal wrote (`duplicate column
            // name`) means someone changed the file or its version: said as
            // such, in one line.
            step().map_err(|err| DbError::Migration {
                path: self.path.clone(),
                from: v,
                why: message(&err),
            })?;
            tx.commit().map_err(|err| DbError::Sqlite {
                path: self.path.clone(),
                err,
            })?;
        }
    }
}

/// The condition (with at most one parameter, `?1`) that selects the runs
/// of a filter.
fn condition(f: Filter<'_>) -> (&'static str, Option<String>) {
    match f {
        Filter::All => ("1 = 1", None),
        Filter::Host(h) => ("hostname = ?1", Some(h.to_string())),
        Filter::Machine(m) => ("machine_id = ?1", Some(m.to_string())),
        // The prefix is hex digits only (checked when parsed), so LIKE's
        // wildcards cannot appear in it.
        Filter::MachinePrefix(p) => ("machine_id LIKE ?1 || '%'", Some(p.to_ascii_lowercase())),
    }
}

impl Store for Sqlite {
    fn location(&self) -> &Path {
        &self.path
    }

    fn schema_version(&self) -> Result<i64, DbError> {
        self.version()
    }

    fn insert(
        &mut self,
        row: &Row,
        if_absent: bool,
        before_commit: &mut dyn FnMut(),
    ) -> Result<(i64, bool), DbError> {
        let path = self.path.clone();
        let e = move |err| DbError::Sqlite {
            path: path.clone(),
            err,
        };
        // Immediate: the write lock is taken first, so the check for the run
        // key and the insert are one step (two pushes at once store a run once).
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(&e)?;
        if if_absent {
            let have: Option<i64> = tx
                .query_row(
                    "SELECT min(id) FROM profiles WHERE run_key = ?1",
                    [&row.run_key],
                    |r| r.get(0),
                )
                .map_err(&e)?;
            if let Some(id) = have {
                return Ok((id, false));
            }
        }
        let c = &row.c;
        tx.execute(
            "INSERT INTO profiles (created_unix, hostname, cpu_model, command, core_mhz,
                memory_latency_ns, profile_json, origin, stored_unix, schema_version, sections,
                l1_latency_ns, read_bytes_per_sec, ctx_us, machine_id, core, product, run_key)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
            params![
                row.created_unix,
                c.hostname,
                c.cpu_model,
                row.command,
                c.core_mhz,
                c.memory_latency_ns,
                row.json,
                row.origin,
                now_unix() as i64,
                row.schema_version,
                c.sections,
                c.l1_latency_ns,
                c.read_bytes_per_sec,
                c.ctx_us,
                c.machine_id,
                c.core,
                c.product,
                row.run_key,
            ],
        )
        .map_err(&e)?;
        let id = tx.last_insert_rowid();
        before_commit();
        tx.commit().map_err(&e)?;
        Ok((id, true))
    }

    fn summaries(&self, id: Option<i64>) -> Result<Vec<Summary>, DbError> {
        let filter = if id.is_some() { "WHERE id = ?1" } else { "" };
        let mut st = self
            .conn
            .prepare(&format!(
                "SELECT id, created_unix, stored_unix, origin, hostname, machine_id, core, product,
                    cpu_model, command, core_mhz, l1_latency_ns, memory_latency_ns,
                    read_bytes_per_sec, ctx_us, sections
                 FROM profiles {filter} ORDER BY id"
            ))
            .map_err(self.err())?;
        let rows = st
            .query_map(rusqlite::params_from_iter(id), |r| {
                Ok(Summary {
                    id: r.get(0)?,
                    created_unix: r.get::<_, i64>(1)?.max(0) as u64,
                    stored_unix: r.get::<_, i64>(2)?.max(0) as u64,
                    origin: r.get(3)?,
                    hostname: r.get(4)?,
                    machine_id: r.get(5)?,
                    core: r.get(6)?,
                    product: r.get(7)?,
                    cpu_model: r.get(8)?,
                    command: r.get(9)?,
                    core_mhz: r.get(10)?,
                    l1_latency_ns: r.get(11)?,
                    memory_latency_ns: r.get(12)?,
                    read_bytes_per_sec: r.get(13)?,
                    ctx_us: r.get(14)?,
                    sections: r.get(15)?,
                })
            })
            .map_err(self.err())?;
        rows.collect::<Result<Vec<_>, _>>().map_err(self.err())
    }

    fn json(&self, id: i64) -> Result<Option<String>, DbError> {
        self.conn
            .query_row("SELECT profile_json FROM profiles WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()
            .map_err(self.err())
    }

    fn latest_id(&self, f: Filter<'_>) -> Result<Option<i64>, DbError> {
        let (cond, arg) = condition(f);
        self.conn
            .query_row(
                &format!("SELECT id FROM profiles WHERE {cond} ORDER BY created_unix DESC, id DESC LIMIT 1"),
                rusqlite::params_from_iter(arg),
                |r| r.get(0),
            )
            .optional()
            .map_err(self.err())
    }

    fn machine_ids(&self, f: Filter<'_>) -> Result<Vec<String>, DbError> {
        let (cond, arg) = condition(f);
        let mut st = self
            .conn
            .prepare(&format!(
                "SELECT DISTINCT machine_id FROM profiles
                 WHERE machine_id IS NOT NULL AND {cond} ORDER BY machine_id"
            ))
            .map_err(self.err())?;
        let it = st
            .query_map(rusqlite::params_from_iter(arg), |r| r.get(0))
            .map_err(self.err())?;
        it.collect::<Result<Vec<String>, _>>().map_err(self.err())
    }

    fn id_with_key(&self, run_key: &str) -> Result<Option<i64>, DbError> {
        self.conn
            .query_row(
                "SELECT min(id) FROM profiles WHERE run_key = ?1",
                [run_key],
                |r| r.get(0),
            )
            .map_err(self.err())
    }

    fn delete(&mut self, ids: &[i64]) -> Result<Option<i64>, DbError> {
        let path = self.path.clone();
        let e = move |err| DbError::Sqlite {
            path: path.clone(),
            err,
        };
        let tx = self.conn.transaction().map_err(&e)?;
        for &id in ids {
            if tx
                .execute("DELETE FROM profiles WHERE id = ?1", [id])
                .map_err(&e)?
                == 0
            {
                return Ok(Some(id)); // dropped: rolled back
            }
        }
        tx.commit().map_err(&e)?;
        Ok(None)
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

/// Removes a file when dropped (the temporary file of [`Sqlite::create_new`],
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

/// Fill the columns migration `to` added (2 or 3) of the rows stored
/// before it, from their JSON. A row whose JSON does not parse keeps the
/// defaults (it still lists; `get` reports it as corrupt); its run key is
/// still that of its text.
fn backfill(tx: &rusqlite::Transaction<'_>, to: i64) -> rusqlite::Result<()> {
    let rows: Vec<(i64, String)> = {
        let mut st = tx.prepare("SELECT id, profile_json FROM profiles")?;
        let it = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        it.collect::<rusqlite::Result<_>>()?
    };
    for (id, json) in rows {
        let p = serde_json::from_str::<Profile>(&json).ok();
        if to == 3 {
            let c = p.as_ref().map(Columns::of).unwrap_or_default();
            tx.execute(
                "UPDATE profiles SET machine_id = ?2, core = ?3, product = ?4, run_key = ?5 WHERE id = ?1",
                params![id, c.machine_id, c.core, c.product, crate::store::run_key(&json)],
            )?;
        } else if let Some(p) = p {
            let c = Columns::of(&p);
            tx.execute(
                "UPDATE profiles SET schema_version = ?2, sections = ?3, l1_latency_ns = ?4,
                    read_bytes_per_sec = ?5, ctx_us = ?6 WHERE id = ?1",
                params![
                    id,
                    p.schema_version,
                    c.sections,
                    c.l1_latency_ns,
                    c.read_bytes_per_sec,
                    c.ctx_us
                ],
            )?;
        }
    }
    Ok(())
}
