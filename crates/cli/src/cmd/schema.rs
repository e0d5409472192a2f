//! `hwcal schema`: the JSON Schema of the profile, generated from the model
//! types (the same text as schema/profile.schema.json in the repository).

use crate::cli::{CommandEntry, Group};
use anyhow::Result;

pub fn run() -> Result<()> {
    crate::output::write_output("-", hwcal_model::schema::profile_schema_json().as_bytes())
}

/// `hwcal schema` in the command table.
pub const COMMAND: CommandEntry = CommandEntry {
    name: "schema",
    group: Group::Tools,
    define: || {
        clap::Command::new("schema")
            .about("The JSON Schema (draft 2020-12) of the profiles --json writes, on stdout")
            .long_about(None)
    },
    run: |_, _| run(),
};
