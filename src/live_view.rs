//! A live table's lookup state copied into a value, for loops of lookups.
//!
//! Every lookup of a live table makes an acquire load (its pair's
//! version, `table.rs`). The compiler may not keep a field read through
//! `&RawTable` in a register across that load: the table holds atomics, so
//! as far as it knows another thread may have written the field. A loop
//! over `&RawTable` therefore loads the bucket array's address and the
//! version words' address and mask again for every key. [`LiveView`]
//! copies them into a local value first, which no other thread can reach,
//! so they stay in registers: the batch lookups (`lookup.rs`) run through
//! it. It answers exactly as the table: the same protocol on the same
//! atomics, and the table's own contended path when a version changed.
//! The table's [`Lookup`] impl lives here too, since its batch lookup is
//! the view's.

use crate::fingerprint::Fingerprint;
use crate::index::IndexMap;
use crate::lookup::{Location, Lookup};
use crate::stripes::VersionWords;
use crate::table::{prefetch_pair, probe_optimistic, RawTable};

/// The live table's [`Lookup`]: here, beside the view its batch goes
/// through, rather than in `table.rs`, so that the view builds on the
/// table and the table never imports the view (the files form layers).
impl<F: Fingerprint> Lookup<F> for RawTable<F> {
    #[inline(always)]
    fn index(&self) -> IndexMap {
        self.index
    }
    #[inline(always)]
    fn prefetch(&self, loc: &Location<F>) {
        RawTable::prefetch(self, loc)
    }

    #[inline(always)]
    fn contains(&self, loc: &Location<F>) -> bool {
        RawTable::contains(self, loc)
    }
    /// Through a [`LiveView`], which keeps the table's fields in
    /// registers across the keys' acquire loads.
    #[inline(always)]
    fn contains_batch(&self, hash_at: impl Fn(usize) -> u64, out: &mut [bool]) {
        LiveView::of(self).contains_batch(hash_at, out);
    }
    /// Through a [`LiveView`], as [`contains_batch`](Self::contains_batch).
    #[inline(always)]
    fn contains_signed_batch(
        &self,
        signature_at: impl Fn(usize) -> u32,
        key_hash_at: impl Fn(usize) -> u64,
        out: &mut [bool],
    ) {
        LiveView::of(self).contains_signed_batch(signature_at, key_hash_at, out);
    }
}

/// The lookup state of one [`RawTable`] (module docs).
pub(crate) struct LiveView<'a, F: Fingerprint> {
    table: &'a RawTable<F>,
    buckets: &'a [F::Bucket],
    versions: VersionWords<'a>,
    index: IndexMap,
}

impl<F: Fingerprint> Clone for LiveView<'_, F> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<F: Fingerprint> Copy for LiveView<'_, F> {}

impl<'a, F: Fingerprint> LiveView<'a, F> {
    /// The view of `table`.
    #[inline(always)]
    pub(crate) fn of(table: &'a RawTable<F>) -> Self {
        LiveView {
            table,
            buckets: &table.buckets,
            versions: table.stripes.version_table(),
            index: table.index,
        }
    }
}

impl<F: Fingerprint> Lookup<F> for LiveView<'_, F> {
    #[inline(always)]
    fn index(&self) -> IndexMap {
        self.index
    }

    #[inline(always)]
    fn prefetch(&self, loc: &Location<F>) {
        prefetch_pair(self.buckets, loc);
    }

    #[inline(always)]
    fn contains(&self, loc: &Location<F>) -> bool {
        assert!(loc.i1 < self.buckets.len() && loc.i2 < self.buckets.len());
        // SAFETY: both indices were just checked against the array.
        unsafe { self.contains_located(loc) }
    }

    /// The table's optimistic attempt ([`probe_optimistic`]: the version
    /// with acquire, both buckets relaxed, on a miss an acquire fence and
    /// the version again), on the copied fields; the table's own contended
    /// path when the version changed.
    #[inline(always)]
    unsafe fn contains_located(&self, loc: &Location<F>) -> bool {
        debug_assert!(loc.i1 < self.buckets.len() && loc.i2 < self.buckets.len());
        // SAFETY: the caller guarantees both indices are below
        // `self.index().buckets()`, the table's bucket count, which is
        // the length of `self.buckets` (its array).
        let (b1, b2) = unsafe {
            (
                self.buckets.get_unchecked(loc.i1),
                self.buckets.get_unchecked(loc.i2),
            )
        };
        match probe_optimistic(self.versions.read(loc.i1, loc.i2), b1, b2, loc.fp) {
            Some(answer) => answer,
            None => self.table.contains_contended(loc.i1, loc.i2, loc.fp),
        }
    }
}
