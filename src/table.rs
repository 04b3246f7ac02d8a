//! The concurrent table of one fingerprint width: lookup, insert, remove.
//!
//! # The invariant that makes lock-free lookups exact
//! Writers change buckets only under the stripe locks of every bucket they
//! change (see "single-lock writes" below for the writes that change one
//! bucket and read its partner without that lock); readers take no lock. A lookup of a key with fingerprint `f` and
//! buckets `{x, y}` loads the version of the pair `{x, y}` (acquire; one
//! word, see `stripes.rs`), loads both buckets (relaxed: the loads are not
//! ordered with each other, nor, for a 32-bit bucket, its two halves), and
//! on a miss fences (acquire) and re-reads the version. Every write path
//! keeps this one invariant:
//!
//! > **A slot may stop holding `f` while `f` stays present in the bucket
//! > pair only if the version of the pair is bumped after the copy that
//! > stays became visible and before the slot is cleared.**
//!
//! A slot that stops holding `f` while the key stays present is a *move*,
//! whatever the operation is called, and only moves make a present key look
//! absent: a reader can miss `f` only by reading the bucket that receives
//! the copy before it arrives and the bucket that loses one after it left.
//! Having read the cleared slot (a release store) and fenced, the reader
//! sees the bump that preceded the clear, so its version differs and it
//! retries. Had its first version load already seen the bump, the copy
//! that stays would have been visible to its bucket loads, and it would have
//! hit. The write paths:
//!
//! * **path moves** (`path.rs`, `move_locked`): store `f` into the
//!   destination, bump the pair's version, clear the source;
//! * **`remove` of one of several copies** ([`RawTable::remove`]): when
//!   another copy of `f` stays in the pair outside the atomic word being
//!   cleared (in the other bucket, or in the other half of a 32-bit
//!   bucket), the other copy was stored by an earlier critical section of
//!   the same two stripe locks; bump the pair's version, then clear. Two
//!   *colliding* keys (same fingerprint, same pair, reversed primaries)
//!   are the same signature to the filter, so this covers them:
//!   `remove(k2)` may clear the copy `k` relies on, and the bump is what
//!   keeps `k` visible;
//! * **`remove` of a lone copy** and **plain inserts**: the key is absent
//!   afterwards, or nothing is cleared; no bump, so readers never retry
//!   for them;
//! * **`clear`** removes every copy under every lock: no key it touches
//!   stays present, so it needs no bump (a lookup that overlaps a clear may
//!   answer either way; one that starts after it returned sees what was
//!   inserted since);
//! * **decoding** fills a new table before any reader can see it.
//!
//! The pair a writer bumps is the pair the reader validates against: a
//! slot of bucket `x` holding `f` belongs to the one pair `{x, alt(x, f)}`
//! (`alt` is an involution), which a mover knows as its source and
//! destination and a remove as the key's two buckets.
//!
//! Any future write path (batched writes, growth) must keep the invariant.
//! The loom models in `loom-tests/` check each of these paths for 8-, 16-
//! and 32-bit fingerprints; the `concurrent_cuckoo_canary` cfg plants
//! violations to prove the models bite.
//!
//! # Single-lock writes
//! The common single-key writes (a multiset insert into a free slot of
//! its primary bucket, a remove of a copy there) take that bucket's
//! stripe lock alone and read the other bucket without its lock: the
//! protocol, why it keeps the invariant, and why it is not lock-free are
//! in `table/single_lock.rs`.
//!
//! # One-move inserts
//! An insert that finds both buckets full under their locks moves one
//! fingerprint to its alternate bucket (adding that bucket's stripe) and
//! takes the freed slot before it lets go of the pair: a path move of
//! length one, made as every path move is (`table/one_move.rs`).
//!
//! # Progress
//! A lookup that keeps seeing its version change (writers moving
//! fingerprints through pairs that share its version word) retries
//! optimistically a few times, then reads both buckets under their two
//! stripe locks, where nothing can move: every lookup finishes after a
//! bounded number of attempts.

use crate::error::InsertError;
use crate::fingerprint::{Fingerprint, SLOTS};
use crate::index::{IndexMap, Scheme};
pub(crate) use crate::lookup::Location;
use crate::lookup::Lookup;
use crate::storage::{prefetch, AllocationError, TableMemory, ZeroedArray};
use crate::stripes::{StripeGuard, Stripes, VersionSnapshot};
use crate::sync::{fence, spin_hint, AtomicBool, Ordering};

mod one_move;
mod single_lock;

/// Default longest displacement path searched by an insert (the paper's
/// experiments and libcuckoo both use short BFS paths; 5 reaches > 95% load).
pub(crate) const DEFAULT_MAX_PATH: usize = MAX_PATH_LIMIT;
/// Longest path a table may be configured with (bounds the BFS queue).
#[cfg(not(concurrent_cuckoo_loom))]
pub(crate) const MAX_PATH_LIMIT: usize = 5;
/// Under loom, models use paths of one or two hops, and loom's coroutine
/// stacks are too small for the full 32 KiB queue.
#[cfg(concurrent_cuckoo_loom)]
pub(crate) const MAX_PATH_LIMIT: usize = 2;
/// How many paths an insert executes (each invalidated by a concurrent
/// writer before it freed a slot) before it stops racing the other writers
/// and searches under every stripe lock, where the answer is exact. Under
/// loom one, so that a model whose path is invalidated explores the
/// exclusive search.
#[cfg(not(concurrent_cuckoo_loom))]
const MAX_PATH_ATTEMPTS: usize = 8;
#[cfg(concurrent_cuckoo_loom)]
const MAX_PATH_ATTEMPTS: usize = 1;
/// Optimistic attempts a lookup makes before it reads under the two stripe
/// locks. Each failed attempt means a move bumped its pair's version word
/// during the lookup. Under loom one attempt, so that the models explore
/// the locked fallback whenever a reader has to retry.
#[cfg(not(concurrent_cuckoo_loom))]
const OPTIMISTIC_ATTEMPTS: u32 = 4;
#[cfg(concurrent_cuckoo_loom)]
const OPTIMISTIC_ATTEMPTS: u32 = 1;

/// Fewest keys per chunk of a batch (see `RawTable::pipelined`); a batch
/// of at most this many keys (a dataplane burst) needs no allocation.
const BLOCK: usize = 64;

/// Keys per chunk of a batch, per lock stripe: a chunk that takes every
/// stripe pays one acquisition per this many keys.
const CHUNK_PER_STRIPE: usize = 8;

/// How many keys ahead of its write a batch prefetches a key's buckets:
/// enough misses in flight to cover the memory latency (about 160 ns
/// here, against 25-50 ns of work per key), few enough that the CPU's miss
/// buffers do not fill and stall the prefetches themselves.
const PREFETCH_DISTANCE: usize = 24;

/// How many keys ahead of its write an insert batch looks at a key's
/// buckets (prefetched `PREFETCH_DISTANCE - PATH_LOOKAHEAD` keys earlier,
/// so usually in cache by then) and, if both are full, prefetches the
/// first level of its displacement search.
const PATH_LOOKAHEAD: usize = 8;

/// Buckets of at least this many bytes get [`PATH_LOOKAHEAD`]: a table
/// larger than the last-level cache (32 MiB here), where the search's
/// misses go to memory. Measured (`docs/benchmarks.md`): 5-10% faster
/// fills at 64 MiB, no difference at 8-32 MiB, 10% slower at 2 MiB and
/// below, where the look costs instructions and saves no miss.
const LOOK_AHEAD_MIN_BYTES: usize = 32 << 20;

/// What a batch operation did with one key (see `RawTable::pipelined`).
enum Step<E> {
    /// Done; on to the next key.
    Done,
    /// The batch stops here.
    Stop(E),
    /// It needs its pair locks released (a path search): call again for the
    /// same key with [`Guard::None`].
    Unlocked,
}

/// The locks a batch operation runs under (see `RawTable::pipelined`).
enum Guard<'g, 's> {
    /// Every stripe: paths may run under it.
    All(&'g StripeGuard<'s>),
    /// The key's two stripes.
    Pair(&'g StripeGuard<'s>),
    /// None: take whatever is needed, as a lone call.
    None,
}

/// What an insert does when the key is already present.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Multiset: add another copy (up to `2 * SLOTS`).
    Multi,
    /// Set: do nothing if any copy is present.
    Unique,
}

pub(crate) struct RawTable<F: Fingerprint> {
    pub(crate) buckets: ZeroedArray<F::Bucket>,
    pub(crate) index: IndexMap,
    pub(crate) stripes: Stripes,
    /// Whether inserts may store here. Always true for a `CuckooFilter`; a
    /// level of a scalable filter is closed (under all its stripe locks)
    /// when it is retired or cleared, and an insert that was already on its
    /// way, checking this under its pair locks, then refuses (`Full`) and
    /// goes to the level that now takes inserts.
    accepting: AtomicBool,
    pub(crate) max_path: usize,
}

impl<F: Fingerprint> RawTable<F> {
    /// A table of `buckets` buckets (even, >= 2), `stripes` lock stripes and
    /// `versions` move versions (powers of two; the defaults for the bucket
    /// count when `None`), mapping hashes with `scheme`, its arrays from
    /// `memory`.
    pub(crate) fn new(
        index: IndexMap,
        stripes: Option<usize>,
        versions: Option<usize>,
        max_path: usize,
        memory: TableMemory,
    ) -> Result<Self, AllocationError> {
        assert!(max_path <= MAX_PATH_LIMIT);
        let buckets = index.buckets();
        let stripes = stripes.unwrap_or_else(|| Stripes::default_count(buckets));
        let versions = versions.unwrap_or_else(|| Stripes::default_versions(buckets, stripes));
        // Every part fallibly, the small ones first: a host that admits
        // each allocation against a limit (the Redis module) refuses the
        // table before its buckets, the large part, are allocated (and
        // zeroed) if its locks and versions already take it past the limit.
        let stripes = Stripes::new(stripes, versions, memory)?;
        #[cfg(not(concurrent_cuckoo_loom))]
        let array = ZeroedArray::zeroed(buckets, memory)?;
        #[cfg(concurrent_cuckoo_loom)]
        let array = ZeroedArray::from_fn(buckets, F::empty_bucket)?;
        Ok(Self {
            buckets: array,
            index,
            stripes,
            max_path,
            accepting: AtomicBool::new(true),
        })
    }

    #[inline(always)]
    pub(crate) fn locate(&self, hash: u64) -> Location<F> {
        Lookup::locate(self, hash)
    }

    /// [`contains_hash_as`](Self::contains_hash_as) for this table's hash
    /// scheme, decided here: for callers that hold no per-filter choice (a
    /// growing filter's levels).
    #[inline(always)]
    pub(crate) fn contains_hash(&self, hash: u64) -> bool {
        crate::index::with_scheme!(self.index.scheme(), P => self.contains_hash_as::<P>(hash))
    }

    /// [`contains`](Self::contains) of the location of `hash`, for a table
    /// whose hash scheme is `P`: a whole single lookup, with no decision
    /// on the scheme (each filter calls the one for its table, see
    /// `filter.rs`).
    #[inline(always)]
    pub(crate) fn contains_hash_as<P: Scheme>(&self, hash: u64) -> bool {
        self.contains_prepared_as::<P>(self.index.prepare_as::<P>(hash))
    }

    /// [`contains_hash`](Self::contains_hash) of a hash already prepared
    /// for this table's scheme ([`IndexMap::prepare_as`]): a growing
    /// filter prepares a hash once for all its levels.
    #[inline(always)]
    pub(crate) fn contains_prepared(&self, prepared: u64) -> bool {
        crate::index::with_scheme!(self.index.scheme(), P => self.contains_prepared_as::<P>(prepared))
    }

    /// [`contains_hash_as`](Self::contains_hash_as) of a prepared hash.
    #[inline(always)]
    fn contains_prepared_as<P: Scheme>(&self, prepared: u64) -> bool {
        let loc = Location::of_prepared::<P>(self.index, prepared);
        // The misses start before the version loads. Not redundant on x86
        // either, where the loads could issue as early: without it a keyed
        // `contains` on a 64 MiB table took 64 ns instead of 53, and the
        // prefetch costs two instructions (`docs/benchmarks.md`, issue 21).
        self.prefetch(&loc);
        // SAFETY: `loc` was made by `Location::of` with `self.index`.
        let (b1, b2) = unsafe { self.buckets_of(&loc) };
        match self.probe_optimistic(b1, b2, &loc) {
            Some(answer) => answer,
            // Only the hash goes to the cold path, which locates it again:
            // the two indices and the fingerprint need not stay in
            // registers (or be saved on the stack) across the probe.
            None => self.contains_prepared_contended::<P>(prepared),
        }
    }

    /// [`contains_contended`](Self::contains_contended) of the location of
    /// a prepared hash.
    #[cold]
    #[inline(never)]
    fn contains_prepared_contended<P: Scheme>(&self, prepared: u64) -> bool {
        let loc = Location::of_prepared::<P>(self.index, prepared);
        self.contains_contended(loc.i1, loc.i2, loc.fp)
    }

    /// Starts loading both buckets of `loc`. A hint, which never faults,
    /// so it needs no bounds check: the addresses are computed with
    /// wrapping arithmetic and never dereferenced.
    #[inline(always)]
    pub(crate) fn prefetch(&self, loc: &Location<F>) {
        prefetch_pair(&self.buckets, loc);
    }

    /// Both buckets of `loc`, without bounds checks (lookups make two per
    /// key otherwise, and the compiler cannot see that the index map's
    /// bucket count is the array's length).
    ///
    /// # Safety
    /// `loc.i1` and `loc.i2` are below `self.index.buckets()`: true of every
    /// location [`Location::of`] makes with `self.index`.
    #[inline(always)]
    unsafe fn buckets_of(&self, loc: &Location<F>) -> (&F::Bucket, &F::Bucket) {
        debug_assert!(loc.i1 < self.buckets.len() && loc.i2 < self.buckets.len());
        // SAFETY: `new` gives the array exactly `self.index.buckets()`
        // buckets; the array is never assigned again, and the index map
        // only by a decoder's `Level::set_map` before the table is shared,
        // to a map of the same bucket count (asserted there), so both
        // indices the caller guarantees below that count are in bounds.
        unsafe {
            (
                self.buckets.get_unchecked(loc.i1),
                self.buckets.get_unchecked(loc.i2),
            )
        }
    }

    /// Exact lookup that takes no lock and writes nothing in the common
    /// case (see the module docs): one optimistic attempt inline; a lookup
    /// whose versions changed under it continues out of line.
    #[inline(always)]
    pub(crate) fn contains(&self, loc: &Location<F>) -> bool {
        match self.contains_optimistic(loc) {
            Some(answer) => answer,
            // Scalars rather than `&Location`: a reference to it would have
            // to live in memory in every caller's loop, for a call that
            // almost never happens.
            None => self.contains_contended(loc.i1, loc.i2, loc.fp),
        }
    }

    /// One optimistic attempt: `None` if a move that bumped the pair's
    /// version may have hidden the fingerprint from this attempt.
    #[inline(always)]
    fn contains_optimistic(&self, loc: &Location<F>) -> Option<bool> {
        let (b1, b2) = (&self.buckets[loc.i1], &self.buckets[loc.i2]);
        self.probe_optimistic(b1, b2, loc)
    }

    /// [`contains_optimistic`](Self::contains_optimistic) on `b1` and `b2`,
    /// the buckets of `loc`.
    #[inline(always)]
    fn probe_optimistic(&self, b1: &F::Bucket, b2: &F::Bucket, loc: &Location<F>) -> Option<bool> {
        probe_optimistic(self.stripes.read_version(loc.i1, loc.i2), b1, b2, loc.fp)
    }

    /// The rest of a lookup whose first attempt raced a move: a few more
    /// optimistic attempts, then a read under both stripe locks, where no
    /// fingerprint of the pair can move, so the lookup always finishes.
    #[cold]
    #[inline(never)]
    pub(crate) fn contains_contended(&self, i1: usize, i2: usize, fp: F) -> bool {
        let loc = Location { i1, i2, fp };
        diagnostics::note_retry();
        for _ in 1..OPTIMISTIC_ATTEMPTS {
            spin_hint();
            if let Some(answer) = self.contains_optimistic(&loc) {
                return answer;
            }
            diagnostics::note_retry();
        }
        diagnostics::note_locked_read();
        let _guard = self.stripes.lock_pair(loc.i1, loc.i2);
        let (w1, w2) = (
            F::load(&self.buckets[loc.i1]),
            F::load(&self.buckets[loc.i2]),
        );
        F::probe_pair(w1, w2, loc.fp)
    }

    /// Inserts `loc.fp`. Returns `Ok(false)` only in [`Mode::Unique`] when a
    /// copy is already present.
    ///
    /// [`InsertError::Full`] only after a search of the table with every
    /// stripe locked found no path: a lock-free search that finds none
    /// (it may have missed a free slot that other writers moved around)
    /// or an insert whose paths other writers kept invalidating ends
    /// there.
    #[inline]
    pub(crate) fn insert(&self, loc: &Location<F>, mode: Mode) -> Result<bool, InsertError> {
        self.prefetch(loc);
        // Both lock lines, with the buckets: an insert whose primary is
        // full takes both locks, and its second lock's miss would
        // otherwise come after the look at the primary. Fetching the
        // primary's alone made per-key inserts out of cache 1.19x slower
        // (16 MiB, `scripts/ab-lookups.sh ... writes 16`).
        self.stripes.prefetch_locks(loc.i1, loc.i2);
        self.insert_prefetched(loc, mode)
    }

    /// [`insert`](Self::insert) once the buckets and lock lines of `loc` are
    /// on their way to the cache. Inline: the first try, which places most
    /// inserts, is all that runs in the common case; an insert whose
    /// buckets are both full continues out of line
    /// ([`insert_displacing`](Self::insert_displacing)), so the common
    /// path carries neither the search's 32 KiB queue on its stack frame
    /// (with the stack probe such a frame takes: ten page touches per
    /// call) nor the registers the search needs.
    #[inline(always)]
    fn insert_prefetched(&self, loc: &Location<F>, mode: Mode) -> Result<bool, InsertError> {
        // The first try of a multiset insert takes its primary's lock
        // alone (`single_lock.rs`).
        let placed = match mode {
            Mode::Multi => self.place_primary_first(loc),
            Mode::Unique => {
                let pair = self.stripes.lock_pair(loc.i1, loc.i2);
                match self.try_place(loc, mode, &pair, 0) {
                    None => self.place_by_one_move(loc, mode, pair),
                    decided => decided,
                }
            }
        };
        match placed {
            Some(done) => done,
            None => self.insert_displacing(loc, mode),
        }
    }

    /// The rest of an insert whose first try found both buckets full.
    #[inline(never)]
    fn insert_displacing(&self, loc: &Location<F>, mode: Mode) -> Result<bool, InsertError> {
        let (i1, i2) = (loc.i1, loc.i2);
        // Moves of the last path that went through: what freed the slot.
        let mut path_len = 0;
        for attempt in 1..=MAX_PATH_ATTEMPTS {
            // Both buckets are full: find a displacement path without locks,
            // execute it hop by hop, then try again under the locks (which
            // also re-checks duplicates, keeping `Unique` atomic).
            match self.search_path(i1, i2) {
                Some(path) => path_len = self.execute_path(&path).unwrap_or(0),
                None => {
                    // The search held no lock: a writer may have freed a
                    // slot in a root since, and writers moving around it
                    // may have hidden a free slot that was reachable at
                    // every instant (one freed in a bucket it had read
                    // full, the last one of a bucket it read later taken).
                    // A look at the roots under their locks settles the
                    // first; only the exact search under every lock can
                    // say "full".
                    let placed = {
                        let guard = self.stripes.lock_pair(i1, i2);
                        self.try_place(loc, mode, &guard, path_len)
                    };
                    return placed.unwrap_or_else(|| self.insert_exclusive(loc, mode));
                }
            }
            if attempt == MAX_PATH_ATTEMPTS {
                break;
            }
            if let Some(done) = self.try_place(loc, mode, &self.stripes.lock_pair(i1, i2), path_len)
            {
                return done;
            }
        }
        self.insert_exclusive(loc, mode)
    }

    /// The insert's decision under `guard` (which holds both buckets'
    /// stripes): `Some` result if it is decided (stored, already present
    /// for `Unique`, or too many copies), `None` if both buckets are full.
    /// `path_len` is recorded with a successful insert (statistics).
    ///
    /// Inlined into each caller, where `mode` and usually `path_len` are
    /// constants: this is most of an insert's work in cache.
    #[inline(always)]
    fn try_place(
        &self,
        loc: &Location<F>,
        mode: Mode,
        guard: &StripeGuard<'_>,
        path_len: usize,
    ) -> Option<Result<bool, InsertError>> {
        let (i1, i2, fp) = (loc.i1, loc.i2, loc.fp);
        if !self.accepting.load(Ordering::Relaxed) {
            // Closed under every stripe lock, one of which we now hold:
            // the closing is visible (see `close`).
            return Some(Err(InsertError::Full));
        }
        let (b1, b2) = (&self.buckets[i1], &self.buckets[i2]);
        let w1 = F::load(b1);
        // A free slot means fewer than 8 copies: no need to count. A
        // multiset insert that finds room in its primary bucket neither
        // reads nor waits for the alternate (whose miss is in flight too:
        // the later of two misses is on average slower than one).
        let primary_slot = F::free_slot(w1);
        let (i, bucket, word, slot) = match (mode, primary_slot) {
            (Mode::Multi, Some(slot)) => (i1, b1, w1, slot),
            _ => {
                let w2 = F::load(b2);
                if mode == Mode::Unique && F::probe_pair(w1, w2, fp) {
                    return Some(Ok(false));
                }
                match (primary_slot, F::free_slot(w2)) {
                    (Some(slot), _) => (i1, b1, w1, slot),
                    (None, Some(slot)) => (i2, b2, w2, slot),
                    (None, None) => return self.both_full(w1, w2, fp, i1, guard),
                }
            }
        };
        F::store_slot(bucket, word, slot, fp);
        guard.add_len(i, 1);
        guard.record_insert(i1, path_len);
        Some(Ok(true))
    }

    /// [`try_place`](Self::try_place) when both buckets are full: refused
    /// if they hold `2 * SLOTS` copies of `fp`, otherwise undecided (a
    /// displacement path may free a slot).
    #[inline(never)]
    fn both_full(
        &self,
        w1: F::Word,
        w2: F::Word,
        fp: F,
        i1: usize,
        guard: &StripeGuard<'_>,
    ) -> Option<Result<bool, InsertError>> {
        if F::count(w1, fp) + F::count(w2, fp) >= 2 * SLOTS {
            guard.record_duplicate(i1);
            return Some(Err(InsertError::TooManyDuplicates));
        }
        None
    }

    /// An insert that lost the race for paths `MAX_PATH_ATTEMPTS` times,
    /// or whose lock-free search found none: with every stripe locked
    /// nothing changes under the search, so the path it finds is valid and
    /// "no path" means full. Writers wait meanwhile (as for `clear`);
    /// lookups do not. Near full this is what every refused insert costs
    /// (a lock of every stripe and one search), the price of `Full`
    /// meaning full.
    #[cold]
    #[inline(never)]
    fn insert_exclusive(&self, loc: &Location<F>, mode: Mode) -> Result<bool, InsertError> {
        self.insert_under_all(loc, mode, &self.stripes.lock_all())
    }

    /// An insert under `all`, which holds every stripe: the fast path, and
    /// if both buckets are full, a search and its moves in a table no other
    /// writer can change, so its answer is exact.
    #[inline(always)]
    fn insert_under_all(
        &self,
        loc: &Location<F>,
        mode: Mode,
        all: &StripeGuard<'_>,
    ) -> Result<bool, InsertError> {
        match self.try_place(loc, mode, all, 0) {
            Some(done) => done,
            None => self.displace_under_all(loc, mode, all),
        }
    }

    /// The rest of [`insert_under_all`](Self::insert_under_all) when both
    /// buckets are full (out of line: most inserts never get here).
    #[inline(never)]
    fn displace_under_all(
        &self,
        loc: &Location<F>,
        mode: Mode,
        all: &StripeGuard<'_>,
    ) -> Result<bool, InsertError> {
        let Some(path) = self.search_path(loc.i1, loc.i2) else {
            all.record_full(loc.i1);
            return Err(InsertError::Full);
        };
        for hop in path.hops() {
            let moved = self.move_locked(all, hop);
            debug_assert!(moved, "a path found in a locked table is valid");
        }
        self.try_place(loc, mode, all, path.len())
            .unwrap_or(Err(InsertError::Full))
    }

    /// Inserts the `n` hashes `hash_at(0..n)` in order, each exactly as by
    /// [`insert`](Self::insert) in `mode`, stopping at the first refused
    /// one: `Err((index, why))`. `stored(k, new)` hears each accepted
    /// key's answer (`false` only for a `Unique` key already present, one
    /// earlier in the batch included). Pipelined: see
    /// [`pipelined`](Self::pipelined).
    #[inline]
    pub(crate) fn insert_batch(
        &self,
        n: usize,
        hash_at: impl Fn(usize) -> u64,
        mode: Mode,
        mut stored: impl FnMut(usize, bool),
    ) -> Result<(), (usize, InsertError)> {
        self.pipelined(n, &hash_at, true, |k, loc, guard| {
            // The planted bug: a set-style batch decides "already
            // present" with a lookup outside its locks, then stores a copy.
            #[cfg(concurrent_cuckoo_canary = "unique_batch_unlocked")]
            if mode == Mode::Unique {
                match guard {
                    Guard::Pair(_) => return Step::Unlocked,
                    Guard::None => {
                        if self.contains(loc) {
                            stored(k, false);
                            return Step::Done;
                        }
                        return match self.insert_prefetched(loc, Mode::Multi) {
                            Ok(_) => {
                                stored(k, true);
                                Step::Done
                            }
                            Err(e) => Step::Stop((k, e)),
                        };
                    }
                    Guard::All(_) => {}
                }
            }
            let done = match guard {
                Guard::All(all) => self.insert_under_all(loc, mode, all),
                Guard::Pair(pair) => match self.try_place(loc, mode, pair, 0) {
                    Some(done) => done,
                    None => return Step::Unlocked,
                },
                Guard::None => self.insert_prefetched(loc, mode),
            };
            match done {
                Ok(new) => {
                    stored(k, new);
                    Step::Done
                }
                Err(e) => Step::Stop((k, e)),
            }
        })
    }

    /// Removes one copy of each of the `out.len()` hashes `hash_at(i)`, in
    /// order, each exactly as by [`remove`](Self::remove); `out[i]` tells
    /// whether a copy was removed. Pipelined: see [`pipelined`](Self::pipelined).
    pub(crate) fn remove_batch(&self, hash_at: impl Fn(usize) -> u64, out: &mut [bool]) {
        let result: Result<(), ()> = self.pipelined(out.len(), &hash_at, false, |k, loc, guard| {
            out[k] = match guard {
                Guard::All(g) | Guard::Pair(g) => self.remove_locked(loc, g),
                Guard::None => self.remove(loc),
            };
            Step::Done
        });
        debug_assert!(result.is_ok());
    }

    /// The batch pipeline shared by [`insert_batch`](Self::insert_batch)
    /// and [`remove_batch`](Self::remove_batch): calls `op(k, location,
    /// guard)` for `k` in `0..n`, in order.
    ///
    /// Keys go in chunks of up to [`CHUNK_PER_STRIPE`] keys per stripe
    /// (at least [`BLOCK`]). A chunk's hashes are all computed first, with
    /// no lock held (`hash_at` may be a user's `Hash` impl, which must not
    /// run under the filter's locks); then its keys are written in order,
    /// each key's buckets (and lock lines) prefetched [`PREFETCH_DISTANCE`]
    /// keys ahead, so a write finds its lines in cache while the misses of
    /// the keys behind it overlap.
    ///
    /// Locking: a chunk of at least half as many keys as the table has
    /// stripes takes every stripe once ([`Guard::All`]): at most two
    /// acquisitions per key and usually far fewer (one per eight keys for
    /// a long batch), against two per key for a pair, and a key that needs
    /// a displacement path runs it under the same locks, in a table no
    /// other writer changes. The batch keeps them only while no one else
    /// wants one: before each key it checks [`Stripes::has_waiters`], and
    /// if another thread (a writer, a `count`, a lookup's locked fallback)
    /// is waiting for a stripe, it releases them all at once and writes
    /// the rest of the chunk under pair locks, so nobody waits for more
    /// than the key in progress. Shorter chunks lock each key's two
    /// stripes ([`Guard::Pair`]); an op that needs a path answers
    /// [`Step::Unlocked`] and is called again with [`Guard::None`], to
    /// search and move as a lone insert does. Either way each key is one
    /// ordinary write under the locks of its buckets.
    #[inline]
    fn pipelined<E>(
        &self,
        n: usize,
        hash_at: &impl Fn(usize) -> u64,
        inserting: bool,
        mut op: impl FnMut(usize, &Location<F>, Guard<'_, '_>) -> Step<E>,
    ) -> Result<(), E> {
        let empty = Location {
            i1: 0,
            i2: 0,
            fp: F::EMPTY,
        };
        let chunk = (CHUNK_PER_STRIPE * self.stripes.count()).max(BLOCK).min(n);
        let look_ahead =
            inserting && core::mem::size_of_val(&*self.buckets) >= LOOK_AHEAD_MIN_BYTES;
        // Short batches (a dataplane burst) stay on the stack.
        let mut on_stack = [empty; BLOCK];
        let mut on_heap = Vec::new();
        let buffer: &mut [Location<F>] = if chunk <= BLOCK {
            &mut on_stack[..chunk]
        } else {
            on_heap.resize(chunk, empty);
            &mut on_heap
        };
        let mut start = 0;
        while start < n {
            let locs = &mut buffer[..chunk.min(n - start)];
            for (j, loc) in locs.iter_mut().enumerate() {
                *loc = self.locate(hash_at(start + j));
            }
            self.write_chunk(start, locs, look_ahead, &mut op)?;
            start += locs.len();
        }
        Ok(())
    }

    /// Writes one chunk of a batch whose first key is number `start` (see
    /// [`pipelined`](Self::pipelined)).
    #[inline]
    fn write_chunk<E>(
        &self,
        start: usize,
        locs: &[Location<F>],
        look_ahead: bool,
        op: &mut impl FnMut(usize, &Location<F>, Guard<'_, '_>) -> Step<E>,
    ) -> Result<(), E> {
        let mut all = (self.stripes.count() <= 2 * locs.len()).then(|| self.stripes.lock_all());
        let prefetch = |loc: &Location<F>, locks: bool| {
            self.prefetch(loc);
            if locks {
                self.stripes.prefetch_locks(loc.i1, loc.i2);
            }
        };
        for loc in &locs[..PREFETCH_DISTANCE.min(locs.len())] {
            prefetch(loc, all.is_none());
        }
        for (j, loc) in locs.iter().enumerate() {
            if let Some(ahead) = locs.get(j + PREFETCH_DISTANCE) {
                prefetch(ahead, all.is_none());
            }
            if look_ahead {
                if let Some(soon) = locs.get(j + PATH_LOOKAHEAD) {
                    self.prefetch_first_hops(soon);
                }
            }
            if all.is_some() && self.stripes.has_waiters() {
                // Someone wants a stripe: release them all now rather than
                // after the chunk (dropping the guard unlocks every stripe).
                all = None;
            }
            let step = match &all {
                Some(all) => match op(start + j, loc, Guard::All(all)) {
                    Step::Unlocked => unreachable!("every path runs under all locks"),
                    step => step,
                },
                None => {
                    // The pair guard must be gone before a retry without
                    // it: the retry takes these locks again.
                    let step = {
                        let pair = self.stripes.lock_pair(loc.i1, loc.i2);
                        op(start + j, loc, Guard::Pair(&pair))
                    };
                    match step {
                        Step::Unlocked => op(start + j, loc, Guard::None),
                        step => step,
                    }
                }
            };
            match step {
                Step::Done => {}
                Step::Stop(e) => return Err(e),
                Step::Unlocked => unreachable!("an op without a guard must decide"),
            }
        }
        Ok(())
    }

    /// If both buckets of `loc` (fetched a few keys ago) look full, starts
    /// fetching the buckets their fingerprints would move to: the first
    /// level of the displacement search the insert of `loc` will run a few
    /// keys from now. Near full, half the keys need that search, and
    /// its first level then costs no wait. A hint from a racy look: the
    /// search itself reads the table again. Not under loom, where
    /// prefetches do nothing and the extra loads would only add
    /// interleavings.
    #[inline(always)]
    fn prefetch_first_hops(&self, loc: &Location<F>) {
        #[cfg(not(concurrent_cuckoo_loom))]
        {
            let (w1, w2) = (
                F::load(&self.buckets[loc.i1]),
                F::load(&self.buckets[loc.i2]),
            );
            if F::free_slot(w1).is_some() || F::free_slot(w2).is_some() {
                return;
            }
            for (bucket, word) in [(loc.i1, w1), (loc.i2, w2)] {
                for slot in 0..SLOTS {
                    let fp = F::slot(word, slot).to_u64();
                    prefetch(&self.buckets[self.index.alternate(bucket, fp)]);
                }
            }
        }
        #[cfg(concurrent_cuckoo_loom)]
        let _ = loc;
    }

    /// [`remove`](Self::remove) under `guard`, which holds both buckets'
    /// stripes.
    #[inline]
    fn remove_locked(&self, loc: &Location<F>, guard: &StripeGuard<'_>) -> bool {
        let (i1, i2, fp) = (loc.i1, loc.i2, loc.fp);
        let (w1, w2) = (F::load(&self.buckets[i1]), F::load(&self.buckets[i2]));
        // The copy in the primary bucket goes first, as the paper's delete.
        let (at, word, slot, other) = match (F::find(w1, fp), F::find(w2, fp)) {
            (Some(slot), _) => (i1, w1, slot, w2),
            (None, Some(slot)) => (i2, w2, slot, w1),
            (None, None) => return false,
        };
        // Another copy stays in the pair outside the atomic word we write:
        // to a reader this remove is a move (see the module docs).
        #[cfg(not(concurrent_cuckoo_canary = "skip_remove_bump"))]
        if F::copy_outside_word(word, slot, fp) || F::count(other, fp) > 0 {
            guard.bump_version(i1, i2);
        }
        #[cfg(concurrent_cuckoo_canary = "skip_remove_bump")]
        let _ = other; // the planted bug: never tell readers
        F::store_slot(&self.buckets[at], word, slot, F::EMPTY);
        guard.add_len(at, -1);
        guard.record_remove(i1);
        true
    }

    /// Copies of `loc.fp` in its two buckets (0 to 8), read under both
    /// stripe locks: an optimistic read could count a moving copy twice
    /// (in its destination, and in its source before the clear).
    pub(crate) fn count(&self, loc: &Location<F>) -> usize {
        self.prefetch(loc);
        let _guard = self.stripes.lock_pair(loc.i1, loc.i2);
        F::count(F::load(&self.buckets[loc.i1]), loc.fp)
            + F::count(F::load(&self.buckets[loc.i2]), loc.fp)
    }

    /// Empties the table, holding every stripe lock. No version bump: a key
    /// it clears is absent afterwards (see the module docs).
    pub(crate) fn clear(&self) {
        self.clear_locked(&self.stripes.lock_all());
    }

    /// [`clear`](Self::clear) under `all`, which holds every stripe.
    /// Writes only the buckets that hold something: a bucket already empty
    /// is left untouched, so clearing a lazily zeroed mapping (or one given
    /// back with `discard`) reads its untouched pages (the kernel's shared
    /// zero page) instead of committing them.
    pub(crate) fn clear_locked(&self, all: &StripeGuard<'_>) {
        debug_assert!(all.holds_all());
        for bucket in self.buckets.iter() {
            if F::occupied(F::load(bucket)) != 0 {
                F::clear_bucket(bucket);
            }
        }
        all.reset_counts();
    }

    pub(crate) fn len(&self) -> usize {
        self.stripes.len()
    }

    /// Whether the stripes of `loc`'s two buckets count no items: the
    /// cheap first test of whether a remove there emptied the table (an
    /// empty table has every stripe at 0), before [`len`](Self::len) sums
    /// every stripe (up to 4096 cache lines).
    pub(crate) fn pair_stripes_empty(&self, loc: &Location<F>) -> bool {
        self.stripes.stripe_len(loc.i1) <= 0 && self.stripes.stripe_len(loc.i2) <= 0
    }

    /// Stops inserts (`all` holds every stripe lock, so no insert is
    /// between its check and its store) and, if the table is empty, gives
    /// its memory back (`ZeroedArray::discard`). Returns whether it did.
    #[cfg_attr(concurrent_cuckoo_loom, allow(dead_code))]
    pub(crate) fn close(&self, all: &StripeGuard<'_>) -> bool {
        debug_assert!(all.holds_all());
        // Release: a lookup that skips this table because it reads it
        // closed (`is_accepting`, acquire) then sees everything its closer
        // did before, such as a compaction's moves out of it (the lookup's
        // check of the move sequence relies on it: `src/scalable/moves.rs`).
        #[cfg(not(concurrent_cuckoo_canary = "relaxed_close"))]
        self.accepting.store(false, Ordering::Release);
        // The canary plants a relaxed store: a lookup that reads the level
        // closed may not see the moves out of it.
        #[cfg(concurrent_cuckoo_canary = "relaxed_close")]
        self.accepting.store(false, Ordering::Relaxed);
        self.stripes.len() == 0 && self.buckets.discard()
    }

    /// Takes inserts again (a scalable filter's growth, before it
    /// publishes the level).
    #[cfg_attr(concurrent_cuckoo_loom, allow(dead_code))]
    pub(crate) fn reopen(&self) {
        self.accepting.store(true, Ordering::Release);
    }

    /// Whether inserts may store here.
    #[inline]
    pub(crate) fn is_accepting(&self) -> bool {
        self.accepting.load(Ordering::Acquire)
    }

    pub(crate) fn bucket_count(&self) -> usize {
        self.index.buckets()
    }

    pub(crate) fn fingerprint_bits(&self) -> u32 {
        F::BITS
    }

    /// Bytes of one bucket.
    #[cfg_attr(concurrent_cuckoo_loom, allow(dead_code))]
    pub(crate) fn bucket_bytes(&self) -> usize {
        F::BUCKET_BYTES
    }

    pub(crate) fn memory_usage(&self) -> usize {
        core::mem::size_of_val(&*self.buckets) + self.stripes.memory_usage()
    }

    /// Bytes this table holds once closed and emptied (a retired level of
    /// a growing filter): its locks and version words, and its buckets
    /// unless they are a mapping, whose memory `close` gave back.
    #[cfg_attr(concurrent_cuckoo_loom, allow(dead_code))]
    pub(crate) fn retired_memory_usage(&self) -> usize {
        let buckets = if self.buckets.is_mapped() {
            0
        } else {
            core::mem::size_of_val(&*self.buckets)
        };
        buckets + self.stripes.memory_usage()
    }

    /// Counts occupied slots by scanning (for tests and invariant checks).
    pub(crate) fn count_occupied(&self) -> usize {
        self.buckets.iter().map(|b| F::occupied(F::load(b))).sum()
    }

    /// Offers the table's blocks to `mover` (`relocate.rs`): its buckets,
    /// lock stripes and version words.
    #[cfg(not(concurrent_cuckoo_loom))]
    pub(crate) fn relocate(
        &mut self,
        mover: &mut dyn crate::relocate::Relocate,
        tally: &mut crate::relocate::Relocated,
    ) {
        self.buckets.relocate(mover, tally);
        self.stripes.relocate(mover, tally);
    }
}

/// Starts loading both buckets of `loc` in `buckets`, for the table and
/// its [`LiveView`](crate::live_view::LiveView). A hint, which never
/// faults, so it needs no bounds check: the addresses are computed with
/// wrapping arithmetic and never dereferenced.
#[inline(always)]
pub(crate) fn prefetch_pair<F: Fingerprint>(buckets: &[F::Bucket], loc: &Location<F>) {
    let base = buckets.as_ptr();
    prefetch(base.wrapping_add(loc.i1));
    prefetch(base.wrapping_add(loc.i2));
}

/// One optimistic attempt on the buckets `b1` and `b2` of a pair whose
/// version was read (acquire) as `version`: `Some(true)` if either holds
/// `fp`; `Some(false)` if neither does and the version is unchanged;
/// `None` if a move that bumped it may have hidden `fp` from this attempt.
/// The one copy of the protocol's read side (module docs), for the table's
/// lookups and its [`LiveView`](crate::live_view::LiveView).
#[inline(always)]
pub(crate) fn probe_optimistic<F: Fingerprint>(
    version: VersionSnapshot<'_>,
    b1: &F::Bucket,
    b2: &F::Bucket,
    fp: F,
) -> Option<bool> {
    // Both loads are issued before either is compared, so their misses
    // overlap.
    let (w1, w2) = (F::load(b1), F::load(b2));
    if F::probe_pair(w1, w2, fp) {
        return Some(true);
    }
    fence(Ordering::Acquire);
    version.unchanged().then_some(false)
}

/// Per-thread counts of lookups that had to retry, for measuring how often
/// moves disturb readers (`harness retries`). Thread-local, and touched only
/// on the out-of-line contended path, so lookups still write no shared
/// memory and the common case pays nothing.
pub(crate) mod diagnostics {
    #[cfg(not(concurrent_cuckoo_loom))]
    std::thread_local! {
        static COUNTS: core::cell::Cell<(u64, u64)> = const { core::cell::Cell::new((0, 0)) };
    }

    #[inline]
    pub(crate) fn note_retry() {
        #[cfg(not(concurrent_cuckoo_loom))]
        COUNTS.with(|c| c.set((c.get().0 + 1, c.get().1)));
    }

    #[inline]
    pub(crate) fn note_locked_read() {
        #[cfg(not(concurrent_cuckoo_loom))]
        COUNTS.with(|c| c.set((c.get().0, c.get().1 + 1)));
    }

    /// `(failed optimistic attempts, lookups finished under the locks)` on
    /// this thread since it started.
    #[cfg_attr(concurrent_cuckoo_loom, allow(dead_code))]
    pub(crate) fn thread_counts() -> (u64, u64) {
        #[cfg(not(concurrent_cuckoo_loom))]
        return COUNTS.with(|c| c.get());
        #[cfg(concurrent_cuckoo_loom)]
        (0, 0)
    }
}
