//! The plateaus of the latency sweep: levels by slope
//! ([`crate::segments`]), held to the levels the machine states where the
//! sweep was busy or a plateau is as slow as memory, each bounded by its
//! edge to the next level (or to the sweep's top where it ends on a climb).

use super::codes::size_text;
use super::edge::{ColourOutcome, Edge};
use super::memory::{ends_in_memory, memory_like, MIN_MEMORY_NS, MIN_MEMORY_STEP};
use super::sweep::Sweep;
use crate::levels::Plateau;
use crate::segments::{crossing, segments_guided, SegOptions, Segment};
use hwcal_model::note::analysis as note;
use hwcal_model::{MachineInfo, Note};
use hwcal_stats::median;

/// The plateaus of the (corrected) latency curve: levels by slope (see
/// [`crate::segments`]), each level's size the capacity it was seen to
/// hold (see [`held_capacity`]), or, for a private level on pages the TLB
/// sees as 4 KiB, the capacity a page-colour fit of its edge gives (see
/// [`colour_size`]).
///
/// On a busy sweep (`busy`, see [`busy_note`]) the curve is not trusted to
/// add a level the machine does not state: latency that moved while the
/// sweep ran (a neighbour's traffic coming and going) can leave a plateau
/// between the last cache and memory. Surplus plateaus then join their
/// nearest neighbour ([`crate::segments::merge_to`]), with a note. A quiet
/// sweep keeps every plateau it shows: a machine may state fewer levels
/// than it has (a VM whose hypervisor hides its L3).
pub(super) fn plateaus(
    sw: &Sweep,
    machine: &MachineInfo,
    small_pages: bool,
    busy: bool,
    counted: Option<&super::sets::Structure>,
) -> Plateaus {
    let max_x = sw.xs.last().copied().unwrap_or(0.0);
    let opts = SegOptions::cache();
    let cy = sw.cy.as_deref();
    // How many levels to look for: the nominal cache levels the sweep
    // spans, and memory only where the curve itself ends on a plateau that
    // can be memory. A last level whose hit share falls off slowly (a
    // victim L3 that does not replace in LRU order) leaves no memory
    // plateau inside a sweep to 4x its size; counting memory there made
    // the search take a bump on the edge into that level for a level of
    // its own, and the level itself for memory.
    let caches = spanned_cache_levels(machine, max_x);
    let unguided = segments_guided(&sw.xs, &sw.ys, cy, &opts, 0);
    let levels: Vec<f64> = unguided.iter().map(|g| g.level).collect();
    let mem_seen = memory_like(&levels);
    let want = if caches == 0 {
        0
    } else {
        caches + usize::from(mem_seen)
    };
    let mut segs = if want > unguided.len() {
        segments_guided(&sw.xs, &sw.ys, cy, &opts, want)
    } else {
        unguided
    };
    let mut merged = None;
    // Only where the count includes memory: a sweep whose top still climbs
    // shows no memory plateau, which the count would not.
    if busy && want > 0 && mem_seen && segs.len() > want {
        let found = segs.len();
        let extra: Vec<String> = segs
            .iter()
            .map(|g| format!("from {} at {:.1} ns", size_text(sw.xs[g.first]), g.level))
            .collect();
        segs = crate::segments::merge_to(segs, &sw.ys, want);
        merged = Some(note(
            "cache",
            "busy-merged",
            format!(
                "cache: the busy sweep showed {found} plateaus ({}) where the machine states {} (the cache \
                 levels the sweep spans, and memory); latency moved while it ran, so the nearest plateaus \
                 were taken as one",
                extra.join(", "),
                want
            ),
        ));
    }
    if merged.is_none() && caches > 0 && mem_seen {
        merged = join_unstated(&mut segs, caches, &sw.xs, &sw.ys);
    }
    let mut pl: Vec<Plateau> = segs.iter().map(|g| g.plateau(&sw.xs)).collect();
    let mut memo = crate::colour::Memo::default();
    for k in 0..segs.len().saturating_sub(1) {
        let Some(edge) = edge_after(&pl, k) else {
            continue;
        };
        bound(&mut pl[k], &edge, sw, machine, small_pages, &mut memo);
    }
    // The one decision the analysis then reads too (`analyze_with`).
    if !ends_in_memory(&pl, &sw.xs, machine) {
        if let Some((k, edge)) = tail_edge(sw, &pl) {
            bound(&mut pl[k], &edge, sw, machine, small_pages, &mut memo);
            pl[k].tail_to = Some(edge.to);
        }
    }
    let counted = counted.map(|s| place_counted(&mut pl, s, sw, (machine, small_pages), &mut memo));
    Plateaus { pl, merged, counted }
}

/// The plateaus of the sweep, and where the level the eviction sets
/// counted stands among them.
pub(super) struct Plateaus {
    pub(super) pl: Vec<Plateau>,
    /// The note where plateaus were joined.
    pub(super) merged: Option<Note>,
    /// Where the counted level stands (`None` where nothing was counted).
    pub(super) counted: Option<Placed>,
}

/// Where the level the eviction sets counted stands among the plateaus.
pub(super) enum Placed {
    /// The plateau of that index: read within a factor of two of it, or
    /// with its latency and an edge the count explains.
    At(usize),
    /// A plateau of its own, inserted at that index; the size the level
    /// below read against the level above before it.
    Inserted(usize, f64),
    /// Nowhere, and why; with the plateau whose reading the count
    /// contradicts, where one does.
    Nowhere(String, Option<usize>),
}

/// Where the level the eviction sets counted (`s`) stands among the
/// plateaus `pl`: the plateau at the latency the search read the level's
/// hits at, where that is not the one nearest in size ([`owned`]); else
/// the cache plateau past L1 within a factor of two of it
/// ([`super::sets::matching`]); where the sweep shows none, a plateau of
/// its own right after L1 over the sweep's points below the count, the two
/// edges beside it bounded again ([`bound`], with the colour model's
/// `memo`). The search counts the
/// first level past L1 whose sets page colours spread, so where the sweep
/// put a level between L1 and half the count, the two read that level
/// differently: the sweep's reading is contradicted, and nothing is
/// inserted.
///
/// The count is a measurement of its own, not a reading of the sweep: a
/// level whose plateau is too short or too sloped for the sweep to read as
/// one is still there. An L2 four times a random-replacement L1, both on
/// base pages, shows none: the L1 keeps part of every set the chase
/// overflows, and page colouring spills the L2 well before its size, so
/// the curve climbs from one to the other with no flat stretch, and the
/// segments took the L3 for L2 (a simulated 256 KiB L2 under a 64 KiB L1
/// that the eviction sets counted exactly as 4 colours × 16 ways: generated
/// seed 1, #27). The sweep must still agree: the new plateau lies between
/// its neighbours' latencies, and past the counted size the curve climbs
/// beyond the spread a level may have (a count with no edge in the sweep
/// contradicts it, and stands nowhere).
fn place_counted(
    pl: &mut Vec<Plateau>,
    s: &super::sets::Structure,
    sw: &Sweep,
    (machine, small_pages): (&MachineInfo, bool),
    memo: &mut crate::colour::Memo,
) -> Placed {
    let n_cache = if ends_in_memory(pl, &sw.xs, machine) {
        pl.len() - 1
    } else {
        pl.len()
    };
    let size = s.size();
    let sizes: Vec<f64> = pl[..n_cache].iter().map(|p| p.size(&sw.xs)).collect();
    let near = super::sets::matching(&sizes, size);
    let levels: Vec<f64> = pl[..n_cache].iter().map(|p| p.level).collect();
    if let Some(o) = super::sets::owner(&levels, s.kept_ns).filter(|&o| Some(o) != near) {
        return owned(pl, o, s, sw, &sizes, memo);
    }
    if let Some(k) = near {
        return Placed::At(k);
    }
    let j = sizes.iter().take_while(|&&s| s < size).count();
    if j > 1 {
        return Placed::Nowhere(
            format!(
                "it counted {}, where the sweep read the level after L1 as {}, less than half of it: the two \
                 measurements of that level disagree",
                size_text(size),
                size_text(sizes[1])
            ),
            Some(1),
        );
    }
    let (Some(below), Some(next)) = (j.checked_sub(1).and_then(|i| pl.get(i)), pl.get(j)) else {
        return Placed::Nowhere(
            format!(
                "the {} it counted lies below every plateau the sweep found",
                size_text(size)
            ),
            None,
        );
    };
    // Its points: those between half of it and three quarters, where a
    // working set of random pages overflows hardly a set of its colours
    // (past that, page colouring spills it well before its size, and the
    // median would sit on the edge), else up to the size.
    let within = |hi: f64| -> Vec<usize> {
        (below.last + 1..next.first)
            .filter(|&i| sw.xs[i] > size / 2.0 && sw.xs[i] <= hi)
            .collect()
    };
    let mut own = within(0.75 * size);
    if own.is_empty() {
        own = within(size);
    }
    let (Some(&first), Some(&last)) = (own.first(), own.last()) else {
        return Placed::Nowhere(
            format!(
                "the {} it counted is no level the sweep found, and the sweep has no point of its own between \
                 half of it and it",
                size_text(size)
            ),
            None,
        );
    };
    let level = median(&own.iter().map(|&i| sw.clean[i]).collect::<Vec<_>>());
    // Past the count, up to twice it, whatever plateau the points are on.
    let past: Vec<f64> = (below.last + 1..sw.xs.len())
        .filter(|&i| sw.xs[i] > size && sw.xs[i] <= 2.0 * size)
        .map(|i| sw.clean[i])
        .collect();
    let climbs = !past.is_empty() && median(&past) > level * (1.0 + 2.0 * super::slope::MAX_SPREAD);
    if !(level > below.level && level < next.level && climbs) {
        let why =
            format!(
            "the {} it counted is no level the sweep found, and the sweep does not show one there (it reads \
             {level:.2} ns between half of it and it, between the plateaus at {:.2} and {:.2} ns{})",
            size_text(size),
            below.level,
            next.level,
            if climbs { "" } else { ", and does not climb past it" }
        );
        return Placed::Nowhere(why, None);
    }
    pl.insert(j, Segment { first, last, level }.plateau(&sw.xs));
    // The two edges beside it: the level below's now read against its true
    // next level, its own against the level above. The level below's size
    // read both ways is kept: where the two part by more than a size is
    // read to, its edge is not pinned (the analysis marks it).
    let before = pl[j - 1].size(&sw.xs);
    for k in [j - 1, j] {
        if let Some(edge) = edge_after(pl, k) {
            bound(&mut pl[k], &edge, sw, machine, small_pages, memo);
        }
    }
    Placed::Inserted(j, before)
}

/// Where the count stands when its own reading of the level's hits
/// (`Structure::kept_ns`) is plateau `o`'s latency while its size is not
/// the one nearest that plateau's (`sizes`): it is that plateau's level,
/// the search's and the sweep's readings of its hits agreeing. It sizes
/// the level where the sweep read it within a factor of two, or read it
/// smaller and the count explains the edge (page colouring spilled the
/// level early, [`Edge::explained_by`]); anywhere else the two
/// measurements of that level disagree. (A simulated 1.5 MiB LRU L2 of 12
/// ways, counted exactly, whose sweep edge read 588 KiB and whose count
/// had been given to a 1.53 MiB plateau at three times its latency after
/// it: generated seed 1, #1162.)
fn owned(
    pl: &[Plateau],
    o: usize,
    s: &super::sets::Structure,
    sw: &Sweep,
    sizes: &[f64],
    memo: &mut crate::colour::Memo,
) -> Placed {
    let (size, read) = (s.size(), sizes[o]);
    if (read / size).ln().abs() <= std::f64::consts::LN_2 {
        return Placed::At(o);
    }
    let explained =
        read < size && edge_after(pl, o).is_some_and(|e| e.explained_by(sw, (size, s.ways, s.page), memo));
    if explained {
        return Placed::At(o);
    }
    Placed::Nowhere(
        format!(
            "it counted {} for the level whose hits it read at {:.2} ns, where the sweep read that level ({:.2} ns) \
             as {}{}: the two measurements of that level disagree",
            size_text(size),
            s.kept_ns,
            pl[o].level,
            size_text(read),
            if read < size {
                ", an edge a level of the count's colours and ways does not explain"
            } else {
                ""
            }
        ),
        Some(o),
    )
}

/// The edge from plateau `k` to the next, where the next is slower.
fn edge_after(pl: &[Plateau], k: usize) -> Option<Edge> {
    let (p, n) = (pl.get(k)?, pl.get(k + 1)?);
    (n.level > p.level).then_some(Edge {
        level: k as u32 + 1,
        from: p.first,
        to: n.first,
        a: p.level,
        b: n.level,
    })
}

/// Plateaus beyond the `caches` levels the machine states that are as
/// slow as memory ([`MIN_MEMORY_NS`]) and less than [`MIN_MEMORY_STEP`]
/// below the memory plateau after them join it, with a note. Such a
/// plateau is memory seen through the last level's remaining hits, not a
/// level: a guest whose sysfs states only its share of an L3 shared with
/// other tenants (8 MiB of a Zen 3's 32 MiB) still hits the rest of that
/// L3 now and then, so past its share latency dwells part-way to memory
/// (90 ns from 10 to 20 MiB, then 120 ns: the curve of
/// `an_unstated_plateau_close_to_memory_is_memory_and_a_clear_one_a_level`).
/// A cache the machine does not state must be as clear as one it states,
/// a step well below memory.
fn join_unstated(
    segs: &mut Vec<crate::segments::Segment>,
    caches: usize,
    xs: &[f64],
    ys: &[f64],
) -> Option<Note> {
    let mut joined = Vec::new();
    while segs.len() > caches + 1 {
        let n = segs.len();
        let (prev, last) = (segs[n - 2], segs[n - 1]);
        if prev.level < MIN_MEMORY_NS || last.level >= MIN_MEMORY_STEP * prev.level {
            break;
        }
        joined.push(format!("{} at {:.0} ns", size_text(xs[prev.first]), prev.level));
        crate::segments::join_next(segs, n - 2, ys);
    }
    (!joined.is_empty()).then(|| {
        note(
            "cache",
            "unstated-merged",
            format!(
                "cache: a plateau past the {caches} cache levels the machine states ({}) is as slow as memory and \
                 less than {MIN_MEMORY_STEP}x below it: memory seen through the last level's remaining hits, \
                 taken as memory, not as a level",
                joined.join(", ")
            ),
        )
    })
}

/// Plateau `p`'s end from its `edge` to the next level: the capacity it
/// was seen to hold, or the page-colour fit that replaces it, and where
/// the sweep should be refined.
fn bound(
    p: &mut Plateau,
    edge: &Edge,
    sw: &Sweep,
    machine: &MachineInfo,
    small_pages: bool,
    memo: &mut crate::colour::Memo,
) {
    let s = &sw.clean;
    let (size, outcome) = edge.size(&sw.xs, s, &sw.colour, machine, small_pages, memo);
    let fitted = outcome.fit();
    p.end_x = fitted.map_or(size, |f| f.capacity);
    p.colour = fitted.map(|f| (f, size));
    p.colour_rejected = outcome == ColourOutcome::Rejected;
    p.bounded = true;
    // Refine where the edge is: up to where a quarter of the loads miss.
    let (from, to, a, b) = (edge.from, edge.to, edge.a, edge.b);
    let quarter = crossing(&sw.xs, s, from, to, a + 0.25 * (b - a)).unwrap_or(size);
    p.cross = sw.xs.iter().position(|&x| x > quarter.max(size));
}

/// How far past the last plateau the curve must have climbed, as a
/// multiple of its latency, for that plateau to count as left: a hit in
/// the next level of any hierarchy costs at least this much more.
const TAIL_RISE: f64 = 2.0;

/// Where the sweep ends on a climb rather than a plateau (no memory
/// plateau: the last level's hits fall off slowly past its size), the
/// last plateau's edge to the sweep's top, the top standing in for the
/// next level; `None` when the curve past the last plateau never leaves
/// it.
fn tail_edge(sw: &Sweep, pl: &[Plateau]) -> Option<(usize, Edge)> {
    let k = pl.len().checked_sub(1)?;
    let n = sw.xs.len();
    let last = &pl[k];
    if last.last + 1 >= n {
        return None;
    }
    let top = sw.clean[n - 1];
    (top >= TAIL_RISE * last.level).then_some((
        k,
        Edge {
            level: k as u32 + 1,
            from: last.first,
            to: n - 1,
            a: last.level,
            b: top,
        },
    ))
}

/// How many nominal cache levels a sweep up to `max_x` spans (0 without
/// nominal caches: the curve alone decides).
fn spanned_cache_levels(machine: &MachineInfo, max_x: f64) -> usize {
    nominal_sizes(machine).iter().filter(|&&s| s < max_x).count()
}

/// The nominal data cache sizes, L1 to L4 (those the machine states).
pub(crate) fn nominal_sizes(machine: &MachineInfo) -> Vec<f64> {
    (1..=4)
        .filter_map(|l| machine.nominal_data_cache(l))
        .map(|c| c.size_bytes as f64)
        .collect()
}
