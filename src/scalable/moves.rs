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

use crate::sync::{AtomicU64, Ordering};

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

    /// The sequence once no move is in flight. A move lasts as long as
    /// its insert into the target level (a cuckoo path search, or the
    /// fallback that locks the whole target table), so a reader waits as
    /// a stripe lock's waiter does: it spins briefly, then yields, then
    /// sleeps in growing steps, instead of burning its time slice on an
    /// oversubscribed core.
    #[cold]
    fn settled(&self) -> u64 {
        let mut waited = 0u32;
        loop {
            let now = self.0.load(Ordering::Acquire);
            if now & 1 == 0 {
                return now;
            }
            back_off(waited);
            waited = waited.saturating_add(1);
        }
    }

    /// Runs `one_move` (an insert into the target, then the take from the
    /// source, or the insert's undo) as one move that searches detect. The
    /// caller holds the filter's growth lock: moves never overlap.
    ///
    /// The closing increment runs even if `one_move` panics (a guard's
    /// `drop`): a word left odd would make every search that misses wait
    /// forever. A panic between the insert and the take leaves the copy
    /// in both levels, a duplicate (found twice, counted twice), never a
    /// false negative.
    pub(crate) fn bracket<R>(&self, one_move: impl FnOnce() -> R) -> R {
        #[cfg(concurrent_cuckoo_canary = "unbracketed_move")]
        return one_move();
        #[cfg(not(concurrent_cuckoo_canary = "unbracketed_move"))]
        {
            self.0.fetch_add(1, Ordering::AcqRel);
            let _in_flight = MoveInFlight(&self.0);
            one_move()
        }
    }
}

/// Ends a move (the second increment of the bracket, release: the move's
/// insert and take happen before a search that reads the even value) when
/// dropped, on return or on unwind.
struct MoveInFlight<'a>(&'a AtomicU64);

impl Drop for MoveInFlight<'_> {
    #[inline]
    fn drop(&mut self) {
        // The canary plants a relaxed end: a search that reads the even
        // value no longer sees the move's insert and take.
        #[cfg(concurrent_cuckoo_canary = "relaxed_move_end")]
        self.0.fetch_add(1, Ordering::Relaxed);
        #[cfg(not(concurrent_cuckoo_canary = "relaxed_move_end"))]
        self.0.fetch_add(1, Ordering::Release);
    }
}

/// One step of a reader's wait for a move, the `n`-th in a row: the stripe
/// locks' schedule (spin, yield, sleep up to 100 µs). Under loom a yield,
/// so that the model checker schedules the mover.
#[inline]
fn back_off(n: u32) {
    #[cfg(concurrent_cuckoo_loom)]
    {
        let _ = n;
        crate::sync::spin_hint();
    }
    #[cfg(not(concurrent_cuckoo_loom))]
    crate::sync::wait(n);
}

#[cfg(all(test, not(concurrent_cuckoo_loom)))]
pub(crate) mod tests {
    use crate::ScalableCuckooFilter;
    use std::cell::Cell;
    use std::sync::{mpsc, Arc};
    use std::time::Duration;

    std::thread_local! {
        /// Makes the next move on this thread panic between its insert
        /// into the target and its take from the source.
        static PANIC_IN_MOVE: Cell<bool> = const { Cell::new(false) };
    }

    pub(crate) fn panic_if_armed() {
        if PANIC_IN_MOVE.with(|armed| armed.replace(false)) {
            panic!("injected: a panic inside a move");
        }
    }

    /// Issue 40: a panic inside a move (caught, as the C ABI's guard
    /// catches panics) must end the move's bracket. It used to leave the
    /// sequence odd, and every search that missed then waited forever: a
    /// lookup of a missing key, a `count`, a remove of an absent key.
    /// The key whose move panicked stays found (in both levels: a
    /// duplicate, never a false negative), and a later compaction finishes
    /// the work.
    #[test]
    fn a_panic_inside_a_move_leaves_searches_that_miss_answering() {
        let f = Arc::new(
            ScalableCuckooFilter::builder()
                .capacity(100)
                .growth_factor(1)
                .seed(5)
                .build()
                .unwrap(),
        );
        let mut n = 0u64;
        while f.levels() < 2 {
            f.insert_hash(n).unwrap();
            n += 1;
        }
        // Slot 0 keeps keys 0..4; the rest of it is removed.
        for k in 4..n - 1 {
            assert!(f.remove_hash(k).is_removed());
        }
        let kept: Vec<u64> = (0..4).chain([n - 1]).collect();
        let len = f.len();
        PANIC_IN_MOVE.with(|armed| armed.set(true));
        let compact = std::panic::AssertUnwindSafe(|| f.compact_concurrently());
        assert!(
            std::panic::catch_unwind(compact).is_err(),
            "the first move panicked"
        );
        let (done, finished) = mpsc::channel();
        let g = Arc::clone(&f);
        std::thread::spawn(move || {
            let missing = u64::MAX - 1;
            let answers = (
                g.contains_hash(missing),
                g.count_hash(missing),
                g.remove_hash(missing).is_removed(),
            );
            done.send(answers).unwrap();
        });
        let answers = finished
            .recv_timeout(Duration::from_secs(30))
            .expect("a search that missed waited forever after the panic");
        assert_eq!(answers, (false, 0, false));
        assert!(kept.iter().all(|&k| f.contains_hash(k)), "a key was lost");
        assert_eq!(f.len(), len + 1, "the panicked move left one duplicate");
        let stats = f.compact_concurrently();
        assert!(stats.levels_retired == 1, "{stats:?}");
        assert!(kept.iter().all(|&k| f.contains_hash(k)), "a key was lost");
        assert_eq!(f.levels(), 1);
    }
}
