//! Growth: adding (or reopening) the level that takes inserts when the
//! current one is full.

use super::slots::{bit, index_of, next_word, width_for, Bits, Level, LEVEL_MAX_PATH};
use super::ScalableCuckooFilter;
use crate::error::InsertError;
use crate::filter::with_table;
use crate::sync::Ordering;
use crate::table::Mode;

/// What [`grow_and_insert`](ScalableCuckooFilter::grow_and_insert) did
/// with a key the current level refused.
pub(super) enum Grown {
    /// The current level changed since the caller loaded it (another
    /// thread grew or cleared the filter): insert there.
    Retry,
    /// The key went into another level, which now takes inserts (or, for
    /// `Mode::Unique`, was found there and nothing changed).
    Inserted(bool),
    /// No level takes the key: the filter is unchanged. `Full`, or
    /// `TooManyDuplicates` from a level with room that holds 8 copies of
    /// the key's fingerprint in its pair.
    Refused(InsertError),
}

impl<S> ScalableCuckooFilter<S> {
    /// The insert of a key that the current level refused (`Full`), under
    /// the growth lock, unless another thread changed the current level
    /// first ([`Grown::Retry`]). Each candidate of
    /// [`next_slot`](Self::next_slot) (another level in use with room, or
    /// a free slot opened for it) is offered the key *before* it becomes
    /// current, and becomes current only if it stores it. So an insert
    /// that no level takes changes nothing (issue 40: it used to switch
    /// the current level first and refuse after, and the Redis module,
    /// which replicates only what succeeded, then left its replicas and
    /// its AOF different from the primary). A candidate that is full is
    /// added to `refused` and the next one is tried; one that holds 8
    /// copies of the key's fingerprint in its pair refuses the key
    /// (`TooManyDuplicates`), as before. `seen` is the
    /// `current` word the caller loaded before its insert was refused.
    #[cold]
    pub(super) fn grow_and_insert(
        &self,
        seen: u64,
        refused: &mut u64,
        hash: u64,
        mode: Mode,
    ) -> Grown {
        let _growth = self.growth.guard();
        #[cfg(all(test, not(concurrent_cuckoo_loom)))]
        super::tests::panic_if_armed();
        let word = self.current.load(Ordering::Acquire);
        // The canary plants the old test: the index alone, which a `clear`
        // and a growth bring back to a value it had (an ABA).
        #[cfg(concurrent_cuckoo_canary = "clear_aba")]
        let changed = index_of(word) != index_of(seen);
        #[cfg(not(concurrent_cuckoo_canary = "clear_aba"))]
        let changed = word != seen;
        if changed {
            return Grown::Retry; // grown or cleared meanwhile: retry there
        }
        let current = index_of(word);
        loop {
            let Some(next) = self.next_slot(current, *refused) else {
                return Grown::Refused(InsertError::Full);
            };
            let opened = self.in_use() & bit(next) == 0;
            if opened && !self.open_slot(next) {
                return Grown::Refused(InsertError::Full);
            }
            let Some(level) = self.level(next) else {
                // An open slot always has a level.
                return Grown::Refused(InsertError::Full);
            };
            match with_table!(&level.table, t => t.insert(&t.locate(hash), mode)) {
                Ok(true) => {
                    self.publish_current(word, next, opened);
                    return Grown::Inserted(true);
                }
                // `insert_unique`: a copy appeared there (a plain insert of
                // the key raced it): present, nothing stored, no switch.
                Ok(false) => {
                    if opened {
                        self.retire_locked(next);
                    }
                    return Grown::Inserted(false);
                }
                Err(e) => {
                    // A slot opened for this key and left empty goes back
                    // out of use: the filter is as it was.
                    if opened {
                        self.retire_locked(next);
                    }
                    // 8 copies of the key's fingerprint there: refused, as
                    // the current level refuses a ninth copy (a hot key
                    // does not grow the filter level after level).
                    if e == InsertError::TooManyDuplicates {
                        return Grown::Refused(e);
                    }
                    *refused |= bit(next);
                }
            }
        }
    }

    /// Makes slot `next` (in use, holding the key that made it current)
    /// the current level after `word` (under the growth lock).
    fn publish_current(&self, word: u64, next: usize, opened: bool) {
        let current = index_of(word);
        self.current.store(next_word(word, next), Ordering::Release);
        // The canaries plant the steps of opening a slot after it is
        // published: lookups that load the new `current` may miss the
        // slot's bit, and inserts may find it still closed.
        #[cfg(concurrent_cuckoo_canary = "publish_before_mark")]
        if opened {
            self.in_use.fetch_or(bit(next), Ordering::AcqRel);
        }
        #[cfg(concurrent_cuckoo_canary = "publish_before_reopen")]
        if let (true, Some(level)) = (opened, self.level(next)) {
            with_table!(&level.table, t => t.reopen());
        }
        #[cfg(not(any(
            concurrent_cuckoo_canary = "publish_before_mark",
            concurrent_cuckoo_canary = "publish_before_reopen"
        )))]
        let _ = opened;
        // The level that stopped taking inserts may have been emptied by
        // removes that read the old `current`: retire it here then (see
        // `retire_order`).
        self.retire_order.fetch_add(1, Ordering::AcqRel);
        self.retire_locked(current);
    }

    /// The slot to take inserts after `current` refused one (under the
    /// growth lock, so the mask is exact). Every input is state a saved
    /// copy holds (the slots in use, their contents, the configuration),
    /// so copies choose alike:
    ///
    /// 1. another level in use holding at most 3/4 of its capacity and not
    ///    in `refused`, the lowest such slot: a level left with a few items
    ///    (a refused remove, a key never removed) takes inserts again
    ///    instead of staying in use for nothing. A level that already
    ///    refused the key being inserted is skipped however empty it is:
    ///    a small or crowded level can refuse one key below 3/4 load, and
    ///    two such levels would otherwise hand that key back and forth
    ///    forever (a hang the `scalable_model` fuzzer found);
    /// 2. else, below `max_levels` levels in use, a free slot: the lowest
    ///    whose size is at least `growth_factor - 1` times the items of
    ///    the slots in use (for a filter that never retired a level: the
    ///    slot after the current one, as before slots were reused), or if
    ///    none is, the highest free slot whose size can be computed;
    /// 3. else none: the insert is refused.
    pub(super) fn next_slot(&self, current: usize, refused: u64) -> Option<usize> {
        let in_use = self.in_use();
        let roomy = Bits(in_use & !bit(current) & !refused).find(|&s| {
            self.level(s)
                .is_some_and(|l| 4 * l.len() <= 3 * l.capacity())
        });
        if roomy.is_some() {
            return roomy;
        }
        if in_use.count_ones() as usize >= self.config.max_levels {
            return None;
        }
        let held = Bits(in_use)
            .map(|t| self.config.items(t).unwrap_or(usize::MAX))
            .fold(0usize, usize::saturating_add);
        let want = held.saturating_mul(self.config.growth_factor as usize - 1);
        let free = (0..self.config.max_levels).filter(|&s| in_use & bit(s) == 0);
        free.clone()
            .find(|&s| self.config.items(s).is_some_and(|items| items >= want))
            .or_else(|| free.filter(|&s| self.config.items(s).is_some()).last())
    }

    /// Opens free slot `next` (under the growth lock): reopens its retired
    /// level (empty, and of the slot's size by construction) if it is what
    /// a new level would be, or allocates one, then marks the slot in use.
    /// `false` if the width does not fit the budget or the allocation
    /// fails.
    fn open_slot(&self, next: usize) -> bool {
        let Some(bits) = self.width_of(next) else {
            return false;
        };
        match self.level(next) {
            // Empty (closed levels are), and what a copy without it would
            // allocate: the same size, width and path limit.
            Some(level) if level.bits() == bits && level.max_path() == LEVEL_MAX_PATH => {
                #[cfg(not(concurrent_cuckoo_canary = "publish_before_reopen"))]
                with_table!(&level.table, t => t.reopen());
            }
            kept => {
                let Some(map) = self.config.map(next, bits) else {
                    return false;
                };
                let Ok(level) =
                    Level::new(map, bits, self.level_stripes(), self.config.table_memory)
                else {
                    return false;
                };
                // A kept level of another width or path limit (decoded
                // from an encoding written before widths were a function
                // of the slot, or before levels searched shorter paths)
                // is replaced, not reopened: a copy saved without it
                // would allocate the new kind. A lookup may still be
                // reading it, so the new level keeps it alive.
                if kept.is_some() {
                    level
                        .replaced
                        .store(self.slots[next].load(Ordering::Acquire), Ordering::Release);
                }
                self.slots[next].store(Box::into_raw(Box::new(level)), Ordering::Release);
            }
        }
        // Before the slot is published as current: a lookup that follows
        // an insert into it sees it in use.
        #[cfg(not(concurrent_cuckoo_canary = "publish_before_mark"))]
        self.in_use.fetch_or(bit(next), Ordering::AcqRel);
        true
    }

    /// The width of the level opened in slot `next`: the slot's
    /// ([`Config::bits`](super::Config::bits)), unless the levels in use
    /// (decoded from an encoding written before widths were a function of
    /// the slot) spent more of the budget, then the narrowest that still
    /// fits beside them and a 32-bit reserve for every slot still free
    /// after this one. For levels of their slots' widths this is the
    /// slot's width: the bounds of all slots fit the budget. Both depend
    /// only on state a saved copy holds.
    fn width_of(&self, next: usize) -> Option<u32> {
        let spent: f64 = self.live_levels().map(|(_, l)| l.bound()).sum();
        let in_use = self.in_use().count_ones() as usize;
        let fits = width_for(
            in_use,
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

    /// `insert_hash` / `insert_unique_hash` into the current level, growing
    /// as needed. A refused insert changes nothing.
    pub(super) fn insert_prepared(&self, hash: u64, mode: Mode) -> Result<bool, InsertError> {
        // The slots that refused this key: each is tried at most once, so
        // the loop ends (see `next_slot`).
        let mut refused = 0;
        loop {
            let word = self.current.load(Ordering::Acquire);
            let Some(level) = self.level(index_of(word)) else {
                return Err(InsertError::Full);
            };
            let result = with_table!(&level.table, t => t.insert(&t.locate(hash), mode));
            match result {
                Err(InsertError::Full) => {
                    refused |= bit(index_of(word));
                    match self.grow_and_insert(word, &mut refused, hash, mode) {
                        Grown::Retry => {}
                        Grown::Inserted(added) => return Ok(added),
                        Grown::Refused(e) => return Err(e),
                    }
                }
                done => return done,
            }
        }
    }
}
