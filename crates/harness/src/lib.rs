//! hwcal's timing harness: a library to time code accurately on a noisy
//! machine.
//!
//! Follows lmbench 2.0's timing harness (McVoy & Staelin, "mhz: Anatomy of a
//! micro-benchmark", USENIX 1998, §6–7): know the clock's resolution and
//! overhead, run each timed block just long enough, cancel fixed overheads,
//! repeat experiments interleaved and keep the minimum for capability figures,
//! detect when the machine is too noisy. On top of it: a sub-ns timer (TSC),
//! a stopping rule so sampling ends as soon as the estimate is stable, and the
//! core clock measured alongside every sample so that cycle figures stay
//! right while the frequency drifts.
//!
//! ```
//! use hwcal_harness::Bench;
//! let v: Vec<u64> = (0..1000).collect();
//! let est = Bench::new().run(|| { std::hint::black_box(v.iter().sum::<u64>()); });
//! println!("sum: {:.1} ns, {:?} cycles, {}", est.ns(), est.cycles(), est.verdict.as_str());
//! ```
//!
//! The only `unsafe` in this crate reads the hardware counters (timer) and
//! runs the add-chain clock reference, each block with a `SAFETY` note.

pub mod bench;
pub mod clockref;
mod error;
pub mod hist;
pub mod pin;
pub mod platform;
pub mod timer;

/// Statistics (min, median, MAD, stopping rule, regression), shared with the analysis.
pub use hwcal_stats as stats;

pub use bench::{measure, measure_interleaved, Bench, Estimate, Overhead, Policy, Sample, Stat};
pub use error::HarnessError;
pub use hist::Histogram;
pub use timer::{Timer, TimerKind};

/// Describe the harness for the profile, after pinning.
pub fn harness_info(pinned_cpu: Option<usize>) -> hwcal_model::HarnessInfo {
    let t = Timer::get();
    hwcal_model::HarnessInfo {
        timer: t.kind().name().into(),
        timer_resolution_ns: t.resolution_ns(),
        timer_overhead_ns: t.overhead_ns(),
        tsc_mhz: t.tsc_mhz(),
        counter_mhz: t.counter_mhz(),
        counter_stated_mhz: t.counter_stated_mhz(),
        pinned_cpu,
        enough_ns: t.enough_ns(0.01),
    }
}

/// Format a time per operation the way lmbench's `nano()` and `micro()` do,
/// picking the unit: "1.23 ns", "4.56 µs", "7.89 ms".
pub fn fmt_time(ns: f64) -> String {
    if !ns.is_finite() {
        "n/a".into()
    } else if ns.abs() < 1e3 {
        format!("{ns:.2} ns")
    } else if ns.abs() < 1e6 {
        format!("{:.2} µs", ns / 1e3)
    } else if ns.abs() < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

/// Bandwidth like lmbench's `mb()`: bytes moved per operation over the time
/// per operation, in MB/s (10^6 bytes).
pub fn mb_per_sec(bytes_per_op: f64, ns_per_op: f64) -> f64 {
    if ns_per_op > 0.0 {
        bytes_per_op / ns_per_op * 1e3
    } else {
        f64::NAN
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn formatting() {
        assert_eq!(fmt_time(1.234), "1.23 ns");
        assert_eq!(fmt_time(4560.0), "4.56 µs");
        assert_eq!(fmt_time(f64::NAN), "n/a");
        assert_eq!(mb_per_sec(1e6, 1e6), 1000.0);
    }
}
