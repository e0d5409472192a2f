//! The terminal summary, in the spirit of The Calibrator's: one block per
//! measured section, nominal figures beside measured ones, every figure with
//! its unit, and the noise verdict wherever a figure is not trustworthy.

use hwcal_model::*;
use std::fmt::Write;

/// Human size with binary units: `48 KiB`, `1.25 MiB`.
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 || (v - v.round()).abs() < 1e-9 {
        format!("{} {}", v.round() as u64, UNITS[u])
    } else {
        format!("{v:.2} {}", UNITS[u])
    }
}

/// `1.23 ns = 3 cy` or just `1.23 ns`.
pub fn ns_cy(ns: f64, cy: Option<f64>) -> String {
    match cy {
        Some(c) if c.is_finite() => format!("{ns:8.2} ns = {c:5.1} cy"),
        _ => format!("{ns:8.2} ns"),
    }
}

fn opt_ns_cy(ns: Option<f64>, cy: Option<f64>) -> String {
    match ns {
        Some(n) => ns_cy(n, cy),
        None => format!("{:>19}", "-"),
    }
}

fn noisy_mark(v: Verdict) -> &'static str {
    match v {
        Verdict::Ok => "",
        Verdict::Noisy => "  (noisy)",
    }
}

/// The whole summary: every section the profile holds.
pub fn summary(p: &Profile) -> String {
    let mut s = String::new();
    if let Some(m) = &p.machine {
        s += &machine(m);
    }
    if let Some(h) = &p.harness {
        s += &harness(h);
    }
    if let Some(c) = &p.clock {
        s += &clock(c);
    }
    if p.caches.is_some() || p.memory.is_some() {
        s += &caches(p.caches.as_deref().unwrap_or(&[]), p.memory.as_ref());
    }
    if let Some(t) = &p.tlbs {
        s += &tlbs(t);
    }
    if let Some(m) = &p.mem {
        s += &mem(m);
    }
    if let Some(b) = &p.bandwidth {
        s += &bandwidth(b);
    }
    if let Some(c) = &p.context_switch {
        s += &context_switch(c);
    }
    if let Some(io) = &p.io {
        s += &io_section(io);
    }
    if !p.notes.is_empty() {
        s += "\nnotes:\n";
        for n in &p.notes {
            let _ = writeln!(s, "  - {n}");
        }
    }
    s
}

pub fn machine(m: &MachineInfo) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "machine:");
    let _ = writeln!(
        s,
        "  cpu        {} ({}, family {} model {} stepping {})",
        m.cpu_model_name,
        m.cpu_vendor,
        m.cpu_family.map_or("?".into(), |v| v.to_string()),
        m.cpu_model.map_or("?".into(), |v| v.to_string()),
        m.cpu_stepping.map_or("?".into(), |v| v.to_string()),
    );
    let _ = writeln!(
        s,
        "  cpus       {} logical, online {:?}",
        m.logical_cpus, m.online_cpus
    );
    let _ = writeln!(s, "  kernel     {} ({})", m.kernel, m.arch);
    let _ = writeln!(
        s,
        "  hypervisor {}",
        m.hypervisor.as_deref().unwrap_or("none detected")
    );
    let _ = writeln!(
        s,
        "  memory     {} total, {} available",
        human_bytes(m.memory_total_bytes),
        human_bytes(m.memory_available_bytes)
    );
    let _ = writeln!(
        s,
        "  huge pages THP {}, {} reserved{}",
        m.thp_mode.as_deref().unwrap_or("unavailable"),
        m.hugepages_reserved,
        m.hugepage_size_bytes
            .map_or(String::new(), |b| format!(" of {}", human_bytes(b)))
    );
    let nodes: Vec<String> = m
        .numa_nodes
        .iter()
        .map(|n| format!("node{} cpus {:?}", n.node, n.cpus))
        .collect();
    let _ = writeln!(
        s,
        "  numa       {}",
        if nodes.is_empty() {
            "no NUMA information".into()
        } else {
            nodes.join("; ")
        }
    );
    let _ = writeln!(
        s,
        "  invariant TSC {}",
        if m.invariant_tsc { "yes" } else { "no" }
    );
    if !m.nominal_caches.is_empty() {
        let _ = writeln!(s, "  nominal caches ({}):", m.nominal_caches[0].source);
        let _ = writeln!(s, "    level type         size      line  ways  shared by");
        for c in &m.nominal_caches {
            let _ = writeln!(
                s,
                "    L{}    {:<11} {:>9} {:>5}  {:>4}  {:?}",
                c.level,
                c.cache_type,
                human_bytes(c.size_bytes),
                c.line_bytes.map_or("?".into(), |v| format!("{v} B")),
                c.ways.map_or("?".into(), |v| v.to_string()),
                c.shared_cpus
            );
        }
    }
    s
}

pub fn harness(h: &HarnessInfo) -> String {
    format!(
        "harness:\n  timer {} (resolution {:.2} ns, read overhead {:.1} ns){}, pinned to {}, enough = {:.0} µs\n",
        h.timer,
        h.timer_resolution_ns,
        h.timer_overhead_ns,
        h.tsc_mhz.map_or(String::new(), |t| format!(", TSC {t:.1} MHz")),
        h.pinned_cpu.map_or("no CPU".into(), |c| format!("CPU {c}")),
        h.enough_ns / 1e3
    )
}

pub fn clock(c: &ClockResult) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "clock:{}", noisy_mark(c.verdict));
    let _ = writeln!(
        s,
        "  core        {:8.1} MHz   (min {:.1}, max {:.1} over the run)",
        c.core_mhz, c.core_mhz_min, c.core_mhz_max
    );
    let _ = writeln!(s, "  add chain   {:8.1} MHz", c.chain_mhz);
    match c.gcd_mhz {
        Some(g) => {
            let _ = writeln!(
                s,
                "  mhz GCD     {:8.1} MHz   ({} of {} batches accepted; methods agree within {:.2}%)",
                g,
                c.gcd_rounds_accepted,
                c.gcd_rounds_attempted,
                c.agreement_pct.unwrap_or(f64::NAN)
            );
        }
        None => {
            let _ = writeln!(
                s,
                "  mhz GCD          n/a    ({} of {} batches accepted)",
                c.gcd_rounds_accepted, c.gcd_rounds_attempted
            );
        }
    }
    match c.tsc_mhz {
        Some(t) => {
            let _ = writeln!(
                s,
                "  TSC         {:8.1} MHz   (core/TSC = {:.3})",
                t,
                c.core_mhz / t
            );
        }
        None => {
            let _ = writeln!(s, "  TSC              n/a");
        }
    }
    let _ = writeln!(s, "  verdict     {}", c.verdict.as_str());
    s
}

pub fn caches(levels: &[CacheLevel], memory: Option<&MemoryLatency>) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "caches:");
    let _ = writeln!(
        s,
        "  level      size   (nominal)  line         latency              miss-latency          replace-time"
    );
    for c in levels {
        let _ = writeln!(
            s,
            "  {:>5} {:>9}  ({:>9})  {:>4}  {}  {}  {}{}",
            c.level,
            human_bytes(c.size_bytes),
            c.nominal_size_bytes.map_or("?".into(), human_bytes),
            c.line_bytes.map_or("?".into(), |l| format!("{l} B")),
            ns_cy(c.latency_ns, c.latency_cycles),
            opt_ns_cy(c.miss_latency_ns, c.miss_latency_cycles),
            opt_ns_cy(c.replace_time_ns, c.replace_time_cycles),
            noisy_mark(c.verdict)
        );
    }
    if let Some(m) = memory {
        let _ = writeln!(
            s,
            "  memory latency {} ({}){}",
            ns_cy(m.latency_ns, m.latency_cycles).trim(),
            if m.huge_pages { "huge pages" } else { "4 KiB pages" },
            noisy_mark(m.verdict)
        );
        for p in &m.mlp {
            let _ = writeln!(
                s,
                "  {:>2} parallel chases: {:7.2} ns per load ({:.2}× one chase)",
                p.chains, p.ns_per_load, p.speedup
            );
        }
    }
    s
}

pub fn tlbs(t: &[TlbLevel]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "TLBs:");
    let _ = writeln!(s, "  level  entries  page size        miss-latency");
    for l in t {
        let _ = writeln!(
            s,
            "  {:>5}  {:>7}  {:>9}  {}{}",
            l.level,
            l.entries,
            human_bytes(l.page_bytes),
            ns_cy(l.miss_latency_ns, l.miss_latency_cycles),
            noisy_mark(l.verdict)
        );
    }
    if t.is_empty() {
        let _ = writeln!(s, "  (no TLB level detected)");
    }
    s
}

pub fn mem(m: &MemResult) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "mem:{}", noisy_mark(m.verdict));
    let rows: Vec<(&str, String)> = vec![
        ("access_pattern", m.access_pattern.clone()),
        ("op", m.op.clone()),
        ("multiplicity", m.threads.to_string()),
        ("local", m.local.to_string()),
        ("page_size", m.page_size_bytes.to_string()),
        ("size", m.size_bytes.to_string()),
        ("use_hugepages", m.use_hugepages.to_string()),
        ("total_ops", m.total_ops.to_string()),
        ("total_clk", format!("{:.0}", m.total_clk)),
        ("exec_time", format!("{:.6}", m.exec_time_s)),
        ("ops_per_sec", format!("{:.6e}", m.ops_per_sec)),
        ("clk_per_op", format!("{:.3}", m.clk_per_op)),
        (
            "tsc_per_op",
            m.tsc_per_op.map_or("n/a".into(), |v| format!("{v:.3}")),
        ),
        ("ns_per_op", format!("{:.3}", m.ns_per_op)),
        ("bytes_per_sec", format!("{:.6e}", m.bytes_per_sec)),
    ];
    for (k, v) in rows {
        let _ = writeln!(s, "  {k:<15} {v}");
    }
    for t in &m.per_thread {
        let _ = writeln!(
            s,
            "  thread {:>2} cpu {:>3}: {:.3} ns/op, {:.3} clk/op, {:.3e} B/s",
            t.tid,
            t.cpu.map_or("-".into(), |c| c.to_string()),
            t.ns_per_op,
            t.clk_per_op,
            t.bytes_per_sec
        );
    }
    s
}

pub fn bandwidth(b: &Bandwidth) -> String {
    let gbs = |v: Option<f64>| v.map_or("n/a".into(), |v| format!("{:.2} GB/s", v / 1e9));
    let mut s = String::new();
    let _ = writeln!(
        s,
        "bandwidth ({} thread{}, {}):\n  read {}, write {}, copy {}",
        b.threads,
        if b.threads == 1 { "" } else { "s" },
        human_bytes(b.size_bytes),
        gbs(b.read_bytes_per_sec),
        gbs(b.write_bytes_per_sec),
        gbs(b.copy_bytes_per_sec)
    );
    for p in &b.scaling {
        let _ = writeln!(
            s,
            "  {:>2} threads {:<5} {:8.2} GB/s",
            p.threads,
            p.op,
            p.bytes_per_sec / 1e9
        );
    }
    for l in &b.loaded_latency {
        let _ = writeln!(
            s,
            "  latency with {} streaming thread(s): {:.1} ns (stream {:.2} GB/s)",
            l.streaming_threads,
            l.latency_ns,
            l.stream_bytes_per_sec / 1e9
        );
    }
    s
}

pub fn context_switch(c: &ContextSwitch) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "context switch ({}, placement {}, size {} KB, overhead {:.2} µs):",
        c.kind, c.placement, c.size_kb, c.overhead_us
    );
    for p in &c.points {
        let _ = writeln!(
            s,
            "  {:>3} procs: min {:7.2} µs, median {:7.2} µs ± {:.2}{}",
            p.nprocs,
            p.us_min,
            p.us_median,
            p.us_mad,
            noisy_mark(p.verdict)
        );
    }
    for z in &c.sizes {
        let _ = writeln!(s, "  size {} KB (overhead {:.2} µs):", z.size_kb, z.overhead_us);
        for p in &z.points {
            let _ = writeln!(
                s,
                "  {:>3} procs: min {:7.2} µs, median {:7.2} µs ± {:.2}{}",
                p.nprocs,
                p.us_min,
                p.us_median,
                p.us_mad,
                noisy_mark(p.verdict)
            );
        }
    }
    s
}

/// fio-style rate: `123.4 MB/s (117.7 MiB/s)`.
fn rate(bps: f64) -> String {
    format!("{:.1} MB/s ({:.1} MiB/s)", bps / 1e6, bps / (1u64 << 20) as f64)
}

pub fn io_section(io: &IoResult) -> String {
    let mut s = String::new();
    let mix = match io.rwmix_read {
        Some(r) => format!(" rwmix_read={r}%"),
        None => String::new(),
    };
    let _ = writeln!(
        s,
        "io ({}{mix} bs={} engine={} iodepth={} threads={}{}):",
        io.rw,
        human_bytes(io.bs_bytes),
        io.engine,
        io.iodepth,
        io.threads,
        if io.direct { " direct" } else { " buffered" },
    );
    let _ = writeln!(
        s,
        "  target     {} ({} used{}), {}",
        io.path,
        human_bytes(io.size_bytes),
        if io.created_file {
            ", created and removed"
        } else {
            ""
        },
        match io.time_limit_s {
            Some(t) => format!("time-bound {t} s, ran {:.2} s", io.runtime_s),
            None => format!("one pass in {:.2} s", io.runtime_s),
        }
    );
    let _ = writeln!(
        s,
        "  total      {:.0} IOPS, {}, {} I/Os",
        io.iops,
        rate(io.bytes_per_sec),
        io.ios
    );
    if io.read_ios > 0 && io.write_ios > 0 && io.runtime_s > 0.0 {
        let _ = writeln!(
            s,
            "             reads {:.0} IOPS, writes {:.0} IOPS",
            io.read_ios as f64 / io.runtime_s,
            io.write_ios as f64 / io.runtime_s
        );
    }
    let _ = writeln!(
        s,
        "  latency    min {:.1}  p50 {:.1}  p99 {:.1}  p99.9 {:.1}  max {:.1}  mean {:.1}  (µs)",
        io.lat_min_us, io.lat_p50_us, io.lat_p99_us, io.lat_p999_us, io.lat_max_us, io.lat_mean_us
    );
    if io.iops_intervals.len() >= 2 {
        let v = &io.iops_intervals;
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(0.0, f64::max);
        let _ = writeln!(s, "  per second IOPS from {lo:.0} to {hi:.0} over {} s", v.len());
    }
    if io.per_thread.len() > 1 {
        for t in &io.per_thread {
            let _ = writeln!(
                s,
                "  thread {:<3} {:.0} IOPS, {}, latency µs min {:.1} p50 {:.1} p99 {:.1} p99.9 {:.1} max {:.1}",
                t.tid,
                t.iops,
                rate(t.bytes_per_sec),
                t.lat_min_us,
                t.lat_p50_us,
                t.lat_p99_us,
                t.lat_p999_us,
                t.lat_max_us
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(human_bytes(48 * 1024), "48 KiB");
        assert_eq!(human_bytes(1280 * 1024), "1.25 MiB");
        assert_eq!(human_bytes(105 << 20), "105 MiB");
        assert_eq!(human_bytes(100), "100 B");
    }

    #[test]
    fn summary_shows_noisy_clock() {
        let mut p = Profile::new("hwcal clock", 0);
        p.clock = Some(ClockResult {
            core_mhz: 2500.0,
            verdict: Verdict::Noisy,
            ..Default::default()
        });
        let s = summary(&p);
        assert!(s.contains("(noisy)") && s.contains("2500.0 MHz"));
    }

    #[test]
    fn io_section_shows_totals_mix_and_threads() {
        let t = |tid| IoThread {
            tid,
            ios: 500,
            iops: 1000.0,
            bytes_per_sec: 4096e3,
            ..Default::default()
        };
        let io = IoResult {
            rw: "randrw".into(),
            rwmix_read: Some(70),
            bs_bytes: 4096,
            size_bytes: 1 << 30,
            engine: "io_uring".into(),
            iodepth: 32,
            threads: 2,
            direct: true,
            runtime_s: 1.0,
            iops: 2000.0,
            bytes_per_sec: 8192e3,
            ios: 1000,
            read_ios: 700,
            write_ios: 300,
            lat_p999_us: 123.4,
            per_thread: vec![t(0), t(1)],
            ..Default::default()
        };
        let s = io_section(&io);
        assert!(
            s.contains("randrw rwmix_read=70% bs=4 KiB engine=io_uring iodepth=32 threads=2 direct"),
            "{s}"
        );
        assert!(s.contains("2000 IOPS, 8.2 MB/s"), "{s}");
        assert!(s.contains("reads 700 IOPS, writes 300 IOPS"), "{s}");
        assert!(s.contains("p99.9 123.4"), "{s}");
        assert!(s.contains("thread 1"), "{s}");
    }
}
