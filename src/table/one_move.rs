//! One-move inserts: an insert that finds both its buckets full, holding
//! both their stripe locks, moves one fingerprint out of them to that
//! fingerprint's other bucket and takes the slot it freed, without letting
//! go of the pair (issue 52). Part of the table's write protocol, whose
//! invariant `table.rs` states.
//!
//! Near full, a tenth of the inserts find both buckets full, and nine in
//! ten of those need one move (a path of length one). Through the general
//! displacement (`path.rs`) such an insert drops its locks, searches
//! without them (a 32 KiB queue on the stack), locks the hop's pair to
//! move, and locks its own pair again to place: about 1,000 instructions
//! and seven locked instructions. Here it keeps the pair it holds, looks
//! at the alternates of the eight fingerprints it has already read, and
//! adds the lock of the first one that looks free: about a tenth of the
//! instructions and four locked instructions.
//!
//! * **Locks.** The alternate's stripe is added to the pair
//!   ([`StripeGuard::add_for_move`]): waited for when it is above both
//!   stripes held (the ascending order every locker follows), tried once
//!   when below (a lock taken out of order never waits, so no cycle of
//!   waiters can form). A stripe the pair already holds needs nothing.
//! * **The move** is [`move_locked`](RawTable::move_locked), the hop every
//!   path executes, under the locks of both its buckets: it re-reads the
//!   source slot and the destination under them, stores the copy, bumps the
//!   pair's version, then clears the source (the invariant's order).
//! * **The place** is [`try_place`](RawTable::try_place) under the same
//!   guard: the pair was held from the moment it was found full, so the
//!   freed slot is still free, and a set insert's duplicate check (made
//!   under the same locks before the move) still holds.
//!
//! Anything that does not go through (no alternate looks free, the try
//! finds the stripe taken, the alternate filled up before its lock was
//! taken) leaves the table as it was, or with one valid move made, and the
//! insert goes on to the general displacement. The loom models of
//! `loom-tests/tests/one_move.rs` race it against inserts into the
//! alternate and removes and lookups of the moving key; the canary
//! `one_move_alternate_unlocked` plants a move made without the
//! alternate's lock.

use super::{Mode, RawTable};
use crate::error::InsertError;
use crate::fingerprint::{Fingerprint, SLOTS};
use crate::lookup::Location;
use crate::path::Hop;
use crate::storage::prefetch;
use crate::stripes::StripeGuard;

impl<F: Fingerprint> RawTable<F> {
    /// Places `loc.fp` by moving one fingerprint out of its two buckets,
    /// which `pair` holds and which [`try_place`](Self::try_place) just
    /// found full (so also fewer than `2 * SLOTS` copies of it, and for a
    /// set insert none): `None` if no single move could be made this way
    /// (module docs), with the locks released.
    #[inline(never)]
    pub(super) fn place_by_one_move(
        &self,
        loc: &Location<F>,
        mode: Mode,
        pair: StripeGuard<'_>,
    ) -> Option<Result<bool, InsertError>> {
        if self.max_path == 0 {
            return None;
        }
        let roots = [loc.i1, loc.i2];
        let words = [
            F::load(&self.buckets[loc.i1]),
            F::load(&self.buckets[loc.i2]),
        ];
        // Where each fingerprint of the roots would go, all fetched at
        // once (plain loops: iterator adapters here were not inlined).
        let mut alternates = [[0usize; SLOTS]; 2];
        for r in 0..2 {
            for (slot, to) in alternates[r].iter_mut().enumerate() {
                let fp = F::slot(words[r], slot).to_u64();
                *to = self.index.alternate(roots[r], fp);
                prefetch(&self.buckets[*to]);
            }
        }
        // The first that looks free, by a look without its lock:
        // `move_locked` reads it again under the lock. The other root is
        // full (read under its lock), so a fingerprint that would go there
        // is no candidate.
        let mut hop = None;
        'look: for r in 0..2 {
            for (slot, &to) in alternates[r].iter().enumerate() {
                if F::free_slot(F::load(&self.buckets[to])).is_some() {
                    hop = Some(Hop {
                        from: roots[r],
                        slot,
                        fp: F::slot(words[r], slot),
                        to,
                    });
                    break 'look;
                }
            }
        }
        let hop = hop?;
        #[cfg(not(concurrent_cuckoo_canary = "one_move_alternate_unlocked"))]
        let guard = pair.add_for_move(hop.to).ok()?;
        // The planted bug: move into the alternate under the pair's locks
        // alone, so an insert holding the alternate's lock can take the
        // same free slot.
        #[cfg(concurrent_cuckoo_canary = "one_move_alternate_unlocked")]
        let guard = pair;
        if !self.move_locked(&guard, hop) {
            return None;
        }
        let placed = self.try_place(loc, mode, &guard, 1);
        debug_assert!(placed.is_some(), "a slot of the pair was just freed");
        placed
    }
}

#[cfg(all(test, not(concurrent_cuckoo_loom)))]
mod tests {
    use crate::filter::{CuckooFilter, Table};

    /// Eight buckets, four stripes (bucket `b` in stripe `b % 4`), paths of
    /// one move, 16-bit fingerprints, hashes used as given.
    fn table() -> CuckooFilter {
        CuckooFilter::builder()
            .bucket_count(8)
            .stripe_count(4)
            .max_path_len(1)
            .fingerprint_bits(16)
            .uniform_hashes(true)
            .build()
            .unwrap()
    }

    /// A hash of primary `a` and alternate `b` whose fingerprint no earlier
    /// call gave (`low` counts up).
    fn hash_of(f: &CuckooFilter, a: usize, b: usize, low: &mut u32, used: &mut Vec<u64>) -> u64 {
        loop {
            *low += 1;
            let hash = f.hash_for_bucket(a, *low);
            let (fp, i1, i2) = f.signature_of_hash(hash);
            if (i1, i2) == (a, b) && !used.contains(&fp) {
                used.push(fp);
                return hash;
            }
        }
    }

    /// Pair {2, 3} full, its first fingerprint movable to bucket 1 (stripe
    /// 1, below the pair's highest stripe 3): returns (the stored hashes,
    /// the moving one, a newcomer of pair (2, 3)).
    fn full_pair_moving_into_bucket_1(f: &CuckooFilter) -> (Vec<u64>, u64, u64) {
        let (mut low, mut used) = (0, Vec::new());
        let victim = hash_of(f, 2, 1, &mut low, &mut used);
        let mut stored = vec![victim];
        for (a, b, n) in [(2, 3, 3), (3, 2, 4)] {
            for _ in 0..n {
                stored.push(hash_of(f, a, b, &mut low, &mut used));
            }
        }
        for &h in &stored {
            f.insert_hash(h).unwrap();
        }
        let newcomer = hash_of(f, 2, 3, &mut low, &mut used);
        (stored, victim, newcomer)
    }

    /// The one-move insert tries the destination's stripe out of order;
    /// while another thread holds it, the insert lets go of its pair and
    /// displaces by the general search, whose move waits for that stripe:
    /// it completes once the holder lets go, having made the same move.
    /// (loom explores a thread's `try_lock` only outside another's
    /// critical section, an unlock being no scheduling event for it, so
    /// this path is exercised here, with the stripe held for certain.)
    #[test]
    fn a_taken_destination_stripe_sends_the_insert_to_the_general_search() {
        let f = table();
        let (stored, victim, newcomer) = full_pair_moving_into_bucket_1(&f);
        let Table::F16(raw) = &f.table else {
            panic!("a 16-bit table")
        };
        std::thread::scope(|scope| {
            let held = raw.stripes.lock_one(1);
            let inserter = scope.spawn(|| f.insert_hash(newcomer));
            // The insert can only finish after the stripe is released.
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert!(
                !inserter.is_finished(),
                "moved into a stripe held elsewhere"
            );
            drop(held);
            inserter.join().unwrap().unwrap();
        });
        assert_eq!(f.relocations(), 1);
        for h in stored.iter().chain([&newcomer]) {
            assert!(f.contains_hash(*h));
        }
        assert_eq!(f.len(), stored.len() + 1);
        let (_, i1, i2) = f.signature_of_hash(victim);
        assert_eq!((i1, i2), (2, 1));
        assert_eq!(
            f.stats().path_lengths[1],
            1,
            "a path of one move freed the slot"
        );
    }

    /// With the stripe free, the same insert makes its move under the pair
    /// it holds plus that stripe, tried once: one relocation, every key
    /// found, the table counting each exactly once.
    #[test]
    fn a_full_pair_makes_room_with_one_move_it_holds_locks_for() {
        let f = table();
        let (stored, _, newcomer) = full_pair_moving_into_bucket_1(&f);
        f.insert_hash(newcomer).unwrap();
        assert_eq!(f.relocations(), 1);
        for h in stored.iter().chain([&newcomer]) {
            assert!(f.contains_hash(*h));
        }
        assert_eq!(
            (f.len(), f.occupied_slots()),
            (stored.len() + 1, stored.len() + 1)
        );
        // Full for paths of one move: the next of the pair is refused and
        // changes nothing.
        let before = f.to_bytes();
        let (mut low, mut used) = (1000, Vec::new());
        let another = hash_of(&f, 2, 3, &mut low, &mut used);
        assert!(f.insert_hash(another).is_err());
        assert_eq!(f.to_bytes(), before);
    }
}
