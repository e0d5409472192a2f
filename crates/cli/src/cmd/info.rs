//! `hwcal info`: the machine as the OS and CPUID describe it.

use crate::common::{command_line, now_unix};
use crate::output::{check_dest, emit};
use anyhow::Result;
use clap::Args;
use hwcal_model::Profile;

#[derive(Debug, Args)]
pub struct InfoArgs {
    /// Write the JSON profile to FILE ("-" for stdout).
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
}

crate::subcommand! { pub COMMAND = "info" in Tools: InfoArgs => run,
"What the OS and CPUID say about this machine (nothing measured)" }

pub fn run(a: InfoArgs) -> Result<()> {
    check_dest(a.json.as_deref())?;
    let mut p = Profile::new(command_line(), now_unix());
    let (machine, notes) = hwcal_runner::describe(hwcal_runner::machine::from_env().as_ref());
    p.notes = notes;
    p.machine = Some(machine);
    emit(&p, a.json.as_deref())
}
