//! hwcal's results database, in the spirit of The Calibrator's "Calibrated
//! Hardware Database": every run's profile, kept whole so any figure (and
//! the raw curves behind it) can be shown, compared or re-analysed later.
//!
//! Two stores behind one [`Db`]: an SQLite file (bundled SQLite, no server:
//! the default, one machine) and a shared PostgreSQL database
//! (`postgres://...`: a fleet's runs in one place). Both hold the same
//! table with the same migrations: each profile is one row, the complete
//! JSON profile (raw curves included) plus summary columns copied out of it
//! (host, machine id, core, CPU, key figures) so `hwcal db list` and lookups
//! need not parse every profile. Every write is one transaction, so a
//! process killed in the middle leaves each store as it was before that
//! write. A run's identity across stores is its `run_key`, the SHA-256 of
//! its JSON: [`Db::push_to`] copies only runs the target lacks.
#![forbid(unsafe_code)]

mod location;
mod pg;
mod sqlite;
mod table;

pub use location::{
    check_location, default_location, default_path, default_path_from, redact, url_scheme, Location,
};
pub use sqlite::APPLICATION_ID;
pub use table::list_text;

use hwcal_model::Profile;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The schema version this code writes (SQLite `user_version`, the
/// `hwcal_schema` table in PostgreSQL).
pub const SCHEMA_VERSION: i64 = 3;

/// Environment variable naming the database (overridden by `--db`): a file
/// path or a `postgres://` URL.
pub const ENV_VAR: &str = "HWCAL_DB";

/// How [`Db::open_with`] treats a location with no database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    /// Create the database (the file and its directory, or the tables in a
    /// PostgreSQL database) if there is none: commands that store something.
    Create,
    /// Open only an existing database, creating nothing (a missing one is
    /// [`DbError::Missing`]): commands that change stored runs (`db rm`).
    Existing,
    /// [`OpenMode::Existing`] for commands that only read: an SQLite file
    /// hwcal may not write (a team's shared file, a read-only mount) is
    /// opened read-only instead of refused.
    Read,
}

impl OpenMode {
    /// Whether a missing database is created.
    pub fn creates(self) -> bool {
        self == OpenMode::Create
    }
}

/// Errors from the database.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// An SQLite failure, shown once (no repeated codes): the error's own
    /// text is not chained as a source, so `{:#}` does not print it twice.
    #[error("{path}: {}", sqlite::message(err))]
    Sqlite { path: PathBuf, err: rusqlite::Error },
    /// A PostgreSQL failure (server down, wrong password, lost connection):
    /// the URL without its password, and what went wrong.
    #[error("{location}: {what}")]
    Postgres { location: String, what: String },
    #[error("--db {location}: not a usable PostgreSQL URL: {why}")]
    BadUrl { location: String, why: String },
    #[error("{path}: permission denied{}", if *.write { " (hwcal needs to write there)" } else { "" })]
    PermissionDenied { path: PathBuf, write: bool },
    #[error("{path}: cannot read it: {err}")]
    Unreadable { path: PathBuf, err: std::io::Error },
    #[error("{path}: no run yet (no database there; `hwcal run` or `hwcal db import` creates it)")]
    Missing { path: PathBuf },
    #[error("{path}: {why}; hwcal opens only its own databases and leaves this one untouched")]
    NotOurs { path: PathBuf, why: String },
    #[error(
        "--db {0}: the {1}:// scheme is not supported (give a file path for SQLite, or a postgres:// URL)"
    )]
    UnsupportedScheme(String, String),
    #[error("cannot create directory {path}: {err}")]
    CreateDir { path: PathBuf, err: std::io::Error },
    #[error("cannot serialise the profile: {0}")]
    Serialise(#[from] serde_json::Error),
    #[error("no run with id {0} in the database")]
    NotFound(i64),
    /// A selector that matches no run (`host:NAME` of no stored host, ...).
    #[error("{0}")]
    NoMatch(String),
    /// A selector that matches runs of more than one machine.
    #[error("{0}")]
    Ambiguous(String),
    #[error("stored run {id} is not a readable profile: {reason}")]
    Corrupt { id: i64, reason: String },
    /// A stored schema version no hwcal ever wrote (below 0): the
    /// database is damaged or another program's, and is left alone.
    #[error("{path}: database schema version {found} is not one hwcal ever wrote (a damaged database, or another program's); left alone")]
    BadVersion { path: PathBuf, found: i64 },
    /// A migration step failed on a file that claims an older schema.
    #[error("{path}: cannot upgrade the database from schema version {from} ({why}); the file does not match the version it states (changed by another program?) and was left as it was")]
    Migration { path: PathBuf, from: i64, why: String },
    /// The file is on a read-only file system and the command stores.
    #[error("{path}: on a read-only file system (hwcal needs to write there to store runs)")]
    ReadOnly { path: PathBuf },
    /// SQLite finds the file damaged: nothing is written into it.
    #[error("{path}: the database file is damaged ({why}); nothing was written to it (restore a copy, or give another --db)")]
    Malformed { path: PathBuf, why: String },
    /// A read-only database whose schema is older than this hwcal reads:
    /// upgrading it needs write access.
    #[error("{path}: database schema version {found} must be upgraded to {SCHEMA_VERSION} before this hwcal reads it, and hwcal may not write the file (run one hwcal command that stores with write access)")]
    NeedsUpgrade { path: PathBuf, found: i64 },
    #[error("{path}: database schema version {found} is newer than this hwcal supports ({supported})")]
    TooNew {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
    #[error("--db: empty path")]
    EmptyPath,
    #[error("no database path: set {ENV_VAR}, XDG_DATA_HOME or HOME, or pass --db")]
    NoPath,
}

impl DbError {
    /// Whether the user can fix this by what they typed (another `--db`,
    /// another run id): exit status 2 rather than 1.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            DbError::NotOurs { .. }
                | DbError::UnsupportedScheme(..)
                | DbError::BadUrl { .. }
                | DbError::Missing { .. }
                | DbError::TooNew { .. }
                | DbError::NoPath
                | DbError::EmptyPath
                | DbError::NotFound(_)
                | DbError::NoMatch(_)
                | DbError::Ambiguous(_)
        )
    }
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
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub id: i64,
    /// When the profile was measured (the profile's own timestamp).
    pub created_unix: u64,
    /// When it was stored here (0 for rows migrated from schema 1).
    pub stored_unix: u64,
    pub origin: String,
    pub hostname: Option<String>,
    /// The machine's id (`MachineIdentity::machine_id`; none in profiles
    /// from before hwcal recorded one).
    pub machine_id: Option<String>,
    /// The core generation (`Zen 3`, `Sapphire Rapids`, `unknown`).
    pub core: Option<String>,
    /// The platform's product name (DMI), where it states one.
    pub product: Option<String>,
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

/// A row as both stores write it: the JSON, its key and the summary columns.
struct Row {
    json: String,
    /// SHA-256 of `json`, hex: the run's identity across stores.
    run_key: String,
    created_unix: i64,
    command: String,
    schema_version: i64,
    origin: String,
    c: Columns,
}

impl Row {
    fn of(p: &Profile, origin: &str) -> Result<Row, DbError> {
        let json = serde_json::to_string(p)?;
        Ok(Row {
            run_key: run_key(&json),
            json,
            created_unix: p.created_unix as i64,
            command: p.command.clone(),
            schema_version: p.schema_version.into(),
            origin: origin.to_string(),
            c: Columns::of(p),
        })
    }
}

/// The run key of a stored JSON text: its SHA-256 in hex.
pub fn run_key(json: &str) -> String {
    Sha256::digest(json.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The summary columns computed from a profile.
#[derive(Debug, Clone, Default)]
struct Columns {
    hostname: Option<String>,
    machine_id: Option<String>,
    core: Option<String>,
    product: Option<String>,
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
        let id = p.machine.as_ref().and_then(|m| m.identity.as_ref());
        Columns {
            hostname: p.machine.as_ref().map(|m| m.hostname.clone()),
            machine_id: id.map(|i| i.machine_id.clone()),
            core: id.map(|i| i.core.clone()),
            product: id.and_then(|i| i.product.clone()),
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

/// Which runs a lookup is about.
#[derive(Debug, Clone, Copy)]
enum Filter<'a> {
    All,
    Host(&'a str),
    /// Runs of this machine id.
    Machine(&'a str),
    /// Runs whose machine id starts with this (lower-case hex).
    MachinePrefix(&'a str),
}

/// What one store does; [`Db`] builds everything else on it.
trait Store: Send {
    /// For messages: the file, or the URL without its password.
    fn location(&self) -> &Path;
    fn schema_version(&self) -> Result<i64, DbError>;
    /// Insert `row` in one transaction (with `if_absent`, only if no row has
    /// its run key: then the existing id and `false`), calling
    /// `before_commit` once the row is written but not committed.
    fn insert(
        &mut self,
        row: &Row,
        if_absent: bool,
        before_commit: &mut dyn FnMut(),
    ) -> Result<(i64, bool), DbError>;
    /// Every summary (or the one with `id`), by id.
    fn summaries(&self, id: Option<i64>) -> Result<Vec<Summary>, DbError>;
    fn json(&self, id: i64) -> Result<Option<String>, DbError>;
    /// The newest id of the runs `f` selects.
    fn latest_id(&self, f: Filter<'_>) -> Result<Option<i64>, DbError>;
    /// The distinct (non-null) machine ids of the runs `f` selects.
    fn machine_ids(&self, f: Filter<'_>) -> Result<Vec<String>, DbError>;
    fn id_with_key(&self, run_key: &str) -> Result<Option<i64>, DbError>;
    /// Remove rows in one transaction: all of them, or (when one of them is
    /// not there: its id) none.
    fn delete(&mut self, ids: &[i64]) -> Result<Option<i64>, DbError>;
}

/// An open results database (an SQLite file or a PostgreSQL database).
pub struct Db(Box<dyn Store>);

impl Db {
    /// Open (creating it if needed) and migrate the database at `path` (a
    /// file, or a `postgres://` URL): [`Db::open_with`] in [`OpenMode::Create`].
    pub fn open(path: impl AsRef<Path>) -> Result<Db, DbError> {
        Db::open_with(path, OpenMode::Create)
    }

    /// Open the database at `path`: a file path, or a `postgres://` URL.
    pub fn open_with(path: impl AsRef<Path>, mode: OpenMode) -> Result<Db, DbError> {
        Db::open_location(&Location::of_path(path.as_ref())?, mode)
    }

    /// Open the database at a location. A file is opened only if it is an
    /// hwcal database (see `sqlite`); in PostgreSQL hwcal keeps to its own
    /// tables (`profiles`, `hwcal_schema`) and refuses a `profiles` table
    /// it did not create.
    pub fn open_location(loc: &Location, mode: OpenMode) -> Result<Db, DbError> {
        Ok(Db(match loc {
            Location::File(p) => Box::new(sqlite::Sqlite::open_with(p, mode)?),
            Location::Postgres(url) => Box::new(pg::Pg::open(url, mode)?),
        }))
    }

    /// Where this database lives, for messages: the file, or the URL
    /// without its password.
    pub fn path(&self) -> &Path {
        self.0.location()
    }

    /// The schema version of the open database.
    pub fn schema_version(&self) -> Result<i64, DbError> {
        self.0.schema_version()
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

    /// Store a profile unless an identical one (same run key) is stored
    /// already, in one transaction: its id, and whether it is new.
    pub fn insert_new(&mut self, p: &Profile, origin: Origin) -> Result<(i64, bool), DbError> {
        self.0.insert(&Row::of(p, origin.as_str())?, true, &mut || {})
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
        let mut hook = Some(before_commit);
        let row = Row::of(p, origin.as_str())?;
        let (id, _) = self.0.insert(&row, false, &mut || {
            if let Some(h) = hook.take() {
                h()
            }
        })?;
        Ok(id)
    }

    /// Every stored profile's summary, oldest first.
    pub fn list(&self) -> Result<Vec<Summary>, DbError> {
        self.0.summaries(None)
    }

    /// The summary of one stored profile.
    pub fn summary(&self, id: i64) -> Result<Summary, DbError> {
        self.0.summaries(Some(id))?.pop().ok_or(DbError::NotFound(id))
    }

    /// The stored profile with this id.
    pub fn get(&self, id: i64) -> Result<Profile, DbError> {
        let json = self.0.json(id)?.ok_or(DbError::NotFound(id))?;
        serde_json::from_str(&json).map_err(|e| DbError::Corrupt {
            id,
            reason: e.to_string(),
        })
    }

    /// The id of the most recently stored profile, if any.
    pub fn latest_id(&self) -> Result<Option<i64>, DbError> {
        self.0.latest_id(Filter::All)
    }

    /// The id of the most recently stored profile of a host, if any.
    pub fn latest_id_of_host(&self, hostname: &str) -> Result<Option<i64>, DbError> {
        self.0.latest_id(Filter::Host(hostname))
    }

    /// The id of a stored profile identical to `p` (same JSON, so the same
    /// run key), if any; so importing the same file twice is recognised.
    pub fn find_identical(&self, p: &Profile) -> Result<Option<i64>, DbError> {
        self.0.id_with_key(&run_key(&serde_json::to_string(p)?))
    }

    /// Remove a stored profile. [`DbError::NotFound`] if there is none.
    pub fn delete(&mut self, id: i64) -> Result<(), DbError> {
        self.delete_all(&[id])
    }

    /// Remove stored profiles, all or none (one transaction): if one of
    /// them is not there, [`DbError::NotFound`] and nothing is removed.
    pub fn delete_all(&mut self, ids: &[i64]) -> Result<(), DbError> {
        let mut ids = ids.to_vec();
        ids.sort_unstable();
        ids.dedup();
        match self.0.delete(&ids)? {
            None => Ok(()),
            Some(id) => Err(DbError::NotFound(id)),
        }
    }

    /// The run a selector names (its existence is checked for `latest`,
    /// `host:` and `machine:`; a plain id is checked when it is read).
    /// `host:NAME` is refused when runs of that host come from more than one
    /// machine (look-alike guests are all called `vm`).
    pub fn resolve(&self, sel: &Selector) -> Result<i64, DbError> {
        let loc = self.path().display();
        let short = |ids: &[String]| {
            ids.iter()
                .map(|m| short_id(m).to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match sel {
            Selector::Id(id) => Ok(*id),
            Selector::Latest => self.latest_id()?.ok_or_else(|| {
                DbError::NoMatch(format!(
                    "the database {loc} holds no run yet (`hwcal run` stores one)"
                ))
            }),
            Selector::Host(h) => {
                let machines = self.0.machine_ids(Filter::Host(h))?;
                if machines.len() > 1 {
                    return Err(DbError::Ambiguous(format!(
                        "host:{h} is ambiguous: its runs come from {} machines ({}); \
                         name one with machine:ID-PREFIX (see `hwcal db list`)",
                        machines.len(),
                        short(&machines)
                    )));
                }
                self.0.latest_id(Filter::Host(h))?.ok_or_else(|| {
                    DbError::NoMatch(format!("no run of host '{h}' in {loc} (see `hwcal db list`)"))
                })
            }
            Selector::Machine(prefix) => {
                let machines = self.0.machine_ids(Filter::MachinePrefix(prefix))?;
                match machines.as_slice() {
                    [] => Err(DbError::NoMatch(format!(
                        "no run of machine '{prefix}' in {loc} (see `hwcal db list`)"
                    ))),
                    [m] => self
                        .0
                        .latest_id(Filter::Machine(m))?
                        .ok_or_else(|| DbError::NoMatch(format!("no run of machine '{m}'"))),
                    _ => Err(DbError::Ambiguous(format!(
                        "machine:{prefix} matches {} machines ({}); give more digits",
                        machines.len(),
                        short(&machines)
                    ))),
                }
            }
        }
    }

    /// Copy every run of this database that `to` does not hold yet (same
    /// run key) into `to`, oldest first, each in its own transaction: a
    /// push stopped at any moment leaves `to` with whole runs only, and a
    /// second push copies the rest. This database is only read.
    pub fn push_to(&self, to: &mut Db) -> Result<PushReport, DbError> {
        self.push_with_hook(to, &mut |_| {})
    }

    /// [`Db::push_to`], calling `before_commit(local id)` inside each
    /// target transaction. For crash tests only.
    #[doc(hidden)]
    pub fn push_with_hook(
        &self,
        to: &mut Db,
        before_commit: &mut dyn FnMut(i64),
    ) -> Result<PushReport, DbError> {
        let mut report = PushReport::default();
        for s in self.list()? {
            let p = match self.get(s.id) {
                Ok(p) => p,
                Err(DbError::Corrupt { reason, .. }) => {
                    report.unreadable.push((s.id, reason));
                    continue;
                }
                Err(e) => return Err(e),
            };
            let row = Row::of(&p, &s.origin)?;
            let (id, new) = to.0.insert(&row, true, &mut || before_commit(s.id))?;
            match new {
                true => report.copied.push((s.id, id)),
                false => report.present.push((s.id, id)),
            }
        }
        Ok(report)
    }
}

/// `hwcal db push`: copy the runs of the database at `from` (which must
/// exist; it is only read) to the one at `to` (created if needed).
pub fn push(from: &Location, to: &Location) -> Result<PushReport, DbError> {
    if from == to {
        return Err(DbError::NoMatch(format!(
            "--to {}: is the database being pushed (--db); name another",
            to.display()
        )));
    }
    let src = Db::open_location(from, OpenMode::Read)?;
    src.push_to(&mut Db::open_location(to, OpenMode::Create)?)
}

impl std::fmt::Display for PushReport {
    /// `3 copied, 2 already there` (`, 1 unreadable` where some were).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} copied, {} already there",
            self.copied.len(),
            self.present.len()
        )?;
        match self.unreadable.len() {
            0 => Ok(()),
            n => write!(f, ", {n} unreadable (not pushed)"),
        }
    }
}

/// What [`Db::push_to`] did: (local id, target id) pairs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PushReport {
    /// Runs copied now.
    pub copied: Vec<(i64, i64)>,
    /// Runs the target already held.
    pub present: Vec<(i64, i64)>,
    /// Local runs whose JSON does not parse (left where they are).
    pub unreadable: Vec<(i64, String)>,
}

/// The first 12 hex digits of a machine id: how lists show it (enough to
/// tell a fleet's machines apart; `machine:PREFIX` takes any prefix).
pub fn short_id(machine_id: &str) -> &str {
    machine_id.get(..12).unwrap_or(machine_id)
}

/// A run as typed on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    /// A run id.
    Id(i64),
    /// The most recently stored run.
    Latest,
    /// The latest run of a host name (refused when ambiguous).
    Host(String),
    /// The latest run of the machine whose id starts with these hex digits.
    Machine(String),
}

impl std::str::FromStr for Selector {
    /// A usage message.
    type Err = String;
    fn from_str(s: &str) -> Result<Selector, String> {
        if let Some(h) = s.strip_prefix("host:") {
            return Ok(Selector::Host(h.to_string()));
        }
        if let Some(m) = s.strip_prefix("machine:") {
            // A machine id is a SHA-256 (64 hex digits); a longer prefix
            // matches nothing and would only make the pattern expensive.
            if m.is_empty() || m.len() > 64 || !m.chars().all(|c| c.is_ascii_hexdigit()) {
                return Err(format!(
                    "'{s}': a machine id prefix is 1 to 64 hex digits (see the machine column of `hwcal db list`)"
                ));
            }
            return Ok(Selector::Machine(m.to_ascii_lowercase()));
        }
        if s == "latest" {
            return Ok(Selector::Latest);
        }
        match s.parse::<i64>() {
            Ok(id) if id > 0 => Ok(Selector::Id(id)),
            _ => Err(format!(
                "'{s}' is not a run id (a positive number, `latest`, `host:NAME` or \
                 `machine:ID-PREFIX`; see `hwcal db list`)"
            )),
        }
    }
}

/// Runs of one machine, as `hwcal db list` groups them.
#[derive(Debug, Clone, PartialEq)]
pub struct MachineGroup<'a> {
    /// `None`: runs without a machine id (profiles of older hwcal).
    pub machine_id: Option<&'a str>,
    /// Oldest first.
    pub runs: Vec<&'a Summary>,
}

impl MachineGroup<'_> {
    /// `machine 5a17e7c00000: Sapphire Rapids, QEMU Standard PC (...), 3 runs`.
    pub fn title(&self) -> String {
        let n = self.runs.len();
        let runs = format!("{n} run{}", if n == 1 { "" } else { "s" });
        let Some(id) = self.machine_id else {
            return format!("no machine id (profiles of an older hwcal): {runs}");
        };
        let last = self.runs.last();
        let mut parts: Vec<&str> = Vec::new();
        parts.extend(last.and_then(|r| r.core.as_deref()));
        parts.extend(last.and_then(|r| r.product.as_deref()));
        parts.push(&runs);
        format!("machine {}: {}", short_id(id), parts.join(", "))
    }
}

/// Group runs by machine: machines in the order of their first run, runs
/// oldest first; runs without a machine id last.
pub fn by_machine(rows: &[Summary]) -> Vec<MachineGroup<'_>> {
    let mut groups: Vec<MachineGroup<'_>> = Vec::new();
    for r in rows {
        let key = r.machine_id.as_deref();
        match groups.iter_mut().find(|g| g.machine_id == key) {
            Some(g) => g.runs.push(r),
            None => groups.push(MachineGroup {
                machine_id: key,
                runs: vec![r],
            }),
        }
    }
    groups.sort_by_key(|g| g.machine_id.is_none());
    groups
}

#[cfg(test)]
mod tests;
