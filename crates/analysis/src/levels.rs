//! Plateaus and steps on a log(x) vs latency curve (The Calibrator's
//! analysis, made robust to noise and to ramps between levels).
//!
//! A memory hierarchy shows up as flat stretches (every load hits the same
//! level) separated by rises (the working set outgrows a level). A
//! *plateau* is a maximal run of consecutive points within a tolerance of
//! the run's median; runs too short to be a level (a ramp point, a noise
//! spike) are dropped, and neighbouring plateaus at the same height merged.
//! A level's effective size is where its plateau *ends*: the x at which the
//! curve, interpolated in log x, has climbed a fixed fraction of the way to
//! the next plateau (so a level whose last few ways are shared with code,
//! page tables or a neighbour still reads close to its real capacity, and a
//! ramp is not mistaken for capacity).

use crate::stats::median;
use hwcal_model::RawPoint;

/// Detection knobs. Defaults suit a latency-vs-size curve in ns.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// A point belongs to a run while within this fraction of the run's median...
    pub rel_tol: f64,
    /// ...or within this absolute distance (for curves near zero, e.g. TLB
    /// differences).
    pub abs_tol: f64,
    /// A run is a plateau with at least this many points...
    pub min_points: usize,
    /// ...spanning at least this many octaves (a level worth the name
    /// covers a range of sizes; a few dense refinement points caught
    /// mid-ramp do not).
    pub min_octaves: f64,
    /// Where between two plateaus the boundary lies (0 = end of the lower
    /// plateau's level, 1 = the upper level), in latency...
    pub boundary_frac: f64,
    /// ...but never more than this fraction above the lower plateau: when
    /// the next plateau is far up (memory), a level ends where the curve
    /// leaves it, not where it is a quarter of the way to DRAM.
    pub boundary_rel_cap: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            rel_tol: 0.10,
            abs_tol: 0.15,
            min_points: 2,
            min_octaves: 0.5,
            boundary_frac: 0.25,
            boundary_rel_cap: 0.5,
        }
    }
}

/// A flat stretch of the curve.
#[derive(Debug, Clone, PartialEq)]
pub struct Plateau {
    /// Index of the first and last point on the plateau.
    pub first: usize,
    pub last: usize,
    /// Median y over the plateau's points.
    pub level: f64,
    /// Where the plateau ends: the interpolated boundary to the next
    /// plateau, or the last point's x for the last plateau.
    pub end_x: f64,
    /// Whether `end_x` is a real boundary (false for the last plateau,
    /// which runs off the measured range).
    pub bounded: bool,
    /// Index of the first point past the boundary (the boundary lies
    /// between it and the point before); where a sweep should be refined.
    pub cross: Option<usize>,
}

impl Plateau {
    /// A representative x well inside the plateau (geometric middle).
    pub fn middle_x(&self, xs: &[f64]) -> f64 {
        (xs[self.first] * xs[self.last]).sqrt()
    }
}

fn within(y: f64, r: f64, o: &Options) -> bool {
    (y - r).abs() <= (o.rel_tol * r.abs()).max(o.abs_tol)
}

/// Find the plateaus of `ys` over increasing `xs` (x > 0).
pub fn plateaus(xs: &[f64], ys: &[f64], o: &Options) -> Vec<Plateau> {
    plateaus_alt(xs, ys, None, o)
}

/// As [`plateaus`], with a second unit for the same points (cycles beside
/// ns): a point stays on a plateau if it is level in *either* unit. Cache
/// hits are fixed in cycles and memory in ns, so while the core clock
/// drifts by ±15% each plateau stays flat in its own unit.
pub fn plateaus_alt(xs: &[f64], ys: &[f64], alt: Option<&[f64]>, o: &Options) -> Vec<Plateau> {
    let n = xs.len().min(ys.len());
    if n == 0 {
        return Vec::new();
    }
    let alt = alt.filter(|a| a.len() >= n && a.iter().all(|v| v.is_finite()));
    let level = |a: usize, b: usize, i: usize| {
        within(ys[i], median(&ys[a..b]), o) || alt.is_some_and(|c| within(c[i], median(&c[a..b]), o))
    };
    let same = |r: (usize, usize), q: (usize, usize)| {
        let m = |v: &[f64], r: (usize, usize)| median(&v[r.0..=r.1]);
        let close = |a: f64, b: f64| within(a, b, o) || within(b, a, o);
        close(m(ys, r), m(ys, q)) || alt.is_some_and(|c| close(m(c, r), m(c, q)))
    };
    // 1. Greedy runs against the running median.
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    for i in 1..n {
        if !level(start, i, i) {
            runs.push((start, i - 1));
            start = i;
        }
    }
    runs.push((start, n - 1));
    // 2. Keep runs long enough to be a level.
    let long = |&(a, b): &(usize, usize)| {
        let pts = b - a + 1;
        pts >= o.min_points.max(2) && (xs[b] / xs[a]).log2() >= o.min_octaves
    };
    let mut kept: Vec<(usize, usize)> = runs.into_iter().filter(long).collect();
    // 3. Merge neighbours at the same height (a noise spike split one level).
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for r in kept.drain(..) {
        if let Some(last) = merged.last_mut() {
            if same(*last, r) {
                last.1 = r.1;
                continue;
            }
        }
        merged.push(r);
    }
    // 4. Boundaries.
    let mut out: Vec<Plateau> = merged
        .iter()
        .map(|&(a, b)| Plateau {
            first: a,
            last: b,
            level: median(&ys[a..=b]),
            end_x: xs[b],
            bounded: false,
            cross: None,
        })
        .collect();
    for k in 0..out.len().saturating_sub(1) {
        let (lo, hi) = (out[k].level, out[k + 1].level);
        let step = o.boundary_frac * (hi - lo);
        let t = lo + step.signum() * step.abs().min(o.boundary_rel_cap * lo.abs().max(o.abs_tol));
        let rising = hi > lo;
        let crossed = |y: f64| if rising { y > t } else { y < t };
        // The boundary follows the *last* point still under the threshold
        // before the next plateau: noise only adds time, so a point under
        // it proves the level still holds that working set, while a point
        // over it may just have been disturbed.
        let mut j = out[k + 1].first;
        while j > out[k].last + 1 && crossed(ys[j]) && crossed(ys[j - 1]) {
            j -= 1;
        }
        if !crossed(ys[j]) {
            j += 1;
        }
        let (x0, y0, x1, y1) = (xs[j - 1], ys[j - 1], xs[j], ys[j]);
        let f = if (y1 - y0).abs() > 0.0 {
            ((t - y0) / (y1 - y0)).clamp(0.0, 1.0)
        } else {
            0.5
        };
        out[k].end_x = x0 * (x1 / x0).powf(f);
        out[k].bounded = true;
        out[k].cross = Some(j);
    }
    out
}

/// Cycles per load of a raw point: every sample converted with the clock
/// measured alongside it, then the minimum (the same statistic as `y`).
/// `None` when no clock was recorded.
pub fn point_cycles(p: &RawPoint) -> Option<f64> {
    let c = p
        .samples
        .iter()
        .zip(&p.mhz)
        .map(|(ns, mhz)| ns * mhz / 1000.0)
        .filter(|c| c.is_finite() && *c > 0.0)
        .fold(f64::INFINITY, f64::min);
    c.is_finite().then_some(c)
}

/// Median of the points' cycles over a plateau (`None` if any is unknown).
pub fn plateau_cycles(points: &[RawPoint], p: &Plateau) -> Option<f64> {
    let c: Option<Vec<f64>> = points[p.first..=p.last].iter().map(point_cycles).collect();
    c.map(|c| median(&c))
}

/// Where to add points to a coarse sweep: between consecutive points whose
/// y differ by more than the tolerance (a transition), at `per_octave`
/// points per octave. Returns new x values (not already present), sorted.
pub fn refine(xs: &[f64], ys: &[f64], o: &Options, per_octave: f64) -> Vec<f64> {
    let mut out = Vec::new();
    for i in 1..xs.len().min(ys.len()) {
        if within(ys[i], ys[i - 1], o) {
            continue;
        }
        let oct = (xs[i] / xs[i - 1]).log2();
        let k = (oct * per_octave).ceil() as usize;
        for s in 1..k {
            let x = xs[i - 1] * 2f64.powf(oct * s as f64 / k as f64);
            out.push(x);
        }
    }
    out.sort_by(f64::total_cmp);
    out
}

/// Points to add around each plateau boundary: `per_octave` per octave
/// over the two intervals before the crossing point (the boundary's
/// interval and the one before it, in case noise put it one off). New x
/// values only, sorted.
pub fn refine_boundaries(xs: &[f64], pl: &[Plateau], per_octave: f64) -> Vec<f64> {
    let mut out: Vec<f64> = Vec::new();
    for p in pl {
        let Some(j) = p.cross else { continue };
        for i in j.saturating_sub(1).max(1)..=j {
            let oct = (xs[i] / xs[i - 1]).log2();
            let k = (oct * per_octave).ceil() as usize;
            for s in 1..k {
                out.push(xs[i - 1] * 2f64.powf(oct * s as f64 / k as f64));
            }
        }
    }
    out.sort_by(f64::total_cmp);
    out.dedup_by(|a, b| (*a / *b - 1.0).abs() < 1e-3);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A synthetic latency curve: `levels` as (capacity, latency) and a
    /// final memory latency; between capacity and 1.25× capacity latency
    /// ramps up (a set-associative cache does not fall off a cliff).
    fn curve(levels: &[(f64, f64)], mem: f64, per_octave: f64, max: f64, noise: f64) -> (Vec<f64>, Vec<f64>) {
        let mut xs = Vec::new();
        let mut x = 4096.0;
        while x <= max {
            xs.push(x);
            x *= 2f64.powf(1.0 / per_octave);
        }
        let mut seed = 12345u64;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let ys = xs
            .iter()
            .map(|&x| {
                let mut y = mem;
                for (i, &(cap, lat)) in levels.iter().enumerate().rev() {
                    let next = levels.get(i + 1).map_or(mem, |l| l.1);
                    if x <= cap {
                        y = lat;
                    } else if x <= cap * 1.25 && y == next {
                        let f = (x / cap).log2() / 1.25f64.log2();
                        y = lat + f * (next - lat);
                    }
                }
                y * (1.0 + noise * rnd())
            })
            .collect();
        (xs, ys)
    }

    fn assert_close(got: f64, want: f64, tol: f64) {
        assert!(
            (got / want - 1.0).abs() <= tol,
            "got {got}, want {want} ± {}%",
            tol * 100.0
        );
    }

    #[test]
    fn three_levels_non_power_of_two() {
        let lv = [
            (48.0 * 1024.0, 2.0),
            (1.25 * 1048576.0, 6.5),
            (105.0 * 1048576.0, 30.0),
        ];
        let (xs, ys) = curve(&lv, 140.0, 8.0, 1.0 * 1073741824.0, 0.02);
        let p = plateaus(&xs, &ys, &Options::default());
        assert_eq!(p.len(), 4, "{p:?}");
        for (k, &(cap, lat)) in lv.iter().enumerate() {
            assert_close(p[k].end_x, cap, 0.125);
            assert_close(p[k].level, lat, 0.05);
            assert!(p[k].bounded);
        }
        assert_close(p[3].level, 140.0, 0.05);
        assert!(!p[3].bounded);
    }

    #[test]
    fn two_and_four_levels_and_scaling_invariance() {
        let lv = [(32.0 * 1024.0, 1.5), (512.0 * 1024.0, 5.0)];
        let (xs, ys) = curve(&lv, 90.0, 6.0, 64.0 * 1048576.0, 0.01);
        let p = plateaus(&xs, &ys, &Options::default());
        assert_eq!(p.len(), 3);
        assert_close(p[0].end_x, 32768.0, 0.125);
        assert_close(p[1].end_x, 524288.0, 0.125);
        // Same curve 3× slower: same sizes.
        let ys3: Vec<f64> = ys.iter().map(|y| 3.0 * y).collect();
        let p3 = plateaus(&xs, &ys3, &Options::default());
        assert_eq!(p3.len(), 3);
        assert_close(p3[1].end_x, p[1].end_x, 0.01);

        let lv4 = [
            (16.0 * 1024.0, 1.0),
            (256.0 * 1024.0, 4.0),
            (4.0 * 1048576.0, 12.0),
            (32.0 * 1048576.0, 40.0),
        ];
        let (xs, ys) = curve(&lv4, 120.0, 8.0, 512.0 * 1048576.0, 0.02);
        let p = plateaus(&xs, &ys, &Options::default());
        assert_eq!(p.len(), 5, "{p:?}");
        for (k, &(cap, _)) in lv4.iter().enumerate() {
            assert_close(p[k].end_x, cap, 0.125);
        }
    }

    #[test]
    fn missing_level_is_not_invented() {
        // L3 has no plateau of its own: the curve ramps straight from L2
        // to memory. Two cache levels and memory, nothing in between.
        let (xs, mut ys) = curve(
            &[(48.0 * 1024.0, 2.0), (2.0 * 1048576.0, 6.5)],
            145.0,
            4.0,
            4e8,
            0.01,
        );
        for (x, y) in xs.iter().zip(ys.iter_mut()) {
            if *x > 2.5 * 1048576.0 && *x < 16.0 * 1048576.0 {
                *y = 6.5 + (145.0 - 6.5) * ((x / 2.5e6f64).log2() / 3.0).min(1.0);
            }
        }
        let p = plateaus(&xs, &ys, &Options::default());
        assert_eq!(p.len(), 3, "{p:?}");
        assert_close(p[1].end_x, 2.0 * 1048576.0, 0.125);
    }

    #[test]
    fn noisy_plateau_and_spike() {
        let (xs, mut ys) = curve(
            &[(48.0 * 1024.0, 2.0), (2.0 * 1048576.0, 6.5)],
            145.0,
            4.0,
            2e8,
            0.06,
        );
        // One interrupted point in the middle of L2.
        let i = xs.iter().position(|&x| x > 300e3).unwrap();
        ys[i] *= 2.0;
        let p = plateaus(&xs, &ys, &Options::default());
        assert_eq!(p.len(), 3, "{p:?}");
        assert_close(p[0].end_x, 49152.0, 0.125);
        assert_close(p[1].end_x, 2097152.0, 0.125);
    }

    #[test]
    fn refine_targets_transitions() {
        let xs = [1.0, 2.0, 4.0, 8.0, 16.0];
        let ys = [1.0, 1.0, 1.0, 5.0, 5.0];
        let r = refine(&xs, &ys, &Options::default(), 4.0);
        assert_eq!(r.len(), 3);
        assert!(r.iter().all(|&x| x > 4.0 && x < 8.0));
    }

    #[test]
    fn cycles_use_each_samples_clock() {
        let p = RawPoint {
            x: 1.0,
            y: 2.0,
            samples: vec![2.0, 2.2],
            mhz: vec![2500.0, 2000.0],
        };
        assert!((point_cycles(&p).unwrap() - 4.4).abs() < 1e-9);
        let q = RawPoint {
            samples: vec![2.0],
            ..Default::default()
        };
        assert_eq!(point_cycles(&q), None);
    }
}
