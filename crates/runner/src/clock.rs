//! The clock probe: the core clock by lmbench mhz's GCD method and by a
//! dependent add chain, measured interleaved, plus the TSC rate.

use crate::probe::{Plan, ProbeEntry, Progress};
use crate::Result;
use hwcal_harness::{clockref, Timer};
use hwcal_model::{ClockRaw, ClockResult, Profile, Verdict};
use hwcal_probes::clock::{collect, ClockSampling, DEFAULT_BATCHES};

pub const ENTRY: ProbeEntry = ProbeEntry {
    id: "clock",
    description: "core clock (mhz GCD + add chain), TSC rate",
    opt_in: false,
    typical_s: 0.3,
    reads: &[],
    plan: |_, _| {
        Some(Box::new(Clock {
            batches: DEFAULT_BATCHES as u32,
            attempts: 3,
        }))
    },
    analyze: |p| {
        let Some(raw) = &p.raw_clock else { return false };
        p.clock = Some(hwcal_analysis::clock::analyze(raw));
        true
    },
};

/// The clock probe's plan: batches per attempt, attempts while noisy.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    pub batches: u32,
    pub attempts: u32,
}

impl Plan for Clock {
    fn run(&self, _hw: &dyn crate::points::Hardware, progress: &dyn Progress) -> Result<Profile> {
        let (res, raw) = measure(self.batches, self.attempts, progress);
        Ok(Profile {
            clock: Some(res),
            raw_clock: Some(raw),
            ..Default::default()
        })
    }
}

/// Warm up, then collect and analyse; retry while the verdict is noisy.
pub fn measure(batches: u32, attempts: u32, progress: &dyn Progress) -> (ClockResult, ClockRaw) {
    let timer = Timer::get();
    let (mhz, ms) = clockref::warm_up(timer, 300);
    progress.say(&format!("clock: warmed up in {ms:.0} ms at {mhz:.0} MHz"));
    let plan = ClockSampling {
        batches: batches as usize,
        ..ClockSampling::default()
    };
    let mut best: Option<(ClockResult, ClockRaw)> = None;
    for attempt in 1..=attempts.max(1) {
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
    best.unwrap_or_else(|| {
        let raw = collect(&plan);
        (hwcal_analysis::clock::analyze(&raw), raw)
    })
}
