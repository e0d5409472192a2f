//! `hwcal run`: the full calibration (`hwcal_runner::calibrate`: the machine
//! described once, every selected probe of the registry planned, run and
//! analysed), shown as a bar or a line per phase, then one summary, one
//! profile, stored once.

use crate::cli::CommonArgs;
use crate::common::{command_line, open_db, pin, store, Progress};
use crate::output::{Dest, Outputs};
use anyhow::Result;
use clap::Args;
use hwcal_report::html::HtmlExporter;
use hwcal_runner::{Eta, Header, Observer, Phase, RunConfig};

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Run only these probes (comma-separated; see --list).
    #[arg(long, value_delimiter = ',', value_name = "PROBES", value_parser = probe_values())]
    pub only: Vec<String>,
    /// Skip these probes (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "PROBES", value_parser = probe_values())]
    pub skip: Vec<String>,
    /// List the registered probes and exit.
    #[arg(long)]
    pub list: bool,
    /// Do not store this run in the results database (`--save`, the default, is accepted).
    #[arg(long, conflicts_with = "save")]
    pub no_save: bool,
    /// Also write the HTML report of this run to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<String>,
    /// After the digest, the detail: how each figure was reached, every note.
    #[arg(short = 'v', long)]
    pub detail: bool,
    /// Also measure I/O in directory PATH: 4 KiB random reads, O_DIRECT, io_uring at queue
    /// depth 32 for 2 s on a 256 MiB test file that is removed afterwards.
    #[arg(long, value_name = "PATH")]
    pub io: Option<std::path::PathBuf>,
}

/// The probe ids as `--only`/`--skip` values: checked by clap, completed by the shells.
fn probe_values() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(hwcal_runner::probe_ids())
}

crate::subcommand! { pub COMMAND = "run" in Measure: RunArgs => run,
"The full calibration: machine info and every registered probe" }

pub fn run(a: RunArgs) -> Result<()> {
    let probes = hwcal_runner::select(hwcal_runner::probes(), &a.only, &a.skip)?;
    // Opt-in probes (io) run only when their option (--io) is given.
    if !probes.iter().any(|p| !p.opt_in) && a.io.is_none() && !a.list {
        crate::usage!("every probe is skipped: nothing to measure (see --list)");
    }
    if a.list {
        for p in hwcal_runner::probes() {
            crate::outln!("{:<8} {}", p.id, p.description);
        }
        return Ok(());
    }
    if let Some(dir) = &a.io {
        if !dir.is_dir() {
            crate::usage!("--io {}: not a directory", dir.display());
        }
    }
    let hint = match a.no_save {
        true => "detail: hwcal run --detail",
        false => "detail: hwcal db show latest --detail (this run), or hwcal run --detail",
    };
    let digest = hwcal_report::DigestExporter::stdout(a.detail, hint.into());
    let mut outputs = Outputs::profile(a.common.json.as_deref(), digest);
    if let Some(path) = &a.html {
        let path = path.clone();
        outputs.add(HtmlExporter::default(), Dest::File { flag: "--html", path });
    }
    crate::output::check_outputs(&[
        ("--json", a.common.json.as_deref()),
        ("--html", a.html.as_deref()),
    ])?;
    outputs.check()?;
    // Opened once, before measuring: a bad --db fails at once, not after
    // the measurement.
    let mut db = if a.no_save { None } else { Some(open_db()?) };
    let progress = Progress::new(a.common.quiet);
    // One bar across the phases. Created before pinning: its ticker thread
    // inherits the creator's CPU affinity and must not wake up on the
    // measuring CPU. While it is shown, the probes' own messages are off.
    let bar = phase_bar(progress, probes.len() + usize::from(a.io.is_some()));
    let cpu = pin(&a.common)?;
    let config = RunConfig {
        pinned_cpu: cpu,
        io_dir: a.io.clone(),
        probes: probes.iter().map(|p| p.id.to_string()).collect(),
    };
    let header = Header::now(command_line(), cpu);
    let start = std::time::Instant::now();
    // The real machine, or the synthetic one of the end-to-end tests.
    let target = hwcal_runner::machine::from_env();
    let observer = RunObserver { progress, bar };
    let p = hwcal_runner::calibrate(target.as_ref(), &config, &probes, header, &observer)?;
    if let Some(b) = &observer.bar {
        b.bar.finish_and_clear();
    }
    progress.say(&format!("run: done in {:.1} s", start.elapsed().as_secs_f64()));
    // Store before writing any output: a stored run can always be exported
    // or re-rendered (`hwcal db export`, `hwcal report ID`), a measurement
    // lost to an unwritable output file cannot.
    if let Some(db) = &mut db {
        store(db, &p)?;
    }
    outputs.write(&p)
}

/// `hwcal run`'s view of the calibration: a line per phase, or one bar
/// across them with the time left.
struct RunObserver {
    progress: Progress,
    bar: Option<PhaseBar>,
}

impl hwcal_runner::Progress for RunObserver {
    fn say(&self, msg: &str) {
        // The probes' own lines only where no bar is shown.
        if self.bar.is_none() {
            self.progress.say(msg);
        }
    }
}

impl Observer for RunObserver {
    fn phase(&self, phase: Phase<'_>) {
        match (phase, &self.bar) {
            (Phase::Planned { count }, Some(b)) => b.bar.set_length(count as u64),
            (Phase::Planned { .. }, None) => {}
            (Phase::Start { probe, eta }, bar) => {
                let what = format!("{}: {}", probe.id, probe.description);
                match bar {
                    Some(b) => {
                        if let Ok(mut e) = b.eta.lock() {
                            *e = eta;
                        }
                        b.bar.set_message(what);
                    }
                    None => self.progress.say(&what),
                }
            }
            (Phase::Done { probe, secs }, bar) => {
                let done = format!("{}: done in {secs:.1} s", probe.id);
                match bar {
                    Some(b) => {
                        b.bar.println(format!("hwcal: {done}"));
                        b.bar.inc(1);
                    }
                    None => self.progress.say(&done),
                }
            }
        }
    }
}

/// The per-phase progress bar on stderr and the runner's estimate of the
/// time left.
struct PhaseBar {
    bar: indicatif::ProgressBar,
    eta: std::sync::Arc<std::sync::Mutex<Eta>>,
}

/// The per-phase progress bar on stderr, or `None` when stderr is not a
/// terminal or `--quiet` was given.
fn phase_bar(progress: Progress, phases: usize) -> Option<PhaseBar> {
    if !progress.enabled() {
        return None;
    }
    let eta = std::sync::Arc::new(std::sync::Mutex::new(Eta::default()));
    let shown = eta.clone();
    let left = move |_: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
        let e = shown.lock().map(|e| *e).unwrap_or_default();
        if let Some(s) = e.left_s(std::time::Instant::now()) {
            let _ = w.write_fmt(format_args!(", ~{:.0} s left", s.ceil()));
        }
    };
    let b = indicatif::ProgressBar::new(phases as u64);
    let style = indicatif::ProgressStyle::with_template("{spinner} [{pos}/{len}] {msg} ({elapsed}{left})")
        .map(|s| s.with_key("left", left))
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner());
    b.set_style(style);
    b.enable_steady_tick(std::time::Duration::from_millis(120));
    Some(PhaseBar { bar: b, eta })
}
