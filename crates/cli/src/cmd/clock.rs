//! `hwcal clock`: the core clock by lmbench mhz's GCD method and by a
//! dependent add chain, measured interleaved, plus the TSC rate.

use crate::cli::ClockArgs;
use crate::common::{check_db, header, pin, save_if_requested, Progress};
use crate::output::{check_dest, emit};
use anyhow::Result;
use hwcal_model::{Note, Verdict};
use hwcal_runner::clock::{Clock, ENTRY};
use hwcal_runner::{calibrate_with, Planned, Real};

pub fn run(a: ClockArgs) -> Result<()> {
    check_dest(a.common.json.as_deref())?;
    check_db(a.common.save)?;
    let progress = Progress::new(a.common.quiet);
    let cpu = pin(&a.common)?;
    let plan = Clock {
        batches: a.batches,
        attempts: a.retries,
    };
    let planner = move |_: &_| -> Vec<Planned> { vec![(ENTRY, Box::new(plan))] };
    let mut p = calibrate_with(&Real, header(cpu), &[ENTRY], planner, &progress)?;
    if p.clock.as_ref().is_some_and(|c| c.verdict == Verdict::Noisy) {
        p.notes.push(Note::warning(
            "clock",
            "noisy",
            "clock: the machine was too busy for the two methods to agree; the figures are unreliable",
        ));
    }
    emit(&p, a.common.json.as_deref())?;
    save_if_requested(&p, a.common.save)?;
    Ok(())
}
