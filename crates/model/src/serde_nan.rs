//! NaN in memory, `null` in JSON: the deserializers every section uses to
//! read an undefined figure (`null`) back as NaN, and, with the `schema`
//! feature, the JSON Schema of such a field.

use serde::Deserialize;

/// Figures that can be undefined (no sample, a clock not measured) are NaN
/// in memory. JSON has no NaN: serde_json writes it as `null`, and these
/// fields read `null` back as NaN, so every profile hwcal writes can be read
/// again (by `hwcal analyze`, `hwcal db import`, the database).
pub(crate) fn nan_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// A list of figures whose NaN members were written as `null`.
pub(crate) fn nan_vec<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
    Ok(Vec::<Option<f64>>::deserialize(d)?
        .into_iter()
        .map(|v| v.unwrap_or(f64::NAN))
        .collect())
}

/// [`nan_vec`] for a list of lists.
pub(crate) fn nan_vec_vec<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Vec<f64>>, D::Error> {
    Ok(Vec::<Vec<Option<f64>>>::deserialize(d)?
        .into_iter()
        .map(|r| r.into_iter().map(|v| v.unwrap_or(f64::NAN)).collect())
        .collect())
}

/// The schema of a field read with [`nan_if_null`]: a number, or `null`
/// where the figure is undefined (NaN in memory). Unlike `Option<f64>` the
/// key itself stays required, as serde requires it.
#[cfg(feature = "schema")]
pub(crate) struct NanOrNumber;

#[cfg(feature = "schema")]
impl schemars::JsonSchema for NanOrNumber {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NanOrNumber".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": ["number", "null"],
            "format": "double",
        })
    }
}
