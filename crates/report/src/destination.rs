//! Output destinations, checked before anything is measured (a long run
//! must not end in a failed write): a file's directory exists and takes a
//! new file, the file is not a directory, a plot directory can be created, a gnuplot prefix
//! cannot end a quoted string in the scripts it is written into, and no
//! two outputs go to the same place. Errors are the user's to fix: each is
//! the message of a usage error.

use std::path::{Path, PathBuf};

/// A file output given with `flag` (`--json`, `--html`): not empty, its
/// directory exists and takes a new file, not a directory (`-` is stdout).
pub fn check_file(flag: &str, d: &str) -> Result<(), String> {
    if d.is_empty() {
        return Err(format!("{flag}: empty path (give a file name, or - for stdout)"));
    }
    if d == "-" {
        return Ok(());
    }
    let p = Path::new(d);
    let dir = p.parent().filter(|q| !q.as_os_str().is_empty());
    if let Some(dir) = dir {
        if !dir.is_dir() {
            return Err(format!("{flag} {d}: directory {} does not exist", dir.display()));
        }
    }
    if p.is_dir() {
        return Err(format!("{flag} {d}: is a directory"));
    }
    // A device or a FIFO (`/dev/null`, a pipe a script reads) is written in
    // place, not renamed over: its directory need not take files.
    if std::fs::metadata(p).is_ok_and(|m| !m.is_file()) {
        return Ok(());
    }
    takes_files(dir.unwrap_or(Path::new("."))).map_err(|e| {
        format!(
            "{flag} {d}: cannot write in {}: {e}",
            dir.unwrap_or(Path::new(".")).display()
        )
    })
}

/// Whether `dir` takes a new file: one is created there (never over an
/// existing one) and removed. Permissions alone do not say it (root
/// ignores them; a read-only mount, `/proc`, a full quota refuse anyway),
/// and the outputs are written beside themselves and renamed into place,
/// so the directory, not the file, is what must be writable.
fn takes_files(dir: &Path) -> std::io::Result<()> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |t| t.subsec_nanos());
    let probe = dir.join(format!(".hwcal-write-check-{}-{stamp}", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)?;
    // The probe is ours (created new above): removing it loses nothing.
    let _ = std::fs::remove_file(&probe);
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
    let parent = dir.parent().filter(|d| !d.as_os_str().is_empty());
    if !dir.exists() {
        if let Some(parent) = parent {
            if !parent.is_dir() {
                return Err(format!(
                    "{flag} {}: directory {} does not exist",
                    dir.display(),
                    parent.display()
                ));
            }
        }
    }
    // The files go into `dir`, or `dir` is made in its parent.
    let host = if dir.exists() {
        dir
    } else {
        parent.unwrap_or(Path::new("."))
    };
    takes_files(host).map_err(|e| {
        format!(
            "{flag} {}: cannot write in {}: {e}",
            dir.display(),
            host.display()
        )
    })
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
    let dir = p.parent().filter(|d| !d.as_os_str().is_empty());
    if let Some(dir) = dir {
        if !dir.is_dir() {
            return Err(format!(
                "{flag} {prefix}: directory {} does not exist",
                dir.display()
            ));
        }
    }
    let dir = dir.unwrap_or(Path::new("."));
    takes_files(dir).map_err(|e| format!("{flag} {prefix}: cannot write in {}: {e}", dir.display()))
}
/// The files `validate cache --keep DIR` writes, `DIR/run-NN.json` for
/// each run: DIR is created if missing, and one that already holds run
/// files is refused before anything is measured (nothing is overwritten,
/// and no earlier runs mix into `validate profiles DIR/run-*.json`).
pub fn keep_paths(dir: &Path, runs: u32) -> Result<Vec<PathBuf>, String> {
    let at = |e: std::io::Error| format!("--keep {}: {e}", dir.display());
    if dir.exists() && !dir.is_dir() {
        return Err(format!("--keep {}: not a directory", dir.display()));
    }
    std::fs::create_dir_all(dir).map_err(at)?;
    let earlier = std::fs::read_dir(dir)
        .map_err(at)?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with("run-") && n.ends_with(".json"));
    if let Some(n) = earlier {
        return Err(format!(
            "--keep {}: it holds runs already ({n}); choose another directory (runs are never overwritten)",
            dir.display()
        ));
    }
    let width = runs.to_string().len().max(2);
    Ok((1..=runs)
        .map(|i| dir.join(format!("run-{i:0width$}.json")))
        .collect())
}

/// The default file name of `hwcal report`'s HTML for its run arguments:
/// `hwcal-report-latest.html` for none, `hwcal-report-ID.html` for a stored
/// run, `NAME.html` for a profile file `NAME.json` (in the current
/// directory), `A-vs-B.html` for two.
pub fn report_name(ids: &[String]) -> String {
    let stem = |s: &str| -> String {
        let p = Path::new(s);
        let name = if p.is_file() {
            p.file_stem()
                .map_or(s.to_string(), |f| f.to_string_lossy().into_owned())
        } else {
            format!("hwcal-report-{s}")
        };
        // Only what any file system takes: `host:vm` becomes `host-vm`.
        name.chars()
            .map(|c| {
                if c.is_alphanumeric() || "-_.".contains(c) {
                    c
                } else {
                    '-'
                }
            })
            .collect()
    };
    match ids {
        [] => "hwcal-report-latest.html".into(),
        [a] => format!("{}.html", stem(a)),
        [a, b, ..] => format!(
            "{}-vs-{}.html",
            stem(a),
            stem(b).trim_start_matches("hwcal-report-")
        ),
    }
}

/// `name` where no file is, else `name` with -2, -3, … before its
/// extension: a default name never replaces a file.
pub fn free_name(name: &str) -> String {
    let (stem, ext) = name.rsplit_once('.').unwrap_or((name, ""));
    let dot = if ext.is_empty() { "" } else { "." };
    std::iter::once(name.to_string())
        .chain((2..).map(|k| format!("{stem}-{k}{dot}{ext}")))
        .find(|n| !Path::new(n).exists())
        .unwrap_or_else(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::check_file;

    /// A directory that exists but takes no file (`/proc` refuses new
    /// files even to root) is refused before anything is measured; a
    /// writable one is accepted and left as it was.
    #[test]
    fn a_directory_that_takes_no_file_is_refused_up_front() {
        if cfg!(target_os = "linux") {
            let e = check_file("--html", "/proc/hwcal-report.html").unwrap_err();
            assert!(e.contains("cannot write in /proc"), "{e}");
        }
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("r.json");
        check_file("--json", out.to_str().unwrap()).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        // A device is written in place, whatever its directory takes.
        check_file("--json", "/dev/null").unwrap();
        if cfg!(target_os = "linux") {
            let e = super::check_prefix("--gnuplot", "/proc/hwcal").unwrap_err();
            assert!(e.contains("cannot write in /proc"), "{e}");
            let e = super::check_dir("--plot", std::path::Path::new("/proc/hwcal-plots")).unwrap_err();
            assert!(e.contains("cannot write in /proc"), "{e}");
        }
        super::check_prefix("--gnuplot", dir.path().join("m").to_str().unwrap()).unwrap();
        super::check_dir("--plot", &dir.path().join("plots")).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
