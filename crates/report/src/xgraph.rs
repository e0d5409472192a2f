//! lmbench's xgraph-style output: a quoted title line, then one `x y` pair
//! per line, a blank line between data sets. lat_ctx prints exactly this
//! (`"size=0 ovr=179` then `2 71`, `4 104`, ...), so scripts written for
//! lat_ctx read hwcal's output unchanged.

use hwcal_model::ContextSwitch;
use std::fmt::Write;

/// One data set per array size: the title gives the size and the overhead
/// that was subtracted (µs) — plus, after them, how the ring was placed —
/// then `nprocs µs-per-switch` (median) lines.
pub fn ctx_xgraph(c: &ContextSwitch) -> String {
    let mut s = String::new();
    let cpus = c.cpus.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",");
    for (i, z) in c.all_sizes().into_iter().enumerate() {
        let (size, ovr) = (z.size_kb, z.overhead_us);
        if i > 0 {
            s.push('\n');
        }
        let _ = write!(s, "\"size={size}k ovr={ovr:.2} placement={}", c.placement);
        if !cpus.is_empty() {
            let _ = write!(s, " cpus={cpus}");
        }
        let _ = writeln!(s, " {} P={}", c.kind, c.parallel.max(1));
        for p in &z.points {
            let _ = writeln!(s, "{} {:.2}", p.nprocs, p.us_median);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwcal_model::{CtxPoint, CtxSize};

    fn pt(n: u32, us: f64) -> CtxPoint {
        CtxPoint {
            nprocs: n,
            us_median: us,
            ..Default::default()
        }
    }

    #[test]
    fn lat_ctx_format() {
        let c = ContextSwitch {
            placement: "same".into(),
            kind: "processes".into(),
            size_kb: 0,
            parallel: 1,
            overhead_us: 0.581,
            points: vec![pt(2, 1.304), pt(4, 2.42)],
            sizes: vec![CtxSize {
                size_kb: 64,
                overhead_us: 3.0,
                overhead_cycles: None,
                points: vec![pt(2, 5.0)],
            }],
            cpus: vec![1],
            ..Default::default()
        };
        let out = ctx_xgraph(&c);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "\"size=0k ovr=0.58 placement=same cpus=1 processes P=1");
        assert_eq!(lines[1], "2 1.30");
        assert_eq!(lines[2], "4 2.42");
        assert_eq!(lines[3], "");
        assert!(lines[4].starts_with("\"size=64k ovr=3.00 "));
        assert_eq!(lines[5], "2 5.00");
        assert_eq!(lines.len(), 6);
    }
}
