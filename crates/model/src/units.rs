//! The one formatter of byte counts, for every crate that prints a size:
//! one scaling to binary units, three presentations of it.

/// `v` bytes scaled to the largest binary unit it reaches, and that unit's
/// index (0 = B, 1 = Ki, ... 4 = Ti).
fn scale(v: f64) -> (f64, usize) {
    let mut v = v;
    let mut u = 0;
    while v >= 1024.0 && u < 4 {
        v /= 1024.0;
        u += 1;
    }
    (v, u)
}

const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];

/// The one way hwcal prints a size, in text, HTML, comparisons and plot
/// labels alike: binary units, three significant figures, trailing zeros
/// dropped (`48 KiB`, `479 KiB`, `38.2 KiB`, `2.03 MiB`, `1.25 MiB`). The
/// refined cache sweep steps by about 4%, so a fourth digit would claim a
/// precision the measurement does not have, and the same figure must not
/// read `478.88 KiB` in one place and `479 KiB` in another.
pub fn human_bytes(b: u64) -> String {
    let (v, u) = scale(b as f64);
    if u == 0 {
        return format!("{b} B");
    }
    // Round to three significant figures first: 1023.6 KiB rounds to
    // 1024 KiB, which reads (and is) 1 MiB.
    let decimals = if v >= 99.95 {
        0
    } else if v >= 9.995 {
        1
    } else {
        2
    };
    let (mut v, mut u) = (v, u);
    if decimals == 0 && v.round() >= 1024.0 && u < 4 {
        v /= 1024.0;
        u += 1;
        return trim(format!("{v:.2}"), u);
    }
    trim(format!("{v:.decimals$}"), u)
}

fn trim(num: String, u: usize) -> String {
    let num = if num.contains('.') {
        num.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        num
    };
    format!("{num} {}", UNITS[u])
}

/// A size found by a sweep: the same presentation as [`human_bytes`] (one
/// figure, one value), kept as a name for the call sites that print a
/// measured size.
pub fn measured_bytes(b: u64) -> String {
    human_bytes(b)
}

/// A compact size for plot axes: `4K`, `1.5M`.
pub fn axis_bytes(b: f64) -> String {
    const SHORT: [&str; 5] = ["B", "K", "M", "G", "T"];
    let (v, u) = scale(b);
    if (v - v.round()).abs() < 1e-6 {
        format!("{}{}", v.round() as u64, SHORT[u])
    } else {
        format!("{v:.1}{}", SHORT[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_presentations() {
        assert_eq!(human_bytes(49152), "48 KiB");
        assert_eq!(human_bytes(1310720), "1.25 MiB");
        assert_eq!(measured_bytes(39107), "38.2 KiB");
        assert_eq!(human_bytes(490373), "479 KiB");
        assert_eq!(measured_bytes(490373), human_bytes(490373));
        assert_eq!(human_bytes(2_128_000), "2.03 MiB");
        assert_eq!(human_bytes(2 << 20), "2 MiB");
        assert_eq!(human_bytes(1_048_400), "1 MiB");
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(10 * 1024 + 1000), "11 KiB");
        assert_eq!(axis_bytes(4096.0), "4K");
        assert_eq!(axis_bytes(1.5 * 1048576.0), "1.5M");
    }
}

/// Parse a size with an optional binary suffix: `4096`, `4k`, `4K`, `4KiB`,
/// `4KB`, `1.5M`, `1G`, `2T`, `1P` (all 1024-based, like fio and micbench).
/// Zero is allowed here; callers that need a positive size check it.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    if t.starts_with('-') {
        return Err(format!("'{s}': a size cannot be negative"));
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let unit = unit.trim();
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        "p" | "pb" | "pib" => 50,
        _ => return Err(format!("'{s}': unknown size unit '{unit}' (use k, M, G, T or P)")),
    };
    if num.is_empty() || num.starts_with('.') || num.ends_with('.') || num.matches('.').count() > 1 {
        return Err(format!("'{s}': not a size (e.g. 4k, 1M, 1G)"));
    }
    let bad = || format!("'{s}': size too large");
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    let whole: u64 = int.parse().map_err(|_| bad())?;
    let mut v = whole.checked_mul(1u64 << shift).ok_or_else(bad)?;
    if !frac.is_empty() {
        // Fractions only make sense with a unit: 1.5M is 1572864 bytes.
        let f: f64 = format!("0.{frac}").parse().map_err(|_| bad())?;
        let part = f * (1u64 << shift) as f64;
        if part.fract() != 0.0 {
            return Err(format!("'{s}': not a whole number of bytes"));
        }
        v = v.checked_add(part as u64).ok_or_else(bad)?;
    }
    Ok(v)
}

#[cfg(test)]
mod parse_size_tests {
    use super::parse_size;

    #[test]
    fn sizes_with_binary_suffixes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("4kb"), Ok(4096));
        assert_eq!(parse_size("1M"), Ok(1 << 20));
        assert_eq!(parse_size("1.5M"), Ok(3 << 19));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size(" 2 g "), Ok(2 << 30));
        assert_eq!(parse_size("1T"), Ok(1 << 40));
        assert_eq!(parse_size("1P"), Ok(1 << 50));
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("512B"), Ok(512));
    }

    #[test]
    fn bad_sizes() {
        for s in [
            "",
            "k",
            "-4k",
            "4x",
            "1.2.3k",
            "1.",
            ".5k",
            "4 k b",
            "0.1",
            "99999999999999999999",
            "16384P",
        ] {
            assert!(parse_size(s).is_err(), "{s:?} accepted");
        }
    }
}
