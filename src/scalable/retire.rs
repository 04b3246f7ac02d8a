//! Retirement: closing an emptied level, freeing retired levels
//! (`reclaim_retired`), and `clear`.

use super::slots::{bit, index_of, next_word, Bits};
use super::ScalableCuckooFilter;
use crate::filter::with_table;
use crate::sync::Ordering;

impl<S> ScalableCuckooFilter<S> {
    /// Frees the retired levels: their tables (heap tables keep their
    /// memory while retired, see [`memory_usage`](Self::memory_usage)),
    /// locks and version words. Returns the bytes given back (what
    /// `memory_usage` drops by). `&mut self`: no lookup can be reading a
    /// retired level meanwhile. O(1) when no level retired since the last
    /// call, so a host can call it after every remove (the Redis module
    /// does). Answers and encodings are unchanged: a retired level is
    /// empty and not in use, and a level the filter grows into later is
    /// allocated afresh, at the size and width a reopened one would have.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let mut filter = ScalableCuckooFilter::builder().capacity(100).seed(1).build()?;
    /// let mut k = 0;
    /// while filter.levels() == 1 {
    ///     filter.insert_hash(k)?; // the last one grows the filter
    ///     k += 1;
    /// }
    /// assert!((0..k - 1).all(|old| filter.remove_hash(old).is_removed())); // level 0 empties and retires
    /// assert_eq!(filter.levels(), 1);
    /// let before = filter.memory_usage();
    /// let freed = filter.reclaim_retired();
    /// assert!(freed > 0 && filter.memory_usage() == before - freed);
    /// assert_eq!(filter.reclaim_retired(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reclaim_retired(&mut self) -> usize {
        if !self.retired_since_reclaim.load(Ordering::Acquire) {
            return 0;
        }
        // Measured while the flag is set: `memory_usage` counts retired
        // levels only then.
        let before = self.memory_usage();
        let in_use = self.in_use();
        for (i, slot) in self.slots.iter().enumerate() {
            let ptr = slot.load(Ordering::Acquire);
            // SAFETY: a non-null slot points to a level boxed by this
            // filter; `&mut self` means no other thread holds a reference.
            let Some(level) = (unsafe { ptr.as_mut() }) else {
                continue;
            };
            if in_use & bit(i) != 0 {
                level.drop_replaced();
            } else {
                slot.store(core::ptr::null_mut(), Ordering::Release);
                // SAFETY: as above, and the slot no longer names it.
                drop(unsafe { Box::from_raw(ptr) });
            }
        }
        // Every slot that holds a level is in use again.
        self.retired_since_reclaim.store(false, Ordering::Release);
        before - self.memory_usage()
    }

    /// Removes every item from every level. The lowest slot in use is
    /// emptied and keeps taking inserts (it becomes the current level); the others
    /// are retired (their memory given back as on any retirement) and
    /// reopened if the filter grows again. Levels already retired are left
    /// as they are, and only buckets that hold something are written, so
    /// a `clear` commits no memory. Writers wait meanwhile; lookups do not.
    ///
    /// The lowest slot in use is slot 0 unless its level was retired: a
    /// filter and its saved copy (which keeps only the levels in use) keep
    /// the same level, so a cleared filter always has room and evolves as
    /// its copy does.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::with_capacity(10);
    /// filter.insert_batch(&(0..1000u32).collect::<Vec<_>>())?;
    /// filter.clear();
    /// assert!(filter.is_empty() && filter.levels() == 1);
    /// # Ok::<(), concurrent_cuckoo::BatchInsertError>(())
    /// ```
    pub fn clear(&self) {
        let _growth = self.growth.guard();
        let word = self.current.load(Ordering::Acquire);
        // The lowest slot in use (the current one is in use): a filter and
        // its saved copy, which holds only the levels in use, pick the same.
        let first = Bits(self.in_use()).next().unwrap_or(index_of(word));
        for (i, level) in self.live_levels() {
            // Retired levels are skipped: closed only when empty, they
            // stay empty, and writing them would fault their given-back
            // pages in again.
            with_table!(&level.table, t => {
                let all = t.stripes.lock_all();
                t.clear_locked(&all);
                if i != first {
                    t.close(&all);
                    self.retired_since_reclaim.store(true, Ordering::Release);
                }
            });
        }
        if let Some(level) = self.level(first) {
            with_table!(&level.table, t => t.reopen());
        }
        // The others are closed: out of use (their bits cleared after they
        // closed, as on any retirement).
        self.in_use.store(bit(first), Ordering::Release);
        self.current
            .store(next_word(word, first), Ordering::Release);
    }

    /// Retires level `i` if it is empty and not the current one: closes it
    /// to inserts, gives its table's memory back, and frees its slot for a
    /// later growth (the level is kept, to be reopened there). Whether
    /// this call retired it (of two compactions that empty one level, one
    /// retires it and counts it).
    #[cold]
    pub(super) fn retire_if_empty(&self, i: usize) -> bool {
        let _growth = self.growth.guard();
        self.retire_locked(i)
    }

    /// [`retire_if_empty`](Self::retire_if_empty) under the growth lock.
    pub(super) fn retire_locked(&self, i: usize) -> bool {
        if i == self.current() {
            return false;
        }
        let Some(level) = self.level(i) else {
            return false;
        };
        with_table!(&level.table, t => {
            if !(t.is_accepting() && t.len() == 0) {
                return false;
            }
            let all = t.stripes.lock_all();
            if t.len() != 0 {
                return false;
            }
            t.close(&all);
            // Before the bit is cleared: `memory_usage` that sees the bit
            // cleared sees the flag (and walks every slot, the retired one
            // included).
            self.retired_since_reclaim.store(true, Ordering::Release);
            // After it closed: a lookup that still sees the bit reads an
            // empty level.
            self.in_use.fetch_and(!bit(i), Ordering::AcqRel);
            true
        })
    }
}
