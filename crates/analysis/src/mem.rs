//! Summaries of `hwcal mem` runs (micbench-mem's figures), from the raw
//! slices each measuring thread recorded.
//!
//! Each thread's raw curve holds one point per ~20 ms slice: `x` = ops (cache
//! lines) done in the slice, `y` = ns per op, `mhz` = the core clock measured
//! at the slice's edges. From these:
//! - time = Σ x·y, cycles = Σ x·y·MHz/1000 (each slice converted with its own
//!   clock: under turbo and power management a core's clock moves by
//!   hundreds of MHz within a run, 2.2 to 3.0 GHz in the
//!   `tests/data/emr-live-clock-drift.json` sweep),
//!   TSC ticks = time × TSC MHz (micbench's "clk", a fixed-rate counter);
//! - micbench's totals: `exec_time` = the longest thread's time, `ops_per_sec`
//!   = total ops / exec_time, `clk_per_op` = total cycles / total ops (the
//!   time one op takes as its thread sees it);
//! - the spread of per-slice ns/op tells a quiet run from a disturbed one.

use crate::stats::median;
use hwcal_model::{MemResult, MemThread, RawCurve, RawPoint, Spread, Verdict};

/// Totals of one thread.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ThreadTotals {
    pub ops: u64,
    pub ns: f64,
    /// Core cycles; `None` if any slice lacks a clock reading.
    pub cycles: Option<f64>,
    /// Time on the CPU, ns; `None` if any slice lacks it.
    pub cpu_ns: Option<f64>,
    /// Core cycles over the on-CPU time.
    pub cpu_cycles: Option<f64>,
}

/// Order statistics of the finite values; `None` when there are none.
pub fn spread(xs: &[f64]) -> Option<Spread> {
    let s = crate::stats::spread(xs);
    (s.n > 0).then_some(s)
}

/// Sum a thread's slices.
pub fn thread_totals(points: &[RawPoint]) -> ThreadTotals {
    let mut t = ThreadTotals {
        cycles: Some(0.0),
        cpu_ns: Some(0.0),
        cpu_cycles: Some(0.0),
        ..Default::default()
    };
    // A slice without ops carries no time per op (NaN): skip it.
    for p in points.iter().filter(|p| p.x > 0.0 && p.y.is_finite()) {
        let ops = p.x;
        let ns = ops * p.y;
        t.ops += ops as u64;
        t.ns += ns;
        let mhz = p.mhz.first().copied().filter(|m| m.is_finite() && *m > 0.0);
        let cpu = p.samples.first().map(|s| ops * s).filter(|c| c.is_finite());
        t.cycles = match (t.cycles, mhz) {
            (Some(c), Some(m)) => Some(c + ns * m / 1e3),
            _ => None,
        };
        t.cpu_ns = match (t.cpu_ns, cpu) {
            (Some(a), Some(c)) => Some(a + c),
            _ => None,
        };
        t.cpu_cycles = match (t.cpu_cycles, cpu, mhz) {
            (Some(a), Some(c), Some(m)) => Some(a + c * m / 1e3),
            _ => None,
        };
    }
    t
}

/// A slice as the probe measured it, turned into a raw point. `samples[0]`
/// holds the ns per op counting only the time the thread was on its CPU
/// (`cpu_ns`), when known.
pub fn slice_point(ops: u64, ns: f64, mhz: f64, cpu_ns: f64) -> RawPoint {
    let per_op = |v: f64| if ops > 0 { v / ops as f64 } else { f64::NAN };
    RawPoint {
        x: ops as f64,
        y: per_op(ns),
        samples: if cpu_ns.is_finite() && cpu_ns > 0.0 {
            vec![per_op(cpu_ns)]
        } else {
            Vec::new()
        },
        mhz: if mhz.is_finite() { vec![mhz] } else { Vec::new() },
    }
}

/// Relative spread of slices beyond which a figure is marked noisy: the
/// median slice and the mean disagree by more than this, or the slices'
/// MAD exceeds it.
pub const NOISY_REL: f64 = 0.05;

/// Recompute every figure of `template` from one raw curve per thread (in
/// `template.per_thread` order). Configuration fields (pattern, size, pages,
/// thread ids, CPUs) are kept from the template.
pub fn summarize(template: &MemResult, curves: &[&RawCurve], tsc_mhz: Option<f64>) -> MemResult {
    let mut r = template.clone();
    let bpo = if r.bytes_per_op > 0 {
        r.bytes_per_op as f64
    } else {
        64.0
    };
    let mut per = Vec::with_capacity(curves.len());
    let (mut ops, mut ns_sum, mut exec_ns) = (0u64, 0.0f64, 0.0f64);
    let mut cycles = Some(0.0);
    let (mut cpu_ns, mut cpu_cycles) = (Some(0.0), Some(0.0));
    let mut slice_ns = Vec::new();
    let mut mhz_all = Vec::new();
    for (i, c) in curves.iter().enumerate() {
        let t = thread_totals(&c.points);
        let mhz: Vec<f64> = c.points.iter().filter_map(|p| p.mhz.first().copied()).collect();
        slice_ns.extend(c.points.iter().filter(|p| p.x > 0.0).map(|p| p.y));
        mhz_all.extend_from_slice(&mhz);
        ops += t.ops;
        ns_sum += t.ns;
        exec_ns = exec_ns.max(t.ns);
        let add = |a: Option<f64>, b: Option<f64>| a.zip(b).map(|(a, b)| a + b);
        cycles = add(cycles, t.cycles);
        cpu_ns = add(cpu_ns, t.cpu_ns);
        cpu_cycles = add(cpu_cycles, t.cpu_cycles);
        let mut th = template.per_thread.get(i).cloned().unwrap_or(MemThread {
            tid: i as u32,
            ..Default::default()
        });
        let per_op = |v: f64| if t.ops > 0 { v / t.ops as f64 } else { f64::NAN };
        th.ops = t.ops;
        th.exec_time_s = t.ns / 1e9;
        th.ops_per_sec = if t.ns > 0.0 {
            t.ops as f64 / t.ns * 1e9
        } else {
            0.0
        };
        th.ns_per_op = per_op(t.ns);
        th.clk_per_op = t.cycles.map_or(f64::NAN, per_op);
        th.tsc_per_op = tsc_mhz.map(|f| per_op(t.ns * f / 1e3));
        th.bytes_per_sec = th.ops_per_sec * bpo;
        th.core_mhz = (!mhz.is_empty()).then(|| median(&mhz));
        th.oncpu_ns_per_op = t.cpu_ns.map(per_op);
        per.push(th);
    }
    let per_op = |v: f64| if ops > 0 { v / ops as f64 } else { f64::NAN };
    r.per_thread = per;
    r.threads = curves.len() as u32;
    r.total_ops = ops;
    r.exec_time_s = exec_ns / 1e9;
    r.ops_per_sec = if exec_ns > 0.0 {
        ops as f64 / exec_ns * 1e9
    } else {
        0.0
    };
    r.ns_per_op = per_op(ns_sum);
    r.total_clk = cycles.unwrap_or(f64::NAN);
    r.clk_per_op = cycles.map_or(f64::NAN, per_op);
    r.tsc_mhz = tsc_mhz;
    r.total_tsc = tsc_mhz.map(|f| ns_sum * f / 1e3);
    r.tsc_per_op = r.total_tsc.map(per_op);
    r.bytes_per_sec = r.ops_per_sec * bpo;
    r.oncpu_ns_per_op = cpu_ns.map(per_op);
    r.oncpu_clk_per_op = cpu_cycles.map(per_op);
    r.oncpu_fraction = cpu_ns.filter(|_| ns_sum > 0.0).map(|c| c / ns_sum);
    r.slice_ns_per_op = spread(&slice_ns);
    r.ns_per_op_ci95 = crate::stats::mean_ci95(&slice_ns, r.ns_per_op);
    // Rate is bytes over time: the interval's ends swap.
    r.bytes_per_sec_ci95 = r.ns_per_op_ci95.filter(|[lo, _]| *lo > 0.0).map(|[lo, hi]| {
        [
            r.bytes_per_sec * r.ns_per_op / hi,
            r.bytes_per_sec * r.ns_per_op / lo,
        ]
    });
    r.core_mhz = spread(&mhz_all);
    r.verdict = verdict(r.ns_per_op, r.slice_ns_per_op.as_ref());
    // Wall-clock time per op includes every moment another task held the
    // CPU: when the measuring threads ran less than 90% of the time, the
    // figure measures the scheduler, not the memory.
    if r.oncpu_fraction.is_some_and(|f| f < MIN_ONCPU) {
        r.verdict = Verdict::Noisy;
    }
    r
}

/// Below this fraction of wall time on the CPU, a mem figure is noisy.
pub const MIN_ONCPU: f64 = 0.9;

/// Noisy when the slices disagree: their relative MAD, or the gap between
/// the mean (`ns_per_op`) and the median slice, exceeds [`NOISY_REL`].
pub fn verdict(mean_ns_per_op: f64, slices: Option<&Spread>) -> Verdict {
    match slices {
        Some(s) if s.median > 0.0 => {
            let gap = (mean_ns_per_op - s.median).abs() / s.median;
            if s.mad / s.median > NOISY_REL || gap > NOISY_REL {
                Verdict::Noisy
            } else {
                Verdict::Ok
            }
        }
        _ => Verdict::Noisy,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(id: &str, slices: &[(u64, f64, f64)]) -> RawCurve {
        RawCurve {
            id: id.into(),
            x_label: "ops".into(),
            y_label: "ns per op".into(),
            points: slices
                .iter()
                .map(|&(o, ns, m)| slice_point(o, ns, m, ns / 2.0))
                .collect(),
        }
    }

    #[test]
    fn totals_use_each_slices_own_clock() {
        // 1e6 ops at 100 ns: 0.1 s. First half at 2000 MHz, second at 3000.
        let c = curve("t0", &[(500_000, 0.05e9, 2000.0), (500_000, 0.05e9, 3000.0)]);
        let t = thread_totals(&c.points);
        assert_eq!(t.ops, 1_000_000);
        assert!((t.ns - 1e8).abs() < 1.0);
        // 100 ns × 2.5 GHz on average = 250 cycles per op.
        assert!((t.cycles.unwrap() / 1e6 - 250.0).abs() < 1e-6);
        // The curves' threads ran half of each slice (cpu_ns = ns / 2).
        assert!((t.cpu_ns.unwrap() - 0.5e8).abs() < 1.0);
        assert!((t.cpu_cycles.unwrap() / 1e6 - 125.0).abs() < 1e-6);
        // An empty slice (no ops) is skipped, not turned into NaN.
        let mut with_empty = c.points.clone();
        with_empty.push(slice_point(0, 5.0, 2500.0, 5.0));
        assert_eq!(thread_totals(&with_empty), t);
        let nan = curve("t", &[(10, 100.0, f64::NAN)]);
        assert!(thread_totals(&nan.points).cycles.is_none());
        let p = slice_point(10, 100.0, 2000.0, f64::NAN);
        assert!(thread_totals(&[p]).cpu_ns.is_none());
    }

    #[test]
    fn micbench_totals_over_threads() {
        let tpl = MemResult {
            access_pattern: "random".into(),
            bytes_per_op: 64,
            ..Default::default()
        };
        let a = curve("t0", &[(1_000_000, 0.1e9, 2500.0); 10]);
        let b = curve("t1", &[(500_000, 0.1e9, 2500.0); 10]);
        let r = summarize(&tpl, &[&a, &b], Some(2000.0));
        assert_eq!(r.threads, 2);
        assert_eq!(r.total_ops, 15_000_000);
        assert!((r.exec_time_s - 1.0).abs() < 1e-9);
        assert!((r.ops_per_sec - 1.5e7).abs() < 1.0);
        // 2 s of thread time over 15 M ops.
        assert!((r.ns_per_op - 2e9 / 1.5e7).abs() < 1e-6);
        assert!((r.clk_per_op - r.ns_per_op * 2.5).abs() < 1e-6);
        assert!((r.tsc_per_op.unwrap() - r.ns_per_op * 2.0).abs() < 1e-6);
        assert!((r.bytes_per_sec - 1.5e7 * 64.0).abs() < 1.0);
        assert_eq!(r.per_thread.len(), 2);
        assert!((r.per_thread[1].ns_per_op - 200.0).abs() < 1e-9);
        assert_eq!(r.per_thread[1].tid, 1);
        // Two threads at different speeds: slices disagree by 2× → noisy.
        assert_eq!(r.verdict, Verdict::Noisy);
        assert!((r.oncpu_fraction.unwrap() - 0.5).abs() < 1e-9);
        assert!((r.oncpu_ns_per_op.unwrap() - r.ns_per_op / 2.0).abs() < 1e-9);
        // One steady thread, but on the CPU only half the time (the
        // fixture's CPU time is half the wall time): noisy.
        let one = summarize(&tpl, &[&a], Some(2000.0));
        assert_eq!(one.verdict, Verdict::Noisy);
        assert!((one.ns_per_op * one.ops_per_sec - 1e9).abs() < 1e-3);
        // The same thread on the CPU all the time: ok.
        let mut full = a.clone();
        for (pt, ns) in full.points.iter_mut().zip(std::iter::repeat(0.1e9)) {
            *pt = slice_point(pt.x as u64, ns, 2500.0, ns);
        }
        assert_eq!(summarize(&tpl, &[&full], Some(2000.0)).verdict, Verdict::Ok);
    }

    #[test]
    fn a_preempted_slice_makes_the_figure_noisy() {
        let mut s = vec![(1_000_000, 0.1e9, 2500.0); 10];
        s.push((1_000, 0.1e9, 2500.0)); // descheduled for most of a slice
        let tpl = MemResult::default();
        let r = summarize(&tpl, &[&curve("t0", &s)], None);
        // The median slice is unaffected, the mean is not.
        let sp = r.slice_ns_per_op.unwrap();
        assert!((sp.median - 100.0).abs() < 1e-9);
        assert!(r.ns_per_op > 105.0);
        assert_eq!(r.verdict, Verdict::Noisy);
        assert!(r.tsc_per_op.is_none());
    }
}
