//! `hwcal run`: the full calibration (`hwcal_runner::calibrate`: the machine described once, every
//! selected probe of the registry planned, run and analysed), shown as a bar or a line per phase,
//! then one summary, one profile, stored once.

use crate::cli::CommonArgs;
use crate::common::{command_line, open_db, pin, store, Progress};
use crate::output::{Dest, Outputs};
use anyhow::Result;
use clap::Args;
use hwcal_report::html::HtmlExporter;
use hwcal_runner::{calibrate_batch, Eta, Header, Observer, Phase, Repeat, RunConfig};

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
    /// Calibrate N times, stored as one batch (compare batches with `db compare batch:ID ...`);
    /// prints each figure's median and spread over the runs instead of the digest.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=100), conflicts_with_all = ["json", "html"])]
    pub repeat: u32,
    /// With --repeat: calibrations run first and thrown away.
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=10))]
    pub warmup: u32,
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
    let digest =
        hwcal_report::DigestExporter::stdout(a.detail, hint.into(), hwcal_report::stdout_digest_width());
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
    let bar = (a.repeat == 1 && a.warmup == 0)
        .then(|| phase_bar(progress, probes.len() + usize::from(a.io.is_some())))
        .flatten();
    let cpu = pin(&a.common)?;
    let config = RunConfig {
        pinned_cpu: cpu,
        io_dir: a.io.clone(),
        probes: probes.iter().map(|p| p.id.to_string()).collect(),
    };
    let start = std::time::Instant::now();
    // The real machine, or the synthetic one of the end-to-end tests.
    let target = hwcal_runner::machine::from_env();
    let observer = RunObserver { progress, bar };
    let repeat = Repeat {
        runs: a.repeat,
        warmup: a.warmup,
    };
    let (mut ids, header) = (Vec::new(), || Header::now(command_line(), cpu));
    let mut announce = |k, n, warm| match (warm, n) {
        (true, _) => progress.say(&format!("run: warm-up {k} of {n} (not kept)")),
        (false, 1) => {}
        (false, _) => progress.say(&format!("run: {k} of {n}")),
    };
    // Each run is stored as soon as it is done, before any output (a stored run can always be
    // re-rendered); one the database refuses is kept (`common::store`), the outputs written, then an error.
    let mut unstored: Vec<String> = Vec::new();
    let mut keep = |p: &hwcal_model::Profile| -> hwcal_runner::Result<()> {
        // The bar goes first: its next redraw would erase the "stored as run N" line.
        let _ = observer.bar.as_ref().inspect(|b| b.bar.finish_and_clear());
        if let Some(r) = db.as_mut().map(|db| store(db, p)) {
            r.map(|id| ids.push(id))
                .unwrap_or_else(|e| unstored.push(format!("{e:#}")));
        }
        Ok(())
    };
    let runs = calibrate_batch(
        target.as_ref(),
        &config,
        &probes,
        repeat,
        &header,
        &observer,
        &mut announce,
        &mut keep,
    )?;
    if let Some(b) = &observer.bar {
        b.bar.finish_and_clear();
    }
    progress.say(&format!("run: done in {:.1} s", start.elapsed().as_secs_f64()));
    match runs.as_slice() {
        [one] => outputs.write(&one.profile),
        _ => {
            let (ps, secs): (Vec<_>, Vec<f64>) = runs.into_iter().map(|r| (r.profile, r.secs)).unzip();
            crate::outln!("{}", hwcal_report::repeat::table(&ps, &secs).trim_end());
            let id = ps[0].batch.as_ref().map_or("", |b| b.id.as_str());
            match (ids.first(), ids.last()) {
                (Some(f), Some(l)) => crate::outln!("batch {id}: stored as runs {f}-{l}; compare it with another: hwcal db compare batch:{id} batch:OTHER"),
                _ => crate::outln!("batch {id}: not stored (--no-save)"),
            }
            Ok(())
        }
    }?;
    anyhow::ensure!(unstored.is_empty(), "{}", unstored.join("; "));
    Ok(())
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
