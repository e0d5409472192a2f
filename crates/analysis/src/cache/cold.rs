//! A level's latency from its cold laps: a second, independent reading of
//! the latency beside the sweep's plateau, which decides where the two
//! differ.
//!
//! A steady chase over a working set inside level k is served partly by
//! the level below: random replacement and adaptive insertion keep part
//! of every set a chase overflows, so the plateau climbs from where the
//! level below ends and reads its median below the level's hit latency
//! (`slope`; a simulated L2 of 512 KiB under an adaptive 128 KiB L1 read
//! 3.95 ns for 5.56: generated seed 1, #515). The cold lap (`hwcal_probes::cache::ChaseBench::
//! cold_point`) takes that share away by construction: it times a single
//! lap right after a scrub emptied the levels below, and in one lap no
//! line comes back to them before its turn. What it reads is level k's
//! hit latency with no model of how much the level below kept (the
//! flush-granule test's eviction walk empties the levels below its
//! targets the same way, `hwcal_probes::flush`).
//!
//! It is taken at a sixteenth and an eighth of the level, with the scrub
//! at most half of it, so the lap, the scrub and over a third to spare
//! fit the level together. It stands as the latency only where it cannot be
//! something else:
//! - its two laps agree within [`slope::MAX_SPREAD`] (a lap that still
//!   depends on its working set was not served by one level);
//! - it reads at least the steady chase at the same working sets, within
//!   their intervals (taking hits away can only add time), and at least
//!   the plateau's level — unless the steady chase itself holds the laps'
//!   latency over a stretch of its own between the level below and the
//!   plateau's end (then the plateau's median is lifted by misses on its
//!   own points: page colours overflowing, page walks left in);
//! - it lies less than halfway from the level's plateau to the next
//!   level's (past that the scrub pushed the chase out of level k too,
//!   and the lap is as much the next level's).
//!
//! Where it stands it is the latency, whether the plateau slopes or reads
//! flat below it (a level below can keep an even share over the whole
//! plateau). Where the plateau slopes and the laps cannot stand in, the
//! level is noisy as before; where laps read below a flat plateau beyond
//! their interval, the two readings contradict each other, and the level
//! is noisy too. Where the laps moved the latency by more than half the
//! spread a level may have, the steps either side were read to the wrong
//! latency and are read again ([`restep`]).

use super::levels::NOMINAL_SIZE_TOLERANCE;
use super::slope;
use super::sweep::Sweep;
use super::tlb_share::TlbShare;
use crate::bootstrap::minimum_interval;
use crate::levels::Plateau;
use hwcal_model::note::analysis as note;
use hwcal_model::{CacheLevel, Note, RawCurve, Verdict};
use hwcal_stats::median;

/// A level's cold laps, their TLB share removed as the sweep's.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Cold {
    /// (working set, ns per load, its interval) per lap.
    pub laps: Vec<(f64, f64, Option<[f64; 2]>)>,
    /// The core clock over the laps (MHz), where measured.
    pub mhz: Option<f64>,
}

impl Cold {
    /// The laps' TLB-free readings from `curve` for a level of `size`
    /// bytes over one of `below` bytes (`None` with fewer than two laps,
    /// or laps that cannot be this level's: see [`fits`]).
    pub(super) fn read(curve: &RawCurve, tlb: Option<&TlbShare>, (below, size): (f64, f64)) -> Option<Cold> {
        if !fits(curve, below, size) {
            return None;
        }
        let mut laps = Vec::new();
        let mut mhz = Vec::new();
        for q in curve.points.iter().filter(|q| q.x > 0.0 && q.y.is_finite()) {
            let share = tlb.map_or(0.0, |t| t.at_bytes(q.x).0);
            // A lap whose TLB share is not known to within half the spread
            // a level may have (a lap just past a TLB level's entries, where
            // how the level replaces decides its misses) reads the share's
            // doubt as much as the level: no reading.
            let doubt = tlb.map_or(0.0, |t| t.within_bands_at_bytes(q.x) + t.form_doubt_at_bytes(q.x));
            if doubt > slope::MAX_SPREAD / 2.0 * (q.y - share) {
                continue;
            }
            let samples: Vec<f64> = q.samples.iter().map(|s| s - share).collect();
            laps.push((q.x, q.y - share, minimum_interval(&samples)));
            mhz.extend(q.mhz.iter().copied().filter(|m| m.is_finite() && *m > 0.0));
        }
        laps.sort_by(|a, b| a.0.total_cmp(&b.0));
        (laps.len() >= 2).then(|| Cold {
            laps,
            mhz: (!mhz.is_empty()).then(|| median(&mhz)),
        })
    }

    /// The latency the laps read together: their mean.
    pub(super) fn ns(&self) -> f64 {
        self.laps.iter().map(|l| l.1).sum::<f64>() / self.laps.len() as f64
    }

    /// The span of the laps' intervals (each lap's own reading where it
    /// has none).
    pub(super) fn interval(&self) -> [f64; 2] {
        let lo = self
            .laps
            .iter()
            .map(|l| l.2.map_or(l.1, |c| c[0]))
            .fold(f64::INFINITY, f64::min);
        let hi = self
            .laps
            .iter()
            .map(|l| l.2.map_or(l.1, |c| c[1]))
            .fold(0.0, f64::max);
        [lo.min(self.ns()), hi.max(self.ns())]
    }

    /// Whether the laps agree with each other (see the module note).
    fn flat(&self) -> bool {
        let ys = self.laps.iter().map(|l| l.1);
        let (lo, hi) = ys.fold((f64::INFINITY, 0.0f64), |(a, b), y| (a.min(y), b.max(y)));
        hi - lo <= slope::MAX_SPREAD * self.ns()
    }
}

/// Whether `curve`'s laps can read a level of `size` bytes over one of
/// `below` bytes, whatever level the run planned them for (it numbers them
/// by the levels it found while it ran; the finished profile's analysis
/// can find others): its scrub (the point at x = −scrub) covers the level
/// below — at least its size, less the tolerance a size is read to — and
/// the largest lap and the scrub fit this level together. A cache holds at
/// most its size, so a scrub that large leaves the level below nothing of
/// the chase, and a lap that fits beside the scrub stays in this one.
fn fits(curve: &RawCurve, below: f64, size: f64) -> bool {
    let Some(scrub) = curve.points.iter().find(|q| q.x < 0.0).map(|q| -q.x) else {
        return false;
    };
    let laps: Vec<f64> = curve.points.iter().map(|q| q.x).filter(|&x| x > 0.0).collect();
    let top = laps.iter().copied().fold(0.0, f64::max);
    laps.len() >= 2 && scrub >= (1.0 - NOMINAL_SIZE_TOLERANCE) * below && top + scrub <= size
}

/// The steady sweep at `x` (linear in log size between the points either
/// side), its TLB share removed.
fn sweep_at(sw: &Sweep, x: f64) -> Option<f64> {
    let i = sw.xs.iter().position(|&v| v >= x)?;
    if i == 0 || sw.xs[i] == x {
        return Some(sw.ys[i]);
    }
    let t = (x.ln() - sw.xs[i - 1].ln()) / (sw.xs[i].ln() - sw.xs[i - 1].ln());
    Some(sw.ys[i - 1] + t * (sw.ys[i] - sw.ys[i - 1]))
}

/// Why the cold laps do not give level `p`'s latency, or `None` where they
/// do (see the module note); `next` is the plateau above it.
pub(super) fn doubt(
    c: &Cold,
    sw: &Sweep,
    (below, p, next): (Option<&Plateau>, &Plateau, Option<&Plateau>),
) -> Option<String> {
    let ns = c.ns();
    if !c.flat() {
        return Some(format!(
            "its cold laps disagree ({}), so they were not served by one level",
            laps_text(c)
        ));
    }
    let from = below.map_or(0, |b| b.last + 1);
    if ns < p.level && !steady_at(sw, ns, from, p.last) {
        return Some(format!(
            "its cold laps read {ns:.2} ns, below the plateau's {:.2} ns, which taking the level below's \
             hits away cannot do",
            p.level
        ));
    }
    for &(x, y, ci) in &c.laps {
        let Some(s) = sweep_at(sw, x) else { continue };
        let hi = ci.map_or(y, |c| c[1]);
        if hi < s * (1.0 - slope::MAX_SPREAD) {
            return Some(format!(
                "its cold lap over {} read {y:.2} ns, below the steady chase's {s:.2} ns there",
                super::codes::size_text(x)
            ));
        }
    }
    if let Some(n) = next {
        if ns >= (p.level + n.level) / 2.0 {
            return Some(format!(
                "its cold laps read {ns:.2} ns, halfway or more to the next level's {:.2} ns (the scrub \
                 pushed the chase out of this level too)",
                n.level
            ));
        }
    }
    None
}

/// The shortest stretch of the steady sweep that shows a latency: a
/// quarter of an octave (two points of the sweep's finest spacing).
const STRETCH: f64 = 1.189_207_115_002_721; // 2^(1/4)

/// Whether the steady sweep, between indices `from` and `to` (past the
/// level below, up to the end of this level's plateau), holds `ns` over a
/// stretch of its own: consecutive points spanning at least [`STRETCH`],
/// each within the spread a level may have of it. Laps that read below the
/// plateau are the level's then: the chase saw the same latency where the
/// level below no longer served it and nothing yet missed, and the
/// plateau's higher median is its own points' misses (page colours
/// overflowing on base pages, page walks the TLB share left in) — a
/// simulated 1 MiB L2 read 2.74 ns at 203–256 KiB, inside the L1 TLB's
/// reach, its laps 2.77, its plateau past that reach 3.61: generated seed
/// 1, #1085. A climb only passes through a latency, and holds it over no
/// such stretch.
fn steady_at(sw: &Sweep, ns: f64, from: usize, to: usize) -> bool {
    let near = |i: usize| (sw.ys[i] / ns - 1.0).abs() <= slope::MAX_SPREAD;
    let mut start: Option<usize> = None;
    for i in from..=to.min(sw.ys.len().saturating_sub(1)) {
        if !near(i) {
            start = None;
            continue;
        }
        let a = *start.get_or_insert(i);
        if sw.xs[i] >= STRETCH * sw.xs[a] * (1.0 - 1e-9) {
            return true;
        }
    }
    false
}

fn laps_text(c: &Cold) -> String {
    c.laps
        .iter()
        .map(|(x, y, _)| format!("{y:.2} ns over {}", super::codes::size_text(*x)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Level `l` (plateau `pl[k]`) against its cold laps `c`, where there are
/// any: the notes, and where its latency is now theirs, the plateau's
/// reading it replaced. Where the
/// plateau slopes ([`slope::sloping_note`]) the laps decide: they give the
/// latency, or the level is noisy. Where it is flat, laps that pass
/// [`doubt`] and read above it give the latency too (the level below's
/// share can be even, a flat plateau lifted less than a slope shows: a
/// simulated victim L3 of 24 MiB read 16.8 ns flat, its laps 17.5, the
/// truth 17.7: generated seed 202, #1644); laps below it beyond both intervals contradict it, and the
/// level is noisy.
pub(super) fn judge(
    l: &mut CacheLevel,
    c: Option<&Cold>,
    sw: &Sweep,
    pl: &[Plateau],
    k: usize,
) -> (Vec<Note>, Option<f64>) {
    let p = &pl[k];
    let was = l.latency_ns;
    let below = k.checked_sub(1).and_then(|j| pl.get(j));
    let why = c.map(|c| doubt(c, sw, (below, p, pl.get(k + 1))));
    match (slope::sloping_note(sw, p, l.level), c, why) {
        (Some((_, sloped)), Some(c), Some(None)) => (vec![adopt(l, c, Some(sloped))], Some(was)),
        (Some((n, _)), _, why) => {
            l.verdict = Verdict::Noisy;
            let mut notes = vec![n];
            notes.extend(why.flatten().map(|w| refused(l.level, &w)));
            (notes, None)
        }
        (None, Some(c), Some(None)) => (vec![adopt(l, c, None)], Some(was)),
        (None, Some(c), Some(Some(_))) if contradicts(c, p) => {
            l.verdict = Verdict::Noisy;
            (
                vec![refused(
                    l.level,
                    &format!(
                        "its cold laps read {:.2} ns, below the plateau's {:.2} ns beyond their interval \
                         (taking the level below's hits away cannot do that)",
                        c.ns(),
                        p.level
                    ),
                )],
                None,
            )
        }
        _ => (Vec::new(), None),
    }
}

/// Whether the laps read below the plateau `p` beyond their interval and
/// the spread a level may have ([`slope::MAX_SPREAD`]).
fn contradicts(c: &Cold, p: &Plateau) -> bool {
    c.flat() && c.interval()[1] < p.level * (1.0 - slope::MAX_SPREAD)
}

/// Take level `l`'s latency from its cold laps: ns, cycles (by the laps'
/// clock where measured, else the sweep's ratio) and the laps' interval;
/// the note says why (`sloped`: the plateau's readings across the octave
/// where it slopes).
fn adopt(l: &mut CacheLevel, c: &Cold, sloped: Option<(f64, f64)>) -> Note {
    let was = l.latency_ns;
    let ns = c.ns();
    l.latency_cycles = match (c.mhz, l.latency_cycles) {
        (Some(m), _) => Some(ns * m / 1000.0),
        (None, Some(cy)) if was > 0.0 => Some(ns * cy / was),
        _ => None,
    };
    l.latency_ns = ns;
    l.latency_ns_ci95 = Some(c.interval());
    let plateau = match sloped {
        Some((from, to)) => format!(
            "its plateau still slopes (from {from:.2} to {to:.2} ns across the octave where it reads {was:.2} \
             ns: the level below serving part of a steady chase)"
        ),
        None => format!("its plateau reads {was:.2} ns, a steady chase the level below may serve part of"),
    };
    Note::info(
        "cache",
        &format!("l{}-cold", l.level),
        format!(
            "cache: L{}: {plateau}; its latency is read from one lap right after the levels below were \
             scrubbed, which none of them can serve: {} — {ns:.2} ns",
            l.level,
            laps_text(c)
        ),
    )
}

/// The steps either side of each level whose latency the cold laps moved
/// (`moved`: by more than half the spread a level may have): the sweep's
/// replace times were read to and from its plateau, so each is taken
/// again from the laps' latency. Where the level's idle-gap point does not
/// read the laps' latency either (`unconfirmed`), the idle-gap chase's
/// miss latencies beside it are not stated: it is a steady chase too,
/// served by the level below as often as the sweep was (a simulated L1
/// step read 2.54 ns for 3.14 that way: generated seed 1, #1144). The last level's step to memory
/// is not stated. Call after the intervals are attached.
pub(super) fn restep(levels: &mut [CacheLevel], moved: &[u32], unconfirmed: &[u32]) -> Vec<Note> {
    let mut notes = Vec::new();
    let n = levels.len();
    let beside = |levels: &[CacheLevel], i: usize, set: &[u32]| {
        set.contains(&levels[i].level) || (i + 1 < n && set.contains(&levels[i + 1].level))
    };
    for i in 0..n {
        if !beside(levels, i, moved) {
            continue;
        }
        let withhold = beside(levels, i, unconfirmed);
        let next = levels
            .get(i + 1)
            .map(|u| (u.level, u.latency_ns, u.latency_cycles, u.latency_ns_ci95));
        let l = &mut levels[i];
        let mut had_miss = false;
        if withhold {
            had_miss = l.miss_latency_ns.take().is_some();
            l.miss_latency_cycles = None;
            l.miss_latency_ns_ci95 = None;
        }
        let step = next.map(|(_, ns, _, _)| ns - l.latency_ns).filter(|s| *s > 0.0);
        l.replace_time_ns = step;
        l.replace_time_cycles = step.and(next.and_then(|u| u.2).zip(l.latency_cycles).map(|(a, b)| a - b));
        l.replace_time_ns_ci95 = step
            .and(next.and_then(|u| u.3))
            .map(|[lo, hi]| [lo - l.latency_ns, hi - l.latency_ns]);
        let what = match (step, next) {
            (Some(s), Some((up, ..))) => {
                format!("its replace time ({s:.2} ns) is read again between the cold laps' latency and L{up}'s, not between plateaus")
            }
            _ => "its step to memory is not stated (it was read to the plateau's latency)".to_string(),
        };
        notes.push(Note::info(
            "cache",
            &format!("l{}-step-cold", l.level),
            format!(
                "cache: L{}: {what}{}",
                l.level,
                if had_miss {
                    "; its miss latency is not stated (the idle-gap chase is a steady chase too, served \
                     by the level below as often as the sweep)"
                } else {
                    ""
                }
            ),
        ));
    }
    notes
}

/// The note where level `level`'s plateau slopes and its cold laps could
/// not stand in for it (`why`, from [`doubt`]).
pub(super) fn refused(level: u32, why: &str) -> Note {
    note(
        "cache",
        &format!("l{level}-cold-refused"),
        format!("cache: L{level}: its plateau slopes, and {why}: the latency stays the plateau's, in doubt"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwcal_model::RawPoint;

    fn lap(x: f64, y: f64) -> RawPoint {
        RawPoint {
            x,
            y,
            samples: vec![y, y * 1.01, y * 1.02],
            mhz: vec![3000.0; 3],
        }
    }

    /// A cold curve with its scrub's marker (64 KiB: an L1 of that size).
    fn curve(mut pts: Vec<RawPoint>) -> RawCurve {
        pts.insert(
            0,
            RawPoint {
                x: -65536.0,
                y: 0.0,
                ..Default::default()
            },
        );
        RawCurve {
            id: "cache.cold.2".into(),
            x_label: String::new(),
            y_label: String::new(),
            points: pts,
        }
    }

    /// A sweep whose L2 plateau climbs from 3.6 to 4.4 ns (an adaptive L1
    /// keeping part of it), then steps to an L3 at 20 ns.
    fn sloped_sweep() -> (Sweep, Plateau, Plateau) {
        let xs = [
            16384.0, 32768.0, 65536.0, 131072.0, 196608.0, 262144.0, 393216.0, 524288.0, 1048576.0,
            2097152.0, 4194304.0,
        ];
        let ys = [1.0, 1.0, 1.0, 3.6, 4.0, 4.2, 4.4, 9.0, 20.0, 20.0, 20.0];
        (
            sweep(&xs, &ys),
            Plateau::bare(3, 6, 4.1),
            Plateau::bare(8, 10, 20.0),
        )
    }

    /// A steady sweep of one sample per point at 3 GHz.
    fn sweep(xs: &[f64], ys: &[f64]) -> Sweep {
        let pts: Vec<RawPoint> = xs
            .iter()
            .zip(ys)
            .map(|(&x, &y)| RawPoint {
                x,
                y,
                samples: vec![y],
                mhz: vec![3000.0],
            })
            .collect();
        Sweep::new(&curve(pts), None)
    }

    #[test]
    fn two_agreeing_laps_above_the_sloping_plateau_give_the_latency() {
        let (sw, p, next) = sloped_sweep();
        let c = Cold::read(
            &curve(vec![lap(65536.0, 4.55), lap(131072.0, 4.6)]),
            None,
            (65536.0, 1048576.0),
        )
        .expect("two laps");
        assert_eq!(doubt(&c, &sw, (None, &p, Some(&next))), None);
        let mut l = CacheLevel {
            level: 2,
            latency_ns: 4.1,
            latency_cycles: Some(12.3),
            ..Default::default()
        };
        let n = adopt(&mut l, &c, Some((3.8, 4.4)));
        assert!((l.latency_ns - 4.575).abs() < 1e-9, "{l:?}");
        assert!((l.latency_cycles.unwrap() - 4.575 * 3.0).abs() < 1e-9);
        let [lo, hi] = l.latency_ns_ci95.unwrap();
        assert!(lo <= l.latency_ns && l.latency_ns <= hi);
        assert_eq!(n.code, "cache.l2-cold");
    }

    #[test]
    fn laps_that_cannot_be_the_level_are_refused() {
        let (sw, p, next) = sloped_sweep();
        // They disagree with each other.
        let c = Cold::read(
            &curve(vec![lap(65536.0, 4.5), lap(131072.0, 5.5)]),
            None,
            (65536.0, 1048576.0),
        )
        .unwrap();
        assert!(doubt(&c, &sw, (None, &p, Some(&next)))
            .unwrap()
            .contains("disagree"));
        // Below the plateau.
        let c = Cold::read(
            &curve(vec![lap(65536.0, 3.0), lap(131072.0, 3.05)]),
            None,
            (65536.0, 1048576.0),
        )
        .unwrap();
        assert!(doubt(&c, &sw, (None, &p, Some(&next)))
            .unwrap()
            .contains("below the plateau"));
        // Halfway to the next level.
        let c = Cold::read(
            &curve(vec![lap(65536.0, 12.2), lap(131072.0, 12.3)]),
            None,
            (65536.0, 1048576.0),
        )
        .unwrap();
        assert!(doubt(&c, &sw, (None, &p, Some(&next)))
            .unwrap()
            .contains("halfway"));
        // One lap alone is no reading; laps whose scrub does not cover the
        // level below, or that do not fit beside it in this one, are not
        // this level's.
        assert_eq!(
            Cold::read(&curve(vec![lap(65536.0, 4.5)]), None, (65536.0, 1048576.0)),
            None
        );
        let two = curve(vec![lap(131072.0, 4.5), lap(262144.0, 4.55)]);
        assert!(Cold::read(&two, None, (65536.0, 1048576.0)).is_some());
        assert_eq!(Cold::read(&two, None, (131072.0, 1048576.0)), None);
        assert_eq!(Cold::read(&two, None, (65536.0, 262144.0)), None);
    }

    /// Laps below the plateau stand where the steady chase held their
    /// latency over a stretch of its own past the level below (its plateau
    /// lifted by misses on its own points); a climb that only passes
    /// through their latency is no such stretch.
    #[test]
    fn laps_below_the_plateau_stand_where_the_steady_chase_held_them() {
        let xs = [
            16384.0, 32768.0, 65536.0, 131072.0, 163840.0, 196608.0, 262144.0, 393216.0, 524288.0, 1048576.0,
            2097152.0, 4194304.0,
        ];
        let held = [1.0, 1.0, 1.0, 2.7, 2.75, 2.72, 3.6, 3.65, 3.7, 20.0, 20.0, 20.0];
        let climbed = [1.0, 1.0, 1.0, 2.2, 2.75, 3.1, 3.6, 3.65, 3.7, 20.0, 20.0, 20.0];
        let laps = Cold::read(
            &curve(vec![lap(16384.0, 2.76), lap(32768.0, 2.77)]),
            None,
            (16384.0, 1048576.0),
        )
        .unwrap();
        for (ys, stands) in [(held, true), (climbed, false)] {
            let sw = sweep(&xs, &ys);
            let (below, p, next) = (
                Plateau::bare(0, 2, 1.0),
                Plateau::bare(6, 8, 3.65),
                Plateau::bare(9, 11, 20.0),
            );
            let why = doubt(&laps, &sw, (Some(&below), &p, Some(&next)));
            assert_eq!(why.is_none(), stands, "{why:?}");
        }
    }
}
