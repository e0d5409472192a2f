//! `hwcal analyze FILE`: recompute every figure from a profile's raw data,
//! offline (the analysis is a pure function of the raw curves).

use crate::cli::PlotArgs;
use crate::common::UsageError;
use crate::output::{check_dest, emit_as};
use anyhow::Result;
use clap::Args;

#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// A JSON profile written by `hwcal ... --json`.
    pub file: std::path::PathBuf,
    /// Write the re-analysed profile to FILE ("-" for stdout).
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    #[command(flatten)]
    pub plots: PlotArgs,
    /// After the digest, the detail: how each figure was reached, every note.
    #[arg(short = 'v', long)]
    pub detail: bool,
}

crate::subcommand! { pub COMMAND = "analyze" in Results: AnalyzeArgs => run,
"Re-run the analysis on a saved JSON profile's raw data" }

pub fn run(a: AnalyzeArgs) -> Result<()> {
    // No output (--json, --gnuplot's files, --plot's) replaces the profile
    // read, by any name: its raw curves may be the only copy.
    crate::output::protect_input(&a.file);
    check_dest(a.json.as_deref())?;
    crate::output::Outputs::plots(&a.plots).check()?;
    let bytes = hwcal_report::read_profile_file(&a.file)
        .map_err(|e| anyhow::Error::new(UsageError(format!("{}: {e}", a.file.display()))))?;
    let mut p = hwcal_model::parse_profile_unchecked(&bytes)
        .map_err(|e| anyhow::Error::new(UsageError(format!("{}: {e}", a.file.display()))))?;
    // A stored figure that fails the plausibility check (an older
    // analysis's negative miss latency) is left out here and re-derived
    // from the raw curves below, with a note, instead of refusing the file.
    // Raw data that fails it is refused as before: the analysis would
    // derive its figures from it.
    crate::common::redact_profile(&mut p);
    let bad = hwcal_model::plausible::implausible(&p);
    if let Some(raw) = bad.iter().find(|b| b.starts_with("raw")) {
        return Err(anyhow::Error::new(UsageError(format!(
            "{}: values no machine can have measured: {raw}",
            a.file.display()
        ))));
    }
    let replaced = hwcal_model::plausible::leave_out(&mut p);
    let any = hwcal_runner::finish(&mut p, &hwcal_runner::probes());
    for what in &replaced {
        p.notes.push(hwcal_model::Note::warning(
            "analyze",
            "implausible_replaced",
            format!(
                "analyze: a stored value failed the plausibility check ({what}): left out; {}",
                if any {
                    "the figures are re-derived from the raw curves"
                } else {
                    "no raw data to re-derive figures from"
                }
            ),
        ));
    }
    if !any {
        p.notes.push(hwcal_model::Note::info(
            "analyze",
            "no_raw_data",
            "analyze: the profile holds no raw data; figures shown as stored",
        ));
    }
    crate::output::Outputs::plots(&a.plots).write(&p)?;
    let hint = format!("detail: hwcal analyze {} --detail", a.file.display());
    let digest = hwcal_report::DigestExporter::stdout(a.detail, hint);
    emit_as(&p, a.json.as_deref(), &digest)
}
