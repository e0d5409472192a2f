//! `hwcal cache`: cache levels, line sizes, memory latency and memory-level
//! parallelism (The Calibrator's figures; the probe is `hwcal_runner::cache`).

use crate::cli::CacheArgs;
use crate::common::{check_db, command_line, now_unix, pin, save_if_requested, Progress};
use crate::output::{check_dest, emit};
use anyhow::Result;
use hwcal_harness::harness_info;
use hwcal_model::Profile;
use hwcal_runner::cache::{apply, default_max_size, ensure_tlb_curves, measure};

fn parse_max_size(s: &str) -> Result<u64> {
    let v = match crate::common::parse_size(s) {
        Ok(v) => v,
        Err(e) => crate::usage!("--max-size {e}"),
    };
    if v < 64 << 10 {
        crate::usage!("--max-size {s}: at least 64K");
    }
    let avail = hwcal_probes::sysinfo::available_memory();
    if avail > 0 && v > avail / 2 {
        crate::usage!(
            "--max-size {s}: more than half of the available memory ({} MiB)",
            avail >> 20
        );
    }
    Ok(v)
}

pub fn run(a: CacheArgs) -> Result<()> {
    check_dest(a.common.json.as_deref())?;
    let max = a.max_size.as_deref().map(parse_max_size).transpose()?;
    crate::output::Outputs::plots(&a.plots).check()?;
    check_db(a.common.save)?;
    let progress = Progress::new(a.common.quiet);
    let cpu = pin(&a.common)?;
    let machine = hwcal_probes::sysinfo::machine_info();
    let mut p = Profile::new(command_line(), now_unix());
    p.harness = Some(harness_info(cpu));
    let max = max.unwrap_or_else(|| default_max_size(&machine));
    p.machine = Some(machine.clone());
    p.raw = measure(max, &machine, &progress, cpu)?;
    ensure_tlb_curves(&mut p, &progress, cpu)?;
    apply(&mut p);
    crate::output::Outputs::plots(&a.plots).write(&p)?;
    emit(&p, a.common.json.as_deref())?;
    save_if_requested(&p, a.common.save).map(drop)
}
