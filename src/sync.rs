//! The one place that names the synchronisation primitives the filter uses.
//!
//! Normally these are `core` atomics and the spin lock below. Under the
//! crate-specific `concurrent_cuckoo_loom` cfg they are loom's instrumented
//! versions, so the loom models in `loom-tests/` explore every interleaving
//! of the *real* filter code. The cfg is crate-specific (not the bare `loom`
//! cfg) so that dependencies are not switched into loom mode as well.

#[cfg(not(concurrent_cuckoo_loom))]
pub(crate) use core::sync::atomic::{
    fence, AtomicBool, AtomicI64, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};
#[cfg(concurrent_cuckoo_loom)]
pub(crate) use loom::sync::atomic::{
    fence, AtomicBool, AtomicI64, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};

/// Hint used in retry loops (an optimistic read that saw a move). Under loom
/// it yields, which tells the model checker that the thread waits for
/// another one; otherwise it is the CPU's spin-wait hint.
#[inline]
pub(crate) fn spin_hint() {
    #[cfg(concurrent_cuckoo_loom)]
    loom::thread::yield_now();
    #[cfg(not(concurrent_cuckoo_loom))]
    core::hint::spin_loop();
}

/// A stripe lock: a test-and-test-and-set spin lock that protects no data
/// of its own (it guards the buckets of one stripe, which live elsewhere).
///
/// Why not `parking_lot::Mutex`, which this crate used first: its unlock is
/// a compare-and-swap (it must check for parked waiters), so a writer paid
/// four locked read-modify-writes per insert on its two stripes, measured
/// as a third of an insert's time in cache. Here unlocking is a plain
/// release store. The critical sections are tens of nanoseconds, so a
/// waiter spins briefly, then yields, then sleeps in growing steps (up to
/// 100 µs): waiting on a long holder (a snapshot of a large filter, which
/// holds every lock while it writes) costs a few wake-ups, not a core.
///
/// A stripe lock also carries a snapshot's *pending* mark (`snapshot.rs`):
/// set by the snapshot's barrier as it releases the lock, seen by the next
/// taker, cleared by it once it has copied the stripe. In the lock's own
/// word, the mark costs a taker nothing when it is not set: the fast
/// path's compare-and-swap from "free" fails on "free, pending" and the
/// slow path takes it. Other locks never carry the mark.
///
/// Under loom it is a blocking lock built from loom's mutex and condition
/// variable, with the same acquire/release semantics: a spinning waiter
/// would make loom explore every spin (the three-thread model did not
/// finish in 20 minutes), while a blocked one is simply not scheduled.
#[cfg(not(concurrent_cuckoo_loom))]
#[derive(Default)]
pub(crate) struct RawLock {
    /// `HELD` and `PENDING` bits; 0 is free.
    state: core::sync::atomic::AtomicU8,
}

/// The lock is held.
#[cfg(not(concurrent_cuckoo_loom))]
const HELD: u8 = 1;
/// A snapshot's copy of the stripe this lock guards is pending.
#[cfg(not(concurrent_cuckoo_loom))]
const PENDING: u8 = 2;

#[cfg(not(concurrent_cuckoo_loom))]
// SAFETY: a `RawLock` is one `AtomicU8`, which has `u8`'s representation:
// zero bytes are 0, free and not pending, as `default()` makes it; nothing
// to drop.
unsafe impl crate::storage::ZeroInit for RawLock {}

#[cfg(not(concurrent_cuckoo_loom))]
impl RawLock {
    /// Takes the lock, waiting as long as needed. Pair it with
    /// [`unlock`](Self::unlock).
    #[inline]
    pub(crate) fn lock(&self) {
        if !self.try_lock() {
            self.lock_contended();
        }
    }

    /// Takes the lock if it is free (and not pending: only stripe locks
    /// are ever pending, and they are taken with the `_noting_pending`
    /// forms).
    #[inline]
    pub(crate) fn try_lock(&self) -> bool {
        self.state
            .compare_exchange(0, HELD, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    #[cold]
    #[inline(never)]
    fn lock_contended(&self) {
        let mut waited = 0u32;
        loop {
            // Wait on a plain load (the line stays shared, not bounced
            // between waiters), then try again.
            while self.state.load(Ordering::Relaxed) & HELD != 0 {
                wait(waited);
                waited = waited.saturating_add(1);
            }
            if self.try_lock() {
                return;
            }
        }
    }

    /// Takes a stripe lock, waiting as long as needed, counted in
    /// `waiting` while it waits; takes it free with a snapshot's copy
    /// pending too, and says whether it was. The fast path is
    /// [`try_lock`](Self::try_lock)'s one compare-and-swap.
    #[inline]
    pub(crate) fn lock_noting_pending(&self, waiting: &core::sync::atomic::AtomicUsize) -> bool {
        if self.try_lock() {
            false
        } else {
            self.lock_noting_pending_slow(waiting)
        }
    }

    #[cold]
    #[inline(never)]
    fn lock_noting_pending_slow(&self, waiting: &core::sync::atomic::AtomicUsize) -> bool {
        // Pending and free: not contended, take it at once.
        if let Some(pending) = self.take_if_free() {
            return pending;
        }
        waiting.fetch_add(1, Ordering::Relaxed);
        let mut waited = 0u32;
        let pending = loop {
            if let Some(pending) = self.take_if_free() {
                break pending;
            }
            wait(waited);
            waited = waited.saturating_add(1);
        };
        waiting.fetch_sub(1, Ordering::Relaxed);
        pending
    }

    /// Takes the lock if it is free, pending or not: `Some(pending)`.
    #[inline]
    fn take_if_free(&self) -> Option<bool> {
        let state = self.state.load(Ordering::Relaxed);
        if state & HELD != 0 {
            return None;
        }
        self.state
            .compare_exchange(state, state | HELD, Ordering::Acquire, Ordering::Relaxed)
            .ok()
            .map(|_| state & PENDING != 0)
    }

    /// [`try_lock`](Self::try_lock) for a stripe lock: `Some(pending)` if
    /// taken.
    #[inline]
    pub(crate) fn try_lock_noting_pending(&self) -> Option<bool> {
        if self.try_lock() {
            Some(false)
        } else {
            self.take_if_free()
        }
    }

    /// The holder's: the stripe is copied, the mark goes.
    #[inline]
    pub(crate) fn clear_pending(&self) {
        debug_assert_eq!(self.state.load(Ordering::Relaxed), HELD | PENDING);
        self.state.store(HELD, Ordering::Relaxed);
    }

    /// Releases the lock with the mark set (the snapshot's barrier).
    pub(crate) fn unlock_pending(&self) {
        debug_assert_eq!(
            self.state.load(Ordering::Relaxed),
            HELD,
            "unlock of a free lock"
        );
        self.state.store(PENDING, Ordering::Release);
    }

    /// Releases the lock. Only the holder may call it (a logic error
    /// otherwise, never undefined behaviour: the lock guards atomics),
    /// and never with the mark set: whoever took it pending copies first.
    #[inline]
    pub(crate) fn unlock(&self) {
        debug_assert_eq!(
            self.state.load(Ordering::Relaxed),
            HELD,
            "unlock of a free or pending lock"
        );
        self.state.store(0, Ordering::Release);
    }
}

/// Holds a [`RawLock`] until dropped. Locks that are not stripes (a
/// growing filter's growth and key locks) are held through one, so that a
/// panic while one is held (an internal assertion, unwinding to a caller
/// that catches it, as the C ABI does) releases it instead of leaving
/// every later call waiting forever.
#[must_use = "the lock is released as soon as the guard is dropped"]
pub(crate) struct RawLockGuard<'a> {
    lock: &'a RawLock,
}

impl RawLock {
    /// Takes the lock until the returned guard is dropped.
    #[inline]
    pub(crate) fn guard(&self) -> RawLockGuard<'_> {
        self.lock();
        RawLockGuard { lock: self }
    }

    /// [`guard`](Self::guard) if the lock is free now; `None` without
    /// waiting otherwise.
    #[inline]
    pub(crate) fn try_guard(&self) -> Option<RawLockGuard<'_>> {
        // Never `then_some`: a guard made and dropped when the lock is
        // taken would release its holder's lock.
        if self.try_lock() {
            Some(RawLockGuard { lock: self })
        } else {
            None
        }
    }
}

impl Drop for RawLockGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        self.lock.unlock();
    }
}

/// One step of waiting for a lock (or, in a growing filter, for a
/// compaction's move), the `n`-th in a row.
#[cfg(not(concurrent_cuckoo_loom))]
#[inline]
pub(crate) fn wait(n: u32) {
    match n {
        0..64 => core::hint::spin_loop(),
        64..128 => std::thread::yield_now(),
        _ => std::thread::sleep(std::time::Duration::from_micros(u64::from(
            (n - 127).min(100),
        ))),
    }
}

/// The loom form of the stripe lock: loom's mutex, whose guard is parked
/// inside the lock between `lock` and `unlock` (the filter's locks are raw:
/// `StripeGuard` releases them by stripe index). A blocked thread is simply
/// not scheduled, as a waiter on a real lock is not, where a spinning one
/// would make loom explore every spin.
#[cfg(concurrent_cuckoo_loom)]
#[derive(Default)]
pub(crate) struct RawLock {
    // Declared (so dropped) before `inner`, which its guard borrows.
    held: std::cell::UnsafeCell<Option<loom::sync::MutexGuard<'static, ()>>>,
    inner: loom::sync::Mutex<()>,
    /// Whether someone holds `inner` (see `lock_counting`).
    taken: core::sync::atomic::AtomicBool,
    /// A snapshot's copy of the stripe is pending: read and written only
    /// by the holder, so `inner` orders it (the production lock keeps it
    /// in its word, with the same rules).
    pending: core::sync::atomic::AtomicBool,
}

#[cfg(concurrent_cuckoo_loom)]
// SAFETY: `held` is touched only by the thread holding `inner` (between
// `lock` and `unlock`); the rest is loom's `Sync` mutex. Loom builds only.
unsafe impl Sync for RawLock {}

#[cfg(concurrent_cuckoo_loom)]
impl RawLock {
    pub(crate) fn lock(&self) {
        // A loom mutex is only poisoned if a model thread panicked, and
        // then the model has already failed; unwrapping reports that.
        let guard = self.inner.lock().unwrap();
        // SAFETY: the guard borrows `self.inner`, which lives as long as
        // `self`; it is stored in `self` and dropped by `unlock` (or with
        // `self`), never used past either. Only the holder reaches `held`.
        unsafe {
            let guard: loom::sync::MutexGuard<'static, ()> = core::mem::transmute(guard);
            *self.held.get() = Some(guard);
        }
        self.taken
            .store(true, core::sync::atomic::Ordering::Relaxed);
    }

    /// [`lock`](Self::lock), counting the caller in `waiting` while it
    /// waits if the lock looked taken. The look is a `core` atomic that
    /// `lock` and `unlock` keep up to date, not a loom operation: a loom
    /// `try_lock` before the `lock` made every contended acquisition one
    /// scheduling point more, which doubled the interleavings of the
    /// three-thread model. Loom switches threads only at its own
    /// operations, so the look is as fresh as the last one; `waiting` is a
    /// liveness hint either way.
    pub(crate) fn lock_counting(&self, waiting: &core::sync::atomic::AtomicUsize) {
        use core::sync::atomic::Ordering::Relaxed;
        let busy = self.taken.load(Relaxed);
        if busy {
            waiting.fetch_add(1, Relaxed);
        }
        self.lock();
        if busy {
            waiting.fetch_sub(1, Relaxed);
        }
    }

    /// Takes the lock if it is free (loom's `try_lock`).
    pub(crate) fn try_lock(&self) -> bool {
        let Ok(guard) = self.inner.try_lock() else {
            return false;
        };
        // SAFETY: as in `lock`.
        unsafe {
            let guard: loom::sync::MutexGuard<'static, ()> = core::mem::transmute(guard);
            *self.held.get() = Some(guard);
        }
        self.taken
            .store(true, core::sync::atomic::Ordering::Relaxed);
        true
    }

    /// As the production lock's.
    pub(crate) fn lock_noting_pending(&self, waiting: &core::sync::atomic::AtomicUsize) -> bool {
        self.lock_counting(waiting);
        self.pending.load(core::sync::atomic::Ordering::Relaxed)
    }

    /// As the production lock's.
    pub(crate) fn try_lock_noting_pending(&self) -> Option<bool> {
        self.try_lock()
            .then(|| self.pending.load(core::sync::atomic::Ordering::Relaxed))
    }

    /// As the production lock's.
    pub(crate) fn clear_pending(&self) {
        self.pending
            .store(false, core::sync::atomic::Ordering::Relaxed);
    }

    /// As the production lock's.
    pub(crate) fn unlock_pending(&self) {
        self.pending
            .store(true, core::sync::atomic::Ordering::Relaxed);
        self.unlock_keeping_mark();
    }

    /// As the production lock's (which clears a mark it finds; none is
    /// ever left set by a correct holder).
    pub(crate) fn unlock(&self) {
        self.pending
            .store(false, core::sync::atomic::Ordering::Relaxed);
        self.unlock_keeping_mark();
    }

    fn unlock_keeping_mark(&self) {
        // SAFETY: only the holder calls `unlock`, so no one else touches
        // `held`; dropping the guard releases `inner`.
        let guard = unsafe { (*self.held.get()).take() };
        self.taken
            .store(false, core::sync::atomic::Ordering::Relaxed);
        drop(guard.expect("unlock of a free lock"));
    }
}
