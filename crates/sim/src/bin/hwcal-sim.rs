//! `hwcal-sim score [--sample N]`: the scorecard of the analysis on the
//! simulated corpus (Markdown on stdout, progress on stderr).
#![forbid(unsafe_code)]

use std::process::ExitCode;

const USAGE: &str = "usage: hwcal-sim score [--sample N] [--threads N]\n       hwcal-sim profile I   (machine I of the corpus, calibrated: its JSON profile)\n       hwcal-sim calibrate PROFILE.json...   (the model of a recorded machine against its sweep)\n\n\
  Calibrates the simulated corpus (hwcal_sim::corpus) through the real analysis\n\
  and prints, per figure and condition, how often it is right, flagged, missed\n\
  or confidently wrong. --sample N: every (len/N)-th machine only.\n\
  Exit codes: 0 no figure confidently wrong, 1 some, 2 usage.";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let (Some("profile"), Some(Ok(i))) = (
        args.first().map(String::as_str),
        args.get(1).map(|a| a.parse::<usize>()),
    ) {
        let (model, _) = hwcal_sim::corpus::machine(i);
        eprintln!("hwcal-sim: {}", model.name);
        return match hwcal_sim::score::calibrate(&model) {
            Ok(p) => {
                println!("{}", serde_json::to_string(&p).unwrap_or_default());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("hwcal-sim: {e}");
                ExitCode::from(1)
            }
        };
    }
    if args.first().map(String::as_str) == Some("calibrate") && args.len() > 1 {
        return calibrate(&args[1..]);
    }
    if args.first().map(String::as_str) != Some("score") {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    }
    let mut sample = None;
    let mut threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut it = args[1..].iter();
    while let Some(a) = it.next() {
        let n = it.next().and_then(|v| v.parse::<usize>().ok().filter(|&n| n > 0));
        match (a.as_str(), n) {
            ("--sample", Some(n)) => sample = Some(n),
            ("--threads", Some(n)) => threads = n,
            _ => {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let len = hwcal_sim::corpus::len();
    let step = sample.map_or(1, |n| (len / n.min(len)).max(1));
    let indices: Vec<usize> = (0..len).step_by(step).collect();
    eprintln!(
        "hwcal-sim: scoring {} of {len} simulated machines on {threads} threads",
        indices.len()
    );
    let t0 = std::time::Instant::now();
    let card = hwcal_sim::score::score(&indices, threads);
    eprintln!("hwcal-sim: done in {:.1} s", t0.elapsed().as_secs_f64());
    print!("{}", card.markdown());
    if card.wrong.is_empty() && card.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// `calibrate FILE...`: each recorded profile's model against its sweep.
fn calibrate(files: &[String]) -> ExitCode {
    println!("| profile | model | edge: recorded → simulated half-way crossing (sweep steps apart) | median / max point difference |");
    println!("|:---|:---|:---|---:|");
    for f in files {
        let p = match std::fs::read(f)
            .map_err(|e| e.to_string())
            .and_then(|b| hwcal_model::parse_profile_unchecked(&b))
        {
            Ok(p) => p,
            Err(e) => {
                eprintln!("hwcal-sim: {f}: {e}");
                return ExitCode::from(1);
            }
        };
        let Some(c) = hwcal_sim::calibration::calibrate(&p) else {
            eprintln!("hwcal-sim: {f}: no cache levels, memory and sweep to model");
            return ExitCode::from(1);
        };
        let kib = |x: f64| format!("{:.0} KiB", x / 1024.0);
        let edges: Vec<String> = c
            .edges
            .iter()
            .map(|(k, a, b, st)| format!("L{k} {} → {} ({st:.1})", kib(*a), kib(*b)))
            .collect();
        let name = std::path::Path::new(f)
            .file_name()
            .map_or(f.clone(), |n| n.to_string_lossy().into_owned());
        let pages = if c.model.pages == hwcal_sim::Pages::Huge {
            "huge"
        } else {
            "4 KiB"
        };
        println!(
            "| {name} | {}, {pages} pages | {} | {:.1}% / {:.0}% |",
            c.model.core,
            edges.join("; "),
            100.0 * c.median_diff,
            100.0 * c.max_diff
        );
    }
    ExitCode::SUCCESS
}
