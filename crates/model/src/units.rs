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
