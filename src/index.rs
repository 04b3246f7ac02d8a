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
//!
//! # Signed hashes (a key with a precomputed 32-bit signature)
//! A dataplane often has a 32-bit hash of each packet's flow key for free
//! (the NIC's RSS hash). [`signed_prepared`] builds a prepared hash from
//! it and the key: the signature, mixed by a 32-bit bijection, is the high
//! half, so it alone picks the primary bucket, and the low half of the
//! key's own (seeded, 64-bit) hash is the low half, so it alone gives the
//! fingerprint. The signature never decides the fingerprint: two keys with one signature share a primary
//! bucket, not a fingerprint, so a 32-bit signature adds no
//! false positives, as using it as the whole hash would (at 2^24 keys, a
//! 0.4% floor from signature collisions alone). The filter takes such a
//! key through its `*_hash` calls as [`IndexMap::unprepare`] of it.
//!
//! # Nested maps (the growing filter's levels)
//! A growing filter removes a key from one of the levels that hold its
//! fingerprint, and must not take a copy that another key needs. That is
//! safe when the levels *nest*: two keys that collide (the same fingerprint
//! and bucket pair) in a larger level also collide in every smaller one.
//! Then the copy in the largest matching level may always be taken
//! (`scalable/mod.rs`, "Removing keys across levels"). [`HashScheme::Nested`]
//! maps give that for tables of `c * 2^k` buckets (`c` even, the same in
//! every level) whose fingerprints are at least `w` bits wide:
//! - the primary bucket is the same `fastrange` of the high 32 hash bits,
//!   so a table of `c * 2^(k-1)` buckets has the primary of `c * 2^k` with
//!   its lowest bit dropped: `floor(x * 2m / 2^32) / 2 = floor(x * m / 2^32)`;
//! - a fingerprint is the low bits of the hash (0 read as 1), so a narrower
//!   one is a function of a wider one: equal wide ones give equal narrow ones;
//! - the alternate treats a bucket as a *top* part `i >> k` in `[0, c)` and
//!   `k` *low* bits. The top part moves as in the finalized map over `c`
//!   buckets, `(H(g) - top) mod c`; the low bits are xored with the high
//!   `k` of 32 bits mixed from `g`. Here `g` is the fingerprint narrowed to
//!   `w` bits (every level's own), so both parts come from bits that every
//!   level shares. Dropping low bits of both buckets then gives the smaller
//!   table's pair: `alt_k(i) >> d = alt_(k-d)(i >> d)`. The low bits must
//!   depend on the key: a map whose alternate took every key of a bucket
//!   to the same low bits would split the table into `2^(k-1)` separate
//!   tables of `2c` buckets, which fill badly when `c` is small (an
//!   earlier version did, and levels of a first level of 10 items filled
//!   to 76%: `alternates_reach_every_low_bit_pattern`).
//!
//! With `k = 0` and `w` the table's width, a nested map is the finalized
//! one: a fixed filter and a growing filter's first level would place
//! fingerprints alike.

/// How a filter turns a hash into its buckets and fingerprint. Recorded in
/// an encoded filter by its format version (and, for [`Nested`], by the
/// growing filter's container).
///
/// [`Nested`]: HashScheme::Nested
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HashScheme {
    /// The hash's bits are used as they are (format version 1).
    #[cfg_attr(concurrent_cuckoo_loom, allow(dead_code))]
    Raw,
    /// The hash is finalized first (format version 2 and new filters).
    Finalized,
    /// Finalized, with an alternate bucket that nests across tables of
    /// `c * 2^k` buckets (see "Nested maps" below): the levels of a growing
    /// filter whose growth factor is a power of two.
    Nested,
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

/// [`HashScheme::Nested`] as a type.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NestedHashes;

impl Scheme for RawHashes {
    const SCHEME: HashScheme = HashScheme::Raw;
}

impl Scheme for FinalizedHashes {
    const SCHEME: HashScheme = HashScheme::Finalized;
}

impl Scheme for NestedHashes {
    const SCHEME: HashScheme = HashScheme::Nested;
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
            $crate::index::HashScheme::Nested => {
                type $p = $crate::index::NestedHashes;
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

/// Odd multiplier mixing a nested map's fingerprint key into the bits that
/// its alternate's low part is xored with (a different odd constant from
/// [`FINGERPRINT_MIX`], so the two parts draw on different products).
const NESTED_LOW_MIX: u64 = 0xD6E8_FEB8_6659_FD93;

/// Maps hashes and fingerprints onto bucket indices for a table of `buckets`
/// buckets (even, at least 2, at most 2^32).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IndexMap {
    buckets: u64,
    scheme: HashScheme,
    /// [`HashScheme::Nested`] only (0 otherwise): `k`, the low bits of a
    /// bucket index; `buckets >> low_bits` is the top part's range `c`.
    low_bits: u8,
    /// [`HashScheme::Nested`] only (0 otherwise): `w`, the fingerprint
    /// bits the alternate is computed from.
    key_bits: u8,
    /// [`HashScheme::Nested`] only: whether the table's fingerprints are
    /// wider than `w`, so that the alternate must narrow them first (a
    /// growing filter whose first levels have narrower fingerprints than
    /// its later ones); decided once, so that the others skip it.
    narrow: bool,
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
        debug_assert_ne!(scheme, HashScheme::Nested, "IndexMap::nested makes those");
        Self {
            buckets,
            scheme,
            low_bits: 0,
            key_bits: 0,
            narrow: false,
        }
    }

    /// A [`HashScheme::Nested`] map of `top * 2^low_bits` buckets whose
    /// alternate comes from the low `key_bits` of a fingerprint (module
    /// docs, "Nested maps"), for a table of `bits`-bit fingerprints. `top`
    /// is even and at least 2, the product at most 2^32, `key_bits` 8, 16
    /// or 32 and at most `bits`: checked by the callers, which refuse
    /// anything else as bad configuration or bad bytes ([`nested_shape`]).
    pub(crate) fn nested(top: usize, low_bits: u32, key_bits: u32, bits: u32) -> Self {
        assert!(
            key_bits <= bits,
            "nested map: a {key_bits}-bit key of {bits}-bit fingerprints"
        );
        let buckets = nested_shape(top, low_bits, key_bits).unwrap_or_else(|| {
            panic!("nested map: {top} * 2^{low_bits} buckets, {key_bits}-bit key")
        });
        Self {
            buckets: buckets as u64,
            scheme: HashScheme::Nested,
            low_bits: low_bits as u8,
            key_bits: key_bits as u8,
            narrow: bits > key_bits,
        }
    }

    /// Whether a fingerprint colliding with another in a table of this map
    /// (and `bits`-bit fingerprints) implies that they collide in one of
    /// map `coarser` (and `coarser_bits`-bit fingerprints): the maps are
    /// equal and so are the widths, or both are nested with the same top
    /// range and key, this one with at least as many low bits and bits.
    pub(crate) fn refines(self, bits: u32, coarser: IndexMap, coarser_bits: u32) -> bool {
        if self == coarser && bits == coarser_bits {
            return true;
        }
        match (self.as_nested(bits), coarser.as_nested(coarser_bits)) {
            (Some((top, low_bits, key_bits)), Some((coarse_top, coarse_low, coarse_key))) => {
                top == coarse_top
                    && key_bits == coarse_key
                    && low_bits >= coarse_low
                    && bits >= coarser_bits
            }
            _ => false,
        }
    }

    /// `(c, k, w)` of this map as a nested one, for a table of `bits`-bit
    /// fingerprints: a finalized map is the nested map of `k = 0` and
    /// `w = bits` (module docs; a growing filter gives its levels of no
    /// low bits and the key's width such a map, which places keys alike
    /// at less cost). A raw map is none.
    fn as_nested(self, bits: u32) -> Option<(u64, u32, u32)> {
        match self.scheme {
            HashScheme::Nested => Some((
                self.buckets >> self.low_bits,
                u32::from(self.low_bits),
                u32::from(self.key_bits),
            )),
            HashScheme::Finalized => Some((self.buckets, 0, bits)),
            HashScheme::Raw => None,
        }
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
            HashScheme::Finalized | HashScheme::Nested => finalize(hash),
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

    /// The other candidate bucket of fingerprint `fp` stored in bucket `i`,
    /// for callers outside a per-scheme loop (writes, moves): one
    /// predictable branch on the scheme.
    #[inline(always)]
    pub(crate) fn alternate(self, i: usize, fp: u64) -> usize {
        if self.scheme == HashScheme::Nested {
            self.nested_alternate(i, fp)
        } else {
            self.plain_alternate(i, fp)
        }
    }

    /// [`alternate`](Self::alternate) for a map whose scheme is `P`
    /// (checked in debug builds): no branch on the scheme.
    #[inline(always)]
    pub(crate) fn alternate_as<P: Scheme>(self, i: usize, fp: u64) -> usize {
        debug_assert_eq!(self.scheme, P::SCHEME);
        match P::SCHEME {
            HashScheme::Nested => self.nested_alternate(i, fp),
            HashScheme::Raw | HashScheme::Finalized => self.plain_alternate(i, fp),
        }
    }

    /// The alternate of a nested map (module docs, "Nested maps"): the
    /// top part `(H - top) mod c`, with `H` the finalized map's over `c`
    /// buckets, and the low bits xored with `v` (`k` bits mixed from the
    /// key). An involution, since each part is one; no fixed point, since
    /// the top part has none (`H` odd, `c` even). Below `m` whenever `i`
    /// is: the top part below `c`, the low part below `2^k`. The top part
    /// is computed already shifted, `(H << k) - (i with its low bits
    /// cleared)` modulo `m`, so that no shift follows the subtraction on
    /// the path to the bucket.
    #[inline(always)]
    fn nested_alternate(self, i: usize, fp: u64) -> usize {
        // The fingerprint of `key_bits` bits that `fp`'s low bits make:
        // `fp` itself in a level as narrow as the key (every level, at
        // one width), which decides it once per table.
        let key = if self.narrow {
            narrow_key(fp, u32::from(self.key_bits))
        } else {
            fp
        };
        let k = u32::from(self.low_bits);
        let i = i as u64;
        let low_mask = (1u64 << k) - 1;
        let mixed = key.wrapping_mul(FINGERPRINT_MIX);
        let h = (((u128::from(mixed) * u128::from(self.buckets >> k)) >> 64) as u64 | 1) << k;
        let (diff, borrow) = h.overflowing_sub(i & !low_mask);
        let top = core::hint::select_unpredictable(borrow, diff.wrapping_add(self.buckets), diff);
        // The high `k` of 32 mixed bits (`>> 32 >> (32 - k)`: no shift by
        // 64 when `k` is 0).
        let v = (key.wrapping_mul(NESTED_LOW_MIX) >> 32) >> (32 - k);
        (top | ((i & low_mask) ^ v)) as usize
    }

    /// The alternate of the raw and finalized maps. Below `m` whenever `i`
    /// is (`h` and `i` are both below `m`, so `h - i`, plus `m` if that
    /// borrowed, is in `[0, m)`), which lookups rely on to index their
    /// buckets unchecked.
    #[inline(always)]
    fn plain_alternate(self, i: usize, fp: u64) -> usize {
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
        self.unprepare(prepared)
    }

    /// The hash whose [`prepare`](Self::prepare)d form is `prepared`: the
    /// hash a filter's `*_hash` calls take to land where `prepared` says.
    #[inline]
    pub(crate) fn unprepare(self, prepared: u64) -> u64 {
        match self.scheme {
            HashScheme::Finalized | HashScheme::Nested => unfinalize(prepared),
            HashScheme::Raw => prepared,
        }
    }
}

/// The prepared hash of a key given with a 32-bit signature (see "Signed
/// hashes" in the module docs): the signature, mixed by a bijection, as
/// the high half, and the low half of the key's own hash.
#[inline(always)]
pub(crate) fn signed_prepared(signature: u32, key_hash: u64) -> u64 {
    (u64::from(mix_signature(signature)) << 32) | (key_hash & 0xFFFF_FFFF)
}

/// A 32-bit bijection with full avalanche (MurmurHash3's `fmix32`): a
/// signature whose entropy sits in a few bits (sequential ids, a weak
/// RSS hash) still spreads over every bucket, and distinct signatures
/// stay distinct.
#[inline(always)]
pub(crate) fn mix_signature(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85EB_CA6B);
    h ^= h >> 13;
    h = h.wrapping_mul(0xC2B2_AE35);
    h ^ (h >> 16)
}

/// `fp` narrowed to a `key_bits`-bit fingerprint: its low bits, 0 read as
/// 1 (as `Fingerprint::from_hash` reads them). Out of line: only levels
/// wider than their filter's first level call it.
#[cold]
#[inline(never)]
fn narrow_key(fp: u64, key_bits: u32) -> u64 {
    let low = fp & (u64::MAX >> (64 - key_bits));
    low + u64::from(low == 0)
}

/// The bucket count of a nested map of top range `top` and `low_bits` low
/// bits with a `key_bits`-bit key, if that is one ([`IndexMap::nested`]):
/// `top` even and at least 2, `top * 2^low_bits` at most 2^32, `key_bits`
/// one of the widths.
pub(crate) fn nested_shape(top: usize, low_bits: u32, key_bits: u32) -> Option<usize> {
    let buckets = (top as u64).checked_shl(low_bits)?;
    let fits = low_bits <= 32
        && top >= 2
        && top.is_multiple_of(2)
        && (buckets >> low_bits) == top as u64
        && buckets <= IndexMap::MAX_BUCKETS
        && matches!(key_bits, 8 | 16 | 32);
    fits.then(|| usize::try_from(buckets).ok()).flatten()
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

    /// `from_hash` of each width, as `Fingerprint` defines it.
    fn narrow(fp: u64, bits: u32) -> u64 {
        let low = fp & (u64::MAX >> (64 - bits));
        low + u64::from(low == 0)
    }

    #[test]
    fn nested_alternates_are_involutions_without_fixed_points() {
        for (top, low_bits) in [
            (2usize, 0u32),
            (2, 5),
            (6, 3),
            (1000, 0),
            (1000, 7),
            // 2^32 buckets need a 64-bit `usize` (armv7 has a 32-bit one).
            (
                2,
                if cfg!(target_pointer_width = "64") {
                    31
                } else {
                    30
                },
            ),
        ] {
            for key_bits in [8, 16, 32] {
                let map = IndexMap::nested(top, low_bits, key_bits, 32);
                let buckets = map.buckets();
                let step = (buckets / 300).max(1);
                for i in (0..buckets).step_by(step).chain([buckets - 1]) {
                    for fp in [
                        1u64,
                        2,
                        0xFF,
                        0x100,
                        0x1234,
                        0xFFFF,
                        0xDEAD_BEEF,
                        0xFFFF_FFFF,
                    ] {
                        let j = map.alternate(i, fp);
                        assert!(j < buckets, "{top}*2^{low_bits}: {j}");
                        assert_ne!(i, j, "fixed point: {top}*2^{low_bits} i={i} fp={fp}");
                        assert_eq!(map.alternate(j, fp), i, "{top}*2^{low_bits} i={i} fp={fp}");
                        assert_eq!(map.alternate_as::<NestedHashes>(i, fp), j);
                    }
                }
            }
        }
        assert!(nested_shape(3, 1, 16).is_none(), "an odd top range");
        assert!(nested_shape(4, 31, 16).is_none(), "past 2^32 buckets");
        assert!(nested_shape(2, 4, 12).is_none(), "not a width");
        #[cfg(target_pointer_width = "64")]
        assert_eq!(nested_shape(2, 31, 8), Some(1 << 32));
    }

    /// The property the growing filter's removes stand on (module docs,
    /// "Nested maps"): dropping `d` low bits of both buckets of a key in a
    /// table with `k` low bits and `bits`-bit fingerprints gives its
    /// buckets in the table with `k - d` and a narrower width, and so two
    /// keys that collide in the larger table collide in the smaller.
    #[test]
    fn nested_maps_drop_low_bits_into_the_smaller_tables_pair() {
        let mut rng = Rng(11);
        for top in [2usize, 10, 1000] {
            for key_bits in [8u32, 16] {
                let widths = [8u32, 16, 32].into_iter().filter(move |&w| w >= key_bits);
                for (k, wide) in (0..12u32).flat_map(|k| widths.clone().map(move |w| (k, w))) {
                    let big = IndexMap::nested(top, k, key_bits, wide);
                    for d in 0..=k {
                        for narrow_bits in [8u32, 16, 32]
                            .into_iter()
                            .filter(|&w| w >= key_bits && w <= wide)
                        {
                            let small = IndexMap::nested(top, k - d, key_bits, narrow_bits);
                            for _ in 0..200 {
                                let prepared = rng.next();
                                let (fp_big, fp_small) =
                                    (narrow(prepared, wide), narrow(prepared, narrow_bits));
                                let i = big.primary(prepared);
                                assert_eq!(small.primary(prepared), i >> d, "primary");
                                let j = big.alternate(i, fp_big);
                                assert_eq!(small.alternate(i >> d, fp_small), j >> d, "alternate");
                                assert_eq!(narrow(fp_big, narrow_bits), fp_small, "fingerprint");
                            }
                        }
                    }
                }
            }
        }
        // With no low bits and the key as wide as the fingerprints, a
        // nested map places keys as the finalized map does.
        let (nested, plain) = (
            IndexMap::nested(1000, 0, 16, 16),
            IndexMap::new(1000, HashScheme::Finalized),
        );
        for _ in 0..1000 {
            let (i, fp) = ((rng.next() % 1000) as usize, narrow(rng.next(), 16));
            assert_eq!(nested.alternate(i, fp), plain.alternate(i, fp));
        }
    }

    /// The keys of one bucket reach alternates of every low-bit pattern
    /// (and many top parts): a map whose low bits ignored the key would
    /// cut the table into small separate ones.
    #[test]
    fn alternates_reach_every_low_bit_pattern() {
        for (top, k) in [(6usize, 4u32), (1000, 3), (2, 6)] {
            let map = IndexMap::nested(top, k, 16, 16);
            for i in [0usize, 5, map.buckets() - 1] {
                let mut lows = std::collections::HashSet::new();
                let mut tops = std::collections::HashSet::new();
                for fp in 1..=4096u64 {
                    let j = map.alternate(i, fp);
                    lows.insert(j & ((1 << k) - 1));
                    tops.insert(j >> k);
                }
                assert_eq!(lows.len(), 1 << k, "{top}*2^{k}, bucket {i}: low bits");
                assert_eq!(tops.len(), top / 2, "{top}*2^{k}, bucket {i}: top parts");
            }
        }
    }

    #[test]
    fn refinement_is_nesting_or_equality() {
        let plain = IndexMap::new(1000, HashScheme::Finalized);
        let other = IndexMap::new(2000, HashScheme::Finalized);
        assert!(plain.refines(16, plain, 16));
        assert!(
            !plain.refines(32, plain, 16),
            "widths differ without nesting"
        );
        assert!(!other.refines(16, plain, 16));
        let (a, b) = (
            IndexMap::nested(10, 2, 8, 8),
            IndexMap::nested(10, 5, 8, 16),
        );
        assert!(b.refines(16, a, 8) && !a.refines(8, b, 16));
        assert!(
            b.refines(16, a, 16) && !b.refines(8, a, 16),
            "a wider coarse level"
        );
        assert!(
            !IndexMap::nested(12, 5, 8, 16).refines(16, a, 8),
            "another top range"
        );
        assert!(
            !IndexMap::nested(10, 5, 16, 16).refines(16, IndexMap::nested(10, 2, 8, 16), 16),
            "another key"
        );
        assert!(!b.refines(16, plain, 16) && !plain.refines(16, b, 16));
        // A finalized map is the nested one of no low bits, keyed by its
        // width: a growing filter's first level.
        let first = IndexMap::new(10, HashScheme::Finalized);
        assert!(b.refines(16, first, 8) && !first.refines(8, b, 16));
        assert!(
            !b.refines(16, first, 16),
            "a first level wider than the key"
        );
        assert!(IndexMap::nested(10, 0, 8, 16).refines(16, first, 8));
        let raw = IndexMap::new(10, HashScheme::Raw);
        assert!(raw.refines(8, raw, 8) && !b.refines(16, raw, 8));
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
    fn a_signed_hash_takes_its_bucket_from_the_signature_and_its_fingerprint_from_the_key() {
        for scheme in [HashScheme::Raw, HashScheme::Finalized] {
            let map = IndexMap::new(1 << 20, scheme);
            for (signature, key_hash) in [(0, 0), (7, u64::MAX), (u32::MAX, 0x1234_5678_9abc_def0)]
            {
                let prepared = signed_prepared(signature, key_hash);
                assert_eq!(map.prepare(map.unprepare(prepared)), prepared);
                assert_eq!(prepared as u32, key_hash as u32);
                let other_key = signed_prepared(signature, !key_hash);
                assert_eq!(map.primary(prepared), map.primary(other_key));
            }
        }
        // A bijection: distinct signatures stay distinct (checked over a
        // range; the steps are invertible, so it holds for all).
        let mut seen = std::collections::HashSet::new();
        for s in (0..1u32 << 20).chain(u32::MAX - 1000..=u32::MAX) {
            assert!(seen.insert(mix_signature(s)));
        }
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
