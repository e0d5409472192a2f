//! Which warnings the digest shows on its first screen: at most
//! [`MAX_SHOWN`], most consequential first, each fact once. A run can
//! carry 15 warnings, and the one that explains a `noisy` figure must not
//! sit below three wordings of the same huge-page fact; every warning left
//! out is counted on the screen and printed in full by `--detail`.
//!
//! The rule, in order:
//! 1. **Rank** ([`Rank`]): a warning about a figure the digest shows
//!    `noisy` first (it says why the verdict is what it is); then the
//!    cross-checks and disagreements that put a figure in doubt
//!    (`consistency.*`, codes naming a disagreement, a contradiction, noise
//!    or a busy machine); then the rest (how a figure was reached: pages,
//!    shares of a shared cache). Within a rank, the profile's own order.
//! 2. **One fact once** ([`fact`]): warnings that state the same fact in
//!    different sections (the TLB does not see huge pages: said by the
//!    memory chase, the TLB analysis and the cache sweep) share a key; only
//!    the first of them, by rank, is shown.
//! 3. **At most [`MAX_SHOWN`]** of what is left.

use hwcal_model::{Note, Severity};

/// Warnings on the digest's first screen at most.
pub const MAX_SHOWN: usize = 5;

/// How consequential a warning is: lower first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rank {
    /// About a figure the digest shows `noisy`.
    ExplainsNoisy,
    /// A cross-check or a disagreement that puts a figure in doubt.
    Doubt,
    /// Context: how a figure was reached.
    Context,
}

/// The codes of one fact told by several probes: the TLB sees the
/// buffers as base pages (huge pages not granted, or a host backing the
/// guest with 4 KiB pages). The memory chase, the TLB analysis and the
/// cache sweep each say it in their own words.
const BASE_PAGES: [&str; 5] = [
    "mem.latency_not_huge",
    "tlb.huge-missing",
    "tlb.huge-unseen",
    "cache.huge-pages-partial",
    "cache.tlb-share",
];

/// The key of the fact a warning states: warnings of equal keys say the
/// same thing. The huge-page fact is one key whatever probe says it
/// (profiles of an older hwcal, whose notes have no specific code, are
/// recognised by their words); any other warning is its own fact unless
/// its text repeats another's word for word.
pub fn fact(n: &Note) -> String {
    let legacy = n.code.ends_with(".analysis") || n.code.ends_with(".note");
    let huge_words = ["huge page", "huge-page", "2 MiB pages were not obtained"];
    if BASE_PAGES.contains(&n.code.as_str()) || (legacy && huge_words.iter().any(|w| n.text.contains(w))) {
        return "pages.base-to-the-tlb".into();
    }
    format!("{}\n{}", n.code, n.text)
}

/// The rank of `n`, given the labels of the digest's lines shown `noisy`
/// (`L2`, `memory`, `L1 TLB`).
pub fn rank(n: &Note, noisy_labels: &[&str]) -> Rank {
    let noisy = |pick: &dyn Fn(&str) -> bool| noisy_labels.iter().any(|l| pick(l));
    let (probe, what) = n.code.split_once('.').unwrap_or((n.probe.as_str(), ""));
    // `cache.l2-…`, `tlb.l1-…`: the level the note is about.
    let level = what
        .strip_prefix('l')
        .and_then(|r| r.split('-').next())
        .and_then(|d| d.parse::<u32>().ok());
    let doubt = [
        "disagree",
        "contradict",
        "noisy",
        "busy",
        "climbing",
        "superlinear",
        "overshoot",
    ]
    .iter()
    .any(|w| what.contains(w));
    let is_cache = |l: &str| l.starts_with('L') && !l.ends_with("TLB");
    let explains = match (probe, level) {
        ("cache", Some(k)) => noisy(&|l| l == format!("L{k}")),
        // A cache or TLB note about no one level explains a noisy level
        // only where it says the sweep was in doubt (a busy machine):
        // how the sweep was read (pages, shares) is context, noisy or not.
        ("cache", None) => doubt && noisy(&|l| is_cache(l) || l == "memory"),
        ("tlb", Some(k)) => noisy(&|l| l == format!("L{k} TLB")),
        ("tlb", None) => doubt && noisy(&|l| l.ends_with("TLB")),
        ("mem", _) if what.starts_with("bandwidth") => noisy(&|l| l == "bandwidth"),
        ("mem", _) => noisy(&|l| l == "memory" || l == "mem"),
        ("consistency", _) if what.starts_with("memory") => noisy(&|l| l == "memory"),
        (p @ ("clock" | "ctx" | "io"), _) => noisy(&|l| l == p),
        _ => false,
    };
    if explains {
        Rank::ExplainsNoisy
    } else if probe == "consistency" || doubt {
        Rank::Doubt
    } else {
        Rank::Context
    }
}

/// The profile's warnings as the first screen shows them: at most `room`
/// (and [`MAX_SHOWN`]), ranked, each fact once; and how many of the
/// warnings are not shown (repetitions of a fact shown included: the
/// detail prints every one).
pub fn first_screen<'a>(notes: &'a [Note], noisy_labels: &[&str], room: usize) -> (Vec<&'a Note>, usize) {
    let mut ranked: Vec<(Rank, usize, &Note)> = notes
        .iter()
        .filter(|n| n.severity == Severity::Warning)
        .enumerate()
        .map(|(i, n)| (rank(n, noisy_labels), i, n))
        .collect();
    let total = ranked.len();
    ranked.sort_by_key(|(r, i, _)| (*r, *i));
    let mut seen: Vec<String> = Vec::new();
    let mut shown = Vec::new();
    for (_, _, n) in ranked {
        let key = fact(n);
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        if shown.len() < room.min(MAX_SHOWN) {
            shown.push(n);
        }
    }
    (shown.clone(), total - shown.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_huge_page_fact_is_one_fact() {
        let a = Note::warning(
            "mem",
            "latency_not_huge",
            "mem: the latency buffer: huge pages asked",
        );
        let b = Note::warning("tlb", "huge-missing", "tlb: 2 MiB pages were not obtained");
        let c = Note::warning(
            "cache",
            "huge-pages-partial",
            "cache: only 0% of the chase buffer",
        );
        assert_eq!(fact(&a), fact(&b));
        assert_eq!(fact(&b), fact(&c));
        // An older profile's plain-string notes, by their words.
        let old =
            Note::legacy("cache: only 0% of the chase buffer was backed by huge pages as the TLB saw them");
        assert_eq!(fact(&old), fact(&a));
        let other = Note::warning("cache", "l3-short-shared", "cache: L3: effective size 3.91 MiB");
        assert_ne!(fact(&other), fact(&a));
    }

    #[test]
    fn a_warning_about_a_noisy_figure_comes_first() {
        // The digest shows L2 and the L2 TLB noisy (L3, memory ok).
        let lines = ["L2", "L2 TLB"];
        let notes = [
            Note::warning("cache", "tlb-share", "cache: the chase ran on 4 KiB pages"),
            Note::warning("mem", "latency_not_huge", "mem: huge pages asked"),
            Note::warning("cache", "l3-short-shared", "cache: L3 short"),
            Note::warning("consistency", "memory-mlp", "consistency: the mlp table"),
            Note::warning("tlb", "l2-4k-nominal-disagree", "tlb: level 2"),
            Note::warning("cache", "l2-colour-fit", "cache: L2 colour"),
            Note::info("cache", "line", "cache: an info note is never a warning"),
            Note::warning("cache", "l3-no-plateau", "cache: L3 no plateau"),
        ];
        let (shown, more) = first_screen(&notes, &lines, 20);
        let codes: Vec<&str> = shown.iter().map(|n| n.code.as_str()).collect();
        // Noisy figures' notes first (L2 TLB, L2), then the cross-check,
        // then context in the profile's order; the huge-page fact once
        // (the cache's word for it came first), the rest counted.
        assert_eq!(
            codes,
            [
                "tlb.l2-4k-nominal-disagree",
                "cache.l2-colour-fit",
                "consistency.memory-mlp",
                "cache.tlb-share",
                "cache.l3-short-shared",
            ]
        );
        assert_eq!(more, 2, "the repeated fact and the sixth are counted");
        assert_eq!(rank(&notes[1], &lines), Rank::Context);
        // Where memory is noisy, its huge-page note says why: it leads, and
        // speaks for the fact the cache note also states.
        let noisy_memory = ["memory"];
        assert_eq!(rank(&notes[1], &noisy_memory), Rank::ExplainsNoisy);
        let (shown, _) = first_screen(&notes, &noisy_memory, 20);
        assert_eq!(shown[0].code, "mem.latency_not_huge");
        assert!(shown.iter().all(|n| n.code != "cache.tlb-share"));
        let (few, more) = first_screen(&notes, &lines, 2);
        assert_eq!((few.len(), more), (2, 5));
    }
}
