//! A latency chase's figure from its timing slices, shared by the
//! consistency stage's relations: the fastest slice (interference only
//! adds time), and what the profile calls a figure from the `mem` chase.

use hwcal_model::Profile;

/// What [`hwcal_model::MemoryLatency::source`] says of a figure from the
/// `mem` chase.
pub const MEM_SOURCE: &str = "mem chase";

/// How close a latency chase's fastest slices must be for the figure to
/// count as repeated: 1%, as the clock's two methods must agree
/// (`consistency::CLOCK_AGREE_PCT`, held equal by a test there): a tenth of what memory latency is held to, where
/// the harness's 0.5% for a cache point's best three is a rule for when to
/// stop sampling, not for flagging (a quiet Zen 5 guest's 10 ms slices:
/// 151.5, 152.2, 152.4 ns).
pub const FASTEST_AGREE: f64 = 0.01;

/// How many of the fastest slices must agree ([`FASTEST_AGREE`]).
pub const FASTEST_K: usize = 3;

/// A latency chase's figure from its slices: the fastest slice's ns per
/// load, as every cache latency is the fastest of its samples. Interference
/// (an interrupt, the host's tick, a neighbour's work, another tenant's
/// traffic) only ever adds time to a slice, and the mean of slices that all
/// meet some of it is inflated by its share of the run — 15–20% where the
/// events come every millisecond or so, alike in every 10 ms slice, so the
/// slices agree with each other and nothing flags it. The fastest slice is
/// the one interference disturbed least, and a run of short slices (the
/// latency chase's are 1 ms, `runner::mem::short`) has clean ones.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Fastest {
    pub(crate) ns: f64,
    pub(crate) ci95: Option<[f64; 2]>,
    /// The core clock around the fastest slice, MHz.
    pub(crate) mhz: Option<f64>,
    /// Its [`FASTEST_K`] fastest slices agree within [`FASTEST_AGREE`].
    pub(crate) repeated: bool,
}

/// [`Fastest`] of the curve `id`, where it has slices.
pub(crate) fn curve_fastest(p: &Profile, id: &str) -> Option<Fastest> {
    let c = p.raw_curve(id)?;
    let mut pts: Vec<&hwcal_model::RawPoint> = c
        .points
        .iter()
        .filter(|q| q.x > 0.0 && q.y.is_finite() && q.y > 0.0)
        .collect();
    pts.sort_by(|a, b| a.y.total_cmp(&b.y));
    let first = pts.first()?;
    let ys: Vec<f64> = pts.iter().map(|q| q.y).collect();
    Some(Fastest {
        ns: first.y,
        ci95: crate::bootstrap::minimum_interval(&ys),
        mhz: first.mhz.first().copied().filter(|m| m.is_finite() && *m > 0.0),
        repeated: ys.len() >= FASTEST_K && ys[FASTEST_K - 1] <= ys[0] * (1.0 + FASTEST_AGREE),
    })
}

/// A point of the cache sweep taken as a memory measurement: its working
/// set (bytes), its fastest sample (as every sweep point's figure; the
/// point's own figure where it kept no samples) and that minimum's 95%
/// interval.
pub(crate) struct SweepPoint {
    pub(crate) x: f64,
    pub(crate) ns: f64,
    pub(crate) ci95: Option<[f64; 2]>,
}

/// The cache sweep's point nearest `target` bytes (in octaves) among those
/// whose working set `keep` admits.
pub(crate) fn sweep_point(p: &Profile, target: f64, keep: impl Fn(f64) -> bool) -> Option<SweepPoint> {
    let off = |x: f64| (x / target).ln().abs();
    let point = p
        .raw_curve(crate::cache::LATENCY)?
        .points
        .iter()
        .filter(|q| q.x > 0.0 && keep(q.x))
        .min_by(|a, b| off(a.x).total_cmp(&off(b.x)))?;
    let samples: Vec<f64> = point
        .samples
        .iter()
        .copied()
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    Some(SweepPoint {
        x: point.x,
        ns: samples.iter().copied().reduce(f64::min).unwrap_or(point.y),
        ci95: crate::bootstrap::minimum_interval(&samples),
    })
}
