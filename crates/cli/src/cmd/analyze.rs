//! `hwcal analyze FILE`: recompute every figure from a profile's raw data,
//! offline (the analysis is a pure function of the raw curves).

use crate::cli::AnalyzeArgs;
use crate::common::{check_dest, emit, UsageError};
use anyhow::Result;

pub fn run(a: AnalyzeArgs) -> Result<()> {
    check_dest(a.json.as_deref())?;
    crate::cmd::plots::check(&a.plots)?;
    let bytes = hwcal_report::read_profile_file(&a.file)
        .map_err(|e| anyhow::Error::new(UsageError(format!("{}: {e}", a.file.display()))))?;
    let mut p = hwcal_report::parse_profile(&bytes)
        .map_err(|e| anyhow::Error::new(UsageError(format!("{}: {e}", a.file.display()))))?;
    let mut any = false;
    for probe in crate::registry::probes() {
        any |= (probe.reanalyze)(&mut p)?;
    }
    if !any {
        p.notes
            .push("analyze: the profile holds no raw data; figures shown as stored".into());
    }
    crate::cmd::plots::write(&p, &a.plots)?;
    emit(&p, a.json.as_deref())
}
