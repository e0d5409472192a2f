//! `hwcal info`: the machine as the OS and CPUID describe it.

use crate::common::{command_line, now_unix};
use crate::output::{check_dest, emit};
use anyhow::Result;
use clap::Args;
use hwcal_model::{MachineInfo, Note, Profile};

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
    let machine = hwcal_probes::sysinfo::machine_info();
    p.notes = nominal_cross_check(&machine);
    p.machine = Some(machine);
    emit(&p, a.json.as_deref())
}

/// Where sysfs and CPUID leaf 4 disagree, say so (VMs often rewrite one).
pub fn nominal_cross_check(machine: &MachineInfo) -> Vec<Note> {
    hwcal_analysis::nominal::cross_check(machine, &hwcal_probes::sysinfo::nominal_caches_cpuid())
}
