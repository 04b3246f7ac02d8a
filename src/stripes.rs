//! Stripe locks, per-stripe move versions, and per-stripe item counts.
//!
//! Bucket `i` belongs to stripe `i & mask`. Writers lock the stripes of every
//! bucket they change; two stripes are always taken in ascending order and
//! deduplicated, so writers cannot deadlock.
//!
//! Readers never lock and never write. They validate a miss against the
//! *versions* of their two buckets' stripes, which a writer bumps only when
//! it moves a fingerprint (plain inserts and removes leave them alone: they
//! cannot make a present item look absent). The versions are a dense array
//! of `u32` (16 KiB at most), separate from the cache-padded locks, so the
//! words a lookup reads stay in L1/L2 and cost no extra miss, while the
//! locks, which writers hammer, do not false-share.
//!
//! Each lock's cache line also holds its stripe's item count and move
//! counter: a writer already owns that line, so `len()` costs inserts and
//! removes no shared-counter contention.

use crate::storage::prefetch;
use crate::sync::{AtomicI64, AtomicU32, AtomicU64, LockGuard, Ordering, RawLock};
use crossbeam_utils::CachePadded;

/// Upper bound on stripes: 4096 padded locks are 512 KiB, versions 16 KiB.
const MAX_STRIPES: usize = 4096;
/// About one stripe per this many buckets: enough stripes that writers
/// rarely collide, few enough that locks and versions cost well under one
/// bit per item (a stripe is 132 bytes; 1024 buckets hold about 3600 items).
const BUCKETS_PER_STRIPE: usize = 1024;

#[derive(Default)]
struct Stripe {
    lock: RawLock,
    /// Items stored in this stripe's buckets; written only under `lock`.
    len: AtomicI64,
    /// Fingerprints moved out of this stripe's buckets; written only under `lock`.
    moves: AtomicU64,
}

pub(crate) struct Stripes {
    stripes: Box<[CachePadded<Stripe>]>,
    versions: Box<[AtomicU32]>,
    mask: usize,
}

impl Stripes {
    /// Stripes for a table of `buckets` buckets.
    pub(crate) fn for_buckets(buckets: usize) -> Self {
        Self::with_count(
            (buckets / BUCKETS_PER_STRIPE)
                .next_power_of_two()
                .min(MAX_STRIPES),
        )
    }

    /// Exactly `count` stripes (a power of two).
    pub(crate) fn with_count(count: usize) -> Self {
        assert!(count.is_power_of_two());
        Self {
            stripes: (0..count)
                .map(|_| CachePadded::new(Stripe::default()))
                .collect(),
            versions: (0..count).map(|_| AtomicU32::new(0)).collect(),
            mask: count - 1,
        }
    }

    pub(crate) fn count(&self) -> usize {
        self.stripes.len()
    }

    #[inline(always)]
    pub(crate) fn stripe_of(&self, bucket: usize) -> usize {
        bucket & self.mask
    }

    /// Version of `bucket`'s stripe, loaded with acquire: bucket loads that
    /// follow see every move whose bump this load observed.
    #[inline(always)]
    pub(crate) fn version(&self, bucket: usize) -> u32 {
        self.versions[self.stripe_of(bucket)].load(Ordering::Acquire)
    }

    /// Version re-read after the reader's acquire fence.
    #[inline(always)]
    pub(crate) fn version_recheck(&self, bucket: usize) -> u32 {
        self.versions[self.stripe_of(bucket)].load(Ordering::Relaxed)
    }

    /// Starts fetching the lock lines of buckets `a` and `b`, so a writer's
    /// lock acquisition and its bucket misses overlap instead of queueing.
    #[inline(always)]
    pub(crate) fn prefetch_locks(&self, a: usize, b: usize) {
        prefetch(&self.stripes[self.stripe_of(a)]);
        prefetch(&self.stripes[self.stripe_of(b)]);
    }

    /// Locks the stripes of buckets `a` and `b` (once if they share one),
    /// lowest stripe first.
    #[inline]
    pub(crate) fn lock_pair(&self, a: usize, b: usize) -> PairGuard<'_> {
        let (sa, sb) = (self.stripe_of(a), self.stripe_of(b));
        let (lo, hi) = if sa <= sb { (sa, sb) } else { (sb, sa) };
        let first = self.stripes[lo].lock.lock();
        let second = (hi != lo).then(|| self.stripes[hi].lock.lock());
        PairGuard {
            stripes: self,
            held: [lo, hi],
            _guards: (first, second),
        }
    }

    /// Locks every stripe in ascending order (for `clear`).
    pub(crate) fn lock_all(&self) -> Vec<LockGuard<'_>> {
        self.stripes.iter().map(|s| s.lock.lock()).collect()
    }

    /// Sets every stripe's count to zero; the caller holds all locks.
    pub(crate) fn reset_counts(&self, _all: &[LockGuard<'_>]) {
        debug_assert_eq!(_all.len(), self.stripes.len());
        for s in self.stripes.iter() {
            s.len.store(0, Ordering::Relaxed);
        }
    }

    /// Sets stripe `s`'s count to `counts[s]`, for a table whose buckets were
    /// filled directly (decoding); the caller holds all locks.
    #[cfg_attr(concurrent_cuckoo_loom, allow(dead_code))]
    pub(crate) fn set_counts(&self, _all: &[LockGuard<'_>], counts: &[i64]) {
        debug_assert_eq!(_all.len(), self.stripes.len());
        assert_eq!(counts.len(), self.stripes.len());
        for (s, &count) in self.stripes.iter().zip(counts) {
            s.len.store(count, Ordering::Relaxed);
        }
    }

    /// Items stored, summed over stripes. Exact when no writer is running.
    pub(crate) fn len(&self) -> usize {
        let sum: i64 = self
            .stripes
            .iter()
            .map(|s| s.len.load(Ordering::Relaxed))
            .sum();
        // A sum taken while writers run may see a move's decrement without
        // its increment; never report a negative count.
        sum.max(0) as usize
    }

    /// Fingerprints moved by path execution since creation.
    pub(crate) fn moves(&self) -> u64 {
        self.stripes
            .iter()
            .map(|s| s.moves.load(Ordering::Relaxed))
            .sum()
    }

    /// Bytes held by locks and versions.
    pub(crate) fn memory_usage(&self) -> usize {
        core::mem::size_of_val(&*self.stripes) + core::mem::size_of_val(&*self.versions)
    }
}

/// Both stripes of a bucket pair, locked. Methods that change per-stripe
/// state live here, so they can only be called with the locks held.
pub(crate) struct PairGuard<'a> {
    stripes: &'a Stripes,
    held: [usize; 2],
    _guards: (LockGuard<'a>, Option<LockGuard<'a>>),
}

impl PairGuard<'_> {
    #[inline]
    fn stripe(&self, bucket: usize) -> &Stripe {
        let s = self.stripes.stripe_of(bucket);
        debug_assert!(
            self.held.contains(&s),
            "bucket {bucket} is not under this guard"
        );
        &self.stripes.stripes[s]
    }

    /// Adds `delta` to the item count of `bucket`'s stripe.
    #[inline]
    pub(crate) fn add_len(&self, bucket: usize, delta: i64) {
        let len = &self.stripe(bucket).len;
        // We hold the lock, so nobody else writes this counter: a plain
        // load and store is enough and cheaper than a locked RMW.
        len.store(len.load(Ordering::Relaxed) + delta, Ordering::Relaxed);
    }

    /// Announces a move out of `bucket` to optimistic readers. Must be
    /// called after the fingerprint is stored at its destination and before
    /// its source slot is cleared (see `table.rs` for the argument).
    #[inline]
    pub(crate) fn bump_version(&self, bucket: usize) {
        debug_assert!(self.held.contains(&self.stripes.stripe_of(bucket)));
        self.stripes.versions[self.stripes.stripe_of(bucket)].fetch_add(1, Ordering::Release);
    }

    /// Counts a completed move out of `bucket` (diagnostics).
    #[inline]
    pub(crate) fn record_move(&self, bucket: usize) {
        let moves = &self.stripe(bucket).moves;
        moves.store(moves.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }
}

#[cfg(all(test, not(concurrent_cuckoo_loom)))]
mod tests {
    use super::*;

    #[test]
    fn stripe_count_scales_with_the_table() {
        assert_eq!(Stripes::for_buckets(2).count(), 1);
        assert_eq!(Stripes::for_buckets(100_000).count(), 128);
        assert_eq!(Stripes::for_buckets(1 << 30).count(), MAX_STRIPES);
    }

    #[test]
    fn pair_locks_deduplicate_and_count() {
        let s = Stripes::with_count(4);
        {
            let g = s.lock_pair(1, 5); // same stripe: must not self-deadlock
            g.add_len(1, 2);
            g.add_len(5, 1);
            g.bump_version(5);
            g.record_move(5);
        }
        {
            let g = s.lock_pair(3, 0); // taken in ascending order
            g.add_len(3, -1);
        }
        assert_eq!(s.len(), 2);
        assert_eq!(s.version(1), 1);
        assert_eq!(s.version(0), 0);
        assert_eq!(s.moves(), 1);
        let all = s.lock_all();
        s.reset_counts(&all);
        drop(all);
        assert_eq!(s.len(), 0);
    }
}
