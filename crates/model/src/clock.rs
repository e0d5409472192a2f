//! `hwcal clock`: the core clock by a dependent add chain and by the mhz
//! paper's GCD of nine expressions, the TSC rate, and the raw batches the
//! analysis re-derives them from.

#[cfg(feature = "schema")]
use crate::serde_nan::NanOrNumber;
use crate::serde_nan::{nan_if_null, nan_vec, nan_vec_vec};
use crate::verdict::Verdict;
use serde::{Deserialize, Serialize};

/// `hwcal clock`: the core clock, by two methods, and the TSC.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ClockResult {
    /// Best estimate of the core clock (median of the chain over all batches).
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub core_mhz: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub core_mhz_min: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub core_mhz_max: f64,
    /// Dependent chain of 1-cycle adds (median over the batches the GCD
    /// method accepted, so it compares with `gcd_mhz`).
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub chain_mhz: f64,
    /// The mhz paper's GCD of nine expressions (median over accepted batches).
    pub gcd_mhz: Option<f64>,
    /// Relative difference between the methods, measured round by round (median, %).
    pub agreement_pct: Option<f64>,
    pub tsc_mhz: Option<f64>,
    pub verdict: Verdict,
    /// Rounds of the GCD method accepted by the min/next-min test, out of attempted.
    pub gcd_rounds_accepted: u32,
    pub gcd_rounds_attempted: u32,
    /// Cycles of each of the nine expressions, as the GCD fit assigns them.
    #[serde(default)]
    pub expression_cycles: Vec<ExpressionCycles>,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub duration_ms: f64,
    /// A 95% interval of `core_mhz` (distribution-free, from the order
    /// statistics of the batches' chain clocks). Absent under 6 batches
    /// and in older profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_mhz_ci95: Option<[f64; 2]>,
}

/// Raw data of `hwcal clock`: batches of interleaved rounds. In each round
/// every expression and the add chain (at N and 2N iterations) was timed once.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ClockRaw {
    /// The expressions' text, in column order.
    pub expressions: Vec<String>,
    /// Dependent adds in the chain's N block.
    pub chain_adds: u64,
    pub batches: Vec<ClockBatch>,
    pub tsc_mhz: Option<f64>,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub duration_ms: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ClockBatch {
    /// `expr_ns[e][r]`: ns per expression instance of expression `e` in round `r`.
    #[serde(deserialize_with = "nan_vec_vec")]
    pub expr_ns: Vec<Vec<f64>>,
    /// ns for the chain's N and 2N blocks, per round.
    #[serde(deserialize_with = "nan_vec")]
    pub chain_n_ns: Vec<f64>,
    #[serde(deserialize_with = "nan_vec")]
    pub chain_2n_ns: Vec<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ExpressionCycles {
    pub expression: String,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub ns: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub cycles: f64,
}
