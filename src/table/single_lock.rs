//! Single-lock writes: the common single-key insert and remove under one
//! stripe lock (issue 52). Part of the table's write protocol, whose
//! invariant `table.rs` states.
//!
//! The common single-key writes take one stripe lock, not two: one locked
//! instruction and one lock line per write.
//!
//! * A **multiset insert** locks its primary bucket's stripe alone; a
//!   free slot there takes the fingerprint: a free slot alone admits a
//!   copy (the pair holds
//!   at most `2 * SLOTS` of anything), and an insert clears nothing, so
//!   the other bucket does not matter. A primary found full adds the
//!   alternate's stripe ([`StripeGuard::widen`], keeping the ascending
//!   lock order; when the alternate's stripe is lower it releases and
//!   locks both afresh) and decides as before.
//! * A **remove** whose copy is in the primary bucket takes it under that
//!   bucket's lock alone. Whether another copy stays (the version bump
//!   of the invariant in `table.rs`) is read from its own bucket, which
//!   it holds, and from the alternate, which writers holding the
//!   alternate's lock may be changing, loaded with acquire. A copy stored there by a write that *happens before*
//!   the remove is seen (coherence), and the bump, a release after that
//!   acquire, makes it visible to every reader that sees the bump: the
//!   invariant holds for it. A copy it does not see is being stored by an
//!   insert concurrent with the remove, which linearizes after it (the
//!   key is absent between the two for a lookup concurrent with both);
//!   a lookup that happens after that insert sees the copy with its own
//!   load of the alternate. No copy can be *moved* into either bucket
//!   meanwhile: `f` moves only between its two buckets, under both locks,
//!   one of which the remove holds. A copy only in the alternate, or one
//!   the look without the lock did not see, is removed under both locks.
//!
//! Every other write (set inserts, path moves, inserts into the alternate,
//! removes from it, batches, clear) holds both locks as before: it
//! excludes every single-lock write on either bucket, so the two-lock
//! arguments above hold unchanged. Every writer of a bucket holds that
//! bucket's lock, so bucket words are still written with plain stores
//! (no lost update), and a 32-bit bucket's two halves change under one
//! lock. The loom models of `loom-tests/tests/single_lock.rs` race each
//! single-lock write against another writer of the same buckets with a
//! lookup beside it; the canaries `primary_insert_unlocked`,
//! `primary_remove_ignores_alternate` and `remove_primary_only` plant a
//! bug in each step.
//!
//! Why not one compare-and-swap on the bucket word and no lock at all:
//! `len()` must stay exact, and its per-stripe counts live on the lock's
//! line, written with plain stores because the lock is held. A lock-free
//! write would need a locked read-modify-write of a count besides its
//! compare-and-swap (or per-thread counts summed by `len()`): two locked
//! instructions on two lines (bucket and count), where the one-lock write
//! executes one (the lock's) on the same two lines (bucket and lock
//! line), and the lock-holding writers (moves, removes) would all have to
//! compare-and-swap their bucket words too.

use super::{Mode, RawTable};
use crate::error::InsertError;
use crate::fingerprint::Fingerprint;
use crate::lookup::Location;
use crate::stripes::StripeGuard;
use crate::sync::Ordering;

impl<F: Fingerprint> RawTable<F> {
    /// Whether bucket `i` holds `fp`, by a look without its lock: a hint
    /// only, for choosing between the one-lock and the two-lock remove,
    /// each of which reads the buckets again under its locks and is right
    /// whatever the look saw. Under loom always true: the models check
    /// the one-lock path (the two-lock one is the old path, which the batch
    /// models also run), and a load more per remove would multiply the
    /// schedules of every model. (Inserts take no such look: a look
    /// before the lock made per-key inserts out of cache 1.06x slower at
    /// 16 MiB, its branch waiting for the bucket's miss.)
    #[inline(always)]
    fn primary_looks_holding(&self, i: usize, fp: F) -> bool {
        #[cfg(not(concurrent_cuckoo_loom))]
        return F::holds(F::load(&self.buckets[i]), fp);
        #[cfg(concurrent_cuckoo_loom)]
        {
            let _ = (i, fp);
            true
        }
    }

    /// A multiset insert's first try, under the lock of its primary bucket
    /// alone: a free slot there takes the fingerprint with one lock
    /// acquisition (one locked instruction, one lock line). Otherwise it
    /// adds the alternate's stripe ([`StripeGuard::widen`], or both afresh
    /// when that one is lower) and decides as [`try_place`](Self::try_place).
    /// Sound with one lock because a free slot alone admits a copy (the
    /// pair holds at most `2 * SLOTS` of anything), every writer of a
    /// bucket holds that bucket's lock, and an insert clears nothing
    /// (module docs).
    #[inline(always)]
    pub(super) fn place_primary_first(
        &self,
        loc: &Location<F>,
    ) -> Option<Result<bool, InsertError>> {
        let (i1, fp) = (loc.i1, loc.fp);
        let bucket = &self.buckets[i1];
        #[cfg(concurrent_cuckoo_canary = "primary_insert_unlocked")]
        {
            // The planted bug: read and store before taking the lock, so
            // two inserts into one bucket can write the same free slot.
            let word = F::load(bucket);
            if let Some(slot) = F::free_slot(word) {
                F::store_slot(bucket, word, slot, fp);
                let guard = self.stripes.lock_one(i1);
                guard.add_len(i1, 1);
                guard.record_insert(i1, 0);
                return Some(Ok(true));
            }
        }
        let guard = self.stripes.lock_one(i1);
        if !self.accepting.load(Ordering::Relaxed) {
            // Closed under every stripe lock, one of which we hold.
            return Some(Err(InsertError::Full));
        }
        let word = F::load(bucket);
        if let Some(slot) = F::free_slot(word) {
            F::store_slot(bucket, word, slot, fp);
            guard.record_insert_into_primary(i1);
            return Some(Ok(true));
        }
        self.place_in_pair(loc, guard)
    }

    /// [`place_primary_first`](Self::place_primary_first) once its primary
    /// bucket was found full under `guard`, its lock: the same decision
    /// under both stripes (out of line: the common insert never gets here).
    #[inline(never)]
    fn place_in_pair(
        &self,
        loc: &Location<F>,
        guard: StripeGuard<'_>,
    ) -> Option<Result<bool, InsertError>> {
        let pair = match guard.widen(loc.i2) {
            Ok(pair) => pair,
            Err(one) => {
                drop(one);
                self.stripes.lock_pair(loc.i1, loc.i2)
            }
        };
        match self.try_place(loc, Mode::Multi, &pair, 0) {
            // Both full: one move out of the pair, still holding it.
            None => self.place_by_one_move(loc, Mode::Multi, pair),
            decided => decided,
        }
    }

    /// Removes one copy of `loc.fp`, if present. Starts under the primary
    /// bucket's lock alone, which is enough to take a copy there
    /// ([`remove_from_primary`](Self::remove_from_primary)); a copy only in
    /// the alternate is taken under both locks.
    #[inline]
    pub(crate) fn remove(&self, loc: &Location<F>) -> bool {
        self.prefetch(loc);
        self.stripes.prefetch_lock(loc.i1);
        // A first look without the lock: a copy that looks absent from the
        // primary is looked for under both locks at once.
        if !self.primary_looks_holding(loc.i1, loc.fp) {
            return self.remove_locked(loc, &self.stripes.lock_pair(loc.i1, loc.i2));
        }
        {
            let guard = self.stripes.lock_one(loc.i1);
            if self.remove_from_primary(loc, &guard) {
                return true;
            }
        }
        self.remove_in_pair(loc)
    }

    /// [`remove`](Self::remove) when the primary bucket, which looked as
    /// if it held a copy, held none under its lock (a writer took or moved
    /// it meanwhile): the same remove under both stripes, taken afresh
    /// (out of line: rare, so the common remove's guard never leaves
    /// registers for a call).
    #[inline(never)]
    fn remove_in_pair(&self, loc: &Location<F>) -> bool {
        #[cfg(concurrent_cuckoo_canary = "remove_primary_only")]
        {
            // The planted bug: a copy in the alternate is never looked for.
            let _ = loc;
            return false;
        }
        #[cfg(not(concurrent_cuckoo_canary = "remove_primary_only"))]
        self.remove_locked(loc, &self.stripes.lock_pair(loc.i1, loc.i2))
    }

    /// Takes a copy of `loc.fp` from the primary bucket under `guard`,
    /// which holds that bucket's lock (perhaps not the alternate's): false
    /// if the primary holds none. The alternate, which other writers may
    /// be changing, is loaded with acquire to decide the version bump:
    /// every copy stored there by a write that happened before this one
    /// is seen (and made visible to readers that see the bump), and a copy
    /// it does not see is being stored by a concurrent insert, which
    /// linearizes after this remove (module docs).
    #[inline(always)]
    fn remove_from_primary(&self, loc: &Location<F>, guard: &StripeGuard<'_>) -> bool {
        let (i1, i2, fp) = (loc.i1, loc.i2, loc.fp);
        let bucket = &self.buckets[i1];
        let word = F::load(bucket);
        let Some(slot) = F::find(word, fp) else {
            return false;
        };
        #[cfg(not(any(
            concurrent_cuckoo_canary = "skip_remove_bump",
            concurrent_cuckoo_canary = "primary_remove_ignores_alternate"
        )))]
        if F::copy_outside_word(word, slot, fp) || F::holds(F::load_acquire(&self.buckets[i2]), fp)
        {
            guard.bump_version_clearing(i1, i2);
        }
        // The planted bug: only the copies of the bucket it holds count.
        #[cfg(concurrent_cuckoo_canary = "primary_remove_ignores_alternate")]
        if F::copy_outside_word(word, slot, fp) {
            guard.bump_version_clearing(i1, i2);
        }
        #[cfg(concurrent_cuckoo_canary = "skip_remove_bump")]
        let _ = i2;
        F::store_slot(bucket, word, slot, F::EMPTY);
        guard.record_remove_from_primary(i1);
        true
    }
}
