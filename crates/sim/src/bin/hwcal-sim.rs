//! `hwcal-sim score [--sample N]`: the scorecard of the analysis on the
//! simulated corpus (Markdown on stdout, progress on stderr).
#![forbid(unsafe_code)]

use std::process::ExitCode;

const USAGE: &str = "usage: hwcal-sim score [--sample N] [--threads N]\n       hwcal-sim profile I   (machine I of the corpus, calibrated: its JSON profile)\n\n\
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
