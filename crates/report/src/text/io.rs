//! The I/O block of the terminal summary, fio-style: the job, totals,
//! latency percentiles and per-thread lines.

use hwcal_model::*;
use std::fmt::Write;

/// fio-style rate: `123.4 MB/s (117.7 MiB/s)`.
fn rate(bps: f64) -> String {
    format!("{:.1} MB/s ({:.1} MiB/s)", bps / 1e6, bps / (1u64 << 20) as f64)
}

pub fn io_section(io: &IoResult) -> String {
    let mut s = String::new();
    let mix = match io.rwmix_read {
        Some(r) => format!(" rwmix_read={r}%"),
        None => String::new(),
    };
    let _ = writeln!(
        s,
        "io ({}{mix} bs={} engine={} iodepth={} threads={}{}):",
        io.rw,
        human_bytes(io.bs_bytes),
        io.engine,
        io.iodepth,
        io.threads,
        if io.direct { " direct" } else { " buffered" },
    );
    let _ = writeln!(
        s,
        "  target     {} ({} used{}), {}",
        io.path,
        human_bytes(io.size_bytes),
        if io.created_file {
            ", created and removed"
        } else {
            ""
        },
        match io.time_limit_s {
            Some(t) => format!("time-bound {t} s, ran {:.2} s", io.runtime_s),
            None => format!("one pass in {:.2} s", io.runtime_s),
        }
    );
    let _ = writeln!(
        s,
        "  total      {:.0} IOPS, {}, {} I/Os",
        io.iops,
        rate(io.bytes_per_sec),
        io.ios
    );
    if io.read_ios > 0 && io.write_ios > 0 && io.runtime_s > 0.0 {
        let _ = writeln!(
            s,
            "             reads {:.0} IOPS, writes {:.0} IOPS",
            io.read_ios as f64 / io.runtime_s,
            io.write_ios as f64 / io.runtime_s
        );
    }
    let _ = writeln!(
        s,
        "  latency    min {:.1}  p50 {:.1}  p99 {:.1}  p99.9 {:.1}  max {:.1}  mean {:.1}  (µs)",
        io.lat_min_us, io.lat_p50_us, io.lat_p99_us, io.lat_p999_us, io.lat_max_us, io.lat_mean_us
    );
    if io.iops_intervals.len() >= 2 {
        let v = &io.iops_intervals;
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(0.0, f64::max);
        let _ = writeln!(s, "  per second IOPS from {lo:.0} to {hi:.0} over {} s", v.len());
    }
    if io.per_thread.len() > 1 {
        for t in &io.per_thread {
            let _ = writeln!(
                s,
                "  thread {:<3} {:.0} IOPS, {}, latency µs min {:.1} p50 {:.1} p99 {:.1} p99.9 {:.1} max {:.1}",
                t.tid,
                t.iops,
                rate(t.bytes_per_sec),
                t.lat_min_us,
                t.lat_p50_us,
                t.lat_p99_us,
                t.lat_p999_us,
                t.lat_max_us
            );
        }
    }
    s
}
