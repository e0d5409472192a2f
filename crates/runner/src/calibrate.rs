//! The calibration, assembled in one place: describe the machine, cross-check
//! its caches against CPUID, plan the probes, run them (a fragment each,
//! merged with [`absorb`]), analyse the merged profile once and leave out
//! what no machine can have measured. Every command that measures goes
//! through [`calibrate`] or [`calibrate_with`]; `hwcal analyze` and
//! `validate profiles` go through [`finish`], the same last stage.
//!
//! The time left is estimated from the probes' typical durations, scaled by
//! the pace of the phases already run (see [`estimate`]).

use crate::probe::{Machine, Planned, ProbeEntry, Progress, RunConfig};
use crate::{Context, Result};
use hwcal_model::{MachineInfo, Profile};
use std::time::{Duration, Instant};

/// What a calibration records about how it was started.
#[derive(Debug, Clone, Default)]
pub struct Header {
    /// The command line, secrets masked.
    pub command: String,
    /// When it started (seconds since the Unix epoch).
    pub started_unix: u64,
    /// The CPU the measuring thread is pinned to (for the harness section).
    pub pinned_cpu: Option<usize>,
}

impl Header {
    /// A calibration starting now.
    pub fn now(command: String, pinned_cpu: Option<usize>) -> Header {
        Header {
            command,
            started_unix: now_unix(),
            pinned_cpu,
        }
    }
}

/// Seconds since the Unix epoch (0 if the clock is before it).
pub fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A step of the calibration, for a progress display.
#[derive(Debug, Clone, Copy)]
pub enum Phase<'a> {
    /// The probes are planned: `count` phases follow.
    Planned { count: usize },
    /// A probe starts; `eta` is the time the phases from it on should take.
    Start { probe: &'a ProbeEntry, eta: Eta },
    /// A probe is done after `secs` seconds.
    Done { probe: &'a ProbeEntry, secs: f64 },
}

/// What a calibration reports as it goes: the probes' own lines
/// ([`Progress`]) and the phases.
pub trait Observer: Progress {
    /// A phase of the calibration; the default shows nothing.
    fn phase(&self, _phase: Phase<'_>) {}
}

impl Observer for crate::probe::Silent {}

/// A calibration of the probes the registry plans from `config`: see the
/// module documentation. `probes` are the selected entries (their analyses
/// run on the result).
pub fn calibrate(
    machine: &dyn Machine,
    config: &RunConfig,
    probes: &[ProbeEntry],
    header: Header,
    observer: &dyn Observer,
) -> Result<Profile> {
    calibrate_with(
        machine,
        header,
        probes,
        |info| crate::registry::plan(probes, config, info),
        observer,
    )
}

/// A calibration whose plans the caller makes from the machine's
/// description (a single-probe command with parameters of its own);
/// `analysed` are the entries whose analyses run on the merged profile.
pub fn calibrate_with(
    machine: &dyn Machine,
    header: Header,
    analysed: &[ProbeEntry],
    planner: impl FnOnce(&MachineInfo) -> Vec<Planned>,
    observer: &dyn Observer,
) -> Result<Profile> {
    let (info, notes) = describe(machine);
    let mut p = Profile::new(header.command, header.started_unix);
    p.notes.extend(notes);
    let mut plans = planner(&info);
    p.machine = Some(info);
    p.harness = Some(machine.harness(header.pinned_cpu));
    observer.phase(Phase::Planned { count: plans.len() });
    let typical: Vec<f64> = plans.iter().map(|(e, _)| e.typical_s).collect();
    let n_plans = plans.len();
    let mut spent = 0.0;
    let mut failed = 0;
    for (k, (probe, plan)) in plans.iter_mut().enumerate() {
        plan.sees(&p);
        let t = Instant::now();
        observer.phase(Phase::Start {
            probe,
            eta: Eta::starting(estimate(&typical, k, spent)),
        });
        match machine.run(probe, plan.as_ref(), observer) {
            Ok(frag) => absorb(&mut p, frag),
            // Of several probes, one that fails leaves the others' results
            // standing (a full run must not lose its cache and memory
            // figures to a scratch file the os probe could not make); the
            // failure is a warning in the profile. A single probe's failure
            // is the command's, and so is a usage error (what was asked
            // cannot be done here).
            Err(e) if n_plans > 1 && !e.is_usage() => {
                let why = chain(&e);
                observer.say(&format!(
                    "{}: failed ({why}); going on with the other probes",
                    probe.id
                ));
                p.notes.push(hwcal_model::Note::warning(
                    "run",
                    "probe-failed",
                    format!(
                        "run: probe {} failed and its figures are left out: {why}",
                        probe.id
                    ),
                ));
                failed += 1;
            }
            Err(e) => return Err(e).with_context(|| format!("probe {}", probe.id)),
        }
        let secs = t.elapsed().as_secs_f64();
        spent += secs;
        observer.phase(Phase::Done { probe, secs });
    }
    if failed > 0 && failed == n_plans {
        return Err(crate::RunnerError::Failed(
            "every probe failed (see the messages above)".into(),
        ));
    }
    finish(&mut p, analysed);
    Ok(p)
}

/// An error with its causes, joined by `: ` (as `anyhow`'s `{:#}`).
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        // A wrapper that prints its cause in its own message (thiserror's
        // `{0}`) would say it twice.
        let text = c.to_string();
        if !out.ends_with(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        cause = c.source();
    }
    out
}

/// The machine as the OS and CPUID describe it, with a note wherever sysfs
/// and CPUID leaf 4 disagree on the caches (VMs often rewrite one).
pub fn describe(machine: &dyn Machine) -> (MachineInfo, Vec<hwcal_model::Note>) {
    let info = machine.info();
    let notes = hwcal_analysis::nominal::cross_check(&info, &machine.cpuid_caches());
    (info, notes)
}

/// The last stage of every profile hwcal makes: each probe's analysis over
/// the whole profile, in registry order (a probe's may read the curves of
/// probes listed before it: [`ProbeEntry::reads`]), the consistency stage
/// over every quantity the run measured more than once
/// ([`hwcal_analysis::consistency`]), then every figure that fails the
/// plausibility check left out with a note (so hwcal never writes what its
/// own `analyze` and `import` refuse). Returns whether any probe found raw
/// data to analyse.
pub fn finish(p: &mut Profile, probes: &[ProbeEntry]) -> bool {
    let any = analyse(p, probes);
    hwcal_model::plausible::scrub(p);
    any
}

/// Each probe's analysis over the profile, then the consistency stage
/// (see [`finish`], which also scrubs).
pub fn analyse(p: &mut Profile, probes: &[ProbeEntry]) -> bool {
    let mut any = false;
    for probe in probes {
        any |= (probe.analyze)(p);
    }
    hwcal_analysis::consistency::reconcile(p);
    any
}

/// `hwcal analyze`: a stored profile (already parsed, not yet checked)
/// analysed again from its raw curves. A stored figure that fails the
/// plausibility check (an older analysis's negative miss latency) is left
/// out and re-derived, with a note, instead of refusing the file; raw data
/// that fails it is refused (a usage error naming it), since the figures
/// would come from it. Without raw data the figures stay as stored, said
/// in a note.
/// [`reanalyse_stored`] for `db import`: a profile with raw curves gets
/// its figures from this analysis (said in an info note, with the version
/// that wrote the file); one without keeps its figures, as recorded.
pub fn reanalyse_imported(p: &mut Profile) -> Result<()> {
    if p.raw.is_empty() {
        return Ok(());
    }
    reanalyse_stored(p)?;
    p.notes.push(hwcal_model::Note::info(
        "db",
        "reanalysed_on_import",
        format!(
            "db: imported with every figure re-derived from the raw curves by this hwcal's analysis \
             (the file was written by hwcal {}; its own figures may differ)",
            p.tool_version
        ),
    ));
    Ok(())
}

pub fn reanalyse_stored(p: &mut Profile) -> Result<()> {
    let bad = hwcal_model::plausible::implausible(p);
    if let Some(raw) = bad.iter().find(|b| b.starts_with("raw")) {
        crate::usage!("values no machine can have measured: {raw}");
    }
    let replaced = hwcal_model::plausible::leave_out(p);
    let any = finish(p, &crate::probes());
    for what in &replaced {
        p.notes.push(hwcal_model::Note::warning(
            "analyze",
            "implausible_replaced",
            format!(
                "analyze: a stored value failed the plausibility check ({what}): left out; {}",
                if any {
                    "the figures are re-derived from the raw curves"
                } else {
                    "no raw data to re-derive figures from"
                }
            ),
        ));
    }
    if !any {
        p.notes.push(hwcal_model::Note::info(
            "analyze",
            "no_raw_data",
            "analyze: the profile holds no raw data; figures shown as stored",
        ));
    }
    Ok(())
}

/// Merge a probe's profile fragment into the run's profile: its measured
/// sections replace the profile's, its notes, named figures and raw curves
/// are appended. The fragment's machine, harness and command are the
/// run's already.
pub fn absorb(p: &mut Profile, frag: Profile) {
    fn put<T>(dst: &mut Option<T>, src: Option<T>) {
        if src.is_some() {
            *dst = src;
        }
    }
    put(&mut p.clock, frag.clock);
    put(&mut p.raw_clock, frag.raw_clock);
    put(&mut p.caches, frag.caches);
    put(&mut p.memory, frag.memory);
    put(&mut p.tlbs, frag.tlbs);
    put(&mut p.tlb_huge_pages, frag.tlb_huge_pages);
    put(&mut p.mem, frag.mem);
    put(&mut p.bandwidth, frag.bandwidth);
    put(&mut p.context_switch, frag.context_switch);
    put(&mut p.io, frag.io);
    p.notes.extend(frag.notes);
    p.figures.extend(frag.figures);
    p.raw.extend(frag.raw);
}

/// Seconds the phases from `done` on should take, and those after it
/// alone: their typical durations, scaled by how the `spent` seconds of the
/// finished phases compared with theirs (a slower machine is slower
/// throughout; the scale is held within 4× either way, so one phase that
/// waited on a busy machine does not throw the rest).
pub fn estimate(typical: &[f64], done: usize, spent: f64) -> (f64, f64) {
    let finished: f64 = typical.iter().take(done).sum();
    let pace = if finished > 0.0 && spent > 0.0 {
        (spent / finished).clamp(0.25, 4.0)
    } else {
        1.0
    };
    let from = |k: usize| pace * typical.iter().skip(k).sum::<f64>();
    (from(done), from(done + 1))
}

/// The estimate of the time left while a phase runs: when the phase under
/// way should end, and what the phases after it need (counted while the
/// phase under way runs over, so the estimate stands still instead of
/// climbing).
#[derive(Debug, Default, Clone, Copy)]
pub struct Eta {
    ends: Option<Instant>,
    after_s: f64,
}

impl Eta {
    /// A phase starts now with `(this and later, later only)` seconds
    /// expected (from [`estimate`]).
    pub fn starting((left, after): (f64, f64)) -> Eta {
        Eta {
            ends: Some(Instant::now() + Duration::from_secs_f64((left - after).max(0.0))),
            after_s: after,
        }
    }

    /// Seconds left at `now`: the time the phase under way has left, but
    /// never less than the later phases need; `None` before the first phase
    /// starts or once only a second is left.
    pub fn left_s(&self, now: Instant) -> Option<f64> {
        let ends = self.ends?;
        let left = ends.saturating_duration_since(now).as_secs_f64().max(0.0) + self.after_s;
        (left >= 1.0).then_some(left)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The synthetic machine with one probe that fails as the os probe did
    /// on a scratch directory it could not use.
    #[cfg(feature = "synthetic")]
    struct Failing(&'static str, bool);

    #[cfg(feature = "synthetic")]
    impl Machine for Failing {
        fn info(&self) -> MachineInfo {
            crate::synthetic::Synthetic.info()
        }
        fn cpuid_caches(&self) -> Vec<hwcal_model::NominalCache> {
            Vec::new()
        }
        fn harness(&self, cpu: Option<usize>) -> hwcal_model::HarnessInfo {
            crate::synthetic::Synthetic.harness(cpu)
        }
        fn run(
            &self,
            probe: &ProbeEntry,
            plan: &dyn crate::probe::Plan,
            progress: &dyn crate::probe::Progress,
        ) -> Result<Profile> {
            match (probe.id == self.0, self.1) {
                (true, false) => Err(crate::RunnerError::Failed("scratch: not a directory".into())),
                (true, true) => Err(crate::RunnerError::Usage("cannot be done here".into())),
                _ => crate::synthetic::Synthetic.run(probe, plan, progress),
            }
        }
    }

    #[cfg(feature = "synthetic")]
    #[test]
    fn a_failed_probe_of_several_leaves_the_others_standing() {
        let ids: Vec<String> = vec!["clock".into(), "ctx".into()];
        let probes = crate::registry::select(crate::registry::probes(), &ids, &[]).unwrap();
        let config = RunConfig {
            probes: ids,
            ..Default::default()
        };
        let run = |m: &Failing| calibrate(m, &config, &probes, Header::default(), &crate::probe::Silent);
        let p = run(&Failing("ctx", false)).unwrap();
        assert!(p.clock.is_some());
        assert!(p.context_switch.is_none());
        assert!(p
            .notes
            .iter()
            .any(|n| n.code == "run.probe-failed" && n.text.contains("not a directory")));
        // A usage error is still the command's; so is every probe failing.
        assert!(run(&Failing("ctx", true)).unwrap_err().is_usage());
        let one = crate::registry::select(crate::registry::probes(), &["ctx".into()], &[]).unwrap();
        assert!(calibrate(
            &Failing("ctx", false),
            &config,
            &one,
            Header::default(),
            &crate::probe::Silent
        )
        .is_err());
    }

    #[test]
    fn absorb_appends_and_replaces() {
        let mut p = Profile {
            notes: vec![hwcal_model::Note::legacy("cache: a")],
            ..Default::default()
        };
        let frag = Profile {
            notes: vec![hwcal_model::Note::legacy("tlb: b")],
            context_switch: Some(Default::default()),
            ..Default::default()
        };
        absorb(&mut p, frag);
        assert_eq!(p.notes.len(), 2);
        assert!(p.context_switch.is_some() && p.clock.is_none());
    }

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
        assert_eq!(Eta::default().left_s(now), None);
        let e = Eta {
            ends: Some(now + Duration::from_secs(5)),
            after_s: 3.0,
        };
        assert_eq!(e.left_s(now), Some(8.0));
        assert_eq!(e.left_s(now + Duration::from_secs(2)), Some(6.0));
        // The phase under way ran over: the later phases still need theirs.
        assert_eq!(e.left_s(now + Duration::from_secs(60)), Some(3.0));
        let last = Eta {
            ends: Some(now),
            after_s: 0.0,
        };
        assert_eq!(last.left_s(now + Duration::from_secs(1)), None);
    }
}
