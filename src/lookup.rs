//! The lookup pipeline shared by the live table and frozen filters.
//!
//! Both answer "is this fingerprint in either of its two buckets?" the same
//! way, from different storage: the live table from atomic buckets with
//! version validation (`table.rs`), a [`FrozenFilter`](crate::FrozenFilter)
//! from immutable bytes. What they share is how a burst is pipelined, so
//! it is written once, here.

use crate::fingerprint::Fingerprint;

/// Where a hash lives: both candidate buckets and the fingerprint.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Location<F> {
    pub(crate) i1: usize,
    pub(crate) i2: usize,
    pub(crate) fp: F,
}

/// A table that answers lookups.
pub(crate) trait Lookup<F: Fingerprint> {
    /// The buckets and fingerprint of a 64-bit hash.
    fn locate(&self, hash: u64) -> Location<F>;
    /// Starts loading both buckets of `loc`.
    fn prefetch(&self, loc: &Location<F>);
    /// Exact answer: does either bucket of `loc` hold `loc.fp`?
    fn contains(&self, loc: &Location<F>) -> bool;

    /// Looks up `out.len()` hashes produced by `hash_at`, writing answers
    /// to `out`.
    ///
    /// Software-pipelined: the buckets of the hash `AHEAD` positions further
    /// on are prefetched while the current one is probed, so about
    /// `2 * AHEAD` cache misses are in flight at once, instead of two. Each
    /// key is answered exactly as by [`contains`](Self::contains).
    #[inline]
    fn contains_batch(&self, hash_at: impl Fn(usize) -> u64, out: &mut [bool]) {
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
}
