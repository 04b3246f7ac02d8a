//! Fingerprint widths and the atomic storage of one bucket of four of them.
//!
//! A bucket is always a power-of-two number of bytes (4, 8 or 16) and the
//! bucket array is 64-byte aligned, so a bucket never straddles a cache line.
//! Every access to shared slots goes through atomics: a reader loads a whole
//! bucket with one atomic load (two for 32-bit fingerprints, one per 8-byte
//! half; each slot is still read atomically, which is all the lookup
//! protocol needs) and compares it in registers.
//!
//! Writers only ever store under the stripe lock that guards the bucket, so a
//! slot update is a plain load-modify-store of the word holding it: no other
//! writer can race it, and readers see either the old or the new word.

use crate::probe;
#[cfg(not(concurrent_cuckoo_loom))]
use crate::storage::ZeroInit;
use crate::sync::{AtomicU32, AtomicU64, Ordering};
use core::fmt::Debug;

/// Slots per bucket (the paper's b = 4).
pub(crate) const SLOTS: usize = 4;

/// A fingerprint width: `u8`, `u16` or `u32`. Zero is reserved for "empty".
pub(crate) trait Fingerprint: Copy + Eq + Debug + Send + Sync + 'static {
    /// The empty slot.
    const EMPTY: Self;
    /// Width in bits: 8, 16 or 32.
    const BITS: u32;
    /// Bytes of one bucket: `SLOTS * BITS / 8`.
    #[cfg_attr(concurrent_cuckoo_loom, allow(dead_code))]
    const BUCKET_BYTES: usize = SLOTS * Self::BITS as usize / 8;
    /// Atomic storage of one bucket; valid when zeroed, so a table can come
    /// straight from zeroed pages.
    #[cfg(not(concurrent_cuckoo_loom))]
    type Bucket: Send + Sync + ZeroInit;
    /// Atomic storage of one bucket (loom atomics must be constructed).
    #[cfg(concurrent_cuckoo_loom)]
    type Bucket: Send + Sync;
    /// A bucket's four slots as loaded into a register. Slot `i` holds bits
    /// `[i * BITS, (i + 1) * BITS)`, so the word's little-endian bytes are
    /// the slots in order, each little-endian: the persisted body layout.
    type Word: BucketWord;

    /// The fingerprint of a 64-bit hash: its low `BITS` bits, with zero
    /// (the empty marker) mapped to one. The bucket index uses the high 32
    /// bits (see `hashing.rs`), so the two never share a bit for any width.
    fn from_hash(hash: u64) -> Self;
    /// Widens for mixing into the alternate index.
    fn to_u64(self) -> u64;
    /// Narrows a `u64` (the caller guarantees it fits); for decoding and tests.
    fn from_u64(value: u64) -> Self;
    /// A zeroed (all-empty) bucket (loom builds tables this way).
    #[cfg_attr(not(any(test, concurrent_cuckoo_loom)), allow(dead_code))]
    fn empty_bucket() -> Self::Bucket;
    /// Loads all four slots of a bucket.
    fn load(bucket: &Self::Bucket) -> Self::Word;
    /// [`load`](Self::load) with acquire: a remove that holds only its own
    /// bucket's lock reads the pair's other bucket this way, so that a
    /// copy it sees there is visible to every reader that sees its version
    /// bump (`table/single_lock.rs`).
    fn load_acquire(bucket: &Self::Bucket) -> Self::Word;
    /// Stores all four slots of a bucket at once: for filling a table no
    /// other thread can see yet (decoding, thawing a frozen filter).
    #[cfg_attr(concurrent_cuckoo_loom, allow(dead_code))]
    fn store_word(bucket: &Self::Bucket, word: Self::Word);
    /// Slot `index` of a loaded bucket.
    fn slot(word: Self::Word, index: usize) -> Self;
    /// Stores `fp` into slot `index` of `bucket`, whose current contents are
    /// `word`. Only call while holding the bucket's stripe lock.
    fn store_slot(bucket: &Self::Bucket, word: Self::Word, index: usize, fp: Self);
    /// Exact SIMD test: does either bucket hold `fp`?
    fn probe_pair(a: Self::Word, b: Self::Word, fp: Self) -> bool;
    /// Every slot cleared. Only call while holding the bucket's stripe lock.
    fn clear_bucket(bucket: &Self::Bucket);

    /// Whether slots `a` and `b` are stored in the same atomic word, so a
    /// reader's load sees both as of one instant. True for 8- and 16-bit
    /// buckets (one word each); a 32-bit bucket is two words, slots 0-1 and
    /// 2-3.
    fn same_word(a: usize, b: usize) -> bool;

    /// Does `word` hold `fp` in a slot other than `slot` that lives in
    /// another atomic word? (A copy a reader may load at another instant
    /// than `slot`: see the invariant in `table.rs`.)
    #[inline]
    fn copy_outside_word(word: Self::Word, slot: usize, fp: Self) -> bool {
        (0..SLOTS).any(|i| !Self::same_word(i, slot) && Self::slot(word, i) == fp)
    }

    /// Index of the first slot holding `fp`, if any. Each width computes
    /// it branch-free (the first free slot of the word with `fp` XORed out
    /// of every slot): which slot holds a key is random, so a loop's
    /// branch on each slot mispredicted about once a remove, 5.5 ns of a
    /// 19 ns remove in cache at 16 bits (issue 52), for 1 instruction
    /// fewer. This default is the loop.
    #[inline]
    fn find(word: Self::Word, fp: Self) -> Option<usize> {
        (0..SLOTS).find(|&i| Self::slot(word, i) == fp)
    }
    /// Index of the first empty slot, if any (the same as
    /// `find(word, EMPTY)`; each width computes it without a loop).
    fn free_slot(word: Self::Word) -> Option<usize>;
    /// How many slots hold `fp`.
    #[inline]
    fn count(word: Self::Word, fp: Self) -> usize {
        (0..SLOTS).filter(|&i| Self::slot(word, i) == fp).count()
    }
    /// Whether any slot holds `fp`: the probe of [`probe_pair`](Self::probe_pair)
    /// on one bucket (no loop, no branch per slot).
    #[inline(always)]
    fn holds(word: Self::Word, fp: Self) -> bool {
        Self::probe_pair(word, word, fp)
    }
    /// Occupied slots (each width counts them without a loop).
    fn occupied(word: Self::Word) -> usize;
}

/// Slot writes use release so that the fingerprint a mover copies into its
/// destination is published no later than the version bump that follows it.
const STORE: Ordering = Ordering::Release;
/// Bucket loads are relaxed; readers order them against the version counters
/// with an acquire load before and an acquire fence after (see `table.rs`).
const LOAD: Ordering = Ordering::Relaxed;

impl Fingerprint for u8 {
    const EMPTY: Self = 0;
    const BITS: u32 = 8;
    type Bucket = AtomicU32;
    type Word = u32;

    #[inline(always)]
    fn from_hash(hash: u64) -> Self {
        let low = hash & u64::from(u8::MAX);
        (low + u64::from(low == 0)) as u8
    }
    #[inline(always)]
    fn to_u64(self) -> u64 {
        u64::from(self)
    }
    fn from_u64(value: u64) -> Self {
        value as u8
    }
    fn empty_bucket() -> Self::Bucket {
        AtomicU32::new(0)
    }
    #[inline(always)]
    fn load(bucket: &Self::Bucket) -> u32 {
        bucket.load(LOAD)
    }
    #[inline(always)]
    fn load_acquire(bucket: &Self::Bucket) -> u32 {
        bucket.load(Ordering::Acquire)
    }
    fn store_word(bucket: &Self::Bucket, word: u32) {
        bucket.store(word, STORE);
    }
    #[inline(always)]
    fn slot(word: u32, index: usize) -> Self {
        (word >> (index * 8)) as u8
    }
    #[inline]
    fn store_slot(bucket: &Self::Bucket, word: u32, index: usize, fp: Self) {
        let shift = index * 8;
        let new = (word & !(0xFF << shift)) | (u32::from(fp) << shift);
        bucket.store(new, STORE);
    }
    #[inline(always)]
    fn probe_pair(a: u32, b: u32, fp: Self) -> bool {
        probe::pair_u8(a, b, fp)
    }
    fn clear_bucket(bucket: &Self::Bucket) {
        bucket.store(0, STORE);
    }
    #[inline(always)]
    fn same_word(_: usize, _: usize) -> bool {
        true
    }
    #[inline(always)]
    fn occupied(word: u32) -> usize {
        nonzero_lanes(u128::from(word), 0x8080_8080, 0x7F7F_7F7F)
    }
    #[inline(always)]
    fn free_slot(word: u32) -> Option<usize> {
        first_zero_lane(
            u128::from(word.wrapping_sub(0x0101_0101) & !word & 0x8080_8080),
            8,
        )
    }
    /// As the 16-bit [`find`](Fingerprint::find): branch-free.
    #[inline(always)]
    fn find(word: u32, fp: Self) -> Option<usize> {
        Self::free_slot(word ^ (u32::from(fp) * 0x0101_0101))
    }
}

impl Fingerprint for u16 {
    const EMPTY: Self = 0;
    const BITS: u32 = 16;
    type Bucket = AtomicU64;
    type Word = u64;

    #[inline(always)]
    fn from_hash(hash: u64) -> Self {
        let low = hash & u64::from(u16::MAX);
        (low + u64::from(low == 0)) as u16
    }
    #[inline(always)]
    fn to_u64(self) -> u64 {
        u64::from(self)
    }
    fn from_u64(value: u64) -> Self {
        value as u16
    }
    fn empty_bucket() -> Self::Bucket {
        AtomicU64::new(0)
    }
    #[inline(always)]
    fn load(bucket: &Self::Bucket) -> u64 {
        bucket.load(LOAD)
    }
    #[inline(always)]
    fn load_acquire(bucket: &Self::Bucket) -> u64 {
        bucket.load(Ordering::Acquire)
    }
    fn store_word(bucket: &Self::Bucket, word: u64) {
        bucket.store(word, STORE);
    }
    #[inline(always)]
    fn slot(word: u64, index: usize) -> Self {
        (word >> (index * 16)) as u16
    }
    #[inline]
    fn store_slot(bucket: &Self::Bucket, word: u64, index: usize, fp: Self) {
        let shift = index * 16;
        let new = (word & !(0xFFFF << shift)) | (u64::from(fp) << shift);
        bucket.store(new, STORE);
    }
    #[inline(always)]
    fn probe_pair(a: u64, b: u64, fp: Self) -> bool {
        probe::pair_u16(a, b, fp)
    }
    fn clear_bucket(bucket: &Self::Bucket) {
        bucket.store(0, STORE);
    }
    #[inline(always)]
    fn same_word(_: usize, _: usize) -> bool {
        true
    }
    #[inline(always)]
    fn occupied(word: u64) -> usize {
        nonzero_lanes(
            u128::from(word),
            0x8000_8000_8000_8000,
            0x7FFF_7FFF_7FFF_7FFF,
        )
    }
    #[inline(always)]
    fn free_slot(word: u64) -> Option<usize> {
        const ONES: u64 = 0x0001_0001_0001_0001;
        first_zero_lane(
            u128::from(word.wrapping_sub(ONES) & !word & (ONES << 15)),
            16,
        )
    }
    /// The first zero lane of `word` with `fp` XORed out of every lane:
    /// no branch per slot, whose outcome (which slot holds the key) no
    /// predictor can know.
    #[inline(always)]
    fn find(word: u64, fp: Self) -> Option<usize> {
        Self::free_slot(word ^ (u64::from(fp) * 0x0001_0001_0001_0001))
    }
}

/// Four 32-bit slots: two atomic halves, slots 0-1 in `lo`, 2-3 in `hi`.
#[repr(C, align(16))]
pub(crate) struct Bucket32 {
    lo: AtomicU64,
    hi: AtomicU64,
}

impl Fingerprint for u32 {
    const EMPTY: Self = 0;
    const BITS: u32 = 32;
    type Bucket = Bucket32;
    type Word = u128;

    #[inline(always)]
    fn from_hash(hash: u64) -> Self {
        let low = hash & u64::from(u32::MAX);
        (low + u64::from(low == 0)) as u32
    }
    #[inline(always)]
    fn to_u64(self) -> u64 {
        u64::from(self)
    }
    fn from_u64(value: u64) -> Self {
        value as u32
    }
    fn empty_bucket() -> Self::Bucket {
        Bucket32 {
            lo: AtomicU64::new(0),
            hi: AtomicU64::new(0),
        }
    }
    #[inline(always)]
    fn load(bucket: &Self::Bucket) -> u128 {
        let lo = bucket.lo.load(LOAD);
        let hi = bucket.hi.load(LOAD);
        (u128::from(hi) << 64) | u128::from(lo)
    }
    #[inline(always)]
    fn load_acquire(bucket: &Self::Bucket) -> u128 {
        let lo = bucket.lo.load(Ordering::Acquire);
        let hi = bucket.hi.load(Ordering::Acquire);
        (u128::from(hi) << 64) | u128::from(lo)
    }
    fn store_word(bucket: &Self::Bucket, word: u128) {
        bucket.lo.store(word as u64, STORE);
        bucket.hi.store((word >> 64) as u64, STORE);
    }
    #[inline(always)]
    fn slot(word: u128, index: usize) -> Self {
        (word >> (index * 32)) as u32
    }
    #[inline]
    fn store_slot(bucket: &Self::Bucket, word: u128, index: usize, fp: Self) {
        let (half, old) = if index < 2 {
            (&bucket.lo, word as u64)
        } else {
            (&bucket.hi, (word >> 64) as u64)
        };
        // Two explicit cases rather than a variable shift of 0 or 32:
        // LLVM's 32-bit ARM backend (LLVM 22, seen with Debian's rustc 1.96
        // for armv7) miscompiles `(old & !(0xFFFF_FFFF << shift))` with
        // `shift == 0`, dropping the high word; scripts/check-portable.sh
        // --run caught it as lost fingerprints.
        let new = if index.is_multiple_of(2) {
            (old & 0xFFFF_FFFF_0000_0000) | u64::from(fp)
        } else {
            (old & 0x0000_0000_FFFF_FFFF) | (u64::from(fp) << 32)
        };
        half.store(new, STORE);
    }
    #[inline(always)]
    fn probe_pair(a: u128, b: u128, fp: Self) -> bool {
        probe::pair_u32(a, b, fp)
    }
    fn clear_bucket(bucket: &Self::Bucket) {
        bucket.lo.store(0, STORE);
        bucket.hi.store(0, STORE);
    }
    #[inline(always)]
    fn same_word(a: usize, b: usize) -> bool {
        a / 2 == b / 2
    }
    #[inline(always)]
    fn occupied(word: u128) -> usize {
        nonzero_lanes(
            word,
            0x8000_0000_8000_0000_8000_0000_8000_0000,
            0x7FFF_FFFF_7FFF_FFFF_7FFF_FFFF_7FFF_FFFF,
        )
    }
    #[inline(always)]
    fn free_slot(word: u128) -> Option<usize> {
        const ONES: u128 = 0x0000_0001_0000_0001_0000_0001_0000_0001;
        first_zero_lane(word.wrapping_sub(ONES) & !word & (ONES << 31), 32)
    }
    /// As the 16-bit [`find`](Fingerprint::find): branch-free.
    #[inline(always)]
    fn find(word: u128, fp: Self) -> Option<usize> {
        const ONES: u128 = 0x0000_0001_0000_0001_0000_0001_0000_0001;
        Self::free_slot(word ^ (u128::from(fp) * ONES))
    }
    /// Whether the half of `word` that does not hold `slot` holds `fp`:
    /// that half as its own 64-bit word of two lanes, tested without a
    /// branch per lane (a remove asks this of every copy it takes).
    #[inline(always)]
    fn copy_outside_word(word: u128, slot: usize, fp: Self) -> bool {
        const ONES: u64 = 0x0000_0001_0000_0001;
        let other = if slot < 2 {
            (word >> 64) as u64
        } else {
            word as u64
        };
        let x = other ^ (u64::from(fp) * ONES);
        x.wrapping_sub(ONES) & !x & (ONES << 31) != 0
    }
}

/// How many lanes of `w` are non-zero, for lanes whose top bits are
/// `high` and whose other bits are `low`. Exact for every lane (unlike the
/// zero-lane test below): each lane's low bits are added to all-ones below
/// its top bit, which carries into the top bit exactly when they are not
/// all zero, and never into the next lane.
#[inline(always)]
fn nonzero_lanes(w: u128, high: u128, low: u128) -> usize {
    (((w & low).wrapping_add(low) | w) & high).count_ones() as usize
}

/// The lowest lane of `bits` bits flagged in `flags`, the result of the
/// classic zero-lane test `(w - 0x..0101) & !w & 0x..8080`: its lowest set
/// bit marks exactly the lowest zero lane of `w` (a borrow only propagates
/// *above* a zero lane, so flags above it may be false, the lowest never
/// is). Branch-free, where a loop over the four slots costs a branch each.
#[inline(always)]
fn first_zero_lane(flags: u128, bits: u32) -> Option<usize> {
    (flags != 0).then(|| (flags.trailing_zeros() / bits) as usize)
}

/// A bucket's loaded word as bytes: little-endian, a whole bucket at a time
/// (the persisted body layout, see [`Fingerprint::Word`]).
#[cfg_attr(concurrent_cuckoo_loom, allow(dead_code))]
pub(crate) trait BucketWord: Copy + Eq + Debug {
    /// The empty bucket.
    const ZERO: Self;
    /// Appends the word's little-endian bytes.
    fn put_le(self, out: &mut Vec<u8>);
    /// Writes the word's little-endian bytes into exactly one bucket's
    /// bytes.
    fn put_le_into(self, out: &mut [u8]);
    /// The word from exactly one bucket's bytes (little-endian).
    fn get_le(bytes: &[u8]) -> Self;
}

macro_rules! bucket_word {
    ($($t:ty),*) => {$(
        impl BucketWord for $t {
            const ZERO: Self = 0;
            #[inline(always)]
            fn put_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            #[inline(always)]
            fn put_le_into(self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_le_bytes());
            }
            #[inline(always)]
            fn get_le(bytes: &[u8]) -> Self {
                let mut raw = [0u8; core::mem::size_of::<$t>()];
                raw.copy_from_slice(bytes);
                <$t>::from_le_bytes(raw)
            }
        }
    )*};
}
bucket_word!(u32, u64, u128);

// SAFETY: `AtomicU32`/`AtomicU64` have the same in-memory representation as
// `u32`/`u64` (documented by core), so zero bytes are the value 0: an
// empty bucket, or a version word's first version.
#[cfg(not(concurrent_cuckoo_loom))]
unsafe impl ZeroInit for AtomicU32 {}
// SAFETY: as above.
#[cfg(not(concurrent_cuckoo_loom))]
unsafe impl ZeroInit for AtomicU64 {}
// SAFETY: `Bucket32` is `repr(C)` over two `AtomicU64`, each valid as zero.
#[cfg(not(concurrent_cuckoo_loom))]
unsafe impl ZeroInit for Bucket32 {}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip<F: Fingerprint>(fps: [F; 4]) {
        let bucket = F::empty_bucket();
        for (i, &fp) in fps.iter().enumerate() {
            F::store_slot(&bucket, F::load(&bucket), i, fp);
        }
        let word = F::load(&bucket);
        for (i, &fp) in fps.iter().enumerate() {
            assert_eq!(F::slot(word, i), fp, "slot {i}");
        }
        assert_eq!(F::occupied(word), 4);
        F::store_slot(&bucket, word, 2, F::EMPTY);
        let word = F::load(&bucket);
        assert_eq!(F::free_slot(word), Some(2));
        assert_eq!(F::slot(word, 3), fps[3], "neighbouring slot untouched");
        F::clear_bucket(&bucket);
        assert_eq!(F::occupied(F::load(&bucket)), 0);
    }

    #[test]
    fn slots_round_trip_for_every_width() {
        roundtrip::<u8>([1, 0xFF, 0x80, 7]);
        roundtrip::<u16>([1, 0xFFFF, 0x8000, 7]);
        roundtrip::<u32>([1, 0xFFFF_FFFF, 0x8000_0000, 7]);
    }

    #[test]
    fn copies_outside_the_written_word_are_found_only_across_words() {
        // 16-bit: one word, so another copy in the bucket is never outside.
        let w16: u64 = 0x0007_0000_0007_0005;
        assert!(!u16::copy_outside_word(w16, 1, 7));
        // 32-bit: slots 0-1 and 2-3 are separate atomics.
        let w32: u128 = (7u128 << 64) | (5u128 << 32) | 7;
        assert!(
            u32::copy_outside_word(w32, 0, 7),
            "slot 2 is in the high half"
        );
        assert!(
            u32::copy_outside_word(w32, 2, 7),
            "slot 0 is in the low half"
        );
        assert!(!u32::copy_outside_word(w32, 0, 5));
        let w32_low_pair: u128 = (7u128 << 32) | 7;
        assert!(!u32::copy_outside_word(w32_low_pair, 0, 7), "same half");
    }

    /// The branch-free first-free-slot search and occupied count agree with
    /// their definitions for every pattern of empty and full slots, whatever
    /// the full slots hold (values with every bit set, or just the low or
    /// high bit); so do `find`, `count`, `holds` and `copy_outside_word`
    /// of any fingerprint.
    #[test]
    fn free_slot_finds_the_first_empty_slot() {
        fn check<F: Fingerprint>(values: [F; 3]) {
            for pattern in 0..3usize.pow(SLOTS as u32) {
                let bucket = F::empty_bucket();
                let mut p = pattern;
                for slot in 0..SLOTS {
                    let v = [F::EMPTY, values[0], values[1]][p % 3];
                    let v = if p % 3 == 2 && slot % 2 == 1 {
                        values[2]
                    } else {
                        v
                    };
                    F::store_slot(&bucket, F::load(&bucket), slot, v);
                    p /= 3;
                }
                let word = F::load(&bucket);
                let holding = |fp: F| (0..SLOTS).filter(move |&i| F::slot(word, i) == fp);
                assert_eq!(F::free_slot(word), holding(F::EMPTY).next(), "{word:?}");
                assert_eq!(
                    F::occupied(word),
                    SLOTS - holding(F::EMPTY).count(),
                    "{word:?}"
                );
                // `find` and `count` of every value present and of one
                // that differs from each in one bit.
                for fp in [F::EMPTY, values[0], values[1], values[2], F::from_u64(2)] {
                    assert_eq!(F::find(word, fp), holding(fp).next(), "{word:?} {fp:?}");
                    assert_eq!(F::count(word, fp), holding(fp).count(), "{word:?} {fp:?}");
                    if fp == F::EMPTY {
                        // A fingerprint is never EMPTY: the probe behind
                        // `holds` need not answer for it.
                        continue;
                    }
                    assert_eq!(F::holds(word, fp), holding(fp).next().is_some());
                    for slot in 0..SLOTS {
                        let outside = holding(fp).any(|i| !F::same_word(i, slot));
                        assert_eq!(
                            F::copy_outside_word(word, slot, fp),
                            outside,
                            "{word:?} {fp:?} {slot}"
                        );
                    }
                }
            }
        }
        check::<u8>([1, 0xFF, 0x80]);
        check::<u16>([1, 0xFFFF, 0x8000]);
        check::<u32>([1, 0xFFFF_FFFF, 0x8000_0000]);
    }

    #[test]
    fn zero_hash_never_yields_the_empty_fingerprint() {
        assert_eq!(u8::from_hash(0x1234_5600), 1);
        assert_eq!(u16::from_hash(0xABCD_0000), 1);
        assert_eq!(u32::from_hash(0xFFFF_FFFF_0000_0000), 1);
        assert_eq!(u16::from_hash(0xABCD_1234), 0x1234);
    }

    #[test]
    fn buckets_tile_cache_lines() {
        for size in [
            core::mem::size_of::<AtomicU32>(),
            core::mem::size_of::<AtomicU64>(),
            core::mem::size_of::<Bucket32>(),
        ] {
            assert_eq!(64 % size, 0, "a {size}-byte bucket would straddle a line");
        }
        assert_eq!(core::mem::align_of::<Bucket32>(), 16);
    }
}
