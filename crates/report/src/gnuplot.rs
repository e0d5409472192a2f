//! The Calibrator's plot files and hwcal's SVG plot files for the cache
//! and TLB probes: renderings of the plots [`crate::plots`] builds (the
//! same plots the HTML report draws), plus each `.data` file's columns.
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

use crate::plots::{self, Side};
use crate::svg::{Marker, Plot};
use hwcal_analysis::tlb::DiffPoint;
use hwcal_analysis::{cache as cache_analysis, levels::point_cycles, tlb as tlb_analysis};
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
/// then a change to the script's own directory (gnuplot 5 sets `ARG0` to
/// the script's path as given: `gnuplot out/m.cache-miss-latency.gp` from
/// anywhere finds its data beside it and writes its plot there), a check
/// that the data is there before the output file is opened (so a missing
/// data file leaves no empty plot behind, and gnuplot exits 1), the output
/// named next to the script, then the title.
fn gp_head(prefix: &str, what: &str, title: &str) -> String {
    let name = gp_quote(base_name(prefix));
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# Terminal: SVG (built in); for PNG, swap the two pairs of lines."
    );
    let _ = writeln!(s, "# Run from anywhere: work in this script's directory.");
    let _ = writeln!(s, "_d = ARG0; _k = strlen(_d)");
    let _ = writeln!(s, "while (_k > 0 && _d[_k:_k] ne \"/\") {{ _k = _k - 1 }}");
    let _ = writeln!(s, "if (_k > 0) {{ cd _d[1:_k] }}");
    let _ = writeln!(s, "# No data, no plot: stop before the output file is created.");
    let _ = writeln!(s, "undefine STATS_*");
    let _ = writeln!(s, "stats '{name}.{what}.data' nooutput");
    let _ = writeln!(
        s,
        "if (!exists(\"STATS_records\")) {{ print '{name}.{what}.data: not found beside this script'; exit status 1 }}"
    );
    let _ = writeln!(s, "set terminal svg size 900,560 dynamic enhanced");
    let _ = writeln!(s, "set output '{name}.{what}.svg'");
    let _ = writeln!(s, "# set terminal pngcairo size 900,560 enhanced");
    let _ = writeln!(s, "# set output '{name}.{what}.png'");
    let _ = writeln!(s, "#");
    let _ = writeln!(s, "# hwcal: {}", gp_quote(title));
    let _ = writeln!(
        s,
        "# Render with: gnuplot PATH/{name}.{what}.gp (from any directory; {name}.{what}.data must be beside it)"
    );
    let _ = writeln!(s, "set title '{}'", gp_quote(title));
    let _ = writeln!(s, "set grid");
    let _ = writeln!(s, "set key top left");
    s
}

/// A number for a gnuplot coordinate: whole numbers (page counts) as
/// integers, others to three decimals.
fn gp_num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

/// A plot spec's x on the script's axis: KiB for a byte axis (The
/// Calibrator's unit), the value itself otherwise.
fn gp_x(plot: &Plot, x: f64) -> String {
    if plot.x_bytes {
        format!("{:.3}", x / 1024.0)
    } else {
        gp_num(x)
    }
}

/// One series' block of the data file: its rows (tab-separated columns,
/// the header documents them) and the columns the script plots.
struct Block {
    rows: Vec<String>,
    using: &'static str,
}

/// The `.data` + `.gp` pair of one plot: the data file is `header` then one
/// block per series of `spec` (gnuplot `index` i), the script draws what
/// `spec` holds — title, axes, every series by its name, every marker.
fn gnuplot_pair(spec: &Plot, prefix: &str, what: &str, header: &str, blocks: &[Block]) -> [File; 2] {
    debug_assert_eq!(blocks.len(), spec.series.len());
    let name = gp_quote(base_name(prefix));
    let mut d = String::from(header);
    for (i, b) in blocks.iter().enumerate() {
        if i > 0 {
            let _ = writeln!(d, "\n");
        }
        for r in &b.rows {
            let _ = writeln!(d, "{r}");
        }
    }
    let mut g = gp_head(prefix, what, &spec.title);
    let range = Ranges::of(spec);
    if spec.log_x {
        let _ = writeln!(g, "set logscale x 2");
    }
    let _ = writeln!(g, "set xlabel '{}'", gp_quote(&spec.x_label));
    if let (Some((lo, hi)), Some((flo, fhi))) = (&range.x, range.xf) {
        let _ = writeln!(g, "set xrange [{lo}:{hi}]");
        if spec.x_bytes {
            // Sizes as people say them (64K, 16M), not KiB counts (65536).
            let _ = writeln!(g, "set xtics ({})", byte_tics(flo, fhi).join(", "));
        }
    }
    let _ = writeln!(g, "set ylabel '{}'", gp_quote(&spec.y_label));
    if spec.log_y {
        let _ = writeln!(g, "set logscale y 10");
    }
    // An explicit y range from the data: gnuplot's autoscale would round a
    // log axis out to whole decades (a decade of nothing under the L1) and
    // a linear one to a tick below zero.
    if let Some((lo, hi)) = &range.y {
        let _ = writeln!(g, "set yrange [{lo}:{hi}]");
    }
    // The legend under the plot, and level labels above the frame: neither
    // covers a point.
    let _ = writeln!(g, "set key below");
    let _ = writeln!(g, "set tmargin 5");
    let _ = writeln!(g, "set title offset 0,1.2");
    let xs: Vec<(f64, &str)> = spec
        .markers
        .iter()
        .filter_map(|m| match m {
            Marker::X(x, label) => Some((*x, label.as_str())),
            Marker::Y(..) => None,
        })
        .collect();
    for (x, label, row, right) in label_places(spec, &range, &xs) {
        let x = gp_x(spec, x);
        let _ = writeln!(
            g,
            "set arrow from first {x}, graph 0 to first {x}, graph 1 nohead lc rgb 'gray50'"
        );
        let _ = writeln!(
            g,
            "set label '{}' at first {x}, graph {:.3} {} font ',9' tc rgb 'gray30'",
            gp_quote(label),
            1.015 + 0.045 * row as f64,
            if right { "right" } else { "left" }
        );
    }
    for m in &spec.markers {
        if let Marker::Y(y, label) = m {
            let _ = writeln!(
                g,
                "set arrow from graph 0, first {y:.4} to graph 1, first {y:.4} nohead lc rgb 'gray50' dt 2"
            );
            let _ = writeln!(
                g,
                "set label '{}' at graph 0.01, first {y:.4} left offset 0,0.6 font ',9' tc rgb 'gray30'",
                gp_quote(label)
            );
        }
    }
    // Only series with data: no legend entry for what was not measured.
    let series: Vec<String> = spec
        .series
        .iter()
        .zip(blocks)
        .enumerate()
        .filter(|(_, (s, _))| !s.points.is_empty())
        .map(|(i, (s, b))| {
            format!(
                "'{name}.{what}.data' index {i} using {} with {} pt {} ps 0.6 title '{}'",
                b.using,
                // A handful of points is a few measurements, not a curve:
                // drawn as points, not joined by straight lines.
                if s.points.len() < 8 {
                    "points"
                } else {
                    "linespoints"
                },
                if i == 0 { 7 } else { 5 },
                gp_quote(&s.name)
            )
        })
        .collect();
    if !series.is_empty() {
        let _ = writeln!(g, "plot {}", series.join(", \\\n     "));
    }
    [
        (format!("{prefix}.{what}.data"), d),
        (format!("{prefix}.{what}.gp"), g),
    ]
}

/// The script's axis ranges, in its own units (KiB on a byte axis), from
/// the drawable points: a log axis a little past the data, a linear y axis
/// from zero (or the lowest point, if below it) with a little headroom.
struct Ranges {
    x: Option<(String, String)>,
    y: Option<(String, String)>,
    /// The x range as numbers, for placing labels.
    xf: Option<(f64, f64)>,
}

impl Ranges {
    fn of(spec: &Plot) -> Ranges {
        let pts: Vec<(f64, f64)> = spec
            .series
            .iter()
            .flat_map(|s| s.points.iter().copied())
            .filter(|&(x, y)| {
                x.is_finite() && y.is_finite() && (!spec.log_x || x > 0.0) && (!spec.log_y || y > 0.0)
            })
            .map(|(x, y)| (if spec.x_bytes { x / 1024.0 } else { x }, y))
            .collect();
        if pts.is_empty() {
            return Ranges {
                x: None,
                y: None,
                xf: None,
            };
        }
        let fold = |f: fn(&(f64, f64)) -> f64| {
            pts.iter()
                .map(f)
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                    (a.min(v), b.max(v))
                })
        };
        let (x0, x1) = fold(|p| p.0);
        let (mut y0, mut y1) = fold(|p| p.1);
        // A horizontal marker (the memory plateau) is inside the frame too.
        for m in &spec.markers {
            if let Marker::Y(y, _) = m {
                if y.is_finite() && (!spec.log_y || *y > 0.0) {
                    (y0, y1) = (y0.min(*y), y1.max(*y));
                }
            }
        }
        let xf = if spec.log_x {
            (x0 / 1.06, x1 * 1.06)
        } else {
            let pad = ((x1 - x0) * 0.02).max(1e-9);
            (x0 - pad, x1 + pad)
        };
        let y = if spec.log_y {
            (y0 / 1.2, y1 * 1.3)
        } else {
            let lo = y0.min(0.0);
            let span = (y1 - lo).max(1e-9);
            (if y0 < 0.0 { lo - span * 0.03 } else { 0.0 }, y1 + span * 0.06)
        };
        let n = |v: f64| format!("{v:.6}");
        Ranges {
            x: Some((n(xf.0), n(xf.1))),
            y: Some((n(y.0), n(y.1))),
            xf: Some(xf),
        }
    }

    /// Where `x` (script units) falls across the plot, 0 at the left edge.
    fn fraction(&self, spec: &Plot, x: f64) -> f64 {
        let Some((lo, hi)) = self.xf else { return 0.5 };
        if spec.log_x {
            (x.log2() - lo.log2()) / (hi.log2() - lo.log2()).max(1e-12)
        } else {
            (x - lo) / (hi - lo).max(1e-12)
        }
    }
}

/// Tics for a KiB axis at powers of four (or of two over a short span),
/// labelled as sizes: `"64K" 64, "1M" 1024`.
fn byte_tics(lo: f64, hi: f64) -> Vec<String> {
    let span = (hi / lo.max(1e-9)).log2();
    let step = if span > 12.0 { 2 } else { 1 };
    let mut e = lo.max(1e-9).log2().ceil() as i32;
    let mut out = Vec::new();
    while 2f64.powi(e) <= hi && out.len() < 40 {
        if e.rem_euclid(step) == 0 {
            let kib = 2f64.powi(e);
            out.push(format!(
                "\"{}\" {}",
                hwcal_model::axis_bytes(kib * 1024.0),
                gp_num(kib)
            ));
        }
        e += 1;
    }
    out
}

/// Each vertical marker's label place above the frame: its row (labels
/// that would overlap go one row higher) and whether it is written to the
/// left of its line (near the right edge, so it stays inside the page).
fn label_places<'a>(spec: &Plot, range: &Ranges, xs: &[(f64, &'a str)]) -> Vec<(f64, &'a str, usize, bool)> {
    // A 9-point character is about 0.8% of the plot's width at 900 px.
    const CHAR: f64 = 0.0078;
    let mut taken: Vec<(f64, f64, usize)> = Vec::new();
    let mut out = Vec::new();
    for &(x, label) in xs {
        let gx = if spec.x_bytes { x / 1024.0 } else { x };
        let f = range.fraction(spec, gx);
        let w = CHAR * label.chars().count() as f64;
        let right = f + w > 1.0;
        let (a, b) = if right { (f - w, f) } else { (f, f + w) };
        let row = (0..)
            .find(|r| {
                !taken
                    .iter()
                    .any(|&(ta, tb, tr)| tr == *r && a < tb + 0.01 && ta < b + 0.01)
            })
            .unwrap_or(0);
        taken.push((a, b, row));
        out.push((x, label, row, right));
    }
    out
}

/// The Calibrator's six files for whatever the profile holds (four for a
/// cache-only profile, two for a TLB-only one, none for neither), and the
/// core-to-core heat map's two where the profile has c2c data.
pub fn gnuplot_files(p: &Profile, prefix: &str) -> Vec<File> {
    let mut out = Vec::new();
    if let Some(lat) = p
        .raw_curve(cache_analysis::LATENCY)
        .filter(|c| !c.points.is_empty())
    {
        if let Some(spec) = plots::cache_latency(&Side::single(p)) {
            out.extend(cache_miss_latency_files(&spec, prefix, lat));
        }
        if let Some(spec) = plots::cache_replace_time(p) {
            out.extend(cache_replace_time_files(p, &spec, prefix, lat));
        }
    }
    if let Some((small, huge)) = tlb_analysis::penalty_curves(p) {
        if let Some(spec) = plots::tlb_penalty(p, &small, &huge) {
            out.extend(tlb_miss_latency_files(&spec, prefix, [&small, &huge]));
        }
    }
    out.extend(c2c_files(p, prefix));
    out
}

/// Miss latency: the latency curve with the levels marked.
fn cache_miss_latency_files(spec: &Plot, prefix: &str, lat: &RawCurve) -> [File; 2] {
    let mut d = String::new();
    let _ = writeln!(d, "# hwcal cache: random dependent chase, minimum over samples");
    let _ = writeln!(d, "# size_bytes\tsize_KiB\tns_per_load\tcycles_per_load");
    let rows = lat
        .points
        .iter()
        .map(|q| {
            format!(
                "{:.0}\t{:.3}\t{:.4}\t{}",
                q.x,
                q.x / 1024.0,
                q.y,
                fmt_opt(point_cycles(q))
            )
        })
        .collect();
    let blocks = [Block { rows, using: "2:3" }];
    gnuplot_pair(spec, prefix, "cache-miss-latency", &d, &blocks)
}

/// Replace time: the data of [`plots::cache_replace_time`], each block with
/// the raw time per load beside the plotted time over an L1 hit.
fn cache_replace_time_files(p: &Profile, spec: &Plot, prefix: &str, lat: &RawCurve) -> [File; 2] {
    let l1 = plots::l1_hit_ns(p, lat);
    let gap = plots::gap_curve(p);
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
    let block = |c: &RawCurve, base: f64| Block {
        rows: c
            .points
            .iter()
            .map(|q| format!("{:.0}\t{:.3}\t{:.4}\t{:.4}", q.x, q.x / 1024.0, q.y, q.y - base))
            .collect(),
        using: "2:4",
    };
    let mut blocks = vec![block(lat, l1)];
    blocks.extend(gap.map(|(g, base)| block(g, base)));
    gnuplot_pair(spec, prefix, "cache-replace-time", &d, &blocks)
}

/// TLB miss latency: the penalty over the baseline (the same lines without
/// TLB misses: in huge pages the TLB sees, or packed densely) for 4 KiB and
/// 2 MiB pages (one gnuplot index per page size measured), with the
/// detected entry counts marked.
fn tlb_miss_latency_files(spec: &Plot, prefix: &str, curves: [&Vec<DiffPoint>; 2]) -> [File; 2] {
    let sets: Vec<&Vec<DiffPoint>> = curves.into_iter().filter(|set| !set.is_empty()).collect();
    let mut d = String::new();
    let _ = writeln!(d, "# hwcal tlb: one dependent load per page, random page order");
    let _ = writeln!(
        d,
        "# penalty = pages of this size - the same number of lines without TLB misses (baseline)"
    );
    let indexes: Vec<String> = spec
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| format!("index {i}: {}", s.name))
        .collect();
    let _ = writeln!(d, "# {}", indexes.join("; "));
    let _ = writeln!(d, "# pages\ttest_ns\tbaseline_ns\tpenalty_ns\tpenalty_cycles");
    let blocks: Vec<Block> = sets
        .iter()
        .map(|set| Block {
            rows: set
                .iter()
                .map(|q| {
                    format!(
                        "{:.0}\t{:.4}\t{:.4}\t{:.4}\t{}",
                        q.pages,
                        q.test_ns,
                        q.base_ns,
                        q.diff_ns,
                        fmt_opt(q.diff_cycles)
                    )
                })
                .collect(),
            using: "1:4",
        })
        .collect();
    gnuplot_pair(spec, prefix, "TLB-miss-latency", &d, &blocks)
}

/// `PREFIX.c2c-latency.data` (one `row column ns` line per cell, both
/// halves; blank lines between rows, as gnuplot's `image` wants a grid) and
/// `PREFIX.c2c-latency.gp` drawing it `with image`.
fn c2c_files(p: &Profile, prefix: &str) -> Vec<File> {
    let Some((cpus, pairs)) = crate::heatmap::matrix(p) else {
        return Vec::new();
    };
    let value = |a: usize, b: usize| {
        pairs
            .iter()
            .find(|q| (q.a, q.b) == (a, b) || (q.b, q.a) == (a, b))
            .map_or("NaN".to_string(), |q| format!("{:.3}", q.median_ns))
    };
    let mut d = String::from(
        "# hwcal c2c: one-way cache-line handoff, median of batches (ns)\n# row_cpu\tcolumn_cpu\tns\n",
    );
    for &r in &cpus {
        for &c in &cpus {
            let v = if r == c { "NaN".to_string() } else { value(r, c) };
            let _ = writeln!(d, "{r}\t{c}\t{v}");
        }
        d.push('\n');
    }
    let name = gp_quote(base_name(prefix));
    let mut g = gp_head(prefix, "c2c-latency", "core-to-core latency, one way (ns)");
    let _ = writeln!(g, "set xlabel 'CPU'\nset ylabel 'CPU'\nset yrange [*:*] reverse");
    let _ = writeln!(g, "set palette defined (0 '#deebf7', 1 '#08306b')");
    let _ = writeln!(g, "plot '{name}.c2c-latency.data' using 2:1:3 with image notitle");
    vec![
        (format!("{prefix}.c2c-latency.data"), d),
        (format!("{prefix}.c2c-latency.gp"), g),
    ]
}

/// SVG plots (file name, contents) for the cache and TLB data of a profile:
/// the same plots as the gnuplot files and the HTML report draw.
pub fn svg_plots(p: &Profile) -> Vec<File> {
    let mut out = Vec::new();
    if p.raw_curve(cache_analysis::LATENCY).is_some() {
        if let Some(plot) = plots::cache_latency(&Side::single(p)) {
            out.push(("cache-latency.svg".into(), plot.render()));
        }
        if let Some(plot) = plots::line_size(p) {
            out.push(("cache-line-size.svg".into(), plot.render()));
        }
    }
    if let Some(plot) = tlb_analysis::penalty_curves(p).and_then(|(s, h)| plots::tlb_penalty(p, &s, &h)) {
        out.push(("tlb-penalty.svg".into(), plot.render()));
    }
    if let Some(svg) = crate::heatmap::c2c_svg(p) {
        out.push(("c2c-heatmap.svg".into(), svg));
    }
    out
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
            id: cache_analysis::LATENCY.into(),
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
        // No directory written in: it changes to its own, wherever it is.
        assert!(!f[1].1.contains("out/") && !f[1].1.contains("cd '"));
        assert!(f[1].1.starts_with("# Terminal"));
        assert!(f[1].1.lines().any(|l| l.starts_with("set terminal svg")));
        // The data check comes before the output is opened.
        let at = |k: &str| f[1].1.find(k).unwrap();
        assert!(at("cd _d") < at("stats ") && at("stats ") < at("set output"));
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

    #[test]
    fn the_gnuplot_grid_is_square_with_a_blank_diagonal() {
        let f = c2c_files(&crate::heatmap::tests::profile(), "out/m");
        assert_eq!(f[0].0, "out/m.c2c-latency.data");
        let rows: Vec<&str> = f[0]
            .1
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        assert_eq!(rows.len(), 9);
        assert!(rows.contains(&"0\t0\tNaN") && rows.contains(&"2\t0\t80.000"));
        assert!(f[1].1.contains("'m.c2c-latency.data' using 2:1:3 with image"));
        assert!(c2c_files(&Profile::default(), "x").is_empty());
    }

    #[test]
    fn scripts_read_cleanly_human_tics_explicit_ranges_labels_clear_of_data() {
        use crate::svg::Series;
        let spec = Plot {
            title: "t".into(),
            log_x: true,
            log_y: true,
            x_bytes: true,
            series: vec![
                Series {
                    name: "curve".into(),
                    points: (12..=27).map(|e| (2f64.powi(e), 1.0 + e as f64)).collect(),
                },
                Series {
                    name: "few".into(),
                    points: vec![(8192.0, 5.0), ((1 << 20) as f64, 9.0)],
                },
            ],
            markers: vec![
                Marker::X(48.0 * 1024.0, "L1 48 KiB".into()),
                Marker::X(100.0 * 1024.0 * 1024.0, "L3 100 MiB, a long label".into()),
                Marker::Y(300.0, "memory 300 ns".into()),
            ],
            ..Default::default()
        };
        let blocks = [
            Block {
                rows: vec![],
                using: "2:3",
            },
            Block {
                rows: vec![],
                using: "2:3",
            },
        ];
        let [_, (_, g)] = gnuplot_pair(&spec, "m", "cache-miss-latency", "", &blocks);
        let tics = g.lines().find(|l| l.starts_with("set xtics")).expect("xtics");
        assert!(
            tics.contains("\"64K\" 64") && tics.contains("\"64M\" 65536"),
            "{tics}"
        );
        let yr = g.lines().find(|l| l.starts_with("set yrange")).expect("yrange");
        let lo: f64 = yr[12..yr.find(':').unwrap()].parse().unwrap();
        let hi: f64 = yr[yr.find(':').unwrap() + 1..yr.len() - 1].parse().unwrap();
        assert!(lo > 4.0 && lo < 5.0, "no decade of nothing below the data: {yr}");
        assert!(hi > 300.0 && hi < 600.0, "the memory marker inside: {yr}");
        assert!(g.contains("set key below"));
        assert!(g.contains("at first 48.000, graph 1.015 left"), "{g}");
        assert!(
            g.contains("graph 1.015 right"),
            "the last label is written leftwards: {g}"
        );
        assert!(g.contains("with linespoints") && g.contains("with points"), "{g}");
    }
}
