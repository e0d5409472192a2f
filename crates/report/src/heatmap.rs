//! The core-to-core latency matrix as a heat map (the way MLC's, `c2clat`'s
//! and `core-to-core-latency`'s tables are read): an SVG with one cell per
//! measured pair, coloured from the fastest to the slowest pair, its value
//! written in it where the matrix is small enough (`gnuplot::c2c_files`
//! draws the same matrix `with image`). Unmeasured pairs (a sampled
//! matrix) stay blank; the diagonal is blank by definition.

use hwcal_analysis::c2c::{pairs, Pair};
use hwcal_model::{Profile, Verdict};
use std::fmt::Write;

/// Matrices up to this many CPUs carry their values in the cells.
const LABELLED_CPUS: usize = 16;

/// The CPUs of the measured pairs, sorted, and the pairs.
pub fn matrix(p: &Profile) -> Option<(Vec<usize>, Vec<Pair>)> {
    let pairs = pairs(p);
    if pairs.is_empty() {
        return None;
    }
    let mut cpus: Vec<usize> = pairs.iter().flat_map(|q| [q.a, q.b]).collect();
    cpus.sort_unstable();
    cpus.dedup();
    Some((cpus, pairs))
}

/// A light-to-dark blue for `t` in 0..=1 (fast to slow).
fn colour(t: f64) -> String {
    let t = if t.is_finite() { t.clamp(0.0, 1.0) } else { 0.0 };
    let mix = |lo: u8, hi: u8| (f64::from(lo) + (f64::from(hi) - f64::from(lo)) * t).round() as u8;
    format!(
        "#{:02x}{:02x}{:02x}",
        mix(0xde, 0x08),
        mix(0xeb, 0x30),
        mix(0xf7, 0x6b)
    )
}

/// The heat map as an SVG document, `None` without c2c data.
pub fn c2c_svg(p: &Profile) -> Option<String> {
    let (cpus, pairs) = matrix(p)?;
    let n = cpus.len();
    let cell: f64 = if n <= 8 {
        44.0
    } else if n <= LABELLED_CPUS {
        30.0
    } else {
        (600.0 / n as f64).max(3.0)
    };
    let (ml, mt) = (56.0, 48.0);
    let side = cell * n as f64;
    let (w, h) = (ml + side + 120.0, mt + side + 24.0);
    let lo = pairs.iter().map(|q| q.median_ns).fold(f64::INFINITY, f64::min);
    let hi = pairs
        .iter()
        .map(|q| q.median_ns)
        .fold(f64::NEG_INFINITY, f64::max);
    let scale = |v: f64| if hi > lo { (v - lo) / (hi - lo) } else { 0.0 };
    let at = |cpu: usize| cpus.iter().position(|&c| c == cpu).unwrap_or(0) as f64;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" height=\"{h:.0}\" viewBox=\"0 0 {w:.0} {h:.0}\" \
         font-family=\"sans-serif\" font-size=\"11\">"
    );
    let _ = writeln!(s, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>");
    let _ = writeln!(
        s,
        "<text x=\"{ml}\" y=\"18\" font-size=\"13\">Core-to-core latency, one way (ns, median of batches)</text>"
    );
    if n <= LABELLED_CPUS * 4 {
        for (i, c) in cpus.iter().enumerate() {
            let mid = i as f64 * cell + cell / 2.0;
            let _ = writeln!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{c}</text>",
                ml + mid,
                mt - 6.0
            );
            let _ = writeln!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{c}</text>",
                ml - 6.0,
                mt + mid + 4.0
            );
        }
    }
    let _ = writeln!(s, "<text x=\"12\" y=\"{:.1}\">CPU</text>", mt - 6.0);
    for q in &pairs {
        // Both halves of the symmetric matrix.
        for (r, c) in [(q.a, q.b), (q.b, q.a)] {
            let (x, y) = (ml + at(c) * cell, mt + at(r) * cell);
            let _ = writeln!(
                s,
                "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{cell:.1}\" height=\"{cell:.1}\" fill=\"{}\">\
                 <title>CPU {r} ↔ {c}: {:.1} ns</title></rect>",
                colour(scale(q.median_ns)),
                q.median_ns
            );
            if n <= LABELLED_CPUS {
                let ink = if scale(q.median_ns) > 0.55 {
                    "white"
                } else {
                    "black"
                };
                let _ = writeln!(
                    s,
                    "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"{ink}\" font-size=\"10\">{:.0}</text>",
                    x + cell / 2.0,
                    y + cell / 2.0 + 3.5,
                    q.median_ns
                );
            }
        }
    }
    // Noisy pairs outlined after every cell is drawn, so no neighbour
    // covers the outline.
    for q in pairs.iter().filter(|q| q.verdict == Verdict::Noisy) {
        for (r, c) in [(q.a, q.b), (q.b, q.a)] {
            let _ = writeln!(
                s,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{cell:.1}\" height=\"{cell:.1}\" fill=\"none\" \
                 stroke=\"#d62728\" stroke-width=\"2\"/>",
                ml + at(c) * cell,
                mt + at(r) * cell
            );
        }
    }
    // The legend: fastest to slowest, and what a red outline means.
    let lx = ml + side + 16.0;
    for k in 0..=10 {
        let t = k as f64 / 10.0;
        let _ = writeln!(
            s,
            "<rect x=\"{lx:.1}\" y=\"{:.1}\" width=\"16\" height=\"10\" fill=\"{}\"/>",
            mt + t * 100.0,
            colour(t)
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\">{lo:.1} ns</text>",
        lx + 20.0,
        mt + 9.0
    );
    let _ = writeln!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\">{hi:.1} ns</text>",
        lx + 20.0,
        mt + 109.0
    );
    let _ = writeln!(
        s,
        "<rect x=\"{lx:.1}\" y=\"{:.1}\" width=\"16\" height=\"10\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"1.5\"/>\
         <text x=\"{:.1}\" y=\"{:.1}\">noisy</text>",
        mt + 124.0,
        lx + 20.0,
        mt + 133.0
    );
    s.push_str("</svg>\n");
    Some(s)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use hwcal_model::{RawCurve, RawPoint};

    pub(crate) fn profile() -> Profile {
        let point = |b: f64, s: &[f64]| RawPoint {
            x: b,
            y: s[s.len() / 2],
            samples: s.to_vec(),
            ..Default::default()
        };
        Profile {
            raw: vec![
                RawCurve {
                    id: "c2c.cpu0".into(),
                    points: vec![point(1.0, &[20.0; 7]), point(2.0, &[80.0; 7])],
                    ..Default::default()
                },
                RawCurve {
                    id: "c2c.cpu1".into(),
                    points: vec![point(2.0, &[10.0, 90.0, 20.0, 70.0, 30.0, 95.0, 15.0])],
                    ..Default::default()
                },
            ],
            ..Default::default()
        }
    }

    #[test]
    fn the_heat_map_has_both_halves_of_every_pair() {
        let svg = c2c_svg(&profile()).unwrap();
        assert_eq!(svg.matches("<title>CPU").count(), 6, "{svg}");
        assert!(svg.contains("CPU 0 ↔ 2: 80.0 ns") && svg.contains("CPU 2 ↔ 0: 80.0 ns"));
        // The scattered pair is outlined as noisy; the legend names it.
        assert_eq!(svg.matches("stroke=\"#d62728\"").count(), 3);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        assert!(c2c_svg(&Profile::default()).is_none());
    }
}
