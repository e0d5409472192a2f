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

use crate::*;

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

/// Collects what is out of bounds, each with where it is.
struct Checker {
    problems: Vec<String>,
}

impl Checker {
    fn range(&mut self, what: &str, v: f64, (lo, hi): (f64, f64)) {
        if !v.is_nan() && !(lo..=hi).contains(&v) {
            self.problems
                .push(format!("{what} = {v} is outside [{lo}, {hi}]"));
        }
    }

    fn opt(&mut self, what: &str, v: Option<f64>, bounds: (f64, f64)) {
        if let Some(v) = v {
            self.range(what, v, bounds);
        }
    }

    fn bytes(&mut self, what: &str, v: u64) {
        if v > BYTES {
            self.problems
                .push(format!("{what} = {v} bytes is more than 1 PiB"));
        }
    }

    fn raw(&mut self, what: &str, v: f64) {
        let ok = v.is_nan() || (v.is_finite() && v.abs() <= RAW_ABS);
        if !ok {
            self.problems.push(format!("{what} = {v} is beyond ±{RAW_ABS:e}"));
        }
    }
}

/// What in `p` no machine can have measured, one line each (empty when
/// the profile is plausible).
pub fn implausible(p: &Profile) -> Vec<String> {
    let mut c = Checker { problems: Vec::new() };
    clock(&mut c, p);
    caches_and_tlbs(&mut c, p);
    memory(&mut c, p);
    context_switch(&mut c, p);
    io(&mut c, p);
    raw(&mut c, p);
    c.problems
}

fn clock(c: &mut Checker, p: &Profile) {
    if let Some(k) = &p.clock {
        c.range("clock.core_mhz", k.core_mhz, MHZ);
        c.range("clock.core_mhz_min", k.core_mhz_min, MHZ);
        c.range("clock.core_mhz_max", k.core_mhz_max, MHZ);
        c.range("clock.chain_mhz", k.chain_mhz, MHZ);
        c.opt("clock.gcd_mhz", k.gcd_mhz, MHZ);
        c.opt("clock.tsc_mhz", k.tsc_mhz, MHZ);
    }
    if let Some(h) = &p.harness {
        c.opt("harness.tsc_mhz", h.tsc_mhz, MHZ);
        c.range("harness.timer_resolution_ns", h.timer_resolution_ns, NS);
        c.range("harness.timer_overhead_ns", h.timer_overhead_ns, NS);
    }
}

fn caches_and_tlbs(c: &mut Checker, p: &Profile) {
    for l in p.caches.iter().flatten() {
        let at = format!("caches[L{}]", l.level);
        c.bytes(&format!("{at}.size_bytes"), l.size_bytes);
        if let Some(b) = l.line_bytes {
            c.bytes(&format!("{at}.line_bytes"), b);
        }
        c.range(&format!("{at}.latency_ns"), l.latency_ns, NS);
        c.opt(&format!("{at}.latency_cycles"), l.latency_cycles, CYCLES);
        c.opt(&format!("{at}.miss_latency_ns"), l.miss_latency_ns, NS);
        c.opt(&format!("{at}.replace_time_ns"), l.replace_time_ns, NS);
    }
    for t in p.tlbs.iter().flatten() {
        let at = format!("tlbs[L{}]", t.level);
        c.bytes(&format!("{at}.page_bytes"), t.page_bytes);
        if t.entries > 1 << 40 {
            c.problems
                .push(format!("{at}.entries = {} is more than 2^40", t.entries));
        }
        c.range(&format!("{at}.miss_latency_ns"), t.miss_latency_ns, NS);
        c.opt(
            &format!("{at}.miss_latency_cycles"),
            t.miss_latency_cycles,
            CYCLES,
        );
    }
}

fn memory(c: &mut Checker, p: &Profile) {
    if let Some(m) = &p.memory {
        c.range("memory.latency_ns", m.latency_ns, NS);
        c.opt("memory.latency_cycles", m.latency_cycles, CYCLES);
    }
    if let Some(m) = &p.mem {
        c.bytes("mem.size_bytes", m.size_bytes);
        c.range("mem.ns_per_op", m.ns_per_op, NS);
        c.range("mem.clk_per_op", m.clk_per_op, CYCLES);
        c.range("mem.bytes_per_sec", m.bytes_per_sec, BPS);
        for (i, t) in m.per_thread.iter().enumerate() {
            c.range(&format!("mem.per_thread[{i}].ns_per_op"), t.ns_per_op, NS);
            c.range(
                &format!("mem.per_thread[{i}].bytes_per_sec"),
                t.bytes_per_sec,
                BPS,
            );
        }
    }
    if let Some(b) = &p.bandwidth {
        c.opt("bandwidth.read_bytes_per_sec", b.read_bytes_per_sec, BPS);
        c.opt("bandwidth.write_bytes_per_sec", b.write_bytes_per_sec, BPS);
        c.opt("bandwidth.copy_bytes_per_sec", b.copy_bytes_per_sec, BPS);
        for s in &b.scaling {
            let at = format!("bandwidth.scaling[{} threads {}]", s.threads, s.op);
            c.range(&at, s.bytes_per_sec, BPS);
        }
        for l in &b.loaded_latency {
            let at = format!("bandwidth.loaded_latency[{}]", l.streaming_threads);
            c.range(&format!("{at}.latency_ns"), l.latency_ns, NS);
            c.range(&format!("{at}.stream_bytes_per_sec"), l.stream_bytes_per_sec, BPS);
        }
    }
}

fn context_switch(c: &mut Checker, p: &Profile) {
    let Some(cs) = &p.context_switch else {
        return;
    };
    for z in cs.all_sizes() {
        let at = format!("context_switch[{} KB]", z.size_kb);
        c.range(&format!("{at}.overhead_us"), z.overhead_us, US);
        for q in &z.points {
            let at = format!("{at}[{} procs]", q.nprocs);
            c.range(&format!("{at}.us_min"), q.us_min, US);
            c.range(&format!("{at}.us_median"), q.us_median, US);
            c.range(&format!("{at}.us_max"), q.us_max, US);
            c.opt(&format!("{at}.us_per_switch"), q.us_per_switch, US);
            c.opt(&format!("{at}.cycles_median"), q.cycles_median, CYCLES);
        }
    }
}

fn io(c: &mut Checker, p: &Profile) {
    let Some(o) = &p.io else {
        return;
    };
    c.range("io.iops", o.iops, IOPS);
    c.range("io.bytes_per_sec", o.bytes_per_sec, BPS);
    for (name, v) in [
        ("lat_min_us", o.lat_min_us),
        ("lat_p50_us", o.lat_p50_us),
        ("lat_p99_us", o.lat_p99_us),
        ("lat_p999_us", o.lat_p999_us),
        ("lat_max_us", o.lat_max_us),
    ] {
        c.range(&format!("io.{name}"), v, US);
    }
}

/// Raw curves and clock timings: `hwcal analyze` recomputes every figure
/// from them, so an absurd raw number would come back as an absurd figure.
fn raw(c: &mut Checker, p: &Profile) {
    for curve in &p.raw {
        for (i, pt) in curve.points.iter().enumerate() {
            let at = format!("raw[{}].points[{i}]", curve.id);
            c.raw(&format!("{at}.x"), pt.x);
            c.raw(&format!("{at}.y"), pt.y);
            if let Some(s) = pt.samples.iter().find(|s| !s.is_nan() && s.abs() > RAW_ABS) {
                c.raw(&format!("{at}.samples"), *s);
            }
            if let Some(m) = pt
                .mhz
                .iter()
                .find(|m| !m.is_nan() && !(MHZ.0..=MHZ.1).contains(*m))
            {
                c.range(&format!("{at}.mhz"), *m, MHZ);
            }
        }
    }
    if let Some(k) = &p.raw_clock {
        c.opt("raw_clock.tsc_mhz", k.tsc_mhz, MHZ);
        for (b, batch) in k.batches.iter().enumerate() {
            let all = batch.expr_ns.iter().flatten().chain(&batch.chain_n_ns);
            if let Some(v) = all.copied().find(|v| !v.is_nan() && !(0.0..=RAW_ABS).contains(v)) {
                c.range(&format!("raw_clock.batches[{b}]"), v, (0.0, RAW_ABS));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::full_profile;

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
}
