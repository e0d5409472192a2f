//! The scorecard: machines of the corpus calibrated through the runner
//! (`hwcal_runner::calibrate`, the code `hwcal run` runs) and each figure
//! held to the model's truth. A figure is *right* within its tolerance,
//! *flagged* when it is off but its verdict says noisy, *missed* when the
//! analysis did not report it, and *confidently wrong* when it is off and
//! marked `ok` — the one outcome hwcal must never give.

use crate::corpus::{generated, machine, Condition};
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
    /// One of the figures the quiet-machine bar holds: a private level's
    /// size or latency, memory latency.
    pub headline: bool,
    /// What the figure was (a phantom level's size, latency and verdict),
    /// where the numbers alone do not say.
    pub detail: String,
}

/// The probes the scorecard calibrates, as `hwcal run --only
/// tlb,cache,mem`: the runner's plans for each, the `mem` section's
/// dedicated chase included (the consistency stage may take it as the
/// headline memory figure; [`judge`] holds a `mem chase` headline to the
/// truth at that chase's own footprint).
pub const SECTIONS: &[&str] = &["tlb", "cache", "mem"];

/// Calibrate the model's [`SECTIONS`], as `hwcal run --only` them would
/// on it.
pub fn calibrate(model: &Model) -> Result<Profile, String> {
    calibrate_sections(model, SECTIONS)
}

/// Calibrate the model's probes `sections` (runner probe ids).
pub fn calibrate_sections(model: &Model, sections: &[&str]) -> Result<Profile, String> {
    calibrate_timed(model, sections).map(|(p, _)| p)
}

/// [`calibrate_sections`], and the seconds of virtual time the run took
/// (the span over which a drifting memory moved while it was measured).
pub fn calibrate_timed(model: &Model, sections: &[&str]) -> Result<(Profile, f64), String> {
    let ids: Vec<String> = sections.iter().map(|s| s.to_string()).collect();
    let probes = hwcal_runner::select(hwcal_runner::probes(), &ids, &[]).map_err(|e| e.to_string())?;
    let config = hwcal_runner::RunConfig {
        probes: ids.clone(),
        ..Default::default()
    };
    let header = hwcal_runner::Header {
        command: format!("hwcal sim {}", model.name),
        started_unix: 0,
        pinned_cpu: Some(0),
    };
    let sim = Sim::new(model.clone());
    let p = hwcal_runner::calibrate(&sim, &config, &probes, header, &hwcal_runner::Silent)
        .map_err(|e| e.to_string())?;
    Ok((p, sim.elapsed_s()))
}

fn judge_one(figure: String, truth: f64, got: Option<(f64, Verdict)>, tolerance: f64) -> Judged {
    judge_range(figure, (truth, truth), got, tolerance)
}

/// Right when within `tolerance` of some truth in `lo..=hi` (the figure
/// is a median over footprints whose truths differ); `truth` says `hi`.
fn judge_range(figure: String, (lo, hi): (f64, f64), got: Option<(f64, Verdict)>, tolerance: f64) -> Judged {
    let outcome = match got {
        None => Outcome::Missed,
        Some((v, _)) if v >= lo - tolerance * lo.abs() && v <= hi + tolerance * hi.abs() => Outcome::Right,
        Some((_, Verdict::Noisy)) => Outcome::Flagged,
        Some((_, Verdict::Ok)) => Outcome::ConfidentlyWrong,
    };
    Judged {
        figure,
        truth: hi,
        got: got.map(|g| g.0),
        outcome,
        headline: false,
        detail: String::new(),
    }
}

/// An unmatched item costs this in [`align`]: a match costing more than
/// two of them (a factor of 9 apart in one figure) is a miss and a phantom.
const GAP: f64 = 1.0986; // ln 3

/// The order-preserving alignment of `nt` true items with `ng` reported
/// ones that minimises the summed `cost` of the pairs plus [`GAP`] for
/// each item left unpaired on either side: for each true item, the
/// reported one paired with it.
fn align(nt: usize, ng: usize, cost: impl Fn(usize, usize) -> f64) -> Vec<Option<usize>> {
    // best[i][j]: the cost of aligning the first i true and j reported.
    let mut best = vec![vec![0.0f64; ng + 1]; nt + 1];
    for i in 0..=nt {
        for j in 0..=ng {
            best[i][j] = match (i, j) {
                (0, _) | (_, 0) => (i + j) as f64 * GAP,
                _ => (best[i - 1][j - 1] + cost(i - 1, j - 1))
                    .min(best[i - 1][j] + GAP)
                    .min(best[i][j - 1] + GAP),
            };
        }
    }
    let mut out = vec![None; nt];
    let (mut i, mut j) = (nt, ng);
    while i > 0 && j > 0 {
        if (best[i][j] - (best[i - 1][j - 1] + cost(i - 1, j - 1))).abs() < 1e-12 {
            out[i - 1] = Some(j - 1);
            i -= 1;
            j -= 1;
        } else if (best[i][j] - (best[i - 1][j] + GAP)).abs() < 1e-12 {
            i -= 1;
        } else {
            j -= 1;
        }
    }
    out
}

fn ln_ratio(a: f64, b: f64) -> f64 {
    if a > 0.0 && b > 0.0 {
        (a / b).ln().abs()
    } else {
        f64::INFINITY
    }
}

/// The level-count figure: right when every true level was paired and
/// nothing else reported; with phantoms (reported levels paired with no
/// true one) confidently wrong if any is `ok`, else flagged; without
/// phantoms but with a level unpaired, missed.
fn level_count(
    figure: &str,
    truth: usize,
    pairs: &[Option<usize>],
    reported: &[(String, Verdict)],
) -> Judged {
    let phantoms: Vec<&(String, Verdict)> = reported
        .iter()
        .enumerate()
        .filter(|(j, _)| !pairs.contains(&Some(*j)))
        .map(|(_, r)| r)
        .collect();
    let outcome = if phantoms.iter().any(|p| p.1 == Verdict::Ok) {
        Outcome::ConfidentlyWrong
    } else if !phantoms.is_empty() {
        Outcome::Flagged
    } else if pairs.iter().any(Option::is_none) {
        Outcome::Missed
    } else {
        Outcome::Right
    };
    Judged {
        figure: figure.into(),
        truth: truth as f64,
        got: Some(reported.len() as f64),
        outcome,
        headline: false,
        detail: phantoms
            .iter()
            .map(|(d, v)| format!("phantom {d} {}", if *v == Verdict::Ok { "ok" } else { "noisy" }))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// Every scored figure of a calibrated model.
///
/// - Cache levels: the reported levels are paired with the model's in
///   order by latency and size ([`align`]; a shared level's size weighs
///   half, its share being no fixed figure), so a phantom between two
///   levels does not shift the rest. A private level: size (±12.5%),
///   latency (±5%), line (exact), miss latency and replace time (5% of the
///   latency they step to). A shared level: latency, and that it was found
///   (`L{n} latency (shared)` missed otherwise). `cache levels`: the count,
///   right only with every level paired and no phantom; a phantom marked
///   `ok` is confidently wrong, one marked noisy flagged.
/// - Memory latency (±10%) against the model's truth at the footprint of
///   the measurement the headline came from: a `mem chase` at its own
///   size; the sweep's plateau (a median over its far points) anywhere
///   between an eighth of its largest point and that point.
/// - MLP at 16 chains (±12.5%).
/// - TLB levels of the base page: paired with the model's by entries
///   ([`align`] on log entries), each true level's entries (±12.5%), and
///   `TLB levels` as `cache levels`.
///
/// Memory that does not drift; see [`judge_over`].
pub fn judge(model: &Model, p: &Profile) -> Vec<Judged> {
    judge_over(model, p, 0.0)
}

/// [`judge`] for a run that took `span_s` seconds of virtual time: a
/// drifting memory (`guest::memory_ns_at`) is right at the latency it had
/// at any moment of the run — its floor when the neighbour rested, more
/// while it did not — since that is the memory the run measured; no
/// figure outside what memory was during the run is right.
pub fn judge_over(model: &Model, p: &Profile, span_s: f64) -> Vec<Judged> {
    let mut out = Vec::new();
    let caches = p.caches.as_deref().unwrap_or(&[]);
    let pairs = align(model.levels.len(), caches.len(), |i, j| {
        let (t, g) = (&model.levels[i], &caches[j]);
        let size = ln_ratio(g.size_bytes as f64, t.size as f64);
        ln_ratio(g.latency_ns, t.ns) + if t.shared { 0.5 * size } else { size }
    });
    for (i, l) in model.levels.iter().enumerate() {
        let found = pairs[i].map(|j| &caches[j]);
        let n = i + 1;
        if l.shared {
            out.push(judge_one(
                format!("L{n} latency (shared)"),
                l.ns,
                found.map(|c| (c.latency_ns, c.verdict)),
                LATENCY_TOLERANCE,
            ));
            continue;
        }
        out.push(Judged {
            headline: true,
            ..judge_one(
                format!("L{n} size"),
                l.size as f64,
                found.map(|c| (c.size_bytes as f64, c.verdict)),
                SIZE_TOLERANCE,
            )
        });
        out.push(Judged {
            headline: true,
            ..judge_one(
                format!("L{n} latency"),
                l.ns,
                found.map(|c| (c.latency_ns, c.verdict)),
                LATENCY_TOLERANCE,
            )
        });
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
        let next = model.levels.get(i + 1).map_or_else(
            || crate::guest::memory_truth(model, l.size as f64 * 8.0),
            |n| n.ns,
        );
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
    let reported: Vec<(String, Verdict)> = caches
        .iter()
        .map(|c| {
            (
                format!(
                    "L{} {} {:.1} ns",
                    c.level,
                    hwcal_model::human_bytes(c.size_bytes),
                    c.latency_ns
                ),
                c.verdict,
            )
        })
        .collect();
    out.push(level_count("cache levels", model.levels.len(), &pairs, &reported));
    let memory = p.memory.as_ref();
    let from_chase =
        memory.and_then(|m| m.source.as_deref()) == Some(hwcal_analysis::consistency::MEM_SOURCE);
    let at = memory.and_then(|m| m.size_bytes).map_or_else(
        || {
            let llc = model.levels.iter().map(|l| l.size).max().unwrap_or(1 << 20);
            hwcal_runner::cache::sweep_top(llc) as f64
        },
        |b| b as f64,
    );
    let truth = if from_chase {
        (
            crate::guest::memory_truth(model, at),
            crate::guest::memory_truth(model, at),
        )
    } else {
        (
            crate::guest::memory_truth(model, at / 8.0),
            crate::guest::memory_truth(model, at),
        )
    };
    let (lo, hi) = (truth.0.min(truth.1), truth.0.max(truth.1));
    // What the drift added at most while the run measured.
    let steps = (span_s / 0.05).ceil().max(0.0) as usize;
    let drift = (0..=steps)
        .map(|k| crate::guest::memory_ns_at(model, k as f64 * 0.05) - model.memory_ns)
        .fold(0.0, f64::max);
    let hi = hi + drift;
    out.push(Judged {
        headline: true,
        detail: format!(
            "{} at {}",
            memory
                .and_then(|m| m.source.clone())
                .unwrap_or_else(|| "cache sweep".into()),
            hwcal_model::human_bytes(at as u64)
        ),
        ..judge_range(
            "memory latency".into(),
            (lo, hi),
            memory.map(|m| (m.latency_ns, m.verdict)),
            MEMORY_TOLERANCE,
        )
    });
    let sixteen = memory.and_then(|m| {
        let q = m.mlp.iter().find(|q| q.chains == 16)?;
        Some((q.speedup, q.verdict.unwrap_or(m.verdict)))
    });
    out.push(judge_one(
        "MLP (16 chains)".into(),
        model.mlp.min(16.0),
        sixteen,
        MLP_TOLERANCE,
    ));
    let tlbs: Vec<&hwcal_model::TlbLevel> = p
        .tlbs
        .iter()
        .flatten()
        .filter(|l| l.page_bytes == model.page)
        .collect();
    let pairs = align(model.tlbs.len(), tlbs.len(), |i, j| {
        ln_ratio(tlbs[j].entries as f64, model.tlbs[i].entries as f64)
    });
    for (i, t) in model.tlbs.iter().enumerate() {
        let found = pairs[i].map(|j| tlbs[j]);
        out.push(judge_one(
            format!("TLB L{} entries", i + 1),
            t.entries as f64,
            found.map(|l| (l.entries as f64, l.verdict)),
            SIZE_TOLERANCE,
        ));
    }
    let reported: Vec<(String, Verdict)> = tlbs
        .iter()
        .map(|l| (format!("TLB L{} {} entries", l.level, l.entries), l.verdict))
        .collect();
    out.push(level_count("TLB levels", model.tlbs.len(), &pairs, &reported));
    out
}

/// A machine's shape, for the scorecard's summaries: its cache levels, its
/// pages and what its guest does (`3L 4k tlb-wrong+pte`; `plain` where the
/// guest is the bare model).
pub fn shape(model: &Model) -> String {
    use crate::model::{Sysfs, Thp};
    let g = &model.guest;
    let mut tags: Vec<&str> = Vec::new();
    match g.sysfs {
        Sysfs::Truth => {}
        Sysfs::SharedAtNominal { .. } => tags.push("sysfs-whole-l3"),
        Sysfs::TlbMasked => tags.push("tlb-masked"),
        Sysfs::TlbWrong { .. } => tags.push("tlb-wrong"),
        Sysfs::Absent => tags.push("sysfs-absent"),
        Sysfs::CpuModel { .. } => tags.push("sysfs-cpu-model-l2"),
    }
    if g.page_tables_cached && model.pages == crate::model::Pages::Base {
        tags.push(if g.host_base_pages { "pte-nested" } else { "pte" });
    }
    if g.drift > 0.0 {
        tags.push("drift");
    }
    if g.thp == Thp::Never {
        tags.push("thp-never");
    }
    format!(
        "{}L {} {}",
        model.levels.len(),
        pages_name(model),
        if tags.is_empty() {
            "plain".to_string()
        } else {
            tags.join("+")
        }
    )
}

/// The facets a machine is counted under in the scorecard's summary by
/// facet: its structure (`structure: 3L 4k`), each thing its guest does
/// (`guest: pte-nested`, or `guest: plain`), its noise (`noise: quiet`),
/// each level's replacement (`L2 replacement: Random`), its line
/// (`line: 128 B`) — so a kind of machine the analysis gets wrong shows up
/// whatever else it is.
pub fn facets(model: &Model, cond: Condition) -> Vec<String> {
    let shape = shape(model);
    let mut parts = shape.splitn(3, ' ');
    let levels = parts.next().unwrap_or("");
    let pages = parts.next().unwrap_or("");
    let mut out = vec![format!("structure: {levels} {pages}")];
    out.extend(
        parts
            .next()
            .unwrap_or("plain")
            .split('+')
            .map(|t| format!("guest: {t}")),
    );
    out.push(format!("noise: {}", cond.name()));
    for (k, l) in model.levels.iter().enumerate() {
        out.push(format!("L{} replacement: {:?}", k + 1, l.replacement));
    }
    if model.levels.len() >= 3 {
        out.push(format!(
            "L3: {}",
            if model.levels[2].victim {
                "victim"
            } else {
                "inclusive"
            }
        ));
    }
    out.push(format!("line: {} B", model.levels.first().map_or(64, |l| l.line)));
    out
}

fn pages_name(model: &Model) -> String {
    match model.pages {
        crate::model::Pages::Base => format!("{}k", model.page / 1024),
        crate::model::Pages::Huge => "huge".into(),
    }
}

/// One shape's (or facet's) machines in the scorecard.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ShapeRow {
    pub machines: usize,
    /// Quiet machines, and those with every private level and memory right.
    pub quiet: [usize; 2],
    /// Machines with a confidently wrong figure, and how many such figures.
    pub wrong_machines: usize,
    pub wrong_figures: usize,
}

impl ShapeRow {
    fn add(&mut self, cond: Condition, wrong: usize, right: usize) {
        self.machines += 1;
        self.wrong_figures += wrong;
        self.wrong_machines += usize::from(wrong > 0);
        if cond.is_quiet() {
            self.quiet[0] += 1;
            self.quiet[1] += right;
        }
    }
}

/// Counts of outcomes, per figure and condition.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scorecard {
    pub machines: usize,
    /// (figure, pages and condition: `4k quiet`) → counts of each
    /// [`Outcome`], in its order.
    pub rows: BTreeMap<(String, String), [usize; 4]>,
    /// Every confidently wrong figure: machine, figure, truth, reported
    /// (the figure with its detail, where it has one).
    pub wrong: Vec<(String, String, f64, f64)>,
    /// Machines whose calibration failed, and why.
    pub failed: Vec<(String, String)>,
    /// Quiet machines ([`Condition::is_quiet`]), and those of them with
    /// every private level's size and latency and memory latency right
    /// (the bar: 95%); a missed figure counts against it.
    pub quiet: [usize; 2],
    /// The same on 4 KiB base pages (the bar: 90%).
    pub quiet_4k: [usize; 2],
    /// The quiet machines not all right: machine, and its figures that
    /// were not (with their outcome).
    pub quiet_short: Vec<(String, Vec<String>)>,
    /// Per [`shape`].
    pub shapes: BTreeMap<String, ShapeRow>,
    /// Per facet ([`facets`]): a machine counts under each of its facets.
    pub facets: BTreeMap<String, ShapeRow>,
    /// Confidently wrong figures per shape: shape → (machine, figure).
    pub wrong_by_shape: BTreeMap<String, Vec<(String, String)>>,
}

impl Scorecard {
    fn add(&mut self, model: &Model, cond: Condition, judged: &[Judged]) {
        self.machines += 1;
        let shape = shape(model);
        let wrong = judged
            .iter()
            .filter(|j| j.outcome == Outcome::ConfidentlyWrong)
            .count();
        let short: Vec<String> = judged
            .iter()
            .filter(|j| j.headline && j.outcome != Outcome::Right)
            .map(|j| format!("{} {:?}", j.figure, j.outcome).to_lowercase())
            .collect();
        let right = usize::from(short.is_empty());
        self.shapes
            .entry(shape.clone())
            .or_default()
            .add(cond, wrong, right);
        for f in facets(model, cond) {
            self.facets.entry(f).or_default().add(cond, wrong, right);
        }
        if cond.is_quiet() {
            self.quiet[0] += 1;
            self.quiet[1] += right;
            if model.pages == crate::model::Pages::Base && model.page == 4096 {
                self.quiet_4k[0] += 1;
                self.quiet_4k[1] += right;
            }
            if !short.is_empty() {
                self.quiet_short.push((model.name.clone(), short));
            }
        }
        for j in judged {
            let row = self
                .rows
                .entry((j.figure.clone(), format!("{} {}", pages_name(model), cond.name())))
                .or_default();
            row[j.outcome as usize] += 1;
            if j.outcome == Outcome::ConfidentlyWrong {
                let figure = if j.detail.is_empty() {
                    j.figure.clone()
                } else {
                    format!("{} ({})", j.figure, j.detail)
                };
                self.wrong.push((
                    model.name.clone(),
                    figure.clone(),
                    j.truth,
                    j.got.unwrap_or(f64::NAN),
                ));
                self.wrong_by_shape
                    .entry(shape.clone())
                    .or_default()
                    .push((model.name.clone(), j.figure.clone()));
            }
        }
    }

    /// The bar's two lines: quiet machines with every private level and
    /// memory right, overall and on 4 KiB base pages.
    pub fn bar(&self) -> String {
        let pct = |[q, r]: [usize; 2]| 100.0 * r as f64 / q.max(1) as f64;
        format!(
            "Quiet machines with every private level's size and latency and memory latency right: \
             {} of {} ({:.1}%; the bar: 95%)\n\
             On 4 KiB base pages: {} of {} ({:.1}%; the bar: 90%)\n",
            self.quiet[1],
            self.quiet[0],
            pct(self.quiet),
            self.quiet_4k[1],
            self.quiet_4k[0],
            pct(self.quiet_4k)
        )
    }

    /// The scorecard as a Markdown table, then the bar, the shapes, the
    /// quiet machines short of it and every confidently wrong figure.
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
        s += "\n";
        s += &self.bar();
        let table = |title: &str, rows: &BTreeMap<String, ShapeRow>| {
            let mut t = format!(
                "\n{title}:\n\n\
                 | shape | machines | quiet all right | machines confidently wrong | figures |\n\
                 |:---|---:|---:|---:|---:|\n"
            );
            for (shape, r) in rows {
                t += &format!(
                    "| {shape} | {} | {} of {} | {} | {} |\n",
                    r.machines, r.quiet[1], r.quiet[0], r.wrong_machines, r.wrong_figures
                );
            }
            t
        };
        s += &table(
            "By facet (a machine counts under each of its facets)",
            &self.facets,
        );
        s += &table(
            "By shape (cache levels, pages, what the guest does)",
            &self.shapes,
        );
        let mut short = self.quiet_short.clone();
        short.sort();
        if !short.is_empty() {
            s += "\nQuiet machines short of the bar:\n\n";
        }
        for (m, f) in &short {
            s += &format!("- {m}: {}\n", f.join(", "));
        }
        if !self.wrong_by_shape.is_empty() {
            s += "\nConfidently wrong by shape (machines; figures):\n\n";
            for (shape, list) in &self.wrong_by_shape {
                let mut machines: Vec<&str> = list.iter().map(|(m, _)| m.as_str()).collect();
                machines.dedup();
                let mut figs: BTreeMap<&str, usize> = BTreeMap::new();
                for (_, f) in list {
                    *figs.entry(f).or_default() += 1;
                }
                let figs: Vec<String> = figs.iter().map(|(f, n)| format!("{f} ×{n}")).collect();
                s += &format!("- {shape}: {} machines; {}\n", machines.len(), figs.join(", "));
            }
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

/// Where a scored machine comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The documented corpus's machine `i` ([`crate::corpus::machine`]).
    Documented(usize),
    /// The generated corpus's machine (seed, index)
    /// ([`crate::corpus::generated`]).
    Generated(u64, usize),
}

impl Source {
    pub fn build(self) -> (Model, Condition) {
        match self {
            Source::Documented(i) => machine(i),
            Source::Generated(seed, i) => generated(seed, i),
        }
    }
}

/// Score the documented corpus's machines `indices`, on `threads` threads;
/// `done` is told how many machines are scored after each one.
pub fn score(indices: &[usize], threads: usize, done: &(dyn Fn(usize) + Sync)) -> Scorecard {
    let sources: Vec<Source> = indices.iter().map(|&i| Source::Documented(i)).collect();
    score_sources(&sources, threads, done)
}

/// Score the generated corpus's machines `0..count` of `seed`.
pub fn score_generated(seed: u64, count: usize, threads: usize, done: &(dyn Fn(usize) + Sync)) -> Scorecard {
    let sources: Vec<Source> = (0..count).map(|i| Source::Generated(seed, i)).collect();
    score_sources(&sources, threads, done)
}

/// Score any machines, on `threads` threads.
pub fn score_sources(sources: &[Source], threads: usize, done: &(dyn Fn(usize) + Sync)) -> Scorecard {
    let threads = threads.max(1);
    let count = std::sync::atomic::AtomicUsize::new(0);
    let count = &count;
    type Scored = (usize, Model, Condition, Result<Vec<Judged>, String>);
    // Each thread takes the next machine as it is free: the machines'
    // costs differ by a hundred times (a 512 MiB L4 on 4 KiB pages).
    let next = std::sync::atomic::AtomicUsize::new(0);
    let next = &next;
    let mut results: Vec<Scored> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(move || {
                    let mut out = Vec::new();
                    loop {
                        let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(src) = sources.get(k) else { break };
                        let (m, c) = src.build();
                        let r = calibrate_timed(&m, SECTIONS).map(|(p, t)| judge_over(&m, &p, t));
                        done(count.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1);
                        out.push((k, m, c, r));
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    });
    results.sort_by_key(|r| r.0);
    let mut card = Scorecard::default();
    // A machine whose scoring thread panicked is a failure, not a machine
    // that was never in the sample.
    for (k, src) in sources.iter().enumerate() {
        if results.binary_search_by_key(&k, |r| r.0).is_err() {
            card.failed
                .push((src.build().0.name, "its scoring thread panicked".into()));
        }
    }
    for (_, m, c, r) in results {
        match r {
            Ok(j) => card.add(&m, c, &j),
            Err(e) => card.failed.push((m.name.clone(), e)),
        }
    }
    card.wrong.sort_by(|a, b| a.0.cmp(&b.0));
    card
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alignment_pairs_in_order_and_leaves_phantoms_out() {
        fn cost(g: &[f64]) -> impl Fn(usize, usize) -> f64 + '_ {
            move |i: usize, j: usize| ln_ratio(g[j], [1.0f64, 4.0, 40.0][i])
        }
        // A phantom between L2 and L3.
        let g = [1.0, 4.1, 7.0, 41.0];
        assert_eq!(align(3, 4, cost(&g)), vec![Some(0), Some(1), Some(3)]);
        // L3 missed.
        let g = [1.0, 4.1];
        assert_eq!(align(3, 2, cost(&g)), vec![Some(0), Some(1), None]);
        // A level off by a factor of 2 is still that level (and wrong).
        let g = [1.0, 8.0, 40.0];
        assert_eq!(align(3, 3, cost(&g)), vec![Some(0), Some(1), Some(2)]);
        assert_eq!(align(0, 2, cost(&g)), Vec::<Option<usize>>::new());
    }

    #[test]
    fn a_phantom_marked_ok_is_confidently_wrong_and_one_marked_noisy_flagged() {
        let rep = |v| vec![("a".to_string(), Verdict::Ok), ("b".to_string(), v)];
        let j = level_count("cache levels", 1, &[Some(0)], &rep(Verdict::Ok));
        assert_eq!(j.outcome, Outcome::ConfidentlyWrong);
        assert!(j.detail.contains("phantom b ok"), "{}", j.detail);
        let j = level_count("cache levels", 1, &[Some(0)], &rep(Verdict::Noisy));
        assert_eq!(j.outcome, Outcome::Flagged);
        let j = level_count("cache levels", 2, &[Some(0), Some(1)], &rep(Verdict::Ok));
        assert_eq!(j.outcome, Outcome::Right);
        let j = level_count("cache levels", 3, &[Some(0), None, Some(1)], &rep(Verdict::Ok));
        assert_eq!(j.outcome, Outcome::Missed);
    }

    #[test]
    fn a_sweep_figure_is_right_anywhere_on_its_plateaus_truths() {
        let j = judge_range("m".into(), (100.0, 120.0), Some((95.0, Verdict::Ok)), 0.1);
        assert_eq!(j.outcome, Outcome::Right);
        let j = judge_range("m".into(), (100.0, 120.0), Some((131.0, Verdict::Ok)), 0.1);
        assert_eq!(j.outcome, Outcome::Right);
        let j = judge_range("m".into(), (100.0, 120.0), Some((133.0, Verdict::Noisy)), 0.05);
        assert_eq!(j.outcome, Outcome::Flagged);
        let j = judge_range("m".into(), (100.0, 120.0), Some((85.0, Verdict::Ok)), 0.1);
        assert_eq!(j.outcome, Outcome::ConfidentlyWrong);
    }

    #[test]
    fn memory_is_held_at_the_footprint_of_the_measurement_the_headline_came_from() {
        // A 4 KiB-page machine whose walks spill the caches: the truth climbs
        // with the footprint.
        let (mut m, _) = crate::corpus::machine(0);
        m.guest.page_tables_cached = true;
        m.guest.host_base_pages = true;
        assert_eq!(m.pages, crate::model::Pages::Base, "{}", m.name);
        let gib = (1u64 << 30) as f64;
        let (small, big) = (
            crate::guest::memory_truth(&m, 64.0 * 1048576.0),
            crate::guest::memory_truth(&m, 4.0 * gib),
        );
        assert!(big > small * 1.15, "{small} {big}");
        let memory = |source: &str, size: f64, ns: f64| Profile {
            memory: Some(hwcal_model::MemoryLatency {
                latency_ns: ns,
                source: Some(source.into()),
                size_bytes: Some(size as u64),
                verdict: Verdict::Ok,
                ..Default::default()
            }),
            ..Default::default()
        };
        let outcome = |p: &Profile| {
            judge(&m, p)
                .into_iter()
                .find(|j| j.figure == "memory latency")
                .map(|j| (j.outcome, j.truth))
                .unwrap()
        };
        let chase = hwcal_analysis::consistency::MEM_SOURCE;
        // The mem chase at 4 GiB reads the truth at 4 GiB.
        assert_eq!(outcome(&memory(chase, 4.0 * gib, big)), (Outcome::Right, big));
        // The same chase figure read at 64 MiB's truth is wrong.
        assert_eq!(
            outcome(&memory(chase, 4.0 * gib, small)).0,
            Outcome::ConfidentlyWrong
        );
        // The sweep's plateau, a median over its far points: anywhere from
        // an eighth of its largest point up.
        let eighth = crate::guest::memory_truth(&m, gib / 2.0);
        assert_eq!(
            outcome(&memory("cache sweep", 4.0 * gib, eighth)).0,
            Outcome::Right
        );
        assert_eq!(
            outcome(&memory("cache sweep", 4.0 * gib, small)).0,
            Outcome::ConfidentlyWrong
        );
    }
}
