//! The core-clock reference: a dependent chain of single-cycle integer adds.
//!
//! Every add needs the result of the one before, and a register-register add
//! has a latency of exactly one core cycle on every x86_64 and aarch64 core
//! in use, so `adds / time` *is* the core clock. Register operands (not
//! immediates) keep rename-stage tricks such as Golden Cove's immediate
//! folding from collapsing the chain; the loop counter is a separate,
//! independent chain that the out-of-order core runs alongside for free.
//!
//! On a VM the core clock moves between ~2.2 and 3.0 GHz from one second to
//! the next while the TSC stays at a fixed rate, so a cycle figure must use a
//! clock reading taken at the same moment as the sample: [`core_mhz_now`] is
//! cheap enough (~2–4 µs) to bracket every timed block.

use crate::timer::Timer;

/// Adds per loop iteration of the chain kernel.
pub const ADDS_PER_ITER: u64 = 100;

/// Run `iters × 100` dependent adds. Returns the chain's end value so the
/// work cannot be discarded.
#[inline(never)]
pub fn add_chain(iters: u64) -> u64 {
    if iters == 0 {
        return 0;
    }
    #[cfg(target_arch = "x86_64")]
    {
        let mut acc: u64 = 1;
        let step: u64 = 1;
        // SAFETY: pure register arithmetic on three general-purpose registers
        // declared as operands; no memory access, no stack use. The counter
        // is at least 1 so `dec`/`jnz` terminates.
        unsafe {
            core::arch::asm!(
                "2:",
                ".rept 100",
                "add {acc}, {step}",
                ".endr",
                "dec {n}",
                "jnz 2b",
                acc = inout(reg) acc,
                step = in(reg) step,
                n = inout(reg) iters => _,
                options(nostack, nomem)
            );
        }
        acc
    }
    #[cfg(target_arch = "aarch64")]
    {
        let mut acc: u64 = 1;
        let step: u64 = 1;
        // SAFETY: register-only arithmetic on declared operands; the counter
        // is at least 1 so the loop terminates.
        unsafe {
            core::arch::asm!(
                "2:",
                ".rept 100",
                "add {acc}, {acc}, {step}",
                ".endr",
                "subs {n}, {n}, #1",
                "b.ne 2b",
                acc = inout(reg) acc,
                step = in(reg) step,
                n = inout(reg) iters => _,
                options(nostack, nomem)
            );
        }
        acc
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        // No guaranteed single-cycle chain without asm; callers check
        // `chain_supported()` first.
        let mut acc = 1u64;
        for _ in 0..iters * ADDS_PER_ITER {
            acc = std::hint::black_box(acc.wrapping_add(1));
        }
        acc
    }
}

/// Whether [`add_chain`] is a true one-cycle-per-add chain on this target.
pub const fn chain_supported() -> bool {
    cfg!(any(target_arch = "x86_64", target_arch = "aarch64"))
}

/// Time `iters × 100` adds once. Returns (ns, MHz).
pub fn time_chain(timer: &Timer, iters: u64) -> (f64, f64) {
    let t0 = timer.now();
    std::hint::black_box(add_chain(iters));
    let t1 = timer.now();
    let ns = timer.elapsed_ns(t0, t1);
    let adds = (iters * ADDS_PER_ITER) as f64;
    let mhz = if ns > 0.0 { adds / ns * 1000.0 } else { f64::NAN };
    (ns, mhz)
}

/// Iterations of the chain used for one clock reading alongside a sample
/// (6 000 adds: ~2.4 µs at 2.5 GHz, long enough that a TSC read's jitter is
/// below 0.5%).
pub const PROBE_ITERS: u64 = 60;

/// Ticks one clock reading spans at least: a quantisation error of one
/// tick stays under 0.05% of the reading.
pub const PROBE_MIN_TICKS: f64 = 2000.0;

/// Iterations of the chain for one clock reading with `timer`:
/// [`PROBE_ITERS`], or more where the timer is coarse, so the chain spans
/// [`PROBE_MIN_TICKS`] ticks even on a core as fast as 5 GHz (a 25 MHz Arm
/// counter needs ~400 000 adds; a TSC keeps the 6 000).
pub fn probe_iters(timer: &Timer) -> u64 {
    let adds = PROBE_MIN_TICKS * timer.resolution_ns() * 5.0;
    PROBE_ITERS.max((adds / ADDS_PER_ITER as f64).ceil() as u64)
}

/// The core clock right now, in MHz, from one short chain (best of two, so a
/// single interrupt does not spoil the reading). NaN if not measurable.
pub fn core_mhz_now(timer: &Timer) -> f64 {
    if !chain_supported() {
        return f64::NAN;
    }
    let iters = probe_iters(timer);
    let (_, a) = time_chain(timer, iters);
    let (_, b) = time_chain(timer, iters);
    a.max(b)
}

/// Spin until the core clock has settled: cores ramp their clock over tens
/// of ms after a period of idleness (the P-state governor's sampling period
/// and the voltage ramp, up to ~100 ms). Stops when
/// three consecutive 1 ms readings agree within 1%, or after `max_ms`.
/// Returns the last reading (MHz) and the time spent (ms).
pub fn warm_up(timer: &Timer, max_ms: u64) -> (f64, f64) {
    let start = Timer::wall_ns();
    let mut last: Vec<f64> = Vec::new();
    loop {
        // ~1 ms of adds per reading.
        let (_, mhz) = time_chain(timer, 25_000);
        last.push(mhz);
        let elapsed_ms = (Timer::wall_ns() - start) as f64 / 1e6;
        if last.len() >= 3 {
            let w = &last[last.len() - 3..];
            let lo = w.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = w.iter().copied().fold(0.0, f64::max);
            if lo > 0.0 && (hi - lo) / lo < 0.01 {
                return (mhz, elapsed_ms);
            }
        }
        if elapsed_ms >= max_ms as f64 || !chain_supported() {
            return (mhz, elapsed_ms);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_gives_a_plausible_clock() {
        let t = Timer::get();
        assert_eq!(add_chain(3), 301);
        if chain_supported() {
            let mhz = (0..20).map(|_| core_mhz_now(t)).fold(0.0, f64::max);
            // Broad physical bounds: 100 MHz .. 10 GHz.
            assert!(mhz > 100.0 && mhz < 10_000.0, "{mhz}");
        }
    }
}
