//! What measured figures carry besides their value: the noise verdict of
//! the repetitions and the order statistics (min, median, max, MAD) of the
//! samples.

use crate::serde_nan::nan_if_null;
#[cfg(feature = "schema")]
use crate::serde_nan::NanOrNumber;
use serde::{Deserialize, Serialize};

/// Noise verdict attached to a measured figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Repetitions agreed within the tolerance.
    #[default]
    Ok,
    /// Repetitions did not agree even after retries: the figure is unreliable.
    Noisy,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Noisy => "noisy",
        }
    }
    /// `Noisy` if either is noisy.
    pub fn and(self, other: Verdict) -> Verdict {
        if self == Verdict::Noisy || other == Verdict::Noisy {
            Verdict::Noisy
        } else {
            Verdict::Ok
        }
    }
}

/// Order statistics of a set of samples, in the samples' own unit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Spread {
    /// Number of samples.
    pub n: usize,
    /// Smallest sample, in the unit the field holding this spread names.
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub min: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub median: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub max: f64,
    /// Median absolute deviation from the median (unscaled).
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub mad: f64,
}

impl Spread {
    /// MAD relative to the median, in percent (0 when the median is 0).
    pub fn rel_mad_pct(&self) -> f64 {
        if self.median.abs() > 0.0 {
            100.0 * self.mad / self.median.abs()
        } else {
            0.0
        }
    }
}
