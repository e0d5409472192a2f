//! Self-contained SVG line plots (no dependencies): one or more series over
//! a linear or log2 x axis, with labelled vertical markers (detected levels)
//! and horizontal markers (plateaus). The output is a complete `<svg>`
//! element that works as a file and inline in HTML.

use std::fmt::Write;

/// One curve.
#[derive(Debug, Clone, Default)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// A vertical (at x) or horizontal (at y) labelled line.
#[derive(Debug, Clone)]
pub enum Marker {
    X(f64, String),
    Y(f64, String),
}

/// A plot description.
#[derive(Debug, Clone, Default)]
pub struct Plot {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    /// Log2 x axis (sizes in bytes, page counts, thread counts).
    pub log_x: bool,
    /// Log10 y axis.
    pub log_y: bool,
    /// Format x tick values as byte sizes (KiB, MiB).
    pub x_bytes: bool,
    pub series: Vec<Series>,
    pub markers: Vec<Marker>,
    pub width: u32,
    pub height: u32,
}

const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

use crate::esc;
use hwcal_model::axis_bytes as fmt_bytes;

fn fmt_num(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() < 1e7 && v.abs() >= 1.0 && (v - v.round()).abs() < 1e-9 {
        // Counts (pages, processes) read best in full: 16384, not 1.6e4.
        format!("{}", v.round() as i64)
    } else if v.abs() >= 1e4 || v.abs() < 1e-2 {
        format!("{v:.1e}")
    } else if (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round() as i64)
    } else {
        // 2.5, not 2.50: a tick label says no more than the step needs.
        let t = format!("{v:.2}");
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// "Nice" linear ticks covering [lo, hi].
fn linear_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(1e-12);
    let raw = span / 6.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| span / s <= 7.0)
        .unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-9 && out.len() < 20 {
        out.push(t);
        t += step;
    }
    out
}

impl Plot {
    /// Render the plot as an SVG document.
    pub fn render(&self) -> String {
        let pts: Vec<(f64, f64)> = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().copied())
            .filter(|&(x, y)| self.drawable(x, y))
            .collect();
        let f = Frame::new(self, &pts);
        let mut s = String::new();
        f.header(&mut s);
        f.x_grid(&mut s);
        f.y_grid(&mut s);
        f.axis_labels(&mut s);
        f.markers(&mut s);
        f.series(&mut s);
        f.legend(&mut s);
        s.push_str("</svg>\n");
        s
    }

    /// A point can be drawn when it is finite and, on a log axis, positive.
    fn drawable(&self, x: f64, y: f64) -> bool {
        x.is_finite() && y.is_finite() && (!self.log_x || x > 0.0) && (!self.log_y || y > 0.0)
    }
}

/// The page layout and the data ranges the plot area maps, worked out once
/// from the drawable points and shared by every drawing phase.
struct Frame<'p> {
    plot: &'p Plot,
    /// Page size.
    w: f64,
    h: f64,
    /// Left and top margins; `pw` × `ph` is the plot area.
    ml: f64,
    mt: f64,
    pw: f64,
    ph: f64,
    /// Data ranges on the transformed (log or linear) axes.
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
}

impl<'p> Frame<'p> {
    /// Ranges covering `pts` (a unit range when there are none or they are
    /// all equal), a linear y axis from zero, and 5% headroom on top.
    fn new(plot: &'p Plot, pts: &[(f64, f64)]) -> Self {
        let w = if plot.width == 0 { 720 } else { plot.width } as f64;
        let h = if plot.height == 0 { 420 } else { plot.height } as f64;
        // The legend sits under the x-axis title, outside the plot area, so
        // it can never cover a point or a level marker: one row of entries
        // per `legend_rows`.
        let rows = legend_layout(plot, w - 90.0).last().map_or(0, |e| e.row + 1);
        let (ml, mr, mt, mb) = (70.0, 20.0, 36.0, 52.0 + 15.0 * rows as f64);
        let h = h + 15.0 * rows as f64;
        let mut f = Frame {
            plot,
            w,
            h,
            ml,
            mt,
            pw: w - ml - mr,
            ph: h - mt - mb,
            x0: f64::INFINITY,
            x1: f64::NEG_INFINITY,
            y0: f64::INFINITY,
            y1: f64::NEG_INFINITY,
        };
        for &(x, y) in pts {
            f.x0 = f.x0.min(f.tx(x));
            f.x1 = f.x1.max(f.tx(x));
            f.y0 = f.y0.min(f.ty(y));
            f.y1 = f.y1.max(f.ty(y));
        }
        if !f.x0.is_finite() {
            (f.x0, f.x1, f.y0, f.y1) = (0.0, 1.0, 0.0, 1.0);
        }
        if !plot.log_y {
            f.y0 = f.y0.min(0.0);
        }
        if f.x1 - f.x0 < 1e-12 {
            f.x1 = f.x0 + 1.0;
        }
        // A little room at both ends, so a point on the first or last x
        // is drawn whole inside the frame, not cut by it.
        let pad = (f.x1 - f.x0) * 0.02;
        (f.x0, f.x1) = (f.x0 - pad, f.x1 + pad);
        if f.y1 - f.y0 < 1e-12 {
            f.y1 = f.y0 + 1.0;
        }
        if plot.log_y {
            // As on x: the lowest points drawn whole above the frame.
            f.y0 -= (f.y1 - f.y0) * 0.03;
        }
        f.y1 += (f.y1 - f.y0) * 0.05;
        f
    }

    /// x on the axis scale (log2 or linear).
    fn tx(&self, x: f64) -> f64 {
        if self.plot.log_x {
            x.log2()
        } else {
            x
        }
    }

    /// y on the axis scale (log10 or linear).
    fn ty(&self, y: f64) -> f64 {
        if self.plot.log_y {
            y.log10()
        } else {
            y
        }
    }

    /// Data x to page x.
    fn px(&self, x: f64) -> f64 {
        self.ml + (self.tx(x) - self.x0) / (self.x1 - self.x0) * self.pw
    }

    /// Data y to page y (page y grows downwards).
    fn py(&self, y: f64) -> f64 {
        self.mt + self.ph - (self.ty(y) - self.y0) / (self.y1 - self.y0) * self.ph
    }

    /// The `<svg>` element, white background, title and plot-area frame.
    fn header(&self, s: &mut String) {
        let (w, h, ml, mt, pw, ph) = (self.w, self.h, self.ml, self.mt, self.pw, self.ph);
        let _ = write!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">"#
        );
        let _ = write!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
        let _ = write!(
            s,
            r#"<text x="{}" y="20" text-anchor="middle" font-size="14">{}</text>"#,
            w / 2.0,
            esc(&self.plot.title)
        );
        let _ = write!(
            s,
            r##"<rect x="{ml}" y="{mt}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>"##
        );
    }

    /// Vertical grid lines with their labels: powers of two on a log axis
    /// (at most ~10 of them), otherwise "nice" linear steps.
    fn x_grid(&self, s: &mut String) {
        let (x0, x1, mt, ph) = (self.x0, self.x1, self.mt, self.ph);
        let xticks: Vec<f64> = if self.plot.log_x {
            let step = ((x1 - x0) / 10.0).ceil().max(1.0);
            let mut t = x0.ceil();
            let mut v = Vec::new();
            while t <= x1 + 1e-9 {
                v.push(2f64.powf(t));
                t += step;
            }
            v
        } else {
            // Counts (runs, threads, processes): no tick between two of them.
            let counts = self
                .plot
                .series
                .iter()
                .flat_map(|s| &s.points)
                .all(|p| p.0.fract() == 0.0);
            let mut t = linear_ticks(x0, x1);
            if counts {
                t.retain(|x| (x - x.round()).abs() < 1e-9);
            }
            t
        };
        for x in xticks {
            let sx = self.px(x);
            let label = if self.plot.x_bytes {
                fmt_bytes(x)
            } else {
                fmt_num(x)
            };
            let _ = write!(
                s,
                r##"<line x1="{sx:.1}" y1="{mt}" x2="{sx:.1}" y2="{}" stroke="#ddd"/><text x="{sx:.1}" y="{}" text-anchor="middle">{}</text>"##,
                mt + ph,
                mt + ph + 14.0,
                esc(&label)
            );
        }
    }

    /// Horizontal grid lines with their labels: powers of ten on a log axis,
    /// otherwise "nice" linear steps; ticks outside the range are skipped.
    fn y_grid(&self, s: &mut String) {
        let (y0, y1, ml, pw) = (self.y0, self.y1, self.ml, self.pw);
        let yticks: Vec<f64> = if self.plot.log_y {
            (y0.floor() as i32..=y1.ceil() as i32)
                .map(|e| 10f64.powi(e))
                .collect()
        } else {
            linear_ticks(y0, y1)
        };
        for y in yticks {
            if self.ty(y) < y0 - 1e-9 || self.ty(y) > y1 + 1e-9 {
                continue;
            }
            let sy = self.py(y);
            let _ = write!(
                s,
                r##"<line x1="{ml}" y1="{sy:.1}" x2="{}" y2="{sy:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
                ml + pw,
                ml - 5.0,
                sy + 4.0,
                esc(&fmt_num(y))
            );
        }
    }

    /// The x label under the plot area and the y label rotated at its left.
    fn axis_labels(&self, s: &mut String) {
        let (ml, mt, pw, ph) = (self.ml, self.mt, self.pw, self.ph);
        let _ = write!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            ml + pw / 2.0,
            mt + ph + 36.0,
            esc(&self.plot.x_label)
        );
        let _ = write!(
            s,
            r#"<text x="16" y="{}" text-anchor="middle" transform="rotate(-90 16 {})">{}</text>"#,
            mt + ph / 2.0,
            mt + ph / 2.0,
            esc(&self.plot.y_label)
        );
    }

    /// Dashed marker lines with their labels; markers outside the plot area
    /// or not drawable on a log axis are left out. Labels of vertical
    /// markers that would overlap go one row lower (levels close together,
    /// two runs compared).
    fn markers(&self, s: &mut String) {
        let (ml, mt, pw, ph) = (self.ml, self.mt, self.pw, self.ph);
        let mut label_rows: Vec<(f64, f64, usize)> = Vec::new();
        for m in &self.plot.markers {
            match m {
                Marker::X(x, label) if x.is_finite() && (!self.plot.log_x || *x > 0.0) => {
                    let sx = self.px(*x);
                    if sx < ml - 1.0 || sx > ml + pw + 1.0 {
                        continue;
                    }
                    // A label that would run past the frame's right edge is
                    // written to the left of its line instead.
                    let width = 6.2 * label.chars().count() as f64;
                    let flip = sx + 3.0 + width > ml + pw - 2.0;
                    let (x0l, x1l) = if flip {
                        (sx - 3.0 - width, sx - 3.0)
                    } else {
                        (sx + 3.0, sx + 3.0 + width)
                    };
                    let row = (0..)
                        .find(|r| {
                            !label_rows
                                .iter()
                                .any(|&(a, b, rr)| rr == *r && x0l < b + 4.0 && a < x1l + 4.0)
                        })
                        .unwrap_or(0);
                    label_rows.push((x0l, x1l, row));
                    let _ = write!(
                        s,
                        r##"<line x1="{sx:.1}" y1="{mt}" x2="{sx:.1}" y2="{}" stroke="#888" stroke-dasharray="4 3"/><text x="{:.1}" y="{}" fill="#555"{}>{}</text>"##,
                        mt + ph,
                        if flip { x1l } else { x0l },
                        mt + 12.0 + 12.0 * row as f64,
                        if flip { r#" text-anchor="end""# } else { "" },
                        esc(label)
                    );
                }
                Marker::Y(y, label) if y.is_finite() && (!self.plot.log_y || *y > 0.0) => {
                    let sy = self.py(*y);
                    if sy < mt - 1.0 || sy > mt + ph + 1.0 {
                        continue;
                    }
                    let _ = write!(
                        s,
                        r##"<line x1="{ml}" y1="{sy:.1}" x2="{}" y2="{sy:.1}" stroke="#aaa" stroke-dasharray="2 3"/><text x="{}" y="{:.1}" fill="#555">{}</text>"##,
                        ml + pw,
                        ml + 4.0,
                        sy - 3.0,
                        esc(label)
                    );
                }
                _ => {}
            }
        }
    }

    /// Each series as a line through its drawable points, with a dot on
    /// each; a series with none is left out.
    fn series(&self, s: &mut String) {
        for (i, ser) in self.plot.series.iter().enumerate() {
            let c = COLORS[i % COLORS.len()];
            let mut path = String::new();
            for &(x, y) in &ser.points {
                if !self.plot.drawable(x, y) {
                    continue;
                }
                let _ = write!(
                    path,
                    "{}{:.1},{:.1} ",
                    if path.is_empty() { "M" } else { "L" },
                    self.px(x),
                    self.py(y)
                );
            }
            if !path.is_empty() {
                let _ = write!(
                    s,
                    r#"<path d="{}" fill="none" stroke="{c}" stroke-width="1.5"/>"#,
                    path.trim()
                );
                for &(x, y) in &ser.points {
                    if self.plot.drawable(x, y) {
                        let _ = write!(
                            s,
                            r#"<circle cx="{:.1}" cy="{:.1}" r="2" fill="{c}"/>"#,
                            self.px(x),
                            self.py(y)
                        );
                    }
                }
            }
        }
    }

    /// The legend, under the x-axis title and outside the plot area (see
    /// [`legend_layout`]): it covers no point and no marker label.
    fn legend(&self, s: &mut String) {
        let top = self.mt + self.ph + 44.0;
        for e in legend_layout(self.plot, self.w - 90.0) {
            let c = COLORS[e.series % COLORS.len()];
            let (lx, ly) = (self.ml + e.x, top + 15.0 * e.row as f64 + 11.0);
            let _ = write!(
                s,
                r#"<line x1="{lx:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{c}" stroke-width="2"/><text x="{:.1}" y="{ly:.1}">{}</text>"#,
                ly - 4.0,
                lx + 18.0,
                ly - 4.0,
                lx + 22.0,
                esc(&self.plot.series[e.series].name)
            );
        }
    }
}

/// One legend entry's place: its series, its row under the plot, its x
/// offset from the plot area's left edge.
struct LegendEntry {
    series: usize,
    row: usize,
    x: f64,
}

/// Legend entries laid out left to right, wrapping to a new row when the
/// next would pass `width`; series without a name get no entry.
fn legend_layout(plot: &Plot, width: f64) -> Vec<LegendEntry> {
    let (mut row, mut x) = (0, 0.0);
    let mut out = Vec::new();
    for (i, ser) in plot.series.iter().enumerate().filter(|(_, s)| !s.name.is_empty()) {
        let w = 34.0 + 6.2 * ser.name.chars().count() as f64;
        if x > 0.0 && x + w > width {
            row += 1;
            x = 0.0;
        }
        out.push(LegendEntry { series: i, row, x });
        x += w;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_a_complete_svg_with_series_and_markers() {
        let p = Plot {
            title: "latency <vs> size".into(),
            x_label: "working set".into(),
            y_label: "ns".into(),
            log_x: true,
            x_bytes: true,
            series: vec![Series {
                name: "chase".into(),
                points: vec![(4096.0, 1.0), (65536.0, 5.0), (1048576.0, 80.0), (-1.0, f64::NAN)],
            }],
            markers: vec![Marker::X(49152.0, "L1".into()), Marker::Y(80.0, "DRAM".into())],
            ..Default::default()
        };
        let s = p.render();
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
        assert!(s.contains("&lt;vs&gt;"));
        assert!(s.contains("<path") && s.contains(">L1<") && s.contains(">DRAM<"));
        assert!(!s.contains("NaN"));
    }

    #[test]
    fn close_marker_labels_are_staggered_and_counts_print_in_full() {
        let p = Plot {
            log_x: true,
            series: vec![Series {
                name: "s".into(),
                points: vec![(1.0, 1.0), (16384.0, 2.0)],
            }],
            markers: vec![
                Marker::X(64.0, "first label".into()),
                Marker::X(66.0, "second label".into()),
                Marker::X(8192.0, "far".into()),
            ],
            ..Default::default()
        };
        let s = p.render();
        let y_of = |label: &str| {
            let i = s.find(&format!(">{label}<")).unwrap();
            let t = &s[..i];
            let y = &t[t.rfind("y=\"").unwrap() + 3..];
            y[..y.find('"').unwrap()].parse::<f64>().unwrap()
        };
        assert!(
            y_of("second label") > y_of("first label"),
            "overlapping labels go one row down"
        );
        assert_eq!(
            y_of("far"),
            y_of("first label"),
            "distant labels stay on the first row"
        );
        assert!(s.contains(">16384<"), "page counts are not written 1.6e4");
        let runs = Plot {
            series: vec![Series {
                name: "r".into(),
                points: vec![(1.0, 10.0), (2.0, 20.0), (3.0, 15.0)],
            }],
            ..Default::default()
        }
        .render();
        assert!(
            !runs.contains(">1.5<") && !runs.contains(">2.5<") && runs.contains(">2<"),
            "whole ticks for counts"
        );
        assert_eq!(fmt_num(1.5e7), "1.5e7");
        assert_eq!(fmt_num(2.5), "2.5");
        assert_eq!(fmt_num(0.25), "0.25");
    }

    #[test]
    fn empty_plot_still_renders() {
        let s = Plot::default().render();
        assert!(s.contains("</svg>") && !s.contains("NaN"));
    }

    #[test]
    fn legend_below_the_frame_and_labels_inside_it() {
        let p = Plot {
            log_x: true,
            series: (0..5)
                .map(|i| Series {
                    name: format!("a fairly long series name number {i}"),
                    points: vec![(1.0, 1.0), (1024.0, 2.0 + i as f64)],
                })
                .collect(),
            markers: vec![Marker::X(1000.0, "a label at the right edge".into())],
            ..Default::default()
        };
        let s = p.render();
        let attr = |tag: &str, name: &str| -> f64 {
            let t = &s[s.find(tag).unwrap()..];
            let v = &t[t.find(&format!("{name}=\"")).unwrap() + name.len() + 2..];
            v[..v.find('"').unwrap()].parse().unwrap()
        };
        // The frame: the second <rect> (the first is the background).
        let frame = &s[s.find("<rect").unwrap() + 5..];
        let frame = &frame[frame.find("<rect").unwrap()..];
        let num = |name: &str| -> f64 {
            let v = &frame[frame.find(&format!("{name}=\"")).unwrap() + name.len() + 2..];
            v[..v.find('"').unwrap()].parse().unwrap()
        };
        let (fx, fy, fw, fh) = (num("x"), num("y"), num("width"), num("height"));
        let y_of = |label: &str| -> f64 {
            let i = s.find(&format!(">{label}<")).unwrap();
            let t = &s[..i];
            let y = &t[t.rfind("y=\"").unwrap() + 3..];
            y[..y.find('"').unwrap()].parse().unwrap()
        };
        for i in 0..5 {
            let y = y_of(&format!("a fairly long series name number {i}"));
            assert!(
                y > fy + fh + 30.0,
                "legend entry {i} under the frame and axis title"
            );
        }
        assert!(
            y_of("a fairly long series name number 4") > y_of("a fairly long series name number 0"),
            "wrapped"
        );
        let height = attr("<svg", "height");
        assert!(
            y_of("a fairly long series name number 4") < height,
            "inside the picture"
        );
        let at = s.find(">a label at the right edge<").unwrap();
        assert!(s[..at].ends_with(r#"text-anchor="end""#), "written leftwards");
        let t = &s[..at];
        let x = &t[t.rfind("<text x=\"").unwrap() + 9..];
        let x: f64 = x[..x.find('"').unwrap()].parse().unwrap();
        assert!(x <= fx + fw, "ends inside the frame");
    }
}
