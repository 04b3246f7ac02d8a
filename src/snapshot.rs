//! Snapshots beside writers: a table's buckets copied as they were at one
//! instant, while writers go on, each waiting for at most one stripe
//! group's copy rather than the whole table's.
//!
//! # The protocol
//! Every bucket is changed only by a holder of its stripe's lock (the
//! invariant of `table.rs`), and every stripe lock is taken through
//! `Stripes::lock_stripe` or `StripeGuard::add_for_move`, which check the
//! stripe's *pending* mark.
//!
//! 1. **Barrier.** With every stripe lock held, the snapshot installs its
//!    copier and marks every stripe pending. Writers wait meanwhile for
//!    no more than the taking of the locks; no bucket is copied yet.
//! 2. **Copy before change.** Whoever next takes a pending stripe's lock
//!    (a writer, a locked lookup, `count`, a `lock_all`) copies that
//!    stripe's buckets into the snapshot and clears the mark, before
//!    anything else under that lock.
//! 3. **The pass.** The snapshot takes the stripes' locks a group at a time
//!    and copies those still pending; when it has passed the last, nothing
//!    is pending and it removes its copier.
//!
//! Between the barrier and a stripe's copy no one changes that stripe's
//! buckets: a change needs the lock, and whoever takes the lock first
//! copies first (the mark, set under the barrier's locks, is seen by every
//! later holder). So every stripe is copied as it was at the barrier, and
//! the whole copy is the table at that instant: no torn bucket, no
//! fingerprint both moved out of a stripe not yet copied and into one
//! already copied (missing), or copied twice (a length above the truth).
//! The length is counted from the copy itself. The models in
//! `loom-tests/tests/snapshots.rs` check this beside moving inserts and
//! removes, with a canary for steps 1 and 2.
//!
//! What it costs: a writer that takes a pending stripe copies that
//! stripe's buckets (`buckets / stripes` of them, one per cache line:
//! about 1,024 lines at the default sizing) while holding its lock, and
//! may wait that long for a stripe another thread is copying. A writer
//! holding every lock (`clear`, an insert's last exhaustive search)
//! copies every pending stripe. Lookups never wait.

use crate::fingerprint::{BucketWord, Fingerprint};
use crate::stripes::StripeCopier;
use crate::table::RawTable;
use core::ops::Range;

/// Where a snapshot's copies go: the table's buckets and the bytes of its
/// encoding's body (`BUCKET_BYTES` per bucket, little-endian, in bucket
/// order), which the copies of different stripes write in disjoint parts.
struct Sink<'a, F: Fingerprint> {
    buckets: &'a [F::Bucket],
    body: *mut u8,
    stripes: usize,
}

/// Copies the buckets of `table` into `body` (exactly `BUCKET_BYTES` per
/// bucket) as they were at one instant, beside writers (module docs), and
/// returns the occupied slots of the copy.
pub(crate) fn copy_buckets<F: Fingerprint>(table: &RawTable<F>, body: &mut [u8]) -> u64 {
    let buckets = &table.buckets[..];
    assert_eq!(body.len(), buckets.len() * F::BUCKET_BYTES, "body size");
    let sink = Sink::<F> {
        buckets,
        body: body.as_mut_ptr(),
        stripes: table.stripes.count(),
    };
    let copier = StripeCopier {
        copy: copy_stripes::<F>,
        context: (&sink as *const Sink<'_, F>).cast(),
    };
    table.stripes.copy_every_stripe(&copier);
    // Every stripe is copied (the pass copied those no one else had), so
    // `body` is the table at the barrier.
    body.chunks_exact(F::BUCKET_BYTES)
        .map(|b| F::occupied(F::Word::get_le(b)) as u64)
        .sum()
}

/// The copier of a [`Sink`]: the buckets of the stripes `run`, every
/// `sink.stripes`-th bucket from each.
///
/// # Safety
/// `context` points to a live `Sink<F>` (the one [`copy_buckets`] made,
/// which outlives the pass); the caller holds the locks of `run`, whose
/// copies are pending (so no one else copies or changes those buckets
/// meanwhile, and each is copied once).
unsafe fn copy_stripes<F: Fingerprint>(context: *const (), run: Range<usize>) {
    // SAFETY: the caller's contract.
    let sink = unsafe { &*context.cast::<Sink<'_, F>>() };
    let n = sink.buckets.len();
    let mut base = 0;
    while base < n {
        for i in base + run.start..(base + run.end).min(n) {
            let word = F::load(&sink.buckets[i]);
            // SAFETY: `i < n` and the body holds `n * BUCKET_BYTES`
            // bytes (asserted in `copy_buckets`), so the range is inside
            // it. Bucket `i` is in stripe `i & (stripes - 1)`, one of
            // `run`, whose locks the caller holds with their copies
            // pending: no other thread writes these bytes now (another
            // copier of the same stripe would need the same lock and
            // finds the copy done), and `copy_buckets` reads the body only
            // after the pass. So this is the only reference to them.
            let out = unsafe {
                core::slice::from_raw_parts_mut(sink.body.add(i * F::BUCKET_BYTES), F::BUCKET_BYTES)
            };
            word.put_le_into(out);
        }
        base += sink.stripes;
    }
}
