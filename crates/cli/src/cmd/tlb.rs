//! `hwcal tlb`: TLB levels for 4 KiB and 2 MiB pages and the huge-page
//! penalty (the probe is `hwcal_runner::tlb`).

use crate::cli::TlbArgs;
use crate::common::{check_db, header, pin, save_if_requested, Progress};
use crate::output::{check_dest, emit};
use anyhow::Result;
use hwcal_runner::tlb::{Tlb, ENTRY};
use hwcal_runner::{calibrate_with, Planned, Real};

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
    let p = calibrate_with(&Real, header(cpu), &[ENTRY], planner, &progress)?;
    crate::output::Outputs::plots(&a.plots).write(&p)?;
    emit(&p, a.common.json.as_deref())?;
    save_if_requested(&p, a.common.save).map(drop)
}
