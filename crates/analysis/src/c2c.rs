//! Core-to-core latency from the ping-pong batches (`hwcal_probes::c2c`):
//! per pair the median one-way handoff and whether its batches agree; over
//! the pairs the fastest, the median and the slowest as named figures; the
//! pairs grouped into tiers by latency, set beside what sysfs says the two
//! CPUs share (an SMT core's L1, an L2, an L3 share, a NUMA node). The
//! tiers are how MLC's and `core-to-core-latency`'s heat maps are read: on
//! a cloud guest they show which vCPUs are siblings or share an L3, facts
//! the guest's topology may hide.
//!
//! The pairs may be measured two ways ([`Variant`]: CAS on one line, and
//! loads and stores on two): each gives its own figures, the heat map and
//! the tiers are the CAS ones, and where the two group the pairs
//! differently a note says the topology they imply is uncertain.

use crate::batches::{judge, NOISY_IQR};
use hwcal_model::figure::{self, Direction, Figure, FigureUnit};
use hwcal_model::note::refresh;
use hwcal_model::{MachineInfo, Note, Profile, Verdict};

/// The probe's id, and the prefix of its curves (`c2c.cpu{A}` for CAS,
/// `c2c.rw.cpu{A}` for read/write: one curve per first CPU, x the partner
/// CPU, y the median, samples the batches).
pub const PROBE: &str = "c2c";
/// Note codes this analysis writes (refreshed on every re-analysis).
pub const NOTE_CODES: [&str; 4] = ["c2c.pair", "c2c.tiers", "c2c.noisy", "c2c.methods"];
/// Two pairs are clearly in different tiers when one is this much slower
/// than the other (two tier steps), clearly in the same one within
/// [`SAME_TIER`]; the methods disagree only where one says "clearly
/// different" and the other "clearly the same" (noise near a tier's edge
/// is not a disagreement).
const CLEARLY_APART: f64 = TIER_STEP * TIER_STEP;
const SAME_TIER: f64 = 1.15;

/// How the pairs were measured (`hwcal_probes::c2c::Method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// Compare-and-swap on one line: the heat map's and the tiers' method.
    Cas,
    /// A store to one line, loads of another.
    ReadWrite,
}

impl Variant {
    pub const ALL: [Variant; 2] = [Variant::Cas, Variant::ReadWrite];

    fn curve_prefix(self) -> &'static str {
        match self {
            Variant::Cas => "c2c.cpu",
            Variant::ReadWrite => "c2c.rw.cpu",
        }
    }

    /// Figure ids: `c2c.fastest`, `c2c.rw_fastest`.
    fn figure_prefix(self) -> &'static str {
        match self {
            Variant::Cas => "",
            Variant::ReadWrite => "rw_",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Variant::Cas => "",
            Variant::ReadWrite => " (read/write, two lines)",
        }
    }

    /// The curve id of the pairs whose first CPU is `a`.
    pub fn curve_id(self, a: usize) -> String {
        format!("{}{a}", self.curve_prefix())
    }
}
/// A pair this much slower than the previous one (sorted) starts a new
/// tier: a different level of the coherence fabric (same core, same L3,
/// another L3 or socket) costs at least half as much again.
const TIER_STEP: f64 = 1.4;
/// Pairs named one by one in the notes; past this, by tier.
const NOTED_PAIRS: usize = 6;

/// The curve id of the CAS pairs whose first CPU is `a`.
pub fn curve_id(a: usize) -> String {
    Variant::Cas.curve_id(a)
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
    /// The median's 95% interval over the pair's batches.
    pub ci95: Option<[f64; 2]>,
}

/// Every CAS pair in the profile's c2c curves (the heat map's).
pub fn pairs(p: &Profile) -> Vec<Pair> {
    pairs_of(p, Variant::Cas)
}

/// Every pair measured by `v`.
pub fn pairs_of(p: &Profile, v: Variant) -> Vec<Pair> {
    let mut out = Vec::new();
    for c in &p.raw {
        let Some(a) = c.id.strip_prefix(v.curve_prefix()).and_then(|s| s.parse().ok()) else {
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
                ci95: b.ci95,
            });
        }
    }
    out
}

/// The analysis hook: figures and notes from the raw batches; `false` when
/// the profile holds none.
pub fn reanalyze(p: &mut Profile) -> bool {
    let pairs = pairs(p);
    let rw = pairs_of(p, Variant::ReadWrite);
    if pairs.is_empty() && rw.is_empty() {
        return false;
    }
    let mut figures = figures_of(&pairs, Variant::Cas);
    figures.extend(figures_of(&rw, Variant::ReadWrite));
    let mut notes = notes(&pairs, p.machine.as_ref());
    notes.extend(methods_note(&pairs, &rw));
    figure::refresh(&mut p.figures, PROBE, figures);
    refresh(&mut p.notes, PROBE, &NOTE_CODES, notes);
    true
}

/// The fastest pair, the median over pairs and the slowest pair, measured by `v`.
pub fn figures_of(pairs: &[Pair], v: Variant) -> Vec<Figure> {
    let mut sorted: Vec<&Pair> = pairs.iter().collect();
    sorted.sort_by(|x, y| x.median_ns.total_cmp(&y.median_ns));
    let (Some(first), Some(last)) = (sorted.first(), sorted.last()) else {
        return Vec::new();
    };
    let medians: Vec<f64> = sorted.iter().map(|q| q.median_ns).collect();
    let noisy = sorted.iter().filter(|q| q.verdict == Verdict::Noisy).count();
    let fig = |what: &str, name: &str, value: f64, verdict: Verdict, ci95: Option<[f64; 2]>| {
        let mut f = Figure::new(
            PROBE,
            &format!("{}{what}", v.figure_prefix()),
            &format!("{name}{}", v.label()),
            value,
            FigureUnit::Ns,
            Direction::Lower,
        );
        f.verdict = verdict;
        f.ci95 = ci95;
        f
    };
    // One pair (a 2-CPU guest) is its own fastest, median and slowest:
    // one figure, not three rows of the same number.
    if let [one] = sorted.as_slice() {
        return vec![fig(
            "fastest",
            "the one pair, one way",
            one.median_ns,
            one.verdict,
            one.ci95,
        )];
    }
    let median_ci = hwcal_stats::median_ci95(&medians).map(|(lo, hi)| [lo, hi]);
    vec![
        fig(
            "fastest",
            "fastest pair, one way",
            first.median_ns,
            first.verdict,
            first.ci95,
        ),
        fig(
            "median",
            "median over pairs, one way",
            hwcal_stats::median(&medians),
            if noisy * 4 > sorted.len() {
                Verdict::Noisy
            } else {
                Verdict::Ok
            },
            median_ci,
        ),
        fig(
            "slowest",
            "slowest pair, one way",
            last.median_ns,
            last.verdict,
            last.ci95,
        ),
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

/// Where the two methods measured the same pairs: one line on a small
/// machine (each pair by both), and a warning where they group the pairs
/// differently (one method puts two pairs clearly apart, the other clearly
/// together): the tiers, and what they say of the topology, are then
/// uncertain.
pub fn methods_note(cas: &[Pair], rw: &[Pair]) -> Vec<Note> {
    let both: Vec<(&Pair, &Pair)> = cas
        .iter()
        .filter_map(|c| rw.iter().find(|r| (r.a, r.b) == (c.a, c.b)).map(|r| (c, r)))
        .collect();
    if both.is_empty() {
        return Vec::new();
    }
    let ratio = |x: f64, y: f64| x.max(y) / x.min(y).max(f64::MIN_POSITIVE);
    let mut clash = None;
    'outer: for (i, (c1, r1)) in both.iter().enumerate() {
        for (c2, r2) in &both[i + 1..] {
            let (by_cas, by_rw) = (
                ratio(c1.median_ns, c2.median_ns),
                ratio(r1.median_ns, r2.median_ns),
            );
            if (by_cas > CLEARLY_APART && by_rw < SAME_TIER) || (by_rw > CLEARLY_APART && by_cas < SAME_TIER)
            {
                clash = Some((c1, r1, c2, r2));
                break 'outer;
            }
        }
    }
    if let Some((c1, r1, c2, r2)) = clash {
        return vec![Note::warning(
            PROBE,
            "methods",
            format!(
                "c2c: the two methods group the pairs differently: CPU {}↔{} and {}↔{} take {:.1} and {:.1} ns \
                 by CAS but {:.1} and {:.1} ns by read/write; the tiers, and the topology they imply, are \
                 uncertain (a busy CPU or a moving host thread during one of them); re-run on a quiet machine",
                c1.a, c1.b, c2.a, c2.b, c1.median_ns, c2.median_ns, r1.median_ns, r2.median_ns
            ),
        )];
    }
    let text = if let [(c, r)] = both.as_slice() {
        format!(
            "c2c: CPU {} ↔ {} by read/write on two lines: {:.1} ns one way ({:.2}× the CAS handoff)",
            c.a,
            c.b,
            r.median_ns,
            r.median_ns / c.median_ns
        )
    } else {
        let ratios: Vec<f64> = both.iter().map(|(c, r)| r.median_ns / c.median_ns).collect();
        let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        format!(
            "c2c: read/write on two lines agrees with CAS on how the {} pairs group; \
             it takes {lo:.2}–{hi:.2}× the CAS handoff",
            both.len()
        )
    };
    vec![Note::info(PROBE, "methods", text)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwcal_model::{NominalCache, RawCurve, RawPoint};

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
    fn one_pair_is_one_figure_not_three_of_the_same_number() {
        let mut p = Profile {
            raw: vec![curve(0, &[(1, &[32.0, 33.0, 32.5, 32.2, 32.8])])],
            ..Default::default()
        };
        assert!(reanalyze(&mut p));
        let ids: Vec<&str> = p.figures.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["c2c.fastest"]);
        assert_eq!(p.figures[0].name, "the one pair, one way");
        assert_eq!(p.figures[0].value, Some(32.5));
    }

    fn rw_curve(a: usize, partners: &[(usize, &[f64])]) -> RawCurve {
        RawCurve {
            id: Variant::ReadWrite.curve_id(a),
            ..curve(a, partners)
        }
    }

    #[test]
    fn the_read_write_pairs_get_their_own_figures_and_a_cross_check() {
        let near: &[f64] = &[20.0, 21.0, 20.5, 20.2, 20.8];
        let far: &[f64] = &[70.0, 71.0, 69.0, 70.5, 70.2];
        let rw_near: &[f64] = &[25.0, 25.5, 25.2, 25.1, 25.3];
        let rw_far: &[f64] = &[80.0, 81.0, 80.5, 80.2, 80.1];
        let mut p = Profile {
            raw: vec![
                curve(0, &[(1, near), (2, far)]),
                rw_curve(0, &[(1, rw_near), (2, rw_far)]),
            ],
            ..Default::default()
        };
        assert!(reanalyze(&mut p));
        let f = |p: &Profile, id: &str| p.figures.iter().find(|f| f.id == id).and_then(|f| f.value);
        assert_eq!(f(&p, "c2c.fastest"), Some(20.5));
        assert_eq!(f(&p, "c2c.rw_fastest"), Some(25.2));
        assert_eq!(f(&p, "c2c.rw_slowest"), Some(80.2));
        let methods = |p: &Profile| p.notes.iter().find(|n| n.code == "c2c.methods").cloned().unwrap();
        assert_eq!(
            methods(&p).severity,
            hwcal_model::Severity::Info,
            "{:?}",
            methods(&p)
        );
        // The heat map's pairs are the CAS ones only.
        assert_eq!(pairs(&p).len(), 2);
        // Read/write says the two pairs are alike where CAS says 3.4× apart.
        p.raw[1] = rw_curve(0, &[(1, rw_near), (2, rw_near)]);
        assert!(reanalyze(&mut p));
        assert_eq!(methods(&p).severity, hwcal_model::Severity::Warning);
        assert!(methods(&p).text.contains("0↔1 and 0↔2"), "{}", methods(&p).text);
        assert_eq!(p.notes.iter().filter(|n| n.code == "c2c.methods").count(), 1);
        // A read/write-only profile still gets figures.
        let mut q = Profile {
            raw: vec![rw_curve(0, &[(1, rw_near)])],
            ..Default::default()
        };
        assert!(reanalyze(&mut q));
        assert_eq!(f(&q, "c2c.rw_fastest"), Some(25.2));
        assert_eq!(f(&q, "c2c.fastest"), None);
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
