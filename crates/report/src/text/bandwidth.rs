//! The bandwidth block of the terminal summary: read/write/copy, the thread
//! scaling, the MLP curve and the loaded latency.

use hwcal_model::*;
use std::fmt::Write;

pub fn bandwidth(b: &Bandwidth) -> String {
    let mut s = String::new();
    bandwidth_headline(&mut s, b);
    bandwidth_scaling(&mut s, b);
    bandwidth_mlp(&mut s, b);
    bandwidth_loaded_latency(&mut s, b);
    s
}

/// The headline figures with the setup they were measured with (threads,
/// size per thread, kernel and kind of stores), and what a copy figure
/// counts, since it is half the memory traffic.
fn bandwidth_headline(s: &mut String, b: &Bandwidth) {
    let gbs = |v: Option<f64>| v.map_or("n/a".into(), |v| format!("{:.2} GB/s", v / 1e9));
    let _ = writeln!(
        s,
        "bandwidth ({} thread{}, {} per thread{}):\n  read {}, write {}, copy {}",
        b.threads,
        if b.threads == 1 { "" } else { "s" },
        human_bytes(b.size_bytes),
        if b.kernel.is_empty() {
            String::new()
        } else {
            format!(
                ", {} kernel, {} stores",
                b.kernel,
                if b.stores.is_empty() { "regular" } else { &b.stores }
            )
        },
        gbs(b.read_bytes_per_sec),
        gbs(b.write_bytes_per_sec),
        gbs(b.copy_bytes_per_sec)
    );
    if let Some(v) = b.verdict {
        let _ = writeln!(s, "  verdict {}", v.as_str());
    }
    if b.copy_bytes_per_sec.is_some() || b.scaling.iter().any(|p| p.op == "copy") {
        let _ = writeln!(
            s,
            "  (copy counts bytes copied, as lmbench bw_mem cp; the memory traffic is twice that)"
        );
    }
}

/// GB/s by thread count, one column per operation in the order first
/// measured; written only when more than one point was measured.
fn bandwidth_scaling(s: &mut String, b: &Bandwidth) {
    if b.scaling.len() <= 1 {
        return;
    }
    let mut ops: Vec<&str> = Vec::new();
    for p in &b.scaling {
        if !ops.contains(&p.op.as_str()) {
            ops.push(&p.op);
        }
    }
    let mut threads: Vec<u32> = b.scaling.iter().map(|p| p.threads).collect();
    threads.sort_unstable();
    threads.dedup();
    let mut head = format!("  {:>8}", "threads");
    for o in &ops {
        let _ = write!(head, " {:>12}", format!("{o} GB/s"));
    }
    let _ = writeln!(s, "{head}");
    for t in threads {
        let mut row = format!("  {t:>8}");
        for o in &ops {
            let v = b
                .scaling
                .iter()
                .find(|p| p.threads == t && p.op == *o)
                .map_or("-".into(), |p| {
                    let mark = if p.verdict == Some(Verdict::Noisy) {
                        "?"
                    } else {
                        ""
                    };
                    format!("{:.2}{mark}", p.bytes_per_sec / 1e9)
                });
            let _ = write!(row, " {v:>12}");
        }
        let _ = writeln!(s, "{row}");
    }
    if b.scaling.iter().any(|p| p.verdict == Some(Verdict::Noisy)) {
        let _ = writeln!(
            s,
            "  (? noisy: the timing slices disagree, or the threads were off their CPUs)"
        );
    }
}

/// Memory-level parallelism: ns per load with k independent chases.
fn bandwidth_mlp(s: &mut String, b: &Bandwidth) {
    if !b.mlp.is_empty() {
        let pts: Vec<String> = b
            .mlp
            .iter()
            .map(|m| format!("{}: {:.1} ns ({:.2}×)", m.chains, m.ns_per_load, m.speedup))
            .collect();
        let _ = writeln!(s, "  parallel chases, ns per load: {}", pts.join(", "));
    }
}

/// Latency of a chasing thread while others stream, one line per number
/// of streaming threads (0 is the idle memory system).
fn bandwidth_loaded_latency(s: &mut String, b: &Bandwidth) {
    for l in &b.loaded_latency {
        let _ = writeln!(
            s,
            "  latency with {} streaming thread(s): {:.1} ns{}{}",
            l.streaming_threads,
            l.latency_ns,
            l.latency_cycles
                .map_or(String::new(), |c| format!(" = {c:.0} cy")),
            if l.streaming_threads == 0 {
                " (idle memory system)".to_string()
            } else {
                format!(
                    " (the streams read {:.2} GB/s meanwhile)",
                    l.stream_bytes_per_sec / 1e9
                )
            }
        );
    }
}
