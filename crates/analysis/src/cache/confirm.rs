//! Whether a level's size has a second measurement behind it.
//!
//! One sweep on base pages reads a physically indexed level's size from an
//! edge that page colouring spreads (Kessler and Hill, TOCS 1992): with
//! random physical frames some of its sets overflow while others still have
//! room, and how early and how steeply depends on its ways and replacement,
//! which the sweep does not know. Where the machine states the level's
//! size, a reading that agrees with it is checked against that figure
//! (`levels::private_shortfall`, `private_excess`); where its ways are
//! stated, the page-colour fit models the spread (`edge::colour_size`).
//! With neither, nothing but the one placement's held capacity stands
//! behind the size — a simulated guest with no cache information read an
//! L2 of 256 KiB as 193 KiB, `ok` — so the level is marked noisy. L1 is
//! virtually indexed (a page's lines keep their sets, no colouring), and on
//! huge pages the set index lies within the page: neither needs it.

use crate::levels::Plateau;
use hwcal_model::note::analysis as note;
use hwcal_model::{CacheLevel, MachineInfo, Note};

/// The note (and the caller's noisy verdict) for a level past L1 read on
/// base pages whose size neither a stated figure nor a page-colour fit
/// confirms.
pub(super) fn size_unconfirmed(
    l: &CacheLevel,
    p: &Plateau,
    machine: &MachineInfo,
    base_pages: bool,
) -> Option<Note> {
    if !base_pages || l.level < 2 || !p.bounded || p.colour.is_some() {
        return None;
    }
    if machine.nominal_data_cache(l.level).is_some() {
        return None;
    }
    Some(note(
        "cache",
        &format!("l{}-size-unconfirmed", l.level),
        format!(
            "cache: L{} ({}): read on base pages, where page colouring spreads a physically indexed level's \
             edge by an amount its ways and replacement decide, and the machine states neither its size nor \
             its ways, so no second figure confirms the size; marked noisy",
            l.level,
            super::codes::size_text(l.size_bytes as f64)
        ),
    ))
}

/// Levels whose number is in doubt: level N+1 whose size lies nearer (in
/// log) to the size the machine states for level N than to its own, where
/// level N was read well short of that stated size (a private cache one
/// thread fills, so the shortfall is not the hardware's). Then the found
/// level N is most likely not that cache but part of the level below it
/// (an L1 with random or adaptive replacement keeps part of a chase past
/// its size, and the fall-off reads as a small plateau), and level N+1 is
/// the stated level N found one number too high: a simulated L2 of 2 MiB
/// read as "L2 106 KiB, noisy" and "L3 2.41 MiB, ok" against a stated
/// L3 of 12 MiB. Which cache it is cannot be told, so it is marked noisy.
/// Returns the notes; the levels' verdicts are set here.
pub(super) fn numbering_in_doubt(levels: &mut [CacheLevel], machine: &MachineInfo) -> Vec<Note> {
    let mut notes = unstated_numbering(levels, machine);
    for k in 1..levels.len() {
        let (below, this) = (&levels[k - 1], &levels[k]);
        let Some(stated_below) = machine.nominal_data_cache(below.level) else {
            continue;
        };
        let private = stated_below.shared_cpus.len() <= 1;
        let sb = stated_below.size_bytes as f64;
        let short = (below.size_bytes as f64) < (1.0 - super::NOMINAL_SIZE_TOLERANCE) * sb;
        if !private || !short {
            continue;
        }
        let size = this.size_bytes as f64;
        let to_below = (size / sb).ln().abs();
        let nearer_below = machine
            .nominal_data_cache(this.level)
            .is_none_or(|own| to_below < (size / own.size_bytes as f64).ln().abs());
        if !nearer_below || this.verdict != hwcal_model::Verdict::Ok {
            continue;
        }
        let (n, b) = (this.level, below.level);
        levels[k].verdict = hwcal_model::Verdict::Noisy;
        notes.push(note(
            "cache",
            &format!("l{n}-numbering"),
            format!(
                "cache: L{n} ({}) is nearer the {} the machine states for L{b} than its own, and L{b} was read \
                 well short of that: L{b}'s plateau is most likely part of the level below it and this the \
                 stated L{b} found one number too high; which cache it is cannot be told, marked noisy",
                super::codes::size_text(size),
                super::codes::size_text(sb)
            ),
        ));
    }
    notes
}

/// Where the machine states no cache at all (a container's or an Arm
/// board's empty sysfs), a level's number rests on the levels found below
/// it alone: where one of them is in doubt (not `ok`) — an L1 whose slow
/// fall-off may be read as a level of its own, or whose edge held more than
/// where it began to climb, a level hiding in it — the level above may be
/// one number off, and is not `ok` (a simulated guest with no cache stated
/// read L1 noisy and "L2 43.3 MiB, ok": its L3, the L2 unfound). Marked
/// noisy, as every level above it; the notes.
fn unstated_numbering(levels: &mut [CacheLevel], machine: &MachineInfo) -> Vec<Note> {
    if !super::plateaus::nominal_sizes(machine).is_empty() {
        return Vec::new();
    }
    let mut notes = Vec::new();
    let mut doubt: Option<u32> = None;
    for l in levels.iter_mut() {
        if let Some(d) = doubt.filter(|_| l.verdict == hwcal_model::Verdict::Ok) {
            l.verdict = hwcal_model::Verdict::Noisy;
            notes.push(note(
                "cache",
                &format!("l{}-numbering", l.level),
                format!(
                    "cache: L{n} ({}): the machine states no cache levels, and L{d} below it is in doubt: if \
                     that is no level of its own (an L1's slow fall-off read as one) or hides one, this level \
                     is not L{n}; which cache it is cannot be told, marked noisy",
                    super::codes::size_text(l.size_bytes as f64),
                    n = l.level
                ),
            ));
        }
        if l.verdict != hwcal_model::Verdict::Ok {
            doubt.get_or_insert(l.level);
        }
    }
    notes
}

/// The note (and the caller's noisy verdict) for a level read larger than
/// the stated size of the cache it is numbered as, where that cache is
/// shared ([`super::levels::private_excess`] judges private ones): one
/// CPU gets at most the whole of a shared cache, never more, so a level
/// read well past it (beyond [`super::NOMINAL_SIZE_TOLERANCE`], which
/// also covers a victim L3 that holds its L2's lines besides its own) is
/// not that cache: a level below it left no plateau, so this plateau is
/// the next one numbered one short, or no cache at all — on 4 KiB pages a
/// guest's page walks miss the caches more as the working set grows, and
/// memory's climb can hold still long enough to read as a level (a
/// simulated guest read "L4 771 MiB 142.9 ns", `ok`, for a stated L4 of
/// 128 MiB, its real L4 read as an L3 of 70.6 MiB against a stated 6 MiB).
pub(super) fn shared_excess(l: &CacheLevel, p: &Plateau, machine: &MachineInfo) -> Option<Note> {
    let n = machine.nominal_data_cache(l.level)?;
    let stated = n.size_bytes as f64;
    let over = n.shared_cpus.len() > 1
        && p.bounded
        && l.size_bytes as f64 > (1.0 + super::NOMINAL_SIZE_TOLERANCE) * stated;
    over.then(|| {
        note(
            "cache",
            &format!("l{}-over-shared", l.level),
            format!(
                "cache: L{} ({} at {:.1} ns) reads larger than the shared cache the machine states for it ({}): \
                 one CPU gets at most the whole of a shared cache, so this plateau is not that cache (a level \
                 below left no plateau of its own, or memory's climb held still); marked noisy",
                l.level,
                super::codes::size_text(l.size_bytes as f64),
                l.latency_ns,
                super::codes::size_text(stated)
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwcal_model::NominalCache;

    fn plateau() -> Plateau {
        Plateau {
            first: 0,
            last: 3,
            level: 5.0,
            end_x: 190e3,
            bounded: true,
            cross: None,
            colour: None,
            colour_rejected: false,
            tail_to: None,
        }
    }

    fn level(k: u32) -> CacheLevel {
        CacheLevel {
            level: k,
            size_bytes: 193 << 10,
            latency_ns: 5.0,
            ..Default::default()
        }
    }

    #[test]
    fn an_l2_read_on_base_pages_with_nothing_stated_is_not_confirmed() {
        let bare = MachineInfo::default();
        assert!(size_unconfirmed(&level(2), &plateau(), &bare, true).is_some());
        // L1 (virtually indexed) and huge pages (no colouring) need no second figure.
        assert!(size_unconfirmed(&level(1), &plateau(), &bare, true).is_none());
        assert!(size_unconfirmed(&level(2), &plateau(), &bare, false).is_none());
        // A stated size is the second figure (the shortfall and excess checks read it).
        let stated = MachineInfo {
            nominal_caches: vec![NominalCache {
                level: 2,
                cache_type: "Unified".into(),
                size_bytes: 256 << 10,
                ..Default::default()
            }],
            ..Default::default()
        };
        assert!(size_unconfirmed(&level(2), &plateau(), &stated, true).is_none());
    }

    fn machine(l2: u64, l3: u64) -> MachineInfo {
        let c = |level, size, cpus: Vec<usize>| NominalCache {
            level,
            cache_type: if level == 1 { "Data" } else { "Unified" }.into(),
            size_bytes: size,
            shared_cpus: cpus,
            ..Default::default()
        };
        MachineInfo {
            nominal_caches: vec![
                c(1, 64 << 10, vec![0]),
                c(2, l2, vec![0]),
                c(3, l3, (0..16).collect()),
            ],
            ..Default::default()
        }
    }

    fn found(k: u32, size: u64, verdict: hwcal_model::Verdict) -> CacheLevel {
        CacheLevel {
            level: k,
            size_bytes: size,
            verdict,
            ..Default::default()
        }
    }

    #[test]
    fn a_level_found_one_number_too_high_is_in_doubt() {
        use hwcal_model::Verdict::{Noisy, Ok};
        // An L1 that keeps part of the chase past its size made a small
        // "L2"; the stated 2 MiB L2 was then read as "L3".
        let m = machine(2 << 20, 12 << 20);
        let mut levels = vec![
            found(1, 64 << 10, Ok),
            found(2, 106 << 10, Noisy),
            found(3, 2_470_000, Ok),
        ];
        assert_eq!(numbering_in_doubt(&mut levels, &m).len(), 1);
        assert_eq!(levels[2].verdict, Noisy);
        // A guest's share of a shared L3 (3 MiB of 32) above a whole L2 is
        // no such doubt, however far below its stated size.
        let m = machine(512 << 10, 32 << 20);
        let mut levels = vec![
            found(1, 64 << 10, Ok),
            found(2, 512 << 10, Ok),
            found(3, 3 << 20, Ok),
        ];
        assert!(numbering_in_doubt(&mut levels, &m).is_empty());
        assert_eq!(levels[2].verdict, Ok);
    }

    #[test]
    fn with_nothing_stated_a_level_above_one_in_doubt_is_in_doubt() {
        use hwcal_model::Verdict::{Noisy, Ok};
        // Simulated, no cache stated: L1 in doubt (its edge held more than
        // where it began to climb) and "L2 43.3 MiB", its L3.
        let bare = MachineInfo::default();
        let mut levels = vec![
            found(1, 71 << 10, Noisy),
            found(2, 43 << 20, Ok),
            found(3, 90 << 20, Ok),
        ];
        let notes = numbering_in_doubt(&mut levels, &bare);
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert_eq!(notes[0].code, "cache.l2-numbering");
        assert!(
            notes[0].text.contains("L1 below it is in doubt"),
            "{}",
            notes[0].text
        );
        assert!(levels[1..].iter().all(|l| l.verdict == Noisy));
        // Every level below ok: each number stands.
        let mut levels = vec![found(1, 48 << 10, Ok), found(2, 2 << 20, Ok)];
        assert!(numbering_in_doubt(&mut levels, &bare).is_empty());
        assert_eq!(levels[1].verdict, Ok);
        // Stated levels: the numbering is checked against them instead.
        let mut levels = vec![found(1, 64 << 10, Noisy), found(2, 2 << 20, Ok)];
        assert!(numbering_in_doubt(&mut levels, &machine(2 << 20, 12 << 20)).is_empty());
        assert_eq!(levels[1].verdict, Ok);
    }

    fn stated_l4(shared_cpus: Vec<usize>) -> MachineInfo {
        MachineInfo {
            nominal_caches: vec![NominalCache {
                level: 4,
                cache_type: "Unified".into(),
                size_bytes: 128 << 20,
                shared_cpus,
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    /// The simulated guest's phantom "L4 771 MiB 142.9 ns" against a stated
    /// shared L4 of 128 MiB; a level that reads its stated size (or a
    /// share of it) stands.
    #[test]
    fn a_level_larger_than_the_shared_cache_stated_for_it_is_not_that_cache() {
        let shared = stated_l4(vec![0, 1]);
        let mut l = CacheLevel {
            level: 4,
            size_bytes: 771 << 20,
            latency_ns: 142.9,
            ..Default::default()
        };
        assert!(shared_excess(&l, &plateau(), &shared).is_some());
        l.size_bytes = 120 << 20;
        assert!(shared_excess(&l, &plateau(), &shared).is_none());
        l.size_bytes = 40 << 20;
        assert!(shared_excess(&l, &plateau(), &shared).is_none());
        // A private cache's excess is `levels::private_excess`'s.
        l.size_bytes = 771 << 20;
        assert!(shared_excess(&l, &plateau(), &stated_l4(vec![0])).is_none());
    }
}
