//! The plots of the HTML report beyond the cache and TLB curves: context
//! switch against processes, bandwidth against threads, and one plot per
//! raw curve no dedicated plot shows; one or two runs on each.

use crate::plots::{curve_points, Side};
use crate::svg::{Plot, Series};
use hwcal_model::*;

pub(super) fn ctx_plot(sides: &[Side]) -> Option<Plot> {
    let mut plot = Plot {
        title: "Context switch time vs processes in the ring".into(),
        x_label: "processes".into(),
        y_label: "µs (median): per hop, and per switch where counted".into(),
        log_x: true,
        ..Default::default()
    };
    for s in sides {
        let Some(c) = &s.p.context_switch else { continue };
        for z in c.all_sizes() {
            let (kb, points) = (z.size_kb, &z.points);
            if points.is_empty() {
                continue;
            }
            plot.series.push(Series {
                name: s.name(&format!("{kb} KiB, per hop (lat_ctx)")),
                points: points.iter().map(|p| (p.nprocs as f64, p.us_median)).collect(),
            });
            // Per real switch (kernel-counted switches per hop): where a hop
            // is more than one switch the two curves part.
            let per_switch: Vec<(f64, f64)> = points
                .iter()
                .filter_map(|p| Some((p.nprocs as f64, p.us_per_switch?)))
                .collect();
            if !per_switch.is_empty() {
                plot.series.push(Series {
                    name: s.name(&format!("{kb} KiB, per switch")),
                    points: per_switch,
                });
            }
        }
    }
    (!plot.series.is_empty()).then_some(plot)
}

pub(super) fn bandwidth_plot(sides: &[Side]) -> Option<Plot> {
    let mut plot = Plot {
        title: "Memory bandwidth vs threads".into(),
        x_label: "threads".into(),
        y_label: "GB/s".into(),
        // Thread counts double (1, 2, 4, ...): a log2 axis ticks at each.
        log_x: true,
        ..Default::default()
    };
    for s in sides {
        let Some(b) = &s.p.bandwidth else { continue };
        let mut ops: Vec<&str> = Vec::new();
        for p in &b.scaling {
            if !ops.contains(&p.op.as_str()) {
                ops.push(&p.op);
            }
        }
        for op in ops {
            let mut pts: Vec<(f64, f64)> = b
                .scaling
                .iter()
                .filter(|p| p.op == op)
                .map(|p| (p.threads as f64, p.bytes_per_sec / 1e9))
                .collect();
            pts.sort_by(|x, y| x.0.total_cmp(&y.0));
            plot.series.push(Series {
                name: s.name(op),
                points: pts,
            });
        }
    }
    (!plot.series.is_empty()).then_some(plot)
}

/// One-point (or few-point) diagnostics: a fraction or a load figure
/// recorded for the JSON, not a curve; never drawn.
pub fn is_diagnostic(c: &RawCurve) -> bool {
    const DIAGNOSTICS: [&str; 3] = [".neighbour_busy", ".huge_fraction", ".overhead"];
    c.points.len() < 2 || DIAGNOSTICS.iter().any(|d| c.id.ends_with(d))
}

/// Raw curves no dedicated plot shows (another probe's), one plot each;
/// diagnostics ([`is_diagnostic`]) and the line-size tests (the caches
/// section draws them, [`crate::plots::line_size`]) left out.
pub(super) fn other_plots(sides: &[Side]) -> Vec<Plot> {
    let mut ids: Vec<&str> = Vec::new();
    for s in sides {
        for c in &s.p.raw {
            if c.id != curve::CACHE_LATENCY
                && curve::probe_of(&c.id) != Some("tlb")
                && !c.id.starts_with("cache.flush.")
                && !c.id.starts_with("cache.line.")
                && !is_diagnostic(c)
                && !ids.contains(&c.id.as_str())
            {
                ids.push(&c.id);
            }
        }
    }
    ids.into_iter()
        .map(|id| {
            let mut plot = Plot {
                title: format!("Raw curve {id}"),
                ..Default::default()
            };
            for s in sides {
                if let Some(c) = s.p.raw_curve(id) {
                    let (lo, hi) = c
                        .points
                        .iter()
                        .fold((f64::INFINITY, 0f64), |(lo, hi), p| (lo.min(p.x), hi.max(p.x)));
                    // Sizes and counts spanning decades read best on a log axis.
                    plot.log_x |= lo > 0.0 && hi / lo >= 16.0;
                    plot.x_bytes |= c.x_label.to_lowercase().contains("bytes");
                    plot.x_label = c.x_label.clone();
                    plot.y_label = c.y_label.clone();
                    plot.series.push(Series {
                        name: s.name(id),
                        points: curve_points(c),
                    });
                }
            }
            plot
        })
        .collect()
}
