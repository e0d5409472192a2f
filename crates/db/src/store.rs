//! What every backend (SQLite, PostgreSQL) implements and shares: the
//! [`Store`] trait, how a database is opened, a stored run's summary row and
//! the columns indexed from a profile, the run key that makes an import
//! idempotent, and the schema version.

use crate::error::DbError;
use hwcal_model::Profile;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::path::Path;

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
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
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
pub(crate) struct Row {
    pub(crate) json: String,
    /// SHA-256 of `json`, hex: the run's identity across stores.
    pub(crate) run_key: String,
    pub(crate) created_unix: i64,
    pub(crate) command: String,
    pub(crate) schema_version: i64,
    pub(crate) origin: String,
    pub(crate) c: Columns,
}

impl Row {
    pub(crate) fn of(p: &Profile, origin: &str) -> Result<Row, DbError> {
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
pub(crate) struct Columns {
    pub(crate) hostname: Option<String>,
    pub(crate) machine_id: Option<String>,
    pub(crate) core: Option<String>,
    pub(crate) product: Option<String>,
    pub(crate) cpu_model: Option<String>,
    pub(crate) core_mhz: Option<f64>,
    pub(crate) l1_latency_ns: Option<f64>,
    pub(crate) memory_latency_ns: Option<f64>,
    pub(crate) read_bytes_per_sec: Option<f64>,
    pub(crate) ctx_us: Option<f64>,
    pub(crate) sections: String,
}

impl Columns {
    pub(crate) fn of(p: &Profile) -> Columns {
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
pub(crate) enum Filter<'a> {
    All,
    Host(&'a str),
    /// Runs of this machine id.
    Machine(&'a str),
    /// Runs whose machine id starts with this (lower-case hex).
    MachinePrefix(&'a str),
}

/// What one store does; [`Db`] builds everything else on it.
pub(crate) trait Store: Send {
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
