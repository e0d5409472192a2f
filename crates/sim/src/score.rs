//! The scorecard: machines of the corpus calibrated through the runner
//! (`hwcal_runner::calibrate`, the code `hwcal run` runs) and each figure
//! held to the model's truth. A figure is *right* within its tolerance,
//! *flagged* when it is off but its verdict says noisy, *missed* when the
//! analysis did not report it, and *confidently wrong* when it is off and
//! marked `ok` — the one outcome hwcal must never give.

use crate::corpus::{machine, Condition};
use crate::machine::Sim;
use crate::model::Model;
use hwcal_model::{Profile, Verdict};
use std::collections::BTreeMap;

/// Private cache sizes and TLB entries within ±12.5%, latencies ±5%,
/// memory ±10% (the tolerances).
pub const SIZE_TOLERANCE: f64 = 0.125;
pub const LATENCY_TOLERANCE: f64 = 0.05;
pub const MEMORY_TOLERANCE: f64 = 0.10;
/// Memory-level parallelism (the speedup of 16 chains) within ±12.5%.
pub const MLP_TOLERANCE: f64 = 0.125;

/// What became of one figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    Right,
    Flagged,
    Missed,
    ConfidentlyWrong,
}

/// One figure of one machine, judged.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    pub figure: String,
    pub truth: f64,
    pub got: Option<f64>,
    pub outcome: Outcome,
}

/// Calibrate the model's cache and TLB probes, as `hwcal run --only
/// cache,tlb` would on it.
pub fn calibrate(model: &Model) -> Result<Profile, String> {
    let ids = ["tlb".to_string(), "cache".to_string(), "mem".to_string()];
    let probes = hwcal_runner::select(hwcal_runner::probes(), &ids, &[]).map_err(|e| e.to_string())?;
    let config = hwcal_runner::RunConfig {
        probes: ids.to_vec(),
        ..Default::default()
    };
    let header = hwcal_runner::Header {
        command: format!("hwcal sim {}", model.name),
        started_unix: 0,
        pinned_cpu: Some(0),
    };
    let sim = Sim { model: model.clone() };
    hwcal_runner::calibrate(&sim, &config, &probes, header, &hwcal_runner::Silent).map_err(|e| e.to_string())
}

fn judge_one(figure: String, truth: f64, got: Option<(f64, Verdict)>, tolerance: f64) -> Judged {
    let outcome = match got {
        None => Outcome::Missed,
        Some((v, _)) if ((v - truth) / truth).abs() <= tolerance => Outcome::Right,
        Some((_, Verdict::Noisy)) => Outcome::Flagged,
        Some((_, Verdict::Ok)) => Outcome::ConfidentlyWrong,
    };
    Judged {
        figure,
        truth,
        got: got.map(|g| g.0),
        outcome,
    }
}

/// Every scored figure of a calibrated model.
pub fn judge(model: &Model, p: &Profile) -> Vec<Judged> {
    let mut out = Vec::new();
    let caches = p.caches.as_deref().unwrap_or(&[]);
    for (i, l) in model.private_levels() {
        let found = caches.iter().find(|c| c.level as usize == i + 1);
        let n = i + 1;
        out.push(judge_one(
            format!("L{n} size"),
            l.size as f64,
            found.map(|c| (c.size_bytes as f64, c.verdict)),
            SIZE_TOLERANCE,
        ));
        out.push(judge_one(
            format!("L{n} latency"),
            l.ns,
            found.map(|c| (c.latency_ns, c.verdict)),
            LATENCY_TOLERANCE,
        ));
        // The line exactly: 64 or 128 bytes, never near.
        out.push(judge_one(
            format!("L{n} line"),
            l.line as f64,
            found.and_then(|c| Some((c.line_bytes? as f64, c.verdict))),
            0.0,
        ));
        // Miss latency and replace time step from this level to the next
        // (or memory): each is a difference of two latencies, each held to
        // ±5%, so the step is held to 5% of the latency it steps to.
        let next = model
            .levels
            .get(i + 1)
            .map_or_else(|| model.memory_truth(l.size as f64 * 8.0), |n| n.ns);
        let tolerance = LATENCY_TOLERANCE * next / (next - l.ns);
        for (name, got) in [
            ("miss latency", found.and_then(|c| c.miss_latency_ns)),
            ("replace time", found.and_then(|c| c.replace_time_ns)),
        ] {
            out.push(judge_one(
                format!("L{n} {name}"),
                next - l.ns,
                got.zip(found.map(|c| c.verdict)),
                tolerance,
            ));
        }
    }
    let at = p.memory.as_ref().and_then(|m| m.size_bytes).map_or_else(
        || {
            let llc = model.levels.iter().map(|l| l.size).max().unwrap_or(1 << 20);
            hwcal_runner::cache::sweep_top(llc) as f64
        },
        |b| b as f64,
    );
    out.push(judge_one(
        "memory latency".into(),
        model.memory_truth(at),
        p.memory.as_ref().map(|m| (m.latency_ns, m.verdict)),
        MEMORY_TOLERANCE,
    ));
    let sixteen = p.memory.as_ref().and_then(|m| {
        let q = m.mlp.iter().find(|q| q.chains == 16)?;
        Some((q.speedup, m.verdict))
    });
    out.push(judge_one(
        "MLP (16 chains)".into(),
        model.mlp.min(16.0),
        sixteen,
        MLP_TOLERANCE,
    ));
    let tlbs = p.tlbs.as_deref().unwrap_or(&[]);
    for (i, t) in model.tlbs.iter().enumerate() {
        let found = tlbs
            .iter()
            .find(|l| l.page_bytes == model.page && l.level as usize == i + 1);
        out.push(judge_one(
            format!("TLB L{} entries", i + 1),
            t.entries as f64,
            found.map(|l| (l.entries as f64, l.verdict)),
            SIZE_TOLERANCE,
        ));
    }
    out
}

/// Counts of outcomes, per figure and condition.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scorecard {
    pub machines: usize,
    /// (figure, pages and condition: `4k quiet`) → counts of each
    /// [`Outcome`], in its order.
    pub rows: BTreeMap<(String, String), [usize; 4]>,
    /// Every confidently wrong figure: machine, figure, truth, reported.
    pub wrong: Vec<(String, String, f64, f64)>,
    /// Machines whose calibration failed, and why.
    pub failed: Vec<(String, String)>,
    /// Quiet machines, and those of them with every private level's size
    /// and latency and memory latency right (the bar: 95%).
    pub quiet: [usize; 2],
    /// The quiet machines not all right: machine, and its figures that
    /// were not (with their outcome).
    pub quiet_short: Vec<(String, Vec<String>)>,
}

/// The figures of a quiet machine that must all be right.
fn headline(figure: &str) -> bool {
    figure == "memory latency"
        || (figure.starts_with('L')
            && (figure.ends_with(" size") || figure.ends_with(" latency"))
            && !figure.contains("miss"))
}

impl Scorecard {
    fn add(&mut self, model: &Model, cond: Condition, judged: &[Judged]) {
        self.machines += 1;
        if cond == Condition::Quiet {
            self.quiet[0] += 1;
            let short: Vec<String> = judged
                .iter()
                .filter(|j| headline(&j.figure) && j.outcome != Outcome::Right)
                .map(|j| format!("{} {:?}", j.figure, j.outcome).to_lowercase())
                .collect();
            self.quiet[1] += usize::from(short.is_empty());
            if !short.is_empty() {
                self.quiet_short.push((model.name.clone(), short));
            }
        }
        for j in judged {
            let pages = match model.pages {
                crate::model::Pages::Base => format!("{}k", model.page / 1024),
                crate::model::Pages::Huge => "huge".into(),
            };
            let row = self
                .rows
                .entry((j.figure.clone(), format!("{pages} {}", cond.name())))
                .or_default();
            row[j.outcome as usize] += 1;
            if j.outcome == Outcome::ConfidentlyWrong {
                self.wrong.push((
                    model.name.clone(),
                    j.figure.clone(),
                    j.truth,
                    j.got.unwrap_or(f64::NAN),
                ));
            }
        }
    }

    /// The scorecard as a Markdown table, then every confidently wrong
    /// figure.
    pub fn markdown(&self) -> String {
        let mut by_figure: BTreeMap<&str, [usize; 4]> = BTreeMap::new();
        for ((fig, _), r) in &self.rows {
            let t = by_figure.entry(fig).or_default();
            for k in 0..4 {
                t[k] += r[k];
            }
        }
        let mut s = format!(
            "{} simulated machines\n\n| figure | right | flagged | missed | confidently wrong |\n\
             |:---|---:|---:|---:|---:|\n",
            self.machines
        );
        for (fig, [r, f, m, w]) in &by_figure {
            s += &format!("| {fig} | {r} | {f} | {m} | {w} |\n");
        }
        s += "\nBy base page (or huge pages) and condition:\n\n\
              | figure | pages, condition | right | flagged | missed | confidently wrong |\n\
              |:---|:---|---:|---:|---:|---:|\n";
        for ((fig, cond), [r, f, m, w]) in &self.rows {
            s += &format!("| {fig} | {cond} | {r} | {f} | {m} | {w} |\n");
        }
        let total: [usize; 4] = self.rows.values().fold([0; 4], |a, r| {
            [a[0] + r[0], a[1] + r[1], a[2] + r[2], a[3] + r[3]]
        });
        s += &format!(
            "| **all** | | {} | {} | {} | {} |\n",
            total[0], total[1], total[2], total[3]
        );
        let [q, r] = self.quiet;
        s += &format!(
            "\nQuiet machines with every private level's size and latency and memory latency right: \
             {r} of {q} ({:.0}%)\n",
            100.0 * r as f64 / q.max(1) as f64
        );
        let mut short = self.quiet_short.clone();
        short.sort();
        for (m, f) in &short {
            s += &format!("- {m}: {}\n", f.join(", "));
        }
        if !self.wrong.is_empty() {
            s += "\nConfidently wrong (machine: figure, truth → reported):\n\n";
            for (m, f, t, g) in &self.wrong {
                s += &format!("- {m}: {f}, {t:.4} → {g:.4}\n");
            }
        }
        for (m, why) in &self.failed {
            s += &format!("- {m}: calibration failed: {why}\n");
        }
        s
    }
}

/// Score the corpus's machines `indices`, on `threads` threads; `done` is
/// told how many machines are scored after each one.
pub fn score(indices: &[usize], threads: usize, done: &(dyn Fn(usize) + Sync)) -> Scorecard {
    let threads = threads.max(1);
    let count = std::sync::atomic::AtomicUsize::new(0);
    let count = &count;
    let results: Vec<(Model, Condition, Result<Vec<Judged>, String>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    indices
                        .iter()
                        .skip(t)
                        .step_by(threads)
                        .map(|&i| {
                            let (m, c) = machine(i);
                            let r = calibrate(&m).map(|p| judge(&m, &p));
                            done(count.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1);
                            (m, c, r)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    });
    let mut card = Scorecard::default();
    // A machine whose scoring thread panicked is a failure, not a machine
    // that was never in the sample.
    for &i in indices {
        let (m, _) = machine(i);
        if !results.iter().any(|(r, _, _)| r.name == m.name) {
            card.failed.push((m.name, "its scoring thread panicked".into()));
        }
    }
    for (m, c, r) in results {
        match r {
            Ok(j) => card.add(&m, c, &j),
            Err(e) => card.failed.push((m.name.clone(), e)),
        }
    }
    card.wrong.sort_by(|a, b| a.0.cmp(&b.0));
    card
}
