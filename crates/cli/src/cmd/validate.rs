//! `hwcal validate`: accuracy shown by measurement, not asserted in tests.
//!
//! `validate clock` runs the clock probe several times in a row between
//! long independent references (`hwcal_runner::validate`); `validate cache`
//! calibrates the TLB and the caches `--runs` times; `validate profiles`
//! tables profiles on disk.

use crate::cli::CommonArgs;
use crate::common::{header, pin, Progress};
use anyhow::{Context, Result};
use clap::Args;

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// What to validate.
    #[arg(value_enum)]
    pub what: ValidateWhat,
    /// Consecutive runs.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub runs: u32,
    /// Length of each long reference measurement, ms.
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u64).range(10..=60_000))]
    pub reference_ms: u64,
    /// Profiles to summarise (`validate profiles` only).
    #[arg(value_name = "FILE")]
    pub files: Vec<std::path::PathBuf>,
    /// `validate cache` only: also write each run's JSON profile to
    /// DIR/run-NN.json (DIR is created if missing; existing run files are
    /// never overwritten), to look into an odd run or summarise the runs
    /// again with `validate profiles DIR/run-*.json`.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<std::path::PathBuf>,
    /// Pin the measuring thread to this CPU (default: the highest allowed CPU).
    #[arg(long, value_name = "N", conflicts_with = "no_pin")]
    pub cpu: Option<usize>,
    /// Do not pin the measuring thread.
    #[arg(long)]
    pub no_pin: bool,
    /// No progress messages on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}
impl ValidateArgs {
    /// The pinning options as the measuring commands take them (validate
    /// prints a table: it writes no profile and stores nothing, so it
    /// offers neither --json nor --save).
    pub fn common(&self) -> CommonArgs {
        CommonArgs {
            cpu: self.cpu,
            no_pin: self.no_pin,
            quiet: self.quiet,
            ..CommonArgs::default()
        }
    }
}
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ValidateWhat {
    /// `hwcal clock` against a long dependent-add measurement before and after each run.
    Clock,
    /// The cache and TLB probes N times: each figure's min/median/max beside a run's
    /// own 95% interval ("moved" where the runs differ by more than twice it), and how
    /// often the runs agree on the levels.
    Cache,
    /// The same summary over profiles already written (`hwcal run --json FILE`, ...).
    Profiles,
}

crate::subcommand! { pub COMMAND = "validate" in Measure: ValidateArgs => run,
"Check hwcal's figures against long independent reference measurements" }

pub fn run(a: ValidateArgs) -> Result<()> {
    if !a.files.is_empty() && !matches!(a.what, ValidateWhat::Profiles) {
        crate::usage!("profile files are read only by `validate profiles`");
    }
    if a.keep.is_some() && !matches!(a.what, ValidateWhat::Cache) {
        crate::usage!("--keep writes the runs of `validate cache` only");
    }
    match a.what {
        ValidateWhat::Clock => clock(&a),
        ValidateWhat::Cache => cache(&a),
        ValidateWhat::Profiles => profiles(&a),
    }
}

/// `validate cache`: the TLB and cache probes `--runs` times in a row, as
/// `hwcal run` runs them, then the repeatability table.
fn cache(a: &ValidateArgs) -> Result<()> {
    let progress = Progress::new(a.quiet);
    let cpu = pin(&a.common())?;
    let probes = hwcal_runner::select(hwcal_runner::probes(), &["tlb".into(), "cache".into()], &[])?;
    let config = hwcal_runner::RunConfig {
        pinned_cpu: cpu,
        io_dir: None,
        probes: probes.iter().map(|p| p.id.to_string()).collect(),
    };
    let quiet = Progress::new(true);
    let keep = a
        .keep
        .as_deref()
        .map(|d| hwcal_report::destination::keep_paths(d, a.runs));
    let keep = keep
        .transpose()
        .map_err(|e| anyhow::Error::new(crate::common::UsageError(e)))?;
    crate::outln!(
        "validate cache: {} runs of the TLB and cache probes, pinned to {}",
        a.runs,
        cpu.map_or("no CPU".into(), |c| format!("CPU {c}"))
    );
    let machine = hwcal_runner::machine::from_env();
    let (mut profiles, mut secs) = (Vec::new(), Vec::new());
    for i in 1..=a.runs {
        let t = std::time::Instant::now();
        // As `hwcal run` runs them: the one calibration path.
        let p = hwcal_runner::calibrate(machine.as_ref(), &config, &probes, header(cpu), &quiet)?;
        secs.push(t.elapsed().as_secs_f64());
        crate::outln!(
            "{}",
            hwcal_report::repeat::run_line(i, &p, t.elapsed().as_secs_f64())
        );
        progress.say(&format!("validate: run {i} of {}", a.runs));
        if let Some(paths) = &keep {
            let path = &paths[i as usize - 1];
            let bytes = hwcal_report::Exporter::export(&hwcal_report::JsonExporter, &p)?;
            write_new(path, &bytes)?;
        }
        profiles.push(p);
    }
    crate::outln!("{}", hwcal_report::repeat::table(&profiles, &secs));
    Ok(())
}

/// Write `bytes` to a file that must not exist yet.
fn write_new(path: &std::path::Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .with_context(|| format!("creating {}", path.display()))?;
    f.write_all(bytes)
        .with_context(|| format!("writing {}", path.display()))
}

/// `validate profiles FILE...`: the repeatability table of profiles on disk.
fn profiles(a: &ValidateArgs) -> Result<()> {
    if a.files.len() < 2 {
        crate::usage!("validate profiles needs at least two profile files");
    }
    let mut ps = Vec::new();
    for f in &a.files {
        crate::output::protect_input(f);
        let bad = |e: String| anyhow::Error::new(crate::common::UsageError(format!("{}: {e}", f.display())));
        let bytes = hwcal_report::read_profile_file(f).map_err(bad)?;
        let mut p = hwcal_report::parse_profile(&bytes).map_err(bad)?;
        // Figures as today's analysis reads the raw curves.
        hwcal_runner::finish(&mut p, &hwcal_runner::probes());
        ps.push(p);
    }
    for (i, p) in ps.iter().enumerate() {
        crate::outln!("{}", hwcal_report::repeat::run_line(i as u32 + 1, p, f64::NAN));
    }
    crate::outln!("{}", hwcal_report::repeat::table(&ps, &[]));
    Ok(())
}

fn clock(a: &ValidateArgs) -> Result<()> {
    let progress = Progress::new(a.quiet);
    let cpu = pin(&a.common())?;
    hwcal_runner::validate::warm_up();
    crate::outln!(
        "validate clock: {} runs, reference {} ms of 100 µs add-chain blocks before and after each, pinned to {}",
        a.runs,
        a.reference_ms,
        cpu.map_or("no CPU".into(), |c| format!("CPU {c}"))
    );
    crate::outln!(
        "{:>3}  {:>9} {:>9} {:>9} {:>7}  {:>9} {:>9} {:>9}  {:>6} {:>6}  verdict",
        "run",
        "core",
        "chain",
        "gcd",
        "agree%",
        "ref p10",
        "ref med",
        "ref max",
        "agree",
        "in-ref"
    );
    let (mut n_agree, mut n_inref, mut n_ok) = (0, 0, 0);
    for i in 1..=a.runs {
        let c = hwcal_runner::validate::clock_run(a.reference_ms);
        let (r, ms) = (&c.result, c.ms);
        n_agree += c.agree as u32;
        n_inref += c.in_reference as u32;
        n_ok += (r.verdict == hwcal_model::Verdict::Ok) as u32;
        crate::outln!(
            "{:>3}  {:>9.1} {:>9.1} {:>9} {:>7} {:>9.1} {:>9.1} {:>9.1}  {:>6} {:>6}  {} ({ms:.0} ms)",
            i,
            r.core_mhz,
            r.chain_mhz,
            r.gcd_mhz.map_or("n/a".into(), |g| format!("{g:.1}")),
            r.agreement_pct.map_or("n/a".into(), |p| format!("{p:.2}")),
            c.reference_p10,
            c.reference_median,
            c.reference_max,
            if c.agree { "yes" } else { "NO" },
            if c.in_reference { "yes" } else { "NO" },
            r.verdict.as_str()
        );
        progress.say(&format!("validate: run {i} of {}", a.runs));
    }
    crate::outln!(
        "summary: methods agree within 1% in {n_agree}/{n} runs; core MHz inside the reference range in {n_inref}/{n}; verdict ok in {n_ok}/{n}",
        n = a.runs
    );
    Ok(())
}
