//! Time your own code with hwcal's harness, lmbench `BENCH` style.
//!
//! cargo run --release -p hwcal-harness --example time_my_code
use hwcal_harness::{fmt_time, mb_per_sec, Bench};

fn main() {
    let data: Vec<u64> = (0..4096).collect();
    // Minimum (capability) time of one call, cycles from the clock measured
    // alongside each sample.
    let est = Bench::new().run(|| {
        std::hint::black_box(std::hint::black_box(&data).iter().sum::<u64>());
    });
    let bytes = (data.len() * 8) as f64;
    println!(
        "sum of 4096 u64: {} ({} cycles, {:.0} MB/s), {} samples, verdict {}",
        fmt_time(est.ns()),
        est.cycles().map_or("n/a".into(), |c| format!("{c:.0}")),
        mb_per_sec(bytes, est.ns()),
        est.samples.len(),
        est.verdict.as_str()
    );
    // A variable operation: median with spread.
    let est = Bench::new().median().run(|| {
        std::hint::black_box(std::fs::metadata("/").ok());
    });
    let s = est.ns_spread();
    println!(
        "stat(\"/\"): median {} (MAD {}, min {}), verdict {}",
        fmt_time(est.ns()),
        fmt_time(s.mad),
        fmt_time(s.min),
        est.verdict.as_str()
    );
}
