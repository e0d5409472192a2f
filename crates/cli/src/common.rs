//! Shared plumbing for commands: usage errors, pinning, progress, output.

use crate::cli::CommonArgs;
use anyhow::{Context, Result};
use hwcal_db::Db;
use hwcal_model::Profile;
use std::io::IsTerminal;
use std::path::PathBuf;

/// An error in what the user asked for: exit status 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// A line on stderr, `hwcal: ` first, with control characters shown
/// escaped (a path or host name may hold any byte). Never panics: a closed
/// or full stderr (`2>/dev/full`) loses the message, not the work done.
#[macro_export]
macro_rules! say {
    ($($t:tt)*) => {
        $crate::common::say_line(&format!($($t)*))
    };
}

/// See [`say!`].
pub fn say_line(msg: &str) {
    use std::io::Write;
    let line = format!("hwcal: {}\n", hwcal_report::sanitize::inert_line(msg));
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// Bail out with a usage error (exit 2).
#[macro_export]
macro_rules! usage {
    ($($t:tt)*) => {
        return Err(anyhow::Error::new($crate::common::UsageError(format!($($t)*))))
    };
}

/// Set by `-q` (through [`Progress::new`]): no "wrote …" lines either.
pub static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Progress messages on stderr, only when stderr is a terminal.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    enabled: bool,
}

impl Progress {
    pub fn new(quiet: bool) -> Self {
        QUIET.store(quiet, std::sync::atomic::Ordering::Relaxed);
        Progress {
            enabled: !quiet && std::io::stderr().is_terminal(),
        }
    }
    /// Whether messages are shown (stderr is a terminal and not --quiet).
    pub fn enabled(&self) -> bool {
        self.enabled
    }
    pub fn say(&self, msg: &str) {
        if self.enabled {
            say_line(msg);
        }
    }
}

impl hwcal_runner::Progress for Progress {
    fn say(&self, msg: &str) {
        Progress::say(self, msg);
    }
}

/// Plain lines: the phases of a single-probe command are its probe's lines.
impl hwcal_runner::Observer for Progress {}

/// The calibration's header for this command: its masked command line,
/// now, and the CPU the measuring thread is pinned to.
pub fn header(pinned_cpu: Option<usize>) -> hwcal_runner::Header {
    hwcal_runner::Header::now(command_line(), pinned_cpu)
}

/// Apply the pinning the user asked for; returns the CPU pinned to.
pub fn pin(common: &CommonArgs) -> Result<Option<usize>> {
    Ok(hwcal_runner::machine::pin(common.cpu, common.no_pin)?)
}

pub use hwcal_runner::now_unix;

/// The command line as typed, for the profile, every secret masked.
pub fn command_line() -> String {
    command_line_of(std::env::args_os().skip(1))
}
pub use hwcal_db::{command_line_of, redact_profile};

/// `--db PATH` as given on the command line (set once by `cmd::dispatch`).
static DB_OVERRIDE: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();

pub fn set_db_override(path: Option<PathBuf>) {
    let _ = DB_OVERRIDE.set(path);
}

/// The results database as given: `--db`, else `$HWCAL_DB`, else the XDG
/// data directory (see `hwcal_db::default_path`): a file or a URL.
pub fn db_path() -> Result<PathBuf> {
    match DB_OVERRIDE.get() {
        Some(Some(p)) => Ok(p.clone()),
        _ => Ok(hwcal_db::default_path()?),
    }
}

/// The results database's location (an empty path or a URL of a scheme
/// hwcal does not support is a usage error: `DbError::is_usage`, exit 2).
pub fn db_location() -> Result<hwcal_db::Location> {
    Ok(hwcal_db::Location::of_path(&db_path()?)?)
}

/// Open (creating if needed) the results database: commands that store.
pub fn open_db() -> Result<Db> {
    Ok(Db::open_location(&db_location()?, hwcal_db::OpenMode::Create)?)
}

/// Open the results database only if it exists (creating nothing):
/// commands that change stored runs. A missing database is a usage error.
pub fn open_db_existing() -> Result<Db> {
    Ok(Db::open_location(&db_location()?, hwcal_db::OpenMode::Existing)?)
}

/// Open the results database to read (creating nothing; a file hwcal may
/// not write is opened read-only). A missing database is a usage error.
pub fn open_db_read() -> Result<Db> {
    Ok(Db::open_location(&db_location()?, hwcal_db::OpenMode::Read)?)
}

/// [`open_db_read`], with a missing database as `None` where none was
/// named: the default location before the first run. A `--db` the user
/// typed that names nothing is an error (a mistyped path must not read as
/// an empty database).
pub fn open_db_if_exists() -> Result<Option<Db>> {
    match Db::open_location(&db_location()?, hwcal_db::OpenMode::Read) {
        Ok(db) => Ok(Some(db)),
        Err(hwcal_db::DbError::Missing { path }) if matches!(DB_OVERRIDE.get(), Some(Some(_))) => {
            crate::usage!(
                "--db {}: no database there (check the path; `hwcal run` or `hwcal db import` creates one)",
                path.display()
            )
        }
        Err(hwcal_db::DbError::Missing { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Check before measuring that the database a command will save to opens
/// (so a bad `--db` fails at once, not after the measurement).
pub fn check_db(save: bool) -> Result<()> {
    if save {
        open_db()?;
    }
    Ok(())
}

/// [`store`] in the results database when `save` is set. The profile is a calibration's (machine
/// described, implausible figures left out): storing measures nothing.
pub fn save_if_requested(profile: &Profile, save: bool) -> Result<Option<i64>> {
    if !save {
        return Ok(None);
    }
    store(&mut open_db()?, profile).map(Some)
}

/// Store the profile in `db` (one it refuses is kept: `hwcal_db::spool`),
/// and then those kept before; prints the new run id on stderr.
pub fn store(db: &mut Db, profile: &Profile) -> Result<i64> {
    let id = db
        .insert(profile)
        .with_context(|| hwcal_db::spool::keep_said(profile))?;
    crate::say!("stored as run {id} in {}", db.path().display());
    let kept = hwcal_db::spool::store_kept(|p| Ok(db.insert_new(p, hwcal_db::Origin::Run)?.0));
    kept.iter().for_each(|line| crate::say!("{line}"));
    Ok(id)
}
