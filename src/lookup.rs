//! The lookup pipeline shared by the live table and frozen filters.
//!
//! Both answer "is this fingerprint in either of its two buckets?" the same
//! way, from different storage: the live table from atomic buckets with
//! version validation (`table.rs`), a [`FrozenFilter`](crate::FrozenFilter)
//! from immutable bytes. What they share is how a hash becomes a
//! [`Location`] and how a burst is pipelined, so both are written once,
//! here.

use crate::fingerprint::Fingerprint;
use crate::index::{
    with_scheme, FinalizedHashes, HashScheme, IndexMap, NestedHashes, RawHashes, Scheme,
};

/// Where a hash lives: both candidate buckets and the fingerprint.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Location<F> {
    pub(crate) i1: usize,
    pub(crate) i2: usize,
    pub(crate) fp: F,
}

impl<F: Fingerprint> Location<F> {
    /// The buckets and fingerprint of `hash` under `index`, whose scheme is
    /// `P` (the one definition of the map from a hash to its location:
    /// `docs/format.md`, "Body"). Both buckets are below
    /// `index.buckets()`, for every hash ([`IndexMap::primary`],
    /// [`IndexMap::alternate`]).
    #[inline(always)]
    pub(crate) fn of<P: Scheme>(index: IndexMap, hash: u64) -> Self {
        Self::of_prepared::<P>(index, index.prepare_as::<P>(hash))
    }

    /// [`of`](Self::of) for a hash already prepared for `index`
    /// ([`IndexMap::prepare_as`]): a growing filter finalizes a hash once
    /// for all its levels.
    #[inline(always)]
    pub(crate) fn of_prepared<P: Scheme>(index: IndexMap, hash: u64) -> Self {
        let fp = F::from_hash(hash);
        let i1 = index.primary(hash);
        let i2 = index.alternate_as::<P>(i1, fp.to_u64());
        debug_assert!(i1 < index.buckets() && i2 < index.buckets());
        Location { i1, i2, fp }
    }
}

/// A table that answers lookups.
pub(crate) trait Lookup<F: Fingerprint> {
    /// The map from hashes to this table's buckets.
    fn index(&self) -> IndexMap;
    /// Starts loading both buckets of `loc`.
    fn prefetch(&self, loc: &Location<F>);
    /// Exact answer: does either bucket of `loc` hold `loc.fp`?
    fn contains(&self, loc: &Location<F>) -> bool;

    /// [`contains`](Self::contains) for a location known to be this
    /// table's, which a table may answer without bounds checks.
    ///
    /// # Safety
    /// `loc.i1` and `loc.i2` are below `self.index().buckets()`, as in every
    /// location that [`Location::of`] makes with `self.index()`.
    #[inline(always)]
    unsafe fn contains_located(&self, loc: &Location<F>) -> bool {
        self.contains(loc)
    }

    /// The buckets and fingerprint of a 64-bit hash.
    #[inline(always)]
    fn locate(&self, hash: u64) -> Location<F> {
        let index = self.index();
        with_scheme!(index.scheme(), P => Location::of::<P>(index, hash))
    }

    /// Looks up `out.len()` hashes produced by `hash_at`, writing answers
    /// to `out`.
    ///
    /// Software-pipelined: the buckets of the hash `AHEAD` positions further
    /// on are prefetched while the current one is probed, so about
    /// `2 * AHEAD` cache misses are in flight at once, instead of two. Each
    /// key is answered exactly as by [`contains`](Self::contains).
    ///
    /// The table's hash scheme is read once, here, and the loop is compiled
    /// for it; so is its index map, which the loop keeps in registers
    /// rather than reloading from the table after every acquire load.
    ///
    /// Nested maps (a growing filter's levels) run their loop out of line:
    /// inlined as a third arm, it made the fixed filter's batches (which
    /// never have one) 4-6% slower (`docs/benchmarks.md`).
    #[inline]
    fn contains_batch(&self, hash_at: impl Fn(usize) -> u64, out: &mut [bool]) {
        match self.index().scheme() {
            HashScheme::Raw => self.contains_batch_as::<RawHashes>(hash_at, out),
            HashScheme::Finalized => self.contains_batch_as::<FinalizedHashes>(hash_at, out),
            HashScheme::Nested => self.contains_batch_nested(hash_at, out),
        }
    }

    /// [`contains_batch`](Self::contains_batch) for a nested map, out of
    /// line.
    #[inline(never)]
    fn contains_batch_nested(&self, hash_at: impl Fn(usize) -> u64, out: &mut [bool]) {
        self.contains_batch_as::<NestedHashes>(hash_at, out);
    }

    /// [`contains_batch`](Self::contains_batch) for a table whose hash
    /// scheme is `P`.
    #[inline(always)]
    fn contains_batch_as<P: Scheme>(&self, hash_at: impl Fn(usize) -> u64, out: &mut [bool]) {
        const AHEAD: usize = 8;
        let index = self.index();
        let n = out.len();
        let mut ring = [Location {
            i1: 0,
            i2: 0,
            fp: F::EMPTY,
        }; AHEAD];
        for (k, slot) in ring.iter_mut().enumerate().take(n) {
            *slot = Location::of::<P>(index, hash_at(k));
            self.prefetch(slot);
        }
        // The keys with a key `AHEAD` further on, then the last `AHEAD`:
        // two loops, so that neither asks per key whether there is one.
        let (body, tail) = out.split_at_mut(n.saturating_sub(AHEAD));
        for (k, answer) in body.iter_mut().enumerate() {
            let current = ring[k % AHEAD];
            let next = Location::of::<P>(index, hash_at(k + AHEAD));
            self.prefetch(&next);
            ring[k % AHEAD] = next;
            // SAFETY: `current` was made by `Location::of` with `index`,
            // which is `self.index()`.
            *answer = unsafe { self.contains_located(&current) };
        }
        let start = body.len();
        // The ring's filler is never read: the first `min(n, AHEAD)`
        // entries were made above, and `tail` reads exactly those not yet
        // overwritten (its bucket 0 would be in range anyway, every table
        // having at least two).
        for (k, answer) in (start..).zip(tail) {
            // SAFETY: every entry read was made by `Location::of` with `index`.
            *answer = unsafe { self.contains_located(&ring[k % AHEAD]) };
        }
    }
}
