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

use hwcal_model::{
    ContextSwitch, CtxPoint, CtxSize, Note, Profile, RawCurve, RawPoint, SwitchCount, Verdict,
};
use hwcal_stats as stats;

/// Relative MAD above which a point is marked noisy. Pinned rings on a quiet
/// machine stay within a few percent; lat_ctx's man page quotes 10–15% run to
/// run, which is what a noisy point looks like.
pub const NOISY_REL_MAD: f64 = 0.10;

/// Switches per hop above which a note explains that a "hop" is more than
/// one switch (1.0 exactly when no wake-up preempts the writer).
pub const EXTRA_SWITCHES: f64 = 1.1;

/// The overhead of record, µs: median of the self-pipe samples.
pub fn overhead_us(samples: &[f64]) -> f64 {
    let v: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
    stats::median(&v)
}

/// Whether the quietest of several rounds is confirmed: a second round's
/// overhead (median of its samples) agrees with the fastest one, their 95%
/// intervals of the median overlapping. A round alone at the fast end may
/// be luck between two bursts of a neighbour, or the rest were all
/// disturbed; either way another round says which. Rounds without an
/// interval (under 6 samples) compare by their medians alone.
pub fn quietest_confirmed(rounds: &[&[f64]]) -> bool {
    let mut r: Vec<(f64, f64, f64)> = rounds
        .iter()
        .map(|s| {
            let v: Vec<f64> = s.iter().copied().filter(|x| x.is_finite()).collect();
            let m = stats::median(&v);
            let (lo, hi) = stats::median_ci95(&v).unwrap_or((m, m));
            (m, lo, hi)
        })
        .filter(|r| r.0 > 0.0)
        .collect();
    if r.len() < 2 {
        return false;
    }
    r.sort_by(|a, b| a.0.total_cmp(&b.0));
    r[1..].iter().any(|x| r[0].2 >= x.1)
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
        cycles_median: None,
        switches_per_hop: None,
        preempted_per_hop: None,
        us_per_switch: None,
        verdict: if noisy { Verdict::Noisy } else { Verdict::Ok },
        us_median_ci95: stats::median_ci95(&clamped).map(|(a, b)| [a, b]),
    }
}

/// Per-sample cycles (µs × MHz), for samples with a clock reading.
fn cycles(us: &[f64], mhz: &[f64]) -> Vec<f64> {
    us.iter()
        .zip(mhz)
        .map(|(u, m)| u * m)
        .filter(|c| c.is_finite())
        .collect()
}

/// The overhead in core cycles (median of per-sample µs × MHz); `None`
/// when no sample has a clock reading.
pub fn overhead_cycles(us: &[f64], mhz: &[f64]) -> Option<f64> {
    let c = cycles(us, mhz);
    (!c.is_empty()).then(|| stats::median(&c))
}

/// Median switch time in cycles: each hop sample in cycles (with its own
/// clock) minus the overhead in cycles, clamped at 0 like the µs figures.
pub fn switch_cycles(hop_us: &[f64], hop_mhz: &[f64], overhead_cycles: Option<f64>) -> Option<f64> {
    let ovr = overhead_cycles?;
    let c: Vec<f64> = cycles(hop_us, hop_mhz)
        .iter()
        .map(|c| (c - ovr).max(0.0))
        .collect();
    (!c.is_empty()).then(|| stats::median(&c))
}

/// Samples of one point: µs per sample and the core MHz measured alongside
/// each (may be empty or NaN when the clock was not tracked).
#[derive(Debug, Clone, Copy)]
pub struct Samples<'a> {
    pub us: &'a [f64],
    pub mhz: &'a [f64],
}

/// Id of the raw per-hop curve of a size.
pub fn hops_id(size_kb: u64) -> String {
    hwcal_model::curve::ctx_hops(size_kb)
}

/// Id of the raw switch-count curve of a size.
pub fn switches_id(size_kb: u64) -> String {
    hwcal_model::curve::ctx_switches(size_kb)
}

/// Id of the raw overhead curve of a size.
pub fn overhead_id(size_kb: u64) -> String {
    hwcal_model::curve::ctx_overhead(size_kb)
}

fn raw_point(x: f64, s: Samples) -> RawPoint {
    RawPoint {
        x,
        y: stats::median(s.us),
        samples: s.us.to_vec(),
        mhz: s.mhz.to_vec(),
    }
}

/// The switch-count curve of one size: x = ring size, y = switches per hop,
/// `samples` = [voluntary, involuntary] per member per trip. Ring sizes
/// whose counters could not be read are left out.
pub fn switches_curve(size_kb: u64, counts: &[(u32, Option<SwitchCount>)]) -> Option<RawCurve> {
    let points: Vec<RawPoint> = counts
        .iter()
        .filter_map(|(n, c)| {
            let c = (*c)?;
            Some(RawPoint {
                x: *n as f64,
                y: c.per_hop(),
                samples: vec![c.voluntary, c.involuntary],
                mhz: Vec::new(),
            })
        })
        .collect();
    (!points.is_empty()).then(|| RawCurve {
        id: switches_id(size_kb),
        x_label: "processes in the ring".into(),
        y_label: "context switches per hop (samples: voluntary, involuntary per member and trip)".into(),
        points,
    })
}

/// Fill a point's switch figures from the counts of its ring size.
fn with_switches(mut p: CtxPoint, c: Option<SwitchCount>) -> CtxPoint {
    let Some(c) = c else {
        return p;
    };
    let per_hop = c.per_hop();
    if !(per_hop.is_finite() && per_hop > 0.0) {
        return p;
    }
    p.switches_per_hop = Some(per_hop);
    p.preempted_per_hop = Some(c.involuntary);
    p.us_per_switch = Some(p.us_median / per_hop);
    p
}

/// The raw curves of one size: per-hop samples by ring size (overhead not
/// subtracted, y = median) and the overhead samples (one point, x = 1
/// process), each with the core clock of every sample.
pub fn raw_curves(size_kb: u64, overhead: Samples, rings: &[(u32, Samples)]) -> Vec<RawCurve> {
    let hop_curve = RawCurve {
        id: hops_id(size_kb),
        x_label: "processes in the ring".into(),
        y_label: "µs per hop (overhead not subtracted)".into(),
        points: rings.iter().map(|(n, s)| raw_point(*n as f64, *s)).collect(),
    };
    let ovr_curve = RawCurve {
        id: overhead_id(size_kb),
        x_label: "processes".into(),
        y_label: "µs per token pass + sum in one process".into(),
        points: vec![raw_point(1.0, overhead)],
    };
    vec![hop_curve, ovr_curve]
}

/// Figures of one size from the raw curves in a profile; `None` if absent.
pub fn size_from_raw(size_kb: u64, raw: &[RawCurve]) -> Option<CtxSize> {
    let hops = raw.iter().find(|c| c.id == hops_id(size_kb))?;
    let ovr = raw
        .iter()
        .find(|c| c.id == overhead_id(size_kb))?
        .points
        .first()?;
    let ovr_us = overhead_us(&ovr.samples);
    let ovr_cyc = overhead_cycles(&ovr.samples, &ovr.mhz);
    let switches = raw.iter().find(|c| c.id == switches_id(size_kb));
    let count_of = |n: f64| -> Option<SwitchCount> {
        let p = switches?.points.iter().find(|p| p.x == n)?;
        match p.samples[..] {
            [voluntary, involuntary] => Some(SwitchCount {
                voluntary,
                involuntary,
            }),
            _ => None,
        }
    };
    Some(CtxSize {
        size_kb,
        overhead_us: ovr_us,
        overhead_cycles: ovr_cyc,
        points: hops
            .points
            .iter()
            .map(|p| {
                let pt = CtxPoint {
                    cycles_median: switch_cycles(&p.samples, &p.mhz, ovr_cyc),
                    ..switch_point(p.x as u32, &p.samples, ovr_us)
                };
                with_switches(pt, count_of(p.x))
            })
            .collect(),
    })
}

/// Put the sizes into a section: the first one at top level (the profile's
/// `size_kb`, `overhead_us`, `points`), the others in `sizes`.
pub fn assemble(cs: &mut ContextSwitch, sizes: Vec<CtxSize>) {
    let mut it = sizes.into_iter();
    if let Some(first) = it.next() {
        cs.size_kb = first.size_kb;
        cs.overhead_us = first.overhead_us;
        cs.overhead_cycles = first.overhead_cycles;
        cs.points = first.points;
    }
    cs.sizes = it.collect();
}

/// One note for the whole section naming the points whose hops were more
/// than one switch, with the cost of one switch for each.
fn extra_switches_note(cs: &ContextSwitch) -> Option<String> {
    let sizes = cs.all_sizes();
    let several = sizes.len() > 1;
    let extra: Vec<String> = sizes
        .iter()
        .flat_map(|z| {
            z.points.iter().filter_map(move |p| {
                let sw = p.switches_per_hop.filter(|&s| s > EXTRA_SWITCHES)?;
                let size = if several {
                    format!("{} KiB, ", z.size_kb)
                } else {
                    String::new()
                };
                Some(format!(
                    "{size}{} procs {sw:.2} ({:.2} µs per switch)",
                    p.nprocs,
                    p.us_per_switch.unwrap_or(f64::NAN)
                ))
            })
        })
        .collect();
    (!extra.is_empty()).then(|| {
        format!(
            "ctx: the kernel counted more than one switch per hop ({}): waking the next member often \
             preempted the writer, which then ran again only to block; lat_ctx's figure (µs per hop) \
             counts that as one switch",
            extra.join("; ")
        )
    })
}

/// Human-readable warnings about a section (flagged and noisy points).
pub fn notes(cs: &ContextSwitch) -> Vec<Note> {
    let mut v = Vec::new();
    v.extend(extra_switches_note(cs).map(|t| Note::info("ctx", "extra_switches", t)));
    for z in cs.all_sizes() {
        let (size, ovr) = (z.size_kb, z.overhead_us);
        for p in &z.points {
            if p.overhead_exceeds {
                v.push(Note::warning(
                    "ctx",
                    "overhead_clamped",
                    format!(
                        "ctx: size {size} KiB, {} procs: in some samples the overhead ({ovr:.2} µs) was at \
                         least the time per hop; those switch times were clamped to 0 (below what this run resolves)",
                        p.nprocs
                    ),
                ));
            }
            if p.verdict == Verdict::Noisy && p.us_median > 0.0 {
                v.push(Note::warning(
                    "ctx",
                    "noisy",
                    format!(
                        "ctx: size {size} KiB, {} procs: samples spread by {:.0}% (MAD/median); the machine was busy",
                        p.nprocs,
                        100.0 * p.us_mad / p.us_median
                    ),
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
    let sizes: Vec<u64> = cs.all_sizes().iter().map(|z| z.size_kb).collect();
    let Some(figs) = sizes
        .iter()
        .map(|&s| size_from_raw(s, &p.raw))
        .collect::<Option<Vec<_>>>()
    else {
        return false;
    };
    if let Some(cs) = p.context_switch.as_mut() {
        assemble(cs, figs);
        // The notes follow the recomputed figures (`ctx.note`: an old
        // profile's plain-string notes).
        let fresh = notes(cs);
        let codes = [
            "ctx.extra_switches",
            "ctx.overhead_clamped",
            "ctx.noisy",
            "ctx.note",
        ];
        hwcal_model::note::refresh(&mut p.notes, "ctx", &codes, fresh);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quietest_round_needs_a_second_to_agree() {
        let quiet: Vec<f64> = (0..20).map(|i| 0.80 + 0.001 * (i % 5) as f64).collect();
        let also: Vec<f64> = (0..20).map(|i| 0.801 + 0.001 * (i % 4) as f64).collect();
        let slow: Vec<f64> = quiet.iter().map(|x| x * 1.35).collect();
        assert!(quietest_confirmed(&[&slow, &quiet, &also]));
        // The fast one alone, or everyone alike slow but one: not confirmed.
        assert!(!quietest_confirmed(&[&slow, &quiet, &slow]));
        assert!(!quietest_confirmed(&[&quiet]));
        assert!(!quietest_confirmed(&[]));
        // Two slow rounds agree, but the quietest is the odd one out.
        assert!(!quietest_confirmed(&[&quiet, &slow, &slow]));
    }

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

    fn sm<'a>(us: &'a [f64], mhz: &'a [f64]) -> Samples<'a> {
        Samples { us, mhz }
    }

    #[test]
    fn cycles_use_each_samples_clock() {
        // The same 2500-cycle hop at 2000 and 2500 MHz: µs differ, cycles not.
        let hop_us = [1.25, 1.0];
        let mhz = [2000.0, 2500.0];
        let ovr = overhead_cycles(&[0.5, 0.4], &mhz);
        assert_eq!(ovr, Some(1000.0));
        assert_eq!(switch_cycles(&hop_us, &mhz, ovr), Some(1500.0));
        // No clock readings: no cycle figure.
        assert_eq!(overhead_cycles(&[0.5], &[f64::NAN]), None);
        assert_eq!(switch_cycles(&hop_us, &[], Some(1.0)), None);
        assert_eq!(switch_cycles(&hop_us, &mhz, None), None);
    }

    #[test]
    fn switch_counts_give_cost_per_switch() {
        let mhz = [2000.0; 3];
        let ovr = [0.5, 0.5, 0.5];
        let h2 = [1.5, 1.5, 1.5];
        let h4 = [2.0, 2.0, 2.0];
        let h8 = [2.0, 2.0, 2.0];
        let mut raw = raw_curves(
            0,
            sm(&ovr, &mhz),
            &[(2, sm(&h2, &mhz)), (4, sm(&h4, &mhz)), (8, sm(&h8, &mhz))],
        );
        let one = SwitchCount {
            voluntary: 1.0,
            involuntary: 0.0,
        };
        let preempted = SwitchCount {
            voluntary: 1.0,
            involuntary: 0.5,
        };
        // The 8-process counters were unreadable: no curve point, no figure.
        raw.extend(switches_curve(
            0,
            &[(2, Some(one)), (4, Some(preempted)), (8, None)],
        ));
        assert!(switches_curve(0, &[(2, None)]).is_none());
        let z = size_from_raw(0, &raw).unwrap();
        let (p2, p4, p8) = (&z.points[0], &z.points[1], &z.points[2]);
        assert_eq!(p2.switches_per_hop, Some(1.0));
        assert_eq!(p2.us_per_switch, Some(1.0));
        assert_eq!(p4.switches_per_hop, Some(1.5));
        assert_eq!(p4.preempted_per_hop, Some(0.5));
        // 1.5 µs per hop over 1.5 switches: 1 µs per switch.
        assert!((p4.us_per_switch.unwrap() - 1.0).abs() < 1e-12);
        assert_eq!((p8.switches_per_hop, p8.us_per_switch), (None, None));
        // Only the point with extra switches is named in the note.
        let mut cs = ContextSwitch::default();
        let mut z64 = z.clone();
        z64.size_kb = 64;
        assemble(&mut cs, vec![z.clone()]);
        let n = notes(&cs);
        assert_eq!(n.len(), 1, "{n:?}");
        assert!(
            n[0].text.contains("(4 procs 1.50") && !n[0].text.contains("2 procs"),
            "{n:?}"
        );
        // Several sizes: still one note, each point named with its size.
        assemble(&mut cs, vec![z, z64]);
        let n = notes(&cs);
        assert_eq!(n.len(), 1, "{n:?}");
        assert!(
            n[0].text.contains("0 KiB, 4 procs 1.50") && n[0].text.contains("64 KiB, 4 procs"),
            "{n:?}"
        );
    }

    #[test]
    fn raw_roundtrip_and_reanalyze() {
        let mhz = [2000.0, 2000.0, 2000.0];
        let ovr = [0.5, 0.52, 0.48];
        let h2 = [1.8, 1.9, 2.0];
        let h8 = [3.0, 3.1, 2.9];
        let h64k = [5.0, 5.5, 6.0];
        let mut prof = Profile::new("hwcal ctx", 0);
        prof.raw = raw_curves(0, sm(&ovr, &mhz), &[(2, sm(&h2, &mhz)), (8, sm(&h8, &mhz))]);
        prof.raw
            .extend(raw_curves(64, sm(&ovr, &[]), &[(2, sm(&h64k, &[]))]));
        let s0 = size_from_raw(0, &prof.raw).unwrap();
        let s64 = size_from_raw(64, &prof.raw).unwrap();
        assert!(size_from_raw(16, &prof.raw).is_none());
        assert!((s0.overhead_us - 0.5).abs() < 1e-12);
        assert!((s0.points[0].us_median - 1.4).abs() < 1e-12);
        assert!((s0.points[0].cycles_median.unwrap() - 2800.0).abs() < 1e-6);
        assert_eq!(s64.overhead_cycles, None);
        assert_eq!(s64.points[0].cycles_median, None);
        let mut cs = ContextSwitch::default();
        assemble(&mut cs, vec![s0, s64]);
        let expected = cs.clone();
        assert_eq!(cs.points.len(), 2);
        assert_eq!(cs.sizes.len(), 1);
        assert_eq!(cs.all_sizes().len(), 2);
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
