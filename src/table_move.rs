//! Moving stored fingerprints from one table into others of the same
//! geometry: what a growing filter's compaction
//! ([`ScalableCuckooFilter::compact`](crate::ScalableCuckooFilter::compact))
//! needs. Kept apart from `table.rs`: nothing here runs beside readers or
//! writers (the caller holds the filter by `&mut`).
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
use crate::table::{Location, Mode, RawTable};

impl<F: Fingerprint> RawTable<F> {
    /// The fingerprints stored in bucket `i`, in slot order (empty slots
    /// skipped). Exact only while no writer runs.
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

    /// Moves every fingerprint of this table into `targets` (those of this
    /// width and index map; the others are skipped), bucket by bucket, each
    /// into the first target whose normal insert takes it at the same
    /// pair (with its cuckoo path search, which keeps every other
    /// fingerprint in its own pair). A fingerprint is inserted into its
    /// target before it is removed here. Stops at the first fingerprint no
    /// target takes (full, or 8 copies in the pair): what is left stays
    /// here, still found. Returns the fingerprints moved, and whether this
    /// table is now empty. Deterministic: the same tables in the same
    /// state give the same result.
    fn drain_into(&self, targets: &[&Table]) -> (usize, bool)
    where
        F: Width,
    {
        let mut moved = 0;
        for i in 0..self.bucket_count() {
            for fp in self.bucket_fingerprints(i) {
                let loc = self.stored_location(i, fp);
                let placed = targets
                    .iter()
                    .filter_map(|t| F::table_of(t))
                    .filter(|t| t.index == self.index)
                    .any(|t| match t.insert(&loc, Mode::Multi) {
                        Ok(_) => true,
                        Err(InsertError::Full | InsertError::TooManyDuplicates) => false,
                    });
                if !placed {
                    return (moved, false);
                }
                // The copy just read in bucket `i` (the primary of `loc`)
                // is the one `remove` takes first.
                let removed = self.remove(&loc);
                debug_assert!(removed, "the fingerprint was read here");
                moved += 1;
            }
        }
        (moved, self.len() == 0)
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

    /// [`RawTable::drain_into`] of this table: `targets` of another
    /// geometry are skipped.
    pub(crate) fn drain_into(&self, targets: &[&Table]) -> (usize, bool) {
        with_table!(self, t => t.drain_into(targets))
    }
}
