//! Regression fixtures: raw curves recorded by `hwcal cache` / `hwcal tlb`
//! on the reference machine (Sapphire Rapids KVM guest, 2 vCPUs: L1d 48 KiB,
//! L2 2 MiB, 64-byte lines, 96-entry L1 DTLB, 2048-entry STLB), with the
//! levels the analysis must find in them.

mod support;
use hwcal_analysis::{cache, tlb};

use support::load;

fn within(got: f64, want: f64, tol: f64) -> bool {
    (got / want - 1.0).abs() <= tol
}

#[test]
fn quiet_cache_curves() {
    check_quiet_cache("cache-quiet.json");
    check_quiet_cache("cache-quiet-2.json");
}

fn check_quiet_cache(name: &str) {
    let a = cache::analyze(&load(name)).unwrap();
    assert_eq!(a.levels.len(), 2, "{:?}", a.levels);
    let (l1, l2) = (&a.levels[0], &a.levels[1]);
    assert!(
        within(l1.size_bytes as f64, 49152.0, 0.125),
        "L1 {}",
        l1.size_bytes
    );
    assert!(
        within(l2.size_bytes as f64, 2097152.0, 0.125),
        "L2 {}",
        l2.size_bytes
    );
    assert!((l1.latency_cycles.unwrap() - 5.0).abs() <= 0.5);
    assert!((l2.latency_cycles.unwrap() - 16.0).abs() <= 1.5);
    // Quiet runs: L1 and L2 within ±0.05 of a whole number of cycles (a
    // quarter of cache::WHOLE_CYCLE_TOLERANCE), so the clock cross-check
    // stays silent.
    for l in [l1, l2] {
        let c = l.latency_cycles.unwrap();
        let off = (c - c.round()).abs();
        assert!(off <= 0.05, "{name}: L{} {c} cycles", l.level);
        assert!(4.0 * off <= cache::WHOLE_CYCLE_TOLERANCE);
    }
    assert!(
        !a.notes.iter().any(|n| n.code == "cache.cycles-not-whole"),
        "{:?}",
        a.notes
    );
    assert_eq!(l1.line_bytes, Some(64));
    assert_eq!(l2.line_bytes, Some(64));
    assert_eq!(l1.nominal_size_bytes, Some(49152));
    // Replace time of L1 = L2 - L1 plateau; the idle-gap miss latency is close.
    let r = l1.replace_time_ns.unwrap();
    let m = l1.miss_latency_ns.unwrap();
    assert!(r > 2.0 && r < 8.0 && m > 2.0 && m < 8.0, "{r} {m}");
    let mem = a.memory.unwrap();
    assert!(
        mem.latency_ns > 120.0 && mem.latency_ns < 160.0,
        "{}",
        mem.latency_ns
    );
    assert!(mem.huge_pages);
    assert!(mem.cache_reach_bytes.unwrap() as f64 >= 0.9 * l2.size_bytes as f64);
    let k16 = mem.mlp.iter().find(|p| p.chains == 16).unwrap();
    assert!(k16.speedup > 4.0);
    // The 105 MiB nominal L3 has no plateau of its own on this VM.
    assert!(
        a.notes
            .iter()
            .any(|n| n.code == "cache.l3-no-plateau" && n.text.starts_with("cache: L3")),
        "{:?}",
        a.notes
    );
}

#[test]
fn cache_curve_under_interference() {
    // Recorded while the other vCPU was busy: L1 and memory are still right.
    let a = cache::analyze(&load("cache-interference.json")).unwrap();
    assert!(a.levels.len() >= 2);
    let l1 = &a.levels[0];
    assert!(
        within(l1.size_bytes as f64, 49152.0, 0.125),
        "L1 {}",
        l1.size_bytes
    );
    assert!((l1.latency_cycles.unwrap() - 5.0).abs() <= 0.5);
    let mem = a.memory.unwrap();
    assert!(
        mem.latency_ns > 120.0 && mem.latency_ns < 170.0,
        "{}",
        mem.latency_ns
    );
}

fn check_tlb(name: &str) {
    let a = tlb::analyze(&load(name)).unwrap();
    let small: Vec<_> = a.levels.iter().filter(|l| l.page_bytes == 4096).collect();
    assert!(small.len() >= 2, "{name}: {:?}", a.levels);
    assert!(
        (small[0].entries as f64 - 96.0).abs() <= 8.0,
        "{name}: DTLB {}",
        small[0].entries
    );
    assert!((small[0].miss_latency_cycles.unwrap() - 7.0).abs() < 1.5);
    assert!(
        small.iter().any(|l| within(l.entries as f64, 2048.0, 0.125)),
        "{name}: no STLB level near 2048: {small:?}"
    );
    let huge: Vec<_> = a.levels.iter().filter(|l| l.page_bytes == 2 << 20).collect();
    assert_eq!(huge.len(), 1, "{name}: {huge:?}");
    // 32 entries.
    assert!(
        within(huge[0].entries as f64, 32.0, 0.125),
        "{name}: 2M DTLB {}",
        huge[0].entries
    );
    assert!(
        huge[0].entries_low.is_some_and(|l| (32..=36).contains(&l)),
        "{name}: 2M DTLB step starts at {:?}",
        huge[0].entries_low
    );
    // The PS3 note's comparison: past the STLB, 4 KiB pages cost far more.
    let last = a.comparison.last().unwrap();
    assert!(last.penalty_ns > 5.0 && last.small_pages_ns > 2.0 * last.huge_pages_ns);
}

#[test]
fn recorded_tlb_curves() {
    check_tlb("tlb-1.json");
    check_tlb("tlb-2.json");
    check_tlb("tlb-3.json");
}

/// A 16-vCPU Emerald Rapids guest (L2 2 MiB, 16 cycles) whose core clock
/// moved between the sweep (~2696 MHz) and the idle-gap chase (~2898 MHz):
/// L2 reads 5.93 ns on the sweep's plateau and 5.59 ns on the gap chase,
/// 16.0 and 16.2 cycles. The two readings agree in cycles, each sample
/// converted with the clock measured alongside it, so the ns gap is no
/// contradiction and L2 is not marked noisy for it.
#[test]
fn a_clock_that_moved_between_two_readings_of_a_level_is_no_contradiction() {
    let a = cache::analyze(&load("emr-live-gap-clock.json")).unwrap();
    let l2 = &a.levels[1];
    assert!(
        within(l2.size_bytes as f64, 2097152.0, 0.125),
        "L2 {}",
        l2.size_bytes
    );
    assert!((l2.latency_cycles.unwrap() - 16.0).abs() <= 0.5, "{l2:?}");
    let codes: Vec<&str> = a.notes.iter().map(|n| n.code.as_str()).collect();
    assert!(codes.contains(&"cache.l2-latency-clock"), "{codes:?}");
    assert!(!codes.contains(&"cache.l2-latency-disagree"), "{codes:?}");
    assert_eq!(l2.verdict, hwcal_model::Verdict::Ok, "{codes:?}");
}
