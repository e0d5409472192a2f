//! `hwcal clock`: the core clock by lmbench mhz's GCD method and by a
//! dependent add chain, measured interleaved, plus the TSC rate.

use crate::cli::CommonArgs;
use crate::common::{check_db, header, pin, save_if_requested, Progress};
use crate::output::{check_dest, emit};
use anyhow::Result;
use clap::Args;
use hwcal_model::{Note, Verdict};
use hwcal_runner::clock::{Clock, ENTRY};
use hwcal_runner::machine::from_env;
use hwcal_runner::{calibrate_with, Planned};

#[derive(Debug, Args)]
pub struct ClockArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Batches to collect (at least 4); each gives one estimate per method (more = longer, steadier).
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(4..=10_000))]
    pub batches: u32,
    /// Attempts before reporting "noisy" (like mhz's retries before "too busy").
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub retries: u32,
}

crate::subcommand! { pub COMMAND = "clock" in Measure: ClockArgs => run,
"Core clock by two methods (lmbench mhz's GCD and a dependent add chain), and the TSC" }

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
    let mut p = calibrate_with(from_env().as_ref(), header(cpu), &[ENTRY], planner, &progress)?;
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
