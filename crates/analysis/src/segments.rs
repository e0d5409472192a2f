//! Levels of a latency curve found by local slope, so that the same data
//! always gives the same structure.
//!
//! The greedy plateau finder of [`crate::levels`] groups points that stay
//! within a tolerance of a running median. On a busy VM that flips on one
//! point: a shared L3 whose usable share shrinks as the working set grows
//! slopes by 20–30% across its plateau and gets cut in two, and a ramp
//! between L3 and memory that happens to hold still for half an octave
//! becomes a level of its own (the recorded Emerald Rapids runs,
//! `tests/data/emr-live-*.json`, which `tests/machines.rs` checks give one
//! structure; the reference profiles in `../shared/reference/machines`,
//! beside the checkout, too). Here a level is defined by what the
//! hardware does, measured so that no single point decides:
//!
//! 1. **Clean the curve.** A running median of three removes any single
//!    disturbed point, up or down. Then the suffix minimum: a larger
//!    working set cannot be served faster than a smaller one by the same
//!    hierarchy (noise only adds time), so a point above a later point was
//!    disturbed and takes that point's value.
//! 2. **Flat is a slope, not a band.** Each point's slope per octave is
//!    read over a fixed window of ±¼ octave of working set (interpolated in
//!    log size), so dense refinement points and sparse sweep points are
//!    judged alike. A point is flat when the curve rises less than a given
//!    fraction of its own value per octave: a sloped plateau (a VM's share
//!    of a shared L3, a victim L3, a cache climbing with TLB misses) is
//!    still flat; a ramp between two levels is not.
//! 3. **A level spans an octave.** Each level of a hierarchy holds at
//!    least twice what the level before it holds, so its latency holds over
//!    at least an octave of working set; a shoulder that holds for less is
//!    a mixture of the levels on either side. Runs of flat points count
//!    from ¼ octave before their first point to ¼ octave after their last
//!    (the slope window hides that much of each end).
//! 4. **Neighbours that differ by little are one level.** Two flat runs
//!    whose levels differ by less than a given fraction are one level
//!    interrupted by a bump (a cache-set effect, a short burst of noise).
//! 5. **Told what to look for.** Where the machine states more cache levels
//!    than step 3 found, a shorter dwell in a gap between the others counts
//!    too ([`segments_guided`]).

use crate::stats::median;

/// Knobs of [`segments`].
#[derive(Debug, Clone, Copy)]
pub struct SegOptions {
    /// Half-width of the slope window, in octaves of x.
    pub window_oct: f64,
    /// A point is flat when its slope per octave is at most
    /// `max(slope_abs, slope_rel × |value|)`.
    pub slope_abs: f64,
    pub slope_rel: f64,
    /// A level spans at least this many octaves (window ends included).
    pub min_octaves: f64,
    /// Neighbouring levels closer than `max(merge_abs, merge_rel × |lower|)`
    /// are one level.
    pub merge_abs: f64,
    pub merge_rel: f64,
}

impl SegOptions {
    /// For latency-vs-working-set curves (ns or cycles per load).
    pub fn cache() -> Self {
        SegOptions {
            window_oct: 0.25,
            slope_abs: 0.0,
            slope_rel: 0.2,
            min_octaves: 1.0,
            merge_abs: 0.0,
            merge_rel: 0.25,
        }
    }
}

/// One level: points `first..=last` of the curve, at `level` (median of
/// the raw values over the run).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    pub first: usize,
    pub last: usize,
    pub level: f64,
}

impl Segment {
    /// As a [`crate::levels::Plateau`] over `xs`, ending at its last point
    /// (the caller places the boundary to the next level).
    pub fn plateau(&self, xs: &[f64]) -> crate::levels::Plateau {
        crate::levels::Plateau {
            first: self.first,
            last: self.last,
            level: self.level,
            end_x: xs[self.last],
            bounded: false,
            cross: None,
            colour: None,
            colour_rejected: false,
            tail_to: None,
        }
    }
}

/// Running median of three (the two ends keep their own value when it is
/// between their neighbour and the next; a median of two is their mean).
pub fn median3(ys: &[f64]) -> Vec<f64> {
    let n = ys.len();
    (0..n)
        .map(|i| {
            if n < 3 {
                return ys[i];
            }
            let (a, b) = if i == 0 {
                (1, 2)
            } else if i == n - 1 {
                (n - 2, n - 3)
            } else {
                (i - 1, i + 1)
            };
            median(&[ys[a], ys[i], ys[b]])
        })
        .collect()
}

/// The suffix minimum: each value replaced by the smallest value at or
/// after it.
pub fn suffix_min(ys: &[f64]) -> Vec<f64> {
    let mut out = ys.to_vec();
    for i in (0..out.len().saturating_sub(1)).rev() {
        out[i] = out[i].min(out[i + 1]);
    }
    out
}

/// Median of three, then suffix minimum (step 1 of the module notes).
pub fn clean(ys: &[f64]) -> Vec<f64> {
    suffix_min(&median3(ys))
}

/// `ys` at `x`, linear in log2 x between the neighbouring points (clamped
/// to the ends).
pub fn interp_log(xs: &[f64], ys: &[f64], x: f64) -> f64 {
    let n = xs.len().min(ys.len());
    if n == 0 {
        return f64::NAN;
    }
    if x <= xs[0] {
        return ys[0];
    }
    if x >= xs[n - 1] {
        return ys[n - 1];
    }
    let j = xs[..n].partition_point(|&v| v < x);
    let (x0, x1) = (xs[j - 1], xs[j]);
    let f = (x / x0).log2() / (x1 / x0).log2();
    ys[j - 1] + f * (ys[j] - ys[j - 1])
}

/// Slope per octave of `s` at each point, over ±`w` octaves (one-sided
/// where the window runs off the measured range).
fn slopes(xs: &[f64], s: &[f64], w: f64) -> Vec<f64> {
    let n = xs.len();
    (0..n)
        .map(|i| {
            let lo = (xs[i] * 2f64.powf(-w)).max(xs[0]);
            let hi = (xs[i] * 2f64.powf(w)).min(xs[n - 1]);
            let oct = (hi / lo).log2();
            if oct <= 1e-9 {
                0.0
            } else {
                (interp_log(xs, s, hi) - interp_log(xs, s, lo)) / oct
            }
        })
        .collect()
}

/// Which points are flat in this unit.
fn flat_points(xs: &[f64], s: &[f64], o: &SegOptions) -> Vec<bool> {
    slopes(xs, s, o.window_oct)
        .iter()
        .zip(s)
        .map(|(sl, v)| sl.abs() <= o.slope_abs.max(o.slope_rel * v.abs()))
        .collect()
}

/// The levels of `ys` over increasing `xs` (x > 0). `alt` is the same
/// curve in a second unit (cycles beside ns): a point is flat if it is
/// flat in either (cache hits are fixed in cycles, memory in ns, and the
/// core clock drifts). Levels and merging are judged on `ys`.
pub fn segments(xs: &[f64], ys: &[f64], alt: Option<&[f64]>, o: &SegOptions) -> Vec<Segment> {
    segments_guided(xs, ys, alt, o, 0)
}

/// As [`segments`], told that the hierarchy has `want` levels (the nominal
/// cache levels the sweep spans, plus memory). Where fewer levels span a
/// full octave, the gaps between them are searched for a shorter dwell: a
/// VM's slice of a shared last-level cache can be so small that its
/// plateau is short (the Emerald Rapids guest's L3 held still only from 2
/// to 3–4 MiB on a busy host), too short for the slope window to see it
/// flat, yet it is a level and the machine says it is there. Such a level
/// is a step followed by a dwell: latency at least doubles within half an
/// octave of leaving the level before, then stays within ±10% for at
/// least a third of an octave, clearly apart from the levels on either side. A ramp has no
/// such step, and no more than `want` levels are ever found, so a ramp
/// cannot add a level the hardware does not have.
pub fn segments_guided(
    xs: &[f64],
    ys: &[f64],
    alt: Option<&[f64]>,
    o: &SegOptions,
    want: usize,
) -> Vec<Segment> {
    let n = xs.len().min(ys.len());
    if n == 0 {
        return Vec::new();
    }
    let (xs, ys) = (&xs[..n], &ys[..n]);
    let s = clean(ys);
    let mut flat = flat_points(xs, &s, o);
    if let Some(a) = alt.filter(|a| a.len() >= n && a[..n].iter().all(|v| v.is_finite())) {
        // Flat in the second unit counts only where the first climbs by
        // less than twice the flat slope: a core clock that drifts by a
        // third (turbo on a busy host) can make a stretch of the ramp to
        // memory, which climbs faster, look flat in cycles, and the level
        // then swallows the ramp and memory with it.
        let sa = clean(&a[..n]);
        let loose = SegOptions {
            slope_abs: 2.0 * o.slope_abs,
            slope_rel: 2.0 * o.slope_rel,
            ..*o
        };
        let near = flat_points(xs, &s, &loose);
        for ((f, g), m) in flat.iter_mut().zip(flat_points(xs, &sa, o)).zip(near) {
            *f |= g && m;
        }
    }
    let close = |v: &[f64], a: (usize, usize), b: (usize, usize)| {
        let (lo, hi) = (median(&v[a.0..=a.1]), median(&v[b.0..=b.1]));
        (hi - lo).abs() < o.merge_abs.max(o.merge_rel * lo.abs().min(hi.abs()))
    };
    let mut merged = merge_runs(flat_runs(xs, &flat, o.window_oct, o.min_octaves), &s, ys, &close);
    if merged.len() < want {
        add_short_levels(&mut merged, xs, &s, want, &close);
    }
    merged
        .into_iter()
        .map(|(a, b)| Segment {
            first: a,
            last: b,
            level: median(&ys[a..=b]),
        })
        .collect()
}

/// `segs` with adjacent segments merged until at most `want` remain, each
/// time the pair whose levels are closest (smallest ratio), the merged
/// level the median of `ys` over both. For a sweep the curve cannot be
/// trusted to structure (a busy host moved the latency while it ran): the
/// machine's own statement of its levels decides how many there are, and
/// the surplus plateau joins the level it is nearest.
pub fn merge_to(mut segs: Vec<Segment>, ys: &[f64], want: usize) -> Vec<Segment> {
    while want > 0 && segs.len() > want {
        let k = (0..segs.len() - 1)
            .min_by(|&i, &j| {
                let r = |k: usize| (segs[k + 1].level / segs[k].level).ln().abs();
                r(i).total_cmp(&r(j))
            })
            .expect("two segments or more");
        join_next(&mut segs, k, ys);
    }
    segs
}

/// Segment `k` and the one after it as one level, at the median of `ys`
/// over both.
pub fn join_next(segs: &mut Vec<Segment>, k: usize, ys: &[f64]) {
    let b = segs.remove(k + 1);
    let a = &mut segs[k];
    a.last = b.last;
    a.level = median(&ys[a.first..=a.last]);
}

/// A run of points, first and last index.
type Run = (usize, usize);

/// Whether two runs sit at nearly the same level on a curve.
type Close<'a> = dyn Fn(&[f64], Run, Run) -> bool + 'a;

/// Runs of flat points spanning at least `min_octaves`, counted from
/// `window` octaves before the first to `window` after the last (the slope
/// window hides that much of each end).
fn flat_runs(xs: &[f64], flat: &[bool], window: f64, min_octaves: f64) -> Vec<(usize, usize)> {
    let n = xs.len();
    let span = |a: usize, b: usize| {
        let lo = (xs[a] * 2f64.powf(-window)).max(xs[0]);
        let hi = (xs[b] * 2f64.powf(window)).min(xs[n - 1]);
        (hi / lo).log2()
    };
    let mut runs = Vec::new();
    let mut i = 0;
    while i < n {
        if !flat[i] {
            i += 1;
            continue;
        }
        let mut j = i;
        while j + 1 < n && flat[j + 1] {
            j += 1;
        }
        if j > i && span(i, j) >= min_octaves {
            runs.push((i, j));
        }
        i = j + 1;
    }
    runs
}

/// Merge neighbouring runs at nearly the same level, on the cleaned values
/// `s` or the raw ones (two low points in a row survive the median of
/// three and the suffix minimum drags a run down to them; the raw medians
/// of the two runs still show one level).
fn merge_runs(runs: Vec<(usize, usize)>, s: &[f64], ys: &[f64], close: &Close) -> Vec<(usize, usize)> {
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for r in runs {
        if let Some(last) = merged.last_mut() {
            if close(s, *last, r) || close(ys, *last, r) {
                last.1 = r.1;
                continue;
            }
        }
        merged.push(r);
    }
    merged
}

/// How far the cleaned curve may stray, either way, from the value of a
/// dwell for a point to belong to it (step 5).
const DWELL_BAND: f64 = 0.10;

/// The shortest dwell, in octaves of working set, that step 5 takes for a
/// level: a third of an octave, one step of the coarse sweep.
const MIN_DWELL_OCTAVES: f64 = 1.0 / 3.0;

/// How a dwell must be entered to be a level (step 5): at least twice the
/// latency of the level before, reached within [`ENTRY_OCTAVES`] of where
/// the curve leaves that level. A hit in the next level of a hierarchy
/// costs several times a hit in the one before (on Intel server cores L3
/// 5–6× L2, ~100 against ~16 cycles, and memory 3× L3), so a level is
/// entered by a step. A
/// ramp (a mixture of two levels, a cache whose share shrinks) climbs far
/// slower than that, though any point on it dwells for a while:
/// ln(1.1²)/ln(1 + r) octaves at r per octave. No steady ramp passes both
/// tests: dwelling a third of an octave needs r ≤ 77% per octave, and
/// climbing from 1.25× the level before (where it is left) to 2× within
/// 0.75 octave needs r ≥ 87%. The 0.75 octave leaves room for an edge
/// smeared by a neighbour that holds part of the level below (up to 0.7
/// octave: the L2 edge of `tests/data/emr-live-ramp-edge.json`, whose L3
/// `emerald_rapids_live_runs_find_l3_however_short` requires).
const ENTRY_RISE: f64 = 2.0;
const ENTRY_OCTAVES: f64 = 0.75;

/// The dwell of the cleaned curve `s` around point `i`: the points next to
/// `i` whose values stay within ±[`DWELL_BAND`] of `s[i]`, where it
/// begins and its length in octaves, measured to where the curve (interpolated in log x) leaves
/// the band, so that sparse and dense points measure alike.
fn dwell(xs: &[f64], s: &[f64], i: usize) -> (usize, usize, f64, f64) {
    let (lo_v, hi_v) = (s[i] / (1.0 + DWELL_BAND), s[i] * (1.0 + DWELL_BAND));
    let inside = |j: usize| s[j] >= lo_v && s[j] <= hi_v;
    let (mut a, mut b) = (i, i);
    while a > 0 && inside(a - 1) {
        a -= 1;
    }
    while b + 1 < s.len() && inside(b + 1) {
        b += 1;
    }
    // Where the curve leaves the band between the last point inside and
    // the first outside, in log x.
    let leave = |inner: usize, outer: usize| {
        let (v0, v1) = (s[inner], s[outer]);
        let edge = if v1 > v0 { hi_v } else { lo_v };
        let f = if (v1 - v0).abs() > 0.0 {
            ((edge - v0) / (v1 - v0)).clamp(0.0, 1.0)
        } else {
            1.0
        };
        xs[inner] * (xs[outer] / xs[inner]).powf(f)
    };
    let lo_x = if a > 0 { leave(a, a - 1) } else { xs[a] };
    let hi_x = if b + 1 < s.len() { leave(b, b + 1) } else { xs[b] };
    (a, b, lo_x, (hi_x / lo_x).log2())
}

/// Step 5 of [`segments_guided`]: in the gaps between levels (and after
/// the last), the first point whose dwell is entered by a step (latency
/// at least [`ENTRY_RISE`]× the level before, reached within
/// [`ENTRY_OCTAVES`] of leaving it), lasts at
/// least [`MIN_DWELL_OCTAVES`] and sits clearly between the levels on
/// either side becomes a level (the lowest first: a hit in the level
/// itself is the fastest a dwell past the step can be; a later dwell is a
/// mixture of it and the next), until there are `want` levels.
fn add_short_levels(merged: &mut Vec<(usize, usize)>, xs: &[f64], s: &[f64], want: usize, close: &Close) {
    let level = |r: (usize, usize)| median(&s[r.0..=r.1]);
    'more: while merged.len() < want && !merged.is_empty() {
        for k in 0..merged.len() {
            let from = merged[k].1 + 1;
            let to = merged.get(k + 1).map_or(s.len(), |m| m.0);
            for i in from..to {
                let (a, b, lo_x, oct) = dwell(xs, s, i);
                if a < from || b >= to || oct < MIN_DWELL_OCTAVES {
                    continue;
                }
                let c = (a, b);
                let prev = level(merged[k]);
                let left = crossing(xs, s, merged[k].0, a, prev * 1.25).unwrap_or(xs[merged[k].1]);
                if level(c) < ENTRY_RISE * prev || (lo_x / left).log2() > ENTRY_OCTAVES {
                    continue;
                }
                let above = level(merged[k]) < level(c) && !close(s, merged[k], c);
                let below = merged
                    .get(k + 1)
                    .is_none_or(|&m| level(c) < level(m) && !close(s, c, m));
                if above && below {
                    merged.insert(k + 1, c);
                    continue 'more;
                }
            }
        }
        break;
    }
}

/// Where the cleaned curve `s` last crosses `threshold` going up between
/// points `from` and `to` (inclusive): the x of the crossing, interpolated
/// in log x, or `None` if it does not cross there.
pub fn crossing(xs: &[f64], s: &[f64], from: usize, to: usize, threshold: f64) -> Option<f64> {
    let to = to.min(xs.len().min(s.len()).saturating_sub(1));
    if from >= to {
        return None;
    }
    // The last point at or under the threshold before the first point of
    // `to`'s run over it.
    let mut j = to;
    while j > from && s[j - 1] > threshold {
        j -= 1;
    }
    if j == from || s[j] <= threshold {
        return None;
    }
    let (x0, y0, x1, y1) = (xs[j - 1], s[j - 1], xs[j], s[j]);
    let f = if y1 > y0 {
        ((threshold - y0) / (y1 - y0)).clamp(0.0, 1.0)
    } else {
        0.5
    };
    Some(x0 * (x1 / x0).powf(f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_joins_the_closest_levels_first() {
        let ys = [1.0, 1.0, 4.0, 4.0, 100.0, 100.0, 150.0, 150.0];
        let seg = |first, last, level| Segment { first, last, level };
        let segs = vec![seg(0, 1, 1.0), seg(2, 3, 4.0), seg(4, 5, 100.0), seg(6, 7, 150.0)];
        let m = merge_to(segs.clone(), &ys, 3);
        assert_eq!(m.len(), 3);
        assert_eq!((m[2].first, m[2].last, m[2].level), (4, 7, 125.0));
        assert_eq!(merge_to(segs.clone(), &ys, 2).len(), 2);
        // Nothing to merge, or no count to merge to.
        assert_eq!(merge_to(segs.clone(), &ys, 4), segs);
        assert_eq!(merge_to(segs.clone(), &ys, 0), segs);
    }

    fn xs(lo: f64, hi: f64, per_oct: f64) -> Vec<f64> {
        let mut v = Vec::new();
        let mut x = lo;
        while x <= hi * 1.0001 {
            v.push(x);
            x *= 2f64.powf(1.0 / per_oct);
        }
        v
    }

    /// Levels at (capacity, latency), sharp steps, memory at `mem`.
    fn staircase(xs: &[f64], lv: &[(f64, f64)], mem: f64) -> Vec<f64> {
        xs.iter()
            .map(|&x| lv.iter().find(|l| x <= l.0).map_or(mem, |l| l.1))
            .collect()
    }

    #[test]
    fn cleaning_removes_single_points_either_way() {
        let y = [1.0, 1.0, 9.0, 1.0, 1.0, 0.1, 1.0, 5.0, 5.0];
        let c = clean(&y);
        assert_eq!(c, vec![1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 5.0, 5.0]);
    }

    #[test]
    fn staircase_levels() {
        let x = xs(4096.0, 1073741824.0, 4.0);
        let y = staircase(
            &x,
            &[(32768.0, 1.3), (524288.0, 3.9), (8.0 * 1048576.0, 16.0)],
            140.0,
        );
        let s = segments(&x, &y, None, &SegOptions::cache());
        let lv: Vec<f64> = s.iter().map(|s| s.level).collect();
        assert_eq!(lv, vec![1.3, 3.9, 16.0, 140.0]);
    }

    #[test]
    fn sloped_plateau_is_one_level_and_a_shoulder_is_none() {
        // L3 slopes from 38 to 46 ns over 2.5..9 MiB (a VM's share of a
        // shared L3); a shoulder at 80 ns holds for half an octave on the
        // way to memory.
        let x = xs(262144.0, 512.0 * 1048576.0, 16.0);
        let y: Vec<f64> = x
            .iter()
            .map(|&x| {
                let m = x / 1048576.0;
                if m <= 2.0 {
                    6.0
                } else if m <= 2.5 {
                    6.0 + (m - 2.0) / 0.5 * 32.0
                } else if m <= 9.0 {
                    38.0 + 8.0 * (m / 2.5).log2() / (9.0f64 / 2.5).log2()
                } else if m <= 11.0 {
                    46.0 + (m - 9.0) / 2.0 * 34.0
                } else if m <= 16.0 {
                    80.0
                } else if m <= 22.0 {
                    80.0 + (m - 16.0) / 6.0 * 40.0
                } else {
                    120.0
                }
            })
            .collect();
        let s = segments(&x, &y, None, &SegOptions::cache());
        assert_eq!(s.len(), 3, "{s:?}");
        assert!((s[1].level - 42.0).abs() < 3.0, "{s:?}");
        assert!((s[2].level - 120.0).abs() < 1.0);
    }

    #[test]
    fn one_bad_point_does_not_change_the_structure() {
        let x = xs(4096.0, 256.0 * 1048576.0, 6.0);
        let y = staircase(
            &x,
            &[(49152.0, 1.7), (2097152.0, 5.5), (9.0 * 1048576.0, 40.0)],
            120.0,
        );
        let base = segments(&x, &y, None, &SegOptions::cache());
        for i in 0..x.len() {
            for f in [0.3, 3.0] {
                let mut z = y.clone();
                z[i] *= f;
                let s = segments(&x, &z, None, &SegOptions::cache());
                assert_eq!(s.len(), base.len(), "point {i} × {f}: {s:?}");
            }
        }
    }

    /// L1, L2, then the VM's short slice of L3 (38 ns from 2 to 3 MiB,
    /// too short for the slope window) and a steady climb to memory.
    fn short_l3(x: &[f64]) -> Vec<f64> {
        x.iter()
            .map(|&x| {
                let m = x / 1048576.0;
                if x <= 49152.0 {
                    2.0
                } else if m <= 2.0 {
                    6.4
                } else if m <= 3.2 {
                    38.0 + 2.0 * (m - 2.0)
                } else if m <= 16.0 {
                    40.0 * (m / 3.2).powf((125.0f64 / 40.0).ln() / 5.0f64.ln())
                } else {
                    125.0
                }
            })
            .collect()
    }

    #[test]
    fn a_short_level_is_found_when_the_machine_says_it_is_there() {
        let x = xs(4096.0, 1024.0 * 1048576.0, 3.0);
        let y = short_l3(&x);
        let o = SegOptions::cache();
        assert_eq!(
            segments(&x, &y, None, &o).len(),
            3,
            "the octave rule alone misses it"
        );
        let s = segments_guided(&x, &y, None, &o, 4);
        let lv: Vec<f64> = s.iter().map(|s| s.level).collect();
        assert_eq!(lv.len(), 4, "{lv:?}");
        assert!((lv[2] - 39.0).abs() < 2.0, "{lv:?}");
        // Never more levels than asked for, and none where the data has none.
        assert_eq!(segments_guided(&x, &y, None, &o, 6).len(), 4);
        assert_eq!(segments_guided(&x, &y, None, &o, 3).len(), 3);
    }

    #[test]
    fn a_ramp_is_no_level_even_when_one_is_expected() {
        // L2 ends at 1 MiB and latency climbs steadily to memory: at 60%
        // and at 100% per octave, sampled sparsely and densely.
        for rate in [1.6f64, 2.0] {
            for per_oct in [3.0, 16.0] {
                let x = xs(4096.0, 1024.0 * 1048576.0, per_oct);
                let y: Vec<f64> = x
                    .iter()
                    .map(|&x| {
                        let m = x / 1048576.0;
                        if x <= 32768.0 {
                            1.3
                        } else if m <= 1.0 {
                            4.0
                        } else {
                            (4.0 * rate.powf(m.log2())).min(140.0)
                        }
                    })
                    .collect();
                let s = segments_guided(&x, &y, None, &SegOptions::cache(), 4);
                assert_eq!(s.len(), 3, "rate {rate}, {per_oct}/octave: {s:?}");
            }
        }
    }

    #[test]
    fn the_guided_search_survives_one_bad_point() {
        let x = xs(4096.0, 1024.0 * 1048576.0, 3.0);
        let y = short_l3(&x);
        for i in 0..x.len() {
            for f in [0.3, 3.0] {
                let mut z = y.clone();
                z[i] *= f;
                let s = segments_guided(&x, &z, None, &SegOptions::cache(), 4);
                assert_eq!(s.len(), 4, "point {i} × {f}: {s:?}");
            }
        }
    }

    #[test]
    fn crossing_interpolates_in_log_x() {
        let x = [1.0, 2.0, 4.0, 8.0];
        let s = [0.0, 0.0, 10.0, 10.0];
        let c = crossing(&x, &s, 0, 3, 5.0).unwrap();
        assert!((c - 2.0 * 2f64.sqrt()).abs() < 1e-9);
        assert_eq!(crossing(&x, &s, 0, 3, 20.0), None);
    }
}
