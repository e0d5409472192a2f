//! The options every measuring command shares (`--json`, pinning, saving).

use clap::Args;

/// Options every measuring command shares.
#[derive(Debug, Args, Clone, Default)]
pub struct CommonArgs {
    /// Write the JSON profile to FILE ("-" for stdout).
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Pin the measuring thread to this CPU (default: the highest allowed CPU).
    #[arg(long, value_name = "N", conflicts_with = "no_pin")]
    pub cpu: Option<usize>,
    /// Do not pin the measuring thread.
    #[arg(long)]
    pub no_pin: bool,
    /// No progress messages on stderr.
    #[arg(short, long)]
    pub quiet: bool,
    /// Store the profile in the results database (`hwcal run` always does, unless --no-save).
    #[arg(long)]
    pub save: bool,
}
