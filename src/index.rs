//! The map from a key's 64-bit hash to its two buckets and its fingerprint.
//!
//! # Finalizing the hash
//! Every hash, from the filter's own hasher or passed in by the caller
//! (`*_hash` methods), first goes through a fixed bijective finalizer: the
//! SplitMix64 output function (two multiplies, three xor-shifts; Steele,
//! Lea and Flood 2014). A dataplane's hash is often a 32-bit RSS or
//! Toeplitz value widened to `u64`, with all its entropy in the low bits;
//! without the finalizer every such hash would pick bucket 0 (the bucket
//! comes from the high bits), and the filter would report `Full` at half
//! load. After it, every output bit depends on every input bit, so any
//! 64-bit value whose entropy sits in *any* of its bits spreads evenly. A
//! bijection maps distinct hashes to distinct hashes: it adds no
//! collisions. Because keyed and `*_hash` calls share it,
//! `contains(&k) == contains_hash(hasher.hash_one(&k))` always holds.
//!
//! Filters decoded from format version 1 were built without the finalizer
//! and keep answering exactly as they did: their map has
//! [`HashScheme::Raw`]. Everything else uses [`HashScheme::Finalized`].
//!
//! # Index and fingerprint
//! The primary bucket comes from the high 32 bits of the (finalized) hash
//! (`fastrange`: a multiply and a shift map them uniformly onto any bucket
//! count), the fingerprint from the low bits, so the two never share a bit.
//!
//! # Alternate bucket (partial-key cuckoo hashing, paper eq. 1-2)
//! `alt(i, f) = (H(f) - i) mod m` where `H(f)` is the fingerprint mixed by a
//! multiply and mapped onto `[0, m)`, with its low bit forced to one. It is an
//! involution for *any* bucket count (`alt(alt(i)) = H - (H - i) = i`), so the
//! table need not be a power of two and sizing wastes no memory. Keeping `m`
//! even and `H` odd means `2i = H (mod m)` has no solution: the two candidate
//! buckets always differ, so every key has eight slots.

/// How a filter turns a hash into its buckets and fingerprint. Recorded in
/// an encoded filter by its format version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HashScheme {
    /// The hash's bits are used as they are (format version 1).
    #[cfg_attr(concurrent_cuckoo_loom, allow(dead_code))]
    Raw,
    /// The hash is finalized first (format version 2 and new filters).
    Finalized,
}

/// A [`HashScheme`] as a type, so that code generic over it is compiled
/// once per scheme and decides nothing per hash: a table picks its scheme
/// once (see [`with_scheme!`]), and the lookup it runs then has no branch
/// on it, and no load of it after the acquire loads of a batch.
pub(crate) trait Scheme: Copy {
    /// The scheme this type stands for.
    const SCHEME: HashScheme;
}

/// [`HashScheme::Raw`] as a type.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawHashes;

/// [`HashScheme::Finalized`] as a type.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FinalizedHashes;

impl Scheme for RawHashes {
    const SCHEME: HashScheme = HashScheme::Raw;
}

impl Scheme for FinalizedHashes {
    const SCHEME: HashScheme = HashScheme::Finalized;
}

/// Runs `$body` with `$p` bound to the [`Scheme`] type of the scheme
/// `$scheme`: the one place a scheme value becomes a type.
macro_rules! with_scheme {
    ($scheme:expr, $p:ident => $body:expr) => {
        match $scheme {
            $crate::index::HashScheme::Raw => {
                type $p = $crate::index::RawHashes;
                $body
            }
            $crate::index::HashScheme::Finalized => {
                type $p = $crate::index::FinalizedHashes;
                $body
            }
        }
    };
}
pub(crate) use with_scheme;

/// Odd multiplier (2^64 / golden ratio) that spreads a fingerprint's bits into
/// the high half of the product, which `fastrange` then uses.
const FINGERPRINT_MIX: u64 = 0x9E37_79B9_7F4A_7C15;

/// The SplitMix64 output function's multipliers.
const FINALIZE_M1: u64 = 0xBF58_476D_1CE4_E5B9;
const FINALIZE_M2: u64 = 0x94D0_49BB_1331_11EB;

/// The bijective finalizer applied to every hash (module docs).
#[inline(always)]
pub(crate) fn finalize(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(FINALIZE_M1);
    z = (z ^ (z >> 27)).wrapping_mul(FINALIZE_M2);
    z ^ (z >> 31)
}

/// The inverse of [`finalize`]: `unfinalize(finalize(z)) == z`. Used to
/// build hashes that land in chosen buckets (test hooks).
pub(crate) fn unfinalize(mut z: u64) -> u64 {
    z = undo_xorshift(z, 31).wrapping_mul(inverse(FINALIZE_M2));
    z = undo_xorshift(z, 27).wrapping_mul(inverse(FINALIZE_M1));
    undo_xorshift(z, 30)
}

/// Inverts `y = x ^ (x >> s)`.
fn undo_xorshift(y: u64, s: u32) -> u64 {
    let mut x = y;
    let mut shift = s;
    while shift < 64 {
        x ^= y >> shift;
        shift += s;
    }
    x
}

/// The multiplicative inverse of an odd `a` modulo 2^64 (Newton's
/// iteration doubles the correct low bits each step: 1 -> 64 in 6 steps).
const fn inverse(a: u64) -> u64 {
    let mut x = a; // correct to 3 bits for odd a
    let mut i = 0;
    while i < 6 {
        x = x.wrapping_mul(2u64.wrapping_sub(a.wrapping_mul(x)));
        i += 1;
    }
    x
}

/// Maps hashes and fingerprints onto bucket indices for a table of `buckets`
/// buckets (even, at least 2, at most 2^32).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IndexMap {
    buckets: u64,
    scheme: HashScheme,
}

impl IndexMap {
    /// Most buckets a table may have: the index comes from 32 hash bits.
    pub(crate) const MAX_BUCKETS: u64 = 1 << 32;

    pub(crate) fn new(buckets: usize, scheme: HashScheme) -> Self {
        let buckets = buckets as u64;
        assert!(
            buckets >= 2 && buckets.is_multiple_of(2) && buckets <= Self::MAX_BUCKETS,
            "bucket count {buckets} must be even and in [2, 2^32]"
        );
        Self { buckets, scheme }
    }

    pub(crate) fn buckets(self) -> usize {
        self.buckets as usize
    }

    #[cfg_attr(concurrent_cuckoo_loom, allow(dead_code))]
    pub(crate) fn scheme(self) -> HashScheme {
        self.scheme
    }

    /// The hash the bucket and fingerprint are taken from: `hash`,
    /// finalized unless the scheme is [`HashScheme::Raw`].
    #[cfg(test)]
    pub(crate) fn prepare(self, hash: u64) -> u64 {
        with_scheme!(self.scheme, P => self.prepare_as::<P>(hash))
    }

    /// [`prepare`](Self::prepare) for a map whose scheme is `P` (checked in
    /// debug builds): no branch on the scheme.
    #[inline(always)]
    pub(crate) fn prepare_as<P: Scheme>(self, hash: u64) -> u64 {
        debug_assert_eq!(self.scheme, P::SCHEME);
        match P::SCHEME {
            HashScheme::Finalized => finalize(hash),
            HashScheme::Raw => hash,
        }
    }

    /// Primary bucket of a prepared hash: its high 32 bits mapped onto
    /// `[0, m)`. Always below `m`, whatever the hash (`x < 2^32`, so
    /// `x * m < 2^32 * m`): lookups index their buckets unchecked on this.
    #[inline(always)]
    pub(crate) fn primary(self, prepared: u64) -> usize {
        (((prepared >> 32) * self.buckets) >> 32) as usize
    }

    /// The other candidate bucket of fingerprint `fp` stored in bucket `i`.
    /// Below `m` whenever `i` is (`h` and `i` are both below `m`, so `h -
    /// i`, plus `m` if that borrowed, is in `[0, m)`), which lookups rely
    /// on to index their buckets unchecked.
    #[inline(always)]
    pub(crate) fn alternate(self, i: usize, fp: u64) -> usize {
        let mixed = fp.wrapping_mul(FINGERPRINT_MIX);
        // fastrange onto [0, m), then force odd: still < m because m is even.
        let h = ((u128::from(mixed) * u128::from(self.buckets)) >> 64) as u64 | 1;
        let i = i as u64;
        // `(h - i) mod m`. The comparison is a coin flip for random keys,
        // so it must stay a conditional move: LLVM turned the plain `if`
        // (and a borrow mask, which it sees as the same select) into a
        // jump inside `contains_batch`'s loop, where the mispredictions cost
        // about 4 ns per lookup in cache. `select_unpredictable` tells it.
        let (diff, borrow) = h.overflowing_sub(i);
        core::hint::select_unpredictable(borrow, diff.wrapping_add(self.buckets), diff) as usize
    }

    /// A hash whose primary bucket is `bucket` and whose prepared low 32
    /// bits (and so fingerprint) are `low`: lets tests and loom models place
    /// keys exactly.
    pub(crate) fn hash_for(self, bucket: usize, low: u32) -> u64 {
        // Smallest x with floor(x * m / 2^32) == bucket is ceil(bucket * 2^32 / m).
        let high = ((bucket as u128) << 32).div_ceil(u128::from(self.buckets)) as u64;
        let prepared = (high << 32) | u64::from(low);
        debug_assert_eq!(self.primary(prepared), bucket);
        match self.scheme {
            HashScheme::Finalized => unfinalize(prepared),
            HashScheme::Raw => prepared,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hashing::DefaultHashBuilder;
    use crate::test_rng::Rng;
    use core::hash::BuildHasher;

    #[test]
    fn finalize_is_a_bijection_with_a_working_inverse() {
        let mut rng = Rng(3);
        for z in [0, 1, u64::MAX, 1 << 63, 0xFFFF_FFFF]
            .into_iter()
            .chain((0..10_000).map(|_| rng.next()))
        {
            assert_eq!(unfinalize(finalize(z)), z);
            assert_eq!(finalize(unfinalize(z)), z);
        }
        assert_eq!(inverse(FINALIZE_M1).wrapping_mul(FINALIZE_M1), 1);
        assert_eq!(inverse(FINALIZE_M2).wrapping_mul(FINALIZE_M2), 1);
        // The SplitMix64 reference: the first output for seed 0.
        assert_eq!(finalize(0x9E37_79B9_7F4A_7C15), 0xE220_A839_7B1D_CDAF);
    }

    /// 32-bit hashes widened to `u64` (all entropy in the low half) and
    /// shifted into the high half both reach every bucket evenly.
    #[test]
    fn narrow_hashes_spread_over_every_bucket() {
        let map = IndexMap::new(1000, HashScheme::Finalized);
        for shift in [0, 32] {
            let mut counts = [0u32; 1000];
            for x in 0..200_000u64 {
                counts[map.primary(map.prepare(x << shift))] += 1;
            }
            let (min, max) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
            assert!(*min > 120 && *max < 290, "shift {shift}: {min}..{max}");
        }
        // The raw scheme (format v1) puts them all in bucket 0.
        let raw = IndexMap::new(1000, HashScheme::Raw);
        assert!((0..1000u64).all(|x| raw.primary(raw.prepare(x)) == 0));
    }

    #[test]
    fn alternate_is_an_involution_without_fixed_points() {
        for buckets in [2usize, 4, 6, 10, 1000, 4094, 131_072, 999_998] {
            let map = IndexMap::new(buckets, HashScheme::Finalized);
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
        let map = IndexMap::new(1 << 20, HashScheme::Finalized);
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
        for scheme in [HashScheme::Raw, HashScheme::Finalized] {
            let map = IndexMap::new(10, scheme);
            let mut counts = [0u32; 10];
            for k in 0..100_000u64 {
                let h = DefaultHashBuilder::with_seed(7).hash_one(k);
                counts[map.primary(map.prepare(h))] += 1;
            }
            for c in counts {
                assert!((9_000..11_000).contains(&c), "{scheme:?}: {counts:?}");
            }
        }
        // 2^32 buckets need a 64-bit `usize` (armv7 has a 32-bit one).
        #[cfg(target_pointer_width = "64")]
        assert_eq!(
            IndexMap::new(IndexMap::MAX_BUCKETS as usize, HashScheme::Raw).primary(u64::MAX),
            (1 << 32) - 1
        );
    }

    #[test]
    fn hash_for_places_keys_exactly() {
        for scheme in [HashScheme::Raw, HashScheme::Finalized] {
            for buckets in [2usize, 6, 1000, 1 << 20] {
                let map = IndexMap::new(buckets, scheme);
                for b in [0, 1, buckets / 2, buckets - 1] {
                    let h = map.hash_for(b, 5);
                    assert_eq!(map.primary(map.prepare(h)), b);
                    assert_eq!(map.prepare(h) as u32, 5);
                }
            }
        }
    }
}
