//! The note for a run whose other CPUs were busy while it measured: one
//! check shared by the cache and the TLB analyses (both read the
//! `*.neighbour_busy` curve: the other CPUs' busy share, from `/proc/stat`).

use hwcal_model::note::analysis as note;
use hwcal_model::{Note, Profile};

/// Above this share of busy time on the other CPUs a run is flagged: on
/// machines whose CPUs share caches (SMT siblings, and a VM's vCPUs that
/// the host places on sibling threads of one core) the levels then read
/// small and slow.
pub const NEIGHBOUR_BUSY_LIMIT: f64 = 0.25;

/// The note for a run whose neighbours were busy, if any (code
/// `{what}.neighbours-busy`, for the cache and the TLB probe alike).
pub fn neighbour_note(p: &Profile, id: &str, what: &str) -> Option<Note> {
    let busy = p.raw_curve(id)?.points.first()?.y;
    (busy > NEIGHBOUR_BUSY_LIMIT).then(|| {
        note(what, "neighbours-busy", format!(
            "{what}: the other CPUs were {:.0}% busy during the measurement; where they share caches \
             or TLBs with this one (SMT siblings) the levels read smaller and slower: re-run on a quiet machine",
            busy * 100.0
        ))
    })
}
