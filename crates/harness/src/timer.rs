//! The fine timer: TSC on x86_64, the generic counter on aarch64,
//! `CLOCK_MONOTONIC_RAW` elsewhere.
//!
//! Method (lmbench 2.0, "mhz: Anatomy of a micro-benchmark", §6): know the
//! clock's resolution and read overhead before timing anything, so that the
//! timing interval can be chosen just long enough for a 1% error. A TSC read
//! costs ~10 ns and resolves sub-ns, so "enough" drops from lmbench's 5–1000 ms
//! to tens of microseconds.
//!
//! The TSC ticks at a fixed rate, independent of the core clock, when the CPU
//! advertises `constant_tsc` and `nonstop_tsc`; only then is it a wall clock.
//! Ticks are converted to ns by timing a ~20 ms spin against `CLOCK_MONOTONIC`.
//!
//! Arm's generic counter (`cntvct_el0`) is a wall clock by architecture, but
//! a coarse one: 25 MHz on Ampere Altra (40 ns ticks) up to 1 GHz from
//! Armv8.6 on. Its rate comes from CNTFRQ_EL0, which firmware sets and
//! sometimes sets wrong, so the register is cross-checked against
//! `CLOCK_MONOTONIC_RAW` and the measured rate wins where they disagree by
//! more than 1%. An `isb` before each read keeps the read from being
//! executed ahead of the code it is meant to follow (the counter read is not
//! ordered by the pipeline, as `lfence` orders `rdtsc`). And a timed block
//! must span at least [`MIN_BLOCK_TICKS`] ticks, so one tick of quantisation
//! stays under 0.01% of it: 400 µs with 40 ns ticks.

use nix::time::{clock_gettime, ClockId};
use std::sync::OnceLock;

/// Which hardware or OS counter the timer reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerKind {
    /// x86 time-stamp counter (invariant), serialised with `lfence`.
    Tsc,
    /// aarch64 virtual counter `cntvct_el0`.
    Cntvct,
    /// `clock_gettime(CLOCK_MONOTONIC_RAW)`, in ns.
    MonotonicRaw,
}

impl TimerKind {
    pub fn name(self) -> &'static str {
        match self {
            TimerKind::Tsc => "tsc",
            TimerKind::Cntvct => "cntvct",
            TimerKind::MonotonicRaw => "clock_monotonic_raw",
        }
    }
}

/// A calibrated timer. Obtain it with [`Timer::get`].
#[derive(Debug, Clone)]
pub struct Timer {
    kind: TimerKind,
    ns_per_tick: f64,
    overhead_ticks: f64,
    resolution_ns: f64,
    /// CNTFRQ_EL0 in MHz where it disagreed with the measured rate.
    stated_mhz: Option<f64>,
}

/// ns per tick of the generic counter, from CNTFRQ_EL0 (`stated_hz`) and the
/// rate measured against `CLOCK_MONOTONIC_RAW` (`measured_ns_per_tick`):
/// the register where the two agree within 1% (it is exact), else the
/// measured rate, with the register's claim (MHz) returned to be recorded.
pub fn choose_counter_rate(stated_hz: u64, measured_ns_per_tick: f64) -> (f64, Option<f64>) {
    let measured_ok = measured_ns_per_tick.is_finite() && measured_ns_per_tick > 0.0;
    if stated_hz == 0 {
        return (if measured_ok { measured_ns_per_tick } else { 1.0 }, None);
    }
    let stated = 1e9 / stated_hz as f64;
    if !measured_ok || (measured_ns_per_tick / stated - 1.0).abs() <= 0.01 {
        (stated, None)
    } else {
        (measured_ns_per_tick, Some(stated_hz as f64 / 1e6))
    }
}

static TIMER: OnceLock<Timer> = OnceLock::new();

fn mono_ns(id: ClockId) -> u64 {
    // CLOCK_MONOTONIC(_RAW) cannot fail on Linux for a valid clock id.
    let ts = clock_gettime(id).unwrap_or(nix::sys::time::TimeSpec::new(0, 0));
    ts.tv_sec() as u64 * 1_000_000_000 + ts.tv_nsec() as u64
}

/// Ticks a timed block spans at least, so a one-tick quantisation error is
/// at most 10^-4 of it (a coarse Arm counter needs long blocks; a TSC never
/// notices the floor).
pub const MIN_BLOCK_TICKS: f64 = 1e4;

/// Whether /proc/cpuinfo advertises an invariant TSC (never off x86: there
/// is no TSC, and under QEMU user mode /proc/cpuinfo is the host's).
pub fn invariant_tsc() -> bool {
    if !cfg!(target_arch = "x86_64") {
        return false;
    }
    let Ok(s) = std::fs::read_to_string("/proc/cpuinfo") else {
        return false;
    };
    let flags = s.lines().find(|l| l.starts_with("flags")).unwrap_or_default();
    let has = |f: &str| flags.split_whitespace().any(|w| w == f);
    has("constant_tsc") && has("nonstop_tsc")
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn read_tsc() -> u64 {
    let lo: u32;
    let hi: u32;
    // SAFETY: lfence and rdtsc only read the time-stamp counter into edx:eax;
    // they touch no memory. The leading lfence waits until earlier
    // instructions complete, the trailing one keeps later ones from starting
    // before the read, so the read brackets exactly the code between reads.
    unsafe {
        core::arch::asm!(
            "lfence",
            "rdtsc",
            "lfence",
            out("eax") lo,
            out("edx") hi,
            options(nostack, nomem, preserves_flags)
        );
    }
    ((hi as u64) << 32) | lo as u64
}

#[cfg(target_arch = "aarch64")]
#[inline(always)]
fn read_cntvct() -> u64 {
    let v: u64;
    // SAFETY: isb + mrs of the virtual counter register + isb only read a
    // register that EL0 may read on Linux; no memory is touched. The leading
    // isb makes earlier instructions complete before the read (the counter
    // read is otherwise free to run early), the trailing one keeps later
    // instructions from starting before it, as lfence brackets rdtsc.
    unsafe {
        core::arch::asm!(
            "isb",
            "mrs {v}, cntvct_el0",
            "isb",
            v = out(reg) v,
            options(nostack, nomem, preserves_flags)
        );
    }
    v
}

#[cfg(target_arch = "aarch64")]
fn cntfrq() -> u64 {
    let v: u64;
    // SAFETY: reading cntfrq_el0 is permitted at EL0 and touches no memory.
    unsafe {
        core::arch::asm!("mrs {v}, cntfrq_el0", v = out(reg) v, options(nostack, nomem, preserves_flags));
    }
    v
}

impl Timer {
    /// The process-wide calibrated timer (calibrated on first use, ~25 ms).
    pub fn get() -> &'static Timer {
        TIMER.get_or_init(Timer::calibrate)
    }

    fn pick_kind() -> TimerKind {
        if std::env::var_os("HWCAL_TIMER").is_some_and(|v| v == "clock") {
            return TimerKind::MonotonicRaw;
        }
        #[cfg(target_arch = "x86_64")]
        if invariant_tsc() {
            return TimerKind::Tsc;
        }
        #[cfg(target_arch = "aarch64")]
        {
            return TimerKind::Cntvct;
        }
        #[allow(unreachable_code)]
        TimerKind::MonotonicRaw
    }

    fn calibrate() -> Timer {
        let kind = Self::pick_kind();
        let mut t = Timer {
            kind,
            ns_per_tick: 1.0,
            overhead_ticks: 0.0,
            resolution_ns: 1.0,
            stated_mhz: None,
        };
        t.ns_per_tick = match kind {
            TimerKind::MonotonicRaw => 1.0,
            #[cfg(target_arch = "aarch64")]
            TimerKind::Cntvct => {
                let measured = t.calibrate_against(ClockId::CLOCK_MONOTONIC_RAW);
                let (ns, stated) = choose_counter_rate(cntfrq(), measured);
                t.stated_mhz = stated;
                ns
            }
            _ => t.calibrate_against(ClockId::CLOCK_MONOTONIC),
        };
        // Read overhead: the minimum of many back-to-back read pairs is the
        // cost of one read (what a timed block always includes).
        let mut min_delta = u64::MAX;
        let mut min_positive = u64::MAX;
        for _ in 0..2000 {
            let a = t.now();
            let b = t.now();
            let d = b.wrapping_sub(a);
            min_delta = min_delta.min(d);
            if d > 0 {
                min_positive = min_positive.min(d);
            }
        }
        t.overhead_ticks = min_delta as f64;
        // Resolution: a hardware counter advances every tick, so it resolves
        // one tick (back-to-back reads differ by the read cost, not by the
        // resolution). A software clock resolves no better than the smallest
        // non-zero step it shows, nor than what clock_getres advertises.
        t.resolution_ns = match kind {
            TimerKind::MonotonicRaw => {
                let step = if min_positive == u64::MAX { 1 } else { min_positive };
                let adv = nix::time::clock_getres(ClockId::CLOCK_MONOTONIC_RAW)
                    .map(|r| r.tv_sec() as f64 * 1e9 + r.tv_nsec() as f64)
                    .unwrap_or(1.0);
                (step as f64).max(adv)
            }
            _ => t.ns_per_tick,
        };
        t
    }

    /// ns per tick, from a ~20 ms spin timed by both the counter and
    /// `clock` (`CLOCK_MONOTONIC` for the TSC, `CLOCK_MONOTONIC_RAW`, not
    /// slewed by NTP, for checking CNTFRQ_EL0). Each end point is the
    /// (counter, clock) pair with the tightest bracket, so a preemption
    /// between the reads cannot skew it.
    fn calibrate_against(&self, clock: ClockId) -> f64 {
        let pair = || {
            let mut best = (u64::MAX, 0u64, 0u64);
            for _ in 0..16 {
                let a = self.now();
                let m = mono_ns(clock);
                let b = self.now();
                let width = b.wrapping_sub(a);
                if width < best.0 {
                    best = (width, a + width / 2, m);
                }
            }
            (best.1, best.2)
        };
        let (t0, m0) = pair();
        while mono_ns(clock) - m0 < 20_000_000 {
            std::hint::spin_loop();
        }
        let (t1, m1) = pair();
        let ticks = t1.wrapping_sub(t0) as f64;
        if ticks <= 0.0 {
            1.0
        } else {
            (m1 - m0) as f64 / ticks
        }
    }

    /// Current counter value, in ticks. Serialised: code before the call has
    /// completed, code after has not started.
    #[inline(always)]
    pub fn now(&self) -> u64 {
        match self.kind {
            #[cfg(target_arch = "x86_64")]
            TimerKind::Tsc => read_tsc(),
            #[cfg(target_arch = "aarch64")]
            TimerKind::Cntvct => read_cntvct(),
            _ => mono_ns(ClockId::CLOCK_MONOTONIC_RAW),
        }
    }

    pub fn kind(&self) -> TimerKind {
        self.kind
    }

    pub fn ns_per_tick(&self) -> f64 {
        self.ns_per_tick
    }

    /// Convert a tick count to ns.
    #[inline]
    pub fn ticks_to_ns(&self, ticks: f64) -> f64 {
        ticks * self.ns_per_tick
    }

    /// Elapsed ns between two reads, with the cost of one read removed.
    #[inline]
    pub fn elapsed_ns(&self, start: u64, end: u64) -> f64 {
        let d = end.wrapping_sub(start) as f64 - self.overhead_ticks;
        d * self.ns_per_tick
    }

    /// Cost of one timer read, ns.
    pub fn overhead_ns(&self) -> f64 {
        self.overhead_ticks * self.ns_per_tick
    }

    /// Smallest step the timer resolves, ns.
    pub fn resolution_ns(&self) -> f64 {
        self.resolution_ns
    }

    /// TSC frequency in MHz, when the timer is the TSC.
    pub fn tsc_mhz(&self) -> Option<f64> {
        (self.kind == TimerKind::Tsc).then(|| 1000.0 / self.ns_per_tick)
    }

    /// The generic counter's rate in use, MHz, when the timer is `cntvct`.
    pub fn counter_mhz(&self) -> Option<f64> {
        (self.kind == TimerKind::Cntvct).then(|| 1000.0 / self.ns_per_tick)
    }

    /// What CNTFRQ_EL0 stated, MHz, where it disagreed with the measured
    /// rate (and was not used).
    pub fn counter_stated_mhz(&self) -> Option<f64> {
        self.stated_mhz
    }

    /// The shortest timed block: [`MIN_BLOCK_TICKS`] ticks of this timer.
    pub fn min_block_ns(&self) -> f64 {
        MIN_BLOCK_TICKS * self.resolution_ns
    }

    /// The shortest interval whose timing error (resolution plus the jitter
    /// of one read) stays under `max_error` (e.g. 0.01 for lmbench's 1%).
    /// Floored at 10 µs: shorter blocks are dominated by pipeline effects at
    /// the edges rather than by the clock.
    pub fn enough_ns(&self, max_error: f64) -> f64 {
        let err = self.resolution_ns + self.overhead_ns();
        (err / max_error.max(1e-6)).max(10_000.0).max(self.min_block_ns())
    }

    /// Nanoseconds on `CLOCK_MONOTONIC`, for coarse wall-clock budgets.
    pub fn wall_ns() -> u64 {
        mono_ns(ClockId::CLOCK_MONOTONIC)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timer_is_monotonic_and_calibrated() {
        let t = Timer::get();
        assert!(t.ns_per_tick() > 0.0 && t.ns_per_tick().is_finite());
        let a = t.now();
        let w0 = Timer::wall_ns();
        while Timer::wall_ns() - w0 < 2_000_000 {}
        let b = t.now();
        let ns = t.elapsed_ns(a, b);
        // 2 ms of spinning measured by the counter: broad bounds only.
        assert!(ns > 1_000_000.0 && ns < 1_000_000_000.0, "{ns}");
        assert!(t.overhead_ns() >= 0.0 && t.overhead_ns() < 100_000.0);
        assert!(t.resolution_ns() > 0.0);
        assert!(t.enough_ns(0.01) >= 10_000.0);
        assert!(t.enough_ns(0.01) >= t.min_block_ns());
    }

    #[test]
    fn counter_frequency_register_is_checked() {
        // Ampere Altra: 25 MHz, 40 ns ticks, measured within noise.
        assert_eq!(choose_counter_rate(25_000_000, 40.1), (40.0, None));
        // A register claiming 100 MHz on a 25 MHz counter loses.
        assert_eq!(choose_counter_rate(100_000_000, 40.0), (40.0, Some(100.0)));
        // No measurement: the register; no register: the measurement.
        assert_eq!(choose_counter_rate(1_000_000_000, f64::NAN), (1.0, None));
        assert_eq!(choose_counter_rate(0, 16.0), (16.0, None));
    }
}
