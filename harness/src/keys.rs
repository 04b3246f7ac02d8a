//! Keys shared by every filter in a run.
//!
//! Key `i` is `mix(i)`, a bijection on `u64`, so keys `0..n` (the inserted
//! set) and keys `n..` (never inserted: negative queries) are all distinct
//! without storing or deduplicating anything. The keys are uniformly
//! distributed 64-bit values, so they can also stand in for precomputed
//! hashes (`concurrent-cuckoo`'s `*_hash` API).

/// Murmur3's 64-bit finaliser after a golden-ratio step: a bijection.
#[inline(always)]
pub fn key(i: u64) -> u64 {
    let mut z = i
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(0x1234_5678_9ABC_DEF1);
    z = (z ^ (z >> 33)).wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    z = (z ^ (z >> 33)).wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    z ^ (z >> 33)
}

/// wyrand: a fast, decent generator for picking query indices.
#[derive(Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed ^ 0xA076_1D64_78BD_642F)
    }

    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0xA076_1D64_78BD_642F);
        let t = u128::from(self.0) * u128::from(self.0 ^ 0xE703_7ED1_A0B4_28DB);
        ((t >> 64) as u64) ^ (t as u64)
    }

    /// Uniform in `[0, n)` (fastrange).
    #[inline(always)]
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

/// `count` query keys of which a fraction `positive` (0.0..=1.0) were
/// inserted (drawn from `0..n`) and the rest never were (drawn from
/// `n..2^62`), shuffled.
pub fn queries(n: u64, count: usize, positive: f64, seed: u64) -> Vec<u64> {
    let mut rng = Rng::new(seed);
    let threshold = (positive * (1u64 << 53) as f64) as u64;
    (0..count)
        .map(|_| {
            if n > 0 && (rng.next_u64() >> 11) < threshold {
                key(rng.below(n))
            } else {
                key(n + rng.below((1 << 62) - n))
            }
        })
        .collect()
}
