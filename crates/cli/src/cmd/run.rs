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
        b.set_length(plans.len() as u64);
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
    for probe in &probes {
        (probe.analyze)(&mut p);
    }
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
    bar: Option<indicatif::ProgressBar>,
) -> Result<()> {
    for (probe, plan) in plans {
        let t = std::time::Instant::now();
        let what = format!("{}: {}", probe.id, probe.description);
        match &bar {
            Some(b) => b.set_message(what),
            None => progress.say(&what),
        }
        let frag = target
            .run(probe, plan.as_ref(), &probe_progress)
            .with_context(|| format!("probe {}", probe.id))?;
        absorb(p, frag);
        let done = format!("{}: done in {:.1} s", probe.id, t.elapsed().as_secs_f64());
        match &bar {
            Some(b) => {
                b.println(format!("hwcal: {done}"));
                b.inc(1);
            }
            None => progress.say(&done),
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(())
}

/// The per-phase progress bar on stderr, or `None` when stderr is not a
/// terminal or `--quiet` was given.
fn phase_bar(progress: Progress, phases: usize) -> Option<indicatif::ProgressBar> {
    if !progress.enabled() {
        return None;
    }
    let b = indicatif::ProgressBar::new(phases as u64);
    let style = indicatif::ProgressStyle::with_template("{spinner} [{pos}/{len}] {msg} ({elapsed}{left})")
        .map(|s| s.with_key("left", eta_key))
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner());
    b.set_style(style);
    b.enable_steady_tick(std::time::Duration::from_millis(120));
    Some(b)
}

/// `{left}` of the phase bar: the time remaining if the phases still to run
/// take as long as the finished ones did on average; nothing before the
/// first phase ends (indicatif's own `{eta}` would then read 0 s).
fn eta_key(state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write) {
    let _ = w.write_str(&eta_text(state.pos(), state.len(), state.elapsed()));
}

fn eta_text(done: u64, total: Option<u64>, elapsed: std::time::Duration) -> String {
    match total {
        Some(total) if done > 0 && done < total => {
            let left = elapsed.as_secs_f64() / done as f64 * (total - done) as f64;
            format!(", ~{left:.0} s left")
        }
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::eta_text;
    use std::time::Duration;

    #[test]
    fn eta_from_the_finished_phases() {
        assert_eq!(eta_text(0, Some(5), Duration::from_secs(3)), "");
        assert_eq!(eta_text(2, Some(5), Duration::from_secs(4)), ", ~6 s left");
        assert_eq!(eta_text(5, Some(5), Duration::from_secs(9)), "");
        assert_eq!(eta_text(1, None, Duration::from_secs(9)), "");
    }
}
