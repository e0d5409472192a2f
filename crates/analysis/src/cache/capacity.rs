//! Whether the levels found can serve the curve past a level's edge at all:
//! a bound on the hits that holds under every replacement policy, every
//! inclusion policy and an adjacent-line prefetcher, so a curve below it is
//! a level the sweep did not resolve, never a policy the model got wrong.
//!
//! The argument is capacity over time (the reasoning behind the bounds on
//! optimal replacement, Belady, "A study of replacement algorithms for a
//! virtual-storage computer", IBM Systems Journal 1966, and the stack
//! distances of Mattson et al., 1970): a load that hits found its line resident since the
//! line was last touched, so every hit costs the cache one line held over
//! its reuse interval, and no cache holds more than its capacity at any
//! moment. hwcal's chase visits every 64-byte slot of S bytes once per lap
//! in a fixed random cycle: each reuse interval is a whole lap, so the
//! caches up to level N (capacities summed, as if exclusive: the most any
//! hierarchy can hold) hit at most C/S of the loads. A prefetcher that
//! brings a line's neighbour with it (the adjacent-line or "buddy"
//! prefetchers of Intel's L2 and AMD's L1/L2) makes a pair the unit: each
//! pair is touched twice per lap at random moments, and holding the pairs
//! across their shortest intervals first buys at most √(C/S) of the loads.
//! Every other load is served no faster than the next level found, so a
//! point past the edge can never read below
//! `f·h + (1 − f)·m` (h the fastest hit, L1's; m the next plateau).
//!
//! A curve under that bound says the hierarchy as found is wrong there: a
//! level lies between the one found and the next (a simulated 2.5 MiB L2
//! read as 2.87 MiB, `ok`, with its L3 of 8 MiB and L4 of 64 MiB unresolved,
//! read 8.3 ns at 5 MiB where the hierarchy found allows no less than 25 ns)
//! or the level is larger than its size says. Either way its size and its
//! step to the next level are not confirmed.

use super::sweep::Sweep;
use crate::levels::Plateau;
use hwcal_model::note::analysis as note;
use hwcal_model::{CacheLevel, Note, Verdict};

/// Points below the bound needed to contradict the hierarchy (one can be a
/// mismeasured point; the bound itself needs no margin).
const BELOW_POINTS: usize = 2;

/// Standard deviations of a point's own samples it must lie below the
/// bound by.
const SIGMAS: f64 = 3.0;

/// The most of a cyclic random chase over `s` bytes that caches holding
/// `c` bytes in all can hit under any policy, with lines fetched in pairs.
/// Each pair is touched twice per lap at uniform random moments, so its two
/// reuse intervals are u and 1 − u laps, u uniform on [0, ½]. Holding every
/// interval up to a laps costs a² of the working set's bytes for a lap (the
/// short ones up to ½ cost ¼, the long ones from ½ to a add a² − ¼) and
/// hits a of the loads; the shortest intervals first is the cheapest way to
/// any number of hits, so c/s of budget buys at most √(c/s). Without the
/// prefetcher the bound is c/s, below this one.
pub(super) fn max_hit_fraction(c: f64, s: f64) -> f64 {
    if s <= 0.0 {
        return 1.0;
    }
    (c / s).sqrt().min(1.0)
}

/// The note (and the level's verdict, noisy) where the curve past level
/// `k`'s edge reads faster than the levels found up to it, with the next
/// plateau `next` behind them, can serve it ([`max_hit_fraction`]).
/// `sizes` are the sizes found for levels 1..=k; `tolerance` the share by
/// which a size may be off and still count as right.
pub(super) fn served_between(
    l: &mut CacheLevel,
    sw: &Sweep,
    pl: &[Plateau],
    k: usize,
    sizes: &[f64],
    tolerance: f64,
) -> Option<Note> {
    let (p, next) = (pl.get(k)?, pl.get(k + 1)?);
    if l.verdict != Verdict::Ok || next.level <= p.level || next.first <= p.last + 1 {
        return None;
    }
    let held = (1.0 + tolerance) * sizes.iter().sum::<f64>();
    // The fastest any hit can be (L1's plateau) and the fastest the next
    // level read anywhere from its start on (`clean` is a suffix minimum):
    // both ends chosen to make the bound as low as the curve allows.
    let hit = sw.clean[pl[0].first..=pl[0].last]
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min);
    let miss = sw.clean[next.first];
    let below: Vec<(f64, f64, f64, f64)> = (p.last + 1..next.first)
        .filter_map(|i| {
            let x = sw.xs[i];
            let f = max_hit_fraction(held, x);
            let floor = f * hit + (1.0 - f) * miss;
            let y = sw.ys[i];
            (y + SIGMAS * spread(&sw.pts[i].samples) < floor).then_some((x, y, floor, f))
        })
        .collect();
    if below.len() < BELOW_POINTS {
        return None;
    }
    let (x, y, floor, f) = below[below.len() / 2];
    l.verdict = Verdict::Noisy;
    let size = super::codes::size_text;
    Some(note(
        "cache",
        &format!("l{}-served-between", l.level),
        format!(
            "cache: L{} ({}): past its edge the curve reads {y:.1} ns at {}, where the levels found up to it \
             ({} in all, with {:.0}% to spare) can hit at most {:.0}% of a random chase under any replacement, \
             even with lines fetched in pairs, and every other load costs at least the next level's {miss:.1} \
             ns: no less than {floor:.1} ns in all ({} of the edge's sizes read faster than the hierarchy \
             found can serve them). A level lies between that the sweep did not resolve, or L{} is larger than \
             read: its size and step are not confirmed; marked noisy",
            l.level,
            size(l.size_bytes as f64),
            size(x),
            size(held / (1.0 + tolerance)),
            tolerance * 100.0,
            f * 100.0,
            below.len(),
            l.level
        ),
    ))
}

/// The note (and the level's verdict, noisy) where level `k`'s plateau
/// does not pin its latency: the levels below it (`below`: their sizes as
/// found, in all) may still serve enough of its loads, where its latency
/// is read, to put the plateau more than [`super::slope::MAX_SPREAD`] under
/// the level's own hit latency.
///
/// Two bounds on that share, both from what was measured: the capacity
/// bound ([`max_hit_fraction`] of the levels below at the working set the
/// latency is read at), and the plateau's own flatness — a share the
/// levels below keep falls as their capacity over the working set does
/// (never more than C/S of it can be held, and no policy holds a share
/// that grows with S), so a plateau that climbs by Δ from S₁ to S₂ has a
/// share whose C/S part is at most Δ / (1/S₁ − 1/S₂) per unit of 1/S; over
/// a long flat plateau that is nothing, over a short one it can be much.
/// The climb is taken as large as the plateau's scatter allows (two
/// standard errors of its ends' means). The smaller bound stands (a
/// simulated 128 MiB victim L4 under a 16 MiB L3 whose share moved: its
/// plateau from 49 to 73 MiB scattered between 46 and 54 ns and read 52.3
/// ns, `ok`, for 57.7; a long flat plateau such as an L3 read at 12.83 ns
/// from 4 to 13 MiB, to 0.03 ns, is pinned however large the L2 below).
pub(super) fn latency_unresolved(
    l: &mut CacheLevel,
    sw: &Sweep,
    pl: &[Plateau],
    k: usize,
    below: f64,
    tolerance: f64,
) -> Option<Note> {
    let (p, prev) = (pl.get(k)?, pl.get(k.checked_sub(1)?)?);
    let span = p.level - prev.level;
    if l.verdict != Verdict::Ok || p.last <= p.first || span <= 0.0 {
        return None;
    }
    let (s1, s2) = (sw.xs[p.first], sw.xs[p.last]);
    let at = (s1 * s2).sqrt();
    let end = |i: &[usize]| i.iter().map(|&j| sw.ys[j]).sum::<f64>() / i.len() as f64;
    let two = |a: usize, b: usize| if p.last > p.first + 2 { vec![a, b] } else { vec![a] };
    let (a, b) = (two(p.first, p.first + 1), two(p.last - 1, p.last));
    // The climb as far as it can be with the plateau's scatter: its two
    // ends' means each carry the points' spread.
    let sd = spread(&sw.ys[p.first..=p.last]);
    let resolved = 2.0 * sd * (1.0 / a.len() as f64 + 1.0 / b.len() as f64).sqrt();
    let climb = (end(&b) - end(&a) + resolved).max(0.0);
    let held = (1.0 + tolerance) * below;
    let f = max_hit_fraction(held, at);
    let by_capacity = if f < 1.0 {
        f / (1.0 - f) * span
    } else {
        f64::INFINITY
    };
    let by_flatness = climb * (1.0 / at) / (1.0 / s1 - 1.0 / s2);
    let bias = by_capacity.min(by_flatness);
    if bias <= super::slope::MAX_SPREAD * p.level {
        return None;
    }
    l.verdict = Verdict::Noisy;
    let size = super::codes::size_text;
    Some(note(
        "cache",
        &format!("l{}-latency-unresolved", l.level),
        format!(
            "cache: L{}: its plateau ({} to {}, {:.2} ns) does not pin its latency: the levels below it ({} in \
             all) may still serve part of its loads there — up to {:.0}% by their capacity, and its climb of \
             {climb:.2} ns over the plateau allows a share falling with the working set that is as large — so \
             its own hit latency may lie up to {bias:.2} ns above what the plateau reads, more than {:.0}% of \
             it; marked noisy",
            l.level,
            size(s1),
            size(s2),
            p.level,
            size(below),
            f * 100.0,
            super::slope::MAX_SPREAD * 100.0
        ),
    ))
}

/// Sample standard deviation of a point's repetitions (0 with fewer than
/// two finite ones).
fn spread(samples: &[f64]) -> f64 {
    let v: Vec<f64> = samples.iter().copied().filter(|s| s.is_finite()).collect();
    crate::stats::mean_sd(&v).map_or(0.0, |(_, sd)| sd)
}

#[cfg(test)]
mod tests {
    use super::max_hit_fraction;
    use hwcal_stats::SplitMix64;

    /// Hits in the third lap of a cyclic random chase over `lines` lines
    /// through a fully associative cache of `ways` lines, LRU or random
    /// replacement, with or without the line's pair partner fetched on a
    /// miss.
    fn lap_hits(lines: usize, ways: usize, lru: bool, pairs: bool, seed: u64) -> f64 {
        let mut rng = SplitMix64::new(seed);
        let mut order: Vec<usize> = (0..lines).collect();
        for i in (1..lines).rev() {
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        // Resident lines with their last use (LRU) and a slot list (random).
        let mut last: Vec<Option<u64>> = vec![None; lines];
        let mut held: Vec<usize> = Vec::new();
        let mut t = 0u64;
        let mut hits = 0usize;
        for lap in 0..3 {
            for &x in &order {
                t += 1;
                let hit = last[x].is_some();
                if lap == 2 && hit {
                    hits += 1;
                }
                let mut bring = vec![x];
                if !hit && pairs && (x ^ 1) < lines && last[x ^ 1].is_none() {
                    bring.push(x ^ 1);
                }
                for y in bring {
                    if last[y].is_none() {
                        if held.len() == ways {
                            let victim = if lru {
                                (0..held.len()).min_by_key(|&k| last[held[k]]).unwrap()
                            } else {
                                (rng.next_u64() % ways as u64) as usize
                            };
                            last[held[victim]] = None;
                            held.swap_remove(victim);
                        }
                        held.push(y);
                    }
                    last[y] = Some(t);
                }
            }
        }
        hits as f64 / lines as f64
    }

    use super::super::sweep::Sweep;
    use super::{latency_unresolved, served_between};
    use crate::levels::Plateau;
    use hwcal_model::{CacheLevel, RawCurve, RawPoint, Verdict};

    fn sweep(kib_ns: &[(f64, f64)]) -> Sweep {
        let points = kib_ns
            .iter()
            .map(|&(k, ns)| RawPoint {
                x: k * 1024.0,
                y: ns,
                samples: vec![ns, ns],
                mhz: vec![],
            })
            .collect();
        Sweep::new(
            &RawCurve {
                points,
                ..Default::default()
            },
            None,
        )
    }

    fn level(n: u32) -> CacheLevel {
        CacheLevel {
            level: n,
            verdict: Verdict::Ok,
            ..Default::default()
        }
    }

    /// An L4 plateau short beside the 18 MiB below it and scattered by a
    /// moving share does not pin its latency; a long flat L3 plateau does.
    #[test]
    fn a_short_scattered_plateau_does_not_pin_its_latency() {
        let sw = sweep(&[
            (4096.0, 12.83),
            (8192.0, 12.84),
            (13004.0, 12.83),
            (50535.0, 53.4),
            (55109.0, 53.3),
            (60097.0, 48.9),
            (65536.0, 52.5),
            (71468.0, 51.8),
            (74632.0, 52.1),
            (131072.0, 180.0),
        ]);
        let pl = [
            Plateau::bare(0, 2, 3.6),
            Plateau::bare(0, 2, 12.83),
            Plateau::bare(3, 8, 52.3),
            Plateau::bare(9, 9, 180.0),
        ];
        let mut l3 = level(3);
        assert!(latency_unresolved(&mut l3, &sw, &pl, 1, 2.6 * 1048576.0, 0.125).is_none());
        assert_eq!(l3.verdict, Verdict::Ok);
        let mut l4 = level(4);
        let n = latency_unresolved(&mut l4, &sw, &pl, 2, 18.6 * 1048576.0, 0.125);
        assert_eq!(n.map(|n| n.code), Some("cache.l4-latency-unresolved".to_string()));
        assert_eq!(l4.verdict, Verdict::Noisy);
        // The same plateau without its scatter climbs too little to hide a
        // share: pinned.
        let flat = sweep(&[
            (4096.0, 12.83),
            (8192.0, 12.84),
            (13004.0, 12.83),
            (50535.0, 52.3),
            (55109.0, 52.3),
            (60097.0, 52.3),
            (65536.0, 52.3),
            (71468.0, 52.31),
            (74632.0, 52.3),
            (131072.0, 180.0),
        ]);
        let mut l4 = level(4);
        assert!(latency_unresolved(&mut l4, &flat, &pl, 2, 18.6 * 1048576.0, 0.125).is_none());
    }

    /// Past a 1 MiB L2 the curve at 3 and 4 MiB reads 8 ns, with memory at
    /// 100 ns next: no L1 and L2 of that size serve that; a curve that
    /// climbs as the bound allows is served.
    #[test]
    fn a_curve_below_the_capacity_bound_is_a_level_between() {
        let served = |mid: f64| {
            let sw = sweep(&[
                (16.0, 1.0),
                (32.0, 1.0),
                (256.0, 3.0),
                (1024.0, 3.0),
                (3072.0, mid),
                (4096.0, mid * 1.05),
                (65536.0, 100.0),
                (131072.0, 100.0),
            ]);
            let pl = [
                Plateau::bare(0, 1, 1.0),
                Plateau::bare(2, 3, 3.0),
                Plateau::bare(6, 7, 100.0),
            ];
            let mut l2 = level(2);
            l2.size_bytes = 1 << 20;
            let n = served_between(&mut l2, &sw, &pl, 1, &[32768.0, 1048576.0], 0.125);
            (n.map(|n| n.code), l2.verdict)
        };
        assert_eq!(
            served(8.0),
            (Some("cache.l2-served-between".to_string()), Verdict::Noisy)
        );
        assert_eq!(served(60.0), (None, Verdict::Ok));
    }

    /// The bound holds for the policies and prefetch it claims to cover:
    /// each simulated cache hits no more than √(C/S) of a random cycle,
    /// whatever its replacement, and without the pair prefetch no more
    /// than C/S.
    #[test]
    fn no_policy_hits_more_than_the_capacity_time_bound() {
        let ways = 256;
        for ratio in [1.25, 1.6, 2.0, 3.0, 5.0] {
            let lines = (ways as f64 * ratio) as usize;
            let bound = max_hit_fraction(ways as f64, lines as f64);
            for (lru, pairs) in [(true, false), (false, false), (true, true), (false, true)] {
                let mean = (0..4).map(|s| lap_hits(lines, ways, lru, pairs, s)).sum::<f64>() / 4.0;
                assert!(
                    mean <= bound + 0.02,
                    "×{ratio} lru {lru} pairs {pairs}: {mean} > {bound}"
                );
                if !pairs {
                    assert!(mean <= 1.0 / ratio + 0.02, "×{ratio} lru {lru}: {mean}");
                }
            }
        }
        assert_eq!(max_hit_fraction(4.0, 2.0), 1.0);
        assert!((max_hit_fraction(1.0, 4.0) - 0.5).abs() < 1e-12);
    }
}
