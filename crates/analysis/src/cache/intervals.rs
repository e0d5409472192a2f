//! 95% intervals of the cache figures (levels' latencies and sizes, memory
//! latency) by a residual bootstrap over the sweep ([`crate::bootstrap`]),
//! with the page placements of a colour edge resampled too.

use super::edge::{colour_points, Edge};
use super::levels::plateau_size;
use super::memory::memory_points;
use super::sweep::Sweep;
use super::tlb_share::TlbShare;
use crate::levels::Plateau;
use crate::segments::clean;
use crate::stats::median;
use hwcal_model::{MachineInfo, RawCurve};

/// 95% intervals of what [`analyze_curves_tlb`] derived from a sweep.
#[derive(Debug, Default)]
pub(super) struct Intervals {
    /// Per cache level: latency (ns), size (bytes) and the step to the
    /// next plateau (replace time, ns).
    pub(super) latency: Vec<Option<[f64; 2]>>,
    pub(super) replace: Vec<Option<[f64; 2]>>,
    pub(super) size: Vec<Option<[f64; 2]>>,
    pub(super) memory: Option<[f64; 2]>,
}

/// Intervals of the levels' latencies and sizes and of memory latency by a
/// residual bootstrap ([`crate::bootstrap`]). The model of the curve is its
/// running median of three; the noise is each plateau's scatter about a
/// line in log size (the points of an edge draw from the plateaus on both
/// sides). Each copy puts resampled scatter on every point and re-derives
/// every figure the way the analysis did — levels as medians of their
/// plateaus, sizes by [`Edge::size`] with the copy's levels, memory from
/// its far points — with the plateaus' extent held fixed: the interval
/// says how well this sweep pins each figure down, not whether the levels
/// would be found again. Each interval is the copies' spread about the
/// figure the data gave ([`crate::bootstrap::interval_about`]). On base
/// pages the page placements of the colour edge are resampled too: which
/// pages a run drew is the largest uncertainty of a colour-fitted size. A
/// level whose plateau runs off the sweep has no size interval (its size
/// is a lower bound), nor has one whose copies do not all keep it below
/// the next level.
pub(super) fn intervals(
    sw: &Sweep,
    pl: &[Plateau],
    n_cache: usize,
    colour: Option<&RawCurve>,
    tlb: Option<&TlbShare>,
    machine: &MachineInfo,
    small_pages: bool,
) -> Intervals {
    use crate::bootstrap::{interval_about, Rng, REPLICATES, SEED};
    let n = sw.xs.len();
    let Some(by_point) = residual_pools(sw, pl) else {
        return Intervals::default();
    };
    // Placements are resampled by index (sample j of every point is
    // placement j); a point short of some keeps those it has.
    let placements = colour
        .filter(|_| small_pages)
        .and_then(|c| c.points.iter().map(|q| q.samples.len()).max())
        .unwrap_or(0);
    let mem_idx = (n_cache < pl.len()).then(|| memory_points(sw, &pl[pl.len() - 1]));
    // The model: the running median of three (the analysis's `clean` also
    // takes a suffix minimum, which would pull a climbing plateau down to
    // the lowest point after it).
    let model = crate::segments::median3(&sw.ys);
    let mut rng = Rng::new(SEED);
    let mut memo = crate::colour::Memo::default();
    let mut lat = vec![Vec::with_capacity(REPLICATES); n_cache];
    let mut size = vec![Vec::with_capacity(REPLICATES); n_cache];
    let mut step = vec![Vec::with_capacity(REPLICATES); n_cache];
    let mut mem = Vec::with_capacity(REPLICATES);
    for _ in 0..REPLICATES {
        let ys: Vec<f64> = (0..n)
            .map(|i| model[i] * (1.0 + rng.pick(&by_point[i]).unwrap_or(0.0)))
            .collect();
        let cl = clean(&ys);
        let levels: Vec<f64> = pl.iter().map(|p| median(&ys[p.first..=p.last])).collect();
        let picks: Vec<usize> = (0..placements).map(|_| rng.below(placements)).collect();
        let col = if placements >= 2 {
            colour_points(colour, tlb, Some(&picks))
        } else {
            Vec::new()
        };
        for k in 0..n_cache {
            lat[k].push(levels[k]);
            if let Some(next) = levels.get(k + 1) {
                step[k].push(next - levels[k]);
            }
            // The next level's latency: its plateau's, or for a level
            // bounded by the climb at the sweep's top, that top's.
            let next = match pl[k].tail_to {
                Some(t) => Some((t, cl[t])),
                None => pl.get(k + 1).map(|p| (p.first, levels[k + 1])),
            };
            if let Some((to, b)) = next.filter(|&(_, b)| pl[k].bounded && b > levels[k]) {
                let e = Edge {
                    level: k as u32 + 1,
                    from: pl[k].first,
                    to,
                    a: levels[k],
                    b,
                };
                memo.restrict(pl[k].colour.map(|(f, _)| f.policy));
                let (held, fit) = e.size(&sw.xs, &cl, &col, machine, small_pages, &mut memo);
                size[k].push(fit.fit().map_or(held, |f| f.capacity));
            }
        }
        if let Some(ix) = &mem_idx {
            let v: Vec<f64> = ix.iter().map(|&i| ys[i] + sw.share[i].0).collect();
            mem.push(median(&v));
        }
    }
    let size_of = |k: usize| plateau_size(&pl[k], &sw.xs);
    Intervals {
        latency: lat
            .iter()
            .enumerate()
            .map(|(k, v)| interval_about(v, pl[k].level).map(non_negative))
            .collect(),
        replace: step
            .iter()
            .enumerate()
            .map(|(k, v)| {
                let figure = pl.get(k + 1)?.level - pl[k].level;
                interval_about(v, figure).filter(|_| v.len() == REPLICATES)
            })
            .collect(),
        size: size
            .iter()
            .enumerate()
            .map(|(k, v)| {
                let iv = (v.len() == REPLICATES)
                    .then(|| interval_about(v, size_of(k)).map(non_negative))
                    .flatten()?;
                // A colour-fitted size is no finer than one colour (W ×
                // page): copies that all fit the same count do not make it
                // finer, and another run draws other pages.
                Some(match pl[k].colour {
                    Some((f, _)) => {
                        let s = size_of(k);
                        [iv[0].min(s - f.colour_bytes), iv[1].max(s + f.colour_bytes)]
                    }
                    None => iv,
                })
            })
            .collect(),
        memory: mem_idx.as_ref().and_then(|ix| {
            let v: Vec<f64> = ix.iter().map(|&i| sw.raw_ys[i]).collect();
            interval_about(&mem, median(&v)).map(non_negative)
        }),
    }
}

/// Each point's pool of relative residuals for [`intervals`]: its
/// plateau's scatter about a line in log size, or both neighbouring
/// plateaus' on an edge (a plateau of under three points lends the whole
/// curve's). `None` where no plateau shows any scatter to draw from.
fn residual_pools(sw: &Sweep, pl: &[Plateau]) -> Option<Vec<Vec<f64>>> {
    use crate::bootstrap::relative_residuals;
    let pools: Vec<Vec<f64>> = pl
        .iter()
        .map(|p| relative_residuals(&sw.xs[p.first..=p.last], &sw.ys[p.first..=p.last]))
        .collect();
    let all: Vec<f64> = pools.iter().flatten().copied().collect();
    if all.is_empty() {
        return None;
    }
    let pool = |j: usize| -> &[f64] {
        if pools[j].is_empty() {
            &all
        } else {
            &pools[j]
        }
    };
    let by_point = (0..sw.xs.len())
        .map(|i| match pl.iter().position(|p| i <= p.last) {
            Some(j) if i >= pl[j].first || j == 0 => pool(j).to_vec(),
            Some(j) => [pool(j - 1), pool(j)].concat(),
            None => pool(pl.len() - 1).to_vec(),
        })
        .collect();
    Some(by_point)
}

/// A latency or size cannot be negative, whatever a wide spread about a
/// small figure says.
fn non_negative([lo, hi]: [f64; 2]) -> [f64; 2] {
    [lo.max(0.0), hi.max(0.0)]
}
