//! The public filter type and its builder.

use crate::error::{BatchInsertError, BuildError, InsertError};
use crate::fingerprint::{Fingerprint, SLOTS};
use crate::hashing::DefaultHashBuilder;
use crate::index::{signed_prepared, with_scheme, HashScheme, IndexMap, Scheme};
use crate::lookup::Lookup;
#[cfg(not(concurrent_cuckoo_loom))]
use crate::relocate::{Relocate, Relocated};
use crate::stats::Stats;
use crate::storage::TableMemory;
use crate::table::{Location, Mode, RawTable, DEFAULT_MAX_PATH, MAX_PATH_LIMIT};
use core::fmt;
use core::hash::{BuildHasher, Hash};

/// Load factor `with_capacity(n)` sizes for: `n` items fill 90% of the
/// slots. Fill to first failure reaches over 95% (see `docs/design.md`), so
/// `n` random keys always fit, at about 17.8 + 0.3 bits per item with 16-bit
/// fingerprints.
const TARGET_LOAD: f64 = 0.9;
/// Extra slots, in units of `sqrt(n)`, so that small filters, whose fill
/// limit varies more from one key set to the next, still take `n` keys.
const SMALL_TABLE_SLACK: f64 = 3.0;

/// A concurrent cuckoo filter: approximate set membership with deletion,
/// shared between threads through `&self`.
///
/// * No false negatives: an item inserted and not removed is always found,
///   by every thread, even while other threads move fingerprints.
/// * False positives at a rate below `2 * 4 / 2^bits` (16-bit fingerprints by
///   default: below 0.013%).
/// * A multiset: a key may be inserted up to eight times; each
///   [`remove`](Self::remove) takes away one copy.
///
/// Lookups take no lock and write no shared memory; inserts and removes lock
/// two of a few thousand cache-padded stripes. See the crate documentation
/// for the design.
///
/// ```
/// use concurrent_cuckoo::CuckooFilter;
/// use std::sync::Arc;
///
/// let filter = Arc::new(CuckooFilter::with_capacity(100_000));
/// let writer = {
///     let filter = Arc::clone(&filter);
///     std::thread::spawn(move || filter.insert_batch(&(0..50_000u32).collect::<Vec<_>>()))
/// };
/// writer.join().unwrap()?;
/// assert!((0..50_000u32).all(|k| filter.contains(&k))); // no false negatives
/// assert_eq!(filter.len(), 50_000);
/// # Ok::<(), concurrent_cuckoo::BatchInsertError>(())
/// ```
///
/// # Deleting what was never inserted
/// As the paper warns (section 3.3), removing a key that was never inserted
/// may remove *another* key's fingerprint when the two collide (same
/// fingerprint, same bucket pair), creating a false negative for that other
/// key. Only remove keys you inserted (or use [`insert_unique`](Self::insert_unique)
/// and track membership exactly elsewhere).
pub struct CuckooFilter<S = DefaultHashBuilder> {
    pub(crate) table: Table,
    /// `table`'s lookup of one hash, compiled for its fingerprint width and
    /// hash scheme and chosen with it ([`Table::contains_fn`]): a lookup
    /// makes one indirect call, always to the same place, instead of
    /// deciding the width and the scheme again.
    contains_fn: ContainsFn,
    pub(crate) hasher: S,
}

/// A single lookup of one table kind: see [`Table::contains_fn`].
type ContainsFn = fn(&Table, u64) -> bool;

impl<S> CuckooFilter<S> {
    /// The filter of `table` and `hasher`: how every filter is made, so
    /// that its lookup function always matches its table.
    pub(crate) fn from_parts(table: Table, hasher: S) -> Self {
        Self {
            contains_fn: table.contains_fn(),
            table,
            hasher,
        }
    }
}

/// One table per fingerprint width, chosen at build time; each operation
/// dispatches once (a perfectly predicted branch) into monomorphic code,
/// except single lookups, which call the function the filter picked for
/// its table when it was made ([`Table::contains_fn`]).
pub(crate) enum Table {
    F8(RawTable<u8>),
    F16(RawTable<u16>),
    F32(RawTable<u32>),
}

impl Table {
    /// The single lookup of this table: [`contains_hash_in`] for its width
    /// and hash scheme, neither of which ever changes.
    fn contains_fn(&self) -> ContainsFn {
        fn of<F: Width>(t: &RawTable<F>) -> ContainsFn {
            with_scheme!(t.index.scheme(), P => contains_hash_in::<F, P>)
        }
        with_table!(self, t => of(t))
    }

    /// [`RawTable::relocate`] of this table, whatever its width.
    #[cfg(not(concurrent_cuckoo_loom))]
    pub(crate) fn relocate(&mut self, mover: &mut dyn Relocate, tally: &mut Relocated) {
        match self {
            Table::F8(t) => t.relocate(mover, tally),
            Table::F16(t) => t.relocate(mover, tally),
            Table::F32(t) => t.relocate(mover, tally),
        }
    }
}

/// A fingerprint width, and the [`Table`] variant that holds it.
pub(crate) trait Width: Fingerprint {
    /// `table`'s raw table if it has this width.
    fn table_of(table: &Table) -> Option<&RawTable<Self>>;
}

macro_rules! width {
    ($($f:ty => $variant:ident),*) => {$(
        impl Width for $f {
            #[inline(always)]
            fn table_of(table: &Table) -> Option<&RawTable<Self>> {
                match table {
                    Table::$variant(t) => Some(t),
                    _ => None,
                }
            }
        }
    )*};
}
width!(u8 => F8, u16 => F16, u32 => F32);

/// `contains_hash` for a table of width `F` and hash scheme `P`: what
/// [`Table::contains_fn`] picks. The whole lookup is inlined here, so it
/// decides nothing about the table's kind but the (perfectly predicted)
/// check of the variant, which only a mismatch, impossible by
/// construction, would fail.
fn contains_hash_in<F: Width, P: Scheme>(table: &Table, hash: u64) -> bool {
    match F::table_of(table) {
        Some(t) => t.contains_hash_as::<P>(hash),
        None => contains_hash_any(table, hash),
    }
}

/// `contains_hash` for any table, deciding its kind: correct whatever
/// [`contains_hash_in`] it is reached from.
#[cold]
#[inline(never)]
fn contains_hash_any(table: &Table, hash: u64) -> bool {
    with_table!(table, t => t.contains_hash(hash))
}

/// Runs `$body` with `$t` bound to the table, whatever its width: the one
/// place an operation dispatches on the width.
macro_rules! with_table {
    ($table:expr, $t:ident => $body:expr) => {
        match $table {
            $crate::filter::Table::F8($t) => $body,
            $crate::filter::Table::F16($t) => $body,
            $crate::filter::Table::F32($t) => $body,
        }
    };
}

/// Builds a [`Table`] of width `$bits` (8, 16 or 32, already validated) from
/// `$make`, in which the type `$f` is the fingerprint type: the one place a
/// table is made from a width.
macro_rules! table_of_width {
    ($bits:expr, $f:ident => $make:expr) => {
        match $bits {
            8 => {
                type $f = u8;
                $crate::filter::Table::F8($make)
            }
            16 => {
                type $f = u16;
                $crate::filter::Table::F16($make)
            }
            _ => {
                type $f = u32;
                $crate::filter::Table::F32($make)
            }
        }
    };
}
#[cfg_attr(concurrent_cuckoo_loom, allow(unused_imports))]
pub(crate) use {table_of_width, with_table};

impl CuckooFilter<DefaultHashBuilder> {
    /// A filter that holds at least `capacity` items: 4 slots per bucket,
    /// 16-bit fingerprints, the default hasher with a random seed.
    ///
    /// # Panics
    /// Like `Vec::with_capacity`, if the capacity overflows what a filter can
    /// address or the allocation fails. Use [`builder`](Self::builder) for an
    /// error instead.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(1_000_000);
    /// assert!(filter.capacity() >= 1_000_000);
    /// assert_eq!(filter.fingerprint_bits(), 16);
    /// assert!(filter.is_empty());
    /// ```
    #[must_use]
    pub fn with_capacity(capacity: usize) -> Self {
        match Self::try_with_capacity(capacity) {
            Ok(filter) => filter,
            Err(e) => panic!("CuckooFilter::with_capacity({capacity}): {e}"),
        }
    }

    /// [`with_capacity`](Self::with_capacity) that returns the error
    /// instead of panicking.
    ///
    /// ```
    /// use concurrent_cuckoo::{BuildError, CuckooFilter};
    /// assert!(CuckooFilter::try_with_capacity(1000)?.capacity() >= 1000);
    /// assert!(matches!(
    ///     CuckooFilter::try_with_capacity(usize::MAX),
    ///     Err(BuildError::CapacityOverflow { .. } | BuildError::AllocationFailed(_))
    /// ));
    /// # Ok::<(), BuildError>(())
    /// ```
    ///
    /// # Errors
    /// [`BuildError::CapacityOverflow`] when the capacity overflows what a
    /// filter can address, [`BuildError::AllocationFailed`] when the
    /// memory cannot be had.
    pub fn try_with_capacity(capacity: usize) -> Result<Self, BuildError> {
        Self::builder().capacity(capacity).build()
    }

    /// A builder for every other configuration.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::builder().capacity(10_000).fingerprint_bits(8).build()?;
    /// assert_eq!(filter.fingerprint_bits(), 8);
    /// assert!(filter.capacity() >= 10_000);
    /// # Ok::<(), concurrent_cuckoo::BuildError>(())
    /// ```
    #[must_use = "a builder does nothing until `build` is called"]
    pub fn builder() -> Builder<DefaultHashBuilder> {
        Builder::new()
    }
}

impl<S: BuildHasher> CuckooFilter<S> {
    #[inline(always)]
    fn hash<K: Hash + ?Sized>(&self, key: &K) -> u64 {
        self.hasher.hash_one(key)
    }

    /// Adds one copy of `key`. A key is any `K: Hash + ?Sized`: `str`,
    /// `[u8]`, integers, tuples, `#[derive(Hash)]` structs.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(1000);
    /// filter.insert("10.0.0.1:443")?;
    /// filter.insert("10.0.0.1:443")?; // a multiset: a second copy
    /// filter.insert(&(0x0a00_0001u32, 443u16))?;
    /// assert_eq!(filter.count("10.0.0.1:443"), 2);
    /// assert_eq!(filter.len(), 3);
    /// # Ok::<(), concurrent_cuckoo::InsertError>(())
    /// ```
    ///
    /// # Errors
    /// [`InsertError::Full`] when no free slot can be reached, and
    /// [`InsertError::TooManyDuplicates`] when the key's buckets already hold
    /// eight copies of its fingerprint. Either way the filter is unchanged.
    #[inline]
    pub fn insert<K: Hash + ?Sized>(&self, key: &K) -> Result<(), InsertError> {
        self.insert_hash(self.hash(key))
    }

    /// Adds `key` unless it (or a key indistinguishable from it) is already
    /// present. Returns `true` if it was added. Atomic with respect to
    /// concurrent `insert_unique` calls: of several threads adding the same
    /// key, exactly one gets `true`.
    ///
    /// "Indistinguishable" means the same fingerprint in the same bucket
    /// pair: a key that was never added is refused (`false`) when another
    /// key collides with it that way, which happens at most at the
    /// [`false_positive_bound`](Self::false_positive_bound). Nothing of
    /// `key` is stored then, so do not later `remove(key)` on the strength
    /// of that `false`: it would remove the other key's copy (the paper's
    /// warning about removing what was never inserted).
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(1000);
    /// assert!(filter.insert_unique("session-7")?);
    /// assert!(!filter.insert_unique("session-7")?); // already there: not added again
    /// assert_eq!(filter.count("session-7"), 1);
    /// # Ok::<(), concurrent_cuckoo::InsertError>(())
    /// ```
    ///
    /// # Errors
    /// As [`insert`](Self::insert).
    #[inline]
    pub fn insert_unique<K: Hash + ?Sized>(&self, key: &K) -> Result<bool, InsertError> {
        self.insert_unique_hash(self.hash(key))
    }

    /// Is `key` (probably) present? Never a false negative; false positives
    /// at a rate below [`false_positive_bound`](Self::false_positive_bound).
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::builder().capacity(1000).seed(1).build()?;
    /// filter.insert(&42u64)?;
    /// assert!(filter.contains(&42u64));
    /// assert!(!filter.contains(&43u64)); // with this seed; any key may be a false positive
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn contains<K: Hash + ?Sized>(&self, key: &K) -> bool {
        self.contains_hash(self.hash(key))
    }

    /// Removes one copy of `key`; `false` if none was found. See the type
    /// docs about removing keys that were never inserted.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(1000);
    /// filter.insert("k")?;
    /// assert!(filter.remove("k"));
    /// assert!(!filter.contains("k"));
    /// assert!(!filter.remove("k")); // no copy left
    /// # Ok::<(), concurrent_cuckoo::InsertError>(())
    /// ```
    #[inline]
    #[must_use = "false: no copy of the key was found, nothing removed"]
    pub fn remove<K: Hash + ?Sized>(&self, key: &K) -> bool {
        self.remove_hash(self.hash(key))
    }

    /// Looks up a burst of keys: `out[i] = self.contains(&keys[i])`, with the
    /// memory accesses of many keys overlapped (see [`contains_hash_batch`](Self::contains_hash_batch)).
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::builder().capacity(1000).seed(1).build()?;
    /// filter.insert_batch(&[1u32, 2, 3])?;
    /// let mut found = [false; 4];
    /// filter.contains_batch(&[1u32, 2, 3, 4], &mut found);
    /// assert_eq!(found, [true, true, true, false]); // 4: absent (with this seed)
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Panics
    /// If `keys.len() != out.len()`, with the message
    /// `"contains_batch: keys and out differ in length"` (checked before any
    /// key is hashed, whatever the lengths, including empty slices).
    #[inline]
    pub fn contains_batch<K: Hash>(&self, keys: &[K], out: &mut [bool]) {
        assert_eq!(
            keys.len(),
            out.len(),
            "contains_batch: keys and out differ in length"
        );
        with_table!(&self.table, t => t.contains_batch(|i| self.hash(&keys[i]), out))
    }

    /// [`insert`](Self::insert) for a caller that already holds a 64-bit hash
    /// of the key (for example a NIC's RSS hash). The hash first goes
    /// through a fixed bijective mixer, so its entropy may sit in any of its
    /// bits (a 32-bit hash widened to `u64` works as well as a full 64-bit
    /// one); then the high 32 bits pick the bucket and the low bits the
    /// fingerprint. `insert_hash(self.hasher().hash_one(&k))` is exactly
    /// `insert(&k)`.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(1000);
    /// let rss: u32 = 0x9c3e_41d7; // the NIC's hash of a packet's 5-tuple
    /// filter.insert_hash(u64::from(rss))?;
    /// assert!(filter.contains_hash(u64::from(rss)));
    /// # Ok::<(), concurrent_cuckoo::InsertError>(())
    /// ```
    ///
    /// # Errors
    /// As [`insert`](Self::insert).
    #[inline]
    pub fn insert_hash(&self, hash: u64) -> Result<(), InsertError> {
        with_table!(&self.table, t => t.insert(&t.locate(hash), Mode::Multi)).map(|_| ())
    }

    /// [`insert_unique`](Self::insert_unique) for a precomputed hash.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(1000);
    /// assert!(filter.insert_unique_hash(0xfeed)?);
    /// assert!(!filter.insert_unique_hash(0xfeed)?);
    /// assert_eq!(filter.len(), 1);
    /// # Ok::<(), concurrent_cuckoo::InsertError>(())
    /// ```
    ///
    /// # Errors
    /// As [`insert`](Self::insert).
    #[inline]
    pub fn insert_unique_hash(&self, hash: u64) -> Result<bool, InsertError> {
        with_table!(&self.table, t => t.insert(&t.locate(hash), Mode::Unique))
    }

    /// [`contains`](Self::contains) for a precomputed hash.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// use std::hash::BuildHasher;
    /// let filter = CuckooFilter::with_capacity(1000);
    /// filter.insert_hash(7)?;
    /// assert!(filter.contains_hash(7));
    /// // Keys and hashes meet: a key is found by the hash of the filter's hasher.
    /// filter.insert("k")?;
    /// assert!(filter.contains_hash(filter.hasher().hash_one("k")));
    /// # Ok::<(), concurrent_cuckoo::InsertError>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn contains_hash(&self, hash: u64) -> bool {
        (self.contains_fn)(&self.table, hash)
    }

    /// Starts loading the two buckets [`contains_hash`](Self::contains_hash)
    /// of `hash` will read, and returns at once: a hint, with no effect on
    /// any answer. A loop that looks keys up one at a time, with work
    /// between them, prefetches a key a few iterations before it looks it
    /// up, so the cache misses of several keys overlap (as DPDK's
    /// `rte_hash_prefetch` lets a dataplane do); bursts known in advance
    /// are better served by [`contains_hash_batch`](Self::contains_hash_batch).
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(1000);
    /// filter.insert_hash(7)?;
    /// filter.prefetch_hash(7);
    /// assert!(filter.contains_hash(7));
    /// # Ok::<(), concurrent_cuckoo::InsertError>(())
    /// ```
    #[inline]
    pub fn prefetch_hash(&self, hash: u64) {
        with_table!(&self.table, t => t.prefetch(&t.locate(hash)));
    }

    /// [`remove`](Self::remove) for a precomputed hash.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(1000);
    /// filter.insert_hash(7)?;
    /// assert!(filter.remove_hash(7));
    /// assert!(filter.is_empty());
    /// # Ok::<(), concurrent_cuckoo::InsertError>(())
    /// ```
    #[inline]
    #[must_use = "false: no copy of the key was found, nothing removed"]
    pub fn remove_hash(&self, hash: u64) -> bool {
        with_table!(&self.table, t => t.remove(&t.locate(hash)))
    }

    /// Looks up a burst of precomputed hashes: `out[i] = self.contains_hash(hashes[i])`.
    /// In stages of 32: every bucket of the next 32 hashes is requested
    /// before the current 32 are probed, so many cache misses are in
    /// flight at once (a burst of 32 out of cache costs about a third of 32
    /// single lookups, `docs/benchmarks.md`).
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::builder().capacity(1000).seed(1).build()?;
    /// filter.insert_hash_batch(&[10, 20, 30])?;
    /// let burst: [u64; 4] = [10, 20, 30, 40]; // e.g. the RSS hashes of a packet batch
    /// let mut found = [false; 4];
    /// filter.contains_hash_batch(&burst, &mut found);
    /// assert_eq!(found, [true, true, true, false]); // 40: absent (with this seed)
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Panics
    /// If `hashes.len() != out.len()`, with the message
    /// `"contains_hash_batch: hashes and out differ in length"`.
    #[inline]
    pub fn contains_hash_batch(&self, hashes: &[u64], out: &mut [bool]) {
        assert_eq!(
            hashes.len(),
            out.len(),
            "contains_hash_batch: hashes and out differ in length"
        );
        with_table!(&self.table, t => t.contains_batch(|i| hashes[i], out))
    }

    /// The hash of `key` given with `signature`, a 32-bit hash of it the
    /// caller already has (a NIC's RSS hash of a packet's flow key): for
    /// this filter's `*_hash` calls ([`insert_hash`](Self::insert_hash),
    /// [`remove_hash`](Self::remove_hash), [`contains_hash`](Self::contains_hash)
    /// and the rest), and what
    /// [`contains_signed_batch`](Self::contains_signed_batch) looks up.
    ///
    /// The signature alone picks the key's first bucket, and the key's own
    /// hash (the filter's seeded hasher) alone gives its fingerprint, so
    /// two keys sharing a signature share a bucket, never a fingerprint:
    /// the false-positive rate is the filter's, where the
    /// signature as the whole hash would add collisions of its 32 bits
    /// (a 0.4% floor at 2^24 keys). The signature is mixed by a 32-bit
    /// bijection first, so signatures with little entropy (sequential ids)
    /// still spread over the table.
    ///
    /// A key must come with the same signature every time (the same RSS
    /// function and key on every port and after a restart): the same key
    /// with another signature is another hash, not found. Whoever can
    /// steer signatures (an attacker who knows the RSS key) can crowd
    /// keys into a few buckets, so inserts are refused early
    /// ([`Full`](InsertError::Full)); no answer is ever wrong. Keys
    /// hashed by the filter alone (the keyed calls) are not exposed to
    /// that. The hash depends on the filter's seed and hash scheme, both
    /// saved with it: a reloaded filter gives the same hashes.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(1000);
    /// let flow = [10u8, 0, 0, 1, 10, 0, 0, 2, 0x1f, 0x90, 0xc3, 0x50, 6];
    /// let rss: u32 = 0x6b2a_91c4; // the NIC's hash of the flow
    /// filter.insert_hash(filter.signed_hash(&flow[..], rss))?;
    /// let mut found = [false; 1];
    /// filter.contains_signed_batch(&[&flow[..]], &[rss], &mut found);
    /// assert!(found[0]);
    /// # Ok::<(), concurrent_cuckoo::InsertError>(())
    /// ```
    #[must_use]
    pub fn signed_hash<K: Hash + ?Sized>(&self, key: &K, signature: u32) -> u64 {
        let prepared = signed_prepared(signature, self.hash(key));
        with_table!(&self.table, t => t.index.unprepare(prepared))
    }

    /// Looks up a burst of keys, each with its signature:
    /// `out[i] = self.contains_hash(self.signed_hash(&keys[i], signatures[i]))`.
    ///
    /// As fast as [`contains_batch`](Self::contains_batch) (the key is
    /// hashed either way, for its fingerprint): for code shaped around
    /// signatures (`rte_hash_lookup_with_hash_bulk`), and the safe way to
    /// use them. See [`signed_hash`](Self::signed_hash) for what a
    /// signature must be.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::builder().capacity(1000).seed(1).build()?;
    /// let flows: [u64; 3] = [7, 8, 9];
    /// let rss: [u32; 3] = [0x11, 0x22, 0x33];
    /// for (flow, sig) in flows.iter().zip(rss).take(2) {
    ///     filter.insert_hash(filter.signed_hash(flow, sig))?;
    /// }
    /// let mut found = [false; 3];
    /// filter.contains_signed_batch(&flows, &rss, &mut found);
    /// assert_eq!(found, [true, true, false]); // 9 was not inserted (absent with this seed)
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Panics
    /// If `keys`, `signatures` and `out` differ in length, with the message
    /// `"contains_signed_batch: keys, signatures and out differ in length"`.
    pub fn contains_signed_batch<K: Hash>(&self, keys: &[K], signatures: &[u32], out: &mut [bool]) {
        assert!(
            keys.len() == out.len() && signatures.len() == out.len(),
            "contains_signed_batch: keys, signatures and out differ in length"
        );
        self.contains_signed_batch_with(signatures, |i| self.hash(&keys[i]), out);
    }

    crate::unstable_api! {
        /// [`contains_signed_batch`](Self::contains_signed_batch) of the keys
        /// whose own hashes `key_hash_at(i)` gives (the filter's hasher's, as
        /// `hasher().hash_bytes(key)`): the C API hashes byte keys in
        /// registers, where the generic `Hash` path is called out of line.
        ///
        /// **Unstable**: a hook for the C ABI, hidden from the docs; it may
        /// change or go away in any release.
        ///
        /// # Panics
        /// If `signatures` and `out` differ in length.
        #[inline]
        pub fn contains_signed_batch_with(
            &self,
            signatures: &[u32],
            key_hash_at: impl Fn(usize) -> u64,
            out: &mut [bool],
        ) {
            assert_eq!(
                signatures.len(),
                out.len(),
                "contains_signed_batch: keys, signatures and out differ in length"
            );
            with_table!(&self.table, t => t.contains_signed_batch(|i| signatures[i], &key_hash_at, out))
        }
    }

    /// Inserts every key of `keys`, in order, exactly as the same
    /// [`insert`](Self::insert) calls one at a time would, stopping at the
    /// first key refused: the keys before it are inserted, it and the keys
    /// after it are not, and the error says how many went in.
    ///
    /// Several times faster than a loop of `insert` on a table larger than
    /// the cache: the batch hashes keys a block ahead and prefetches their
    /// buckets and lock lines, so the inserts find them in cache instead of
    /// waiting for four misses each (see `docs/benchmarks.md`). Each insert
    /// is still an ordinary, individually linearizable operation: other
    /// threads see them one by one, never a half-made move, and a reader
    /// never misses a key already inserted.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(10_000);
    /// let routes: Vec<u64> = (0..5_000).collect();
    /// filter.insert_batch(&routes)?;
    /// assert_eq!(filter.len(), 5_000);
    /// assert!(filter.contains(&4_999u64));
    /// # Ok::<(), concurrent_cuckoo::BatchInsertError>(())
    /// ```
    ///
    /// # Errors
    /// A [`BatchInsertError`] with the number of keys inserted and the
    /// [`InsertError`] of the first key refused.
    pub fn insert_batch<K: Hash>(&self, keys: &[K]) -> Result<(), BatchInsertError> {
        with_table!(&self.table, t => t.insert_batch(
            keys.len(),
            |i| self.hash(&keys[i]),
            Mode::Multi,
            |_, _| {}
        ))
        .map_err(|(inserted, e)| BatchInsertError::new(inserted, e))
    }

    /// [`insert_batch`](Self::insert_batch) for precomputed 64-bit hashes
    /// (see [`insert_hash`](Self::insert_hash)).
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(1000);
    /// let rss: Vec<u64> = (0..500u32).map(|h| u64::from(h.wrapping_mul(0x9E37_79B9))).collect();
    /// filter.insert_hash_batch(&rss)?;
    /// assert!(rss.iter().all(|&h| filter.contains_hash(h)));
    /// # Ok::<(), concurrent_cuckoo::BatchInsertError>(())
    /// ```
    ///
    /// # Errors
    /// As [`insert_batch`](Self::insert_batch).
    pub fn insert_hash_batch(&self, hashes: &[u64]) -> Result<(), BatchInsertError> {
        with_table!(&self.table, t => t.insert_batch(
            hashes.len(),
            |i| hashes[i],
            Mode::Multi,
            |_, _| {}
        ))
        .map_err(|(inserted, e)| BatchInsertError::new(inserted, e))
    }

    /// Inserts every key of `keys` not reported present, in order, exactly
    /// as the same [`insert_unique`](Self::insert_unique) calls one at a
    /// time would: `new[i]` tells whether `keys[i]` was stored (`false`:
    /// it, a key earlier in the batch included, or a colliding key was
    /// already there). Stops at the first key refused, as
    /// [`insert_batch`](Self::insert_batch) does: `new` is written for the
    /// keys before it, and left as it was from it on.
    ///
    /// The set-style bulk load: a column with any number of repeats
    /// stores one copy of each key, and costs a pipelined batch's time,
    /// not one locked insert per key.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(1000);
    /// let mut new = [false; 5];
    /// filter.insert_unique_batch(&["a", "b", "a", "c", "b"], &mut new)?;
    /// assert_eq!(new, [true, true, false, true, false]);
    /// assert_eq!(filter.len(), 3);
    /// # Ok::<(), concurrent_cuckoo::BatchInsertError>(())
    /// ```
    ///
    /// # Errors
    /// As [`insert_batch`](Self::insert_batch).
    ///
    /// # Panics
    /// If `keys.len() != new.len()`, with the message
    /// `"insert_unique_batch: keys and new differ in length"`, before
    /// anything is inserted or any key is hashed.
    pub fn insert_unique_batch<K: Hash>(
        &self,
        keys: &[K],
        new: &mut [bool],
    ) -> Result<(), BatchInsertError> {
        assert_eq!(
            keys.len(),
            new.len(),
            "insert_unique_batch: keys and new differ in length"
        );
        self.insert_unique_by(|i| self.hash(&keys[i]), new)
    }

    /// [`insert_unique_batch`](Self::insert_unique_batch) for precomputed
    /// 64-bit hashes (see [`insert_hash`](Self::insert_hash)).
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(1000);
    /// let flows = [7u64, 9, 7];
    /// let mut new = [false; 3];
    /// filter.insert_unique_hash_batch(&flows, &mut new)?;
    /// assert_eq!(new, [true, true, false]);
    /// # Ok::<(), concurrent_cuckoo::BatchInsertError>(())
    /// ```
    ///
    /// # Errors
    /// As [`insert_batch`](Self::insert_batch).
    ///
    /// # Panics
    /// If `hashes.len() != new.len()`, with the message
    /// `"insert_unique_hash_batch: hashes and new differ in length"`.
    pub fn insert_unique_hash_batch(
        &self,
        hashes: &[u64],
        new: &mut [bool],
    ) -> Result<(), BatchInsertError> {
        assert_eq!(
            hashes.len(),
            new.len(),
            "insert_unique_hash_batch: hashes and new differ in length"
        );
        self.insert_unique_by(|i| hashes[i], new)
    }

    /// The set-style batch of the `new.len()` hashes `hash_at(i)`: what
    /// [`insert_unique_batch`](Self::insert_unique_batch) and
    /// [`insert_unique_hash_batch`](Self::insert_unique_hash_batch) share.
    fn insert_unique_by(
        &self,
        hash_at: impl Fn(usize) -> u64,
        new: &mut [bool],
    ) -> Result<(), BatchInsertError> {
        with_table!(&self.table, t => t.insert_batch(
            new.len(),
            &hash_at,
            Mode::Unique,
            |i, stored| new[i] = stored
        ))
        .map_err(|(inserted, e)| BatchInsertError::new(inserted, e))
    }

    /// Removes one copy of each key of `keys`, in order, exactly as the
    /// same [`remove`](Self::remove) calls one at a time would;
    /// `removed[i]` tells whether a copy of `keys[i]` was found and
    /// removed. Pipelined like [`insert_batch`](Self::insert_batch). See the
    /// type docs about removing keys that were never inserted.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(1000);
    /// filter.insert_batch(&[1u32, 2, 3])?;
    /// let mut removed = [false; 4];
    /// filter.remove_batch(&[1u32, 3, 4, 3], &mut removed);
    /// assert_eq!(removed, [true, true, false, false]);
    /// assert_eq!(filter.len(), 1);
    /// # Ok::<(), concurrent_cuckoo::BatchInsertError>(())
    /// ```
    ///
    /// # Panics
    /// If `keys.len() != removed.len()`, with the message
    /// `"remove_batch: keys and removed differ in length"`, before anything
    /// is removed or any key is hashed.
    pub fn remove_batch<K: Hash>(&self, keys: &[K], removed: &mut [bool]) {
        assert_eq!(
            keys.len(),
            removed.len(),
            "remove_batch: keys and removed differ in length"
        );
        with_table!(&self.table, t => t.remove_batch(|i| self.hash(&keys[i]), removed))
    }

    /// [`remove_batch`](Self::remove_batch) for precomputed 64-bit hashes.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(1000);
    /// filter.insert_hash_batch(&[10, 20])?;
    /// let mut removed = [false; 2];
    /// filter.remove_hash_batch(&[20, 30], &mut removed);
    /// assert_eq!(removed, [true, false]);
    /// # Ok::<(), concurrent_cuckoo::BatchInsertError>(())
    /// ```
    ///
    /// # Panics
    /// If `hashes.len() != removed.len()`, with the message
    /// `"remove_hash_batch: hashes and removed differ in length"`.
    pub fn remove_hash_batch(&self, hashes: &[u64], removed: &mut [bool]) {
        assert_eq!(
            hashes.len(),
            removed.len(),
            "remove_hash_batch: hashes and removed differ in length"
        );
        with_table!(&self.table, t => t.remove_batch(|i| hashes[i], removed))
    }

    /// Copies of `key`'s fingerprint in its two buckets, 0 to 8: how many
    /// times the key was inserted and not removed, plus copies of colliding
    /// keys (the same fingerprint and bucket pair, which the filter cannot
    /// tell apart). Exact: it reads under the key's two stripe locks.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::builder().capacity(1000).seed(1).build()?;
    /// filter.insert("a")?;
    /// filter.insert("a")?;
    /// assert_eq!(filter.count("a"), 2);
    /// assert_eq!(filter.count("b"), 0); // or more, if "b" collides with "a"
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn count<K: Hash + ?Sized>(&self, key: &K) -> usize {
        self.count_hash(self.hash(key))
    }

    /// [`count`](Self::count) for a precomputed 64-bit hash.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(1000);
    /// filter.insert_hash(99)?;
    /// assert_eq!(filter.count_hash(99), 1);
    /// # Ok::<(), concurrent_cuckoo::InsertError>(())
    /// ```
    #[must_use]
    pub fn count_hash(&self, hash: u64) -> usize {
        with_table!(&self.table, t => t.count(&t.locate(hash)))
    }

    /// The hasher.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// use std::hash::BuildHasher;
    /// let filter = CuckooFilter::with_capacity(100);
    /// filter.insert("k")?;
    /// assert!(filter.contains_hash(filter.hasher().hash_one("k")));
    /// # Ok::<(), concurrent_cuckoo::InsertError>(())
    /// ```
    #[must_use]
    pub fn hasher(&self) -> &S {
        &self.hasher
    }
}

impl<S> CuckooFilter<S> {
    /// Items stored (each copy counts). Exact whenever no insert or remove
    /// is running; while they run, a recent value.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(1000);
    /// filter.insert_batch(&["a", "b", "a"])?;
    /// assert_eq!(filter.len(), 3);
    /// # Ok::<(), concurrent_cuckoo::BatchInsertError>(())
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        with_table!(&self.table, t => t.len())
    }

    /// `len() == 0`.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(1000);
    /// assert!(filter.is_empty());
    /// filter.insert(&1u8)?;
    /// assert!(!filter.is_empty());
    /// # Ok::<(), concurrent_cuckoo::InsertError>(())
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Fingerprint slots: `4 * bucket_count()`. Fill to first failure
    /// typically ends above 95% of this.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(1000);
    /// assert!(filter.capacity() >= 1000);
    /// assert_eq!(filter.capacity(), 4 * filter.bucket_count());
    /// ```
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.bucket_count() * SLOTS
    }

    /// `len() / capacity()`.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(1000);
    /// filter.insert_batch(&(0..500u32).collect::<Vec<_>>())?;
    /// assert_eq!(filter.load_factor(), 500.0 / filter.capacity() as f64);
    /// assert!(filter.load_factor() < 0.5);
    /// # Ok::<(), concurrent_cuckoo::BatchInsertError>(())
    /// ```
    #[must_use]
    pub fn load_factor(&self) -> f64 {
        self.len() as f64 / self.capacity() as f64
    }

    /// Bytes held by the filter: buckets, stripe locks and versions, and the
    /// filter value itself.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(1_000_000);
    /// // 16-bit fingerprints: 8 bytes per bucket, plus the locks and versions.
    /// assert!(filter.memory_usage() > filter.bucket_count() * 8);
    /// assert!(filter.memory_usage() * 8 / 1_000_000 < 20); // under 20 bits per item
    /// ```
    #[must_use]
    pub fn memory_usage(&self) -> usize {
        core::mem::size_of::<Self>() + with_table!(&self.table, t => t.memory_usage())
    }

    /// Removes every item. Takes every stripe lock, so concurrent writers wait.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(1000);
    /// filter.insert("k")?;
    /// filter.clear();
    /// assert!(filter.is_empty() && !filter.contains("k"));
    /// # Ok::<(), concurrent_cuckoo::InsertError>(())
    /// ```
    pub fn clear(&self) {
        with_table!(&self.table, t => t.clear())
    }

    /// Moves the filter's memory to new addresses where `mover` gives
    /// them: each block of the global allocator that the filter owns (its
    /// table's buckets, lock stripes and version words) is offered to
    /// [`Relocate::relocate`], which copies it to a new block and frees the
    /// old one, or leaves it. The filter answers exactly as before, and its
    /// encoding is the same bytes. For a host's active defragmentation (a
    /// Redis module's `defrag` callback with `RedisModule_DefragAlloc`).
    ///
    /// `&mut self`: no thread is reading or writing the filter meanwhile,
    /// so its blocks move as plain bytes. A table mapped on its own
    /// ([`TableMemory::Mapped`](crate::TableMemory::Mapped), 4 MiB and
    /// more on Linux) is not the allocator's and stays where it is.
    /// Inline lookup views of the C ABI taken before are stale after it.
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, Relocate};
    /// use std::alloc::Layout;
    /// use std::ptr::NonNull;
    ///
    /// /// Copies every block to a fresh allocation of the same layout.
    /// struct Fresh;
    /// // SAFETY: the new block is the global allocator's, for `layout`,
    /// // holds the old block's bytes, and the old block is freed.
    /// unsafe impl Relocate for Fresh {
    ///     fn relocate(&mut self, block: NonNull<u8>, layout: Layout) -> Option<NonNull<u8>> {
    ///         // SAFETY: `layout` is the block's (the trait's contract) and
    ///         // non-zero; the copy stays inside both blocks, which do not
    ///         // overlap; `block` is freed once, with its own layout.
    ///         unsafe {
    ///             let new = NonNull::new(std::alloc::alloc(layout))?;
    ///             new.as_ptr().copy_from_nonoverlapping(block.as_ptr(), layout.size());
    ///             std::alloc::dealloc(block.as_ptr(), layout);
    ///             Some(new)
    ///         }
    ///     }
    /// }
    ///
    /// let mut filter = CuckooFilter::with_capacity(1000);
    /// filter.insert("k")?;
    /// let moved = filter.relocate(&mut Fresh);
    /// assert_eq!(moved.moved, moved.offered);
    /// assert!(filter.contains("k"));
    /// # Ok::<(), concurrent_cuckoo::InsertError>(())
    /// ```
    #[cfg(not(concurrent_cuckoo_loom))]
    pub fn relocate(&mut self, mover: &mut dyn Relocate) -> Relocated {
        let mut tally = Relocated::default();
        self.table.relocate(mover, &mut tally);
        tally
    }

    /// Buckets in the table (always even).
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(1000);
    /// assert_eq!(filter.bucket_count() % 2, 0);
    /// assert_eq!(filter.bucket_count() * 4, filter.capacity());
    /// ```
    #[must_use]
    pub fn bucket_count(&self) -> usize {
        with_table!(&self.table, t => t.bucket_count())
    }

    /// Fingerprint width in bits (8, 16 or 32).
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::builder().capacity(1000).false_positive_rate(0.05).build()?;
    /// assert_eq!(filter.fingerprint_bits(), 8); // the narrowest width with 8 / 2^bits <= 0.05
    /// # Ok::<(), concurrent_cuckoo::BuildError>(())
    /// ```
    #[must_use]
    pub fn fingerprint_bits(&self) -> u32 {
        with_table!(&self.table, t => t.fingerprint_bits())
    }

    /// Upper bound on the false-positive rate when full: `2 * 4 / 2^bits`.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(1000);
    /// assert_eq!(filter.false_positive_bound(), 8.0 / 65536.0); // 16 bits: about 0.012%
    /// ```
    #[must_use]
    pub fn false_positive_bound(&self) -> f64 {
        (2 * SLOTS) as f64 / 2f64.powi(self.fingerprint_bits() as i32)
    }

    /// Longest displacement path an insert searches.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// assert_eq!(CuckooFilter::with_capacity(1000).max_path_len(), 5);
    /// let short = CuckooFilter::builder().capacity(1000).max_path_len(2).build()?;
    /// assert_eq!(short.max_path_len(), 2);
    /// # Ok::<(), concurrent_cuckoo::BuildError>(())
    /// ```
    #[must_use]
    pub fn max_path_len(&self) -> usize {
        with_table!(&self.table, t => t.max_path)
    }

    /// Whether this filter uses its hashes' bits as they are, unmixed
    /// ([`Builder::uniform_hashes`]): set at build time, or by a loaded
    /// file of format version 1.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// assert!(!CuckooFilter::with_capacity(1000).uniform_hashes());
    /// let raw = CuckooFilter::builder().capacity(1000).uniform_hashes(true).build()?;
    /// assert!(raw.uniform_hashes());
    /// # Ok::<(), concurrent_cuckoo::BuildError>(())
    /// ```
    #[must_use]
    pub fn uniform_hashes(&self) -> bool {
        with_table!(&self.table, t => t.index.scheme() == HashScheme::Raw)
    }

    /// Where the filter's table got its memory ([`Builder::table_memory`],
    /// or [`ReadOptions::table_memory`](crate::ReadOptions::table_memory)
    /// for a decoded filter); its copies take theirs from the same place.
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, TableMemory};
    /// assert_eq!(CuckooFilter::with_capacity(100).table_memory(), TableMemory::Mapped);
    /// ```
    #[must_use]
    pub fn table_memory(&self) -> TableMemory {
        with_table!(&self.table, t => t.stripes.memory())
    }

    /// Fingerprints moved by inserts' displacement paths since creation
    /// (diagnostics; shows how often readers could have had to retry).
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::builder().capacity(1000).seed(1).build()?;
    /// assert_eq!(filter.relocations(), 0);
    /// filter.insert_batch(&(0..1000u32).collect::<Vec<_>>())?; // past 80% load
    /// assert!(filter.relocations() > 0);
    /// assert_eq!(filter.relocations(), filter.stats().relocations);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn relocations(&self) -> u64 {
        with_table!(&self.table, t => t.stripes.moves())
    }

    /// Size, memory and the writers' counters, in one snapshot: see
    /// [`Stats`]. Reading them never slows lookups.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(1000);
    /// filter.insert_batch(&[1u8, 2, 3])?;
    /// let stats = filter.stats();
    /// assert_eq!((stats.len, stats.inserts, stats.failed_inserts), (3, 3, 0));
    /// # Ok::<(), concurrent_cuckoo::BatchInsertError>(())
    /// ```
    #[must_use]
    pub fn stats(&self) -> Stats {
        Stats {
            memory_usage: self.memory_usage(),
            ..table_stats(&self.table)
        }
    }

    /// Number of stripe locks.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(1_000_000);
    /// assert!(filter.stripe_count().is_power_of_two());
    /// assert!(filter.stripe_count() <= 4096);
    /// ```
    #[must_use]
    pub fn stripe_count(&self) -> usize {
        with_table!(&self.table, t => t.stripes.count())
    }

    crate::unstable_api! {
        /// Number of move versions lookups validate against (at least the
        /// stripe count).
        ///
        /// **Unstable**: a hook for tests and measurements, hidden from the docs;
        /// it may change or go away in any release.
        #[must_use]
        pub fn version_count(&self) -> usize {
            with_table!(&self.table, t => t.stripes.version_count())
        }
    }

    crate::unstable_api! {
        /// Occupied slots, counted by scanning every bucket (for tests: equals
        /// `len()` when no writer runs).
        ///
        /// **Unstable**: a hook for tests and measurements, hidden from the docs;
        /// it may change or go away in any release.
        #[must_use]
        pub fn occupied_slots(&self) -> usize {
            with_table!(&self.table, t => t.count_occupied())
        }
    }

    crate::unstable_api! {
        /// The body of a snapshot taken beside writers, as
        /// [`to_bytes`](Self::to_bytes) takes it (`src/snapshot.rs`): every
        /// bucket's little-endian bytes in order, and the occupied slots
        /// counted in them. For the loom models, which cannot run the
        /// encoder.
        ///
        /// **Unstable**: a hook for tests and measurements, hidden from the docs;
        /// it may change or go away in any release.
        #[must_use]
        pub fn snapshot_body(&self) -> (Vec<u8>, u64) {
            fn body<F: crate::fingerprint::Fingerprint>(t: &crate::table::RawTable<F>) -> (Vec<u8>, u64) {
                let mut bytes = vec![0; t.bucket_count() * F::BUCKET_BYTES];
                let len = crate::snapshot::copy_buckets(t, &mut bytes);
                (bytes, len)
            }
            with_table!(&self.table, t => body(t))
        }
    }

    crate::unstable_api! {
        /// `(fingerprint, primary bucket, alternate bucket)` of a hash: two hashes
        /// with the same fingerprint and bucket pair are indistinguishable to the
        /// filter. For exact models in tests.
        ///
        /// **Unstable**: a hook for tests and measurements, hidden from the docs;
        /// it may change or go away in any release.
        #[must_use]
        pub fn signature_of_hash(&self, hash: u64) -> (u64, usize, usize) {
            fn sig<F: crate::fingerprint::Fingerprint>(loc: Location<F>) -> (u64, usize, usize) {
                (loc.fp.to_u64(), loc.i1, loc.i2)
            }
            with_table!(&self.table, t => sig(t.locate(hash)))
        }
    }

    crate::unstable_api! {
        /// A hash whose primary bucket is `bucket` and whose low 32 bits after
        /// the filter's finalizer (and so fingerprint) are `low`: lets tests and
        /// loom models place keys exactly.
        ///
        /// **Unstable**: a hook for tests and measurements, hidden from the docs;
        /// it may change or go away in any release.
        #[must_use]
        pub fn hash_for_bucket(&self, bucket: usize, low: u32) -> u64 {
            with_table!(&self.table, t => t.index.hash_for(bucket, low))
        }
    }
}

impl<S> fmt::Debug for CuckooFilter<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CuckooFilter")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .field("fingerprint_bits", &self.fingerprint_bits())
            .field("buckets", &self.bucket_count())
            .field("stripes", &self.stripe_count())
            .finish_non_exhaustive()
    }
}

/// Configures a [`CuckooFilter`]. Obtained from [`CuckooFilter::builder`].
///
/// ```
/// use concurrent_cuckoo::CuckooFilter;
/// let filter = CuckooFilter::builder()
///     .capacity(1_000_000)
///     .false_positive_rate(1e-3)
///     .seed(42)
///     .build()?;
/// assert_eq!(filter.fingerprint_bits(), 16);
/// # Ok::<(), concurrent_cuckoo::BuildError>(())
/// ```
#[derive(Clone, Debug)]
#[must_use]
pub struct Builder<S = DefaultHashBuilder> {
    capacity: Option<usize>,
    false_positive_rate: Option<f64>,
    fingerprint_bits: Option<u32>,
    max_path_len: usize,
    bucket_count: Option<usize>,
    stripe_count: Option<usize>,
    version_count: Option<usize>,
    scheme: HashScheme,
    table_memory: TableMemory,
    hasher: S,
}

impl Builder<DefaultHashBuilder> {
    fn new() -> Self {
        Self {
            capacity: None,
            false_positive_rate: None,
            fingerprint_bits: None,
            max_path_len: DEFAULT_MAX_PATH,
            bucket_count: None,
            stripe_count: None,
            version_count: None,
            scheme: HashScheme::Finalized,
            table_memory: TableMemory::Mapped,
            hasher: DefaultHashBuilder::new(),
        }
    }

    /// Fixes the default hasher's seed, for reproducible runs. Without it
    /// every filter draws a random seed, which keeps an attacker from
    /// crafting colliding keys.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let a = CuckooFilter::builder().capacity(1000).seed(42).build()?;
    /// let b = CuckooFilter::builder().capacity(1000).seed(42).build()?;
    /// a.insert("k")?;
    /// b.insert("k")?;
    /// assert_eq!(a.to_bytes(), b.to_bytes()); // the same seed: the same table
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use = "a builder does nothing until `build` is called"]
    pub fn seed(mut self, seed: u64) -> Self {
        self.hasher = DefaultHashBuilder::with_seed(seed);
        self
    }
}

impl<S> Builder<S> {
    /// Items the filter must hold. Required.
    ///
    /// ```
    /// use concurrent_cuckoo::{BuildError, CuckooFilter};
    /// let filter = CuckooFilter::builder().capacity(10_000).build()?;
    /// assert!(filter.capacity() >= 10_000);
    /// assert_eq!(CuckooFilter::builder().build().unwrap_err(), BuildError::MissingCapacity);
    /// # Ok::<(), BuildError>(())
    /// ```
    #[must_use = "a builder does nothing until `build` is called"]
    pub fn capacity(mut self, capacity: usize) -> Self {
        self.capacity = Some(capacity);
        self
    }

    /// Target false-positive rate in (0, 1); picks the narrowest fingerprint
    /// (8, 16 or 32 bits) whose bound `8 / 2^bits` meets it.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::builder().capacity(1000).false_positive_rate(1e-6).build()?;
    /// assert_eq!(filter.fingerprint_bits(), 32);
    /// assert!(filter.false_positive_bound() <= 1e-6);
    /// # Ok::<(), concurrent_cuckoo::BuildError>(())
    /// ```
    #[must_use = "a builder does nothing until `build` is called"]
    pub fn false_positive_rate(mut self, rate: f64) -> Self {
        self.false_positive_rate = Some(rate);
        self
    }

    /// Fingerprint width: 8, 16 (default) or 32 bits.
    ///
    /// ```
    /// use concurrent_cuckoo::{BuildError, CuckooFilter};
    /// let filter = CuckooFilter::builder().capacity(1000).fingerprint_bits(32).build()?;
    /// assert_eq!(filter.fingerprint_bits(), 32);
    /// let odd = CuckooFilter::builder().capacity(1000).fingerprint_bits(12).build();
    /// assert_eq!(odd.unwrap_err(), BuildError::UnsupportedFingerprintBits(12));
    /// # Ok::<(), BuildError>(())
    /// ```
    #[must_use = "a builder does nothing until `build` is called"]
    pub fn fingerprint_bits(mut self, bits: u32) -> Self {
        self.fingerprint_bits = Some(bits);
        self
    }

    /// Longest displacement path an insert searches (1 to 5, default 5).
    /// Shorter paths make the slowest inserts faster but fill less.
    ///
    /// ```
    /// use concurrent_cuckoo::{BuildError, CuckooFilter};
    /// let filter = CuckooFilter::builder().capacity(1000).max_path_len(3).build()?;
    /// assert_eq!(filter.max_path_len(), 3);
    /// let long = CuckooFilter::builder().capacity(1000).max_path_len(9).build();
    /// assert_eq!(long.unwrap_err(), BuildError::InvalidMaxPathLen(9));
    /// # Ok::<(), BuildError>(())
    /// ```
    #[must_use = "a builder does nothing until `build` is called"]
    pub fn max_path_len(mut self, hops: usize) -> Self {
        self.max_path_len = hops;
        self
    }

    /// Declares every hash this filter is given uniform over all 64 bits
    /// (the output of a full-avalanche 64-bit hash function: XXH3, as the
    /// default hasher, wyhash, SipHash), so that it uses their bits as
    /// they are instead of mixing them first. Default `false`.
    ///
    /// Without it every hash goes through a 64-bit finalizer (two
    /// multiplies, three xor-shifts: `src/index.rs`), so that hashes with
    /// all their entropy in a few bits still spread over the table. On
    /// hashes that are uniform already it is pure cost: about a fifth of
    /// an in-cache lookup (`docs/benchmarks.md`, issue 34).
    ///
    /// **Do not set it** for hashes whose entropy sits in some bits only
    /// (a 32-bit RSS, Toeplitz or CRC value widened to `u64`, sequential
    /// IDs, the output of a weak hasher such as FxHash): the bucket comes
    /// from the high 32 bits, so such hashes crowd into a few buckets and
    /// inserts fail with [`Full`](crate::InsertError::Full) long before
    /// capacity. Nothing is ever answered wrongly either way: this only
    /// decides how well the table fills.
    ///
    /// The choice is part of the filter's layout: it is saved with it
    /// (format version 1, `docs/format.md`) and a loaded filter keeps it
    /// ([`CuckooFilter::uniform_hashes`]).
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::builder().capacity(1000).uniform_hashes(true).build()?;
    /// let h = filter.hasher().hash_one("k"); // XXH3: uniform
    /// filter.insert_hash(h)?;
    /// assert!(filter.contains("k") && filter.uniform_hashes());
    /// # use std::hash::BuildHasher;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use = "a builder does nothing until `build` is called"]
    pub fn uniform_hashes(mut self, uniform: bool) -> Self {
        self.scheme = if uniform {
            HashScheme::Raw
        } else {
            HashScheme::Finalized
        };
        self
    }

    /// Uses `hasher` instead of the default. Any [`BuildHasher`] works for
    /// the filter's own operations; saving and loading
    /// ([`to_bytes`](CuckooFilter::to_bytes) and the rest) need a
    /// [`PersistentHasher`](crate::PersistentHasher).
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// use std::collections::hash_map::RandomState;
    /// let filter = CuckooFilter::builder().capacity(1000).hasher(RandomState::new()).build()?;
    /// filter.insert("k")?;
    /// assert!(filter.contains("k"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use = "a builder does nothing until `build` is called"]
    pub fn hasher<S2>(self, hasher: S2) -> Builder<S2> {
        Builder {
            capacity: self.capacity,
            false_positive_rate: self.false_positive_rate,
            fingerprint_bits: self.fingerprint_bits,
            max_path_len: self.max_path_len,
            bucket_count: self.bucket_count,
            stripe_count: self.stripe_count,
            version_count: self.version_count,
            scheme: self.scheme,
            table_memory: self.table_memory,
            hasher,
        }
    }

    /// Where the filter's table gets its memory (see [`TableMemory`]):
    /// by default large tables are mappings of their own on 2 MiB pages;
    /// [`TableMemory::GlobalAllocator`] takes every byte from the global
    /// allocator, for a host that accounts for memory through it.
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, TableMemory};
    /// let filter = CuckooFilter::builder()
    ///     .capacity(1000)
    ///     .table_memory(TableMemory::GlobalAllocator)
    ///     .build()?;
    /// assert_eq!(filter.table_memory(), TableMemory::GlobalAllocator);
    /// assert_eq!(filter.clone().table_memory(), TableMemory::GlobalAllocator);
    /// # Ok::<(), concurrent_cuckoo::BuildError>(())
    /// ```
    #[must_use = "a builder does nothing until `build` is called"]
    pub fn table_memory(mut self, memory: TableMemory) -> Self {
        self.table_memory = memory;
        self
    }

    crate::unstable_api! {
        /// Exact bucket count (even, >= 2), overriding capacity-based sizing.
        /// For tests and loom models that need a tiny, fully known table.
        ///
        /// **Unstable**: a hook for tests and measurements, hidden from the docs;
        /// it may change or go away in any release.
        #[must_use = "a builder does nothing until `build` is called"]
        pub fn bucket_count(mut self, buckets: usize) -> Self {
            self.bucket_count = Some(buckets);
            self
        }
    }

    crate::unstable_api! {
        /// Exact stripe count (a power of two). For tests and loom models.
        ///
        /// **Unstable**: a hook for tests and measurements, hidden from the docs;
        /// it may change or go away in any release.
        #[must_use = "a builder does nothing until `build` is called"]
        pub fn stripe_count(mut self, stripes: usize) -> Self {
            self.stripe_count = Some(stripes);
            self
        }
    }

    crate::unstable_api! {
        /// Exact count of move versions (a power of two, at least the stripe
        /// count). For tests and the retry measurements.
        ///
        /// **Unstable**: a hook for tests and measurements, hidden from the docs;
        /// it may change or go away in any release.
        #[must_use = "a builder does nothing until `build` is called"]
        pub fn version_count(mut self, versions: usize) -> Self {
            self.version_count = Some(versions);
            self
        }
    }

    /// Builds the filter.
    ///
    /// ```
    /// use concurrent_cuckoo::{BuildError, CuckooFilter};
    /// let filter = CuckooFilter::builder().capacity(1000).build()?;
    /// assert!(filter.is_empty());
    /// let bad = CuckooFilter::builder().capacity(1000).false_positive_rate(1.5).build();
    /// assert_eq!(bad.unwrap_err(), BuildError::InvalidFalsePositiveRate(1.5));
    /// # Ok::<(), BuildError>(())
    /// ```
    ///
    /// # Errors
    /// A [`BuildError`] for a missing or overflowing capacity, a
    /// false-positive rate outside (0, 1), an unsupported or too short
    /// fingerprint width, an out-of-range tuning parameter, or a failed
    /// allocation.
    pub fn build(self) -> Result<CuckooFilter<S>, BuildError> {
        let bits = self.choose_bits()?;
        let buckets = match (self.bucket_count, self.capacity) {
            (Some(b), _) if b < 2 || !b.is_multiple_of(2) || b as u64 > IndexMap::MAX_BUCKETS => {
                return Err(BuildError::InvalidBucketCount(b))
            }
            (Some(b), _) => b,
            (None, Some(n)) => buckets_for_capacity(n)?,
            (None, None) => return Err(BuildError::MissingCapacity),
        };
        if !(1..=MAX_PATH_LIMIT).contains(&self.max_path_len) {
            return Err(BuildError::InvalidMaxPathLen(self.max_path_len));
        }
        if let Some(s) = self.stripe_count {
            if !s.is_power_of_two() || s > 1 << 16 {
                return Err(BuildError::InvalidStripeCount(s));
            }
        }
        if let Some(v) = self.version_count {
            let stripes = self
                .stripe_count
                .unwrap_or_else(|| crate::stripes::Stripes::default_count(buckets));
            if !v.is_power_of_two() || v > 1 << 20 || v < stripes {
                return Err(BuildError::InvalidVersionCount(v));
            }
        }
        let (stripes, versions, path) = (self.stripe_count, self.version_count, self.max_path_len);
        let table = table_of_width!(bits, F => RawTable::<F>::new(
            IndexMap::new(buckets, self.scheme),
            stripes,
            versions,
            path,
            self.table_memory,
        )
        .map_err(BuildError::AllocationFailed)?);
        Ok(CuckooFilter::from_parts(table, self.hasher))
    }

    fn choose_bits(&self) -> Result<u32, BuildError> {
        if let Some(bits) = self.fingerprint_bits {
            if !matches!(bits, 8 | 16 | 32) {
                return Err(BuildError::UnsupportedFingerprintBits(bits));
            }
        }
        let Some(rate) = self.false_positive_rate else {
            return Ok(self.fingerprint_bits.unwrap_or(16));
        };
        if !(rate > 0.0 && rate < 1.0) {
            return Err(BuildError::InvalidFalsePositiveRate(rate));
        }
        let bound = |bits: u32| (2 * SLOTS) as f64 / 2f64.powi(bits as i32);
        match self.fingerprint_bits {
            Some(bits) if bound(bits) <= rate => Ok(bits),
            Some(bits) => Err(BuildError::FingerprintTooShort { bits, rate }),
            None => [8, 16, 32]
                .into_iter()
                .find(|&bits| bound(bits) <= rate)
                .ok_or(BuildError::FingerprintTooShort { bits: 32, rate }),
        }
    }
}

/// The [`Stats`] of one table: a filter's, or one level of a growing
/// filter's.
pub(crate) fn table_stats(table: &Table) -> Stats {
    with_table!(table, t => {
        let c = t.stripes.counters();
        let mut path_lengths = [0u64; 6];
        path_lengths[..c.path_lengths.len()].copy_from_slice(&c.path_lengths);
        let len = t.len();
        let capacity = t.bucket_count() * SLOTS;
        Stats {
            len,
            capacity,
            load_factor: len as f64 / capacity as f64,
            memory_usage: t.memory_usage(),
            fingerprint_bits: t.fingerprint_bits(),
            bucket_count: t.bucket_count(),
            stripes: t.stripes.count(),
            max_path_len: t.max_path,
            inserts: c.inserts,
            removes: c.removes,
            relocations: c.moves,
            failed_inserts: c.full,
            duplicate_refusals: c.duplicates,
            path_lengths,
        }
    })
}

/// Buckets for `capacity` items: `capacity / 0.9` slots plus a little slack
/// for small tables, rounded up to an even number of buckets.
pub(crate) fn buckets_for_capacity(capacity: usize) -> Result<usize, BuildError> {
    buckets_for_load(capacity, SLOTS, TARGET_LOAD)
}

/// [`buckets_for_capacity`] for buckets of `slots` slots filled to
/// `target_load` (a windowed table's 32-bit lanes: two a bucket).
pub(crate) fn buckets_for_load(
    capacity: usize,
    slots_per_bucket: usize,
    target_load: f64,
) -> Result<usize, BuildError> {
    let n = capacity as f64;
    let slots = n / target_load + SMALL_TABLE_SLACK * n.sqrt();
    let buckets = (slots / slots_per_bucket as f64).ceil().max(2.0);
    let buckets = (buckets as u64).next_multiple_of(2);
    if buckets > IndexMap::MAX_BUCKETS
        || buckets
            .checked_mul(16)
            .is_none_or(|b| b > isize::MAX as u64)
    {
        return Err(BuildError::CapacityOverflow {
            requested: capacity as u64,
        });
    }
    Ok(buckets as usize)
}

#[cfg(all(test, not(concurrent_cuckoo_loom)))]
mod tests {
    use super::*;

    #[test]
    fn sizing_is_compact_and_even() {
        assert_eq!(buckets_for_capacity(0).unwrap(), 2);
        assert_eq!(buckets_for_capacity(1).unwrap(), 2);
        for n in [10usize, 1000, 1 << 20, 10_000_000] {
            let b = buckets_for_capacity(n).unwrap();
            assert_eq!(b % 2, 0);
            assert!(b * 4 >= n);
            if n >= 1 << 20 {
                let bits_per_item = (b * 64) as f64 / n as f64;
                assert!(bits_per_item < 18.0, "{bits_per_item}");
            }
        }
        assert!(matches!(
            buckets_for_capacity(usize::MAX),
            Err(BuildError::CapacityOverflow { .. })
        ));
    }
}
