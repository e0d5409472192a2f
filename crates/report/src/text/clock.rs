//! The clock block of the terminal summary: the core clock with its range,
//! the GCD estimate and the TSC (none on Arm).

use crate::format::noisy_mark;
use hwcal_model::*;
use std::fmt::Write;

pub fn clock(c: &ClockResult) -> String {
    clock_for(c, true)
}

/// The clock section; the TSC line only where the machine has one
/// (`x86`) or a TSC rate was recorded.
pub(crate) fn clock_for(c: &ClockResult, x86: bool) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "clock:{}", noisy_mark(c.verdict));
    let ci = c
        .core_mhz_ci95
        .map_or(String::new(), |[a, b]| format!("95% {a:.1}–{b:.1}, "));
    let _ = writeln!(
        s,
        "  core        {:8.1} MHz   ({ci}min {:.1}, max {:.1} over the run)",
        c.core_mhz, c.core_mhz_min, c.core_mhz_max
    );
    let _ = writeln!(s, "  add chain   {:8.1} MHz", c.chain_mhz);
    match c.gcd_mhz {
        Some(g) => {
            let _ = writeln!(
                s,
                "  mhz GCD     {:8.1} MHz   ({} of {} batches accepted; methods agree within {:.2}%)",
                g,
                c.gcd_rounds_accepted,
                c.gcd_rounds_attempted,
                c.agreement_pct.unwrap_or(f64::NAN)
            );
        }
        None => {
            let _ = writeln!(
                s,
                "  mhz GCD          n/a    ({} of {} batches accepted)",
                c.gcd_rounds_accepted, c.gcd_rounds_attempted
            );
        }
    }
    match c.tsc_mhz {
        Some(t) => {
            let _ = writeln!(
                s,
                "  TSC         {:8.1} MHz   (core/TSC = {:.3})",
                t,
                c.core_mhz / t
            );
        }
        None if x86 => {
            let _ = writeln!(s, "  TSC              n/a");
        }
        None => {}
    }
    let _ = writeln!(s, "  verdict     {}", c.verdict.as_str());
    s
}
