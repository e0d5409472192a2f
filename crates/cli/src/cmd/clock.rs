//! `hwcal clock`: the core clock by lmbench mhz's GCD method and by a
//! dependent add chain, measured interleaved, plus the TSC rate.

use crate::cli::ClockArgs;
use crate::common::{check_db, check_dest, command_line, emit, now_unix, pin, save_if_requested, Progress};
use crate::registry::ProbeEntry;
use anyhow::Result;
use hwcal_harness::{clockref, harness_info, Timer};
use hwcal_model::{ClockRaw, ClockResult, Profile, Verdict};
use hwcal_probes::clock::{collect, ClockPlan, DEFAULT_BATCHES};

pub const ENTRY: ProbeEntry = ProbeEntry {
    id: "clock",
    description: "core clock (mhz GCD + add chain), TSC rate",
    measure: |ctx, p| {
        let (res, raw) = measure(DEFAULT_BATCHES as u32, 3, &ctx.progress);
        p.clock = Some(res);
        p.raw_clock = Some(raw);
        Ok(())
    },
    reanalyze: |p| {
        let Some(raw) = &p.raw_clock else { return Ok(false) };
        p.clock = Some(hwcal_analysis::clock::analyze(raw));
        Ok(true)
    },
};

/// Warm up, then collect and analyse; retry while the verdict is noisy.
pub fn measure(batches: u32, attempts: u32, progress: &Progress) -> (ClockResult, ClockRaw) {
    let timer = Timer::get();
    let (mhz, ms) = clockref::warm_up(timer, 300);
    progress.say(&format!("clock: warmed up in {ms:.0} ms at {mhz:.0} MHz"));
    let plan = ClockPlan {
        batches: batches as usize,
        ..ClockPlan::default()
    };
    let mut best: Option<(ClockResult, ClockRaw)> = None;
    for attempt in 1..=attempts {
        let raw = collect(&plan);
        let res = hwcal_analysis::clock::analyze(&raw);
        let ok = res.verdict == Verdict::Ok;
        if !ok {
            progress.say(&format!("clock: attempt {attempt} too noisy, retrying"));
        }
        best = Some((res, raw));
        if ok {
            break;
        }
    }
    best.expect("at least one attempt")
}

pub fn run(a: ClockArgs) -> Result<()> {
    check_dest(a.common.json.as_deref())?;
    check_db(a.common.save)?;
    let progress = Progress::new(a.common.quiet);
    let cpu = pin(&a.common)?;
    let mut p = Profile::new(command_line(), now_unix());
    p.harness = Some(harness_info(cpu));
    let (res, raw) = measure(a.batches, a.retries, &progress);
    if res.verdict == Verdict::Noisy {
        p.notes.push(
            "clock: the machine was too busy for the two methods to agree; the figures are unreliable".into(),
        );
    }
    p.clock = Some(res);
    p.raw_clock = Some(raw);
    emit(&p, a.common.json.as_deref())?;
    save_if_requested(&p, a.common.save)?;
    Ok(())
}
