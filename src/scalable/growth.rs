//! Growth: adding (or reopening) the level that takes inserts when the
//! current one is full.

use super::slots::{index_of, next_word, width_for, Level};
use super::ScalableCuckooFilter;
use crate::error::InsertError;
use crate::filter::with_table;
use crate::index::HashScheme;
use crate::sync::Ordering;
use crate::table::Mode;

impl<S> ScalableCuckooFilter<S> {
    /// Adds the level after `seen` (or reopens it) unless another thread
    /// already did; `false` if the filter cannot grow (the level limit,
    /// or an allocation failure).
    /// `seen` is the `newest` word the caller loaded before its insert was
    /// refused.
    #[cold]
    pub(super) fn grow(&self, seen: u64) -> bool {
        let _growth = self.growth.guard();
        self.grow_locked(seen)
    }

    pub(super) fn grow_locked(&self, seen: u64) -> bool {
        #[cfg(all(test, not(concurrent_cuckoo_loom)))]
        super::tests::panic_if_armed();
        let word = self.newest.load(Ordering::Acquire);
        // The canary plants the old test: the index alone, which a `clear`
        // and a growth bring back to a value it had (an ABA).
        #[cfg(concurrent_cuckoo_canary = "clear_aba")]
        let changed = index_of(word) != index_of(seen);
        #[cfg(not(concurrent_cuckoo_canary = "clear_aba"))]
        let changed = word != seen;
        if changed {
            return true; // the newest level changed (grown or cleared): retry there
        }
        let newest = index_of(word);
        let next = newest + 1;
        if next >= self.config.max_levels {
            return false;
        }
        let Some(bits) = self.width_of(next) else {
            return false;
        };
        match self.level(next) {
            // Empty (closed levels are), and what a copy without it would
            // allocate: the same size and width.
            Some(level) if level.bits() == bits => {
                with_table!(&level.table, t => t.reopen());
            }
            kept => {
                let Some(items) = self.config.items(next) else {
                    return false;
                };
                let Ok(level) =
                    Level::new(items, bits, HashScheme::Finalized, self.level_stripes())
                else {
                    return false;
                };
                // A kept level of another width (decoded from an encoding
                // written before widths were a function of the index) is
                // replaced, not reopened; a lookup may still be reading
                // it, so the new level keeps it alive.
                if kept.is_some() {
                    level
                        .replaced
                        .store(self.slots[next].load(Ordering::Acquire), Ordering::Release);
                }
                self.slots[next].store(Box::into_raw(Box::new(level)), Ordering::Release);
            }
        }
        self.newest.store(next_word(word, next), Ordering::Release);
        // The level that stopped taking inserts may have been emptied by
        // removes that read the old `newest`: retire it here then (see
        // `retire_order`).
        self.retire_order.fetch_add(1, Ordering::AcqRel);
        self.retire_locked(newest);
        true
    }

    /// The width of a new level `next`: the configuration's for that index
    /// ([`Config::bits`]), unless the levels in use (decoded from an
    /// encoding written before that rule) spent more of the budget, then
    /// the narrowest that still fits. Both depend only on state a saved
    /// copy holds.
    pub(super) fn width_of(&self, next: usize) -> Option<u32> {
        let spent: f64 = self.live_levels().map(|(_, l)| l.bound()).sum();
        let fits = width_for(
            next,
            spent,
            self.config.false_positive_rate,
            self.config.max_levels,
        )?;
        Some(self.config.bits(next)?.max(fits))
    }

    #[cfg(not(concurrent_cuckoo_loom))]
    pub(super) fn level_stripes(&self) -> Option<usize> {
        None
    }

    #[cfg(concurrent_cuckoo_loom)]
    pub(super) fn level_stripes(&self) -> Option<usize> {
        self.config.level_stripes
    }

    /// `insert_hash` / `insert_unique_hash` into the newest level, growing
    /// as needed.
    pub(super) fn insert_prepared(&self, hash: u64, mode: Mode) -> Result<bool, InsertError> {
        loop {
            let word = self.newest.load(Ordering::Acquire);
            let Some(level) = self.level(index_of(word)) else {
                return Err(InsertError::Full);
            };
            let result = with_table!(&level.table, t => t.insert(&t.locate(hash), mode));
            match result {
                Err(InsertError::Full) => {
                    if !self.grow(word) {
                        return Err(InsertError::Full);
                    }
                }
                done => return done,
            }
        }
    }
}
