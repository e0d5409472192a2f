//! Profiles the database refused, kept until it takes them.
//!
//! A measurement is never lost to a failed store (a lock held too long, a
//! full disk, a server restarting, a role that may not insert): the run
//! keeps its profile here, in a file of its own, and the next run stores
//! it ([`store_kept`]), as `hwcal db import FILE` would.

use crate::error::DbError;
use std::path::PathBuf;

/// Where kept profiles go: `$XDG_STATE_HOME/hwcal/unsaved`, else
/// `~/.local/state/hwcal/unsaved` (state, not data: they are waiting, not
/// results).
pub fn dir() -> Result<PathBuf, DbError> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    let home = var("HOME").filter(|h| h.is_absolute());
    match (var("XDG_STATE_HOME").filter(|d| d.is_absolute()), home) {
        (Some(d), _) => Ok(d.join("hwcal/unsaved")),
        (None, Some(h)) => Ok(h.join(".local/state/hwcal/unsaved")),
        (None, None) => Err(DbError::NoSpool),
    }
}

/// Keep `p` in a new file under [`dir`] (never one that exists: nothing
/// overwritten); returns its path.
pub fn keep(p: &hwcal_model::Profile) -> Result<PathBuf, DbError> {
    use std::io::Write as _;
    let dir = dir()?;
    std::fs::create_dir_all(&dir).map_err(|err| DbError::CreateDir {
        path: dir.clone(),
        err,
    })?;
    let bytes = serde_json::to_vec_pretty(p)?;
    let mut last = None;
    for k in 0..100 {
        let f = dir.join(format!("run-{}-{}-{k}.json", p.created_unix, std::process::id()));
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&f) {
            Ok(mut out) => {
                return out
                    .write_all(&bytes)
                    .map(|()| f.clone())
                    .map_err(|err| DbError::Unwritable { path: f, err });
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some((f, e)),
            Err(err) => return Err(DbError::Unwritable { path: f, err }),
        }
    }
    let (path, err) = last.unwrap_or_else(|| (dir, std::io::ErrorKind::AlreadyExists.into()));
    Err(DbError::Unwritable { path, err })
}

/// [`keep`], said: where the profile is kept, or why it could not be.
pub fn keep_said(p: &hwcal_model::Profile) -> String {
    match keep(p) {
        Ok(f) => format!(
            "run not stored; its profile is kept in {} (the next command that stores a run stores it too, or \
             `hwcal db import FILE`)",
            f.display()
        ),
        Err(e) => format!("run not stored, and its profile could not be kept in a file either: {e}"),
    }
}

/// Store every profile kept under [`dir`] with `insert`, removing each file
/// once its run is in; one that still fails stays for the next time. Only
/// regular `.json` files are read. Returns a line for each, to show.
pub fn store_kept(mut insert: impl FnMut(&hwcal_model::Profile) -> Result<i64, DbError>) -> Vec<String> {
    let Ok(dir) = dir() else { return Vec::new() };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for f in entries.flatten().map(|e| e.path()) {
        let regular = std::fs::symlink_metadata(&f).is_ok_and(|m| m.file_type().is_file());
        if !regular || f.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let stored = std::fs::read(&f)
            .map_err(|err| DbError::Unreadable { path: f.clone(), err })
            .and_then(|b| Ok(serde_json::from_slice::<hwcal_model::Profile>(&b)?))
            .and_then(|p| insert(&p));
        out.push(match stored {
            Ok(id) => {
                let _ = std::fs::remove_file(&f);
                format!(
                    "stored run {id}, kept in {} when the database refused it",
                    f.display()
                )
            }
            Err(e) => format!("{}: still not stored ({e}); kept for the next run", f.display()),
        });
    }
    out
}
