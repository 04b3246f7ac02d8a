//! Moving stored fingerprints from one table into others of the same
//! geometry: what a growing filter's compaction
//! ([`ScalableCuckooFilter::compact_concurrently`](crate::ScalableCuckooFilter::compact_concurrently))
//! needs. Kept apart from `table.rs`: it is built from the table's own
//! insert and remove, and runs beside readers and writers only through the
//! move sequence of the growing filter (`src/scalable/moves.rs`).
//!
//! Why a fingerprint may move at all: a table keeps fingerprints, not
//! keys, and a key's bucket pair is a function of the table's index map
//! (bucket count and hash scheme, `src/index.rs`) and of its fingerprint
//! (whose width is the table's). In a table of the same index map and
//! width, the pair of a fingerprint stored in bucket `i`, `(i,
//! alternate(i, fp))`, is the pair every key that left it there looks up:
//! placed there, it is found as before.

use crate::error::InsertError;
use crate::filter::{with_table, Table, Width};
use crate::fingerprint::{Fingerprint, SLOTS};
use crate::scalable::moves::MoveSequence;
use crate::table::{Location, Mode, RawTable};

impl<F: Fingerprint> RawTable<F> {
    /// The fingerprints stored in bucket `i`, in slot order (empty slots
    /// skipped): one load of the bucket, exact only while no writer runs.
    pub(crate) fn bucket_fingerprints(&self, i: usize) -> impl Iterator<Item = F> {
        let word = F::load(&self.buckets[i]);
        (0..SLOTS)
            .map(move |slot| F::slot(word, slot))
            .filter(|&fp| fp != F::EMPTY)
    }

    /// The location of fingerprint `fp` stored in bucket `i`: the pair
    /// `(i, alternate(i, fp))`, which in any table of this index map is
    /// the pair of every key whose fingerprint it is.
    pub(crate) fn stored_location(&self, i: usize, fp: F) -> Location<F> {
        Location {
            i1: i,
            i2: self.index.alternate(i, fp.to_u64()),
            fp,
        }
    }

    /// Slots not holding a fingerprint. An upper bound on what an insert
    /// can still place: near full, no cuckoo path may reach a free slot.
    pub(crate) fn free_room(&self) -> usize {
        (self.bucket_count() * SLOTS).saturating_sub(self.len())
    }

    /// Whether bucket `i` holds a fingerprint (a relaxed snapshot).
    pub(crate) fn bucket_occupied(&self, i: usize) -> bool {
        self.bucket_fingerprints(i).next().is_some()
    }

    /// Moves the fingerprints of bucket `i` into `targets` (those of this
    /// width and index map; the others are skipped), each into the first
    /// target whose normal insert takes it at the same pair (with its
    /// cuckoo path search, which keeps every other fingerprint in its own
    /// pair), then takes it here: one move, bracketed by `moves` so that a
    /// search that looked at the target before the insert and here after
    /// the take looks again. The bucket is read once, without locks: if a
    /// fingerprint read there is gone when taken (a remove took it, or
    /// took the target's new copy and this take found the other), the
    /// insert is undone in the target, within the same move. Returns the
    /// fingerprints moved, or, as `Err`, those moved before one that no
    /// target took (full, or 8 copies in the pair): it and the rest stay
    /// here, still found. Without concurrent writers, deterministic: the
    /// same tables in the same state give the same result.
    ///
    /// The caller holds the filter's growth lock: no target opens, closes
    /// or is reused meanwhile, and moves never overlap.
    fn move_bucket(
        &self,
        i: usize,
        targets: &[&Table],
        moves: &MoveSequence,
    ) -> Result<usize, usize>
    where
        F: Width,
    {
        let mut moved = 0;
        for fp in self.bucket_fingerprints(i) {
            let loc = self.stored_location(i, fp);
            let outcome = moves.bracket(|| {
                let target = targets
                    .iter()
                    .filter_map(|t| F::table_of(t))
                    .filter(|t| t.index == self.index)
                    .find(|t| match t.insert(&loc, Mode::Multi) {
                        Ok(_) => true,
                        Err(InsertError::Full | InsertError::TooManyDuplicates) => false,
                    })?;
                #[cfg(all(test, not(concurrent_cuckoo_loom)))]
                crate::scalable::moves::tests::panic_if_armed();
                // The copy read in bucket `i` (the primary of `loc`) is the
                // one `remove` takes first; any copy in the pair stands
                // for it.
                let taken = self.remove(&loc);
                if !taken {
                    target.remove(&loc);
                }
                Some(taken)
            });
            match outcome {
                Some(taken) => moved += usize::from(taken),
                None => return Err(moved),
            }
        }
        Ok(moved)
    }
}

impl Table {
    /// Whether a fingerprint stored in this table may move into `other`:
    /// the same width and index map (bucket count and hash scheme).
    pub(crate) fn same_geometry(&self, other: &Table) -> bool {
        match (self, other) {
            (Table::F8(a), Table::F8(b)) => a.index == b.index,
            (Table::F16(a), Table::F16(b)) => a.index == b.index,
            (Table::F32(a), Table::F32(b)) => a.index == b.index,
            _ => false,
        }
    }

    /// [`RawTable::free_room`] of this table.
    pub(crate) fn free_room(&self) -> usize {
        with_table!(self, t => t.free_room())
    }

    /// [`RawTable::bucket_occupied`] of this table.
    pub(crate) fn bucket_occupied(&self, i: usize) -> bool {
        with_table!(self, t => t.bucket_occupied(i))
    }

    /// [`RawTable::move_bucket`] of this table: `targets` of another
    /// geometry are skipped.
    pub(crate) fn move_bucket(
        &self,
        i: usize,
        targets: &[&Table],
        moves: &MoveSequence,
    ) -> Result<usize, usize> {
        with_table!(self, t => t.move_bucket(i, targets, moves))
    }

    /// Buckets of this table.
    pub(crate) fn buckets(&self) -> usize {
        with_table!(self, t => t.bucket_count())
    }
}
