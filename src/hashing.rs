//! Key hashing, and the map from a 64-bit hash to (bucket, fingerprint).
//!
//! # The default hasher
//! [`DefaultHashBuilder`] is foldhash's `quality` variant with a per-filter
//! seed. foldhash is hashbrown's (and so std's `HashMap` ecosystem's) fast
//! default, maintained, dependency-free, and among the fastest hashes that
//! pass SMHasher; the `quality` variant adds one folded multiply at the end
//! so every output bit depends on every input bit, which matters here
//! because the filter uses *both* ends of the hash (high bits for the index,
//! low bits for the fingerprint). Each filter draws a fresh random seed, so
//! an attacker who knows the hash function still cannot precompute keys that
//! collide into one bucket pair (forcing insert failures) or that share a
//! stored fingerprint (chosen false positives). [`DefaultHashBuilder::with_seed`]
//! fixes the seed for reproducible runs.
//!
//! # Index and fingerprint
//! The primary bucket comes from the high 32 bits (`fastrange`: a multiply
//! and a shift maps them uniformly onto any bucket count), the fingerprint
//! from the low bits, so the two never share a bit.
//!
//! # Alternate bucket (partial-key cuckoo hashing, paper eq. 1-2)
//! `alt(i, f) = (H(f) - i) mod m` where `H(f)` is the fingerprint mixed by a
//! multiply and mapped onto `[0, m)`, with its low bit forced to one. It is an
//! involution for *any* bucket count (`alt(alt(i)) = H - (H - i) = i`), so the
//! table need not be a power of two and sizing wastes no memory. Keeping `m`
//! even and `H` odd means `2i = H (mod m)` has no solution: the two candidate
//! buckets always differ, so every key has eight slots.

use core::hash::BuildHasher;

/// The default [`BuildHasher`]: foldhash (quality variant) with a per-filter
/// random seed. See the module docs for why.
#[derive(Clone, Debug)]
pub struct DefaultHashBuilder {
    seed: u64,
    state: foldhash::quality::FixedState,
}

impl DefaultHashBuilder {
    /// A builder with a fresh random seed.
    pub fn new() -> Self {
        Self::with_seed(random_seed())
    }

    /// A builder with a fixed seed: the same seed hashes every key the same
    /// way in every run of the same build.
    pub fn with_seed(seed: u64) -> Self {
        Self {
            seed,
            state: foldhash::quality::FixedState::with_seed(seed),
        }
    }

    /// The seed this builder hashes with.
    pub fn seed(&self) -> u64 {
        self.seed
    }
}

impl Default for DefaultHashBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl BuildHasher for DefaultHashBuilder {
    type Hasher = foldhash::quality::FoldHasher<'static>;

    #[inline]
    fn build_hasher(&self) -> Self::Hasher {
        self.state.build_hasher()
    }
}

/// A random 64-bit seed from std's per-process random keys plus a counter, so
/// no extra dependency (getrandom) is needed and two filters never share one.
fn random_seed() -> u64 {
    use std::collections::hash_map::RandomState;
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    RandomState::new().hash_one(COUNTER.fetch_add(1, Ordering::Relaxed))
}

/// Odd multiplier (2^64 / golden ratio) that spreads a fingerprint's bits into
/// the high half of the product, which `fastrange` then uses.
const FINGERPRINT_MIX: u64 = 0x9E37_79B9_7F4A_7C15;

/// Maps hashes and fingerprints onto bucket indices for a table of `buckets`
/// buckets (even, at least 2, at most 2^32).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IndexMap {
    buckets: u64,
}

impl IndexMap {
    /// Most buckets a table may have: the index comes from 32 hash bits.
    pub(crate) const MAX_BUCKETS: u64 = 1 << 32;

    pub(crate) fn new(buckets: usize) -> Self {
        let buckets = buckets as u64;
        assert!(
            buckets >= 2 && buckets.is_multiple_of(2) && buckets <= Self::MAX_BUCKETS,
            "bucket count {buckets} must be even and in [2, 2^32]"
        );
        Self { buckets }
    }

    pub(crate) fn buckets(self) -> usize {
        self.buckets as usize
    }

    /// Primary bucket of a hash: its high 32 bits mapped onto `[0, m)`.
    #[inline(always)]
    pub(crate) fn primary(self, hash: u64) -> usize {
        (((hash >> 32) * self.buckets) >> 32) as usize
    }

    /// The other candidate bucket of fingerprint `fp` stored in bucket `i`.
    #[inline(always)]
    pub(crate) fn alternate(self, i: usize, fp: u64) -> usize {
        let mixed = fp.wrapping_mul(FINGERPRINT_MIX);
        // fastrange onto [0, m), then force odd: still < m because m is even.
        let h = ((u128::from(mixed) * u128::from(self.buckets)) >> 64) as u64 | 1;
        let i = i as u64;
        (if h >= i { h - i } else { h + self.buckets - i }) as usize
    }

    /// A hash whose primary bucket is `bucket` and whose low 32 bits are
    /// `low` (used by tests and loom models to place keys exactly).
    pub(crate) fn hash_for(self, bucket: usize, low: u32) -> u64 {
        // Smallest x with floor(x * m / 2^32) == bucket is ceil(bucket * 2^32 / m).
        let high = ((bucket as u128) << 32).div_ceil(u128::from(self.buckets)) as u64;
        debug_assert_eq!(self.primary(high << 32), bucket);
        (high << 32) | u64::from(low)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alternate_is_an_involution_without_fixed_points() {
        for buckets in [2usize, 4, 6, 10, 1000, 4094, 131_072, 999_998] {
            let map = IndexMap::new(buckets);
            let step = (buckets / 500).max(1);
            for i in (0..buckets).step_by(step) {
                for fp in [1u64, 2, 3, 0xFF, 0x1234, 0xFFFF, 0xDEAD_BEEF, 0xFFFF_FFFF] {
                    let j = map.alternate(i, fp);
                    assert!(j < buckets);
                    assert_ne!(i, j, "fixed point: m={buckets} i={i} fp={fp}");
                    assert_eq!(map.alternate(j, fp), i, "m={buckets} i={i} fp={fp}");
                }
            }
        }
    }

    #[test]
    fn fingerprint_reaches_every_index_bit() {
        // With a power-of-two table every index bit must vary with the fingerprint.
        let map = IndexMap::new(1 << 20);
        let mut seen_ones = 0usize;
        let mut seen_zeros = 0usize;
        for fp in 1..=4096u64 {
            let j = map.alternate(0, fp);
            seen_ones |= j;
            seen_zeros |= !j;
        }
        assert_eq!(seen_ones & ((1 << 20) - 1), (1 << 20) - 1);
        assert_eq!(
            seen_zeros & ((1 << 20) - 2),
            (1 << 20) - 2,
            "bit 0 is always set by design"
        );
    }

    #[test]
    fn primary_is_uniform_and_in_range() {
        let map = IndexMap::new(10);
        let mut counts = [0u32; 10];
        for k in 0..100_000u64 {
            let h = DefaultHashBuilder::with_seed(7).hash_one(k);
            counts[map.primary(h)] += 1;
        }
        for c in counts {
            assert!((9_000..11_000).contains(&c), "{counts:?}");
        }
        assert_eq!(
            IndexMap::new(IndexMap::MAX_BUCKETS as usize).primary(u64::MAX),
            (1 << 32) - 1
        );
    }

    #[test]
    fn hash_for_places_keys_exactly() {
        for buckets in [2usize, 6, 1000, 1 << 20] {
            let map = IndexMap::new(buckets);
            for b in [0, 1, buckets / 2, buckets - 1] {
                assert_eq!(map.primary(map.hash_for(b, 5)), b);
            }
        }
    }

    #[test]
    fn seeds_are_fixed_or_fresh() {
        let a = DefaultHashBuilder::with_seed(42);
        let b = DefaultHashBuilder::with_seed(42);
        assert_eq!(a.hash_one("flow"), b.hash_one("flow"));
        assert_eq!(a.seed(), 42);
        let c = DefaultHashBuilder::new();
        let d = DefaultHashBuilder::new();
        assert_ne!(c.seed(), d.seed());
        assert_ne!(c.hash_one("flow"), d.hash_one("flow"));
    }
}
