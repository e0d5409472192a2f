//! The repeatability table of `hwcal validate cache|profiles`: one line of
//! headline figures per run, then each figure's min / median / max over
//! the runs, its largest distance from the median, its noisy verdicts, and
//! how often the runs agreed on the levels (`hwcal_analysis::repeat`).

/// One run's headline figures on a line.
pub fn run_line(i: u32, p: &hwcal_model::Profile, secs: f64) -> String {
    let caches = p.caches.as_deref().unwrap_or(&[]);
    let mut s = format!("run {i:>3}: {} cache levels", caches.len());
    for l in caches {
        s.push_str(&format!(
            "  L{} {} {} {:.2} ns{}",
            l.level,
            hwcal_model::human_bytes(l.size_bytes),
            l.line_bytes.map_or("?".into(), |b| format!("{b} B")),
            l.latency_ns,
            if l.verdict == hwcal_model::Verdict::Noisy {
                " (noisy)"
            } else {
                ""
            }
        ));
    }
    if let Some(m) = &p.memory {
        s.push_str(&format!("  mem {:.1} ns", m.latency_ns));
    }
    for t in p.tlbs.as_deref().unwrap_or(&[]) {
        s.push_str(&format!(
            "  TLB{}{} {}",
            if t.page_bytes >= 2 << 20 { "2M " } else { " " },
            t.level,
            t.entries
        ));
    }
    if secs.is_finite() {
        s.push_str(&format!("  {secs:.1} s"));
    }
    s
}

/// The repeatability table: per figure min / median / max, the largest
/// distance from the median, noisy verdicts; then the structures found.
pub fn table(ps: &[hwcal_model::Profile], secs: &[f64]) -> String {
    use std::fmt::Write;
    let r = hwcal_analysis::repeat::repeatability(ps);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<24} {:>6} {:>10} {:>10} {:>10} {:>8} {:>6}",
        "figure", "unit", "min", "median", "max", "±max%", "noisy"
    );
    let mut figures = r.figures.clone();
    if !secs.is_empty() {
        figures.push(hwcal_analysis::repeat::Figure {
            name: "seconds per run".into(),
            unit: "s",
            values: secs.to_vec(),
            noisy: 0,
        });
    }
    for f in &figures {
        let _ = writeln!(
            out,
            "{:<24} {:>6} {:>10.2} {:>10.2} {:>10.2} {:>8.1} {:>6}{}",
            f.name,
            f.unit,
            f.min(),
            f.median(),
            f.max(),
            f.max_dev() * 100.0,
            f.noisy,
            if f.values.len() < r.runs {
                format!("  (in {} of {} runs)", f.values.len(), r.runs)
            } else {
                String::new()
            }
        );
    }
    let structures = |c: &[(usize, usize)]| {
        c.iter()
            .map(|(n, k)| format!("{n} in {k}/{}", r.runs))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(out, "cache levels found: {}", structures(&r.cache_levels));
    let _ = writeln!(out, "4 KiB TLB levels found: {}", structures(&r.tlb_levels));
    let noisy: usize = r.figures.iter().map(|f| f.noisy).sum();
    let _ = write!(out, "noisy verdicts over all figures and runs: {noisy}");
    out
}
