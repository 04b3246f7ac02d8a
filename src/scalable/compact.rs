//! Compaction: moving the fingerprints of sparse levels into other levels
//! of the same geometry, and retiring the levels it empties.

use super::slots::{bit, Bits};
use super::ScalableCuckooFilter;

/// What [`compact`](ScalableCuckooFilter::compact) did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompactStats {
    /// Fingerprints moved from one level into another.
    pub fingerprints_moved: usize,
    /// Levels emptied by the moves and retired.
    pub levels_retired: usize,
    /// Bytes given back: what [`memory_usage`](ScalableCuckooFilter::memory_usage)
    /// dropped by (the levels retired here, and any retired earlier and
    /// not yet freed by [`reclaim_retired`](ScalableCuckooFilter::reclaim_retired)).
    pub bytes_freed: usize,
}

impl<S> ScalableCuckooFilter<S> {
    /// Moves the items of sparse levels into other levels with room, and
    /// retires the levels it empties: a level left with a few items (keys
    /// never removed, removes refused because two levels matched) stops
    /// costing a lookup and its memory.
    ///
    /// For each level in use but the current one, sparsest first (ties:
    /// the lowest slot), whose items fit into the free slots of the other
    /// levels in use *of the same geometry* (the same bucket count, hash
    /// scheme and fingerprint width; with growth factor 1, all slots of
    /// the same width): each of its fingerprints is inserted into the
    /// first of those levels (lowest slot first) that takes it **at the
    /// same bucket pair**, by the level's normal insert (whose cuckoo
    /// path search keeps every other fingerprint in its own pair), then
    /// removed from its level. A key's pair depends only on the bucket
    /// count, the hash scheme and its fingerprint, so it is the key's
    /// pair in the new level too: no item is ever missed. Near full, a
    /// level may refuse a fingerprint although it has free slots: moving
    /// from that level then stops, and what is left stays where it is,
    /// found (both levels stay in use; no move is undone). A level
    /// emptied by the moves is retired and its memory freed, as
    /// [`reclaim_retired`](Self::reclaim_retired) does (which this calls).
    ///
    /// Levels of other geometry are not touched: fingerprints cannot move
    /// between them (keys are not stored, the bucket is taken from the
    /// hash's high bits scaled to the bucket count, and the alternate
    /// depends on the bucket count and the width). Such a level is reused
    /// instead: once at most 3/4 full it takes inserts again when the
    /// current level fills (see [growth](Self#growth-without-stopping-readers)).
    ///
    /// Deterministic: two copies given the same operations, then
    /// `compact`, stay byte-identical. Cost: O(slots of the levels it
    /// moves from) plus the moves' inserts; it runs only when called,
    /// never on its own. `&mut self`: no reader or writer runs meanwhile.
    /// Compaction beside concurrent readers and writers (a move order that
    /// readers cannot miss, and a loom model of it) is not implemented.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let mut filter = ScalableCuckooFilter::builder()
    ///     .initial_capacity(1000)
    ///     .growth_factor(1)
    ///     .seed(1)
    ///     .build()?;
    /// let mut k = 0;
    /// while filter.levels() < 3 {
    ///     filter.insert_hash(k)?;
    ///     k += 1;
    /// }
    /// // Keep 10 of the first level's keys and none of the second's.
    /// for old in 10..k - 100 {
    ///     assert!(filter.remove_hash(old));
    /// }
    /// let len = filter.len();
    /// let levels = filter.levels();
    /// let stats = filter.compact();
    /// assert!(stats.levels_retired > 0 && filter.levels() < levels);
    /// assert_eq!(filter.len(), len);
    /// assert!((0..10).chain(k - 100..k).all(|key| filter.contains_hash(key)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn compact(&mut self) -> CompactStats {
        let before = self.memory_usage();
        let mut stats = CompactStats::default();
        {
            let this = &*self;
            let current = this.current();
            let mut order: Vec<(usize, usize)> = Bits(this.in_use() & !bit(current))
                .filter_map(|s| Some((this.level(s)?.len(), s)))
                .collect();
            order.sort_unstable();
            for (_, s) in order {
                let in_use = this.in_use();
                let Some(source) = this.level(s) else {
                    continue;
                };
                let targets: Vec<_> = Bits(in_use & !bit(s))
                    .filter_map(|t| this.level(t))
                    .map(|l| &l.table)
                    .filter(|t| source.table.same_geometry(t))
                    .collect();
                let room: usize = targets.iter().map(|t| t.free_room()).sum();
                if source.len() > room {
                    continue;
                }
                let (moved, emptied) = source.table.drain_into(&targets);
                stats.fingerprints_moved += moved;
                if emptied {
                    this.retire_locked(s);
                    if this.in_use() & bit(s) == 0 {
                        stats.levels_retired += 1;
                    }
                }
            }
        }
        self.reclaim_retired();
        stats.bytes_freed = before.saturating_sub(self.memory_usage());
        stats
    }
}
