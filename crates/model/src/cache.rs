//! The cache levels the cache probe's latency sweep finds, with the
//! figures The Calibrator defines for each (latency, miss latency, replace
//! time, line size).

use crate::serde_nan::nan_if_null;
#[cfg(feature = "schema")]
use crate::serde_nan::NanOrNumber;
use crate::verdict::Verdict;
use serde::{Deserialize, Serialize};

/// One detected cache level (Calibrator meaning of every figure).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CacheLevel {
    pub level: u32,
    /// Effective capacity: where this level's latency plateau ends.
    pub size_bytes: u64,
    pub line_bytes: Option<u64>,
    /// Load-to-use latency of a hit in this level.
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub latency_ns: f64,
    pub latency_cycles: Option<f64>,
    /// Extra cost of missing this level (plateau(i+1) - plateau(i)).
    pub miss_latency_ns: Option<f64>,
    pub miss_latency_cycles: Option<f64>,
    /// Cost per miss when misses come back to back.
    pub replace_time_ns: Option<f64>,
    pub replace_time_cycles: Option<f64>,
    /// What sysfs/CPUID says, `null` if unknown.
    pub nominal_size_bytes: Option<u64>,
    pub nominal_line_bytes: Option<u64>,
    pub verdict: Verdict,
    /// The working sets at which 10% and 90% of the loads miss this level:
    /// how wide its edge is (page colouring on 4 KiB pages, a shared
    /// level's varying share). Absent in older profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edge_start_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edge_end_bytes: Option<u64>,
    /// How the line size was measured: `clflush` (the granule a flush
    /// evicts) or `pairs` (dependent pairs of loads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_method: Option<String>,
    /// A 95% interval of `latency_ns`: the level re-derived from the
    /// sweep with its own point-to-point scatter resampled (a residual
    /// bootstrap, see `hwcal_analysis::cache`). Absent in older profiles
    /// and where no plateau of the sweep shows any scatter to resample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ns_ci95: Option<[f64; 2]>,
    /// A 95% interval of `size_bytes`, by the same bootstrap (on base
    /// pages the page placements of the colour edge are resampled too, and
    /// a colour-fitted size's interval spans at least one colour). It
    /// says how well this run pinned the size down; a shared level's share
    /// can still move between runs. Absent where the size is a lower bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_bytes_ci95: Option<[u64; 2]>,
    /// A 95% interval of `miss_latency_ns`: the two idle-gap points'
    /// samples resampled, the difference of their minima taken again.
    /// Absent in older profiles and without the gap chase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub miss_latency_ns_ci95: Option<[f64; 2]>,
    /// A 95% interval of `replace_time_ns`, the step to the next plateau
    /// re-derived by the residual bootstrap of `latency_ns_ci95`. Absent in
    /// older profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replace_time_ns_ci95: Option<[f64; 2]>,
}

impl CacheLevel {
    /// Leave out both steps from this level (miss latency and replace time,
    /// with their cycles and intervals): where the level they step to is in
    /// doubt, so is each difference.
    pub fn withdraw_steps(&mut self) {
        self.miss_latency_ns = None;
        self.miss_latency_cycles = None;
        self.miss_latency_ns_ci95 = None;
        self.replace_time_ns = None;
        self.replace_time_cycles = None;
        self.replace_time_ns_ci95 = None;
    }
}
