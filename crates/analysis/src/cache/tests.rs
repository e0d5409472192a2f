use super::*;
use hwcal_model::{NominalCache, RawPoint};

fn pt(x: f64, ns: f64, mhz: f64) -> RawPoint {
    RawPoint {
        x,
        y: ns,
        samples: vec![ns, ns * 1.01],
        mhz: vec![mhz, mhz],
    }
}

fn machine() -> MachineInfo {
    let c = |level, size| NominalCache {
        level,
        cache_type: if level == 1 { "Data" } else { "Unified" }.into(),
        size_bytes: size,
        line_bytes: Some(64),
        shared_cpus: if level == 3 { vec![0, 1] } else { vec![1] },
        source: "sysfs".into(),
        ..Default::default()
    };
    MachineInfo {
        nominal_caches: vec![c(1, 48 << 10), c(2, 2 << 20), c(3, 105 << 20)],
        ..Default::default()
    }
}

/// A curve shaped like a Sapphire Rapids guest's (`tests/data/cache-quiet.json`):
/// L1 48 KiB at 2 ns, L2 2 MiB at 6.4 ns, a ramp (the VM's slice of L3) to
/// 145 ns memory.
fn vm_curve() -> RawCurve {
    let y = |x: f64| {
        if x <= 49152.0 {
            2.0
        } else if x <= 2097152.0 {
            6.4
        } else {
            let f = ((x / 2097152.0).log2() / 3.0).min(1.0);
            6.4 + f * (145.0 - 6.4)
        }
    };
    let mut xs = Vec::new();
    let mut x: f64 = 4096.0;
    while x <= 420.0 * 1048576.0 {
        xs.push(x);
        x *= 2f64.powf(0.25);
    }
    // The plan refines each edge (16 points per octave past it), so the
    // sweep pins where each level began to miss.
    for edge in [49152.0, 2097152.0] {
        xs.extend((1..4).map(|k| edge * 2f64.powf(f64::from(k) / 16.0)));
    }
    xs.sort_by(f64::total_cmp);
    let points = xs.into_iter().map(|x| pt(x, y(x), 2500.0)).collect();
    RawCurve {
        id: LATENCY.into(),
        points,
        ..Default::default()
    }
}

/// The [`vm_curve`] with L1 and L2 ending at `l1` and `l2` bytes.
fn curve_with_levels(l1: f64, l2: f64) -> RawCurve {
    let mut c = vm_curve();
    for p in &mut c.points {
        let y = if p.x <= l1 {
            2.0
        } else if p.x <= l2 {
            6.4
        } else if p.x <= 2097152.0 {
            // Past the shortened L2, latency climbs towards the ramp.
            30.0
        } else {
            p.y
        };
        p.y = y;
        p.samples = vec![y, y * 1.01];
    }
    c
}

#[test]
fn private_level_short_of_nominal_is_noisy() {
    let none = [(None, None), (None, None)];
    let quiet = analyze_curves(&vm_curve(), None, none, None, Some(1.0), &machine());
    assert!(
        quiet.levels.iter().all(|l| l.verdict == Verdict::Ok),
        "{:?}",
        quiet.levels
    );
    // L1 ends at 36 KiB, L2 at 1.5 MiB, on huge pages: a sibling held
    // part of both private caches; both are flagged, with the reason.
    let c = curve_with_levels(36.0 * 1024.0, 1.5 * 1048576.0);
    let a = analyze_curves(&c, None, none, None, Some(1.0), &machine());
    // (The 30 ns dwell past the short L2 is stepped into and holds for
    // half an octave: the guided search takes it for the nominal L3.)
    assert!(a.levels.len() >= 2, "{:?}", a.levels);
    assert!(
        a.levels[..2].iter().all(|l| l.verdict == Verdict::Noisy),
        "{:?}",
        a.levels
    );
    assert!(
        a.notes
            .iter()
            .any(|n| n.code == "cache.l1-short-private" && n.text.starts_with("cache: L1: effective size")),
        "{:?}",
        a.notes
    );
    // On 4 KiB pages a short L2 may be page colouring, but with no
    // colour fit to say so the shortfall is not confirmed: judged too.
    let a = analyze_curves(&c, None, none, None, Some(0.0), &machine());
    assert_eq!(a.levels[0].verdict, Verdict::Noisy);
    assert_eq!(a.levels[1].verdict, Verdict::Noisy);
}

#[test]
fn whole_cycles_cross_check_the_clock() {
    // The `vm_curve` (2 ns at 2.5 GHz = 5 cycles): no note.
    let none = [(None, None), (None, None)];
    let a = analyze_curves(&vm_curve(), None, none, None, Some(1.0), &machine());
    assert!(
        !a.notes.iter().any(|n| n.code == "cache.cycles-not-whole"),
        "{:?}",
        a.notes
    );
    // The same loads converted with a clock that read 8% low: L1 4.6 cycles.
    let mut c = vm_curve();
    for p in &mut c.points {
        p.mhz = vec![2300.0, 2300.0];
    }
    let a = analyze_curves(&c, None, none, None, Some(1.0), &machine());
    let n: Vec<&str> = a
        .notes
        .iter()
        .filter(|n| n.code == "cache.cycles-not-whole")
        .map(|n| n.text.as_str())
        .collect();
    assert_eq!(n.len(), 1, "{:?}", a.notes);
    assert!(n[0].contains("4.60 cycles") && n[0].contains("8% below"), "{n:?}");
    assert_eq!(a.levels[0].verdict, Verdict::Noisy);
    // No cycle figure, or one within the tolerance: nothing to say.
    let lvl = |cy: Option<f64>| CacheLevel {
        latency_cycles: cy,
        ..Default::default()
    };
    assert!(whole_cycle_note(&[lvl(None)]).is_none());
    assert!(whole_cycle_note(&[lvl(Some(4.85))]).is_none());
    assert!(whole_cycle_note(&[lvl(Some(5.3))])
        .unwrap()
        .text
        .contains("6% above"));
    assert!(whole_cycle_note(&[]).is_none());
}

#[test]
fn levels_memory_notes_and_miss_latency() {
    let c = vm_curve();
    let gap = RawCurve {
        id: GAP.into(),
        // Gap costs 100 cycles = 40 ns at 2.5 GHz.
        points: vec![
            pt(4096.0, 42.0, 2500.0),
            pt(16384.0, 42.0, 2500.0),
            pt(524288.0, 46.0, 2500.0),
            pt(1e8, 180.0, 2500.0),
        ],
        ..Default::default()
    };
    let a = analyze_curves(
        &c,
        Some(&gap),
        [(None, None), (None, None)],
        None,
        Some(1.0),
        &machine(),
    );
    assert_eq!(a.levels.len(), 2, "{:?}", a.levels);
    let l1 = &a.levels[0];
    assert!(
        (l1.size_bytes as f64 / 49152.0 - 1.0).abs() < 0.125,
        "{}",
        l1.size_bytes
    );
    assert!((l1.latency_cycles.unwrap() - 5.0).abs() < 0.1);
    assert!((l1.replace_time_ns.unwrap() - 4.4).abs() < 0.1);
    assert!(
        (l1.miss_latency_ns.unwrap() - 4.0).abs() < 0.1,
        "{:?}",
        l1.miss_latency_ns
    );
    let l2 = &a.levels[1];
    assert!(
        (l2.size_bytes as f64 / 2097152.0 - 1.0).abs() < 0.125,
        "{}",
        l2.size_bytes
    );
    assert_eq!(l2.nominal_size_bytes, Some(2 << 20));
    let m = a.memory.as_ref().unwrap();
    assert!((m.latency_ns - 145.0).abs() < 1.0);
    assert!(m.huge_pages);
    assert!(
        a.notes
            .iter()
            .any(|n| n.code == "cache.l3-no-plateau" && n.text.contains("no plateau")),
        "{:?}",
        a.notes
    );
}

#[test]
fn busy_sweeps_are_flagged() {
    let c = vm_curve();
    assert!(busy_note(&c.points).is_none());
    // Memory contention: mid sizes far slower than the largest ones.
    let mut b = c.clone();
    for q in b.points.iter_mut().filter(|q| q.x > 3e6 && q.x < 5e7) {
        q.y = 250.0;
        q.samples = vec![250.0, 251.0];
    }
    assert!(busy_note(&b.points).is_some());
    let a = analyze_curves(&b, None, [(None, None), (None, None)], None, None, &machine());
    assert!(a.levels.iter().all(|l| l.verdict == Verdict::Noisy));
    assert!(a
        .notes
        .iter()
        .any(|n| n.code == "cache.busy" && n.text.contains("busy")));
    // Points whose samples never settled.
    let mut u = c;
    for q in u.points.iter_mut().step_by(2) {
        q.samples = vec![q.y, q.y * 1.05, q.y * 1.1];
    }
    assert!(busy_note(&u.points).is_some());
}

#[test]
fn busy_neighbours_flag_the_run() {
    let mut p = Profile {
        machine: Some(machine()),
        raw: vec![vm_curve()],
        ..Default::default()
    };
    let quiet = analyze(&p).unwrap();
    assert!(quiet.levels.iter().all(|l| l.verdict == Verdict::Ok));
    for busy in [0.1, 0.6] {
        p.raw.retain(|c| c.id != NEIGHBOURS);
        p.raw.push(RawCurve {
            id: NEIGHBOURS.into(),
            points: vec![RawPoint {
                y: busy,
                ..Default::default()
            }],
            ..Default::default()
        });
        let a = analyze(&p).unwrap();
        let flagged = a
            .notes
            .iter()
            .any(|n| n.code == "cache.neighbours-busy" && n.text.contains("other CPUs were 60% busy"));
        assert_eq!(flagged, busy > NEIGHBOUR_BUSY_LIMIT);
        assert_eq!(a.levels.iter().all(|l| l.verdict == Verdict::Noisy), flagged);
    }
}

#[test]
fn short_sweep_has_no_memory() {
    let mut c = vm_curve();
    c.points.retain(|q| q.x <= 1048576.0);
    let a = analyze_curves(&c, None, [(None, None), (None, None)], None, None, &machine());
    assert_eq!(a.levels.len(), 2);
    assert!(a.memory.is_none());
    assert!(a
        .notes
        .iter()
        .any(|n| n.code.ends_with("-size-lower-bound") && n.text.contains("at least")));
}

/// A synthetic latency curve (ported from the first plateau finder's
/// tests): `levels` as (capacity, latency) and memory; from capacity to
/// 1.25× capacity latency ramps up (a set-associative cache does not
/// fall off a cliff); `noise` is a relative uniform jitter.
fn synthetic(levels: &[(f64, f64)], mem: f64, per_octave: f64, max: f64, noise: f64) -> RawCurve {
    let mut seed = 12345u64;
    let mut rnd = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut xs = Vec::new();
    let mut x: f64 = 4096.0;
    while x <= max {
        xs.push(x);
        x *= 2f64.powf(1.0 / per_octave);
    }
    // The plan refines each edge (16 points per octave past it), so the
    // sweep pins where each level began to miss.
    for &(cap, _) in levels {
        xs.extend(
            (1..4)
                .map(|k| cap * 2f64.powf(f64::from(k) / 16.0))
                .filter(|&x| x <= max),
        );
    }
    xs.sort_by(f64::total_cmp);
    xs.dedup_by(|a, b| (*a / *b - 1.0).abs() < 1e-3);
    let mut points = Vec::new();
    for x in xs {
        let mut y = mem;
        for (i, &(cap, lat)) in levels.iter().enumerate().rev() {
            let next = levels.get(i + 1).map_or(mem, |l| l.1);
            if x <= cap {
                y = lat;
            } else if x <= cap * 1.25 && y == next {
                let f = (x / cap).log2() / 1.25f64.log2();
                y = lat + f * (next - lat);
            }
        }
        points.push(pt(x, y * (1.0 + noise * rnd()), 2500.0));
    }
    RawCurve {
        id: LATENCY.into(),
        points,
        ..Default::default()
    }
}

/// A Zen 3-like guest on 4 KiB pages: L1 32 KiB / 8 ways, a private
/// L2 512 KiB / 8 ways (16 page colours), a shared L3 share of 8 MiB.
fn coloured() -> (MachineInfo, RawCurve, RawCurve) {
    let c = |level, size, ways, shared: Vec<usize>| NominalCache {
        level,
        cache_type: if level == 1 { "Data" } else { "Unified" }.into(),
        size_bytes: size,
        line_bytes: Some(64),
        ways: Some(ways),
        shared_cpus: shared,
        source: "sysfs".into(),
        ..Default::default()
    };
    let m = MachineInfo {
        nominal_caches: vec![
            c(1, 32 << 10, 8, vec![1]),
            c(2, 512 << 10, 8, vec![1]),
            c(3, 32 << 20, 16, vec![0, 1]),
        ],
        ..Default::default()
    };
    let (l2, l3) = (512.0 * 1024.0, 8.0 * 1048576.0);
    let y = |x: f64| {
        if x <= 32768.0 {
            1.2
        } else if x <= 40960.0 {
            3.7
        } else if x <= l3 {
            let h = crate::colour::hit_fraction(x, l2, 8, 4096.0).unwrap();
            3.7 + (1.0 - h) * (15.0 - 3.7)
        } else {
            100.0
        }
    };
    let mut points = Vec::new();
    let mut x: f64 = 4096.0;
    while x <= 64.0 * 1048576.0 {
        points.push(pt(x, y(x), 3000.0));
        x *= 2f64.powf(1.0 / 12.0);
    }
    let main = RawCurve {
        id: LATENCY.into(),
        points,
        ..Default::default()
    };
    // Six placements per size, each ±3% off the expectation (their
    // luck of the draw), one of them disturbed (+40%).
    let mut points = Vec::new();
    let mut x: f64 = l2 / 2.0;
    while x <= 2.5 * l2 {
        let e = y(x);
        let samples = vec![e * 0.97, e * 1.03, e * 0.98, e * 1.02, e, e * 1.4];
        points.push(RawPoint {
            x,
            y: e,
            samples,
            ..Default::default()
        });
        x *= 2f64.powf(1.0 / 8.0);
    }
    let colour = RawCurve {
        id: COLOUR.into(),
        points,
        ..Default::default()
    };
    (m, main, colour)
}

#[test]
fn a_private_level_on_4k_pages_is_sized_by_its_page_colours() {
    let (m, main, colour) = coloured();
    let none = [(None, None), (None, None)];
    let a = analyze_curves_tlb(&main, None, Some(&colour), None, none, None, Some(0.0), &m);
    assert_eq!(a.levels.len(), 3, "{:?}", a.levels);
    let l2 = &a.levels[1];
    assert!(close(l2.size_bytes as f64, 512.0 * 1024.0, 0.05), "{l2:?}");
    assert_eq!(l2.verdict, Verdict::Ok);
    let fit = a
        .notes
        .iter()
        .find(|n| n.code == "cache.l2-colour-fit")
        .expect("colour-fit note");
    // The first rise comes well before the capacity: the held
    // estimate the fit replaced is short of it.
    assert!(fit.text.contains("seen to hold at most"), "{}", fit.text);
    assert!(a.plateaus[1]
        .colour
        .is_some_and(|(_, held)| held < 0.9 * 512.0 * 1024.0));
    // Neither L1 (one colour) nor the shared L3 is fitted.
    assert!(a.plateaus[0].colour.is_none() && a.plateaus[2].colour.is_none());
    // On huge pages there are no colours to fit.
    let h = analyze_curves_tlb(&main, None, Some(&colour), None, none, None, Some(1.0), &m);
    assert!(h.plateaus.iter().all(|p| p.colour.is_none()));
    assert!(!h.notes.iter().any(|n| n.code.ends_with("colour-fit")));
}

#[test]
fn a_private_edge_too_disturbed_for_the_colour_fit_is_noisy_when_short() {
    let (m, main, colour) = coloured();
    let none = [(None, None), (None, None)];
    // Another thread on the core through most of the placements: at
    // half the level, where every load should hit, four of six read
    // twice as slow (a recorded Zen 3 run: 60–110% slow).
    let mut busy = colour.clone();
    for p in &mut busy.points {
        for s in p.samples.iter_mut().skip(2) {
            *s *= 2.0;
        }
    }
    // The sweep's single placement reads the level short as well.
    let mut short = main.clone();
    for p in &mut short.points {
        if p.x > 300.0 * 1024.0 && p.x < 2048.0 * 1024.0 {
            p.y = p.y.max(9.0);
            p.samples = vec![p.y];
        }
    }
    let a = analyze_curves_tlb(&short, None, Some(&busy), None, none, None, Some(0.0), &m);
    let l2 = &a.levels[1];
    assert!(a.plateaus[1].colour.is_none(), "{:?}", a.plateaus[1]);
    assert!((l2.size_bytes as f64) < 0.875 * 512.0 * 1024.0, "{l2:?}");
    assert_eq!(l2.verdict, Verdict::Noisy, "{l2:?}");
    // Without placements the held size alone is short by page colouring
    // on a quiet machine too, by an amount nothing measured: a size short
    // of the stated one is not confirmed, so it is judged as well.
    let b = analyze_curves_tlb(&short, None, None, None, none, None, Some(0.0), &m);
    assert_eq!(b.levels[1].verdict, Verdict::Noisy, "{:?}", b.levels[1]);
}

#[test]
fn a_busy_sweep_is_held_to_the_levels_the_machine_states() {
    let (m, _, _) = coloured();
    let mib = 1048576.0;
    // Three caches, then memory read at 110 ns from 6 to 16 MiB while
    // the host was quieter and at 180 ns after it.
    let lv = [
        (32768.0, 1.3),
        (524288.0, 3.8),
        (6.0 * mib, 15.0),
        (16.0 * mib, 110.0),
    ];
    let quiet = synthetic(&lv, 180.0, 8.0, 128.0 * mib, 0.01);
    let none = [(None, None), (None, None)];
    // A quiet sweep keeps the plateau it shows (a machine may state
    // fewer levels than it has), but the truth here is memory read while
    // the host was quieter: a level the machine does not state, which no
    // second measurement (the gap chase) confirms, is never `ok`.
    let q = analyze_curves(&quiet, None, none, None, Some(1.0), &m);
    assert_eq!(q.levels.len(), 4, "{:?}", q.levels);
    assert_eq!(q.levels[3].verdict, Verdict::Noisy, "{:?}", q.levels[3]);
    assert!(!q.notes.iter().any(|n| n.code == "cache.busy-merged"));
    // The same curve from a busy sweep: three levels, and memory.
    let mut busy = quiet.clone();
    for p in busy.points.iter_mut().step_by(2) {
        p.samples = vec![p.y, p.y * 1.05, p.y * 1.1];
    }
    let b = analyze_curves(&busy, None, none, None, Some(1.0), &m);
    assert_eq!(b.levels.len(), 3, "{:?}", b.levels);
    assert!(close(b.levels[2].latency_ns, 15.0, 0.05), "{:?}", b.levels[2]);
    let mem = b.memory.as_ref().expect("memory");
    assert!(mem.latency_ns > 110.0 && mem.verdict == Verdict::Noisy, "{mem:?}");
    let n = b
        .notes
        .iter()
        .find(|n| n.code == "cache.busy-merged")
        .expect("note");
    assert!(
        n.text.contains("5 plateaus") && n.text.contains("states 4"),
        "{}",
        n.text
    );
}

fn sizes(c: &RawCurve, m: &MachineInfo) -> Vec<(f64, f64)> {
    let a = analyze_curves(c, None, [(None, None), (None, None)], None, Some(1.0), m);
    a.levels
        .iter()
        .map(|l| (l.size_bytes as f64, l.latency_ns))
        .collect()
}

fn close(got: f64, want: f64, tol: f64) -> bool {
    (got / want - 1.0).abs() <= tol
}

#[test]
fn synthetic_hierarchies_of_two_three_and_four_levels() {
    let none = MachineInfo::default();
    for (lv, mem, per_oct, max) in [
        (vec![(32768.0, 1.5), (524288.0, 5.0)], 90.0, 6.0, 64.0 * 1048576.0),
        (
            vec![(49152.0, 2.0), (1.25 * 1048576.0, 6.5), (105.0 * 1048576.0, 30.0)],
            140.0,
            8.0,
            1073741824.0,
        ),
        (
            vec![
                (16384.0, 1.0),
                (262144.0, 4.0),
                (4.0 * 1048576.0, 12.0),
                (32.0 * 1048576.0, 40.0),
            ],
            120.0,
            8.0,
            512.0 * 1048576.0,
        ),
    ] {
        let c = synthetic(&lv, mem, per_oct, max, 0.02);
        let got = sizes(&c, &none);
        assert_eq!(got.len(), lv.len(), "{lv:?}: {got:?}");
        for (g, w) in got.iter().zip(&lv) {
            assert!(close(g.0, w.0, 0.125) && close(g.1, w.1, 0.05), "{lv:?}: {got:?}");
        }
        // The same curve 3× slower: the same sizes.
        let mut slow = c.clone();
        slow.points.iter_mut().for_each(|p| p.y *= 3.0);
        let got3 = sizes(&slow, &none);
        assert_eq!(got3.len(), lv.len());
        assert!(got3.iter().zip(&got).all(|(a, b)| close(a.0, b.0, 0.01)));
    }
}

#[test]
fn an_unstated_plateau_close_to_memory_is_memory_and_a_clear_one_a_level() {
    let mut m = machine();
    m.nominal_caches[1].size_bytes = 1 << 20;
    m.nominal_caches[2].size_bytes = 8 << 20;
    let base = [(49152.0, 2.0), (1048576.0, 6.0), (6.0 * 1048576.0, 12.0)];
    // A Zen 3 guest's: 90 ns from 10 to 20 MiB, memory 125 ns past it,
    // is memory; a hidden L4 at 40 ns, 3x below memory, is as clear as
    // a stated level.
    for (extra, levels, merged) in [
        ((20.0 * 1048576.0, 90.0), 3, true),
        ((32.0 * 1048576.0, 40.0), 4, false),
    ] {
        let mut lv = base.to_vec();
        lv.push(extra);
        let c = synthetic(&lv, 125.0, 8.0, 256.0 * 1048576.0, 0.01);
        let a = analyze_curves(&c, None, [(None, None); 2], None, Some(1.0), &m);
        assert_eq!(a.levels.len(), levels, "{:?}", a.levels);
        let note = a.notes.iter().any(|n| n.code == "cache.unstated-merged");
        assert_eq!(note, merged, "{:?}", a.notes);
        let mem = a.memory.unwrap().latency_ns;
        assert!(close(mem, 125.0, 0.05), "{mem}");
    }
}

#[test]
fn a_sweep_that_climbs_to_its_top_reports_no_memory_and_the_unfound_level() {
    // L1, L2, then a climb that never settles (no L3 plateau, no
    // memory plateau) while the machine states an 8 MiB L3.
    let mut m = machine();
    m.nominal_caches[1].size_bytes = 1 << 20;
    m.nominal_caches[2].size_bytes = 8 << 20;
    let mut points = Vec::new();
    let mut x: f64 = 4096.0;
    while x <= 64.0 * 1048576.0 {
        let y = if x <= 49152.0 {
            2.0
        } else if x <= 1048576.0 {
            6.0
        } else {
            6.0 * x / 1048576.0
        };
        points.push(pt(x, y, 2500.0));
        x *= 2f64.powf(0.25);
    }
    let c = RawCurve {
        id: LATENCY.into(),
        points,
        ..Default::default()
    };
    let a = analyze_curves(&c, None, [(None, None); 2], None, Some(1.0), &m);
    assert_eq!(a.levels.len(), 2, "{:?}", a.levels);
    assert!(a.memory.is_none());
    // L2 is bounded by the climb (where it has risen by half, on a
    // climb this slow), not left as a lower bound at the sweep's top.
    let l2 = a.levels[1].size_bytes as f64 / 1048576.0;
    assert!((1.0..=2.0).contains(&l2), "{:?}", a.levels[1]);
    let codes: Vec<&str> = a.notes.iter().map(|n| n.code.as_str()).collect();
    assert!(
        codes.contains(&"cache.no-memory") && codes.contains(&"cache.l3-no-plateau"),
        "{codes:?}"
    );
    assert!(!codes.contains(&"cache.l2-size-lower-bound"), "{codes:?}");
}

#[test]
fn a_missing_level_is_not_invented_even_when_nominal() {
    // L3 has no plateau of its own: a ramp from L2 straight to memory,
    // though the machine states an L3 (the guided search looks for it).
    let mut c = synthetic(&[(49152.0, 2.0), (2097152.0, 6.5)], 145.0, 4.0, 4e8, 0.01);
    for p in &mut c.points {
        if p.x > 2.0 * 1048576.0 && p.x < 16.0 * 1048576.0 {
            p.y = 6.5 + (145.0 - 6.5) * ((p.x / 2097152.0).log2() / 3.0).min(1.0);
            p.samples = vec![p.y, p.y * 1.01];
        }
    }
    let got = sizes(&c, &machine());
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(close(got[1].0, 2097152.0, 0.125), "{got:?}");
}

#[test]
fn a_noisy_plateau_and_a_spike() {
    let mut c = synthetic(&[(49152.0, 2.0), (2097152.0, 6.5)], 145.0, 4.0, 2e8, 0.06);
    let i = c.points.iter().position(|p| p.x > 300e3).unwrap();
    c.points[i].y *= 2.0;
    let got = sizes(&c, &MachineInfo::default());
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(close(got[0].0, 49152.0, 0.125), "{got:?}");
    assert!(close(got[1].0, 2097152.0, 0.125), "{got:?}");
}

/// Whether `v` lies in `ci`, widened by `slack` (relative) each way.
fn within(v: f64, ci: Option<[f64; 2]>, slack: f64) -> bool {
    ci.is_some_and(|[lo, hi]| lo <= hi && v >= lo * (1.0 - slack) && v <= hi * (1.0 + slack))
}

#[test]
fn every_figure_gets_an_interval_that_holds_it_and_widens_with_the_scatter() {
    let lv = [(49152.0, 2.0), (1.25 * 1048576.0, 6.5), (20.0 * 1048576.0, 30.0)];
    let none = MachineInfo::default();
    let width = |noise: f64| {
        let c = synthetic(&lv, 140.0, 8.0, 1073741824.0, noise);
        let a = analyze_curves(&c, None, [(None, None), (None, None)], None, Some(1.0), &none);
        assert_eq!(a.levels.len(), 3, "{:?}", a.levels);
        let mut w = 0.0;
        for l in &a.levels {
            assert!(within(l.latency_ns, l.latency_ns_ci95, 0.0), "{l:?}");
            let s = l.size_bytes_ci95.map(|c| c.map(|b| b as f64));
            assert!(within(l.size_bytes as f64, s, 0.0), "{l:?}");
            let [lo, hi] = l.latency_ns_ci95.unwrap();
            w += (hi - lo) / l.latency_ns;
        }
        let m = a.memory.as_ref().unwrap();
        assert!(within(m.latency_ns, m.latency_ns_ci95, 0.0), "{m:?}");
        // Same data, same intervals: the bootstrap is seeded.
        let again = analyze_curves(&c, None, [(None, None), (None, None)], None, Some(1.0), &none);
        assert_eq!(again.levels, a.levels);
        // The runner's quick analysis: the same levels, no intervals.
        let quick = analyze_sweep(&c, Some(1.0), &none);
        assert_eq!(quick.levels.len(), a.levels.len());
        for (q, l) in quick.levels.iter().zip(&a.levels) {
            assert_eq!((q.size_bytes, q.latency_ns), (l.size_bytes, l.latency_ns));
            assert_eq!((q.latency_ns_ci95, q.size_bytes_ci95), (None, None));
        }
        w
    };
    let (quiet, noisy) = (width(0.005), width(0.06));
    assert!(noisy > 3.0 * quiet, "{quiet} {noisy}");
}

#[test]
fn a_colour_fitted_size_has_an_interval_over_its_page_placements() {
    let (m, main, colour) = coloured();
    let none = [(None, None), (None, None)];
    let a = analyze_curves_tlb(&main, None, Some(&colour), None, none, None, Some(0.0), &m);
    let l2 = &a.levels[1];
    let [lo, hi] = l2.size_bytes_ci95.expect("an interval");
    // At least one colour (8 ways × 4 KiB) of resolution, and not wider
    // than the edge the placements were measured over.
    assert!(
        lo + 32768 <= l2.size_bytes && hi >= l2.size_bytes + 32768,
        "{l2:?}"
    );
    assert!(
        lo as f64 >= 0.5 * 512.0 * 1024.0 && hi as f64 <= 2.0 * 512.0 * 1024.0,
        "{l2:?}"
    );
    // The level whose plateau runs off the sweep has no size interval.
    let short = RawCurve {
        points: main
            .points
            .iter()
            .filter(|p| p.x <= 4.0 * 1048576.0)
            .cloned()
            .collect(),
        ..main.clone()
    };
    let b = analyze_curves_tlb(&short, None, Some(&colour), None, none, None, Some(0.0), &m);
    let last = b.levels.last().unwrap();
    assert!(b.memory.is_none() && last.size_bytes_ci95.is_none(), "{last:?}");
}

/// A live Emerald Rapids run (16-vCPU guest, its L3 share some 6 MiB and
/// moving): the gap point on the L3 read memory's latency, so the L2's
/// miss latency came out at 92 ns against a 35 ns replace time and the
/// L3's at 22 against 83, both `ok`. Steps more than twice apart are left
/// out with a note; steps that agree as closely as idle and loaded steps
/// do (tens of percent) stay.
#[test]
fn a_miss_latency_twice_off_the_replace_time_is_left_out() {
    let lvl = |level: u32, miss: f64, replace: f64| CacheLevel {
        level,
        miss_latency_ns: Some(miss),
        miss_latency_cycles: Some(miss * 2.7),
        miss_latency_ns_ci95: Some([miss - 1.0, miss + 1.0]),
        replace_time_ns: Some(replace),
        ..Default::default()
    };
    for (level, miss, replace) in [(2, 92.1, 35.0), (3, 21.8, 82.9), (2, -28.4, 9.6), (2, 179.0, 9.6)] {
        let mut l = lvl(level, miss, replace);
        let n = levels::miss_disagrees(&mut l).expect("a note");
        assert_eq!(n.code, format!("cache.l{level}-miss-disagree"));
        // The impossible reading itself is never printed.
        assert!(!n.text.contains(&format!("{miss:.1}")), "{}", n.text);
        assert!(n.text.contains(&format!("{replace:.1} ns")), "{}", n.text);
        assert_eq!(
            (l.miss_latency_ns, l.miss_latency_cycles, l.miss_latency_ns_ci95),
            (None, None, None)
        );
        assert_eq!(l.replace_time_ns, Some(replace));
    }
    // Zen 3's recorded L2: 18.9 against 12.4, the idle step longer; kept.
    for (miss, replace) in [(33.1, 31.8), (18.9, 12.4), (7.3, 7.1)] {
        let mut l = lvl(2, miss, replace);
        assert!(levels::miss_disagrees(&mut l).is_none());
        assert_eq!(l.miss_latency_ns, Some(miss));
    }
}

/// A gap chase over `pts` (working set, plain latency in ns): the first
/// point L1-resident, each 100 cycles (40 ns at 2.5 GHz) above the plain
/// chase, as the runner measures it.
fn gap_at(pts: &[(f64, f64)]) -> RawCurve {
    RawCurve {
        id: GAP.into(),
        points: pts.iter().map(|&(x, ns)| pt(x, ns + 40.0, 2500.0)).collect(),
        ..Default::default()
    }
}

/// The nearest point of a curve to `x` (its size and latency).
fn at(c: &RawCurve, x: f64) -> (f64, f64) {
    let q = c
        .points
        .iter()
        .min_by(|a, b| (a.x / x).ln().abs().total_cmp(&(b.x / x).ln().abs()))
        .unwrap();
    (q.x, q.y)
}

/// A level the machine does not state (3 stated, 4 found) is `ok` only
/// where the idle-gap chase shows its step again; without the gap chase,
/// or where it ends at the TLB's reach on base pages, it is noisy with a
/// note (a busy Zen 3 guest read "L4 210 MiB 167 ns ok").
#[test]
fn an_unstated_level_is_ok_only_where_a_second_measurement_shows_it() {
    let mut m = machine();
    m.nominal_caches[1].size_bytes = 1 << 20;
    m.nominal_caches[2].size_bytes = 8 << 20;
    let lv = [
        (49152.0, 2.0),
        (1048576.0, 6.0),
        (6.0 * 1048576.0, 12.0),
        (32.0 * 1048576.0, 40.0),
    ];
    let c = synthetic(&lv, 125.0, 8.0, 256.0 * 1048576.0, 0.01);
    let alone = analyze_curves(&c, None, [(None, None); 2], None, Some(1.0), &m);
    assert_eq!(alone.levels.len(), 4, "{:?}", alone.levels);
    assert_eq!(alone.levels[3].verdict, Verdict::Noisy, "{:?}", alone.levels);
    assert!(
        alone.notes.iter().any(|n| n.code == "cache.l4-unstated"),
        "{:?}",
        alone.notes
    );
    // The stated private levels are not in doubt.
    assert!(alone.levels[..2].iter().all(|l| l.verdict == Verdict::Ok));
    // The gap chase on every plateau: L3's and L4's steps read again.
    let gap = gap_at(&[
        at(&c, 4096.0),
        at(&c, 16384.0),
        at(&c, 393216.0),
        at(&c, 3.0 * 1048576.0),
        at(&c, 16.0 * 1048576.0),
        at(&c, 160.0 * 1048576.0),
    ]);
    let shown = analyze_curves(&c, Some(&gap), [(None, None); 2], None, Some(1.0), &m);
    assert_eq!(shown.levels.len(), 4, "{:?}", shown.levels);
    assert!(
        shown.levels.iter().all(|l| l.verdict == Verdict::Ok),
        "{:?} {:?}",
        shown.levels,
        shown.notes
    );
    assert!(!shown.notes.iter().any(|n| n.code.ends_with("-unstated")));
    // On base pages with an L2 TLB whose reach is where L4 ends (8192
    // entries of 4 KiB: 32 MiB), the gap chase is no independent witness.
    let mut m4k = m.clone();
    m4k.nominal_tlbs = vec![hwcal_model::NominalTlb {
        level: 2,
        page_bytes: 4096,
        entries: 8192,
        ways: None,
        source: "cpuid".into(),
    }];
    let reach = analyze_curves(&c, Some(&gap), [(None, None); 2], None, Some(0.0), &m4k);
    let l4 = reach.levels.iter().find(|l| l.level == 4).expect("an L4");
    assert_eq!(l4.verdict, Verdict::Noisy, "{:?}", reach.levels);
    assert!(reach
        .notes
        .iter()
        .any(|n| n.code == "cache.l4-unstated" && n.text.contains("TLB's reach")));
}

/// A private level read larger than its stated size beyond the tolerance
/// is physically impossible (one core holds at most its private cache):
/// noisy, with the over-nominal note (a simulated 1 MiB L2 read 2.53 MiB,
/// `ok`). Read at its size, it stays `ok`.
#[test]
fn a_private_level_larger_than_stated_is_noisy() {
    let mut m = machine();
    m.nominal_caches[1].size_bytes = 1 << 20;
    let c = synthetic(
        &[(49152.0, 2.0), (2.5 * 1048576.0, 6.0), (16.0 * 1048576.0, 20.0)],
        125.0,
        8.0,
        256.0 * 1048576.0,
        0.01,
    );
    let a = analyze_curves(&c, None, [(None, None); 2], None, Some(1.0), &m);
    let l2 = &a.levels[1];
    assert!(l2.size_bytes > 2 << 20, "{l2:?}");
    assert_eq!(l2.verdict, Verdict::Noisy, "{l2:?}");
    assert!(a
        .notes
        .iter()
        .any(|n| n.code == "cache.l2-over-nominal" && n.text.contains("private")));
    m.nominal_caches[1].size_bytes = 5 << 19;
    let a = analyze_curves(&c, None, [(None, None); 2], None, Some(1.0), &m);
    assert_eq!(a.levels[1].verdict, Verdict::Ok, "{:?}", a.levels[1]);
}

/// Memory whose plateau still climbs (16 KiB pages: 136 ns at 256 MiB
/// reported as 116 ns, `ok`): the figure, a median over the climb, is
/// either within 10% of memory at the size it is given for, or not `ok`.
/// A flat plateau stays `ok`.
#[test]
fn memory_averaged_over_a_climb_is_not_ok() {
    let truth = |x: f64| {
        if x <= 32.0 * 1048576.0 {
            116.0
        } else {
            116.0 + 20.0 * (x / (32.0 * 1048576.0)).log2() / 3.0
        }
    };
    for climbs in [true, false] {
        let mut c = synthetic(
            &[(49152.0, 2.0), (1048576.0, 6.0), (8.0 * 1048576.0, 14.0)],
            116.0,
            8.0,
            256.0 * 1048576.0,
            0.0,
        );
        if climbs {
            for q in c.points.iter_mut().filter(|q| q.x > 32.0 * 1048576.0) {
                q.y = truth(q.x);
                q.samples = vec![q.y, q.y * 1.01];
            }
        }
        let a = analyze_curves(&c, None, [(None, None); 2], None, Some(1.0), &machine());
        let m = a.memory.as_ref().expect("memory");
        let at_size = if climbs {
            truth(m.size_bytes.unwrap() as f64)
        } else {
            116.0
        };
        let right = close(m.latency_ns, at_size, 0.10);
        assert!(right || m.verdict == Verdict::Noisy, "{m:?}");
        if climbs {
            assert_eq!(m.verdict, Verdict::Noisy, "{m:?}");
            assert!(a.notes.iter().any(|n| n.code == "cache.memory-climbing"));
        } else {
            assert_eq!(m.verdict, Verdict::Ok, "{m:?} {:?}", a.notes);
        }
    }
}

/// A simulated L1 of 32 KiB with adaptive insertion keeps part of any
/// chase several times its size: the L2 plateau creeps up from 10.7 ns at
/// 128 KiB (four times L1, where the runner puts a gap point) to its 12 ns.
/// The miss latency is read on the gap point where the sweep sits on the
/// plateau's level (1 MiB), not on the first one within its extent.
#[test]
fn the_miss_latency_is_read_where_the_gap_chase_sits_on_the_plateau() {
    let mut c = synthetic(
        &[(32768.0, 2.0), (8.0 * 1048576.0, 12.0)],
        100.0,
        4.0,
        256.0 * 1048576.0,
        0.0,
    );
    for p in &mut c.points {
        if p.x > 40960.0 && p.x < 262144.0 {
            // The share L1 still serves falls off as (4 × L1 / x)² past it.
            let kept = 0.12 * (131072.0 / p.x).powi(2);
            p.y = 12.0 - kept * 10.0;
            p.samples = vec![p.y, p.y * 1.01];
        }
    }
    let at128 = at(&c, 131072.0).1;
    assert!((10.7..11.0).contains(&at128), "{at128}");
    let gap = gap_at(&[
        (4096.0, 2.0),
        (131072.0, at128),
        (1048576.0, 12.0),
        (64.0 * 1048576.0, 100.0),
    ]);
    let m = MachineInfo::default();
    let a = analyze_curves(&c, Some(&gap), [(None, None); 2], None, Some(1.0), &m);
    let l1 = &a.levels[0];
    let miss = l1.miss_latency_ns.unwrap();
    assert!(close(miss, 10.0, 0.02), "{l1:?}");
    assert!(close(l1.replace_time_ns.unwrap(), 10.0, 0.02), "{l1:?}");
}

/// On a machine with heavy spikes the points of a large working set, whose
/// samples last longest, meet a spike in every sample and run to their
/// cap without their fastest samples agreeing: the L3 plateau reads 21.5
/// ns on its settled half and 23.4 on the rest, its median. That level is
/// noisy, and L2's replace time, the step to it, is not stated (L2's own
/// figures stand).
#[test]
fn a_step_to_a_plateau_whose_points_never_settled_is_not_stated() {
    let mut c = synthetic(
        &[(32768.0, 1.4), (2.0 * 1048576.0, 3.4), (64.0 * 1048576.0, 21.5)],
        200.0,
        4.0,
        1024.0 * 1048576.0,
        0.0,
    );
    let settled = |y: f64| vec![y, y * 1.001, y * 1.002, y * 1.003, y * 1.004];
    for p in &mut c.points {
        if p.x >= 12.0 * 1048576.0 && p.x <= 64.0 * 1048576.0 {
            p.y = 23.4;
            p.samples = (0..25).map(|i| 23.4 * (1.0 + 0.01 * i as f64)).collect();
        } else {
            p.samples = settled(p.y);
        }
        p.mhz = vec![2500.0; p.samples.len()];
    }
    let m = MachineInfo::default();
    let a = analyze_curves(&c, None, [(None, None); 2], None, Some(1.0), &m);
    assert_eq!(a.levels.len(), 3, "{:?}", a.levels);
    let (l2, l3) = (&a.levels[1], &a.levels[2]);
    assert_eq!(l3.verdict, Verdict::Noisy, "{l3:?}");
    assert_eq!(l2.verdict, Verdict::Ok, "{l2:?}");
    assert_eq!(
        (l2.replace_time_ns, l2.replace_time_ns_ci95),
        (None, None),
        "{l2:?}"
    );
    assert!(
        a.notes.iter().any(|n| n.code == "cache.l2-replace-unsettled"),
        "{:?}",
        a.notes
    );
    // L1's step, to L2's settled plateau, stands.
    assert!(a.levels[0].replace_time_ns.is_some());
}

/// A simulated guest's sweep on huge pages, sysfs absent (seed 13, machine
/// 1876): L1 64 KiB at 0.81 ns, a 2.5 MiB random L2 at 3.1 ns, an 8 MiB L3
/// at ~9.4 ns and a 64 MiB victim L4 at ~61 ns, neither with a flat
/// plateau, memory 100 ns. The L2's edge read against memory made it 2.87
/// MiB, `ok`; past it the curve is far faster than L1 and L2 of that size
/// with memory behind them can be.
fn merged_l2_l3() -> RawCurve {
    const KIB_NS: [(f64, f64); 67] = [
        (4.0, 0.81),
        (5.0, 0.81),
        (6.0, 0.81),
        (8.0, 0.81),
        (10.0, 0.81),
        (13.0, 0.81),
        (16.0, 0.81),
        (20.0, 0.81),
        (25.0, 0.81),
        (32.0, 0.81),
        (40.0, 0.81),
        (51.0, 0.81),
        (53.0, 0.81),
        (55.0, 0.81),
        (57.0, 0.81),
        (59.0, 0.81),
        (62.0, 0.81),
        (64.0, 0.81),
        (66.0, 0.99),
        (69.0, 1.17),
        (72.0, 1.33),
        (75.0, 1.42),
        (78.0, 1.50),
        (81.0, 1.57),
        (102.0, 1.92),
        (128.0, 2.23),
        (161.0, 2.45),
        (203.0, 2.66),
        (256.0, 2.79),
        (322.0, 2.91),
        (406.0, 2.98),
        (512.0, 3.02),
        (645.0, 3.05),
        (813.0, 3.07),
        (1024.0, 3.08),
        (1290.0, 3.09),
        (1625.0, 3.09),
        (2048.0, 3.09),
        (2580.0, 3.20),
        (3251.0, 5.66),
        (4096.0, 7.32),
        (5161.0, 8.27),
        (6502.0, 8.83),
        (8192.0, 9.17),
        (8514.0, 13.64),
        (8848.0, 16.94),
        (9195.0, 18.92),
        (9556.0, 20.78),
        (9931.0, 22.59),
        (10321.0, 24.36),
        (10726.0, 26.26),
        (11148.0, 28.18),
        (11585.0, 29.74),
        (12040.0, 31.01),
        (12513.0, 32.48),
        (13004.0, 34.06),
        (16384.0, 41.89),
        (20642.0, 47.26),
        (26008.0, 52.29),
        (32768.0, 56.06),
        (65536.0, 61.61),
        (131072.0, 85.45),
        (262144.0, 95.75),
        (311744.0, 97.58),
        (370728.0, 98.67),
        (440872.0, 99.56),
        (524288.0, 100.09),
    ];
    RawCurve {
        id: LATENCY.into(),
        points: KIB_NS.iter().map(|&(k, ns)| pt(k * 1024.0, ns, 2500.0)).collect(),
        ..Default::default()
    }
}

#[test]
fn a_curve_faster_than_the_levels_found_can_serve_marks_the_level_before_it() {
    let a = analyze_curves(
        &merged_l2_l3(),
        None,
        [(None, None), (None, None)],
        None,
        Some(1.0),
        &MachineInfo::default(),
    );
    let l2 = a.levels.get(1).expect("an L2");
    assert_eq!(l2.verdict, Verdict::Noisy, "{:?}", a.levels);
    let n = a.notes.iter().find(|n| n.code == "cache.l2-served-between");
    assert!(n.is_some(), "{:?}", a.notes);
    // L1's edge is served by the L2 found: its own figures stand.
    assert!(
        !a.notes.iter().any(|n| n.code == "cache.l1-served-between"),
        "{:?}",
        a.notes
    );
}

#[test]
fn hierarchies_that_serve_their_curves_are_not_marked() {
    let none = MachineInfo::default();
    for lv in [
        vec![(32768.0, 1.5), (524288.0, 5.0)],
        vec![(49152.0, 2.0), (1.25 * 1048576.0, 6.5), (105.0 * 1048576.0, 30.0)],
        vec![
            (16384.0, 1.0),
            (262144.0, 4.0),
            (4.0 * 1048576.0, 12.0),
            (32.0 * 1048576.0, 40.0),
        ],
    ] {
        let c = synthetic(&lv, 120.0, 8.0, 1073741824.0, 0.02);
        let a = analyze_curves(&c, None, [(None, None), (None, None)], None, Some(1.0), &none);
        assert!(
            !a.notes.iter().any(|n| n.code.ends_with("-served-between")),
            "{lv:?}: {:?}",
            a.notes
        );
    }
    let a = analyze_curves(
        &vm_curve(),
        None,
        [(None, None), (None, None)],
        None,
        Some(1.0),
        &machine(),
    );
    assert!(
        !a.notes.iter().any(|n| n.code.ends_with("-served-between")),
        "{:?}",
        a.notes
    );
}

/// An edge the sweep measured at two points only, a third of an octave
/// apart: the size read (the most the level was seen to hold) and where the
/// curve began to climb bracket the capacity and do not pin it; with the
/// plan's refinement past the edge they do.
#[test]
fn a_size_only_bracketed_by_the_sweep_is_noisy() {
    let levels = [(32768.0, 2.3), (1.25 * 1048576.0, 8.1), (4.0 * 1048576.0, 16.8)];
    let refined = synthetic(&levels, 80.0, 3.0, 64.0 * 1048576.0, 0.0);
    let mut coarse = refined.clone();
    // Only the grid: 1 MiB, then 1.26 MiB, where an LRU L2 of 1.25 MiB
    // already misses an eighth of its loads.
    coarse.points.retain(|p| {
        let grid = (p.x / 4096.0).log2() * 3.0;
        (grid - grid.round()).abs() < 1e-6
    });
    for p in coarse
        .points
        .iter_mut()
        .filter(|p| p.x > 1.25 * 1048576.0 && p.x < 1.3 * 1048576.0)
    {
        p.y = 9.29;
        p.samples = vec![9.29, 9.29 * 1.01];
    }
    let m = MachineInfo::default();
    let none = [(None, None); 2];
    let a = analyze_curves(&coarse, None, none, None, Some(1.0), &m);
    let l2 = &a.levels[1];
    assert_eq!(l2.verdict, Verdict::Noisy, "{l2:?}");
    assert!(
        a.notes.iter().any(|n| n.code == "cache.l2-bracketed"),
        "{:?}",
        a.notes
    );
    let b = analyze_curves(&refined, None, none, None, Some(1.0), &m);
    assert!(
        !b.notes.iter().any(|n| n.code.ends_with("-bracketed")),
        "{:?}",
        b.notes
    );
}
