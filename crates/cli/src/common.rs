//! Shared plumbing for commands: usage errors, pinning, progress, output.

use crate::cli::CommonArgs;
use anyhow::{Context, Result};
use hwcal_db::Db;
use hwcal_model::Profile;
use hwcal_report::{Exporter, JsonExporter, TextExporter};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

/// An error in what the user asked for: exit status 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Bail out with a usage error (exit 2).
#[macro_export]
macro_rules! usage {
    ($($t:tt)*) => {
        return Err(anyhow::Error::new($crate::common::UsageError(format!($($t)*))))
    };
}

/// `println!` that returns an error instead of panicking when stdout is
/// closed (`hwcal db list | head`): the error goes up to `main`, which
/// treats a broken pipe as a normal end.
#[macro_export]
macro_rules! outln {
    ($($t:tt)*) => {
        $crate::common::write_text(format!("{}\n", format_args!($($t)*)).as_bytes())?
    };
}

/// `print!` counterpart of [`outln!`].
#[macro_export]
macro_rules! out {
    ($($t:tt)*) => {
        $crate::common::write_text(format!($($t)*).as_bytes())?
    };
}

/// Progress messages on stderr, only when stderr is a terminal.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    enabled: bool,
}

impl Progress {
    pub fn new(quiet: bool) -> Self {
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
            eprintln!("hwcal: {msg}");
        }
    }
}

/// Apply the pinning the user asked for; returns the CPU pinned to.
pub fn pin(common: &CommonArgs) -> Result<Option<usize>> {
    if common.no_pin {
        return Ok(None);
    }
    let allowed = hwcal_harness::pin::allowed_cpus();
    let cpu = match common.cpu {
        Some(c) => {
            if !allowed.contains(&c) {
                usage!("--cpu {c}: no such CPU or not allowed (allowed: {allowed:?})");
            }
            c
        }
        None => match hwcal_harness::pin::default_cpu() {
            Some(c) => c,
            None => return Ok(None),
        },
    };
    hwcal_harness::pin::pin_to(cpu).with_context(|| format!("pinning to CPU {cpu}"))?;
    Ok(Some(cpu))
}

pub fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The command line as typed, for the profile.
pub fn command_line() -> String {
    let args: Vec<String> = std::env::args().collect();
    let mut v = vec!["hwcal".to_string()];
    v.extend(args.into_iter().skip(1));
    v.join(" ")
}

/// Write bytes to a file, or stdout for "-". Refuses nothing; the caller
/// asked for this path explicitly.
pub fn write_output(dest: &str, bytes: &[u8]) -> Result<()> {
    if dest == "-" {
        let mut out = std::io::stdout().lock();
        out.write_all(bytes).context("writing to stdout")?;
        out.flush().ok();
        return Ok(());
    }
    std::fs::write(dest, bytes).with_context(|| format!("writing {dest}"))
}

/// The profile as hwcal writes and stores it: every figure that fails the
/// plausibility check `analyze` and `import` apply is left out with a note
/// (`hwcal_model::plausible::scrub`), so hwcal never writes what it would
/// itself refuse to read.
pub fn checked(profile: &Profile) -> std::borrow::Cow<'_, Profile> {
    if hwcal_model::plausible::implausible(profile).is_empty() {
        return std::borrow::Cow::Borrowed(profile);
    }
    let mut p = profile.clone();
    hwcal_model::plausible::scrub(&mut p);
    std::borrow::Cow::Owned(p)
}

/// Text for the terminal on stdout, with every control character other
/// than newline and tab shown escaped (`\x1b`), never obeyed: what hwcal
/// prints may come from a profile or database anyone can write.
pub fn write_text(bytes: &[u8]) -> Result<()> {
    write_output("-", &hwcal_report::sanitize::inert_bytes(bytes))
}

/// Print the summary (unless JSON goes to stdout) and write the JSON.
pub fn emit(profile: &Profile, json: Option<&str>) -> Result<()> {
    let profile = &*checked(profile);
    if json != Some("-") {
        let text = TextExporter.export(&hwcal_report::sanitize::inert_profile(profile))?;
        write_text(&text)?;
    }
    if let Some(dest) = json {
        let bytes = JsonExporter.export(profile)?;
        write_output(dest, &bytes)?;
    }
    Ok(())
}

/// Check early that a JSON destination is writable, so a long run does not
/// end in a failed write.
pub fn check_dest(json: Option<&str>) -> Result<()> {
    check_out("--json", json)
}

/// Check early that an output file given with `flag` (`--json`, `--html`)
/// can be created: its directory exists and it is not a directory.
pub fn check_out(flag: &str, dest: Option<&str>) -> Result<()> {
    if let Some(d) = dest {
        if d.is_empty() {
            usage!("{flag}: empty path (give a file name, or - for stdout)");
        }
        if d != "-" {
            let p = std::path::Path::new(d);
            let parent = p.parent().filter(|q| !q.as_os_str().is_empty());
            if let Some(dir) = parent {
                if !dir.is_dir() {
                    usage!("{flag} {d}: directory {} does not exist", dir.display());
                }
            }
            if p.is_dir() {
                usage!("{flag} {d}: is a directory");
            }
            // Never write an output over the results database.
            if let Ok(db) = db_path() {
                if out_key(d) == out_key(&db.to_string_lossy()) {
                    usage!("{flag} {d}: is the results database; choose another file");
                }
            }
        }
    }
    Ok(())
}

/// Where an output goes, for comparing two outputs: `-` for stdout, else
/// the path with its directory resolved (so `a.json` and `./a.json` match).
fn out_key(d: &str) -> PathBuf {
    if d == "-" {
        return PathBuf::from("-");
    }
    let p = std::path::Path::new(d);
    if let Ok(c) = std::fs::canonicalize(p) {
        return c;
    }
    let dir = p
        .parent()
        .filter(|q| !q.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    match (std::fs::canonicalize(dir), p.file_name()) {
        (Ok(c), Some(n)) => c.join(n),
        _ => p.to_path_buf(),
    }
}

/// Check a command's outputs together: each as [`check_out`] does, and no
/// two to the same place (stdout twice would interleave them, one file twice
/// would keep only the last).
pub fn check_outputs(outs: &[(&str, Option<&str>)]) -> Result<()> {
    let given: Vec<(&str, &str)> = outs.iter().filter_map(|(f, d)| d.map(|d| (*f, d))).collect();
    for (flag, d) in &given {
        check_out(flag, Some(d))?;
    }
    for (i, (fa, da)) in given.iter().enumerate() {
        for (fb, db) in &given[i + 1..] {
            if out_key(da) == out_key(db) {
                if *da == "-" {
                    usage!("{fa} - and {fb} -: both to stdout; send one of them to a file");
                }
                usage!("{fa} {da} and {fb} {db}: the same file; give each output its own");
            }
        }
    }
    Ok(())
}

/// `--db PATH` as given on the command line (set once by `cmd::dispatch`).
static DB_OVERRIDE: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();

pub fn set_db_override(path: Option<PathBuf>) {
    let _ = DB_OVERRIDE.set(path);
}

/// The results database file: `--db`, else `$HWCAL_DB`, else the XDG data
/// directory (see `hwcal_db::default_path`). A URL of a scheme hwcal does
/// not support, or an empty path, is a usage error.
pub fn db_path() -> Result<PathBuf> {
    let path = match DB_OVERRIDE.get() {
        Some(Some(p)) => p.clone(),
        _ => hwcal_db::default_path().map_err(|e| anyhow::Error::new(UsageError(e.to_string())))?,
    };
    if path.as_os_str().is_empty() {
        usage!("--db: empty path");
    }
    if let Some(s) = path.to_str() {
        hwcal_db::check_location(s).map_err(|e| anyhow::Error::new(UsageError(e.to_string())))?;
    }
    Ok(path)
}

/// Database errors the user can fix by pointing `--db` elsewhere (another
/// program's file, a URL, nothing there) are usage errors (exit 2).
pub fn db_error(e: hwcal_db::DbError) -> anyhow::Error {
    use hwcal_db::DbError as E;
    match e {
        E::NotOurs { .. } | E::UnsupportedScheme(..) | E::Missing { .. } | E::TooNew { .. } | E::NoPath => {
            anyhow::Error::new(UsageError(e.to_string()))
        }
        e => anyhow::Error::new(e),
    }
}

/// Open (creating if needed) the results database: commands that store.
pub fn open_db() -> Result<Db> {
    open_db_with(hwcal_db::OpenMode::Create)
}

/// Open the results database only if it exists (creating nothing):
/// commands that read. A missing database is a usage error.
pub fn open_db_existing() -> Result<Db> {
    open_db_with(hwcal_db::OpenMode::Existing)
}

/// [`open_db_existing`], with a missing database as `None`.
pub fn open_db_if_exists() -> Result<Option<Db>> {
    let path = db_path()?;
    if path.is_dir() {
        usage!("--db {}: is a directory", path.display());
    }
    match Db::open_with(&path, hwcal_db::OpenMode::Existing) {
        Ok(db) => Ok(Some(db)),
        Err(hwcal_db::DbError::Missing { .. }) => Ok(None),
        Err(e) => Err(db_error(e)),
    }
}

fn open_db_with(mode: hwcal_db::OpenMode) -> Result<Db> {
    let path = db_path()?;
    if path.is_dir() {
        usage!("--db {}: is a directory", path.display());
    }
    Db::open_with(&path, mode).map_err(db_error)
}

/// Check before measuring that the database a command will save to opens
/// (so a bad `--db` fails at once, not after the measurement).
pub fn check_db(save: bool) -> Result<()> {
    if save {
        open_db()?;
    }
    Ok(())
}

/// Store the profile in the results database when `save` is set; prints the
/// new run id on stderr. A profile without machine information (e.g. from
/// `hwcal clock`) is stored with it added, so every stored run says which
/// machine it describes; what was printed is unchanged.
pub fn save_if_requested(profile: &Profile, save: bool) -> Result<Option<i64>> {
    if !save {
        return Ok(None);
    }
    let profile = &*checked(profile);
    let mut db = open_db()?;
    let id = if profile.machine.is_none() {
        let mut p = profile.clone();
        p.machine = Some(hwcal_probes::sysinfo::machine_info());
        db.insert(&p)
    } else {
        db.insert(profile)
    }
    .context("storing the profile")?;
    eprintln!("hwcal: stored as run {id} in {}", db.path().display());
    Ok(Some(id))
}

/// Parse a size with an optional binary suffix: `4096`, `4k`, `4K`, `4KiB`,
/// `4KB`, `1.5M`, `1G`, `2T`, `1P` (all 1024-based, like fio and micbench).
/// Zero is allowed here; callers that need a positive size check it.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    if t.starts_with('-') {
        return Err(format!("'{s}': a size cannot be negative"));
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let unit = unit.trim();
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        "p" | "pb" | "pib" => 50,
        _ => return Err(format!("'{s}': unknown size unit '{unit}' (use k, M, G, T or P)")),
    };
    if num.is_empty() || num.starts_with('.') || num.ends_with('.') || num.matches('.').count() > 1 {
        return Err(format!("'{s}': not a size (e.g. 4k, 1M, 1G)"));
    }
    let bad = || format!("'{s}': size too large");
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    let whole: u64 = int.parse().map_err(|_| bad())?;
    let mut v = whole.checked_mul(1u64 << shift).ok_or_else(bad)?;
    if !frac.is_empty() {
        // Fractions only make sense with a unit: 1.5M is 1572864 bytes.
        let f: f64 = format!("0.{frac}").parse().map_err(|_| bad())?;
        let part = f * (1u64 << shift) as f64;
        if part.fract() != 0.0 {
            return Err(format!("'{s}': not a whole number of bytes"));
        }
        v = v.checked_add(part as u64).ok_or_else(bad)?;
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_with_binary_suffixes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("4kb"), Ok(4096));
        assert_eq!(parse_size("1M"), Ok(1 << 20));
        assert_eq!(parse_size("1.5M"), Ok(3 << 19));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size(" 2 g "), Ok(2 << 30));
        assert_eq!(parse_size("1T"), Ok(1 << 40));
        assert_eq!(parse_size("1P"), Ok(1 << 50));
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("512B"), Ok(512));
    }

    #[test]
    fn bad_sizes() {
        for s in [
            "",
            "k",
            "-4k",
            "4x",
            "1.2.3k",
            "1.",
            ".5k",
            "4 k b",
            "0.1",
            "99999999999999999999",
            "16384P",
        ] {
            assert!(parse_size(s).is_err(), "{s:?} accepted");
        }
    }
}
