//! Every numeric figure a profile holds carries a verdict and a 95%
//! interval (issue 29): this test walks the published JSON Schema, and
//! every number in it must be either a figure — with its interval beside
//! it and a verdict on its object (or on every object that holds it) — or
//! something else, said here with the reason. A new numeric field fails
//! the test until it is one or the other.
//!
//! The synthetic full profile then shows the intervals filled in, and the
//! recorded reference profiles (where `../shared` is present) get them
//! from `hwcal analyze`.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// How a numeric property counts.
enum Kind {
    /// A measured figure: its interval is property `ci` of the same
    /// object; its verdict is `verdict` on the same object, or on every
    /// object that holds this one where `verdict` is [`PARENT`].
    Figure { ci: &'static str, verdict: &'static str },
    /// Not a figure, for the reason given.
    Not(&'static str),
}
use Kind::{Figure, Not};

/// The verdict is the enclosing object's.
const PARENT: &str = "^";

const SETTING: &str = "a setting of the measurement (what was measured, how much, how)";
const COUNT: &str = "a count or total of the run, exact, not an estimate";
const CYCLES: &str = "the ns figure beside it in core cycles; the ns one carries the interval";
const ORDER: &str = "an order statistic of the samples behind a figure (its spread, not a figure)";
const STATED: &str = "stated by the OS or the CPU, not measured";
const RAW: &str = "raw data the figures are derived from (re-analysable)";
const PART: &str = "one thread's part of a section figure that carries the verdict and interval";
const HARNESS: &str = "a fact of the measuring harness (timer, pinning), not of the machine";

fn kinds() -> Vec<(&'static str, &'static str, Kind)> {
    let fig = |ci: &'static str| Figure {
        ci,
        verdict: "verdict",
    };
    let part = |ci: &'static str| Figure { ci, verdict: PARENT };
    let mut v = vec![
        ("Profile", "created_unix", Not(SETTING)),
        ("Profile", "schema_version", Not(SETTING)),
        ("Batch", "index", Not(COUNT)),
        ("Batch", "runs", Not(COUNT)),
        ("Batch", "warmup", Not(COUNT)),
        // Clock.
        ("ClockResult", "core_mhz", fig("core_mhz_ci95")),
        ("ClockResult", "core_mhz_min", Not(ORDER)),
        ("ClockResult", "core_mhz_max", Not(ORDER)),
        (
            "ClockResult",
            "chain_mhz",
            Not("one of the two methods core_mhz combines (their agreement decides its verdict)"),
        ),
        (
            "ClockResult",
            "gcd_mhz",
            Not("one of the two methods core_mhz combines (their agreement decides its verdict)"),
        ),
        (
            "ClockResult",
            "agreement_pct",
            Not("how far the two methods agree: an input to the verdict"),
        ),
        ("ClockResult", "tsc_mhz", Not(STATED)),
        ("ClockResult", "gcd_rounds_accepted", Not(COUNT)),
        ("ClockResult", "gcd_rounds_attempted", Not(COUNT)),
        ("ClockResult", "duration_ms", Not(COUNT)),
        (
            "ExpressionCycles",
            "ns",
            Not("a calibration expression of the clock probe: an input"),
        ),
        (
            "ExpressionCycles",
            "cycles",
            Not("a calibration expression of the clock probe: an input"),
        ),
        // Caches.
        ("CacheLevel", "size_bytes", fig("size_bytes_ci95")),
        ("CacheLevel", "latency_ns", fig("latency_ns_ci95")),
        ("CacheLevel", "miss_latency_ns", fig("miss_latency_ns_ci95")),
        ("CacheLevel", "replace_time_ns", fig("replace_time_ns_ci95")),
        ("CacheLevel", "latency_cycles", Not(CYCLES)),
        ("CacheLevel", "miss_latency_cycles", Not(CYCLES)),
        ("CacheLevel", "replace_time_cycles", Not(CYCLES)),
        ("CacheLevel", "level", Not(COUNT)),
        (
            "CacheLevel",
            "line_bytes",
            Not("a power of two the line tests select, stated or withheld \
                 (note cache.l{N}-line-unconfirmed), not an estimate with a spread"),
        ),
        ("CacheLevel", "nominal_size_bytes", Not(STATED)),
        ("CacheLevel", "nominal_line_bytes", Not(STATED)),
        (
            "CacheLevel",
            "edge_start_bytes",
            Not("the width of the size's edge (where 10% and 90% of loads miss): the edge's shape"),
        ),
        (
            "CacheLevel",
            "edge_end_bytes",
            Not("the width of the size's edge (where 10% and 90% of loads miss): the edge's shape"),
        ),
        // Memory.
        ("MemoryLatency", "latency_ns", fig("latency_ns_ci95")),
        (
            "MemoryLatency",
            "latency_no_walks_ns",
            fig("latency_no_walks_ns_ci95"),
        ),
        ("MemoryLatency", "latency_cycles", Not(CYCLES)),
        (
            "MemoryLatency",
            "tlb_share_ns",
            Not(
                "latency_ns less latency_no_walks_ns (or a model of the TLB levels): two figures \
                 given with their intervals",
            ),
        ),
        ("MemoryLatency", "tlb_share_cycles", Not(CYCLES)),
        (
            "MemoryLatency",
            "cache_reach_bytes",
            Not("the sweep point where memory's plateau begins: a landmark of the curve, not compared"),
        ),
        ("MemoryLatency", "size_bytes", Not(SETTING)),
        ("MemoryMeasure", "latency_ns", part("latency_ns_ci95")),
        ("MemoryMeasure", "size_bytes", Not(SETTING)),
        ("MlpPoint", "ns_per_load", part("ns_per_load_ci95")),
        ("MlpPoint", "speedup", part("speedup_ci95")),
        ("MlpPoint", "chains", Not(SETTING)),
        // TLBs.
        ("TlbLevel", "entries", fig("entries_ci95")),
        ("TlbLevel", "miss_latency_ns", fig("miss_latency_ns_ci95")),
        ("TlbLevel", "miss_latency_cycles", Not(CYCLES)),
        ("TlbLevel", "level", Not(COUNT)),
        ("TlbLevel", "page_bytes", Not(SETTING)),
        ("TlbLevel", "nominal_entries", Not(STATED)),
        (
            "TlbLevel",
            "entries_low",
            Not("the width of the step (10% of the way up): its shape"),
        ),
        (
            "TlbLevel",
            "entries_high",
            Not("the width of the step (75% of the way up): its shape"),
        ),
        (
            "TlbHugePageComparison",
            "small_pages_ns",
            fig("small_pages_ns_ci95"),
        ),
        (
            "TlbHugePageComparison",
            "huge_pages_ns",
            fig("huge_pages_ns_ci95"),
        ),
        ("TlbHugePageComparison", "penalty_ns", fig("penalty_ns_ci95")),
        ("TlbHugePageComparison", "penalty_cycles", Not(CYCLES)),
        ("TlbHugePageComparison", "pages", Not(SETTING)),
        ("TlbHugePageComparison", "span_bytes", Not(SETTING)),
        // The `mem` section.
        ("MemResult", "ns_per_op", fig("ns_per_op_ci95")),
        ("MemResult", "bytes_per_sec", fig("bytes_per_sec_ci95")),
        (
            "MemResult",
            "ops_per_sec",
            Not("ns_per_op as a rate (the same figure)"),
        ),
        ("MemResult", "clk_per_op", Not(CYCLES)),
        ("MemResult", "oncpu_clk_per_op", Not(CYCLES)),
        ("MemResult", "tsc_per_op", Not(CYCLES)),
        (
            "MemResult",
            "oncpu_ns_per_op",
            Not("ns_per_op counting only the time on a CPU: an input to the verdict"),
        ),
        (
            "MemResult",
            "oncpu_fraction",
            Not("the share of time the threads held a CPU: an input to the verdict"),
        ),
        (
            "MemResult",
            "huge_fraction",
            Not("a fact of the buffer's backing"),
        ),
        ("MemResult", "tsc_mhz", Not(STATED)),
        ("MemResult", "threads", Not(SETTING)),
        ("MemResult", "size_bytes", Not(SETTING)),
        ("MemResult", "page_size_bytes", Not(SETTING)),
        ("MemResult", "bytes_per_op", Not(SETTING)),
        ("MemResult", "chains", Not(SETTING)),
        ("MemResult", "numa_nodes", Not(SETTING)),
        ("MemResult", "total_ops", Not(COUNT)),
        ("MemResult", "total_clk", Not(COUNT)),
        ("MemResult", "total_tsc", Not(COUNT)),
        ("MemResult", "exec_time_s", Not(COUNT)),
        ("MemResult", "total_exec_time_s", Not(COUNT)),
        ("MemResult", "setup_s", Not(COUNT)),
        ("MemResult", "preemptions", Not(COUNT)),
        ("NumaLatency", "ns_per_op", fig("ns_per_op_ci95")),
        ("NumaLatency", "clk_per_op", Not(CYCLES)),
        ("NumaLatency", "cpu", Not(SETTING)),
        ("NumaLatency", "cpu_node", Not(SETTING)),
        ("NumaLatency", "mem_node", Not(SETTING)),
        // Bandwidth.
        ("Bandwidth", "read_bytes_per_sec", fig("read_bytes_per_sec_ci95")),
        (
            "Bandwidth",
            "write_bytes_per_sec",
            fig("write_bytes_per_sec_ci95"),
        ),
        ("Bandwidth", "copy_bytes_per_sec", fig("copy_bytes_per_sec_ci95")),
        ("Bandwidth", "threads", Not(SETTING)),
        ("Bandwidth", "size_bytes", Not(SETTING)),
        ("BandwidthPoint", "bytes_per_sec", fig("bytes_per_sec_ci95")),
        ("BandwidthPoint", "threads", Not(SETTING)),
        ("LoadedLatencyPoint", "latency_ns", fig("latency_ns_ci95")),
        ("LoadedLatencyPoint", "latency_cycles", Not(CYCLES)),
        ("LoadedLatencyPoint", "streaming_threads", Not(SETTING)),
        (
            "LoadedLatencyPoint",
            "stream_bytes_per_sec",
            Not("the load applied while the latency was measured: the curve's x"),
        ),
        // Context switch.
        ("CtxPoint", "us_median", fig("us_median_ci95")),
        ("CtxPoint", "us_min", Not(ORDER)),
        ("CtxPoint", "us_max", Not(ORDER)),
        ("CtxPoint", "us_mad", Not(ORDER)),
        ("CtxPoint", "cycles_median", Not(CYCLES)),
        ("CtxPoint", "nprocs", Not(SETTING)),
        ("CtxPoint", "samples", Not(COUNT)),
        (
            "CtxPoint",
            "switches_per_hop",
            Not("the kernel's switch counters per hop: what a hop was, an input to the verdict"),
        ),
        (
            "CtxPoint",
            "preempted_per_hop",
            Not("the kernel's switch counters per hop: what a hop was, an input to the verdict"),
        ),
        (
            "CtxPoint",
            "us_per_switch",
            Not("us_median over the switches counted per hop"),
        ),
        (
            "ContextSwitch",
            "overhead_us",
            Not("the ring's own cost without switches, measured to be subtracted (lmbench's overhead)"),
        ),
        ("ContextSwitch", "overhead_cycles", Not(CYCLES)),
        (
            "CtxSize",
            "overhead_us",
            Not("the ring's own cost without switches, measured to be subtracted (lmbench's overhead)"),
        ),
        ("CtxSize", "overhead_cycles", Not(CYCLES)),
        ("CtxSize", "size_kb", Not(SETTING)),
        ("ContextSwitch", "size_kb", Not(SETTING)),
        ("ContextSwitch", "parallel", Not(SETTING)),
        ("ContextSwitch", "warmups", Not(SETTING)),
        ("ContextSwitch", "repetitions", Not(SETTING)),
        ("ContextSwitch", "duration_ms", Not(COUNT)),
        // I/O.
        ("IoResult", "iops", fig("iops_ci95")),
        ("IoResult", "bytes_per_sec", fig("bytes_per_sec_ci95")),
        ("IoResult", "lat_p50_us", fig("lat_p50_us_ci95")),
        ("IoResult", "lat_p99_us", fig("lat_p99_us_ci95")),
        ("IoResult", "lat_p999_us", fig("lat_p999_us_ci95")),
        ("IoResult", "lat_min_us", Not(ORDER)),
        ("IoResult", "lat_max_us", Not(ORDER)),
        (
            "IoResult",
            "lat_mean_us",
            Not("queue depth over IOPS (Little's law): the rate carries the interval"),
        ),
        ("IoResult", "runtime_s", Not(COUNT)),
        ("IoResult", "ios", Not(COUNT)),
        ("IoResult", "read_ios", Not(COUNT)),
        ("IoResult", "write_ios", Not(COUNT)),
        ("IoResult", "bs_bytes", Not(SETTING)),
        ("IoResult", "size_bytes", Not(SETTING)),
        ("IoResult", "iodepth", Not(SETTING)),
        ("IoResult", "threads", Not(SETTING)),
        ("IoResult", "rwmix_read", Not(SETTING)),
        ("IoResult", "time_limit_s", Not(SETTING)),
        // Named figures.
        ("Figure", "value", fig("ci95")),
        // Raw data and the spread of samples.
        ("RawPoint", "x", Not(RAW)),
        ("RawPoint", "y", Not(RAW)),
        ("ClockRaw", "chain_adds", Not(RAW)),
        ("ClockRaw", "duration_ms", Not(RAW)),
        ("ClockRaw", "tsc_mhz", Not(RAW)),
    ];
    for f in ["n", "min", "median", "max", "mad"] {
        v.push(("Spread", f, Not(ORDER)));
    }
    for f in [
        "ops",
        "exec_time_s",
        "ops_per_sec",
        "ns_per_op",
        "clk_per_op",
        "bytes_per_sec",
        "tsc_per_op",
        "core_mhz",
        "preemptions",
        "oncpu_ns_per_op",
        "cpu",
        "node",
        "tid",
    ] {
        v.push(("MemThread", f, Not(PART)));
    }
    for f in [
        "tid",
        "ios",
        "iops",
        "bytes_per_sec",
        "bytes",
        "lat_min_us",
        "lat_p50_us",
        "lat_p99_us",
        "lat_p999_us",
        "lat_max_us",
    ] {
        v.push(("IoThread", f, Not(PART)));
    }
    for f in [
        "counter_mhz",
        "counter_stated_mhz",
        "enough_ns",
        "pinned_cpu",
        "timer_overhead_ns",
        "timer_resolution_ns",
        "tsc_mhz",
    ] {
        v.push(("HarnessInfo", f, Not(HARNESS)));
    }
    for f in [
        "cpu_family",
        "cpu_model",
        "cpu_stepping",
        "dminline_bytes",
        "hugepage_size_bytes",
        "hugepages_reserved",
        "logical_cpus",
        "memory_available_bytes",
        "memory_total_bytes",
        "page_bytes",
    ] {
        v.push(("MachineInfo", f, Not(STATED)));
    }
    for (d, fs) in [
        ("Midr", &["implementer", "part", "revision", "variant"][..]),
        (
            "NominalCache",
            &["level", "line_bytes", "sets", "size_bytes", "ways"][..],
        ),
        ("NominalTlb", &["entries", "level", "page_bytes", "ways"][..]),
        ("NumaNode", &["memory_bytes", "node"][..]),
    ] {
        for f in fs {
            v.push((d, f, Not(STATED)));
        }
    }
    v
}

fn schema() -> Value {
    hwcal_model::schema::profile_schema()
}

/// Whether a property schema admits a number.
fn numeric(p: &Value) -> bool {
    let is_num = |t: &Value| matches!(t.as_str(), Some("number" | "integer"));
    match p.get("type") {
        Some(Value::Array(ts)) if ts.iter().any(is_num) => return true,
        Some(t) if is_num(t) => return true,
        _ => {}
    }
    if p.get("$ref").and_then(Value::as_str) == Some("#/$defs/NanOrNumber") {
        return true;
    }
    ["anyOf", "oneOf"]
        .iter()
        .filter_map(|k| p.get(*k).and_then(Value::as_array))
        .flatten()
        .any(numeric)
}

/// Every definition (and the root, as `Profile`) with its properties.
/// Every definition's properties, by name.
type Objects = BTreeMap<String, serde_json::Map<String, Value>>;

fn objects(s: &Value) -> Objects {
    let mut out = BTreeMap::new();
    if let Some(defs) = s.get("$defs").and_then(Value::as_object) {
        for (name, d) in defs {
            if let Some(p) = d.get("properties").and_then(Value::as_object) {
                out.insert(name.clone(), p.clone());
            }
        }
    }
    if let Some(p) = s.get("properties").and_then(Value::as_object) {
        out.insert("Profile".into(), p.clone());
    }
    out
}

/// Whether `v` refers to definition `name` anywhere inside.
fn refers_to(v: &Value, name: &str) -> bool {
    match v {
        Value::Object(m) => {
            m.get("$ref").and_then(Value::as_str) == Some(&format!("#/$defs/{name}"))
                || m.values().any(|x| refers_to(x, name))
        }
        Value::Array(a) => a.iter().any(|x| refers_to(x, name)),
        _ => false,
    }
}

#[test]
fn every_numeric_figure_in_the_schema_has_a_verdict_and_an_interval() {
    let s = schema();
    let objs = objects(&s);
    let kinds = kinds();
    let mut problems = Vec::new();
    for (d, f, k) in &kinds {
        if let Not(why) = k {
            if why.len() < 10 {
                problems.push(format!("{d}.{f}: say why it is not a figure"));
            }
        }
    }
    for (name, props) in &objs {
        for (prop, p) in props {
            if !numeric(p) {
                continue;
            }
            match kinds.iter().find(|(d, f, _)| d == name && f == prop) {
                None => problems.push(format!(
                    "{name}.{prop}: a number nobody has said is a figure (give it `{prop}_ci95` and a \
                     verdict) or is not (list it with the reason)"
                )),
                Some((_, _, Not(_))) => {}
                Some((_, _, Figure { ci, verdict })) => {
                    if !props.contains_key(*ci) {
                        problems.push(format!("{name}.{prop}: a figure without its interval `{ci}`"));
                    }
                    if *verdict == PARENT {
                        let holders: Vec<&String> = objs
                            .iter()
                            .filter(|(_, q)| q.values().any(|x| refers_to(x, name)))
                            .map(|(n, _)| n)
                            .collect();
                        if holders.is_empty() {
                            problems.push(format!("{name}.{prop}: no object holds it"));
                        }
                        for h in holders {
                            if !objs[h].contains_key("verdict") {
                                problems.push(format!("{name}.{prop}: its holder {h} has no verdict"));
                            }
                        }
                    } else if !props.contains_key(*verdict) {
                        problems.push(format!("{name}.{prop}: a figure without a verdict `{verdict}`"));
                    }
                }
            }
        }
    }
    // No entry for a property the schema no longer has.
    for (d, f, _) in &kinds {
        if !objs.get(*d).is_some_and(|p| p.contains_key(*f)) {
            problems.push(format!("{d}.{f}: listed here but not in the schema"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every figure of `v` (a profile as JSON) that is present and finite:
/// how many (`seen`), and those without their interval, by path.
/// `objs` are the schema's [`objects`].
fn missing_intervals(
    v: &Value,
    name: &str,
    path: &str,
    objs: &Objects,
    seen: &mut usize,
    out: &mut Vec<String>,
) {
    let kinds = kinds();
    let Some(obj) = v.as_object() else {
        return;
    };
    for (k, x) in obj {
        let here = format!("{path}.{k}");
        if let Some((_, _, Figure { ci, .. })) = kinds.iter().find(|(d, f, _)| *d == name && f == k) {
            if x.as_f64().is_some_and(f64::is_finite) {
                *seen += 1;
                if obj.get(*ci).is_none_or(Value::is_null) {
                    out.push(here.clone());
                }
            }
        }
        // Descend into the properties that hold other definitions.
        let Some(p) = objs.get(name).and_then(|p| p.get(k)) else {
            continue;
        };
        let Some(child) = objs.keys().find(|d| refers_to(p, d)) else {
            continue;
        };
        match x {
            Value::Array(items) => {
                for (i, it) in items.iter().enumerate() {
                    missing_intervals(it, child, &format!("{here}[{i}]"), objs, seen, out);
                }
            }
            Value::Object(_) => missing_intervals(x, child, &here, objs, seen, out),
            _ => {}
        }
    }
}

#[test]
fn the_full_synthetic_profile_has_every_interval_filled_in() {
    let s = schema();
    let p = serde_json::to_value(hwcal_model::sample::full_profile(0)).unwrap();
    let (mut seen, mut missing) = (0, Vec::new());
    missing_intervals(&p, "Profile", "", &objects(&s), &mut seen, &mut missing);
    assert!(missing.is_empty(), "figures without an interval: {missing:?}");
    // Every section's figures were walked (3 levels × 4, memory, MLP...).
    assert!(seen > 50, "{seen} figures walked");
    // And the walk does find a missing one.
    let mut q = p.clone();
    q["caches"][0]["latency_ns_ci95"] = Value::Null;
    let mut found = Vec::new();
    missing_intervals(&q, "Profile", "", &objects(&s), &mut seen, &mut found);
    assert_eq!(found, [".caches[0].latency_ns"]);
}

#[test]
fn reanalysed_reference_profiles_carry_the_intervals_of_what_they_measured() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/reference/machines");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("skipped: no {}", dir.display());
        return;
    };
    let s = schema();
    let tmp = tempfile::tempdir().unwrap();
    let mut seen = 0;
    for e in entries.flatten() {
        let path = e.path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let out = tmp.path().join("a.json");
        let ok = assert_cmd::Command::cargo_bin("hwcal")
            .unwrap()
            .args(["analyze", "-q"])
            .arg(&path)
            .arg("--json")
            .arg(&out)
            .output()
            .unwrap();
        assert!(ok.status.success(), "{}", path.display());
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        let (mut figures, mut missing) = (0, Vec::new());
        missing_intervals(&v, "Profile", "", &objects(&s), &mut figures, &mut missing);
        println!(
            "{}: {figures} figures, {} without an interval",
            path.display(),
            missing.len()
        );
        assert!(figures > 20, "{}: only {figures} figures walked", path.display());
        assert!(
            missing.is_empty(),
            "{}: figures without an interval: {missing:?}",
            path.display()
        );
        seen += 1;
    }
    assert!(seen > 0 || !dir.exists());
}
