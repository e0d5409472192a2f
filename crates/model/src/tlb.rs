//! The data TLB levels the TLB probe finds (one load per page, against a
//! huge-page or dense baseline), and the PS3 TLB note's comparison of the
//! same page walk on 4 KiB and on huge pages.

use crate::serde_nan::nan_if_null;
#[cfg(feature = "schema")]
use crate::serde_nan::NanOrNumber;
use crate::verdict::Verdict;
use serde::{Deserialize, Serialize};

/// One detected TLB level.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TlbLevel {
    pub level: u32,
    pub page_bytes: u64,
    /// Pages the level maps: where a quarter (first level) or half (later
    /// levels) of the accesses miss it; see `hwcal_analysis::tlb::levels`.
    pub entries: u64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub miss_latency_ns: f64,
    pub miss_latency_cycles: Option<f64>,
    pub verdict: Verdict,
    /// The page counts where the step is 10% and 75% of the way up (how
    /// wide the transition is; absent in older profiles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries_low: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries_high: Option<u64>,
    /// Which baseline the step was measured against: `huge_pages` (the
    /// same lines in 2 MiB pages the TLB sees) or `dense` (as many lines
    /// packed side by side). Absent in older profiles (huge pages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    /// What CPUID (or the per-core table) says this level holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nominal_entries: Option<u64>,
    /// 95% intervals of `entries` and `miss_latency_ns`: the step found
    /// again on copies of the curve with each plateau's scatter resampled
    /// (a residual bootstrap, see `hwcal_analysis::tlb`). They say how well
    /// this run pinned the step down; `entries_low`/`entries_high` say how
    /// wide the step is. Absent in older profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries_ci95: Option<[u64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub miss_latency_ns_ci95: Option<[f64; 2]>,
}

/// One access per page over `pages` pages in random order, timed with 4 KiB
/// pages and with the same lines in huge pages (no TLB misses): the
/// difference is what the TLB costs at that working set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TlbHugePageComparison {
    pub pages: u64,
    /// Address range the pages span with 4 KiB pages.
    pub span_bytes: u64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub small_pages_ns: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub huge_pages_ns: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub penalty_ns: f64,
    pub penalty_cycles: Option<f64>,
    /// Noisy when a TLB level of the same curve is. Absent in older
    /// profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// 95% intervals: each point's samples resampled and their fastest
    /// taken again (for the penalty, the difference of the two). Absent in
    /// older profiles and where the points hold under three samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub small_pages_ns_ci95: Option<[f64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub huge_pages_ns_ci95: Option<[f64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub penalty_ns_ci95: Option<[f64; 2]>,
}
