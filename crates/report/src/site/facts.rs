//! The few figures of a run the site's tables show: small enough to keep
//! for every run of a large database while the profiles themselves (a
//! megabyte each with their raw curves) are read one at a time.

use super::machine::{machine_key, MachineKey};
use hwcal_model::{Direction, Profile, Verdict};

/// One figure with its verdict.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fig {
    pub value: f64,
    pub noisy: bool,
}

impl Fig {
    fn new(value: f64, verdict: Verdict) -> Option<Fig> {
        value.is_finite().then_some(Fig {
            value,
            noisy: verdict == Verdict::Noisy,
        })
    }
}

/// A cache level: effective size and load latency.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Level {
    pub level: u32,
    pub size_bytes: u64,
    pub latency: Fig,
}

/// One figure of a run on the comparison page ([`RunFacts::figures`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RunFigure {
    pub label: String,
    pub better: Direction,
    /// How it was measured (thread count, ctx size, I/O job): two runs
    /// measured differently are not judged against each other.
    pub how: String,
    pub fig: Fig,
    /// The value as the page prints it.
    pub text: String,
}

/// What the site shows of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunFacts {
    pub id: i64,
    pub created_unix: u64,
    pub command: String,
    pub tool_version: String,
    pub machine: MachineKey,
    pub kernel: String,
    pub clock_mhz: Option<Fig>,
    pub caches: Vec<Level>,
    pub memory_ns: Option<Fig>,
    /// Sequential read, write and copy bandwidth (bytes/s) and the thread
    /// count they were measured with.
    pub read_bps: Option<Fig>,
    pub write_bps: Option<Fig>,
    pub copy_bps: Option<Fig>,
    pub bw_threads: u32,
    /// Context switch between two processes (median µs per hop) and the
    /// array size each process sums (lat_ctx `-s`).
    pub ctx2_us: Option<Fig>,
    pub ctx_kb: u64,
    pub iops: Option<f64>,
    /// What the I/O figure measured (`randread 4 KiB, io_uring QD 32`).
    pub io_what: String,
    /// The figures flagged noisy, by name (`L2`, `memory`, `ctx`...).
    pub noisy: Vec<String>,
    /// How many warnings the run's notes hold.
    pub warnings: usize,
}

impl RunFacts {
    /// The facts of run `id` (its text made inert, as everything hwcal
    /// shows from a profile).
    pub fn of(id: i64, p: &Profile) -> RunFacts {
        let p = &*crate::sanitize::inert_profile(p);
        let caches: Vec<Level> = p
            .caches
            .iter()
            .flatten()
            .filter_map(|c| {
                Some(Level {
                    level: c.level,
                    size_bytes: c.size_bytes,
                    latency: Fig::new(c.latency_ns, c.verdict)?,
                })
            })
            .collect();
        let bw = p.bandwidth.as_ref();
        // The section's verdict (profiles older than it: not judged, ok).
        let bw_verdict = bw.and_then(|b| b.verdict).unwrap_or(Verdict::Ok);
        let bw_fig = |v: Option<f64>| Fig::new(v?, bw_verdict);
        let ctx2 = p.context_switch.as_ref().and_then(|c| {
            c.all_sizes().into_iter().find_map(|z| {
                let q = z.points.iter().find(|q| q.nprocs == 2)?;
                Some((Fig::new(q.us_median, q.verdict)?, z.size_kb))
            })
        });
        let mut noisy = Vec::new();
        if p.clock.as_ref().is_some_and(|c| c.verdict == Verdict::Noisy) {
            noisy.push("clock".to_string());
        }
        for c in p.caches.iter().flatten().filter(|c| c.verdict == Verdict::Noisy) {
            noisy.push(format!("L{}", c.level));
        }
        if p.memory.as_ref().is_some_and(|m| m.verdict == Verdict::Noisy) {
            noisy.push("memory".into());
        }
        if p.tlbs.iter().flatten().any(|t| t.verdict == Verdict::Noisy) {
            noisy.push("TLB".into());
        }
        if p.mem.as_ref().is_some_and(|m| m.verdict == Verdict::Noisy) {
            noisy.push("mem".into());
        }
        if ctx2.is_some_and(|(f, _)| f.noisy) {
            noisy.push("ctx".into());
        }
        if bw_verdict == Verdict::Noisy {
            noisy.push("bandwidth".into());
        }
        RunFacts {
            id,
            created_unix: p.created_unix,
            command: p.command.clone(),
            tool_version: p.tool_version.clone(),
            machine: machine_key(p),
            kernel: p.machine.as_ref().map_or(String::new(), |m| m.kernel.clone()),
            clock_mhz: p.clock.as_ref().and_then(|c| Fig::new(c.core_mhz, c.verdict)),
            caches,
            memory_ns: p.memory.as_ref().and_then(|m| Fig::new(m.latency_ns, m.verdict)),
            read_bps: bw.and_then(|b| bw_fig(b.read_bytes_per_sec)),
            write_bps: bw.and_then(|b| bw_fig(b.write_bytes_per_sec)),
            copy_bps: bw.and_then(|b| bw_fig(b.copy_bytes_per_sec)),
            bw_threads: bw.map_or(0, |b| b.threads),
            ctx2_us: ctx2.map(|(f, _)| f),
            ctx_kb: ctx2.map_or(0, |(_, kb)| kb),
            iops: p.io.as_ref().map(|io| io.iops).filter(|v| v.is_finite()),
            io_what: p.io.as_ref().map_or(String::new(), |io| {
                format!(
                    "{} {}, {} QD {}",
                    io.rw,
                    crate::text::human_bytes(io.bs_bytes),
                    io.engine,
                    io.iodepth
                )
            }),
            noisy,
            warnings: p
                .notes
                .iter()
                .filter(|n| n.severity == hwcal_model::Severity::Warning)
                .count(),
        }
    }

    /// Every figure of the run as the comparison page shows and judges it,
    /// in order: the one list the page's table (`pages`) and its verdicts
    /// (`verdicts`) both take, so a label or direction cannot differ
    /// between them.
    pub fn figures(&self) -> Vec<RunFigure> {
        let mut v = Vec::new();
        let mut add = |label: String,
                       better: Direction,
                       how: String,
                       fig: Option<Fig>,
                       text: &dyn Fn(f64) -> String| {
            if let Some(fig) = fig {
                let text = text(fig.value);
                v.push(RunFigure {
                    label,
                    better,
                    how,
                    fig,
                    text,
                });
            }
        };
        let none = String::new;
        add(
            "core clock".into(),
            Direction::Higher,
            none(),
            self.clock_mhz,
            &|x| format!("{x:.0} MHz"),
        );
        for l in &self.caches {
            let size = Fig {
                value: l.size_bytes as f64,
                noisy: l.latency.noisy,
            };
            let n = l.level;
            let bytes = |x: f64| crate::text::human_bytes(x as u64);
            add(
                format!("L{n} size"),
                Direction::Higher,
                none(),
                Some(size),
                &bytes,
            );
            add(
                format!("L{n} latency"),
                Direction::Lower,
                none(),
                Some(l.latency),
                &|x| format!("{x:.2} ns"),
            );
        }
        add(
            "memory latency".into(),
            Direction::Lower,
            none(),
            self.memory_ns,
            &|x| format!("{x:.1} ns"),
        );
        let threads = format!("{} threads", self.bw_threads);
        for (op, f) in [
            ("read", self.read_bps),
            ("write", self.write_bps),
            ("copy", self.copy_bps),
        ] {
            let gbs = |x: f64| format!("{:.2} GB/s", x / 1e9);
            add(
                format!("{op} bandwidth"),
                Direction::Higher,
                threads.clone(),
                f,
                &gbs,
            );
        }
        let ctx = format!("{} KiB per process", self.ctx_kb);
        let us = |x: f64| format!("{x:.2} µs");
        add(
            "context switch, 2 processes".into(),
            Direction::Lower,
            ctx,
            self.ctx2_us,
            &us,
        );
        let io = self.iops.map(|value| Fig { value, noisy: false });
        add("I/O".into(), Direction::Higher, self.io_what.clone(), io, &|x| {
            format!("{x:.0} IOPS")
        });
        v
    }

    /// Cache level `n` (1-based, as the profile numbers them).
    pub fn level(&self, n: u32) -> Option<&Level> {
        self.caches.iter().find(|l| l.level == n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwcal_model::sample::full_profile;

    #[test]
    fn facts_of_a_full_run() {
        let f = RunFacts::of(7, &full_profile(0));
        assert_eq!(f.id, 7);
        assert_eq!(f.caches.len(), 3);
        assert_eq!(f.level(2).unwrap().size_bytes, 2 << 20);
        assert!((f.level(1).unwrap().latency.value - 2.1).abs() < 1e-9);
        assert!((f.memory_ns.unwrap().value - 145.0).abs() < 1e-9);
        assert_eq!(f.bw_threads, 2);
        assert!(f.read_bps.unwrap().value > f.write_bps.unwrap().value);
        assert!(f.ctx2_us.is_some());
        // The synthetic L3 is flagged noisy, and only it.
        assert_eq!(f.noisy, ["L3"]);
        assert!(f.level(3).unwrap().latency.noisy);
    }

    #[test]
    fn missing_sections_and_nan_figures_are_absent_not_zero() {
        let mut p = full_profile(0);
        p.bandwidth = None;
        p.context_switch = None;
        p.memory.as_mut().unwrap().latency_ns = f64::NAN;
        p.caches.as_mut().unwrap()[0].latency_ns = f64::NAN;
        let f = RunFacts::of(1, &p);
        assert!(f.read_bps.is_none() && f.ctx2_us.is_none() && f.memory_ns.is_none());
        assert!(f.level(1).is_none() && f.level(2).is_some());
        let empty = RunFacts::of(2, &Profile::new("hwcal clock", 5));
        assert!(empty.caches.is_empty() && empty.noisy.is_empty());
    }
}
