//! Re-analysis of the memory probe's raw curves (`hwcal analyze`): every
//! `mem` and `bandwidth` figure recomputed from the per-thread timing
//! slices, and the note that says why a figure is noisy. Pure functions of
//! the profile.

use crate::mem::summarize;
use hwcal_model::curve::MemSeries;
use hwcal_model::{Bandwidth, MemResult, Note, NumaLatency, Profile, RawCurve};

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
    if let Some(mut bw) = p.bandwidth.clone() {
        any |= reanalyze_scaling(p, &mut bw, tsc);
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
        any = true;
    }
    any
}

/// Every bandwidth point from its curves (`hwcal run`'s `mem.*` or a sweep's
/// `bw.*`); a basic sequential run's one point has no curves of its own and
/// takes the recomputed `mem` figure.
fn reanalyze_scaling(p: &Profile, bw: &mut Bandwidth, tsc: Option<f64>) -> bool {
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
            pt.bytes_per_sec = summarize(&tpl, &r, tsc).bytes_per_sec;
            any = true;
        } else if let Some(m) = basic.filter(|m| m.op == pt.op && m.threads == pt.threads) {
            pt.bytes_per_sec = m.bytes_per_sec;
        }
    }
    any
}

/// The headline figures: each op at the largest thread count measured.
fn set_headlines(bw: &mut Bandwidth) {
    for op in ["read", "write", "copy"] {
        if let Some(best) = bw.scaling.iter().filter(|s| s.op == op).max_by_key(|s| s.threads) {
            let v = Some(best.bytes_per_sec);
            match op {
                "read" => bw.read_bytes_per_sec = v,
                "write" => bw.write_bytes_per_sec = v,
                _ => bw.copy_bytes_per_sec = v,
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
        m.ns_per_load = summarize(&tpl, &r, tsc).ns_per_op;
        let b = *base.get_or_insert(m.ns_per_load);
        m.speedup = b / m.ns_per_load;
        any = true;
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
