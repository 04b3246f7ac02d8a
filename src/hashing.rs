//! Key hashing, and the map from a 64-bit hash to (bucket, fingerprint).
//!
//! # The default hasher: frozen output, so filters can be persisted
//! [`DefaultHashBuilder`] is XXH3-64 (from `xxhash-rust`) with a per-filter
//! seed, fed a canonical byte encoding of the key. A filter stores only
//! fingerprints and bucket positions derived from key hashes, so a filter
//! written to disk ([`CuckooFilter::to_bytes`](crate::CuckooFilter::to_bytes))
//! answers correctly after loading only if every key still hashes to exactly
//! the same 64 bits: on another machine, another architecture, another
//! compiler and another version of this crate. std's `SipHash`/`RandomState`
//! and foldhash (this crate's previous default) promise no such thing:
//! their output may change with any release. XXH3 is a specified algorithm
//! with published test vectors, so its output is frozen; the unit tests
//! below pin it with test vectors of our own, and `tests/data/` holds
//! encoded filters that must keep decoding and answering as recorded.
//!
//! XXH3 passes SMHasher, and its output bits all depend on every input bit,
//! which matters here because the filter uses *both* ends of the hash (high
//! bits for the index, low bits for the fingerprint). Each filter draws a
//! fresh random seed (unless one is fixed with
//! [`DefaultHashBuilder::with_seed`]), so an attacker who knows the hash
//! function still cannot precompute keys that collide into one bucket pair
//! (forcing insert failures) or share a stored fingerprint (chosen false
//! positives). The seed is stored in an encoded filter, so keep encoded
//! filters as private as the seed must be.
//!
//! ## What is hashed: the canonical byte stream
//! The hash of a key is `XXH3-64(seed, bytes)`, where `bytes` is everything
//! the key's `Hash` impl feeds the [`Hasher`], concatenated, after this
//! canonicalisation by [`PortableHasher`]:
//! * `write_u8`/`u16`/`u32`/`u64`/`u128` and the signed `write_i*` feed the
//!   integer's **little-endian** bytes (1, 2, 4, 8 or 16 of them);
//! * `write_usize`/`write_isize` are **widened to 8 bytes** (little-endian),
//!   so 32- and 64-bit platforms agree;
//! * `write(&[u8])` feeds the bytes as they are.
//!
//! What that makes portable (same hash on every platform and release):
//! * integers, `bool`, `char` (std hashes them with one `write_*` call);
//! * byte slices and `Vec<u8>`/`[u8; N]`: std feeds the length as a `usize`
//!   (8 bytes here), then the bytes;
//! * `str`/`String`: std feeds the bytes, then one `0xFF` byte;
//! * tuples, and `#[derive(Hash)]` structs, of the above (fields in order).
//!
//! What is only as portable as std or the key's own `Hash` impl:
//! * slices and arrays of integers *wider than a byte* (`[u32]`, `Vec<u64>`,
//!   `[u16; 4]`): std hashes them as one `write` of their **native-endian**
//!   memory, so they agree between little-endian platforms (x86-64,
//!   AArch64, RISC-V, ...) but not with big-endian ones, and `[usize]`
//!   differs between 32- and 64-bit platforms. Hash each element, or
//!   convert to little-endian bytes, for full portability;
//! * enums (`#[derive(Hash)]` feeds the discriminant as an `isize`, which is
//!   canonicalised, but the derive's exact output is not promised by std),
//!   and any user-written `Hash` impl: portable exactly when the sequence of
//!   `write_*` calls it makes is;
//! * std's `Hash` for `str` (bytes then `0xFF`) is the current, long-standing
//!   behaviour but not a documented promise; the test vectors would catch a
//!   change.
//!
//! For full control, hash keys yourself and use the `*_hash` methods
//! ([`CuckooFilter::insert_hash`](crate::CuckooFilter::insert_hash) and
//! friends).
//!
//! ## Speed
//! Keys whose canonical bytes fit in 128 bytes (`INLINE_BYTES`) are collected in an
//! inline stack buffer and hashed with one call of the one-shot
//! `xxh3_64_with_seed` in `finish()`: a `u64` key costs about a nanosecond.
//! Longer input switches to the streaming `Xxh3` state (the output is the
//! same: streaming and one-shot XXH3 agree byte for byte), so keys of any
//! size are hashed without allocating.
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

use core::hash::{BuildHasher, Hasher};
use core::mem::MaybeUninit;
use xxhash_rust::xxh3::{xxh3_64_with_seed, Xxh3};

/// Canonical key bytes up to this length are hashed from an inline buffer
/// with the one-shot XXH3; longer input streams.
pub(crate) const INLINE_BYTES: usize = 128;

/// A [`BuildHasher`] whose output is frozen, so filters built with it can be
/// written to disk and loaded anywhere (see [`PersistentHasher`]).
///
/// Implementors promise that, for a given [`ID`](Self::ID) and seed,
/// `hash_one(key)` returns the same value on every platform, compiler and
/// release, for every key whose `Hash` impl makes the same sequence of
/// hasher calls. The ID is recorded in encoded filters, and decoding refuses
/// a filter whose ID differs from the decoder's hasher
/// ([`DecodeError::HasherMismatch`](crate::DecodeError::HasherMismatch)).
///
/// IDs `0..=0xFFFF` are reserved for this crate (`0` is never valid; `1` is
/// [`DefaultHashBuilder`]). A hasher of your own should use an ID above
/// `0xFFFF`, for example a random 32-bit number, and must change it
/// whenever its output changes.
pub trait PersistentHasher: BuildHasher + Sized {
    /// Identifies the hash function and key encoding (not the seed).
    const ID: u32;
    /// The seed: with [`ID`](Self::ID), all that is needed to rebuild this
    /// hasher with [`from_seed`](Self::from_seed).
    fn seed(&self) -> u64;
    /// The hasher with `seed`: `Self::from_seed(h.seed())` hashes exactly
    /// like `h`.
    fn from_seed(seed: u64) -> Self;
}

/// The default [`BuildHasher`]: XXH3-64 with a per-filter random seed over
/// a canonical (little-endian, `usize` as 8 bytes) encoding of the key.
/// Its output is frozen, so filters persist. See the module docs for why
/// and for which keys hash alike on every platform.
#[derive(Clone, Debug)]
pub struct DefaultHashBuilder {
    seed: u64,
}

impl DefaultHashBuilder {
    /// A builder with a fresh random seed.
    pub fn new() -> Self {
        Self::with_seed(random_seed())
    }

    /// A builder with a fixed seed: the same seed hashes every key the same
    /// way in every run, on every platform and in every release.
    pub fn with_seed(seed: u64) -> Self {
        Self { seed }
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
    type Hasher = PortableHasher;

    #[inline]
    fn build_hasher(&self) -> PortableHasher {
        PortableHasher::with_seed(self.seed)
    }
}

impl PersistentHasher for DefaultHashBuilder {
    const ID: u32 = 1;

    fn seed(&self) -> u64 {
        self.seed
    }

    fn from_seed(seed: u64) -> Self {
        Self::with_seed(seed)
    }
}

/// The [`Hasher`] of [`DefaultHashBuilder`]: XXH3-64 over the canonical
/// byte stream described in the module docs. Never allocates.
pub struct PortableHasher {
    seed: u64,
    /// Bytes written so far while they fit in `buf` (`<= INLINE_BYTES`);
    /// `SPILLED` once `stream` holds the input instead.
    len: usize,
    /// The first `len` bytes are initialised (written by `write`). Left
    /// uninitialised otherwise, so building a hasher costs no 128-byte fill.
    buf: [MaybeUninit<u8>; INLINE_BYTES],
    /// Set once the input outgrew `buf`; has absorbed everything written.
    stream: Option<Xxh3>,
}

/// `len` of a hasher whose input went to the streaming state.
const SPILLED: usize = INLINE_BYTES + 1;

impl PortableHasher {
    /// A hasher with `seed` and no input yet.
    #[inline]
    pub fn with_seed(seed: u64) -> Self {
        Self {
            seed,
            len: 0,
            buf: [MaybeUninit::uninit(); INLINE_BYTES],
            stream: None,
        }
    }

    /// The buffered input.
    #[inline(always)]
    fn buffered(&self) -> &[u8] {
        let len = self.len.min(INLINE_BYTES);
        // SAFETY: `write` initialises `buf[..len]` before raising `len`, and
        // `len` never exceeds `INLINE_BYTES` except as `SPILLED` (clamped
        // above); `MaybeUninit<u8>` has the layout of `u8`.
        unsafe { core::slice::from_raw_parts(self.buf.as_ptr().cast::<u8>(), len) }
    }

    #[cold]
    #[inline(never)]
    fn spill(&mut self, bytes: &[u8]) {
        if self.stream.is_none() {
            let mut stream = Xxh3::with_seed(self.seed);
            stream.update(self.buffered());
            self.stream = Some(stream);
            self.len = SPILLED;
        }
        if let Some(stream) = &mut self.stream {
            stream.update(bytes);
        }
    }
}

impl core::fmt::Debug for PortableHasher {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PortableHasher").finish_non_exhaustive()
    }
}

impl Hasher for PortableHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        // Once spilled, `len` is `SPILLED` and every write goes to `spill`.
        let end = self.len + bytes.len();
        if end <= INLINE_BYTES {
            for (dst, &src) in self.buf[self.len..end].iter_mut().zip(bytes) {
                dst.write(src);
            }
            self.len = end;
        } else {
            self.spill(bytes);
        }
    }

    #[inline]
    fn finish(&self) -> u64 {
        match &self.stream {
            // One integer key (the common case): a constant length lets
            // the compiler inline XXH3's 4-to-8-byte path.
            None if self.len == 8 => xxh3_64_with_seed(&self.buffered()[..8], self.seed),
            None => xxh3_64_with_seed(self.buffered(), self.seed),
            Some(stream) => stream.digest(),
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.write(&[i]);
    }
    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.write(&i.to_le_bytes());
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.write(&i.to_le_bytes());
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.write(&i.to_le_bytes());
    }
    #[inline]
    fn write_u128(&mut self, i: u128) {
        self.write(&i.to_le_bytes());
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
    #[inline]
    fn write_i8(&mut self, i: i8) {
        self.write_u8(i as u8);
    }
    #[inline]
    fn write_i16(&mut self, i: i16) {
        self.write_u16(i as u16);
    }
    #[inline]
    fn write_i32(&mut self, i: i32) {
        self.write_u32(i as u32);
    }
    #[inline]
    fn write_i64(&mut self, i: i64) {
        self.write_u64(i as u64);
    }
    #[inline]
    fn write_i128(&mut self, i: i128) {
        self.write_u128(i as u128);
    }
    #[inline]
    fn write_isize(&mut self, i: isize) {
        self.write_u64(i as i64 as u64);
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

    /// The hash of every key kind, for two seeds, pinned. These values are
    /// XXH3-64 of the canonical bytes, cross-checked against the reference
    /// C implementation (Python `xxhash` 3.x binding): if this test fails,
    /// every persisted filter (and `tests/data/`) would answer wrong.
    #[test]
    fn output_is_frozen() {
        let long: Vec<u8> = (0..1000u32).map(|i| i as u8).collect();
        let cases = |b: &DefaultHashBuilder| {
            [
                b.hash_one(0u64),
                b.hash_one(42u64),
                b.hash_one(7u32),
                b.hash_one(42usize),
                b.hash_one(-1i8),
                b.hash_one(u128::MAX - 5),
                b.hash_one(""),
                b.hash_one("flow"),
                b.hash_one(&b"\x00\x01\x02"[..]),
                b.hash_one((1u8, 2u16, 3u32, 4u64, "x")),
                b.hash_one(&long[..]),
            ]
        };
        assert_eq!(
            cases(&DefaultHashBuilder::with_seed(0)),
            [
                0xc77b3abb6f87acd9,
                0xd5a6f8c838df27c8,
                0x57ae44811628c14c,
                0xd5a6f8c838df27c8,
                0xd6bcec3c6b29d72e,
                0x6349fc8070f7f8ba,
                0xd6bcec3c6b29d72e,
                0x7db3969998211c11,
                0x2387204855b579ac,
                0x3293679fd8119867,
                0x1ee40d96918f66a2,
            ]
        );
        assert_eq!(
            cases(&DefaultHashBuilder::with_seed(0x5EED_CAFE_F00D_D00D)),
            [
                0x8d9990dedd421a98,
                0x0e69b3bb9e73aa79,
                0xd26984c612495590,
                0x0e69b3bb9e73aa79,
                0x03833f96521b93c9,
                0x58eed3a1d26ba3ee,
                0x03833f96521b93c9,
                0xc486ec237bae7b2a,
                0x5caee77b1979b30d,
                0xb27656f9bbe974b5,
                0x0a8dad44354ebcaa,
            ]
        );
        // The reference XXH3-64 of empty input: the crate is real XXH3.
        assert_eq!(xxhash_rust::xxh3::xxh3_64(b""), 0x2d06800538d394c2);
    }

    #[test]
    fn keys_hash_as_their_canonical_bytes() {
        let seed = 0xDEAD_BEEF;
        let b = DefaultHashBuilder::with_seed(seed);
        let x = |bytes: &[u8]| xxh3_64_with_seed(bytes, seed);
        assert_eq!(
            b.hash_one(0x0102_0304_0506_0708u64),
            x(&0x0102_0304_0506_0708u64.to_le_bytes())
        );
        assert_eq!(b.hash_one(0xABCDu16), x(&[0xCD, 0xAB]));
        assert_eq!(b.hash_one(-2i32), x(&(-2i32).to_le_bytes()));
        assert_eq!(
            b.hash_one(5usize),
            x(&5u64.to_le_bytes()),
            "usize is 8 bytes"
        );
        assert_eq!(
            b.hash_one(-5isize),
            x(&(-5i64).to_le_bytes()),
            "isize is 8 bytes"
        );
        assert_eq!(b.hash_one(true), x(&[1]));
        assert_eq!(b.hash_one('é'), x(&u32::from('é').to_le_bytes()));
        assert_eq!(b.hash_one("abc"), x(b"abc\xff"));
        assert_eq!(b.hash_one(String::from("abc")), b.hash_one("abc"));
        let mut framed = 3u64.to_le_bytes().to_vec();
        framed.extend_from_slice(b"abc");
        assert_eq!(
            b.hash_one(&b"abc"[..]),
            x(&framed),
            "slices: length, then bytes"
        );
        assert_eq!(b.hash_one(b"abc".to_vec()), x(&framed));
    }

    #[test]
    fn inline_and_streaming_paths_agree_at_every_length() {
        let data: Vec<u8> = (0..700u32).map(|i| (i * 31 + 7) as u8).collect();
        for seed in [0u64, 1, u64::MAX] {
            for len in (0..=300).chain([511, 512, 513, 640, 700]) {
                let want = xxh3_64_with_seed(&data[..len], seed);
                let mut one = PortableHasher::with_seed(seed);
                one.write(&data[..len]);
                assert_eq!(one.finish(), want, "one write, len {len}, seed {seed}");
                // Many small writes that cross the inline limit part-way.
                for step in [1usize, 7, 64, 100] {
                    let mut h = PortableHasher::with_seed(seed);
                    for piece in data[..len].chunks(step) {
                        h.write(piece);
                    }
                    assert_eq!(h.finish(), want, "len {len} step {step} seed {seed}");
                }
            }
        }
        // `finish` does not consume: more input may follow.
        let mut h = PortableHasher::with_seed(3);
        h.write(&data[..200]);
        let _ = h.finish();
        h.write(&data[200..400]);
        assert_eq!(h.finish(), xxh3_64_with_seed(&data[..400], 3));
    }

    #[test]
    fn persistent_identity() {
        let b = DefaultHashBuilder::with_seed(99);
        assert_eq!(<DefaultHashBuilder as PersistentHasher>::ID, 1);
        assert_eq!(PersistentHasher::seed(&b), 99);
        let again = <DefaultHashBuilder as PersistentHasher>::from_seed(99);
        assert_eq!(again.hash_one("k"), b.hash_one("k"));
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
