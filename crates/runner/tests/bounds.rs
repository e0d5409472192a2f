//! Every recorded whole profile, re-analysed as `hwcal analyze` does, holds
//! no `ok` figure outside its physical bounds or contradicted by another of
//! the run's own measurements, and prints no impossible step: cache levels
//! grow in size and latency; a step is positive and no larger than the
//! plateau it joins; memory is slower than every cache; DRAM without page
//! walks is no slower than the same chase with them; a speed-up is no more
//! than its chains; no note quotes a negative latency.
//! (Recorded runs of `crates/analysis/tests/data`, and the project's
//! `shared/reference/machines` where the workspace has it beside the
//! checkout.)

use hwcal_model::{Profile, Verdict};
use std::path::{Path, PathBuf};

fn profiles() -> Vec<(String, Profile)> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![here.join("../analysis/tests/data")];
    dirs.extend(
        [here.join("../../../shared/reference/machines")]
            .into_iter()
            .filter(|d| d.is_dir()),
    );
    let mut out = Vec::new();
    for d in dirs {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        for f in files {
            let bytes = std::fs::read(&f).unwrap();
            // Whole `hwcal run` profiles only (the cache and TLB fixtures
            // hold raw curves alone).
            let Ok(mut p) = hwcal_model::parse_profile(&bytes) else {
                continue;
            };
            if p.caches.is_none() || p.memory.is_none() {
                continue;
            }
            hwcal_runner::reanalyse_stored(&mut p).unwrap();
            out.push((f.display().to_string(), p));
        }
    }
    out
}

#[test]
fn no_ok_figure_breaks_a_bound_or_a_cross_check() {
    let all = profiles();
    assert!(all.len() >= 5, "the recorded runs: {}", all.len());
    for (name, p) in &all {
        let levels = p.caches.as_deref().unwrap_or_default();
        for w in levels.windows(2) {
            assert!(w[0].size_bytes < w[1].size_bytes, "{name}: sizes {w:?}");
            if w[1].verdict == Verdict::Ok {
                assert!(w[0].latency_ns < w[1].latency_ns, "{name}: latencies {w:?}");
            }
        }
        for (k, l) in levels.iter().enumerate() {
            assert!(l.latency_ns > 0.0, "{name}: L{} latency", l.level);
            // A step is positive and no larger than the plateau it joins
            // (the next level's, or memory's).
            let next = levels
                .get(k + 1)
                .map(|n| n.latency_ns)
                .or(p.memory.as_ref().map(|m| m.latency_ns));
            for step in [l.miss_latency_ns, l.replace_time_ns].into_iter().flatten() {
                assert!(step > 0.0, "{name}: L{} step {step}", l.level);
                if let Some(n) = next {
                    assert!(
                        step <= n,
                        "{name}: L{} step {step} past the plateau it joins ({n})",
                        l.level
                    );
                }
            }
        }
        let m = p.memory.as_ref().unwrap();
        let slowest = levels.iter().map(|l| l.latency_ns).fold(0.0, f64::max);
        if m.verdict == Verdict::Ok {
            assert!(
                m.latency_ns > slowest,
                "{name}: memory {} ok below a cache",
                m.latency_ns
            );
        }
        if let (Some(l), Some(Verdict::Ok)) = (m.latency_no_walks_ns, m.latency_no_walks_verdict) {
            let hi = m
                .latency_ns_ci95
                .map_or(m.latency_ns, |[_, b]| b.max(m.latency_ns));
            assert!(
                l <= hi * 1.001,
                "{name}: DRAM {l} ok above the walking chase {hi}"
            );
            assert!(l > slowest, "{name}: DRAM {l} ok below a cache");
        }
        for q in &m.mlp {
            if q.verdict != Some(Verdict::Noisy) {
                let lo = q.speedup_ci95.map_or(q.speedup, |[a, _]| a.min(q.speedup));
                assert!(
                    lo <= f64::from(q.chains),
                    "{name}: {}× with {} chains not in doubt",
                    q.speedup,
                    q.chains
                );
            }
        }
        for t in p.tlbs.iter().flatten().filter(|t| t.verdict == Verdict::Ok) {
            assert!(t.entries > 0, "{name}: L{} TLB", t.level);
            assert!(t.miss_latency_ns > 0.0, "{name}: L{} TLB miss", t.level);
        }
        for n in &p.notes {
            let t = n.text.replace('−', "-");
            let negative = t
                .split_whitespace()
                .zip(t.split_whitespace().skip(1))
                .any(|(v, unit)| {
                    unit.starts_with("ns") && v.starts_with('-') && v[1..].parse::<f64>().is_ok()
                });
            assert!(!negative, "{name}: a negative latency in a note: {}", n.text);
        }
    }
}
