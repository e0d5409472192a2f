//! Which cache level of one run is which of the other's: levels are paired
//! by what they are (effective size, or the same nominal level), not by
//! their number, so a spurious extra level never meets a real one.

use hwcal_model::CacheLevel;

/// Whether two cache levels are the same cache: their effective sizes
/// within [`SAME_CACHE_FACTOR`] of each other, or the same nominal level
/// each read within that factor of its own nominal size (the L2 of a
/// 512 KiB-L2 machine against the L2 of a 2 MiB-L2 one).
fn same_cache(a: &CacheLevel, b: &CacheLevel) -> bool {
    let near = |x: u64, y: u64| {
        let (x, y) = (x.max(1) as f64, y.max(1) as f64);
        x.max(y) / x.min(y) <= SAME_CACHE_FACTOR
    };
    let is_nominal = |c: &CacheLevel| c.nominal_size_bytes.is_some_and(|n| near(c.size_bytes, n));
    near(a.size_bytes, b.size_bytes) || (a.level == b.level && is_nominal(a) && is_nominal(b))
}

/// How far apart two effective sizes of the same cache may be: runs of one
/// machine differ by up to about 30% (a busy sibling, page colouring); a
/// spurious level (TLB misses, a busy neighbour) sits 4× or more from the
/// real one.
pub const SAME_CACHE_FACTOR: f64 = 2.0;

/// One side of a matched pair of cache levels, or a level only one side has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LevelMatch {
    /// Indexes into A's and B's levels.
    Both(usize, usize),
    OnlyA(usize),
    OnlyB(usize),
}

/// Pair A's cache levels with B's by what they are ([`same_cache`]), in
/// order (a pair never crosses another), preferring the same level number
/// and then the closest size; what is left is listed as one side's only.
pub fn match_levels(x: &[CacheLevel], y: &[CacheLevel]) -> Vec<LevelMatch> {
    let mut out = Vec::new();
    let mut next_b = 0;
    for (i, a) in x.iter().enumerate() {
        let dist = |b: &CacheLevel| {
            ((a.size_bytes.max(1) as f64) / (b.size_bytes.max(1) as f64))
                .ln()
                .abs()
        };
        let pick = (next_b..y.len())
            .filter(|&j| same_cache(a, &y[j]))
            .min_by(|&j, &k| {
                (y[j].level != a.level)
                    .cmp(&(y[k].level != a.level))
                    .then(dist(&y[j]).total_cmp(&dist(&y[k])))
            });
        match pick {
            Some(j) => {
                out.extend((next_b..j).map(LevelMatch::OnlyB));
                out.push(LevelMatch::Both(i, j));
                next_b = j + 1;
            }
            None => out.push(LevelMatch::OnlyA(i)),
        }
    }
    out.extend((next_b..y.len()).map(LevelMatch::OnlyB));
    out
}
