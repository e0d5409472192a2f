//! `hwcal clock`: the core clock by lmbench mhz's GCD method and by a
//! dependent add chain, measured interleaved, plus the TSC rate.

use crate::cli::ClockArgs;
use crate::common::{check_db, command_line, now_unix, pin, save_if_requested, Progress};
use crate::output::{check_dest, emit};
use anyhow::Result;
use hwcal_harness::harness_info;
use hwcal_model::{Note, Profile, Verdict};

pub fn run(a: ClockArgs) -> Result<()> {
    check_dest(a.common.json.as_deref())?;
    check_db(a.common.save)?;
    let progress = Progress::new(a.common.quiet);
    let cpu = pin(&a.common)?;
    let mut p = Profile::new(command_line(), now_unix());
    p.harness = Some(harness_info(cpu));
    let (res, raw) = hwcal_runner::clock::measure(a.batches, a.retries, &progress);
    if res.verdict == Verdict::Noisy {
        p.notes.push(Note::warning(
            "clock",
            "noisy",
            "clock: the machine was too busy for the two methods to agree; the figures are unreliable",
        ));
    }
    p.clock = Some(res);
    p.raw_clock = Some(raw);
    emit(&p, a.common.json.as_deref())?;
    save_if_requested(&p, a.common.save)?;
    Ok(())
}
