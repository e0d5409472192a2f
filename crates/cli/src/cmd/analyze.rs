//! `hwcal analyze FILE`: recompute every figure from a profile's raw data,
//! offline (the analysis is a pure function of the raw curves).

use crate::cli::AnalyzeArgs;
use crate::common::UsageError;
use crate::output::{check_dest, emit};
use anyhow::Result;

pub fn run(a: AnalyzeArgs) -> Result<()> {
    check_dest(a.json.as_deref())?;
    crate::output::Outputs::plots(&a.plots).check()?;
    let bytes = hwcal_report::read_profile_file(&a.file)
        .map_err(|e| anyhow::Error::new(UsageError(format!("{}: {e}", a.file.display()))))?;
    let mut p = hwcal_report::parse_profile(&bytes)
        .map_err(|e| anyhow::Error::new(UsageError(format!("{}: {e}", a.file.display()))))?;
    let any = hwcal_runner::reanalyze(&mut p, &hwcal_runner::probes());
    if !any {
        p.notes.push(hwcal_model::Note::info(
            "analyze",
            "no_raw_data",
            "analyze: the profile holds no raw data; figures shown as stored",
        ));
    }
    crate::output::Outputs::plots(&a.plots).write(&p)?;
    emit(&p, a.json.as_deref())
}
