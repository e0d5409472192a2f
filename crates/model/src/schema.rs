//! The JSON Schema (draft 2020-12) of the profile, generated from the types
//! of this crate by schemars: the field docs become its descriptions, the
//! serde attributes decide what is required. The repository publishes the
//! result as `schema/profile.schema.json`; `hwcal schema` prints it.

use crate::Profile;

/// The profile's schema as a JSON value.
pub fn profile_schema() -> serde_json::Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let mut schema = generator.into_root_schema_for::<Profile>();
    schema.insert("title".into(), "hwcal profile".into());
    schema.insert(
        "x-hwcal-schema-version".into(),
        serde_json::Value::from(crate::SCHEMA_VERSION),
    );
    schema.to_value()
}

/// The schema as the repository stores it: pretty-printed, newline-terminated.
pub fn profile_schema_json() -> String {
    let mut s = serde_json::to_string_pretty(&profile_schema()).unwrap_or_default();
    s.push('\n');
    s
}
