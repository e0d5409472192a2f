//! micbench-mem's flag syntax, parsed into plain values: `-a TID:cCPU:NODE`
//! affinities and `-t` seconds (the CLI validates them against the machine).

/// One `-a TID:cCPU:NODE` setting (micbench's syntax: `-a 0:c0:1` runs thread
/// 0 on CPU 0 with its memory on node 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Affinity {
    pub tid: u32,
    pub cpu: usize,
    pub node: u32,
}

pub fn parse_affinity(s: &str) -> Result<Affinity, String> {
    let bad = || format!("affinity '{s}': expected TID:cCPU:NODE, e.g. 0:c0:0");
    let parts: Vec<&str> = s.trim().split(':').collect();
    let [tid, cpu, node] = parts[..] else {
        return Err(bad());
    };
    let cpu = cpu.strip_prefix('c').ok_or_else(bad)?;
    let num = |x: &str| -> Result<u64, String> {
        if x.is_empty() || !x.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        x.parse::<u64>().map_err(|_| bad())
    };
    Ok(Affinity {
        tid: u32::try_from(num(tid)?).map_err(|_| bad())?,
        cpu: usize::try_from(num(cpu)?).map_err(|_| bad())?,
        node: u32::try_from(num(node)?).map_err(|_| bad())?,
    })
}

/// Seconds for `-t`: positive, finite, at most a day.
pub fn parse_secs(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 86_400.0 => Ok(v),
        _ => Err(format!(
            "time '{s}': expected seconds > 0 (fractions allowed), at most 86400"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affinity_is_micbench_syntax() {
        assert_eq!(
            parse_affinity("0:c0:0"),
            Ok(Affinity {
                tid: 0,
                cpu: 0,
                node: 0
            })
        );
        assert_eq!(
            parse_affinity("3:c17:1"),
            Ok(Affinity {
                tid: 3,
                cpu: 17,
                node: 1
            })
        );
        for bad in [
            "", "0", "0:0:0", "0:c0", "0:c0:0:0", "a:c0:0", "0:c:0", "0:cx:0", "0:c0:", "-1:c0:0", "0:c-1:0",
            "0:c0:n1",
        ] {
            let e = parse_affinity(bad).unwrap_err();
            assert!(e.contains("TID:cCPU:NODE"), "{bad}: {e}");
        }
    }

    #[test]
    fn seconds() {
        assert_eq!(parse_secs("0.5"), Ok(0.5));
        assert_eq!(parse_secs("10"), Ok(10.0));
        for bad in ["0", "-1", "nan", "inf", "x", "1e9"] {
            assert!(parse_secs(bad).is_err(), "{bad}");
        }
    }
}
