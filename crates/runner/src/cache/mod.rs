//! The cache probe: cache levels, line sizes, memory latency and memory-level
//! parallelism (The Calibrator's figures, measured with a random chase).
//!
//! Plan: a coarse sweep (3 sizes per octave, 1 per octave past 32 MiB),
//! the analysis finds the plateaus, the sweep is refined at 16 sizes per
//! octave around each boundary and analysed again; then the idle-gap chase
//! at the middle of each plateau, the cold laps of each level past the
//! first (one lap timed right after a scrub emptied the levels below:
//! its latency with none of their share), the line-size pairs and the
//! parallel chases, each sized from what the curve showed.

use crate::points::{ChasePoints, Hardware};
use crate::probe::{Plan, ProbeEntry, Progress};
use crate::Result;
use hwcal_analysis::cache as cache_analysis;
use hwcal_analysis::levels::{refine_boundaries, refine_edge_starts, Plateau};
use hwcal_model::{MachineInfo, Profile, RawCurve, RawPoint};
use hwcal_probes::cache::merge_point;

mod after;
mod limits;
mod sets;

use after::extension_sizes;
use after::{cold_curves, curve, flush_curves, gap_points, huge_curve, line_curves, mlp_points};
pub use limits::{check_max_size, default_max_size, parse_max_size, sweep_top};

pub const ENTRY: ProbeEntry = ProbeEntry {
    id: "cache",
    description: "cache levels, line sizes, memory latency, MLP (Calibrator)",
    opt_in: false,
    typical_s: 5.0,
    reads: &["tlb"],
    plan: |config, machine| {
        Some(Box::new(Cache {
            max_size: default_max_size(machine),
            extend: true,
            machine: machine.clone(),
            own_cpu: config.pinned_cpu,
            // A run that measures the TLB leaves its curves to it.
            tlb_curves: !config.measures(&crate::tlb::ENTRY),
        }))
    },
    analyze,
};

/// The cache probe's plan: the largest working set, the machine (its
/// nominal caches guide the analysis) and the CPU the probe runs on.
#[derive(Debug, Clone)]
pub struct Cache {
    pub max_size: u64,
    /// Where latency still climbs at `max_size` (no memory plateau), go
    /// an octave further within a quarter of available memory (off when
    /// the user bounded the sweep).
    pub extend: bool,
    pub machine: MachineInfo,
    pub own_cpu: Option<usize>,
    /// Measure the TLB's curves too where the chase buffer is 4 KiB pages
    /// to the TLB (the analysis removes the TLB's share with them); off
    /// when the same run measures the TLB anyway.
    pub tlb_curves: bool,
}

impl Plan for Cache {
    fn run(&self, hw: &dyn Hardware, progress: &dyn Progress) -> Result<Profile> {
        // The sweep's own analysis reads the nominal caches from the machine.
        let mut p = Profile {
            machine: Some(self.machine.clone()),
            raw: measure(
                hw,
                (self.max_size, self.extend),
                &self.machine,
                progress,
                self.own_cpu,
            )?,
            ..Default::default()
        };
        if self.tlb_curves {
            ensure_tlb_curves(hw, &mut p, progress, self.own_cpu)?;
        }
        // Raw curves only: the calibration analyses the merged profile.
        p.machine = None;
        Ok(p)
    }
}

/// Seconds the sweep (coarse, refinement, repair) may take before the
/// refinement stops early: on a quiet machine it needs about 2 s; a busy
/// one makes points slow to settle, and a bounded run with a noise note
/// beats an unbounded one.
const SWEEP_BUDGET_S: f64 = 6.0;

/// Geometric sizes from `lo` to `hi` (inclusive), `per_octave` per octave.
fn sweep(lo: f64, hi: f64, per_octave: f64) -> Vec<f64> {
    let mut v = Vec::new();
    let mut k = 0.0;
    loop {
        let x = lo * 2f64.powf(k / per_octave);
        if x > hi * 1.0001 {
            break;
        }
        v.push(x);
        k += 1.0;
    }
    v
}

fn sorted_insert(points: &mut Vec<RawPoint>, p: RawPoint) {
    let i = points.partition_point(|q| q.x < p.x);
    if points.get(i).is_some_and(|q| q.x == p.x) {
        points[i] = p;
    } else {
        points.insert(i, p);
    }
}

/// Run every cache measurement on `hw`; returns the raw curves.
pub fn measure(
    hw: &dyn Hardware,
    (max_size, extend): (u64, bool),
    machine: &MachineInfo,
    progress: &dyn Progress,
    own_cpu: Option<usize>,
) -> Result<Vec<RawCurve>> {
    let watch = hw.watch(own_cpu);
    hw.warm_up();
    let (mut buffer, huge, tlb_ok) = chase_bench(hw, max_size, progress)?;
    let bench = buffer.as_mut();
    let cap = (bench.capacity() as f64).min(max_size as f64);
    let t0 = hw.now_s();
    let since = |hw: &dyn Hardware| hw.now_s() - t0;

    let mut points = coarse_sweep(bench, max_size, cap)?;
    progress.say(&format!(
        "cache: coarse sweep of {} sizes in {:.1} s",
        points.len(),
        since(hw)
    ));
    let sweep = Sweep {
        hw,
        machine,
        tlb_ok,
        t0,
    };
    sweep.refine(bench, &mut points, progress)?;
    sweep.repair(bench, &mut points)?;
    sweep.retry_short_private(bench, &mut points, progress)?;
    sweep.retry_noisy_plateaus(bench, &mut points, progress)?;
    if extend {
        extend_past_climb(hw, &mut points, (machine, tlb_ok), progress)?;
    }
    let lat = curve(
        cache_analysis::LATENCY,
        "working set (bytes)",
        "ns per load",
        points,
    );
    let a = sweep_analysis(&lat, machine, tlb_ok);
    progress.say(&format!(
        "cache: refined to {} sizes, {} plateaus, {:.1} s",
        lat.points.len(),
        a.plateaus.len(),
        since(hw)
    ));

    // Are the huge pages still huge after all the rewriting? (See
    // `head_tlb_ratio`.) The 4 MiB head holds L1 and L2's points.
    let still_huge = tlb_ok && bench.head_tlb_ratio(2)? <= 1.3;
    if tlb_ok && !still_huge {
        progress.say("cache: huge pages were split during the run (TLB sees 4 KiB pages now)");
    }

    let colour = if tlb_ok {
        None
    } else {
        colour_edges(hw, bench, machine, cap, progress)?
    };

    let gap = gap_points(bench, &a, &lat, machine)?;
    let sizes: Vec<f64> = a.levels.iter().map(|l| l.size_bytes as f64).collect();
    let l1 = sizes.first().copied().unwrap_or(32768.0);
    let last = sizes.last().copied().unwrap_or(l1);
    // On base pages the sweep cannot say L2's size alone (its edge spread
    // by page colours): count its colours and ways instead.
    let structure = if tlb_ok {
        Vec::new()
    } else {
        sets::set_curves(hw, &sizes, machine, hw.page_sizes().base, progress)?
    };
    // The cold laps of every level, the counted one too where the sweep
    // showed no plateau near it (the analysis gives it one: its latency
    // must then come from laps of its own).
    let cold = cold_curves(bench, &sets::with_counted(&sizes, &structure))?;
    let mut raw_lines = line_curves(bench, l1, last, progress)?;
    raw_lines.extend(flush_curves(hw, &sizes)?);
    progress.say(&format!("cache: line sizes done, {:.1} s", since(hw)));
    // The footprint past the last level the machine states too: a sweep
    // that missed the L3 would otherwise run the chains inside it.
    let stated = machine
        .nominal_caches
        .iter()
        .filter(|c| c.cache_type != "Instruction");
    let last_stated = stated.map(|c| c.size_bytes as f64).fold(last, f64::max);
    // Over the whole buffer, a quarter past the sweep's top: its single
    // chase is then a check on the memory plateau (consistency's
    // `memory-mlp`: still rising there, the sweep stopped on a climb).
    let whole = bench.capacity() as f64;
    let mlp = mlp_points(bench, last_stated, whole)?;
    progress.say(&format!("cache: done in {:.1} s", since(hw)));

    let mut out = vec![
        watch.curve(cache_analysis::NEIGHBOURS),
        lat,
        curve(
            cache_analysis::GAP,
            "working set (bytes)",
            "ns per load incl. idle gap",
            gap,
        ),
    ];
    out.extend(colour);
    out.extend(cold);
    out.extend(structure);
    out.extend(raw_lines);
    out.push(curve(
        cache_analysis::MLP,
        "independent chains",
        "ns per load",
        mlp,
    ));
    out.push(huge_curve(cap, huge, tlb_ok, still_huge));
    Ok(out)
}

/// The chase bench over a huge-page buffer for working sets up to
/// `max_size` (a quarter extra, for pages failing the TLB check); also
/// returns the share of the buffer `smaps` reports as huge pages and
/// whether the TLB sees huge pages in the buffer's head.
fn chase_bench(
    hw: &dyn Hardware,
    max_size: u64,
    progress: &dyn Progress,
) -> Result<(Box<dyn ChasePoints>, f64, bool)> {
    let b = hw.chase_buffer(max_size as usize * 5 / 4)?;
    if !b.all_huge && b.head_huge {
        progress.say(
            "cache: the TLB does not see huge pages everywhere in the chase buffer; using the pages it does",
        );
    }
    Ok((b.points, b.huge_fraction, b.head_huge))
}

/// The sweep's context: what it runs on, the machine's stated caches that
/// steer its analysis, whether the TLB sees huge pages, and when it
/// started (its budgets count from then).
struct Sweep<'a> {
    hw: &'a dyn Hardware,
    machine: &'a MachineInfo,
    tlb_ok: bool,
    t0: f64,
}

impl Sweep<'_> {
    fn elapsed(&self) -> f64 {
        self.hw.now_s() - self.t0
    }
    fn analyse(&self, points: &[RawPoint]) -> cache_analysis::CacheAnalysis {
        let lat = curve(cache_analysis::LATENCY, "", "", points.to_vec());
        sweep_analysis(&lat, self.machine, self.tlb_ok)
    }
}

/// Step 1, the coarse sweep: 3 sizes per octave up to 32 MiB, then 1 per
/// octave (past every effective cache seen so far the curve is flat), plus
/// the top.
fn coarse_sweep(bench: &mut dyn ChasePoints, max_size: u64, cap: f64) -> Result<Vec<RawPoint>> {
    let top = (max_size as f64).min(cap);
    let mut xs = sweep(4096.0, top.min(32.0 * 1048576.0), 3.0);
    if top > 32.0 * 1048576.0 {
        xs.extend(sweep(64.0 * 1048576.0, top, 1.0));
    }
    if xs.last().is_some_and(|&l| l < top * 0.9) {
        xs.push(top);
    }
    let mut points: Vec<RawPoint> = Vec::new();
    for &x in &xs {
        sorted_insert(&mut points, bench.chase(0, x as usize, 0, false)?);
    }
    Ok(points)
}

/// The analysis the sweep steers itself by: the latency curve alone, with
/// the buffer's huge pages as the TLB saw them (all or none: on 4 KiB pages
/// the analysis fits page colours to the private levels' edges).
fn sweep_analysis(lat: &RawCurve, machine: &MachineInfo, huge_pages: bool) -> cache_analysis::CacheAnalysis {
    let huge = Some(if huge_pages { 1.0 } else { 0.0 });
    cache_analysis::analyze_sweep(lat, huge, machine)
}

/// Step 2: refine around each boundary; again if a re-measurement moved a
/// boundary into a coarse interval. Stops early once the sweep budget
/// (counted from `t0`) is spent.
impl Sweep<'_> {
    fn refine(
        &self,
        bench: &mut dyn ChasePoints,
        points: &mut Vec<RawPoint>,
        progress: &dyn Progress,
    ) -> Result<()> {
        for round in 0..6 {
            if self.elapsed() > SWEEP_BUDGET_S {
                progress.say("cache: sweep budget spent; refinement stopped early");
                break;
            }
            let a = self.analyse(points);
            let pxs: Vec<f64> = points.iter().map(|q| q.x).collect();
            let pys: Vec<f64> = points.iter().map(|q| q.y).collect();
            let mut new = Vec::new();
            // Where the curve crosses a quarter of the way toward the next
            // plateau found, and where it first rises a quarter above L1's
            // plateau: L1's own end, which the first misses where a level
            // between left no plateau yet. L1 only: it is virtually
            // indexed, so its edge is sharp and its size lies between two
            // points; a physically indexed level's edge is spread by page
            // colouring (the placements measure it), and points added on
            // its gentle start joined its plateau and raised its level.
            let mut wanted = refine_boundaries(&pxs, &a.plateaus, 16.0);
            wanted.extend(refine_edge_starts(
                &pxs,
                &pys,
                &a.plateaus[..a.plateaus.len().min(1)],
                16.0,
                0.25,
            ));
            wanted.sort_by(f64::total_cmp);
            wanted.dedup_by(|a, b| (*a / *b - 1.0).abs() < 0.005);
            for x in wanted {
                let x = (x / 64.0).round() * 64.0;
                if !points.iter().any(|q| (q.x / x - 1.0).abs() < 0.005) {
                    new.push(x);
                }
            }
            // Rounds 0, 2, 4: fill in; rounds 1, 3, 5: measure the boundary
            // windows again, later in time. A level's edge is where
            // interference (the other vCPU sharing L2, neighbours in L3) shifts
            // the curve most, and it is rarely there all the time; noise only
            // adds time, so every sample is kept and the minimum is the figure.
            if round % 2 == 0 {
                if new.is_empty() && round > 0 {
                    break;
                }
                for x in new {
                    sorted_insert(points, bench.chase(0, x as usize, 0, false)?);
                }
            } else {
                remeasure_boundaries(bench, points, &a.plateaus, &pxs)?;
            }
        }
        Ok(())
    }
}

/// Measure again, keeping every sample, the points in the window just
/// before each plateau's crossing (`pxs` are the points' sizes when the
/// plateaus were found).
fn remeasure_boundaries(
    bench: &mut dyn ChasePoints,
    points: &mut [RawPoint],
    plateaus: &[Plateau],
    pxs: &[f64],
) -> Result<()> {
    let windows: Vec<(f64, f64)> = plateaus
        .iter()
        .filter_map(|p| p.cross)
        .map(|j| (pxs[j.saturating_sub(2)], pxs[j]))
        .collect();
    for p in points.iter_mut() {
        if windows.iter().any(|&(lo, hi)| p.x >= lo && p.x <= hi) {
            let q = bench.chase(0, p.x as usize, 0, false)?;
            merge_point(p, q);
        }
    }
    Ok(())
}

impl Sweep<'_> {
    /// Step 3b, measure until confident: one thread alone fills a cache
    /// private to its core, so where a private level reads more than 12.5%
    /// short of its nominal size, something else held part of it: on a VM most
    /// likely the host's other hyperthread on this core, whose activity comes
    /// in bursts the guest cannot see. L1 is judged always (it is virtually
    /// indexed); L2 only on huge pages, where a physically indexed cache sees
    /// no page-colour conflicts (on 4 KiB pages it can read short with no one
    /// else there, and measuring again would not change that). The sizes from
    /// half to 1.25× each short level's nominal size are measured again, the
    /// short levels interleaved, up to four more times a quarter second apart
    /// (every sample is kept, the minimum is the figure: noise only adds
    /// time), until every level reads its size or the tries run out; only
    /// then is a level flagged.
    fn retry_short_private(
        &self,
        bench: &mut dyn ChasePoints,
        points: &mut [RawPoint],
        progress: &dyn Progress,
    ) -> Result<()> {
        let (machine, huge_pages) = (self.machine, self.tlb_ok);
        let judged: Vec<(usize, f64)> = (1..=if huge_pages { 2 } else { 1 })
            .filter_map(|level| machine.nominal_data_cache(level).map(|n| (level, n)))
            .filter(|(_, n)| n.shared_cpus.len() <= 1)
            .map(|(level, n)| (level as usize, n.size_bytes as f64))
            .collect();
        let short = |points: &[RawPoint]| -> Vec<(usize, f64)> {
            let lat = curve(cache_analysis::LATENCY, "", "", points.to_vec());
            let a = sweep_analysis(&lat, machine, huge_pages);
            judged
                .iter()
                .copied()
                .filter(|&(level, nominal)| {
                    a.levels.get(level - 1).is_some_and(|l| {
                        (l.size_bytes as f64) < (1.0 - cache_analysis::NOMINAL_SIZE_TOLERANCE) * nominal
                    })
                })
                .collect()
        };
        for attempt in 1..=4 {
            let levels = short(points);
            if levels.is_empty() {
                break;
            }
            let names: Vec<String> = levels.iter().map(|(l, _)| format!("L{l}")).collect();
            progress.say(&format!(
                "cache: {} read short of the nominal size; measuring the edge again ({attempt} of 4)",
                names.join(" and ")
            ));
            self.hw.pause(250);
            for p in points
                .iter_mut()
                .filter(|p| levels.iter().any(|&(_, n)| p.x >= 0.5 * n && p.x <= 1.25 * n))
            {
                let q = bench.chase(0, p.x as usize, 0, false)?;
                merge_point(p, q);
            }
        }
        Ok(())
    }
}

/// Rounds of [`retry_noisy_plateaus`], and the seconds they may take.
const NOISY_ROUNDS: usize = 2;
const NOISY_BUDGET_S: f64 = 1.5;

impl Sweep<'_> {
    /// A plateau whose points disagree beyond the analysis's tolerance (its
    /// level, or memory, marked noisy) is measured again, every point of it,
    /// a quarter second later, up to [`NOISY_ROUNDS`] times; each point keeps
    /// its quietest reading. The points of a plateau should all read the same
    /// latency, so a spread among them is interference (another tenant in the
    /// shared L3 or on the memory bus, the host's other hyperthread), which
    /// comes and goes: measured again after it has gone, the plateau is known
    /// instead of flagged. What is still spread after the rounds (or after
    /// [`NOISY_BUDGET_S`]) stays noisy.
    fn retry_noisy_plateaus(
        &self,
        bench: &mut dyn ChasePoints,
        points: &mut [RawPoint],
        progress: &dyn Progress,
    ) -> Result<()> {
        let t = self.hw.now_s();
        for round in 1..=NOISY_ROUNDS {
            let a = self.analyse(points);
            // The analysis indexes the valid points (positive size, finite
            // positive latency) in size order; the same filter maps its
            // plateaus back to sizes.
            let xs: Vec<f64> = points
                .iter()
                .filter(|q| q.x > 0.0 && q.y.is_finite() && q.y > 0.0)
                .map(|q| q.x)
                .collect();
            let mut noisy: Vec<&Plateau> = a
                .levels
                .iter()
                .zip(&a.plateaus)
                .filter(|(l, _)| l.verdict == hwcal_model::Verdict::Noisy)
                .map(|(_, p)| p)
                .collect();
            if a.memory
                .as_ref()
                .is_some_and(|m| m.verdict == hwcal_model::Verdict::Noisy)
            {
                noisy.extend(a.plateaus.get(a.levels.len()));
            }
            let ranges: Vec<(f64, f64)> = noisy
                .iter()
                .filter_map(|p| Some((*xs.get(p.first)?, *xs.get(p.last)?)))
                .collect();
            if ranges.is_empty() {
                break;
            }
            progress.say(&format!(
                "cache: {} plateau(s) read unevenly; measuring them again ({round} of {NOISY_ROUNDS})",
                ranges.len()
            ));
            self.hw.pause(250);
            for p in points
                .iter_mut()
                .filter(|p| ranges.iter().any(|&(lo, hi)| p.x >= lo && p.x <= hi))
            {
                if self.hw.now_s() - t > NOISY_BUDGET_S {
                    return Ok(());
                }
                let q = bench.chase(0, p.x as usize, 0, false)?;
                merge_point(p, q);
            }
        }
        Ok(())
    }
}

/// Page placements each private level's edge is measured on (see
/// [`colour_edges`]): the mean of six draws has about 40% of one draw's
/// spread.
const COLOUR_PLACEMENTS: usize = 6;

/// Seconds the placements may take, waits for a quiet core included.
const COLOUR_BUDGET_S: f64 = 1.5;

/// A placement counts as undisturbed when its sentinel (the chase over half
/// the level) is within this of the quietest sentinel seen.
const SENTINEL_MARGIN: f64 = 1.05;

/// On pages the TLB sees as 4 KiB, the edge of each private data level
/// beyond L1 whose ways sysfs states (and that spans two page colours or
/// more) is measured again, from half to 2.5× its nominal size at 8 sizes
/// per octave, on [`COLOUR_PLACEMENTS`] other regions of the buffer. Each
/// region is another draw of physical pages, hence of page colours: one
/// draw decides where one curve starts to climb (a colour that drew many
/// pages overflows early), the mean over draws is what the model of random
/// page colours predicts, and the analysis fits that model to it
/// (`hwcal_analysis::colour`). Each level's regions are cut to its own
/// edge: a larger level beside it (a one-CPU guest's L3, which sysfs shows
/// as private) must not leave the small one's edge with two draws where
/// the buffer holds six of its size.
///
/// The edge of a private level is also where another thread on the same
/// core shows most: on a VM the host's other hyperthread, which may run
/// another tenant and stream through the shared L2 for seconds at a time.
/// So each placement is bracketed by a sentinel, the chase over half the
/// level, which hits every time unless someone else evicts its lines; a
/// placement whose sentinel before or after reads slower than the
/// quietest one seen by [`SENTINEL_MARGIN`] is measured again after a
/// pause, within [`COLOUR_BUDGET_S`]. `None` where no level qualifies or
/// the buffer has no room.
fn colour_edges(
    hw: &dyn Hardware,
    bench: &mut dyn ChasePoints,
    machine: &MachineInfo,
    cap: f64,
    progress: &dyn Progress,
) -> Result<Option<RawCurve>> {
    let page = machine.page_bytes.unwrap_or(4096);
    let nominal: Vec<f64> = (2..=4)
        .filter_map(|l| machine.nominal_data_cache(l))
        .filter(|n| n.shared_cpus.len() <= 1)
        .filter(|n| n.ways.is_some_and(|w| w >= 2 && n.size_bytes / (w * page) >= 2))
        .map(|n| n.size_bytes as f64)
        .collect();
    let t = hw.now_s();
    let mut pts: Vec<RawPoint> = Vec::new();
    let (mut least, mut retries) = (usize::MAX, 0);
    for &n in &nominal {
        let sizes: Vec<f64> = sweep(0.5 * n, 2.5 * n, 8.0)
            .into_iter()
            .map(|x| (x / 64.0).round() * 64.0)
            .collect();
        let (done, again, row) = placements(hw, bench, (n, &sizes), cap, t)?;
        if done < 2 {
            continue;
        }
        least = least.min(done);
        retries += again;
        pts.extend(row);
    }
    if pts.is_empty() {
        return Ok(None);
    }
    for p in &mut pts {
        p.y = cache_analysis::placement_mean(&p.samples).unwrap_or(f64::NAN);
    }
    progress.say(&format!(
        "cache: {} private level edge(s) on {least} page placements or more ({retries} measured \
         again: another thread on the core) in {:.1} s",
        nominal.len(),
        hw.now_s() - t
    ));
    Ok(Some(curve(
        cache_analysis::COLOUR,
        "working set (bytes)",
        "ns per load, one sample per page placement",
        pts,
    )))
}

/// One level's edge (`sizes`, the level's nominal size `n`) on up to
/// [`COLOUR_PLACEMENTS`] regions of the buffer past the sweep's own, each
/// bracketed by its sentinel (see [`colour_edges`]); `t`: when the
/// placements began (the budget is theirs together). Returns the
/// placements kept, those measured again, and the points with one sample
/// per placement.
fn placements(
    hw: &dyn Hardware,
    bench: &mut dyn ChasePoints,
    (n, sizes): (f64, &[f64]),
    cap: f64,
    t: f64,
) -> Result<(usize, usize, Vec<RawPoint>)> {
    let mut pts: Vec<RawPoint> = sizes
        .iter()
        .map(|&x| RawPoint {
            x,
            y: f64::NAN,
            ..Default::default()
        })
        .collect();
    let Some(&largest) = sizes.iter().max_by(|a, b| a.total_cmp(b)) else {
        return Ok((0, 0, pts));
    };
    let huge = hw.page_sizes().huge;
    let region = (largest as usize).div_ceil(huge) * huge;
    let wanted = (cap as usize / region).saturating_sub(1).min(COLOUR_PLACEMENTS);
    // The quietest sentinel seen so far.
    let mut quiet = f64::INFINITY;
    let (mut done, mut retries) = (0, 0);
    // Region 0 is the sweep's own; the placements start past it.
    let mut r = 1;
    while done < wanted && r * region + region <= cap as usize {
        let at = r * region;
        let before = bench.chase(at, (0.5 * n) as usize, 0, false)?.y;
        let mut row = Vec::with_capacity(sizes.len());
        for &x in sizes {
            row.push(bench.chase(at, x as usize, 0, false)?);
        }
        let after = bench.chase(at, (0.5 * n) as usize, 0, false)?.y;
        quiet = quiet.min(before).min(after);
        let disturbed = before.max(after) > SENTINEL_MARGIN * quiet;
        r += 1;
        if disturbed && hw.now_s() - t < COLOUR_BUDGET_S {
            retries += 1;
            hw.pause(50);
            continue;
        }
        for (p, q) in pts.iter_mut().zip(row) {
            p.samples.push(q.y);
            p.mhz.push(hwcal_analysis::stats::median(&q.mhz));
        }
        done += 1;
    }
    Ok((done, retries, pts))
}

impl Sweep<'_> {
    /// Step 3, repair: a larger working set cannot be faster than a smaller
    /// one, so a point well above a larger size's latency was disturbed.
    /// Measure it again, later.
    fn repair(&self, bench: &mut dyn ChasePoints, points: &mut [RawPoint]) -> Result<()> {
        for _ in 0..3 {
            if self.elapsed() > SWEEP_BUDGET_S {
                break;
            }
            let mut suffix_min = f64::INFINITY;
            let mut bad = Vec::new();
            for i in (0..points.len()).rev() {
                if points[i].y > 1.15 * suffix_min {
                    bad.push(i);
                }
                suffix_min = suffix_min.min(points[i].y);
            }
            if bad.is_empty() {
                break;
            }
            for i in bad {
                let q = bench.chase(0, points[i].x as usize, 0, false)?;
                merge_point(&mut points[i], q);
            }
        }
        Ok(())
    }
}

/// Step 3c: a last level with adaptive insertion (Intel's L3s, Zen 3 to
/// 5's) keeps part of any chase, so at the sweep's top latency may still
/// climb toward memory (a Zen 5 guest: 129–138 ns at four times its L3,
/// against 146–150). While the top still climbs (`still_climbing`) or the
/// sweep shows no memory plateau to the analysis, one
/// more octave, four points, on a buffer of its own (allocated only then), at
/// most two octaves and within a quarter of available memory; stopped
/// where that buffer's pages are not what the sweep's were to the TLB.
fn extend_past_climb(
    hw: &dyn Hardware,
    points: &mut Vec<RawPoint>,
    (machine, tlb_ok): (&MachineInfo, bool),
    progress: &dyn Progress,
) -> Result<()> {
    let avail = hw.available_memory() as f64;
    for _ in 0..2 {
        let lat = curve(cache_analysis::LATENCY, "", "", points.clone());
        let found = sweep_analysis(&lat, machine, tlb_ok).memory.is_some();
        let xs = extension_sizes(&lat, found, avail);
        let (Some(&first), Some(&to)) = (xs.first(), xs.last()) else {
            return Ok(());
        };
        progress.say(&format!(
            "cache: latency still climbs at the sweep's top; it goes on from {} to {} MiB",
            (first / 1048576.0).round(),
            (to / 1048576.0).round()
        ));
        let (mut bench, _, same_pages) = chase_bench(hw, to as u64, progress)?;
        if same_pages != tlb_ok {
            progress.say("cache: the extension's buffer got other pages than the sweep's; not extended");
            return Ok(());
        }
        for x in xs {
            sorted_insert(points, bench.chase(0, x as usize, 0, false)?);
        }
    }
    Ok(())
}

/// Page counts the TLB correction needs: past 8192 pages (32 MiB) a random
/// chase misses every TLB level of today's cores on nearly every load, and
/// the model extrapolates from the levels found.
const TLB_PAGES_FOR_CACHE: u64 = 8192;

/// Where the chase buffer was 4 KiB pages to the TLB and the profile has no
/// TLB curves yet (`hwcal cache` alone, or `run --skip tlb`), measure them:
/// the analysis removes the TLB's share from the cache curve with them.
pub fn ensure_tlb_curves(
    hw: &dyn Hardware,
    p: &mut Profile,
    progress: &dyn Progress,
    cpu: Option<usize>,
) -> Result<()> {
    let huge_seen = p
        .raw_curve(cache_analysis::HUGE)
        .is_some_and(|c| !c.points.iter().any(|q| q.x <= 0.0 && q.y < 0.5));
    let has_tlb = p.raw_curve(hwcal_analysis::tlb::SMALL).is_some();
    if huge_seen || has_tlb {
        return Ok(());
    }
    progress.say("cache: the TLB sees 4 KiB pages; measuring its levels to correct for them");
    let raw = crate::tlb::measure(hw, TLB_PAGES_FOR_CACHE, 0, progress, cpu)?;
    p.raw.extend(raw);
    Ok(())
}

/// The analysis hook: the cache sections of a profile from its raw curves.
pub fn analyze(p: &mut Profile) -> bool {
    let Some(a) = cache_analysis::analyze(p) else {
        return false;
    };
    p.caches = Some(a.levels);
    p.memory = a.memory;
    // The analysis words its notes; every one of them is replaced on a
    // re-analysis (old profiles' plain `cache: ` notes included).
    hwcal_model::note::refresh_analysis(
        &mut p.notes,
        "cache",
        &hwcal_analysis::cache::note_patterns(),
        a.notes,
    );
    true
}
