//! [`WindowedCuckooFilter`]: a concurrent cuckoo filter whose keys expire
//! by age, counted in generations.
//!
//! Each lane of a bucket holds a fingerprint and the generation (mod `M`)
//! the key was last inserted in; a lookup compares both in the same probe
//! of the same two bucket words, so it costs what a plain lookup costs
//! whatever the window. `advance` starts the next generation and clears
//! the expired lanes of one slice of the table on the way; inserts take
//! expired lanes as free. The protocol and its proof are in `table.rs`;
//! the encoding in `lanes.rs`.

mod builder;
#[cfg(not(concurrent_cuckoo_loom))]
mod chunks;
mod lanes;
mod path;
#[cfg(not(concurrent_cuckoo_loom))]
mod persist;
#[cfg(not(concurrent_cuckoo_loom))]
pub(crate) use persist::V4_WINDOWED;
mod table;

pub use builder::WindowedBuilder;
#[cfg(not(concurrent_cuckoo_loom))]
pub use chunks::{WindowedChunkDecoder, WindowedChunkEncoder};

use crate::error::{BatchInsertError, BuildError, InsertError};
use crate::hashing::DefaultHashBuilder;
use crate::stages::staged;
use core::hash::{BuildHasher, Hash};
use table::{Loc, WindowTable};

/// A concurrent cuckoo filter of keys that expire: a key whose last
/// [`insert`](Self::insert) ran in generation `t` is found until the
/// generation passes `t + G - 1`, `G` the window
/// ([`generations`](WindowedBuilder::generations)), and is gone (false
/// positives aside) from generation `t + G` on. There is no per-key remove:
/// two keys whose fingerprints collide share one lane, which a refresh of
/// either keeps alive, so a remove could take the other key's only copy.
///
/// ```
/// use concurrent_cuckoo::WindowedCuckooFilter;
/// let f = WindowedCuckooFilter::builder()
///     .capacity(1_000_000) // the most keys live at once
///     .generations(4)      // the current generation and the 3 before it
///     .false_positive_rate(1e-3)
///     .seed(7)
///     .build()?;
/// f.insert("10.0.0.1")?;
/// for _ in 0..3 {
///     f.advance();
///     assert!(f.contains("10.0.0.1"));
/// }
/// f.advance(); // generation 4: inserted in 0, so expired
/// assert!(!f.contains("10.0.0.1"));
/// assert_eq!((f.generation(), f.len()), (4, 0));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Guarantees
/// * **Exact window, for every thread**: found while `generation() <= t +
///   G - 1` and gone from `t + G`, where `t` is the generation current at
///   the moment the insert took effect (inside the call: never older than
///   the generation when it was called). A lookup racing an `advance` (or
///   an `advance_to`) may answer either way only for a key that expires in
///   it. (At the last generation, `2^63 - 1`, each advance expires every
///   key: [`advance`](Self::advance).)
/// * **Never full at capacity**: with at most `capacity` keys live, inserts
///   succeed for any number of generations. Expired lanes are free to any
///   insert at once, and the sweep clears them in slices (below).
/// * **False positives** below [`false_positive_bound`](Self::false_positive_bound)
///   `= 8 / 2^f` at every moment: expired lanes never match.
/// * **Fixed memory**, the plain filter's buckets for the capacity
///   (16-bit slots) plus per-stripe tag counters: about 1.01x a
///   [`CuckooFilter`](crate::CuckooFilter) of the same capacity and rate
///   (`tests/windowed.rs` measures it).
///
/// # Cost of the sweep
/// Each generation, `buckets / P` buckets must be visited, with
/// `P = M - 1 - G >= 2` (the generations an expired lane may wait before its tag would
/// come round again), each under its stripe lock for a few nanoseconds.
/// Inserts do it as they go (one in 64 sweeps the next 64 buckets, about
/// a bucket per insert), [`sweep_ahead`](Self::sweep_ahead) lets a thread
/// of yours do it, and `advance` sweeps what is left: nothing when a
/// generation saw at least `buckets / P` inserts. The sweep never waits
/// for lookups; lookups never wait for it.
pub struct WindowedCuckooFilter<S = DefaultHashBuilder> {
    table: WindowTable,
    hasher: S,
}

impl WindowedCuckooFilter {
    /// A builder; [`capacity`](WindowedBuilder::capacity) is required.
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(1000).build()?;
    /// assert_eq!(f.generations(), 4); // the default window
    /// # Ok::<(), concurrent_cuckoo::BuildError>(())
    /// ```
    pub fn builder() -> WindowedBuilder {
        WindowedBuilder::new()
    }

    /// A filter of `capacity` live keys over the default window of 4
    /// generations, 13-bit fingerprints beside 3-bit age tags (a
    /// false-positive bound of about 0.1%), the default hasher with a random seed: the windowed
    /// counterpart of [`CuckooFilter::with_capacity`](crate::CuckooFilter::with_capacity).
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::with_capacity(1000);
    /// assert!(f.slots() >= 1000);
    /// assert_eq!(f.fingerprint_bits(), 13);
    /// assert_eq!(f.generations(), 4);
    /// ```
    ///
    /// # Panics
    /// If the capacity overflows what a filter can address or the
    /// allocation fails; [`try_with_capacity`](Self::try_with_capacity)
    /// returns the error instead.
    #[must_use]
    pub fn with_capacity(capacity: usize) -> Self {
        match Self::try_with_capacity(capacity) {
            Ok(filter) => filter,
            Err(e) => panic!("WindowedCuckooFilter::with_capacity({capacity}): {e}"),
        }
    }

    /// [`with_capacity`](Self::with_capacity) that returns the error
    /// instead of panicking.
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// assert!(WindowedCuckooFilter::try_with_capacity(usize::MAX).is_err());
    /// ```
    ///
    /// # Errors
    /// As [`WindowedBuilder::build`].
    pub fn try_with_capacity(capacity: usize) -> Result<Self, BuildError> {
        Self::builder().capacity(capacity).build()
    }
}

impl<S: BuildHasher> WindowedCuckooFilter<S> {
    /// Inserts `key` into the current generation; a key already present
    /// (live or expired) is refreshed, not stored twice.
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(100).generations(2).build()?;
    /// f.insert("k")?;
    /// f.advance();
    /// f.insert("k")?; // refreshed: now lives through generation 2
    /// f.advance();
    /// assert!(f.contains("k") && f.len() == 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`InsertError::Full`] only with more than `capacity` keys live
    /// (or, rarely, near it, as the plain filter).
    pub fn insert<K: Hash + ?Sized>(&self, key: &K) -> Result<(), InsertError> {
        self.insert_hash(self.hasher.hash_one(key))
    }

    /// [`insert`](Self::insert) of a 64-bit hash (the filter's hasher's
    /// output, or your own).
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(100).build()?;
    /// f.insert_hash(0xDEAD_BEEF)?;
    /// assert!(f.contains_hash(0xDEAD_BEEF));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`insert`](Self::insert).
    pub fn insert_hash(&self, hash: u64) -> Result<(), InsertError> {
        self.table.insert(&self.table.locate(hash))
    }

    /// Whether `key` is live: inserted within the window (false positives
    /// aside). Takes no lock in the common case.
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(100).build()?;
    /// assert!(!f.contains("k"));
    /// f.insert("k")?;
    /// assert!(f.contains("k"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn contains<K: Hash + ?Sized>(&self, key: &K) -> bool {
        self.contains_hash(self.hasher.hash_one(key))
    }

    /// [`contains`](Self::contains) of a 64-bit hash.
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(100).build()?;
    /// f.insert_hash(7)?;
    /// assert!(f.contains_hash(7));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn contains_hash(&self, hash: u64) -> bool {
        let loc = self.table.locate(hash);
        self.table.prefetch(&loc);
        self.table.contains(&loc)
    }

    /// Whether `key` would be live at `generation` if the filter advanced
    /// to it now, changing nothing: for readers whose clock is ahead of
    /// the filter's (a server's replica answers by its own clock while
    /// only the primary advances). At or before the current generation it
    /// is [`contains`](Self::contains); from `generation() + G` on, `false`.
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(100).generations(3).build()?;
    /// f.insert("old")?;
    /// f.advance();
    /// f.insert("new")?; // generation 1: lives through generation 3
    /// assert!(f.contains_at("old", 2) && !f.contains_at("old", 3));
    /// assert!(f.contains_at("new", 3) && !f.contains_at("new", 4));
    /// assert_eq!((f.len_at(3), f.generation()), (1, 1)); // nothing changed
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn contains_at<K: Hash + ?Sized>(&self, key: &K, generation: u64) -> bool {
        self.contains_hash_at(self.hasher.hash_one(key), generation)
    }

    /// [`contains_at`](Self::contains_at) of a 64-bit hash.
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(100).generations(2).build()?;
    /// f.insert_hash(7)?;
    /// assert!(f.contains_hash_at(7, 1) && !f.contains_hash_at(7, 2));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn contains_hash_at(&self, hash: u64, generation: u64) -> bool {
        let loc = self.table.locate(hash);
        self.table.prefetch(&loc);
        self.table.contains_at(&loc, generation)
    }

    /// `out[i] = contains(&keys[i])`, in stages of 32 keys (every bucket
    /// of the next stage requested before the current one is probed), so
    /// their cache misses overlap. Each answer is exactly `contains`'s.
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(100).build()?;
    /// f.insert("a")?;
    /// let mut out = [false; 2];
    /// f.contains_batch(&["a", "b"], &mut out);
    /// assert!(out[0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Panics
    /// If `keys.len() != out.len()`, with the message
    /// `"contains_batch: keys and out differ in length"`, as every filter's
    /// batch lookup.
    pub fn contains_batch<K: Hash>(&self, keys: &[K], out: &mut [bool]) {
        assert_eq!(
            keys.len(),
            out.len(),
            "contains_batch: keys and out differ in length"
        );
        self.contains_batch_with(|i| self.hasher.hash_one(&keys[i]), out);
    }

    /// [`contains_batch`](Self::contains_batch) of 64-bit hashes.
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(100).build()?;
    /// f.insert_hash(1)?;
    /// let mut out = [false; 2];
    /// f.contains_hash_batch(&[1, 2], &mut out);
    /// assert!(out[0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Panics
    /// If `hashes.len() != out.len()`, with the message
    /// `"contains_hash_batch: hashes and out differ in length"`.
    pub fn contains_hash_batch(&self, hashes: &[u64], out: &mut [bool]) {
        assert_eq!(
            hashes.len(),
            out.len(),
            "contains_hash_batch: hashes and out differ in length"
        );
        self.contains_batch_with(|i| hashes[i], out);
    }

    /// Inserts every key in order, prefetching ahead as
    /// [`contains_batch`](Self::contains_batch); exactly the effects of one
    /// `insert` per key.
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(100).build()?;
    /// f.insert_batch(&["a", "b", "a"])?;
    /// assert_eq!(f.len(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// The first refused key's error and how many keys went in before it.
    pub fn insert_batch<K: Hash>(&self, keys: &[K]) -> Result<(), BatchInsertError> {
        self.insert_hash_batch_with(keys.len(), |i| self.hasher.hash_one(&keys[i]))
    }

    /// [`insert_batch`](Self::insert_batch) of 64-bit hashes.
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(100).build()?;
    /// f.insert_hash_batch(&[1, 2, 3])?;
    /// assert!(f.contains_hash(2));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`insert_batch`](Self::insert_batch).
    pub fn insert_hash_batch(&self, hashes: &[u64]) -> Result<(), BatchInsertError> {
        self.insert_hash_batch_with(hashes.len(), |i| hashes[i])
    }

    fn insert_hash_batch_with(
        &self,
        n: usize,
        hash_at: impl Fn(usize) -> u64,
    ) -> Result<(), BatchInsertError> {
        let mut failed = None;
        self.batch(n, hash_at, |i, loc| {
            if failed.is_none() {
                if let Err(e) = self.table.insert(loc) {
                    failed = Some(BatchInsertError::new(i, e));
                }
            }
        });
        failed.map_or(Ok(()), Err)
    }

    /// `out[i] = contains(hash_at(i))`, in [`staged`] stages (every
    /// bucket of the next 32 keys requested before the current 32 are
    /// probed).
    #[inline(always)]
    fn contains_batch_with(&self, hash_at: impl Fn(usize) -> u64, out: &mut [bool]) {
        let (table, locator) = (&self.table, self.table.locator());
        staged(
            out.len(),
            |i| locator.locate(hash_at(i)),
            |loc| table.prefetch(loc),
            |i, loc| out[i] = table.contains(loc),
        );
    }

    /// Runs `op` on the location of each of `n` hashes in order, in
    /// [`staged`] stages (the buckets of the next 32 keys requested before
    /// the current 32 are written).
    #[inline(always)]
    fn batch(&self, n: usize, hash_at: impl Fn(usize) -> u64, op: impl FnMut(usize, &Loc)) {
        let (table, locator) = (&self.table, self.table.locator());
        staged(
            n,
            |i| locator.locate(hash_at(i)),
            |loc| table.prefetch(loc),
            op,
        );
    }

    /// The filter's hasher.
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// use std::hash::BuildHasher;
    /// let f = WindowedCuckooFilter::builder().capacity(100).build()?;
    /// f.insert_hash(f.hasher().hash_one("k"))?;
    /// assert!(f.contains("k"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn hasher(&self) -> &S {
        &self.hasher
    }
}

impl<S> WindowedCuckooFilter<S> {
    /// Starts the next generation and returns it: keys last inserted `G`
    /// generations ago expire. Sweeps what is left of this generation's
    /// slice of the table (`buckets / (M - 1 - G)` buckets, each under its
    /// stripe lock) that inserts and [`sweep_ahead`](Self::sweep_ahead)
    /// did not sweep already; calls from several threads run one after
    /// another. At the last generation, `2^63 - 1`, the generation stays
    /// and every key expires (a reset, as [`advance_to`](Self::advance_to)
    /// past the window), so no key outlives its window however far the
    /// counter went.
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(100).generations(1).build()?;
    /// f.insert("k")?;
    /// assert_eq!(f.advance(), 1);
    /// assert!(!f.contains("k"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn advance(&self) -> u64 {
        self.table.advance()
    }

    /// Sweeps up to `max_buckets` buckets of the slice that the next
    /// [`advance`](Self::advance) would otherwise sweep, and returns how
    /// many; 0 when that slice is done or another thread is sweeping or
    /// advancing (it never waits). Inserts already call it (one in 64
    /// sweeps 64 buckets); a thread that calls it between advances, in
    /// steps small enough for its latency goals, leaves `advance` only
    /// the generation change. Answers never depend on it: an expired lane
    /// is free space whether swept or not.
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(10_000).build()?;
    /// while f.sweep_ahead(256) > 0 {}
    /// assert_eq!(f.sweep_ahead(256), 0); // this generation's slice is done
    /// f.advance(); // sweeps nothing
    /// assert!(f.sweep_ahead(256) > 0); // the next slice
    /// # Ok::<(), concurrent_cuckoo::BuildError>(())
    /// ```
    pub fn sweep_ahead(&self, max_buckets: usize) -> usize {
        self.table.sweep_ahead(max_buckets)
    }

    /// Buckets of the current generation's slice that neither inserts nor
    /// [`sweep_ahead`](Self::sweep_ahead) swept yet: what the next
    /// [`advance`](Self::advance) would sweep, were nothing else to run
    /// first (a snapshot while other threads insert, sweep or advance).
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(10_000).build()?;
    /// let left = f.sweep_left();
    /// assert_eq!(f.sweep_ahead(100), 100);
    /// assert_eq!(f.sweep_left(), left - 100);
    /// # Ok::<(), concurrent_cuckoo::BuildError>(())
    /// ```
    #[must_use]
    pub fn sweep_left(&self) -> usize {
        self.table.sweep_left()
    }

    /// Advances until the generation is at least `generation` (a clock's:
    /// `elapsed / window`), returning the generation, with the answers of
    /// as many [`advance`](Self::advance)s. A jump of at least `M - 1 - G`
    /// generations (`M = 2^`[`tag_bits`](Self::tag_bits)) costs one pass
    /// over the table under every stripe lock, whatever its length, and a
    /// jump of at least `G`, past every key's window, is a reset (stores
    /// of zero over the occupied bucket words; nothing when the filter is
    /// empty). Writers wait for the pass; lookups do not block on it (a
    /// lookup that could miss because of it retries, and then waits) and
    /// answer as before or after the jump. Generations stop at `2^63 - 1`:
    /// a target past it lands there with every key expired, as each
    /// `advance` there does.
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// use std::time::{Duration, Instant};
    /// let f = WindowedCuckooFilter::builder().capacity(100).generations(4).build()?;
    /// let (start, window) = (Instant::now(), Duration::from_secs(15));
    /// f.insert("k")?;
    /// // Later, at `now`: catch up with the clock.
    /// let now = start + Duration::from_secs(3600);
    /// let target = (now - start).as_secs() / window.as_secs();
    /// assert_eq!(f.advance_to(target), 240);
    /// assert!(!f.contains("k"));
    /// assert_eq!(f.advance_to(10), 240); // never backwards
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn advance_to(&self, generation: u64) -> u64 {
        self.table.advance_to(generation)
    }

    /// The current generation (0 when built).
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(100).build()?;
    /// f.advance();
    /// assert_eq!(f.generation(), 1);
    /// # Ok::<(), concurrent_cuckoo::BuildError>(())
    /// ```
    #[must_use]
    pub fn generation(&self) -> u64 {
        self.table.generation()
    }

    /// `G`: generations a key lives after its last insert.
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(100).generations(3).build()?;
    /// assert_eq!(f.generations(), 3);
    /// # Ok::<(), concurrent_cuckoo::BuildError>(())
    /// ```
    #[must_use]
    pub fn generations(&self) -> u64 {
        self.table.layout.generations()
    }

    /// Where the filter's table got its memory
    /// ([`WindowedBuilder::table_memory`], or
    /// [`ReadOptions::table_memory`](crate::ReadOptions::table_memory) for
    /// a decoded filter); its copies take theirs from the same place.
    ///
    /// ```
    /// use concurrent_cuckoo::{TableMemory, WindowedCuckooFilter};
    /// let f = WindowedCuckooFilter::builder().capacity(100).build()?;
    /// assert_eq!(f.table_memory(), TableMemory::Mapped);
    /// # Ok::<(), concurrent_cuckoo::BuildError>(())
    /// ```
    #[must_use]
    pub fn table_memory(&self) -> crate::TableMemory {
        self.table.stripes.memory()
    }

    /// Live keys, each once (keys whose fingerprints collide in one bucket
    /// pair count once). Exact when no thread writes; while threads write
    /// or advance it is a sum of per-stripe counters read one after
    /// another, not a snapshot (a lane refreshed, moved or replaced during
    /// the call may be counted twice or not at all).
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(100).build()?;
    /// f.insert("a")?;
    /// f.insert("a")?;
    /// assert_eq!(f.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// [`len`](Self::len) as if the filter advanced to `generation` now
    /// (see [`contains_at`](Self::contains_at)); `len()` at or before the
    /// current generation.
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(100).generations(2).build()?;
    /// f.insert("a")?;
    /// f.advance();
    /// f.insert("b")?;
    /// assert_eq!((f.len_at(1), f.len_at(2), f.len_at(3)), (2, 1, 0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn len_at(&self, generation: u64) -> usize {
        self.table.len_at(generation)
    }

    /// Whether no key is live.
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(100).build()?;
    /// assert!(f.is_empty());
    /// # Ok::<(), concurrent_cuckoo::BuildError>(())
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Lanes in the table (4 per bucket of 16-bit lanes, 2 of 32-bit):
    /// at least `capacity / 0.9` (`capacity / 0.8` in 32-bit lanes).
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(1000).build()?;
    /// assert!(f.slots() >= 1000);
    /// # Ok::<(), concurrent_cuckoo::BuildError>(())
    /// ```
    #[must_use]
    pub fn slots(&self) -> usize {
        self.table.buckets.len() * self.table.layout.slots()
    }

    /// Bytes held: buckets, stripe locks and versions, tag counters. Fixed
    /// at build.
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, WindowedCuckooFilter};
    /// let w = WindowedCuckooFilter::builder().capacity(100_000).false_positive_rate(1e-3).build()?;
    /// let plain = CuckooFilter::builder().capacity(100_000).false_positive_rate(1e-3).build()?;
    /// assert!(w.memory_usage() as f64 <= 1.15 * plain.memory_usage() as f64);
    /// # Ok::<(), concurrent_cuckoo::BuildError>(())
    /// ```
    #[must_use]
    pub fn memory_usage(&self) -> usize {
        self.table.memory_usage()
    }

    /// Lane bits: 16 (four lanes a bucket) unless the rate or the window
    /// needs more than 16-bit lanes hold (`generations`), then 32 (two a
    /// bucket).
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let b = || WindowedCuckooFilter::builder().capacity(100);
    /// assert_eq!(b().false_positive_rate(1e-3).build()?.lane_bits(), 16);
    /// let f = b().false_positive_rate(1e-6).build()?;
    /// assert_eq!((f.lane_bits(), f.fingerprint_bits(), f.tag_bits()), (32, 29, 3));
    /// assert_eq!(b().generations(100).build()?.lane_bits(), 32);
    /// # Ok::<(), concurrent_cuckoo::BuildError>(())
    /// ```
    #[must_use]
    pub fn lane_bits(&self) -> u32 {
        self.table.layout.lane_bits()
    }

    /// Fingerprint bits `f` (the rest of a lane is the tag).
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(100).false_positive_rate(1e-3).build()?;
    /// assert_eq!((f.fingerprint_bits(), f.tag_bits()), (13, 3));
    /// # Ok::<(), concurrent_cuckoo::BuildError>(())
    /// ```
    #[must_use]
    pub fn fingerprint_bits(&self) -> u32 {
        self.table.layout.fp_bits()
    }

    /// Tag bits `t`: tags are generations mod `2^t`.
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(100).generations(8).build()?;
    /// assert_eq!(f.tag_bits(), 4);
    /// # Ok::<(), concurrent_cuckoo::BuildError>(())
    /// ```
    #[must_use]
    pub fn tag_bits(&self) -> u32 {
        self.table.layout.tag_bits()
    }

    /// The false-positive bound `2 b / 2^f` (`b` lanes a bucket: `8 /
    /// 2^f` in 16-bit lanes, `4 / 2^f` in 32-bit ones), at every moment
    /// (expired lanes never match).
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(100).false_positive_rate(1e-3).build()?;
    /// assert!(f.false_positive_bound() <= 1e-3);
    /// # Ok::<(), concurrent_cuckoo::BuildError>(())
    /// ```
    #[must_use]
    pub fn false_positive_bound(&self) -> f64 {
        (2 * self.table.layout.slots()) as f64 / (1u64 << self.fingerprint_bits()) as f64
    }

    /// A snapshot of size and counters (relaxed reads: exact when no
    /// thread writes).
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(100).generations(1).build()?;
    /// f.insert("a")?;
    /// f.insert("a")?;
    /// f.advance();
    /// let s = f.stats();
    /// assert_eq!((s.inserts, s.refreshes, s.len, s.generation), (1, 1, 0, 1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn stats(&self) -> WindowedStats {
        let c = self.table.counters();
        let (occupied, _) = self.table.scan_if_small();
        WindowedStats {
            len: self.len(),
            slots: self.slots(),
            occupied,
            memory_usage: self.memory_usage(),
            generation: self.generation(),
            generations: self.generations(),
            fingerprint_bits: self.fingerprint_bits(),
            tag_bits: self.tag_bits(),
            bucket_count: self.table.buckets.len(),
            stripes: self.table.stripes.count(),
            inserts: c.path_lengths.iter().sum(),
            refreshes: c.removes,
            relocations: c.moves,
            swept: self.table.swept(),
            failed_inserts: c.full,
        }
    }

    crate::unstable_api! {
        /// `(fingerprint, primary bucket, alternate bucket)` of a hash. For
        /// exact models in tests.
        ///
        /// **Unstable**: a hook for tests, hidden from the docs.
        #[must_use]
        pub fn signature_of_hash(&self, hash: u64) -> (u64, usize, usize) {
            let loc = self.table.locate(hash);
            (loc.fp, loc.i1, loc.i2)
        }
    }

    crate::unstable_api! {
        /// A hash whose primary bucket is `bucket` and whose low 32 bits after
        /// the finalizer (and so fingerprint) are `low`. For loom models.
        ///
        /// **Unstable**: a hook for tests, hidden from the docs.
        #[must_use]
        pub fn hash_for_bucket(&self, bucket: usize, low: u32) -> u64 {
            self.table.index.hash_for(bucket, low)
        }
    }

    crate::unstable_api! {
        /// `(occupied lanes, live lanes)` by scanning the table. For tests.
        ///
        /// **Unstable**: a hook for tests, hidden from the docs.
        #[must_use]
        pub fn scan_lanes(&self) -> (usize, usize) {
            self.table.scan()
        }
    }
}

#[cfg(not(concurrent_cuckoo_loom))]
impl<S: Clone> WindowedCuckooFilter<S> {
    /// A copy of the filter: its generation and buckets at one moment,
    /// copied beside writers as [`to_bytes`](Self::to_bytes) copies them
    /// (a writer waits for one group of lock stripes' copy at most;
    /// `advance` waits for the copy; lookups never), the same window and a
    /// clone of the hasher; the copy's `stats` counters start at zero.
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(100).generations(2).build()?;
    /// f.insert("k")?;
    /// let copy = f.try_clone()?;
    /// f.advance_to(2);
    /// assert!(!f.contains("k") && copy.contains("k") && copy.generation() == 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`AllocationError`](crate::AllocationError) when the memory for the
    /// copy cannot be had (`clone` panics then).
    pub fn try_clone(&self) -> Result<Self, crate::AllocationError> {
        Ok(Self {
            table: self.table.try_clone()?,
            hasher: self.hasher.clone(),
        })
    }
}

impl<S: Clone> WindowedCuckooFilter<S> {
    /// An empty filter of this one's geometry, window, hasher and table
    /// memory at `generation` (capped at 2^63, as
    /// [`advance_to`](Self::advance_to) caps it): what
    /// `advance_to(generation)` leaves of this filter, byte for byte,
    /// when every key in it has expired by then (`generation >=
    /// generation() + generations()`), at the cost of one zeroed
    /// allocation of a table instead of a sweep of this one. A host that
    /// must not stall on the catch-up of a filter left idle for longer
    /// than its window puts it in this one's place, and frees this one
    /// where it likes (another thread). This filter is not changed.
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(1000).generations(3).seed(1).build()?;
    /// f.insert("k")?;
    /// let fresh = f.try_empty_at(1000)?;
    /// assert!(fresh.is_empty() && fresh.generation() == 1000);
    /// assert!(f.contains("k"), "the filter itself is unchanged");
    /// f.advance_to(1000);
    /// assert_eq!(fresh.to_bytes(), f.to_bytes());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`AllocationError`](crate::AllocationError) when the memory for the
    /// table cannot be had.
    #[cfg(not(concurrent_cuckoo_loom))]
    pub fn try_empty_at(&self, generation: u64) -> Result<Self, crate::AllocationError> {
        let t = &self.table;
        let table = WindowTable::new(
            t.buckets.len(),
            Some(t.stripes.count()),
            t.layout,
            t.max_path,
            t.stripes.memory(),
        )?;
        table.restore(generation.min(table::MAX_GENERATION), core::iter::empty());
        Ok(Self {
            table,
            hasher: self.hasher.clone(),
        })
    }
}

#[cfg(not(concurrent_cuckoo_loom))]
impl<S: Clone> Clone for WindowedCuckooFilter<S> {
    /// [`try_clone`](Self::try_clone).
    ///
    /// # Panics
    /// If the memory for the copy cannot be had, as `Vec::clone` does.
    fn clone(&self) -> Self {
        self.try_clone()
            .unwrap_or_else(|e| panic!("WindowedCuckooFilter::clone: {e}"))
    }
}

impl<S> core::fmt::Debug for WindowedCuckooFilter<S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("WindowedCuckooFilter")
            .field("generation", &self.generation())
            .field("generations", &self.generations())
            .field("len", &self.len())
            .field("buckets", &self.table.buckets.len())
            .finish_non_exhaustive()
    }
}

/// What [`WindowedCuckooFilter::stats`] reports.
///
/// ```
/// use concurrent_cuckoo::WindowedCuckooFilter;
/// let s = WindowedCuckooFilter::builder().capacity(100).build()?.stats();
/// assert_eq!((s.len, s.generation, s.tag_bits + s.fingerprint_bits), (0, 0, 16));
/// # Ok::<(), concurrent_cuckoo::BuildError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct WindowedStats {
    /// Live keys, as [`len`](WindowedCuckooFilter::len).
    pub len: usize,
    /// Lanes, as [`slots`](WindowedCuckooFilter::slots).
    pub slots: usize,
    /// Occupied lanes, live or expired and not yet reclaimed (counted by a
    /// scan for tables of at most 65,536 buckets, else 0).
    pub occupied: usize,
    /// Bytes held, as [`memory_usage`](WindowedCuckooFilter::memory_usage).
    pub memory_usage: usize,
    /// The current generation.
    pub generation: u64,
    /// The window `G`.
    pub generations: u64,
    /// Fingerprint bits.
    pub fingerprint_bits: u32,
    /// Tag bits.
    pub tag_bits: u32,
    /// Buckets.
    pub bucket_count: usize,
    /// Stripe locks.
    pub stripes: usize,
    /// Inserts that stored a new lane.
    pub inserts: u64,
    /// Inserts that refreshed a lane of their fingerprint (live or expired).
    pub refreshes: u64,
    /// Lanes moved by displacement paths.
    pub relocations: u64,
    /// Expired lanes cleared by `advance`'s sweep (inserts reuse others
    /// in place).
    pub swept: u64,
    /// Inserts refused with [`InsertError::Full`].
    pub failed_inserts: u64,
}
