//! `hwcal validate`: accuracy shown by measurement, not asserted in tests.
//!
//! `validate clock` runs the clock probe several times in a row and, right
//! before and after each run, a long independent reference: back-to-back
//! 100 µs dependent-add blocks for `--reference-ms` (short enough that most
//! blocks see no timer interrupt; an interrupted block reads low). A run
//! passes when its two methods agree within 1% and its core MHz lies inside
//! the reference's range, taken as its 10th percentile to its maximum over
//! the before and after windows (the low tail is interrupted blocks): the
//! clock drifts, so a figure outside what the core actually ran at moments
//! before and after would be wrong.

use crate::cli::{ValidateArgs, ValidateWhat};
use crate::common::{pin, Progress};
use anyhow::Result;
use hwcal_harness::{clockref, stats, Timer};

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

pub fn run(a: ValidateArgs) -> Result<()> {
    match a.what {
        ValidateWhat::Clock => clock(&a),
    }
}

fn clock(a: &ValidateArgs) -> Result<()> {
    let progress = Progress::new(a.quiet);
    let cpu = pin(&a.common())?;
    let timer = Timer::get();
    clockref::warm_up(timer, 300);
    crate::outln!(
        "validate clock: {} runs, reference {} ms of 100 µs add-chain blocks before and after each, pinned to {}",
        a.runs,
        a.reference_ms,
        cpu.map_or("no CPU".into(), |c| format!("CPU {c}"))
    );
    crate::outln!(
        "{:>3}  {:>9} {:>9} {:>9} {:>7}  {:>9} {:>9} {:>9}  {:>6} {:>6}  verdict",
        "run",
        "core",
        "chain",
        "gcd",
        "agree%",
        "ref p10",
        "ref med",
        "ref max",
        "agree",
        "in-ref"
    );
    let (mut n_agree, mut n_inref, mut n_ok) = (0, 0, 0);
    for i in 1..=a.runs {
        let before = reference(timer, a.reference_ms);
        let t = std::time::Instant::now();
        let (r, _) = crate::cmd::clock::measure(
            hwcal_probes::clock::DEFAULT_BATCHES as u32,
            3,
            &Progress::new(true),
        );
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let after = reference(timer, a.reference_ms);
        let all: Vec<f64> = before.iter().chain(&after).copied().collect();
        let s = stats::spread(&all);
        let p10 = stats::quantile(&all, 0.10);
        let agree = r.agreement_pct.is_some_and(|p| p <= 1.0);
        let inref = r.core_mhz >= p10 && r.core_mhz <= s.max;
        n_agree += agree as u32;
        n_inref += inref as u32;
        n_ok += (r.verdict == hwcal_model::Verdict::Ok) as u32;
        crate::outln!(
            "{:>3}  {:>9.1} {:>9.1} {:>9} {:>7} {:>9.1} {:>9.1} {:>9.1}  {:>6} {:>6}  {} ({ms:.0} ms)",
            i,
            r.core_mhz,
            r.chain_mhz,
            r.gcd_mhz.map_or("n/a".into(), |g| format!("{g:.1}")),
            r.agreement_pct.map_or("n/a".into(), |p| format!("{p:.2}")),
            p10,
            s.median,
            s.max,
            if agree { "yes" } else { "NO" },
            if inref { "yes" } else { "NO" },
            r.verdict.as_str()
        );
        progress.say(&format!("validate: run {i} of {}", a.runs));
    }
    crate::outln!(
        "summary: methods agree within 1% in {n_agree}/{n} runs; core MHz inside the reference range in {n_inref}/{n}; verdict ok in {n_ok}/{n}",
        n = a.runs
    );
    Ok(())
}
