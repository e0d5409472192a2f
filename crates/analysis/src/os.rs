//! Operating-system latencies (lmbench's `lat_syscall`, `lat_sig`,
//! `lat_proc`, `lat_pagefault`, `lat_pipe`; the kernels are
//! `hwcal_probes::os`): per operation the median of its timed batches as a
//! named figure in µs, `noisy` where the batches disagree.

use crate::batches::{judge, Batches, NOISY_IQR};
use hwcal_model::figure::{self, Direction, Figure, FigureUnit};
use hwcal_model::note::refresh;
use hwcal_model::{Note, Profile, Verdict};

pub const PROBE: &str = "os";
/// Note codes this analysis writes (refreshed on every re-analysis).
pub const NOTE_CODES: [&str; 1] = ["os.noisy"];

/// Every operation: its id (curve `os.{id}`, figure `os.{id}`) and its
/// name as lmbench prints it.
pub const OPS: [(&str, &str); 12] = [
    ("null", "Simple syscall"),
    ("read", "Simple read"),
    ("write", "Simple write"),
    ("stat", "Simple stat"),
    ("fstat", "Simple fstat"),
    ("open_close", "Simple open/close"),
    ("sig_install", "Signal handler installation"),
    ("sig_catch", "Signal handler overhead"),
    ("fork_exit", "Process fork+exit"),
    ("fork_exec", "Process fork+execve"),
    ("page_fault", "Anonymous page fault"),
    ("pipe", "Pipe latency"),
];

/// The curve id of operation `id`: one point, `y` the median µs, the
/// batches as its samples.
pub fn curve_id(id: &str) -> String {
    format!("{PROBE}.{id}")
}

/// The analysis hook: a figure per measured operation and a note naming
/// the noisy ones; `false` when the profile holds no OS curves.
pub fn reanalyze(p: &mut Profile) -> bool {
    let mut figures = Vec::new();
    let mut noisy = Vec::new();
    for (id, name) in OPS {
        let Some(q) = p.raw_curve(&curve_id(id)).and_then(|c| c.points.first()) else {
            continue;
        };
        let samples = if q.samples.is_empty() {
            vec![q.y]
        } else {
            q.samples.clone()
        };
        let Some(Batches { median, verdict, .. }) = judge(&samples) else {
            continue;
        };
        let mut f = Figure::new(PROBE, id, name, median, FigureUnit::Us, Direction::Lower);
        f.verdict = verdict;
        if verdict == Verdict::Noisy {
            noisy.push(name.to_string());
        }
        figures.push(f);
    }
    if figures.is_empty() {
        return false;
    }
    let notes: Vec<Note> = (!noisy.is_empty())
        .then(|| {
            Note::warning(
                PROBE,
                "noisy",
                format!(
                    "os: the batches of {} disagree by more than {:.0}%: interrupts or other tasks ran \
                     meanwhile; re-run on a quiet machine",
                    noisy.join(", "),
                    NOISY_IQR * 100.0
                ),
            )
        })
        .into_iter()
        .collect();
    figure::refresh(&mut p.figures, PROBE, figures);
    refresh(&mut p.notes, PROBE, &NOTE_CODES, notes);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwcal_model::{RawCurve, RawPoint};

    fn curve(id: &str, s: &[f64]) -> RawCurve {
        RawCurve {
            id: curve_id(id),
            points: vec![RawPoint {
                x: 0.0,
                y: hwcal_stats::median(s),
                samples: s.to_vec(),
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn a_figure_per_operation_noisy_where_the_batches_scatter() {
        let mut p = Profile {
            raw: vec![
                curve("null", &[0.16, 0.17, 0.16, 0.165, 0.16]),
                curve("pipe", &[4.0, 9.0, 4.2, 12.0, 5.0]),
            ],
            ..Default::default()
        };
        assert!(reanalyze(&mut p));
        assert_eq!(p.figures.len(), 2);
        assert_eq!(p.figures[0].id, "os.null");
        assert_eq!(p.figures[0].name, "Simple syscall");
        assert_eq!(p.figures[0].verdict, Verdict::Ok);
        assert_eq!(p.figures[1].verdict, Verdict::Noisy);
        assert!(p
            .notes
            .iter()
            .any(|n| n.code == "os.noisy" && n.text.contains("Pipe latency")));
        let before = (p.figures.clone(), p.notes.clone());
        assert!(reanalyze(&mut p));
        assert_eq!((p.figures.clone(), p.notes.clone()), before);
        assert!(!reanalyze(&mut Profile::default()));
    }
}
