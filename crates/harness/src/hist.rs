//! A log-linear latency histogram (HdrHistogram / fio's `clat` histogram
//! layout): values below 2^SUB_BITS are counted exactly, above that every
//! power-of-two octave is split into 2^SUB_BITS equal buckets. With
//! SUB_BITS = 7 a bucket is at most 1/128 of its value wide, so a percentile
//! read from the histogram is within 0.8% of the true sample percentile,
//! whatever the distribution, in constant memory (fio uses 6 bits, 1.6%).
//!
//! Recording is one `leading_zeros`, two shifts and an increment: cheap
//! enough to run after every I/O without disturbing the I/O being timed.

/// Sub-bucket bits: 128 buckets per octave.
const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS;
/// Octaves above the exact range: covers every u64.
const OCTAVES: usize = (64 - SUB_BITS) as usize;
const BUCKETS: usize = SUB as usize * (OCTAVES + 1);

/// Counts of non-negative integer values (e.g. latencies in ns).
#[derive(Clone, Debug)]
pub struct Histogram {
    counts: Vec<u64>,
    n: u64,
    min: u64,
    max: u64,
    sum: u128,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

/// Bucket index of a value.
#[inline]
fn index(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    // Octave o >= 1 holds [SUB << (o-1), SUB << o); inside it the bucket
    // width is 2^(o-1).
    let msb = 63 - v.leading_zeros(); // >= SUB_BITS
    let o = (msb - SUB_BITS + 1) as usize;
    let sub = ((v >> (o - 1)) - SUB) as usize; // 0..SUB
    o * SUB as usize + sub
}

/// Smallest value and width of bucket `i`.
#[inline]
fn bucket_range(i: usize) -> (u64, u64) {
    let o = i / SUB as usize;
    let sub = (i % SUB as usize) as u64;
    if o == 0 {
        (sub, 1)
    } else {
        ((SUB + sub) << (o - 1), 1u64 << (o - 1))
    }
}

impl Histogram {
    pub fn new() -> Self {
        Histogram {
            counts: vec![0; BUCKETS],
            n: 0,
            min: u64::MAX,
            max: 0,
            sum: 0,
        }
    }

    #[inline]
    pub fn record(&mut self, v: u64) {
        self.counts[index(v)] += 1;
        self.n += 1;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.sum += v as u128;
    }

    /// Add every count of `other` (per-thread histograms into a total).
    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += *b;
        }
        self.n += other.n;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.sum += other.sum;
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    /// Exact smallest value recorded (None when empty).
    pub fn min(&self) -> Option<u64> {
        (self.n > 0).then_some(self.min)
    }

    /// Exact largest value recorded (None when empty).
    pub fn max(&self) -> Option<u64> {
        (self.n > 0).then_some(self.max)
    }

    /// Exact mean (None when empty).
    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum as f64 / self.n as f64)
    }

    /// A 95% interval of the `p`-th percentile, distribution-free: the
    /// values at the ranks n·p ± 1.96·√(n·p·(1−p)) (the order statistics
    /// between which the true percentile lies with 95% probability, by the
    /// binomial count of samples below it, normal approximation), read as
    /// [`Histogram::percentile`] reads its rank. Ranks past the ends are
    /// clamped to the exact min and max: a 99.9th percentile of 500
    /// samples reaches the largest. None when empty.
    pub fn percentile_ci95(&self, p: f64) -> Option<(f64, f64)> {
        if self.n == 0 {
            return None;
        }
        let (n, q) = (self.n as f64, (p / 100.0).clamp(0.0, 1.0));
        let h = 1.96 * (n * q * (1.0 - q)).sqrt();
        let at = |r: f64| self.at_rank((r.ceil() as u64).clamp(1, self.n));
        Some((at(n * q - h), at(n * q + h + 1.0)))
    }

    /// The value of rank `rank` (1 = smallest), by its bucket's middle,
    /// clamped to the exact min and max.
    fn at_rank(&self, rank: u64) -> f64 {
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, w) = bucket_range(i);
                let mid = lo as f64 + (w as f64 - 1.0) / 2.0;
                return mid.clamp(self.min as f64, self.max as f64);
            }
        }
        self.max as f64
    }

    /// The `p`-th percentile (0 < p <= 100), nearest-rank definition (the
    /// smallest value with at least p% of the samples at or below it, as
    /// fio reports), estimated by the middle of its bucket and clamped to
    /// the exact min and max. None when empty.
    pub fn percentile(&self, p: f64) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        let p = p.clamp(0.0, 100.0);
        let rank = ((p / 100.0 * self.n as f64).ceil() as u64).clamp(1, self.n);
        Some(self.at_rank(rank))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_percentiles_interval_holds_it_and_narrows_with_samples() {
        let mut small = Histogram::new();
        let mut large = Histogram::new();
        for v in 1..=100u64 {
            small.record(v);
        }
        for v in 1..=10_000u64 {
            large.record(v);
        }
        let (lo, hi) = small.percentile_ci95(50.0).unwrap();
        let p = small.percentile(50.0).unwrap();
        assert!(lo <= p && p <= hi && lo >= 35.0 && hi <= 65.0, "{lo} {p} {hi}");
        let (l2, h2) = large.percentile_ci95(50.0).unwrap();
        assert!((h2 - l2) / 10_000.0 < (hi - lo) / 100.0, "relative width shrinks");
        // The tail of few samples reaches the largest.
        assert_eq!(small.percentile_ci95(99.9).unwrap().1, 100.0);
        assert_eq!(Histogram::new().percentile_ci95(50.0), None);
    }

    /// Exact nearest-rank percentile of a sorted slice.
    fn exact(sorted: &[u64], p: f64) -> f64 {
        let n = sorted.len();
        let rank = ((p / 100.0 * n as f64).ceil() as usize).clamp(1, n);
        sorted[rank - 1] as f64
    }

    #[test]
    fn buckets_tile_the_line() {
        // Every value lands in the bucket whose range contains it, and
        // consecutive buckets are contiguous.
        for v in (0..5000u64).chain([u64::MAX, u64::MAX / 3, 1 << 40, (1 << 40) - 1]) {
            let (lo, w) = bucket_range(index(v));
            assert!(lo <= v && v - lo < w, "v={v} lo={lo} w={w}");
        }
        for i in 0..BUCKETS - 1 {
            let (lo, w) = bucket_range(i);
            assert_eq!(lo + w, bucket_range(i + 1).0, "bucket {i}");
        }
        assert_eq!(index(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn small_values_are_exact() {
        let mut h = Histogram::new();
        for v in 1..=100 {
            h.record(v);
        }
        assert_eq!(h.percentile(50.0), Some(50.0));
        assert_eq!(h.percentile(99.0), Some(99.0));
        assert_eq!(h.percentile(100.0), Some(100.0));
        assert_eq!(h.min(), Some(1));
        assert_eq!(h.max(), Some(100));
        assert_eq!(h.mean(), Some(50.5));
    }

    #[test]
    fn percentiles_within_bucket_error() {
        // A skewed, latency-like distribution (log-uniform 10 µs .. 10 ms
        // plus a slow tail) from a fixed-seed generator.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut vals = Vec::new();
        let mut h = Histogram::new();
        for i in 0..200_000 {
            let u = (next() >> 11) as f64 / (1u64 << 53) as f64;
            let mut v = (10_000.0 * 1000f64.powf(u)) as u64;
            if i % 500 == 0 {
                v *= 20;
            }
            vals.push(v);
            h.record(v);
        }
        vals.sort_unstable();
        for p in [1.0, 10.0, 50.0, 90.0, 99.0, 99.9, 99.99, 100.0] {
            let e = exact(&vals, p);
            let got = h.percentile(p).unwrap();
            assert!(((got - e) / e).abs() <= 1.0 / 128.0, "p{p}: exact {e} hist {got}");
        }
        assert_eq!(h.min(), Some(vals[0]));
        assert_eq!(h.max(), Some(*vals.last().unwrap()));
    }

    #[test]
    fn merge_equals_recording_everything() {
        let mut a = Histogram::new();
        let mut b = Histogram::new();
        let mut all = Histogram::new();
        for v in 0..10_000u64 {
            let v = v * v;
            if v % 3 == 0 {
                a.record(v)
            } else {
                b.record(v)
            }
            all.record(v);
        }
        a.merge(&b);
        assert_eq!(a.count(), all.count());
        for p in [50.0, 99.0, 99.9] {
            assert_eq!(a.percentile(p), all.percentile(p));
        }
        assert_eq!(a.min(), all.min());
        assert_eq!(a.max(), all.max());
        assert_eq!(a.mean(), all.mean());
    }

    #[test]
    fn empty_histogram_has_no_figures() {
        let h = Histogram::new();
        assert_eq!(h.percentile(50.0), None);
        assert_eq!(h.min(), None);
        assert_eq!(h.mean(), None);
        let mut m = Histogram::new();
        m.merge(&h);
        assert_eq!(m.count(), 0);
    }
}
