//! The Calibrator's plot files and hwcal's SVG plots for the cache and TLB
//! probes.
//!
//! The Calibrator writes `NAME.cache-miss-latency.{data,gp}`,
//! `NAME.cache-replace-time.{data,gp}` and `NAME.TLB-miss-latency.{data,gp}`;
//! hwcal writes the same six names so existing habits keep working, with
//! hwcal's own columns (documented in each file's header). Each script names
//! its data and its output by file name only (no directory, no `cd`), so the
//! files can be moved together anywhere: `gnuplot NAME.*.gp` run in the
//! directory that holds them writes `NAME.*.svg` next to them. The terminal
//! is chosen at the top of each script (SVG, built into every gnuplot; a
//! commented PNG line to swap in).

use crate::svg::{Marker, Plot, Series};
use crate::text::human_bytes;
use hwcal_analysis::{cache as can, levels::point_cycles, tlb as tan};
use hwcal_model::{Profile, RawCurve};
use std::fmt::Write;

/// One output file: path (or name) and contents.
pub type File = (String, String);

/// Text for inside a single-quoted gnuplot string: quotes doubled, and no
/// control character (a newline would end the string and the line, and
/// what followed would run as a command; the caller validates prefixes,
/// this keeps a script inert whatever it is given).
fn gp_quote(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect::<String>()
        .replace('\\', "\\\\")
        .replace('\'', "''")
}

fn fmt_opt(v: Option<f64>) -> String {
    v.map_or("NaN".into(), |v| format!("{v:.4}"))
}

/// The file-name part of a prefix (`out/m` → `m`): what a script names
/// its data and output by, relative to the script itself.
fn base_name(prefix: &str) -> &str {
    prefix.rsplit('/').next().unwrap_or(prefix)
}

/// Script preamble: the terminal choice first (SVG; PNG commented out),
/// output named next to the script, then the title.
fn gp_head(prefix: &str, what: &str, title: &str) -> String {
    let name = gp_quote(base_name(prefix));
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# Terminal: SVG (built in); for PNG, swap the two pairs of lines."
    );
    let _ = writeln!(s, "set terminal svg size 900,560 dynamic enhanced");
    let _ = writeln!(s, "set output '{name}.{what}.svg'");
    let _ = writeln!(s, "# set terminal pngcairo size 900,560 enhanced");
    let _ = writeln!(s, "# set output '{name}.{what}.png'");
    let _ = writeln!(s, "#");
    let _ = writeln!(s, "# hwcal: {}", gp_quote(title));
    let _ = writeln!(
        s,
        "# Render with: gnuplot {name}.{what}.gp (in the directory holding this file and {name}.{what}.data)"
    );
    let _ = writeln!(s, "set title '{}'", gp_quote(title));
    let _ = writeln!(s, "set grid");
    let _ = writeln!(s, "set key top left");
    s
}

/// A `plot` command of the series that have data (none without: no
/// legend entry for a series that was not measured); `None` if none has.
fn plot_line(series: &[String]) -> Option<String> {
    (!series.is_empty()).then(|| format!("plot {}", series.join(", \\\n     ")))
}

/// The Calibrator's six files for whatever the profile holds (four for a
/// cache-only profile, two for a TLB-only one, none for neither).
pub fn gnuplot_files(p: &Profile, prefix: &str) -> Vec<File> {
    let mut out = Vec::new();
    if let Some(lat) = p.raw_curve(can::LATENCY).filter(|c| !c.points.is_empty()) {
        out.extend(cache_miss_latency_files(p, prefix, lat));
        out.extend(cache_replace_time_files(p, prefix, lat));
    }
    if let Some(a) = tan::analyze(p).filter(|a| !a.small.is_empty() || !a.huge.is_empty()) {
        out.extend(tlb_miss_latency_files(p, prefix, &a));
    }
    out
}

/// A vertical line and label at each cache level's size (x in KiB).
fn level_marks(g: &mut String, p: &Profile, what: impl Fn(&hwcal_model::CacheLevel) -> String) {
    for c in p.caches.iter().flatten() {
        let x = c.size_bytes as f64 / 1024.0;
        let _ = writeln!(
            g,
            "set arrow from first {x:.3}, graph 0 to first {x:.3}, graph 1 nohead lc rgb 'gray50'"
        );
        let _ = writeln!(
            g,
            "set label '{}' at first {x:.3}, graph 0.04 left rotate by 90 offset -0.8,0 font ',9'",
            gp_quote(&what(c))
        );
    }
}

/// Miss latency: the latency curve with the levels marked.
fn cache_miss_latency_files(p: &Profile, prefix: &str, lat: &RawCurve) -> [File; 2] {
    let name = gp_quote(base_name(prefix));
    let mut d = String::new();
    let _ = writeln!(d, "# hwcal cache: random dependent chase, minimum over samples");
    let _ = writeln!(d, "# size_bytes\tsize_KiB\tns_per_load\tcycles_per_load");
    for q in &lat.points {
        let _ = writeln!(
            d,
            "{:.0}\t{:.3}\t{:.4}\t{}",
            q.x,
            q.x / 1024.0,
            q.y,
            fmt_opt(point_cycles(q))
        );
    }
    let mut g = gp_head(prefix, "cache-miss-latency", "cache latency vs working set");
    let _ = writeln!(g, "set logscale x 2");
    let _ = writeln!(g, "set xlabel 'working set (KiB)'");
    let _ = writeln!(g, "set format x '%.0f'");
    let _ = writeln!(g, "set ylabel 'ns per load'");
    let _ = writeln!(g, "set logscale y 10");
    level_marks(&mut g, p, |c| {
        format!("L{} {}", c.level, human_bytes(c.size_bytes))
    });
    let _ = writeln!(
        g,
        "plot '{name}.cache-miss-latency.data' using 2:3 with linespoints pt 7 ps 0.6 title 'ns per load'"
    );
    [
        (format!("{prefix}.cache-miss-latency.data"), d),
        (format!("{prefix}.cache-miss-latency.gp"), g),
    ]
}

/// Replace time, from the curves: each working set's time per load over
/// an L1 hit, with misses back to back (the latency chase) and, where it
/// was measured, with an idle gap between loads (`cache.gap`, less the
/// gap itself: its smallest working set); each level's figures marked.
fn cache_replace_time_files(p: &Profile, prefix: &str, lat: &RawCurve) -> [File; 2] {
    let name = gp_quote(base_name(prefix));
    let l1 = p
        .caches
        .iter()
        .flatten()
        .next()
        .map(|c| c.latency_ns)
        .filter(|v| v.is_finite())
        .unwrap_or_else(|| lat.points.iter().map(|q| q.y).fold(f64::INFINITY, f64::min));
    let gap = p
        .raw_curve(hwcal_model::curve::CACHE_GAP)
        .filter(|c| c.points.len() >= 2);
    let mut d = String::new();
    let _ = writeln!(
        d,
        "# hwcal cache: time per load over an L1 hit ({l1:.4} ns), by working set"
    );
    let _ = writeln!(
        d,
        "# index 0: misses back to back (the latency chase): the replace time"
    );
    if gap.is_some() {
        let _ = writeln!(
            d,
            "# index 1: an idle gap between loads (cache.gap, less its smallest working set): the miss latency"
        );
    }
    let _ = writeln!(d, "# size_bytes\tsize_KiB\tns_per_load\tns_over_L1");
    for q in &lat.points {
        let _ = writeln!(d, "{:.0}\t{:.3}\t{:.4}\t{:.4}", q.x, q.x / 1024.0, q.y, q.y - l1);
    }
    let mut series = vec![format!(
        "'{name}.cache-replace-time.data' index 0 using 2:4 with linespoints pt 7 ps 0.6 title 'replace time (misses back to back)'"
    )];
    if let Some(gap) = gap {
        let base = gap.points.iter().map(|q| q.y).fold(f64::INFINITY, f64::min);
        let _ = writeln!(d, "\n");
        for q in &gap.points {
            let _ = writeln!(
                d,
                "{:.0}\t{:.3}\t{:.4}\t{:.4}",
                q.x,
                q.x / 1024.0,
                q.y,
                q.y - base
            );
        }
        series.push(format!(
            "'{name}.cache-replace-time.data' index 1 using 2:4 with linespoints pt 5 ps 0.8 title 'miss latency (idle gap)'"
        ));
    }
    let mut g = gp_head(prefix, "cache-replace-time", "cache replace time vs working set");
    let _ = writeln!(g, "set logscale x 2");
    let _ = writeln!(g, "set xlabel 'working set (KiB)'");
    let _ = writeln!(g, "set format x '%.0f'");
    let _ = writeln!(g, "set ylabel 'ns per load over an L1 hit'");
    let _ = writeln!(g, "set yrange [0:*]");
    level_marks(&mut g, p, |c| {
        format!(
            "L{} {}{}",
            c.level,
            human_bytes(c.size_bytes),
            c.replace_time_ns
                .map_or(String::new(), |r| format!(", replace {r:.1} ns"))
        )
    });
    if let Some(line) = plot_line(&series) {
        let _ = writeln!(g, "{line}");
    }
    [
        (format!("{prefix}.cache-replace-time.data"), d),
        (format!("{prefix}.cache-replace-time.gp"), g),
    ]
}

/// TLB miss latency: the penalty over the baseline (the same lines without
/// TLB misses: in huge pages the TLB sees, or packed densely) for 4 KiB and
/// 2 MiB pages (one gnuplot index per page size measured), with the
/// detected entry counts marked.
fn tlb_miss_latency_files(p: &Profile, prefix: &str, a: &tan::TlbAnalysis) -> [File; 2] {
    let name = gp_quote(base_name(prefix));
    let sets: Vec<(&str, &Vec<tan::DiffPoint>)> = [("4 KiB pages", &a.small), ("2 MiB pages", &a.huge)]
        .into_iter()
        .filter(|(_, set)| !set.is_empty())
        .collect();
    let mut d = String::new();
    let _ = writeln!(d, "# hwcal tlb: one dependent load per page, random page order");
    let _ = writeln!(
        d,
        "# penalty = pages of this size - the same number of lines without TLB misses (baseline)"
    );
    let indexes: Vec<String> = sets
        .iter()
        .enumerate()
        .map(|(i, (what, _))| format!("index {i}: {what}"))
        .collect();
    let _ = writeln!(d, "# {}", indexes.join("; "));
    let _ = writeln!(d, "# pages\ttest_ns\tbaseline_ns\tpenalty_ns\tpenalty_cycles");
    let mut series = Vec::new();
    for (i, (what, set)) in sets.iter().enumerate() {
        if i > 0 {
            let _ = writeln!(d, "\n");
        }
        for q in set.iter() {
            let _ = writeln!(
                d,
                "{:.0}\t{:.4}\t{:.4}\t{:.4}\t{}",
                q.pages,
                q.test_ns,
                q.base_ns,
                q.diff_ns,
                fmt_opt(q.diff_cycles)
            );
        }
        series.push(format!(
            "'{name}.TLB-miss-latency.data' index {i} using 1:4 with linespoints pt {} ps 0.6 title '{what}'",
            if i == 0 { 7 } else { 5 }
        ));
    }
    let mut g = gp_head(prefix, "TLB-miss-latency", "TLB penalty vs pages touched");
    let _ = writeln!(g, "set logscale x 2");
    let _ = writeln!(g, "set xlabel 'pages touched (one load per page)'");
    let _ = writeln!(g, "set ylabel 'ns per access over the baseline'");
    for l in p.tlbs.iter().flatten() {
        let _ = writeln!(
            g,
            "set arrow from first {0}, graph 0 to first {0}, graph 1 nohead lc rgb 'gray50'",
            l.entries
        );
        let _ = writeln!(
            g,
            "set label '{} {} entries' at first {}, graph 0.04 left rotate by 90 offset -0.8,0 font ',9'",
            if l.page_bytes >= 2 << 20 { "2M" } else { "4K" },
            l.entries,
            l.entries
        );
    }
    if let Some(line) = plot_line(&series) {
        let _ = writeln!(g, "{line}");
    }
    [
        (format!("{prefix}.TLB-miss-latency.data"), d),
        (format!("{prefix}.TLB-miss-latency.gp"), g),
    ]
}

/// SVG plots (file name, contents) for the cache and TLB data of a profile.
pub fn svg_plots(p: &Profile) -> Vec<File> {
    let mut out = Vec::new();
    if let Some(lat) = p.raw_curve(can::LATENCY) {
        out.push(("cache-latency.svg".into(), cache_latency_svg(p, lat)));
        if let Some(svg) = line_size_svg(p) {
            out.push(("cache-line-size.svg".into(), svg));
        }
    }
    if let Some(a) = tan::analyze(p) {
        out.push(("tlb-penalty.svg".into(), tlb_penalty_svg(p, &a)));
    }
    out
}

/// The latency curve on log-log axes, with each cache level's size and
/// latency (and memory's latency) marked, so the plateaus can be checked
/// against the levels the analysis reported.
fn cache_latency_svg(p: &Profile, lat: &RawCurve) -> String {
    let mut plot = Plot {
        title: "Cache latency vs working set (random dependent chase)".into(),
        x_label: "working set".into(),
        y_label: "ns per load".into(),
        log_x: true,
        log_y: true,
        x_bytes: true,
        ..Default::default()
    };
    plot.series.push(Series {
        name: "ns per load".into(),
        points: lat.points.iter().map(|q| (q.x, q.y)).collect(),
    });
    for c in p.caches.iter().flatten() {
        plot.markers.push(Marker::X(
            c.size_bytes as f64,
            format!("L{} {}", c.level, human_bytes(c.size_bytes)),
        ));
        plot.markers.push(Marker::Y(
            c.latency_ns,
            format!("L{} {:.2} ns", c.level, c.latency_ns),
        ));
    }
    if let Some(m) = &p.memory {
        plot.markers
            .push(Marker::Y(m.latency_ns, format!("memory {:.1} ns", m.latency_ns)));
    }
    plot.render()
}

/// The line-size test's curves (pair of loads |d| bytes apart, missing L1
/// or all caches, forward and backward); None when none was recorded.
fn line_size_svg(p: &Profile) -> Option<String> {
    let mut lines = Plot {
        title: "Line size: dependent pair of loads d bytes apart".into(),
        x_label: "|d| (bytes)".into(),
        y_label: "ns per pair".into(),
        log_x: true,
        log_y: true,
        ..Default::default()
    };
    for t in [1, 2] {
        for fwd in [true, false] {
            if let Some(c) = p.raw_curve(&can::line_id(t, fwd)) {
                lines.series.push(Series {
                    name: format!(
                        "{} {}",
                        if t == 1 { "misses L1" } else { "misses all caches" },
                        if fwd { "+d" } else { "-d" }
                    ),
                    points: c.points.iter().map(|q| (q.x.abs(), q.y)).collect(),
                });
            }
        }
    }
    (!lines.series.is_empty()).then(|| lines.render())
}

/// The TLB penalty (pages of each size minus the same lines in huge pages)
/// against pages touched, with each TLB level's entry count marked.
fn tlb_penalty_svg(p: &Profile, a: &tan::TlbAnalysis) -> String {
    let mut plot = Plot {
        title: "TLB penalty: pages of each size minus the same lines without TLB misses".into(),
        x_label: "pages touched".into(),
        y_label: "ns per access".into(),
        log_x: true,
        ..Default::default()
    };
    plot.series.push(Series {
        name: "4 KiB pages".into(),
        points: a.small.iter().map(|q| (q.pages, q.diff_ns)).collect(),
    });
    if !a.huge.is_empty() {
        plot.series.push(Series {
            name: "2 MiB pages".into(),
            points: a.huge.iter().map(|q| (q.pages, q.diff_ns)).collect(),
        });
    }
    for l in p.tlbs.iter().flatten() {
        plot.markers.push(Marker::X(
            l.entries as f64,
            format!(
                "{} L{} {}",
                if l.page_bytes >= 2 << 20 { "2M" } else { "4K" },
                l.level,
                l.entries
            ),
        ));
    }
    plot.render()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwcal_model::{CacheLevel, RawCurve, RawPoint};

    #[test]
    fn files_follow_the_calibrator_names() {
        let mut p = Profile::new("t", 0);
        assert!(gnuplot_files(&p, "x").is_empty());
        p.raw.push(RawCurve {
            id: can::LATENCY.into(),
            points: vec![RawPoint {
                x: 4096.0,
                y: 2.0,
                samples: vec![2.0],
                mhz: vec![2500.0],
            }],
            ..Default::default()
        });
        p.caches = Some(vec![CacheLevel {
            level: 1,
            size_bytes: 49152,
            latency_ns: 2.0,
            ..Default::default()
        }]);
        let f = gnuplot_files(&p, "out/m's");
        let names: Vec<&str> = f.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "out/m's.cache-miss-latency.data",
                "out/m's.cache-miss-latency.gp",
                "out/m's.cache-replace-time.data",
                "out/m's.cache-replace-time.gp"
            ]
        );
        assert!(f[0].1.contains("4096\t4.000\t2.0000\t5.0000"));
        // Data and output named by file name only: the files move together.
        assert!(f[1].1.contains("set output 'm''s.cache-miss-latency.svg'"));
        assert!(f[1].1.contains("plot 'm''s.cache-miss-latency.data'"));
        assert!(!f[1].1.contains("out/") && !f[1].1.contains("cd "));
        assert!(f[1].1.starts_with("# Terminal"));
        assert!(f[1].1.lines().nth(1).unwrap().starts_with("set terminal svg"));
        assert!(f[1].1.contains("# set terminal png"));
        assert!(f[1].1.contains("L1 48 KiB"));
        // A newline in the prefix cannot start a command line of its own.
        let f = gnuplot_files(&p, "x\nsystem('touch pwned')\n#");
        for (name, text) in f.iter().filter(|(n, _)| n.ends_with(".gp")) {
            assert!(
                !text.lines().any(|l| l.trim_start().starts_with("system")),
                "{name}: {text}"
            );
        }
        let svgs = svg_plots(&p);
        assert_eq!(svgs[0].0, "cache-latency.svg");
        assert!(svgs[0].1.contains("<svg"));
    }
}
