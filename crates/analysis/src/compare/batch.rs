//! Two batches of runs compared (`hwcal run --repeat N`, `db compare
//! batch:ID batch:ID`): each figure's median over each side's runs, and
//! whether the two sides differ by more than their runs' scatter, decided
//! by a rank test over the runs (Go's benchstat: `~` unless the
//! Mann–Whitney U test finds a difference) instead of by one run's
//! interval.
//!
//! The figures are paired exactly as two single runs pair them
//! ([`super::compare`]): each run of A is compared with a run of B and
//! each run of B with a run of A, and every row's value on its own side is
//! gathered under the row's name. So a cache level is matched by what it
//! is in every pairing, and a figure a run lacks (a level it did not see)
//! only shrinks that figure's count of runs, which the row states.

use super::row::{Comparison, Row, SIGNIFICANCE};
use hwcal_model::Profile;
use hwcal_stats::{mann_whitney, median, median_ci95};

/// One figure's values gathered over the pairings.
struct Gathered {
    proto: Row,
    a: Vec<f64>,
    b: Vec<f64>,
    /// Pairings in which the row was noisy on either side, of `pairings`.
    noisy: usize,
    pairings: usize,
    unlike: bool,
}

/// Batch `a` against batch `b` (each one or more runs of a machine), with
/// `compare` the comparison of two single runs: two single runs are
/// compared by it alone; otherwise each row carries the medians, the number
/// of runs behind each and the rank test's p-value, and its verdict comes
/// from them ([`Row::mark`]).
pub(super) fn gather(
    a: &[Profile],
    b: &[Profile],
    compare: fn(&Profile, &Profile) -> Comparison,
) -> Comparison {
    match (a, b) {
        ([], _) | (_, []) => return Comparison::default(),
        ([x], [y]) => return compare(x, y),
        _ => {}
    }
    let mut rows: Vec<Gathered> = Vec::new();
    let mut first_notes = None;
    // A's runs each against a run of B (its values of A), then B's each
    // against a run of A (its values of B).
    for (side_a, i) in (0..a.len())
        .map(|i| (true, i))
        .chain((0..b.len()).map(|j| (false, j)))
    {
        let (x, y) = if side_a {
            (&a[i], &b[i % b.len()])
        } else {
            (&a[i % a.len()], &b[i])
        };
        let c = compare(x, y);
        first_notes.get_or_insert(c.notes);
        for r in c.rows {
            let same = |g: &Gathered| {
                g.proto.section == r.section && g.proto.figure == r.figure && g.proto.unit == r.unit
            };
            let at = match rows.iter().position(same) {
                Some(at) => at,
                None => {
                    rows.push(Gathered {
                        proto: r.clone(),
                        a: Vec::new(),
                        b: Vec::new(),
                        noisy: 0,
                        pairings: 0,
                        unlike: false,
                    });
                    rows.len() - 1
                }
            };
            let g = &mut rows[at];
            let value = if side_a { r.a } else { r.b };
            if let Some(v) = value.filter(|v| v.is_finite()) {
                if side_a {
                    g.a.push(v)
                } else {
                    g.b.push(v)
                }
            }
            g.noisy += usize::from(r.noisy);
            g.pairings += 1;
            g.unlike |= r.unlike;
        }
    }
    let mut out = Comparison {
        rows: rows.into_iter().map(summarise).collect(),
        notes: first_notes.unwrap_or_default(),
    };
    out.notes.push(format!(
        "batches: A is {} run(s), B {}; each figure is the median of its runs, and a difference is \
         significant when the Mann–Whitney U test over the runs gives p < {} (otherwise '~')",
        a.len(),
        b.len(),
        SIGNIFICANCE
    ));
    out
}

/// The row of one gathered figure: medians, their 95% intervals where
/// there are enough runs, the counts and the rank test.
fn summarise(g: Gathered) -> Row {
    // Noisy in most pairings: the runs themselves were not to be trusted,
    // whatever the test says.
    let noisy = g.noisy * 2 > g.pairings;
    Row {
        unlike: g.unlike,
        ..runs_row(g.proto, &g.a, &g.b, noisy)
    }
}

/// `proto` (its section, figure, unit and direction) judged over runs:
/// each side's median of `a` and `b`, their intervals where there are
/// enough runs, the counts and the rank test's p-value, so that
/// [`Row::mark`] gives the batch verdict. The one rule for every
/// comparison over runs: `db compare batch:...`, and the site's comparison
/// of two machines' recent runs.
pub fn runs_row(proto: Row, a: &[f64], b: &[f64], noisy: bool) -> Row {
    let side = |v: &[f64]| (!v.is_empty()).then(|| median(v));
    let ci = |v: &[f64]| median_ci95(v).map(|(lo, hi)| [lo, hi]);
    Row {
        a: side(a),
        b: side(b),
        a_ci: ci(a),
        b_ci: ci(b),
        noisy,
        runs: Some([a.len(), b.len()]),
        p_value: mann_whitney(a, b).map(|t| t.p),
        ..proto
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{compare, compare_batches, Mark, VERDICT_THRESHOLD};
    use hwcal_model::sample::full_profile;

    /// A batch of `n` runs of one machine: the sample profile with every
    /// latency and the clock jittered by up to ±`jitter` (deterministic).
    fn batch(n: usize, seed: u64, jitter: f64, memory_scale: f64) -> Vec<hwcal_model::Profile> {
        let mut rng = hwcal_stats::SplitMix64::new(seed);
        (0..n)
            .map(|_| {
                let mut p = full_profile(0);
                let mut j =
                    || 1.0 + jitter * (2.0 * ((rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64) - 1.0);
                if let Some(c) = p.clock.as_mut() {
                    c.core_mhz *= j();
                }
                for l in p.caches.iter_mut().flatten() {
                    l.latency_ns *= j();
                    l.latency_ns_ci95 = None;
                }
                if let Some(m) = p.memory.as_mut() {
                    m.latency_ns *= j() * memory_scale;
                    m.latency_ns_ci95 = None;
                }
                p
            })
            .collect()
    }

    fn row<'c>(c: &'c Comparison, figure: &str) -> &'c Row {
        c.rows
            .iter()
            .find(|r| r.figure == figure && r.unit == hwcal_model::FigureUnit::Ns)
            .unwrap_or_else(|| {
                panic!(
                    "no {figure}: {:?}",
                    c.rows.iter().map(|r| &r.figure).collect::<Vec<_>>()
                )
            })
    }

    #[test]
    fn the_same_machine_twice_is_no_significant_change() {
        let c = compare_batches(&batch(5, 1, 0.03, 1.0), &batch(5, 2, 0.03, 1.0));
        let r = row(&c, "memory latency");
        assert_eq!(r.runs, Some([5, 5]));
        assert!(
            r.p_value.unwrap() > 0.05 || r.mark(VERDICT_THRESHOLD) == Some(Mark::Same),
            "{r:?}"
        );
        let judged: Vec<_> = c.rows.iter().filter_map(|r| r.mark(VERDICT_THRESHOLD)).collect();
        // No figure of the same machine is called better or worse (those
        // the fixture flags noisy stay noisy).
        let claimed = judged
            .iter()
            .filter(|m| matches!(m, Mark::Better | Mark::Worse))
            .count();
        assert_eq!(claimed, 0, "{judged:?}");
        assert!(judged.iter().filter(|m| **m == Mark::Same).count() * 2 > judged.len());
        assert!(c.notes.iter().any(|n| n.contains("Mann–Whitney")));
    }

    #[test]
    fn a_ten_percent_shift_across_five_runs_is_significant() {
        let c = compare_batches(&batch(5, 1, 0.02, 1.0), &batch(5, 2, 0.02, 1.1));
        let r = row(&c, "memory latency");
        assert!(r.p_value.unwrap() < 0.05, "{r:?}");
        assert_eq!(r.mark(VERDICT_THRESHOLD), Some(Mark::Worse), "{r:?}");
        let ratio = r.ratio().unwrap();
        assert!((ratio - 1.1).abs() < 0.05, "{ratio}");
        // The other figures did not move.
        assert_eq!(row(&c, "L1 latency").mark(VERDICT_THRESHOLD), Some(Mark::Same));
    }

    #[test]
    fn single_runs_compare_as_before() {
        let (a, b) = (full_profile(0), full_profile(5));
        assert_eq!(
            compare_batches(std::slice::from_ref(&a), std::slice::from_ref(&b)),
            compare(&a, &b)
        );
        assert!(compare_batches(&[], &[b]).rows.is_empty());
    }
}
