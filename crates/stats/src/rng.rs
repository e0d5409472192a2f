//! The workspace's one random-number generator: SplitMix64 (Steele, Lea and
//! Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014).
//!
//! A 64-bit counter advanced by the golden-ratio gamma and passed through
//! a finaliser (MurmurHash3's, with Stafford's "Mix13" constants): small,
//! fast, any seed (zero included) gives a full-period stream, and its output
//! passes BigCrush. Enough for what hwcal draws: the probes' random cycles,
//! offsets and incompressible data (they need to look random to a
//! prefetcher, a device or a compressor, not to an adversary) and the
//! bootstrap's resampled indices, which must repeat exactly for a seed.
//!
//! Uniform draws below `n` use Lemire's multiply-shift ("Fast random
//! integer generation in an interval", ACM TOMACS 2019) without the
//! rejection step: the bias is under n / 2^64.

/// SplitMix64: the state is a counter, each draw mixes it.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

/// The counter's increment: 2^64 / φ, odd.
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

impl SplitMix64 {
    /// A generator whose state starts at `seed` (the raw seed, not mixed:
    /// the first draw already mixes `seed + GAMMA`).
    pub const fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// The next 64 uniform bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GAMMA);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` by Lemire's multiply-shift (0 when `n` is 0).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// A uniform index into a slice of `n` elements: [`Self::below`] for `usize`.
    #[inline]
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// Fill `bytes` with draws, 8 bytes (little-endian) per draw.
    pub fn fill_bytes(&mut self, bytes: &mut [u8]) {
        for chunk in bytes.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_reference_sequence() {
        // The first outputs of the reference implementation (Vigna's
        // splitmix64.c) seeded with 1234567.
        let mut r = SplitMix64::new(1234567);
        assert_eq!(r.next_u64(), 6457827717110365317);
        assert_eq!(r.next_u64(), 3203168211198807973);
        assert_eq!(r.next_u64(), 9817491932198370423);
    }

    #[test]
    fn below_is_in_range_and_covers_it() {
        let mut r = SplitMix64::new(0);
        let mut seen = [0u32; 10];
        for _ in 0..10_000 {
            let x = r.below(10);
            seen[x as usize] += 1;
            assert!(r.index(3) < 3);
        }
        assert!(seen.iter().all(|&c| (800..1200).contains(&c)), "{seen:?}");
        assert_eq!(r.below(0), 0);
    }

    #[test]
    fn fill_bytes_is_not_constant() {
        let mut r = SplitMix64::new(7);
        let mut b = [0u8; 4099];
        r.fill_bytes(&mut b);
        assert!(b.iter().any(|&x| x != b[0]));
        assert!(b.chunks(8).all(|c| c.iter().any(|&x| x != 0)));
    }
}
