//! Re-analysis of the memory probe's raw curves (`hwcal analyze`): every
//! `mem` and `bandwidth` figure recomputed from the per-thread timing
//! slices, and the note that says why a figure is noisy. Pure functions of
//! the profile.

use crate::mem::summarize;
use hwcal_model::curve::MemSeries;
use hwcal_model::{Bandwidth, MemResult, Note, NumaLatency, Profile, RawCurve, Verdict};

/// Bytes per operation of every mem kernel: one 64-byte line (the chase
/// visits one line per load, the streams count in lines).
const LINE: u64 = 64;

/// The configuration half of a result, as a template for `summarize` (only
/// the figures it computes are read back).
fn template(pattern: &str, op: &str, size: usize, local: bool, threads: usize) -> MemResult {
    MemResult {
        access_pattern: pattern.into(),
        op: op.into(),
        threads: threads as u32,
        local,
        size_bytes: size as u64,
        bytes_per_op: LINE,
        ..Default::default()
    }
}

/// The raw curves `{prefix}.t0`, `{prefix}.t1`, … in thread order.
fn thread_curves(p: &Profile, series: &MemSeries) -> Vec<RawCurve> {
    let tid = |c: &RawCurve| series.tid_of(&c.id);
    let mut v: Vec<RawCurve> = p.raw.iter().filter(|c| tid(c).is_some()).cloned().collect();
    v.sort_by_key(|c| tid(c));
    v
}

/// Recompute every `mem` and `bandwidth` figure from the raw slices stored
/// by `hwcal mem` (`mem.t*`, sweep `bw.*` / `loaded.*`, matrix `numa.*`) or
/// by `hwcal run` (`mem.latency.*`, `mem.read.*`). Configuration fields are
/// kept as stored. Returns whether any raw data was found.
pub fn reanalyze(p: &mut Profile) -> bool {
    let tsc = p.harness.as_ref().and_then(|h| h.tsc_mhz);
    let mut any = false;
    if let Some(m) = p.mem.clone() {
        any |= reanalyze_mem(p, &m, tsc);
        let mut matrix = m.numa_matrix.clone();
        any |= reanalyze_matrix(p, &m, &mut matrix, tsc);
        if let Some(mm) = &mut p.mem {
            mm.numa_matrix = matrix;
        }
    }
    let mut noisy_bw = Vec::new();
    if let Some(mut bw) = p.bandwidth.clone() {
        any |= reanalyze_scaling(p, &mut bw, tsc, &mut noisy_bw);
        set_headlines(&mut bw);
        any |= reanalyze_mlp(p, &mut bw, tsc);
        any |= reanalyze_loaded(p, &mut bw, tsc);
        p.bandwidth = Some(bw);
    }
    // The noise note follows the recomputed verdict (a sweep's figures
    // carry none: its latency is one point of many).
    let sweep = p.bandwidth.as_ref().is_some_and(|b| !b.loaded_latency.is_empty());
    if any && !sweep {
        let fresh = p.mem.as_ref().and_then(noisy_note).into_iter().collect();
        hwcal_model::note::refresh(&mut p.notes, "mem", &["mem.noisy"], fresh);
    }
    if any {
        let fresh = (!noisy_bw.is_empty())
            .then(|| {
                Note::warning(
                    "mem",
                    "bandwidth_noisy",
                    format!(
                        "bandwidth: {}; the rates are noisy, re-run on a quiet machine",
                        noisy_bw.join("; ")
                    ),
                )
            })
            .into_iter()
            .collect();
        hwcal_model::note::refresh(&mut p.notes, "mem", &["mem.bandwidth_noisy"], fresh);
    }
    any
}

/// The `mem` section from the first set of per-thread curves found (a run's
/// latency, a basic run, a sweep's unloaded latency), over the stored `m`.
fn reanalyze_mem(p: &mut Profile, m: &MemResult, tsc: Option<f64>) -> bool {
    let prefix = [
        MemSeries::Latency,
        MemSeries::Basic,
        MemSeries::Loaded { streams: 0 },
    ]
    .into_iter()
    .find(|pre| !thread_curves(p, pre).is_empty());
    let Some(pre) = prefix else {
        return false;
    };
    let curves = thread_curves(p, &pre);
    let r: Vec<&RawCurve> = curves.iter().collect();
    let mut new = summarize(m, &r, tsc);
    new.preemptions = m.preemptions;
    new.numa_matrix = m.numa_matrix.clone();
    p.mem = Some(new);
    true
}

/// Every NUMA matrix cell that has its raw curve (`numa.c{cpu}.n{mem}`).
fn reanalyze_matrix(p: &Profile, m: &MemResult, matrix: &mut [NumaLatency], tsc: Option<f64>) -> bool {
    let mut any = false;
    for cell in matrix.iter_mut() {
        let curves = thread_curves(
            p,
            &MemSeries::Numa {
                cpu_node: cell.cpu_node,
                mem_node: cell.mem_node,
            },
        );
        if curves.is_empty() {
            continue;
        }
        let r: Vec<&RawCurve> = curves.iter().collect();
        let tpl = template("random", "chase", m.size_bytes as usize, true, 1);
        let x = summarize(&tpl, &r, tsc);
        cell.ns_per_op = x.ns_per_op;
        cell.clk_per_op = x.clk_per_op.is_finite().then_some(x.clk_per_op);
        cell.verdict = Some(x.verdict);
        cell.ns_per_op_ci95 = x.ns_per_op_ci95;
        any = true;
    }
    any
}

/// Every bandwidth point from its curves (`hwcal run`'s `mem.*` or a sweep's
/// `bw.*`); a basic sequential run's one point has no curves of its own and
/// takes the recomputed `mem` figure.
fn reanalyze_scaling(p: &Profile, bw: &mut Bandwidth, tsc: Option<f64>, noisy: &mut Vec<String>) -> bool {
    let mut any = false;
    let basic = p.mem.as_ref().filter(|m| m.access_pattern == "sequential");
    for pt in bw.scaling.iter_mut() {
        let (op, threads) = (pt.op.clone(), pt.threads);
        let mut curves = thread_curves(p, &MemSeries::Run { op, threads });
        if curves.is_empty() {
            let op = pt.op.clone();
            curves = thread_curves(p, &MemSeries::Sweep { op, threads });
        }
        if !curves.is_empty() {
            let r: Vec<&RawCurve> = curves.iter().collect();
            let tpl = template("sequential", &pt.op, bw.size_bytes as usize, true, curves.len());
            let x = summarize(&tpl, &r, tsc);
            pt.bytes_per_sec = x.bytes_per_sec;
            let judged = judge_rate(x.bytes_per_sec, x.oncpu_fraction, &r);
            pt.verdict = Some(judged.verdict);
            pt.bytes_per_sec_ci95 = judged.ci95;
            if let Some(why) = judged.why {
                let s = if pt.threads == 1 { "" } else { "s" };
                noisy.push(format!("{} with {} thread{s}: {why}", pt.op, pt.threads));
            }
            any = true;
        } else if let Some(m) = basic.filter(|m| m.op == pt.op && m.threads == pt.threads) {
            pt.bytes_per_sec = m.bytes_per_sec;
            pt.verdict = Some(m.verdict);
        }
    }
    any
}

/// A rate's verdict, interval and, when noisy, why.
#[derive(Debug, Clone, PartialEq)]
pub struct RateJudgement {
    pub verdict: Verdict,
    pub ci95: Option<[f64; 2]>,
    pub why: Option<String>,
}

/// Judge a streaming rate from its threads' timing slices. Threads share
/// the memory unequally (one thread reads 20% faster than another, steadily),
/// so their slices are not pooled: the k-th slices of all threads, which
/// ran at about the same time, add up to the machine's rate then, and it
/// is that series which must hold still. Noisy when the threads ran less
/// than 90% of the wall time (another task had their CPUs: the rate
/// measures the scheduler, however steady) or when the series' MAD exceeds
/// 5% of its median. The 95% interval is the series median's
/// order-statistic interval, scaled onto `bytes_per_sec`.
pub fn judge_rate(bytes_per_sec: f64, oncpu: Option<f64>, curves: &[&RawCurve]) -> RateJudgement {
    let per_thread: Vec<Vec<f64>> = curves
        .iter()
        .map(|c| {
            c.points
                .iter()
                .filter(|q| q.x > 0.0 && q.y.is_finite() && q.y > 0.0)
                .map(|q| 1.0 / q.y)
                .collect()
        })
        .collect();
    let n = per_thread.iter().map(Vec::len).min().unwrap_or(0);
    let series: Vec<f64> = (0..n).map(|k| per_thread.iter().map(|t| t[k]).sum()).collect();
    let m = hwcal_stats::median(&series);
    let ci95 = hwcal_stats::median_ci95(&series)
        .filter(|_| m > 0.0 && bytes_per_sec.is_finite())
        .map(|(lo, hi)| [bytes_per_sec * lo / m, bytes_per_sec * hi / m]);
    let spread = if m > 0.0 {
        hwcal_stats::mad(&series) / m
    } else {
        f64::NAN
    };
    let why = match oncpu {
        Some(f) if f < crate::mem::MIN_ONCPU => Some(format!(
            "its threads ran {:.0}% of the time (another task had their CPUs)",
            f * 100.0
        )),
        _ if series.len() < 3 => Some("too few timing slices to judge".into()),
        _ if spread.is_nan() || spread > crate::mem::NOISY_REL => Some(format!(
            "the rate moved by {:.0}% (MAD) from slice to slice",
            spread * 100.0
        )),
        _ => None,
    };
    RateJudgement {
        verdict: if why.is_some() {
            Verdict::Noisy
        } else {
            Verdict::Ok
        },
        ci95,
        why,
    }
}

/// The headline figures: each op at the largest thread count measured, and
/// the section's verdict, noisy when any headline is.
fn set_headlines(bw: &mut Bandwidth) {
    bw.verdict = None;
    for op in ["read", "write", "copy"] {
        if let Some(best) = bw.scaling.iter().filter(|s| s.op == op).max_by_key(|s| s.threads) {
            if let Some(v) = best.verdict {
                bw.verdict = Some(bw.verdict.unwrap_or(Verdict::Ok).and(v));
            }
            let (v, ci) = (Some(best.bytes_per_sec), best.bytes_per_sec_ci95);
            match op {
                "read" => (bw.read_bytes_per_sec, bw.read_bytes_per_sec_ci95) = (v, ci),
                "write" => (bw.write_bytes_per_sec, bw.write_bytes_per_sec_ci95) = (v, ci),
                _ => (bw.copy_bytes_per_sec, bw.copy_bytes_per_sec_ci95) = (v, ci),
            }
        }
    }
}

/// The memory-level-parallelism points (`mlp.{k}`), speedups relative to
/// the first point recomputed.
fn reanalyze_mlp(p: &Profile, bw: &mut Bandwidth, tsc: Option<f64>) -> bool {
    let mut any = false;
    let mut base = None;
    for m in bw.mlp.iter_mut() {
        let curves = thread_curves(p, &MemSeries::Mlp { chains: m.chains });
        if curves.is_empty() {
            continue;
        }
        let r: Vec<&RawCurve> = curves.iter().collect();
        let tpl = template("random", "chains", bw.size_bytes as usize, true, 1);
        let x = summarize(&tpl, &r, tsc);
        (m.ns_per_load, m.ns_per_load_ci95) = (x.ns_per_op, x.ns_per_op_ci95);
        let (b, b_ci) = *base.get_or_insert((m.ns_per_load, m.ns_per_load_ci95));
        m.speedup = b / m.ns_per_load;
        m.speedup_ci95 = crate::stats::ratio_ci95(b, b_ci, m.ns_per_load, m.ns_per_load_ci95);
        any = true;
    }
    if any {
        crate::cache::judge_mlp(&mut bw.mlp);
    }
    any
}

/// The loaded-latency points (`loaded.{s}`): thread 0 is the chaser, the
/// others the streams whose bandwidth is summed.
fn reanalyze_loaded(p: &Profile, bw: &mut Bandwidth, tsc: Option<f64>) -> bool {
    let mut any = false;
    for l in bw.loaded_latency.iter_mut() {
        let curves = thread_curves(
            p,
            &MemSeries::Loaded {
                streams: l.streaming_threads,
            },
        );
        if curves.is_empty() {
            continue;
        }
        let r: Vec<&RawCurve> = curves.iter().collect();
        let tpl = template("random", "chase", bw.size_bytes as usize, true, curves.len());
        let x = summarize(&tpl, &r, tsc);
        let chaser = &x.per_thread[0];
        l.latency_ns = chaser.ns_per_op;
        l.latency_cycles = chaser.clk_per_op.is_finite().then_some(chaser.clk_per_op);
        // The chaser alone, judged as a `mem` chase is.
        let alone = summarize(
            &template("random", "chase", bw.size_bytes as usize, true, 1),
            &r[..1],
            tsc,
        );
        l.verdict = Some(alone.verdict);
        l.latency_ns_ci95 = alone.ns_per_op_ci95;
        l.stream_bytes_per_sec = x.per_thread[1..].iter().fold(0.0, |a, t| a + t.bytes_per_sec);
        any = true;
    }
    any
}

/// Why a mem figure is marked noisy, naming what triggered it.
pub fn noisy_note(m: &MemResult) -> Option<Note> {
    use crate::mem::{MIN_ONCPU, NOISY_REL};
    if m.verdict != hwcal_model::Verdict::Noisy {
        return None;
    }
    let mut why = Vec::new();
    if let Some(f) = m.oncpu_fraction.filter(|&f| f < MIN_ONCPU) {
        why.push(format!(
            "the measuring threads were on the CPU only {:.0}% of the time ({} preemption(s))",
            f * 100.0,
            m.preemptions.unwrap_or(0)
        ));
    }
    if let Some(s) = m.slice_ns_per_op.as_ref().filter(|s| s.median > 0.0) {
        let rel = s.mad / s.median;
        let gap = (m.ns_per_op - s.median).abs() / s.median;
        if rel > NOISY_REL {
            why.push(format!(
                "the timing slices spread by {:.0}% (MAD/median)",
                rel * 100.0
            ));
        }
        if gap > NOISY_REL {
            why.push(format!(
                "the mean ({:.1} ns/op) is {:.0}% off the median slice ({:.1})",
                m.ns_per_op,
                gap * 100.0,
                s.median
            ));
        }
    }
    if why.is_empty() {
        why.push("too few timing slices to judge".into());
    }
    Some(Note::warning("mem", "noisy", format!(
        "mem: noisy: {}; the machine was busy, rerun on a quiet machine (meanwhile the on-CPU figure{} is the better estimate)",
        why.join("; "),
        m.oncpu_ns_per_op.map_or(String::new(), |v| format!(", {v:.1} ns/op,"))
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::slice_point;
    use hwcal_model::BandwidthPoint;

    /// `hwcal run`'s read curves at `threads`: 12 slices per thread of 1e6
    /// lines at `ns_per_line`, on the CPU `oncpu` of the time.
    fn read_curves(threads: u32, ns_per_line: f64, oncpu: f64) -> Vec<RawCurve> {
        let series = MemSeries::Run {
            op: "read".into(),
            threads,
        };
        (0..threads as usize)
            .map(|t| RawCurve {
                id: series.thread(t),
                points: (0..12)
                    .map(|k| {
                        // A little scatter, well inside the noise threshold.
                        let ns = 1e6 * ns_per_line * (1.0 + 0.002 * (k % 3) as f64);
                        slice_point(1_000_000, ns, 3000.0, ns * oncpu)
                    })
                    .collect(),
                ..Default::default()
            })
            .collect()
    }

    fn profile(raw: Vec<RawCurve>) -> Profile {
        Profile {
            bandwidth: Some(Bandwidth {
                threads: 2,
                size_bytes: 256 << 20,
                scaling: [1, 2]
                    .into_iter()
                    .map(|threads| BandwidthPoint {
                        threads,
                        op: "read".into(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }),
            raw,
            ..Default::default()
        }
    }

    #[test]
    fn every_bandwidth_point_gets_a_verdict_and_an_interval() {
        // Quiet: 1 ns per 64-byte line per thread = 64 GB/s, two threads 128.
        let mut raw = read_curves(1, 1.0, 1.0);
        raw.extend(read_curves(2, 1.0, 1.0));
        let mut p = profile(raw);
        assert!(reanalyze(&mut p));
        let bw = p.bandwidth.clone().unwrap();
        assert_eq!(bw.verdict, Some(Verdict::Ok));
        for pt in &bw.scaling {
            assert_eq!(pt.verdict, Some(Verdict::Ok), "{pt:?}");
            let [lo, hi] = pt.bytes_per_sec_ci95.expect("an interval");
            assert!(
                lo <= pt.bytes_per_sec && pt.bytes_per_sec <= hi * 1.0001,
                "{pt:?}"
            );
            assert!(hi / lo < 1.02, "a quiet run's interval is narrow: {pt:?}");
        }
        assert!(!p.notes.iter().any(|n| n.code == "mem.bandwidth_noisy"));

        // Threads that share the memory unequally but steadily (one 25%
        // slower than the other, slice after slice): the machine's rate
        // holds still, so the figure is ok.
        let mut raw = read_curves(1, 1.0, 1.0);
        let mut two = read_curves(2, 1.0, 1.0);
        for q in &mut two[1].points {
            q.y *= 1.25;
            // On the CPU the whole time still.
            q.samples[0] *= 1.25;
        }
        raw.extend(two);
        let mut p = profile(raw);
        assert!(reanalyze(&mut p));
        assert_eq!(p.bandwidth.unwrap().verdict, Some(Verdict::Ok));

        // Another task held the CPUs half the time during the two-thread
        // read: the rate halves with every slice agreeing, and only the
        // threads' CPU time can tell.
        let mut raw = read_curves(1, 1.0, 1.0);
        raw.extend(read_curves(2, 2.0, 0.5));
        let mut p = profile(raw);
        assert!(reanalyze(&mut p));
        let bw = p.bandwidth.clone().unwrap();
        assert_eq!(
            bw.verdict,
            Some(Verdict::Noisy),
            "the headline is the 2-thread read"
        );
        assert_eq!(bw.scaling[0].verdict, Some(Verdict::Ok));
        let note = p
            .notes
            .iter()
            .find(|n| n.code == "mem.bandwidth_noisy")
            .expect("a note");
        assert!(
            note.text.contains("read with 2 threads") && note.text.contains("50%"),
            "{}",
            note.text
        );
        // Re-analysis replaces the note, never repeats it.
        assert!(reanalyze(&mut p));
        assert_eq!(
            p.notes.iter().filter(|n| n.code == "mem.bandwidth_noisy").count(),
            1
        );
    }

    #[test]
    fn a_noisy_side_gets_no_better_or_worse_in_a_comparison() {
        let mut quiet = profile([read_curves(1, 1.0, 1.0), read_curves(2, 1.0, 1.0)].concat());
        let mut busy = profile([read_curves(1, 1.0, 1.0), read_curves(2, 2.0, 0.5)].concat());
        reanalyze(&mut quiet);
        reanalyze(&mut busy);
        let c = crate::compare::compare(&quiet, &busy);
        let read = c.rows.iter().find(|r| r.figure == "read").unwrap();
        assert_eq!(
            read.mark(crate::compare::VERDICT_THRESHOLD),
            Some(crate::compare::Mark::Noisy)
        );
        let one = c.rows.iter().find(|r| r.figure == "read, 1 thread(s)").unwrap();
        // Equal and quiet, both with intervals: no significant change.
        assert_eq!(
            one.mark(crate::compare::VERDICT_THRESHOLD),
            Some(crate::compare::Mark::Same)
        );
    }
}
