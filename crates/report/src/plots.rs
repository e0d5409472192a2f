//! What each cache and TLB plot shows — title, axes, series, level markers —
//! built once per plot from the profile(s) as a [`Plot`], and rendered by
//! every output alike: inline SVG in the HTML report and `--plot` files
//! ([`Plot::render`]), The Calibrator's `.data` + `.gp` files
//! ([`crate::calibrator`]). A label or a marker changed here changes in all
//! of them; none of them draws a plot of its own.

use crate::svg::{Marker, Plot, Series};
use crate::text::human_bytes;
use hwcal_analysis::tlb::DiffPoint;
use hwcal_analysis::{cache as cache_analysis, tlb as tlb_analysis};
use hwcal_model::{curve, Profile, RawCurve};

/// One run's contribution to a plot; `tag` prefixes series names in a
/// comparison ("A", "B"), empty for a single run.
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    pub tag: &'a str,
    pub p: &'a Profile,
}

impl<'a> Side<'a> {
    /// A single run's only side.
    pub fn single(p: &'a Profile) -> [Side<'a>; 1] {
        [Side { tag: "", p }]
    }

    /// A series name, tagged with the run in a comparison.
    pub fn name(&self, s: &str) -> String {
        if self.tag.is_empty() {
            s.to_string()
        } else {
            format!("{}: {s}", self.tag)
        }
    }
}

/// Add the markers of all sides (tag, marker) to a plot. A marker both runs
/// share (same place, same text) is drawn once, untagged; the others get
/// their run's tag so two close lines can be told apart.
pub fn add_markers(plot: &mut Plot, tagged: Vec<(&str, Marker)>) {
    let same = |x: &Marker, y: &Marker| match (x, y) {
        (Marker::X(a, s), Marker::X(b, t)) | (Marker::Y(a, s), Marker::Y(b, t)) => a == b && s == t,
        _ => false,
    };
    let mut done = vec![false; tagged.len()];
    for i in 0..tagged.len() {
        if done[i] {
            continue;
        }
        let (tag, m) = &tagged[i];
        let mut shared = false;
        for j in i + 1..tagged.len() {
            if !done[j] && tagged[j].0 != *tag && same(m, &tagged[j].1) {
                done[j] = true;
                shared = true;
            }
        }
        let label = |s: &str| {
            if tag.is_empty() || shared {
                s.to_string()
            } else {
                format!("{tag} {s}")
            }
        };
        plot.markers.push(match m {
            Marker::X(v, s) => Marker::X(*v, label(s)),
            Marker::Y(v, s) => Marker::Y(*v, label(s)),
        });
    }
}

/// A raw curve's points as (x, y).
pub fn curve_points(c: &RawCurve) -> Vec<(f64, f64)> {
    c.points.iter().map(|p| (p.x, p.y)).collect()
}

/// A cache level's size marker, as every plot over working sets labels it.
fn level_label(l: &hwcal_model::CacheLevel) -> String {
    format!("L{} {}", l.level, human_bytes(l.size_bytes))
}

/// Cache latency vs working set, log-log, the levels marked where their
/// plateaus end and the memory plateau drawn (The Calibrator's
/// `cache-miss-latency` plot). `None` when no side has a latency curve.
pub fn cache_latency(sides: &[Side]) -> Option<Plot> {
    let mut plot = Plot {
        title: "Load latency vs working-set size (random pointer chase)".into(),
        x_label: "working set".into(),
        y_label: "ns per load".into(),
        log_x: true,
        log_y: true,
        x_bytes: true,
        ..Default::default()
    };
    let mut markers = Vec::new();
    for s in sides {
        let Some(c) = s.p.raw_curve(curve::CACHE_LATENCY) else {
            continue;
        };
        plot.series.push(Series {
            name: s.name("latency"),
            points: curve_points(c),
        });
        for l in s.p.caches.iter().flatten() {
            markers.push((s.tag, Marker::X(l.size_bytes as f64, level_label(l))));
        }
        if let Some((ns, label)) = s.p.memory.as_ref().and_then(sweep_memory) {
            markers.push((s.tag, Marker::Y(ns, label)));
        }
    }
    add_markers(&mut plot, markers);
    (!plot.series.is_empty()).then_some(plot)
}

/// Memory's line on the sweep's own curve: the sweep's own reading of it
/// (its plateau, kept among the measures where the headline is the `mem`
/// chase's), never the chase's over a working set past the curve's end —
/// with page walks growing past it, that line stood at 334 ns above a curve
/// that topped at 190. `None` where the run kept no sweep reading.
fn sweep_memory(m: &hwcal_model::MemoryLatency) -> Option<(f64, String)> {
    let sweep = cache_analysis::SWEEP_SOURCE;
    let ns = if m.source.as_deref().is_none_or(|s| s == sweep) {
        m.latency_ns
    } else {
        m.measures.iter().find(|x| x.source == sweep)?.latency_ns
    };
    (ns.is_finite() && ns > 0.0).then(|| (ns, format!("memory {ns:.0} ns (this sweep)")))
}

/// The L1 hit time replace-time figures are measured from: the first
/// level's latency, else the fastest point of the curve.
pub fn l1_hit_ns(p: &Profile, lat: &RawCurve) -> f64 {
    p.caches
        .iter()
        .flatten()
        .next()
        .map(|c| c.latency_ns)
        .filter(|v| v.is_finite())
        .unwrap_or_else(|| lat.points.iter().map(|q| q.y).fold(f64::INFINITY, f64::min))
}

/// The idle-gap curve where it can be drawn, and its floor (the gap itself:
/// its smallest working set).
pub fn gap_curve(p: &Profile) -> Option<(&RawCurve, f64)> {
    let gap = p.raw_curve(curve::CACHE_GAP).filter(|c| c.points.len() >= 2)?;
    Some((gap, gap.points.iter().map(|q| q.y).fold(f64::INFINITY, f64::min)))
}

/// Replace time (The Calibrator's `cache-replace-time` plot): each working
/// set's time per load over an L1 hit with misses back to back (the
/// latency chase) and, where measured, with an idle gap between loads
/// (`cache.gap`, less the gap itself); each level's figures marked.
pub fn cache_replace_time(p: &Profile) -> Option<Plot> {
    let lat = p
        .raw_curve(cache_analysis::LATENCY)
        .filter(|c| !c.points.is_empty())?;
    let l1 = l1_hit_ns(p, lat);
    let mut plot = Plot {
        title: "cache replace time vs working set".into(),
        x_label: "working set".into(),
        y_label: "ns per load over an L1 hit".into(),
        log_x: true,
        x_bytes: true,
        ..Default::default()
    };
    plot.series.push(Series {
        name: "replace time (misses back to back)".into(),
        points: lat.points.iter().map(|q| (q.x, q.y - l1)).collect(),
    });
    if let Some((gap, base)) = gap_curve(p) {
        plot.series.push(Series {
            name: "miss latency (idle gap)".into(),
            points: gap.points.iter().map(|q| (q.x, q.y - base)).collect(),
        });
    }
    for c in p.caches.iter().flatten() {
        let replace = c
            .replace_time_ns
            .map_or(String::new(), |r| format!(", replace {r:.1} ns"));
        plot.markers.push(Marker::X(
            c.size_bytes as f64,
            format!("{}{replace}", level_label(c)),
        ));
    }
    Some(plot)
}

/// The line-size tests: first the flush granule (the method whose result is
/// used wherever it saw a contrast: one load `d` bytes past a flushed byte
/// misses while `d` is inside the flushed line and hits once it is past it),
/// then the dependent-pair cross-check; a dashed marker at each line size the
/// analysis settled on, named with its method. `None` when neither test was
/// recorded.
pub fn line_size(p: &Profile) -> Option<Plot> {
    let mut lines = Plot {
        title: "Line size: a load d bytes past a flushed byte (and the pair cross-check)".into(),
        x_label: "offset d".into(),
        y_label: "ns per load (flush) or per pair (cross-check)".into(),
        log_x: true,
        log_y: true,
        x_bytes: true,
        ..Default::default()
    };
    for level in 1..=4 {
        if let Some(c) = p.raw_curve(&cache_analysis::flush_id(level)) {
            // Negative offsets are the no-flush control (all hits): the
            // table has it; the plot keeps to the offsets past the flush.
            let points = c
                .points
                .iter()
                .filter(|q| q.x > 0.0)
                .map(|q| (q.x, q.y))
                .collect();
            lines.series.push(Series {
                name: format!("L{level} flushed, load at +d (used)"),
                points,
            });
        }
    }
    for t in [1, 2] {
        for fwd in [true, false] {
            if let Some(c) = p.raw_curve(&cache_analysis::line_id(t, fwd)) {
                lines.series.push(Series {
                    name: format!(
                        "cross-check: pair {} {}",
                        if t == 1 { "misses L1" } else { "misses all caches" },
                        if fwd { "+d" } else { "-d" }
                    ),
                    points: c.points.iter().map(|q| (q.x.abs(), q.y)).collect(),
                });
            }
        }
    }
    let mut seen: Vec<(u64, String)> = Vec::new();
    for l in p.caches.iter().flatten() {
        if let Some(b) = l.line_bytes {
            let method = l.line_method.clone().unwrap_or_else(|| "pairs".into());
            if !seen.iter().any(|(sb, sm)| *sb == b && *sm == method) {
                seen.push((b, method));
            }
        }
    }
    for (b, method) in seen {
        lines
            .markers
            .push(Marker::X(b as f64, format!("line {b} B ({method})")));
    }
    (!lines.series.is_empty()).then_some(lines)
}

/// A TLB level's reach marker, as both TLB plots label it.
fn tlb_label(t: &hwcal_model::TlbLevel) -> String {
    format!("L{} {}: {}", t.level, human_bytes(t.page_bytes), t.entries)
}

/// The TLB penalty (The Calibrator's `TLB-miss-latency` plot): pages of
/// each size minus the same lines without TLB misses, against pages
/// touched, with each TLB level's entry count marked. A page size without
/// data has no series; `None` when neither has data.
pub fn tlb_penalty(p: &Profile, small: &[DiffPoint], huge: &[DiffPoint]) -> Option<Plot> {
    let mut plot = Plot {
        title: "TLB penalty vs pages touched".into(),
        x_label: "pages touched (one load per page)".into(),
        y_label: "ns per access over the baseline".into(),
        log_x: true,
        ..Default::default()
    };
    for (name, set) in [("4 KiB pages", small), ("2 MiB pages", huge)] {
        if !set.is_empty() {
            plot.series.push(Series {
                name: name.into(),
                points: set.iter().map(|q| (q.pages, q.diff_ns)).collect(),
            });
        }
    }
    for l in p.tlbs.iter().flatten() {
        plot.markers.push(Marker::X(l.entries as f64, tlb_label(l)));
    }
    (!plot.series.is_empty()).then_some(plot)
}

/// The TLB measurement curves (the 4 KiB test, each baseline, the 2 MiB
/// test; not the run's diagnostics), named for what they are, with the
/// detected TLB reaches marked when the x axis counts pages.
pub fn tlb_curves(sides: &[Side]) -> Option<Plot> {
    let mut plot = Plot {
        title: "TLB: access time vs pages touched".into(),
        log_x: true,
        ..Default::default()
    };
    let mut markers = Vec::new();
    for s in sides {
        let used = s.p.tlbs.iter().flatten().find_map(|t| t.baseline.clone());
        let named = [
            (tlb_analysis::SMALL, "4 KiB pages"),
            (tlb_analysis::BASELINE, "same lines in huge pages"),
            (tlb_analysis::DENSE, "as many lines packed densely"),
            (tlb_analysis::HUGE, "one line per 2 MiB page"),
        ];
        let curves: Vec<&RawCurve> = named.iter().filter_map(|(id, _)| s.p.raw_curve(id)).collect();
        for c in &curves {
            if plot.x_label.is_empty() {
                plot.x_label = c.x_label.clone();
                plot.y_label = "ns per access".into();
            }
            let label = named.iter().find(|(id, _)| *id == c.id).map_or("", |n| n.1);
            let is_used = match used.as_deref() {
                Some("dense") => c.id == tlb_analysis::DENSE,
                Some(_) => c.id == tlb_analysis::BASELINE,
                None => false,
            };
            plot.series.push(Series {
                name: s.name(&format!(
                    "{label}{}",
                    if is_used { " (baseline used)" } else { "" }
                )),
                points: curve_points(c),
            });
        }
        let pages_axis = curves.iter().any(|c| c.x_label.to_lowercase().contains("page"));
        if pages_axis {
            for t in s.p.tlbs.iter().flatten() {
                markers.push((s.tag, Marker::X(t.entries as f64, tlb_label(t))));
            }
        }
    }
    add_markers(&mut plot, markers);
    (!plot.series.is_empty()).then_some(plot)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwcal_model::{MemoryLatency, MemoryMeasure};

    #[test]
    fn the_memory_line_is_the_sweeps_own_reading() {
        // The headline is the mem chase over 1 GiB with its page walks; the
        // sweep read 149 ns at its top: the line on its curve is the sweep's.
        let mut m = MemoryLatency {
            latency_ns: 211.1,
            source: Some("mem chase".into()),
            measures: vec![MemoryMeasure {
                source: cache_analysis::SWEEP_SOURCE.into(),
                size_bytes: Some(256 << 20),
                latency_ns: 149.1,
                latency_ns_ci95: None,
            }],
            ..Default::default()
        };
        assert_eq!(
            sweep_memory(&m),
            Some((149.1, "memory 149 ns (this sweep)".into()))
        );
        // No sweep reading kept: no line rather than the chase's.
        m.measures.clear();
        assert_eq!(sweep_memory(&m), None);
        // The sweep's own headline.
        m.source = None;
        assert_eq!(sweep_memory(&m).map(|x| x.0), Some(211.1));
    }
}
