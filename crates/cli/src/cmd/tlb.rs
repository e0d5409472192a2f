//! `hwcal tlb`: TLB levels for 4 KiB and 2 MiB pages and the huge-page
//! penalty (the probe is `hwcal_runner::tlb`).

use crate::cli::TlbArgs;
use crate::common::{check_db, command_line, now_unix, pin, save_if_requested, Progress};
use crate::output::{check_dest, emit};
use anyhow::Result;
use hwcal_harness::harness_info;
use hwcal_model::Profile;
use hwcal_runner::tlb::{apply, measure};

pub fn run(a: TlbArgs) -> Result<()> {
    check_dest(a.common.json.as_deref())?;
    crate::output::Outputs::plots(&a.plots).check()?;
    check_db(a.common.save)?;
    let progress = Progress::new(a.common.quiet);
    let cpu = pin(&a.common)?;
    let mut p = Profile::new(command_line(), now_unix());
    p.harness = Some(harness_info(cpu));
    p.machine = Some(hwcal_probes::sysinfo::machine_info());
    p.raw = measure(a.max_pages, a.max_huge_pages, &progress, cpu)?;
    apply(&mut p);
    crate::output::Outputs::plots(&a.plots).write(&p)?;
    emit(&p, a.common.json.as_deref())?;
    save_if_requested(&p, a.common.save).map(drop)
}
