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
use crate::stripes::{StripeCopier, Stripes};
use crate::table::RawTable;
use core::ops::Range;

/// Where a snapshot's copies go: `copy_one(i, out)` writes bucket `i`'s
/// encoding into `out` (`bucket_bytes` of the body, in bucket order), and
/// the copies of different stripes write disjoint parts of the body.
struct Sink<C> {
    copy_one: C,
    body: *mut u8,
    buckets: usize,
    bucket_bytes: usize,
    stripes: usize,
}

/// Copies the buckets of `table` into `body` (exactly `BUCKET_BYTES` per
/// bucket) as they were at one instant, beside writers (module docs), and
/// returns the occupied slots of the copy.
pub(crate) fn copy_buckets<F: Fingerprint>(table: &RawTable<F>, body: &mut [u8]) -> u64 {
    let buckets = &table.buckets[..];
    copy_buckets_with(
        &table.stripes,
        buckets.len(),
        F::BUCKET_BYTES,
        body,
        |i, out| F::load(&buckets[i]).put_le_into(out),
    );
    // Every stripe is copied (the pass copied those no one else had), so
    // `body` is the table at the barrier.
    body.chunks_exact(F::BUCKET_BYTES)
        .map(|b| F::occupied(F::Word::get_le(b)) as u64)
        .sum()
}

/// Copies `buckets` buckets guarded by `stripes` (bucket `i` by stripe
/// `i % stripes`) into `body`, `bucket_bytes` each, as they were at one
/// instant, beside writers (module docs): `copy_one(i, out)` encodes
/// bucket `i`, called with its stripe's lock held, once per bucket. A
/// table that writes its buckets only under their stripes' locks, taken
/// through `Stripes`, can be copied so (the plain table, the windowed one).
pub(crate) fn copy_buckets_with<C: Fn(usize, &mut [u8])>(
    stripes: &Stripes,
    buckets: usize,
    bucket_bytes: usize,
    body: &mut [u8],
    copy_one: C,
) {
    assert_eq!(body.len(), buckets * bucket_bytes, "body size");
    let sink = Sink {
        copy_one,
        body: body.as_mut_ptr(),
        buckets,
        bucket_bytes,
        stripes: stripes.count(),
    };
    let copier = StripeCopier {
        copy: copy_stripes::<C>,
        context: (&sink as *const Sink<C>).cast(),
    };
    stripes.copy_every_stripe(&copier);
}

/// The copier of a [`Sink`]: the buckets of the stripes `run`, every
/// `sink.stripes`-th bucket from each.
///
/// # Safety
/// `context` points to a live `Sink<C>` (the one [`copy_buckets_with`]
/// made, which outlives the pass); the caller holds the locks of `run`,
/// whose copies are pending (so no one else copies or changes those
/// buckets meanwhile, and each is copied once).
unsafe fn copy_stripes<C: Fn(usize, &mut [u8])>(context: *const (), run: Range<usize>) {
    // SAFETY: the caller's contract.
    let sink = unsafe { &*context.cast::<Sink<C>>() };
    let (n, size) = (sink.buckets, sink.bucket_bytes);
    let mut base = 0;
    while base < n {
        for i in base + run.start..(base + run.end).min(n) {
            // SAFETY: `i < n` and the body holds `n * size` bytes
            // (asserted in `copy_buckets_with`), so the range is inside
            // it. Bucket `i` is in stripe `i & (stripes - 1)`, one of
            // `run`, whose locks the caller holds with their copies
            // pending: no other thread writes these bytes now (another
            // copier of the same stripe would need the same lock and
            // finds the copy done), and the body is read only after the
            // pass. So this is the only reference to them.
            let out = unsafe { core::slice::from_raw_parts_mut(sink.body.add(i * size), size) };
            (sink.copy_one)(i, out);
        }
        base += sink.stripes;
    }
}
