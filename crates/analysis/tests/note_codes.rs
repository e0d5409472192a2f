//! The cache and TLB analysis note codes are a contract with scripts: the
//! list is pinned here (a renamed code fails this test), every note the
//! analyses emit on the recorded fixtures carries a listed code, and the
//! README documents each one.

mod support;
use hwcal_analysis::{cache, tlb};
use hwcal_model::note::code_matches;
use hwcal_model::Note;

const CACHE: [&str; 54] = [
    "cache.no-plateau",
    "cache.l{N}-size-lower-bound",
    "cache.l{N}-short-shared",
    "cache.l{N}-short-private",
    "cache.l{N}-over-nominal",
    "cache.l{N}-colour-fit",
    "cache.l{N}-line-nominal-disagree",
    "cache.l{N}-line-prefetched",
    "cache.l{N}-line-unmeasured",
    "cache.l{N}-miss-disagree",
    "cache.l{N}-step-unmeasured",
    "cache.l{N}-line-unconfirmed",
    "cache.l{N}-no-plateau",
    "cache.tlb-share",
    "cache.tlb-share-overshoot",
    "cache.no-memory",
    "cache.busy",
    "cache.busy-merged",
    "cache.neighbours-busy",
    "cache.huge-pages-partial",
    "cache.cycles-not-whole",
    "cache.l{N}-unstated",
    "cache.memory-climbing",
    "cache.unstated-merged",
    "cache.l1-edge-overheld",
    "cache.l{N}-replace-unsettled",
    "cache.l{N}-stated-contradicted",
    "cache.l{N}-colour-through-missing",
    "cache.mlp-superlinear",
    "cache.l{N}-size-unconfirmed",
    "cache.l{N}-numbering",
    "cache.l{N}-sloping",
    "cache.l{N}-cold",
    "cache.l{N}-sets",
    "cache.l{N}-sets-unread",
    "cache.l{N}-sets-disagree",
    "cache.l{N}-sets-latency",
    "cache.l{N}-within-count",
    "cache.l{N}-edge-moved",
    "cache.sets-unused",
    "cache.l{N}-step-cold",
    "cache.l{N}-cold-refused",
    "cache.l{N}-over-shared",
    "cache.l{N}-step-unconfirmed",
    "cache.l{N}-step-unranked",
    "cache.l{N}-latency-disagree",
    "cache.l{N}-bracketed",
    "cache.l{N}-latency-clock",
    "cache.l{N}-served-between",
    "cache.l{N}-latency-unresolved",
    "cache.l{N}-tlb-unmeasured",
    "cache.l{N}-tlb-share-sensitive",
    "cache.l{N}-overheld",
    "cache.l{N}-tlb-share-unconfirmed",
];

const TLB: [&str; 19] = [
    "tlb.huge-unseen",
    "tlb.baseline-has-misses",
    "tlb.l{N}-baseline-disagree",
    "tlb.no-level",
    "tlb.huge-missing",
    "tlb.huge-range",
    "tlb.l{N}-4k-nominal-disagree",
    "tlb.l{N}-2m-nominal-disagree",
    "tlb.neighbours-busy",
    "tlb.l{N}-soft-edge",
    "tlb.l{N}-ways-corrected",
    "tlb.l{N}-unconfirmed",
    "tlb.l1-spread",
    "tlb.l{N}-steps-agree",
    "tlb.l{N}-step-shrinks",
    "tlb.l{N}-overshoot",
    "tlb.l1-foot",
    "tlb.first-plateau-raised",
    "tlb.l{N}-placement",
];

#[test]
fn the_code_lists_are_stable() {
    assert_eq!(cache::note_patterns(), CACHE);
    assert_eq!(tlb::note_patterns(), TLB);
}

#[test]
fn the_readme_documents_every_code() {
    let readme = include_str!("../../../README.md");
    for code in CACHE.iter().chain(&TLB) {
        assert!(readme.contains(&format!("| `{code}` |")), "README lacks {code}");
    }
}

use support::load;

fn assert_coded(notes: &[Note], probe: &str, patterns: &[&str]) {
    for n in notes {
        assert_eq!(n.probe, probe, "{n:?}");
        assert!(
            patterns.iter().any(|p| code_matches(p, &n.code)),
            "unlisted code {}: {}",
            n.code,
            n.text
        );
        assert!(n.text.starts_with(&format!("{probe}: ")), "{}", n.text);
    }
}

#[test]
fn every_note_on_the_fixtures_has_a_listed_code() {
    let mut seen = Vec::new();
    for name in [
        "cache-quiet.json",
        "cache-quiet-2.json",
        "cache-interference.json",
    ] {
        let a = cache::analyze(&load(name)).unwrap();
        assert_coded(&a.notes, "cache", &CACHE);
        seen.extend(a.notes.into_iter().map(|n| n.code));
    }
    for name in [
        "tlb-1.json",
        "tlb-2.json",
        "tlb-3.json",
        "zen3-dense.json",
        "zen3-colour.json",
    ] {
        let Some(a) = tlb::analyze(&load(name)) else {
            continue;
        };
        assert_coded(&a.notes, "tlb", &TLB);
        seen.extend(a.notes.into_iter().map(|n| n.code));
    }
    // The reference VM's 105 MiB nominal L3 has no plateau of its own: the
    // code a script would look for, spelled out.
    assert!(seen.iter().any(|c| c == "cache.l3-no-plateau"), "{seen:?}");
}
