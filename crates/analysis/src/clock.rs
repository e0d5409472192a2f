//! From the clock probe's raw timings to core MHz by two methods.
//!
//! Per batch (a few interleaved rounds, a few ms): the chain's MHz from the
//! difference of the minimum 2N and N block times (fixed costs cancel), and
//! the GCD of the nine expressions' minima. The mhz acceptance test — the GCD
//! from the minima and from the next-to-minima agree within 1% or 1 MHz —
//! decides whether a batch counts. The two methods are compared batch by
//! batch, because the clock drifts between batches.

use crate::gcd::gcd_robust;
use crate::stats::{median, min_and_next};
use hwcal_model::{ClockRaw, ClockResult, ExpressionCycles, Verdict};

/// Agreement (relative) required between the min and next-min GCD.
pub const ACCEPT_REL: f64 = 0.01;
/// Agreement (absolute MHz) that is always accepted.
pub const ACCEPT_ABS_MHZ: f64 = 1.0;
/// Chain and GCD must agree within this (percent) for an `ok` verdict.
pub const AGREE_PCT: f64 = 1.0;

/// Per-batch figures.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchClock {
    pub chain_mhz: Option<f64>,
    pub gcd_mhz: Option<f64>,
    pub gcd_next_mhz: Option<f64>,
    pub accepted: bool,
}

/// The chain's clock in one batch. Fixed per-block costs (call, loop entry)
/// are estimated N/2N-style as the median over rounds of `2·t(N) − t(2N)`
/// (clamped at zero: a negative cost is noise), then removed from the fastest
/// 2N block. Taking the fastest block, like the expressions' minima, makes
/// both methods read the clock at the batch's fastest moment; a difference
/// of two separate minima would mix two moments and read low while the
/// clock drifts.
fn chain_mhz(adds: u64, n: &[f64], n2: &[f64]) -> Option<f64> {
    let fixed: Vec<f64> = n
        .iter()
        .zip(n2)
        .map(|(a, b)| 2.0 * a - b)
        .filter(|v| v.is_finite())
        .collect();
    let fixed = median(&fixed).max(0.0);
    let best = n2
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .fold(f64::INFINITY, f64::min);
    let d = best - fixed;
    (d.is_finite() && d > 0.0).then(|| 2.0 * adds as f64 / d * 1000.0)
}

/// Analyse one batch.
pub fn analyze_batch(raw: &ClockRaw, b: &hwcal_model::ClockBatch) -> BatchClock {
    let chain = chain_mhz(raw.chain_adds, &b.chain_n_ns, &b.chain_2n_ns);
    let pairs: Vec<(f64, f64)> = b.expr_ns.iter().filter_map(|s| min_and_next(s)).collect();
    let mins: Vec<f64> = pairs.iter().map(|p| p.0).collect();
    let nexts: Vec<f64> = pairs.iter().map(|p| p.1).collect();
    let gcd = gcd_robust(&mins).map(|t| 1000.0 / t);
    let gcd_next = gcd_robust(&nexts).map(|t| 1000.0 / t);
    let accepted = match (gcd, gcd_next) {
        (Some(a), Some(b)) => {
            let d = (a - b).abs();
            d <= ACCEPT_ABS_MHZ || d <= ACCEPT_REL * a.max(b)
        }
        _ => false,
    };
    BatchClock {
        chain_mhz: chain,
        gcd_mhz: gcd,
        gcd_next_mhz: gcd_next,
        accepted,
    }
}

/// The whole clock result from raw data.
pub fn analyze(raw: &ClockRaw) -> ClockResult {
    let batches: Vec<BatchClock> = raw.batches.iter().map(|b| analyze_batch(raw, b)).collect();
    let chain: Vec<f64> = batches.iter().filter_map(|b| b.chain_mhz).collect();
    let accepted: Vec<&BatchClock> = batches.iter().filter(|b| b.accepted).collect();
    let gcd: Vec<f64> = accepted.iter().filter_map(|b| b.gcd_mhz).collect();
    let agree: Vec<f64> = accepted
        .iter()
        .filter_map(|b| match (b.gcd_mhz, b.chain_mhz) {
            (Some(g), Some(c)) if c > 0.0 => Some(100.0 * (g - c).abs() / c),
            _ => None,
        })
        .collect();
    let core = median(&chain);
    // The chain over the same batches as the GCD, so the two printed figures
    // are comparable (the clock differs from batch to batch).
    let chain_accepted: Vec<f64> = accepted.iter().filter_map(|b| b.chain_mhz).collect();
    let chain_mhz = if chain_accepted.is_empty() {
        core
    } else {
        median(&chain_accepted)
    };
    let gcd_mhz = (!gcd.is_empty()).then(|| median(&gcd));
    let agreement_pct = (!agree.is_empty()).then(|| median(&agree));
    let have_exprs = !raw.expressions.is_empty();
    // A batch fails the min/next-min test whenever the clock stepped during
    // its few milliseconds (an Intel core's clock moves in 100 MHz steps,
    // multiples of its bus clock),
    // so a quarter of the batches (and at least three) is enough evidence;
    // the per-batch agreement between the methods is what guards the figure.
    let enough_accepted = accepted.len() >= 3 && accepted.len() * 4 >= batches.len().max(1);
    let ok = !chain.is_empty()
        && core > 0.0
        && (!have_exprs
            || (enough_accepted
                && agreement_pct.is_some_and(|a| a <= AGREE_PCT)
                && gcd_mhz.is_some_and(|g| 100.0 * (g - chain_mhz).abs() / chain_mhz <= AGREE_PCT)));
    // Cycles per expression: the fastest instance over all batches, each
    // converted with its own batch's chain clock.
    let expression_cycles = raw
        .expressions
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let mut best_ns = f64::INFINITY;
            let mut best_cyc = f64::NAN;
            for (b, bc) in raw.batches.iter().zip(&batches) {
                let Some(m) = b.expr_ns.get(i).and_then(|s| min_and_next(s)).map(|p| p.0) else {
                    continue;
                };
                if m < best_ns {
                    best_ns = m;
                    best_cyc = bc.chain_mhz.map_or(f64::NAN, |c| m * c / 1000.0);
                }
            }
            ExpressionCycles {
                expression: text.clone(),
                ns: best_ns,
                cycles: best_cyc,
            }
        })
        .collect();
    ClockResult {
        core_mhz: core,
        core_mhz_min: chain.iter().copied().fold(f64::INFINITY, f64::min).min(core),
        core_mhz_max: chain.iter().copied().fold(0.0, f64::max),
        chain_mhz,
        gcd_mhz,
        agreement_pct,
        tsc_mhz: raw.tsc_mhz,
        verdict: if ok { Verdict::Ok } else { Verdict::Noisy },
        gcd_rounds_accepted: accepted.len() as u32,
        gcd_rounds_attempted: batches.len() as u32,
        expression_cycles,
        duration_ms: raw.duration_ms,
        // The batches are spread over the measurement, so their order
        // statistics bound the median clock whatever the clock's
        // distribution (turbo steps, a throttled neighbour).
        core_mhz_ci95: crate::stats::median_ci95(&chain).map(|(a, b)| [a, b]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwcal_model::ClockBatch;

    fn synth(mhz_per_batch: &[f64], noise: f64) -> ClockRaw {
        let cycles = [5.0, 2.0, 2.0, 1.0, 2.0, 2.0, 2.0, 3.0, 3.0];
        let adds = 100_000u64;
        let mut k = 0usize;
        let mut jit = || {
            k += 1;
            let x = ((k as f64) * 78.233).sin() * 43758.5453;
            1.0 + (x - x.floor()) * noise
        };
        let batches = mhz_per_batch
            .iter()
            .map(|&mhz| {
                let tick = 1000.0 / mhz;
                ClockBatch {
                    expr_ns: cycles
                        .iter()
                        .map(|c| (0..5).map(|_| c * tick * jit()).collect())
                        .collect(),
                    chain_n_ns: (0..5).map(|_| 200.0 + adds as f64 * tick * jit()).collect(),
                    chain_2n_ns: (0..5).map(|_| 200.0 + 2.0 * adds as f64 * tick * jit()).collect(),
                }
            })
            .collect();
        ClockRaw {
            expressions: (0..9).map(|i| format!("e{i}")).collect(),
            chain_adds: adds,
            batches,
            tsc_mhz: Some(2000.0),
            duration_ms: 10.0,
        }
    }

    #[test]
    fn drifting_clock_is_tracked_and_methods_agree() {
        let raw = synth(&[2200.0, 2500.0, 3000.0, 2800.0, 2600.0], 0.0005);
        let r = analyze(&raw);
        assert_eq!(r.verdict, Verdict::Ok);
        assert!((r.core_mhz - 2600.0).abs() < 20.0, "{}", r.core_mhz);
        assert!(r.core_mhz_min < 2210.0 && r.core_mhz_max > 2990.0);
        assert!(r.agreement_pct.unwrap() < 0.5);
        let g = r.gcd_mhz.unwrap();
        assert!((g - 2600.0).abs() < 30.0, "{g}");
        let p = &r.expression_cycles[0];
        assert!((p.cycles - 5.0).abs() < 0.1, "{}", p.cycles);
    }

    #[test]
    fn heavy_noise_is_flagged_not_reported_as_ok() {
        let raw = synth(&[2500.0; 6], 0.4);
        let r = analyze(&raw);
        assert_eq!(r.verdict, Verdict::Noisy, "{r:?}");
    }

    #[test]
    fn no_data_is_noisy() {
        let r = analyze(&ClockRaw::default());
        assert_eq!(r.verdict, Verdict::Noisy);
    }
}
