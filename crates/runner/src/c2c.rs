//! The core-to-core latency probe (`hwcal c2c`, and in `hwcal run`): the
//! ping-pongs of `hwcal_probes::c2c` (CAS on one line, read/write on two)
//! for every pair of the online CPUs (an evenly spaced sample of pairs past
//! [`RUN_MAX_PAIRS`]), one raw curve per method and first CPU; the figures
//! come from `hwcal_analysis::c2c`.

use crate::probe::{Plan, ProbeEntry, Progress};
use crate::{usage, Context, Result};
use hwcal_analysis::batches::judge;
use hwcal_analysis::c2c::Variant;
use hwcal_model::{Profile, RawCurve, RawPoint};
use hwcal_probes::c2c::Method;
use std::collections::BTreeMap;

/// Pairs `hwcal run` measures at most: every pair of a 16-CPU machine
/// (~0.3 s there per method); larger machines get an evenly spaced sample.
pub const RUN_MAX_PAIRS: usize = 120;
/// Timed batches per pair (each of `hwcal_probes::c2c::TRIPS` round trips).
pub const BATCHES: usize = 31;

pub const ENTRY: ProbeEntry = ProbeEntry {
    id: "c2c",
    description:
        "core-to-core latency: a cache line's one-way handoff between CPUs (CAS and read/write ping-pongs)",
    opt_in: false,
    typical_s: 0.2,
    reads: &[],
    plan: |_, machine| {
        // The online CPUs this process may use (taskset, a cpuset, Slurm's
        // binding): never a pair outside them. Fewer than two: no pair at
        // all, and the profile says so (a run under `taskset -c 0` left
        // core-to-core latency out without a word).
        let cpus = within_allowed(&machine.online_cpus);
        Some(Box::new(C2c {
            cpus,
            batches: BATCHES,
            max_pairs: RUN_MAX_PAIRS,
            methods: Method::ALL.to_vec(),
        }))
    },
    analyze: hwcal_analysis::c2c::reanalyze,
};

/// The probe's plan: the CPUs to pair, batches per pair, how many pairs
/// at most, and the methods (each pair by each, one after the other).
#[derive(Debug, Clone)]
pub struct C2c {
    pub cpus: Vec<usize>,
    pub batches: usize,
    pub max_pairs: usize,
    pub methods: Vec<Method>,
}

/// Of `cpus` (the machine's online ones), those this process may use; all
/// of them where the affinity cannot be read.
pub fn within_allowed(cpus: &[usize]) -> Vec<usize> {
    let allowed = hwcal_harness::pin::allowed_cpus();
    let out: Vec<usize> = cpus.iter().copied().filter(|c| allowed.contains(c)).collect();
    if out.is_empty() {
        allowed
    } else {
        out
    }
}

/// Methods by id (`--method cas,rw`); an unknown id is a usage error.
pub fn parse_methods(list: &[String]) -> Result<Vec<Method>> {
    if list.is_empty() {
        return Ok(Method::ALL.to_vec());
    }
    let mut out = Vec::new();
    for id in list {
        match Method::by_id(id) {
            Some(m) if !out.contains(&m) => out.push(m),
            Some(_) => {}
            None => usage!("--method {id}: expected cas or rw"),
        }
    }
    Ok(out)
}

/// The analysis's name for a method's curves.
fn variant(m: Method) -> Variant {
    match m {
        Method::Cas => Variant::Cas,
        Method::ReadWrite => Variant::ReadWrite,
    }
}

impl C2c {
    /// The plan a command line asks for: `cpus` as Linux lists them (every
    /// allowed CPU when absent), `max_pairs` 0 for every pair, `methods` by
    /// id (both when empty); checked against the machine.
    pub fn requested(
        cpus: Option<&str>,
        batches: usize,
        max_pairs: usize,
        methods: &[String],
    ) -> Result<C2c> {
        let plan = C2c {
            cpus: match cpus {
                Some(s) => parse_cpus(s)?,
                None => hwcal_harness::pin::allowed_cpus(),
            },
            batches,
            max_pairs: if max_pairs == 0 { usize::MAX } else { max_pairs },
            methods: parse_methods(methods)?,
        };
        plan.check()?;
        Ok(plan)
    }

    /// A request the machine can serve: known, allowed CPUs, two at least.
    pub fn check(&self) -> Result<()> {
        let allowed = hwcal_harness::pin::allowed_cpus();
        if let Some(c) = self.cpus.iter().find(|c| !allowed.contains(c)) {
            usage!("--cpus: CPU {c} does not exist or is not allowed (allowed: {allowed:?})");
        }
        if self.cpus.len() < 2 {
            usage!(
                "core-to-core latency needs two CPUs to pass a line between, and {} {:?} (allowed: {allowed:?})",
                if self.cpus.len() == 1 { "only this one was given or allowed:" } else { "none was given:" },
                self.cpus
            );
        }
        if self.methods.is_empty() {
            usage!("--method: at least one of cas, rw");
        }
        if self.batches < 5 {
            usage!(
                "--batches {}: at least 5 (the verdict needs a spread)",
                self.batches
            );
        }
        Ok(())
    }
}

/// The CPU numbers Linux can have (its largest CONFIG_NR_CPUS).
const MAX_CPUS: usize = 8192;

/// A CPU list as Linux writes them (`0-3,8,10-11`), strictly: a usage
/// error on anything else, each CPU once.
pub fn parse_cpus(s: &str) -> Result<Vec<usize>> {
    let mut out: Vec<usize> = Vec::new();
    for part in s.split(',') {
        let bad = || crate::RunnerError::Usage(format!("--cpus {s}: expected a list such as 0-3,8"));
        let (lo, hi) = match part.split_once('-') {
            Some((l, h)) => (
                l.trim().parse().map_err(|_| bad())?,
                h.trim().parse().map_err(|_| bad())?,
            ),
            None => {
                let c: usize = part.trim().parse().map_err(|_| bad())?;
                (c, c)
            }
        };
        if lo > hi {
            return Err(bad());
        }
        // Linux's CPU sets end at 8192 CPUs (CONFIG_NR_CPUS); a larger
        // number is no CPU of any machine, and a list of a million would be
        // built for nothing.
        if hi >= MAX_CPUS {
            usage!("--cpus {s}: CPU {hi} is beyond any machine (CPU numbers end below {MAX_CPUS})");
        }
        out.extend((lo..=hi).filter(|c| !out.contains(c)).collect::<Vec<_>>());
    }
    Ok(out)
}

impl Plan for C2c {
    fn run(&self, _hw: &dyn crate::points::Hardware, progress: &dyn Progress) -> Result<Profile> {
        let pairs = hwcal_probes::c2c::pairs(&self.cpus, self.max_pairs);
        if pairs.is_empty() {
            let text = format!(
                "c2c: fewer than two CPUs allowed ({:?}: taskset, a cpuset or the scheduler's binding): no pair to \
                 measure, core-to-core latency left out",
                self.cpus
            );
            progress.say(&text);
            let mut p = Profile::default();
            p.notes.push(hwcal_model::Note::warning("c2c", "one_cpu", text));
            return Ok(p);
        }
        progress.say(&format!("c2c: {} pair(s) of CPUs", pairs.len()));
        // Each pair by every method back to back: the methods see the same
        // moment of the machine, so a disagreement between them is theirs.
        let mut by_first: BTreeMap<(usize, usize), Vec<RawPoint>> = BTreeMap::new();
        for (a, b) in pairs {
            for (k, &m) in self.methods.iter().enumerate() {
                let samples = hwcal_probes::c2c::handoff_ns(a, b, self.batches, m)
                    .with_context(|| format!("c2c: CPUs {a} and {b} ({})", m.id()))?;
                by_first.entry((k, a)).or_default().push(RawPoint {
                    x: b as f64,
                    y: judge(&samples).map_or(f64::NAN, |b| b.median),
                    samples,
                    ..Default::default()
                });
            }
        }
        let raw = by_first
            .into_iter()
            .map(|((k, a), mut points)| {
                points.sort_by(|p, q| p.x.total_cmp(&q.x));
                RawCurve {
                    id: variant(self.methods[k]).curve_id(a),
                    x_label: "partner CPU".into(),
                    y_label: "ns one way, median of batches (samples: each batch)".into(),
                    points,
                }
            })
            .collect();
        Ok(Profile {
            raw,
            ..Default::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_are_chosen_by_id() {
        assert_eq!(parse_methods(&[]).unwrap(), Method::ALL);
        assert_eq!(
            parse_methods(&["rw".into(), "rw".into()]).unwrap(),
            [Method::ReadWrite]
        );
        assert!(parse_methods(&["mesi".into()]).unwrap_err().is_usage());
        // Every method's curves are the analysis's.
        for m in Method::ALL {
            assert!(variant(m).curve_id(3).ends_with("cpu3"));
        }
    }

    #[test]
    fn cpu_lists_parse_strictly() {
        assert_eq!(parse_cpus("0-3,8").unwrap(), [0, 1, 2, 3, 8]);
        assert_eq!(parse_cpus("2,2,1").unwrap(), [2, 1]);
        for bad in ["", "a", "3-1", "1,,2", "0-"] {
            assert!(parse_cpus(bad).unwrap_err().is_usage(), "{bad}");
        }
        // A list, but of CPUs no machine has: said so, not "not a list".
        let far = parse_cpus("0-999999").unwrap_err();
        assert!(
            far.is_usage() && far.to_string().contains("beyond any machine"),
            "{far}"
        );
    }

    #[test]
    fn one_cpu_is_no_pair() {
        let one = C2c::requested(Some("0"), 21, 0, &[]).unwrap_err();
        assert!(one.is_usage() && one.to_string().contains("two CPUs"), "{one}");
    }
}
