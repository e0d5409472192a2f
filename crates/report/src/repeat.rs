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
/// distance from the median, the typical run's own 95% interval (half its
/// width, where the profiles state one), noisy verdicts; a figure whose
/// runs disagree beyond twice that interval is marked `moved`; then the
/// structures found and the verdicts.
pub fn table(ps: &[hwcal_model::Profile], secs: &[f64]) -> String {
    use std::fmt::Write;
    let r = hwcal_analysis::repeat::repeatability(ps);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<24} {:>6} {:>10} {:>10} {:>10} {:>8} {:>9} {:>6}",
        "figure", "unit", "min", "median", "max", "±max%", "in-run±%", "noisy"
    );
    let mut figures = r.figures.clone();
    if !secs.is_empty() {
        figures.push(hwcal_analysis::repeat::Figure {
            name: "seconds per run".into(),
            unit: "s",
            values: secs.to_vec(),
            noisy: 0,
            in_run: Vec::new(),
        });
    }
    let mut moved = 0;
    for f in &figures {
        let in_run = f.in_run_dev().map_or("-".into(), |w| format!("{:.1}", w * 100.0));
        let mut tail = String::new();
        if r.moved(f) {
            moved += 1;
            tail.push_str("  moved");
        }
        if f.values.len() < r.runs {
            tail.push_str(&format!("  (in {} of {} runs)", f.values.len(), r.runs));
        }
        let _ = writeln!(
            out,
            "{:<24} {:>6} {:>10.2} {:>10.2} {:>10.2} {:>8.1} {:>9} {:>6}{tail}",
            f.name,
            f.unit,
            f.min(),
            f.median(),
            f.max(),
            f.max_dev() * 100.0,
            in_run,
            f.noisy,
        );
    }
    let structures = |c: &[(usize, usize)]| {
        c.iter()
            .map(|(n, k)| format!("{n} in {k}/{}", r.runs))
            .collect::<Vec<_>>()
            .join(", ")
    };
    // Level structures are reported as found, run by run, never averaged.
    if !r.cache_levels.is_empty() {
        let _ = writeln!(out, "cache levels found: {}", structures(&r.cache_levels));
    }
    if !r.tlb_levels.is_empty() {
        let _ = writeln!(out, "4 KiB TLB levels found: {}", structures(&r.tlb_levels));
    }
    if moved > 0 {
        let _ = writeln!(
            out,
            "moved: a run sits further from the median than a whole 95% interval of its own (twice \
             in-run±%): more than one run's scatter explains. The machine changed between runs (a \
             neighbour on a shared cache or the memory bus, another draw of pages), which more samples \
             within a run cannot remove, or the intervals are narrow (they hold each plateau's extent \
             fixed)"
        );
    }
    let _ = write!(
        out,
        "noisy verdicts: {} of {} (clock, cache levels, memory, TLB levels, ctx; a noisy figure's \
         rows share its verdict)",
        r.noisy_verdicts, r.verdicts
    );
    out
}
