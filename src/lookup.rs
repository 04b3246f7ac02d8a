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
use crate::stages::staged;

/// Keys [`Lookup::contains_signed_batch`] hashes at a time, before it
/// locates and probes them: a stage of the pipeline.
const SIGNED_CHUNK: usize = crate::stages::STAGE;

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
    /// A chunk of [`SIGNED_CHUNK`] keys at a time: the keys hashed in a
    /// loop of their own, then located and probed in a stage. Requesting
    /// every primary bucket from the signatures first, before hashing
    /// (the signature alone picks it), was measured and is slower: 16.7
    /// against 15.8 ns a key at 2^24 keys, and 17.4 with the hashing
    /// inside the stage's loop of prefetches (`docs/benchmarks.md`).
    #[inline]
    fn contains_signed_batch(
        &self,
        signature_at: impl Fn(usize) -> u32,
        key_hash_at: impl Fn(usize) -> u64,
        out: &mut [bool],
    ) {
        let index = self.index();
        with_scheme!(index.scheme(), P => {
            for (chunk, answers) in out.chunks_mut(SIGNED_CHUNK).enumerate() {
                let start = chunk * SIGNED_CHUNK;
                let mut key_hashes = [0u64; SIGNED_CHUNK];
                for (j, hash) in key_hashes[..answers.len()].iter_mut().enumerate() {
                    *hash = key_hash_at(start + j);
                }
                let locate = |j: usize| {
                    let prepared = signed_prepared(signature_at(start + j), key_hashes[j]);
                    Location::of_prepared::<P>(index, prepared)
                };
                // SAFETY: `Location::of_prepared` with `self.index()`.
                unsafe { self.contains_located_batch(locate, answers) };
            }
        });
    }

    /// The lookup pipeline: `out[k]` as [`contains`](Self::contains) of
    /// `locate(k)`, for `k` in order, in [`staged`] stages.
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
        staged(
            out.len(),
            locate,
            |loc| self.prefetch(loc),
            // SAFETY: `loc` was made by `locate` (the caller's promise).
            |k, loc| out[k] = unsafe { self.contains_located(loc) },
        );
    }
}
