//! Whether a plateau is flat enough for its level to be a latency.
//!
//! A level's latency is its plateau's level, the median of its points.
//! That median is a latency only where the plateau is flat: where the
//! level below still serves part of the chase well past its own size (a
//! level with random replacement or adaptive insertion keeps a share of
//! every set that overflows it, falling off over an octave or more), the
//! next level's plateau climbs from where the level below ends to where it
//! ends itself, and when the next level is only a few times larger the
//! climb never finishes before its own edge: the median then sits
//! part-way up a slope, below the level's hit latency by however much of
//! the level below still served there (a simulated Arm L3 of 6 MiB over a
//! random 2 MiB L2 climbed from 5.4 ns at 2.2 MiB to 9.5 ns at 5.9 MiB and
//! read 8.65 ns, `ok`, against 11.1 ns). A level whose share of a shared
//! cache moved while the sweep ran climbs likewise. The scatter test
//! (`sweep::detrended_spread`) cannot see it: it measures the points
//! about their slope, not the slope.
//!
//! The latency of a level is the curve where it is flat. So the test
//! reads the curve across an octave around where the plateau reads its
//! level (half an octave each side, as far as the plateau reaches, or
//! half the level's size where the plateau stops short of that): where
//! latency there changes by more than the spread a level may have about
//! its trend ([`MAX_SPREAD`], the same 5%), the median sits on a slope and is no one latency, and the
//! level is marked noisy. An octave because the sweep's own grid puts
//! three points in one (refinement adds more near edges), so the slope is
//! read over the grid's points and not over one refined step; and because
//! it tells the two ends of a plateau apart from its middle: a plateau
//! that climbs over its first part (the level below still serving) and
//! then flattens, or starts its own edge early at its top (a share that
//! moved, a level that misses before its size), keeps a median on its
//! flat middle, which stands (a simulated L2 on huge pages climbed from
//! 4.4 ns at 203 KiB to 5.14 ns from 813 KiB and read 5.12 ns for 5.16).

use super::codes::size_text;
use super::sweep::Sweep;
use crate::levels::Plateau;
use hwcal_model::note::analysis as note;
use hwcal_model::Note;

/// How far latency may change across the octave where a plateau reads
/// its level, relative to it: the spread about its trend that already
/// marks a level noisy (`levels::cache_level`), so a level is `ok` only where neither its
/// scatter nor its slope moves its median by more.
pub const MAX_SPREAD: f64 = 0.05;

/// The curve at `x` (linear in log size between the points either side),
/// from points `first..=last`.
fn at(xs: &[f64], ys: &[f64], first: usize, last: usize, x: f64) -> f64 {
    let i = (first..=last).find(|&i| xs[i] >= x).unwrap_or(last);
    if i == first || xs[i] <= x {
        return ys[i];
    }
    let t = (x.ln() - xs[i - 1].ln()) / (xs[i].ln() - xs[i - 1].ln());
    ys[i - 1] + t * (ys[i] - ys[i - 1])
}

/// Where the plateau reads its level: where the curve crosses it (linear
/// in log size between two points either side of it), nearest the point
/// that reads nearest it. The median of an even number of points lies
/// between two of them (of two points, halfway), and the slope around it
/// is read there, not from one of its ends.
fn level_at(xs: &[f64], ys: &[f64], first: usize, last: usize, level: f64) -> f64 {
    let off = |i: usize| (ys[i] - level).abs();
    let m = (first..=last)
        .min_by(|&a, &b| off(a).total_cmp(&off(b)))
        .unwrap_or(first);
    let cross = |i: usize| {
        let (y0, y1) = (ys[i], ys[i + 1]);
        ((y0 - level) * (y1 - level) <= 0.0 && y0 != y1).then(|| {
            let t = (level - y0) / (y1 - y0);
            (xs[i].ln() + t * (xs[i + 1].ln() - xs[i].ln())).exp()
        })
    };
    [m.checked_sub(1).filter(|&i| i >= first), (m < last).then_some(m)]
        .into_iter()
        .flatten()
        .filter_map(cross)
        .min_by(|u, v| (u / xs[m]).ln().abs().total_cmp(&(v / xs[m]).ln().abs()))
        .unwrap_or(xs[m])
}

/// Whether plateau `p` still slopes where it reads its level (see the
/// module note): the curve at the two ends of the octave read, `(from,
/// to)`, where they are more than [`MAX_SPREAD`] of its level apart;
/// `None` where it is flat there.
pub(super) fn sloping(xs: &[f64], ys: &[f64], p: &Plateau) -> Option<(f64, f64)> {
    let n = xs.len().min(ys.len());
    if p.last < p.first || p.last >= n {
        return None;
    }
    // A plateau of one point shows nothing flat of its own: it is read
    // against the curve either side of it (where those points are its
    // edges, it is no level either).
    let (first, last) = if p.last > p.first {
        (p.first, p.last)
    } else {
        (0, n - 1)
    };
    if ys[first..=last].iter().any(|y| !y.is_finite()) {
        return None;
    }
    let x = level_at(xs, ys, first, last, p.level);
    // A plateau that ends within half an octave above where it reads its
    // level is read on past its last point as far as half its level's
    // size: a cache that holds its whole working set up to its size holds
    // it up to half that under any replacement and most placements of
    // pages, so the curve there is still the level's own (a simulated L2
    // of 256 KiB under a pseudo-LRU L1 that kept a share past its 64 KiB:
    // a plateau of 75-81 KiB at 3.87 ns, the curve 4.55 ns at 128-161 KiB,
    // read 3.87 ns, `ok`, for 4.54).
    let own_end = if p.bounded { p.end_x / 2.0 } else { 0.0 };
    let last = (last..n)
        .take_while(|&i| i == last || (xs[i] <= own_end && ys[i].is_finite()))
        .last()
        .unwrap_or(last);
    let (a, b) = (xs[first], xs[last]);
    let lo = (x / std::f64::consts::SQRT_2).max(a);
    let hi = (x * std::f64::consts::SQRT_2).min(b);
    let (from, to) = (at(xs, ys, first, last, lo), at(xs, ys, first, last, hi));
    ((to - from).abs() > MAX_SPREAD * p.level).then_some((from, to))
}

/// The note (and the caller's noisy verdict) for cache level `level` read
/// from plateau `p` where that plateau still slopes ([`sloping`]).
/// Also the curve's two readings, `(from, to)`.
pub(super) fn sloping_note(sw: &Sweep, p: &Plateau, level: u32) -> Option<(Note, (f64, f64))> {
    let (lo, hi) = sloping(&sw.xs, &sw.ys, p)?;
    let n = note(
        "cache",
        &format!("l{level}-sloping"),
        format!(
            "cache: L{level}: its plateau ({} to {}) still slopes where it reads its level: across the octave \
             there (as far as the plateau reaches) latency goes from {lo:.2} to {hi:.2} ns, more than \
             {:.0}% of its level {:.2} ns (the level below still serving part of the chase past its own size, \
             or a shared level's share that moved), so its median is no one latency; marked noisy",
            size_text(sw.xs[p.first]),
            size_text(sw.xs[p.last]),
            MAX_SPREAD * 100.0,
            p.level
        ),
    );
    Some((n, (lo, hi)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The simulated Arm L3 of 6 MiB over a random 2 MiB L2 (generated
    /// seed 1, #60): from 2.2 to 5.9 MiB it climbs from 5.4 to 9.5 ns,
    /// with the sweep's refined points dense near the top; its median,
    /// 8.65 ns, was reported `ok` for a level of 11.1 ns.
    #[test]
    fn a_plateau_climbing_from_the_level_below_is_sloping() {
        let kib = [
            2299.0, 2389.0, 2483.0, 2580.0, 3251.0, 4096.0, 4257.0, 4424.0, 4598.0, 4778.0, 4966.0, 5161.0,
            5363.0, 5574.0, 5793.0, 6020.0,
        ];
        let ys = [
            5.44, 5.71, 5.95, 6.18, 7.30, 8.29, 8.44, 8.55, 8.65, 8.77, 8.88, 9.01, 9.16, 9.26, 9.36, 9.45,
        ];
        let xs: Vec<f64> = kib.iter().map(|k| k * 1024.0).collect();
        let p = Plateau::bare(0, xs.len() - 1, 8.65);
        let (lo, hi) = sloping(&xs, &ys, &p).expect("sloping");
        assert!(hi - lo > 0.5, "{lo} {hi}");
    }

    /// A plateau whose top starts its own edge early (generated seed 1,
    /// #12: a shared L3 flat at 27.9 ns from 8 to 16 MiB, 29.6–30.2 ns
    /// from 20 MiB) reads its level on its flat middle.
    #[test]
    fn a_plateau_flat_in_its_middle_is_a_level() {
        let kib = [
            6502.0, 8192.0, 10321.0, 13004.0, 16384.0, 20642.0, 26008.0, 27029.0, 28090.0,
        ];
        let ys = [26.88, 27.43, 27.84, 27.88, 27.88, 29.62, 29.92, 30.20, 29.83];
        let xs: Vec<f64> = kib.iter().map(|k| k * 1024.0).collect();
        assert_eq!(sloping(&xs, &ys, &Plateau::bare(0, 8, 27.88)), None);
    }

    /// A plateau that climbs from the level below over its first half and is
    /// flat over its second (generated seed 1, #7: an L2 on huge pages
    /// from 4.4 ns at 203 KiB to 5.14 ns from 813 KiB, median 5.12 ns for
    /// 5.16 ns).
    #[test]
    fn a_plateau_that_flattened_is_a_level() {
        let kib = [
            203.0, 256.0, 322.0, 406.0, 512.0, 645.0, 813.0, 1024.0, 1064.0, 1106.0, 1149.0, 1194.0, 1241.0,
        ];
        let ys = [
            4.44, 4.69, 4.86, 4.97, 5.04, 5.09, 5.12, 5.14, 5.14, 5.14, 5.14, 5.14, 5.14,
        ];
        let xs: Vec<f64> = kib.iter().map(|k| k * 1024.0).collect();
        assert_eq!(sloping(&xs, &ys, &Plateau::bare(0, 12, 5.12)), None);
    }

    /// Two points 10% apart (generated seed 1, #497: a shared L4 read
    /// 54.19 ns, their mean, for 58.27 ns) are a slope, read around their
    /// median, halfway between them.
    #[test]
    fn two_points_apart_are_a_slope() {
        let xs = [32.0 * 1048576.0, 64.0 * 1048576.0];
        let ys = [51.66, 56.71];
        assert!(sloping(&xs, &ys, &Plateau::bare(0, 1, 54.19)).is_some());
        assert_eq!(sloping(&xs, &[54.0, 54.3], &Plateau::bare(0, 1, 54.15)), None);
    }

    /// A flat plateau with the scatter of a quiet sweep, and one whose
    /// last point begins the edge to the next level, are levels.
    #[test]
    fn a_flat_plateau_with_scatter_or_an_edge_point_is_not_sloping() {
        let xs: Vec<f64> = (0..12).map(|i| 2e6 * 1.2f64.powi(i)).collect();
        let mut ys: Vec<f64> = (0..12).map(|i| 20.0 + 0.3 * ((i * 7 % 5) as f64 - 2.0)).collect();
        let p = Plateau::bare(0, 11, 20.0);
        assert_eq!(sloping(&xs, &ys, &p), None);
        ys[11] = 24.0;
        assert_eq!(sloping(&xs, &ys, &p), None);
    }

    /// Three points cut out of a climb (generated seed 1, #550: L2 of
    /// 256 KiB over a random L1 of 64 KiB, read 2.71 ns for 4.32 ns) slope
    /// as a long plateau does; three flat ones do not; one point is read
    /// against the curve either side (generated seed 1, #128: an L3 read
    /// 15.66 ns, `ok`, from one point on the climb to 20.4 ns).
    #[test]
    fn a_short_plateau_is_judged_by_its_points() {
        let xs = [81.0 * 1024.0, 102.0 * 1024.0, 128.0 * 1024.0];
        assert!(sloping(&xs, &[2.22, 2.71, 3.13], &Plateau::bare(0, 2, 2.71)).is_some());
        assert_eq!(
            sloping(&xs, &[2.70, 2.71, 2.72], &Plateau::bare(0, 2, 2.71)),
            None
        );
        // One point is read against its neighbours: here a climb.
        assert!(sloping(&xs, &[2.22, 2.71, 3.13], &Plateau::bare(1, 1, 2.71)).is_some());
        assert_eq!(
            sloping(&xs, &[2.70, 2.71, 2.72], &Plateau::bare(1, 1, 2.71)),
            None
        );
    }

    /// Generated seed 13, machine 1108 (4 KiB pages, heavy spikes): a
    /// 256 KiB random L2 under a pseudo-LRU 64 KiB L1 that kept a share
    /// past its size. The plateau the segments found is 75–81 KiB at 3.87
    /// ns; the curve goes on to 4.55 ns by 128 KiB, well inside the L2's
    /// own half, and the L2 was reported at 3.87 ns, `ok`, for 4.54.
    #[test]
    fn a_plateau_ending_early_is_read_on_into_its_levels_own_half() {
        let kib = [
            66.0, 69.0, 72.0, 75.0, 78.0, 81.0, 102.0, 128.0, 161.0, 203.0, 211.0, 219.0, 256.0,
        ];
        let ys = [
            2.33, 3.11, 3.40, 3.72, 3.87, 3.90, 4.34, 4.56, 4.55, 4.68, 4.76, 5.82, 10.16,
        ];
        let xs: Vec<f64> = kib.iter().map(|k| k * 1024.0).collect();
        let mut p = Plateau::bare(3, 5, 3.87);
        p.end_x = 256.0 * 1024.0;
        assert!(sloping(&xs, &ys, &p).is_some());
        // Unbounded (the last plateau), it is judged by its own points.
        p.bounded = false;
        assert_eq!(sloping(&xs, &ys, &p), None);
        // Where the curve stays at the plateau's level up to half the
        // size, the plateau is a level, however short the segment.
        let flat = [
            2.33, 3.11, 3.40, 3.86, 3.87, 3.88, 3.88, 3.89, 3.90, 4.68, 5.1, 5.82, 10.16,
        ];
        p.bounded = true;
        assert_eq!(sloping(&xs, &flat, &p), None);
    }
}
