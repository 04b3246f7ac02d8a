//! Key hashing: the default, portable hasher.
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
//! Short keys are what a dataplane hashes per packet, so the bytes reach
//! XXH3 without a trip through memory where that is possible:
//! * up to 16 bytes are kept in a `u128` (`small`), each `write_*` or short
//!   `write` ORing its little-endian bytes in at the current length, and
//!   `finish()` runs XXH3-64's 0-16 byte path on that value: a
//!   transcription of the specification (`xxh3_0to16`, below; the tests
//!   check it against `xxhash-rust` at every length, seed and split). For
//!   a key of fixed layout (an integer, a `#[derive(Hash)]` struct of
//!   them) the length is a compile-time constant and hashing becomes a
//!   handful of register operations. (The byte buffer used before commit
//!   `18d338d` lost most of its time to failed store-to-load forwarding:
//!   reading 8 bytes back that had just been stored as 4 + 4 + 2 + 2 + 1.)
//! * 17 to 128 bytes are collected in an inline stack buffer (`buf`,
//!   copied in 16-byte moves so the 8-byte reloads forward) and hashed by
//!   `xxhash-rust`'s one-shot `xxh3_64_with_seed`, inlined;
//! * longer input switches to the streaming `Xxh3` state (the output is the
//!   same: streaming and one-shot XXH3 agree byte for byte), so keys of any
//!   size are hashed without allocating.
//!
//! Why a transcription for 0-16 bytes and the library for 17-128 (issue
//! 14): the rule is to keep a transcription only where it makes `contains`
//! at least 15% faster than passing the same register-held bytes to
//! `xxh3_64_with_seed` (`&small.to_le_bytes()[..len]`, and the buffer).
//! `benches/hashing.rs` times both in one run: `contains` on a 1 MiB
//! filter (90% load, half the queries present) and `hash_one` alone. At
//! commit `0a72c92`, 6 runs of `cargo bench --bench hashing --
//! --warm-up-time 1 --measurement-time 3`, alternating which hasher goes
//! first (`CUCKOO_BENCH_SWAP`), summarised as `scripts/bench-hashing.sh 6`
//! does (the fastest of 100 samples of thread CPU time in each run, then
//! the median of the 6 runs); a 2-vCPU AMD EPYC KVM guest shared with
//! other work (load average 4.6 to 7.6). Nanoseconds per operation, ratio
//! = library / transcribed:
//!
//! | key (canonical bytes) | `contains`: transcribed | library | ratio | `hash_one`: transcribed | library |
//! |---|---:|---:|---:|---:|---:|
//! | `u64` (8) | 13.6 | 13.4 | 0.98 | 1.56 | 1.56 |
//! | 5-tuple `u32, u32, u16, u16, u8` (13) | 15.6 | 15.5 | 0.99 | 2.22 | 2.22 |
//! | 11-byte `str` (12, with std's `0xFF`) | 20.8 | 39.1 | **1.88** | 6.91 | 12.46 |
//! | five `u64`s (40) | 19.3 | 19.3 | 1.00 | 5.65 | 4.70 |
//! | 64-byte `[u8]` (72, with the length) | 35.0 | 34.0 | 0.97 | 13.14 | 13.40 |
//!
//! * **0-16 bytes: kept.** For a fixed layout both compile to the same
//!   instructions (LLVM folds the library's reads of a stack array of
//!   known length into shifts; in a test build the two `u64` hash
//!   functions were merged into one symbol). For a length the compiler
//!   does not know (`str`, slices), the library loads from a variable
//!   offset in the array just stored as two 8-byte halves:
//!   store-to-load forwarding fails and `contains` takes 1.9x as long
//!   (ratio 1.64 to 1.93 in the 6 runs), where the transcription shifts
//!   the `u128` in registers.
//! * **17-128 bytes: deleted.** The transcription was not faster on
//!   `contains` (per-run ratios 0.92 to 1.02 for the 64-byte slice; 0.97
//!   to 1.02 for the 40-byte key in four runs, 1.41 and 0.65 in two
//!   disturbed ones), and `hash_one` of the 40-byte key was 20% slower
//!   with it: cross-crate, LLVM left the transcribed `xxh3_17to128` out of
//!   line (it was `#[inline]`, not `always`), while `xxh3_64_with_seed`
//!   inlined and kept the key in registers. Only `SECRET`'s first 72
//!   bytes, read by the 0-16 byte path, remain.
//!
//! The figures after the change (the 40-byte key's `hash_one` at the
//! library's 4.7 ns, the rest as before) are in `docs/benchmarks.md`,
//! "Hashing: transcription vs library".
//!
//! * **17-128 bytes of a byte string: transcribed again, for one shape.**
//!   A `[u8]` key (the C API's and the Redis module's keys, `Vec<u8>`)
//!   reaches the hasher as its length prefix, then its bytes, of a length
//!   the compiler does not know. Copied into the buffer and read back by
//!   `xxh3_64_with_seed`, its loads of the input's last 16 bytes straddle
//!   the copy's stores, and store-to-load forwarding fails: in cache,
//!   `contains` of a 13-byte key took 19.5 ns. `write_long` now hashes
//!   such a string (9 to 120 bytes after its prefix) from its own bytes,
//!   the prefix in a register (`xxh3_17to128_after_word`), and `finish`
//!   returns that digest if nothing followed: 10.0 ns for the 13-byte
//!   key, 11.3 against 20.4 for 37 bytes (`docs/benchmarks.md`, "Byte
//!   keys hashed from their own bytes"). A `str` key (its bytes, then
//!   `0xFF`) and other shapes take the buffer as before.
//!
//! The map from a hash to buckets and fingerprint is in `index.rs`.

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
///
/// ```
/// use concurrent_cuckoo::{CuckooFilter, DecodeError, PersistentHasher, PortableHasher, ReadOptions};
/// use std::hash::BuildHasher;
///
/// /// The default hash function under a salted seed: a hasher of your own,
/// /// with an ID of its own.
/// #[derive(Clone)]
/// struct Salted(u64);
///
/// impl BuildHasher for Salted {
///     type Hasher = PortableHasher;
///     fn build_hasher(&self) -> PortableHasher {
///         PortableHasher::with_seed(self.0 ^ 0x5a17_5a17_5a17_5a17)
///     }
/// }
///
/// impl PersistentHasher for Salted {
///     const ID: u32 = 0x7c1e_a5e1; // above 0xFFFF: not one of this crate's
///     fn seed(&self) -> u64 {
///         self.0
///     }
///     fn from_seed(seed: u64) -> Self {
///         Salted(seed)
///     }
/// }
///
/// let filter = CuckooFilter::builder().capacity(1000).hasher(Salted(9)).build()?;
/// filter.insert("k")?;
/// let bytes = filter.to_bytes();
/// let options = ReadOptions::new().hasher::<Salted>();
/// assert!(CuckooFilter::from_bytes_with_options(&bytes, options)?.contains("k"));
/// // The default hasher refuses it rather than answer wrong.
/// assert!(matches!(
///     CuckooFilter::from_bytes(&bytes),
///     Err(DecodeError::HasherMismatch { found: 0x7c1e_a5e1, .. })
/// ));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait PersistentHasher: BuildHasher + Sized {
    /// Identifies the hash function and key encoding (not the seed).
    const ID: u32;
    /// The seed: with [`ID`](Self::ID), all that is needed to rebuild this
    /// hasher with [`from_seed`](Self::from_seed).
    ///
    /// ```
    /// use concurrent_cuckoo::{DefaultHashBuilder, PersistentHasher};
    /// let h = DefaultHashBuilder::with_seed(5);
    /// assert_eq!(PersistentHasher::seed(&h), 5);
    /// ```
    #[must_use]
    fn seed(&self) -> u64;
    /// The hasher with `seed`: `Self::from_seed(h.seed())` hashes exactly
    /// like `h`.
    ///
    /// ```
    /// use concurrent_cuckoo::{DefaultHashBuilder, PersistentHasher};
    /// use std::hash::BuildHasher;
    /// let h = DefaultHashBuilder::new(); // a random seed
    /// let again = DefaultHashBuilder::from_seed(PersistentHasher::seed(&h));
    /// assert_eq!(again.hash_one("k"), h.hash_one("k"));
    /// ```
    #[must_use]
    fn from_seed(seed: u64) -> Self;
}

/// The default [`BuildHasher`]: XXH3-64 with a per-filter random seed over
/// a canonical (little-endian, `usize` as 8 bytes) encoding of the key.
/// Its output is frozen, so filters persist. See the module docs for why
/// and for which keys hash alike on every platform.
///
/// ```
/// use concurrent_cuckoo::DefaultHashBuilder;
/// use std::hash::BuildHasher;
/// let hasher = DefaultHashBuilder::with_seed(1);
/// // The same seed, the same hash: in every run, on every platform, in every release.
/// assert_eq!(hasher.hash_one("k"), DefaultHashBuilder::with_seed(1).hash_one("k"));
/// // `usize` is hashed as 8 bytes, so 32- and 64-bit platforms agree.
/// assert_eq!(hasher.hash_one(7usize), hasher.hash_one(7u64));
/// ```
#[derive(Clone)]
pub struct DefaultHashBuilder {
    seed: u64,
    /// [`flip_4to8`] of `seed`, computed once: what keys of 4 to 8 bytes
    /// (`u32`, `u64`) are mixed with, five instructions per hash saved.
    flip_4to8: u64,
}

/// Leaves the seed out: with it, anyone who reads a log line could craft
/// keys that collide in one bucket pair or share a fingerprint.
impl core::fmt::Debug for DefaultHashBuilder {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("DefaultHashBuilder")
            .field("seed", &format_args!("<hidden>"))
            .finish()
    }
}

impl DefaultHashBuilder {
    /// A builder with a fresh random seed (what every filter gets unless a
    /// seed is fixed).
    ///
    /// ```
    /// use concurrent_cuckoo::DefaultHashBuilder;
    /// let (a, b) = (DefaultHashBuilder::new(), DefaultHashBuilder::new());
    /// assert_ne!(a.seed(), b.seed());
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self::with_seed(random_seed())
    }

    /// A builder with a fixed seed: the same seed hashes every key the same
    /// way in every run, on every platform and in every release.
    ///
    /// ```
    /// use concurrent_cuckoo::DefaultHashBuilder;
    /// use std::hash::BuildHasher;
    /// let h = DefaultHashBuilder::with_seed(42);
    /// assert_eq!(h.hash_one(1u64), DefaultHashBuilder::with_seed(42).hash_one(1u64));
    /// assert_ne!(h.hash_one(1u64), DefaultHashBuilder::with_seed(43).hash_one(1u64));
    /// ```
    #[must_use]
    pub fn with_seed(seed: u64) -> Self {
        Self {
            seed,
            flip_4to8: flip_4to8(seed),
        }
    }

    /// The seed this builder hashes with.
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, DefaultHashBuilder};
    /// assert_eq!(DefaultHashBuilder::with_seed(42).seed(), 42);
    /// let filter = CuckooFilter::builder().capacity(10).seed(7).build()?;
    /// assert_eq!(filter.hasher().seed(), 7);
    /// # Ok::<(), concurrent_cuckoo::BuildError>(())
    /// ```
    #[must_use]
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The hash of a byte-string key: `self.hash_one(bytes)` (a `&[u8]`
    /// key, as the keyed calls of a filter hash it), computed in registers
    /// from the bytes where they lie, with no [`Hasher`] state in memory
    /// and no copy. For callers that hash byte strings in bulk (the C
    /// API's byte keys, a `str`'s UTF-8 in the Python package, the Redis
    /// module's members) and then use the `*_hash` calls.
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, DefaultHashBuilder};
    /// use std::hash::BuildHasher;
    /// let h = DefaultHashBuilder::with_seed(5);
    /// let flow = [10u8, 0, 0, 1, 10, 0, 0, 2, 0x1f, 0x90, 0xc3, 0x50, 6];
    /// assert_eq!(h.hash_bytes(&flow), h.hash_one(&flow[..]));
    /// let filter = CuckooFilter::builder().capacity(100).seed(5).build()?;
    /// filter.insert_hash(filter.hasher().hash_bytes(b"user-17"))?;
    /// assert!(filter.contains(&b"user-17"[..]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline(always)]
    #[must_use]
    pub fn hash_bytes(&self, bytes: &[u8]) -> u64 {
        let len = bytes.len();
        if len <= SMALL_BYTES - 8 {
            // The length prefix and the bytes, up to 16 in all: the
            // short-input path on a value in registers.
            let mut h = PortableHasher::with_keys(self.seed, self.flip_4to8);
            h.small = u128::from(len as u64) | (load_le(bytes) << 64);
            h.len = 8 + len;
            h.xxh3_0to16()
        } else if len <= INLINE_BYTES - 8 {
            xxh3_17to128_after_word(len as u64, bytes, self.seed)
        } else {
            self.hash_one(bytes)
        }
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
        PortableHasher::with_keys(self.seed, self.flip_4to8)
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
///
/// ```
/// use concurrent_cuckoo::{DefaultHashBuilder, PortableHasher};
/// use std::hash::{BuildHasher, Hash, Hasher};
/// let mut h = PortableHasher::with_seed(7);
/// ("10.0.0.1", 443u16).hash(&mut h);
/// assert_eq!(h.finish(), DefaultHashBuilder::with_seed(7).hash_one(("10.0.0.1", 443u16)));
/// ```
pub struct PortableHasher {
    seed: u64,
    /// [`flip_4to8`] of `seed`.
    flip_4to8: u64,
    /// Bytes written so far while they fit in `buf` (`<= INLINE_BYTES`);
    /// `SPILLED` once `stream` holds the input instead. Where the input
    /// is depends on it: `small` up to `SMALL_BYTES`, then `buf`, then
    /// `stream`.
    len: usize,
    /// While `len <= SMALL_BYTES`: the input, little-endian (byte `i` of
    /// the stream is bits `8i..8i + 8`), zero above byte `len`. Kept in a
    /// register-sized value rather than in `buf` so that short keys are
    /// hashed without a round trip through memory: reading 8 bytes back
    /// from `buf` that were stored as 4 + 4 + 2 + 2 + 1 bytes defeats the
    /// CPU's store-to-load forwarding and stalls for more than the hash
    /// itself costs. Stale once `len > SMALL_BYTES`.
    small: u128,
    /// While `SMALL_BYTES < len <= INLINE_BYTES`: the first `len` bytes are
    /// the input (initialised by `write`). Left uninitialised otherwise, so
    /// building a hasher costs no 128-byte fill.
    buf: [MaybeUninit<u8>; INLINE_BYTES],
    /// Set once the input outgrew `buf`; has absorbed everything written.
    stream: Option<Xxh3>,
    /// The digest of the input as it was when `len` was `eager_len`,
    /// computed by `write_long` from a byte string and its length prefix
    /// (`xxh3_17to128_after_word`); `finish` returns it if nothing was
    /// written since. `eager_len` is 0 (never a length it applies to)
    /// otherwise.
    eager: u64,
    eager_len: usize,
}

/// Input up to this length lives in `PortableHasher::small`.
const SMALL_BYTES: usize = 16;

/// `len` of a hasher whose input went to the streaming state.
const SPILLED: usize = INLINE_BYTES + 1;

impl PortableHasher {
    /// A hasher with `seed` and no input yet.
    ///
    /// ```
    /// use concurrent_cuckoo::PortableHasher;
    /// use std::hash::Hasher;
    /// let mut h = PortableHasher::with_seed(0);
    /// h.write_u32(1);
    /// let mut g = PortableHasher::with_seed(0);
    /// g.write(&1u32.to_le_bytes()); // integers are fed as their little-endian bytes
    /// assert_eq!(h.finish(), g.finish());
    /// ```
    #[inline]
    #[must_use]
    pub fn with_seed(seed: u64) -> Self {
        Self::with_keys(seed, flip_4to8(seed))
    }

    /// [`with_seed`](Self::with_seed) with `flip_4to8(seed)` already
    /// computed (a [`DefaultHashBuilder`] keeps it).
    #[inline]
    fn with_keys(seed: u64, flip_4to8: u64) -> Self {
        debug_assert_eq!(flip_4to8, self::flip_4to8(seed));
        Self {
            seed,
            flip_4to8,
            len: 0,
            small: 0,
            buf: [MaybeUninit::uninit(); INLINE_BYTES],
            stream: None,
            eager: 0,
            eager_len: 0,
        }
    }

    /// Appends `n` bytes, given as the little-endian `value` (zero above
    /// byte `n`). `n` is a constant for the integer writes, so for a key
    /// of fixed layout every branch here folds away.
    #[inline(always)]
    fn push(&mut self, value: u128, n: usize) {
        debug_assert!(n <= SMALL_BYTES && (n == SMALL_BYTES || value >> (8 * n) == 0));
        let len = self.len;
        if len + n <= SMALL_BYTES {
            // `8 * len < 128` unless `n == 0` and `len == 16`, where the
            // wrapping shift by 0 is harmless as `value` is 0.
            self.small |= value.wrapping_shl(8 * len as u32);
            self.len = len + n;
        } else {
            self.push_slow(&value.to_le_bytes()[..n], self.small);
        }
    }

    /// Appends `bytes` to `buf`, moving the input out of `small` first if
    /// it is still there, or to the streaming state if it would overflow
    /// `buf`. `small` is the caller's `self.small`, passed by value so
    /// that it moves to `buf` from registers: reloading it from memory
    /// as 16 bytes right after it was stored as two 8-byte halves would
    /// stall (store-to-load forwarding fails on a load that spans stores).
    #[inline]
    fn push_slow(&mut self, bytes: &[u8], small: u128) {
        let len = self.len;
        let end = len + bytes.len();
        if end <= INLINE_BYTES {
            if len <= SMALL_BYTES {
                // SAFETY: 16 bytes at the start of `buf`; alignment 1.
                unsafe {
                    self.buf
                        .as_mut_ptr()
                        .cast::<[u8; SMALL_BYTES]>()
                        .write(small.to_le_bytes());
                }
            }
            // SAFETY: `buf[len..end]` is in bounds; `bytes` cannot overlap
            // `buf`, which `&mut self` borrows exclusively.
            unsafe { copy_short(bytes, self.buf.as_mut_ptr().add(len).cast::<u8>()) };
            self.len = end;
        } else {
            self.spill(bytes);
        }
    }

    /// `write` of input that no longer fits in `small`: out of line, so
    /// the inlined `write` is just the short-input path.
    ///
    /// A byte string of 9 to 120 bytes right after its length prefix (how
    /// std's `Hash` writes a `[u8]`: the C API's and the Redis module's
    /// keys, a `Vec<u8>`) is hashed here, from its own bytes, in case it
    /// is the whole key (see `eager`); it is buffered too, for whatever
    /// may follow.
    #[inline(never)]
    fn write_long(&mut self, bytes: &[u8], small: u128) {
        if self.len == 8 && small as u64 == bytes.len() as u64 && (9..=120).contains(&bytes.len()) {
            self.eager = xxh3_17to128_after_word(small as u64, bytes, self.seed);
            self.eager_len = 8 + bytes.len();
        }
        self.push_slow(bytes, small);
    }

    /// The input in `buf` (`SMALL_BYTES < len <= INLINE_BYTES`). Inlined
    /// into `finish`, so that `xxh3_64_with_seed` sees the length's range
    /// (or, for a key of fixed layout, its value) and keeps one path.
    #[inline(always)]
    fn buffered(&self) -> &[u8] {
        let len = self.len;
        assert!(len > SMALL_BYTES && len <= INLINE_BYTES);
        // SAFETY: `buf[..len]` is initialised while
        // `SMALL_BYTES < len <= INLINE_BYTES` (see `buf`); `MaybeUninit<u8>`
        // has the layout of `u8`.
        unsafe { core::slice::from_raw_parts(self.buf.as_ptr().cast::<u8>(), len) }
    }

    /// XXH3-64 of the 0 to 16 bytes in `small` (`XXH3_len_0to16_64b`).
    #[inline(always)]
    fn xxh3_0to16(&self) -> u64 {
        let len = self.len;
        let seed = self.seed;
        let input = self.small;
        debug_assert!(len <= SMALL_BYTES);
        if len > 8 {
            // XXH3_len_9to16_64b: the first and the last 8 bytes.
            let flip_lo = (SECRET[3] ^ SECRET[4]).wrapping_add(seed);
            let flip_hi = (SECRET[5] ^ SECRET[6]).wrapping_sub(seed);
            let lo = input as u64 ^ flip_lo;
            let hi = (input >> (8 * (len - 8))) as u64 ^ flip_hi;
            let acc = (len as u64)
                .wrapping_add(lo.swap_bytes())
                .wrapping_add(hi)
                .wrapping_add(mul128_fold64(lo, hi));
            xxh3_avalanche(acc)
        } else if len >= 4 {
            // XXH3_len_4to8_64b: the first and the last 4 bytes.
            let first = input as u32;
            let last = ((input as u64) >> (8 * (len - 4))) as u32;
            let keyed = u64::from(last).wrapping_add(u64::from(first) << 32) ^ self.flip_4to8;
            rrmxmx(keyed, len as u64)
        } else if len > 0 {
            // XXH3_len_1to3_64b: the first, middle and last byte.
            let word = input as u32;
            let c1 = word & 0xFF;
            let c2 = (word >> (8 * (len >> 1))) & 0xFF;
            let c3 = (word >> (8 * (len - 1))) & 0xFF;
            let combined = (c1 << 16) | (c2 << 24) | c3 | ((len as u32) << 8);
            let flip = u64::from(SECRET[0] as u32 ^ (SECRET[0] >> 32) as u32).wrapping_add(seed);
            xxh64_avalanche(u64::from(combined) ^ flip)
        } else {
            xxh64_avalanche(seed ^ SECRET[7] ^ SECRET[8])
        }
    }

    #[cold]
    #[inline(never)]
    fn spill(&mut self, bytes: &[u8]) {
        if self.stream.is_none() {
            let mut stream = Xxh3::with_seed(self.seed);
            if self.len <= SMALL_BYTES {
                stream.update(&self.small.to_le_bytes()[..self.len]);
            } else {
                stream.update(self.buffered());
            }
            self.stream = Some(stream);
            self.len = SPILLED;
        }
        if let Some(stream) = &mut self.stream {
            stream.update(bytes);
        }
    }

    /// The digest of a hasher whose input outgrew `buf`.
    #[cold]
    #[inline(never)]
    fn digest_spilled(&self) -> u64 {
        match &self.stream {
            Some(stream) => stream.digest(),
            None => unreachable!("`len > INLINE_BYTES` only once `stream` is set"),
        }
    }
}

/// The bytes of `src` (at most 16) as a little-endian number, read with at
/// most two (overlapping) loads instead of byte by byte.
#[inline(always)]
fn load_le(src: &[u8]) -> u128 {
    let n = src.len();
    debug_assert!(n <= SMALL_BYTES);
    let p = src.as_ptr();
    // SAFETY (all arms): every read is inside `src`.
    unsafe {
        if n >= 8 {
            let head = u64::from_le(p.cast::<u64>().read_unaligned());
            let tail = u64::from_le(p.add(n - 8).cast::<u64>().read_unaligned());
            // The overlap (when `n < 16`) holds the same bytes in both.
            u128::from(head) | (u128::from(tail) << (8 * (n - 8)))
        } else if n >= 4 {
            let head = u32::from_le(p.cast::<u32>().read_unaligned());
            let tail = u32::from_le(p.add(n - 4).cast::<u32>().read_unaligned());
            u128::from(u64::from(head) | (u64::from(tail) << (8 * (n - 4))))
        } else if n > 0 {
            let first = u32::from(*p);
            let middle = u32::from(*p.add(n / 2));
            let last = u32::from(*p.add(n - 1));
            u128::from(first | (middle << (8 * (n / 2))) | (last << (8 * (n - 1))))
        } else {
            0
        }
    }
}

/// Copies `src` (at most `INLINE_BYTES` long) to `dst` with a few
/// overlapping fixed-size moves when it is short, instead of a `memcpy`
/// call.
#[inline(always)]
/// # Safety
/// `dst` must be valid for writes of `src.len()` bytes and not overlap `src`.
unsafe fn copy_short(src: &[u8], dst: *mut u8) {
    let n = src.len();
    let s = src.as_ptr();
    // SAFETY (all arms): every read is inside `src` and every write inside
    // `dst[..n]` (the pairs overlap when `n` is not a power of two).
    unsafe {
        if n > 16 {
            // 16-byte moves, the last one overlapping: no `memcpy` call,
            // and `finish`'s 8-byte reloads each lie within one store.
            let mut i = 0;
            while i + 16 < n {
                let chunk = s.add(i).cast::<[u8; 16]>().read_unaligned();
                dst.add(i).cast::<[u8; 16]>().write_unaligned(chunk);
                i += 16;
            }
            let last = s.add(n - 16).cast::<[u8; 16]>().read_unaligned();
            dst.add(n - 16).cast::<[u8; 16]>().write_unaligned(last);
        } else if n >= 8 {
            let head = s.cast::<u64>().read_unaligned();
            let tail = s.add(n - 8).cast::<u64>().read_unaligned();
            dst.cast::<u64>().write_unaligned(head);
            dst.add(n - 8).cast::<u64>().write_unaligned(tail);
        } else if n >= 4 {
            let head = s.cast::<u32>().read_unaligned();
            let tail = s.add(n - 4).cast::<u32>().read_unaligned();
            dst.cast::<u32>().write_unaligned(head);
            dst.add(n - 4).cast::<u32>().write_unaligned(tail);
        } else if n > 0 {
            *dst = *s;
            *dst.add(n / 2) = *s.add(n / 2);
            *dst.add(n - 1) = *s.add(n - 1);
        }
    }
}

// XXH3's constants and mixers for inputs of up to 16 bytes, and for a
// length-prefixed byte string of 17 to 128, exactly as in the XXH3
// specification (`xxhash.h`, v0.8). Other inputs go to `xxhash-rust`:
// `xxh3_64_with_seed` up to `INLINE_BYTES`, the streaming `Xxh3` beyond.

const PRIME64_1: u64 = 0x9E37_79B1_85EB_CA87;
const PRIME64_2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const PRIME64_3: u64 = 0x1656_67B1_9E37_79F9;
const PRIME_MX1: u64 = 0x1656_6791_9E37_79F9;
const PRIME_MX2: u64 = 0x9FB2_1C65_1E98_DF25;

/// The first 128 bytes of XXH3's default secret (`XXH3_kSecret`), as
/// little-endian 64-bit words: inputs of up to 16 bytes read the first 72,
/// a byte string of 17 to 128 (with its length) all of them.
const SECRET: [u64; 16] = le_words(&[
    0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
    0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
    0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
    0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
    0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
    0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
    0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
    0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
]);

const fn le_words<const B: usize, const W: usize>(bytes: &[u8; B]) -> [u64; W] {
    assert!(B == 8 * W);
    let mut words = [0u64; W];
    let mut i = 0;
    while i < W {
        let mut word = [0u8; 8];
        let mut j = 0;
        while j < 8 {
            word[j] = bytes[i * 8 + j];
            j += 1;
        }
        words[i] = u64::from_le_bytes(word);
        i += 1;
    }
    words
}

/// XXH3-64 with `seed` (`XXH3_len_17to128_64b`) of an input of 17 to 128
/// bytes made of the 8 bytes of `first` (little-endian) followed by
/// `rest`: a byte string's length prefix and the string, as std's `Hash`
/// for `[u8]` writes them. Reads the input's 8-byte words where they lie,
/// the first in a register and the others in `rest`, instead of from a
/// copy of both in one buffer: the copy's stores have the key's length,
/// and XXH3's loads of the input's last bytes straddle them, which
/// defeats store-to-load forwarding (each such load waits for the stores
/// to reach the cache). The output is `xxh3_64_with_seed` of the same
/// input (`a_length_prefixed_byte_string_hashes_as_its_buffer`).
#[inline]
fn xxh3_17to128_after_word(first: u64, rest: &[u8], seed: u64) -> u64 {
    let len = 8 + rest.len();
    debug_assert!((17..=128).contains(&len));
    // The input's 8 bytes at `at` (at most `len - 8`).
    let word = |at: usize| -> u64 {
        if at >= 8 {
            read_u64(&rest[at - 8..])
        } else if at == 0 {
            first
        } else {
            // Straddles `first` and `rest` (at least 9 bytes long here).
            (first >> (8 * at)) | (read_u64(rest) << (8 * (8 - at)))
        }
    };
    let mix16 = |at: usize, secret: usize| -> u64 {
        let lo = word(at) ^ SECRET[secret].wrapping_add(seed);
        let hi = word(at + 8) ^ SECRET[secret + 1].wrapping_sub(seed);
        mul128_fold64(lo, hi)
    };
    let mut acc = (len as u64).wrapping_mul(PRIME64_1);
    if len > 32 {
        if len > 64 {
            if len > 96 {
                acc = acc.wrapping_add(mix16(48, 12));
                acc = acc.wrapping_add(mix16(len - 64, 14));
            }
            acc = acc.wrapping_add(mix16(32, 8));
            acc = acc.wrapping_add(mix16(len - 48, 10));
        }
        acc = acc.wrapping_add(mix16(16, 4));
        acc = acc.wrapping_add(mix16(len - 32, 6));
    }
    acc = acc.wrapping_add(mix16(0, 0));
    acc = acc.wrapping_add(mix16(len - 16, 2));
    xxh3_avalanche(acc)
}

/// The first 8 bytes of `bytes` (at least 8 long), little-endian.
#[inline(always)]
fn read_u64(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(word)
}

/// `XXH64_avalanche`.
#[inline(always)]
fn xxh64_avalanche(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(PRIME64_2);
    h ^= h >> 29;
    h = h.wrapping_mul(PRIME64_3);
    h ^ (h >> 32)
}

/// `XXH3_avalanche`.
#[inline(always)]
fn xxh3_avalanche(mut h: u64) -> u64 {
    h ^= h >> 37;
    h = h.wrapping_mul(PRIME_MX1);
    h ^ (h >> 32)
}

/// `XXH3_rrmxmx`.
#[inline(always)]
fn rrmxmx(mut h: u64, len: u64) -> u64 {
    h ^= h.rotate_left(49) ^ h.rotate_left(24);
    h = h.wrapping_mul(PRIME_MX2);
    h ^= (h >> 35).wrapping_add(len);
    h = h.wrapping_mul(PRIME_MX2);
    h ^ (h >> 28)
}

/// What `XXH3_len_4to8_64b` mixes the input with, which depends only on
/// the seed: `(secret[8..16] ^ secret[16..24]) - (seed ^ (bswap32(seed)
/// << 32))`.
#[inline(always)]
fn flip_4to8(seed: u64) -> u64 {
    let seed = seed ^ (u64::from((seed as u32).swap_bytes()) << 32);
    (SECRET[1] ^ SECRET[2]).wrapping_sub(seed)
}

/// `XXH3_mul128_fold64`.
#[inline(always)]
fn mul128_fold64(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    product as u64 ^ (product >> 64) as u64
}

impl core::fmt::Debug for PortableHasher {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PortableHasher").finish_non_exhaustive()
    }
}

impl Hasher for PortableHasher {
    #[inline(always)]
    fn write(&mut self, bytes: &[u8]) {
        // Once spilled, `len` is `SPILLED` and every write goes to `spill`.
        if self.len + bytes.len() <= SMALL_BYTES {
            self.push(load_le(bytes), bytes.len());
        } else {
            self.write_long(bytes, self.small);
        }
    }

    /// XXH3-64 of the input: up to 16 bytes, the transcribed short-input
    /// path on `small`; up to 128, `xxhash-rust`'s one-shot hash of `buf`
    /// (both inlined: for a key of fixed size the compiler knows `len` and
    /// keeps just one path); else the streaming digest.
    #[inline(always)]
    fn finish(&self) -> u64 {
        if self.len <= SMALL_BYTES {
            self.xxh3_0to16()
        } else if self.len <= INLINE_BYTES {
            if self.len == self.eager_len {
                self.eager
            } else {
                xxh3_64_with_seed(self.buffered(), self.seed)
            }
        } else {
            self.digest_spilled()
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.push(u128::from(i), 1);
    }
    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.push(u128::from(i), 2);
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.push(u128::from(i), 4);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.push(u128::from(i), 8);
    }
    #[inline]
    fn write_u128(&mut self, i: u128) {
        self.push(i, 16);
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

#[cfg(test)]
mod tests {
    use super::*;

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

    use crate::test_rng::Rng;

    /// Feeds `bytes` to `h` in random pieces, each through `write` or,
    /// when its length is 1, 2, 4, 8 or 16, sometimes through the matching
    /// `write_u*` (little-endian, so the canonical bytes are the same).
    /// Empty pieces are included. Checks `finish` on every prefix fed.
    fn feed_in_pieces(h: &mut PortableHasher, bytes: &[u8], seed: u64, rng: &mut Rng) {
        let mut at = 0;
        while at < bytes.len() {
            let max = if rng.below(8) == 0 { 200 } else { 20 };
            let n = rng.below(max + 1).min(bytes.len() - at);
            let piece = &bytes[at..at + n];
            let as_int = rng.below(2) == 0;
            match (n, as_int) {
                (1, true) => h.write_u8(piece[0]),
                (2, true) => h.write_u16(u16::from_le_bytes(piece.try_into().unwrap())),
                (4, true) => h.write_u32(u32::from_le_bytes(piece.try_into().unwrap())),
                (8, true) => h.write_u64(u64::from_le_bytes(piece.try_into().unwrap())),
                (16, true) => h.write_u128(u128::from_le_bytes(piece.try_into().unwrap())),
                _ => h.write(piece),
            }
            at += n;
            if rng.below(4) == 0 {
                assert_eq!(
                    h.finish(),
                    xxh3_64_with_seed(&bytes[..at], seed),
                    "prefix {at} of {}, seed {seed:#x}",
                    bytes.len()
                );
            }
        }
    }

    /// The short-input paths of `finish` (0-16 bytes from `small`, hand-
    /// written; 17-128 from `buf`) and the streaming fallback are XXH3-64
    /// exactly: for every length up to 256, random bytes and seeds, one
    /// write or many random pieces (integers and slices, empty ones too),
    /// the hash equals `xxhash-rust`'s one-shot `xxh3_64_with_seed`.
    #[test]
    fn finish_is_xxh3_for_every_length_seed_and_split() {
        let mut rng = Rng(0x0123_4567_89AB_CDEF);
        let mut bytes = [0u8; 256];
        for len in 0..=256usize {
            for round in 0..24 {
                let seed = match round {
                    0 => 0,
                    1 => 1,
                    2 => u64::MAX,
                    3 => 0x5EED_CAFE_F00D_D00D,
                    _ => rng.next(),
                };
                // Random bytes, some rounds all-zero or all-0xFF so that
                // any mix-up of zero padding and data would show.
                for b in &mut bytes[..len] {
                    *b = match round % 8 {
                        5 => 0,
                        6 => 0xFF,
                        _ => rng.next() as u8,
                    };
                }
                let input = &bytes[..len];
                let want = xxh3_64_with_seed(input, seed);

                let mut one = PortableHasher::with_seed(seed);
                one.write(input);
                assert_eq!(one.finish(), want, "one write, len {len}, seed {seed:#x}");

                let mut pieces = PortableHasher::with_seed(seed);
                feed_in_pieces(&mut pieces, input, seed, &mut rng);
                assert_eq!(pieces.finish(), want, "pieces, len {len}, seed {seed:#x}");
                // Trailing empty writes change nothing, even at a full
                // `small` (len 16) or a full `buf` (len 128).
                pieces.write(&[]);
                assert_eq!(pieces.finish(), want, "empty write, len {len}");
            }
        }
    }

    /// A byte string after its length prefix (`Hash` for `[u8]`), hashed
    /// from its own bytes when its length is 9 to 120: the same as XXH3 of
    /// the prefix and the string in one buffer, for every length, for
    /// seeds and bytes at random, also when more is written after it (the
    /// early digest must then be dropped), and when a prefix-like word is
    /// not the string's length.
    #[test]
    fn a_length_prefixed_byte_string_hashes_as_its_buffer() {
        let mut rng = Rng(0x5EED_0017);
        let mut input = [0u8; 160];
        for len in 0..=140usize {
            for round in 0..16 {
                let seed = if round == 0 { 0 } else { rng.next() };
                for b in &mut input[8..8 + len] {
                    *b = match round % 4 {
                        1 => 0xFF,
                        _ => rng.next() as u8,
                    };
                }
                input[..8].copy_from_slice(&(len as u64).to_le_bytes());
                let string = &input[8..8 + len];
                let builder = DefaultHashBuilder::with_seed(seed);
                let want = xxh3_64_with_seed(&input[..8 + len], seed);
                assert_eq!(builder.hash_one(string), want, "len {len}, seed {seed:#x}");
                // More after the string: the digest covers it too.
                let mut h = PortableHasher::with_seed(seed);
                core::hash::Hash::hash(string, &mut h);
                h.write_u16(0xBEEF);
                let mut more = input[..8 + len].to_vec();
                more.extend_from_slice(&0xBEEFu16.to_le_bytes());
                assert_eq!(
                    h.finish(),
                    xxh3_64_with_seed(&more, seed),
                    "len {len} + u16"
                );
                // An 8-byte word that is not the string's length.
                let mut h = PortableHasher::with_seed(seed);
                h.write_u64(len as u64 + 1);
                h.write(string);
                let mut other = input[..8 + len].to_vec();
                other[..8].copy_from_slice(&(len as u64 + 1).to_le_bytes());
                assert_eq!(
                    h.finish(),
                    xxh3_64_with_seed(&other, seed),
                    "len {len}, other word"
                );
            }
        }
    }

    /// `hash_bytes` is `hash_one` of the `[u8]` key at every length (the
    /// short path, the 17-128 path, the streaming one) and seed.
    #[test]
    fn hash_bytes_is_hash_one_of_the_slice() {
        let mut rng = Rng(0xB17E5);
        let mut bytes = [0u8; 300];
        for len in 0..=300usize {
            for round in 0..8 {
                let seed = if round == 0 { 0 } else { rng.next() };
                for b in &mut bytes[..len] {
                    *b = rng.next() as u8;
                }
                let h = DefaultHashBuilder::with_seed(seed);
                let key = &bytes[..len];
                assert_eq!(
                    h.hash_bytes(key),
                    h.hash_one(key),
                    "len {len}, seed {seed:#x}"
                );
            }
        }
    }

    /// Every integer width at every offset inside and across the 16-byte
    /// `small` value and the 128-byte buffer.
    #[test]
    fn integer_writes_at_every_offset() {
        let mut rng = Rng(42);
        for prefix in 0..=140usize {
            let head: Vec<u8> = (0..prefix).map(|_| rng.next() as u8).collect();
            let x = u128::from(rng.next()) << 64 | u128::from(rng.next());
            for width in [1usize, 2, 4, 8, 16] {
                let seed = rng.next();
                let mut h = PortableHasher::with_seed(seed);
                h.write(&head);
                match width {
                    1 => h.write_u8(x as u8),
                    2 => h.write_u16(x as u16),
                    4 => h.write_u32(x as u32),
                    8 => h.write_u64(x as u64),
                    _ => h.write_u128(x),
                }
                let mut want = head.clone();
                want.extend_from_slice(&x.to_le_bytes()[..width]);
                assert_eq!(
                    h.finish(),
                    xxh3_64_with_seed(&want, seed),
                    "prefix {prefix}, width {width}"
                );
            }
        }
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
    fn debug_output_never_shows_the_seed() {
        let b = DefaultHashBuilder::with_seed(0x5EED_1234_ABCD);
        let text = format!("{b:?}");
        assert_eq!(text, "DefaultHashBuilder { seed: <hidden> }");
        for seed_text in ["5EED", "5eed", &0x5EED_1234_ABCDu64.to_string()] {
            assert!(!text.contains(seed_text));
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
