//! Compaction: moving the fingerprints of sparse levels into other levels
//! of the same geometry, and retiring the levels it empties.

use super::slots::{bit, Bits, Level};
use super::ScalableCuckooFilter;
use crate::filter::Table;

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
    /// never removed, removes refused because levels of different
    /// geometry matched) stops costing a lookup and its memory. Then frees
    /// the memory of every retired level, as
    /// [`reclaim_retired`](Self::reclaim_retired) does.
    ///
    /// What moves, and how, is [`compact_concurrently`](Self::compact_concurrently)'s
    /// rule; with `&mut self` no reader or writer runs, and the result is
    /// deterministic: two copies given the same operations, then
    /// `compact`, stay byte-identical. Cost: a pass over the buckets of
    /// the levels it moves from, plus the moves' inserts; it runs only
    /// when called, never on its own.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let mut filter = ScalableCuckooFilter::builder()
    ///     .capacity(1000)
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
    ///     assert!(filter.remove_hash(old).is_removed());
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
        let mut stats = self.compact_concurrently();
        self.reclaim_retired();
        stats.bytes_freed = before.saturating_sub(self.memory_usage());
        stats
    }

    /// [`compact`](Self::compact) beside readers and writers, through
    /// `&self`, without freeing the retired levels' memory (their tables
    /// stay allocated for reuse by a later growth, or until
    /// [`reclaim_retired`](Self::reclaim_retired)).
    ///
    /// For each level in use but the current one, sparsest first (ties:
    /// the lowest slot), whose items fit into the free slots of the other
    /// levels in use *of the same geometry* (the same bucket count, hash
    /// scheme and fingerprint width; with growth factor 1, all slots of
    /// the same width): bucket by bucket, each of its fingerprints is
    /// inserted into the first of those levels (lowest slot first) that
    /// takes it **at the same bucket pair**, by the level's normal insert
    /// (whose cuckoo path search keeps every other fingerprint in its own
    /// pair), then removed from its level. A key's pair depends only on
    /// the bucket count, the hash scheme and its fingerprint, so it is the
    /// key's pair in the new level too. Near full, a level may refuse a
    /// fingerprint although it has free slots: moving from that level
    /// then stops, and what is left stays where it is, found (both levels
    /// stay in use; no move is undone). A level emptied by the moves is
    /// retired.
    ///
    /// Beside other threads (the protocol is `src/scalable/moves.rs`; loom
    /// models readers, batch readers, counts, removers, `clear`, growth and
    /// a second compaction against it: `docs/concurrency.md`):
    /// * each move (insert into the target, take from the source) is
    ///   bracketed by a sequence word that a lookup, remove or count which
    ///   found nothing checks before answering, and that a remove checks
    ///   again before it takes a copy: no thread misses an item that was
    ///   inserted and not removed, a remove of a key whose copy is moving
    ///   takes exactly one copy, and a remove never takes the copy of a
    ///   key that collides with its own in a level of another geometry
    ///   (issue 40);
    /// * while a move is in flight, a search that found nothing waits for
    ///   it (spinning, then yielding, then sleeping, as lock waiters do);
    ///   the bracket ends even if the move panics;
    /// * a fingerprint that a remove took first is put back nowhere (the
    ///   move's insert is undone);
    /// * moves hold the growth lock (a bucket's moves at a time): no level
    ///   opens, closes or becomes current during a move; an insert that
    ///   must grow waits for one bucket's moves;
    /// * a level that becomes current meanwhile is left alone from then
    ///   on, and one that takes inserts keeps them: it is retired only if
    ///   empty when the pass over it ends.
    ///
    /// Levels of other geometry are not touched: fingerprints cannot move
    /// between them (keys are not stored, the bucket is taken from the
    /// hash's high bits scaled to the bucket count, and the alternate
    /// depends on the bucket count and the width). Such a level is reused
    /// instead: once at most 3/4 full it takes inserts again when the
    /// current level fills (see [growth](Self#growth-without-stopping-readers)).
    ///
    /// Cost: a pass over the buckets of the levels it moves from (a
    /// relaxed load each; the growth lock only for buckets that hold
    /// something), plus the moves' inserts. Runs only when called.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// use std::sync::Arc;
    /// let filter = Arc::new(
    ///     ScalableCuckooFilter::builder()
    ///         .capacity(1000)
    ///         .growth_factor(1)
    ///         .seed(1)
    ///         .build()?,
    /// );
    /// let mut k = 0;
    /// while filter.levels() < 3 {
    ///     filter.insert_hash(k)?;
    ///     k += 1;
    /// }
    /// for old in 10..k - 100 {
    ///     assert!(filter.remove_hash(old).is_removed());
    /// }
    /// let reader = {
    ///     let filter = filter.clone();
    ///     std::thread::spawn(move || (0..10).all(|key| filter.contains_hash(key)))
    /// };
    /// let stats = filter.compact_concurrently();
    /// assert!(stats.levels_retired > 0);
    /// assert!(reader.join().unwrap());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn compact_concurrently(&self) -> CompactStats {
        let before = self.memory_usage();
        let mut stats = CompactStats::default();
        let current = self.current();
        let mut order: Vec<(usize, usize)> = Bits(self.in_use() & !bit(current))
            .filter_map(|s| Some((self.level(s)?.len(), s)))
            .collect();
        order.sort_unstable();
        for (_, s) in order {
            let Some(source) = self.level(s) else {
                continue;
            };
            let room: usize = Bits(self.in_use() & !bit(s))
                .filter_map(|t| self.level(t))
                .map(|l| &l.table)
                .filter(|t| source.table.same_geometry(t))
                .map(|t| t.free_room())
                .sum();
            if source.len() > room {
                continue;
            }
            let (moved, finished) = self.drain(s, source);
            stats.fingerprints_moved += moved;
            if finished && source.len() == 0 && self.retire_if_empty(s) {
                stats.levels_retired += 1;
            }
        }
        stats.bytes_freed = before.saturating_sub(self.memory_usage());
        stats
    }

    /// Moves what slot `s` holds into the other levels in use of its
    /// geometry, bucket by bucket; the fingerprints moved, and whether
    /// every bucket was passed over (no fingerprint was refused, and the
    /// slot stayed in use and not current).
    fn drain(&self, s: usize, source: &Level) -> (usize, bool) {
        let mut moved = 0;
        for i in 0..source.table.buckets() {
            if !source.table.bucket_occupied(i) {
                continue;
            }
            // Under the growth lock no level opens, closes, is reused or
            // becomes current: the targets stay in use during the moves.
            let _growth = self.growth.guard();
            let in_use = self.in_use();
            if in_use & bit(s) == 0 || self.current() == s {
                return (moved, false);
            }
            let targets: Vec<&Table> = Bits(in_use & !bit(s))
                .filter_map(|t| self.level(t))
                .map(|l| &l.table)
                .filter(|t| source.table.same_geometry(t))
                .collect();
            match source.table.move_bucket(i, &targets, &self.moves) {
                Ok(n) => moved += n,
                Err(n) => return (moved + n, false),
            }
        }
        (moved, true)
    }

    /// Runs `body` while no level opens, closes or becomes current and no
    /// compaction moves a fingerprint (it holds the growth lock, which
    /// each move holds). A snapshot writes its levels inside: a key moved
    /// from a level not yet written into one already written would be in
    /// neither copy (`tests/compact_concurrently.rs` caught it). `body`
    /// must not grow, clear or compact this filter.
    #[cfg_attr(concurrent_cuckoo_loom, allow(dead_code))]
    pub(crate) fn with_levels_fixed<R>(&self, body: impl FnOnce() -> R) -> R {
        let _growth = self.growth.guard();
        body()
    }
}
