//! Stripe locks, per-stripe item counts, and the move versions readers
//! validate against.
//!
//! Bucket `i` is guarded by lock stripe `i & lock_mask`. Writers lock the
//! stripes of every bucket they change; several stripes are always taken in
//! ascending order and deduplicated, so writers cannot deadlock. All
//! per-stripe state a writer changes is reached through a [`StripeGuard`],
//! so it can only be changed with the right locks held.
//!
//! Readers never lock (but see the bounded fallback in `table.rs`) and never
//! write. They validate a miss against the *version* of their bucket pair,
//! which a writer bumps exactly when it clears a slot whose fingerprint stays
//! present elsewhere in the pair (a move; see the invariant in `table.rs`).
//! Versions are a dense array of `u64`, separate from the cache-padded
//! locks, so the word a lookup reads stays in L1/L2 and costs no extra miss,
//! while the locks, which writers hammer, do not false-share.
//!
//! The pair `{a, b}` has version `((a ^ b) >> 1) & version_mask`: symmetric
//! in `a` and `b`, so a reader, which knows its pair, and a writer that
//! moves or removes a copy of a fingerprint within that pair, which knows
//! both buckets, agree on the word. (The two buckets of a pair always
//! differ in parity, `a + b` being `H(f)` or `H(f) + m`, odd plus even, so
//! the low bit of `a ^ b` is always one and is dropped.) A lookup so reads
//! and re-reads one word, not two, and a move invalidates only the lookups
//! whose pairs share its word, half as many as when each bucket had its
//! own. A version word may be bumped under different stripe locks; bumps
//! are atomic read-modify-writes, so that needs nothing more. Versions are
//! 64-bit, so they cannot wrap around during a lookup, however long the
//! reader is descheduled.
//!
//! Each lock's cache line also holds its stripe's item count and move
//! counter: a writer already owns that line, so `len()` costs inserts and
//! removes no shared-counter contention.

#[cfg(not(concurrent_cuckoo_loom))]
use crate::storage::ZeroInit;
use crate::storage::{
    prefetch, prefetch_for_write, write_prefetch_supported, AllocationError, TableMemory,
    ZeroedArray,
};
use crate::sync::{AtomicI64, AtomicU64, Ordering, RawLock};
use crossbeam_utils::CachePadded;

/// Upper bound on lock stripes by default: 4096 padded locks are 512 KiB.
const MAX_STRIPES: usize = 4096;
/// About one lock stripe per this many buckets: enough stripes that writers
/// rarely collide, few enough that locks cost well under one bit per item
/// (a stripe is 128 bytes; 1024 buckets hold about 3600 items).
const BUCKETS_PER_STRIPE: usize = 1024;
/// Upper bound on versions by default: 4096 `u64` are 32 KiB, which stays
/// in L1/L2 next to the buckets a lookup misses on.
const MAX_VERSIONS: usize = 4096;
/// About one version per this many buckets: at most 8 bytes per 256
/// buckets (of 4 to 16 bytes each), under 1% of the table, yet a move
/// invalidates only the lookups of the 1/versions of the table that share
/// its version (`cuckoo-harness retries` measures the effect).
const BUCKETS_PER_VERSION: usize = 256;
/// Small tables still get this many versions (128 bytes), or one per
/// bucket if they have fewer: on a 2048-bucket, one-stripe table under a
/// 50/25/25 mix on two threads, 16 versions retry 4e-4 of lookups (64:
/// 8e-5; one version: 8e-3; a retry is one more pair of bucket loads),
/// while a level of 1,024 items, the Redis module's default, holds 2.5 KiB
/// of buckets, for which 64 versions (512 bytes) were a sixth of the
/// filter (`cuckoo-harness retries`).
const MIN_VERSIONS: usize = 16;

/// Stripes a snapshot's pass locks and copies at once (`snapshot.rs`):
/// eight share their buckets' cache lines in a table of 8-byte buckets.
/// One under loom, where the models need the pass to copy stripes at
/// different moments.
#[cfg(not(concurrent_cuckoo_loom))]
const SNAPSHOT_GROUP: usize = 8;
#[cfg(concurrent_cuckoo_loom)]
const SNAPSHOT_GROUP: usize = 1;

/// Entries of [`Stripe::path_lengths`]: paths of 0 to 5 moves.
pub(crate) const PATH_LENGTHS: usize = 6;

/// One lock and the counters of the writers that hold it. All of it fits
/// the lock's own (padded) cache line, which a writer owns anyway: the
/// counters cost writers no extra miss and no contention, and `stats()`
/// only has to sum them. Every counter is written only under `lock`.
#[derive(Default)]
pub(crate) struct Stripe {
    lock: RawLock,
    /// Stripe 0's only (unused in the others): the copier of the snapshot
    /// in progress, null between snapshots (`snapshot.rs`), and what lets
    /// one snapshot run at a time (a second waits for it to be null).
    /// Installed before the barrier that marks stripes pending, read only
    /// by a holder of a stripe lock whose copy is pending: the locks order
    /// it. Here, in the padding of a line that has room, rather than in
    /// `Stripes`, where it made a small growing filter's level 8 bytes
    /// larger.
    copier: core::sync::atomic::AtomicPtr<StripeCopier>,
    /// Items stored in this stripe's buckets.
    len: AtomicI64,
    /// Fingerprints moved out of this stripe's buckets.
    moves: AtomicU64,
    /// Successful removes whose primary bucket is in this stripe.
    removes: AtomicU64,
    /// Inserts refused with `Full`.
    full: AtomicU64,
    /// Inserts refused with `TooManyDuplicates`.
    duplicates: AtomicU64,
    /// Successful inserts whose primary bucket is in this stripe, by the
    /// length of the path that freed their slot (their sum is the insert
    /// count: one counter fewer to bump per insert).
    path_lengths: [AtomicU64; PATH_LENGTHS],
}

// SAFETY: a `Stripe` is a `RawLock` (zero: unlocked, no snapshot's copy
// pending, see its own `ZeroInit`), an `AtomicPtr` (a pointer's representation: zero is
// null, no snapshot) and atomic integers (the representation of their
// integers: zero bytes are 0), so zero bytes are `Stripe::default()`; none
// needs dropping.
#[cfg(not(concurrent_cuckoo_loom))]
unsafe impl ZeroInit for Stripe {}

// SAFETY: an atomic integer has its integer's representation, so zero
// bytes are a count of 0; it needs no dropping.
#[cfg(not(concurrent_cuckoo_loom))]
unsafe impl ZeroInit for core::sync::atomic::AtomicUsize {}

/// The writers' counters summed over every stripe.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counters {
    pub(crate) moves: u64,
    pub(crate) inserts: u64,
    pub(crate) removes: u64,
    pub(crate) full: u64,
    pub(crate) duplicates: u64,
    pub(crate) path_lengths: [u64; PATH_LENGTHS],
}

/// Adds one to a counter only ever written under the lock that guards it:
/// a plain load and store is enough and cheaper than a locked RMW.
#[inline]
fn bump(counter: &AtomicU64) {
    counter.store(counter.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
}

/// Adds `delta` to a stripe's item count, which only the holder of its
/// lock writes: a plain load and store is enough and cheaper than a
/// locked RMW.
#[inline(always)]
fn add_to_len(len: &AtomicI64, delta: i64) {
    #[cfg(not(concurrent_cuckoo_loom))]
    len.store(len.load(Ordering::Relaxed) + delta, Ordering::Relaxed);
    // Under loom the same effect as one read-modify-write, which loom
    // orders against the search's read of the counts between levels
    // (see `let_loom_interleave_writers` in `path.rs`); a load that
    // precedes the store would hide that read from its reduction.
    #[cfg(concurrent_cuckoo_loom)]
    len.fetch_add(delta, Ordering::Relaxed);
}

pub(crate) struct Stripes {
    stripes: ZeroedArray<CachePadded<Stripe>>,
    /// Threads waiting for a stripe lock right now. Written only by a
    /// thread whose first attempt found its lock taken; a batch holding
    /// every stripe polls it to let go as soon as anyone waits (see
    /// `RawTable::pipelined`). A hint for liveness: nothing depends on
    /// reading it exactly. So it is a `core` atomic even under loom: the
    /// models need not explore its orderings, and as a loom atomic it made
    /// every contended acquisition three scheduling points more.
    ///
    /// One element, in a block of its own: a line to itself, away from the
    /// fields every lookup reads, without making `Stripes` (and the table
    /// and level around it) cache-padded. Inline and padded, it made a
    /// growing filter's `Level` 640 bytes, 512 of them alignment, on top
    /// of a small level's 2.5 KiB of buckets.
    waiting: ZeroedArray<CachePadded<core::sync::atomic::AtomicUsize>>,
    versions: ZeroedArray<AtomicU64>,
    lock_mask: usize,
    version_mask: usize,
    /// Whether [`prefetch_locks`](Self::prefetch_locks) may prefetch for
    /// write (`storage::write_prefetch_supported`, asked once here).
    write_prefetch: bool,
    /// Where this table's arrays came from: the table's copies (and a
    /// growing filter's next levels) take theirs from the same place.
    memory: TableMemory,
}

/// How a snapshot in progress copies stripes (`snapshot.rs`): `copy`
/// called with `context` and a run of stripes whose locks the caller
/// holds copies those stripes' buckets into the snapshot.
pub(crate) struct StripeCopier {
    /// # Safety
    /// Called only with `context`, with the locks of every stripe of the
    /// run held and each of them still pending (copied at most once).
    pub(crate) copy: unsafe fn(context: *const (), run: core::ops::Range<usize>),
    pub(crate) context: *const (),
}

/// The version of a lookup's bucket pair as it first read it.
pub(crate) struct VersionSnapshot<'a> {
    word: &'a AtomicU64,
    seen: u64,
}

/// The version words and their mask, copied out of [`Stripes`]: a loop of
/// lookups holds this value in registers, where the same fields read
/// through `&Stripes` must be loaded again after every acquire load (the
/// compiler cannot tell that nobody writes them).
#[derive(Clone, Copy)]
pub(crate) struct VersionWords<'a> {
    words: &'a [AtomicU64],
    mask: usize,
}

impl<'a> VersionWords<'a> {
    /// [`Stripes::read_version`], from the copied fields.
    #[inline(always)]
    pub(crate) fn read(self, a: usize, b: usize) -> VersionSnapshot<'a> {
        let index = ((a ^ b) >> 1) & self.mask;
        debug_assert!(index < self.words.len());
        // SAFETY: copied from a `Stripes`, whose `version_mask` is
        // `versions.len() - 1` (a power of two), so `index <= mask < len`.
        let word = unsafe { self.words.get_unchecked(index) };
        VersionSnapshot {
            word,
            seen: word.load(Ordering::Acquire),
        }
    }
}

impl VersionSnapshot<'_> {
    /// Whether the version still reads as it did, re-read with a relaxed
    /// load: the caller issues the acquire fence that orders its bucket
    /// loads before it.
    #[inline(always)]
    pub(crate) fn unchanged(&self) -> bool {
        self.word.load(Ordering::Relaxed) == self.seen
    }
}

impl Stripes {
    /// The default lock stripe count for `buckets` buckets.
    pub(crate) fn default_count(buckets: usize) -> usize {
        (buckets / BUCKETS_PER_STRIPE)
            .next_power_of_two()
            .min(MAX_STRIPES)
    }

    /// The default version count for `buckets` buckets and `stripes` lock
    /// stripes: one per `BUCKETS_PER_VERSION` buckets, at least
    /// `MIN_VERSIONS` (or one per bucket), at most `MAX_VERSIONS`, never
    /// fewer than the stripes.
    pub(crate) fn default_versions(buckets: usize, stripes: usize) -> usize {
        (buckets / BUCKETS_PER_VERSION)
            .max(MIN_VERSIONS.min(buckets))
            .next_power_of_two()
            .min(MAX_VERSIONS)
            .max(stripes)
    }

    /// Exactly `stripes` lock stripes and `versions` versions (powers of
    /// two, `versions >= stripes`), each array one zeroed allocation made
    /// fallibly (as the table's buckets are: a host that admits the
    /// table's memory, the Redis module, admits these with it), from
    /// `memory`.
    pub(crate) fn new(
        stripes: usize,
        versions: usize,
        memory: TableMemory,
    ) -> Result<Self, AllocationError> {
        assert!(stripes.is_power_of_two() && versions.is_power_of_two());
        // No longer needed for correctness (a version word may be bumped
        // under several locks), but the sizing rule the builder checks.
        assert!(versions >= stripes, "never fewer versions than stripes");
        #[cfg(not(concurrent_cuckoo_loom))]
        let (locks, words, waiting) = (
            ZeroedArray::zeroed(stripes, memory)?,
            ZeroedArray::zeroed(versions, memory)?,
            ZeroedArray::zeroed(1, memory)?,
        );
        #[cfg(concurrent_cuckoo_loom)]
        let (locks, words, waiting) = (
            ZeroedArray::from_fn(stripes, || CachePadded::new(Stripe::default()))?,
            ZeroedArray::from_fn(versions, || AtomicU64::new(0))?,
            ZeroedArray::from_fn(1, || {
                CachePadded::new(core::sync::atomic::AtomicUsize::new(0))
            })?,
        );
        Ok(Self {
            stripes: locks,
            versions: words,
            waiting,
            lock_mask: stripes - 1,
            version_mask: versions - 1,
            write_prefetch: write_prefetch_supported(),
            memory,
        })
    }

    /// Where the table's arrays got their memory ([`Stripes::new`]).
    pub(crate) fn memory(&self) -> TableMemory {
        self.memory
    }

    /// Offers the lock stripes' and the version words' blocks to `mover`
    /// (`relocate.rs`): under `&mut` no lock is held and no lookup reads a
    /// version, so both move as bytes.
    #[cfg(not(concurrent_cuckoo_loom))]
    pub(crate) fn relocate(
        &mut self,
        mover: &mut dyn crate::relocate::Relocate,
        tally: &mut crate::relocate::Relocated,
    ) {
        self.stripes.relocate(mover, tally);
        self.versions.relocate(mover, tally);
        self.waiting.relocate(mover, tally);
    }

    /// Lock stripes.
    pub(crate) fn count(&self) -> usize {
        self.stripes.len()
    }

    /// Move versions.
    pub(crate) fn version_count(&self) -> usize {
        self.versions.len()
    }

    #[inline(always)]
    pub(crate) fn stripe_of(&self, bucket: usize) -> usize {
        bucket & self.lock_mask
    }

    /// The version word of the pair `{a, b}` (module docs).
    #[inline(always)]
    fn version_word(&self, a: usize, b: usize) -> &AtomicU64 {
        let index = ((a ^ b) >> 1) & self.version_mask;
        debug_assert!(index < self.versions.len());
        // Unchecked because every lookup comes here.
        // SAFETY: `new` sets `version_mask = versions.len() - 1` (a power of
        // two) and neither changes, so `index <= version_mask < len`.
        unsafe { self.versions.get_unchecked(index) }
    }

    /// Version of the pair `{a, b}`, loaded with acquire.
    #[cfg(test)]
    pub(crate) fn version(&self, a: usize, b: usize) -> u64 {
        self.version_word(a, b).load(Ordering::Acquire)
    }

    /// The version words and their count (a power of two), for a reader
    /// outside the crate that runs the lookup protocol itself (`view.rs`).
    #[cfg(not(concurrent_cuckoo_loom))]
    pub(crate) fn version_words(&self) -> (*const AtomicU64, usize) {
        (self.versions.as_ptr(), self.versions.len())
    }

    /// The version of the pair `{a, b}`, loaded with acquire: bucket loads
    /// that follow see every store that preceded a bump this load observed.
    /// [`VersionSnapshot::unchanged`] re-reads it.
    ///
    /// The word's address is computed here, once, before the atomic load:
    /// the compiler may not move the plain loads of the array's pointer and
    /// mask across an acquire load or fence, so indexing again for the
    /// re-read would cost them again.
    #[inline(always)]
    pub(crate) fn read_version(&self, a: usize, b: usize) -> VersionSnapshot<'_> {
        self.version_table().read(a, b)
    }

    /// The version words as a value ([`VersionWords`]), for a loop that
    /// keeps them in registers.
    #[inline(always)]
    pub(crate) fn version_table(&self) -> VersionWords<'_> {
        VersionWords {
            words: &self.versions,
            mask: self.version_mask,
        }
    }

    /// Starts fetching the lock lines of buckets `a` and `b`, so a writer's
    /// lock acquisition and its bucket misses overlap instead of queueing.
    #[inline(always)]
    pub(crate) fn prefetch_locks(&self, a: usize, b: usize) {
        let (la, lb) = (self.line(self.stripe_of(a)), self.line(self.stripe_of(b)));
        // For write where the CPU can: the lock lines are only ever
        // written, and with several writers the last write was usually
        // another core's (a read prefetch would fetch a shared copy that
        // the lock's CAS must then upgrade, a second transfer).
        if self.write_prefetch {
            prefetch_for_write(la);
            prefetch_for_write(lb);
        } else {
            prefetch(la);
            prefetch(lb);
        }
    }

    /// Starts fetching the lock line of bucket `a` alone: what a write that
    /// begins under its primary bucket's lock (`RawTable::insert`,
    /// `RawTable::remove`) takes first.
    #[inline(always)]
    pub(crate) fn prefetch_lock(&self, a: usize) {
        let line = self.line(self.stripe_of(a));
        if self.write_prefetch {
            prefetch_for_write(line);
        } else {
            prefetch(line);
        }
    }

    /// Locks the stripe of bucket `a` alone: a write that changes only that
    /// bucket (an insert into a free slot of its primary, a remove of a copy
    /// there). [`StripeGuard::widen`] adds a second stripe later.
    #[inline]
    pub(crate) fn lock_one(&self, a: usize) -> StripeGuard<'_> {
        let stripe = self.stripe_of(a);
        self.lock_stripe(stripe);
        StripeGuard {
            stripes: self,
            held: Held::Pair([stripe, stripe]),
        }
    }

    /// Locks the stripes of buckets `a` and `b` (once if they share one),
    /// lowest stripe first.
    #[inline]
    pub(crate) fn lock_pair(&self, a: usize, b: usize) -> StripeGuard<'_> {
        let (lo, hi) = self.pair_of(a, b);
        self.lock_stripe(lo);
        if hi != lo {
            self.lock_stripe(hi);
        }
        StripeGuard {
            stripes: self,
            held: Held::Pair([lo, hi]),
        }
    }

    /// Locks every stripe in ascending order: `clear`, consistent
    /// snapshots, and inserts that must search a table no writer changes.
    pub(crate) fn lock_all(&self) -> StripeGuard<'_> {
        for stripe in 0..self.stripes.len() {
            self.lock_stripe(stripe);
        }
        StripeGuard {
            stripes: self,
            held: Held::All,
        }
    }

    /// Takes the lock of `stripe`, counted in `waiting` while it waits,
    /// and copies the stripe into a snapshot in progress that has not
    /// copied it yet, before its holder can change it (`snapshot.rs`, step
    /// 2). The mark is in the lock's word: no cost when it is not set.
    #[inline]
    fn lock_stripe(&self, stripe: usize) {
        let pending = self.line(stripe).lock.lock_noting_pending(self.waiting());
        #[cfg(not(concurrent_cuckoo_canary = "snapshot_writer_skips_copy"))]
        if pending {
            self.copy_now(stripe..stripe + 1);
        }
        // The canary: a writer takes a pending stripe without copying it
        // (its release drops the mark, so the snapshot never copies it).
        #[cfg(concurrent_cuckoo_canary = "snapshot_writer_skips_copy")]
        let _ = pending;
    }

    /// The second try of a stripe lock taken out of order, whose first
    /// found it not free: it may be free with a snapshot's copy pending,
    /// which is copied now (step 2, as in `lock_stripe`), or have been
    /// freed since. Whether it is taken. Out of line: the first try is
    /// all that runs in the common case.
    #[cold]
    #[inline(never)]
    fn try_lock_slow(&self, stripe: usize) -> bool {
        match self.line(stripe).lock.try_lock_noting_pending() {
            None => false,
            Some(pending) => {
                if pending {
                    self.copy_now(stripe..stripe + 1);
                }
                true
            }
        }
    }

    /// Where the copier of a snapshot in progress is installed.
    #[inline]
    fn copier(&self) -> &core::sync::atomic::AtomicPtr<StripeCopier> {
        &self.line(0).copier
    }

    /// Copies the pending stripes `run` (all locked by the caller) into
    /// the snapshot in progress and clears their marks.
    #[cold]
    #[inline(never)]
    fn copy_now(&self, run: core::ops::Range<usize>) {
        let copier = self.copier().load(Ordering::Relaxed);
        debug_assert!(!copier.is_null(), "a stripe pending with no snapshot");
        // SAFETY: a pending stripe means a snapshot in `copy_every_stripe`
        // installed `copier` (before its barrier marked any stripe)
        // and has not yet passed this stripe, so the copier it points to
        // lives on its stack until the pass ends; the caller holds the
        // locks of `run`, every stripe of it pending (the pass checks
        // each; a writer passes its one stripe), and clearing the marks
        // below, under the same locks, makes each copy happen once.
        unsafe { ((*copier).copy)((*copier).context, run.clone()) };
        for stripe in run {
            self.line(stripe).lock.clear_pending();
        }
    }

    /// Copies every stripe through `copier` as the table was at one
    /// instant, while writers go on (`snapshot.rs`): step 1 marks every
    /// stripe pending with all locks held (a wait for writers as short as
    /// taking the locks); a writer that then takes a pending stripe copies
    /// it first (step 2, in [`lock_stripe`](Self::lock_stripe)); step 3,
    /// here, takes the locks a few stripes at a time and copies those
    /// still pending. Snapshots of one table run one at a time.
    pub(crate) fn copy_every_stripe(&self, copier: &StripeCopier) {
        let n = self.stripes.len();
        let mine = copier as *const StripeCopier as *mut StripeCopier;
        // One snapshot at a time: install ours once none is installed.
        let mut tries = 0u32;
        while self
            .copier()
            .compare_exchange(
                core::ptr::null_mut(),
                mine,
                Ordering::Acquire,
                Ordering::Relaxed,
            )
            .is_err()
        {
            #[cfg(not(concurrent_cuckoo_loom))]
            crate::sync::wait(tries);
            #[cfg(concurrent_cuckoo_loom)]
            crate::sync::spin_hint();
            tries = tries.saturating_add(1);
        }
        // Step 1. No stripe is pending yet (the previous snapshot's pass
        // copied every one before it removed its copier), so taking the
        // locks copies nothing.
        #[cfg(not(concurrent_cuckoo_canary = "snapshot_marks_outside_barrier"))]
        {
            (0..n).for_each(|s| {
                let pending = self.line(s).lock.lock_noting_pending(self.waiting());
                debug_assert!(!pending, "a stripe pending before the barrier");
            });
            (0..n)
                .rev()
                .for_each(|s| self.line(s).lock.unlock_pending());
        }
        // The canary marks each stripe under its own lock alone: a writer
        // may move a fingerprint out of a stripe not yet marked into one
        // already copied.
        #[cfg(concurrent_cuckoo_canary = "snapshot_marks_outside_barrier")]
        for s in 0..n {
            self.line(s).lock.lock_noting_pending(self.waiting());
            self.line(s).lock.unlock_pending();
        }
        // Step 3, a group of stripes at a time: the stripes of a group
        // share their buckets' cache lines (bucket `i` is in stripe
        // `i & lock_mask`), so the group's copy reads each of those lines
        // once where stripe by stripe it read each `group` times; a
        // writer waits for at most one group's copy, which reads as many
        // lines as one stripe's.
        let mut pending = [false; SNAPSHOT_GROUP];
        for first in (0..n).step_by(SNAPSHOT_GROUP) {
            let group = first..(first + SNAPSHOT_GROUP).min(n);
            for s in group.clone() {
                pending[s - first] = self.line(s).lock.lock_noting_pending(self.waiting());
            }
            let mut s = group.start;
            while s < group.end {
                if !pending[s - first] {
                    s += 1;
                    continue;
                }
                let run_start = s;
                while s < group.end && pending[s - first] {
                    s += 1;
                }
                self.copy_now(run_start..s);
            }
            group.rev().for_each(|s| self.line(s).lock.unlock());
        }
        // Nothing is pending now, so nothing reads the pointer until the
        // next snapshot installs its own (release: that snapshot's barrier
        // comes after every copy of this one).
        self.copier()
            .store(core::ptr::null_mut(), Ordering::Release);
    }

    /// The padded line of lock stripe `stripe` (every caller passes a
    /// stripe below the count; the mask makes that so whatever it
    /// passes). Unchecked: every write locks, prefetches and counts
    /// through here, and an indexed access put a bounds check and its
    /// panic path before each of them.
    #[inline(always)]
    fn line(&self, stripe: usize) -> &CachePadded<Stripe> {
        let index = stripe & self.lock_mask;
        debug_assert_eq!(index, stripe, "stripe {stripe} out of range");
        // SAFETY: `new` sets `lock_mask = stripes.len() - 1` (a power of
        // two) and neither changes (`relocate` moves the block, keeping
        // its length), so `index <= lock_mask < len`.
        unsafe { self.stripes.get_unchecked(index) }
    }

    /// The count of threads waiting for a stripe lock. Unchecked: an
    /// indexed `waiting[0]` put a bounds check (and its panic path) before
    /// every lock's first attempt, 1,023 instructions per insert and
    /// remove against 1,013 unchecked (`scripts/lookup-instructions.sh`,
    /// `insert_remove`; 1,001 with the counter inline and padded).
    #[inline(always)]
    fn waiting(&self) -> &core::sync::atomic::AtomicUsize {
        debug_assert_eq!(self.waiting.len(), 1);
        // SAFETY: `new` makes `waiting` of exactly one element, and
        // nothing replaces it (`relocate` moves its block, keeping it).
        unsafe { self.waiting.get_unchecked(0) }
    }

    /// Whether some thread is waiting for a stripe lock (a hint: it may
    /// have just got it, or start waiting just after).
    #[inline]
    pub(crate) fn has_waiters(&self) -> bool {
        self.waiting().load(Ordering::Relaxed) != 0
    }

    /// Items counted in `bucket`'s stripe (one cache line, where
    /// [`len`](Self::len) reads every stripe's). Exact when no writer of
    /// that stripe is running.
    #[inline]
    pub(crate) fn stripe_len(&self, bucket: usize) -> i64 {
        self.line(self.stripe_of(bucket))
            .len
            .load(Ordering::Relaxed)
    }

    /// Items stored, summed over stripes. Exact when no writer is running.
    pub(crate) fn len(&self) -> usize {
        let sum: i64 = self
            .stripes
            .iter()
            .map(|s| s.len.load(Ordering::Relaxed))
            .sum();
        // A sum taken while writers run may see a move's decrement without
        // its increment; never report a negative count.
        sum.max(0) as usize
    }

    /// Fingerprints moved by path execution since creation.
    pub(crate) fn moves(&self) -> u64 {
        self.stripes
            .iter()
            .map(|s| s.moves.load(Ordering::Relaxed))
            .sum()
    }

    /// Every writer counter, summed over the stripes (relaxed loads: exact
    /// when no writer runs, a recent value otherwise). Reads only the lock
    /// lines, which lookups never touch.
    pub(crate) fn counters(&self) -> Counters {
        let mut c = Counters::default();
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        for s in self.stripes.iter() {
            c.moves += load(&s.moves);
            c.removes += load(&s.removes);
            c.full += load(&s.full);
            c.duplicates += load(&s.duplicates);
            for (total, n) in c.path_lengths.iter_mut().zip(&s.path_lengths) {
                *total += load(n);
            }
        }
        c.inserts = c.path_lengths.iter().sum();
        c
    }

    /// The (lowest, highest) stripes a pair lock on buckets `a` and `b`
    /// takes: equal pairs share one guard.
    #[inline]
    pub(crate) fn pair_of(&self, a: usize, b: usize) -> (usize, usize) {
        let (sa, sb) = (self.stripe_of(a), self.stripe_of(b));
        if sa <= sb {
            (sa, sb)
        } else {
            (sb, sa)
        }
    }

    /// Bytes held by locks, versions and the waiter count.
    pub(crate) fn memory_usage(&self) -> usize {
        core::mem::size_of_val(&*self.stripes)
            + core::mem::size_of_val(&*self.versions)
            + core::mem::size_of_val(&*self.waiting)
    }
}

/// Which stripes a [`StripeGuard`] holds.
#[derive(Clone, Copy)]
enum Held {
    /// Two stripes, `[lo, hi]` (equal when the buckets share one).
    Pair([usize; 2]),
    /// A pair `[lo, hi]` and a third stripe, held by neither
    /// ([`StripeGuard::add_for_move`]).
    Three([usize; 3]),
    All,
}

/// Stripe locks held by this thread, released on drop. Every method that
/// changes per-stripe state or announces a move lives here, so it can only
/// be called with the locks of the buckets it names (checked in debug
/// builds).
pub(crate) struct StripeGuard<'a> {
    stripes: &'a Stripes,
    held: Held,
}

impl Drop for StripeGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        let unlock = |s: usize| self.stripes.line(s).lock.unlock();
        match self.held {
            Held::Pair([lo, hi]) => {
                if hi != lo {
                    unlock(hi);
                }
                unlock(lo);
            }
            Held::Three([lo, hi, third]) => {
                unlock(third);
                if hi != lo {
                    unlock(hi);
                }
                unlock(lo);
            }
            Held::All => (0..self.stripes.stripes.len()).rev().for_each(unlock),
        }
    }
}

impl StripeGuard<'_> {
    /// This guard of one stripe ([`Stripes::lock_one`]) with the stripe of
    /// `bucket` added, if that keeps the ascending order every locker
    /// follows (no deadlock): `Ok` with both held (at once if `bucket`
    /// shares the stripe held, or the guard already holds it), `Err` with
    /// the guard unchanged if `bucket`'s stripe is lower than the one
    /// held; the caller then releases it and takes the pair with
    /// [`Stripes::lock_pair`], re-reading what it read under this guard.
    #[inline]
    pub(crate) fn widen(mut self, bucket: usize) -> Result<Self, Self> {
        if self.holds(bucket) {
            return Ok(self);
        }
        let Held::Pair([lo, hi]) = self.held else {
            // Only a guard of one stripe is widened; anything else goes
            // the caller's safe way (release, lock the pair afresh).
            return Err(self);
        };
        debug_assert_eq!(lo, hi, "widen a guard of one stripe");
        let stripe = self.stripes.stripe_of(bucket);
        if stripe < lo {
            return Err(self);
        }
        self.stripes.lock_stripe(stripe);
        self.held = Held::Pair([lo, stripe]);
        Ok(self)
    }

    /// This guard of a pair with the stripe of `bucket` added, for a move
    /// into `bucket` while the pair stays held (`table/one_move.rs`): `Ok`
    /// with all three held (at once if the pair's stripes include it), or
    /// `Err` with the guard unchanged if the stripe is below the pair's
    /// highest and taken. Never waits out of order, so never deadlocks: a
    /// stripe above every one held is waited for (the ascending order
    /// every locker follows), one below is tried once.
    // Always inline: with the snapshot's second try beside it, `#[inline]`
    // left it out of line, 12 more instructions per insert and remove
    // (`scripts/lookup-instructions.sh`, `insert_remove`).
    #[inline(always)]
    pub(crate) fn add_for_move(mut self, bucket: usize) -> Result<Self, Self> {
        if self.holds(bucket) {
            return Ok(self);
        }
        let Held::Pair([lo, hi]) = self.held else {
            return Err(self);
        };
        let stripe = self.stripes.stripe_of(bucket);
        if stripe > hi {
            self.stripes.lock_stripe(stripe);
        } else if !self.stripes.line(stripe).lock.try_lock() && !self.stripes.try_lock_slow(stripe)
        {
            return Err(self);
        }
        self.held = Held::Three([lo, hi, stripe]);
        Ok(self)
    }

    /// Whether this guard holds every stripe.
    pub(crate) fn holds_all(&self) -> bool {
        matches!(self.held, Held::All)
    }

    /// Whether this guard holds the lock of `bucket`'s stripe.
    #[inline]
    pub(crate) fn holds(&self, bucket: usize) -> bool {
        let stripe = self.stripes.stripe_of(bucket);
        match self.held {
            Held::Pair(held) => held.contains(&stripe),
            Held::Three(held) => held.contains(&stripe),
            Held::All => true,
        }
    }

    #[inline]
    fn stripe(&self, bucket: usize) -> &Stripe {
        debug_assert!(
            self.holds(bucket),
            "bucket {bucket} is not under this guard"
        );
        self.stripes.line(self.stripes.stripe_of(bucket))
    }

    /// Adds `delta` to the item count of `bucket`'s stripe.
    #[inline]
    pub(crate) fn add_len(&self, bucket: usize, delta: i64) {
        add_to_len(&self.stripe(bucket).len, delta);
    }

    /// Counts an insert stored in `bucket`, its primary, with no path
    /// moved for it: [`add_len`](Self::add_len) and
    /// [`record_insert`](Self::record_insert) on the one stripe line,
    /// found once (the common insert; as two calls, each found the line
    /// again after the other's store).
    #[inline]
    pub(crate) fn record_insert_into_primary(&self, bucket: usize) {
        let stripe = self.stripe(bucket);
        add_to_len(&stripe.len, 1);
        bump(&stripe.path_lengths[0]);
    }

    /// Counts a remove of a copy from `bucket`, its primary: `add_len(bucket,
    /// -1)` and [`record_remove`](Self::record_remove) on the one stripe
    /// line, found once (the common remove).
    #[inline]
    pub(crate) fn record_remove_from_primary(&self, bucket: usize) {
        let stripe = self.stripe(bucket);
        add_to_len(&stripe.len, -1);
        bump(&stripe.removes);
    }

    /// Tells optimistic readers of the pair `{a, b}` that a fingerprint
    /// they may be relying on is about to be cleared from one of its
    /// buckets while it stays present in the pair. Must come after the
    /// other copy was stored and before the clear (see `table.rs` for the
    /// argument).
    #[inline]
    pub(crate) fn bump_version(&self, a: usize, b: usize) {
        debug_assert!(
            self.holds(a) && self.holds(b),
            "pair {{{a}, {b}}} is not under this guard"
        );
        self.stripes
            .version_word(a, b)
            .fetch_add(1, Ordering::Release);
    }

    /// [`bump_version`](Self::bump_version) for a remove that holds only
    /// the lock of `cleared`, the bucket it is about to clear a copy from,
    /// and saw another copy in `other`, the pair's other bucket, loaded
    /// with acquire (see `table/single_lock.rs`).
    #[inline]
    pub(crate) fn bump_version_clearing(&self, cleared: usize, other: usize) {
        debug_assert!(
            self.holds(cleared),
            "bucket {cleared} is not under this guard"
        );
        self.stripes
            .version_word(cleared, other)
            .fetch_add(1, Ordering::Release);
    }

    /// Counts a completed move out of `bucket`.
    #[inline]
    pub(crate) fn record_move(&self, bucket: usize) {
        bump(&self.stripe(bucket).moves);
    }

    /// Counts an insert into the pair whose primary bucket is `bucket`,
    /// whose slot was freed by a path of `path_len` moves.
    #[inline]
    pub(crate) fn record_insert(&self, bucket: usize, path_len: usize) {
        bump(&self.stripe(bucket).path_lengths[path_len.min(PATH_LENGTHS - 1)]);
    }

    /// Counts a successful remove from the pair of primary `bucket`.
    #[inline]
    pub(crate) fn record_remove(&self, bucket: usize) {
        bump(&self.stripe(bucket).removes);
    }

    /// Counts an insert refused with `Full`.
    #[inline]
    pub(crate) fn record_full(&self, bucket: usize) {
        bump(&self.stripe(bucket).full);
    }

    /// Counts an insert refused with `TooManyDuplicates`.
    #[inline]
    pub(crate) fn record_duplicate(&self, bucket: usize) {
        bump(&self.stripe(bucket).duplicates);
    }

    /// Sets every stripe's count to zero (`clear`); needs every lock.
    pub(crate) fn reset_counts(&self) {
        assert!(
            matches!(self.held, Held::All),
            "reset_counts needs every lock"
        );
        for s in self.stripes.stripes.iter() {
            s.len.store(0, Ordering::Relaxed);
        }
    }

    /// Sets stripe `s`'s count to `counts[s]`, for a table whose buckets were
    /// filled directly (decoding); needs every lock.
    #[cfg_attr(concurrent_cuckoo_loom, allow(dead_code))]
    pub(crate) fn set_counts(&self, counts: &[i64]) {
        assert!(
            matches!(self.held, Held::All),
            "set_counts needs every lock"
        );
        assert_eq!(counts.len(), self.stripes.stripes.len());
        for (s, &count) in self.stripes.stripes.iter().zip(counts) {
            s.len.store(count, Ordering::Relaxed);
        }
    }
}

#[cfg(all(test, not(concurrent_cuckoo_loom)))]
mod tests {
    use super::*;

    #[test]
    fn stripe_and_version_counts_scale_with_the_table() {
        let counts = |b| {
            let stripes = Stripes::default_count(b);
            (stripes, Stripes::default_versions(b, stripes))
        };
        assert_eq!(counts(2), (1, 2));
        assert_eq!(counts(2048), (2, 16));
        assert_eq!(counts(16_384), (16, 64));
        assert_eq!(counts(100_000), (128, 512));
        assert_eq!(counts(1 << 30), (MAX_STRIPES, MAX_VERSIONS));
        assert_eq!(
            Stripes::default_versions(8, 64),
            64,
            "never fewer than stripes"
        );
    }

    /// Locks and versions come from zeroed memory, as the buckets do:
    /// they start as built ones would (free locks, zero counts, version
    /// 0), aligned for their cache-padded type.
    #[test]
    fn zeroed_stripes_and_versions_start_as_new_ones() {
        let s = Stripes::new(8, 64, TableMemory::Mapped).unwrap();
        assert_eq!((s.count(), s.version_count()), (8, 64));
        assert_eq!(s.len(), 0);
        assert_eq!(s.counters(), Counters::default());
        assert!((0..64).all(|a| s.version(a, a ^ 1) == 0));
        let first: *const CachePadded<Stripe> = &s.stripes[0];
        assert_eq!(
            first as usize % core::mem::align_of::<CachePadded<Stripe>>(),
            0
        );
        drop(s.lock_all());
        let g = s.lock_pair(0, 7);
        g.add_len(7, 3);
        drop(g);
        assert_eq!(s.len(), 3);
        assert_eq!(
            s.memory_usage(),
            8 * core::mem::size_of::<CachePadded<Stripe>>()
                + 64 * 8
                + core::mem::size_of::<CachePadded<core::sync::atomic::AtomicUsize>>()
        );
    }

    /// Counts no allocator can give are an error, as a table's buckets
    /// are, never a panic or an abort (built element by element into a
    /// `Box`, these overflowed its capacity: a panic).
    #[test]
    fn counts_past_any_allocation_are_an_error() {
        // The largest power of two of this target's `usize` (32-bit on
        // armv7, which CI's portable step builds): its stripes or version
        // words take more bytes than `isize::MAX`.
        let huge = 1usize << (usize::BITS - 2);
        assert!(Stripes::new(huge, huge, TableMemory::Mapped).is_err());
        assert!(Stripes::new(1, huge, TableMemory::Mapped).is_err());
    }

    #[test]
    fn a_thread_waiting_for_a_stripe_is_visible_until_it_gets_the_lock() {
        let s = Stripes::new(4, 4, TableMemory::Mapped).unwrap();
        assert!(!s.has_waiters());
        let all = s.lock_all();
        assert!(!s.has_waiters(), "taking free locks is not waiting");
        std::thread::scope(|scope| {
            let waiter = scope.spawn(|| {
                let g = s.lock_pair(2, 3);
                g.add_len(2, 1);
            });
            // What a batch holding every stripe polls before each key.
            while !s.has_waiters() {
                assert!(!waiter.is_finished(), "got a lock that is held");
                std::thread::yield_now();
            }
            drop(all);
            waiter.join().unwrap();
        });
        assert!(
            !s.has_waiters(),
            "the waiter is counted out once it holds the lock"
        );
        assert_eq!(s.len(), 1);
    }

    #[test]
    fn a_pair_has_one_version_whichever_bucket_names_it_first() {
        let s = Stripes::new(2, 8, TableMemory::Mapped).unwrap();
        let g = s.lock_pair(1, 6); // both stripes; pair word (1 ^ 6) >> 1 = 3
        g.bump_version(6, 1);
        drop(g);
        assert_eq!((s.version(1, 6), s.version(6, 1)), (1, 1));
        // Another pair with the same word shares it; other pairs do not.
        assert_eq!(
            (s.version(0, 7), s.version(1, 2), s.version(17, 22)),
            (1, 0, 1)
        );
    }

    #[test]
    fn pair_locks_deduplicate_and_count() {
        let s = Stripes::new(4, 4, TableMemory::Mapped).unwrap();
        {
            let g = s.lock_pair(1, 5); // same stripe: must not self-deadlock
            g.add_len(1, 2);
            g.add_len(5, 1);
            g.bump_version(1, 5);
            g.record_move(5);
        }
        {
            let g = s.lock_pair(3, 0); // taken in ascending order
            g.add_len(3, -1);
        }
        assert_eq!(s.len(), 2);
        assert_eq!(s.version(1, 5), 1);
        assert_eq!(s.version(0, 1), 0);
        assert_eq!(s.moves(), 1);
        let all = s.lock_all();
        assert!(all.holds(2) && all.holds(3));
        all.reset_counts();
        drop(all);
        assert_eq!(s.len(), 0);
    }
}
