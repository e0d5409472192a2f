//! Operating-system latencies (lmbench's `lat_syscall`, `lat_sig`,
//! `lat_proc`, `lat_pagefault`, `lat_pipe`, `lat_unix`, and `bw_pipe`; the
//! kernels are `hwcal_probes::os`): per operation the median of its timed
//! batches as a named figure in µs (a rate in bytes/s for a bandwidth),
//! `noisy` where the batches disagree.

use crate::batches::{judge, Batches, NOISY_IQR};
use hwcal_model::figure::{self, Direction, Figure, FigureUnit};
use hwcal_model::note::refresh;
use hwcal_model::{Note, Profile, Verdict};

pub const PROBE: &str = "os";
/// Note codes this analysis writes (refreshed on every re-analysis).
pub const NOTE_CODES: [&str; 2] = ["os.noisy", "os.clock"];
/// The core clock measured before (x 0) and after (x 1) the operations.
pub const CLOCK_CURVE: &str = "os.core_mhz";
/// The clock may move this much (a ratio) within the probe, or stand this
/// much below the clock probe's figure of the same run, before every
/// figure is `noisy`: beyond it the batches agree on a slow core.
const CLOCK_TOLERANCE: f64 = 1.15;

/// What an operation's per-batch µs become.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// A latency: µs per operation, lower is faster.
    Latency,
    /// A transfer of this many bytes per operation: the figure is the rate
    /// (bytes/s), higher is faster.
    Bandwidth(f64),
}

/// Every operation: its id (curve `os.{id}`, figure `os.{id}`), its name
/// as lmbench prints it, and its kind.
pub const OPS: [(&str, &str, Kind); 15] = [
    ("null", "Simple syscall", Kind::Latency),
    ("read", "Simple read", Kind::Latency),
    ("write", "Simple write", Kind::Latency),
    ("stat", "Simple stat", Kind::Latency),
    ("fstat", "Simple fstat", Kind::Latency),
    ("open_close", "Simple open/close", Kind::Latency),
    ("sig_install", "Signal handler installation", Kind::Latency),
    ("sig_catch", "Signal handler overhead", Kind::Latency),
    ("fork_exit", "Process fork+exit", Kind::Latency),
    ("fork_exec", "Process fork+execve", Kind::Latency),
    ("page_fault", "Anonymous page fault", Kind::Latency),
    ("pipe", "Pipe latency", Kind::Latency),
    ("page_fault_file", "Pagefaults on file", Kind::Latency),
    ("unix", "AF_UNIX sock stream latency", Kind::Latency),
    // lmbench's XFERSIZE: 64 KiB per read.
    ("pipe_bw", "Pipe bandwidth", Kind::Bandwidth(65536.0)),
];

/// The curve id of operation `id`: one point, `y` the median µs, the
/// batches as its samples.
pub fn curve_id(id: &str) -> String {
    format!("{PROBE}.{id}")
}

/// Why the core clock during the operations makes them slower than the
/// machine: it moved within the probe, or it stood below what the same
/// run's clock probe measured (two measurements of one quantity that
/// disagree). `None` when neither (or nothing to compare).
fn clock_moved(p: &Profile) -> Option<String> {
    let c = p.raw_curve(CLOCK_CURVE)?;
    let at = |x: f64| {
        c.points
            .iter()
            .find(|q| q.x == x)
            .map(|q| q.y)
            .filter(|v| v.is_finite() && *v > 0.0)
    };
    let (before, after) = (at(0.0)?, at(1.0)?);
    let (lo, hi) = (before.min(after), before.max(after));
    if hi > CLOCK_TOLERANCE * lo {
        return Some(format!(
            "the core clock moved from {before:.0} to {after:.0} MHz during the operations"
        ));
    }
    let run = p
        .clock
        .as_ref()
        .map(|k| k.core_mhz)
        .filter(|v| v.is_finite() && *v > 0.0)?;
    (run > CLOCK_TOLERANCE * lo).then(|| {
        format!("the core ran at {lo:.0} MHz during the operations, {run:.0} MHz in this run's clock probe")
    })
}

/// The analysis hook: a figure per measured operation and a note naming
/// the noisy ones; `false` when the profile holds no OS curves.
pub fn reanalyze(p: &mut Profile) -> bool {
    let mut figures = Vec::new();
    let mut noisy = Vec::new();
    for (id, name, kind) in OPS {
        let Some(q) = p.raw_curve(&curve_id(id)).and_then(|c| c.points.first()) else {
            continue;
        };
        let samples = if q.samples.is_empty() {
            vec![q.y]
        } else {
            q.samples.clone()
        };
        let Some(Batches {
            median,
            verdict,
            ci95,
            ..
        }) = judge(&samples)
        else {
            continue;
        };
        let mut f = match kind {
            Kind::Latency => Figure::new(PROBE, id, name, median, FigureUnit::Us, Direction::Lower),
            // The median batch time is the median rate's batch (the rate
            // falls as the time grows), so the verdict carries over.
            Kind::Bandwidth(bytes) => Figure::new(
                PROBE,
                id,
                name,
                bytes / (median * 1e-6),
                FigureUnit::BytesPerSec,
                Direction::Higher,
            ),
        };
        f.verdict = verdict;
        f.ci95 = match kind {
            Kind::Latency => ci95,
            // A longer batch is a lower rate: the interval turns over.
            Kind::Bandwidth(bytes) => ci95.map(|[lo, hi]| [bytes / (hi * 1e-6), bytes / (lo * 1e-6)]),
        };
        if verdict == Verdict::Noisy {
            noisy.push(name.to_string());
        }
        figures.push(f);
    }
    if figures.is_empty() {
        return false;
    }
    let mut notes: Vec<Note> = Vec::new();
    if let Some(why) = clock_moved(p) {
        for f in &mut figures {
            f.verdict = Verdict::Noisy;
        }
        notes.push(Note::warning(
            PROBE,
            "clock",
            format!("os: {why}: every figure is slower by it; re-run on a quiet machine"),
        ));
    }
    if !noisy.is_empty() {
        notes.push(Note::warning(
            PROBE,
            "noisy",
            format!(
                "os: the batches of {} disagree by more than {:.0}%: interrupts or other tasks ran \
                 meanwhile; re-run on a quiet machine",
                noisy.join(", "),
                NOISY_IQR * 100.0
            ),
        ));
    }
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
        // A bandwidth is a rate: 64 KiB in 10 µs.
        p.raw.push(curve("pipe_bw", &[10.0, 10.1, 9.9, 10.0, 10.0]));
        assert!(reanalyze(&mut p));
        let bw = p.figures.iter().find(|f| f.id == "os.pipe_bw").unwrap();
        assert!((bw.value.unwrap() - 6.5536e9).abs() < 1e3, "{:?}", bw.value);
        assert_eq!((bw.unit, bw.better), (FigureUnit::BytesPerSec, Direction::Higher));
        p.raw.pop();
        assert!(reanalyze(&mut p));
        assert_eq!(
            p.figures.len(),
            2,
            "a re-analysis drops what is no longer measured"
        );
        assert!(p
            .notes
            .iter()
            .any(|n| n.code == "os.noisy" && n.text.contains("Pipe latency")));
        let before = (p.figures.clone(), p.notes.clone());
        assert!(reanalyze(&mut p));
        assert_eq!((p.figures.clone(), p.notes.clone()), before);
        assert!(!reanalyze(&mut Profile::default()));
    }

    #[test]
    fn a_slow_or_moving_core_makes_every_figure_noisy() {
        let clock = |before: f64, after: f64| RawCurve {
            id: CLOCK_CURVE.into(),
            points: vec![
                RawPoint {
                    x: 0.0,
                    y: before,
                    ..Default::default()
                },
                RawPoint {
                    x: 1.0,
                    y: after,
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let quiet = [0.16, 0.17, 0.16, 0.165, 0.16];
        let mut p = Profile {
            raw: vec![curve("null", &quiet), clock(3600.0, 3650.0)],
            ..Default::default()
        };
        assert!(reanalyze(&mut p));
        assert_eq!(p.figures[0].verdict, Verdict::Ok, "{:?}", p.notes);
        // The same run's clock probe read 40% more: the batches agree on a slow core.
        p.clock = Some(hwcal_model::ClockResult {
            core_mhz: 5100.0,
            ..Default::default()
        });
        assert!(reanalyze(&mut p));
        assert_eq!(p.figures[0].verdict, Verdict::Noisy);
        assert!(p
            .notes
            .iter()
            .any(|n| n.code == "os.clock" && n.text.contains("5100 MHz")));
        // Moving within the probe, with no clock probe to compare.
        p.clock = None;
        p.raw[1] = clock(3600.0, 2400.0);
        assert!(reanalyze(&mut p));
        assert_eq!(p.figures[0].verdict, Verdict::Noisy);
        assert_eq!(p.notes.iter().filter(|n| n.code == "os.clock").count(), 1);
    }
}
