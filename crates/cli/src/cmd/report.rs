//! `hwcal report [ID [ID]] [--html FILE]`: the self-contained HTML report of a
//! stored run (default: the latest), or of two runs compared side by side.

use crate::cmd::stored::{get, parse_id};
use crate::common::{open_db_read, UsageError};
use crate::output::{check_out, write_output};
use anyhow::Result;
use clap::Args;
use hwcal_db::Db;
use hwcal_model::Profile;
use hwcal_report::compare::run_label;
use hwcal_report::html::{compare_report, report};

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Zero, one or two runs: a run id, `latest`, `host:NAME`, or a JSON profile file.
    /// None = the latest run; two = a comparison (A then B).
    #[arg(value_name = "ID", num_args = 0..=2)]
    pub ids: Vec<String>,
    /// Write the HTML report to FILE ("-" for stdout; default: named after the runs, e.g.
    /// hwcal-report-3.html or r6.html for r6.json, in the current directory, never replacing
    /// a file: -2, -3... are added).
    #[arg(long, value_name = "FILE")]
    pub html: Option<String>,
    /// Nothing on stderr but errors (no "wrote FILE" lines).
    #[arg(short, long)]
    pub quiet: bool,
}

crate::subcommand! { pub COMMAND = "report" in Results: ReportArgs => run,
"A self-contained HTML report of a stored run, or of two runs compared" }

pub fn run(a: ReportArgs) -> Result<()> {
    crate::common::Progress::new(a.quiet);
    for s in a.ids.iter().filter(|s| std::path::Path::new(s).is_file()) {
        crate::output::protect_input(std::path::Path::new(s));
    }
    // Never overwrite a profile it reads (protected above, by identity: a hard link or another spelling too).
    let html_out = match a.html {
        Some(h) => h,
        None => hwcal_report::destination::free_name(&hwcal_report::destination::report_name(&a.ids)),
    };
    check_out("--html", Some(&html_out))?;
    let mut db: Option<Db> = None;
    let mut runs: Vec<(String, Profile)> = Vec::new();
    let ids = if a.ids.is_empty() {
        vec!["latest".to_string()]
    } else {
        a.ids.clone()
    };
    for s in &ids {
        runs.push(resolve(&mut db, s)?);
    }
    let html = match runs.as_slice() {
        [(label, p)] => report(p, &format!("hwcal report — {label}")),
        [(la, pa), (lb, pb)] => compare_report(
            pa,
            la,
            pb,
            lb,
            &Db::history_for(db.as_ref(), std::slice::from_ref(pa), std::slice::from_ref(pb))?,
        ),
        _ => unreachable!("clap allows at most two ids"),
    };
    write_output(&html_out, html.as_bytes())
}

/// A run id (or `latest`) from the database, or a JSON profile file.
fn resolve(db: &mut Option<Db>, s: &str) -> Result<(String, Profile)> {
    let is_id =
        s == "latest" || s.starts_with("host:") || s.starts_with("machine:") || s.parse::<i64>().is_ok();
    if !is_id && std::path::Path::new(s).is_file() {
        let bad = |e: String| anyhow::Error::new(UsageError(format!("{s}: {e}")));
        let bytes = hwcal_report::read_profile_file(std::path::Path::new(s)).map_err(bad)?;
        let mut p = hwcal_report::parse_profile(&bytes).map_err(bad)?;
        crate::common::redact_profile(&mut p);
        let p = hwcal_report::sanitize::inert_profile(&p).into_owned();
        return Ok((format!("{s} ({})", hwcal_report::compare::machine_label(&p)), p));
    }
    if !is_id {
        crate::usage!(
            "'{s}' is neither a run (a number, `latest`, `host:NAME`, `machine:ID`) nor a profile file"
        );
    }
    if db.is_none() {
        *db = Some(open_db_read()?);
    }
    let db = db.as_ref().expect("opened above");
    let id = parse_id(db, s)?;
    let p = hwcal_report::sanitize::inert_profile(&get(db, id)?).into_owned();
    Ok((run_label(id, &p), p))
}
