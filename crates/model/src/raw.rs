//! Raw measured curves (x against y, every repetition kept): the data the
//! analysis is a pure function of, so a profile can be re-analysed offline.
//! Their ids are listed in `curve`.

#[cfg(feature = "schema")]
use crate::serde_nan::NanOrNumber;
use crate::serde_nan::{nan_if_null, nan_vec};
use serde::{Deserialize, Serialize};

/// A raw measured curve: x values (e.g. working-set bytes) and y values
/// (e.g. ns per load), kept so the analysis can be re-run offline.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RawCurve {
    /// Stable identifier, e.g. `cache.latency`, `tlb.4k`, `tlb.4k.baseline`.
    pub id: String,
    pub x_label: String,
    pub y_label: String,
    pub points: Vec<RawPoint>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RawPoint {
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub x: f64,
    /// The figure of record for this point (minimum or median, per probe).
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub y: f64,
    /// Every repetition, in the same unit as `y`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(deserialize_with = "nan_vec")]
    pub samples: Vec<f64>,
    /// Core MHz measured alongside each sample, when recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(deserialize_with = "nan_vec")]
    pub mhz: Vec<f64>,
}
