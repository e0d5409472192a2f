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
}
