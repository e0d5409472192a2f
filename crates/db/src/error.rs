//! The store's one error type: what went wrong opening, reading or writing
//! a results database, and whether it is the user's to fix (exit 2).

use crate::defaults::{ENV_VAR, SCHEMA_VERSION};
use std::path::PathBuf;

/// Errors from the database.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// An SQLite failure, shown once (no repeated codes): the error's own
    /// text is not chained as a source, so `{:#}` does not print it twice.
    #[error("{path}: {}", message(err))]
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
    /// A kept profile (see `spool`) that could not be written.
    #[error("{path}: cannot write it: {err}")]
    Unwritable { path: PathBuf, err: std::io::Error },
    /// Neither XDG_STATE_HOME nor HOME says where kept profiles go.
    #[error("no place to keep the profile: set XDG_STATE_HOME or HOME")]
    NoSpool,
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
    /// A push that an error stopped part of the way: how far it got (every
    /// run it copied is whole in the target; pushing again copies the rest).
    #[error(
        "{cause} (the push stopped after copying {copied} of {total} runs, {present} found there already; \
         push again to copy the rest)"
    )]
    PushStopped {
        copied: usize,
        present: usize,
        total: usize,
        cause: Box<DbError>,
    },
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

/// The first line of a message, at most 200 characters: SQLite quotes
/// whole statements in some errors (a `CREATE TABLE` over a dozen lines),
/// and an error is one line.
pub(crate) fn first_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or("").trim();
    match line.char_indices().nth(200) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_string(),
    }
}

/// The text of an SQLite error without the code SQLite repeats, on one line.
pub(crate) fn message(e: &rusqlite::Error) -> String {
    first_line(&message_full(e))
}

pub(crate) fn message_full(e: &rusqlite::Error) -> String {
    match e {
        // "disk I/O error" and "database or disk is full" say what, not why.
        rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::DiskFull => {
            "the disk is full (nothing was stored)".to_string()
        }
        rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::SystemIoFailure => {
            "disk I/O error (a full or failing disk?)".to_string()
        }
        rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::ReadOnly => {
            "the database may not be written (a read-only file or file system)".to_string()
        }
        rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::DatabaseCorrupt => {
            "the database file is damaged (SQLite reports it malformed)".to_string()
        }
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
