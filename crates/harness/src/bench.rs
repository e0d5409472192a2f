//! The sampling engine: auto-sizing, overhead cancellation, interleaved
//! repetitions with a stopping rule, the clock measured alongside every
//! sample, and a noise verdict.
//!
//! This is lmbench 2.0's `BENCH`/`BENCH1` (paper §6–7) rebuilt around a fine
//! timer:
//! * *enough* — a timed block runs just long enough for the timer's error to
//!   be under the target (1% by default): tens of µs with a TSC instead of
//!   lmbench's 5–1000 ms;
//! * *overhead* — one timer read is subtracted from every block; optionally
//!   the fixed cost of entering the workload is cancelled by timing N and 2N
//!   iterations (nanoBench's n/2n);
//! * *repetition* — the outer loop runs over repetitions and the inner loop
//!   over points (as `mhz` collects its data), so a burst of noise smears
//!   across points instead of corrupting one; a point stops being sampled once
//!   its best few samples agree within 0.5%;
//! * *cycles under a drifting clock* — a short dependent-add chain
//!   ([`crate::clockref`]) right before and after each block gives the core
//!   clock of that very sample, and the sample is converted to cycles with it.

use crate::clockref;
use crate::timer::Timer;
use hwcal_model::{Spread, Verdict};
use hwcal_stats as stats;

/// Which statistic is the figure of record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stat {
    /// Capability figures: noise only adds time, the minimum is the truth.
    Min,
    /// Intrinsically variable figures (scheduling, I/O).
    Median,
}

/// How fixed per-block costs are cancelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overhead {
    /// Subtract one timer read (measured at start-up) from every block.
    TimerRead,
    /// Time N and 2N iterations; the difference is N iterations with every
    /// fixed cost (call, set-up, timer) cancelled.
    NTwoN,
}

/// Timing policy. One place for every knob; probes pick a preset and adjust.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Length of one timed block; `None` = the shortest with `max_error`.
    pub enough_ns: Option<f64>,
    /// Target timing error for the automatic `enough`.
    pub max_error: f64,
    /// Samples always taken per point.
    pub min_samples: usize,
    /// Cap on samples per point.
    pub max_samples: usize,
    /// The stopping rule: the `best_k` best samples within `tolerance`.
    pub best_k: usize,
    pub tolerance: f64,
    /// Wall-clock budget for one call (all points), ns.
    pub budget_ns: f64,
    /// Measure the core clock before and after each block.
    pub track_clock: bool,
    pub stat: Stat,
    pub overhead: Overhead,
    /// Fixed iteration count per block instead of auto-sizing.
    pub iters: Option<u64>,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            enough_ns: None,
            max_error: 0.01,
            min_samples: 5,
            max_samples: 60,
            best_k: 3,
            tolerance: 0.005,
            budget_ns: 2e9,
            track_clock: true,
            stat: Stat::Min,
            overhead: Overhead::TimerRead,
            iters: None,
        }
    }
}

impl Policy {
    /// Preset for variable figures: median, more samples, looser agreement.
    pub fn median() -> Self {
        Policy {
            stat: Stat::Median,
            min_samples: 9,
            tolerance: 0.05,
            ..Policy::default()
        }
    }
}

/// One timed block, per iteration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// ns per iteration.
    pub ns: f64,
    /// Core MHz measured alongside (NaN if not tracked).
    pub mhz: f64,
    /// Core cycles per iteration, converted with this sample's own clock.
    pub cycles: f64,
}

/// The result of measuring one point.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// Iterations per timed block.
    pub iters: u64,
    pub samples: Vec<Sample>,
    pub stat: Stat,
    pub verdict: Verdict,
    /// True if the raw figure came out zero or negative (overhead larger than
    /// the work): it is then reported as noisy, never as a valid time.
    pub nonpositive: bool,
    ns_of_record: f64,
}

impl Estimate {
    fn from_samples(
        samples: Vec<Sample>,
        iters: u64,
        stat: Stat,
        stable: bool,
        robust_ns: Option<f64>,
    ) -> Self {
        let ns: Vec<f64> = samples.iter().map(|s| s.ns).collect();
        let v = robust_ns.unwrap_or_else(|| match stat {
            Stat::Min => ns.iter().copied().fold(f64::INFINITY, f64::min),
            Stat::Median => stats::median(&ns),
        });
        let nonpositive = v.is_nan() || v <= 0.0 || v.is_infinite();
        let verdict = if stable && !nonpositive {
            Verdict::Ok
        } else {
            Verdict::Noisy
        };
        Estimate {
            iters,
            samples,
            stat,
            verdict,
            nonpositive,
            ns_of_record: v,
        }
    }

    /// The figure of record, ns per iteration (min or median per policy).
    pub fn ns(&self) -> f64 {
        self.ns_of_record
    }

    /// Spread of ns per iteration over the samples.
    pub fn ns_spread(&self) -> Spread {
        stats::spread(&self.samples.iter().map(|s| s.ns).collect::<Vec<_>>())
    }

    /// The finite values of one field over the samples.
    fn finite(&self, field: fn(&Sample) -> f64) -> Vec<f64> {
        self.samples.iter().map(field).filter(|v| v.is_finite()).collect()
    }

    /// Cycles per iteration of record: each sample converted with its own
    /// clock, then the same statistic as for ns. `None` if not tracked.
    pub fn cycles(&self) -> Option<f64> {
        let c = self.finite(|s| s.cycles);
        if c.is_empty() {
            return None;
        }
        Some(match self.stat {
            Stat::Min => c.iter().copied().fold(f64::INFINITY, f64::min),
            Stat::Median => stats::median(&c),
        })
    }

    /// Spread of cycles per iteration, `None` if the clock was not tracked.
    pub fn cycles_spread(&self) -> Option<Spread> {
        let c = self.finite(|s| s.cycles);
        (!c.is_empty()).then(|| stats::spread(&c))
    }

    /// Core clock over the samples, MHz.
    pub fn mhz_spread(&self) -> Option<Spread> {
        let c = self.finite(|s| s.mhz);
        (!c.is_empty()).then(|| stats::spread(&c))
    }

    /// Per-sample ns (for raw curves).
    pub fn ns_samples(&self) -> Vec<f64> {
        self.samples.iter().map(|s| s.ns).collect()
    }

    /// Per-sample MHz (for raw curves).
    pub fn mhz_samples(&self) -> Vec<f64> {
        self.samples.iter().map(|s| s.mhz).collect()
    }
}

/// Time `f(iters)` once, returning elapsed ns with the timer read removed.
#[inline]
fn time_block(timer: &Timer, f: &mut dyn FnMut(u64), iters: u64) -> f64 {
    let t0 = timer.now();
    f(iters);
    let t1 = timer.now();
    timer.elapsed_ns(t0, t1)
}

/// Find the iteration count whose block lasts about `enough_ns`. Grows by 8×
/// until a block lasts at least an eighth of the target, then scales, with 5%
/// headroom because the estimate is itself noisy (lmbench does the same).
pub fn size_iters(timer: &Timer, f: &mut dyn FnMut(u64), enough_ns: f64) -> u64 {
    let mut iters: u64 = 1;
    loop {
        // Best of two, so one interrupt does not shrink the count.
        let t = time_block(timer, f, iters)
            .min(time_block(timer, f, iters))
            .max(0.0);
        if t >= enough_ns / 8.0 || iters >= 1 << 40 {
            let per = (t / iters as f64).max(1e-3);
            return ((enough_ns * 1.05 / per).ceil() as u64).max(1);
        }
        iters = iters.saturating_mul(8);
    }
}

/// One sample of a point.
fn take_sample(timer: &Timer, f: &mut dyn FnMut(u64), iters: u64, p: &Policy) -> (Sample, f64, f64) {
    let m0 = if p.track_clock {
        clockref::core_mhz_now(timer)
    } else {
        f64::NAN
    };
    let (ns, t_n, t_2n) = match p.overhead {
        Overhead::TimerRead => {
            let t = time_block(timer, f, iters);
            (t / iters as f64, t, f64::NAN)
        }
        Overhead::NTwoN => {
            let a = time_block(timer, f, iters);
            let b = time_block(timer, f, 2 * iters);
            ((b - a) / iters as f64, a, b)
        }
    };
    let m1 = if p.track_clock {
        clockref::core_mhz_now(timer)
    } else {
        f64::NAN
    };
    let mhz = match (m0.is_finite(), m1.is_finite()) {
        (true, true) => 0.5 * (m0 + m1),
        (true, false) => m0,
        (false, true) => m1,
        _ => f64::NAN,
    };
    let cycles = ns * mhz / 1000.0;
    (Sample { ns, mhz, cycles }, t_n, t_2n)
}

fn stable(samples: &[Sample], p: &Policy) -> bool {
    if samples.len() < p.min_samples {
        return false;
    }
    let ns: Vec<f64> = samples.iter().map(|s| s.ns).collect();
    match p.stat {
        Stat::Min => {
            let cyc: Vec<f64> = samples
                .iter()
                .map(|s| s.cycles)
                .filter(|c| c.is_finite())
                .collect();
            // Either unit may be the invariant one: cycles for core-bound
            // work, ns for memory-bound work under a drifting clock.
            stats::best_k_agree(&ns, p.best_k, p.tolerance)
                || (cyc.len() == ns.len() && stats::best_k_agree(&cyc, p.best_k, p.tolerance))
        }
        Stat::Median => {
            let s = stats::spread(&ns);
            s.median > 0.0 && s.mad / s.median <= p.tolerance
        }
    }
}

/// Measure several points interleaved: every round takes one sample of each
/// point that has not yet met the stopping rule. Each closure runs its
/// workload `iters` times.
pub fn measure_interleaved(p: &Policy, points: &mut [&mut dyn FnMut(u64)]) -> Vec<Estimate> {
    let timer = Timer::get();
    // A block shorter than MIN_BLOCK_TICKS of a coarse counter (Arm's 25 MHz
    // generic timer) would carry the counter's quantisation into the figure.
    let enough = p
        .enough_ns
        .unwrap_or_else(|| timer.enough_ns(p.max_error))
        .max(timer.min_block_ns());
    let iters: Vec<u64> = points
        .iter_mut()
        .map(|f| p.iters.unwrap_or_else(|| size_iters(timer, *f, enough)))
        .collect();
    let n = points.len();
    let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); n];
    let mut t_n: Vec<Vec<f64>> = vec![Vec::new(); n];
    let mut t_2n: Vec<Vec<f64>> = vec![Vec::new(); n];
    let mut done = vec![false; n];
    let start = Timer::wall_ns();
    let cap = p.max_samples.max(p.min_samples).max(1);
    for _round in 0..cap {
        for i in 0..n {
            if done[i] {
                continue;
            }
            let (s, a, b) = take_sample(timer, points[i], iters[i], p);
            samples[i].push(s);
            t_n[i].push(a);
            t_2n[i].push(b);
            if stable(&samples[i], p) {
                done[i] = true;
            }
        }
        let over_budget = (Timer::wall_ns() - start) as f64 > p.budget_ns;
        if done.iter().all(|&d| d) || over_budget {
            break;
        }
    }
    (0..n)
        .map(|i| {
            // n/2n under the minimum: the difference of the two minima, since
            // one interrupt in an N block would make a per-sample difference
            // too small and the minimum would select exactly that sample.
            let robust = (p.overhead == Overhead::NTwoN && p.stat == Stat::Min).then(|| {
                let a = t_n[i].iter().copied().fold(f64::INFINITY, f64::min);
                let b = t_2n[i].iter().copied().fold(f64::INFINITY, f64::min);
                (b - a) / iters[i] as f64
            });
            Estimate::from_samples(std::mem::take(&mut samples[i]), iters[i], p.stat, done[i], robust)
        })
        .collect()
}

/// Measure one point.
pub fn measure(p: &Policy, f: &mut dyn FnMut(u64)) -> Estimate {
    measure_interleaved(p, &mut [f])
        .pop()
        .expect("one point in, one estimate out")
}

/// The public, lmbench-`BENCH`-like entry point: time your own code.
///
/// ```
/// use hwcal_harness::Bench;
/// let est = Bench::new().run(|| { std::hint::black_box((1..100u64).sum::<u64>()); });
/// assert!(est.ns() > 0.0);
/// println!("{:.2} ns per call ({})", est.ns(), est.verdict.as_str());
/// ```
#[derive(Debug, Clone, Default)]
pub struct Bench {
    policy: Policy,
}

impl Bench {
    pub fn new() -> Self {
        Bench::default()
    }
    /// Report the median instead of the minimum (variable operations).
    pub fn median(mut self) -> Self {
        let m = Policy::median();
        self.policy.stat = m.stat;
        self.policy.min_samples = m.min_samples;
        self.policy.tolerance = m.tolerance;
        self
    }
    /// Cancel fixed per-block costs by timing N and 2N iterations.
    pub fn n_two_n(mut self) -> Self {
        self.policy.overhead = Overhead::NTwoN;
        self
    }
    /// Length of one timed block (default: the shortest with a 1% error).
    pub fn enough_ns(mut self, ns: f64) -> Self {
        self.policy.enough_ns = Some(ns);
        self
    }
    /// Cap on samples.
    pub fn max_samples(mut self, n: usize) -> Self {
        self.policy.max_samples = n;
        self
    }
    /// Full control.
    pub fn policy(mut self, p: Policy) -> Self {
        self.policy = p;
        self
    }
    /// Time one call of `f` (like lmbench's `BENCH(expr, 0)`).
    pub fn run<F: FnMut()>(&self, mut f: F) -> Estimate {
        measure(&self.policy, &mut |n| {
            for _ in 0..n {
                f();
            }
        })
    }
    /// Time `f(n)`, which must do `n` units of work (lets the caller unroll).
    pub fn run_iters<F: FnMut(u64)>(&self, mut f: F) -> Estimate {
        measure(&self.policy, &mut f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spin(n: u64) {
        let mut x = 0u64;
        for i in 0..n {
            x = std::hint::black_box(x.wrapping_add(i));
        }
        std::hint::black_box(x);
    }

    #[test]
    fn sizes_blocks_and_scales_linearly() {
        let p = Policy {
            budget_ns: 3e8,
            ..Policy::default()
        };
        // 4× the work never takes less time. Only the direction is asserted,
        // on the fastest sample of each (noise only adds time), with both
        // sampled interleaved so a burst of load hits both alike; and, since
        // on a loaded 2-core VM every sample of one point can still be
        // preempted, a later attempt may show it (regression: 0.87× seen
        // once with the points measured one after the other under load 3.6).
        let fastest = |e: &Estimate| e.ns_samples().into_iter().fold(f64::INFINITY, f64::min);
        let mut ratios = Vec::new();
        for _ in 0..3 {
            let mut a = |n: u64| spin(n * 100);
            let mut b = |n: u64| spin(n * 400);
            let est = measure_interleaved(&p, &mut [&mut a, &mut b]);
            let (e1, e2) = (&est[0], &est[1]);
            assert!(e1.ns() > 0.0 && e2.ns() > 0.0);
            assert!(!e1.samples.is_empty() && !e2.samples.is_empty());
            if clockref::chain_supported() {
                let c = e1.cycles().unwrap();
                assert!(c > 0.0 && c.is_finite());
            }
            ratios.push(fastest(e2) / fastest(e1));
            if ratios.last() > Some(&1.0) {
                break;
            }
        }
        assert!(ratios.iter().any(|&r| r > 1.0), "ratios {ratios:?}");
    }

    #[test]
    fn interleaved_returns_one_estimate_per_point() {
        let p = Policy {
            budget_ns: 2e8,
            track_clock: false,
            ..Policy::default()
        };
        let mut a = |n: u64| spin(n * 10);
        let mut b = |n: u64| spin(n * 20);
        let est = measure_interleaved(&p, &mut [&mut a, &mut b]);
        assert_eq!(est.len(), 2);
        assert!(est.iter().all(|e| e.cycles().is_none() && !e.samples.is_empty()));
    }

    #[test]
    fn empty_work_is_never_a_valid_positive_time() {
        // A workload that does nothing: with n/2n the difference is noise
        // around zero; the estimate must not claim a confident time.
        let p = Policy {
            overhead: Overhead::NTwoN,
            iters: Some(1),
            budget_ns: 1e8,
            max_samples: 20,
            track_clock: false,
            ..Policy::default()
        };
        let e = measure(&p, &mut |_| {});
        if e.nonpositive {
            assert_eq!(e.verdict, Verdict::Noisy);
        }
    }

    #[test]
    fn estimate_statistics() {
        let s = |ns: f64| Sample {
            ns,
            mhz: 2000.0,
            cycles: ns * 2.0,
        };
        let e = Estimate::from_samples(vec![s(10.0), s(12.0), s(11.0)], 5, Stat::Min, true, None);
        assert_eq!(e.ns(), 10.0);
        assert_eq!(e.cycles(), Some(20.0));
        assert_eq!(e.verdict, Verdict::Ok);
        let e = Estimate::from_samples(vec![s(10.0), s(12.0), s(11.0)], 5, Stat::Median, false, None);
        assert_eq!(e.ns(), 11.0);
        assert_eq!(e.verdict, Verdict::Noisy);
        let e = Estimate::from_samples(vec![s(-1.0)], 5, Stat::Min, true, None);
        assert!(e.nonpositive);
        assert_eq!(e.verdict, Verdict::Noisy);
    }
}
