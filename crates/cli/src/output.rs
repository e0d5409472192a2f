//! The one output manager (hyperfine's `ExportManager`): a list of
//! exporters, each with where its files go. Destinations are checked before
//! a measurement starts (a long run must not end in a failed write), then
//! every exporter's files are written in order.

use crate::cli::PlotArgs;
use anyhow::{Context, Result};
use hwcal_model::Profile;
use hwcal_report::atomic::{self, Protected};
use hwcal_report::destination;
use hwcal_report::{Exporter, GnuplotExporter, JsonExporter, SvgExporter, TextExporter};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `println!` that returns an error instead of panicking when stdout is
/// closed (`hwcal db list | head`): the error goes up to `main`, which
/// treats a broken pipe as a normal end.
#[macro_export]
macro_rules! outln {
    ($($t:tt)*) => {
        $crate::output::write_text(format!("{}\n", format_args!($($t)*)).as_bytes())?
    };
}

/// `print!` counterpart of [`outln!`].
#[macro_export]
macro_rules! out {
    ($($t:tt)*) => {
        $crate::output::write_text(format!($($t)*).as_bytes())?
    };
}

/// Files no output may replace, kept for the whole command: the profiles it
/// read ([`protect_input`]); the results database is added when asked.
static INPUTS: std::sync::Mutex<Option<Protected>> = std::sync::Mutex::new(None);

/// Record a file the command reads (a profile), so no output of the same
/// command replaces it, by any name (a hard link, `--gnuplot` prefix).
pub fn protect_input(path: &Path) {
    if let Ok(mut g) = INPUTS.lock() {
        g.get_or_insert_with(Protected::default)
            .add(path, "an input of this command");
    }
}

/// What outputs must not replace: the command's inputs and the results
/// database (an SQLite file; a URL names no file).
pub fn protected() -> Protected {
    let mut p = INPUTS.lock().ok().and_then(|g| g.clone()).unwrap_or_default();
    if let Ok(db) = crate::common::db_path() {
        p.add(&db, "the results database");
    }
    p
}

/// A refused or failed write as the binary reports it: a destination the
/// user can change is a usage error (exit 2), a file system failure exit 1.
fn write_error(e: atomic::WriteError) -> anyhow::Error {
    if e.is_usage() {
        anyhow::Error::new(crate::common::UsageError(e.to_string()))
    } else {
        anyhow::Error::new(e)
    }
}

/// Write bytes to a file, or stdout for "-". A file is replaced whole
/// (`hwcal_report::atomic`): a full disk leaves the earlier file as it was;
/// a symbolic link, the database or an input is refused.
pub fn write_output(dest: &str, bytes: &[u8]) -> Result<()> {
    if dest == "-" {
        let mut out = std::io::stdout().lock();
        out.write_all(bytes).context("writing to stdout")?;
        return out.flush().context("writing to stdout");
    }
    write_file(Path::new(dest), bytes)
}

/// [`write_output`] to a file, said on stderr ("wrote PATH") unless `-q`.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    write_file_unsaid(path, bytes)?;
    if !crate::common::QUIET.load(std::sync::atomic::Ordering::Relaxed) {
        crate::say!("wrote {}", path.display());
    }
    Ok(())
}

/// [`write_file`] without the "wrote" line (`man DIR` lists its pages on stdout).
pub fn write_file_unsaid(path: &Path, bytes: &[u8]) -> Result<()> {
    atomic::write(path, bytes, &protected()).map_err(write_error)
}

/// Text for the terminal on stdout, with every control character other
/// than newline and tab shown escaped (`\x1b`), never obeyed: what hwcal
/// prints may come from a profile or database anyone can write.
pub fn write_text(bytes: &[u8]) -> Result<()> {
    write_output("-", &hwcal_report::sanitize::inert_bytes(bytes))
}

/// Print the summary (unless JSON goes to stdout) and write the JSON.
pub fn emit(profile: &Profile, json: Option<&str>) -> Result<()> {
    emit_as(profile, json, &TextExporter)
}

/// [`emit`] with the terminal text from `text` (the digest, for instance).
pub fn emit_as(profile: &Profile, json: Option<&str>, text: &dyn Exporter) -> Result<()> {
    let profile = &*hwcal_model::plausible::checked(profile);
    if json != Some("-") {
        // Raw: the exporter saw only an inert copy, so the only control
        // characters are its own (the digest's colours).
        let text = text.export(&hwcal_report::sanitize::inert_profile(profile))?;
        write_output("-", &text)?;
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
/// can be created (`hwcal_report::destination::check_file`), and is
/// neither the results database nor an input, nor a symbolic link.
pub fn check_out(flag: &str, dest: Option<&str>) -> Result<()> {
    let Some(d) = dest else { return Ok(()) };
    destination::check_file(flag, d).map_err(usage)?;
    if d != "-" {
        if let Ok(db) = crate::common::db_path() {
            if destination::place(d) == destination::place(&db.to_string_lossy()) {
                crate::usage!("{flag} {d}: is the results database; choose another file");
            }
        }
        atomic::check(Path::new(d), &protected()).map_err(|e| write_error(e).context(flag.to_string()))?;
    }
    Ok(())
}

/// Check a command's outputs together: each as [`check_out`] does, and no
/// two to the same place.
pub fn check_outputs(outs: &[(&str, Option<&str>)]) -> Result<()> {
    let given: Vec<(&str, &str)> = outs.iter().filter_map(|(f, d)| d.map(|d| (*f, d))).collect();
    for (flag, d) in &given {
        check_out(flag, Some(d))?;
    }
    destination::check_distinct(&given).map_err(usage)
}

/// A destination refused: a usage error (exit 2).
fn usage(msg: String) -> anyhow::Error {
    anyhow::Error::new(crate::common::UsageError(msg))
}

/// Where an exporter's files go.
pub enum Dest {
    /// Standard output.
    Stdout,
    /// A file, or stdout for `-`; `flag` names the option in messages.
    File { flag: &'static str, path: String },
    /// A directory, created if needed, the files written into it by name.
    Dir { flag: &'static str, path: PathBuf },
    /// Paths the exporter built from `prefix` (`--gnuplot PREFIX`).
    Prefix { flag: &'static str, prefix: String },
}

/// Exporters and their destinations, written in the order added.
#[derive(Default)]
pub struct Outputs {
    list: Vec<(Box<dyn Exporter>, Dest)>,
}

impl Outputs {
    pub fn add(&mut self, exporter: impl Exporter + 'static, dest: Dest) -> &mut Self {
        self.list.push((Box::new(exporter), dest));
        self
    }

    /// `text` on stdout (unless the JSON goes there) and the JSON profile
    /// to `json` if given.
    pub fn profile(json: Option<&str>, text: impl Exporter + 'static) -> Outputs {
        let mut o = Outputs::default();
        if json != Some("-") {
            o.add(text, Dest::Stdout);
        }
        if let Some(path) = json {
            let path = path.to_string();
            o.add(JsonExporter, Dest::File { flag: "--json", path });
        }
        o
    }

    /// `--gnuplot PREFIX` and `--plot DIR`.
    pub fn plots(a: &PlotArgs) -> Outputs {
        let mut o = Outputs::default();
        if let Some(prefix) = &a.gnuplot {
            let (flag, prefix) = ("--gnuplot", prefix.clone());
            o.add(
                GnuplotExporter {
                    prefix: prefix.clone(),
                },
                Dest::Prefix { flag, prefix },
            );
        }
        if let Some(dir) = &a.plot {
            o.add(
                SvgExporter,
                Dest::Dir {
                    flag: "--plot",
                    path: dir.clone(),
                },
            );
        }
        o
    }

    /// Check every destination before measuring.
    pub fn check(&self) -> Result<()> {
        for (_, dest) in &self.list {
            match dest {
                Dest::Stdout => {}
                Dest::File { flag, path } => check_out(flag, Some(path))?,
                Dest::Dir { flag, path } => destination::check_dir(flag, path).map_err(usage)?,
                Dest::Prefix { flag, prefix } => destination::check_prefix(flag, prefix).map_err(usage)?,
            }
        }
        Ok(())
    }

    /// Export `p` and write every file.
    pub fn write(&self, p: &Profile) -> Result<()> {
        // What hwcal writes, hwcal reads: implausible figures left out
        // (with a note); text for the terminal from an inert copy.
        let p = &*hwcal_model::plausible::checked(p);
        for (exporter, dest) in &self.list {
            let files = match dest {
                Dest::Stdout => exporter.files(&hwcal_report::sanitize::inert_profile(p))?,
                _ => exporter.files(p)?,
            };
            match dest {
                // Raw: made from the inert copy (the digest's colours are its own).
                Dest::Stdout => files.iter().try_for_each(|f| write_output("-", &f.bytes))?,
                Dest::File { path, .. } => files.iter().try_for_each(|f| write_output(path, &f.bytes))?,
                Dest::Prefix { .. } => files
                    .iter()
                    .try_for_each(|f| write_file(Path::new(&f.name), &f.bytes))?,
                Dest::Dir { path, .. } => {
                    // Like every other output: DIR itself is created, never
                    // a whole tree (`check` made sure its parent exists).
                    if !path.is_dir() {
                        std::fs::create_dir(path).with_context(|| format!("creating {}", path.display()))?;
                    }
                    files
                        .iter()
                        .try_for_each(|f| write_file(&path.join(&f.name), &f.bytes))?;
                }
            }
        }
        Ok(())
    }
}
