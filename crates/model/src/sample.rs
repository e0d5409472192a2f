//! Synthetic profiles with every section filled, for tests and demos of the
//! code that consumes profiles (database, reports, comparisons) without
//! running a probe. The figures are shaped like the reference machine
//! (a 2-vCPU Sapphire Rapids guest: 48 KiB L1d, 2 MiB L2, an effective L3 of
//! a few MiB, ~145 ns DRAM with huge pages) but nothing here was measured.

use crate::{
    Bandwidth, BandwidthPoint, CacheLevel, ClockResult, ContextSwitch, CtxPoint, CtxSize, HarnessInfo,
    IoResult, IoThread, LoadedLatencyPoint, MachineIdentity, MachineInfo, MemResult, MemThread,
    MemoryLatency, MlpPoint, NominalCache, NumaNode, Profile, RawCurve, RawPoint, TlbLevel, Verdict,
};

/// A complete synthetic profile. `variant` 0 is the reference-like machine;
/// other variants scale the clock and the latencies so two profiles differ
/// in known ratios (variant `v` has latencies × (1 + v/10) and a clock
/// ÷ (1 + v/10)).
pub fn full_profile(variant: u32) -> Profile {
    let f = 1.0 + variant as f64 / 10.0;
    let mhz = 2400.0 / f;
    let cy = |ns: f64| Some(ns * mhz / 1e3);
    let mut p = Profile::new("hwcal run (synthetic)", 1_790_000_000 + variant as u64 * 3600);
    p.machine = Some(MachineInfo {
        hostname: format!("synthetic-{variant}"),
        arch: "x86_64".into(),
        cpu_vendor: "GenuineIntel".into(),
        cpu_model_name: "Synthetic Xeon <test> & Co".into(),
        cpu_family: Some(6),
        cpu_model: Some(143),
        cpu_stepping: Some(8),
        logical_cpus: 2,
        online_cpus: vec![0, 1],
        kernel: "6.1.0-synthetic".into(),
        hypervisor: Some("KVM".into()),
        thp_mode: Some("madvise".into()),
        hugepages_reserved: 0,
        hugepage_size_bytes: Some(2 << 20),
        numa_nodes: vec![NumaNode {
            node: 0,
            cpus: vec![0, 1],
            memory_bytes: Some(8 << 30),
        }],
        memory_total_bytes: 8 << 30,
        memory_available_bytes: 6 << 30,
        invariant_tsc: true,
        cpu_flags: vec!["constant_tsc".into(), "nonstop_tsc".into()],
        nominal_caches: vec![
            nominal(1, "Data", 48 << 10),
            nominal(1, "Instruction", 32 << 10),
            nominal(2, "Unified", 2 << 20),
            nominal(3, "Unified", 105 << 20),
        ],
        nominal_tlbs: vec![],
        // One machine per variant (as hostnames are), so database tests
        // see several machines.
        identity: Some(MachineIdentity {
            machine_id: format!("{variant:02x}5a17e7c0{variant:022x}"),
            id_source: "machine-id".into(),
            core: "Sapphire Rapids".into(),
            product: Some("QEMU Standard PC (Q35 + ICH9, 2009)".into()),
        }),
        ..Default::default()
    });
    p.harness = Some(HarnessInfo {
        timer: "tsc".into(),
        timer_resolution_ns: 0.5,
        timer_overhead_ns: 12.0,
        tsc_mhz: Some(2000.0),
        pinned_cpu: Some(1),
        enough_ns: 20_000.0,
        ..Default::default()
    });
    p.clock = Some(ClockResult {
        core_mhz: mhz,
        core_mhz_min: mhz * 0.93,
        core_mhz_max: mhz * 1.05,
        chain_mhz: mhz,
        gcd_mhz: Some(mhz * 1.0005),
        agreement_pct: Some(0.05),
        tsc_mhz: Some(2000.0),
        verdict: Verdict::Ok,
        gcd_rounds_accepted: 14,
        gcd_rounds_attempted: 24,
        expression_cycles: vec![],
        duration_ms: 900.0,
        core_mhz_ci95: Some([mhz * 0.996, mhz * 1.003]),
    });
    // (effective size, latency ns) per level, then DRAM.
    let levels = [(48u64 << 10, 2.1 * f), (2 << 20, 6.5 * f), (5 << 20, 33.0 * f)];
    let dram = 145.0 * f;
    p.caches = Some(
        levels
            .iter()
            .enumerate()
            .map(|(i, &(size, ns))| {
                let next = levels.get(i + 1).map_or(dram, |l| l.1);
                CacheLevel {
                    level: i as u32 + 1,
                    size_bytes: size,
                    line_bytes: Some(64),
                    latency_ns: ns,
                    latency_cycles: cy(ns),
                    miss_latency_ns: Some(next - ns),
                    miss_latency_cycles: cy(next - ns),
                    replace_time_ns: Some((next - ns) * 0.8),
                    replace_time_cycles: cy((next - ns) * 0.8),
                    nominal_size_bytes: Some([48 << 10, 2 << 20, 105 << 20][i]),
                    nominal_line_bytes: Some(64),
                    verdict: if i == 2 { Verdict::Noisy } else { Verdict::Ok },
                    latency_ns_ci95: Some([ns * 0.99, ns * 1.01]),
                    size_bytes_ci95: Some([size - size / 32, size + size / 32]),
                    miss_latency_ns_ci95: Some([(next - ns) * 0.97, (next - ns) * 1.03]),
                    replace_time_ns_ci95: Some([(next - ns) * 0.78, (next - ns) * 0.82]),
                    ..Default::default()
                }
            })
            .collect(),
    );
    p.memory = Some(MemoryLatency {
        latency_ns: dram,
        latency_cycles: cy(dram),
        huge_pages: true,
        cache_reach_bytes: Some(6 << 20),
        mlp: [1u32, 2, 4, 8]
            .iter()
            .map(|&k| {
                let speedup = (k as f64).min(6.0) * 0.95_f64.powi(k as i32 - 1);
                MlpPoint {
                    chains: k,
                    ns_per_load: dram / speedup,
                    speedup,
                    ns_per_load_ci95: Some([dram / speedup * 0.98, dram / speedup * 1.02]),
                    speedup_ci95: Some([speedup * 0.97, speedup * 1.03]),
                    verdict: None,
                }
            })
            .collect(),
        verdict: Verdict::Ok,
        latency_ns_ci95: Some([dram * 0.98, dram * 1.02]),
        ..Default::default()
    });
    p.tlbs = Some(vec![
        TlbLevel {
            level: 1,
            page_bytes: 4096,
            entries: 96,
            miss_latency_ns: 3.0 * f,
            miss_latency_cycles: cy(3.0 * f),
            verdict: Verdict::Ok,
            entries_ci95: Some([96 - 96 / 16, 96 + 96 / 16]),
            miss_latency_ns_ci95: Some([3.0 * f * 0.95, 3.0 * f * 1.05]),
            ..Default::default()
        },
        TlbLevel {
            level: 2,
            page_bytes: 4096,
            entries: 2048,
            miss_latency_ns: 20.0 * f,
            miss_latency_cycles: cy(20.0 * f),
            verdict: Verdict::Ok,
            entries_ci95: Some([2048 - 2048 / 16, 2048 + 2048 / 16]),
            miss_latency_ns_ci95: Some([20.0 * f * 0.95, 20.0 * f * 1.05]),
            ..Default::default()
        },
        TlbLevel {
            level: 1,
            page_bytes: 2 << 20,
            entries: 32,
            miss_latency_ns: 3.5 * f,
            miss_latency_cycles: cy(3.5 * f),
            verdict: Verdict::Ok,
            entries_ci95: Some([32 - 32 / 16, 32 + 32 / 16]),
            miss_latency_ns_ci95: Some([3.5 * f * 0.95, 3.5 * f * 1.05]),
            ..Default::default()
        },
    ]);
    p.mem = Some(MemResult {
        access_pattern: "random".into(),
        op: "chase".into(),
        threads: 1,
        local: true,
        size_bytes: 1 << 30,
        page_size_bytes: 2 << 20,
        use_hugepages: true,
        total_ops: 10_000_000,
        total_clk: 10_000_000.0 * dram * mhz / 1e3,
        total_tsc: Some(10_000_000.0 * dram * 2.0),
        exec_time_s: 10_000_000.0 * dram / 1e9,
        ops_per_sec: 1e9 / dram,
        ns_per_op: dram,
        clk_per_op: dram * mhz / 1e3,
        tsc_per_op: Some(dram * 2.0),
        bytes_per_sec: 64.0 * 1e9 / dram,
        per_thread: vec![MemThread {
            tid: 0,
            cpu: Some(1),
            node: Some(0),
            ops: 10_000_000,
            exec_time_s: 10_000_000.0 * dram / 1e9,
            ops_per_sec: 1e9 / dram,
            ns_per_op: dram,
            clk_per_op: dram * mhz / 1e3,
            bytes_per_sec: 64.0 * 1e9 / dram,
            ..Default::default()
        }],
        verdict: Verdict::Ok,
        ns_per_op_ci95: Some([dram * 0.99, dram * 1.01]),
        bytes_per_sec_ci95: Some([64.0 * 1e9 / dram / 1.01, 64.0 * 1e9 / dram / 0.99]),
        ..Default::default()
    });
    let bw = 12e9 / f;
    p.bandwidth = Some(Bandwidth {
        read_bytes_per_sec: Some(bw * 1.6),
        write_bytes_per_sec: Some(bw),
        copy_bytes_per_sec: Some(bw * 0.9),
        threads: 2,
        size_bytes: 256 << 20,
        scaling: [("read", 1.0), ("write", 0.6)]
            .iter()
            .flat_map(|&(op, k)| {
                (1..=4u32).map(move |t| BandwidthPoint {
                    threads: t,
                    op: op.into(),
                    bytes_per_sec: bw * k * (t as f64).min(2.0).sqrt(),
                    verdict: Some(Verdict::Ok),
                    bytes_per_sec_ci95: Some([
                        bw * k * (t as f64).min(2.0).sqrt() * 0.98,
                        bw * k * (t as f64).min(2.0).sqrt() * 1.02,
                    ]),
                })
            })
            .collect(),
        loaded_latency: vec![LoadedLatencyPoint {
            streaming_threads: 1,
            latency_ns: dram * 1.4,
            stream_bytes_per_sec: bw,
            verdict: Some(Verdict::Ok),
            latency_ns_ci95: Some([dram * 1.38, dram * 1.42]),
            ..Default::default()
        }],
        verdict: Some(Verdict::Ok),
        read_bytes_per_sec_ci95: Some([bw * 1.57, bw * 1.63]),
        write_bytes_per_sec_ci95: Some([bw * 0.98, bw * 1.02]),
        copy_bytes_per_sec_ci95: Some([bw * 0.88, bw * 0.92]),
        ..Default::default()
    });
    let ctx_points = |scale: f64| -> Vec<CtxPoint> {
        [2u32, 4, 8, 16, 32]
            .iter()
            .map(|&n| {
                let us = scale * f * (1.5 + 0.08 * n as f64);
                CtxPoint {
                    nprocs: n,
                    us_min: us * 0.95,
                    us_median: us,
                    us_mad: us * 0.04,
                    verdict: if n == 32 { Verdict::Noisy } else { Verdict::Ok },
                    us_median_ci95: Some([us * 0.97, us * 1.03]),
                    ..Default::default()
                }
            })
            .collect()
    };
    p.context_switch = Some(ContextSwitch {
        placement: "same".into(),
        kind: "processes".into(),
        size_kb: 0,
        parallel: 1,
        overhead_us: 0.4 * f,
        points: ctx_points(1.0),
        sizes: vec![CtxSize {
            size_kb: 64,
            overhead_us: 2.0 * f,
            points: ctx_points(2.5),
            ..Default::default()
        }],
        ..Default::default()
    });
    p.io = Some(IoResult {
        rw: "randread".into(),
        rwmix_read: None,
        bs_bytes: 4096,
        size_bytes: 256 << 20,
        engine: "io_uring".into(),
        iodepth: 32,
        threads: 1,
        direct: true,
        path: "/tmp/hwcal-io.test".into(),
        runtime_s: 5.0,
        iops: 50_000.0 / f,
        bytes_per_sec: 50_000.0 / f * 4096.0,
        lat_min_us: 60.0 * f,
        lat_p50_us: 600.0 * f,
        lat_p99_us: 1500.0 * f,
        lat_p999_us: 3000.0 * f,
        lat_max_us: 9000.0 * f,
        per_thread: vec![IoThread {
            tid: 0,
            ios: 250_000,
            iops: 50_000.0 / f,
            bytes_per_sec: 50_000.0 / f * 4096.0,
            lat_p50_us: 600.0 * f,
            lat_p99_us: 1500.0 * f,
            ..Default::default()
        }],
        verdict: Some(Verdict::Ok),
        iops_ci95: Some([49_000.0 / f, 51_000.0 / f]),
        bytes_per_sec_ci95: Some([49_000.0 / f * 4096.0, 51_000.0 / f * 4096.0]),
        lat_p50_us_ci95: Some([590.0 * f, 610.0 * f]),
        lat_p99_us_ci95: Some([1450.0 * f, 1560.0 * f]),
        lat_p999_us_ci95: Some([2800.0 * f, 3300.0 * f]),
        ..Default::default()
    });
    p.notes = vec![crate::Note::warning(
        "cache",
        "l3-no-plateau",
        "L3: sysfs says 105 MiB, latency reaches DRAM level past ~5 MiB",
    )];
    p.raw = vec![
        cache_curve(&levels, dram),
        tlb_curve(
            crate::curve::TLB_SMALL,
            &[(96, 3.0 * f), (2048, 20.0 * f)],
            4.0 * f,
        ),
    ];
    p.raw
        .push(tlb_curve(crate::curve::TLB_HUGE, &[(32, 3.5 * f)], 4.0 * f));
    p
}

fn nominal(level: u32, ty: &str, size: u64) -> NominalCache {
    NominalCache {
        level,
        cache_type: ty.into(),
        size_bytes: size,
        line_bytes: Some(64),
        ways: Some(12),
        sets: Some(size / 64 / 12),
        shared_cpus: vec![0, 1],
        source: "sysfs".into(),
    }
}

/// Latency vs working set: plateaus at each level's latency up to its size,
/// with a smooth rise over the following half octave, then DRAM. Four
/// points per octave from 4 KiB to 256 MiB.
fn cache_curve(levels: &[(u64, f64)], dram: f64) -> RawCurve {
    let mut points = Vec::new();
    let mut i = 0u32;
    loop {
        let x = 4096.0 * 2f64.powf(i as f64 / 4.0);
        if x > (256u64 << 20) as f64 {
            break;
        }
        let mut y = dram;
        for (k, &(size, ns)) in levels.iter().enumerate() {
            let next = levels.get(k + 1).map_or(dram, |l| l.1);
            let t = ((x / size as f64).log2() * 2.0).clamp(0.0, 1.0);
            if x <= size as f64 * 1.415 {
                y = ns + (next - ns) * t;
                break;
            }
        }
        // A deterministic wiggle so the curve looks measured.
        let y = y * (1.0 + 0.01 * ((i * 7 % 5) as f64 - 2.0));
        points.push(RawPoint {
            x,
            y,
            samples: vec![y, y * 1.01, y * 1.02],
            mhz: vec![],
        });
        i += 1;
    }
    RawCurve {
        id: crate::curve::CACHE_LATENCY.into(),
        x_label: "working set (bytes)".into(),
        y_label: "ns per load".into(),
        points,
    }
}

/// Extra ns per access vs pages touched: a step of each level's miss
/// latency past its entry count.
fn tlb_curve(id: &str, steps: &[(u64, f64)], base: f64) -> RawCurve {
    let points = (2..=14)
        .map(|e| {
            let pages = (1u64 << e) as f64;
            let y = base
                + steps
                    .iter()
                    .filter(|&&(n, _)| pages > n as f64)
                    .map(|&(_, ns)| ns)
                    .sum::<f64>();
            RawPoint {
                x: pages,
                y,
                samples: vec![],
                mhz: vec![],
            }
        })
        .collect();
    RawCurve {
        id: id.into(),
        x_label: "pages touched".into(),
        y_label: "ns per access".into(),
        points,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_section_is_filled_and_roundtrips() {
        let p = full_profile(0);
        assert!(p.machine.is_some() && p.clock.is_some() && p.caches.is_some());
        assert!(p.memory.is_some() && p.tlbs.is_some() && p.mem.is_some());
        assert!(p.bandwidth.is_some() && p.context_switch.is_some() && p.io.is_some());
        assert!(p.raw_curve(crate::curve::CACHE_LATENCY).unwrap().points.len() > 40);
        let s = serde_json::to_string(&p).unwrap();
        assert_eq!(serde_json::from_str::<Profile>(&s).unwrap(), p);
    }

    #[test]
    fn variants_scale_latency_and_clock() {
        let (a, b) = (full_profile(0), full_profile(5));
        let la = a.memory.unwrap().latency_ns;
        let lb = b.memory.unwrap().latency_ns;
        assert!((lb / la - 1.5).abs() < 1e-9);
        let ca = a.clock.unwrap().core_mhz;
        let cb = b.clock.unwrap().core_mhz;
        assert!((ca / cb - 1.5).abs() < 1e-9);
    }

    #[test]
    fn cache_curve_rises_through_the_levels() {
        let c = full_profile(0);
        let c = c.raw_curve(crate::curve::CACHE_LATENCY).unwrap();
        let first = c.points.first().unwrap().y;
        let last = c.points.last().unwrap().y;
        assert!(first < 3.0 && last > 140.0, "{first} {last}");
    }
}
