//! `hwcal cache`: cache levels, line sizes, memory latency and memory-level
//! parallelism (The Calibrator's figures; the probe is `hwcal_runner::cache`).

use crate::cli::{CommonArgs, PlotArgs};
use crate::common::{check_db, header, pin, save_if_requested, Progress};
use crate::output::{check_dest, emit};
use anyhow::Result;
use clap::Args;
use hwcal_model::MachineInfo;
use hwcal_runner::cache::{default_max_size, Cache, ENTRY};
use hwcal_runner::machine::from_env;
use hwcal_runner::{calibrate_with, Planned};

#[derive(Debug, Args)]
pub struct CacheArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub plots: PlotArgs,
    /// Largest working set to measure (e.g. 64M, 1G; default 8x the nominal last-level cache,
    /// 4x past 1 GiB, at most a quarter of available memory, and up to 4x that while latency
    /// still climbs at the top).
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub max_size: Option<String>,
}

crate::subcommand! { pub COMMAND = "cache" in Measure: CacheArgs => run,
"Cache levels and memory latency (The Calibrator): latency vs working set, line size, MLP" }

pub fn run(a: CacheArgs) -> Result<()> {
    check_dest(a.common.json.as_deref())?;
    let max = a
        .max_size
        .as_deref()
        .map(hwcal_runner::cache::parse_max_size)
        .transpose()?;
    crate::output::Outputs::plots(&a.plots).check()?;
    check_db(a.common.save)?;
    let progress = Progress::new(a.common.quiet);
    let cpu = pin(&a.common)?;
    let planner = |machine: &MachineInfo| -> Vec<Planned> {
        let plan = Cache {
            max_size: max.unwrap_or_else(|| default_max_size(machine)),
            extend: max.is_none(),
            machine: machine.clone(),
            own_cpu: cpu,
            // Alone, the probe measures the TLB's curves where it needs them.
            tlb_curves: true,
        };
        vec![(ENTRY, Box::new(plan))]
    };
    let p = calibrate_with(from_env().as_ref(), header(cpu), &[ENTRY], planner, &progress)?;
    crate::output::Outputs::plots(&a.plots).write(&p)?;
    emit(&p, a.common.json.as_deref())?;
    save_if_requested(&p, a.common.save).map(drop)
}
