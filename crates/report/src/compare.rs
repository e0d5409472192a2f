//! Side-by-side comparison of two profiles, as The Calibrator's hardware
//! database let one set machines next to each other: every figure both runs
//! measured, matched by meaning (cache level with cache level, TLB level and
//! page size with the same, context-switch ring size with the same), and
//! the ratio B / A. Pure functions: the CLI's text table and the HTML report
//! both render the same [`Comparison`].

use crate::text::human_bytes;
use hwcal_model::*;
use std::collections::BTreeSet;
use std::fmt::Write;

/// Which direction of a figure is the faster machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
    /// Descriptive (e.g. the TSC rate): neither direction is better.
    Neither,
}

/// Unit of a compared figure (decides how it is printed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Mhz,
    Bytes,
    Ns,
    Cycles,
    Us,
    BytesPerSec,
    Count,
    Iops,
    /// A plain factor (speed-up).
    Factor,
}

impl Unit {
    /// The figure with its unit, e.g. `145.0 ns`, `2 MiB`, `12.50 GB/s`.
    pub fn format(self, v: f64) -> String {
        if !v.is_finite() {
            return "-".into();
        }
        match self {
            Unit::Mhz => format!("{v:.1} MHz"),
            Unit::Bytes => human_bytes(v.max(0.0).round() as u64),
            Unit::Ns => format!("{v:.2} ns"),
            Unit::Cycles => format!("{v:.1} cy"),
            Unit::Us => format!("{v:.2} µs"),
            Unit::BytesPerSec => format!("{:.2} GB/s", v / 1e9),
            Unit::Count => format!("{}", v.round() as i64),
            Unit::Iops => format!("{v:.0} IOPS"),
            Unit::Factor => format!("{v:.2}×"),
        }
    }
}

/// One compared figure.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// `clock`, `caches`, `memory`, `tlbs`, `mem`, `bandwidth`, `ctx`, `io`.
    pub section: &'static str,
    /// What is compared, e.g. `L2 latency`.
    pub figure: String,
    pub unit: Unit,
    pub a: Option<f64>,
    pub b: Option<f64>,
    pub better: Better,
}

impl Row {
    /// B / A when both are finite and A is not zero.
    pub fn ratio(&self) -> Option<f64> {
        match (self.a, self.b) {
            (Some(a), Some(b)) if a.is_finite() && b.is_finite() && a != 0.0 => Some(b / a),
            _ => None,
        }
    }

    /// `Some(true)` when B is better than A by more than `threshold`
    /// (relative, e.g. 0.05), `Some(false)` when worse by more than that,
    /// `None` when within it, not comparable, or neither direction is better.
    pub fn b_is_better(&self, threshold: f64) -> Option<bool> {
        let r = self.ratio()?;
        let (better, worse) = match self.better {
            Better::Higher => (r > 1.0 + threshold, r < 1.0 / (1.0 + threshold)),
            Better::Lower => (r < 1.0 / (1.0 + threshold), r > 1.0 + threshold),
            Better::Neither => return None,
        };
        if better {
            Some(true)
        } else if worse {
            Some(false)
        } else {
            None
        }
    }
}

/// Everything two profiles have in common, figure by figure.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Comparison {
    pub rows: Vec<Row>,
    /// Why some figures are not compared (different settings) and which
    /// sections only one side has.
    pub notes: Vec<String>,
}

struct Builder<'a> {
    section: &'static str,
    rows: &'a mut Vec<Row>,
}

impl Builder<'_> {
    fn row(&mut self, figure: impl Into<String>, unit: Unit, better: Better, a: Option<f64>, b: Option<f64>) {
        if a.is_none() && b.is_none() {
            return;
        }
        self.rows.push(Row {
            section: self.section,
            figure: figure.into(),
            unit,
            a,
            b,
            better,
        });
    }
}

/// Compare two profiles: rows for every section both hold.
pub fn compare(a: &Profile, b: &Profile) -> Comparison {
    let mut c = Comparison::default();
    // Every one-sided note comes first, in section order, before any
    // section's own notes.
    let n = &mut c.notes;
    let clock = both(n, "clock", &a.clock, &b.clock);
    let caches = both(n, "caches", &a.caches, &b.caches);
    let memory = both(n, "memory", &a.memory, &b.memory);
    let tlbs = both(n, "TLBs", &a.tlbs, &b.tlbs);
    let mem = both(n, "mem", &a.mem, &b.mem);
    let bw = both(n, "bandwidth", &a.bandwidth, &b.bandwidth);
    let ctx = both(n, "context switch", &a.context_switch, &b.context_switch);
    let io = both(n, "io", &a.io, &b.io);

    if let Some((x, y)) = clock {
        compare_clock(&mut c, x, y);
    }
    if let Some((x, y)) = caches {
        compare_caches(&mut c, x, y);
    }
    if let Some((x, y)) = memory {
        compare_memory(&mut c, x, y);
    }
    if let Some((x, y)) = tlbs {
        compare_tlbs(&mut c, x, y);
    }
    if let Some((x, y)) = mem {
        compare_mem(&mut c, x, y);
    }
    if let Some((x, y)) = bw {
        compare_bandwidth(&mut c, x, y);
    }
    if let Some((x, y)) = ctx {
        compare_ctx(&mut c, x, y);
    }
    if let Some((x, y)) = io {
        compare_io(&mut c, x, y);
    }
    noisy_notes(&mut c.notes, a, b);
    c
}

/// Both sides of a section when both hold it; when only one does, a note
/// naming that side (a figure measured once has nothing to be compared with).
fn both<'p, T>(
    notes: &mut Vec<String>,
    name: &str,
    a: &'p Option<T>,
    b: &'p Option<T>,
) -> Option<(&'p T, &'p T)> {
    let (ha, hb) = (a.is_some(), b.is_some());
    if ha != hb {
        notes.push(format!(
            "{name}: only {} has this section; not compared",
            if ha { "A" } else { "B" }
        ));
    }
    a.as_ref().zip(b.as_ref())
}

/// Clock: the core clock (median and range), the GCD estimate and the TSC
/// rate, which only describes the machine.
fn compare_clock(out: &mut Comparison, x: &ClockResult, y: &ClockResult) {
    let mut r = Builder {
        section: "clock",
        rows: &mut out.rows,
    };
    r.row(
        "core clock",
        Unit::Mhz,
        Better::Higher,
        Some(x.core_mhz),
        Some(y.core_mhz),
    );
    r.row(
        "core clock min",
        Unit::Mhz,
        Better::Higher,
        Some(x.core_mhz_min),
        Some(y.core_mhz_min),
    );
    r.row(
        "core clock max",
        Unit::Mhz,
        Better::Higher,
        Some(x.core_mhz_max),
        Some(y.core_mhz_max),
    );
    r.row("mhz GCD", Unit::Mhz, Better::Higher, x.gcd_mhz, y.gcd_mhz);
    r.row("TSC", Unit::Mhz, Better::Neither, x.tsc_mhz, y.tsc_mhz);
}

/// Caches: matched by level, so a level only one side found still shows,
/// with the other side absent.
fn compare_caches(out: &mut Comparison, x: &[CacheLevel], y: &[CacheLevel]) {
    let levels: BTreeSet<u32> = x.iter().chain(y).map(|c| c.level).collect();
    let mut r = Builder {
        section: "caches",
        rows: &mut out.rows,
    };
    for lv in levels {
        let ca = x.iter().find(|c| c.level == lv);
        let cb = y.iter().find(|c| c.level == lv);
        let f = |g: &dyn Fn(&CacheLevel) -> Option<f64>| (ca.and_then(g), cb.and_then(g));
        let (p, q) = f(&|c| Some(c.size_bytes as f64));
        r.row(format!("L{lv} size"), Unit::Bytes, Better::Higher, p, q);
        let (p, q) = f(&|c| Some(c.latency_ns));
        r.row(format!("L{lv} latency"), Unit::Ns, Better::Lower, p, q);
        let (p, q) = f(&|c| c.latency_cycles);
        r.row(format!("L{lv} latency"), Unit::Cycles, Better::Lower, p, q);
        let (p, q) = f(&|c| c.miss_latency_ns);
        r.row(format!("L{lv} miss latency"), Unit::Ns, Better::Lower, p, q);
        let (p, q) = f(&|c| c.replace_time_ns);
        r.row(format!("L{lv} replace time"), Unit::Ns, Better::Lower, p, q);
    }
}

/// Memory latency and the MLP speed-ups, matched by chain count; huge pages
/// on one side only are noted, as they change the latency by themselves.
fn compare_memory(out: &mut Comparison, x: &MemoryLatency, y: &MemoryLatency) {
    if x.huge_pages != y.huge_pages {
        out.notes.push(
            "memory: one run used huge pages and the other did not; latencies differ for that reason too"
                .into(),
        );
    }
    let mut r = Builder {
        section: "memory",
        rows: &mut out.rows,
    };
    r.row(
        "memory latency",
        Unit::Ns,
        Better::Lower,
        Some(x.latency_ns),
        Some(y.latency_ns),
    );
    r.row(
        "memory latency",
        Unit::Cycles,
        Better::Lower,
        x.latency_cycles,
        y.latency_cycles,
    );
    let chains: BTreeSet<u32> = x.mlp.iter().chain(&y.mlp).map(|m| m.chains).collect();
    for k in chains {
        let g = |m: &MemoryLatency| m.mlp.iter().find(|p| p.chains == k).map(|p| p.speedup);
        r.row(
            format!("MLP speed-up, {k} chains"),
            Unit::Factor,
            Better::Higher,
            g(x),
            g(y),
        );
    }
}

/// TLBs: matched by page size and level (a 4 KiB L1 DTLB is not a 2 MiB one).
fn compare_tlbs(out: &mut Comparison, x: &[TlbLevel], y: &[TlbLevel]) {
    let keys: BTreeSet<(u64, u32)> = x.iter().chain(y).map(|t| (t.page_bytes, t.level)).collect();
    let mut r = Builder {
        section: "tlbs",
        rows: &mut out.rows,
    };
    for (page, lv) in keys {
        let find = |v: &[TlbLevel]| v.iter().find(|t| t.page_bytes == page && t.level == lv).cloned();
        let (ta, tb) = (find(x), find(y));
        let name = format!("L{lv} TLB ({} pages)", human_bytes(page));
        r.row(
            format!("{name} entries"),
            Unit::Count,
            Better::Higher,
            ta.as_ref().map(|t| t.entries as f64),
            tb.as_ref().map(|t| t.entries as f64),
        );
        r.row(
            format!("{name} miss latency"),
            Unit::Ns,
            Better::Lower,
            ta.as_ref().map(|t| t.miss_latency_ns),
            tb.as_ref().map(|t| t.miss_latency_ns),
        );
    }
}

/// `mem`: compared only when both ran the same benchmark (access pattern,
/// op, threads); otherwise a note says what each side ran.
fn compare_mem(out: &mut Comparison, x: &MemResult, y: &MemResult) {
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
        let mut r = Builder {
            section: "mem",
            rows: &mut out.rows,
        };
        let c = format!("{} {} ×{}", x.access_pattern, x.op, x.threads);
        r.row(
            format!("{c} per op"),
            Unit::Ns,
            Better::Lower,
            Some(x.ns_per_op),
            Some(y.ns_per_op),
        );
        r.row(
            format!("{c} per op"),
            Unit::Cycles,
            Better::Lower,
            Some(x.clk_per_op),
            Some(y.clk_per_op),
        );
        r.row(
            format!("{c} throughput"),
            Unit::BytesPerSec,
            Better::Higher,
            Some(x.bytes_per_sec),
            Some(y.bytes_per_sec),
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
fn compare_bandwidth(out: &mut Comparison, x: &Bandwidth, y: &Bandwidth) {
    let mut r = Builder {
        section: "bandwidth",
        rows: &mut out.rows,
    };
    r.row(
        "read",
        Unit::BytesPerSec,
        Better::Higher,
        x.read_bytes_per_sec,
        y.read_bytes_per_sec,
    );
    r.row(
        "write",
        Unit::BytesPerSec,
        Better::Higher,
        x.write_bytes_per_sec,
        y.write_bytes_per_sec,
    );
    r.row(
        "copy",
        Unit::BytesPerSec,
        Better::Higher,
        x.copy_bytes_per_sec,
        y.copy_bytes_per_sec,
    );
    let keys: BTreeSet<(String, u32)> = x
        .scaling
        .iter()
        .chain(&y.scaling)
        .map(|p| (p.op.clone(), p.threads))
        .collect();
    for (op, t) in keys {
        let g = |b: &Bandwidth| {
            b.scaling
                .iter()
                .find(|p| p.op == op && p.threads == t)
                .map(|p| p.bytes_per_sec)
        };
        r.row(
            format!("{op}, {t} thread(s)"),
            Unit::BytesPerSec,
            Better::Higher,
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
        let g = |b: &Bandwidth| {
            b.loaded_latency
                .iter()
                .find(|l| l.streaming_threads == k)
                .map(|l| l.latency_ns)
        };
        r.row(
            format!("latency, {k} streaming thread(s)"),
            Unit::Ns,
            Better::Lower,
            g(x),
            g(y),
        );
    }
}

/// Context switch: per process size, the overhead and the median per ring
/// size; a different kind or placement is noted, as it changes what a hop is.
fn compare_ctx(out: &mut Comparison, x: &ContextSwitch, y: &ContextSwitch) {
    if (&x.kind, &x.placement) != (&y.kind, &y.placement) {
        out.notes.push(format!(
            "context switch: A measured {} placed {}, B {} placed {}",
            x.kind, x.placement, y.kind, y.placement
        ));
    }
    // Match ring sizes by process size (KB), whichever list they are in.
    let (sa, sb) = (x.all_sizes(), y.all_sizes());
    let sizes: BTreeSet<u64> = sa.iter().chain(&sb).map(|z| z.size_kb).collect();
    let mut r = Builder {
        section: "ctx",
        rows: &mut out.rows,
    };
    for kb in sizes {
        let fa = sa.iter().find(|z| z.size_kb == kb);
        let fb = sb.iter().find(|z| z.size_kb == kb);
        r.row(
            format!("{kb} KB: overhead"),
            Unit::Us,
            Better::Neither,
            fa.map(|z| z.overhead_us),
            fb.map(|z| z.overhead_us),
        );
        let procs: BTreeSet<u32> = fa
            .iter()
            .chain(fb.iter())
            .flat_map(|z| z.points.iter().map(|p| p.nprocs))
            .collect();
        for n in procs {
            let g = |z: Option<&CtxSize>| {
                z.and_then(|z| z.points.iter().find(|p| p.nprocs == n).map(|p| p.us_median))
            };
            r.row(
                format!("{kb} KB: {n} procs (median)"),
                Unit::Us,
                Better::Lower,
                g(fa),
                g(fb),
            );
        }
    }
}

/// I/O: IOPS, throughput and latency percentiles; different jobs are noted
/// but still compared.
fn compare_io(out: &mut Comparison, x: &IoResult, y: &IoResult) {
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
    let mut r = Builder {
        section: "io",
        rows: &mut out.rows,
    };
    r.row("IOPS", Unit::Iops, Better::Higher, Some(x.iops), Some(y.iops));
    r.row(
        "throughput",
        Unit::BytesPerSec,
        Better::Higher,
        Some(x.bytes_per_sec),
        Some(y.bytes_per_sec),
    );
    r.row(
        "latency p50",
        Unit::Us,
        Better::Lower,
        Some(x.lat_p50_us),
        Some(y.lat_p50_us),
    );
    r.row(
        "latency p99",
        Unit::Us,
        Better::Lower,
        Some(x.lat_p99_us),
        Some(y.lat_p99_us),
    );
    r.row(
        "latency p99.9",
        Unit::Us,
        Better::Lower,
        Some(x.lat_p999_us),
        Some(y.lat_p999_us),
    );
}

/// A ratio of a figure the machine was too noisy to measure is no better
/// than the figure: say which side's figures carry a noisy verdict.
fn noisy_notes(notes: &mut Vec<String>, a: &Profile, b: &Profile) {
    for (name, na, nb) in [
        ("clock", noisy_clock(a), noisy_clock(b)),
        ("caches", noisy_caches(a), noisy_caches(b)),
        (
            "memory",
            a.memory.as_ref().map(|m| m.verdict),
            b.memory.as_ref().map(|m| m.verdict),
        ),
        ("TLBs", noisy_tlbs(a), noisy_tlbs(b)),
        (
            "mem",
            a.mem.as_ref().map(|m| m.verdict),
            b.mem.as_ref().map(|m| m.verdict),
        ),
        ("context switch", noisy_ctx(a), noisy_ctx(b)),
    ] {
        let (Some(na), Some(nb)) = (na, nb) else { continue };
        let who = match (na == Verdict::Noisy, nb == Verdict::Noisy) {
            (true, true) => "A and B",
            (true, false) => "A",
            (false, true) => "B",
            (false, false) => continue,
        };
        notes.push(format!(
            "{name}: some of {who}'s figures are marked noisy; their ratios are unreliable"
        ));
    }
}

fn any_noisy(mut it: impl Iterator<Item = Verdict>) -> Verdict {
    if it.any(|v| v == Verdict::Noisy) {
        Verdict::Noisy
    } else {
        Verdict::Ok
    }
}

fn noisy_clock(p: &Profile) -> Option<Verdict> {
    p.clock.as_ref().map(|c| c.verdict)
}

fn noisy_caches(p: &Profile) -> Option<Verdict> {
    p.caches.as_ref().map(|c| any_noisy(c.iter().map(|l| l.verdict)))
}

fn noisy_tlbs(p: &Profile) -> Option<Verdict> {
    p.tlbs.as_ref().map(|t| any_noisy(t.iter().map(|l| l.verdict)))
}

fn noisy_ctx(p: &Profile) -> Option<Verdict> {
    p.context_switch
        .as_ref()
        .map(|c| any_noisy(c.all_sizes().iter().flat_map(|z| &z.points).map(|q| q.verdict)))
}

/// `Xeon Foo (host)`: how a side is named in headers.
pub fn machine_label(p: &Profile) -> String {
    match &p.machine {
        Some(m) => format!("{} on {}", m.cpu_model_name.trim(), m.hostname),
        None => "machine unknown".into(),
    }
}

/// The ratio column: `1.23×`, or `-` when not comparable.
pub fn fmt_ratio(r: Option<f64>) -> String {
    r.map_or("-".into(), |r| format!("{r:.3}×"))
}

/// The comparison as a text table (what `hwcal db compare` prints).
pub fn comparison_text(c: &Comparison, label_a: &str, label_b: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "A = {label_a}");
    let _ = writeln!(s, "B = {label_b}");
    if c.rows.is_empty() {
        let _ = writeln!(s, "\nno figure measured by both runs");
    } else {
        let fw = c.rows.iter().map(|r| r.figure.chars().count()).max().unwrap_or(0);
        let _ = writeln!(
            s,
            "\n{:<9}  {:<fw$}  {:>14}  {:>14}  {:>9}",
            "section", "figure", "A", "B", "B/A"
        );
        for (i, r) in c.rows.iter().enumerate() {
            if i > 0 && c.rows[i - 1].section != r.section {
                s.push('\n');
            }
            let mark = match r.b_is_better(0.05) {
                Some(true) => "  B better",
                Some(false) => "  B worse",
                None => "",
            };
            let _ = writeln!(
                s,
                "{:<9}  {:<fw$}  {:>14}  {:>14}  {:>9}{mark}",
                r.section,
                r.figure,
                r.a.map_or("-".into(), |v| r.unit.format(v)),
                r.b.map_or("-".into(), |v| r.unit.format(v)),
                fmt_ratio(r.ratio()),
            );
        }
    }
    for n in &c.notes {
        let _ = writeln!(s, "note: {n}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwcal_model::sample::full_profile;

    fn find<'a>(c: &'a Comparison, section: &str, figure: &str, unit: Unit) -> &'a Row {
        c.rows
            .iter()
            .find(|r| r.section == section && r.figure == figure && r.unit == unit)
            .unwrap_or_else(|| panic!("no row {section}/{figure}"))
    }

    #[test]
    fn ratios_follow_the_synthetic_scaling() {
        // Variant 5: latencies × 1.5, clock ÷ 1.5, bandwidth ÷ 1.5.
        let c = compare(&full_profile(0), &full_profile(5));
        let close = |r: Option<f64>, want: f64| (r.unwrap() - want).abs() < 1e-9;
        assert!(close(
            find(&c, "clock", "core clock", Unit::Mhz).ratio(),
            1.0 / 1.5
        ));
        assert!(close(find(&c, "caches", "L1 latency", Unit::Ns).ratio(), 1.5));
        assert!(close(
            find(&c, "caches", "L3 miss latency", Unit::Ns).ratio(),
            1.5
        ));
        assert!(close(find(&c, "caches", "L2 size", Unit::Bytes).ratio(), 1.0));
        assert!(close(find(&c, "memory", "memory latency", Unit::Ns).ratio(), 1.5));
        // Cycles scale by latency × clock: 1.5 / 1.5 = 1.
        assert!(close(
            find(&c, "memory", "memory latency", Unit::Cycles).ratio(),
            1.0
        ));
        assert!(close(
            find(&c, "tlbs", "L2 TLB (4 KiB pages) miss latency", Unit::Ns).ratio(),
            1.5
        ));
        assert!(close(
            find(&c, "tlbs", "L1 TLB (2 MiB pages) entries", Unit::Count).ratio(),
            1.0
        ));
        assert!(close(
            find(&c, "bandwidth", "read", Unit::BytesPerSec).ratio(),
            1.0 / 1.5
        ));
        assert!(close(
            find(&c, "bandwidth", "write, 3 thread(s)", Unit::BytesPerSec).ratio(),
            1.0 / 1.5
        ));
        assert!(close(
            find(&c, "ctx", "64 KB: 8 procs (median)", Unit::Us).ratio(),
            1.5
        ));
        assert!(close(find(&c, "io", "IOPS", Unit::Iops).ratio(), 1.0 / 1.5));
        assert!(close(find(&c, "io", "latency p99", Unit::Us).ratio(), 1.5));
        // The synthetic profiles mark L3 and the 32-process rings noisy.
        assert_eq!(c.notes.len(), 2, "{:?}", c.notes);
        assert!(c.notes[0].starts_with("caches: some of A and B's figures are marked noisy"));
        assert!(c.notes[1].starts_with("context switch: some of A and B's"));
        // Direction: slower latency and lower clock are worse for B.
        assert_eq!(
            find(&c, "memory", "memory latency", Unit::Ns).b_is_better(0.05),
            Some(false)
        );
        assert_eq!(
            find(&c, "clock", "core clock", Unit::Mhz).b_is_better(0.05),
            Some(false)
        );
        assert_eq!(find(&c, "clock", "TSC", Unit::Mhz).b_is_better(0.05), None);
        assert_eq!(find(&c, "caches", "L2 size", Unit::Bytes).b_is_better(0.05), None);
        // And the reverse comparison says B is better.
        let r = compare(&full_profile(5), &full_profile(0));
        assert_eq!(
            find(&r, "memory", "memory latency", Unit::Ns).b_is_better(0.05),
            Some(true)
        );
    }

    #[test]
    fn a_profile_compared_with_itself_is_all_ones() {
        let p = full_profile(2);
        let c = compare(&p, &p);
        assert!(c.rows.len() > 40, "{}", c.rows.len());
        for r in &c.rows {
            if let Some(x) = r.ratio() {
                assert!((x - 1.0).abs() < 1e-12, "{r:?}");
            }
            assert_eq!(r.b_is_better(0.0), None);
        }
    }

    #[test]
    fn only_common_sections_are_compared_and_missing_levels_show_as_absent() {
        let a = full_profile(0);
        let mut b = Profile::new("hwcal clock", 0);
        b.clock = a.clock.clone();
        let mut caches = a.caches.clone().unwrap();
        caches.pop(); // B has no L3
        b.caches = Some(caches);
        let c = compare(&a, &b);
        assert!(c
            .rows
            .iter()
            .all(|r| r.section == "clock" || r.section == "caches"));
        let l3 = find(&c, "caches", "L3 latency", Unit::Ns);
        assert!(l3.a.is_some() && l3.b.is_none() && l3.ratio().is_none());
        assert!(c
            .notes
            .iter()
            .any(|n| n.contains("memory") && n.contains("only A")));
        assert!(c.notes.iter().any(|n| n.contains("io")));
        let t = comparison_text(&c, "a", "b");
        assert!(t.contains("L3 latency") && t.contains("only A"));
    }

    #[test]
    fn different_benchmarks_are_noted_not_compared() {
        let a = full_profile(0);
        let mut b = full_profile(0);
        b.mem.as_mut().unwrap().op = "read".into();
        b.mem.as_mut().unwrap().access_pattern = "sequential".into();
        let c = compare(&a, &b);
        assert!(!c.rows.iter().any(|r| r.section == "mem"));
        assert!(c.notes.iter().any(|n| n.starts_with("mem: different")));
    }

    #[test]
    fn a_noisy_side_is_named() {
        let a = full_profile(0);
        let mut b = full_profile(0);
        b.clock.as_mut().unwrap().verdict = Verdict::Noisy;
        let c = compare(&a, &b);
        assert!(c
            .notes
            .iter()
            .any(|n| n == "clock: some of B's figures are marked noisy; their ratios are unreliable"));
        let c = compare(&b, &a);
        assert!(c.notes.iter().any(|n| n.starts_with("clock: some of A's")));
    }

    #[test]
    fn zero_or_missing_a_gives_no_ratio() {
        let r = Row {
            section: "x",
            figure: "y".into(),
            unit: Unit::Ns,
            a: Some(0.0),
            b: Some(1.0),
            better: Better::Lower,
        };
        assert_eq!(r.ratio(), None);
        assert_eq!(fmt_ratio(None), "-");
        assert_eq!(Unit::BytesPerSec.format(12.5e9), "12.50 GB/s");
        assert_eq!(Unit::Bytes.format(2097152.0), "2 MiB");
    }
}
