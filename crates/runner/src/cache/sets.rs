//! Step 4c, on base pages: L2's page colours and ways by eviction sets
//! (Vila, Köpf and Morales, "Theory and Practice of Finding Eviction
//! Sets", S&P 2019: group-testing reduction; the test itself is
//! `hwcal_probes::sets`).
//!
//! On base pages a physically indexed level's edge in the sweep is spread
//! by where the pages fell (Kessler and Hill, TOCS 1992), by an amount its
//! ways and replacement decide, so the sweep alone cannot say its size.
//! This step measures the structure directly: in a pool of pages, the
//! smallest set of pages that evicts a target page holds exactly as many
//! pages of the target's colour as the level has ways; with one such set,
//! every other page is sorted in or out of the target's colour by one test;
//! colour after colour, the whole pool is sorted. The level is then
//! K colours × W ways × the page, counted, not fitted — the second,
//! independent measurement the sweep's size is checked against.
//!
//! Every decision is a ratio of two timings taken back to back: the
//! target's lines after the set *and* a control (a few pages that push them
//! out of L1), over the same after the control alone — a slow stretch of the
//! host slows both, and whatever the set, the target has left L1 the same
//! way, so the ratio sees the level alone. A set evicts where three of five
//! such ratios lie past a threshold: halfway to what the whole pool does
//! while a large set is reduced, a quarter of the way to what the reduced
//! set itself does while single pages are dropped and pages sorted (with
//! no more pages of the target's colour than its ways the target keeps
//! every line under any replacement; one more evicts all of them under
//! LRU, part under random replacement), and always six spreads of the
//! control's own ratios above it. The first colour's control is random
//! pages, a few of them of the target's colour, which shorten its smallest
//! set but not the sort (the same control is in every test); its ways are
//! then read again with a control of pages sorted outside it, and every
//! later colour's control is the first colour's pages.
//!
//! What the search cannot do it says, in its last fact: a host too noisy
//! for a smallest set to test again as one, a thrash-resistant policy that
//! keeps the target past its ways (the sweep's simulator models one; a Zen
//! 5 guest's L2 keeps more of a target under a large set than under a
//! small one), time running out (then the colours sorted estimate the
//! rest, `hwcal_analysis::cache::sets`).

use super::after::curve;
use crate::points::{Hardware, SetPoints};
use crate::probe::Progress;
use crate::Result;
use hwcal_analysis::cache::sets::{matching, Structure};
use hwcal_model::curve::{CACHE_SETS, CACHE_SETS_FACTS, CACHE_SETS_WAYS};
use hwcal_model::{MachineInfo, RawCurve, RawPoint};
use hwcal_stats::SplitMix64;

/// The longest the search may take (s): it is one step of `run`'s
/// ten-second budget; a pool not sorted by then is reported as such.
const BUDGET_S: f64 = 0.6;
/// Pool pages per page the level is thought to hold: with the level
/// underestimated by half, each colour still draws twice its ways on
/// average, enough to hold a smallest set and more.
const POOL_PER_PAGE: f64 = 4.0;
/// The most pages a pool holds (a 4 KiB-page pool of 32 MiB).
const MAX_POOL: usize = 8192;
/// The largest L2 the first pool is sized for, in L1s: L2s run from 4 to
/// 32 times L1 (Zen 5: 48 KiB and 1 MiB, 21×); a larger one makes the whole
/// pool of the first try too few pages per colour to evict, and the next,
/// four times larger, sorts it.
const FIRST_REACH: f64 = 16.0;
/// Where between the control (1) and the whole pool's reading a set counts
/// as evicting while the search reduces a large set: halfway (its many
/// pages of the target's colour evict all of the target's lines).
const EVICTS_AT: f64 = 0.5;
/// ... and between the control and the reduced set's own reading while
/// single pages are dropped and pages sorted: a quarter. With as many pages
/// of its colour as the level has ways, or fewer, the target keeps every
/// line under any replacement; one page more evicts only part of them
/// where replacement is random-like (four passes of the simulator's random
/// sets: about a third of what a few pages more do), so a smallest set is
/// judged against what a set like it does, and low.
const SMALL_EVICTS_AT: f64 = 0.25;
/// A reference must stand this many spreads of the control's own rounds
/// above it to be told from the control at all (twice that above the
/// threshold's floor, halfway).
const NOISE_SPREADS: f64 = 6.0;
/// The chunks the first reduction splits a set into: dropping a 33rd at a
/// time keeps more of the target's colour than its ways until the set is
/// nearly minimal (32 ways and fewer need no finer split).
const FIRST_GROUPS: usize = 33;

/// How the search ended ([`hwcal_model::curve::SETS_FACTS`]'s last fact).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    Sorted = 0,
    OutOfTime = 1,
    NoContrast = 2,
    L1Decides = 3,
    Unrepeated = 4,
    Unsorted = 5,
    Thin = 6,
}

/// The pool's pages for a level of `size` bytes (the larger of the sweep's
/// and the machine's figures), `page` bytes per page.
pub(crate) fn pool_pages(size: f64, page: usize) -> usize {
    ((POOL_PER_PAGE * size / page as f64).ceil() as usize).clamp(64, MAX_POOL)
}

/// The tests of one search: its control, its threshold and its clock.
struct Tester<'a> {
    pool: &'a mut dyn SetPoints,
    /// The control set: a few pages that push a target out of L1 but hold
    /// too few of any colour to evict it from L2.
    few: Vec<usize>,
    /// Above this ratio to the control a set evicts.
    threshold: f64,
    /// The spread of the control's own ratios (a standard deviation).
    spread: f64,
    /// The whole pool's ratio to the control (the first reference).
    pool_ratio: f64,
    now: &'a dyn Fn() -> f64,
    deadline: f64,
    /// Past the deadline: every test answers "no" at once and the search
    /// winds up.
    expired: bool,
}

impl Tester<'_> {
    /// The control for `target` (the few pages, less the target itself).
    fn control(&self, target: usize) -> Vec<usize> {
        self.few.iter().copied().filter(|&p| p != target).collect()
    }

    /// Sets the threshold `at` of the way to `reference` (a ratio to the
    /// control), and at least [`NOISE_SPREADS`] spreads above the control;
    /// false where the reference does not stand twice that clear.
    fn judge_against(&mut self, reference: f64, at: f64) -> bool {
        let floor = NOISE_SPREADS * self.spread;
        self.threshold = 1.0 + (at * (reference - 1.0)).max(floor);
        reference - 1.0 > 2.0 * floor
    }

    /// The median of nine ratios of `set` (a reference's reading).
    fn level(&mut self, target: usize, set: &[usize]) -> Result<f64> {
        let mut v = Vec::with_capacity(9);
        for _ in 0..9 {
            v.push(self.ratio(target, set)?);
        }
        Ok(median(&mut v))
    }

    /// The target's reading after `set` over its reading after the control,
    /// one round each back to back: a slow stretch of the host (another
    /// guest's burst, the host's own work) slows both alike.
    fn ratio(&mut self, target: usize, set: &[usize]) -> Result<f64> {
        let control = self.control(target);
        // The control's pages follow the set's in the test too: whatever
        // the set, the target's lines have left L1 the same way (L1 is
        // indexed within the page, so every page's line shares its set
        // with the target's), and the ratio sees L2 alone.
        let mut with = set.to_vec();
        with.extend(control.iter().filter(|p| !set.contains(p)));
        let a = self.pool.evict(target, &with, 1)?[0];
        let b = self.pool.evict(target, &control, 1)?[0];
        Ok(if b > 0.0 { a / b } else { f64::NAN })
    }

    /// Whether `set` evicts `target`: in three of at most five paired
    /// rounds ([`Self::ratio`]) above the threshold (a single slow round
    /// may be an interrupt).
    fn evicts(&mut self, target: usize, set: &[usize]) -> Result<bool> {
        if self.expired || (self.now)() > self.deadline {
            self.expired = true;
            return Ok(false);
        }
        let (mut yes, mut no) = (0, 0);
        while yes < 3 && no < 3 {
            if self.ratio(target, set)? > self.threshold {
                yes += 1;
            } else {
                no += 1;
            }
        }
        Ok(yes >= 3)
    }

    /// Whether `set` evicts `target` in most of five tests (a set checked
    /// again as one).
    fn repeatedly(&mut self, target: usize, set: &[usize]) -> Result<bool> {
        let mut yes = 0;
        for _ in 0..5 {
            yes += usize::from(self.evicts(target, set)?);
        }
        Ok(yes >= 3)
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `s` without its `k`-th of `g` contiguous chunks, and that chunk.
fn split_chunk(s: &[usize], k: usize, g: usize) -> (Vec<usize>, Vec<usize>) {
    let (a, b) = (k * s.len() / g, (k + 1) * s.len() / g);
    (s[..a].iter().chain(&s[b..]).copied().collect(), s[a..b].to_vec())
}

/// Shrinks `s`, a set that evicts `target`, to one no page of which can
/// be left out: split into `g` chunks, drop a chunk whose absence still
/// evicts, split finer when none can be dropped (threshold group testing;
/// with the ways known, W + 1 chunks always leave one droppable while more
/// than W pages remain), and last drop single pages one by one.
fn reduce(t: &mut Tester, target: usize, mut s: Vec<usize>, ways: Option<usize>) -> Result<Vec<usize>> {
    let mut g = ways.map_or(FIRST_GROUPS, |w| w + 1);
    // A drop accepted in a slow stretch of the host that outlasts a test's
    // rounds leaves a set that no longer evicts: every few drops the set is
    // checked again as one and gets its last drops back until it evicts
    // (backtracking, a few times at most).
    let mut dropped_chunks: Vec<Vec<usize>> = Vec::new();
    let (mut since_check, mut backtracks) = (0, 0);
    while !t.expired {
        let g_now = g.min(s.len());
        let mut dropped = false;
        for k in 0..g_now {
            let (rest, chunk) = split_chunk(&s, k, g_now);
            if !rest.is_empty() && t.evicts(target, &rest)? {
                dropped_chunks.push(chunk);
                s = rest;
                dropped = true;
                since_check += 1;
                break;
            }
        }
        if since_check >= 4 || !dropped {
            since_check = 0;
            while !t.expired && !t.repeatedly(target, &s)? {
                let Some(back) = dropped_chunks.pop() else {
                    return Ok(s);
                };
                backtracks += 1;
                if backtracks > 8 {
                    return Ok(s);
                }
                s.extend(back);
                dropped = true;
            }
        }
        if !dropped {
            if g_now >= s.len() {
                break;
            }
            g = (g_now * 2).min(s.len());
        }
    }
    Ok(s)
}

/// The search's outcome: the colours (pages in each, ways each showed) and
/// its facts.
pub(crate) struct Found {
    pub classes: Vec<(usize, usize)>,
    pub left: usize,
    pub kept: f64,
    pub evicted: f64,
    pub end: End,
    /// Where the pool was too thin ([`End::Thin`]): the first colour's
    /// pages, and the control's.
    pub thin: Option<(usize, usize)>,
}

/// The control's and the whole pool's readings (ns), and from them the
/// threshold (module docs): above the control by [`EVICTS_AT`] of what the
/// whole pool does and by [`NOISE_SPREADS`] times the spread of a second
/// control's ratios to it; false where the pool does not stand out from
/// that noise twice over.
fn references(t: &mut Tester, x: usize, order: &[usize], l1_pages: usize) -> Result<(f64, f64, bool)> {
    let n = order.len();
    let other: Vec<usize> = order[n.saturating_sub(2 * l1_pages + 2).max(n / 2)..].to_vec();
    let all: Vec<usize> = order.iter().copied().filter(|&p| p != x).collect();
    let control = t.control(x);
    // The first rounds after the pool is made run slow (its pages' first
    // walks, the clock ramping): warm first.
    t.pool.evict(x, &control, 3)?;
    let (mut same, mut whole, mut kept) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..15 {
        same.push(t.ratio(x, &other)?);
    }
    for _ in 0..7 {
        whole.push(t.ratio(x, &all)?);
        kept.push(t.pool.evict(x, &control, 1)?[0]);
    }
    // The control's own spread: the interquartile range of 15 ratios of a
    // second control to it, as a standard deviation.
    same.sort_by(f64::total_cmp);
    let spread = ((same[11] - same[3]) / 1.35).max(0.01);
    let evicted = median(&mut whole);
    let kept = median(&mut kept);
    t.spread = spread;
    t.pool_ratio = evicted;
    let clear = t.judge_against(evicted, EVICTS_AT);
    Ok((kept, kept * evicted, clear))
}

/// Sorts the pool's pages into the level's colours (module docs). `l1_pages`:
/// how many pages the L1 holds (a set twice that pushes a page out of it
/// without touching L2's colours much). `now`: the clock the budget runs on.
pub(crate) fn search(
    pool: &mut dyn SetPoints,
    l1_pages: usize,
    (now, deadline): (&dyn Fn() -> f64, f64),
    seed: u64,
) -> Result<Found> {
    let n = pool.pages();
    let mut rng = SplitMix64::new(seed);
    let mut order: Vec<usize> = (0..n).collect();
    shuffle(&mut order, &mut rng);
    let x0 = order[0];
    let mut t = Tester {
        pool,
        few: order[1..(2 * l1_pages + 2).clamp(2, n / 2)].to_vec(),
        threshold: f64::INFINITY,
        spread: 0.0,
        pool_ratio: f64::INFINITY,
        now,
        deadline,
        expired: false,
    };
    let (kept, evicted, clear) = references(&mut t, x0, &order, l1_pages)?;
    let mut found = Found {
        classes: Vec::new(),
        left: n,
        kept,
        evicted,
        end: End::Sorted,
        thin: None,
    };
    if !clear {
        found.end = End::NoContrast;
        return Ok(found);
    }
    let mut left = order;
    let mut ways: Option<usize> = None;
    let mut retries = 0;
    while !left.is_empty() && !t.expired {
        match colour(&mut t, &left, ways, &mut rng)? {
            Colour::Sorted {
                mut members,
                mut outside,
                ways: w,
            } => {
                let w = if found.classes.is_empty() {
                    if l1_decides(&mut t, left[0], &members[1..=w], &outside, &mut rng)? {
                        found.end = End::L1Decides;
                        break;
                    }
                    // The first colour's search ran with a control of
                    // random pages, some of them (one or two on average) of
                    // the target's colour: its smallest set was short by
                    // those, while the sort, with the same control in every
                    // test, was not — except for the control's own pages,
                    // which it could not sort. The ways again, and those
                    // pages, with a control of pages sorted outside; then
                    // every later search runs with a control of this
                    // colour's pages, of no colour it will look for.
                    let old = std::mem::take(&mut t.few);
                    if members.len() < (l1_pages + 3).min(old.len() + 1) {
                        // Every later control is this colour's pages, and
                        // it must push a target out of L1 as the first did:
                        // a page's line shares its L1 set with every other
                        // page's, so it takes more pages than the L1 holds,
                        // and a colour of no more (a pool of hardly more
                        // pages a colour than the ways: an L2 of 2.5 MiB
                        // and 10 ways under a pool sized for 16 L1s of 48
                        // KiB holds 12 — generated seed 1, #1486) cannot:
                        // every later test would read L1's hits. The pool
                        // is too thin for the level: say so, and the step
                        // grows it.
                        found.end = End::Thin;
                        found.thin = Some((members.len(), old.len()));
                        break;
                    }
                    let clean: Vec<usize> = outside.iter().copied().filter(|p| !old.contains(p)).collect();
                    if clean.len() < old.len() {
                        // Too few pages of other colours for a control:
                        // the level has one colour or hardly more (its way
                        // no larger than a page), nothing to count.
                        found.end = End::Unsorted;
                        break;
                    }
                    t.few = clean[..old.len()].to_vec();
                    let Some(w) = first_ways(&mut t, &members)? else {
                        found.end = End::Unrepeated;
                        break;
                    };
                    let base = members[1..w].to_vec();
                    let unsorted: Vec<usize> = old.iter().copied().filter(|p| outside.contains(p)).collect();
                    for p in unsorted {
                        let mut set = base.clone();
                        set.push(p);
                        if t.evicts(members[0], &set)? {
                            members.push(p);
                            outside.retain(|&q| q != p);
                        }
                    }
                    t.few = members[1..].iter().copied().take(old.len()).collect();
                    w
                } else {
                    w
                };
                found.classes.push((members.len(), w));
                ways.get_or_insert(w);
                left = outside;
            }
            Colour::NoneLeft => {
                if found.classes.is_empty() {
                    found.end = End::Unsorted;
                }
                break;
            }
            Colour::Unrepeated => {
                // A slow stretch of the host misled the reduction: this
                // target again later, from another draw (three misses end
                // the search).
                retries += 1;
                if retries > 3 {
                    found.end = End::Unrepeated;
                    break;
                }
                left.rotate_left(1);
            }
        }
    }
    if t.expired {
        found.end = End::OutOfTime;
    }
    found.left = left.len();
    Ok(found)
}

/// One colour's search.
enum Colour {
    /// The target's colour: its pages (the target, then the smallest set,
    /// then the rest), the pages outside it, and the smallest set's size.
    Sorted {
        members: Vec<usize>,
        outside: Vec<usize>,
        ways: usize,
    },
    /// Nothing left evicts the target: the colours left hold no more pages
    /// than their ways.
    NoneLeft,
    /// The smallest set found did not test again as one.
    Unrepeated,
}

/// The colour of `left[0]` among `left`: the shortest prefix of the rest (by
/// doubling) that evicts it, reduced to a smallest set, checked, then every
/// other page sorted in or out with it.
fn colour(t: &mut Tester, left: &[usize], ways: Option<usize>, rng: &mut SplitMix64) -> Result<Colour> {
    let x = left[0];
    let pool_ratio = t.pool_ratio;
    t.judge_against(pool_ratio, EVICTS_AT);
    let mut cands: Vec<usize> = left[1..].to_vec();
    shuffle(&mut cands, rng);
    // Short prefixes first: a test over hundreds of pages thrashes the level
    // hard enough for an adaptive policy to stop inserting where it evicts
    // (the Zen 5 guest's L2 evicts only part of the target then), and the
    // reduction's cost is its length times its tests.
    let mut len = ways.map_or(32, |w| 2 * w).min(cands.len());
    loop {
        if t.evicts(x, &cands[..len])? {
            break;
        }
        if len == cands.len() || t.expired {
            return Ok(Colour::NoneLeft);
        }
        len = (len * 2).min(cands.len());
    }
    let s = reduce(t, x, cands[..len].to_vec(), ways)?;
    // Last, single pages: drop each the set can spare, judged against what
    // this set does (module docs).
    let reference = t.level(x, &s)?;
    if !t.judge_against(reference, SMALL_EVICTS_AT) {
        return Ok(Colour::Unrepeated);
    }
    let mut s = s;
    let mut k = 0;
    while k < s.len() && s.len() > 1 && !t.expired {
        let mut rest = s.clone();
        rest.remove(k);
        if t.evicts(x, &rest)? {
            s = rest;
        } else {
            k += 1;
        }
    }
    let w = s.len();
    let smallest = t.level(x, &s)?;
    let clear = t.judge_against(smallest, SMALL_EVICTS_AT);
    let settled = clear && ways.is_none_or(|known| known == w);
    if t.expired || !settled || !t.repeatedly(x, &s)? || (w > 1 && t.repeatedly(x, &s[1..])?) {
        return Ok(Colour::Unrepeated);
    }
    // One page fewer of x's colour and one page of another does not evict:
    // each page is sorted in or out by adding it to that base, in groups.
    let base: Vec<usize> = s[1..].to_vec();
    let mut members = vec![x];
    members.extend(&s);
    let rest: Vec<usize> = cands.iter().copied().filter(|p| !s.contains(p)).collect();
    // The prefix that first evicted held about ways + 1 pages of x's colour
    // in `len`: about len / (w + 1) colours.
    let colours = len / (w + 1);
    let (mates, outside) = sort_pages(t, x, &base, &rest, group_size(colours))?;
    if t.expired {
        // Every test past the deadline answered no: the sort is cut short,
        // and a colour counted short would bias the estimate from the rest.
        return Ok(Colour::Unrepeated);
    }
    members.extend(mates);
    Ok(Colour::Sorted {
        members,
        outside,
        ways: w,
    })
}

/// Pages per group in the sort where the pool holds about `colours`
/// colours: half of them, so a group holds a page of the target's colour
/// about as often as not (a group with none is cleared by one test; one
/// with some is halved until its pages are), and single pages where there
/// are few colours (most groups would hold one).
fn group_size(colours: usize) -> usize {
    (colours / 2).max(1)
}

/// `pages` sorted in or out of `target`'s colour with `base` (one page
/// fewer of it than the ways): a group evicts the target with the base
/// where it holds a page of that colour (adaptive group testing: a group
/// that evicts is halved, and each half tested, down to single pages, each
/// of which is tested itself).
fn sort_pages(
    t: &mut Tester,
    target: usize,
    base: &[usize],
    pages: &[usize],
    group: usize,
) -> Result<(Vec<usize>, Vec<usize>)> {
    let (mut mates, mut outside) = (Vec::new(), Vec::new());
    let mut todo: Vec<&[usize]> = pages.chunks(group.max(1)).rev().collect();
    while let Some(g) = todo.pop() {
        let mut set = base.to_vec();
        set.extend(g);
        if !t.evicts(target, &set)? {
            outside.extend(g);
        } else if g.len() == 1 {
            mates.push(g[0]);
        } else {
            let (a, b) = g.split_at(g.len() / 2);
            todo.push(b);
            todo.push(a);
        }
    }
    Ok((mates, outside))
}

/// The ways, from the first colour's pages (`members`, its target first),
/// the control (`t.few`) of pages sorted outside it: the fewest of its pages
/// that evict the target, checked as a pair, that many and one fewer.
/// `None` where no count stands.
fn first_ways(t: &mut Tester, members: &[usize]) -> Result<Option<usize>> {
    let x = members[0];
    let mates = &members[1..];
    let reference = t.level(x, mates)?;
    let mut ways = None;
    if t.judge_against(reference, SMALL_EVICTS_AT) {
        for j in 1..=mates.len() {
            if t.evicts(x, &mates[..j])? {
                let sure = t.repeatedly(x, &mates[..j])? && !t.repeatedly(x, &mates[..j - 1])?;
                ways = Some(j).filter(|_| sure);
                break;
            }
        }
    }
    Ok(ways)
}

/// Whether the L1's ways, not the level's, made `s` the smallest set
/// evicting `x`. Every line of a page shares its L1 set with the same line
/// of every other page (L1 is indexed within the page), so a target leaves
/// L1 only once enough pages of any colour pass; where L1 has more ways than
/// the level, the smallest set must hold that many pages, some of them of
/// other colours. Then a member swapped for a page the sort put in another
/// colour still evicts; in a set of the level's own ways it never does. Also
/// true where every page of a pool several times the level joined the first
/// colour (one page past the set evicts whatever its colour).
fn l1_decides(
    t: &mut Tester,
    x: usize,
    s: &[usize],
    outside: &[usize],
    rng: &mut SplitMix64,
) -> Result<bool> {
    if outside.is_empty() {
        return Ok(true);
    }
    // Each member in turn (a set with a few pages of other colours among
    // its members shows them only where those are swapped).
    let mut kept = 0;
    for j in 0..s.len() {
        let mut swapped = s.to_vec();
        swapped[j] = outside[rng.index(outside.len())];
        kept += usize::from(t.repeatedly(x, &swapped)?);
    }
    Ok(kept >= 2)
}

fn shuffle(v: &mut [usize], rng: &mut SplitMix64) {
    for i in (1..v.len()).rev() {
        let j = rng.index(i + 1);
        v.swap(i, j);
    }
}

/// Step 4c: the search for L2 (`sizes`: the sweep's levels) on base pages
/// of `page` bytes, as three raw curves; none where there is no L2 to
/// search or the pool cannot be had.
pub(super) fn set_curves(
    hw: &dyn Hardware,
    sizes: &[f64],
    machine: &MachineInfo,
    page: usize,
    progress: &dyn Progress,
) -> Result<Vec<RawCurve>> {
    let (Some(&l1), Some(&l2)) = (sizes.first(), sizes.get(1)) else {
        return Ok(Vec::new());
    };
    let stated = machine.nominal_data_cache(2).map_or(0.0, |c| c.size_bytes as f64);
    // The pool grows fourfold while the whole of it evicts nothing (below),
    // so it starts no larger than a level [`FIRST_REACH`] times L1: a sweep
    // whose L2 is far past L1 may have read the L3 for it (an L2 a few times
    // a random-replacement L1 shows only a climb on base pages), and a pool
    // sized for that L3 is too large to sort in the budget.
    // Where the sweep's L2 and the stated one agree within a factor of two,
    // two sources say where the level is and the pool is sized for the
    // larger: a pool sized for 16 L1s under a 1.5 MiB L2 of 16 ways holds
    // hardly more pages of a colour than its ways, too few to evict, and
    // growing it costs half the budget.
    let agree = stated > 0.0 && (l2 / stated).ln().abs() <= std::f64::consts::LN_2;
    let level_size = if agree {
        l2.max(stated)
    } else {
        l2.max(stated).min(FIRST_REACH * l1)
    };
    // A level whose ways span no more than a page sees no colours.
    if level_size <= 2.0 * page as f64 {
        return Ok(Vec::new());
    }
    let l1_pages = ((l1 / page as f64).ceil() as usize).max(1);
    let t0 = hw.now_s();
    // One budget for the step, a larger pool's search included.
    let deadline = t0 + BUDGET_S;
    let mut n = pool_pages(level_size, page);
    let found = loop {
        let mut pool = match hw.set_pool(n, page, 64) {
            Ok(p) => p,
            Err(e) => {
                progress.say(&format!("cache: no page pool for the eviction sets ({e})"));
                return Ok(Vec::new());
            }
        };
        let found = search(pool.as_mut(), l1_pages, (&|| hw.now_s(), deadline), 0x5e75_5eed)?;
        // The whole pool not evicting its first page: too few pages of any
        // colour, the level larger than the sweep read (its edge on base
        // pages can read half the level): a pool four times larger, twice.
        // Pages left that evict nothing once the rest are sorted: their
        // colours hold no more pages than the ways (a level of more colours
        // than the pool was sized for), and the count needs every colour: a
        // pool twice as large.
        let time_left = deadline - hw.now_s() > BUDGET_S / 2.0;
        // A colour too thin for a control: a pool enough times larger for
        // its colours to hold the control, at most four times (a pool
        // grown further is not sorted in the budget).
        let grow = match (found.end, found.thin) {
            (End::NoContrast, _) => 4,
            (End::Sorted, _) if found.left > 0 => 2,
            (End::Thin, Some((pages, control))) => control.div_ceil(pages.max(1)).clamp(2, 4),
            _ => 1,
        };
        if grow == 1 || !time_left || n >= MAX_POOL || n >= 16 * pool_pages(level_size, page) {
            break found;
        }
        n = (grow * n).min(MAX_POOL);
    };
    progress.say(&format!(
        "cache: L2 eviction sets: {} colours of {} pool pages, {} left, {:.2} s",
        found.classes.len(),
        n,
        found.left,
        hw.now_s() - t0
    ));
    Ok(curves(&found, (2, n, page)))
}

/// The levels' `sizes` with the level the search counted (its curves in
/// `found`) among them where it stands, no level within a factor of two of
/// it is one of them (`cache::sets::matching`) and it lies right after L1:
/// a level the sweep showed no plateau for, which the analysis gives one
/// (its `plateaus::place_counted`).
pub(super) fn with_counted(sizes: &[f64], found: &[RawCurve]) -> Vec<f64> {
    let by = |id: &str| found.iter().find(|c| c.id == id);
    let mut out = sizes.to_vec();
    if let Some(Ok(s)) = Structure::read(by(CACHE_SETS), by(CACHE_SETS_WAYS), by(CACHE_SETS_FACTS)) {
        let c = s.size();
        if out.partition_point(|&x| x < c) == 1 && matching(sizes, c).is_none() {
            out.insert(1, c);
        }
    }
    out
}

/// The search as raw curves (see [`hwcal_model::curve::CACHE_SETS`]).
pub(crate) fn curves(f: &Found, (level, pool, page): (u32, usize, usize)) -> Vec<RawCurve> {
    let pt = |x: f64, y: f64| RawPoint {
        x,
        y,
        ..Default::default()
    };
    let classes = f
        .classes
        .iter()
        .enumerate()
        .map(|(k, &(pages, _))| pt(k as f64, pages as f64))
        .collect();
    let ways = f
        .classes
        .iter()
        .enumerate()
        .map(|(k, &(_, w))| pt(k as f64, w as f64))
        .collect();
    let facts = [
        level as f64,
        pool as f64,
        page as f64,
        f.left as f64,
        f.kept,
        f.evicted,
        f.end as u8 as f64,
    ];
    vec![
        curve(CACHE_SETS, "colour", "pool pages in it", classes),
        curve(
            CACHE_SETS_WAYS,
            "colour",
            "pages in its smallest evicting set",
            ways,
        ),
        curve(
            CACHE_SETS_FACTS,
            "fact",
            "value",
            facts.iter().enumerate().map(|(k, &v)| pt(k as f64, v)).collect(),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pool whose pages have colours (page × 7 mod `colours`), a level of
    /// `ways` ways under LRU and an L1 of `l1_ways` ways indexed within the
    /// page: the target's lines leave L1 when the set holds `l1_ways` pages,
    /// and the level when it holds `ways` of the target's colour.
    struct Fake {
        pages: usize,
        colours: usize,
        ways: usize,
        l1_ways: usize,
        clock: std::cell::Cell<f64>,
    }

    impl Fake {
        fn colour(&self, p: usize) -> usize {
            p * 7 % self.colours
        }
    }

    impl SetPoints for Fake {
        fn pages(&self) -> usize {
            self.pages
        }
        fn evict(&mut self, target: usize, set: &[usize], rounds: usize) -> Result<Vec<f64>> {
            self.clock.set(self.clock.get() + 1e-5);
            let mates = set
                .iter()
                .filter(|&&p| self.colour(p) == self.colour(target))
                .count();
            let ns = if set.len() < self.l1_ways {
                1.0
            } else if mates < self.ways {
                4.0
            } else {
                12.0
            };
            Ok(vec![ns; rounds.max(1)])
        }
    }

    fn sort(fake: &mut Fake) -> Found {
        let clock = fake.clock.clone();
        let now = move || clock.get();
        search(fake, 12, (&now, BUDGET_S), 7).unwrap()
    }

    #[test]
    fn an_lru_level_is_sorted_into_its_colours_and_ways() {
        // 1 MiB of 16 ways on 4 KiB pages: 16 colours, a pool of 4 MiB.
        let mut fake = Fake {
            pages: 1024,
            colours: 16,
            ways: 16,
            l1_ways: 12,
            clock: Default::default(),
        };
        let f = sort(&mut fake);
        assert_eq!(f.end, End::Sorted);
        assert_eq!(f.left, 0);
        assert_eq!(f.classes.len(), 16);
        assert!(
            f.classes.iter().all(|&(pages, ways)| pages == 64 && ways == 16),
            "{:?}",
            f.classes
        );
    }

    #[test]
    fn an_l1_with_more_ways_than_the_level_does_not_decide_its_ways() {
        // 256 KiB of 8 ways under a 12-way L1: the control that follows
        // every set empties L1 whatever the set.
        let mut fake = Fake {
            pages: 256,
            colours: 8,
            ways: 8,
            l1_ways: 12,
            clock: Default::default(),
        };
        let f = sort(&mut fake);
        assert_eq!((f.end, f.left), (End::Sorted, 0));
        assert!(
            f.classes.iter().all(|&(pages, ways)| pages == 32 && ways == 8),
            "{:?}",
            f.classes
        );
    }

    #[test]
    fn a_pool_that_never_evicts_says_so() {
        // A level larger than the pool: no colour has its ways' worth.
        let mut fake = Fake {
            pages: 64,
            colours: 16,
            ways: 16,
            l1_ways: 12,
            clock: Default::default(),
        };
        let f = sort(&mut fake);
        assert_eq!(f.end, End::NoContrast);
        assert!(f.classes.is_empty());
        let c = curves(&f, (2, 64, 4096));
        assert_eq!(c.len(), 3);
        assert_eq!(c[2].points.len(), hwcal_model::curve::SETS_FACTS.len());
    }

    #[test]
    fn a_counted_level_the_sweep_missed_gets_its_own_cold_laps() {
        // 4 colours × 16 ways × 4 KiB = 256 KiB, every page sorted.
        let f = Found {
            classes: vec![(64, 16), (60, 16), (68, 16), (64, 16)],
            left: 0,
            kept: 3.8,
            evicted: 21.0,
            end: End::Sorted,
            thin: None,
        };
        let found = curves(&f, (2, 256, 4096));
        let k = 1024.0;
        // The sweep took a 59 MiB L3 for L2: the count goes right after L1.
        assert_eq!(
            with_counted(&[64.0 * k, 59.0 * k * k], &found),
            vec![64.0 * k, 256.0 * k, 59.0 * k * k]
        );
        // A level within a factor of two of it is the one it counted.
        assert_eq!(
            with_counted(&[64.0 * k, 200.0 * k], &found),
            vec![64.0 * k, 200.0 * k]
        );
        // A sweep level between L1 and half the count: no insertion (the
        // analysis finds the two readings of L2 disagree).
        assert_eq!(
            with_counted(&[32.0 * k, 100.0 * k, 8.0 * k * k], &found),
            vec![32.0 * k, 100.0 * k, 8.0 * k * k]
        );
    }
}
