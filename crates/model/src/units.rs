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

/// Human size with binary units: `48 KiB`, `1.25 MiB`.
pub fn human_bytes(b: u64) -> String {
    let (v, u) = scale(b as f64);
    if u == 0 || (v - v.round()).abs() < 1e-9 {
        format!("{} {}", v.round() as u64, UNITS[u])
    } else {
        format!("{v:.2} {}", UNITS[u])
    }
}

/// A size found by a sweep, to three significant figures (`38.2 KiB`,
/// `2.03 MiB`): the refined cache sweep steps by about 4%, so a fourth
/// digit would claim a precision the measurement does not have.
pub fn measured_bytes(b: u64) -> String {
    let (v, u) = scale(b as f64);
    let decimals = if u == 0 || v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.decimals$} {}", UNITS[u])
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
        assert_eq!(axis_bytes(4096.0), "4K");
        assert_eq!(axis_bytes(1.5 * 1048576.0), "1.5M");
    }
}
