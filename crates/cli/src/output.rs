//! The one output manager (hyperfine's `ExportManager`): a list of
//! exporters, each with where its files go. Destinations are checked before
//! a measurement starts (a long run must not end in a failed write), then
//! every exporter's files are written in order.

use crate::cli::PlotArgs;
use anyhow::{Context, Result};
use hwcal_model::Profile;
use hwcal_report::{Exporter, GnuplotExporter, JsonExporter, SvgExporter, TextExporter};
use std::io::Write;
use std::path::PathBuf;

/// `println!` that returns an error instead of panicking when stdout is
/// closed (`hwcal db list | head`): the error goes up to `main`, which
/// treats a broken pipe as a normal end.
#[macro_export]
macro_rules! outln {
    ($($t:tt)*) => {
        $crate::output::write_output("-", format!("{}\n", format_args!($($t)*)).as_bytes())?
    };
}

/// `print!` counterpart of [`outln!`].
#[macro_export]
macro_rules! out {
    ($($t:tt)*) => {
        $crate::output::write_output("-", format!($($t)*).as_bytes())?
    };
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

/// Print the summary (unless JSON goes to stdout) and write the JSON.
pub fn emit(profile: &Profile, json: Option<&str>) -> Result<()> {
    Outputs::profile(json).write(profile)
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
        if d != "-" {
            let p = std::path::Path::new(d);
            let parent = p.parent().filter(|q| !q.as_os_str().is_empty());
            if let Some(dir) = parent {
                if !dir.is_dir() {
                    crate::usage!("{flag} {d}: directory {} does not exist", dir.display());
                }
            }
            if p.is_dir() {
                crate::usage!("{flag} {d}: is a directory");
            }
        }
    }
    Ok(())
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

    /// The summary on stdout (unless the JSON goes there) and the JSON
    /// profile to `json` if given.
    pub fn profile(json: Option<&str>) -> Outputs {
        let mut o = Outputs::default();
        if json != Some("-") {
            o.add(TextExporter, Dest::Stdout);
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
                Dest::Dir { flag, path } => {
                    if path.exists() && !path.is_dir() {
                        crate::usage!("{flag} {}: not a directory", path.display());
                    }
                }
                Dest::Prefix { flag, prefix } => check_prefix(flag, prefix)?,
            }
        }
        Ok(())
    }

    /// Export `p` and write every file.
    pub fn write(&self, p: &Profile) -> Result<()> {
        for (exporter, dest) in &self.list {
            let files = exporter.files(p)?;
            match dest {
                Dest::Stdout => files.iter().try_for_each(|f| write_output("-", &f.bytes))?,
                Dest::File { path, .. } => files.iter().try_for_each(|f| write_output(path, &f.bytes))?,
                Dest::Prefix { .. } => files.iter().try_for_each(|f| write_output(&f.name, &f.bytes))?,
                Dest::Dir { path, .. } => {
                    std::fs::create_dir_all(path).with_context(|| format!("creating {}", path.display()))?;
                    for f in &files {
                        let file = path.join(&f.name);
                        std::fs::write(&file, &f.bytes)
                            .with_context(|| format!("writing {}", file.display()))?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// A file prefix such as `out/mymachine`: not empty, not a directory
/// name, in a directory that exists.
fn check_prefix(flag: &str, prefix: &str) -> Result<()> {
    if prefix.is_empty() || prefix.ends_with('/') {
        crate::usage!("{flag} {prefix:?}: expected a file prefix such as out/mymachine");
    }
    let p = std::path::Path::new(prefix);
    if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.is_dir() {
            crate::usage!("{flag} {prefix}: directory {} does not exist", dir.display());
        }
    }
    Ok(())
}
