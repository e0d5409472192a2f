//! The options several commands share: `--json`, pinning and saving for
//! every measuring command, the plot outputs of `analyze`, `cache` and `tlb`.

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

/// Plot outputs shared by `cache` and `tlb`.
#[derive(Debug, Args, Clone, Default)]
pub struct PlotArgs {
    /// Write The Calibrator's .data + gnuplot .gp files for what the profile holds:
    /// PREFIX.cache-miss-latency.{data,gp} and PREFIX.cache-replace-time.{data,gp} from cache
    /// data, PREFIX.TLB-miss-latency.{data,gp} from TLB data (`cache` writes the first four,
    /// `tlb` the last two, `analyze` on a `run` profile all six). Scripts name their data by
    /// file name and work beside themselves: `gnuplot PREFIX.*.gp` from any directory.
    #[arg(long, value_name = "PREFIX")]
    pub gnuplot: Option<String>,
    /// Write SVG plots (curves with the detected levels marked) into directory DIR.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<std::path::PathBuf>,
}
