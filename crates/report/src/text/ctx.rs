//! The context-switch block of the terminal summary (lmbench's lat_ctx
//! table: one row per process size and ring size).

use crate::format::noisy_mark;
use hwcal_model::*;
use std::fmt::Write;

/// How the ring was placed, for humans.
pub fn ctx_placement(c: &ContextSwitch) -> String {
    let list = |v: &[usize]| v.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",");
    match c.placement.as_str() {
        "same" => format!(
            "same: every member on CPU {}, each hop at least one switch",
            list(&c.cpus)
        ),
        "spread" => format!("spread: members round-robin over CPUs {}", list(&c.cpus)),
        "none" => "none: unpinned, the scheduler places members".into(),
        other => other.to_string(),
    }
}

/// The context-switch block: per size, the overhead that was subtracted and
/// per ring size min / median ± MAD / max, µs per hop (lat_ctx's "switch"),
/// then the switches per hop the kernel counted and µs per real switch.
pub fn context_switch(c: &ContextSwitch) -> String {
    let mut s = String::new();
    s += &crate::format::wrap(
        &format!(
            "context switch (lat_ctx ring of {}; placement {}):",
            c.kind,
            ctx_placement(c)
        ),
        100,
        2,
    );
    s += &crate::format::wrap(
        &format!(
            "  {} ring(s) at once, {} samples per point after {} warm-up round(s); µs per hop (lat_ctx's \
             \"switch\"), with the overhead (token pass + array sum in one process, hot caches) subtracted; \
             sw/hop = switches per hop counted by the kernel, µs/switch = median / sw/hop",
            c.parallel.max(1),
            c.repetitions,
            c.warmups
        ),
        100,
        2,
    );
    let _ = writeln!(
        s,
        "  {:>8} {:>10} {:>6} {:>8} {:>8} {:>7} {:>8} {:>9} {:>7} {:>9}",
        "size", "overhead", "procs", "min", "median", "±MAD", "max", "median cy", "sw/hop", "µs/switch"
    );
    for z in c.all_sizes() {
        for (i, p) in z.points.iter().enumerate() {
            let (sz, ov) = if i == 0 {
                (format!("{} KiB", z.size_kb), format!("{:.2} µs", z.overhead_us))
            } else {
                (String::new(), String::new())
            };
            let cy = p.cycles_median.map_or("-".to_string(), |c| format!("{c:.0}"));
            let sw = p.switches_per_hop.map_or("-".to_string(), |c| format!("{c:.2}"));
            let per = p.us_per_switch.map_or("-".to_string(), |c| format!("{c:.2}"));
            let _ = writeln!(
                s,
                "  {:>8} {:>10} {:>6} {:>8.2} {:>8.2} {:>7.2} {:>8.2} {:>9} {:>7} {:>9}{}{}",
                sz,
                ov,
                p.nprocs,
                p.us_min,
                p.us_median,
                p.us_mad,
                p.us_max,
                cy,
                sw,
                per,
                if p.overhead_exceeds {
                    "  (overhead ≥ hop in some samples: clamped to 0)"
                } else {
                    ""
                },
                noisy_mark(p.verdict)
            );
        }
    }
    s
}
