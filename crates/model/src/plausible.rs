//! Physical plausibility of a profile read from outside (`db import`,
//! `analyze`, `report FILE.json`).
//!
//! A profile that parses is not necessarily one a machine could have
//! produced: a hand-edited or corrupted file can carry a 10^300 ns latency
//! or a negative bandwidth, and the database would then compare machines
//! against it. The bounds below are deliberately generous — orders of
//! magnitude beyond any hardware hwcal can meet (a 100 GHz clock, a 1 s
//! load, a PiB cache) — so they never reject a real measurement, however
//! odd the machine; they only catch values no measurement can give.
//!
//! `NaN` is allowed everywhere: it is how a profile says "not measured"
//! (JSON `null`).

use crate::Profile;

/// Clock rates, MHz.
const MHZ: (f64, f64) = (1.0, 100_000.0);
/// Latencies and times per operation, ns: up to one second.
const NS: (f64, f64) = (0.0, 1e9);
/// Core cycles per operation.
const CYCLES: (f64, f64) = (0.0, 1e12);
/// Bandwidths, bytes per second (a PB/s).
const BPS: (f64, f64) = (0.0, 1e15);
/// Context-switch and I/O times, µs: up to a quarter of an hour.
const US: (f64, f64) = (0.0, 1e9);
/// I/O operations per second.
const IOPS: (f64, f64) = (0.0, 1e10);
/// Sizes in bytes (caches, pages, buffers): a PiB.
const BYTES: u64 = 1 << 50;
/// Any raw number (ns, µs, cycles, bytes, counts): its magnitude.
const RAW_ABS: f64 = 1e15;

/// Raw curves whose y values (and samples) are latencies in ns.
const NS_CURVES: [&str; 8] = [
    "cache.latency",
    "cache.gap",
    "cache.colour",
    "cache.mlp",
    "tlb.4k",
    "tlb.baseline",
    "tlb.2m",
    "mem.latency",
];

/// The most points of a cache or TLB sweep curve, and samples of one of
/// its points, that hwcal analyses (see [`raw`]).
pub const MAX_SWEEP_POINTS: usize = 10_000;

/// Collects what is out of bounds, each with where it is; in `fix` mode it
/// also replaces each such figure by "not measured" (NaN, or `None`).
struct Checker {
    problems: Vec<String>,
    fix: bool,
}

impl Checker {
    fn range(&mut self, what: &str, v: &mut f64, (lo, hi): (f64, f64)) {
        if !v.is_nan() && !(lo..=hi).contains(v) {
            self.problems
                .push(format!("{what} = {v} is outside [{lo}, {hi}]"));
            if self.fix {
                *v = f64::NAN;
            }
        }
    }

    fn opt(&mut self, what: &str, v: &mut Option<f64>, bounds: (f64, f64)) {
        if let Some(x) = v {
            let mut y = *x;
            self.range(what, &mut y, bounds);
            if y.is_nan() && !x.is_nan() {
                *v = None;
            }
        }
    }

    fn bytes(&mut self, what: &str, v: u64) {
        if v > BYTES {
            self.problems
                .push(format!("{what} = {v} bytes is more than 1 PiB"));
        }
    }

    fn raw(&mut self, what: &str, v: &mut f64, (lo, hi): (f64, f64)) {
        let ok = v.is_nan() || (v.is_finite() && (lo..=hi).contains(v));
        if !ok {
            if (lo, hi) == (-RAW_ABS, RAW_ABS) {
                self.problems.push(format!("{what} = {v} is beyond ±{RAW_ABS:e}"));
            } else {
                self.problems
                    .push(format!("{what} = {v} is outside [{lo}, {hi}]"));
            }
            if self.fix {
                *v = f64::NAN;
            }
        }
    }
}

impl Checker {
    /// A 95% interval: both ends within `bounds` and in order; in `fix`
    /// mode a bad one is dropped (the figure itself stands).
    fn interval(&mut self, what: &str, v: &mut Option<[f64; 2]>, (lo, hi): (f64, f64)) {
        let Some([a, b]) = *v else { return };
        let inside = |x: f64| x.is_finite() && (lo..=hi).contains(&x);
        if !(inside(a) && inside(b) && a <= b) {
            self.problems.push(format!(
                "{what} = [{a}, {b}] is not an interval within [{lo}, {hi}]"
            ));
            if self.fix {
                *v = None;
            }
        }
    }

    /// A 95% interval of a size in bytes.
    fn bytes_interval(&mut self, what: &str, v: &mut Option<[u64; 2]>) {
        let Some([a, b]) = *v else { return };
        if a > b || b > BYTES {
            self.problems.push(format!(
                "{what} = [{a}, {b}] is not an interval of sizes up to 1 PiB"
            ));
            if self.fix {
                *v = None;
            }
        }
    }

    /// Every value of a list (the samples of one raw point), with one line
    /// for the first bad one.
    fn raw_many(&mut self, what: &str, vals: &mut [f64], bounds: (f64, f64)) {
        let before = self.problems.len();
        for v in vals.iter_mut() {
            self.raw(what, v, bounds);
        }
        self.problems
            .truncate(before + usize::from(self.problems.len() > before));
    }
}

/// What in `p` no machine can have measured, one line each (empty when
/// the profile is plausible).
pub fn implausible(p: &Profile) -> Vec<String> {
    let mut q = p.clone();
    check(&mut q, false)
}

/// The profile as hwcal writes and stores it: every figure that fails the
/// check left out with a note ([`scrub`]), so hwcal never writes what it
/// would itself refuse to read (borrowed where nothing fails).
pub fn checked(p: &Profile) -> std::borrow::Cow<'_, Profile> {
    if implausible(p).is_empty() {
        return std::borrow::Cow::Borrowed(p);
    }
    let mut q = p.clone();
    scrub(&mut q);
    std::borrow::Cow::Owned(q)
}

/// Flag and leave out what no machine can have measured, at the point a
/// profile is written or stored: every implausible figure becomes "not
/// measured" (NaN / `None`, JSON `null`) and one note per figure says what
/// was left out. Returns the problems (empty: nothing changed). So hwcal
/// never writes a profile that its own `analyze` and `import` refuse.
pub fn scrub(p: &mut Profile) -> Vec<String> {
    let problems = check(p, true);
    for what in &problems {
        p.notes.push(crate::Note::warning(
            "profile",
            "implausible_left_out",
            format!("implausible figure left out as not measured: {what}; re-measure to get it"),
        ));
    }
    problems
}

/// Leave out what no machine can have measured (as [`scrub`], without its
/// notes): returns what was left out, for a caller that says so in its own
/// words (`hwcal analyze`, which then re-derives the figures).
pub fn leave_out(p: &mut Profile) -> Vec<String> {
    check(p, true)
}

fn check(p: &mut Profile, fix: bool) -> Vec<String> {
    let mut c = Checker {
        problems: Vec::new(),
        fix,
    };
    created(&mut c, p);
    names(&mut c, p);
    clock(&mut c, p);
    caches_and_tlbs(&mut c, p);
    memory(&mut c, p);
    context_switch(&mut c, p);
    io(&mut c, p);
    figures(&mut c, p);
    raw(&mut c, p);
    c.problems
}

/// Named figures (`figures[]`), each held to the bounds of its unit, as
/// the typed sections are: 1e308 ns or a negative size is no measurement.
fn figures(c: &mut Checker, p: &mut Profile) {
    use crate::FigureUnit as U;
    for f in &mut p.figures {
        let bounds = match f.unit {
            U::Ns => NS,
            U::Us => US,
            U::Cycles => CYCLES,
            U::Mhz => MHZ,
            U::Bytes => (0.0, BYTES as f64),
            U::BytesPerSec => BPS,
            U::Iops => IOPS,
            U::Count => (0.0, RAW_ABS),
            // A speed-up or a ratio: positive, and no machine is a
            // million times another.
            U::Factor => (0.0, 1e6),
        };
        let what = format!("figures[{}].value", f.id);
        if f.value.is_some_and(|v| !v.is_finite()) {
            c.problems.push(format!("{what} is not a finite number"));
            if c.fix {
                f.value = None;
            }
            continue;
        }
        c.opt(&what, &mut f.value, bounds);
        c.interval(&format!("figures[{}].ci95", f.id), &mut f.ci95, bounds);
    }
}

/// The latest measuring time a profile may state: 2200-01-01 UTC. A later
/// one (2^64 − 1 read back as −1 from a database, year 584554051223 in
/// `db show`) is a damaged or hostile file, and would pin its run as its
/// machine's latest in `db site` for good.
pub const MAX_CREATED_UNIX: u64 = 7_258_118_400;

fn created(c: &mut Checker, p: &mut Profile) {
    if p.created_unix > MAX_CREATED_UNIX {
        c.problems.push(format!(
            "created_unix = {} is after the year 2200",
            p.created_unix
        ));
        if c.fix {
            p.created_unix = 0;
        }
    }
}

/// The longest name a machine can state: no host name is longer (Linux's
/// limit is 64 bytes, a DNS name's 253) and no CPU's brand string (CPUID's
/// is 48 bytes). A profile whose host name was a megabyte made
/// `db compare` print 3.7 MB.
pub const MAX_NAME_BYTES: usize = 255;

/// The machine's names, each within [`MAX_NAME_BYTES`] (cut at a character
/// boundary where fixing).
fn names(c: &mut Checker, p: &mut Profile) {
    let Some(m) = p.machine.as_mut() else {
        return;
    };
    for (what, s) in [
        ("machine.hostname", &mut m.hostname),
        ("machine.cpu_model_name", &mut m.cpu_model_name),
        ("machine.cpu_vendor", &mut m.cpu_vendor),
    ] {
        if s.len() <= MAX_NAME_BYTES {
            continue;
        }
        c.problems.push(format!(
            "{what} is {} bytes, longer than any machine states ({MAX_NAME_BYTES})",
            s.len()
        ));
        if c.fix {
            let mut end = MAX_NAME_BYTES;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            s.truncate(end);
        }
    }
}

fn clock(c: &mut Checker, p: &mut Profile) {
    if let Some(k) = &mut p.clock {
        c.range("clock.core_mhz", &mut k.core_mhz, MHZ);
        c.range("clock.core_mhz_min", &mut k.core_mhz_min, MHZ);
        c.range("clock.core_mhz_max", &mut k.core_mhz_max, MHZ);
        c.range("clock.chain_mhz", &mut k.chain_mhz, MHZ);
        c.opt("clock.gcd_mhz", &mut k.gcd_mhz, MHZ);
        c.opt("clock.tsc_mhz", &mut k.tsc_mhz, MHZ);
        c.interval("clock.core_mhz_ci95", &mut k.core_mhz_ci95, MHZ);
    }
    if let Some(h) = &mut p.harness {
        c.opt("harness.tsc_mhz", &mut h.tsc_mhz, MHZ);
        c.range("harness.timer_resolution_ns", &mut h.timer_resolution_ns, NS);
        c.range("harness.timer_overhead_ns", &mut h.timer_overhead_ns, NS);
    }
}

fn caches_and_tlbs(c: &mut Checker, p: &mut Profile) {
    for l in p.caches.iter_mut().flatten() {
        let at = format!("caches[L{}]", l.level);
        c.bytes(&format!("{at}.size_bytes"), l.size_bytes);
        if let Some(b) = l.line_bytes {
            c.bytes(&format!("{at}.line_bytes"), b);
        }
        c.range(&format!("{at}.latency_ns"), &mut l.latency_ns, NS);
        c.opt(&format!("{at}.latency_cycles"), &mut l.latency_cycles, CYCLES);
        c.opt(&format!("{at}.miss_latency_ns"), &mut l.miss_latency_ns, NS);
        c.opt(&format!("{at}.replace_time_ns"), &mut l.replace_time_ns, NS);
        c.interval(&format!("{at}.latency_ns_ci95"), &mut l.latency_ns_ci95, NS);
        c.bytes_interval(&format!("{at}.size_bytes_ci95"), &mut l.size_bytes_ci95);
        if c.fix && l.latency_ns.is_nan() {
            // An interval about a figure left out means nothing.
            l.latency_ns_ci95 = None;
        }
    }
    for t in p.tlbs.iter_mut().flatten() {
        let at = format!("tlbs[L{}]", t.level);
        c.bytes(&format!("{at}.page_bytes"), t.page_bytes);
        if t.entries > 1 << 40 {
            c.problems
                .push(format!("{at}.entries = {} is more than 2^40", t.entries));
        }
        c.range(&format!("{at}.miss_latency_ns"), &mut t.miss_latency_ns, NS);
        c.opt(
            &format!("{at}.miss_latency_cycles"),
            &mut t.miss_latency_cycles,
            CYCLES,
        );
    }
}

fn memory(c: &mut Checker, p: &mut Profile) {
    if let Some(m) = &mut p.memory {
        c.range("memory.latency_ns", &mut m.latency_ns, NS);
        c.opt("memory.latency_cycles", &mut m.latency_cycles, CYCLES);
        c.interval("memory.latency_ns_ci95", &mut m.latency_ns_ci95, NS);
        if c.fix && m.latency_ns.is_nan() {
            m.latency_ns_ci95 = None;
        }
        c.opt("memory.latency_no_walks_ns", &mut m.latency_no_walks_ns, NS);
        c.interval(
            "memory.latency_no_walks_ns_ci95",
            &mut m.latency_no_walks_ns_ci95,
            NS,
        );
        if c.fix && m.latency_no_walks_ns.is_none_or(f64::is_nan) {
            m.latency_no_walks_ns = None;
            m.latency_no_walks_ns_ci95 = None;
            m.latency_no_walks_verdict = None;
        }
    }
    if let Some(m) = &mut p.mem {
        c.bytes("mem.size_bytes", m.size_bytes);
        c.range("mem.ns_per_op", &mut m.ns_per_op, NS);
        c.range("mem.clk_per_op", &mut m.clk_per_op, CYCLES);
        c.range("mem.bytes_per_sec", &mut m.bytes_per_sec, BPS);
        for (i, t) in m.per_thread.iter_mut().enumerate() {
            c.range(&format!("mem.per_thread[{i}].ns_per_op"), &mut t.ns_per_op, NS);
            c.range(
                &format!("mem.per_thread[{i}].bytes_per_sec"),
                &mut t.bytes_per_sec,
                BPS,
            );
        }
    }
    if let Some(b) = &mut p.bandwidth {
        c.opt("bandwidth.read_bytes_per_sec", &mut b.read_bytes_per_sec, BPS);
        c.opt("bandwidth.write_bytes_per_sec", &mut b.write_bytes_per_sec, BPS);
        c.opt("bandwidth.copy_bytes_per_sec", &mut b.copy_bytes_per_sec, BPS);
        for s in &mut b.scaling {
            let at = format!("bandwidth.scaling[{} threads {}]", s.threads, s.op);
            c.range(&at, &mut s.bytes_per_sec, BPS);
        }
        for l in &mut b.loaded_latency {
            let at = format!("bandwidth.loaded_latency[{}]", l.streaming_threads);
            c.range(&format!("{at}.latency_ns"), &mut l.latency_ns, NS);
            c.range(
                &format!("{at}.stream_bytes_per_sec"),
                &mut l.stream_bytes_per_sec,
                BPS,
            );
        }
    }
}

fn context_switch(c: &mut Checker, p: &mut Profile) {
    let Some(cs) = &mut p.context_switch else {
        return;
    };
    let top = (cs.size_kb, &mut cs.overhead_us, &mut cs.points);
    let rest = cs
        .sizes
        .iter_mut()
        .map(|z| (z.size_kb, &mut z.overhead_us, &mut z.points));
    for (size_kb, overhead_us, points) in std::iter::once(top).chain(rest) {
        let at = format!("context_switch[{size_kb} KB]");
        c.range(&format!("{at}.overhead_us"), overhead_us, US);
        for q in points.iter_mut() {
            let at = format!("{at}[{} procs]", q.nprocs);
            c.range(&format!("{at}.us_min"), &mut q.us_min, US);
            c.range(&format!("{at}.us_median"), &mut q.us_median, US);
            c.range(&format!("{at}.us_max"), &mut q.us_max, US);
            c.opt(&format!("{at}.us_per_switch"), &mut q.us_per_switch, US);
            c.opt(&format!("{at}.cycles_median"), &mut q.cycles_median, CYCLES);
            c.interval(&format!("{at}.us_median_ci95"), &mut q.us_median_ci95, US);
        }
    }
}

fn io(c: &mut Checker, p: &mut Profile) {
    let Some(o) = &mut p.io else {
        return;
    };
    c.range("io.iops", &mut o.iops, IOPS);
    c.range("io.bytes_per_sec", &mut o.bytes_per_sec, BPS);
    for (name, v) in [
        ("lat_min_us", &mut o.lat_min_us),
        ("lat_p50_us", &mut o.lat_p50_us),
        ("lat_p99_us", &mut o.lat_p99_us),
        ("lat_p999_us", &mut o.lat_p999_us),
        ("lat_max_us", &mut o.lat_max_us),
    ] {
        c.range(&format!("io.{name}"), v, US);
    }
}

/// Raw curves and clock timings: `hwcal analyze` recomputes every figure
/// from them, so an absurd raw number would come back as an absurd figure.
/// In latency curves every x (a working-set size, a page or chain count)
/// is ≥ 0 and every y is a latency, ≥ 0 and under a second; any other raw
/// number is bounded in magnitude.
fn raw(c: &mut Checker, p: &mut Profile) {
    const ANY: (f64, f64) = (-RAW_ABS, RAW_ABS);
    for curve in &mut p.raw {
        let latency = NS_CURVES.contains(&curve.id.as_str()) || curve.y_label.starts_with("ns per");
        let ybounds = if latency { NS } else { ANY };
        // Latency curves are over sizes or counts; others may have signed x
        // (the line-size curves walk backwards: `cache.line.*.bwd` at -d).
        let sizes = NS_CURVES.contains(&curve.id.as_str());
        let xbounds = if sizes { (0.0, RAW_ABS) } else { ANY };
        // The cache and TLB analyses fit segments and bootstrap over every
        // point of a sweep: a sweep hwcal writes has a few hundred points
        // of at most a few hundred samples, and a hostile one of a million
        // would cost gigabytes. Such a curve is refused, not analysed.
        let sweep = curve.id.starts_with("cache.") || curve.id.starts_with("tlb.");
        if sweep && curve.points.len() > MAX_SWEEP_POINTS {
            c.problems.push(format!(
                "raw[{}] has {} points, more than {MAX_SWEEP_POINTS} (a sweep hwcal writes has a few hundred)",
                curve.id,
                curve.points.len()
            ));
            if c.fix {
                curve.points.clear();
            }
            continue;
        }
        if let Some((i, pt)) = curve
            .points
            .iter_mut()
            .enumerate()
            .find(|(_, pt)| sweep && pt.samples.len().max(pt.mhz.len()) > MAX_SWEEP_POINTS)
        {
            c.problems.push(format!(
                "raw[{}].points[{i}] has {} samples, more than {MAX_SWEEP_POINTS}",
                curve.id,
                pt.samples.len().max(pt.mhz.len())
            ));
            if c.fix {
                pt.samples.truncate(MAX_SWEEP_POINTS);
                pt.mhz.truncate(MAX_SWEEP_POINTS);
            }
        }
        for (i, pt) in curve.points.iter_mut().enumerate() {
            let at = format!("raw[{}].points[{i}]", curve.id);
            c.raw(&format!("{at}.x"), &mut pt.x, xbounds);
            c.raw(&format!("{at}.y"), &mut pt.y, ybounds);
            c.raw_many(&format!("{at}.samples"), &mut pt.samples, ybounds);
            c.raw_many(&format!("{at}.mhz"), &mut pt.mhz, MHZ);
        }
    }
    if let Some(k) = &mut p.raw_clock {
        c.opt("raw_clock.tsc_mhz", &mut k.tsc_mhz, MHZ);
        for (b, batch) in k.batches.iter_mut().enumerate() {
            let mut all: Vec<&mut f64> = batch
                .expr_ns
                .iter_mut()
                .flatten()
                .chain(&mut batch.chain_n_ns)
                .collect();
            let what = format!("raw_clock.batches[{b}]");
            let mut reported = false;
            for v in all.iter_mut() {
                if !v.is_nan() && !(0.0..=RAW_ABS).contains(&**v) {
                    if !reported {
                        c.problems.push(format!("{what} = {v} is outside [0, {RAW_ABS}]"));
                        reported = true;
                    }
                    if c.fix {
                        **v = f64::NAN;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::full_profile;
    use crate::{RawCurve, RawPoint};

    #[test]
    fn synthetic_profiles_are_plausible() {
        for v in 0..4 {
            assert!(
                implausible(&full_profile(v)).is_empty(),
                "{:?}",
                implausible(&full_profile(v))
            );
        }
        assert!(implausible(&Profile::new("hwcal info", 0)).is_empty());
    }

    #[test]
    fn a_name_longer_than_any_machine_states_is_refused_or_cut() {
        let mut p = full_profile(0);
        p.machine.as_mut().unwrap().hostname = "é".repeat(1 << 19);
        let bad = implausible(&p);
        assert_eq!(bad.len(), 1, "{bad:?}");
        assert!(bad[0].contains("machine.hostname is 1048576 bytes"), "{bad:?}");
        // The problem names the field and its length, never the name.
        assert!(bad[0].len() < 200, "{}", bad[0].len());
        let q = checked(&p);
        let host = &q.machine.as_ref().unwrap().hostname;
        assert!(
            host.len() <= MAX_NAME_BYTES && host.starts_with('é'),
            "{}",
            host.len()
        );
        assert!(implausible(&q).is_empty());
    }

    #[test]
    fn named_figures_are_held_to_their_units_bounds() {
        use crate::{Direction, Figure, FigureUnit};
        let mut p = crate::sample::full_profile(0);
        let fig = |what: &str, v: f64, u: FigureUnit| Figure::new("x", what, what, v, u, Direction::Lower);
        p.figures = vec![
            fig("huge", 1e308, FigureUnit::Ns),
            fig("negbytes", -4096.0, FigureUnit::Bytes),
            fig("fine", 12.5, FigureUnit::Ns),
            fig("ratio", 1.07, FigureUnit::Factor),
        ];
        let bad = implausible(&p);
        assert_eq!(bad.len(), 2, "{bad:?}");
        assert!(
            bad[0].contains("figures[x.huge]") && bad[1].contains("figures[x.negbytes]"),
            "{bad:?}"
        );
        scrub(&mut p);
        assert_eq!(p.figures[0].value, None);
        assert_eq!(p.figures[1].value, None);
        assert_eq!(p.figures[2].value, Some(12.5));
    }

    #[test]
    fn absurd_values_are_named() {
        let mut p = full_profile(1);
        p.clock.as_mut().unwrap().core_mhz = 1e9;
        p.caches.as_mut().unwrap()[0].latency_ns = -3.0;
        p.bandwidth.as_mut().unwrap().read_bytes_per_sec = Some(1e300);
        let got = implausible(&p);
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(got[0].starts_with("clock.core_mhz = 1000000000"), "{got:?}");
        assert!(got[1].contains("latency_ns = -3"), "{got:?}");
        assert!(got[2].contains("read_bytes_per_sec"), "{got:?}");
    }

    #[test]
    fn a_measuring_time_past_2200_is_named_and_left_out() {
        let mut p = full_profile(1);
        p.created_unix = u64::MAX;
        let got = implausible(&p);
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(
            got[0].starts_with("created_unix = 18446744073709551615"),
            "{got:?}"
        );
        scrub(&mut p);
        assert_eq!(p.created_unix, 0);
        assert!(implausible(&p).is_empty());
    }

    #[test]
    fn raw_samples_and_missing_values() {
        let mut p = full_profile(1);
        p.raw = vec![RawCurve {
            id: "cache.latency".into(),
            x_label: String::new(),
            y_label: String::new(),
            points: vec![
                RawPoint {
                    x: 4096.0,
                    y: f64::NAN,
                    samples: vec![1.0, f64::NAN, 2.0],
                    mhz: vec![2500.0, f64::NAN, 2400.0],
                },
                RawPoint {
                    x: 8192.0,
                    y: 1.5,
                    samples: vec![1.5, 1e200],
                    mhz: vec![0.001],
                },
            ],
        }];
        // NaN is "not measured": fine. 1e200 and a 0.001 MHz clock are not.
        let got = implausible(&p);
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(got[0].contains("points[1].samples"), "{got:?}");
        assert!(got[1].contains("points[1].mhz"), "{got:?}");
    }

    #[test]
    fn raw_curves_are_held_to_physical_bounds() {
        let mut p = full_profile(0);
        let lat = p.raw.iter_mut().find(|c| c.id == "cache.latency").unwrap();
        lat.points[0].x = -4096.0;
        lat.points[1].y = 1e14;
        lat.points[2].samples = vec![2.0, -1.0, -2.0];
        let got = implausible(&p);
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(got[0].contains("points[0].x = -4096"), "{got:?}");
        assert!(got[1].contains("points[1].y = 100000000000000"), "{got:?}");
        assert!(got[2].contains("points[2].samples = -1"), "{got:?}");
    }

    #[test]
    fn intervals_out_of_order_or_bounds_are_named_and_dropped() {
        let mut p = full_profile(0);
        p.caches.as_mut().unwrap()[0].latency_ns_ci95 = Some([2.0, 1.0]);
        p.caches.as_mut().unwrap()[1].size_bytes_ci95 = Some([1 << 20, 1 << 60]);
        p.memory.as_mut().unwrap().latency_ns_ci95 = Some([-5.0, 100.0]);
        let got = scrub(&mut p);
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(got[0].contains("latency_ns_ci95 = [2, 1]"), "{got:?}");
        let c = p.caches.as_ref().unwrap();
        assert_eq!((c[0].latency_ns_ci95, c[1].size_bytes_ci95), (None, None));
        assert_eq!(p.memory.as_ref().unwrap().latency_ns_ci95, None);
        // The figures themselves stand.
        assert!(c[0].latency_ns > 0.0 && p.memory.as_ref().unwrap().latency_ns > 0.0);
    }

    #[test]
    fn scrub_leaves_out_and_notes_what_is_implausible() {
        let mut p = full_profile(2);
        p.caches.as_mut().unwrap()[0].miss_latency_ns = Some(-0.42);
        p.memory.as_mut().unwrap().latency_ns = -1.0;
        let notes = p.notes.len();
        let got = scrub(&mut p);
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(p.caches.as_ref().unwrap()[0].miss_latency_ns, None);
        assert!(p.memory.as_ref().unwrap().latency_ns.is_nan());
        // Its interval went with it.
        assert_eq!(p.memory.as_ref().unwrap().latency_ns_ci95, None);
        assert_eq!(p.notes.len(), notes + 2);
        assert!(
            p.notes.last().unwrap().text.contains("memory.latency_ns = -1"),
            "{:?}",
            p.notes
        );
        assert!(implausible(&p).is_empty(), "{:?}", implausible(&p));
        // A plausible profile is left exactly as it was.
        let mut q = full_profile(1);
        assert!(scrub(&mut q).is_empty());
        assert_eq!(q, full_profile(1));
    }
}
