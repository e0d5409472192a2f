//! Validation aid: one long, independent random chase over a huge-page
//! buffer (default 256 MiB), timed as a whole, best of 5. `hwcal cache`'s
//! memory latency should agree with it within a few percent.
//!
//! `cargo run --release -p hwcal-probes --example long_chase [MiB] [loads]`

use hwcal_probes::buffer::{Backing, Buffer};
use hwcal_probes::cache::line_cycle;
use hwcal_probes::chase::chase;
use hwcal_stats::SplitMix64;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let mib: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(256);
    let loads: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(4_000_000);
    if let Some(cpu) = hwcal_harness::pin::default_cpu() {
        hwcal_harness::pin::pin_to(cpu).expect("pin");
    }
    let buf = Buffer::new(mib << 20, Backing::Thp).expect("buffer");
    let (start, _) = line_cycle(&buf, 0, mib << 20, &mut SplitMix64::new(99)).expect("chain");
    // SAFETY: `start` is a slot of the cycle just linked in `buf`, which
    // lives until the end of main; the chase stays on that cycle.
    let mut p = unsafe { chase(start, 1 << 20) };
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let t = Instant::now();
        // SAFETY: as above.
        p = unsafe { chase(p, loads) };
        best = best.min(t.elapsed().as_nanos() as f64 / loads as f64);
    }
    std::hint::black_box(p);
    println!(
        "{mib} MiB, huge pages {:.0}%: {best:.2} ns per load (best of 5 × {loads} loads)",
        buf.huge_fraction() * 100.0
    );
}
