//! `hwcal run`: the full calibration. Machine info, then every registered
//! probe in turn, then one summary and one profile.

use crate::cli::RunArgs;
use crate::common::{
    check_db, check_outputs, command_line, emit, now_unix, pin, save_if_requested, write_output, Progress,
};
use crate::registry::{select, RunCtx};
use anyhow::{Context, Result};
use hwcal_harness::harness_info;
use hwcal_model::Profile;

pub fn run(a: RunArgs) -> Result<()> {
    let probes = select(&a.only, &a.skip)?;
    if probes.is_empty() && a.io.is_none() && !a.list {
        crate::usage!("every probe is skipped: nothing to measure (see --list)");
    }
    if let Some(dir) = &a.io {
        if !dir.is_dir() {
            crate::usage!("--io {}: not a directory", dir.display());
        }
    }
    if a.list {
        for p in crate::registry::probes() {
            crate::outln!("{:<8} {}", p.id, p.description);
        }
        return Ok(());
    }
    check_outputs(&[
        ("--json", a.common.json.as_deref()),
        ("--html", a.html.as_deref()),
    ])?;
    let save = !a.no_save;
    check_db(save)?;
    let progress = Progress::new(a.common.quiet);
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
    let start = std::time::Instant::now();
    let mut p = Profile::new(command_line(), now_unix());
    let machine = hwcal_probes::sysinfo::machine_info();
    p.machine = Some(machine.clone());
    p.harness = Some(harness_info(cpu));
    p.notes.extend(crate::cmd::info::nominal_cross_check());
    let ctx = RunCtx {
        progress: probe_progress,
        pinned_cpu: cpu,
        machine,
    };
    for probe in &probes {
        let t = std::time::Instant::now();
        match &bar {
            Some(b) => b.set_message(format!("{}: {}", probe.id, probe.description)),
            None => progress.say(&format!("{}: {}", probe.id, probe.description)),
        }
        (probe.measure)(&ctx, &mut p).with_context(|| format!("probe {}", probe.id))?;
        let done = format!("{}: done in {:.1} s", probe.id, t.elapsed().as_secs_f64());
        match &bar {
            Some(b) => {
                b.println(format!("hwcal: {done}"));
                b.inc(1);
            }
            None => progress.say(&done),
        }
    }
    if let Some(dir) = &a.io {
        let t = std::time::Instant::now();
        match &bar {
            Some(b) => b.set_message("io: 4 KiB random reads, O_DIRECT, io_uring QD 32"),
            None => progress.say("io: 4 KiB random reads, O_DIRECT, io_uring QD 32"),
        }
        let m = crate::cmd::io::measure(&run_io_job(dir, cpu), &probe_progress)
            .with_context(|| format!("--io {}", dir.display()))?;
        p.io = Some(m.io);
        p.notes.extend(m.notes);
        let done = format!("io: done in {:.1} s", t.elapsed().as_secs_f64());
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
    progress.say(&format!("run: done in {:.1} s", start.elapsed().as_secs_f64()));
    // Store before writing any output: a stored run can always be exported
    // or re-rendered (`hwcal db export`, `hwcal report ID`), a measurement
    // lost to an unwritable output file cannot.
    hwcal_model::plausible::scrub(&mut p);
    save_if_requested(&p, save)?;
    emit(&p, a.common.json.as_deref())?;
    if let Some(dest) = &a.html {
        let html = hwcal_report::Exporter::export(&hwcal_report::html::HtmlExporter::default(), &p)?;
        write_output(dest, &html)?;
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

/// The short I/O job of `hwcal run --io DIR`: what a database cares about
/// first (random 4 KiB reads at depth), on its own file in DIR.
fn run_io_job(dir: &std::path::Path, cpu: Option<usize>) -> crate::cli::IoArgs {
    use crate::cli::{CommonArgs, IoArgs, IoEngineArg, IoRw};
    IoArgs {
        common: CommonArgs {
            cpu,
            no_pin: cpu.is_none(),
            quiet: true,
            ..CommonArgs::default()
        },
        path: Some(dir.to_path_buf()),
        rw: IoRw::Randread,
        rwmix_read: None,
        bs: "4k".into(),
        size: Some("256M".into()),
        direct: true,
        engine: IoEngineArg::IoUring,
        iodepth: 32,
        threads: 1,
        time: Some(2.0),
        force: false,
        allow_mounted_write: false,
        filename: None,
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
