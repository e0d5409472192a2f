//! Core-to-core latency from the ping-pong batches (`hwcal_probes::c2c`):
//! per pair the median one-way handoff and whether its batches agree; over
//! the pairs the fastest, the median and the slowest as named figures; the
//! pairs grouped into tiers by latency, set beside what sysfs says the two
//! CPUs share (an SMT core's L1, an L2, an L3 share, a NUMA node). The
//! tiers are how MLC's and `core-to-core-latency`'s heat maps are read: on
//! a cloud guest they show which vCPUs are siblings or share an L3, facts
//! the guest's topology may hide.

use crate::batches::{judge, NOISY_IQR};
use hwcal_model::figure::{self, Direction, Figure, FigureUnit};
use hwcal_model::note::refresh;
use hwcal_model::{MachineInfo, Note, Profile, RawCurve, Verdict};

/// The probe's id, and the prefix of its curves (`c2c.cpu{A}`: one curve
/// per first CPU, x the partner CPU, y the median, samples the batches).
pub const PROBE: &str = "c2c";
/// Note codes this analysis writes (refreshed on every re-analysis).
pub const NOTE_CODES: [&str; 3] = ["c2c.pair", "c2c.tiers", "c2c.noisy"];
/// A pair this much slower than the previous one (sorted) starts a new
/// tier: a different level of the coherence fabric (same core, same L3,
/// another L3 or socket) costs at least half as much again.
const TIER_STEP: f64 = 1.4;
/// Pairs named one by one in the notes; past this, by tier.
const NOTED_PAIRS: usize = 6;

/// The curve id of the pairs whose first CPU is `a`.
pub fn curve_id(a: usize) -> String {
    format!("{PROBE}.cpu{a}")
}

/// One measured pair.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    pub a: usize,
    pub b: usize,
    /// Median one-way latency over the batches, ns.
    pub median_ns: f64,
    pub min_ns: f64,
    pub max_ns: f64,
    pub verdict: Verdict,
}

/// Every pair in the profile's c2c curves.
pub fn pairs(p: &Profile) -> Vec<Pair> {
    let mut out = Vec::new();
    for c in p.raw.iter().filter(|c| is_c2c(c)) {
        let Some(a) = c.id.strip_prefix("c2c.cpu").and_then(|s| s.parse().ok()) else {
            continue;
        };
        for q in &c.points {
            let samples = if q.samples.is_empty() {
                vec![q.y]
            } else {
                q.samples.clone()
            };
            let Some(b) = judge(&samples) else { continue };
            if !q.x.is_finite() || q.x < 0.0 {
                continue;
            }
            out.push(Pair {
                a,
                b: q.x as usize,
                median_ns: b.median,
                min_ns: b.min,
                max_ns: b.max,
                verdict: b.verdict,
            });
        }
    }
    out
}

fn is_c2c(c: &RawCurve) -> bool {
    c.id.starts_with("c2c.cpu")
}

/// The analysis hook: figures and notes from the raw batches; `false` when
/// the profile holds none.
pub fn reanalyze(p: &mut Profile) -> bool {
    let pairs = pairs(p);
    if pairs.is_empty() {
        return false;
    }
    let figures = figures(&pairs);
    let notes = notes(&pairs, p.machine.as_ref());
    figure::refresh(&mut p.figures, PROBE, figures);
    refresh(&mut p.notes, PROBE, &NOTE_CODES, notes);
    true
}

/// The fastest pair, the median over pairs and the slowest pair.
pub fn figures(pairs: &[Pair]) -> Vec<Figure> {
    let mut sorted: Vec<&Pair> = pairs.iter().collect();
    sorted.sort_by(|x, y| x.median_ns.total_cmp(&y.median_ns));
    let (Some(first), Some(last)) = (sorted.first(), sorted.last()) else {
        return Vec::new();
    };
    let medians: Vec<f64> = sorted.iter().map(|q| q.median_ns).collect();
    let noisy = sorted.iter().filter(|q| q.verdict == Verdict::Noisy).count();
    let fig = |what: &str, name: &str, v: f64, verdict: Verdict| {
        let mut f = Figure::new(PROBE, what, name, v, FigureUnit::Ns, Direction::Lower);
        f.verdict = verdict;
        f
    };
    vec![
        fig("fastest", "fastest pair, one way", first.median_ns, first.verdict),
        fig(
            "median",
            "median over pairs, one way",
            hwcal_stats::median(&medians),
            if noisy * 4 > sorted.len() {
                Verdict::Noisy
            } else {
                Verdict::Ok
            },
        ),
        fig("slowest", "slowest pair, one way", last.median_ns, last.verdict),
    ]
}

/// Groups of pairs by latency (sorted; a new tier where a pair is
/// [`TIER_STEP`] times slower than the one before).
pub fn tiers(pairs: &[Pair]) -> Vec<Vec<&Pair>> {
    let mut sorted: Vec<&Pair> = pairs.iter().collect();
    sorted.sort_by(|x, y| x.median_ns.total_cmp(&y.median_ns));
    let mut out: Vec<Vec<&Pair>> = Vec::new();
    for q in sorted {
        match out.last_mut() {
            Some(t) if q.median_ns <= TIER_STEP * t[t.len() - 1].median_ns => t.push(q),
            _ => out.push(vec![q]),
        }
    }
    out
}

/// What sysfs says two CPUs share, where it says (the caches are CPU 0's as
/// sysfs lists them, the nodes every CPU's).
pub fn shared(m: &MachineInfo, a: usize, b: usize) -> Option<String> {
    let mut caches: Vec<_> = m
        .nominal_caches
        .iter()
        .filter(|c| c.cache_type != "Instruction" && c.source == "sysfs")
        .collect();
    caches.sort_by_key(|c| c.level);
    for c in &caches {
        let (ia, ib) = (c.shared_cpus.contains(&a), c.shared_cpus.contains(&b));
        if ia && ib {
            return Some(if c.level == 1 {
                "one core (SMT siblings: they share its L1)".to_string()
            } else {
                format!("an L{} (not an L{})", c.level, c.level - 1)
            });
        }
    }
    let node = |cpu| {
        m.numa_nodes
            .iter()
            .find(|n| n.cpus.contains(&cpu))
            .map(|n| n.node)
    };
    let last = caches.last()?;
    let known = last.shared_cpus.contains(&a) || last.shared_cpus.contains(&b);
    match (node(a), node(b)) {
        (Some(x), Some(y)) if x != y => Some(format!("nothing: NUMA nodes {x} and {y}")),
        _ if known => Some(format!("no cache (L{} not shared)", last.level)),
        _ => None,
    }
}

fn pair_text(q: &Pair, m: Option<&MachineInfo>) -> String {
    let sysfs = m
        .and_then(|m| shared(m, q.a, q.b))
        .map(|s| format!("; sysfs: they share {s}"))
        .unwrap_or_default();
    format!(
        "c2c: CPU {} ↔ {}: {:.1} ns one way (batches {:.1}–{:.1} ns){sysfs}",
        q.a, q.b, q.median_ns, q.min_ns, q.max_ns
    )
}

/// A note per pair on small machines, per tier on large ones, and one
/// naming the noisy pairs.
pub fn notes(pairs: &[Pair], m: Option<&MachineInfo>) -> Vec<Note> {
    let mut out = Vec::new();
    let tiers = tiers(pairs);
    if pairs.len() <= NOTED_PAIRS {
        for t in &tiers {
            for q in t {
                out.push(Note::info(PROBE, "pair", pair_text(q, m)));
            }
        }
    } else {
        for (k, t) in tiers.iter().enumerate() {
            let (lo, hi) = (t[0].median_ns, t[t.len() - 1].median_ns);
            out.push(Note::info(
                PROBE,
                "tiers",
                format!(
                    "c2c: tier {}: {} pair{} at {lo:.1}–{hi:.1} ns, e.g. {}",
                    k + 1,
                    t.len(),
                    if t.len() == 1 { "" } else { "s" },
                    pair_text(t[0], m).trim_start_matches("c2c: ")
                ),
            ));
        }
    }
    let noisy: Vec<String> = pairs
        .iter()
        .filter(|q| q.verdict == Verdict::Noisy)
        .map(|q| format!("{}↔{}", q.a, q.b))
        .collect();
    if !noisy.is_empty() {
        out.push(Note::warning(
            PROBE,
            "noisy",
            format!(
                "c2c: the batches of {} pair(s) disagree by more than {:.0}% ({}): another task or the host's \
                 other hyperthread ran beside them; re-run on a quiet machine",
                noisy.len(),
                NOISY_IQR * 100.0,
                noisy.join(", ")
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwcal_model::{NominalCache, RawPoint};

    fn curve(a: usize, partners: &[(usize, &[f64])]) -> RawCurve {
        RawCurve {
            id: curve_id(a),
            x_label: "partner CPU".into(),
            y_label: "ns one way".into(),
            points: partners
                .iter()
                .map(|(b, s)| RawPoint {
                    x: *b as f64,
                    y: hwcal_stats::median(s),
                    samples: s.to_vec(),
                    ..Default::default()
                })
                .collect(),
        }
    }

    #[test]
    fn figures_tiers_and_verdicts_follow_the_batches() {
        let quiet_near: &[f64] = &[20.0, 21.0, 20.5, 20.2, 20.8];
        let quiet_far: &[f64] = &[70.0, 71.0, 69.0, 70.5, 70.2];
        let scattered: &[f64] = &[40.0, 90.0, 41.0, 120.0, 60.0];
        let mut p = Profile {
            raw: vec![
                curve(0, &[(1, quiet_near), (2, quiet_far)]),
                curve(1, &[(2, scattered)]),
            ],
            ..Default::default()
        };
        assert!(reanalyze(&mut p));
        let f = |id: &str| p.figures.iter().find(|f| f.id == id).unwrap().clone();
        assert_eq!(f("c2c.fastest").value, Some(20.5));
        assert_eq!(f("c2c.slowest").value, Some(70.2));
        assert_eq!(f("c2c.median").value, Some(60.0));
        assert_eq!(f("c2c.fastest").verdict, Verdict::Ok);
        // One noisy pair in three: more than a quarter.
        assert_eq!(f("c2c.median").verdict, Verdict::Noisy);
        let pairs = pairs(&p);
        let t = tiers(&pairs);
        assert_eq!(t.len(), 2, "{t:?}");
        assert!(p
            .notes
            .iter()
            .any(|n| n.code == "c2c.noisy" && n.text.contains("1↔2")));
        // A re-analysis replaces, never duplicates.
        let before = (p.notes.clone(), p.figures.clone());
        assert!(reanalyze(&mut p));
        assert_eq!((p.notes.clone(), p.figures.clone()), before);
        assert!(!reanalyze(&mut Profile::default()));
    }

    #[test]
    fn sysfs_says_what_a_pair_shares() {
        let cache = |level: u32, cpus: Vec<usize>| NominalCache {
            level,
            cache_type: "Data".into(),
            size_bytes: 1,
            line_bytes: None,
            ways: None,
            sets: None,
            shared_cpus: cpus,
            source: "sysfs".into(),
        };
        let m = MachineInfo {
            nominal_caches: vec![
                cache(1, vec![0, 8]),
                cache(2, vec![0, 8]),
                cache(3, vec![0, 1, 2, 3, 8, 9]),
            ],
            ..Default::default()
        };
        assert!(shared(&m, 0, 8).unwrap().contains("SMT siblings"));
        assert_eq!(shared(&m, 0, 1).unwrap(), "an L3 (not an L2)");
        assert_eq!(shared(&m, 0, 5).unwrap(), "no cache (L3 not shared)");
        assert_eq!(shared(&m, 4, 5), None, "sysfs lists CPU 0's caches only");
    }
}
