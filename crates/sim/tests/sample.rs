//! A fixed sample of the simulated corpus through the real analysis, as
//! part of `cargo test`: every figure of every machine is right, flagged
//! or missed, never confidently wrong — except the failures the
//! simulator has found and that are not fixed yet, each listed in
//! `KNOWN` by machine and figure (none now), so that a new one fails the
//! test; a fixed sample of the generated corpus, never confidently wrong
//! either; and each failure it found, rebuilt as a test of its own.

use hwcal_sim::corpus;
use hwcal_sim::score::{score, score_sources, Outcome, Source};

/// Found by the simulator, not fixed yet: (corpus index, figure).
const KNOWN: &[(usize, &str)] = &[];

#[test]
fn a_sample_of_the_corpus_is_never_confidently_wrong() {
    // Every tenth machine: 51, across every core, pages and condition.
    let step = corpus::len() / 50;
    let indices: Vec<usize> = (0..corpus::len()).step_by(step).collect();
    assert!(indices.len() >= 50);
    let t = std::time::Instant::now();
    let card = score(&indices, 2, &|_| {});
    println!("{}", card.markdown());
    assert_eq!(card.machines, indices.len(), "{:?}", card.failed);
    let new: Vec<&(String, String, f64, f64)> = card
        .wrong
        .iter()
        .filter(|(m, f, _, _)| !KNOWN.iter().any(|(i, k)| m.ends_with(&format!("#{i}")) && k == f))
        .collect();
    assert!(new.is_empty(), "confidently wrong: {new:?}");
    // Every private level and memory right on most quiet machines with
    // huge pages (no page colouring to smear an edge).
    let quiet_huge: usize = card
        .rows
        .iter()
        .filter(|((_, c), _)| c == "huge quiet")
        .map(|(_, r)| r[Outcome::Right as usize])
        .sum();
    let all: usize = card
        .rows
        .iter()
        .filter(|((_, c), _)| c == "huge quiet")
        .map(|(_, r)| r.iter().sum::<usize>())
        .sum();
    assert!(all > 0 && quiet_huge * 100 >= 95 * all, "{quiet_huge} of {all}");
    eprintln!("{} machines in {:.1} s", card.machines, t.elapsed().as_secs_f64());
}

/// The generated corpus's sample: the first 100 machines of seed 1 that
/// are quick to simulate — on huge pages, on 16 or 64 KiB pages, or with
/// no level over 128 MiB (a machine whose sweep runs to gigabytes of
/// 4 KiB pages takes the simulator seconds: it places every page).
fn generated_sample() -> Vec<usize> {
    (0..)
        .filter(|&i| {
            let (m, _) = corpus::generated(1, i);
            m.pages == hwcal_sim::Pages::Huge || m.page > 4096 || m.levels.iter().all(|l| l.size <= 128 << 20)
        })
        .take(100)
        .collect()
}

/// The generated sample is held to none confidently wrong: the analysis
/// meets machines nobody fitted it to here, and its ceiling of confidently
/// wrong figures came down from 115 (when the simulator first ran the real
/// plans) to 0 (issue 40); a new failure fails here (the test prints it).
#[test]
fn a_sample_of_the_generated_corpus_is_scored_and_never_confidently_wrong() {
    let sample = generated_sample();
    let t = std::time::Instant::now();
    let sources: Vec<Source> = sample.iter().map(|&i| Source::Generated(1, i)).collect();
    let card = score_sources(&sources, 2, &|_| {});
    println!("{}", card.markdown());
    assert_eq!(card.machines, sample.len(), "{:?}", card.failed);
    assert!(card.failed.is_empty(), "{:?}", card.failed);
    // The sample holds two-, three- and four-level machines, base and huge pages.
    for k in ["2L", "3L", "4L"] {
        assert!(
            card.shapes.keys().any(|s| s.starts_with(k)),
            "no {k}: {:?}",
            card.shapes.keys()
        );
    }
    assert!(
        card.wrong.is_empty(),
        "{} confidently wrong: {:#?}",
        card.wrong.len(),
        card.wrong
    );
    eprintln!(
        "{} generated machines in {:.1} s, {} confidently wrong",
        card.machines,
        t.elapsed().as_secs_f64(),
        card.wrong.len()
    );
}

/// The failure the simulator found (a Neoverse V2 guest, 4 KiB pages, a
/// moving L3 share, corpus machine 444 before the L1 was modelled as
/// virtually indexed): the 48-entry L1 TLB's step was not seen, the L2
/// TLB's took its number (1506 entries reported as the L1 TLB against
/// CPUID's 48) and stayed `ok`. Rebuilt here on purpose: the same machine
/// with an L1 TLB whose misses cost next to nothing, so its step cannot be
/// seen. A level more than twice or under half its stated size is noisy.
/// The judge pairs TLB levels by entries, not by number: the true L1 is
/// missed, the reported level (named L1) is the L2's, and flagged.
#[test]
fn a_tlb_level_that_took_a_missed_levels_number_is_not_ok() {
    let (mut m, _) = corpus::machine(444);
    m.tlbs[0].miss_ns = 0.01;
    let p = hwcal_sim::score::calibrate(&m).unwrap();
    let judged = hwcal_sim::score::judge(&m, &p);
    let reported = p.tlbs.as_deref().unwrap_or(&[]);
    assert!(
        reported.iter().any(|t| t.level == 1 && t.entries > 500),
        "{reported:?}: the L2 step named L1"
    );
    let l1 = judged.iter().find(|j| j.figure == "TLB L1 entries").unwrap();
    assert_eq!(l1.outcome, Outcome::Missed, "{judged:?}");
    let l2 = judged.iter().find(|j| j.figure == "TLB L2 entries").unwrap();
    assert!(l2.got.is_some_and(|e| e > 500.0), "{l2:?}");
    assert_eq!(l2.outcome, Outcome::Flagged, "{judged:?}");
    assert!(
        judged.iter().all(|j| j.outcome != Outcome::ConfidentlyWrong),
        "{judged:?}"
    );
}

/// The models of the recorded machines (`../shared/reference/machines`,
/// where present) reproduce their L1 edge within one sweep step, the
/// curves of quiet recordings point by point within 10% at the median,
/// and the Zen 5 L3's slow climb within a step and a half (the README's table,
/// `hwcal sim calibrate`, says where they do not). A busy recording (its
/// levels noisy: Emerald Rapids' run-b) is held to its L1 edge only.
#[test]
fn models_of_the_recorded_machines_follow_their_sweeps() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/reference/machines");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("skipped: no {}", dir.display());
        return;
    };
    let mut seen = 0;
    for e in entries.flatten() {
        let path = e.path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let p = hwcal_model::parse_profile_unchecked(&std::fs::read(&path).unwrap()).unwrap();
        let c = hwcal_sim::calibration::calibrate(&p).unwrap_or_else(|| panic!("{}", path.display()));
        let l1 = c
            .edges
            .iter()
            .find(|e| e.0 == 1)
            .unwrap_or_else(|| panic!("{}", path.display()));
        assert!(l1.3 <= 1.0, "{}: L1 edge {l1:?}", path.display());
        let busy = p
            .caches
            .iter()
            .flatten()
            .any(|l| l.verdict == hwcal_model::Verdict::Noisy);
        assert!(busy || c.median_diff < 0.10, "{}: {c:?}", path.display());
        if c.model.core == "Zen 5" {
            let l3 = c.edges.iter().find(|e| e.0 == 3);
            assert!(
                l3.is_some_and(|e| e.3 <= 1.5),
                "{}: L3 edge {l3:?}",
                path.display()
            );
        }
        seen += 1;
    }
    assert!(seen >= 3, "{seen} recorded machines");
}

/// The first machine of the corpus whose name starts with `prefix`.
fn machine(prefix: &str) -> hwcal_sim::Model {
    (0..corpus::len())
        .map(|i| corpus::machine(i).0)
        .find(|m| m.name.starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix} machine"))
}

fn judged(m: &hwcal_sim::Model) -> (hwcal_model::Profile, Vec<hwcal_sim::score::Judged>) {
    let p = hwcal_sim::score::calibrate(m).unwrap();
    let j = hwcal_sim::score::judge(m, &p);
    (p, j)
}

fn outcome(j: &[hwcal_sim::score::Judged], figure: &str) -> Outcome {
    j.iter()
        .find(|x| x.figure == figure)
        .unwrap_or_else(|| panic!("no {figure}: {j:?}"))
        .outcome
}

/// Found by the simulator: on 4 KiB pages the idle-gap chase at the L3's
/// plateau paid the page walks the sweep's plateau had taken out, and an
/// Emerald Rapids guest's L2 miss latency read 62 ns for a 33 ns step,
/// `ok`. The gap points now lose the TLB's share as the sweep's do.
/// Rebuilt with a second TLB level of 1024 entries (4 MiB), so that the
/// point on the L3 (2.5 times the L2 at least) pays page walks.
#[test]
fn a_miss_latency_on_base_pages_has_the_page_walks_taken_out() {
    let mut m = machine("emr/4k/quiet/");
    m.tlbs[1].entries = 1024;
    let (_, j) = judged(&m);
    assert_eq!(outcome(&j, "L2 miss latency"), Outcome::Right, "{j:?}");
    assert_eq!(outcome(&j, "L1 miss latency"), Outcome::Right, "{j:?}");
}

/// Found by the simulator: where the sweep did not find the L3 (a moving
/// share on a Raptor Lake guest), the L2's step went to memory and was
/// reported as its miss latency and replace time (93 ns for 12), `ok`.
/// Rebuilt on purpose: an L3 nearly as slow as memory has no plateau of
/// its own; the L2 then states no step, and says why.
#[test]
fn a_step_past_an_unfound_level_is_not_the_levels() {
    let mut m = machine("rpl/huge/quiet/");
    m.levels[2].ns = 0.97 * m.memory_ns;
    let (p, j) = judged(&m);
    assert!(p.caches.as_ref().is_some_and(|c| c.len() == 2), "{:?}", p.caches);
    assert_eq!(outcome(&j, "L2 miss latency"), Outcome::Missed, "{j:?}");
    assert_eq!(outcome(&j, "L2 replace time"), Outcome::Missed, "{j:?}");
    assert!(
        p.notes.iter().any(|n| n.code == "cache.l2-step-unmeasured"),
        "{:?}",
        p.notes
    );
}

/// Found by the simulator: a Granite Rapids guest on 4 KiB pages with a
/// moving L3 share (adaptive insertion keeps part of the chase at four
/// times the L3, and the moving share hid the climb) read memory latency
/// 157 ns for 180, `ok`. The single chase of the MLP table, over a larger
/// footprint, read above the plateau and its interval: now a climb, noisy.
#[test]
fn a_memory_plateau_the_larger_chase_contradicts_is_not_ok() {
    let (m, _) = corpus::machine(339);
    assert!(
        m.name.starts_with("gnr/4k/moving-share/"),
        "the corpus changed: {}",
        m.name
    );
    let (p, j) = judged(&m);
    assert_ne!(outcome(&j, "memory latency"), Outcome::ConfidentlyWrong, "{j:?}");
    // Right, or flagged by the larger chase (the real plan's sweep may
    // now reach memory itself).
    assert!(
        outcome(&j, "memory latency") == Outcome::Right
            || p.notes.iter().any(|n| n.code == "consistency.memory-mlp"),
        "{:?}",
        p.notes
    );
}

/// Found by the simulator: an Emerald Rapids model whose second TLB level
/// is only four times its first (256 entries, as on older and smaller
/// cores) had its TLB levels misread (195 entries for the first, no
/// second), so the TLB share taken out of the sweep was more than the
/// sweep's own latency and the L2 was reported at some 260 MiB, `ok`. A
/// share that would leave a point under L1's latency is now not taken
/// out, and the levels are noisy (`cache.tlb-share-overshoot`).
#[test]
fn close_tlb_levels_do_not_make_a_confidently_wrong_cache() {
    let mut m = machine("emr/4k/quiet/");
    m.tlbs[1].entries = 256;
    let (p, j) = judged(&m);
    let wrong: Vec<_> = j
        .iter()
        .filter(|x| x.outcome == Outcome::ConfidentlyWrong)
        .collect();
    assert!(wrong.is_empty(), "{wrong:?}");
    assert!(
        p.notes.iter().any(|n| n.code == "cache.tlb-share-overshoot"),
        "{:?}",
        p.notes
    );
}

/// Found by the generated corpus (seed 1, machine 887: three levels on
/// 16 KiB pages): the TLB's share of the sweep was modelled for 4 KiB pages
/// only, so past the TLB's reach the page walks stayed in the curve and
/// made a level of their own ("L3 15.9 MiB 21.7 ns", `ok`, beside an L4
/// of 115 MiB). The share is now modelled for the base page the TLB
/// curves were measured with; the walks make no level.
#[test]
fn page_walks_on_16k_pages_make_no_level() {
    let (m, _) = corpus::generated(1, 887);
    assert_eq!(m.page, 16384, "{}", m.name);
    let (p, j) = judged(&m);
    assert_eq!(outcome(&j, "cache levels"), Outcome::Right, "{:?}", p.caches);
    assert_eq!(outcome(&j, "L3 latency (shared)"), Outcome::Right, "{j:?}");
    assert!(
        p.notes.iter().any(|n| n.code == "cache.tlb-share"),
        "{:?}",
        p.notes
    );
}

/// Found by the generated corpus (seed 1, machine 397: four levels on
/// 4 KiB pages, sysfs stating a private L2 of 1 MiB): L1's replacement
/// keeps part of an overflowing chase, and its slow fall-off read as an
/// "L2" of 108 KiB, `ok` (the real L2 then reported as L3). A private
/// level short of its stated size was judged on base pages only where a
/// page-colour fit had sized its edge; unfitted, the shortfall is not
/// confirmed either, and the level is noisy.
#[test]
fn a_level_short_of_its_stated_private_size_on_base_pages_is_not_ok() {
    let (m, _) = corpus::generated(1, 397);
    assert_eq!(m.page, 4096, "{}", m.name);
    let (p, j) = judged(&m);
    let l2 = &p.caches.as_ref().unwrap()[1];
    assert!(l2.size_bytes < 512 << 10, "{l2:?}");
    assert_eq!(l2.verdict, hwcal_model::Verdict::Noisy, "{l2:?}");
    assert_ne!(
        outcome(&j, "cache levels"),
        Outcome::ConfidentlyWrong,
        "{:?}",
        p.caches
    );
}

/// Found by the generated corpus (seed 1, machine 119: a 64-entry L1 TLB
/// whose misses cost little before a 512-entry L2, CPUID masked): the two
/// steps ran together into one level of 340 entries from 222 to 621
/// pages, `ok`, that the judge pairs with the L2 (34% short). A first
/// level's step is narrow (it is fully associative); one spread over more
/// than twice its start, with no stated figure to confirm it, is noisy.
#[test]
fn a_first_tlb_level_whose_step_spreads_over_an_octave_is_not_ok() {
    let (m, _) = corpus::generated(1, 119);
    let (p, j) = judged(&m);
    let l1 = &p.tlbs.as_ref().unwrap()[0];
    assert_eq!(l1.verdict, hwcal_model::Verdict::Noisy, "{l1:?}");
    assert!(p.notes.iter().any(|n| n.code == "tlb.l1-spread"), "{:?}", p.notes);
    assert!(
        j.iter()
            .filter(|x| x.figure.starts_with("TLB"))
            .all(|x| x.outcome != Outcome::ConfidentlyWrong),
        "{j:?}"
    );
}

/// Found by the generated corpus (seed 1, machine 92: sysfs absent, an L1
/// of 48 KiB whose replacement keeps part of the chase up to an L2 of
/// about four times it, so the L2 has no plateau of its own): L1 read
/// 55.1 KiB, and the L3's step its miss latency, `ok`. A virtually
/// indexed L1 cannot hold more than where it began to climb; read so, the
/// next level found is not the one that served its misses, and L1 is
/// noisy. Since the eviction sets place that L2 (a level of its own right
/// after L1), L1's edge is read against it as well; the two readings (47
/// and 55 KiB) part, and L1 is noisy for that (`cache.l1-edge-moved`).
#[test]
fn an_l1_seen_holding_more_than_where_it_climbed_is_not_ok() {
    let (m, _) = corpus::generated(1, 92);
    let (p, j) = judged(&m);
    assert!(
        p.notes
            .iter()
            .any(|n| n.code == "cache.l1-edge-overheld" || n.code == "cache.l1-edge-moved"),
        "{:?}",
        p.notes
    );
    for f in ["L1 size", "L1 miss latency", "L1 replace time"] {
        assert_ne!(outcome(&j, f), Outcome::ConfidentlyWrong, "{f}: {j:?}");
    }
}

/// Found by the generated corpus (seed 1, machine 194: a private 1 MiB
/// 16-way L2 with pseudo-LRU replacement on 4 KiB pages, quiet): the
/// page-colour fit modelled random replacement only, could not explain
/// an edge that keeps nothing of an overfull set, and the L2 read 742 KiB
/// from one placement, noisy. The fit now tries LRU-like, random and
/// thrash-resistant replacement and keeps the capacity the edge allows.
#[test]
fn a_pseudo_lru_l2_on_base_pages_is_sized_by_its_page_colours() {
    let (m, _) = corpus::generated(1, 194);
    assert_eq!(m.page, 4096, "{}", m.name);
    assert_eq!(m.levels[1].replacement, hwcal_sim::model::Replacement::Plru);
    let (p, j) = judged(&m);
    assert_eq!(outcome(&j, "L2 size"), Outcome::Right, "{:?}", p.caches);
    let l2 = &p.caches.as_ref().unwrap()[1];
    assert_eq!(l2.verdict, hwcal_model::Verdict::Ok, "{l2:?}");
    assert!(
        p.notes
            .iter()
            .any(|n| n.code == "cache.l2-colour-fit" && n.text.contains("LRU-like")),
        "{:?}",
        p.notes
    );
}

/// Found by the generated corpus (seed 1, machine 1682: one vCPU, so sysfs
/// shows its 24 MiB L3 as private too): the placements were cut to the
/// L3's edge for both levels, the buffer held two, and the 1 MiB L2's
/// edge averaged over two draws read 574 KiB, noisy. Each level's
/// placements are now cut to its own edge.
#[test]
fn a_small_level_beside_a_large_private_one_gets_its_own_placements() {
    let (m, _) = corpus::generated(1, 1682);
    assert_eq!(m.vcpus, 1, "{}", m.name);
    let (p, j) = judged(&m);
    let colour = p.raw_curve(hwcal_model::curve::CACHE_COLOUR).unwrap();
    let l2 = m.levels[1].size as f64;
    let on_l2 = colour.points.iter().filter(|q| q.x <= 2.5 * l2);
    assert!(on_l2.clone().count() > 0);
    for q in on_l2 {
        assert!(q.samples.len() >= 4, "{q:?}");
    }
    assert_eq!(outcome(&j, "L2 size"), Outcome::Right, "{:?}", p.caches);
}

/// Found by the generated corpus (seed 1, machine 1207: huge pages, sysfs
/// absent, a 1.5 MiB L2 with adaptive insertion before a 6 MiB L3 with no
/// plateau of its own): the L2 read as holding 1.8 MiB against the 58 ns
/// of the next plateau found, where its curve was already 23% up at
/// 1.59 MiB, and its step of 54 ns to that plateau stood as its miss
/// latency, `ok`. On huge pages no set overflows before the capacity: a
/// level read larger than where it began to climb is noisy.
#[test]
fn a_level_read_larger_than_where_it_began_to_climb_is_not_ok() {
    let (m, _) = corpus::generated(1, 1207);
    assert_eq!(m.pages, hwcal_sim::model::Pages::Huge, "{}", m.name);
    let (p, j) = judged(&m);
    let l2 = &p.caches.as_ref().unwrap()[1];
    assert_eq!(l2.verdict, hwcal_model::Verdict::Noisy, "{l2:?}");
    assert!(
        p.notes.iter().any(|n| n.code == "cache.l2-overheld"),
        "{:?}",
        p.notes
    );
    for figure in ["L2 size", "L2 miss latency", "L2 replace time"] {
        assert_ne!(outcome(&j, figure), Outcome::ConfidentlyWrong, "{figure}: {j:?}");
    }
}

/// Found by the generated corpus (seed 7, machine 835: 4 KiB pages, a
/// 48-entry L1 TLB read as 55, noisy): the 1.06 ns of TLB misses that
/// reading took off the L2's plateau left an L2 of 2.80 ns for 3.23, `ok`,
/// and L1's step to it short by as much. A latency corrected by TLB
/// figures that are not ok, by more than it is resolved to, is noisy.
#[test]
fn a_latency_corrected_by_unconfirmed_tlb_figures_is_not_ok() {
    let (m, _) = corpus::generated(7, 835);
    let (p, j) = judged(&m);
    assert!(
        p.notes.iter().any(|n| n.code == "cache.l2-tlb-share-unconfirmed"),
        "{:?}",
        p.notes
    );
    for figure in ["L2 latency", "L1 miss latency", "L1 replace time"] {
        assert_ne!(outcome(&j, figure), Outcome::ConfidentlyWrong, "{figure}: {j:?}");
    }
}

/// Found once the generated corpus stated a CPU model's cache table (seed
/// 1, machine 1549: a 1 MiB LRU L2 stated as QEMU's EPYC models have it,
/// 512 KiB of 8 ways): on 4 KiB pages it was seen to hold 483 KiB, within
/// tolerance of the stated size, `ok`. At 609 KiB it still hit 91% of the
/// loads, where no 512 KiB cache of 8 ways holds more than 78% on random
/// pages under any replacement: the stated figure is contradicted. The
/// eviction sets count 1 MiB (32 colours × 8 ways, every page sorted); the
/// search read the level's hits at the sweep's L2 latency, and a level of
/// those colours and ways explains the sweep's early edge, so the count is
/// that L2's size — its true one — and the stated 512 KiB contradicts it:
/// the L2 is 1 MiB and `noisy`, and no level is inserted beside it.
#[test]
fn an_l2_stated_from_a_cpu_models_table_is_not_confirmed_by_it() {
    let (m, _) = corpus::generated(1, 1549);
    assert_eq!(
        m.guest.sysfs,
        hwcal_sim::model::Sysfs::CpuModel {
            l2: 512 << 10,
            ways: 8
        },
        "{}",
        m.name
    );
    assert_eq!((m.page, m.levels[1].size, m.levels[1].ways), (4096, 1 << 20, 8));
    let (p, j) = judged(&m);
    assert_ne!(outcome(&j, "L2 size"), Outcome::ConfidentlyWrong, "{j:?}");
    let caches = p.caches.as_ref().unwrap();
    let l2 = &caches[1];
    assert_eq!(l2.size_bytes, 1 << 20, "{:?}", p.notes);
    assert_ne!(l2.verdict, hwcal_model::Verdict::Ok, "{:?}", p.notes);
    assert!(
        p.notes.iter().any(|n| n.code == "cache.l2-over-nominal"),
        "{:?}",
        p.notes
    );
    assert!(
        caches.iter().all(|c| c.size_bytes != 1 << 20 || c.level == 2),
        "{caches:?}"
    );
}

/// Seed 1, machine 511: an L2 of 2.5 MiB (20 ways, random) stated at the
/// 4 MiB of QEMU's legacy table, beside an L3 of 8 MiB whose moving share
/// left no plateau. The page-colour fit of the edge, which ran to memory
/// through the unfound L3, explained it at 4 MiB to 5.4 MiB and confirmed
/// the stated 4 MiB, `ok`. A fit over an edge holding a missing level's
/// hits confirms nothing.
#[test]
fn a_colour_fit_through_an_unfound_level_confirms_nothing() {
    let (m, _) = corpus::generated(1, 511);
    assert_eq!(m.levels[1].size, 2560 << 10, "{}", m.name);
    let (p, j) = judged(&m);
    assert_ne!(
        outcome(&j, "L2 size"),
        Outcome::ConfidentlyWrong,
        "{:?}",
        p.caches
    );
    assert!(
        p.notes
            .iter()
            .any(|n| n.code == "cache.l2-colour-through-missing"),
        "{:?}",
        p.notes
    );
}

/// Seed 1, machine 1522: an LRU L2 of 1.25 MiB, 20 ways, on 16 KiB pages,
/// has four page colours, and six placements' mean stayed 6.3% from the
/// LRU model, over the fixed 6% a fit was held to, where the placements'
/// own standard error was 3.7%: read 877 KiB from one placement, noisy. A
/// misfit within twice that scatter is the draws' luck.
#[test]
fn an_l2_of_few_page_colours_is_sized_within_its_placements_scatter() {
    let (m, _) = corpus::generated(1, 1522);
    assert_eq!((m.page, m.levels[1].ways), (16384, 20), "{}", m.name);
    let (p, j) = judged(&m);
    assert_eq!(outcome(&j, "L2 size"), Outcome::Right, "{:?}", p.caches);
}

/// Seed 1, machine 1911: a moving share slowed the MLP table's single
/// chase, and 16 chains read 18.8 times it, `ok` with memory. No 16
/// chases overlap more than 16 misses. (Its L4 of 69.7 ns, read 68.3 by
/// its plateau and 69.9 by its cold laps, leaves the 104 ns memory less
/// than 1.5 times it, and memory is left out with its table; where it
/// stands, the table is noisy.)
#[test]
fn a_speed_up_beyond_its_chains_is_not_ok() {
    let (m, _) = corpus::generated(1, 1911);
    let (p, j) = judged(&m);
    assert_ne!(outcome(&j, "MLP (16 chains)"), Outcome::ConfidentlyWrong);
    let Some(memory) = p.memory.as_ref() else {
        assert!(p.notes.iter().any(|n| n.code == "consistency.memory-floor"));
        return;
    };
    let mlp = &memory.mlp;
    assert!(mlp.iter().any(|q| q.speedup > f64::from(q.chains)), "{mlp:?}");
    assert!(
        mlp.iter().all(|q| q.verdict == Some(hwcal_model::Verdict::Noisy)),
        "{mlp:?}"
    );
    assert!(p.notes.iter().any(|n| n.code == "cache.mlp-superlinear"));
}

/// Seed 1, machine 394 (a 96 KiB L1, 512 KiB L2 on 4 KiB pages) and seed
/// 7, machine 1865 (a moving share): the coarse sweep found no L2 plateau
/// between L1 and the L3, so the quarter crossing toward the next plateau
/// found lay at the L2's far edge, L1's own end was never refined, and L1
/// read 80.6 KiB from the last point before a jump (seed 7: `ok`, 16%
/// short). The sweep now also refines where the curve first rises a
/// quarter above L1's plateau.
#[test]
fn l1s_end_is_refined_when_no_level_between_was_found_yet() {
    for (seed, i) in [(1, 394), (7, 1865)] {
        let (m, _) = corpus::generated(seed, i);
        let (p, j) = judged(&m);
        assert_eq!(
            outcome(&j, "L1 size"),
            Outcome::Right,
            "{} {:?}",
            m.name,
            p.caches
        );
    }
}

/// A run inside a cgroup whose memory limit leaves 1.2 GiB (issue 41: a
/// full run once peaked at 5.6 GB and stopped under `ulimit -v 2 GiB`):
/// the `mem` section sizes its buffers within it and says that its chase
/// ran over less than the usual gigabyte.
#[test]
fn a_run_within_a_memory_limit_says_its_chase_is_smaller() {
    let (mut m, _) = corpus::machine(7);
    m.guest.memory_limit = Some(1200 << 20);
    let p = hwcal_sim::score::calibrate_sections(&m, &["mem"]).unwrap();
    let mem = p.mem.as_ref().expect("the mem section ran");
    assert!(mem.size_bytes <= 600 << 20, "{}", mem.size_bytes);
    assert!(
        p.notes.iter().any(|n| n.code == "mem.chase_smaller"),
        "{:?}",
        p.notes.iter().map(|n| &n.code).collect::<Vec<_>>()
    );
    // Without the limit, no such note.
    let free = hwcal_sim::score::calibrate_sections(&corpus::machine(7).0, &["mem"]).unwrap();
    assert!(free.notes.iter().all(|n| n.code != "mem.chase_smaller"));
}

/// Found by seed 13, a seed nobody fitted against (machine 1876: huge
/// pages, sysfs absent, a 2.5 MiB random L2 under an 8 MiB L3 and a 64 MiB
/// victim L4, neither with a flat plateau): the L2 read 2.87 MiB, `ok`, with
/// a 93 ns step to memory, while the curve read 8.3 ns at 5 MiB — less than
/// the L1 and L2 found, with memory behind them, can give under any
/// policy. Machine 1947 (4 KiB pages, its sysfs a CPU model's table) is the
/// same shape on base pages: a 2.9 MiB level whose step read 58 ns over an
/// unfound 16 MiB L3.
#[test]
fn a_curve_faster_than_the_levels_found_can_serve_is_a_level_between() {
    for (i, level) in [(1876, 2), (1947, 3)] {
        let (m, _) = corpus::generated(13, i);
        let (p, j) = judged(&m);
        let l = &p.caches.as_ref().unwrap()[level - 1];
        assert_eq!(l.verdict, hwcal_model::Verdict::Noisy, "{}: {l:?}", m.name);
        let code = format!("cache.l{level}-served-between");
        assert!(
            p.notes.iter().any(|n| n.code == code),
            "{}: {:?}",
            m.name,
            p.notes
        );
        for figure in ["L2 size", "L2 miss latency", "L2 replace time"] {
            assert_ne!(
                outcome(&j, figure),
                Outcome::ConfidentlyWrong,
                "{}: {figure}: {j:?}",
                m.name
            );
        }
    }
}

/// Found by seed 13 (machine 1108: 4 KiB pages, heavy spikes): the L2's
/// plateau stopped at 81 KiB while the curve went on climbing to 4.55 ns
/// inside the level's own half, and the L2 read 3.87 ns, `ok`, for 4.54,
/// with L1's steps short by as much. A plateau that stops short is read on
/// as far as half its level's size, where it is seen to slope; the cold
/// laps then give the latency (4.55 ns), and the L1 step is read to it.
#[test]
fn a_plateau_that_stops_short_is_judged_over_its_levels_own_half() {
    let (m, _) = corpus::generated(13, 1108);
    let (p, j) = judged(&m);
    assert!(
        p.notes
            .iter()
            .any(|n| n.code == "cache.l2-cold" && n.text.contains("slopes")),
        "{:?}",
        p.notes
    );
    assert_eq!(outcome(&j, "L2 latency"), Outcome::Right, "{j:?}");
    for figure in ["L2 latency", "L1 miss latency", "L1 replace time"] {
        assert_ne!(outcome(&j, figure), Outcome::ConfidentlyWrong, "{figure}: {j:?}");
    }
}

/// Found by seed 13 (machine 199: huge pages, a moving share): a 128 MiB
/// victim L4 under a 16 MiB L3 read 52.3 ns, `ok`, for 57.7, from a
/// plateau of 49–73 MiB scattered between 46 and 54 ns, where the 18 MiB
/// below could still have served enough of it to hide that much; machine
/// 867 (4 KiB pages, very quiet) likewise read its 16 MiB L3 at 12.4 ns for
/// 14.9 from a short plateau over a 1.5 MiB L2.
/// Machine 199's L4 now has its cold laps, which read it without the L3's
/// share (57.9 ns): it is right; machine 867's L3 is still noisy.
#[test]
fn a_plateau_that_cannot_pin_its_latency_is_not_ok() {
    for (i, level, figure) in [(199, 4, "L4 latency (shared)"), (867, 3, "L3 latency (shared)")] {
        let (m, _) = corpus::generated(13, i);
        let (p, j) = judged(&m);
        let l = &p.caches.as_ref().unwrap()[level - 1];
        let by_laps = p.notes.iter().any(|n| n.code == format!("cache.l{level}-cold"));
        if by_laps {
            assert_eq!(outcome(&j, figure), Outcome::Right, "{}: {j:?}", m.name);
        } else {
            assert_eq!(
                l.verdict,
                hwcal_model::Verdict::Noisy,
                "{}: {l:?} {:?}",
                m.name,
                p.notes
            );
        }
        assert_eq!(by_laps, i == 199, "{}: {:?}", m.name, p.notes);
        assert_ne!(
            outcome(&j, figure),
            Outcome::ConfidentlyWrong,
            "{}: {j:?}",
            m.name
        );
    }
}

/// Found by seeds 13 and 29 (machines 733 and 365; 313): a set-associative
/// L2 TLB whose first sets overflowed long before its entries were used
/// made a step of its own — a "level" of 173–237 entries at +0.7–1.9 ns
/// after an L1 DTLB step of +1.2–2.7 ns, `ok`, with sysfs silent. A step
/// smaller than the one before it is no structure's hit time.
#[test]
fn a_tlb_step_smaller_than_the_one_before_is_no_level() {
    for (seed, i) in [(13, 733), (13, 365), (29, 313)] {
        let (m, _) = corpus::generated(seed, i);
        let (p, j) = judged(&m);
        let l2 = &p.tlbs.as_ref().unwrap()[1];
        assert_eq!(l2.verdict, hwcal_model::Verdict::Noisy, "{}: {l2:?}", m.name);
        assert!(
            p.notes.iter().any(|n| n.code == "tlb.l2-step-shrinks"),
            "{}: {:?}",
            m.name,
            p.notes
        );
        assert_ne!(
            outcome(&j, "TLB levels"),
            Outcome::ConfidentlyWrong,
            "{}: {j:?}",
            m.name
        );
    }
}

/// Found by seed 13 (machines 337 and 983, 4 KiB pages): an L3 read inside
/// the L2 TLB's edge, its latency corrected by TLB figures `ok` within 5%
/// — 11.17 ns for 10.37 — or by a correction that left the true L2's
/// plateau standing for the L3 (3.6 ns for 16.1). Entries within their
/// tolerance move such a correction by more than 5% of the latency.
#[test]
fn a_latency_read_inside_a_tlb_edge_is_not_ok() {
    for i in [337, 983] {
        let (m, _) = corpus::generated(13, i);
        let (p, j) = judged(&m);
        let l3 = &p.caches.as_ref().unwrap()[2];
        assert_eq!(l3.verdict, hwcal_model::Verdict::Noisy, "{}: {l3:?}", m.name);
        assert_ne!(
            outcome(&j, "L3 latency (shared)"),
            Outcome::ConfidentlyWrong,
            "{}: {j:?}",
            m.name
        );
    }
}

/// Seed 202, machines 1605 and 497: four levels (a 384 MiB L4 the sweep
/// merged into its L3) and no cache stated, so the `mem` chase over 1 GiB
/// was taken for memory (8x the largest level found) while its own sweep
/// still rose by a third over the octave below: 198 ns `ok` for 232, and
/// 154 `ok` for 194 on 64 KiB pages. The sweep's point over half the
/// chase's working set now confirms or contradicts the headline.
#[test]
fn a_chase_taken_for_memory_over_a_still_climbing_sweep_is_not_ok() {
    for i in [1605, 497] {
        let (m, _) = corpus::generated(202, i);
        let (p, j) = judged(&m);
        assert_ne!(
            outcome(&j, "memory latency"),
            Outcome::ConfidentlyWrong,
            "{}: {j:?}",
            m.name
        );
        // The run saw the climb itself and chased again over 4 GiB.
        assert!(
            p.notes.iter().any(|n| n.code == "mem.chase_larger"),
            "{}: {:?}",
            m.name,
            p.notes
        );
        assert_eq!(
            p.memory.as_ref().and_then(|m| m.size_bytes),
            Some(4 << 30),
            "{}",
            m.name
        );
    }
}

/// Seed 1, machine 1583: heavy spikes inflated every sample of the sweep's
/// memory plateau (206.6 ns over 3 GiB for 184.6) and the chase, run
/// again over 4 GiB, had no sweep point over its working set to be held
/// to; the first chase, over 1 GiB, had one (189.7 against 178.3 ns),
/// and is held to it as the chase was.
#[test]
fn an_earlier_chase_is_held_to_the_sweep_over_its_working_set() {
    let (m, _) = corpus::generated(1, 1583);
    let (p, j) = judged(&m);
    assert_ne!(outcome(&j, "memory latency"), Outcome::ConfidentlyWrong, "{j:?}");
    assert!(
        p.notes
            .iter()
            .any(|n| n.code == "consistency.memory-same-footprint" && n.text.contains("earlier mem chase")),
        "{:?}",
        p.notes
    );
}

/// Seed 13, machine 737 (an L1 of 96 KiB beside a first TLB of 72
/// entries, 4 KiB pages): the idle-gap chase's point taken for the L2 was
/// the one at 78 pages, just past the TLB's step, where the share taken
/// out depends on where its entries lie; the L1 miss latency read 3.39 ns
/// for 3.16, `ok`. The point is now chosen by its distance from the level
/// and that doubt together, and the one at 50 pages, off the step, is
/// taken.
#[test]
fn a_gap_point_on_a_tlb_step_is_not_taken_for_a_level() {
    let (m, _) = corpus::generated(13, 737);
    let (_, j) = judged(&m);
    assert_ne!(outcome(&j, "L1 miss latency"), Outcome::ConfidentlyWrong, "{j:?}");
}

/// Seed 101, machine 437 (a 1.25 MiB LRU L2 on huge pages, sysfs absent,
/// a moving L3 share): the sweep measured the L2's edge at 1 MiB and 1.26
/// MiB only, and the size read from the hits the second point showed
/// (1.09 MiB) stood `ok`; LRU thrashes every set just past the capacity,
/// so those hits understate it. The capacity lies between that and where
/// the curve began to climb, and a bracket wider than a size is measured
/// to is not a size.
#[test]
fn a_size_the_sweep_only_brackets_is_not_ok() {
    let (m, _) = corpus::generated(101, 437);
    let (_, j) = judged(&m);
    assert_ne!(outcome(&j, "L2 size"), Outcome::ConfidentlyWrong, "{j:?}");
}

/// Found by the generated corpus (seed 1, machine 1144: a 96 KiB L1 with
/// adaptive insertion under a 2 MiB LRU L2, 4 KiB pages): the L1 keeps part
/// of every chase that overflows it, so the L2's plateau climbed from 4.2
/// to 4.5 ns and read 4.24 ns for 5.02 — flagged as sloping, never right.
/// Its cold laps (one lap right after a scrub emptied L1) read the L2
/// without L1's share: the latency is theirs, and right.
#[test]
fn a_sloping_level_is_read_from_its_cold_laps() {
    let (m, _) = corpus::generated(1, 1144);
    assert_eq!(
        m.levels[0].replacement,
        hwcal_sim::model::Replacement::Adaptive,
        "{}",
        m.name
    );
    let (p, j) = judged(&m);
    assert!(
        p.raw
            .iter()
            .any(|c| c.id == "cache.cold.2" && c.points.iter().filter(|q| q.x > 0.0).count() == 2),
        "no cold laps for L2"
    );
    let l2 = &p.caches.as_ref().unwrap()[1];
    assert!(
        (l2.latency_ns / m.levels[1].ns - 1.0).abs() < 0.05,
        "L2 {} ns, modelled {} ns",
        l2.latency_ns,
        m.levels[1].ns
    );
    assert!(p.notes.iter().any(|n| n.code == "cache.l2-cold"), "{:?}", p.notes);
    assert_eq!(outcome(&j, "L2 latency"), Outcome::Right, "{j:?}");
    assert_ne!(outcome(&j, "L1 replace time"), Outcome::ConfidentlyWrong, "{j:?}");
}

/// Found by seed 13 (machine 520: a 512-entry, 8-way L2 TLB, sysfs absent,
/// a moving share): one set of the hashed level drew more of the test
/// buffer's pages than its ways by 158 pages, the walk stepped there
/// (+2.4 ns) and read as a second TLB level of 158 entries, `ok`. Over a
/// second buffer of other pages the step is not there: the level is noisy.
#[test]
fn a_tlb_step_made_by_where_pages_fell_is_not_ok() {
    let (m, _) = corpus::generated(13, 520);
    assert_eq!((m.tlbs[1].entries, m.tlbs[1].ways), (512, 8), "{}", m.name);
    let (p, j) = judged(&m);
    assert!(
        p.raw
            .iter()
            .any(|c| c.id == "tlb.4k.retest" && !c.points.is_empty()),
        "no retest"
    );
    assert!(
        p.notes.iter().any(|n| n.code == "tlb.l2-placement"),
        "{:?}",
        p.notes
    );
    assert_ne!(outcome(&j, "TLB levels"), Outcome::ConfidentlyWrong, "{j:?}");
}

/// Found by seed 1 (machine 119: a 256 KiB, 8-way LRU L2 under a 12-way
/// L1, on 4 KiB pages, no cache information): the sweep's edge, spread by
/// page colouring, read the L2 as 174 KiB and nothing could confirm a
/// size, so it was `noisy`. The eviction-set search sorts the pool into
/// the L2's 8 colours of 8 ways — with the L1's 12 ways out of the way,
/// since the control follows every set — and the level is 8 × 8 × 4 KiB,
/// counted.
#[test]
fn a_level_on_base_pages_is_counted_from_its_eviction_sets() {
    let (m, _) = corpus::generated(1, 119);
    assert_eq!(
        (m.levels[1].size, m.levels[1].ways, m.levels[0].ways),
        (256 * 1024, 8, 12),
        "{}",
        m.name
    );
    let (p, j) = judged(&m);
    let colours = p
        .raw
        .iter()
        .find(|c| c.id == "cache.sets")
        .expect("no eviction-set search");
    assert_eq!(colours.points.len(), 8, "{:?}", colours.points);
    let l2 = &p.caches.as_ref().unwrap()[1];
    assert_eq!(l2.size_bytes, 256 * 1024);
    assert!(p.notes.iter().any(|n| n.code == "cache.l2-sets"), "{:?}", p.notes);
    assert_eq!(outcome(&j, "L2 size"), Outcome::Right, "{j:?}");
}

/// An L2 four times a random-replacement L1, on base pages: the sweep
/// climbs from L1 to the L3 with no plateau between (the L1 keeps part of
/// every set the chase overflows, page colouring spills the L2 before its
/// size), and took the L3 for L2. The eviction sets count it (4 colours ×
/// 16 ways), the analysis gives it a plateau of its own, and its cold laps,
/// planned for the counted size, give its latency.
#[test]
fn a_level_the_sweep_shows_only_a_climb_for_stands_by_its_count() {
    let (m, _) = corpus::generated(1, 27);
    assert_eq!(
        (m.levels[0].size, m.levels[1].size, m.levels[1].ways),
        (64 * 1024, 256 * 1024, 16),
        "{}",
        m.name
    );
    let (p, j) = judged(&m);
    let l2 = &p.caches.as_ref().unwrap()[1];
    assert_eq!(l2.size_bytes, 256 * 1024, "{:?}", p.notes);
    assert!(p.notes.iter().any(|n| n.code == "cache.l2-sets"), "{:?}", p.notes);
    for figure in ["L1 size", "L2 size", "L2 latency"] {
        assert_eq!(outcome(&j, figure), Outcome::Right, "{figure}: {j:?}");
    }
}

/// A 1 MiB 8-way LRU L2 on base pages whose plateau, past the L1 TLB's
/// reach, reads 3.61 ns after the TLB's share is taken out, where its hit
/// latency is 2.76: its cold laps read 2.77, below the plateau, and the
/// steady chase itself held 2.7 ns from 203 to 256 KiB, inside that reach.
/// The laps are the latency.
#[test]
fn laps_below_a_lifted_plateau_give_the_latency_the_steady_chase_held() {
    let (m, _) = corpus::generated(1, 1085);
    assert_eq!(
        (m.levels[1].size, m.levels[1].ways),
        (1024 * 1024, 8),
        "{}",
        m.name
    );
    let (p, j) = judged(&m);
    assert!(p.notes.iter().any(|n| n.code == "cache.l2-cold"), "{:?}", p.notes);
    assert_eq!(outcome(&j, "L2 latency"), Outcome::Right, "{j:?}");
}

/// A guest whose 72-entry L1 TLB the TLB probe missed (its 4096-entry L2
/// TLB read as one level of 3809, noisy): the share taken out of the sweep
/// leaves the L1 TLB's misses in, and the L3 read 23.0 ns for 21.8. It is
/// not `ok`.
#[test]
fn a_level_past_a_stated_tlb_the_probe_missed_is_not_ok() {
    let (m, _) = corpus::generated(7, 1385);
    assert_eq!(m.tlbs[0].entries, 72, "{}", m.name);
    let (p, j) = judged(&m);
    assert!(
        j.iter().all(|x| x.outcome != Outcome::ConfidentlyWrong),
        "{:?}",
        j.iter()
            .filter(|x| x.outcome == Outcome::ConfidentlyWrong)
            .collect::<Vec<_>>()
    );
    let l3 = &p.caches.as_ref().unwrap()[2];
    assert!(
        l3.verdict != hwcal_model::Verdict::Ok || (l3.latency_ns / 21.82 - 1.0).abs() <= 0.05,
        "{l3:?}"
    );
}
