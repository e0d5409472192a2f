//! Line size from dependent pairs of loads.
//!
//! Each random visit loads a slot and then, dependent on it, the word `d`
//! bytes away. While |d| is under the line size the second load hits the
//! line the first just fetched; from the line size on it pays a miss. The
//! Calibrator instead walks with growing strides, which adjacent-line and
//! stream prefetchers fool: they fetch the lines a constant stride is about
//! to touch, so its walk reads lines several times the real one (512 bytes
//! for the 64-byte lines of a Sapphire Rapids core). A prefetcher can only
//! make a miss look like a hit, never the
//! reverse, so of the forward (+d) and backward (−d) tests the smaller
//! answer is the line size: the next-line prefetcher runs forward only.

use hwcal_model::RawCurve;

/// Line size from a flush-granule curve (`hwcal_probes::flush`): x = d for
/// loads after their line's base was flushed, x = −d for the all-hits
/// reference. A flushed line is served from memory, the next one from the
/// cache, so the line is the smallest d that runs near the reference:
/// below the geometric middle of the reference and the certain miss at
/// the smallest d. `None` without a clear contrast (at least 2×) or when
/// no d hits (a line larger than the largest d tested).
pub fn line_from_flush(c: &RawCurve) -> Option<u64> {
    let hit = c
        .points
        .iter()
        .filter(|p| p.x < 0.0)
        .map(|p| p.y)
        .fold(f64::INFINITY, f64::min);
    let mut pts: Vec<(f64, f64)> = c
        .points
        .iter()
        .filter(|p| p.x > 0.0 && p.y.is_finite())
        .map(|p| (p.x, p.y))
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let &(_, miss) = pts.first()?;
    if !(hit.is_finite() && hit > 0.0 && miss > 2.0 * hit) {
        return None;
    }
    let threshold = (hit * miss).sqrt();
    pts.iter().find(|p| p.1 < threshold).map(|p| p.0.round() as u64)
}

/// Line size seen by one curve (x = d in bytes, signed; y = ns per pair):
/// the smallest |d| whose extra time over the smallest |d| is at least half
/// the largest extra. `None` when no |d| tested shows a clear miss (the
/// line is larger than the largest d, or the curve is flat noise).
pub fn line_from_pairs(c: &RawCurve) -> Option<u64> {
    let mut pts: Vec<(f64, f64)> = c
        .points
        .iter()
        .map(|p| (p.x.abs(), p.y))
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let &(_, base) = pts.first()?;
    let max_extra = pts.iter().map(|p| p.1 - base).fold(0.0, f64::max);
    // A miss must cost something: at least 20% of a pair and 0.3 ns.
    if max_extra < (0.20 * base).max(0.3) {
        return None;
    }
    pts.iter()
        .find(|p| p.1 - base >= 0.5 * max_extra)
        .map(|p| p.0.round() as u64)
}

/// Line size from a forward and a backward test: the smaller of the two
/// (see the module notes), or whichever exists.
pub fn line_size(fwd: Option<&RawCurve>, bwd: Option<&RawCurve>) -> Option<u64> {
    let a = fwd.and_then(line_from_pairs);
    let b = bwd.and_then(line_from_pairs);
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwcal_model::RawPoint;

    fn pairs(sign: f64, ys: &[(f64, f64)]) -> RawCurve {
        RawCurve {
            id: "t".into(),
            points: ys
                .iter()
                .map(|&(x, y)| RawPoint {
                    x: sign * x,
                    y,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn detects_64_byte_lines_despite_a_forward_prefetcher() {
        // L2-resident: hit pair 2+6.5, miss pair 6.5+6.5.
        let bwd = pairs(
            -1.0,
            &[
                (8.0, 8.5),
                (16.0, 8.6),
                (32.0, 8.5),
                (64.0, 13.0),
                (128.0, 13.1),
                (256.0, 13.0),
            ],
        );
        // Forward: the next-line prefetcher hides the +64 miss.
        let fwd = pairs(
            1.0,
            &[
                (8.0, 8.5),
                (16.0, 8.5),
                (32.0, 8.6),
                (64.0, 9.0),
                (128.0, 13.0),
                (256.0, 13.0),
            ],
        );
        assert_eq!(line_from_pairs(&bwd), Some(64));
        assert_eq!(line_from_pairs(&fwd), Some(128));
        assert_eq!(line_size(Some(&fwd), Some(&bwd)), Some(64));
        assert_eq!(line_size(None, Some(&bwd)), Some(64));
    }

    #[test]
    fn memory_footprint_picks_the_memory_miss() {
        // d < 64: L1 hit; 64 (adjacent-line pair prefetched into L2): L2
        // hit; 128+: memory.
        let c = pairs(
            1.0,
            &[
                (8.0, 150.0),
                (32.0, 151.0),
                (64.0, 157.0),
                (128.0, 298.0),
                (256.0, 300.0),
            ],
        );
        assert_eq!(line_from_pairs(&c), Some(128));
    }

    #[test]
    fn flush_granule() {
        // Zen 3 guest, targets in L2: 124 ns after a flush, 4 ns hits.
        let c = pairs(
            1.0,
            &[
                (8.0, 124.0),
                (16.0, 126.5),
                (32.0, 123.2),
                (64.0, 3.9),
                (128.0, 4.2),
                (256.0, 4.1),
            ],
        );
        let mut c2 = c.clone();
        c2.points.push(RawPoint {
            x: -8.0,
            y: 4.5,
            ..Default::default()
        });
        assert_eq!(line_from_flush(&c2), Some(64));
        // No reference: no answer. No contrast: no answer.
        assert_eq!(line_from_flush(&c), None);
        let flat = pairs(1.0, &[(8.0, 5.0), (64.0, 4.9)]);
        let mut flat2 = flat.clone();
        flat2.points.push(RawPoint {
            x: -8.0,
            y: 4.8,
            ..Default::default()
        });
        assert_eq!(line_from_flush(&flat2), None);
        // Every d in the flushed line: larger than 256 B.
        let big = pairs(1.0, &[(8.0, 120.0), (256.0, 121.0), (-8.0, 4.0)]);
        assert_eq!(line_from_flush(&big), None);
    }

    #[test]
    fn flat_curve_has_no_line() {
        let c = pairs(1.0, &[(8.0, 8.5), (64.0, 8.6), (256.0, 8.55)]);
        assert_eq!(line_from_pairs(&c), None);
        assert_eq!(line_size(None, None), None);
    }
}
