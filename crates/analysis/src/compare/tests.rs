//! Tests of the comparison logic: pairing of levels and sections, ratios,
//! verdicts and notes, on the synthetic sample profiles.

use super::*;
use hwcal_model::sample::full_profile;
use hwcal_model::*;

fn find<'a>(c: &'a Comparison, section: &str, figure: &str, unit: FigureUnit) -> &'a Row {
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
        find(&c, "clock", "core clock", FigureUnit::Mhz).ratio(),
        1.0 / 1.5
    ));
    assert!(close(
        find(&c, "caches", "L1 latency", FigureUnit::Ns).ratio(),
        1.5
    ));
    assert!(close(
        find(&c, "caches", "L3 miss latency", FigureUnit::Ns).ratio(),
        1.5
    ));
    assert!(close(
        find(&c, "caches", "L2 size", FigureUnit::Bytes).ratio(),
        1.0
    ));
    assert!(close(
        find(&c, "memory", "memory latency", FigureUnit::Ns).ratio(),
        1.5
    ));
    // Cycles scale by latency × clock: 1.5 / 1.5 = 1.
    assert!(close(
        find(&c, "memory", "memory latency", FigureUnit::Cycles).ratio(),
        1.0
    ));
    assert!(close(
        find(&c, "tlbs", "L2 TLB (4 KiB pages) miss latency", FigureUnit::Ns).ratio(),
        1.5
    ));
    assert!(close(
        find(&c, "tlbs", "L1 TLB (2 MiB pages) entries", FigureUnit::Count).ratio(),
        1.0
    ));
    assert!(close(
        find(&c, "bandwidth", "read", FigureUnit::BytesPerSec).ratio(),
        1.0 / 1.5
    ));
    assert!(close(
        find(&c, "bandwidth", "write, 3 thread(s)", FigureUnit::BytesPerSec).ratio(),
        1.0 / 1.5
    ));
    assert!(close(
        find(&c, "ctx", "64 KiB: 8 procs (median)", FigureUnit::Us).ratio(),
        1.5
    ));
    assert!(close(find(&c, "io", "IOPS", FigureUnit::Iops).ratio(), 1.0 / 1.5));
    assert!(close(find(&c, "io", "latency p99", FigureUnit::Us).ratio(), 1.5));
    // The synthetic profiles mark L3 and the 32-process rings noisy; every
    // other figure carries its interval, so no note says one lacks it.
    assert_eq!(c.notes.len(), 2, "{:?}", c.notes);
    assert!(c.notes[0].starts_with("caches: some of A and B's figures are marked noisy"));
    assert!(c.notes[1].starts_with("context switch: some of A and B's"));
    let tlb = find(&c, "tlbs", "L2 TLB (4 KiB pages) miss latency", FigureUnit::Ns);
    assert_eq!(tlb.b_is_better(0.05), Some(false), "past the threshold...");
    assert_eq!(tlb.mark(0.05), Some(Mark::Worse), "... and the intervals apart");
    let lacking: Vec<String> = c
        .rows
        .iter()
        .filter(|r| r.ratio().is_some() && !r.noisy && r.better != hwcal_model::Direction::Neither)
        .filter(|r| r.overlap().is_none())
        .map(|r| format!("{} {} {:?}", r.section, r.figure, r.unit))
        .collect();
    assert!(
        lacking.is_empty(),
        "every judged row has its intervals: {lacking:?}"
    );
    let mut bare = c.clone();
    let row = bare
        .rows
        .iter_mut()
        .find(|r| r.figure == "L2 TLB (4 KiB pages) miss latency")
        .unwrap();
    row.a_ci = None;
    assert_eq!(row.mark(0.05), None, "a side without an interval: no verdict");
    // Direction: slower latency and lower clock are worse for B.
    assert_eq!(
        find(&c, "memory", "memory latency", FigureUnit::Ns).b_is_better(0.05),
        Some(false)
    );
    assert_eq!(
        find(&c, "clock", "core clock", FigureUnit::Mhz).b_is_better(0.05),
        Some(false)
    );
    assert_eq!(find(&c, "clock", "TSC", FigureUnit::Mhz).b_is_better(0.05), None);
    assert_eq!(
        find(&c, "caches", "L2 size", FigureUnit::Bytes).b_is_better(0.05),
        None
    );
    // And the reverse comparison says B is better.
    let r = compare(&full_profile(5), &full_profile(0));
    assert_eq!(
        find(&r, "memory", "memory latency", FigureUnit::Ns).b_is_better(0.05),
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
    let l3 = find(&c, "caches", "L3 (only A) latency", FigureUnit::Ns);
    assert!(l3.a.is_some() && l3.b.is_none() && l3.ratio().is_none());
    assert!(c
        .notes
        .iter()
        .any(|n| n.contains("memory") && n.contains("only A")));
    assert!(c.notes.iter().any(|n| n.contains("io")));
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
    let l3 = find(&c, "caches", "L3 (B: L4) latency", FigureUnit::Ns);
    assert!((l3.ratio().unwrap() - 41.0 / 40.0).abs() < 1e-9);
    assert_eq!(l3.mark(VERDICT_THRESHOLD), None);
    let spurious = find(&c, "caches", "L3 (only B) latency", FigureUnit::Ns);
    assert!(spurious.a.is_none() && spurious.ratio().is_none() && spurious.mark(0.05).is_none());
    assert!(!c.rows.iter().any(|r| r.figure == "L3 latency"));
    assert!(
        c.notes
            .iter()
            .any(|n| n.starts_with("caches: no level of A matches B's L3 (4 MiB)")),
        "{:?}",
        c.notes
    );
    // L2's steps go to the artefact in B and to the real L3 in A: steps
    // to different places, not compared; L3's (to memory on both) are.
    let with_steps = |v: &mut Vec<CacheLevel>| {
        for l in v.iter_mut() {
            l.miss_latency_ns = Some(10.0);
            l.replace_time_ns = Some(8.0);
        }
    };
    with_steps(pa.caches.as_mut().unwrap());
    with_steps(pb.caches.as_mut().unwrap());
    let c = compare(&pa, &pb);
    let l2 = find(&c, "caches", "L2 replace time", FigureUnit::Ns);
    assert!(l2.unlike && l2.ratio().is_none() && l2.mark(0.05).is_none());
    assert!(find(&c, "caches", "L2 miss latency", FigureUnit::Ns).unlike);
    assert!(find(&c, "caches", "L2 latency", FigureUnit::Ns).ratio().is_some());
    assert!(!find(&c, "caches", "L3 (B: L4) replace time", FigureUnit::Ns).unlike);
    assert!(c
        .notes
        .iter()
        .any(|n| n.contains("the level after L2 is not the same cache")));
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
    let one = find(&c, "bandwidth", "read, 1 thread(s)", FigureUnit::BytesPerSec);
    assert_eq!(one.ratio(), Some(1.0));
    for r in c
        .rows
        .iter()
        .filter(|r| r.figure.starts_with("read, ") && !r.figure.starts_with("read, 1 "))
    {
        assert!(r.b.is_none() && r.ratio().is_none(), "{r:?}");
    }
    // Equal thread counts: the headline figures are compared as before.
    b.bandwidth.as_mut().unwrap().threads = a.bandwidth.as_ref().unwrap().threads;
    a.bandwidth.as_mut().unwrap().scaling.clear();
    let c = compare(&a, &b);
    assert_eq!(
        find(&c, "bandwidth", "read", FigureUnit::BytesPerSec).ratio(),
        Some(5.0)
    );
}

#[test]
fn a_noisy_figure_gets_no_verdict() {
    let a = full_profile(0);
    let mut b = full_profile(5); // latencies × 1.5: B worse
    b.memory.as_mut().unwrap().verdict = Verdict::Noisy;
    let c = compare(&a, &b);
    let mem = find(&c, "memory", "memory latency", FigureUnit::Ns);
    assert!(mem.noisy);
    assert!((mem.ratio().unwrap() - 1.5).abs() < 1e-9, "the ratio still shows");
    assert_eq!(mem.b_is_better(VERDICT_THRESHOLD), None);
    assert_eq!(mem.mark(VERDICT_THRESHOLD), Some(Mark::Noisy));
    // Figures of other sections keep their verdict.
    let l1 = find(&c, "caches", "L1 latency", FigureUnit::Ns);
    assert_eq!(l1.mark(VERDICT_THRESHOLD), Some(Mark::Worse));
    // Noisy on A's side alone is enough.
    let c = compare(&b, &a);
    assert_eq!(
        find(&c, "memory", "memory latency", FigureUnit::Ns).mark(0.05),
        Some(Mark::Noisy)
    );
}

#[test]
fn zero_or_missing_a_gives_no_ratio() {
    let r = Row {
        a: Some(0.0),
        b: Some(1.0),
        ..Row::new("x", "y", FigureUnit::Ns, Direction::Lower)
    };
    assert_eq!(r.ratio(), None);
}

#[test]
fn overlapping_intervals_mean_no_significant_change_whatever_the_ratio() {
    let mut a = full_profile(0);
    let mut b = full_profile(0);
    // B's memory latency 8% higher: past the 5% threshold, but both
    // intervals are wide and overlap.
    let (ma, mb) = (
        a.memory.as_ref().unwrap().latency_ns,
        b.memory.as_ref().unwrap().latency_ns,
    );
    a.memory.as_mut().unwrap().latency_ns_ci95 = Some([ma * 0.9, ma * 1.1]);
    let m = b.memory.as_mut().unwrap();
    m.latency_ns = mb * 1.08;
    m.latency_ns_ci95 = Some([mb * 0.98, mb * 1.2]);
    let c = compare(&a, &b);
    let mem = find(&c, "memory", "memory latency", FigureUnit::Ns);
    assert_eq!(mem.overlap(), Some(true));
    assert_eq!(mem.mark(VERDICT_THRESHOLD), Some(Mark::Same));
    // Its uncertainty: the two relative half-widths in quadrature.
    let pm = mem.ratio_pm().unwrap();
    assert!(
        (pm - 1.08 * (0.1f64.powi(2) + (0.11 / 1.08f64).powi(2)).sqrt()).abs() < 1e-9,
        "{pm}"
    );
    // Narrow intervals apart: the 5% threshold decides as before.
    let m = b.memory.as_mut().unwrap();
    m.latency_ns_ci95 = Some([mb * 1.07, mb * 1.09]);
    a.memory.as_mut().unwrap().latency_ns_ci95 = Some([ma * 0.99, ma * 1.01]);
    let c = compare(&a, &b);
    let mem = find(&c, "memory", "memory latency", FigureUnit::Ns);
    assert_eq!(mem.overlap(), Some(false));
    assert_eq!(mem.mark(VERDICT_THRESHOLD), Some(Mark::Worse));
    // Without an interval on one side: no significance claim either way.
    a.memory.as_mut().unwrap().latency_ns_ci95 = None;
    let c = compare(&a, &b);
    let mem = find(&c, "memory", "memory latency", FigureUnit::Ns);
    assert_eq!((mem.overlap(), mem.ratio_pm()), (None, None));
}

#[test]
fn two_runs_inside_their_machines_usual_range_are_no_change() {
    // Five past runs whose memory latency spans 200-215 ns; A and B
    // differ by 5% with intervals apart, inside that range.
    let history: Vec<Profile> = [200.0, 204.0, 207.0, 211.0, 215.0]
        .iter()
        .map(|ns| {
            let mut p = full_profile(0);
            p.memory.as_mut().unwrap().latency_ns = *ns;
            p
        })
        .collect();
    let (mut a, mut b) = (full_profile(0), full_profile(0));
    a.memory.as_mut().unwrap().latency_ns = 202.0;
    a.memory.as_mut().unwrap().latency_ns_ci95 = Some([201.0, 203.0]);
    b.memory.as_mut().unwrap().latency_ns = 213.0;
    b.memory.as_mut().unwrap().latency_ns_ci95 = Some([212.0, 214.0]);
    let mut c = compare(&a, &b);
    let row = |c: &Comparison| find(c, "memory", "memory latency", FigureUnit::Ns).clone();
    assert_eq!(
        row(&c).mark(0.05),
        Some(Mark::Worse),
        "one run each: intervals apart, 5.4% slower"
    );
    with_history(&mut c, &history);
    assert_eq!(
        row(&c).mark(0.05),
        Some(Mark::Same),
        "within what this machine does run to run"
    );
    assert!(c.notes.iter().any(|n| n.starts_with("history:")));
    // Far outside the usual range: judged by the intervals again.
    b.memory.as_mut().unwrap().latency_ns = 320.0;
    b.memory.as_mut().unwrap().latency_ns_ci95 = Some([318.0, 322.0]);
    let mut c = compare(&a, &b);
    with_history(&mut c, &history);
    assert_eq!(row(&c).mark(0.05), Some(Mark::Worse));
    // Too little history says nothing.
    let mut c = compare(&a, &b);
    with_history(&mut c, &history[..2]);
    assert!(row(&c).usual.is_none());
    // The outlier does not widen the range it falls outside of.
    let r = usual_range(&[10.0, 10.0, 10.0, 10.0, 30.0]);
    assert!(r[0] <= 9.5 && r[1] >= 10.5 && r[1] < 30.0, "{r:?}");
}

#[test]
fn a_figure_with_two_usual_values_has_both_in_its_usual_range() {
    // c2c on a 2-vCPU guest, eight runs: the vCPUs on one core complex
    // (about 25 ns) or on two (about 33 ns). Both are usual; a median ±
    // MAD band would take the commoner mode only.
    let runs = [24.3, 24.8, 26.7, 31.8, 32.0, 32.9, 33.6, 33.7];
    let [lo, hi] = usual_range(&runs);
    assert!(lo <= 24.3 && hi >= 33.7, "{lo} {hi}");
    // A run far from both is still outside.
    assert!(hi < 80.0 && lo > 0.0, "{lo} {hi}");
}

#[test]
fn dram_latency_without_walks_is_its_own_row_in_its_own_verdict() {
    let with = |p: &mut Profile, ns: f64, v: Verdict| {
        let m = p.memory.as_mut().unwrap();
        m.latency_no_walks_ns = Some(ns);
        m.latency_no_walks_ns_ci95 = Some([ns, ns * 1.01]);
        m.latency_no_walks_verdict = Some(v);
    };
    let (mut a, mut b) = (full_profile(0), full_profile(0));
    // Only one side measured it: no row.
    with(&mut a, 140.0, Verdict::Ok);
    let c = compare(&a, &b);
    assert!(!c.rows.iter().any(|r| r.figure == "memory latency, no page walks"));
    // Both: a row, judged on the walk-free figures' own verdicts, while the
    // walking headline's row keeps its own.
    with(&mut b, 210.0, Verdict::Ok);
    b.memory.as_mut().unwrap().verdict = Verdict::Noisy;
    let c = compare(&a, &b);
    let row = find(&c, "memory", "memory latency, no page walks", FigureUnit::Ns);
    assert!(!row.noisy);
    assert!((row.ratio().unwrap() - 1.5).abs() < 1e-9);
    assert!(find(&c, "memory", "memory latency", FigureUnit::Ns).noisy);
    with(&mut b, 210.0, Verdict::Noisy);
    let c = compare(&a, &b);
    assert!(find(&c, "memory", "memory latency, no page walks", FigureUnit::Ns).noisy);
}

#[test]
fn only_runs_that_were_themselves_ok_say_what_is_usual() {
    let with_mem = |ns: f64, v: Verdict| {
        let mut p = full_profile(0);
        let m = p.memory.as_mut().unwrap();
        m.latency_ns = ns;
        m.latency_ns_ci95 = Some([ns * 0.999, ns * 1.001]);
        m.verdict = v;
        p
    };
    let (a, b) = (with_mem(150.0, Verdict::Ok), with_mem(165.0, Verdict::Ok));
    let mark = |history: &[Profile]| {
        let c = judged(std::slice::from_ref(&a), std::slice::from_ref(&b), history);
        find(&c, "memory", "memory latency", FigureUnit::Ns).mark(VERDICT_THRESHOLD)
    };
    // A busy host's noisy runs (140 to 610 ns) say nothing of what is usual.
    let noisy: Vec<Profile> = [140.0, 300.0, 450.0, 610.0]
        .iter()
        .map(|&ns| with_mem(ns, Verdict::Noisy))
        .collect();
    assert_eq!(mark(&noisy), Some(Mark::Worse));
    let ok: Vec<Profile> = [140.0, 150.0, 160.0, 170.0]
        .iter()
        .map(|&ns| with_mem(ns, Verdict::Ok))
        .collect();
    assert_eq!(mark(&ok), Some(Mark::Same));
}
