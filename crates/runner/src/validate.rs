//! `hwcal validate clock`'s measurement: the clock probe run between two
//! long independent references, back-to-back 100 µs dependent-add blocks
//! (short enough that most blocks see no timer interrupt; an interrupted
//! block reads low). A run passes when its two methods agree within 1% and
//! its core MHz lies inside the reference's range, taken as its 10th
//! percentile to its maximum over the before and after windows (the low
//! tail is interrupted blocks): the clock drifts, so a figure outside what
//! the core actually ran at moments before and after would be wrong.

use crate::probe::Silent;
use hwcal_harness::{clockref, stats, Timer};
use hwcal_model::ClockResult;

/// One validated clock run.
#[derive(Debug, Clone)]
pub struct ClockCheck {
    /// The clock probe's result.
    pub result: ClockResult,
    /// How long the probe took, in milliseconds.
    pub ms: f64,
    /// The reference's 10th percentile, median and maximum (MHz).
    pub reference_p10: f64,
    pub reference_median: f64,
    pub reference_max: f64,
    /// The two methods agree within 1%.
    pub agree: bool,
    /// The core MHz lies inside the reference's range.
    pub in_reference: bool,
}

/// Bring the core to its running clock before the first run.
pub fn warm_up() {
    clockref::warm_up(Timer::get(), 300);
}

/// 100 µs chain readings for `ms` milliseconds; returns the MHz readings.
fn reference(timer: &Timer, ms: u64) -> Vec<f64> {
    let start = Timer::wall_ns();
    let mut v = Vec::new();
    while Timer::wall_ns() - start < ms * 1_000_000 {
        let (_, mhz) = clockref::time_chain(timer, 2_500);
        v.push(mhz);
    }
    v
}

/// The clock probe with `reference_ms` of reference before and after.
pub fn clock_run(reference_ms: u64) -> ClockCheck {
    let timer = Timer::get();
    let before = reference(timer, reference_ms);
    let t = std::time::Instant::now();
    let (r, _) = crate::clock::measure(hwcal_probes::clock::DEFAULT_BATCHES as u32, 3, &Silent);
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let after = reference(timer, reference_ms);
    let all: Vec<f64> = before.iter().chain(&after).copied().collect();
    let s = stats::spread(&all);
    let p10 = stats::quantile(&all, 0.10);
    ClockCheck {
        agree: r.agreement_pct.is_some_and(|p| p <= 1.0),
        in_reference: r.core_mhz >= p10 && r.core_mhz <= s.max,
        result: r,
        ms,
        reference_p10: p10,
        reference_median: s.median,
        reference_max: s.max,
    }
}
