//! `hwcal ctx`, after lmbench's lat_ctx: the cost of a context switch in
//! a ring of processes or threads passing a token, per ring size and array
//! size, with the kernel's count of switches per hop. Keys keep lat_ctx's
//! names where it had them (`us_min`, `us_median`, ...).

use crate::serde_nan::nan_if_null;
#[cfg(feature = "schema")]
use crate::serde_nan::NanOrNumber;
use crate::verdict::Verdict;
use serde::{Deserialize, Serialize};

/// `hwcal ctx` (lmbench lat_ctx).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ContextSwitch {
    /// `same`, `spread` or `none`.
    pub placement: String,
    /// `processes` or `threads`.
    pub kind: String,
    /// KB of array each member sums per hop (lat_ctx's `-s`, in KB as lat_ctx has it).
    pub size_kb: u64,
    /// Rings running at once (lat_ctx's `-P`).
    pub parallel: u32,
    /// Per-hop overhead subtracted from every sample (passing the token and
    /// summing the array without switching), µs: what lat_ctx prints as
    /// `ovr` in its xgraph titles (`size=0k ovr=0.58`); the JSON key carries
    /// the unit, the text output keeps lat_ctx's `ovr`.
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub overhead_us: f64,
    /// One point per ring size, for `size_kb`.
    pub points: Vec<CtxPoint>,
    /// Further sizes, when more than one `-s` was measured.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<CtxSize>,
    /// CPUs the ring members were placed on (ring member `i` on
    /// `cpus[i % cpus.len()]`); empty when unpinned.
    #[serde(default)]
    pub cpus: Vec<usize>,
    /// Discarded warm-up rounds (`-W`).
    #[serde(default)]
    pub warmups: u32,
    /// Timed samples per point (`-N`).
    #[serde(default)]
    pub repetitions: u32,
    /// Wall time of the whole measurement.
    #[serde(default)]
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub duration_ms: f64,
    /// The overhead in core cycles (each sample converted with the clock
    /// measured alongside it), when the clock was tracked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead_cycles: Option<f64>,
}

impl ContextSwitch {
    /// Every measured size, the first (top-level) one included.
    pub fn all_sizes(&self) -> Vec<CtxSize> {
        let mut v = vec![CtxSize {
            size_kb: self.size_kb,
            overhead_us: self.overhead_us,
            overhead_cycles: self.overhead_cycles,
            points: self.points.clone(),
        }];
        v.extend(self.sizes.iter().cloned());
        v
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CtxSize {
    /// KB of array per member (lat_ctx's `-s`).
    pub size_kb: u64,
    /// Overhead subtracted, µs (lat_ctx's `ovr`).
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub overhead_us: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead_cycles: Option<f64>,
    pub points: Vec<CtxPoint>,
}

/// Context switches per ring member per round trip, counted by the kernel
/// (`voluntary_ctxt_switches` / `nonvoluntary_ctxt_switches` in
/// `/proc/<pid>/status`) over the timed samples. A member that blocks in
/// `read` switches out once per trip (voluntary). When waking the next
/// member preempts the writer before it reaches its own `read`, the writer
/// switches out once more (involuntary) and later runs again only to block:
/// that hop costs two switches where lat_ctx assumes one. The probe counts
/// them; the analysis turns them into [`CtxPoint::switches_per_hop`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SwitchCount {
    pub voluntary: f64,
    pub involuntary: f64,
}

impl SwitchCount {
    /// Switches per hop: every hop enters one member, and each member
    /// leaves the CPU this many times per trip.
    pub fn per_hop(&self) -> f64 {
        self.voluntary + self.involuntary
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CtxPoint {
    /// Processes (or threads) in the ring, the timing one included.
    pub nprocs: u32,
    /// Fastest sample's time per hop, µs. The `us_` prefix instead of a
    /// `_us` suffix is lat_ctx's naming, kept for compatibility with
    /// lat_ctx-based tooling (as are `us_median`, `us_mad`, `us_max`).
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub us_min: f64,
    /// Median time per hop, µs: lat_ctx's "context switch" figure (what its
    /// xgraph lines print). Legacy lat_ctx name, kept for compatibility.
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub us_median: f64,
    /// Median absolute deviation of the per-hop samples, µs (unscaled).
    /// Legacy lat_ctx-style name, kept for compatibility.
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub us_mad: f64,
    pub verdict: Verdict,
    /// Slowest sample's time per hop, µs. Legacy lat_ctx-style name, kept
    /// for compatibility.
    #[serde(default)]
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub us_max: f64,
    /// Samples behind the figures.
    #[serde(default)]
    pub samples: usize,
    /// True when, in at least one sample, the overhead was at least the
    /// measured time per hop: such samples count as 0, never negative. If
    /// even `us_median` is 0, the switch cost is below what the run resolved.
    #[serde(default)]
    pub overhead_exceeds: bool,
    /// Median switch time in core cycles: each sample converted with the
    /// core clock measured alongside it, so the figure does not move with
    /// the clock drift that moves the µs figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_median: Option<f64>,
    /// Context switches per hop, counted by the kernel over the timed
    /// samples (members' voluntary + involuntary switches per round trip).
    /// 1.0 when every hop is one switch; more when waking the next member
    /// preempts the writer, which then has to run again just to block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub switches_per_hop: Option<f64>,
    /// Of those, the involuntary ones (the writer preempted by the member
    /// it woke).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preempted_per_hop: Option<f64>,
    /// `us_median / switches_per_hop`: the cost of one switch, where
    /// lat_ctx's figure is the cost of one hop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub us_per_switch: Option<f64>,
    /// A 95% confidence interval of `us_median` (distribution-free, from
    /// the order statistics of the samples); absent under 6 samples and in
    /// older profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub us_median_ci95: Option<[f64; 2]>,
}
