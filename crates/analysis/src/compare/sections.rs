//! The rows of each section both runs hold: clock, caches, memory, TLBs,
//! `mem`, bandwidth, context switch, I/O and the named figures, each matched
//! by meaning (a level with the same level, a ring size with the same ring
//! size, bandwidth at equal thread counts), with a note where the two runs
//! measured different things.

use super::levels::{match_levels, LevelMatch, SAME_CACHE_FACTOR};
use super::row::{Comparison, Row};
use hwcal_model::*;
use std::collections::BTreeSet;

struct Builder<'a> {
    section: &'static str,
    rows: &'a mut Vec<Row>,
    /// Whether the rows added next are noisy on either side.
    noisy: bool,
}

impl<'a> Builder<'a> {
    fn new(section: &'static str, rows: &'a mut Vec<Row>) -> Self {
        Builder {
            section,
            rows,
            noisy: false,
        }
    }

    fn row(
        &mut self,
        figure: impl Into<String>,
        unit: FigureUnit,
        better: Direction,
        a: Option<f64>,
        b: Option<f64>,
    ) {
        self.row_ci(figure, unit, better, (a, None), (b, None));
    }

    /// [`Builder::row`] with each side's 95% interval where it has one.
    fn row_ci(
        &mut self,
        figure: impl Into<String>,
        unit: FigureUnit,
        better: Direction,
        (a, a_ci): (Option<f64>, Option<[f64; 2]>),
        (b, b_ci): (Option<f64>, Option<[f64; 2]>),
    ) {
        if a.is_none() && b.is_none() {
            return;
        }
        self.rows.push(Row {
            a,
            b,
            noisy: self.noisy,
            a_ci,
            b_ci,
            ..Row::new(self.section, figure, unit, better)
        });
    }
}

/// A figure's interval in ns carried over to the same figure in cycles
/// (the clock scales both ends alike): `cycles` × the ns interval's ends
/// over `ns`.
fn in_cycles(ns: f64, ns_ci: Option<[f64; 2]>, cycles: f64) -> Option<[f64; 2]> {
    let [lo, hi] = ns_ci?;
    (ns > 0.0 && cycles.is_finite()).then(|| [cycles * lo / ns, cycles * hi / ns])
}

/// Whether either of two verdicts (where there is one) is noisy.
fn either_noisy(a: Option<Verdict>, b: Option<Verdict>) -> bool {
    a == Some(Verdict::Noisy) || b == Some(Verdict::Noisy)
}

/// Clock: the core clock (median and range), the GCD estimate and the TSC
/// rate, which only describes the machine.
pub(super) fn compare_clock(out: &mut Comparison, x: &ClockResult, y: &ClockResult) {
    let mut r = Builder::new("clock", &mut out.rows);
    r.noisy = either_noisy(Some(x.verdict), Some(y.verdict));
    r.row_ci(
        "core clock",
        FigureUnit::Mhz,
        Direction::Higher,
        (Some(x.core_mhz), x.core_mhz_ci95),
        (Some(y.core_mhz), y.core_mhz_ci95),
    );
    // The clock's range and its GCD method describe the figure above (its
    // samples' spread, one of the two methods it combines): shown, not
    // judged.
    r.row(
        "core clock min",
        FigureUnit::Mhz,
        Direction::Neither,
        Some(x.core_mhz_min),
        Some(y.core_mhz_min),
    );
    r.row(
        "core clock max",
        FigureUnit::Mhz,
        Direction::Neither,
        Some(x.core_mhz_max),
        Some(y.core_mhz_max),
    );
    r.row(
        "mhz GCD",
        FigureUnit::Mhz,
        Direction::Neither,
        x.gcd_mhz,
        y.gcd_mhz,
    );
    r.row("TSC", FigureUnit::Mhz, Direction::Neither, x.tsc_mhz, y.tsc_mhz);
}

/// Caches: matched by what they are ([`match_levels`]); a level only one
/// side found still shows, named so, with the other side absent.
pub(super) fn compare_caches(out: &mut Comparison, x: &[CacheLevel], y: &[CacheLevel]) {
    let mut r = Builder::new("caches", &mut out.rows);
    let matches = match_levels(x, y);
    let mut apart = Vec::new();
    for &m in &matches {
        let (ca, cb, name) = match m {
            LevelMatch::Both(i, j) if x[i].level == y[j].level => {
                (Some(&x[i]), Some(&y[j]), format!("L{}", x[i].level))
            }
            LevelMatch::Both(i, j) => (
                Some(&x[i]),
                Some(&y[j]),
                format!("L{} (B: L{})", x[i].level, y[j].level),
            ),
            LevelMatch::OnlyA(i) => (Some(&x[i]), None, format!("L{} (only A)", x[i].level)),
            LevelMatch::OnlyB(j) => (None, Some(&y[j]), format!("L{} (only B)", y[j].level)),
        };
        r.noisy = either_noisy(ca.map(|c| c.verdict), cb.map(|c| c.verdict));
        let f = |g: &dyn Fn(&CacheLevel) -> Option<f64>| (ca.and_then(g), cb.and_then(g));
        let ci = |c: Option<&CacheLevel>, g: &dyn Fn(&CacheLevel) -> Option<[f64; 2]>| c.and_then(g);
        let size_ci = |c: &CacheLevel| c.size_bytes_ci95.map(|[lo, hi]| [lo as f64, hi as f64]);
        let (p, q) = f(&|c| Some(c.size_bytes as f64));
        let (pa, qa) = (ci(ca, &size_ci), ci(cb, &size_ci));
        r.row_ci(
            format!("{name} size"),
            FigureUnit::Bytes,
            Direction::Higher,
            (p, pa),
            (q, qa),
        );
        let (p, q) = f(&|c| Some(c.latency_ns));
        let (pa, qa) = (ci(ca, &|c| c.latency_ns_ci95), ci(cb, &|c| c.latency_ns_ci95));
        r.row_ci(
            format!("{name} latency"),
            FigureUnit::Ns,
            Direction::Lower,
            (p, pa),
            (q, qa),
        );
        let cy = |c: Option<&CacheLevel>| {
            let c = c?;
            let v = c.latency_cycles?;
            Some((v, in_cycles(c.latency_ns, c.latency_ns_ci95, v)))
        };
        let (p, q) = (cy(ca), cy(cb));
        r.row_ci(
            format!("{name} latency"),
            FigureUnit::Cycles,
            Direction::Lower,
            (p.map(|p| p.0), p.and_then(|p| p.1)),
            (q.map(|q| q.0), q.and_then(|q| q.1)),
        );
        // Miss latency and replace time are steps to the next level: where
        // the two runs' next levels are not the same cache (one found an
        // L3 the other did not), they are steps to different places and
        // are shown without a ratio.
        let first = r.rows.len();
        let (p, q) = f(&|c| c.miss_latency_ns);
        let (pa, qa) = (
            ci(ca, &|c| c.miss_latency_ns_ci95),
            ci(cb, &|c| c.miss_latency_ns_ci95),
        );
        r.row_ci(
            format!("{name} miss latency"),
            FigureUnit::Ns,
            Direction::Lower,
            (p, pa),
            (q, qa),
        );
        let (p, q) = f(&|c| c.replace_time_ns);
        let (pa, qa) = (
            ci(ca, &|c| c.replace_time_ns_ci95),
            ci(cb, &|c| c.replace_time_ns_ci95),
        );
        r.row_ci(
            format!("{name} replace time"),
            FigureUnit::Ns,
            Direction::Lower,
            (p, pa),
            (q, qa),
        );
        if let LevelMatch::Both(i, j) = m {
            let same_next = match (i + 1 < x.len(), j + 1 < y.len()) {
                (true, true) => matches.contains(&LevelMatch::Both(i + 1, j + 1)),
                (false, false) => true,
                _ => false,
            };
            if !same_next {
                for row in &mut r.rows[first..] {
                    row.unlike = true;
                }
                apart.push(format!("L{}", x[i].level));
            }
        }
    }
    if !apart.is_empty() {
        out.notes.push(format!(
            "caches: the level after {} is not the same cache in A and B (one run found a level the \
             other did not), so the miss latency and replace time, steps to that level, are not compared",
            apart.join(", ")
        ));
    }
    let mut only = (Vec::new(), Vec::new());
    for m in matches {
        let name = |c: &CacheLevel| format!("L{} ({})", c.level, human_bytes(c.size_bytes));
        match m {
            LevelMatch::OnlyA(i) => only.0.push(name(&x[i])),
            LevelMatch::OnlyB(j) => only.1.push(name(&y[j])),
            LevelMatch::Both(..) => {}
        }
    }
    for (who, other, levels) in [("A", "B", only.0), ("B", "A", only.1)] {
        if !levels.is_empty() {
            out.notes.push(format!(
                "caches: no level of {other} matches {who}'s {} (none within a factor of {SAME_CACHE_FACTOR} \
                 in size, nor the same nominal level); shown as only in {who}",
                levels.join(", ")
            ));
        }
    }
}

/// Memory latency and the MLP speed-ups, matched by chain count; huge pages
/// on one side only are noted, as they change the latency by themselves.
pub(super) fn compare_memory(out: &mut Comparison, x: &MemoryLatency, y: &MemoryLatency) {
    if x.huge_pages != y.huge_pages {
        out.notes.push(
            "memory: one run used huge pages and the other did not; latencies differ for that reason too"
                .into(),
        );
    }
    let mut r = Builder::new("memory", &mut out.rows);
    r.noisy = either_noisy(Some(x.verdict), Some(y.verdict));
    r.row_ci(
        "memory latency",
        FigureUnit::Ns,
        Direction::Lower,
        (Some(x.latency_ns), x.latency_ns_ci95),
        (Some(y.latency_ns), y.latency_ns_ci95),
    );
    let cy = |m: &MemoryLatency| {
        let ci = m
            .latency_cycles
            .and_then(|c| in_cycles(m.latency_ns, m.latency_ns_ci95, c));
        (m.latency_cycles, ci)
    };
    r.row_ci(
        "memory latency",
        FigureUnit::Cycles,
        Direction::Lower,
        cy(x),
        cy(y),
    );
    // DRAM's latency with the page walks held out, where both runs measured
    // it: the figure that depends on neither the page size nor the footprint.
    if let (Some(a), Some(b)) = (x.latency_no_walks_ns, y.latency_no_walks_ns) {
        let v = |m: &MemoryLatency| m.latency_no_walks_verdict.unwrap_or(m.verdict);
        let headline = r.noisy;
        r.noisy = either_noisy(Some(v(x)), Some(v(y)));
        r.row_ci(
            "memory latency, no page walks",
            FigureUnit::Ns,
            Direction::Lower,
            (Some(a), x.latency_no_walks_ns_ci95),
            (Some(b), y.latency_no_walks_ns_ci95),
        );
        r.noisy = headline;
    }
    let chains: BTreeSet<u32> = x.mlp.iter().chain(&y.mlp).map(|m| m.chains).collect();
    for k in chains {
        let g = |m: &MemoryLatency| {
            let p = m.mlp.iter().find(|p| p.chains == k);
            (p.map(|p| p.speedup), p.and_then(|p| p.speedup_ci95))
        };
        r.row_ci(
            format!("MLP speed-up, {k} chains"),
            FigureUnit::Factor,
            Direction::Higher,
            g(x),
            g(y),
        );
    }
}

/// TLBs: matched by page size and level (a 4 KiB L1 DTLB is not a 2 MiB one).
pub(super) fn compare_tlbs(out: &mut Comparison, x: &[TlbLevel], y: &[TlbLevel]) {
    let keys: BTreeSet<(u64, u32)> = x.iter().chain(y).map(|t| (t.page_bytes, t.level)).collect();
    let mut r = Builder::new("tlbs", &mut out.rows);
    for (page, lv) in keys {
        let find = |v: &[TlbLevel]| v.iter().find(|t| t.page_bytes == page && t.level == lv).cloned();
        let (ta, tb) = (find(x), find(y));
        r.noisy = either_noisy(ta.as_ref().map(|t| t.verdict), tb.as_ref().map(|t| t.verdict));
        let name = format!("L{lv} TLB ({} pages)", human_bytes(page));
        let entries = |t: &Option<TlbLevel>| {
            t.as_ref().map(|t| t.entries as f64).map(|e| {
                let ci = t.as_ref().and_then(|t| t.entries_ci95);
                (e, ci.map(|[lo, hi]| [lo as f64, hi as f64]))
            })
        };
        let (ea, eb) = (entries(&ta), entries(&tb));
        r.row_ci(
            format!("{name} entries"),
            FigureUnit::Count,
            Direction::Higher,
            (ea.map(|e| e.0), ea.and_then(|e| e.1)),
            (eb.map(|e| e.0), eb.and_then(|e| e.1)),
        );
        let miss = |t: &Option<TlbLevel>| {
            (
                t.as_ref().map(|t| t.miss_latency_ns),
                t.as_ref().and_then(|t| t.miss_latency_ns_ci95),
            )
        };
        r.row_ci(
            format!("{name} miss latency"),
            FigureUnit::Ns,
            Direction::Lower,
            miss(&ta),
            miss(&tb),
        );
    }
}

/// `mem`: compared only when both ran the same benchmark (access pattern,
/// op, threads); otherwise a note says what each side ran.
pub(super) fn compare_mem(out: &mut Comparison, x: &MemResult, y: &MemResult) {
    let cfg = |m: &MemResult| {
        format!(
            "{} {} ×{} {}",
            m.access_pattern,
            m.op,
            m.threads,
            human_bytes(m.size_bytes)
        )
    };
    if (&x.access_pattern, &x.op, x.threads) == (&y.access_pattern, &y.op, y.threads) {
        let mut r = Builder::new("mem", &mut out.rows);
        r.noisy = either_noisy(Some(x.verdict), Some(y.verdict));
        let c = format!("{} {} ×{}", x.access_pattern, x.op, x.threads);
        r.row_ci(
            format!("{c} per op"),
            FigureUnit::Ns,
            Direction::Lower,
            (Some(x.ns_per_op), x.ns_per_op_ci95),
            (Some(y.ns_per_op), y.ns_per_op_ci95),
        );
        let cy = |m: &MemResult| {
            (
                Some(m.clk_per_op),
                in_cycles(m.ns_per_op, m.ns_per_op_ci95, m.clk_per_op),
            )
        };
        r.row_ci(
            format!("{c} per op"),
            FigureUnit::Cycles,
            Direction::Lower,
            cy(x),
            cy(y),
        );
        r.row_ci(
            format!("{c} throughput"),
            FigureUnit::BytesPerSec,
            Direction::Higher,
            (Some(x.bytes_per_sec), x.bytes_per_sec_ci95),
            (Some(y.bytes_per_sec), y.bytes_per_sec_ci95),
        );
    } else {
        out.notes.push(format!(
            "mem: different benchmarks (A: {}, B: {}); not compared",
            cfg(x),
            cfg(y)
        ));
    }
}

/// Bandwidth: read/write/copy, the thread scaling matched by op and thread
/// count, and the loaded latency matched by the number of streaming threads.
/// Bandwidth grows with threads, so the headline figures are compared only
/// when both sides used as many threads; otherwise both are shown, the
/// thread counts named, without a ratio, and the per-thread-count rows are
/// where the machines meet.
pub(super) fn compare_bandwidth(out: &mut Comparison, x: &Bandwidth, y: &Bandwidth) {
    let alike = x.threads == y.threads;
    if !alike {
        out.notes.push(format!(
            "bandwidth: A's read/write/copy figures used {} thread(s), B's {}; not compared (the rows \
             per thread count compare them where both measured the same count)",
            x.threads, y.threads
        ));
    }
    let mut r = Builder::new("bandwidth", &mut out.rows);
    // Either side's headlines judged noisy: no better/worse on them.
    r.noisy = either_noisy(x.verdict, y.verdict);
    let headline = |op: &str| {
        if alike {
            op.to_string()
        } else {
            format!("{op} (A {} threads, B {})", x.threads, y.threads)
        }
    };
    let first = r.rows.len();
    r.row_ci(
        headline("read"),
        FigureUnit::BytesPerSec,
        Direction::Higher,
        (x.read_bytes_per_sec, x.read_bytes_per_sec_ci95),
        (y.read_bytes_per_sec, y.read_bytes_per_sec_ci95),
    );
    r.row_ci(
        headline("write"),
        FigureUnit::BytesPerSec,
        Direction::Higher,
        (x.write_bytes_per_sec, x.write_bytes_per_sec_ci95),
        (y.write_bytes_per_sec, y.write_bytes_per_sec_ci95),
    );
    r.row_ci(
        headline("copy"),
        FigureUnit::BytesPerSec,
        Direction::Higher,
        (x.copy_bytes_per_sec, x.copy_bytes_per_sec_ci95),
        (y.copy_bytes_per_sec, y.copy_bytes_per_sec_ci95),
    );
    for row in &mut r.rows[first..] {
        row.unlike = !alike;
    }
    let keys: BTreeSet<(String, u32)> = x
        .scaling
        .iter()
        .chain(&y.scaling)
        .map(|p| (p.op.clone(), p.threads))
        .collect();
    for (op, t) in keys {
        let point = |b: &'_ Bandwidth| b.scaling.iter().find(|p| p.op == op && p.threads == t).cloned();
        let g = |b: &Bandwidth| {
            let p = point(b);
            (
                p.as_ref().map(|p| p.bytes_per_sec),
                p.and_then(|p| p.bytes_per_sec_ci95),
            )
        };
        r.noisy = either_noisy(point(x).and_then(|p| p.verdict), point(y).and_then(|p| p.verdict));
        r.row_ci(
            format!("{op}, {t} thread(s)"),
            FigureUnit::BytesPerSec,
            Direction::Higher,
            g(x),
            g(y),
        );
    }
    let keys: BTreeSet<u32> = x
        .loaded_latency
        .iter()
        .chain(&y.loaded_latency)
        .map(|l| l.streaming_threads)
        .collect();
    for k in keys {
        let point = |b: &'_ Bandwidth| {
            b.loaded_latency
                .iter()
                .find(|l| l.streaming_threads == k)
                .cloned()
        };
        let g = |b: &Bandwidth| {
            let l = point(b);
            (
                l.as_ref().map(|l| l.latency_ns),
                l.and_then(|l| l.latency_ns_ci95),
            )
        };
        r.noisy = either_noisy(point(x).and_then(|l| l.verdict), point(y).and_then(|l| l.verdict));
        r.row_ci(
            format!("latency, {k} streaming thread(s)"),
            FigureUnit::Ns,
            Direction::Lower,
            g(x),
            g(y),
        );
    }
}

/// Context switch: per process size, the overhead and the median per ring
/// size; a different kind or placement is noted, as it changes what a hop is.
pub(super) fn compare_ctx(out: &mut Comparison, x: &ContextSwitch, y: &ContextSwitch) {
    if (&x.kind, &x.placement) != (&y.kind, &y.placement) {
        out.notes.push(format!(
            "context switch: A measured {} placed {}, B {} placed {}",
            x.kind, x.placement, y.kind, y.placement
        ));
    }
    // Match ring sizes by process size (KB), whichever list they are in.
    let (sa, sb) = (x.all_sizes(), y.all_sizes());
    let sizes: BTreeSet<u64> = sa.iter().chain(&sb).map(|z| z.size_kb).collect();
    let mut r = Builder::new("ctx", &mut out.rows);
    for kb in sizes {
        let fa = sa.iter().find(|z| z.size_kb == kb);
        let fb = sb.iter().find(|z| z.size_kb == kb);
        r.noisy = false;
        r.row(
            format!("{kb} KiB: overhead"),
            FigureUnit::Us,
            Direction::Neither,
            fa.map(|z| z.overhead_us),
            fb.map(|z| z.overhead_us),
        );
        let procs: BTreeSet<u32> = fa
            .iter()
            .chain(fb.iter())
            .flat_map(|z| z.points.iter().map(|p| p.nprocs))
            .collect();
        for n in procs {
            fn point(z: Option<&CtxSize>, n: u32) -> Option<&CtxPoint> {
                z.and_then(|z| z.points.iter().find(|p| p.nprocs == n))
            }
            let g = |z: Option<&CtxSize>| {
                let p = point(z, n);
                (p.map(|p| p.us_median), p.and_then(|p| p.us_median_ci95))
            };
            r.noisy = either_noisy(point(fa, n).map(|p| p.verdict), point(fb, n).map(|p| p.verdict));
            r.row_ci(
                format!("{kb} KiB: {n} procs (median)"),
                FigureUnit::Us,
                Direction::Lower,
                g(fa),
                g(fb),
            );
        }
    }
}

/// I/O: IOPS, throughput and latency percentiles; different jobs are noted
/// but still compared.
pub(super) fn compare_io(out: &mut Comparison, x: &IoResult, y: &IoResult) {
    let cfg = |i: &IoResult| {
        format!(
            "{} bs={} {} qd={} direct={}",
            i.rw,
            human_bytes(i.bs_bytes),
            i.engine,
            i.iodepth,
            i.direct
        )
    };
    if cfg(x) != cfg(y) {
        out.notes
            .push(format!("io: different jobs (A: {}, B: {})", cfg(x), cfg(y)));
    }
    let mut r = Builder::new("io", &mut out.rows);
    r.noisy = either_noisy(x.verdict, y.verdict);
    type Get = fn(&IoResult) -> (f64, Option<[f64; 2]>);
    let rows: [(&str, FigureUnit, Direction, Get); 5] = [
        ("IOPS", FigureUnit::Iops, Direction::Higher, |i| {
            (i.iops, i.iops_ci95)
        }),
        ("throughput", FigureUnit::BytesPerSec, Direction::Higher, |i| {
            (i.bytes_per_sec, i.bytes_per_sec_ci95)
        }),
        ("latency p50", FigureUnit::Us, Direction::Lower, |i| {
            (i.lat_p50_us, i.lat_p50_us_ci95)
        }),
        ("latency p99", FigureUnit::Us, Direction::Lower, |i| {
            (i.lat_p99_us, i.lat_p99_us_ci95)
        }),
        ("latency p99.9", FigureUnit::Us, Direction::Lower, |i| {
            (i.lat_p999_us, i.lat_p999_us_ci95)
        }),
    ];
    for (name, unit, better, get) in rows {
        let ((a, a_ci), (b, b_ci)) = (get(x), get(y));
        r.row_ci(name, unit, better, (Some(a), a_ci), (Some(b), b_ci));
    }
}

/// Named figures (probes without a section of their own), matched by id;
/// a figure only one run has shows with the other side absent.
pub(super) fn compare_figures(out: &mut Comparison, x: &[Figure], y: &[Figure]) {
    let mut ids: Vec<&str> = Vec::new();
    for f in x.iter().chain(y) {
        if !ids.contains(&f.id.as_str()) {
            ids.push(&f.id);
        }
    }
    let mut r = Builder::new("figures", &mut out.rows);
    for id in ids {
        let (fa, fb) = (x.iter().find(|f| f.id == id), y.iter().find(|f| f.id == id));
        let Some(f) = fa.or(fb) else { continue };
        if fa.zip(fb).is_some_and(|(a, b)| a.unit != b.unit) {
            continue;
        }
        r.noisy = either_noisy(fa.map(|f| f.verdict), fb.map(|f| f.verdict));
        r.row_ci(
            format!("{}: {}", f.probe, f.name),
            f.unit,
            f.better,
            (fa.and_then(|f| f.value), fa.and_then(|f| f.ci95)),
            (fb.and_then(|f| f.value), fb.and_then(|f| f.ci95)),
        );
    }
}
