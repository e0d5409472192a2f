//! `hwcal validate`: accuracy shown by measurement, not asserted in tests.
//!
//! `validate clock` runs the clock probe several times in a row and, right
//! before and after each run, a long independent reference: back-to-back
//! 100 µs dependent-add blocks for `--reference-ms` (short enough that most
//! blocks see no timer interrupt; an interrupted block reads low). A run
//! passes when its two methods agree within 1% and its core MHz lies inside
//! the reference's range, taken as its 10th percentile to its maximum over
//! the before and after windows (the low tail is interrupted blocks): the
//! clock drifts, so a figure outside what the core actually ran at moments
//! before and after would be wrong.

use crate::cli::{ValidateArgs, ValidateWhat};
use crate::common::{pin, Progress};
use anyhow::{Context, Result};
use hwcal_harness::{clockref, stats, Timer};

/// 100 µs chain readings for `ms` milliseconds; returns the MHz readings.
fn reference(timer: &Timer, ms: u64) -> Vec<f64> {
    let start = Timer::wall_ns();
    let mut v = Vec::new();
    while Timer::wall_ns() - start < ms * 1_000_000 {
        let (_, mhz) = clockref::time_chain(timer, 2_500);
        v.push(mhz);
    }
    v
}

pub fn run(a: ValidateArgs) -> Result<()> {
    if !a.files.is_empty() && !matches!(a.what, ValidateWhat::Profiles) {
        crate::usage!("profile files are read only by `validate profiles`");
    }
    if a.keep.is_some() && !matches!(a.what, ValidateWhat::Cache) {
        crate::usage!("--keep writes the runs of `validate cache` only");
    }
    match a.what {
        ValidateWhat::Clock => clock(&a),
        ValidateWhat::Cache => cache(&a),
        ValidateWhat::Profiles => profiles(&a),
    }
}

/// `validate cache`: the TLB and cache probes `--runs` times in a row, as
/// `hwcal run` runs them, then the repeatability table.
fn cache(a: &ValidateArgs) -> Result<()> {
    let progress = Progress::new(a.quiet);
    let cpu = pin(&a.common())?;
    let machine = hwcal_probes::sysinfo::machine_info();
    let probes = hwcal_runner::select(hwcal_runner::probes(), &["tlb".into(), "cache".into()], &[])?;
    let config = hwcal_runner::RunConfig {
        pinned_cpu: cpu,
        io_dir: None,
        probes: probes.iter().map(|p| p.id.to_string()).collect(),
    };
    let quiet = Progress::new(true);
    let keep = a.keep.as_deref().map(|d| keep_paths(d, a.runs)).transpose()?;
    crate::outln!(
        "validate cache: {} runs of the TLB and cache probes, pinned to {}",
        a.runs,
        cpu.map_or("no CPU".into(), |c| format!("CPU {c}"))
    );
    let mut profiles = Vec::new();
    let mut secs = Vec::new();
    for i in 1..=a.runs {
        let mut p = hwcal_model::Profile::new(crate::common::command_line(), crate::common::now_unix());
        p.machine = Some(machine.clone());
        p.harness = Some(hwcal_harness::harness_info(cpu));
        let t = std::time::Instant::now();
        // As `hwcal run` runs them: each probe's plan, then the analysis of
        // the whole profile (the caches use the TLB's curves).
        for (probe, plan) in hwcal_runner::plan(&probes, &config, &machine) {
            let frag = plan.run(&quiet).with_context(|| format!("probe {}", probe.id))?;
            hwcal_runner::absorb(&mut p, frag);
        }
        hwcal_runner::reanalyze(&mut p, &probes);
        secs.push(t.elapsed().as_secs_f64());
        crate::outln!(
            "{}",
            hwcal_report::repeat::run_line(i, &p, t.elapsed().as_secs_f64())
        );
        progress.say(&format!("validate: run {i} of {}", a.runs));
        // The profile as `hwcal run --json` writes it, so the table and the
        // kept files say the same.
        let p = crate::output::checked(&p).into_owned();
        if let Some(paths) = &keep {
            let path = &paths[i as usize - 1];
            let bytes = hwcal_report::Exporter::export(&hwcal_report::JsonExporter, &p)?;
            write_new(path, &bytes)?;
        }
        profiles.push(p);
    }
    crate::outln!("{}", hwcal_report::repeat::table(&profiles, &secs));
    Ok(())
}

/// The files `--keep DIR` writes, `DIR/run-NN.json` for each run: DIR is
/// created if missing, and one that already holds run files is refused
/// before anything is measured (nothing is overwritten, and no earlier
/// runs mix into `validate profiles DIR/run-*.json`).
fn keep_paths(dir: &std::path::Path, runs: u32) -> Result<Vec<std::path::PathBuf>> {
    if dir.exists() && !dir.is_dir() {
        crate::usage!("--keep {}: not a directory", dir.display());
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let width = runs.to_string().len().max(2);
    let paths: Vec<std::path::PathBuf> = (1..=runs)
        .map(|i| dir.join(format!("run-{i:0width$}.json")))
        .collect();
    let earlier = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with("run-") && n.ends_with(".json"));
    if let Some(n) = earlier {
        crate::usage!(
            "--keep {}: it holds runs already ({n}); choose another directory (runs are never overwritten)",
            dir.display()
        );
    }
    Ok(paths)
}

/// Write `bytes` to a file that must not exist yet.
fn write_new(path: &std::path::Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .with_context(|| format!("creating {}", path.display()))?;
    f.write_all(bytes)
        .with_context(|| format!("writing {}", path.display()))
}

/// `validate profiles FILE...`: the repeatability table of profiles on disk.
fn profiles(a: &ValidateArgs) -> Result<()> {
    if a.files.len() < 2 {
        crate::usage!("validate profiles needs at least two profile files");
    }
    let mut ps = Vec::new();
    for f in &a.files {
        crate::output::protect_input(f);
        let bad = |e: String| anyhow::Error::new(crate::common::UsageError(format!("{}: {e}", f.display())));
        let bytes = hwcal_report::read_profile_file(f).map_err(bad)?;
        let mut p = hwcal_report::parse_profile(&bytes).map_err(bad)?;
        // Figures as today's analysis reads the raw curves.
        hwcal_runner::reanalyze(&mut p, &hwcal_runner::probes());
        ps.push(p);
    }
    for (i, p) in ps.iter().enumerate() {
        crate::outln!("{}", hwcal_report::repeat::run_line(i as u32 + 1, p, f64::NAN));
    }
    crate::outln!("{}", hwcal_report::repeat::table(&ps, &[]));
    Ok(())
}

fn clock(a: &ValidateArgs) -> Result<()> {
    let progress = Progress::new(a.quiet);
    let cpu = pin(&a.common())?;
    let timer = Timer::get();
    clockref::warm_up(timer, 300);
    crate::outln!(
        "validate clock: {} runs, reference {} ms of 100 µs add-chain blocks before and after each, pinned to {}",
        a.runs,
        a.reference_ms,
        cpu.map_or("no CPU".into(), |c| format!("CPU {c}"))
    );
    crate::outln!(
        "{:>3}  {:>9} {:>9} {:>9} {:>7}  {:>9} {:>9} {:>9}  {:>6} {:>6}  verdict",
        "run",
        "core",
        "chain",
        "gcd",
        "agree%",
        "ref p10",
        "ref med",
        "ref max",
        "agree",
        "in-ref"
    );
    let (mut n_agree, mut n_inref, mut n_ok) = (0, 0, 0);
    for i in 1..=a.runs {
        let before = reference(timer, a.reference_ms);
        let t = std::time::Instant::now();
        let (r, _) = hwcal_runner::clock::measure(
            hwcal_probes::clock::DEFAULT_BATCHES as u32,
            3,
            &Progress::new(true),
        );
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let after = reference(timer, a.reference_ms);
        let all: Vec<f64> = before.iter().chain(&after).copied().collect();
        let s = stats::spread(&all);
        let p10 = stats::quantile(&all, 0.10);
        let agree = r.agreement_pct.is_some_and(|p| p <= 1.0);
        let inref = r.core_mhz >= p10 && r.core_mhz <= s.max;
        n_agree += agree as u32;
        n_inref += inref as u32;
        n_ok += (r.verdict == hwcal_model::Verdict::Ok) as u32;
        crate::outln!(
            "{:>3}  {:>9.1} {:>9.1} {:>9} {:>7} {:>9.1} {:>9.1} {:>9.1}  {:>6} {:>6}  {} ({ms:.0} ms)",
            i,
            r.core_mhz,
            r.chain_mhz,
            r.gcd_mhz.map_or("n/a".into(), |g| format!("{g:.1}")),
            r.agreement_pct.map_or("n/a".into(), |p| format!("{p:.2}")),
            p10,
            s.median,
            s.max,
            if agree { "yes" } else { "NO" },
            if inref { "yes" } else { "NO" },
            r.verdict.as_str()
        );
        progress.say(&format!("validate: run {i} of {}", a.runs));
    }
    crate::outln!(
        "summary: methods agree within 1% in {n_agree}/{n} runs; core MHz inside the reference range in {n_inref}/{n}; verdict ok in {n_ok}/{n}",
        n = a.runs
    );
    Ok(())
}
