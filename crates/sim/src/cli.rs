//! `hwcal sim`: the simulator's commands for the `hwcal` binary, which
//! stays a thin shell (it parses with [`SimArgs`] and prints what [`run`]
//! returns): the scorecard, one machine's calibrated profile, and the
//! models of recorded machines against their sweeps.

use crate::{calibration, corpus, score};
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};

/// `hwcal sim`'s arguments.
#[derive(Debug, Args)]
pub struct SimArgs {
    #[command(subcommand)]
    pub what: SimWhat,
}

/// What `hwcal sim` does.
#[derive(Debug, Subcommand)]
pub enum SimWhat {
    /// The scorecard: the corpus's simulated machines calibrated through the real analysis,
    /// each figure held to the model's truth; a Markdown table on stdout, and exit 1 if any
    /// figure is confidently wrong (off by more than its tolerance and marked ok). Without
    /// --generated, the documented corpus; with it, N generated machines (add --documented for
    /// both)
    Score {
        /// Every (corpus size / N)-th machine of the documented corpus only (N = 60: a few
        /// seconds)
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        sample: Option<u32>,
        /// Score N machines of the generated corpus (drawn from plausible ranges, machine
        /// (seed, i) for i in 0..N) instead of the documented one
        #[arg(long, value_name = "N")]
        generated: Option<usize>,
        /// The generated corpus's seed
        #[arg(long, value_name = "S", default_value_t = corpus::DEFAULT_SEED, requires = "generated")]
        seed: u64,
        /// With --generated: score the documented corpus (or its --sample) as well
        #[arg(long, requires = "generated")]
        documented: bool,
        /// Threads to score on (default: the CPUs this process may use)
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
        threads: Option<u32>,
    },
    /// Machine I of the corpus (any I: the corpus wraps), calibrated: its JSON profile on
    /// stdout, for `hwcal analyze`
    Profile {
        #[arg(value_name = "I")]
        index: usize,
        /// Machine I of the generated corpus of seed S instead
        #[arg(long, value_name = "S")]
        generated: Option<u64>,
    },
    /// Models of recorded profiles against their cache sweeps: where each edge falls,
    /// recorded and simulated, and how far the curves are apart (a Markdown table)
    Calibrate {
        #[arg(value_name = "PROFILE", required = true)]
        files: Vec<PathBuf>,
    },
}

/// What a command printed, and the failure to report after it (a
/// scorecard with a confidently wrong figure is printed, then fails).
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    pub text: String,
    pub failure: Option<String>,
}

/// Why a command printed nothing.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("{path}: {reason}")]
    File { path: String, reason: String },
    #[error("simulated machine {0}: {1}")]
    Machine(String, String),
}

/// Run `a`; `say` gets the progress lines (for stderr).
pub fn run(a: &SimArgs, say: &(dyn Fn(&str) + Sync)) -> Result<Output, SimError> {
    match &a.what {
        SimWhat::Score {
            sample,
            threads,
            generated,
            seed,
            documented,
        } => {
            let mut sources: Vec<score::Source> = Vec::new();
            if generated.is_none() || *documented {
                let len = corpus::len();
                let step = sample.map_or(1, |n| (len / (n as usize).min(len)).max(1));
                sources.extend((0..len).step_by(step).map(score::Source::Documented));
            }
            if let Some(n) = generated {
                sources.extend((0..*n).map(|i| score::Source::Generated(*seed, i)));
            }
            Ok(scorecard(&sources, *threads, say))
        }
        SimWhat::Profile { index, generated } => {
            let (model, _) = match generated {
                Some(seed) => corpus::generated(*seed, *index),
                None => corpus::machine(*index),
            };
            say(&format!("sim: {}", model.name));
            let p = score::calibrate(&model).map_err(|e| SimError::Machine(model.name.clone(), e))?;
            let text = serde_json::to_string(&p).map_err(|e| SimError::Machine(model.name, e.to_string()))?;
            Ok(Output {
                text: text + "\n",
                failure: None,
            })
        }
        SimWhat::Calibrate { files } => calibrate(files),
    }
}

fn scorecard(sources: &[score::Source], threads: Option<u32>, say: &(dyn Fn(&str) + Sync)) -> Output {
    let documented = sources
        .iter()
        .filter(|s| matches!(s, score::Source::Documented(_)))
        .count();
    let threads = threads.map_or_else(
        || std::thread::available_parallelism().map_or(2, |n| n.get()),
        |n| n as usize,
    );
    let n = sources.len();
    say(&format!(
        "sim: scoring {n} simulated machines ({documented} of the {} documented, {} generated) on {threads} threads",
        corpus::len(),
        n - documented
    ));
    let t0 = std::time::Instant::now();
    // A line at each tenth of the corpus: the whole takes a minute.
    let tenth = n.div_ceil(10).max(1);
    let card = score::score_sources(sources, threads, &|k| {
        if k.is_multiple_of(tenth) && k < n {
            say(&format!(
                "sim: {k} of {n} scored, {:.0} s",
                t0.elapsed().as_secs_f64()
            ));
        }
    });
    let secs = t0.elapsed().as_secs_f64();
    say(&format!("sim: done in {secs:.1} s"));
    let failure = match (card.wrong.len(), card.failed.len()) {
        (0, 0) => None,
        (w, f) => Some(format!(
            "{w} figure(s) confidently wrong, {f} machine(s) failed to calibrate (listed under the table)"
        )),
    };
    Output {
        text: format!(
            "{}\nScored in {secs:.1} s on {threads} threads.\n",
            card.markdown()
        ),
        failure,
    }
}

/// `calibrate FILE...`: each recorded profile's model against its sweep.
fn calibrate(files: &[PathBuf]) -> Result<Output, SimError> {
    let mut text = String::from(
        "| profile | model | edge: recorded → simulated half-way crossing (sweep steps apart) \
         | median / max point difference |\n|:---|:---|:---|---:|\n",
    );
    for f in files {
        let bad = |reason: String| SimError::File {
            path: f.display().to_string(),
            reason,
        };
        let bytes = std::fs::read(f).map_err(|e| bad(e.to_string()))?;
        let p = hwcal_model::parse_profile_unchecked(&bytes).map_err(bad)?;
        let c = calibration::calibrate(&p)
            .ok_or_else(|| bad("no cache levels, memory and sweep to model".into()))?;
        let kib = |x: f64| format!("{:.0} KiB", x / 1024.0);
        let edges: Vec<String> = c
            .edges
            .iter()
            .map(|(k, a, b, st)| format!("L{k} {} → {} ({st:.1})", kib(*a), kib(*b)))
            .collect();
        let name = Path::new(f)
            .file_name()
            .map_or_else(|| f.display().to_string(), |n| n.to_string_lossy().into_owned());
        let pages = match c.model.pages {
            crate::Pages::Huge => "huge".to_string(),
            crate::Pages::Base => format!("{} KiB", c.model.page / 1024),
        };
        text += &format!(
            "| {name} | {}, {pages} pages | {} | {:.1}% / {:.0}% |\n",
            c.model.core,
            edges.join("; "),
            100.0 * c.median_diff,
            100.0 * c.max_diff
        );
    }
    Ok(Output { text, failure: None })
}
