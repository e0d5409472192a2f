//! How repeatable a machine's figures are over several profiles of it:
//! the data of `hwcal validate cache` (a calibrator whose answer depends on
//! the run is not yet a calibrator).
//!
//! Each figure is gathered across the profiles by what it is (cache level
//! k's size, the 4 KiB TLB's level k), then summarised by its minimum,
//! median and maximum, its largest distance from the median, and how many
//! runs flagged it noisy. The structure (how many cache and TLB levels a
//! run found) is counted separately: figures of level k only mean the same
//! thing across runs when the runs agree on the levels.
//!
//! Where the profiles state each figure's own 95% interval, the runs'
//! disagreement is set against it: a figure with a run further from the
//! median than a whole interval's width (twice the typical run's
//! half-width) moved more than one run's scatter explains — the machine
//! changed between runs (a neighbour on a shared cache, another draw of
//! physical pages), or the intervals are narrow (the bootstrap holds each
//! plateau's extent fixed). Figures of cache level k are only compared so
//! where the runs agree on the number of levels.

use crate::stats::median;
use hwcal_model::{Profile, Verdict};

/// One figure across runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub name: String,
    pub unit: &'static str,
    /// One value per run that has the figure.
    pub values: Vec<f64>,
    /// Runs in which the figure was flagged noisy.
    pub noisy: usize,
    /// Half the width of each run's own 95% interval, relative to its
    /// value, for the runs whose profile states one.
    pub in_run: Vec<f64>,
}

impl Figure {
    pub fn min(&self) -> f64 {
        self.values.iter().copied().fold(f64::INFINITY, f64::min)
    }
    pub fn max(&self) -> f64 {
        self.values.iter().copied().fold(f64::NEG_INFINITY, f64::max)
    }
    pub fn median(&self) -> f64 {
        median(&self.values)
    }
    /// Largest |value / median − 1| over the runs.
    pub fn max_dev(&self) -> f64 {
        let m = self.median();
        self.values
            .iter()
            .map(|v| (v / m - 1.0).abs())
            .fold(0.0, f64::max)
    }
    /// The typical run's own precision: the median of [`Figure::in_run`]
    /// (`None` where no run states an interval).
    pub fn in_run_dev(&self) -> Option<f64> {
        (!self.in_run.is_empty()).then(|| median(&self.in_run))
    }
    /// Whether a run sits further from the median than twice the typical
    /// run's own half-width (three runs or more, each with an interval).
    /// See [`Repeatability::moved`], which also asks that the runs agree on
    /// the levels.
    pub fn moved(&self) -> bool {
        self.values.len() >= 3
            && self.in_run.len() == self.values.len()
            && self.in_run_dev().is_some_and(|w| self.max_dev() > 2.0 * w)
    }
}

/// Every figure of the runs, and how often each structure was found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Repeatability {
    pub runs: usize,
    pub figures: Vec<Figure>,
    /// (number of cache levels, runs that found that many).
    pub cache_levels: Vec<(usize, usize)>,
    /// (number of 4 KiB TLB levels, runs).
    pub tlb_levels: Vec<(usize, usize)>,
    /// Verdicts the runs gave (clock, each cache level, memory, each TLB
    /// level, each 2-process ctx point), and how many were `noisy`: a
    /// figure and the figures derived from it share one verdict.
    pub verdicts: usize,
    pub noisy_verdicts: usize,
}

impl Repeatability {
    /// [`Figure::moved`], for a cache level's figure only where every run
    /// found the same number of levels (level k of a run that found
    /// another structure may be another cache).
    pub fn moved(&self, f: &Figure) -> bool {
        let per_level = f.name.starts_with('L') && f.name[1..].starts_with(|c: char| c.is_ascii_digit());
        f.moved() && !(per_level && self.cache_levels.len() > 1)
    }
}

/// One run's value of a figure, with its own 95% interval if stated.
struct Value {
    v: Option<f64>,
    ci: Option<[f64; 2]>,
    noisy: bool,
}

fn value(v: Option<f64>, noisy: bool) -> Value {
    Value { v, ci: None, noisy }
}

/// A figure the run measured with its own 95% interval.
fn with_ci(v: f64, ci: Option<[f64; 2]>, noisy: bool) -> Value {
    Value {
        v: Some(v),
        ci,
        noisy,
    }
}

fn push(figs: &mut Vec<Figure>, name: String, unit: &'static str, val: Value) {
    let Some(v) = val.v.filter(|v| v.is_finite()) else {
        return;
    };
    let half = val
        .ci
        .filter(|_| v != 0.0)
        .map(|[lo, hi]| ((hi - lo) / 2.0 / v).abs())
        .filter(|h| h.is_finite());
    let i = match figs.iter().position(|f| f.name == name && f.unit == unit) {
        Some(i) => i,
        None => {
            figs.push(Figure {
                name,
                unit,
                values: Vec::new(),
                noisy: 0,
                in_run: Vec::new(),
            });
            figs.len() - 1
        }
    };
    let f = &mut figs[i];
    f.values.push(v);
    f.noisy += val.noisy as usize;
    f.in_run.extend(half);
}

fn count(counts: &mut Vec<(usize, usize)>, n: usize) {
    match counts.iter_mut().find(|c| c.0 == n) {
        Some(c) => c.1 += 1,
        None => counts.push((n, 1)),
    }
}

/// Gather the figures of `profiles` (the runs to compare).
pub fn repeatability(profiles: &[Profile]) -> Repeatability {
    let mut r = Repeatability {
        runs: profiles.len(),
        ..Default::default()
    };
    let f = &mut r.figures;
    let mut verdicts: Vec<Verdict> = Vec::new();
    for p in profiles {
        if let Some(c) = &p.clock {
            let noisy = c.verdict == Verdict::Noisy;
            verdicts.push(c.verdict);
            let v = with_ci(c.core_mhz, c.core_mhz_ci95, noisy);
            push(f, "clock core".into(), "MHz", v);
        }
        if let Some(levels) = &p.caches {
            count(&mut r.cache_levels, levels.len());
            for l in levels {
                let noisy = l.verdict == Verdict::Noisy;
                verdicts.push(l.verdict);
                let k = l.level;
                let size = with_ci(
                    l.size_bytes as f64 / 1024.0,
                    l.size_bytes_ci95.map(|c| c.map(|b| b as f64 / 1024.0)),
                    noisy,
                );
                push(f, format!("L{k} size"), "KiB", size);
                push(
                    f,
                    format!("L{k} line"),
                    "B",
                    value(l.line_bytes.map(|b| b as f64), false),
                );
                let ns = with_ci(l.latency_ns, l.latency_ns_ci95, noisy);
                push(f, format!("L{k} latency"), "ns", ns);
                push(
                    f,
                    format!("L{k} latency"),
                    "cycles",
                    value(l.latency_cycles, noisy),
                );
            }
        }
        if let Some(m) = &p.memory {
            let noisy = m.verdict == Verdict::Noisy;
            verdicts.push(m.verdict);
            let ns = with_ci(m.latency_ns, m.latency_ns_ci95, noisy);
            push(f, "memory latency".into(), "ns", ns);
            push(f, "memory TLB share".into(), "ns", value(m.tlb_share_ns, noisy));
        }
        if let Some(t) = &p.tlbs {
            count(
                &mut r.tlb_levels,
                t.iter().filter(|l| l.page_bytes == 4096).count(),
            );
            for l in t {
                let page = if l.page_bytes >= 2 << 20 { "2M" } else { "4K" };
                let noisy = l.verdict == Verdict::Noisy;
                verdicts.push(l.verdict);
                let k = l.level;
                let ci = l.entries_ci95.map(|c| c.map(|e| e as f64));
                push(
                    f,
                    format!("TLB {page} L{k} entries"),
                    "",
                    with_ci(l.entries as f64, ci, noisy),
                );
                let ns = with_ci(l.miss_latency_ns, l.miss_latency_ns_ci95, noisy);
                push(f, format!("TLB {page} L{k} miss"), "ns", ns);
                push(
                    f,
                    format!("TLB {page} L{k} miss"),
                    "cycles",
                    value(l.miss_latency_cycles, noisy),
                );
            }
        }
        if let Some(c) = &p.context_switch {
            for q in c.points.iter().filter(|q| q.nprocs == 2) {
                verdicts.push(q.verdict);
                let v = with_ci(q.us_median, q.us_median_ci95, q.verdict == Verdict::Noisy);
                push(f, "ctx 2 procs median".into(), "µs", v);
            }
        }
    }
    r.verdicts = verdicts.len();
    r.noisy_verdicts = verdicts.iter().filter(|&&v| v == Verdict::Noisy).count();
    r.cache_levels.sort();
    r.tlb_levels.sort();
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwcal_model::CacheLevel;

    fn prof(sizes: &[u64]) -> Profile {
        let caches = sizes
            .iter()
            .enumerate()
            .map(|(i, &s)| CacheLevel {
                level: i as u32 + 1,
                size_bytes: s,
                latency_ns: 1.0 + i as f64,
                verdict: if s == 40 << 10 {
                    Verdict::Noisy
                } else {
                    Verdict::Ok
                },
                ..Default::default()
            })
            .collect();
        Profile {
            caches: Some(caches),
            ..Default::default()
        }
    }

    #[test]
    fn gathers_by_level_and_counts_structures() {
        let r = repeatability(&[
            prof(&[32 << 10, 512 << 10]),
            prof(&[40 << 10, 500 << 10]),
            prof(&[32 << 10]),
        ]);
        assert_eq!(r.runs, 3);
        assert_eq!(r.cache_levels, vec![(1, 1), (2, 2)]);
        let l1 = r.figures.iter().find(|f| f.name == "L1 size").unwrap();
        assert_eq!(l1.values, vec![32.0, 40.0, 32.0]);
        assert_eq!((l1.min(), l1.median(), l1.max(), l1.noisy), (32.0, 32.0, 40.0, 1));
        assert!((l1.max_dev() - 0.25).abs() < 1e-12);
        let l2 = r.figures.iter().find(|f| f.name == "L2 size").unwrap();
        assert_eq!(l2.values.len(), 2);
    }

    #[test]
    fn runs_apart_beyond_their_own_intervals_have_moved_and_verdicts_count_once() {
        let with = |size: u64, half: u64, noisy: bool| {
            let mut p = prof(&[size]);
            let l = &mut p.caches.as_mut().unwrap()[0];
            l.size_bytes_ci95 = Some([size - half, size + half]);
            l.verdict = if noisy { Verdict::Noisy } else { Verdict::Ok };
            p.memory = Some(hwcal_model::MemoryLatency {
                latency_ns: 100.0,
                tlb_share_ns: Some(20.0),
                verdict: if noisy { Verdict::Noisy } else { Verdict::Ok },
                ..Default::default()
            });
            p
        };
        let k = 1 << 10;
        // Sizes 6, 8 and 10 MiB, each pinned to ±1%: the machine moved.
        let far = repeatability(&[
            with(6 * k * k, 60 * k, false),
            with(8 * k * k, 80 * k, true),
            with(10 * k * k, 100 * k, false),
        ]);
        let size = far.figures.iter().find(|f| f.name == "L1 size").unwrap();
        assert!((size.in_run_dev().unwrap() - 0.01).abs() < 1e-3);
        assert!(size.moved() && far.moved(size));
        // One noisy run: its level and its memory are two verdicts, though
        // the memory's verdict stands on two rows (latency, TLB share).
        assert_eq!((far.noisy_verdicts, far.verdicts), (2, 6));
        let mem_rows: usize = far
            .figures
            .iter()
            .filter(|f| f.name.starts_with("memory"))
            .map(|f| f.noisy)
            .sum();
        assert_eq!(mem_rows, 2);
        // The same spread with intervals as wide: not moved.
        let near = repeatability(&[
            with(6 * k * k, 3 * k * k, false),
            with(8 * k * k, 3 * k * k, false),
            with(10 * k * k, 3 * k * k, false),
        ]);
        assert!(!near.figures.iter().any(|f| f.moved()));
        // Runs that disagree on the levels: level k is not compared.
        let mut mixed = far.clone();
        mixed.cache_levels = vec![(1, 2), (2, 1)];
        let size = mixed.figures.iter().find(|f| f.name == "L1 size").unwrap();
        assert!(size.moved() && !mixed.moved(size));
        // Without intervals nothing can be said.
        let bare = repeatability(&[prof(&[1 << 20]), prof(&[2 << 20]), prof(&[3 << 20])]);
        assert!(bare
            .figures
            .iter()
            .all(|f| f.in_run_dev().is_none() && !f.moved()));
    }
}
