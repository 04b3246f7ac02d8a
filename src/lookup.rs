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
    signed_prepared, with_scheme, FinalizedHashes, HashScheme, IndexMap, NestedHashes, RawHashes,
    Scheme,
};
use core::mem::MaybeUninit;

/// How many keys ahead [`Lookup::contains_signed_batch`] starts loading a
/// key's primary bucket from its signature: a burst of 32 (a dataplane's)
/// has every primary on its way before the first probe.
pub(crate) const SIGNED_AHEAD: usize = 32;

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
    /// Starts loading bucket `i`; a hint, which never faults (whatever
    /// `i`).
    fn prefetch_bucket(&self, i: usize);
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
    /// In stages of 32 keys (see
    /// [`contains_located_batch`](Self::contains_located_batch)): a
    /// stage's buckets are all on their way before the stage is probed.
    /// Each key is answered exactly as by [`contains`](Self::contains).
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
        let index = self.index();
        // SAFETY: `Location::of` with `self.index()`.
        unsafe { self.contains_located_batch(|k| Location::of::<P>(index, hash_at(k)), out) };
    }

    /// Looks up `out.len()` keys, each given as its 32-bit signature
    /// (`signature_at`) and its own hash (`key_hash_at`): `out[k]` as
    /// [`contains`](Self::contains) of the location of
    /// [`signed_prepared`]`(signature_at(k), key_hash_at(k))`.
    ///
    /// The signature alone picks a key's primary bucket, so a chunk of
    /// [`SIGNED_AHEAD`] keys first starts loading every primary from the
    /// signatures, then hashes the keys (their alternates follow) while
    /// those load, then probes: hashing overlaps the primaries' misses.
    #[inline]
    fn contains_signed_batch(
        &self,
        signature_at: impl Fn(usize) -> u32,
        key_hash_at: impl Fn(usize) -> u64,
        out: &mut [bool],
    ) {
        let index = self.index();
        with_scheme!(index.scheme(), P => {
            for (chunk, answers) in out.chunks_mut(SIGNED_AHEAD).enumerate() {
                let start = chunk * SIGNED_AHEAD;
                // Every primary of the chunk, from the signatures alone,
                // before any of its keys is hashed.
                for k in start..start + answers.len() {
                    let prepared = signed_prepared(signature_at(k), 0);
                    self.prefetch_bucket(index.primary(prepared));
                }
                let locate = |j: usize| {
                    let k = start + j;
                    let prepared = signed_prepared(signature_at(k), key_hash_at(k));
                    Location::of_prepared::<P>(index, prepared)
                };
                // SAFETY: `Location::of_prepared` with `self.index()`.
                unsafe { self.contains_located_batch(locate, answers) };
            }
        });
    }

    /// The lookup pipeline: `out[k]` as [`contains`](Self::contains) of
    /// `locate(k)`, for `k` in order.
    ///
    /// Keys go in stages of 32: every location of the next stage is made
    /// and its two buckets prefetched, then the current stage is probed.
    /// The making of locations is a loop of arithmetic and prefetches with
    /// no load that waits, so a stage's 64 misses are issued together,
    /// and a probe that waits for its line holds back only the probes.
    /// A sliding window (each key's buckets prefetched 8 keys ahead of
    /// its probe, as this was before) put a waiting probe between every
    /// two prefetches: once the core's window filled behind it, the later
    /// prefetches waited too. At 2^24 keys (32 MiB) bursts of 32 took
    /// 20.4 ns a key that way and 11.3 in stages, a batch of 4M keys 17.6
    /// against 6.0; in cache, no change (`docs/benchmarks.md`).
    ///
    /// # Safety
    /// Every location `locate` returns has both buckets below
    /// `self.index().buckets()`, as every one [`Location::of`] and
    /// [`Location::of_prepared`] make with `self.index()` has.
    #[inline(always)]
    unsafe fn contains_located_batch(
        &self,
        locate: impl Fn(usize) -> Location<F>,
        out: &mut [bool],
    ) {
        const STAGE: usize = 32;
        type Stage<F> = [MaybeUninit<Location<F>>; STAGE];
        let n = out.len();
        // Uninitialised: a burst of a few keys writes only its own
        // entries, not 64 locations' worth of filler.
        let mut stages: [Stage<F>; 2] = [[MaybeUninit::uninit(); STAGE]; 2];
        // Locates keys `start..` (at most a stage's worth) into `stage`
        // and starts loading their buckets; how many.
        let fill = |stage: &mut Stage<F>, start: usize| {
            let len = STAGE.min(n - start);
            for (j, slot) in stage[..len].iter_mut().enumerate() {
                let loc = locate(start + j);
                self.prefetch(&loc);
                slot.write(loc);
            }
            len
        };
        let [first, second] = &mut stages;
        let (mut this, mut other) = (first, second);
        let mut start = 0;
        let mut len = if n > 0 { fill(this, 0) } else { 0 };
        while len > 0 {
            let next = start + len;
            let next_len = if next < n { fill(other, next) } else { 0 };
            for (answer, slot) in out[start..next].iter_mut().zip(&this[..len]) {
                // SAFETY: `fill` wrote `this[..len]` with locations made
                // by `locate`, whose buckets are in range (the caller's
                // promise).
                *answer = unsafe { self.contains_located(slot.assume_init_ref()) };
            }
            core::mem::swap(&mut this, &mut other);
            start = next;
            len = next_len;
        }
    }
}
