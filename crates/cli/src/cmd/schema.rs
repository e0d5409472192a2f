//! `hwcal schema`: the JSON Schema of the profile, generated from the model
//! types (the same text as schema/profile.schema.json in the repository).

use anyhow::Result;

pub fn run() -> Result<()> {
    crate::output::write_output("-", hwcal_model::schema::profile_schema_json().as_bytes())
}
