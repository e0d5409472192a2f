//! The probe registry: every probe `hwcal run` knows, as a table entry
//! (uarch-bench / multichase style) rather than a hard-coded branch.
//! Adding a probe to the full calibration means adding one entry to
//! [`probes`] plus the probe's own measuring and analysis code; the notes,
//! JSON, text, HTML and comparison read the profile it fills.

use crate::{Progress, Result};
use hwcal_model::{MachineInfo, Profile};
use std::path::PathBuf;

/// What `hwcal run` passes to every probe's plan step.
#[derive(Debug, Clone, Default)]
pub struct RunConfig {
    /// The CPU the measuring thread is pinned to, if any.
    pub pinned_cpu: Option<usize>,
    /// Where the I/O probe may create its test file (`--io DIR`); without
    /// it the I/O probe is not planned.
    pub io_dir: Option<PathBuf>,
    /// The ids of the probes this run measures (a probe may lean on
    /// another's data: the caches on the TLB's curves).
    pub probes: Vec<String>,
}

/// A probe's parameters for one run, ready to measure.
pub trait Plan: std::fmt::Debug {
    /// Run the kernels; returns a profile fragment holding the probe's raw
    /// curves, its analysed sections and its notes (see [`absorb`]).
    fn run(&self, progress: &dyn Progress) -> Result<Profile>;
}

/// One registered probe.
#[derive(Clone, Copy)]
pub struct ProbeEntry {
    pub id: &'static str,
    pub description: &'static str,
    /// Enabled by an option of its own (io: a target directory) rather than
    /// by default: `--only` naming other probes does not drop it.
    pub opt_in: bool,
    /// Seconds the probe takes on a quiet 2-vCPU machine: only for the
    /// progress bar's estimate of the time left (the probes differ by 25×,
    /// so counting phases alone misleads).
    pub typical_s: f64,
    /// The probe's parameters from the configuration and the machine;
    /// `None` when the configuration does not enable it.
    pub plan: fn(&RunConfig, &MachineInfo) -> Option<Box<dyn Plan>>,
    /// Recompute the probe's figures from the raw data in a profile;
    /// `false` if the profile holds no raw data of this probe.
    pub analyze: fn(&mut Profile) -> bool,
}

impl std::fmt::Debug for ProbeEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProbeEntry")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// Every probe, in the order `hwcal run` runs them.
pub fn probes() -> Vec<ProbeEntry> {
    vec![
        crate::clock::ENTRY,
        // The TLB before the caches: where the TLB sees 4 KiB pages the
        // cache analysis removes the TLB's share with the TLB's curves.
        crate::tlb::ENTRY,
        crate::cache::ENTRY,
        crate::mem::ENTRY,
        crate::ctx::ENTRY,
        crate::io::ENTRY,
    ]
}

/// The analysis of a whole profile, as `run`, `analyze` and `validate`
/// do it: each of `probes`' analyses over the profile (a probe's may use
/// another's curves: the caches on 4 KiB pages remove the TLB's share with
/// the TLB's curves), then the consistency stage over every quantity the
/// run measured more than once ([`hwcal_analysis::consistency`]). Returns
/// whether any probe found raw data to analyse.
pub fn reanalyze(p: &mut Profile, probes: &[ProbeEntry]) -> bool {
    let mut any = false;
    for probe in probes {
        any |= (probe.analyze)(p);
    }
    hwcal_analysis::consistency::reconcile(p);
    any
}

/// Look up probes by id (`--only`, `--skip`); an unknown id is a usage error.
pub fn select(all: Vec<ProbeEntry>, only: &[String], skip: &[String]) -> Result<Vec<ProbeEntry>> {
    for id in only.iter().chain(skip) {
        if !all.iter().any(|p| p.id == id) {
            let ids: Vec<&str> = all.iter().map(|p| p.id).collect();
            crate::usage!("unknown probe '{id}' (known: {})", ids.join(", "));
        }
    }
    Ok(all
        .into_iter()
        .filter(|p| only.is_empty() || p.opt_in || only.iter().any(|o| o == p.id))
        .filter(|p| !skip.iter().any(|s| s == p.id))
        .collect())
}

/// Plan every selected probe the configuration enables, in order.
pub fn plan(
    entries: &[ProbeEntry],
    config: &RunConfig,
    machine: &MachineInfo,
) -> Vec<(ProbeEntry, Box<dyn Plan>)> {
    entries
        .iter()
        .filter_map(|e| (e.plan)(config, machine).map(|p| (*e, p)))
        .collect()
}

/// Merge a probe's profile fragment into the run's profile: its measured
/// sections replace the profile's, its notes, named figures and raw curves
/// are appended.
/// The fragment's machine, harness and command are the run's already.
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[ProbeEntry]) -> Vec<&'static str> {
        v.iter().map(|p| p.id).collect()
    }

    #[test]
    fn selection_and_opt_in() {
        assert_eq!(ids(&probes()), ["clock", "tlb", "cache", "mem", "ctx", "io"]);
        let only = select(probes(), &["clock".into()], &[]).unwrap();
        assert_eq!(ids(&only), ["clock", "io"], "io stays, enabled by its own option");
        let skip = select(probes(), &[], &["io".into(), "cache".into()]).unwrap();
        assert_eq!(ids(&skip), ["clock", "tlb", "mem", "ctx"]);
        let e = select(probes(), &["nosuch".into()], &[]).unwrap_err();
        assert!(e.is_usage() && e.to_string().contains("unknown probe 'nosuch'"));
    }

    #[test]
    fn io_is_planned_only_with_a_directory() {
        let m = MachineInfo::default();
        let io = select(probes(), &["io".into()], &[]).unwrap();
        assert!(plan(&io, &RunConfig::default(), &m).is_empty());
        let config = RunConfig {
            io_dir: Some(PathBuf::from("/tmp")),
            ..RunConfig::default()
        };
        assert_eq!(plan(&io, &config, &m).len(), 1);
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
}
