//! Context-switch figures from raw ring timings: lat_ctx's overhead
//! subtraction, with order statistics instead of lat_ctx's single number.
//!
//! A raw sample is one timed block: µs per hop (round trip / ring size),
//! which includes a pipe write, a pipe read and the array sum besides the
//! switch. The overhead — the same write, read and sum in one process, with
//! hot caches — is the median of its own samples, taken interleaved with the
//! rings. Each hop sample minus the overhead is a switch sample; min and
//! median with MAD are computed over those (the man page warns runs vary by
//! 10–15%, so the median is the figure of record and the minimum the best
//! case). A difference at or below zero means the switch cost is lost in
//! the overhead's own noise: it is clamped to 0 and flagged, never reported
//! negative.

use hwcal_harness::stats;
use hwcal_model::{ContextSwitch, CtxPoint, CtxSize, Profile, RawCurve, RawPoint, Verdict};

/// Relative MAD above which a point is marked noisy. Pinned rings on a quiet
/// machine stay within a few percent; lat_ctx's man page quotes 10–15% run to
/// run, which is what a noisy point looks like.
pub const NOISY_REL_MAD: f64 = 0.10;

/// The overhead of record, µs: median of the self-pipe samples.
pub fn overhead_us(samples: &[f64]) -> f64 {
    let v: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
    stats::median(&v)
}

/// Switch figures of one ring size from its per-hop samples (µs) and the
/// overhead (µs).
pub fn switch_point(nprocs: u32, hop_us: &[f64], overhead_us: f64) -> CtxPoint {
    let diffs: Vec<f64> = hop_us
        .iter()
        .filter(|x| x.is_finite())
        .map(|h| h - overhead_us)
        .collect();
    let exceeds = diffs.iter().any(|&d| d <= 0.0);
    let clamped: Vec<f64> = diffs.iter().map(|&d| d.max(0.0)).collect();
    let s = stats::spread(&clamped);
    let noisy = s.n == 0 || s.median <= 0.0 || s.mad / s.median > NOISY_REL_MAD;
    CtxPoint {
        nprocs,
        us_min: s.min,
        us_median: s.median,
        us_mad: s.mad,
        us_max: s.max,
        samples: s.n,
        overhead_exceeds: exceeds,
        verdict: if noisy { Verdict::Noisy } else { Verdict::Ok },
    }
}

/// Id of the raw per-hop curve of a size.
pub fn hops_id(size_kb: u64) -> String {
    format!("ctx.s{size_kb}k")
}

/// Id of the raw overhead curve of a size.
pub fn overhead_id(size_kb: u64) -> String {
    format!("ctx.s{size_kb}k.overhead")
}

/// The raw curves of one size: per-hop samples by ring size (overhead not
/// subtracted) and the overhead samples (one point, x = 1 process).
pub fn raw_curves(size_kb: u64, overhead: &[f64], hops: &[(u32, Vec<f64>)]) -> Vec<RawCurve> {
    let hop_curve = RawCurve {
        id: hops_id(size_kb),
        x_label: "processes in the ring".into(),
        y_label: "µs per hop (overhead not subtracted)".into(),
        points: hops
            .iter()
            .map(|(n, v)| RawPoint {
                x: *n as f64,
                y: stats::median(v),
                samples: v.clone(),
                mhz: Vec::new(),
            })
            .collect(),
    };
    let ovr_curve = RawCurve {
        id: overhead_id(size_kb),
        x_label: "processes".into(),
        y_label: "µs per token pass + sum in one process".into(),
        points: vec![RawPoint {
            x: 1.0,
            y: overhead_us(overhead),
            samples: overhead.to_vec(),
            mhz: Vec::new(),
        }],
    };
    vec![hop_curve, ovr_curve]
}

/// Figures of one size from raw samples.
pub fn size_figures(size_kb: u64, overhead: &[f64], hops: &[(u32, Vec<f64>)]) -> CtxSize {
    let ovr = overhead_us(overhead);
    CtxSize {
        size_kb,
        overhead_us: ovr,
        points: hops.iter().map(|(n, v)| switch_point(*n, v, ovr)).collect(),
    }
}

/// Figures of one size from the raw curves in a profile; `None` if absent.
pub fn size_from_raw(size_kb: u64, raw: &[RawCurve]) -> Option<CtxSize> {
    let hops = raw.iter().find(|c| c.id == hops_id(size_kb))?;
    let ovr = raw.iter().find(|c| c.id == overhead_id(size_kb))?;
    let ovr_samples = &ovr.points.first()?.samples;
    let pts: Vec<(u32, Vec<f64>)> = hops
        .points
        .iter()
        .map(|p| (p.x as u32, p.samples.clone()))
        .collect();
    Some(size_figures(size_kb, ovr_samples, &pts))
}

/// Put the sizes into a section: the first one at top level (the profile's
/// `size_kb`, `overhead_us`, `points`), the others in `sizes`.
pub fn assemble(cs: &mut ContextSwitch, sizes: Vec<CtxSize>) {
    let mut it = sizes.into_iter();
    if let Some(first) = it.next() {
        cs.size_kb = first.size_kb;
        cs.overhead_us = first.overhead_us;
        cs.points = first.points;
    }
    cs.sizes = it.collect();
}

/// Human-readable warnings about a section (flagged and noisy points).
pub fn notes(cs: &ContextSwitch) -> Vec<String> {
    let mut v = Vec::new();
    for (size, ovr, points) in cs.all_sizes() {
        for p in points {
            if p.overhead_exceeds {
                v.push(format!(
                    "ctx: size {size} KB, {} procs: in some samples the overhead ({ovr:.2} µs) was at \
                     least the time per hop; those switch times were clamped to 0 (below what this run resolves)",
                    p.nprocs
                ));
            }
            if p.verdict == Verdict::Noisy && p.us_median > 0.0 {
                v.push(format!(
                    "ctx: size {size} KB, {} procs: samples spread by {:.0}% (MAD/median); the machine was busy",
                    p.nprocs,
                    100.0 * p.us_mad / p.us_median
                ));
            }
        }
    }
    v
}

/// Recompute a profile's context-switch figures from its raw curves.
/// `false` if the profile has no context-switch section or raw data.
pub fn reanalyze(p: &mut Profile) -> bool {
    let Some(cs) = &p.context_switch else {
        return false;
    };
    let sizes: Vec<u64> = cs.all_sizes().iter().map(|(s, _, _)| *s).collect();
    let Some(figs) = sizes
        .iter()
        .map(|&s| size_from_raw(s, &p.raw))
        .collect::<Option<Vec<_>>>()
    else {
        return false;
    };
    if let Some(cs) = p.context_switch.as_mut() {
        assemble(cs, figs);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subtracts_overhead_per_sample() {
        let hops = [2.0, 2.1, 1.9, 2.0, 2.05];
        let p = switch_point(2, &hops, 0.5);
        assert!((p.us_median - 1.5).abs() < 1e-12);
        assert!((p.us_min - 1.4).abs() < 1e-12);
        assert!((p.us_max - 1.6).abs() < 1e-12);
        assert!((p.us_mad - 0.05).abs() < 1e-12);
        assert_eq!(p.samples, 5);
        assert!(!p.overhead_exceeds);
        assert_eq!(p.verdict, Verdict::Ok);
    }

    #[test]
    fn never_negative_and_flagged() {
        // Overhead above some samples: those clamp to 0 and the point is flagged.
        let p = switch_point(4, &[0.4, 0.6, 0.7], 0.5);
        assert!(p.us_min == 0.0 && p.us_median > 0.0);
        assert!(p.overhead_exceeds);
        // Overhead above every sample: 0, flagged, and noisy (nothing resolved).
        let p = switch_point(4, &[0.3, 0.4], 0.5);
        assert_eq!((p.us_min, p.us_median), (0.0, 0.0));
        assert!(p.overhead_exceeds);
        assert_eq!(p.verdict, Verdict::Noisy);
        // No samples at all.
        let p = switch_point(2, &[f64::NAN], 0.5);
        assert_eq!(p.samples, 0);
        assert_eq!(p.verdict, Verdict::Noisy);
    }

    #[test]
    fn spread_marks_noise() {
        let p = switch_point(2, &[1.5, 2.5, 3.5, 1.5, 3.5], 0.5);
        assert_eq!(p.verdict, Verdict::Noisy);
    }

    #[test]
    fn overhead_is_median_and_robust() {
        assert_eq!(overhead_us(&[0.5, 0.6, 40.0]), 0.6);
        assert_eq!(overhead_us(&[]), 0.0);
    }

    #[test]
    fn raw_roundtrip_and_reanalyze() {
        let ovr = vec![0.5, 0.52, 0.48];
        let hops = vec![(2, vec![1.8, 1.9, 2.0]), (8, vec![3.0, 3.1, 2.9])];
        let mut prof = Profile::new("hwcal ctx", 0);
        prof.raw = raw_curves(0, &ovr, &hops);
        prof.raw.extend(raw_curves(64, &ovr, &[(2, vec![5.0, 5.5, 6.0])]));
        let mut cs = ContextSwitch::default();
        assemble(
            &mut cs,
            vec![
                size_figures(0, &ovr, &hops),
                size_figures(64, &ovr, &[(2, vec![5.0, 5.5, 6.0])]),
            ],
        );
        let expected = cs.clone();
        assert_eq!(cs.points.len(), 2);
        assert_eq!(cs.sizes.len(), 1);
        assert!((cs.points[0].us_median - 1.4).abs() < 1e-12);
        // Spoil the figures; reanalysis restores them from the raw curves.
        cs.points.clear();
        cs.sizes[0].overhead_us = 99.0;
        prof.context_switch = Some(cs);
        assert!(reanalyze(&mut prof));
        assert_eq!(prof.context_switch.as_ref().unwrap(), &expected);
        prof.raw.clear();
        assert!(!reanalyze(&mut prof));
    }
}
