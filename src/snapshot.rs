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

/// Copies the buckets of `table` into `body` (exactly `BUCKET_BYTES` per
/// bucket, little-endian) as they were at one instant, beside writers
/// (module docs), and returns the occupied slots of the copy.
pub(crate) fn copy_buckets<F: Fingerprint>(table: &RawTable<F>, body: &mut [u8]) -> u64 {
    let buckets = &table.buckets[..];
    copy_into_body(
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

/// [`copy_every_bucket`] into bytes: bucket `i` encoded by
/// `encode(i, out)` into `body[i * bucket_bytes..][..bucket_bytes]`.
pub(crate) fn copy_into_body(
    stripes: &Stripes,
    buckets: usize,
    bucket_bytes: usize,
    body: &mut [u8],
    encode: impl Fn(usize, &mut [u8]) + Sync,
) {
    assert_eq!(body.len(), buckets * bucket_bytes, "body size");
    let body = Body(body.as_mut_ptr());
    copy_every_bucket(stripes, buckets, |i| {
        // SAFETY: `i < buckets` (`copy_every_bucket` calls with buckets
        // in range only) and the body holds `buckets * bucket_bytes` bytes
        // (asserted above), so the range is inside it. Each bucket is
        // encoded exactly once, by the holder of its stripe's lock, and
        // the body is read only after the copy: no other reference to
        // these bytes exists meanwhile.
        let out = unsafe { body.bytes(i * bucket_bytes, bucket_bytes) };
        encode(i, out);
    });
}

/// A snapshot's body, written by several threads at disjoint buckets.
struct Body(*mut u8);

impl Body {
    /// The `len` bytes at `at`.
    ///
    /// # Safety
    /// They lie inside the body, and no other reference to them exists
    /// while the returned one lives.
    #[allow(clippy::mut_from_ref)]
    unsafe fn bytes(&self, at: usize, len: usize) -> &mut [u8] {
        // SAFETY: the caller's contract.
        unsafe { core::slice::from_raw_parts_mut(self.0.add(at), len) }
    }
}

// SAFETY: the threads that copy stripes write disjoint byte ranges of the
// body (one per bucket, each bucket once: `copy_into_body`), and it is read
// only after the copy ends; the pointer itself is never changed.
unsafe impl Sync for Body {}

/// Calls `copy_one(i)` once for every bucket `i < buckets` of a table
/// guarded by `stripes` (bucket `i` by stripe `i % stripes`), each with
/// its stripe's lock held, at a moment when the bucket is as it was at one
/// instant for the whole table: beside writers (module docs). Any thread
/// that takes a stripe's lock may make the calls for that stripe, so
/// `copy_one` is `Sync`. A table that writes its buckets only under their
/// stripes' locks, taken through `Stripes`, can be copied so (the plain
/// table, the windowed one).
pub(crate) fn copy_every_bucket(
    stripes: &Stripes,
    buckets: usize,
    copy_one: impl Fn(usize) + Sync,
) {
    copy_with(stripes, buckets, &copy_one);
}

/// [`copy_every_bucket`] with the closure's type named.
fn copy_with<C: Fn(usize) + Sync>(stripes: &Stripes, buckets: usize, copy_one: &C) {
    let sink = Sink {
        copy_one,
        buckets,
        stripes: stripes.count(),
    };
    let copier = StripeCopier {
        copy: copy_stripes::<C>,
        context: (&sink as *const Sink<'_, C>).cast(),
    };
    stripes.copy_every_stripe(&copier);
}

/// What the copier of a snapshot calls, and the table's shape.
struct Sink<'a, C> {
    copy_one: &'a C,
    buckets: usize,
    stripes: usize,
}

/// The copier of a [`Sink`]: the buckets of the stripes `run`, every
/// `sink.stripes`-th bucket from each.
///
/// # Safety
/// `context` points to a live `Sink<C>` (the one [`copy_with`] made,
/// which outlives the pass); the caller holds the locks of `run`, whose
/// copies are pending (so no one else copies or changes those buckets
/// meanwhile, and each is copied once).
unsafe fn copy_stripes<C: Fn(usize) + Sync>(context: *const (), run: Range<usize>) {
    // SAFETY: the caller's contract.
    let sink = unsafe { &*context.cast::<Sink<'_, C>>() };
    let n = sink.buckets;
    let mut base = 0;
    while base < n {
        for i in base + run.start..(base + run.end).min(n) {
            (sink.copy_one)(i);
        }
        base += sink.stripes;
    }
}
