//! The probe registry: every probe `hwcal run` knows, as a table entry
//! (uarch-bench / multichase style) rather than a hard-coded branch.
//! Adding a probe to the full calibration means adding one line to
//! [`probes`] plus the probe's own measuring and analysis code (the entry's
//! contract is [`crate::probe`]); the notes, JSON, text, HTML and
//! comparison read the profile it fills.

use crate::probe::{Planned, ProbeEntry, RunConfig};
use crate::Result;
use hwcal_model::MachineInfo;

/// Every probe, in the order `hwcal run` runs them.
pub fn probes() -> Vec<ProbeEntry> {
    vec![
        crate::clock::ENTRY,
        // The TLB before the caches, which read its curves (`reads`).
        crate::tlb::ENTRY,
        crate::cache::ENTRY,
        crate::mem::ENTRY,
        crate::ctx::ENTRY,
        crate::c2c::ENTRY,
        crate::os::ENTRY,
        crate::io::ENTRY,
    ]
}

/// Look up probes by id (`--only`, `--skip`); an unknown id is a usage error.
/// Every registered probe's id, in registry order (`--only`'s values and
/// their shell completion).
pub fn probe_ids() -> Vec<&'static str> {
    probes().iter().map(|p| p.id).collect()
}

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
pub fn plan(entries: &[ProbeEntry], config: &RunConfig, machine: &MachineInfo) -> Vec<Planned> {
    entries
        .iter()
        .filter_map(|e| (e.plan)(config, machine).map(|p| (*e, p)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn ids(v: &[ProbeEntry]) -> Vec<&'static str> {
        v.iter().map(|p| p.id).collect()
    }

    #[test]
    fn selection_and_opt_in() {
        assert_eq!(
            ids(&probes()),
            ["clock", "tlb", "cache", "mem", "ctx", "c2c", "os", "io"]
        );
        let only = select(probes(), &["clock".into()], &[]).unwrap();
        assert_eq!(ids(&only), ["clock", "io"], "io stays, enabled by its own option");
        let skip = select(probes(), &[], &["io".into(), "cache".into()]).unwrap();
        assert_eq!(ids(&skip), ["clock", "tlb", "mem", "ctx", "c2c", "os"]);
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
    fn every_probe_is_listed_after_the_probes_it_reads() {
        let all = probes();
        for (k, p) in all.iter().enumerate() {
            for r in p.reads {
                let at = all.iter().position(|q| q.id == *r);
                assert!(at.is_some_and(|i| i < k), "{} reads {r}, listed after it", p.id);
            }
        }
        assert_eq!(crate::cache::ENTRY.reads, ["tlb"]);
    }
}
