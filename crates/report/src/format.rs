//! Formatting shared by every renderer: escaping for HTML and SVG, dates,
//! figures with their units (the model's [`FigureUnit`]), ratios, and the
//! number cells of the text and HTML tables.

use hwcal_model::{human_bytes, FigureUnit, Verdict};

/// Escape text for HTML and SVG element content and attribute values
/// (the one escaper of every markup exporter).
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// A Unix time as `YYYY-MM-DD HH:MM UTC` (no time-zone database needed).
pub fn format_utc(unix: u64) -> String {
    let days = (unix / 86_400) as i64;
    let secs = unix % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        secs / 3600,
        secs % 3600 / 60
    )
}

/// The figure with its unit, e.g. `145.0 ns`, `2 MiB`, `12.50 GB/s`.
pub fn value_with_unit(unit: FigureUnit, v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    match unit {
        FigureUnit::Mhz => format!("{v:.1} MHz"),
        FigureUnit::Bytes => human_bytes(v.max(0.0).round() as u64),
        FigureUnit::Ns => format!("{v:.2} ns"),
        FigureUnit::Cycles => format!("{v:.1} cy"),
        FigureUnit::Us => format!("{v:.2} µs"),
        FigureUnit::BytesPerSec => format!("{:.2} GB/s", v / 1e9),
        FigureUnit::Count => format!("{}", v.round() as i64),
        FigureUnit::Iops => format!("{v:.0} IOPS"),
        FigureUnit::Factor => format!("{v:.2}×"),
    }
}

/// The unit's name in the JSON comparison.
pub fn unit_json_name(unit: FigureUnit) -> &'static str {
    match unit {
        FigureUnit::Mhz => "MHz",
        FigureUnit::Bytes => "bytes",
        FigureUnit::Ns => "ns",
        FigureUnit::Cycles => "cycles",
        FigureUnit::Us => "us",
        FigureUnit::BytesPerSec => "bytes_per_sec",
        FigureUnit::Count => "count",
        FigureUnit::Iops => "iops",
        FigureUnit::Factor => "factor",
    }
}

/// The ratio column: `1.23×`, or `-` when not comparable.
pub fn fmt_ratio(r: Option<f64>) -> String {
    r.map_or("-".into(), |r| format!("{r:.3}×"))
}

/// `1.23 ns = 3 cy` or just `1.23 ns`.
pub fn ns_cy(ns: f64, cy: Option<f64>) -> String {
    match cy {
        Some(c) if c.is_finite() => format!("{ns:8.2} ns = {c:5.1} cy"),
        _ => format!("{ns:8.2} ns"),
    }
}

/// The suffix a noisy figure carries in the terminal summary.
pub(crate) fn noisy_mark(v: Verdict) -> &'static str {
    match v {
        Verdict::Ok => "",
        Verdict::Noisy => "  (noisy)",
    }
}

/// A table cell with two decimals, `-` where not finite.
pub(crate) fn two_decimals(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.2}")
    } else {
        "-".into()
    }
}

/// [`two_decimals`], `-` where not measured.
pub(crate) fn opt_two_decimals(v: Option<f64>) -> String {
    v.map_or("-".into(), two_decimals)
}

/// A table cell with one decimal, `-` where not measured or not finite.
pub(crate) fn opt_one_decimal(v: Option<f64>) -> String {
    v.filter(|v| v.is_finite())
        .map_or("-".into(), |v| format!("{v:.1}"))
}

/// Bytes per second as `12.50 GB/s`, `-` where not measured or not finite.
pub(crate) fn opt_gb_per_s(v: Option<f64>) -> String {
    v.filter(|v| v.is_finite())
        .map_or("-".into(), |v| format!("{:.2} GB/s", v / 1e9))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(format_utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(format_utc(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(format_utc(1_790_000_000), "2026-09-21 14:13 UTC");
    }

    #[test]
    fn figures_and_ratios_with_their_units() {
        assert_eq!(fmt_ratio(None), "-");
        assert_eq!(value_with_unit(FigureUnit::BytesPerSec, 12.5e9), "12.50 GB/s");
        assert_eq!(value_with_unit(FigureUnit::Bytes, 2097152.0), "2 MiB");
    }
}

/// `line` cut at spaces into lines of at most `width` columns (a word
/// longer than that stays whole), the continuation lines indented by
/// `indent` spaces; each line ends with a newline. Spaces before the first
/// break (a label's alignment) are kept as they are. The terminal
/// summary's prose (notes, page statements) is wrapped so it reads in 100
/// columns.
pub fn wrap(line: &str, width: usize, indent: usize) -> String {
    let mut out = String::new();
    let mut rest: Vec<char> = line.trim_end().chars().collect();
    let mut first = true;
    loop {
        let lead = if first { 0 } else { indent };
        if lead + rest.len() <= width {
            out.push_str(&" ".repeat(lead));
            out.extend(rest.iter());
            out.push('\n');
            return out;
        }
        // The last space that keeps the line within `width`, past the
        // leading indentation; else the first space after it.
        let skip = rest.iter().take_while(|c| **c == ' ').count();
        let within = (skip..=(width - lead).min(rest.len() - 1))
            .rev()
            .find(|&i| rest[i] == ' ');
        let cut = within.or_else(|| (skip..rest.len()).find(|&i| rest[i] == ' '));
        let Some(cut) = cut.filter(|&c| c > skip) else {
            out.push_str(&" ".repeat(lead));
            out.extend(rest.iter());
            out.push('\n');
            return out;
        };
        out.push_str(&" ".repeat(lead));
        out.extend(rest[..cut].iter());
        out.push('\n');
        let next = rest[cut..]
            .iter()
            .position(|c| *c != ' ')
            .map_or(rest.len(), |p| cut + p);
        rest.drain(..next);
        first = false;
    }
}

#[cfg(test)]
mod wrap_tests {
    use super::wrap;

    #[test]
    fn wraps_at_spaces_within_the_width_and_indents_continuations() {
        let s = wrap("  - cache: one two three four five six seven", 20, 4);
        for l in s.lines() {
            assert!(l.chars().count() <= 20, "{l:?}");
        }
        assert!(s.starts_with("  - cache: one two\n    three"), "{s}");
        assert_eq!(s.split_whitespace().count(), 9, "no word lost");
        assert_eq!(wrap("short", 20, 4), "short\n");
        let long = wrap("a supercalifragilisticexpialidocious b", 10, 2);
        assert!(long.contains("supercalifragilisticexpialidocious"), "{long}");
        assert!(long.lines().all(|l| !l.trim().is_empty()), "{long}");
    }
}
