//! `hwcal c2c`: core-to-core latency, a cache line's one-way handoff between
//! each pair of CPUs (the probe is `hwcal_runner::c2c`).

use crate::cli::CommonArgs;
use crate::common::{check_db, header, pin, save_if_requested, Progress};
use crate::output::{check_dest, emit};
use anyhow::Result;
use clap::Args;
use hwcal_runner::c2c::{C2c, ENTRY};
use hwcal_runner::machine::from_env;
use hwcal_runner::{calibrate_with, Planned};

#[derive(Debug, Args)]
pub struct C2cArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// CPUs to pair, as Linux lists them (e.g. 0-3,8; default: every allowed CPU).
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Timed batches per pair, each of 400 round trips (5..=10000).
    #[arg(long, default_value_t = 31, value_parser = clap::value_parser!(u32).range(5..=10_000))]
    pub batches: u32,
    /// Most pairs to measure, an evenly spaced sample past it (0: every pair).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub max_pairs: usize,
    /// How to pass the line (comma-separated; default both): cas (compare-and-swap on one line),
    /// rw (a store to one line, loads of another).
    #[arg(long, value_delimiter = ',', value_name = "METHODS", value_parser = ["cas", "rw"])]
    pub method: Vec<String>,
}

crate::subcommand! { pub COMMAND = "c2c" in Measure: C2cArgs => run,
"Core-to-core latency (MLC --c2c_latency): a cache line's one-way handoff between CPUs" }

pub fn run(a: C2cArgs) -> Result<()> {
    check_dest(a.common.json.as_deref())?;
    let plan = C2c::requested(a.cpus.as_deref(), a.batches as usize, a.max_pairs, &a.method)?;
    check_db(a.common.save)?;
    let progress = Progress::new(a.common.quiet);
    let cpu = pin(&a.common)?;
    let planner = move |_: &_| -> Vec<Planned> { vec![(ENTRY, Box::new(plan))] };
    let p = calibrate_with(from_env().as_ref(), header(cpu), &[ENTRY], planner, &progress)?;
    emit(&p, a.common.json.as_deref())?;
    save_if_requested(&p, a.common.save).map(drop)
}
