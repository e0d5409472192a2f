//! `hwcal tlb`: TLB levels for 4 KiB and 2 MiB pages and the huge-page
//! penalty (the probe is `hwcal_runner::tlb`).

use crate::cli::{CommonArgs, PlotArgs};
use crate::common::{check_db, header, pin, save_if_requested, Progress};
use crate::output::{check_dest, emit};
use anyhow::Result;
use clap::Args;
use hwcal_runner::machine::from_env;
use hwcal_runner::tlb::{Tlb, ENTRY};
use hwcal_runner::{calibrate_with, Planned};

#[derive(Debug, Args)]
pub struct TlbArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub plots: PlotArgs,
    /// Most 4 KiB pages to visit (16..=1048576; the default is 4x a 2048-entry STLB).
    #[arg(long, default_value_t = 8192, value_parser = clap::value_parser!(u64).range(16..=1_048_576))]
    pub max_pages: u64,
    /// Most 2 MiB pages to visit (0 skips the huge-page test; capped by available memory).
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u64).range(0..=65_536))]
    pub max_huge_pages: u64,
}

crate::subcommand! { pub COMMAND = "tlb" in Measure: TlbArgs => run,
"TLB levels for 4 KiB and 2 MiB pages, and the huge-page penalty (PS3 TLB note)" }

pub fn run(a: TlbArgs) -> Result<()> {
    check_dest(a.common.json.as_deref())?;
    crate::output::Outputs::plots(&a.plots).check()?;
    check_db(a.common.save)?;
    let progress = Progress::new(a.common.quiet);
    let cpu = pin(&a.common)?;
    let plan = Tlb {
        max_pages: a.max_pages,
        max_huge_pages: a.max_huge_pages,
        own_cpu: cpu,
    };
    let planner = move |_: &_| -> Vec<Planned> { vec![(ENTRY, Box::new(plan))] };
    let p = calibrate_with(from_env().as_ref(), header(cpu), &[ENTRY], planner, &progress)?;
    crate::output::Outputs::plots(&a.plots).write(&p)?;
    emit(&p, a.common.json.as_deref())?;
    save_if_requested(&p, a.common.save).map(drop)
}
