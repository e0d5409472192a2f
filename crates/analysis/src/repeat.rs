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
}

fn push(figs: &mut Vec<Figure>, name: String, unit: &'static str, v: Option<f64>, noisy: bool) {
    let Some(v) = v.filter(|v| v.is_finite()) else {
        return;
    };
    match figs.iter_mut().find(|f| f.name == name && f.unit == unit) {
        Some(f) => {
            f.values.push(v);
            f.noisy += noisy as usize;
        }
        None => figs.push(Figure {
            name,
            unit,
            values: vec![v],
            noisy: noisy as usize,
        }),
    }
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
    for p in profiles {
        if let Some(c) = &p.clock {
            push(
                f,
                "clock core".into(),
                "MHz",
                Some(c.core_mhz),
                c.verdict == Verdict::Noisy,
            );
        }
        if let Some(levels) = &p.caches {
            count(&mut r.cache_levels, levels.len());
            for l in levels {
                let noisy = l.verdict == Verdict::Noisy;
                let k = l.level;
                push(
                    f,
                    format!("L{k} size"),
                    "KiB",
                    Some(l.size_bytes as f64 / 1024.0),
                    noisy,
                );
                push(
                    f,
                    format!("L{k} line"),
                    "B",
                    l.line_bytes.map(|b| b as f64),
                    false,
                );
                push(f, format!("L{k} latency"), "ns", Some(l.latency_ns), noisy);
                push(f, format!("L{k} latency"), "cycles", l.latency_cycles, noisy);
            }
        }
        if let Some(m) = &p.memory {
            let noisy = m.verdict == Verdict::Noisy;
            push(f, "memory latency".into(), "ns", Some(m.latency_ns), noisy);
            push(f, "memory TLB share".into(), "ns", m.tlb_share_ns, noisy);
        }
        if let Some(t) = &p.tlbs {
            count(
                &mut r.tlb_levels,
                t.iter().filter(|l| l.page_bytes == 4096).count(),
            );
            for l in t {
                let page = if l.page_bytes >= 2 << 20 { "2M" } else { "4K" };
                let noisy = l.verdict == Verdict::Noisy;
                let k = l.level;
                push(
                    f,
                    format!("TLB {page} L{k} entries"),
                    "",
                    Some(l.entries as f64),
                    noisy,
                );
                push(
                    f,
                    format!("TLB {page} L{k} miss"),
                    "cycles",
                    l.miss_latency_cycles,
                    noisy,
                );
            }
        }
        if let Some(c) = &p.context_switch {
            for q in c.points.iter().filter(|q| q.nprocs == 2) {
                push(
                    f,
                    "ctx 2 procs median".into(),
                    "µs",
                    Some(q.us_median),
                    q.verdict == Verdict::Noisy,
                );
            }
        }
    }
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
}
