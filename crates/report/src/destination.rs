//! Output destinations, checked before anything is measured (a long run
//! must not end in a failed write): a file's directory exists and the file
//! is not a directory, a plot directory can be created, a gnuplot prefix
//! cannot end a quoted string in the scripts it is written into, and no
//! two outputs go to the same place. Errors are the user's to fix: each is
//! the message of a usage error.

use std::path::{Path, PathBuf};

/// A file output given with `flag` (`--json`, `--html`): not empty, its
/// directory exists, not a directory (`-` is stdout).
pub fn check_file(flag: &str, d: &str) -> Result<(), String> {
    if d.is_empty() {
        return Err(format!("{flag}: empty path (give a file name, or - for stdout)"));
    }
    if d == "-" {
        return Ok(());
    }
    let p = Path::new(d);
    if let Some(dir) = p.parent().filter(|q| !q.as_os_str().is_empty()) {
        if !dir.is_dir() {
            return Err(format!("{flag} {d}: directory {} does not exist", dir.display()));
        }
    }
    if p.is_dir() {
        return Err(format!("{flag} {d}: is a directory"));
    }
    Ok(())
}

/// Where an output goes, for comparing two outputs: `-` for stdout, else
/// the path with its directory resolved (so `a.json` and `./a.json` match).
pub fn place(d: &str) -> PathBuf {
    if d == "-" {
        return PathBuf::from("-");
    }
    let p = Path::new(d);
    if let Ok(c) = std::fs::canonicalize(p) {
        return c;
    }
    let dir = p
        .parent()
        .filter(|q| !q.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    match (std::fs::canonicalize(dir), p.file_name()) {
        (Ok(c), Some(n)) => c.join(n),
        _ => p.to_path_buf(),
    }
}

/// No two of the given `(flag, destination)` outputs go to the same place
/// (stdout twice would interleave them, one file twice would keep only the
/// last).
pub fn check_distinct(given: &[(&str, &str)]) -> Result<(), String> {
    for (i, (fa, da)) in given.iter().enumerate() {
        for (fb, db) in &given[i + 1..] {
            if place(da) == place(db) {
                if *da == "-" {
                    return Err(format!(
                        "{fa} - and {fb} -: both to stdout; send one of them to a file"
                    ));
                }
                return Err(format!(
                    "{fa} {da} and {fb} {db}: the same file; give each output its own"
                ));
            }
        }
    }
    Ok(())
}

/// `--plot DIR`: not empty, not a file, and (like every other output) its
/// parent directory exists; only DIR itself is created.
pub fn check_dir(flag: &str, dir: &Path) -> Result<(), String> {
    if dir.as_os_str().is_empty() {
        return Err(format!("{flag}: empty path (give a directory)"));
    }
    if dir.exists() && !dir.is_dir() {
        return Err(format!("{flag} {}: not a directory", dir.display()));
    }
    if !dir.exists() {
        if let Some(parent) = dir.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !parent.is_dir() {
                return Err(format!(
                    "{flag} {}: directory {} does not exist",
                    dir.display(),
                    parent.display()
                ));
            }
        }
    }
    Ok(())
}

/// A file prefix such as `out/mymachine`: not empty, not a directory
/// name, in a directory that exists, and nothing that could end a quoted
/// string or a line in the `.gp` scripts it is written into.
pub fn check_prefix(flag: &str, prefix: &str) -> Result<(), String> {
    if prefix.is_empty() || prefix.ends_with('/') {
        return Err(format!(
            "{flag} {prefix:?}: expected a file prefix such as out/mymachine"
        ));
    }
    if let Err(e) = crate::sanitize::check_script_path(prefix) {
        return Err(format!("{flag} {}: {e}", crate::sanitize::inert_line(prefix)));
    }
    let p = Path::new(prefix);
    if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.is_dir() {
            return Err(format!(
                "{flag} {prefix}: directory {} does not exist",
                dir.display()
            ));
        }
    }
    Ok(())
}
