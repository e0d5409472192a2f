//! Whether the stated geometry of a private level can produce its edge at
//! all, under any replacement policy.
//!
//! On base pages a physically indexed level's edge is spread by page
//! colouring (Kessler and Hill, TOCS 1992), and how it is spread depends on
//! a replacement policy nothing states, so a fit of the edge trades
//! capacity against policy (`crate::colour`). Two bounds do not: a set
//! whose colour drew no more pages than it has ways holds them under every
//! policy, and no set hits more lines of a cyclic chase per lap than it has
//! ways (`Memo::envelope`). Between them lies the edge of every cache of
//! the stated size and ways, whatever its policy. An edge outside them —
//! hits where such a cache would have no room, or misses where it would
//! have room in every set — contradicts the stated figure itself: a guest
//! shown its CPU model's cache table rather than the core's (QEMU's EPYC
//! models state an L2 of 512 KiB, 8 ways) read a 1 MiB L2 as 483 KiB,
//! within tolerance of the stated 512 KiB, `ok`.

use super::edge::Edge;
use super::sweep::Sweep;
use crate::levels::Plateau;
use hwcal_model::note::analysis as note;
use hwcal_model::{CacheLevel, MachineInfo, Note, Verdict};

/// How many standard deviations a point must lie outside the envelope to
/// count against it (the bounds' own spread over draws of pages and the
/// placements' standard error together).
const SIGMAS: f64 = 3.0;

/// Points outside the envelope needed to contradict: one can be a spike.
const OUTSIDE_POINTS: usize = 2;

/// Which way an edge left the envelope of the stated geometry.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Outside {
    /// More hits than a cache of the stated size can give.
    Above,
    /// Fewer hits than a cache of the stated size gives.
    Below,
}

/// The note (and the level's verdict, noisy) where level `l`, an `ok`
/// private level past L1 read on base pages, has an edge (`edge`, from
/// plateau `p` to the next) that a cache of the size and ways the machine
/// states for it cannot produce.
pub(super) fn stated_contradicted(
    l: &mut CacheLevel,
    sw: &Sweep,
    p: &Plateau,
    next: &Plateau,
    machine: &MachineInfo,
    memo: &mut crate::colour::Memo,
) -> Option<Note> {
    if l.level < 2 || l.verdict != Verdict::Ok || next.level <= p.level {
        return None;
    }
    let n = machine.nominal_data_cache(l.level)?;
    let ways = n.ways.filter(|&w| w >= 2)? as usize;
    if n.shared_cpus.len() > 1 {
        return None;
    }
    let page = machine.page_bytes.unwrap_or(4096) as f64;
    let stated = n.size_bytes as f64;
    let e = Edge {
        level: l.level,
        from: p.first,
        to: next.first.min(sw.xs.len() - 1),
        a: p.level,
        b: next.level,
    };
    let (points, draws) = edge_points(sw, &e);
    let mut outside: Vec<(f64, f64, f64, Outside)> = Vec::new();
    for (x, h, se) in points {
        let env = memo.envelope(x, stated, ways, page)?;
        let tol = |sd: f64| SIGMAS * (se * se + sd * sd / draws as f64).sqrt();
        if h > env.upper + tol(env.sd_upper) {
            outside.push((x, h, env.upper, Outside::Above));
        } else if h < env.lower - tol(env.sd_lower) {
            outside.push((x, h, env.lower, Outside::Below));
        }
    }
    if outside.len() < OUTSIDE_POINTS {
        return None;
    }
    let (x, h, bound, way) = outside[outside.len() / 2];
    l.verdict = Verdict::Noisy;
    let size = super::codes::size_text;
    let what = match way {
        Outside::Above => format!(
            "at {} it hit {:.0}% of the loads, where a cache of that size and ways holds at most {:.0}% on \
             random pages under any replacement",
            size(x),
            h * 100.0,
            bound * 100.0
        ),
        Outside::Below => format!(
            "at {} it hit {:.0}% of the loads, where a cache of that size and ways has room in enough sets \
             for {:.0}% on random pages under any replacement",
            size(x),
            h * 100.0,
            bound * 100.0
        ),
    };
    Some(note(
        "cache",
        &format!("l{}-stated-contradicted", l.level),
        format!(
            "cache: L{} ({}): the machine states {} of {ways} ways ({}), but its edge is one no such cache \
             makes: {what} ({} of the edge's sizes outside those bounds); the stated figure does not confirm \
             the size; marked noisy",
            l.level,
            size(l.size_bytes as f64),
            size(stated),
            n.source,
            outside.len()
        ),
    ))
}

/// The edge's points as (working set, hit fraction, standard error of the
/// hit fraction) and how many draws of pages each averages: the page
/// placements where they measured this edge, else the sweep's one draw.
fn edge_points(sw: &Sweep, e: &Edge) -> (Vec<(f64, f64, f64)>, usize) {
    let (lo, hi) = (sw.xs[e.from], sw.xs[e.to]);
    let span = e.b - e.a;
    let hit = |y: f64| 1.0 - ((y - e.a) / span).clamp(0.0, 1.0);
    let placed: Vec<(f64, f64, f64)> = sw
        .colour
        .iter()
        .filter(|q| q.0 >= lo && q.0 <= hi)
        .map(|&(x, y, se)| (x, hit(y), se / span))
        .collect();
    if placed.len() >= 4 && sw.colour_draws >= 2 {
        return (placed, sw.colour_draws);
    }
    let one = (e.from..=e.to)
        .map(|i| (sw.xs[i], hit(sw.clean[i]), 0.0))
        .collect();
    (one, 1)
}
