//! `hwcal io`, after micbench-io and fio: one I/O benchmark's throughput,
//! latency percentiles and per-thread figures. Keys keep fio's names where
//! it had them (`rw`, `iodepth`, `iops`, `rwmix_read`).

#[cfg(feature = "schema")]
use crate::serde_nan::NanOrNumber;
use crate::serde_nan::{nan_if_null, nan_vec};
use crate::verdict::Verdict;
use serde::{Deserialize, Serialize};

/// `hwcal io` (micbench-io / fio).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct IoResult {
    /// Access pattern, fio's `rw=` values (`read`, `randread`, `randrw`, ...).
    pub rw: String,
    /// Percentage of reads in a mixed pattern (fio's `rwmixread`, kept
    /// under fio's name; a percentage, 0..100); `null` for pure patterns.
    pub rwmix_read: Option<u32>,
    pub bs_bytes: u64,
    pub size_bytes: u64,
    /// fio's `ioengine=` value: `sync`, `psync` or `io_uring`.
    pub engine: String,
    /// I/Os in flight per thread (fio's `iodepth`, a count).
    pub iodepth: u32,
    pub threads: u32,
    pub direct: bool,
    pub path: String,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub runtime_s: f64,
    /// I/Os per second (fio's name; the unit is in the name).
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub iops: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub bytes_per_sec: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub lat_min_us: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub lat_p50_us: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub lat_p99_us: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub lat_p999_us: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub lat_max_us: f64,
    #[serde(default)]
    pub per_thread: Vec<IoThread>,
    /// Completed I/Os, all threads (reads + writes).
    #[serde(default)]
    pub ios: u64,
    #[serde(default)]
    pub read_ios: u64,
    #[serde(default)]
    pub write_ios: u64,
    #[serde(default)]
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub lat_mean_us: f64,
    /// `-t` if time-bound; absent when size-bound (one pass over the file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_limit_s: Option<f64>,
    /// Whether hwcal created (and removed) the test file, or used an
    /// existing file or device.
    #[serde(default)]
    pub created_file: bool,
    /// IOPS of each 1-second interval of the run (all threads), to show how
    /// steady the device was; empty for runs shorter than a second.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(deserialize_with = "nan_vec")]
    pub iops_intervals: Vec<f64>,
    /// Noisy when the rate moved by more than 5% (MAD) from interval to
    /// interval, there were under five intervals to judge it by, or under
    /// 100 I/Os for the percentiles (`hwcal_analysis::io::verdict`).
    /// Absent in older profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// 95% intervals: of the rates, ±1.96 standard errors of the
    /// per-interval rates' mean; of the latency percentiles, the order
    /// statistics that hold the percentile with 95% probability
    /// (distribution-free). Absent in older profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iops_ci95: Option<[f64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_sec_ci95: Option<[f64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat_p50_us_ci95: Option<[f64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat_p99_us_ci95: Option<[f64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat_p999_us_ci95: Option<[f64; 2]>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct IoThread {
    pub tid: u32,
    pub ios: u64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub iops: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub bytes_per_sec: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub lat_p50_us: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub lat_p99_us: f64,
    #[serde(default)]
    pub bytes: u64,
    #[serde(default)]
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub lat_min_us: f64,
    #[serde(default)]
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub lat_p999_us: f64,
    #[serde(default)]
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub lat_max_us: f64,
}
