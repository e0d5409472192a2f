//! Tests of the terminal summary on the synthetic sample profiles.

use super::*;

/// An Arm machine (64 KiB pages, emulated) shows its core and no x86
/// field; the x86 sample keeps its CPUID line and invariant TSC.
#[test]
fn arm_machines_show_no_x86_fields() {
    let mut p = hwcal_model::sample::full_profile(0);
    let x86 = summary(&p);
    assert!(
        x86.contains("family 6 model") && x86.contains("invariant TSC yes"),
        "{x86}"
    );
    assert!(x86.contains("TSC  ") && !x86.contains("pages      base"), "{x86}");
    let m = p.machine.as_mut().unwrap();
    m.arch = "aarch64".into();
    m.cpu_vendor = "Arm".into();
    m.cpu_model_name = "Neoverse N1".into();
    (m.cpu_family, m.cpu_model, m.cpu_stepping) = (None, None, None);
    m.midr = Some(hwcal_model::Midr::from_raw(0x413f_d0c1));
    m.invariant_tsc = false;
    m.page_bytes = Some(64 << 10);
    m.hugepage_sizes = vec![2 << 20, 512 << 20, 16 << 30];
    m.emulation = Some("user-mode emulation".into());
    let h = p.harness.as_mut().unwrap();
    (h.timer, h.tsc_mhz, h.counter_mhz) = ("cntvct".into(), None, Some(25.0));
    p.clock.as_mut().unwrap().tsc_mhz = None;
    let arm = summary(&p);
    assert!(
        arm.contains("cpu        Neoverse N1 (Arm, part 0xd0c r3p1)"),
        "{arm}"
    );
    assert!(
        arm.contains("pages      base 64 KiB, huge 2 MiB, 512 MiB, 16 GiB"),
        "{arm}"
    );
    assert!(arm.contains("emulation  user-mode emulation"), "{arm}");
    assert!(arm.contains("counter 25.0 MHz"), "{arm}");
    assert!(!arm.contains("TSC") && !arm.contains("family"), "{arm}");
    let html = crate::html::report(&p, "arm");
    assert!(html.contains("Neoverse N1") && html.contains("r3p1"));
    assert!(!html.contains("invariant TSC") && !html.contains(">TSC<"));
}

#[test]
fn measured_sizes_keep_three_figures() {
    assert_eq!(measured_bytes(39107), "38.2 KiB");
    assert_eq!(measured_bytes(2_128_609), "2.03 MiB");
    assert_eq!(measured_bytes(49152), "48 KiB");
    // One figure, one value: the same text wherever a size is printed.
    assert_eq!(human_bytes(490_373), measured_bytes(490_373));
    assert_eq!(human_bytes(490_373), "479 KiB");
    assert_eq!(measured_bytes(110_100_480), "105 MiB");
    assert_eq!(measured_bytes(640), "640 B");
}

#[test]
fn sizes() {
    assert_eq!(human_bytes(48 * 1024), "48 KiB");
    assert_eq!(human_bytes(1280 * 1024), "1.25 MiB");
    assert_eq!(human_bytes(105 << 20), "105 MiB");
    assert_eq!(human_bytes(100), "100 B");
}

#[test]
fn figures_not_recorded_print_as_dashes_not_nan() {
    // The synthetic profiles leave optional figures (per-thread TSC
    // ticks among them) unset; the summary must not print NaN for them.
    for v in 0..3 {
        let t = summary(&hwcal_model::sample::full_profile(v));
        assert!(!t.contains("NaN"), "variant {v}:\n{t}");
    }
}

#[test]
fn mem_and_bandwidth_sections() {
    let mut p = Profile::new("hwcal mem", 0);
    p.mem = Some(MemResult {
        access_pattern: "random".into(),
        op: "chase".into(),
        threads: 1,
        size_bytes: 1 << 30,
        page_size_bytes: 2 << 20,
        use_hugepages: true,
        huge_fraction: 1.0,
        ns_per_op: 150.0,
        clk_per_op: 390.0,
        tsc_per_op: Some(300.0),
        tsc_mhz: Some(2000.0),
        numa_matrix: vec![NumaLatency {
            cpu_node: 0,
            cpu: 1,
            mem_node: 0,
            ns_per_op: 150.0,
            clk_per_op: Some(390.0),
            ..Default::default()
        }],
        ..Default::default()
    });
    p.bandwidth = Some(Bandwidth {
        threads: 2,
        size_bytes: 256 << 20,
        read_bytes_per_sec: Some(20e9),
        scaling: vec![
            BandwidthPoint {
                threads: 1,
                op: "read".into(),
                bytes_per_sec: 11e9,
                ..Default::default()
            },
            BandwidthPoint {
                threads: 2,
                op: "read".into(),
                bytes_per_sec: 20e9,
                ..Default::default()
            },
        ],
        ..Default::default()
    });
    let s = summary(&p);
    // The summary says it in words; micbench's keys are only in its own
    // block (`hwcal mem --micbench`).
    for key in ["latency", "kernel", "work", "pages"] {
        assert!(s.contains(&format!("\n  {key} ")), "{key}\n{s}");
    }
    let keys = micbench(p.mem.as_ref().unwrap());
    for key in [
        "access_pattern",
        "multiplicity",
        "clk_per_op",
        "tsc_per_op",
        "ns_per_op",
        "use_hugepages",
    ] {
        assert!(!s.contains(key), "{key} in the summary");
        assert!(keys.contains(key), "{key}");
    }
    assert!(s.contains("2 MiB pages") && keys.contains("micbench's clk_per_op"));
    assert!(s.contains("150.0 (390)") && s.contains("11.00") && s.contains("20.00 GB/s"));
}

#[test]
fn intervals_are_printed_where_the_profile_states_them() {
    let p = hwcal_model::sample::full_profile(0);
    let s = summary(&p);
    // The line wraps at 100 columns: read it with its continuation.
    let at = s.find("95% intervals").unwrap_or_else(|| panic!("{s}"));
    let line = s[at..].split("\n  ").take(2).collect::<Vec<_>>().join(" ");
    assert!(
        line.contains("L1 ") && line.contains("L3 ") && line.contains("memory "),
        "{line}"
    );
    assert!(s.contains("MHz   (95% "), "{s}");
    // An older profile without them prints as it did.
    let mut old = p.clone();
    for l in old.caches.as_mut().unwrap() {
        l.latency_ns_ci95 = None;
        l.size_bytes_ci95 = None;
    }
    old.memory.as_mut().unwrap().latency_ns_ci95 = None;
    old.clock.as_mut().unwrap().core_mhz_ci95 = None;
    let t = summary(&old);
    assert!(!t.contains("95%"), "{t}");
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
