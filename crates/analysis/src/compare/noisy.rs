//! The notes that name which side's figures carry a noisy verdict, per
//! section (a ratio of a noisy figure is no better than the figure).

use hwcal_model::{Profile, Verdict};

/// A ratio of a figure the machine was too noisy to measure is no better
/// than the figure: say which side's figures carry a noisy verdict.
pub(super) fn noisy_notes(notes: &mut Vec<String>, a: &Profile, b: &Profile) {
    for (name, na, nb) in [
        ("clock", noisy_clock(a), noisy_clock(b)),
        ("caches", noisy_caches(a), noisy_caches(b)),
        (
            "memory",
            a.memory.as_ref().map(|m| m.verdict),
            b.memory.as_ref().map(|m| m.verdict),
        ),
        ("TLBs", noisy_tlbs(a), noisy_tlbs(b)),
        (
            "mem",
            a.mem.as_ref().map(|m| m.verdict),
            b.mem.as_ref().map(|m| m.verdict),
        ),
        ("context switch", noisy_ctx(a), noisy_ctx(b)),
    ] {
        let (Some(na), Some(nb)) = (na, nb) else { continue };
        let who = match (na == Verdict::Noisy, nb == Verdict::Noisy) {
            (true, true) => "A and B",
            (true, false) => "A",
            (false, true) => "B",
            (false, false) => continue,
        };
        notes.push(format!(
            "{name}: some of {who}'s figures are marked noisy; their ratios are unreliable"
        ));
    }
}

fn any_noisy(mut it: impl Iterator<Item = Verdict>) -> Verdict {
    if it.any(|v| v == Verdict::Noisy) {
        Verdict::Noisy
    } else {
        Verdict::Ok
    }
}

fn noisy_clock(p: &Profile) -> Option<Verdict> {
    p.clock.as_ref().map(|c| c.verdict)
}

fn noisy_caches(p: &Profile) -> Option<Verdict> {
    p.caches.as_ref().map(|c| any_noisy(c.iter().map(|l| l.verdict)))
}

fn noisy_tlbs(p: &Profile) -> Option<Verdict> {
    p.tlbs.as_ref().map(|t| any_noisy(t.iter().map(|l| l.verdict)))
}

fn noisy_ctx(p: &Profile) -> Option<Verdict> {
    p.context_switch
        .as_ref()
        .map(|c| any_noisy(c.all_sizes().iter().flat_map(|z| &z.points).map(|q| q.verdict)))
}
