//! A concurrent scalable cuckoo filter: a chain of cuckoo filters (levels),
//! each usually larger than the last. The design is documented on
//! [`ScalableCuckooFilter`], where users can read it.

mod builder;
mod choice;
mod compact;
mod growth;
pub(crate) mod moves;
#[cfg(not(concurrent_cuckoo_loom))]
mod relocate;
mod removal;
mod retire;
mod slots;

pub use builder::ScalableBuilder;
use choice::{Chosen, Finest};
pub use compact::CompactStats;
use growth::Grown;
use moves::MoveSequence;
pub use removal::Removal;
use slots::index_of;
pub(crate) use slots::{Config, Level, LevelHash};

use crate::error::{BatchInsertError, BuildError, InsertError};
use crate::filter::with_table;
use crate::hashing::DefaultHashBuilder;
use crate::lookup::Lookup;
use crate::sync::RawLock;
use crate::sync::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use crate::table::Mode;
use core::fmt;
use core::hash::{BuildHasher, Hash};

/// Most levels a filter may have.
pub(crate) const LEVEL_LIMIT: usize = 64;
/// Key locks serializing `insert_unique` of keys whose hashes share bits.
/// Packed, 64 to a cache line, not padded: padded, they were 32 KiB per
/// filter, nine-tenths of a 1000-item filter's memory (many small filters
/// are common: one per key in the Redis module). They are taken only by
/// `insert_unique`, which also takes two padded stripe locks.
const KEY_LOCKS: usize = 256;

/// A concurrent cuckoo filter that grows: a chain of cuckoo filters
/// (levels), each the growth factor times the size of the last, shared
/// between threads through `&self`. For when the number of items is not known in advance; when it
/// is, a [`CuckooFilter`](crate::CuckooFilter) sized for it is faster (a
/// lookup that misses searches every level) and has no cross-level limit
/// on removes (see [below](#removing-keys-across-levels)).
///
/// ```
/// use concurrent_cuckoo::ScalableCuckooFilter;
/// let filter = ScalableCuckooFilter::with_capacity(1000); // a guess
/// for i in 0..50_000u32 {
///     filter.insert(&i)?; // grows as needed
/// }
/// assert!(filter.levels() > 1);
/// assert!((0..50_000u32).all(|i| filter.contains(&i)));
/// assert!(filter.false_positive_bound() <= 1e-3);
/// # Ok::<(), concurrent_cuckoo::InsertError>(())
/// ```
///
/// # Why levels
/// A cuckoo filter cannot be resized: it keeps fingerprints, not keys, so
/// they cannot be placed in a larger table. The known answer (scalable Bloom
/// filters, Almeida et al. 2007; RedisBloom's `EXPANSION`) is to add a new,
/// larger filter when the current one is full, and to look keys up in all of
/// them.
///
/// # Growth without stopping readers
/// Levels live in a fixed array of `max_levels` slots (an `AtomicPtr` to a
/// boxed level each), freed only under `&mut self`: when the filter is
/// dropped, or by [`reclaim_retired`](Self::reclaim_retired). Slot `s`
/// always holds a level of the same size (`initial_capacity *
/// growth_factor^s` items) and width (see the budget below). `current`
/// says which level takes inserts, and a mask which slots are in use;
/// lookups load both (acquire) and search the current level, then the
/// others in use, so every level they reach is fully built. When the
/// current level refuses an insert with `Full`, the inserting thread takes
/// the growth lock; if the current level has not changed since it looked
/// (a generation count tells, not the index, which comes back to values it
/// had), it
/// 1. switches to another level in use that is at most 3/4 full, the
///    lowest slot such: a level holding a few leftover items is reused;
/// 2. else, below `max_levels` levels in use, opens a free slot: the
///    lowest whose size is at least `growth_factor - 1` times the items of
///    the slots in use (the slot after the current one for a filter that
///    never retired a level), else the highest free slot; a retired slot's
///    level is reopened, not reallocated;
/// 3. else answers `Full`.
///
/// The level chosen in 1 or 2 is offered the key first and becomes
/// current only if it stores it; one that refuses it (full) is skipped
/// for the next, and one that holds 8 copies of its fingerprint refuses
/// the insert (`TooManyDuplicates`). So a refused insert changes nothing:
/// the same levels, the same current level, the same bytes
/// (`tests/refused_insert.rs`; the Redis module replicates only writes
/// that succeeded, so its copies depend on it). Every other thread that
/// hit `Full` waits for the lock, sees the new current level and retries
/// there. Readers never wait for growth (beside a running compaction, a
/// search that finds nothing may wait for one move). Used as a sliding
/// window (insert new keys, remove the oldest), the filter runs forever:
/// when a level is opened every other level in use is more than 3/4 full,
/// so with `L` items stored and `c` the capacity of the smallest slot at
/// most `ceil(4L / 3c) + 1` levels are in use, and memory stays bounded
/// (`tests/window.rs`). Inserts, removes and growth never move
/// fingerprints between levels: a level whose items are never removed
/// stays in use, taking inserts again when the current level fills, until
/// [`compact`](Self::compact) moves them out.
///
/// # Compaction
/// [`compact`](Self::compact) (`&mut self`, run only when called) empties
/// sparse levels into other levels in use *of the same geometry* (bucket
/// count, hash scheme and fingerprint width: with growth factor 1, every
/// slot of one width), each fingerprint into the same bucket pair, which
/// is its keys' pair there too, and retires the levels it empties, giving
/// their memory back. Levels of other sizes cannot take each other's
/// fingerprints (keys are not stored, and a key's buckets depend on the
/// bucket count); they are reused by taking inserts again instead. Copies
/// given the same operations, `compact` included, stay byte-identical
/// (`tests/compact.rs`). [`compact_concurrently`](Self::compact_concurrently)
/// does the same through `&self` beside readers and writers: each move
/// is bracketed by a sequence word that every search which found nothing,
/// and every remove before it takes a copy, checks (`moves.rs`, issue 40).
/// While a move is in flight such searches wait for it (spin, yield,
/// sleep); lookups that hit never do.
///
/// # Memory after deletes
/// When a remove empties a level that no longer takes inserts, the level is
/// *retired*: closed to inserts under all its stripe locks, and, when its
/// table is a mapping of its own (4 MiB and more on Linux, under the
/// default [`TableMemory::Mapped`](crate::TableMemory::Mapped)), its
/// table's memory given back to the operating system
/// (`madvise(MADV_DONTNEED)`; the address range stays reserved and reads
/// as zero, which is an empty table: a lookup that was reading it still
/// answers right). Of two removes that take a level's last items at once,
/// one always sees that the level is empty. Lookups skip retired levels.
/// `clear` empties every level in use and retires all but the oldest one
/// in use; it skips retired levels and writes only buckets that hold
/// something, so it commits no memory that was given back or never
/// touched. A retired level is reopened, not reallocated, when the filter
/// grows to it again.
///
/// A heap table (under 4 MiB, every table under
/// [`TableMemory::GlobalAllocator`](crate::TableMemory::GlobalAllocator),
/// every table off Linux) cannot be given back piecemeal while lookups may
/// read it: a retired level keeps it, and its locks and version words,
/// until the filter is dropped or [`reclaim_retired`](Self::reclaim_retired)
/// (`&mut self`) frees them. [`memory_usage`](Self::memory_usage) counts
/// what is held, retired levels' part included.
///
/// # The false-positive budget
/// A lookup that misses checks every level, so each level adds its own
/// false-positive chance. Each level gets the narrowest fingerprint (8, 16
/// or 32 bits) whose bound `8 / 2^bits`, added to the bounds of the levels
/// before it and to a reserve of `8 / 2^32` for every level that could
/// still follow it (up to `max_levels`), stays within the configured rate:
/// the bound holds however far the filter grows, and early levels use the
/// budget for shorter fingerprints. The bounds of all `max_levels` slots
/// fit the budget, so it holds at every moment, whichever slots are in use
/// and however many levels came and went. A level's width (like its size)
/// depends only on the configuration and its slot, never on which levels
/// are retired, so a copy saved and reloaded at any point and given the
/// same writes stays byte-identical to the original. [`false_positive_bound`](Self::false_positive_bound)
/// reports the bound of the levels in use.
///
/// # Set semantics across levels
/// `insert_unique` is atomic with respect to other `insert_unique` calls of
/// the same key even across growth: it holds one of 256 key locks (chosen
/// by the key's hash) while it checks every level and inserts, so two
/// threads can never both insert a key, one in level k and one in k + 1.
/// The limit of 8 copies of a fingerprint applies per level.
///
/// # Removing keys across levels
/// A key's copy is known only by its fingerprint in each level, and each
/// level has its own size (and maybe width), so a key `a` stored in one
/// level can collide in another level with a key `b` stored there (the
/// same fingerprint and bucket pair *in that level*). Taking `b`'s copy
/// for `a` would leave `b` unfound: a false negative. So
/// [`remove`](Self::remove) first looks `a` up in every level, and takes
/// the copy in the level that *refines* every other level holding a match:
/// the largest. When the levels in use strictly nest, the remove looks
/// them up from the largest down and stops at the first that matches.
///
/// The levels' maps from hashes to buckets *nest* (`index.rs`, "Nested
/// maps"): level `s` has `c * 2^k` buckets for one even `c` and a `k` that
/// grows with `s`; its fingerprints are at least as wide as those of the
/// levels below it; and dropping a bucket's low bits gives the key's
/// bucket in a smaller level. So two keys that collide in a larger level
/// collide in every smaller one. Why taking from the largest matching
/// level `M` is then safe: if the copy there is `a`'s, nothing else
/// changes. If it is `b`'s, `a`'s own copy lies in some level `L` that
/// matches, so `L` is no larger than `M`; `a` and `b` collide in `M`, so
/// they collide in `L`, and `a`'s copy there now stands for `b`. Every key
/// still inserted keeps a copy that answers for it. Within one level, or
/// across levels of one geometry (growth factor 1, one width), any
/// matching copy stands for the key, as in a
/// [`CuckooFilter`](crate::CuckooFilter); the remove takes it from the
/// lowest such slot that is not the current level, so old levels empty
/// and retire. This holds for every growth factor: with one that is not a
/// power of two, a level takes the smallest `c * 2^k` buckets that hold
/// its items, up to twice what it needs (`docs/design.md`).
///
/// A filter decoded from an encoding written before nested maps keeps its
/// levels' maps (and gives new levels the same kind), and there levels of
/// different geometry cannot be ordered: a remove that matches in two of
/// them is refused ([`Removal::Refused`]) and changes nothing, and the key
/// stays found. That happens with at most about
/// [`false_positive_bound`](Self::false_positive_bound) probability for a
/// key stored once, and always for a key whose copies went into two levels
/// of different geometry. Every filter built by this version refuses
/// nothing (`tests/nested_removes.rs`).
///
/// The scan is checked against compaction's moves before the take: a
/// move that hid the key's copy from the scan (it looked at the target
/// before the insert and at the source after the take) could otherwise
/// make a smaller level look like the largest holder (issue 40). Removes
/// therefore never hide another key, whatever the number of levels and
/// whether or not a compaction runs: an item inserted and not removed is
/// always found, provided only keys that were inserted are removed (the
/// paper's condition) and a remove does not race an insert of the same
/// key.
pub struct ScalableCuckooFilter<S = DefaultHashBuilder> {
    /// Level `i` once allocated. A slot's level is freed only by `drop` and
    /// `reclaim_retired` (both `&mut self`); under `&self` a slot changes
    /// only from null to a level, or, under the growth lock, from a retired
    /// level to a new one that keeps the old alive (`Level::replaced`).
    slots: Box<[AtomicPtr<Level>]>,
    /// The slot of the level that takes inserts (the low `INDEX_BITS`
    /// bits; it is allocated and in use), and above them a generation that
    /// every change of the current level increments. A thread that saw an
    /// insert refused compares the whole word to tell whether the filter
    /// changed since: the index alone comes back to values it had (a
    /// switch, a `clear`, a reused slot), and a stale "nobody changed it"
    /// would grow it again or answer `Full` with room left.
    current: AtomicU64,
    /// Bit `i` set while slot `i` is in use (allocated, open, searched by
    /// lookups): set, under the growth lock, before the slot is published
    /// as current; cleared, under the growth lock, after its level closed.
    in_use: AtomicU64,
    /// A word that every remove that may have emptied a level, and every
    /// growth, increments (acquire-release) between its write (the count,
    /// `current`) and its reads of the other's: of two such threads the
    /// later sees the earlier's write, so the last remove from a level and
    /// a concurrent remove or growth cannot both miss that it emptied a
    /// level that no longer takes inserts (relaxed loads alone allow both
    /// to read the other's old value: store buffering).
    retire_order: AtomicUsize,
    /// Incremented around every fingerprint that compaction moves from one
    /// level into another (odd while one is in flight): a search that
    /// found nothing checks it before answering (see `moves.rs`).
    moves: MoveSequence,
    /// Whether some level was retired since the last `reclaim_retired`:
    /// makes that call O(1) when there is nothing to free.
    retired_since_reclaim: AtomicBool,
    /// Held while a level is added, retired or cleared.
    growth: RawLock,
    key_locks: Box<[RawLock]>,
    pub(crate) hasher: S,
    pub(crate) config: Config,
}

// The pointers in `slots` come from `Box::into_raw` and are freed only in
// `drop`: the filter owns its `Level`s.
// SAFETY: it owns them, and `Level` is `Send + Sync` (atomics and locks),
// so sending the filter sends them safely.
unsafe impl<S: Send> Send for ScalableCuckooFilter<S> {}
// SAFETY: as above; every method takes `&self` and synchronizes through
// the levels' atomics and locks.
unsafe impl<S: Sync> Sync for ScalableCuckooFilter<S> {}

/// A growing filter whose first level holds
/// [`DEFAULT_INITIAL_CAPACITY`](ScalableCuckooFilter::DEFAULT_INITIAL_CAPACITY)
/// items, configured as [`with_capacity`](ScalableCuckooFilter::with_capacity)
/// says: a growing filter needs no size up front.
///
/// ```
/// use concurrent_cuckoo::ScalableCuckooFilter;
/// let filter = ScalableCuckooFilter::default();
/// filter.insert_batch(&(0..10_000u32).collect::<Vec<_>>())?;
/// assert!(filter.levels() > 1);
/// assert_eq!(filter.initial_capacity(), ScalableCuckooFilter::DEFAULT_INITIAL_CAPACITY);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Panics
/// If the first level (a few KiB) cannot be allocated.
impl Default for ScalableCuckooFilter<DefaultHashBuilder> {
    fn default() -> Self {
        Self::with_capacity(Self::DEFAULT_INITIAL_CAPACITY)
    }
}

impl ScalableCuckooFilter<DefaultHashBuilder> {
    /// The first level's capacity of [`default`](Self::default) (RedisBloom's
    /// default capacity too).
    pub const DEFAULT_INITIAL_CAPACITY: usize = 1024;

    /// A filter that starts with room for `capacity` items and grows as
    /// needed: growth factor 2, up to 32 levels, a total false-positive
    /// bound of 0.1%, the default hasher with a random seed.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::with_capacity(100);
    /// assert_eq!(filter.levels(), 1);
    /// ```
    ///
    /// # Panics
    /// If the first level cannot be allocated (use the
    /// [`builder`](Self::builder) for an error instead).
    #[must_use]
    pub fn with_capacity(capacity: usize) -> Self {
        match Self::try_with_capacity(capacity) {
            Ok(filter) => filter,
            Err(e) => panic!("ScalableCuckooFilter::with_capacity({capacity}): {e}"),
        }
    }

    /// [`with_capacity`](Self::with_capacity) that returns the error
    /// instead of panicking.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::try_with_capacity(1000)?;
    /// assert!(filter.is_empty());
    /// assert!(ScalableCuckooFilter::try_with_capacity(usize::MAX).is_err());
    /// # Ok::<(), concurrent_cuckoo::BuildError>(())
    /// ```
    ///
    /// # Errors
    /// As [`ScalableBuilder::build`].
    pub fn try_with_capacity(capacity: usize) -> Result<Self, BuildError> {
        Self::builder().capacity(capacity).build()
    }

    /// A builder for every other configuration.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::builder()
    ///     .capacity(10_000)
    ///     .false_positive_rate(1e-4)
    ///     .growth_factor(4)
    ///     .max_levels(16)
    ///     .seed(42)
    ///     .build()?;
    /// assert!(filter.false_positive_bound() <= 1e-4);
    /// # Ok::<(), concurrent_cuckoo::BuildError>(())
    /// ```
    #[must_use = "a builder does nothing until `build` is called"]
    pub fn builder() -> ScalableBuilder<DefaultHashBuilder> {
        ScalableBuilder {
            initial_capacity: None,
            false_positive_rate: 1e-3,
            growth_factor: 2,
            max_levels: 32,
            table_memory: crate::TableMemory::Mapped,
            hasher: DefaultHashBuilder::new(),
            #[cfg(concurrent_cuckoo_loom)]
            level_stripes: None,
        }
    }
}

impl<S> ScalableCuckooFilter<S> {
    /// Items stored, over all levels (each copy counts). Exact when no
    /// insert or remove is running.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::with_capacity(10);
    /// filter.insert("a")?;
    /// assert_eq!(filter.len(), 1);
    /// # Ok::<(), concurrent_cuckoo::InsertError>(())
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.live_levels().map(|(_, l)| l.len()).sum()
    }

    /// `len() == 0`.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// assert!(ScalableCuckooFilter::with_capacity(10).is_empty());
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Fingerprint slots of the levels in use.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::with_capacity(1000);
    /// assert!(filter.capacity() >= 1000);
    /// ```
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.live_levels().map(|(_, l)| l.capacity()).sum()
    }

    /// `len() / capacity()`: how full the levels in use are. The current
    /// level fills before another takes inserts, so this swings from about
    /// `1 / growth_factor` (just grown) up to about 0.95.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::with_capacity(1000);
    /// filter.insert_batch(&(0..500u32).collect::<Vec<_>>())?;
    /// assert!(filter.load_factor() > 0.3 && filter.load_factor() < 0.6);
    /// # Ok::<(), concurrent_cuckoo::BatchInsertError>(())
    /// ```
    #[must_use]
    pub fn load_factor(&self) -> f64 {
        self.len() as f64 / self.capacity() as f64
    }

    /// Levels in use (the slots in use: allocated, open, searched by lookups).
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// assert_eq!(ScalableCuckooFilter::with_capacity(10).levels(), 1);
    /// ```
    #[must_use]
    pub fn levels(&self) -> usize {
        self.live_levels().count()
    }

    /// Bytes held: the filter itself, the tables, locks and version words
    /// of the levels in use, and what retired levels still hold: their
    /// locks and version words, and their tables when those are heap
    /// memory (tables under 4 MiB, every table under
    /// [`TableMemory::GlobalAllocator`](crate::TableMemory::GlobalAllocator),
    /// every table off Linux) until [`reclaim_retired`](Self::reclaim_retired)
    /// frees them. A retired table that is a mapping of its own was given
    /// back to the system when it retired and is not counted. Exact when
    /// no other thread is adding or retiring a level meanwhile. O(levels
    /// in use) while no level is retired; O(`max_levels`) otherwise.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// assert!(ScalableCuckooFilter::with_capacity(1000).memory_usage() > 2000);
    /// ```
    #[must_use]
    pub fn memory_usage(&self) -> usize {
        // `in_use` before the flag: a retirement sets the flag before it
        // clears the level's bit, so a bit seen cleared comes with the
        // flag seen set.
        let in_use = self.in_use();
        // No level retired since the last `reclaim_retired`: every slot
        // that holds a level is in use (only a retirement makes one that
        // is not, and that call freed those), so the levels in use are all
        // there is to count. Measured for every write by the Redis module
        // (its admission): walking all `max_levels` slots was ~370
        // instructions of a `CF.ADD`. (A level being opened by another
        // thread is counted once its slot is marked in use.)
        let held = if self.retired_since_reclaim.load(Ordering::Acquire) {
            u64::MAX
        } else {
            in_use
        };
        self.memory_of_slots(held, in_use)
    }

    /// The filter's own bytes and those of the levels in `slots` (a bit
    /// per slot), each as held while in use if its bit is in `in_use`.
    fn memory_of_slots(&self, slots: u64, in_use: u64) -> usize {
        let levels: usize = slots::Bits(slots)
            .take_while(|&i| i < self.slots.len())
            .filter_map(|i| Some((i, self.level(i)?)))
            .map(|(i, l)| l.held_memory(in_use & slots::bit(i) != 0))
            .sum();
        core::mem::size_of::<Self>()
            + core::mem::size_of_val(&*self.slots)
            + core::mem::size_of_val(&*self.key_locks)
            + levels
    }

    /// The false-positive bound of the levels in use: the sum of their
    /// bounds, at most the configured rate however far the filter grows.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::builder().capacity(10).false_positive_rate(0.01).build()?;
    /// assert!(filter.false_positive_bound() <= 0.01);
    /// # Ok::<(), concurrent_cuckoo::BuildError>(())
    /// ```
    #[must_use]
    pub fn false_positive_bound(&self) -> f64 {
        self.live_levels().map(|(_, l)| l.bound()).sum()
    }

    /// The rate the filter was configured with
    /// ([`ScalableBuilder::false_positive_rate`], saved with it): the
    /// budget [`false_positive_bound`](Self::false_positive_bound) never
    /// exceeds however far the filter grows.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::builder().capacity(10).false_positive_rate(1e-4).build()?;
    /// assert_eq!(filter.configured_false_positive_rate(), 1e-4);
    /// filter.insert_batch(&(0..10_000u32).collect::<Vec<_>>())?; // grows
    /// assert!(filter.false_positive_bound() <= filter.configured_false_positive_rate());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn configured_false_positive_rate(&self) -> f64 {
        self.config.false_positive_rate
    }

    /// Where the filter's levels get their memory
    /// ([`ScalableBuilder::table_memory`], or
    /// [`ReadOptions::table_memory`](crate::ReadOptions::table_memory) for
    /// a decoded filter): every level it grows, and its copies, take
    /// theirs from the same place.
    ///
    /// ```
    /// use concurrent_cuckoo::{ScalableCuckooFilter, TableMemory};
    /// assert_eq!(ScalableCuckooFilter::with_capacity(100).table_memory(), TableMemory::Mapped);
    /// ```
    #[must_use]
    pub fn table_memory(&self) -> crate::TableMemory {
        self.config.table_memory
    }

    /// Fingerprint width of each level in use, in the order of the saved
    /// format: ascending slots, the current level last (for a filter that
    /// never switched back to a lower slot: oldest first).
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::builder().capacity(10).false_positive_rate(1e-3).build()?;
    /// assert_eq!(filter.level_fingerprint_bits(), vec![16]);
    /// # Ok::<(), concurrent_cuckoo::BuildError>(())
    /// ```
    #[must_use]
    pub fn level_fingerprint_bits(&self) -> Vec<u32> {
        self.live_levels_oldest_first()
            .into_iter()
            .map(|(_, l)| l.bits())
            .collect()
    }

    /// The configured initial capacity: items the first level is sized for.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// assert_eq!(ScalableCuckooFilter::with_capacity(1000).initial_capacity(), 1000);
    /// ```
    #[must_use]
    pub fn initial_capacity(&self) -> usize {
        self.config.initial_capacity
    }

    /// The configured growth factor: each level is sized for this many
    /// times the items of the one before.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// assert_eq!(ScalableCuckooFilter::with_capacity(10).growth_factor(), 2);
    /// ```
    #[must_use]
    pub fn growth_factor(&self) -> usize {
        self.config.growth_factor as usize
    }

    /// The configured most levels in use at once (slots): see
    /// [`ScalableBuilder::max_levels`].
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// assert_eq!(ScalableCuckooFilter::with_capacity(10).max_levels(), 32);
    /// ```
    #[must_use]
    pub fn max_levels(&self) -> usize {
        self.config.max_levels
    }

    /// The [`Stats`](crate::Stats) of each level in use, in the order of
    /// [`level_fingerprint_bits`](Self::level_fingerprint_bits):
    /// size, width, memory and the writers' counters of that level (a
    /// level's counters start when it is created or decoded).
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::with_capacity(100);
    /// filter.insert_batch(&(0..1000u32).collect::<Vec<_>>())?;
    /// let levels = filter.level_stats();
    /// assert_eq!(levels.len(), filter.levels());
    /// assert_eq!(levels.iter().map(|s| s.len).sum::<usize>(), 1000);
    /// assert!(levels[1].bucket_count > levels[0].bucket_count);
    /// # Ok::<(), concurrent_cuckoo::BatchInsertError>(())
    /// ```
    #[must_use]
    pub fn level_stats(&self) -> Vec<crate::Stats> {
        self.live_levels_oldest_first()
            .into_iter()
            .map(|(_, l)| crate::filter::table_stats(&l.table))
            .collect()
    }

    /// The key lock of a (finalized) hash.
    fn key_lock(&self, hash: u64) -> &RawLock {
        &self.key_locks[(crate::index::finalize(hash) >> 56) as usize % KEY_LOCKS]
    }
}

impl<S: BuildHasher> ScalableCuckooFilter<S> {
    #[inline(always)]
    fn hash<K: Hash + ?Sized>(&self, key: &K) -> u64 {
        self.hasher.hash_one(key)
    }

    /// Adds one copy of `key` to the current level, growing the filter if it
    /// is full.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::with_capacity(10);
    /// filter.insert("k")?;
    /// assert!(filter.contains("k"));
    /// # Ok::<(), concurrent_cuckoo::InsertError>(())
    /// ```
    ///
    /// # Errors
    /// [`InsertError::Full`] only when `max_levels` levels are in use, the
    /// current one is full and every other is over 3/4 full, or a new
    /// level cannot be allocated;
    /// [`InsertError::TooManyDuplicates`] when the current level already
    /// holds 8 copies of the key's fingerprint in its bucket pair.
    #[inline]
    pub fn insert<K: Hash + ?Sized>(&self, key: &K) -> Result<(), InsertError> {
        self.insert_hash(self.hash(key))
    }

    /// [`insert`](Self::insert) for a precomputed 64-bit hash.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::with_capacity(10);
    /// filter.insert_hash(42)?;
    /// assert!(filter.contains_hash(42));
    /// # Ok::<(), concurrent_cuckoo::InsertError>(())
    /// ```
    ///
    /// # Errors
    /// As [`insert`](Self::insert).
    #[inline]
    pub fn insert_hash(&self, hash: u64) -> Result<(), InsertError> {
        self.insert_prepared(hash, Mode::Multi).map(drop)
    }

    /// Adds `key` unless it (or a key indistinguishable from it) is already
    /// present in any level; `true` if it was added. Atomic with respect to
    /// concurrent `insert_unique` calls of the same key, even while the
    /// filter grows: exactly one of them returns `true`.
    ///
    /// "Present" is what [`contains`](Self::contains) answers, so a key
    /// that was never added is refused (`false`) when it is a false
    /// positive of any level: another key's fingerprint collides with it
    /// there (at most [`false_positive_bound`](Self::false_positive_bound)
    /// of new keys). Nothing of `key` is stored then. Two consequences
    /// after later removes:
    ///
    /// * do not `remove(key)` for a key whose `insert_unique` returned
    ///   `false` unless you know it was added before: the remove would
    ///   take the colliding key's copy, and that key becomes a false
    ///   negative (the paper's warning about removing what was never
    ///   inserted);
    /// * once the colliding key is removed, `insert_unique(key)` adds it
    ///   (returns `true`), so a caller who counts a refused key as stored
    ///   loses track of it. Keep your own record of which keys returned
    ///   `true` when you need to remove exactly those.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::with_capacity(10);
    /// assert!(filter.insert_unique("k")?);
    /// assert!(!filter.insert_unique("k")?);
    /// # Ok::<(), concurrent_cuckoo::InsertError>(())
    /// ```
    ///
    /// # Errors
    /// As [`insert`](Self::insert).
    #[inline]
    pub fn insert_unique<K: Hash + ?Sized>(&self, key: &K) -> Result<bool, InsertError> {
        self.insert_unique_hash(self.hash(key))
    }

    /// [`insert_unique`](Self::insert_unique) for a precomputed hash.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::with_capacity(10);
    /// assert!(filter.insert_unique_hash(7)?);
    /// assert!(!filter.insert_unique_hash(7)?);
    /// # Ok::<(), concurrent_cuckoo::InsertError>(())
    /// ```
    ///
    /// # Errors
    /// As [`insert`](Self::insert).
    pub fn insert_unique_hash(&self, hash: u64) -> Result<bool, InsertError> {
        let _key = self.key_lock(hash).guard();
        // Under the key lock no other `insert_unique` of this key runs: if
        // no level holds it now, adding it (to whichever level is current
        // by then) cannot race another thread adding it elsewhere. The
        // check is `contains_hash`, validated against the move sequence:
        // the key lock does not stop compaction moving the key meanwhile.
        #[cfg(not(concurrent_cuckoo_canary = "unique_unvalidated_check"))]
        let present = self.contains_hash(hash);
        // The planted bug: one pass over the levels, its miss trusted (a
        // key compaction moves during the pass is missed and added again).
        #[cfg(concurrent_cuckoo_canary = "unique_unvalidated_check")]
        let present = {
            let hash = LevelHash::of(hash);
            self.live_levels().any(|(_, level)| level.contains(hash))
        };
        if present {
            Ok(false)
        } else {
            self.insert_prepared(hash, Mode::Unique)
        }
    }

    /// Is `key` (probably) present in any level? Never a false negative.
    /// Searches the current level first.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::with_capacity(10);
    /// filter.insert(&1u64)?;
    /// assert!(filter.contains(&1u64));
    /// # Ok::<(), concurrent_cuckoo::InsertError>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn contains<K: Hash + ?Sized>(&self, key: &K) -> bool {
        self.contains_hash(self.hash(key))
    }

    /// [`contains`](Self::contains) for a precomputed hash.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::with_capacity(10);
    /// filter.insert_hash(9)?;
    /// assert!(filter.contains_hash(9));
    /// # Ok::<(), concurrent_cuckoo::InsertError>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn contains_hash(&self, hash: u64) -> bool {
        // Read before the level set: a miss is an answer only if no
        // compaction moved a fingerprint meanwhile (see `moves.rs`).
        let mut since = self.moves.read();
        let prepared = LevelHash::of(hash);
        loop {
            let mut levels = self.live_levels();
            // The canary plants the sequence read after the level set: a
            // level opened and filled by a move after the set was loaded
            // is missed.
            #[cfg(concurrent_cuckoo_canary = "sequence_after_levels")]
            {
                since = self.moves.read();
            }
            if levels.any(|(_, level)| level.contains(prepared)) {
                return true;
            }
            if self.moves.unmoved_since(&mut since) {
                return false;
            }
        }
    }

    /// Removes one copy of `key` from the largest level that holds its
    /// fingerprint ([`Removal::Removed`]); changes nothing if no level does
    /// ([`Removal::NotFound`]). Only a filter decoded from an encoding
    /// written before nested level maps may answer [`Removal::Refused`]:
    /// when levels of different geometry hold the fingerprint, which copy
    /// is the key's cannot be told there, and taking another key's would
    /// make that key a false negative (see
    /// [removing keys across levels](ScalableCuckooFilter#removing-keys-across-levels)).
    /// A copy that [`compact_concurrently`](Self::compact_concurrently)
    /// is moving meanwhile is found and taken exactly once.
    /// A level that this empties, and that no longer takes inserts, is
    /// retired. As for [`CuckooFilter`](crate::CuckooFilter), removing a
    /// key that was never inserted may remove a colliding key's copy (the
    /// paper's warning).
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::with_capacity(10);
    /// filter.insert("k")?;
    /// assert_eq!(filter.remove("k"), Removal::Removed);
    /// assert_eq!(filter.remove("k"), Removal::NotFound);
    /// # use concurrent_cuckoo::Removal;
    /// # Ok::<(), concurrent_cuckoo::InsertError>(())
    /// ```
    #[inline]
    pub fn remove<K: Hash + ?Sized>(&self, key: &K) -> Removal {
        self.remove_hash(self.hash(key))
    }

    /// [`remove`](Self::remove) for a precomputed hash.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::with_capacity(10);
    /// filter.insert_hash(3)?;
    /// assert!(filter.remove_hash(3).is_removed());
    /// # Ok::<(), concurrent_cuckoo::InsertError>(())
    /// ```
    pub fn remove_hash(&self, hash: u64) -> Removal {
        // Read before the level set: "nothing to take" is an answer only
        // if no compaction moved a fingerprint meanwhile (the key's copy
        // may have gone from the level this remove looked at last to one
        // it had already looked at: see `moves.rs`).
        let mut since = self.moves.read();
        loop {
            match self.remove_once(hash, &mut since) {
                Attempt::Taken => return Removal::Removed,
                Attempt::Ambiguous => return Removal::Refused,
                // Another remove (or a move) took the copy chosen, after
                // the scan, or a move began or ended during the scan: the
                // key may have a copy elsewhere.
                Attempt::Raced => continue,
                #[cfg(concurrent_cuckoo_canary = "remove_ignores_moves")]
                Attempt::NothingToTake => {
                    let _ = &mut since;
                    return Removal::NotFound;
                }
                #[cfg(not(concurrent_cuckoo_canary = "remove_ignores_moves"))]
                Attempt::NothingToTake => {
                    if self.moves.unmoved_since(&mut since) {
                        return Removal::NotFound;
                    }
                }
            }
        }
    }

    /// One attempt of [`remove_hash`](Self::remove_hash). `since` is the
    /// move sequence read before this attempt loaded the level set.
    fn remove_once(&self, hash: u64, since: &mut u64) -> Attempt {
        #[cfg(concurrent_cuckoo_canary = "relaxed_retire")]
        let newest = self.current();
        let mut levels = self.live_levels().peekable();
        let Some((mut i, mut level)) = levels.next() else {
            return Attempt::NothingToTake;
        };
        // Whether a scan of every level found the copy to take.
        let scanned = levels.peek().is_some();
        // The canary plants the old rule: take the newest matching copy.
        #[cfg(concurrent_cuckoo_canary = "newest_match_remove")]
        if levels.peek().is_some() {
            let newest_match = core::iter::once((i, level))
                .chain(levels)
                .find(|(_, level)| level.contains(LevelHash::of(hash)));
            match newest_match {
                Some(found) => (i, level) = found,
                None => return Attempt::NothingToTake,
            }
        }
        #[cfg(not(concurrent_cuckoo_canary = "newest_match_remove"))]
        if levels.peek().is_some() {
            // Several levels: find the ones holding the key's fingerprint
            // before taking anything. A key stored in one level matches
            // there. A copy in the level that refines every other matching
            // one (nested maps: the largest) stands for the key: two keys
            // that collide there collide in every coarser level too (see
            // "Removing keys across levels"). Levels that do not form such
            // a chain (decoded from an encoding before nested maps) can
            // tell keys apart that others cannot, and then which copy is
            // the key's cannot be told.
            let prepared = LevelHash::of(hash);
            match self.finest_holder(prepared) {
                Finest::Holder(j, holder) => (i, level) = (j, holder),
                Finest::NoHolder => return Attempt::NothingToTake,
                Finest::General => match self.general_holder(prepared, (i, level), levels) {
                    Chosen::Holder(j, holder) => (i, level) = (j, holder),
                    Chosen::NoHolder => return Attempt::NothingToTake,
                    Chosen::Ambiguous => return Attempt::Ambiguous,
                },
            }
        }
        // The scan chose `level` from what it saw. A stored key matches in
        // its own level, so the choice is sound only if the scan saw the
        // key's copy where it lay; a compaction that moved a copy between
        // levels during the scan may have hidden it (looked for in the
        // target before the insert, in the source after the take), and
        // then a level of another geometry where another key collides may
        // look like the only holder (issue 40). So the take goes ahead only
        // if no move began or ended since `since` (read before the level
        // set). A move that begins after this check keeps every copy in
        // levels of its source's geometry, so the key still has a copy in
        // a level of the geometry chosen, and the copy taken stands for it
        // (`docs/concurrency.md`, "Removes beside compaction"). One load of
        // a word that only compaction writes.
        #[cfg(not(concurrent_cuckoo_canary = "unvalidated_take"))]
        if !self.moves.unmoved_since(since) {
            return Attempt::Raced;
        }
        #[cfg(concurrent_cuckoo_canary = "unvalidated_take")]
        let _ = &since;
        // Retirement is checked only when this remove's own two stripes
        // count nothing: a level this remove emptied has every stripe at 0,
        // and the sum over all of them (`len`, up to 4096 cache lines) is
        // then read once, not on every remove from an older level.
        let (removed, pair_empty) = with_table!(&level.table, t => {
            let loc = t.locate(hash);
            let removed = t.remove(&loc);
            (removed, removed && t.pair_stripes_empty(&loc))
        });
        // The canary plants the old check: relaxed loads only, and the
        // `current` loaded before the scan.
        #[cfg(concurrent_cuckoo_canary = "relaxed_retire")]
        let may_retire = pair_empty && i != newest && level.len() == 0;
        // Between this remove's count write and its reads of the other
        // stripes and of `current`, a read-modify-write of the word every
        // such remove and every growth also updates: of two removes taking
        // a level's last items in different stripes (or a remove and the
        // growth that makes the level old) the later one sees the other's
        // write, so one of them retires the level (see `retire_order`).
        #[cfg(not(concurrent_cuckoo_canary = "relaxed_retire"))]
        let may_retire = pair_empty && {
            self.retire_order.fetch_add(1, Ordering::AcqRel);
            i != self.current() && level.len() == 0
        };
        if may_retire {
            self.retire_if_empty(i);
        }
        match (removed, scanned) {
            (true, _) => Attempt::Taken,
            (false, true) => Attempt::Raced,
            (false, false) => Attempt::NothingToTake,
        }
    }

    /// Copies of `key`'s fingerprint in its bucket pair, summed over every
    /// level (each level counts exactly, under its locks).
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::builder().capacity(10).seed(1).build()?;
    /// filter.insert("k")?;
    /// filter.insert("k")?;
    /// assert_eq!(filter.count("k"), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn count<K: Hash + ?Sized>(&self, key: &K) -> usize {
        self.count_hash(self.hash(key))
    }

    /// [`count`](Self::count) for a precomputed hash.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::with_capacity(10);
    /// filter.insert_hash(5)?;
    /// assert_eq!(filter.count_hash(5), 1);
    /// # Ok::<(), concurrent_cuckoo::InsertError>(())
    /// ```
    #[must_use]
    pub fn count_hash(&self, hash: u64) -> usize {
        // A fingerprint that compaction moves is counted in both levels, or
        // in neither, while the move is in flight: count again after one.
        let mut since = self.moves.read();
        loop {
            let copies = self
                .live_levels()
                .map(|(_, level)| with_table!(&level.table, t => t.count(&t.locate(hash))))
                .sum();
            if self.moves.unmoved_since(&mut since) {
                return copies;
            }
        }
    }

    /// Looks up a burst of keys: `out[i] = self.contains(&keys[i])`. Each
    /// key is hashed once; then each level in use, the current one first, is searched for
    /// the keys not found yet with the pipelined lookup of
    /// [`CuckooFilter::contains_batch`](crate::CuckooFilter::contains_batch)
    /// (in stages of 32 keys, every bucket of the next stage requested
    /// before the current one is probed).
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::with_capacity(10);
    /// filter.insert_batch(&(0..100u32).collect::<Vec<_>>())?;
    /// let mut out = [false; 2];
    /// filter.contains_batch(&[5u32, 500], &mut out);
    /// assert!(out[0]);
    /// # Ok::<(), concurrent_cuckoo::BatchInsertError>(())
    /// ```
    ///
    /// # Panics
    /// If `keys.len() != out.len()`, with the message
    /// `"contains_batch: keys and out differ in length"`.
    pub fn contains_batch<K: Hash>(&self, keys: &[K], out: &mut [bool]) {
        assert_eq!(
            keys.len(),
            out.len(),
            "contains_batch: keys and out differ in length"
        );
        self.contains_batch_by(|i| self.hash(&keys[i]), out);
    }

    /// [`contains_batch`](Self::contains_batch) for precomputed hashes.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::with_capacity(10);
    /// filter.insert_hash_batch(&[1, 2])?;
    /// let mut out = [false; 3];
    /// filter.contains_hash_batch(&[1, 2, 3], &mut out);
    /// assert!(out[0] && out[1]);
    /// # Ok::<(), concurrent_cuckoo::BatchInsertError>(())
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
        self.contains_batch_by(|i| hashes[i], out);
    }

    fn contains_batch_by(&self, hash_at: impl Fn(usize) -> u64, out: &mut [bool]) {
        const CHUNK: usize = 64;
        let mut hashes = [0u64; CHUNK];
        let mut pending = [0usize; CHUNK];
        let mut found = [false; CHUNK];
        for start in (0..out.len()).step_by(CHUNK) {
            let n = CHUNK.min(out.len() - start);
            let out = &mut out[start..start + n];
            for (j, h) in hashes[..n].iter_mut().enumerate() {
                *h = hash_at(start + j);
            }
            // A chunk with a miss is searched again if a compaction moved a
            // fingerprint meanwhile (see `moves.rs`).
            let mut since = self.moves.read();
            while !self.contains_chunk(&hashes[..n], out, &mut pending, &mut found) {
                if self.moves.unmoved_since(&mut since) {
                    break;
                }
            }
        }
    }

    /// One search of a chunk of [`contains_batch_by`](Self::contains_batch_by)
    /// through every level in use; whether every key was found.
    #[inline]
    fn contains_chunk(
        &self,
        hashes: &[u64],
        out: &mut [bool],
        pending: &mut [usize],
        found: &mut [bool],
    ) -> bool {
        let mut levels = self.live_levels();
        // The current level answers for the whole chunk, straight into
        // `out`: a filter of one level costs what a `CuckooFilter` does.
        let Some((_, newest)) = levels.next() else {
            out.fill(false);
            return false;
        };
        with_table!(&newest.table, t => t.contains_batch(|k| hashes[k], out));
        // Positions still unanswered, gathered without branching on
        // the answers (a 50/50 mix would mispredict half of them).
        let mut left = 0;
        for (j, &hit) in out.iter().enumerate() {
            pending[left] = j;
            left += usize::from(!hit);
        }
        for (_, level) in levels {
            if left == 0 {
                break;
            }
            let ask = &pending[..left];
            with_table!(&level.table, t => {
                t.contains_batch(|k| hashes[ask[k]], &mut found[..left])
            });
            let mut still = 0;
            for k in 0..left {
                let j = pending[k];
                out[j] |= found[k];
                pending[still] = j;
                still += usize::from(!found[k]);
            }
            left = still;
        }
        left == 0
    }

    /// Inserts every key of `keys`, in order, exactly as the same
    /// [`insert`](Self::insert) calls one at a time would (growing as
    /// needed), stopping at the first key refused. Pipelined within each
    /// level as [`CuckooFilter::insert_batch`](crate::CuckooFilter::insert_batch).
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::with_capacity(100);
    /// filter.insert_batch(&(0..10_000u64).collect::<Vec<_>>())?;
    /// assert_eq!(filter.len(), 10_000);
    /// # Ok::<(), concurrent_cuckoo::BatchInsertError>(())
    /// ```
    ///
    /// # Errors
    /// A [`BatchInsertError`] with the number of keys inserted and why the
    /// next one was refused.
    pub fn insert_batch<K: Hash>(&self, keys: &[K]) -> Result<(), BatchInsertError> {
        self.insert_batch_by(keys.len(), |i| self.hash(&keys[i]))
    }

    /// [`insert_batch`](Self::insert_batch) for precomputed hashes.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::with_capacity(10);
    /// filter.insert_hash_batch(&(0..1000).collect::<Vec<u64>>())?;
    /// assert!(filter.levels() > 1);
    /// # Ok::<(), concurrent_cuckoo::BatchInsertError>(())
    /// ```
    ///
    /// # Errors
    /// As [`insert_batch`](Self::insert_batch).
    pub fn insert_hash_batch(&self, hashes: &[u64]) -> Result<(), BatchInsertError> {
        self.insert_batch_by(hashes.len(), |i| hashes[i])
    }

    fn insert_batch_by(
        &self,
        n: usize,
        hash_at: impl Fn(usize) -> u64,
    ) -> Result<(), BatchInsertError> {
        let mut done = 0;
        // The slots that refused the key at `done` (as in `insert_prepared`).
        let mut refused = 0;
        while done < n {
            let word = self.current.load(Ordering::Acquire);
            let level = self
                .level(index_of(word))
                .ok_or(BatchInsertError::new(done, InsertError::Full))?;
            let rest = n - done;
            let result = with_table!(&level.table, t => t.insert_batch(
                rest,
                |i| hash_at(done + i),
                Mode::Multi,
                |_, _| {}
            ));
            match result {
                Ok(()) => return Ok(()),
                Err((inserted, InsertError::Full)) => {
                    done += inserted;
                    if inserted > 0 {
                        refused = 0; // a new key was refused
                    }
                    refused |= slots::bit(index_of(word));
                    match self.grow_and_insert(word, &mut refused, hash_at(done), Mode::Multi) {
                        Grown::Retry => {}
                        Grown::Inserted(_) => {
                            done += 1;
                            refused = 0;
                        }
                        Grown::Refused(e) => return Err(BatchInsertError::new(done, e)),
                    }
                }
                Err((inserted, e)) => return Err(BatchInsertError::new(done + inserted, e)),
            }
        }
        Ok(())
    }

    /// Removes one copy of each key, in order, as [`remove`](Self::remove)
    /// would one at a time: `removed[i]` is what removing `keys[i]` did (a
    /// key listed twice needs two copies).
    ///
    /// ```
    /// use concurrent_cuckoo::{Removal, ScalableCuckooFilter};
    /// let filter = ScalableCuckooFilter::with_capacity(10);
    /// filter.insert_batch(&[1u32, 2, 3])?;
    /// let mut removed = [Removal::NotFound; 4];
    /// filter.remove_batch(&[1u32, 3, 4, 3], &mut removed);
    /// use Removal::*;
    /// assert_eq!(removed, [Removed, Removed, NotFound, NotFound]);
    /// assert_eq!(filter.len(), 1);
    /// # Ok::<(), concurrent_cuckoo::BatchInsertError>(())
    /// ```
    ///
    /// # Panics
    /// If `keys.len() != removed.len()`, with the message
    /// `"remove_batch: keys and removed differ in length"`, before anything
    /// is removed.
    pub fn remove_batch<K: Hash>(&self, keys: &[K], removed: &mut [Removal]) {
        assert_eq!(
            keys.len(),
            removed.len(),
            "remove_batch: keys and removed differ in length"
        );
        for (key, out) in keys.iter().zip(removed) {
            *out = self.remove(key);
        }
    }

    /// [`remove_batch`](Self::remove_batch) for precomputed hashes.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::with_capacity(10);
    /// filter.insert_hash_batch(&[7, 8])?;
    /// let mut removed = [Removal::NotFound; 2];
    /// filter.remove_hash_batch(&[8, 9], &mut removed);
    /// assert_eq!(removed, [Removal::Removed, Removal::NotFound]);
    /// # use concurrent_cuckoo::Removal;
    /// # Ok::<(), concurrent_cuckoo::BatchInsertError>(())
    /// ```
    ///
    /// # Panics
    /// As [`remove_batch`](Self::remove_batch).
    pub fn remove_hash_batch(&self, hashes: &[u64], removed: &mut [Removal]) {
        assert_eq!(
            hashes.len(),
            removed.len(),
            "remove_batch: keys and removed differ in length"
        );
        for (&hash, out) in hashes.iter().zip(removed) {
            *out = self.remove_hash(hash);
        }
    }

    /// The hasher.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// use std::hash::BuildHasher;
    /// let filter = ScalableCuckooFilter::with_capacity(10);
    /// filter.insert("k")?;
    /// assert!(filter.contains_hash(filter.hasher().hash_one("k")));
    /// # Ok::<(), concurrent_cuckoo::InsertError>(())
    /// ```
    #[must_use]
    pub fn hasher(&self) -> &S {
        &self.hasher
    }
}

impl<S> Drop for ScalableCuckooFilter<S> {
    fn drop(&mut self) {
        for slot in self.slots.iter() {
            let ptr = slot.load(Ordering::Acquire);
            if !ptr.is_null() {
                // SAFETY: created by `Box::into_raw` in this filter, freed
                // only here, and `&mut self` means no reader can hold it.
                drop(unsafe { Box::from_raw(ptr) });
            }
        }
    }
}

impl<S> fmt::Debug for ScalableCuckooFilter<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScalableCuckooFilter")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .field("levels", &self.levels())
            .field("false_positive_bound", &self.false_positive_bound())
            .finish_non_exhaustive()
    }
}

/// What one attempt of a remove did.
enum Attempt {
    /// A copy was taken.
    Taken,
    /// Levels of different geometry hold the fingerprint: refused.
    Ambiguous,
    /// The scan of the levels found a copy, but it was gone when taken
    /// (another remove took it, or a compaction moved it): scan again.
    Raced,
    /// No copy found (in the one level in use, or by the scan).
    NothingToTake,
}

#[cfg(all(test, not(concurrent_cuckoo_loom)))]
mod tests {
    use super::slots::{width_bound, width_for};
    use super::*;
    use std::cell::Cell;
    use std::sync::{mpsc, Arc};
    use std::time::Duration;

    std::thread_local! {
        /// Makes the next growth on this thread panic while it holds the
        /// growth lock (and, in `insert_unique`, a key lock).
        static PANIC_IN_GROWTH: Cell<bool> = const { Cell::new(false) };
    }

    /// A small growing filter, the Redis module's default (1,024 items,
    /// rate 0.001), is mostly its buckets. It held 1,912 bytes besides
    /// its 2,480 of buckets when its table's lock-waiter counter was
    /// inline and cache-padded (the `Level` 640 bytes, 512 of them
    /// alignment) and small tables had 64 version words; now 1,216.
    #[test]
    fn a_small_growing_filter_is_mostly_its_buckets() {
        assert!(
            core::mem::size_of::<Level>() <= 256,
            "a Level of {} bytes",
            core::mem::size_of::<Level>()
        );
        let f = ScalableCuckooFilter::builder()
            .capacity(1024)
            .growth_factor(1)
            .false_positive_rate(0.001)
            .seed(1)
            .build()
            .unwrap();
        let level = f.level(0).unwrap();
        let buckets = with_table!(&level.table, t => core::mem::size_of_val(&*t.buckets));
        let besides = f.memory_usage() - buckets;
        assert!(
            besides <= 1_280,
            "{besides} bytes besides {buckets} bytes of buckets"
        );
    }

    /// `memory_usage` as it was: every slot walked.
    fn memory_usage_of_every_slot(f: &ScalableCuckooFilter) -> usize {
        f.memory_of_slots(u64::MAX, f.in_use())
    }

    /// `memory_usage` walks only the levels in use while none is retired,
    /// and counts the same bytes as a walk of every slot through growth,
    /// retirement, `clear`, regrowth, `reclaim_retired` and decoding.
    #[test]
    fn memory_usage_counts_what_a_walk_of_every_slot_counts() {
        let mut f = ScalableCuckooFilter::builder()
            .capacity(100)
            .growth_factor(1)
            .max_levels(8)
            .seed(3)
            .build()
            .unwrap();
        let same = |f: &ScalableCuckooFilter| {
            assert_eq!(f.memory_usage(), memory_usage_of_every_slot(f));
        };
        same(&f);
        f.insert_batch(&(0..600u32).collect::<Vec<_>>()).unwrap();
        assert!(f.levels() >= 4);
        same(&f);
        // Empty the first level: it retires and stays allocated.
        let levels = f.levels();
        let mut k = 0u32;
        while f.levels() == levels {
            let _ = f.remove(&k);
            k += 1;
        }
        same(&f);
        f.clear();
        same(&f);
        f.insert_batch(&(1000..1050u32).collect::<Vec<_>>())
            .unwrap();
        same(&f);
        assert!(f.reclaim_retired() > 0);
        same(&f);
        f.insert_batch(&(2000..2400u32).collect::<Vec<_>>())
            .unwrap();
        same(&f);
        same(&ScalableCuckooFilter::from_bytes(&f.to_bytes()).unwrap());
    }

    pub(super) fn panic_if_armed() {
        if PANIC_IN_GROWTH.with(|armed| armed.replace(false)) {
            panic!("injected: a panic while the growth lock is held");
        }
    }

    /// A panic under the growth lock and a key lock (an internal assertion,
    /// caught by the caller as the C ABI's guard does) must release both:
    /// every later call used to wait forever.
    #[test]
    fn a_panic_under_the_growth_and_key_locks_releases_both() {
        let f = Arc::new(
            ScalableCuckooFilter::builder()
                .capacity(10)
                .seed(3)
                .build()
                .unwrap(),
        );
        let mut panicked_at = None;
        PANIC_IN_GROWTH.with(|armed| armed.set(true));
        for k in 0..1000u64 {
            let insert = std::panic::AssertUnwindSafe(|| f.insert_unique_hash(k));
            if std::panic::catch_unwind(insert).is_err() {
                panicked_at = Some(k);
                break;
            }
        }
        let k = panicked_at.expect("the first growth panicked");
        assert_eq!(f.levels(), 1, "the panicking growth added nothing");
        // The same key (its key lock) and the growth lock, from another
        // thread, with a deadline instead of a hang.
        let (done, finished) = mpsc::channel();
        let g = Arc::clone(&f);
        std::thread::spawn(move || {
            let added = g.insert_unique_hash(k).unwrap();
            let more: Vec<u64> = (k + 1..k + 1000).collect();
            g.insert_hash_batch(&more).unwrap();
            g.clear();
            done.send((added, g.levels(), g.len())).unwrap();
        });
        let (added, levels, len) = finished
            .recv_timeout(Duration::from_secs(30))
            .expect("a lock stayed held after the panic: later calls hang");
        assert!(added);
        assert_eq!((levels, len), (1, 0));
    }

    #[test]
    fn widths_keep_the_total_within_the_budget() {
        for (rate, levels) in [(1e-3, 32usize), (1e-4, 32), (0.1, 8), (1e-6, 64)] {
            let mut spent = 0.0;
            let mut widths = Vec::new();
            for level in 0..levels {
                let bits = width_for(level, spent, rate, levels).unwrap();
                spent += width_bound(bits);
                widths.push(bits);
            }
            assert!(spent <= rate, "{rate}: {spent} over budget with {widths:?}");
            assert!(widths.windows(2).all(|w| w[0] <= w[1]), "{widths:?}");
        }
        // 1e-3: sixteen-bit levels while the budget lasts, then 32-bit.
        let mut spent = 0.0;
        let widths: Vec<u32> = (0..32)
            .map(|level| {
                let bits = width_for(level, spent, 1e-3, 32).unwrap();
                spent += width_bound(bits);
                bits
            })
            .collect();
        assert_eq!(&widths[..8], &[16; 8]);
        assert_eq!(widths[8], 32);
        // A rate below the reserve of 64 32-bit levels cannot be met.
        assert_eq!(width_for(0, 0.0, 1e-8, 64), None);
    }
}
