//! The move sequence: how a search that found nothing tells whether
//! compaction moved a fingerprint under it.
//!
//! Compaction ([`compact_concurrently`](super::ScalableCuckooFilter::compact_concurrently))
//! moves a fingerprint from a source level into a target level of the same
//! geometry while readers read and writers write: it inserts the copy into
//! the target, then takes the one in the source. A reader visits the
//! levels one after the other, so it can look at the target before the
//! insert and at the source after the take, and find the key in neither.
//! Every move is therefore bracketed by two increments of one word, odd
//! while a move is in flight:
//!
//! * the mover increments it (odd) before the insert, and again (even,
//!   release) after the take;
//! * a search whose answer is "absent" (a lookup that missed, a remove that
//!   found nothing to take, a count) reads the word (acquire) before it
//!   looks at the level set and again after, and answers only if the word
//!   was even and did not change; otherwise it waits for the move in
//!   flight to end and searches again.
//!
//! Why that is enough: a search that missed the key in the source read the
//! source's bucket after the take, a store published under the source's
//! stripe lock and version word, so the mover's first increment (before the
//! take) happens before the search's second read of the word, which then
//! differs from the first (even, read before the take's increment, or odd).
//! A search whose first read saw the even value after a move sees that
//! move's insert in the target. Answers "present" need no check: a copy
//! that was seen was stored. Moves are serialized (the filter's growth
//! lock), so the word is odd exactly while one is in flight.
//! `loom-tests/tests/scalable.rs` models a reader and a remover against a
//! compaction (canaries `unbracketed_move` and `remove_ignores_moves`).

use crate::sync::{spin_hint, AtomicU64, Ordering};

/// Counts the moves of fingerprints between levels: odd while one is in
/// flight (see the module documentation).
#[derive(Debug, Default)]
pub(crate) struct MoveSequence(AtomicU64);

impl MoveSequence {
    /// Read before a search whose "absent" must be exact.
    #[inline(always)]
    pub(crate) fn read(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }

    /// Whether a search that began after [`read`](Self::read) returned
    /// `*since` may trust an "absent": no move was in flight or happened
    /// since. If not, waits until no move is in flight, sets `*since` to
    /// the sequence then, and the caller searches again.
    #[inline]
    pub(crate) fn unmoved_since(&self, since: &mut u64) -> bool {
        let now = self.0.load(Ordering::Acquire);
        if now == *since && now & 1 == 0 {
            return true;
        }
        *since = self.settled();
        false
    }

    /// The sequence once no move is in flight.
    #[cold]
    fn settled(&self) -> u64 {
        loop {
            let now = self.0.load(Ordering::Acquire);
            if now & 1 == 0 {
                return now;
            }
            spin_hint();
        }
    }

    /// Runs `one_move` (an insert into the target, then the take from the
    /// source, or the insert's undo) as one move that searches detect. The
    /// caller holds the filter's growth lock: moves never overlap.
    pub(crate) fn bracket<R>(&self, one_move: impl FnOnce() -> R) -> R {
        #[cfg(concurrent_cuckoo_canary = "unbracketed_move")]
        return one_move();
        #[cfg(not(concurrent_cuckoo_canary = "unbracketed_move"))]
        {
            self.0.fetch_add(1, Ordering::AcqRel);
            let result = one_move();
            self.0.fetch_add(1, Ordering::Release);
            result
        }
    }
}
