//! Side-by-side comparison of two profiles, as The Calibrator's hardware
//! database let one set machines next to each other: every figure both runs
//! measured, matched by meaning (cache level with cache level, TLB level and
//! page size with the same, context-switch ring size with the same), and
//! the ratio B / A. Pure functions: the CLI's text table, its JSON and the
//! HTML report all render the same [`Comparison`].
//!
//! A comparison must not mislead (issue 16): cache levels are paired by
//! what they are, not by their number (a busy run can show a spurious
//! extra level, and "L3 against L3" then sets a 4 MiB artefact against a
//! 32 MiB cache); bandwidth is compared at equal thread counts only; and a
//! figure noisy on either side gets no better/worse verdict.

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

impl From<FigureUnit> for Unit {
    fn from(u: FigureUnit) -> Unit {
        match u {
            FigureUnit::Ns => Unit::Ns,
            FigureUnit::Cycles => Unit::Cycles,
            FigureUnit::Us => Unit::Us,
            FigureUnit::Mhz => Unit::Mhz,
            FigureUnit::Bytes => Unit::Bytes,
            FigureUnit::BytesPerSec => Unit::BytesPerSec,
            FigureUnit::Count => Unit::Count,
            FigureUnit::Iops => Unit::Iops,
            FigureUnit::Factor => Unit::Factor,
        }
    }
}

impl From<Direction> for Better {
    fn from(d: Direction) -> Better {
        match d {
            Direction::Higher => Better::Higher,
            Direction::Lower => Better::Lower,
            Direction::Neither => Better::Neither,
        }
    }
}

impl Unit {
    /// The unit's name in the JSON comparison.
    pub fn name(self) -> &'static str {
        match self {
            Unit::Mhz => "MHz",
            Unit::Bytes => "bytes",
            Unit::Ns => "ns",
            Unit::Cycles => "cycles",
            Unit::Us => "us",
            Unit::BytesPerSec => "bytes_per_sec",
            Unit::Count => "count",
            Unit::Iops => "iops",
            Unit::Factor => "factor",
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
    /// The figure carries a noisy verdict on either side: its ratio is
    /// shown, but no better/worse.
    pub noisy: bool,
    /// The two figures were measured under different conditions (e.g.
    /// bandwidth at different thread counts, said in `figure`): no ratio.
    pub unlike: bool,
}

/// The verdict on one row, B against A.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Better,
    Worse,
    /// A noisy figure on either side: no verdict either way.
    Noisy,
}

impl Mark {
    /// How the text table and the HTML page say it.
    pub fn word(self) -> &'static str {
        match self {
            Mark::Better => "B better",
            Mark::Worse => "B worse",
            Mark::Noisy => "noisy",
        }
    }
}

impl Row {
    /// B / A when both are finite, A is not zero and the two were measured
    /// alike.
    pub fn ratio(&self) -> Option<f64> {
        match (self.a, self.b) {
            (Some(a), Some(b)) if !self.unlike && a.is_finite() && b.is_finite() && a != 0.0 => Some(b / a),
            _ => None,
        }
    }

    /// The row's verdict: [`Mark::Noisy`] where either side is noisy and
    /// both were measured (and the figure has a better direction at all),
    /// else better/worse as [`Row::b_is_better`].
    pub fn mark(&self, threshold: f64) -> Option<Mark> {
        if self.noisy && self.ratio().is_some() && self.better != Better::Neither {
            return Some(Mark::Noisy);
        }
        self.b_is_better(threshold)
            .map(|b| if b { Mark::Better } else { Mark::Worse })
    }

    /// `Some(true)` when B is better than A by more than `threshold`
    /// (relative, e.g. 0.05), `Some(false)` when worse by more than that,
    /// `None` when within it, not comparable, noisy on either side, or
    /// neither direction is better.
    pub fn b_is_better(&self, threshold: f64) -> Option<bool> {
        if self.noisy {
            return None;
        }
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
            noisy: self.noisy,
            unlike: false,
        });
    }
}

/// Whether either of two verdicts (where there is one) is noisy.
fn either_noisy(a: Option<Verdict>, b: Option<Verdict>) -> bool {
    a == Some(Verdict::Noisy) || b == Some(Verdict::Noisy)
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
    compare_figures(&mut c, &a.figures, &b.figures);
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
    let mut r = Builder::new("clock", &mut out.rows);
    r.noisy = either_noisy(Some(x.verdict), Some(y.verdict));
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

/// Whether two cache levels are the same cache: their effective sizes
/// within [`SAME_CACHE_FACTOR`] of each other, or the same nominal level
/// each read within that factor of its own nominal size (the L2 of a
/// 512 KiB-L2 machine against the L2 of a 2 MiB-L2 one).
fn same_cache(a: &CacheLevel, b: &CacheLevel) -> bool {
    let near = |x: u64, y: u64| {
        let (x, y) = (x.max(1) as f64, y.max(1) as f64);
        x.max(y) / x.min(y) <= SAME_CACHE_FACTOR
    };
    let is_nominal = |c: &CacheLevel| c.nominal_size_bytes.is_some_and(|n| near(c.size_bytes, n));
    near(a.size_bytes, b.size_bytes) || (a.level == b.level && is_nominal(a) && is_nominal(b))
}

/// How far apart two effective sizes of the same cache may be: runs of one
/// machine differ by up to about 30% (a busy sibling, page colouring); a
/// spurious level (TLB misses, a busy neighbour) sits 4× or more from the
/// real one.
pub const SAME_CACHE_FACTOR: f64 = 2.0;

/// One side of a matched pair of cache levels, or a level only one side has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LevelMatch {
    /// Indexes into A's and B's levels.
    Both(usize, usize),
    OnlyA(usize),
    OnlyB(usize),
}

/// Pair A's cache levels with B's by what they are ([`same_cache`]), in
/// order (a pair never crosses another), preferring the same level number
/// and then the closest size; what is left is listed as one side's only.
pub fn match_levels(x: &[CacheLevel], y: &[CacheLevel]) -> Vec<LevelMatch> {
    let mut out = Vec::new();
    let mut next_b = 0;
    for (i, a) in x.iter().enumerate() {
        let dist = |b: &CacheLevel| {
            ((a.size_bytes.max(1) as f64) / (b.size_bytes.max(1) as f64))
                .ln()
                .abs()
        };
        let pick = (next_b..y.len())
            .filter(|&j| same_cache(a, &y[j]))
            .min_by(|&j, &k| {
                (y[j].level != a.level)
                    .cmp(&(y[k].level != a.level))
                    .then(dist(&y[j]).total_cmp(&dist(&y[k])))
            });
        match pick {
            Some(j) => {
                out.extend((next_b..j).map(LevelMatch::OnlyB));
                out.push(LevelMatch::Both(i, j));
                next_b = j + 1;
            }
            None => out.push(LevelMatch::OnlyA(i)),
        }
    }
    out.extend((next_b..y.len()).map(LevelMatch::OnlyB));
    out
}

/// Caches: matched by what they are ([`match_levels`]); a level only one
/// side found still shows, named so, with the other side absent.
fn compare_caches(out: &mut Comparison, x: &[CacheLevel], y: &[CacheLevel]) {
    let mut r = Builder::new("caches", &mut out.rows);
    for m in match_levels(x, y) {
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
        let (p, q) = f(&|c| Some(c.size_bytes as f64));
        r.row(format!("{name} size"), Unit::Bytes, Better::Higher, p, q);
        let (p, q) = f(&|c| Some(c.latency_ns));
        r.row(format!("{name} latency"), Unit::Ns, Better::Lower, p, q);
        let (p, q) = f(&|c| c.latency_cycles);
        r.row(format!("{name} latency"), Unit::Cycles, Better::Lower, p, q);
        let (p, q) = f(&|c| c.miss_latency_ns);
        r.row(format!("{name} miss latency"), Unit::Ns, Better::Lower, p, q);
        let (p, q) = f(&|c| c.replace_time_ns);
        r.row(format!("{name} replace time"), Unit::Ns, Better::Lower, p, q);
    }
    let mut only = (Vec::new(), Vec::new());
    for m in match_levels(x, y) {
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
fn compare_memory(out: &mut Comparison, x: &MemoryLatency, y: &MemoryLatency) {
    if x.huge_pages != y.huge_pages {
        out.notes.push(
            "memory: one run used huge pages and the other did not; latencies differ for that reason too"
                .into(),
        );
    }
    let mut r = Builder::new("memory", &mut out.rows);
    r.noisy = either_noisy(Some(x.verdict), Some(y.verdict));
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
    let mut r = Builder::new("tlbs", &mut out.rows);
    for (page, lv) in keys {
        let find = |v: &[TlbLevel]| v.iter().find(|t| t.page_bytes == page && t.level == lv).cloned();
        let (ta, tb) = (find(x), find(y));
        r.noisy = either_noisy(ta.as_ref().map(|t| t.verdict), tb.as_ref().map(|t| t.verdict));
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
        let mut r = Builder::new("mem", &mut out.rows);
        r.noisy = either_noisy(Some(x.verdict), Some(y.verdict));
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
/// Bandwidth grows with threads, so the headline figures are compared only
/// when both sides used as many threads; otherwise both are shown, the
/// thread counts named, without a ratio, and the per-thread-count rows are
/// where the machines meet.
fn compare_bandwidth(out: &mut Comparison, x: &Bandwidth, y: &Bandwidth) {
    let alike = x.threads == y.threads;
    if !alike {
        out.notes.push(format!(
            "bandwidth: A's read/write/copy figures used {} thread(s), B's {}; not compared (the rows \
             per thread count compare them where both measured the same count)",
            x.threads, y.threads
        ));
    }
    let mut r = Builder::new("bandwidth", &mut out.rows);
    let headline = |op: &str| {
        if alike {
            op.to_string()
        } else {
            format!("{op} (A {} threads, B {})", x.threads, y.threads)
        }
    };
    let first = r.rows.len();
    r.row(
        headline("read"),
        Unit::BytesPerSec,
        Better::Higher,
        x.read_bytes_per_sec,
        y.read_bytes_per_sec,
    );
    r.row(
        headline("write"),
        Unit::BytesPerSec,
        Better::Higher,
        x.write_bytes_per_sec,
        y.write_bytes_per_sec,
    );
    r.row(
        headline("copy"),
        Unit::BytesPerSec,
        Better::Higher,
        x.copy_bytes_per_sec,
        y.copy_bytes_per_sec,
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
    let mut r = Builder::new("ctx", &mut out.rows);
    for kb in sizes {
        let fa = sa.iter().find(|z| z.size_kb == kb);
        let fb = sb.iter().find(|z| z.size_kb == kb);
        r.noisy = false;
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
            fn point(z: Option<&CtxSize>, n: u32) -> Option<&CtxPoint> {
                z.and_then(|z| z.points.iter().find(|p| p.nprocs == n))
            }
            let g = |z: Option<&CtxSize>| point(z, n).map(|p| p.us_median);
            r.noisy = either_noisy(point(fa, n).map(|p| p.verdict), point(fb, n).map(|p| p.verdict));
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
    let mut r = Builder::new("io", &mut out.rows);
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

/// Named figures (probes without a section of their own), matched by id;
/// a figure only one run has shows with the other side absent.
fn compare_figures(out: &mut Comparison, x: &[Figure], y: &[Figure]) {
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
        r.row(
            format!("{}: {}", f.probe, f.name),
            f.unit.into(),
            f.better.into(),
            fa.and_then(|f| f.value),
            fb.and_then(|f| f.value),
        );
    }
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

/// How far B / A must be from 1 for a better/worse verdict.
pub const VERDICT_THRESHOLD: f64 = 0.05;

/// The comparison as JSON (what `hwcal db compare --json` prints): the two
/// runs' labels, one object per row (`a`, `b`, `ratio` null where absent
/// or not comparable; `verdict` `better` / `worse` for B against A,
/// `noisy`, or null) and the notes.
pub fn comparison_json(c: &Comparison, label_a: &str, label_b: &str) -> Vec<u8> {
    use serde_json::{json, Value};
    let num = |v: Option<f64>| v.map_or(Value::Null, Value::from);
    let rows: Vec<Value> = c
        .rows
        .iter()
        .map(|r| {
            json!({
                "section": r.section,
                "figure": r.figure,
                "unit": r.unit.name(),
                "a": num(r.a),
                "b": num(r.b),
                "ratio": num(r.ratio()),
                "higher_is_better": match r.better {
                    Better::Higher => Value::Bool(true),
                    Better::Lower => Value::Bool(false),
                    Better::Neither => Value::Null,
                },
                "noisy": r.noisy,
                "comparable": !r.unlike,
                "verdict": r.mark(VERDICT_THRESHOLD).map(|m| match m {
                    Mark::Better => "better",
                    Mark::Worse => "worse",
                    Mark::Noisy => "noisy",
                }),
            })
        })
        .collect();
    let doc = json!({
        "a": label_a,
        "b": label_b,
        "verdict_threshold": VERDICT_THRESHOLD,
        "rows": rows,
        "notes": c.notes,
    });
    let mut out = serde_json::to_vec_pretty(&doc).unwrap_or_default();
    out.push(b'\n');
    out
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
            let mark = r
                .mark(VERDICT_THRESHOLD)
                .map_or(String::new(), |m| format!("  {}", m.word()));
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
        let l3 = find(&c, "caches", "L3 (only A) latency", Unit::Ns);
        assert!(l3.a.is_some() && l3.b.is_none() && l3.ratio().is_none());
        assert!(c
            .notes
            .iter()
            .any(|n| n.contains("memory") && n.contains("only A")));
        assert!(c.notes.iter().any(|n| n.contains("io")));
        let t = comparison_text(&c, "a", "b");
        assert!(t.contains("L3 (only A) latency"));
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

    fn level(level: u32, kib: u64, ns: f64, nominal_kib: Option<u64>) -> CacheLevel {
        CacheLevel {
            level,
            size_bytes: kib << 10,
            latency_ns: ns,
            nominal_size_bytes: nominal_kib.map(|k| k << 10),
            ..Default::default()
        }
    }

    #[test]
    fn a_spurious_extra_level_is_not_set_against_the_real_one() {
        // B was busy: an artefact at 4 MiB, then the real 32 MiB L3 as "L4".
        let a = [
            level(1, 48, 1.7, Some(48)),
            level(2, 2048, 5.5, Some(2048)),
            level(3, 30 << 10, 40.0, Some(32 << 10)),
        ];
        let b = [
            level(1, 44, 1.8, Some(48)),
            level(2, 1800, 6.0, Some(2048)),
            level(3, 4 << 10, 13.0, Some(32 << 10)),
            level(4, 31 << 10, 41.0, None),
        ];
        use LevelMatch::*;
        assert_eq!(
            match_levels(&a, &b),
            [Both(0, 0), Both(1, 1), OnlyB(2), Both(2, 3)]
        );
        let mut pa = Profile::new("a", 0);
        let mut pb = Profile::new("b", 0);
        pa.caches = Some(a.to_vec());
        pb.caches = Some(b.to_vec());
        let c = compare(&pa, &pb);
        // The real L3s meet: a ratio near 1, not "0.325× B better".
        let l3 = find(&c, "caches", "L3 (B: L4) latency", Unit::Ns);
        assert!((l3.ratio().unwrap() - 41.0 / 40.0).abs() < 1e-9);
        assert_eq!(l3.mark(VERDICT_THRESHOLD), None);
        let spurious = find(&c, "caches", "L3 (only B) latency", Unit::Ns);
        assert!(spurious.a.is_none() && spurious.ratio().is_none() && spurious.mark(0.05).is_none());
        assert!(!c.rows.iter().any(|r| r.figure == "L3 latency"));
        assert!(
            c.notes
                .iter()
                .any(|n| n.starts_with("caches: no level of A matches B's L3 (4 MiB)")),
            "{:?}",
            c.notes
        );
        // And the other way round, A's spurious level is A's only.
        let c = compare(&pb, &pa);
        assert!(c.rows.iter().any(|r| r.figure == "L3 (only A) size"));
        assert!(c.rows.iter().any(|r| r.figure == "L4 (B: L3) size"));
    }

    #[test]
    fn levels_of_different_machines_meet_by_nominal_level() {
        // A 512 KiB L2 against a 2 MiB one: 4× apart, but each is its
        // machine's nominal L2. A level without its nominal cache stays alone.
        let a = [level(1, 34, 1.3, Some(32)), level(2, 520, 3.9, Some(512))];
        let b = [level(1, 48, 1.7, Some(48)), level(2, 2080, 5.5, Some(2048))];
        use LevelMatch::*;
        assert_eq!(match_levels(&a, &b), [Both(0, 0), Both(1, 1)]);
        let b = [level(1, 48, 1.7, Some(48)), level(2, 2080, 5.5, None)];
        assert_eq!(match_levels(&a, &b), [Both(0, 0), OnlyA(1), OnlyB(1)]);
        assert_eq!(match_levels(&a, &[]), [OnlyA(0), OnlyA(1)]);
    }

    #[test]
    fn bandwidth_at_different_thread_counts_gets_no_ratio() {
        let mut a = full_profile(0);
        let mut b = full_profile(0);
        let (ba, bb) = (a.bandwidth.as_mut().unwrap(), b.bandwidth.as_mut().unwrap());
        bb.threads = ba.threads * 8;
        bb.read_bytes_per_sec = ba.read_bytes_per_sec.map(|v| v * 5.0);
        bb.scaling.retain(|p| p.threads == 1);
        let c = compare(&a, &b);
        let read = c
            .rows
            .iter()
            .find(|r| r.section == "bandwidth" && r.figure.starts_with("read ("))
            .unwrap();
        assert!(read.figure.contains("threads"), "{}", read.figure);
        assert!(read.a.is_some() && read.b.is_some());
        assert_eq!(read.ratio(), None);
        assert_eq!(read.mark(VERDICT_THRESHOLD), None);
        assert!(c
            .notes
            .iter()
            .any(|n| n.starts_with("bandwidth: A's read/write/copy figures used")));
        // Per thread count: compared where both have the count only.
        let one = find(&c, "bandwidth", "read, 1 thread(s)", Unit::BytesPerSec);
        assert_eq!(one.ratio(), Some(1.0));
        for r in c
            .rows
            .iter()
            .filter(|r| r.figure.starts_with("read, ") && !r.figure.starts_with("read, 1 "))
        {
            assert!(r.b.is_none() && r.ratio().is_none(), "{r:?}");
        }
        let t = comparison_text(&c, "a", "b");
        assert!(t.contains("read (A "), "{t}");
        // Equal thread counts: the headline figures are compared as before.
        b.bandwidth.as_mut().unwrap().threads = a.bandwidth.as_ref().unwrap().threads;
        a.bandwidth.as_mut().unwrap().scaling.clear();
        let c = compare(&a, &b);
        assert_eq!(
            find(&c, "bandwidth", "read", Unit::BytesPerSec).ratio(),
            Some(5.0)
        );
    }

    #[test]
    fn a_noisy_figure_gets_no_verdict() {
        let a = full_profile(0);
        let mut b = full_profile(5); // latencies × 1.5: B worse
        b.memory.as_mut().unwrap().verdict = Verdict::Noisy;
        let c = compare(&a, &b);
        let mem = find(&c, "memory", "memory latency", Unit::Ns);
        assert!(mem.noisy);
        assert!((mem.ratio().unwrap() - 1.5).abs() < 1e-9, "the ratio still shows");
        assert_eq!(mem.b_is_better(VERDICT_THRESHOLD), None);
        assert_eq!(mem.mark(VERDICT_THRESHOLD), Some(Mark::Noisy));
        // Figures of other sections keep their verdict.
        let l1 = find(&c, "caches", "L1 latency", Unit::Ns);
        assert_eq!(l1.mark(VERDICT_THRESHOLD), Some(Mark::Worse));
        let t = comparison_text(&c, "a", "b");
        let line = t
            .lines()
            .find(|l| l.contains("memory latency") && l.contains(" ns"))
            .unwrap();
        assert!(line.ends_with("  noisy") && !line.contains("worse"), "{line}");
        // Noisy on A's side alone is enough.
        let c = compare(&b, &a);
        assert_eq!(
            find(&c, "memory", "memory latency", Unit::Ns).mark(0.05),
            Some(Mark::Noisy)
        );
    }

    #[test]
    fn the_json_comparison_carries_every_row() {
        let mut b = full_profile(5);
        b.memory.as_mut().unwrap().verdict = Verdict::Noisy;
        let c = compare(&full_profile(0), &b);
        let v: serde_json::Value = serde_json::from_slice(&comparison_json(&c, "run 1", "run 2")).unwrap();
        assert_eq!(v["a"], "run 1");
        let rows = v["rows"].as_array().unwrap();
        assert_eq!(rows.len(), c.rows.len());
        let mem = rows
            .iter()
            .find(|r| r["figure"] == "memory latency" && r["unit"] == "ns")
            .unwrap();
        assert_eq!(mem["verdict"], "noisy");
        assert_eq!(mem["noisy"], true);
        assert_eq!(mem["higher_is_better"], false);
        let clock = rows.iter().find(|r| r["figure"] == "core clock").unwrap();
        assert_eq!(clock["verdict"], "worse");
        assert!((clock["ratio"].as_f64().unwrap() - 1.0 / 1.5).abs() < 1e-9);
        assert_eq!(v["notes"].as_array().unwrap().len(), c.notes.len());
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
            noisy: false,
            unlike: false,
        };
        assert_eq!(r.ratio(), None);
        assert_eq!(fmt_ratio(None), "-");
        assert_eq!(Unit::BytesPerSec.format(12.5e9), "12.50 GB/s");
        assert_eq!(Unit::Bytes.format(2097152.0), "2 MiB");
    }
}
