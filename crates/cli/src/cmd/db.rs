//! `hwcal db`: the calibrated-hardware database (The Calibrator kept one of
//! 50+ machines): list stored runs, show one, compare two side by side,
//! export and import profiles, remove runs.

use crate::cli::{DbArgs, DbCommand};
use crate::common::{db_path, open_db, open_db_existing, open_db_if_exists, UsageError};
use crate::output::{check_dest, write_output};
use anyhow::{Context, Result};
use hwcal_db::{Db, DbError, Origin};
use hwcal_model::Profile;
use hwcal_report::sanitize::{inert_line, inert_profile};
use hwcal_report::{compare, format_utc, text, Exporter, JsonExporter};

pub fn run(a: DbArgs) -> Result<()> {
    match a.command {
        DbCommand::List => list(),
        DbCommand::Show { id } => {
            let (db, id) = open_with(&id)?;
            let p = get(&db, id)?;
            let p = inert_profile(&p);
            crate::out!("{}{}", header(&db, id, &p)?, text::summary(&p));
            Ok(())
        }
        DbCommand::Compare { a, b, json } => {
            let (db, ia) = open_with(&a)?;
            let ib = parse_id(&db, &b)?;
            let (pa, pb) = (get(&db, ia)?, get(&db, ib)?);
            let (pa, pb) = (inert_profile(&pa), inert_profile(&pb));
            let c = compare::compare(&pa, &pb);
            let (la, lb) = (run_label(ia, &pa), run_label(ib, &pb));
            if json {
                return write_output("-", &compare::comparison_json(&c, &la, &lb));
            }
            crate::out!("{}", compare::comparison_text(&c, &la, &lb));
            Ok(())
        }
        DbCommand::Export { id, json } => {
            check_dest(Some(&json))?;
            let (db, id) = open_with(&id)?;
            let p = get(&db, id)?;
            write_output(&json, &JsonExporter.export(&p)?)
        }
        DbCommand::Import { file } => {
            let bad = |e: String| anyhow::Error::new(UsageError(format!("{}: {e}", file.display())));
            let bytes = hwcal_report::read_profile_file(&file).map_err(bad)?;
            let p = hwcal_report::parse_profile(&bytes).map_err(bad)?;
            let mut db = open_db()?;
            if let Some(id) = db.find_identical(&p)? {
                crate::outln!(
                    "{} is already stored as run {id}; not imported again",
                    file.display()
                );
                return Ok(());
            }
            let id = db
                .insert_with_origin(&p, Origin::Import)
                .context("storing the imported profile")?;
            crate::outln!(
                "imported {} as run {id} ({})",
                file.display(),
                compare::machine_label(&inert_profile(&p))
            );
            Ok(())
        }
        DbCommand::Rm { id } => {
            let (mut db, id) = open_with(&id)?;
            db.delete(id).map_err(not_found)?;
            crate::outln!("removed run {id}");
            Ok(())
        }
    }
}

/// `run 3 (Xeon ... on host, 2026-11-22 00:41 UTC)`.
pub fn run_label(id: i64, p: &Profile) -> String {
    format!(
        "run {id} ({}, {})",
        compare::machine_label(p),
        format_utc(p.created_unix)
    )
}

fn header(db: &Db, id: i64, p: &Profile) -> Result<String> {
    let origin = db.summary(id).map_err(not_found)?.origin;
    Ok(format!(
        "run {id} ({}): `{}`, measured {}, hwcal {}\n\n",
        if origin == "import" {
            "imported"
        } else {
            "measured here"
        },
        p.command,
        format_utc(p.created_unix),
        p.tool_version
    ))
}

/// A missing run is the user's mistake: exit 2.
fn not_found(e: DbError) -> anyhow::Error {
    match e {
        DbError::NotFound(id) => {
            let path = db_path().map_or(String::new(), |p| format!(" {}", p.display()));
            anyhow::Error::new(UsageError(format!(
                "no run with id {id} in the database{path} (see `hwcal db list`)"
            )))
        }
        e => anyhow::Error::new(e),
    }
}

pub fn get(db: &Db, id: i64) -> Result<Profile> {
    db.get(id).map_err(not_found)
}

/// A run id as typed: a positive integer, `latest`, or `host:NAME` (the
/// latest run of that machine, to compare machines rather than runs).
pub fn parse_id(db: &Db, s: &str) -> Result<i64> {
    if let Some(host) = s.strip_prefix("host:") {
        return match db.latest_id_of_host(host)? {
            Some(id) => Ok(id),
            None => crate::usage!(
                "no run of host '{host}' in {} (see `hwcal db list`)",
                db.path().display()
            ),
        };
    }
    if s == "latest" {
        return match db.latest_id()? {
            Some(id) => Ok(id),
            None => crate::usage!(
                "the database {} holds no run yet (`hwcal run` stores one)",
                db.path().display()
            ),
        };
    }
    match s.parse::<i64>() {
        Ok(id) if id > 0 => Ok(id),
        _ => crate::usage!(
            "'{s}' is not a run id (a positive number, `latest` or `host:NAME`; see `hwcal db list`)"
        ),
    }
}

/// Open the database and resolve an id in it.
fn open_with(id: &str) -> Result<(Db, i64)> {
    let db = open_db_existing()?;
    let id = parse_id(&db, id)?;
    Ok((db, id))
}

fn list() -> Result<()> {
    let path = db_path()?;
    let Some(db) = open_db_if_exists()? else {
        crate::outln!("no runs stored yet ({} does not exist)", path.display());
        return Ok(());
    };
    let rows = db.list()?;
    if rows.is_empty() {
        crate::outln!("no runs stored in {}", path.display());
        return Ok(());
    }
    let opt = |v: Option<f64>, prec: usize| v.map_or("-".into(), |v| format!("{v:.prec$}"));
    let cut = |s: &str, n: usize| {
        if s.chars().count() > n {
            format!("{}…", s.chars().take(n - 1).collect::<String>())
        } else {
            s.to_string()
        }
    };
    crate::outln!(
        "{:>4}  {:<20}  {:<6}  {:<16}  {:<30}  {:>8}  {:>6}  {:>7}  {:>7}  {:>6}  sections",
        "id",
        "measured",
        "origin",
        "host",
        "cpu",
        "core MHz",
        "L1 ns",
        "mem ns",
        "rd GB/s",
        "ctx µs"
    );
    for r in rows {
        crate::outln!(
            "{:>4}  {:<20}  {:<6}  {:<16}  {:<30}  {:>8}  {:>6}  {:>7}  {:>7}  {:>6}  {}",
            r.id,
            format_utc(r.created_unix),
            inert_line(&r.origin),
            cut(&inert_line(r.hostname.as_deref().unwrap_or("-")), 16),
            cut(inert_line(r.cpu_model.as_deref().unwrap_or("-")).trim(), 30),
            opt(r.core_mhz, 0),
            opt(r.l1_latency_ns, 2),
            opt(r.memory_latency_ns, 1),
            opt(r.read_bytes_per_sec.map(|b| b / 1e9), 2),
            opt(r.ctx_us, 2),
            inert_line(&r.sections)
        );
    }
    Ok(())
}
