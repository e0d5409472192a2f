//! A physically indexed cache's capacity from a chase on 4 KiB pages, with
//! page colouring modelled instead of mistaken for a smaller cache.
//!
//! A cache of C bytes and W ways is split by its set index into
//! K = C / (W · page) page colours: every line of a page falls in the sets
//! of one colour, and which colour is decided by the physical address, so
//! a buffer of random physical pages spreads them over the colours
//! unevenly (Kessler and Hill, "Page placement algorithms for large
//! real-indexed caches", TOCS 1992). A chase over S bytes puts P = S/page
//! pages in K colours; a colour that drew n > W pages overflows while
//! another still has room, so the level starts missing well before S = C
//! and its curve climbs over a wide range. On a VM whose host backs guest
//! memory with 4 KiB pages no guest allocation can avoid it.
//!
//! The model: page counts per colour are Binomial(P, 1/K); what a set of a
//! colour holding n > W lines keeps of a random-order cyclic chase depends
//! on its replacement, which no interface states, so the fit tries the
//! three ways a set can treat a chase that overflows it ([`Policy`]) and
//! keeps a capacity only where they do not leave it ambiguous:
//! - LRU (and the tree-PLRU of many L1s and L2s, close to it) keeps
//!   nothing: every line is evicted just before its turn comes again;
//! - random replacement keeps part, the fixed point of
//!   h = (1 − 1/W)^((1 − h)(n − 1)) (between two visits to a line the other
//!   n − 1 lines are visited once each, and every miss among them evicts
//!   our line with probability 1/W) — a fifth of the loads still hit at
//!   twice the capacity (`colouring_starts_the_misses_before_the_capacity`),
//!   what the RRIP variants of current L2s and the recorded Zen 3 L2 edges
//!   look like (`tests/machines.rs`);
//! - thrash-resistant insertion (bimodal or RRIP insertion once a set
//!   thrashes, Qureshi et al., "Adaptive insertion policies for high
//!   performance caching", ISCA 2007) keeps W − 1 lines for good and
//!   misses the rest: h = (W − 1)/n.
//!
//! How much an overfull colour still hits is the policy's; so is, for LRU,
//! the onset (one line too many and the set misses all of them). The
//! fraction of loads that hit, H(S; C), is fitted to the measured hit
//! fraction over the whole edge, so the capacity comes from the shape of
//! the transition, not from its first rise. Policy and capacity trade
//! against each other, so the edge mostly *confirms* a capacity rather
//! than measuring one: a stated capacity that explains the edge nearly as
//! well as the best fit does (within the scatter of the placements' mean)
//! is the level's, two sources agreeing; without one, the best fit stands
//! only where no other policy explains the edge nearly as well with a
//! capacity more than a colour away ([`Memo::settle`]).

use std::collections::HashMap;

/// How a set treats a cyclic chase of more lines than it has ways (see the
/// module docs). The fit tries these three only: between them, retention
/// trades against capacity along a ridge the edge cannot resolve (with
/// mixes of random replacement and its neighbours allowed, a random-
/// replacement edge with ±0.02 of scatter fitted 1.0, 1.125 and 1.25 times
/// its capacity within 10% of each other's rms, and a simulated Emerald
/// Rapids L2 of 2 MiB fitted best at 2.19), so a finer scale would only
/// widen what a stated size is confirmed by. A policy between them is read
/// at the capacity the nearest gives (flagged against the stated size
/// where beyond its tolerance) or left unconfirmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Policy {
    /// LRU (or a pseudo-LRU close to it): an overfull set hits nothing.
    Lru,
    /// Random replacement: an overfull set keeps a part that shrinks
    /// quickly with the overflow.
    Random,
    /// Thrash-resistant insertion: an overfull set keeps W − 1 lines.
    KeepsWays,
}

impl Policy {
    /// Every policy the fit tries, from LRU to thrash-resistant.
    pub const ALL: [Policy; 3] = [Policy::Lru, Policy::Random, Policy::KeepsWays];

    /// Its name in a note.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Lru => "LRU-like",
            Policy::Random => "random",
            Policy::KeepsWays => "thrash-resistant",
        }
    }

    /// What an overfull set keeps under this policy, from what it keeps
    /// under random replacement and under thrash-resistant insertion.
    fn keeps(self, random: f64, keeps_ways: f64) -> f64 {
        match self {
            Policy::Lru => 0.0,
            Policy::Random => random,
            Policy::KeepsWays => keeps_ways,
        }
    }
}

/// The result of [`fit`]: the capacity that explains the measured edge
/// best, and how well.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ColourFit {
    /// Capacity in bytes: a whole number of colours.
    pub capacity: f64,
    /// One colour's share (ways × page): the resolution of `capacity`.
    pub colour_bytes: f64,
    /// Root-mean-square difference between the modelled and measured hit
    /// fractions over the fitted points.
    pub rms: f64,
    /// Points with a hit fraction strictly between 10% and 90%: how much of
    /// the transition itself was measured.
    pub inside: usize,
    /// The replacement whose model fitted.
    pub policy: Policy,
    /// The least and the most capacity that explain the edge nearly as
    /// well under some replacement policy (each policy's best, within
    /// [`MAX_RMS`] and [`RIVAL_MISFIT`] of the best's misfit): how far the
    /// edge alone pins the capacity down (see [`ColourFit::ambiguous`]).
    pub spread: (f64, f64),
}

impl ColourFit {
    /// Whether capacities more than one colour (the fit's resolution) apart
    /// explain the edge nearly as well: the edge alone does not say which
    /// the level has. Where overfull sets keep less of the chase, the same
    /// edge comes from a larger capacity, and nothing on the edge tells
    /// the policy (a random-replacement edge with ±0.02 of scatter fits
    /// 1.0, 1.125 and 1.25 times its capacity within 10% of each other's
    /// rms).
    pub fn ambiguous(&self) -> bool {
        self.spread.1 - self.spread.0 > 1.5 * self.colour_bytes
    }

    /// Mean squared misfit.
    fn mse(&self) -> f64 {
        self.rms * self.rms
    }

    /// Whether `other` explains the edge nearly as well as this fit: its
    /// misfit within [`RIVAL_MISFIT`] of this one's, or, where the edge's
    /// `scatter` is known (the standard error of the placements' mean, in
    /// hit fraction), within that scatter of it — on a quiet edge a fit of
    /// 1% and one of 1.5% differ by less than the luck of six draws of
    /// pages.
    pub fn rivalled_by(&self, other: &ColourFit, scatter: Option<f64>) -> bool {
        acceptable(other.rms, scatter)
            && (other.mse() <= RIVAL_MISFIT * self.mse()
                || scatter.is_some_and(|s| other.rms <= self.rms + s))
    }
}

/// Fits are accepted up to this rms error in the hit fraction: a quiet edge
/// fits to 0.03–0.045 (the Zen 3 fixtures, checked in
/// `zen3_l2_on_4k_pages_is_sized_by_its_page_colours`); a curve the model does not
/// explain (a neighbour's load, LRU-like replacement, a shared level) is
/// left to the held-capacity estimate.
pub const MAX_RMS: f64 = 0.06;

/// Whether a fit's misfit `rms` is one the model may be taken at: within
/// [`MAX_RMS`], or within twice the placements' own `scatter` (the standard
/// error of their mean): a level of few page colours (a 16 KiB page, 20
/// ways) draws so unevenly from placement to placement that six of them
/// leave its mean several percent from the model's expectation by luck
/// alone.
fn acceptable(rms: f64, scatter: Option<f64>) -> bool {
    rms <= MAX_RMS || scatter.is_some_and(|s| rms <= 2.0 * s)
}

/// A policy's fit rivals the best where its mean squared misfit is within
/// this factor of the best's: the best's misfit is the measurement's own
/// scatter, and a wrong model adds its bias on top. Under twice the
/// scatter's variance the edge does not tell the two apart (a random-
/// replacement edge with ±0.02 of scatter fits LRU at 1.5× its capacity
/// with 2.4 times the rms, 5.8 times the variance: no rival).
pub const RIVAL_MISFIT: f64 = 2.0;

/// Per-set hit probability for `n` lines in `ways` ways under `policy`
/// (see the module docs); 1 when they fit.
pub fn policy_set_hit(policy: Policy, n: usize, ways: usize) -> f64 {
    if n <= ways {
        return 1.0;
    }
    policy.keeps(set_hit(n, ways), (ways - 1) as f64 / n as f64)
}

/// Per-set hit probability for `n` lines in `ways` ways under random
/// replacement (see the module docs); 1 when they fit.
pub fn set_hit(n: usize, ways: usize) -> f64 {
    if n <= ways {
        return 1.0;
    }
    let keep = (1.0 - 1.0 / ways as f64).ln() * (n - 1) as f64;
    // From h = 0 the iteration climbs monotonically to the smallest fixed
    // point (h = 1 is one too, but only the smaller is stable).
    let mut h = 0.0f64;
    for _ in 0..500 {
        let next = (keep * (1.0 - h)).exp();
        if (next - h).abs() < 1e-10 {
            return next;
        }
        h = next;
    }
    h
}

/// Expected fraction of a random chase's loads over `ws` bytes that hit a
/// cache of `capacity` bytes and `ways` ways, on random physical pages of
/// `page` bytes. `None` where the cache has fewer than two colours (a way
/// no larger than a page: every page covers every set, nothing to model).
pub fn hit_fraction(ws: f64, capacity: f64, ways: usize, page: f64) -> Option<f64> {
    Memo::default().hit_fraction(ws, capacity, ways, page)
}

/// The capacity whose modelled hit fractions best match `points` (working
/// set in bytes, measured hit fraction), searched from `lo` to `hi` bytes
/// over whole colour counts (the model sees the capacity only through
/// them, and a real cache's capacity is exactly colours × ways × page) and
/// the replacement policies, then settled by [`Memo::settle`] against the
/// `stated` capacity. `None` when fewer than three points lie inside the
/// transition, no count in the range has two colours or more, the best fit
/// is worse than [`MAX_RMS`], or the edge leaves the capacity open.
pub fn fit(
    points: &[(f64, f64)],
    ways: usize,
    page: f64,
    (lo, hi): (f64, f64),
    stated: Option<f64>,
) -> Option<ColourFit> {
    let mut m = Memo::default();
    let best = m.best(points, ways, page, (lo, hi), None)?;
    m.settle(best, points, (ways, page, lo), stated, None)
}

/// The hit fractions every replacement policy lies between on one draw of
/// random pages, in expectation, with their standard deviations over
/// draws (see [`Memo::envelope`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Envelope {
    /// The colours that fit: what LRU hits, and no policy less.
    pub lower: f64,
    /// W lines per overfull set: what no policy exceeds.
    pub upper: f64,
    pub sd_lower: f64,
    pub sd_upper: f64,
}

/// The model's values, each computed once: a fit asks for every candidate
/// colour count at every point under every policy, and the bootstrap of
/// `crate::cache` fits the same working sets again and again with other
/// measured fractions. The model depends only on whole numbers (pages,
/// colours, ways) and the policy, which are the keys.
#[derive(Debug, Default)]
pub struct Memo {
    /// The hit fraction's parts by (pages, colours, ways): from sets that
    /// fit, from overfull sets under random replacement, and from overfull
    /// sets under thrash-resistant insertion. Every policy's hit fraction
    /// is the first plus what it keeps of the others (the page counts'
    /// distribution is computed once for all).
    hit: HashMap<(usize, usize, usize), [f64; 3]>,
    /// [`set_hit`] (random replacement's fixed point) by (lines, ways).
    random: HashMap<(usize, usize), f64>,
    /// Fit only this policy (see [`Memo::restrict`]).
    only: Option<Policy>,
    /// ln n! for n = 0, 1, …: summed once, where Stirling's series took a
    /// logarithm at every term of every distribution.
    ln_fact: Vec<f64>,
}

impl Memo {
    /// From now on fit only `policy` (every policy with `None`): the
    /// bootstrap asks how far the capacity moves under the policy the
    /// level's own fit chose, not which policy each resample prefers.
    pub fn restrict(&mut self, policy: Option<Policy>) {
        self.only = policy;
    }

    /// ln n!, from the table (extended as far as asked).
    fn ln_factorial(&mut self, n: usize) -> f64 {
        if self.ln_fact.is_empty() {
            self.ln_fact.push(0.0);
        }
        while self.ln_fact.len() <= n {
            let k = self.ln_fact.len();
            let last = self.ln_fact[k - 1];
            self.ln_fact.push(last + (k as f64).ln());
        }
        self.ln_fact[n]
    }

    /// [`hit_fraction`] under random replacement, remembered.
    pub fn hit_fraction(&mut self, ws: f64, capacity: f64, ways: usize, page: f64) -> Option<f64> {
        self.policy_hit_fraction(Policy::Random, ws, capacity, ways, page)
    }

    /// The expected hit fraction under `policy` (see [`hit_fraction`]),
    /// remembered.
    pub fn policy_hit_fraction(
        &mut self,
        policy: Policy,
        ws: f64,
        capacity: f64,
        ways: usize,
        page: f64,
    ) -> Option<f64> {
        if ways == 0 || page.is_nan() || page <= 0.0 {
            return None;
        }
        let colours = (capacity / (ways as f64 * page)).round() as usize;
        if colours < 2 {
            return None;
        }
        let pages = (ws / page).round().max(1.0) as usize;
        let parts = match self.hit.get(&(pages, colours, ways)) {
            Some(&h) => h,
            None => {
                let h = self.parts(pages, colours, ways);
                self.hit.insert((pages, colours, ways), h);
                h
            }
        };
        Some((parts[0] + policy.keeps(parts[1], parts[2])).clamp(0.0, 1.0))
    }

    /// What any replacement policy can make of a chase over `ws` bytes of
    /// random pages in a cache of `capacity` bytes and `ways` ways: `None`
    /// where it has fewer than two colours. A set whose colour drew n ≤ W
    /// pages holds them all under every policy, and no set hits more than
    /// W lines of a cyclic chase per lap (a line that hits was resident
    /// since its previous visit, a lap ago, so every line that hits in a
    /// lap was resident at the lap's start, W at most). So the hit fraction
    /// lies between the colours that fit (LRU: an overfull set hits
    /// nothing) and Σ min(n, W) (no policy keeps more), whatever the
    /// policy; each bound with its standard deviation over draws of pages
    /// (colours' counts taken as independent binomials, which overstates
    /// it a little: the counts of a multinomial are negatively correlated).
    pub fn envelope(&mut self, ws: f64, capacity: f64, ways: usize, page: f64) -> Option<Envelope> {
        if ways == 0 || page.is_nan() || page <= 0.0 {
            return None;
        }
        let colours = (capacity / (ways as f64 * page)).round() as usize;
        let pages = (ws / page).round().max(1.0) as usize;
        if colours < 2 {
            return None;
        }
        // First and second moments of one colour's lines that fit (lower)
        // and of min(n, W) (upper).
        let (mut l1, mut l2, mut u1, mut u2) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        for (n, pr) in self.page_counts(pages, colours) {
            let fits = if n <= ways { n as f64 } else { 0.0 };
            let held = n.min(ways) as f64;
            l1 += pr * fits;
            l2 += pr * fits * fits;
            u1 += pr * held;
            u2 += pr * held * held;
        }
        let (k, total) = (colours as f64, pages as f64);
        let sd_of = |m1: f64, m2: f64| (k * (m2 - m1 * m1).max(0.0)).sqrt() / total;
        Some(Envelope {
            lower: (k * l1 / total).clamp(0.0, 1.0),
            upper: (k * u1 / total).clamp(0.0, 1.0),
            sd_lower: sd_of(l1, l2),
            sd_upper: sd_of(u1, u2),
        })
    }

    /// How many of `pages` random pages one of `colours` colours draws, with
    /// its probability: Binomial(pages, 1/colours) over ±8 standard
    /// deviations (the rest weighs nothing a fit can see).
    fn page_counts(&mut self, pages: usize, colours: usize) -> Vec<(usize, f64)> {
        let p = 1.0 / colours as f64;
        let mean = pages as f64 * p;
        let sd = (mean * (1.0 - p)).sqrt();
        let lo = (mean - 8.0 * sd - 1.0).floor().max(0.0) as usize;
        let hi = ((mean + 8.0 * sd + 1.0).ceil() as usize).min(pages);
        let (ln_p, ln_q) = (p.ln(), (1.0 - p).ln());
        let ln_all = self.ln_factorial(pages);
        (lo..=hi)
            .map(|n| {
                let ln_pr = ln_all - self.ln_factorial(n) - self.ln_factorial(pages - n)
                    + n as f64 * ln_p
                    + (pages - n) as f64 * ln_q;
                (n, ln_pr.exp())
            })
            .collect()
    }

    /// The hit fraction's parts (see [`Memo::hit`]) over `pages` pages in
    /// `colours` colours of `ways` ways.
    fn parts(&mut self, pages: usize, colours: usize, ways: usize) -> [f64; 3] {
        let mean = pages as f64 / colours as f64;
        let mut held = [0.0f64; 3];
        for (n, pr) in self.page_counts(pages, colours) {
            let lines = pr * n as f64;
            if n <= ways {
                held[0] += lines;
                continue;
            }
            let random = *self.random.entry((n, ways)).or_insert_with(|| set_hit(n, ways));
            held[1] += lines * random;
            held[2] += lines * (ways - 1) as f64 / n as f64;
        }
        held.map(|v| v / mean)
    }

    /// The best capacity over whole colour counts and the replacement
    /// policies whether or not the model explains the edge (`rms` says how
    /// well; [`fit`] keeps it only within [`MAX_RMS`], with the model's
    /// values remembered here): `None` only where no fit was tried (under
    /// three points inside the transition, no ways, an empty range).
    ///
    /// [`ColourFit::spread`] holds the capacities other policies explain
    /// it with nearly as well.
    pub fn best(
        &mut self,
        points: &[(f64, f64)],
        ways: usize,
        page: f64,
        (lo, hi): (f64, f64),
        scatter: Option<f64>,
    ) -> Option<ColourFit> {
        let only = self.only;
        let fits: Vec<ColourFit> = Policy::ALL
            .iter()
            .filter(|&&policy| only.is_none_or(|o| o == policy))
            .filter_map(|&policy| self.best_of(policy, points, ways, page, lo, hi))
            .collect();
        let mut best = *fits.iter().min_by(|a, b| a.rms.total_cmp(&b.rms))?;
        let near = fits
            .iter()
            .filter(|f| best.rivalled_by(f, scatter))
            .map(|f| f.capacity);
        best.spread = near.fold((best.capacity, best.capacity), |(lo, hi), c| {
            (lo.min(c), hi.max(c))
        });
        Some(best)
    }

    /// The capacity a level's edge gives, from its `best` fit: the `stated`
    /// capacity where it explains the edge nearly as well as the best
    /// ([`ColourFit::rivalled_by`]) — two sources then agree — and is not
    /// under `lo` (what the level was seen to hold); else the best, where
    /// the edge pins it down to a colour ([`ColourFit::ambiguous`]); else
    /// `None`. Also `None` where the best fit is worse than [`MAX_RMS`].
    pub fn settle(
        &mut self,
        best: ColourFit,
        points: &[(f64, f64)],
        (ways, page, lo): (usize, f64, f64),
        stated: Option<f64>,
        scatter: Option<f64>,
    ) -> Option<ColourFit> {
        if !acceptable(best.rms, scatter) {
            return None;
        }
        let confirmed = stated
            .filter(|&s| s >= lo)
            .and_then(|s| self.at(points, ways, page, s))
            .filter(|f| best.rivalled_by(f, scatter));
        match confirmed {
            Some(f) => Some(ColourFit {
                spread: best.spread,
                ..f
            }),
            None => (!best.ambiguous()).then_some(best),
        }
    }

    /// How well `capacity` (rounded to whole colours) explains the edge
    /// under the policy that suits it best: `None` where no fit can be
    /// tried (see [`Memo::best`]).
    pub fn at(&mut self, points: &[(f64, f64)], ways: usize, page: f64, capacity: f64) -> Option<ColourFit> {
        let per_colour = ways as f64 * page;
        let colours = (capacity / per_colour).round().max(2.0) as usize;
        let inside = points.iter().filter(|p| p.1 > 0.1 && p.1 < 0.9).count();
        if inside < 3 || ways == 0 {
            return None;
        }
        let only = self.only;
        let c = colours as f64 * per_colour;
        Policy::ALL
            .iter()
            .filter(|&&policy| only.is_none_or(|o| o == policy))
            .filter_map(|&policy| {
                let f = Fitting {
                    policy,
                    ways,
                    page,
                    inside,
                };
                self.scan(points, f, std::iter::once(colours))
            })
            .min_by(|a, b| a.rms.total_cmp(&b.rms))
            .map(|f| ColourFit { spread: (c, c), ..f })
    }

    /// The best capacity under one policy.
    fn best_of(
        &mut self,
        policy: Policy,
        points: &[(f64, f64)],
        ways: usize,
        page: f64,
        lo: f64,
        hi: f64,
    ) -> Option<ColourFit> {
        let inside = points.iter().filter(|p| p.1 > 0.1 && p.1 < 0.9).count();
        if inside < 3 || ways == 0 || !(lo > 0.0 && hi > lo) {
            return None;
        }
        let per_colour = ways as f64 * page;
        let first = ((lo / per_colour).ceil() as usize).max(2);
        let last = (hi / per_colour).floor() as usize;
        // A large shared level has thousands of colours (a 320 MiB L3 on
        // 4 KiB pages: 4096) and the range several times that: every count
        // at every point, again in each bootstrap resample, took half a
        // minute. The misfit is smooth in the count, so a coarse pass of
        // at most COARSE counts finds the valley and every count within
        // two of its steps around the best is tried; ranges of up to
        // COARSE counts are searched whole, as before.
        const COARSE: usize = 256;
        let step = ((last.saturating_sub(first)) / COARSE).max(1);
        let fit = Fitting {
            policy,
            ways,
            page,
            inside,
        };
        let mut best = self.scan(points, fit, (first..=last).step_by(step));
        if step > 1 {
            if let Some(b) = best {
                let at = (b.capacity / per_colour).round() as usize;
                let around = at.saturating_sub(2 * step).max(first)..=(at + 2 * step).min(last);
                best = self.scan(points, fit, around);
            }
        }
        best
    }

    /// The best fit over the colour counts `counts`.
    fn scan(
        &mut self,
        points: &[(f64, f64)],
        f: Fitting,
        counts: impl Iterator<Item = usize>,
    ) -> Option<ColourFit> {
        let per_colour = f.ways as f64 * f.page;
        let mut best: Option<ColourFit> = None;
        for colours in counts {
            let c = colours as f64 * per_colour;
            let sse: Option<f64> = points
                .iter()
                .map(|&(x, h)| {
                    self.policy_hit_fraction(f.policy, x, c, f.ways, f.page)
                        .map(|m| (m - h).powi(2))
                })
                .sum();
            let Some(sse) = sse else { continue };
            let rms = (sse / points.len() as f64).sqrt();
            if best.is_none_or(|b| rms < b.rms) {
                best = Some(ColourFit {
                    capacity: c,
                    colour_bytes: per_colour,
                    rms,
                    inside: f.inside,
                    policy: f.policy,
                    spread: (c, c),
                });
            }
        }
        best
    }
}

/// What one scan fits with.
#[derive(Debug, Clone, Copy)]
struct Fitting {
    policy: Policy,
    ways: usize,
    page: f64,
    inside: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB: f64 = 1024.0;

    #[test]
    fn a_set_that_fits_always_hits_and_an_overfull_one_keeps_a_part() {
        assert_eq!(set_hit(8, 8), 1.0);
        let h9 = set_hit(9, 8);
        let h16 = set_hit(16, 8);
        assert!(h9 > 0.8 && h9 < 0.95, "{h9}");
        assert!(h16 > 0.1 && h16 < 0.3, "{h16}");
        assert!(set_hit(64, 8) < 1e-3);
    }

    #[test]
    fn colouring_starts_the_misses_before_the_capacity() {
        let c = 512.0 * KIB;
        // Well below: every colour has room.
        assert!(hit_fraction(128.0 * KIB, c, 8, 4096.0).unwrap() > 0.999);
        // At the capacity some colours already overflow; at twice it a
        // fifth of the loads still hit.
        let at = hit_fraction(c, c, 8, 4096.0).unwrap();
        assert!(at > 0.6 && at < 0.85, "{at}");
        let twice = hit_fraction(2.0 * c, c, 8, 4096.0).unwrap();
        assert!(twice > 0.1 && twice < 0.35, "{twice}");
        // Monotone in the working set.
        let hs: Vec<f64> = (1..40)
            .map(|i| hit_fraction(i as f64 * 32.0 * KIB, c, 8, 4096.0).unwrap())
            .collect();
        assert!(hs.windows(2).all(|w| w[1] <= w[0] + 1e-12), "{hs:?}");
        // A way no larger than a page: no colours.
        assert_eq!(hit_fraction(64.0 * KIB, 32.0 * KIB, 8, 4096.0), None);
    }

    /// A modelled edge under `policy`, with ±`e` of alternating
    /// measurement error, from `from` times the capacity `c`.
    fn edge(policy: Policy, c: f64, ways: usize, from: f64, n: i32, e: f64) -> Vec<(f64, f64)> {
        let mut m = Memo::default();
        (0..n)
            .map(|i| {
                let x = c * from * 1.07f64.powi(i);
                let e = if i % 2 == 0 { e } else { -e };
                let h = m.policy_hit_fraction(policy, x, c, ways, 4096.0).unwrap();
                (x, (h + e).clamp(0.0, 1.0))
            })
            .collect()
    }

    #[test]
    fn the_stated_capacity_is_confirmed_by_a_modelled_edge_and_a_wrong_one_is_not() {
        for policy in Policy::ALL {
            for (c, ways) in [(512.0 * KIB, 8), (1280.0 * KIB, 10), (2048.0 * KIB, 16)] {
                let pts = edge(policy, c, ways, 0.4, 30, 0.02);
                let range = (c / 4.0, c * 4.0);
                let f = fit(&pts, ways, 4096.0, range, Some(c));
                assert_eq!(f.map(|f| f.capacity), Some(c), "{policy:?} {c}: {f:?}");
                assert!(f.unwrap().rms < 0.03);
                // The best fit lies within the edge's spread, and the
                // spread holds the true capacity.
                let b = Memo::default().best(&pts, ways, 4096.0, range, None).unwrap();
                assert!(b.spread.0 <= c && c <= b.spread.1, "{policy:?} {c}: {b:?}");
                // Twice the capacity, or half, is not confirmed.
                for wrong in [0.5 * c, 2.0 * c] {
                    let f = fit(&pts, ways, 4096.0, range, Some(wrong));
                    assert!(f.is_none_or(|f| f.capacity != wrong), "{policy:?} {c}: {f:?}");
                }
            }
        }
        // LRU keeps nothing of an overfull set, thrash-resistant insertion
        // all but one way, random replacement a part between.
        assert_eq!(policy_set_hit(Policy::Lru, 20, 16), 0.0);
        assert_eq!(policy_set_hit(Policy::KeepsWays, 20, 16), 0.75);
        let r = policy_set_hit(Policy::Random, 20, 16);
        assert!(r > 0.0 && r < 0.75, "{r}");
        assert_eq!(policy_set_hit(Policy::Lru, 16, 16), 1.0);
    }

    #[test]
    fn a_misfit_within_the_placements_own_scatter_is_taken() {
        // An LRU edge measured with ±9% of error at every point: more than
        // MAX_RMS, so without a scatter to weigh it by nothing is taken.
        // Where the placements' mean scatters by 5%, the misfit is within
        // twice that and the stated capacity stands; where it scatters by
        // 1%, the misfit is the model's and nothing is taken.
        let (c, ways) = (1024.0 * KIB, 16);
        let pts = edge(Policy::Lru, c, ways, 0.4, 30, 0.09);
        let range = (c / 4.0, c * 4.0);
        let settle = |scatter: Option<f64>| {
            let mut m = Memo::default();
            let b = m.best(&pts, ways, 4096.0, range, scatter)?;
            assert!(b.rms > MAX_RMS, "{b:?}");
            m.settle(b, &pts, (ways, 4096.0, range.0), Some(c), scatter)
        };
        assert_eq!(settle(None), None);
        assert_eq!(settle(Some(0.01)), None);
        assert_eq!(settle(Some(0.05)).map(|f| f.capacity), Some(c));
    }

    #[test]
    fn every_policy_lies_within_the_envelope() {
        // The envelope's lower bound is LRU's hit fraction; random
        // replacement and thrash-resistant insertion lie between it and
        // the upper bound, which falls below 1 once colours overflow.
        let mut m = Memo::default();
        for (c, ways) in [(512.0 * KIB, 8), (1280.0 * KIB, 20), (2048.0 * KIB, 16)] {
            for i in 0..24 {
                let x = c * 0.4 * 1.1f64.powi(i);
                let e = m.envelope(x, c, ways, 4096.0).unwrap();
                let lru = m.policy_hit_fraction(Policy::Lru, x, c, ways, 4096.0).unwrap();
                assert!((e.lower - lru).abs() < 1e-9, "{c} {x}: {e:?} {lru}");
                for policy in Policy::ALL {
                    let h = m.policy_hit_fraction(policy, x, c, ways, 4096.0).unwrap();
                    assert!(
                        e.lower - 1e-9 <= h && h <= e.upper + 1e-9,
                        "{policy:?} {c} {x}: {e:?} {h}"
                    );
                }
                assert!(e.sd_lower >= 0.0 && e.sd_upper >= 0.0);
            }
            // Far past the capacity no policy holds more than the cache.
            let far = m.envelope(3.0 * c, c, ways, 4096.0).unwrap();
            assert!(far.upper <= 1.0 / 3.0 + 1e-9 && far.lower < 0.01, "{far:?}");
        }
        assert_eq!(m.envelope(64.0 * KIB, 32.0 * KIB, 8, 4096.0), None);
    }

    #[test]
    fn an_edge_that_does_not_pin_the_capacity_down_gives_none_of_its_own() {
        // Only the start of an LRU edge, with scatter: where the first
        // colours overflow the policies differ too little to tell apart,
        // and each places the capacity elsewhere. Alone the edge gives
        // nothing; it confirms the stated capacity.
        let c = 1024.0 * KIB;
        let pts = edge(Policy::Lru, c, 8, 0.6, 8, 0.03);
        let b = Memo::default()
            .best(&pts, 8, 4096.0, (c / 4.0, c * 4.0), None)
            .unwrap();
        assert!(b.ambiguous(), "{b:?}");
        assert_eq!(fit(&pts, 8, 4096.0, (c / 4.0, c * 4.0), None), None);
        let f = fit(&pts, 8, 4096.0, (c / 4.0, c * 4.0), Some(c));
        assert_eq!(f.map(|f| f.capacity), Some(c), "{f:?}");
        // A stated capacity under what the level was seen to hold is not
        // confirmed.
        let f = fit(&pts, 8, 4096.0, (1.5 * c, c * 4.0), Some(c));
        assert!(f.is_none_or(|f| f.capacity >= 1.5 * c), "{f:?}");
    }

    #[test]
    fn a_curve_the_model_cannot_explain_is_not_fitted() {
        // A sharp LRU-like edge: everything hits up to 512 KiB, nothing
        // from there; no random-colour curve is that steep.
        let pts: Vec<(f64, f64)> = (0..30)
            .map(|i| {
                let x = 200.0 * KIB * 1.07f64.powi(i);
                (x, if x <= 512.0 * KIB { 1.0 } else { 0.0 })
            })
            .collect();
        let range = (100.0 * KIB, 4096.0 * KIB);
        assert_eq!(fit(&pts, 8, 4096.0, range, Some(512.0 * KIB)), None);
        // Too few points inside the transition.
        let few = [(256.0 * KIB, 1.0), (512.0 * KIB, 0.7), (2048.0 * KIB, 0.0)];
        assert_eq!(fit(&few, 8, 4096.0, range, Some(512.0 * KIB)), None);
        // A search that starts below two colours still finds the capacity.
        let pts: Vec<(f64, f64)> = (0..20)
            .map(|i| {
                let x = 256.0 * KIB * 1.1f64.powi(i);
                (x, hit_fraction(x, 512.0 * KIB, 8, 4096.0).unwrap())
            })
            .collect();
        let f = fit(&pts, 8, 4096.0, (16.0 * KIB, 4096.0 * KIB), Some(512.0 * KIB)).unwrap();
        assert_eq!(f.capacity, 512.0 * KIB, "{f:?}");
    }

    #[test]
    fn the_memo_remembers_what_it_computed() {
        let mut m = Memo::default();
        let c = 512.0 * KIB;
        for ws in [300.0 * KIB, 512.0 * KIB, 900.0 * KIB] {
            let fresh = hit_fraction(ws, c, 8, 4096.0);
            assert_eq!(m.hit_fraction(ws, c, 8, 4096.0), fresh);
            assert_eq!(m.hit_fraction(ws, c, 8, 4096.0), fresh);
        }
        assert_eq!(m.hit.len(), 3);
        assert_eq!(m.hit_fraction(KIB, c, 0, 4096.0), None);
        assert_eq!(m.hit_fraction(KIB, c, 8, 0.0), None);
    }
}
