//! The latency of main memory past the last cache level (from the cache
//! sweep's memory plateau or the `mem` chase), every measurement of it a
//! run made, and memory-level parallelism (k independent chases).

use crate::serde_nan::nan_if_null;
#[cfg(feature = "schema")]
use crate::serde_nan::NanOrNumber;
use crate::verdict::Verdict;
use serde::{Deserialize, Serialize};

/// Latency of main memory (the plateau past the last cache).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MemoryLatency {
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub latency_ns: f64,
    pub latency_cycles: Option<f64>,
    /// Whether the buffer was backed by huge pages (verified).
    pub huge_pages: bool,
    /// Smallest working set whose latency is within 10% of memory's: what
    /// all caches together hold for this CPU, i.e. the effective reach of
    /// the last level (compare with its nominal size; on a VM sharing a
    /// large L3 it is often a small fraction). `null` if not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_reach_bytes: Option<u64>,
    /// Memory-level parallelism: speed-up of k independent chases over one.
    #[serde(default)]
    pub mlp: Vec<MlpPoint>,
    pub verdict: Verdict,
    /// On 4 KiB pages: the part of `latency_ns` that is TLB misses (from
    /// the measured TLB levels at the same page count), so that
    /// `latency_ns - tlb_share_ns` is the memory's own latency. Absent with
    /// huge pages the TLB sees, and in older profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tlb_share_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tlb_share_cycles: Option<f64>,
    /// A 95% interval of `latency_ns` (the residual bootstrap of the
    /// cache levels', or the `mem` chase's slices). Absent in older
    /// profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ns_ci95: Option<[f64; 2]>,
    /// Which measurement the figure is (the consistency stage picks one
    /// per run): `cache sweep` (the memory plateau of the cache probe's
    /// sweep) or `mem chase` (the `mem` section's dedicated chase). Absent
    /// in older profiles (the cache sweep's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The working set the figure was measured over, bytes (for the cache
    /// sweep, the largest size on its memory plateau). Absent in older
    /// profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
    /// Memory latency without page walks, measured: the same buffer chased
    /// window by window, each window's pages few enough for the
    /// second-level TLB to hold them (`hwcal run`'s `mem` section). Where
    /// present, `tlb_share_ns` is `latency_ns` minus this (measured, not
    /// modelled). Absent in older profiles and where the chase did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_no_walks_ns: Option<f64>,
    /// A 95% interval of `latency_no_walks_ns` (its chase's slices).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_no_walks_ns_ci95: Option<[f64; 2]>,
    /// The verdict on `latency_no_walks_ns` (DRAM's latency, the figure
    /// the digest leads with): `ok` where its fastest slices repeat and it
    /// stands within what the run's other measurements allow (no slower
    /// than the chase over the same lines with the walks in, slower than
    /// every cache level, memory's curve converged). Absent where the
    /// figure is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_no_walks_verdict: Option<Verdict>,
    /// Every measurement of memory latency the run made, the reported one
    /// among them (the consistency stage compares them). Empty in older
    /// profiles.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub measures: Vec<MemoryMeasure>,
}

impl MemoryLatency {
    /// `latency_no_walks_ns` in core cycles, at the clock the headline's
    /// cycles were counted at (the two chases ran over the same buffer
    /// back to back).
    pub fn no_walks_cycles(&self) -> Option<f64> {
        let l = self.latency_no_walks_ns?;
        self.latency_cycles
            .map(|c| l * c / self.latency_ns)
            .filter(|c| c.is_finite() && *c > 0.0)
    }
}

/// One measurement of memory latency (see [`MemoryLatency::measures`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MemoryMeasure {
    /// `cache sweep` or `mem chase` (as [`MemoryLatency::source`]).
    pub source: String,
    /// The working set, bytes (the largest on the sweep's plateau).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub latency_ns: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ns_ci95: Option<[f64; 2]>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MlpPoint {
    pub chains: u32,
    /// Average time per load across all chains.
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub ns_per_load: f64,
    /// Speed-up over one chain.
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub speedup: f64,
    /// 95% intervals of `ns_per_load` and `speedup` (from the chases'
    /// samples or timing slices). Absent in older profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ns_per_load_ci95: Option<[f64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speedup_ci95: Option<[f64; 2]>,
    /// `noisy` where a speed-up of the table is more than its chains can
    /// give (beyond its interval): every speed-up divides the same single
    /// chase, so one that is physically impossible puts all of them in
    /// doubt. Absent otherwise: the table then stands with the verdict of
    /// the memory figure it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
}
