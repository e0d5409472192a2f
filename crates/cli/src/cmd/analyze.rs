//! `hwcal analyze FILE`: recompute every figure from a profile's raw data,
//! offline (the analysis is a pure function of the raw curves).

use crate::cli::PlotArgs;
use crate::common::UsageError;
use crate::output::emit_as;
use anyhow::Result;
use clap::Args;

#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// A JSON profile written by `hwcal ... --json` ("-": standard input).
    pub file: std::path::PathBuf,
    /// Write the re-analysed profile to FILE ("-" for stdout).
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Also write the HTML report of the re-analysed profile to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<String>,
    #[command(flatten)]
    pub plots: PlotArgs,
    /// After the digest, the detail: how each figure was reached, every note.
    #[arg(short = 'v', long)]
    pub detail: bool,
    /// Nothing on stderr but errors (no "wrote FILE" lines).
    #[arg(short, long)]
    pub quiet: bool,
}

crate::subcommand! { pub COMMAND = "analyze" in Results: AnalyzeArgs => run,
"Re-run the analysis on a saved JSON profile's raw data" }

pub fn run(a: AnalyzeArgs) -> Result<()> {
    // No output (--json, --gnuplot's files, --plot's) replaces the profile
    // read, by any name: its raw curves may be the only copy.
    crate::common::Progress::new(a.quiet);
    crate::output::protect_input(&a.file);
    crate::output::check_outputs(&[("--json", a.json.as_deref()), ("--html", a.html.as_deref())])?;
    crate::output::Outputs::plots(&a.plots).check()?;
    let bytes = hwcal_report::read_profile_file(&a.file)
        .map_err(|e| anyhow::Error::new(UsageError(format!("{}: {e}", a.file.display()))))?;
    let mut p = hwcal_model::parse_profile_unchecked(&bytes)
        .map_err(|e| anyhow::Error::new(UsageError(format!("{}: {e}", a.file.display()))))?;
    crate::common::redact_profile(&mut p);
    hwcal_runner::reanalyse_stored(&mut p)
        .map_err(|e| anyhow::Error::new(UsageError(format!("{}: {e}", a.file.display()))))?;
    let mut outputs = crate::output::Outputs::plots(&a.plots);
    if let Some(path) = a.html.clone() {
        let dest = crate::output::Dest::File { flag: "--html", path };
        outputs.add(hwcal_report::html::HtmlExporter::default(), dest);
    }
    outputs.write(&p)?;
    let hint = format!("detail: hwcal analyze {} --detail", a.file.display());
    let digest = hwcal_report::DigestExporter::stdout(a.detail, hint, hwcal_report::stdout_digest_width());
    emit_as(&p, a.json.as_deref(), &digest)
}
