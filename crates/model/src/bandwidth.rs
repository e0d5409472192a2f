//! The sequential bandwidth summary: read/write/copy rates, scaling with
//! threads, latency under streaming load, and memory-level parallelism.

use crate::memory::MlpPoint;
use crate::serde_nan::nan_if_null;
#[cfg(feature = "schema")]
use crate::serde_nan::NanOrNumber;
use crate::Verdict;
use serde::{Deserialize, Serialize};

/// Sequential bandwidth summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Bandwidth {
    pub read_bytes_per_sec: Option<f64>,
    pub write_bytes_per_sec: Option<f64>,
    pub copy_bytes_per_sec: Option<f64>,
    /// Threads used for the figures above.
    pub threads: u32,
    pub size_bytes: u64,
    /// Read bandwidth by thread count (1..N).
    #[serde(default)]
    pub scaling: Vec<BandwidthPoint>,
    /// Latency of a chasing thread while the others stream.
    #[serde(default)]
    pub loaded_latency: Vec<LoadedLatencyPoint>,
    /// Streaming kernel: `avx512`, `avx2` or `scalar`.
    #[serde(default)]
    pub kernel: String,
    /// Stores used by write and copy: `regular` (read-for-ownership, then
    /// write-back) or `non-temporal` (streaming, bypassing the caches).
    #[serde(default)]
    pub stores: String,
    /// Memory-level parallelism: one thread following k independent chases.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mlp: Vec<MlpPoint>,
    /// The headline figures' verdict: noisy when any of them is (their
    /// timing slices disagree, or the threads ran less than 90% of the
    /// wall time: another task had the CPU). `None`: not judged (profiles
    /// older than the verdict; `hwcal analyze` judges them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// 95% intervals of the headline rates: those of the points they are
    /// taken from (`scaling`, the op at its largest thread count). Absent
    /// in older profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_bytes_per_sec_ci95: Option<[f64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_bytes_per_sec_ci95: Option<[f64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_bytes_per_sec_ci95: Option<[f64; 2]>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BandwidthPoint {
    pub threads: u32,
    pub op: String,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub bytes_per_sec: f64,
    /// Noisy when the timing slices disagree or the threads were off the
    /// CPU for more than 10% of the time; `None`: not judged (older profiles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// A 95% interval of the rate, from the slices' median time per line
    /// (the median's order-statistic interval, scaled to the rate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_sec_ci95: Option<[f64; 2]>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LoadedLatencyPoint {
    pub streaming_threads: u32,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub latency_ns: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub stream_bytes_per_sec: f64,
    #[serde(default)]
    pub latency_cycles: Option<f64>,
    /// The chasing thread's figure judged as the `mem` section's are: noisy
    /// when its slices disagree or it ran under 90% of the time; with a
    /// 95% interval of its slices' mean. Absent in older profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ns_ci95: Option<[f64; 2]>,
}
