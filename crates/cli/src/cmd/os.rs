//! `hwcal os`: operating-system latencies as lmbench reports them (the
//! probe is `hwcal_runner::os`).

use crate::cli::CommonArgs;
use crate::common::{check_db, header, pin, save_if_requested, Progress};
use crate::output::{check_dest, emit};
use anyhow::Result;
use clap::Args;
use hwcal_runner::machine::from_env;
use hwcal_runner::os::{parse_ops, Os, ENTRY};
use hwcal_runner::{calibrate_with, Planned};

#[derive(Debug, Args)]
pub struct OsArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Only these operations (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "OPS",
          value_parser = clap::builder::PossibleValuesParser::new(hwcal_runner::os::op_ids()))]
    pub only: Vec<String>,
    /// Timed batches per operation (5..=1000).
    #[arg(long, default_value_t = 21, value_parser = clap::value_parser!(u32).range(5..=1000))]
    pub batches: u32,
}

crate::subcommand! { pub COMMAND = "os" in Measure: OsArgs => run,
"OS latencies (lmbench lat_syscall, lat_sig, lat_proc, lat_pagefault, lat_pipe, lat_unix, bw_pipe)" }

pub fn run(a: OsArgs) -> Result<()> {
    check_dest(a.common.json.as_deref())?;
    let ops = parse_ops(&a.only)?;
    check_db(a.common.save)?;
    let progress = Progress::new(a.common.quiet);
    let cpu = pin(&a.common)?;
    let (batches, scratch) = (a.batches as usize, std::env::temp_dir());
    let planner = move |_: &_| -> Vec<Planned> {
        vec![(
            ENTRY,
            Box::new(Os {
                ops,
                batches,
                scratch,
            }),
        )]
    };
    let p = calibrate_with(from_env().as_ref(), header(cpu), &[ENTRY], planner, &progress)?;
    emit(&p, a.common.json.as_deref())?;
    save_if_requested(&p, a.common.save).map(drop)
}
