//! The concurrent table of one fingerprint width: lookup, insert, remove.
//!
//! # Why a lock-free reader never misses a moving fingerprint
//! A fingerprint `f` of a key with candidate buckets `{x, y}` only ever moves
//! between `x` and `y` (the alternate of `x` under `f` is `y`). A move
//! (`path.rs`) holds both stripe locks and does, in order:
//! 1. store `f` into a free slot of the destination (release);
//! 2. bump the version of the source's stripe (release RMW);
//! 3. clear the source slot (release).
//!
//! A reader loads both versions (acquire), loads both buckets, and on a hit
//! returns at once: a stored fingerprint is never invented, only copied. On a
//! miss it issues an acquire fence and re-reads the versions. Suppose the
//! reader missed `f` while it was being moved. Then it read the destination
//! before step 1 was visible and the source after step 3 was. Reading the
//! cleared source (step 3, a release store) and then fencing with acquire
//! makes step 2 visible to the re-read, so the versions differ and the reader
//! retries. (Conversely, had its first version load seen step 2, step 1
//! would have been visible to its bucket loads and it would have hit.) Plain
//! inserts and removes cannot make a present item look absent, so they do
//! not bump versions and never make readers retry.
//!
//! The loom models in `loom-tests/` check exactly this protocol; the
//! `concurrent_cuckoo_canary` cfg reorders steps 1 and 3 to prove they bite.

use crate::error::InsertError;
use crate::fingerprint::{Fingerprint, SLOTS};
use crate::hashing::IndexMap;
use crate::storage::{prefetch, AllocFailed, BucketArray};
use crate::stripes::Stripes;
use crate::sync::{fence, spin_hint, Ordering};

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
/// How many times an insert searches for a new path after a concurrent
/// writer invalidated the previous one, before reporting the table full.
const MAX_PATH_ATTEMPTS: usize = 32;

/// Where a hash lives: both candidate buckets and the fingerprint.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Location<F> {
    pub(crate) i1: usize,
    pub(crate) i2: usize,
    pub(crate) fp: F,
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
    pub(crate) buckets: BucketArray<F::Bucket>,
    pub(crate) index: IndexMap,
    pub(crate) stripes: Stripes,
    pub(crate) max_path: usize,
}

impl<F: Fingerprint> RawTable<F> {
    /// A table of `buckets` buckets (even, >= 2) and `stripes` stripes
    /// (a power of two), or the default stripe count when `None`.
    pub(crate) fn new(
        buckets: usize,
        stripes: Option<usize>,
        max_path: usize,
    ) -> Result<Self, AllocFailed> {
        assert!(max_path <= MAX_PATH_LIMIT);
        #[cfg(not(concurrent_cuckoo_loom))]
        let array = BucketArray::zeroed(buckets)?;
        #[cfg(concurrent_cuckoo_loom)]
        let array = BucketArray::from_fn(buckets, F::empty_bucket)?;
        Ok(Self {
            buckets: array,
            index: IndexMap::new(buckets),
            stripes: stripes.map_or_else(|| Stripes::for_buckets(buckets), Stripes::with_count),
            max_path,
        })
    }

    #[inline(always)]
    pub(crate) fn locate(&self, hash: u64) -> Location<F> {
        let fp = F::from_hash(hash);
        let i1 = self.index.primary(hash);
        let i2 = self.index.alternate(i1, fp.to_u64());
        Location { i1, i2, fp }
    }

    #[inline(always)]
    pub(crate) fn prefetch(&self, loc: &Location<F>) {
        prefetch(&self.buckets[loc.i1]);
        prefetch(&self.buckets[loc.i2]);
    }

    /// Optimistic, lock-free lookup (see the module docs).
    #[inline(always)]
    pub(crate) fn contains(&self, loc: &Location<F>) -> bool {
        let (b1, b2) = (&self.buckets[loc.i1], &self.buckets[loc.i2]);
        loop {
            let v1 = self.stripes.version(loc.i1);
            let v2 = self.stripes.version(loc.i2);
            // Both loads are issued before either is compared, so their
            // misses overlap.
            let (w1, w2) = (F::load(b1), F::load(b2));
            if F::probe_pair(w1, w2, loc.fp) {
                return true;
            }
            fence(Ordering::Acquire);
            if self.stripes.version_recheck(loc.i1) == v1
                && self.stripes.version_recheck(loc.i2) == v2
            {
                return false;
            }
            spin_hint();
        }
    }

    /// Looks up `n` hashes produced by `hash_at`, writing answers to `out`.
    ///
    /// Software-pipelined: the buckets of the hash `AHEAD` positions further
    /// on are prefetched while the current one is probed, so about
    /// `2 * AHEAD` cache misses are in flight at once, instead of two.
    #[inline]
    pub(crate) fn contains_batch(&self, hash_at: impl Fn(usize) -> u64, out: &mut [bool]) {
        const AHEAD: usize = 8;
        let n = out.len();
        let mut ring = [Location {
            i1: 0,
            i2: 0,
            fp: F::EMPTY,
        }; AHEAD];
        for (k, slot) in ring.iter_mut().enumerate().take(n) {
            *slot = self.locate(hash_at(k));
            self.prefetch(slot);
        }
        for (k, answer) in out.iter_mut().enumerate() {
            let current = ring[k % AHEAD];
            if k + AHEAD < n {
                let next = self.locate(hash_at(k + AHEAD));
                self.prefetch(&next);
                ring[k % AHEAD] = next;
            }
            *answer = self.contains(&current);
        }
    }

    /// Inserts `loc.fp`. Returns `Ok(false)` only in [`Mode::Unique`] when a
    /// copy is already present.
    pub(crate) fn insert(&self, loc: &Location<F>, mode: Mode) -> Result<bool, InsertError> {
        let (i1, i2, fp) = (loc.i1, loc.i2, loc.fp);
        self.prefetch(loc);
        self.stripes.prefetch_locks(i1, i2);
        for _ in 0..MAX_PATH_ATTEMPTS {
            {
                let guard = self.stripes.lock_pair(i1, i2);
                let (b1, b2) = (&self.buckets[i1], &self.buckets[i2]);
                let (w1, w2) = (F::load(b1), F::load(b2));
                let copies = F::count(w1, fp) + F::count(w2, fp);
                if mode == Mode::Unique && copies > 0 {
                    return Ok(false);
                }
                if copies >= 2 * SLOTS {
                    return Err(InsertError::TooManyDuplicates);
                }
                for (i, b, w) in [(i1, b1, w1), (i2, b2, w2)] {
                    if let Some(slot) = F::free_slot(w) {
                        F::store_slot(b, w, slot, fp);
                        guard.add_len(i, 1);
                        return Ok(true);
                    }
                }
            }
            // Both buckets are full: find a displacement path without locks,
            // execute it hop by hop, then try again under the locks (which
            // also re-checks duplicates, keeping `Unique` atomic).
            match self.search_path(i1, i2) {
                Some(path) => {
                    self.execute_path(&path);
                }
                None => return Err(InsertError::Full),
            }
        }
        Err(InsertError::Full)
    }

    /// Removes one copy of `loc.fp`, if present.
    pub(crate) fn remove(&self, loc: &Location<F>) -> bool {
        self.prefetch(loc);
        self.stripes.prefetch_locks(loc.i1, loc.i2);
        let guard = self.stripes.lock_pair(loc.i1, loc.i2);
        for i in [loc.i1, loc.i2] {
            let bucket = &self.buckets[i];
            let word = F::load(bucket);
            if let Some(slot) = F::find(word, loc.fp) {
                F::store_slot(bucket, word, slot, F::EMPTY);
                guard.add_len(i, -1);
                return true;
            }
        }
        false
    }

    /// Empties the table, holding every stripe lock.
    pub(crate) fn clear(&self) {
        let all = self.stripes.lock_all();
        for bucket in self.buckets.iter() {
            F::clear_bucket(bucket);
        }
        self.stripes.reset_counts(&all);
    }

    pub(crate) fn len(&self) -> usize {
        self.stripes.len()
    }

    pub(crate) fn bucket_count(&self) -> usize {
        self.index.buckets()
    }

    pub(crate) fn memory_usage(&self) -> usize {
        core::mem::size_of_val(&*self.buckets) + self.stripes.memory_usage()
    }

    /// Counts occupied slots by scanning (for tests and invariant checks).
    pub(crate) fn count_occupied(&self) -> usize {
        self.buckets.iter().map(|b| F::occupied(F::load(b))).sum()
    }
}
