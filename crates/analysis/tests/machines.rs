//! The analysis on whole runs of machines other than the reference one:
//! the structure must come out the same as the hardware's, with or without
//! huge pages.
//!
//! * `tests/data/zen3-dense.json`: the cache and TLB curves of one `hwcal
//!   run` on an AMD EPYC Zen 3 KVM guest (2 vCPUs; the host backs guest
//!   memory with 4 KiB pages, so the TLB never sees huge pages): L1d 32 KiB
//!   / 4 cycles, L2 512 KiB / 12 cycles, L1 DTLB 64, L2 DTLB 2048.
//! * `tests/data/zen3-colour.json`: the same guest on another day, with the
//!   L2 edge measured on six page placements (`cache.colour`).
//! * `tests/data/zen3-busy.json`: the same guest with the host busy (a run
//!   of `validate cache --keep`): latency moved while the sweep ran.
//! * `../shared/reference/machines/emr-16vcpu.run*.json` (beside the
//!   checkout, not in it; or in `$HWCAL_REFERENCE_DIR`): two runs on an Emerald
//!   Rapids KVM guest with huge pages: L1 DTLB 96, STLB 2048, 32 entries
//!   for 2 MiB pages, an L3 share of ~8-10 MiB at ~40 ns.
//! * `tests/data/emr-live-*.json`: the cache and TLB curves of three `hwcal
//!   run`s on such a guest on other days (the same core, another host
//!   load): the L3 share held still only from ~2 to ~3.3 MiB
//!   (`short-l3`), was entered by a 0.6-octave ramp past an L2 edge
//!   smeared by a neighbour (`ramp-edge`), or ran to 25 MiB (`long-l3`);
//!   in `clock-drift` the core clock moved between 2.2 and 3.0 GHz during
//!   the sweep, so the ramp to memory looked flat in cycles.

mod support;
use hwcal_analysis::{cache, tlb};
use hwcal_model::{Profile, TlbLevel, Verdict};
use std::path::PathBuf;

fn within(got: f64, want: f64, lo: f64, hi: f64) -> bool {
    got >= want * (1.0 - lo) && got <= want * (1.0 + hi)
}

fn tlb_level(levels: &[TlbLevel], page: u64, level: u32) -> &TlbLevel {
    levels
        .iter()
        .find(|l| l.page_bytes == page && l.level == level)
        .unwrap_or_else(|| panic!("no {page}-byte level {level}: {levels:?}"))
}

#[test]
fn zen3_without_huge_pages() {
    let p = support::load("zen3-dense.json");
    let t = tlb::analyze(&p).unwrap();
    assert!(t.baseline_ok);
    let small: Vec<&TlbLevel> = t.levels.iter().filter(|l| l.page_bytes == 4096).collect();
    assert_eq!(small.len(), 2, "{small:?}");
    assert!(
        within(small[0].entries as f64, 64.0, 0.125, 0.125),
        "{:?}",
        small[0]
    );
    assert!(
        within(small[1].entries as f64, 2048.0, 0.25, 0.125),
        "{:?}",
        small[1]
    );
    assert!(small.iter().all(|l| l.baseline.as_deref() == Some("dense")));
    assert!((small[0].miss_latency_cycles.unwrap() - 7.0).abs() < 1.5);
    let c = cache::analyze(&p).unwrap();
    assert_eq!(c.levels.len(), 3, "{:?}", c.levels);
    let (l1, l2) = (&c.levels[0], &c.levels[1]);
    assert!(within(l1.size_bytes as f64, 32768.0, 0.125, 0.125), "{l1:?}");
    assert!((l1.latency_cycles.unwrap() - 4.0).abs() <= 0.5);
    assert!((l2.latency_cycles.unwrap() - 12.0).abs() <= 1.5);
    // The flush granule, not the prefetchers: 64 B at every level.
    for l in &c.levels {
        assert_eq!(l.line_bytes, Some(64), "L{}", l.level);
        assert_eq!(l.line_method.as_deref(), Some("clflush"));
    }
    // Memory latency says how much of it is TLB misses.
    let m = c.memory.unwrap();
    assert!(
        m.tlb_share_ns.is_some_and(|s| s > 5.0 && s < m.latency_ns),
        "{m:?}"
    );
}

#[test]
fn zen3_l2_on_4k_pages_is_sized_by_its_page_colours() {
    let p = support::load("zen3-colour.json");
    let c = cache::analyze(&p).unwrap();
    assert_eq!(c.levels.len(), 3, "{:?}", c.levels);
    let l2 = &c.levels[1];
    assert!(within(l2.size_bytes as f64, 524288.0, 0.125, 0.125), "{l2:?}");
    assert!((l2.latency_cycles.unwrap() - 12.0).abs() <= 1.5);
    assert!(c.notes.iter().any(|n| n.code == "cache.l2-colour-fit"));
    // The most the level was seen to hold, the estimate without the
    // placements, reads short: page colouring, not a smaller cache.
    let (_, held) = c.plateaus[1].colour.unwrap();
    assert!(held < 0.875 * 524288.0, "held {held}");
    // A quiet edge fits to a few hundredths, well inside what the fit
    // accepts, with or without the placements.
    for name in ["zen3-colour.json", "zen3-dense.json"] {
        let c = cache::analyze(&support::load(name)).unwrap();
        let (fit, _) = c.plateaus[1].colour.unwrap();
        assert!(fit.rms <= 0.045, "{name}: {fit:?}");
        assert!(fit.rms < hwcal_analysis::colour::MAX_RMS);
    }
    // The sweep's one placement alone: its edge either confirms the
    // stated size too, or the level is not ok.
    let mut one = p.clone();
    one.raw.retain(|r| r.id != cache::COLOUR);
    let single = &cache::analyze(&one).unwrap().levels[1];
    assert!(
        within(single.size_bytes as f64, 524288.0, 0.125, 0.125)
            || single.verdict != hwcal_model::Verdict::Ok,
        "{single:?}"
    );
}

/// The recorded reference profiles, if `shared/` is beside the checkout.
fn reference(name: &str) -> Option<Profile> {
    let dir = std::env::var_os("HWCAL_REFERENCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/reference/machines")
        });
    let path = dir.join(name);
    if !path.is_file() {
        eprintln!(
            "{}: not found; the reference-profile check is skipped",
            path.display()
        );
        return None;
    }
    Some(support::load_path(&path))
}

#[test]
fn emerald_rapids_runs_give_one_structure() {
    for name in ["emr-16vcpu.run.json", "emr-16vcpu.run-b.json"] {
        let Some(p) = reference(name) else { continue };
        let c = cache::analyze(&p).unwrap();
        assert_eq!(c.levels.len(), 3, "{name}: {:?}", c.levels);
        let l3 = &c.levels[2];
        assert!(l3.latency_ns > 30.0 && l3.latency_ns < 55.0, "{name}: {l3:?}");
        let mib = l3.size_bytes as f64 / 1048576.0;
        assert!((7.0..=14.0).contains(&mib), "{name}: L3 {mib} MiB");
        let t = tlb::analyze(&p).unwrap();
        assert!(
            within(tlb_level(&t.levels, 4096, 1).entries as f64, 96.0, 0.125, 0.125),
            "{name}"
        );
        assert!(
            within(tlb_level(&t.levels, 4096, 2).entries as f64, 2048.0, 0.25, 0.125),
            "{name}"
        );
        assert!(
            within(
                tlb_level(&t.levels, 2 << 20, 1).entries as f64,
                32.0,
                0.125,
                0.125
            ),
            "{name}"
        );
    }
}

#[test]
fn emerald_rapids_live_runs_find_l3_however_short() {
    for name in [
        "emr-live-short-l3.json",
        "emr-live-ramp-edge.json",
        "emr-live-long-l3.json",
    ] {
        let p = support::load(name);
        let c = cache::analyze(&p).unwrap();
        assert_eq!(c.levels.len(), 3, "{name}: {:?}", c.levels);
        let l3 = &c.levels[2];
        assert!(l3.latency_ns > 30.0 && l3.latency_ns < 55.0, "{name}: {l3:?}");
        assert!(l3.size_bytes > c.levels[1].size_bytes, "{name}: {l3:?}");
        let mem = c.memory.as_ref().unwrap();
        assert!(
            mem.latency_ns > 100.0 && mem.latency_ns < 160.0,
            "{name}: {mem:?}"
        );
    }
}

/// Each figure's 95% interval, on recorded runs of two cores: present, in
/// order, and holding the figure it belongs to.
#[test]
fn recorded_runs_state_intervals_that_hold_their_figures() {
    let mut profiles: Vec<(String, Profile)> = [
        "zen3-dense.json",
        "zen3-colour.json",
        "emr-live-short-l3.json",
        "emr-live-long-l3.json",
        "emr-live-ramp-edge.json",
    ]
    .iter()
    .map(|n| (n.to_string(), support::load(n)))
    .collect();
    profiles.extend(
        ["emr-16vcpu.run.json", "emr-16vcpu.run-b.json"]
            .iter()
            .filter_map(|n| reference(n).map(|p| (n.to_string(), p))),
    );
    let holds = |v: f64, ci: Option<[f64; 2]>, slack: f64| {
        ci.is_some_and(|[lo, hi]| lo <= hi && v >= lo * (1.0 - slack) && v <= hi * (1.0 + slack))
    };
    for (name, p) in &profiles {
        let c = cache::analyze(p).unwrap();
        for l in &c.levels {
            assert!(holds(l.latency_ns, l.latency_ns_ci95, 0.0), "{name}: {l:?}");
            if let Some([lo, hi]) = l.size_bytes_ci95 {
                let s = l.size_bytes as f64;
                assert!(lo as f64 <= s && s <= hi as f64, "{name}: {l:?}");
            }
        }
        // Each level's interval lies clear of its neighbours' latencies: it
        // measures this level's scatter, not the step to the next.
        for w in c.levels.windows(2) {
            let [_, hi] = w[0].latency_ns_ci95.unwrap();
            let [lo, _] = w[1].latency_ns_ci95.unwrap();
            assert!(hi < w[1].latency_ns && lo > w[0].latency_ns, "{name}: {w:?}");
        }
        // Every level below the last has a size interval.
        let n = c.levels.len();
        assert!(
            c.levels[..n - 1].iter().all(|l| l.size_bytes_ci95.is_some()),
            "{name}"
        );
        if let Some(m) = &c.memory {
            assert!(holds(m.latency_ns, m.latency_ns_ci95, 0.0), "{name}: {m:?}");
        }
    }
}

/// A recorded Zen 3 run on a busy host (`tests/data/zen3-busy.json`): the
/// L3 share came and went within single points, and memory read ~115 ns
/// from 10 to 16 MiB but 140–205 ns past it. The curve shows a plateau the
/// machine does not have; the run is busy, so it is held to the three
/// levels sysfs states, every figure marked noisy, with a note.
#[test]
fn zen3_busy_sweep_keeps_the_stated_levels() {
    let p = support::load("zen3-busy.json");
    let c = cache::analyze(&p).unwrap();
    assert_eq!(c.levels.len(), 3, "{:?}", c.levels);
    assert!(c.levels.iter().all(|l| l.verdict == hwcal_model::Verdict::Noisy));
    assert!(c.notes.iter().any(|n| n.code == "cache.busy-merged"));
    let m = c.memory.unwrap();
    assert!(
        m.latency_ns > 100.0 && m.verdict == hwcal_model::Verdict::Noisy,
        "{m:?}"
    );
}

/// The cache analysis and the consistency stage over a whole recorded run,
/// as `hwcal analyze` applies them.
fn reanalysed(mut p: Profile) -> (Profile, cache::CacheAnalysis) {
    let c = cache::analyze(&p).unwrap();
    p.caches = Some(c.levels.clone());
    p.memory = c.memory.clone();
    hwcal_analysis::consistency::reconcile(&mut p);
    (p, c)
}

/// Three `hwcal run`s on an AMD EPYC Zen 5 KVM guest (2 vCPUs; L1d 48 KiB,
/// L2 1 MiB, L3 32 MiB per CCD, a victim of L2 that does not replace in
/// LRU order; the TLB never sees 2 MiB pages): `tests/data/zen5-run-*.json`
/// (the same files as `../shared/reference/machines/zen5-2vcpu.run-*.json`,
/// beside the checkout).
/// In `a` the L3 share ends sharply near 19 MiB and memory is flat from 26
/// MiB; in `b` and `c` latency past the L3 climbs slowly to the sweep's
/// top (44, 89, 129 ns at 32, 64, 128 MiB) and never forms a memory
/// plateau. The analysis once took the L3's plateau for memory (11.5 ns,
/// marked ok) and a bump on the L2 edge for an L3. Every run must read 3
/// levels, an L3 of at least 8 MiB at 9–14 ns, and one memory latency
/// within 10% of the documented 256 MiB chase (or not `ok`).
#[test]
fn zen5_runs_read_three_levels_and_one_memory_latency() {
    for name in ["zen5-run-a.json", "zen5-run-b.json", "zen5-run-c.json"] {
        let (p, c) = reanalysed(support::load(name));
        assert_eq!(c.levels.len(), 3, "{name}: {:?}", c.levels);
        let (l1, l2, l3) = (&c.levels[0], &c.levels[1], &c.levels[2]);
        assert!(
            within(l1.size_bytes as f64, 49152.0, 0.125, 0.0),
            "{name}: {l1:?}"
        );
        assert!(
            within(l2.size_bytes as f64, 1048576.0, 0.125, 0.0),
            "{name}: {l2:?}"
        );
        assert!((l1.latency_cycles.unwrap() - 4.0).abs() < 0.3, "{name}: {l1:?}");
        assert!((l2.latency_cycles.unwrap() - 14.0).abs() < 0.5, "{name}: {l2:?}");
        let mib = l3.size_bytes as f64 / 1048576.0;
        assert!((8.0..=32.0).contains(&mib), "{name}: L3 {mib} MiB");
        assert!(l3.latency_ns > 9.0 && l3.latency_ns < 14.0, "{name}: {l3:?}");
        // The truth, not the run's own chase: a random 64 B-line chase
        // over 256 MiB of 4 KiB pages on this guest reads 150 ns (the
        // reference chase) to 157–159 ns (multichase, lat_mem_rd), page
        // walks included (peer-figures.md, machine 4); within 10% of
        // that, or not `ok`.
        let m = p.memory.as_ref().expect("a memory latency");
        assert_eq!(p.mem.as_ref().unwrap().size_bytes, 256 << 20, "{name}");
        assert!(
            (0.9 * 150.0..=1.1 * 159.0).contains(&m.latency_ns) || m.verdict == Verdict::Noisy,
            "{name}: {m:?}"
        );
        // Where the sweep reached no memory plateau, it says why.
        if c.memory.is_none() {
            assert!(
                c.notes
                    .iter()
                    .any(|n| n.code == "cache.no-memory" && n.text.contains("still climbs")),
                "{name}: {:?}",
                c.notes
            );
        }
        // The L2 DTLB holds 4096 entries (documented; this guest's CPUID
        // says 128, which no second level is). Its edge is soft: where the
        // step had not reached three quarters of the way up at the sweep's
        // top a note says so. Its figure is either within the tolerance of
        // 4096 or not `ok` (the half-way point read 4700–5000, `ok`).
        let t = tlb::analyze(&support::load(name)).unwrap();
        let stlb = tlb_level(&t.levels, 4096, 2);
        assert!(
            within(stlb.entries as f64, 4096.0, 0.125, 0.125) || stlb.verdict == Verdict::Noisy,
            "{name}: {stlb:?}"
        );
        let soft = t.notes.iter().any(|n| n.code == "tlb.l2-soft-edge");
        assert_eq!(soft, stlb.entries_high.is_none(), "{name}: {:?}", t.notes);
        // The MLP table is kept, and its single chase, short of memory, is said to be.
        assert_eq!(m.mlp.len(), 5, "{name}");
        let one = m.mlp[0].ns_per_load;
        if one < 0.9 * m.latency_ns {
            assert!(
                p.notes.iter().any(|n| n.code == "consistency.memory-mlp"),
                "{name}"
            );
        }
    }
}

/// The busy Zen 3 guest's recorded run
/// (`../shared/reference/machines/zen3-2vcpu.busy-a.json`): the host's
/// memory latency moved during the sweep (300–430 ns), and on 4 KiB pages
/// page walks spill into the caches as the working set grows; the sweep
/// found an "L4 210 MiB 167 ns", `ok`, where Zen 3 has none and the
/// machine states 3 levels, and read 275 ns over 1 GiB where the `mem`
/// chase read 386 ns over the same 1 GiB. No level past the three stated
/// is `ok`, and memory is not `ok`. Its L2 DTLB (2048 entries by CPUID
/// and AMD's documentation), where found, is within tolerance of 2048 or
/// not `ok`.
#[test]
fn zen3_busy_run_states_no_unstated_level_as_right() {
    let Some(p) = reference("zen3-2vcpu.busy-a.json") else {
        return;
    };
    let (p, c) = reanalysed(p);
    for l in c.levels.iter().filter(|l| l.level > 3) {
        assert_eq!(l.verdict, Verdict::Noisy, "{l:?}");
    }
    let m = p.memory.as_ref().expect("a memory latency");
    assert_eq!(m.verdict, Verdict::Noisy, "{m:?}");
    let t = tlb::analyze(&p).unwrap();
    if let Some(l) = t.levels.iter().find(|l| l.page_bytes == 4096 && l.level == 2) {
        assert!(
            within(l.entries as f64, 2048.0, 0.125, 0.125) || l.verdict == Verdict::Noisy,
            "{l:?}"
        );
    }
}

/// Two `hwcal run`s on an AMD EPYC Zen 4 KVM guest (family 25 model 17, 2
/// vCPUs; L1d 32 KiB / 4 cycles, L2 1 MiB / 14 cycles private, L3 32 MiB
/// per CCD shared, a victim of L2; the TLB never sees 2 MiB pages):
/// `tests/data/zen4-run-*.json`, from a batch of ten on a busy host. In `a`
/// the L3 share reads ~8.6 MiB; in `b` the L2 reads 714 KiB (4 KiB pages:
/// its frames collide in the physically indexed sets) and the L3 forms no
/// plateau of its own before memory. Neither shortfall may pass in silence:
/// a level short of what sysfs states carries the note that says so, and a
/// stated level without a plateau is reported missing.
#[test]
fn zen4_runs_name_every_shortfall() {
    const KIB: f64 = 1024.0;
    let has = |c: &cache::CacheAnalysis, code: &str| c.notes.iter().any(|n| n.code == code);
    for name in ["zen4-run-a.json", "zen4-run-b.json"] {
        let (p, c) = reanalysed(support::load(name));
        assert!((2..=3).contains(&c.levels.len()), "{name}: {:?}", c.levels);
        let (l1, l2) = (&c.levels[0], &c.levels[1]);
        assert!(
            within(l1.size_bytes as f64, 32.0 * KIB, 0.125, 0.125),
            "{name}: {l1:?}"
        );
        assert!((l1.latency_cycles.unwrap() - 4.0).abs() < 0.3, "{name}: {l1:?}");
        assert!((l2.latency_cycles.unwrap() - 14.0).abs() < 0.5, "{name}: {l2:?}");
        assert!(l2.size_bytes as f64 <= 1.125 * 1024.0 * KIB, "{name}: {l2:?}");
        if (l2.size_bytes as f64) < 0.875 * 1024.0 * KIB {
            assert!(has(&c, "cache.l2-short-private"), "{name}: {:?}", c.notes);
        }
        match c.levels.get(2) {
            Some(l3) => {
                let mib = l3.size_bytes as f64 / (1024.0 * KIB);
                assert!((4.0..=32.0).contains(&mib), "{name}: L3 {mib} MiB");
                assert!(l3.latency_ns > 10.0 && l3.latency_ns < 17.0, "{name}: {l3:?}");
                if mib < 28.0 {
                    assert!(has(&c, "cache.l3-short-shared"), "{name}: {:?}", c.notes);
                }
            }
            None => assert!(has(&c, "cache.l3-no-plateau"), "{name}: {:?}", c.notes),
        }
        // Memory latency is the chase's fastest slice (its slices wander
        // from 172 to 272 ns on the busy host, the window-by-window chase's
        // stay at 150-160: the slices' mean, 205 ns in `a`, is the host's
        // load as much as memory's); they are 10 ms slices whose fastest
        // three do not agree, so the figure is not repeated: noisy.
        let chase = p
            .raw_curve("mem.latency.t0")
            .unwrap()
            .points
            .iter()
            .map(|q| q.y)
            .fold(f64::INFINITY, f64::min);
        let m = p.memory.as_ref().expect("a memory latency");
        assert_eq!(m.latency_ns, chase, "{name}: {m:?}");
        assert!(m.latency_ns < p.mem.as_ref().unwrap().ns_per_op, "{name}");
        assert_eq!(m.verdict, Verdict::Noisy, "{name}: {m:?}");
        assert!(m.latency_ns > 100.0, "{name}: {m:?}");
    }
}

/// The recorded runs of other machines keep their structure and memory
/// figure through the consistency stage: where the `mem` chase is too
/// small to be the memory figure (Emerald Rapids: 256 MiB against a
/// 300 MiB nominal L3) the sweep's stays.
#[test]
fn the_consistency_stage_keeps_other_machines_figures() {
    for name in [
        "zen3-dense.json",
        "zen3-colour.json",
        "emr-live-long-l3.json",
        "emr-live-short-l3.json",
    ] {
        let p = support::load(name);
        let before = cache::analyze(&p).unwrap();
        let (after, c) = reanalysed(p);
        assert_eq!(before.levels.len(), c.levels.len(), "{name}");
        match (&before.memory, &after.memory) {
            (Some(b), Some(a)) if after.mem.is_none() => assert_eq!(a.latency_ns, b.latency_ns, "{name}"),
            (Some(_), Some(a)) => assert!(a.latency_ns > 60.0, "{name}: {a:?}"),
            (b, a) => assert_eq!(b.is_some(), a.is_some(), "{name}"),
        }
    }
}

/// The curves a plot draws are the ones the levels were found on, with and
/// without huge pages the TLB sees (the renderers ask for the curves, not
/// for a second level analysis).
#[test]
fn the_penalty_curves_are_the_analysed_ones() {
    let mut huge_seen = false;
    for f in [
        "zen3-dense.json",
        "zen4-run-a.json",
        "zen5-run-a.json",
        "tlb-1.json",
    ] {
        let p = support::load(f);
        let a = tlb::analyze(&p).unwrap();
        let (small, huge) = tlb::penalty_curves(&p).unwrap();
        assert!(!small.is_empty(), "{f}");
        assert_eq!((&small, &huge), (&a.small, &a.huge), "{f}");
        huge_seen |= !huge.is_empty();
    }
    assert!(huge_seen, "one recorded machine with 2 MiB pages the TLB sees");
    assert!(tlb::penalty_curves(&Profile::default()).is_none());
}

/// A line size only the dependent-pair test measured is stated only where
/// nothing contradicts it. Zen 5 run `c` has no L3 flush test, and its
/// pair test read 256 B where the L2's flush granule is 64 B (prefetchers):
/// the L3's 256 B was printed as its line, `ok`. The recorded Zen 3 run
/// (no flush test at all) read 256 B for an L1 that sysfs states as 64 B.
/// Neither is stated now, and a note says why; lines the flush test
/// measured, and pair lines that agree with the stated one, stay.
#[test]
fn a_pair_line_that_is_contradicted_is_not_stated() {
    let c = cache::analyze(&support::load("zen5-run-c.json")).unwrap();
    let l3 = &c.levels[2];
    assert_eq!(l3.line_bytes, None, "{l3:?}");
    assert!(c
        .notes
        .iter()
        .any(|n| n.code == "cache.l3-line-unconfirmed" && n.text.contains("at L2 (256 B against 64 B")));
    assert_eq!(c.levels[0].line_bytes, Some(64));
    assert_eq!(c.levels[0].line_method.as_deref(), Some("clflush"));
    for name in ["zen5-run-a.json", "zen5-run-b.json"] {
        let c = cache::analyze(&support::load(name)).unwrap();
        assert!(
            c.levels.iter().all(|l| l.line_bytes == Some(64)),
            "{name}: {:?}",
            c.levels
        );
    }
    if let Some(p) = reference("zen3-2vcpu.run.json") {
        let c = cache::analyze(&p).unwrap();
        assert_eq!(c.levels[0].line_bytes, None, "{:?}", c.levels[0]);
        assert!(c
            .notes
            .iter()
            .any(|n| n.code == "cache.l1-line-unconfirmed" && n.text.contains("the CPU states 64 B")));
    }
    if let Some(p) = reference("emr-16vcpu.run.json") {
        let c = cache::analyze(&p).unwrap();
        assert!(
            c.levels.iter().all(|l| l.line_bytes == Some(64)),
            "{:?}",
            c.levels
        );
    }
}

/// The recorded Zen 3 guest (`zen3-run.json`, from
/// `shared/reference/machines/zen3-2vcpu.run.json`: L1 DTLB 64, L2 DTLB
/// 2048 documented) ran its TLB probe against a huge-page baseline that
/// had TLB misses of its own, and no dense one: the L1 step was lost and
/// the L2's read as an "L1 TLB of 2059 entries", `ok`. No level read
/// against such a baseline is `ok`.
#[test]
fn tlb_levels_against_a_baseline_with_misses_are_not_ok() {
    let p = support::load("zen3-run.json");
    let t = hwcal_analysis::tlb::analyze(&p).expect("TLB curves");
    assert!(
        t.notes.iter().any(|n| n.code == "tlb.baseline-has-misses"),
        "{:?}",
        t.notes
    );
    assert!(!t.levels.is_empty());
    for l in &t.levels {
        assert_eq!(l.verdict, Verdict::Noisy, "{l:?}");
    }
}
