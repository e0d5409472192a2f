//! The operating-system latency probe (`hwcal os`, and in `hwcal run`):
//! lmbench's system call, signal, process, page-fault, pipe and socket
//! latencies and pipe bandwidth (`hwcal_probes::os`), one raw curve per operation; the figures come from
//! `hwcal_analysis::os`. The mitigation state is recorded beside them.

use crate::probe::{Plan, ProbeEntry, Progress};
use crate::{usage, Context, Result};
use hwcal_analysis::batches::judge;
use hwcal_analysis::os::curve_id;
use hwcal_model::{Note, Profile, RawCurve, RawPoint};
use hwcal_probes::os::{measure, mitigations, OsOp};
use std::path::PathBuf;

/// Timed batches per operation (after the warm-up ones).
pub const BATCHES: usize = 21;

pub const ENTRY: ProbeEntry = ProbeEntry {
    id: "os",
    description:
        "OS latencies (lmbench lat_syscall, lat_sig, lat_proc, lat_pagefault, lat_pipe, lat_unix, bw_pipe)",
    opt_in: false,
    typical_s: 0.2,
    reads: &[],
    plan: |_, _| Some(Box::new(Os::new(OsOp::ALL.to_vec(), BATCHES))),
    analyze: hwcal_analysis::os::reanalyze,
};

/// The probe's plan: the operations, batches each, and the directory of
/// the small file the file operations use.
#[derive(Debug, Clone)]
pub struct Os {
    pub ops: Vec<OsOp>,
    pub batches: usize,
    pub scratch: PathBuf,
}

impl Os {
    /// `ops`, `batches` each, the file operations in the temporary directory.
    pub fn new(ops: Vec<OsOp>, batches: usize) -> Os {
        Os {
            ops,
            batches,
            scratch: std::env::temp_dir(),
        }
    }
}

/// Every operation's id (`--only`'s values and their shell completion).
pub fn op_ids() -> Vec<&'static str> {
    OsOp::ALL.iter().map(|o| o.id()).collect()
}

/// Operations by id (`--only null,read`); an unknown id is a usage error.
pub fn parse_ops(list: &[String]) -> Result<Vec<OsOp>> {
    if list.is_empty() {
        return Ok(OsOp::ALL.to_vec());
    }
    let mut out = Vec::new();
    for id in list {
        match OsOp::by_id(id) {
            Some(op) if !out.contains(&op) => out.push(op),
            Some(_) => {}
            None => {
                let known: Vec<&str> = OsOp::ALL.iter().map(|o| o.id()).collect();
                usage!("unknown operation '{id}' (known: {})", known.join(", "));
            }
        }
    }
    Ok(out)
}

/// The core clock now (MHz): the fastest of five 100 µs add-chain blocks
/// (the fastest: a block an interrupt hit reads low).
fn core_mhz() -> f64 {
    let timer = hwcal_harness::Timer::get();
    (0..5)
        .map(|_| hwcal_harness::clockref::time_chain(timer, 2_500).1)
        .fold(f64::NAN, f64::max)
}

impl Plan for Os {
    fn run(&self, _hw: &dyn crate::points::Hardware, progress: &dyn Progress) -> Result<Profile> {
        // The core clock before and after: an OS latency is time, and a
        // core slowed (power state, a busy host) for the whole probe slows
        // every batch alike, which their agreement cannot show.
        let before = core_mhz();
        let mut raw = Vec::new();
        let mut resident = None;
        // An interrupt (SIGINT, SIGTERM, SIGHUP) waits for the operation
        // under way, whose scratch directory `measure` removes, and stops
        // there: killed mid-operation, the directory stayed behind.
        let signals = crate::signals::StopOnSignal::install()?;
        for &op in &self.ops {
            if signals.raised() {
                return Err(crate::RunnerError::Failed(
                    "os: interrupted by a signal; its scratch directory was removed".into(),
                ));
            }
            progress.say(&format!("os: {}", op.lmbench_name()));
            let samples =
                measure(op, self.batches, &self.scratch).with_context(|| format!("os: {}", op.id()))?;
            if matches!(op, OsOp::ForkExit | OsOp::ForkExec) {
                resident = hwcal_probes::os::resident_bytes();
            }
            raw.push(RawCurve {
                id: curve_id(op.id()),
                x_label: "(one point)".into(),
                y_label: "µs per operation (pipe_bw: per 64 KiB), median of batches (samples: each batch)"
                    .into(),
                points: vec![RawPoint {
                    x: 0.0,
                    y: judge(&samples).map_or(f64::NAN, |b| b.median),
                    samples,
                    ..Default::default()
                }],
            });
        }
        let after = core_mhz();
        raw.push(RawCurve {
            id: hwcal_analysis::os::CLOCK_CURVE.into(),
            x_label: "0 before, 1 after the operations".into(),
            y_label: "core MHz (add chain)".into(),
            points: [before, after]
                .iter()
                .enumerate()
                .map(|(i, &y)| RawPoint {
                    x: i as f64,
                    y,
                    ..Default::default()
                })
                .collect(),
        });
        let state = mitigations();
        let mut notes: Vec<Note> = (!state.is_empty())
            .then(|| {
                let list: Vec<String> = state.iter().map(|(k, v)| format!("{k}: {v}")).collect();
                Note::info(
                    "os",
                    "mitigations",
                    format!(
                        "os: speculative-execution mitigations (sysfs): {}",
                        list.join("; ")
                    ),
                )
            })
            .into_iter()
            .collect();
        if let Some(b) = resident {
            notes.push(Note::info("os", "fork-resident", fork_note(b)));
        }
        Ok(Profile {
            raw,
            notes,
            ..Default::default()
        })
    }
}

/// What fork was timed from: fork copies the page tables of every resident
/// page of its parent, so its figure belongs to a process of that size
/// (`hwcal_probes::os::measure` hands the allocator's free memory back
/// first; lmbench's `lat_proc` forks a process of a few MiB).
fn fork_note(resident: u64) -> String {
    format!(
        "os: fork (fork+exit, fork+execve) was timed from a process of {} resident (the allocator's free memory \
         handed back first): fork copies the page tables of every resident page of its parent, so the figures \
         grow with that size; lmbench's lat_proc forks a process of a few MiB",
        hwcal_model::human_bytes(resident)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_are_chosen_by_id() {
        assert_eq!(parse_ops(&[]).unwrap().len(), OsOp::ALL.len());
        assert_eq!(
            parse_ops(&["read".into(), "null".into(), "read".into()]).unwrap(),
            [OsOp::Read, OsOp::Null]
        );
        assert!(parse_ops(&["nosuch".into()]).unwrap_err().is_usage());
    }

    #[test]
    fn the_analysis_names_every_operation_the_probe_measures() {
        let ids: Vec<&str> = hwcal_analysis::os::OPS.iter().map(|(id, ..)| *id).collect();
        let probe: Vec<&str> = OsOp::ALL.iter().map(|o| o.id()).collect();
        assert_eq!(ids, probe);
        for ((_, name, kind), op) in hwcal_analysis::os::OPS.iter().zip(OsOp::ALL) {
            assert_eq!(*name, op.lmbench_name());
            // The analysis turns the probe's chunk time into its rate.
            let bytes = (op == OsOp::PipeBandwidth).then_some(hwcal_probes::os::PIPE_CHUNK as f64);
            let want = bytes.map_or(
                hwcal_analysis::os::Kind::Latency,
                hwcal_analysis::os::Kind::Bandwidth,
            );
            assert_eq!(*kind, want);
        }
    }
}
