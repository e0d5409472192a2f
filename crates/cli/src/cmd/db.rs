//! `hwcal db`: the calibrated-hardware database (The Calibrator kept one of
//! 50+ machines): list stored runs by machine, show one, compare two side by
//! side, export (JSON, CSV, Markdown) and import profiles, remove runs, push
//! runs to a shared PostgreSQL database.
use crate::cmd::stored::{get, not_found, parse_id, runs_of};
use crate::common::{db_location, open_db, open_db_existing, open_db_if_exists, open_db_read, UsageError};
use crate::output::{check_dest, write_output};
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use hwcal_db::{Db, Origin};
use hwcal_model::Profile;
use hwcal_report::sanitize::{inert_line, inert_profile};
use hwcal_report::{compare, format_utc, runs, Exporter, JsonExporter};
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct DbArgs {
    #[command(subcommand)]
    pub command: DbCommand,
}
#[derive(Debug, Subcommand)]
pub enum DbCommand {
    /// One line per stored run (id, date, host, key figures), grouped by machine, in 100 columns.
    List(ListArgs),
    /// The summary of a stored run.
    Show {
        /// A run: an id, `latest`, `host:NAME` or `machine:ID-PREFIX` (that machine's latest run);
        /// or `batch:ID`: each figure's min / median / max over the batch's runs.
        id: String,
        /// The run's summary and whole profile as JSON on stdout instead.
        #[arg(long)]
        json: bool,
        /// After the digest, the detail: how each figure was reached, every note.
        #[arg(short = 'v', long)]
        detail: bool,
    },
    /// Two runs side by side, with the ratio B / A of every figure both measured, in 100 columns.
    Compare {
        /// Run A: an id, `latest`, `host:NAME` or `machine:ID-PREFIX` (that machine's latest run),
        /// or `batch:ID`: every run of a batch (`run --repeat N`), compared by its medians and a
        /// rank test over the runs.
        a: String,
        /// Run B, likewise.
        b: String,
        /// Print the comparison as JSON (rows with a, b, ratio, verdict; notes).
        #[arg(long)]
        json: bool,
        /// Every column however wide: the section, each verdict in words, its usual range and p.
        #[arg(long)]
        wide: bool,
    },
    /// A stored run's JSON profile (raw curves included), or runs as a CSV or Markdown table
    /// (one row per run; every run when none is named).
    Export {
        /// Runs (ids, `latest`, `host:NAME`, `machine:ID-PREFIX`); JSON takes exactly one.
        ids: Vec<String>,
        /// Write the JSON profile to FILE instead of stdout ("-" = stdout).
        #[arg(long, value_name = "FILE", conflicts_with_all = ["csv", "markdown"])]
        json: Option<String>,
        /// A CSV table on stdout: one row per run, unit-suffixed columns (l1_size_kib, ...).
        #[arg(long, conflicts_with = "markdown")]
        csv: bool,
        /// The same table in Markdown on stdout.
        #[arg(long)]
        markdown: bool,
    },
    /// Store JSON profiles from files (e.g. other machines' `--json` output).
    Import {
        /// JSON profiles written by `hwcal ... --json` or `hwcal db export`; all are checked
        /// before any is stored.
        #[arg(required = true)]
        files: Vec<std::path::PathBuf>,
        /// Store each figure as this hwcal's analysis reads the raw curves (as `hwcal analyze`),
        /// not as the file states it (an older hwcal's reading); said in a note.
        #[arg(long)]
        reanalyse: bool,
    },
    /// Remove stored runs.
    Rm {
        /// Run ids (all must exist, else none is removed).
        #[arg(required = true)]
        ids: Vec<String>,
    },
    /// Copy the runs of this database (--db) to another, e.g. a shared PostgreSQL;
    /// runs already there are not stored again.
    Push {
        /// The target: postgres://USER[:PASSWORD]@HOST[:PORT]/DBNAME, or an SQLite file.
        #[arg(long, value_name = "URL")]
        to: std::path::PathBuf,
    },
    /// A static web site of all runs: one row per machine, each run's report, comparisons.
    Site {
        /// A new or empty directory, or an earlier `db site` output (rewritten; nothing else is).
        dir: std::path::PathBuf,
    },
}

/// `db list`'s options.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// A JSON array of the runs' summaries on stdout instead.
    #[arg(long)]
    json: bool,
    /// Only this machine's runs: a machine id prefix, a host name or a core (`Zen 5`).
    #[arg(long, value_name = "M")]
    machine: Option<String>,
    /// Only runs measured since a date (2026-11-01, UTC) or within an age (36h, 7d, 2w).
    #[arg(long, value_name = "WHEN")]
    since: Option<String>,
    /// Only the N most recent runs (of those the other filters keep).
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// Every column however wide: each run's CPU and the sections it measured too.
    #[arg(long)]
    wide: bool,
}

crate::subcommand! { pub COMMAND = "db" in Results: DbArgs => run,
"The results database: list, show, compare, export, import, remove, push stored runs" }
pub fn run(a: DbArgs) -> Result<()> {
    match a.command {
        DbCommand::List(a) => list(a),
        DbCommand::Show { id, json, detail } if id.starts_with("batch:") && !json && !detail => {
            let (ids, ps) = runs_of(&open_db_read()?, &id)?;
            let table = hwcal_report::repeat::table(&ps, &[]);
            crate::outln!("{id}: runs {}\n\n{}", runs::id_list(&ids), table.trim_end());
            Ok(())
        }
        DbCommand::Show { id, json, detail } => {
            let (db, id) = open_with(&id)?;
            let p = get(&db, id)?;
            if json {
                let v = serde_json::json!({ "run": db.summary(id)?, "profile": p });
                return write_output("-", format!("{v:#}\n").as_bytes());
            }
            let p = inert_profile(&p);
            let hint = format!("detail: hwcal db show {id} --detail");
            let digest =
                hwcal_report::DigestExporter::stdout(detail, hint, hwcal_report::stdout_digest_width());
            let text = digest.export(&p)?;
            crate::out!("{}", db.show_header(id, &p, &format_utc).map_err(not_found)?);
            write_output("-", &text)
        }
        DbCommand::Site { dir } => crate::cmd::site::run(&dir),
        DbCommand::Compare { a, b, json, wide } => {
            let db = open_db_read()?;
            let side = |s: &str| -> Result<(String, Vec<Profile>)> {
                let (ids, ps) = runs_of(&db, s)?;
                Ok((compare::side_label(s, &ids, &ps), ps))
            };
            let ((la, pa), (lb, pb)) = (side(&a)?, side(&b)?);
            let c = compare::judged(&pa, &pb, &Db::history_for(Some(&db), &pa, &pb)?);
            if json {
                return write_output("-", &compare::comparison_json(&c, &la, &lb));
            }
            crate::out!("{}", compare::comparison_table(&c, &la, &lb, wide));
            Ok(())
        }
        DbCommand::Export {
            ids,
            json,
            csv,
            markdown,
        } => match (csv || markdown, ids.as_slice()) {
            (false, [id]) => {
                let dest = json.unwrap_or_else(|| "-".into());
                check_dest(Some(&dest))?;
                let (db, id) = open_with(id)?;
                write_output(&dest, &JsonExporter.export(&get(&db, id)?)?)
            }
            (false, _) => crate::usage!(
                "a JSON export takes one run ({} given); --csv or --markdown export several",
                ids.len()
            ),
            (true, _) => table(&ids, csv),
        },
        DbCommand::Import { files, reanalyse } => import(&files, reanalyse),
        DbCommand::Rm { ids } => {
            let mut db = open_db_existing()?;
            let ids = ids.iter().map(|s| parse_id(&db, s)).collect::<Result<Vec<_>>>()?;
            db.delete_all(&ids).map_err(not_found)?; // all or none
            ids.iter()
                .try_for_each(|id| Ok(crate::outln!("removed run {id}")))
        }
        DbCommand::Push { to } => push(&to),
    }
}
/// `db import FILE...`: every file is read and checked (and, with
/// `--reanalyse`, re-analysed) before any is stored, so a bad file stores
/// nothing; a profile already stored is not stored again.
fn import(files: &[PathBuf], reanalyse: bool) -> Result<()> {
    let mut profiles = Vec::new();
    for file in files {
        let bad = |e: String| anyhow::Error::new(UsageError(format!("{}: {e}", file.display())));
        let bytes = hwcal_report::read_profile_file(file).map_err(bad)?;
        let mut p = hwcal_report::parse_profile(&bytes).map_err(bad)?;
        // A password in the recorded command line is not stored.
        crate::common::redact_profile(&mut p);
        if reanalyse {
            hwcal_runner::reanalyse_imported(&mut p).map_err(|e| bad(e.to_string()))?;
        }
        profiles.push((file, p));
    }
    let mut db = open_db()?;
    // Every file is stored before a line is printed: a reader that stops
    // early (`| head -1`, a broken pipe) must not stop the import half-way.
    let mut lines = Vec::with_capacity(profiles.len());
    for (file, p) in profiles {
        let (id, new) = db
            .insert_new(&p, Origin::Import)
            .context("storing the imported profile")?;
        let (file, label) = (file.display(), compare::machine_label(&inert_profile(&p)));
        lines.push(match new {
            true => format!("imported {file} as run {id} ({label})"),
            false => format!("{file} is already stored as run {id}; not imported again"),
        });
    }
    for line in lines {
        crate::outln!("{line}");
    }
    Ok(())
}
/// `db export --csv|--markdown [RUN...]`: one row per run (all runs when
/// none is named).
fn table(sel: &[String], csv: bool) -> Result<()> {
    // No database: an empty table, unless runs were named.
    let db = match open_db_if_exists()? {
        None if !sel.is_empty() => Some(open_db_read()?),
        db => db,
    };
    let (mut rows, mut unreadable) = (Vec::new(), Vec::new());
    if let Some(db) = &db {
        let ids: Vec<i64> = match sel {
            [] => db.list()?.iter().map(|s| s.id).collect(),
            _ => sel.iter().map(|s| parse_id(db, s)).collect::<Result<_>>()?,
        };
        for id in ids {
            let origin = db.summary(id).map_err(not_found)?.origin;
            match get(db, id) {
                Ok(p) => rows.push(runs::Run {
                    id,
                    origin,
                    profile: inert_profile(&p).into_owned(),
                }),
                // One damaged row does not keep the others out of the
                // table; it is named, and the exit status says so.
                Err(e) if sel.is_empty() => unreadable.push((id, format!("{e:#}"))),
                Err(e) => return Err(e),
            }
        }
    }
    write_output("-", &(if csv { runs::csv } else { runs::markdown })(&rows))?;
    for (id, why) in &unreadable {
        crate::say!("warning: run {id} left out: {why}");
    }
    match unreadable.len() {
        0 => Ok(()),
        n => anyhow::bail!("{n} stored run(s) are not readable profiles and were left out"),
    }
}
/// `db push --to URL`: copy this database's runs (read only) to another;
/// a run that does not parse stays behind (exit 1).
fn push(to: &Path) -> Result<()> {
    let (from, to) = (db_location()?, hwcal_db::Location::of_path(to)?);
    let r = hwcal_db::push(&from, &to)?;
    for (id, why) in &r.unreadable {
        crate::say!("run {id} not pushed: {}", inert_line(why));
    }
    crate::outln!("pushed {} to {}: {r}", from.display(), to.display());
    match r.unreadable.len() {
        0 => Ok(()),
        n => anyhow::bail!("{n} stored run(s) are not readable profiles and were not pushed"),
    }
}
/// Open the database and resolve an id in it.
fn open_with(id: &str) -> Result<(Db, i64)> {
    let db = open_db_read()?;
    let id = parse_id(&db, id)?;
    Ok((db, id))
}
fn list(a: ListArgs) -> Result<()> {
    let filter =
        hwcal_db::ListFilter::parse(a.machine, a.since.as_deref(), a.limit, hwcal_runner::now_unix())
            .map_err(|e| anyhow::Error::new(UsageError(e)))?;
    let (json, path) = (a.json, db_location()?.display());
    let filter_set = filter != hwcal_db::ListFilter::default();
    let rows = match open_db_if_exists()? {
        Some(db) => filter.apply(db.list()?),
        None if json => Vec::new(),
        None => {
            crate::outln!("no runs stored yet ({path} does not exist)");
            return Ok(());
        }
    };
    if json {
        return write_output("-", format!("{:#}\n", serde_json::to_value(&rows)?).as_bytes());
    }
    if rows.is_empty() {
        let why = if filter_set { " that pass the filters" } else { "" };
        crate::outln!("no runs stored in {path}{why}");
        return Ok(());
    }
    let text = hwcal_db::list_text(&rows, &format_utc, &|f| inert_line(f).into_owned(), a.wide);
    crate::out!("{text}");
    Ok(())
}
