//! A cache level's edge to the next level, and the size read from it: the
//! capacity the level was seen to hold, or, for a private level on base
//! pages, the capacity a page-colour fit of the edge gives ([`crate::colour`],
//! the edge averaged over several page placements where they were measured).

use super::tlb_share::TlbShare;
use crate::segments::crossing;
use hwcal_model::{MachineInfo, RawCurve};

/// A working set's latency over page placements, as the colour fit reads
/// it: the mean of the placements' latencies (the model predicts the
/// expectation over random page draws, which one placement alone misses by
/// its luck of the draw), with the highest left out where there are five
/// or more (a burst of noise from another tenant lands on one placement,
/// not on the draw). `None` with fewer than two valid placements.
pub fn placement_mean(samples: &[f64]) -> Option<f64> {
    placement_stats(samples).map(|(m, _)| m)
}

/// [`placement_mean`] and its standard error (the spread of the
/// placements it averages over the square root of their number): how far
/// the mean of this many draws of pages may lie from the expectation the
/// colour model predicts.
pub fn placement_stats(samples: &[f64]) -> Option<(f64, f64)> {
    let mut v: Vec<f64> = samples
        .iter()
        .copied()
        .filter(|y| y.is_finite() && *y > 0.0)
        .collect();
    if v.len() < 2 {
        return None;
    }
    v.sort_by(f64::total_cmp);
    if v.len() >= 5 {
        v.pop();
    }
    let (mean, sd) = crate::stats::mean_sd(&v)?;
    Some((mean, sd / (v.len() as f64).sqrt()))
}

/// The edge curve over page placements ([`placement_stats`] at each
/// working set: the mean and its standard error), the TLB's share removed,
/// in size order. `pick`: the placements to
/// use, by index, repeats allowed (the bootstrap's resample); all of them
/// without it.
pub(super) fn colour_points(
    colour: Option<&RawCurve>,
    tlb: Option<&TlbShare>,
    pick: Option<&[usize]>,
) -> Vec<(f64, f64, f64)> {
    let Some(c) = colour else {
        return Vec::new();
    };
    let mut out: Vec<(f64, f64, f64)> = c
        .points
        .iter()
        .filter(|q| q.x > 0.0)
        .filter_map(|q| {
            let share = tlb.map_or(0.0, |t| t.at_bytes(q.x).0);
            let mean = match pick {
                Some(ix) => {
                    let v: Vec<f64> = ix.iter().filter_map(|&j| q.samples.get(j).copied()).collect();
                    placement_stats(&v)
                }
                None => placement_stats(&q.samples),
            };
            mean.map(|(m, se)| (q.x, m - share, se))
        })
        .collect();
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

/// The edge of level `level` to the next: points `from..=to` of the
/// curve, latency `a` on the level and `b` on the next.
#[derive(Debug, Clone, Copy)]
pub(super) struct Edge {
    pub(super) level: u32,
    pub(super) from: usize,
    pub(super) to: usize,
    pub(super) a: f64,
    pub(super) b: f64,
}

impl Edge {
    /// The level's size read from the cleaned curve `s` (and the placements'
    /// edge `colour`): the capacity it was seen to hold, and, for a private
    /// level on base pages, the page-colour fit that replaces it.
    pub(super) fn size(
        &self,
        xs: &[f64],
        s: &[f64],
        colour: &[(f64, f64, f64)],
        machine: &MachineInfo,
        small_pages: bool,
        memo: &mut crate::colour::Memo,
    ) -> (f64, ColourOutcome) {
        let Edge { from, to, a, b, .. } = *self;
        // Where the curve has climbed a quarter of the way to the next
        // level, but at most 50% above this one: on a slow ramp (a level
        // with no plateau of its own between this one and the next)
        // `held_capacity` counts that level's hits as this one's.
        let climbed = crossing(xs, s, from, to, a + (0.25 * (b - a)).min(0.5 * a));
        let held = held_capacity(xs, s, from, to, a, b);
        let size = climbed.map_or(held, |c| c.min(held));
        let fitted = if small_pages {
            colour_size(xs, s, colour, machine, (self, held), memo)
        } else {
            ColourOutcome::NotFitted
        };
        (size, fitted)
    }
}

/// What the page-colour fit made of a level's edge.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum ColourOutcome {
    /// No fit: the model does not apply (huge pages, a shared level, ways
    /// unknown), or too little of the transition was measured, or only the
    /// sweep's one placement was there and the model did not explain it.
    NotFitted,
    /// Measured over several page placements, and still the model could
    /// not explain it (or too little of the transition for a fit): the edge
    /// was disturbed, or its capacity is not confirmed.
    Rejected,
    /// The capacity that explains the edge.
    Fitted(crate::colour::ColourFit),
}

impl ColourOutcome {
    pub(super) fn fit(self) -> Option<crate::colour::ColourFit> {
        match self {
            ColourOutcome::Fitted(f) => Some(f),
            _ => None,
        }
    }
}

/// The size of level `level` from its edge (points `from..=to`, latency
/// `a` on the level, `b` on the next) by a page-colour fit
/// ([`crate::colour`]): only for a cache private to this CPU whose ways
/// sysfs states (a shared level's share moves with its other users, which
/// the model does not know) and only where the fit explains the edge.
fn colour_size(
    xs: &[f64],
    clean: &[f64],
    colour: &[(f64, f64, f64)],
    machine: &MachineInfo,
    (e, held): (&Edge, f64),
    memo: &mut crate::colour::Memo,
) -> ColourOutcome {
    // L1 is indexed by virtual address (its sets lie within a page's
    // offset bits): page placement cannot colour it.
    if e.level < 2 {
        return ColourOutcome::NotFitted;
    }
    let Some(n) = machine.nominal_data_cache(e.level) else {
        return ColourOutcome::NotFitted;
    };
    let Some(ways) = n.ways.filter(|&w| w >= 2).map(|w| w as usize) else {
        return ColourOutcome::NotFitted;
    };
    if n.shared_cpus.len() > 1 {
        return ColourOutcome::NotFitted;
    }
    let (to, (pts, scatter)) = (e.to.min(xs.len() - 1), e.hits(xs, clean, colour));
    let placed = scatter.is_some();
    // The base page (4 KiB on x86; 16 or 64 KiB on some Arm kernels).
    let page = machine.page_bytes.unwrap_or(4096) as f64;
    // No cache hits more lines than it holds, whatever its replacement:
    // a capacity under what the level was seen to hold (less one colour,
    // the fit's resolution) cannot be the level's. (A thrash-resistant
    // model explained an edge disturbed at most placements by a third of
    // the capacity its own sweep showed held.)
    let floor = xs[e.from].max(held - ways as f64 * page);
    // Two sources agree where the stated size explains the edge nearly as
    // well as the best capacity does; else the edge must pin it down alone.
    let stated = Some(n.size_bytes as f64);
    match memo.best(&pts, ways, page, (floor, 2.0 * xs[to]), scatter) {
        Some(best) => match memo.settle(best, &pts, (ways, page, floor), stated, scatter) {
            Some(f) => ColourOutcome::Fitted(f),
            // Measured over placements and still not explained — a fit
            // too poor, or capacities apart explaining it alike — the held
            // capacity is not confirmed.
            None if placed => ColourOutcome::Rejected,
            None => ColourOutcome::NotFitted,
        },
        // Too little of a transition for any fit (the edge ran into the
        // next level's).
        None if placed => ColourOutcome::Rejected,
        None => ColourOutcome::NotFitted,
    }
}

/// Placement points over an edge for the colour fit to read them instead
/// of the sweep's single placement.
const PLACED_POINTS: usize = 4;

impl Edge {
    /// The edge as the colour fit reads it: (working set, fraction of loads
    /// that hit the level) from the placements' mean where it was measured
    /// over this edge, else from the sweep's one placement; and how far that
    /// mean may stray from the model's expectation by the luck of its draws,
    /// in hit fraction (the standard errors' root mean square over the edge;
    /// `None` for one placement, which has none to tell).
    fn hits(&self, xs: &[f64], clean: &[f64], colour: &[(f64, f64, f64)]) -> (Vec<(f64, f64)>, Option<f64>) {
        let (from, to) = (self.from, self.to.min(xs.len() - 1));
        let hit = |y: f64| 1.0 - ((y - self.a) / (self.b - self.a)).clamp(0.0, 1.0);
        let over = edge_placements(xs, colour, from, to);
        if over.len() >= PLACED_POINTS {
            let se2 = over.iter().map(|p| p.2 * p.2).sum::<f64>() / over.len() as f64;
            let pts = over.iter().map(|&(x, y, _)| (x, hit(y))).collect();
            (pts, Some(se2.sqrt() / (self.b - self.a)))
        } else {
            ((from..=to).map(|i| (xs[i], hit(clean[i]))).collect(), None)
        }
    }

    /// Whether a level of `capacity` bytes and `ways` ways on pages of
    /// `page` bytes placed at random — a structure counted by eviction
    /// sets, not read from this edge — explains the edge as well as the
    /// capacity the edge itself fits best under any replacement
    /// ([`crate::colour::Memo::settle`] with the count in place of a stated
    /// size): then the edge began early because page colouring spilled the
    /// level's fullest colours, not because the level is smaller. A smaller
    /// level of its own at the edge (the count being of the level after it)
    /// misses most loads where the counted one would hit most, and does not.
    pub(super) fn explained_by(
        &self,
        sw: &super::sweep::Sweep,
        (capacity, ways, page): (f64, usize, f64),
        memo: &mut crate::colour::Memo,
    ) -> bool {
        let (xs, clean) = (&sw.xs, &sw.clean);
        if self.b <= self.a || ways < 2 || self.from >= xs.len() {
            return false;
        }
        let (pts, scatter) = self.hits(xs, clean, &sw.colour);
        let to = self.to.min(xs.len() - 1);
        let held = held_capacity(xs, clean, self.from, to, self.a, self.b);
        let floor = xs[self.from].max(held - ways as f64 * page);
        let Some(best) = memo.best(&pts, ways, page, (floor, 2.0 * xs[to].max(capacity)), scatter) else {
            return false;
        };
        memo.settle(best, &pts, (ways, page, floor), Some(capacity), scatter)
            .is_some_and(|f| (f.capacity - capacity).abs() <= ways as f64 * page)
    }
}

/// The placements' edge points (working set, ns) between points `from`
/// and `to` of the sweep.
fn edge_placements(xs: &[f64], colour: &[(f64, f64, f64)], from: usize, to: usize) -> Vec<(f64, f64, f64)> {
    let (lo, hi) = (xs[from], xs[to.min(xs.len() - 1)]);
    colour
        .iter()
        .filter(|p| p.0 >= lo && p.0 <= hi)
        .copied()
        .collect()
}

/// A level's effective size: the most of the working set it was seen to
/// hold. At working set x on the way from this level (latency `a`) to the
/// next (`b`), a fraction m = (y − a)/(b − a) of the loads miss, so the
/// level holds x·(1 − m); the size is the largest such value, on the
/// cleaned curve `s` over points `from..=to`.
///
/// It is one of two estimates, and the smaller is kept (see `Edge::size`).
/// Why not only where the curve first rises: on 4 KiB pages a physically
/// indexed level loses its fullest page colours before it is full, so its
/// curve starts to rise early and climbs over a wide range; a level that
/// keeps part of an oversized working set (a thrash-resistant
/// replacement) climbs late. Both hold about their capacity somewhere on
/// the way, and for a sharp edge the measure is the last size before it.
pub fn held_capacity(xs: &[f64], s: &[f64], from: usize, to: usize, a: f64, b: f64) -> f64 {
    let to = to.min(xs.len().min(s.len()) - 1);
    (from..=to)
        .map(|i| {
            let m = ((s[i] - a) / (b - a)).clamp(0.0, 1.0);
            xs[i] * (1.0 - m)
        })
        .fold(xs[from], f64::max)
}

/// L1's edge read two ways, when they contradict each other: (the most it
/// was seen to hold, where it began to climb). L1 is virtually indexed, so
/// a working set spreads evenly over its sets and no load misses it until
/// the set outgrows it: the working set where it began to climb is at
/// least its capacity, and it can never be seen to hold more than that.
/// Where it was (beyond the size tolerance), the misses past the start of
/// its edge were read against a next level too slow to be the one that
/// served them — a level between with no plateau of its own, its hits
/// counted as L1's (a simulated L1 with random replacement that kept part
/// of the chase up to an L2 only four times larger, sysfs absent: L1
/// 55.1 KiB for 48 KiB and the L3's step as its miss latency, `ok`).
/// `tolerance`: how far a size may stray before it disagrees (the
/// levels' nominal-size tolerance).
pub(super) fn l1_overheld(
    sw: &super::sweep::Sweep,
    pl: &[crate::levels::Plateau],
    tolerance: f64,
) -> Option<(f64, f64)> {
    let (p, n) = (pl.first()?, pl.get(1)?);
    let (from, to, a, b) = (p.first, n.first, p.level, n.level);
    if b <= a {
        return None;
    }
    let climbed = crossing(&sw.xs, &sw.clean, from, to, a + (0.25 * (b - a)).min(0.5 * a))?;
    let held = held_capacity(&sw.xs, &sw.clean, from, to, a, b);
    (held > (1.0 + tolerance) * climbed).then_some((held, climbed))
}

/// How far above its plateau a level's curve must read, at two points in a
/// row, to have begun to miss: a plateau is flat to this much when its
/// level is `ok` (`crate::levels`' spread bound).
const BEGAN_RISE: f64 = 0.05;

/// A level whose reported `size` (read from its edge) contradicts where its
/// curve began to climb: that point, if so — for L1 (virtually indexed) on
/// any pages, for a level past it on huge pages (the caller's choice). An
/// L1 with adaptive insertion that keeps part of an overflowing chase read
/// 77.4 KiB for 64, its curve 14% up at 66 KiB (generated seed 202, #177).
/// With every page covering all the level's sets, a chase of S bytes puts
/// S/C of its share in every set, so no set overflows — under any
/// replacement — before S passes the capacity C: where the curve first
/// rises above the plateau (two points in a row more than [`BEGAN_RISE`]
/// above it) is at least C, and the level cannot be seen to hold more than
/// that. Where its size says it did (beyond `tolerance`), the hit fraction was read
/// against a next level too slow to be the one that served the first
/// misses: a level between was not found (a simulated L2 of 1.5 MiB with
/// adaptive insertion, sysfs absent, its L3 of 6 MiB with no plateau of
/// its own: read as holding 1.8 MiB, the curve already 23% up at 1.59 MiB,
/// and its step of 54 ns to a 58 ns L4 as its miss latency, `ok`).
pub(super) fn overheld(
    sw: &super::sweep::Sweep,
    pl: &[crate::levels::Plateau],
    (k, size): (usize, f64),
    tolerance: f64,
) -> Option<f64> {
    let began = began_climb(sw, pl, k)?;
    (size > (1.0 + tolerance) * began).then_some(began)
}

/// Where level `k`'s curve first rises above its plateau (two points in a
/// row more than [`BEGAN_RISE`] above it), before the next plateau.
fn began_climb(sw: &super::sweep::Sweep, pl: &[crate::levels::Plateau], k: usize) -> Option<f64> {
    let (p, n) = (pl.get(k)?, pl.get(k + 1)?);
    let (to, a) = (n.first, p.level);
    if n.level <= a {
        return None;
    }
    let up = |i: usize| sw.clean.get(i).is_some_and(|&y| y > (1.0 + BEGAN_RISE) * a);
    Some(sw.xs[(p.last + 1..to).find(|&i| up(i) && up(i + 1))?])
}

/// A level whose size is bracketed and not pinned: where no set can
/// overflow before the working set passes the capacity (L1, virtually
/// indexed; any level on huge pages, `spread_evenly`), the capacity lies
/// between the most the level was seen to hold (`size`, a lower bound:
/// a cache serves no more hits than its lines) and where its curve began
/// to climb (an upper bound). Where the sweep has no point between the two
/// and they lie further apart than `tolerance`, the size read is only the
/// bracket's low end: LRU thrashes every set just past its capacity, so
/// the hits the first point past the edge shows understate what the
/// level holds (a simulated 1.25 MiB LRU L2 on huge pages, its edge
/// measured at 1 MiB and 1.26 MiB only, read 1.09 MiB, `ok`). Returns
/// where it began to climb, if so.
pub(super) fn bracketed(
    sw: &super::sweep::Sweep,
    pl: &[crate::levels::Plateau],
    (k, size, spread_evenly): (usize, f64, bool),
    tolerance: f64,
) -> Option<f64> {
    if !(k == 0 || spread_evenly) {
        return None;
    }
    let began = began_climb(sw, pl, k)?;
    let inside = sw
        .xs
        .iter()
        .any(|&x| x > size * (1.0 + 1e-3) && x < began * (1.0 - 1e-3));
    (began > (1.0 + tolerance) * size && !inside).then_some(began)
}
