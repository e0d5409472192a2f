//! DRAM's latency with the page walks held out: the `mem` section's chase
//! over the same buffer window by window, each window few enough pages for
//! the second-level TLB (multichase's default chase, MLC's idle latency),
//! and when that figure is to be trusted. Its note is the consistency
//! stage's (`memory-headline`).

use crate::chase::Fastest;
use hwcal_model::Profile;

/// Why DRAM's latency, the chase with page walks held out (`l`), is in
/// doubt — the reason its note names — or `None`, the figure `ok`: where
/// its fastest slices repeat, its thread stayed on its CPU, and it stands
/// where the run's other measurements put it: no slower than the chase over
/// the same lines with the walks in (`with`, beyond both intervals: holding
/// walks out cannot add time), and slower than every cache level the sweep
/// found (it is memory's). The convergence of the curve below the chase's
/// working set is judged with the headline ([`crate::converged`]).
pub(crate) fn doubt(
    p: &Profile,
    l: &Fastest,
    (with, with_ci): (f64, Option<[f64; 2]>),
    on_cpu: bool,
) -> Option<&'static str> {
    let lo = l.ci95.map_or(l.ns, |[a, _]| a.min(l.ns));
    let with_hi = with_ci.map_or(with, |[_, b]| b.max(with));
    let slowest_cache = p
        .caches
        .iter()
        .flatten()
        .map(|c| c.latency_ns)
        .fold(0.0, f64::max);
    if !on_cpu {
        Some("its thread was off its CPU for much of the chase")
    } else if !l.repeated {
        Some("its fastest slices did not repeat within 1%")
    } else if lo > with_hi {
        Some("it read slower than the same lines chased with the walks in, which holding walks out cannot do")
    } else if l.ns <= slowest_cache {
        Some("it read no slower than a cache level, which memory cannot")
    } else {
        None
    }
}
