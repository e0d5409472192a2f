//! `hwcal run`: the full calibration. The machine is described once, every
//! selected probe of the runner's registry is planned and run in turn, then
//! one summary, one profile, stored once.

use crate::cli::RunArgs;
use crate::common::{command_line, now_unix, open_db, pin, store, Progress};
use crate::output::{Dest, Outputs};
use anyhow::{Context, Result};
use hwcal_model::Profile;
use hwcal_report::html::HtmlExporter;
use hwcal_runner::{absorb, Machine, Plan, ProbeEntry, RunConfig};

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
    let mut outputs = Outputs::profile(a.common.json.as_deref());
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
    // The real machine, or the synthetic one of the end-to-end tests.
    let target = hwcal_runner::machine::from_env();
    let machine = target.info();
    // One bar across the phases. Created before pinning: its ticker thread
    // inherits the creator's CPU affinity and must not wake up on the
    // measuring CPU. While it is shown, the probes' own messages are off.
    let bar = phase_bar(progress, probes.len() + usize::from(a.io.is_some()));
    let probe_progress = if bar.is_some() {
        Progress::new(true)
    } else {
        progress
    };
    let cpu = pin(&a.common)?;
    let config = RunConfig {
        pinned_cpu: cpu,
        io_dir: a.io.clone(),
        probes: probes.iter().map(|p| p.id.to_string()).collect(),
    };
    let plans = hwcal_runner::plan(&probes, &config, &machine);
    if let Some(b) = &bar {
        b.bar.set_length(plans.len() as u64);
    }
    let start = std::time::Instant::now();
    let mut p = Profile::new(command_line(), now_unix());
    p.notes.extend(hwcal_analysis::nominal::cross_check(
        &machine,
        &target.cpuid_caches(),
    ));
    p.machine = Some(machine);
    p.harness = Some(target.harness(cpu));
    run_plans(target.as_ref(), &plans, &mut p, progress, probe_progress, bar)?;
    // Once more over the whole profile, as `hwcal analyze` would: a probe's
    // analysis may use another's curves (the caches on 4 KiB pages remove
    // the TLB's share with the TLB's curves).
    hwcal_runner::reanalyze(&mut p, &probes);
    progress.say(&format!("run: done in {:.1} s", start.elapsed().as_secs_f64()));
    // Store before writing any output: a stored run can always be exported
    // or re-rendered (`hwcal db export`, `hwcal report ID`), a measurement
    // lost to an unwritable output file cannot.
    hwcal_model::plausible::scrub(&mut p);
    if let Some(db) = &mut db {
        store(db, &p)?;
    }
    outputs.write(&p)
}

/// Run every plan on `target` in turn, merging each probe's fragment into
/// `p`; one line (or bar step) per probe.
fn run_plans(
    target: &dyn Machine,
    plans: &[(ProbeEntry, Box<dyn Plan>)],
    p: &mut Profile,
    progress: Progress,
    probe_progress: Progress,
    bar: Option<PhaseBar>,
) -> Result<()> {
    let typical: Vec<f64> = plans.iter().map(|(e, _)| e.typical_s).collect();
    let mut spent = 0.0;
    for (k, (probe, plan)) in plans.iter().enumerate() {
        let t = std::time::Instant::now();
        let what = format!("{}: {}", probe.id, probe.description);
        match &bar {
            Some(b) => {
                b.expect(estimate(&typical, k, spent));
                b.bar.set_message(what);
            }
            None => progress.say(&what),
        }
        let frag = target
            .run(probe, plan.as_ref(), &probe_progress)
            .with_context(|| format!("probe {}", probe.id))?;
        absorb(p, frag);
        spent += t.elapsed().as_secs_f64();
        let done = format!("{}: done in {:.1} s", probe.id, t.elapsed().as_secs_f64());
        match &bar {
            Some(b) => {
                b.bar.println(format!("hwcal: {done}"));
                b.bar.inc(1);
            }
            None => progress.say(&done),
        }
    }
    if let Some(b) = bar {
        b.bar.finish_and_clear();
    }
    Ok(())
}

/// The per-phase progress bar on stderr and its estimate of the time left.
struct PhaseBar {
    bar: indicatif::ProgressBar,
    eta: std::sync::Arc<std::sync::Mutex<Eta>>,
}

/// What the bar's `{left}` counts down: when the phase under way should
/// end, and what the phases after it need (shown while the phase under way
/// runs over, so the estimate stands still instead of climbing).
#[derive(Debug, Default, Clone, Copy)]
struct Eta {
    ends: Option<std::time::Instant>,
    after_s: f64,
}

impl PhaseBar {
    /// A phase starts: `(this and later, later only)` seconds expected.
    fn expect(&self, (left, after): (f64, f64)) {
        if let Ok(mut e) = self.eta.lock() {
            *e = Eta {
                ends: Some(std::time::Instant::now() + std::time::Duration::from_secs_f64(left - after)),
                after_s: after,
            };
        }
    }
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
        let _ = w.write_str(&eta_text(e, std::time::Instant::now()));
    };
    let b = indicatif::ProgressBar::new(phases as u64);
    let style = indicatif::ProgressStyle::with_template("{spinner} [{pos}/{len}] {msg} ({elapsed}{left})")
        .map(|s| s.with_key("left", left))
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner());
    b.set_style(style);
    b.enable_steady_tick(std::time::Duration::from_millis(120));
    Some(PhaseBar { bar: b, eta })
}

/// Seconds the phases from `done` on should take, and those after it
/// alone: their typical durations, scaled by how the `spent` seconds of the
/// finished phases compared with theirs (a slower machine is slower
/// throughout; the scale is held within 4× either way, so one phase that
/// waited on a busy machine does not throw the rest).
fn estimate(typical: &[f64], done: usize, spent: f64) -> (f64, f64) {
    let finished: f64 = typical.iter().take(done).sum();
    let pace = if finished > 0.0 && spent > 0.0 {
        (spent / finished).clamp(0.25, 4.0)
    } else {
        1.0
    };
    let from = |k: usize| pace * typical.iter().skip(k).sum::<f64>();
    (from(done), from(done + 1))
}

/// `{left}` of the phase bar at `now`: the time the phase under way has
/// left, but never less than the later phases need; nothing before the
/// first phase starts or once only a second is left.
fn eta_text(e: Eta, now: std::time::Instant) -> String {
    let Some(ends) = e.ends else {
        return String::new();
    };
    let left = ends.saturating_duration_since(now).as_secs_f64().max(0.0) + e.after_s;
    if left < 1.0 {
        return String::new();
    }
    format!(", ~{:.0} s left", left.ceil())
}

#[cfg(test)]
mod tests {
    use super::{estimate, eta_text, Eta};
    use std::time::{Duration, Instant};

    #[test]
    fn the_estimate_weighs_the_phases_by_their_typical_time() {
        let typical = [0.3, 1.0, 5.0, 2.0, 1.0];
        // Before anything ran: the typical times themselves.
        let (left, after) = estimate(&typical, 0, 0.0);
        assert!((left - 9.3).abs() < 1e-9 && (after - 9.0).abs() < 1e-9);
        // Twice as slow so far: twice the rest.
        let (left, after) = estimate(&typical, 2, 2.6);
        assert!((left - 16.0).abs() < 1e-9 && (after - 6.0).abs() < 1e-9);
        // One phase that waited long does not scale the rest past 4×.
        assert!((estimate(&typical, 1, 30.0).0 - 36.0).abs() < 1e-9);
        // The last phase: nothing after it.
        assert_eq!(estimate(&typical, 4, 8.3).1, 0.0);
    }

    #[test]
    fn the_time_left_counts_down_and_holds_at_the_later_phases() {
        let now = Instant::now();
        assert_eq!(eta_text(Eta::default(), now), "");
        let e = Eta {
            ends: Some(now + Duration::from_secs(5)),
            after_s: 3.0,
        };
        assert_eq!(eta_text(e, now), ", ~8 s left");
        assert_eq!(eta_text(e, now + Duration::from_secs(2)), ", ~6 s left");
        // The phase under way ran over: the later phases still need theirs.
        assert_eq!(eta_text(e, now + Duration::from_secs(60)), ", ~3 s left");
        let last = Eta {
            ends: Some(now),
            after_s: 0.0,
        };
        assert_eq!(eta_text(last, now + Duration::from_secs(1)), "");
    }
}
