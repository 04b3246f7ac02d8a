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
/// Under loom it is a blocking lock built from loom's mutex and condition
/// variable, with the same acquire/release semantics: a spinning waiter
/// would make loom explore every spin (the three-thread model did not
/// finish in 20 minutes), while a blocked one is simply not scheduled.
#[cfg(not(concurrent_cuckoo_loom))]
#[derive(Default)]
pub(crate) struct RawLock {
    locked: AtomicBool,
}

#[cfg(not(concurrent_cuckoo_loom))]
// SAFETY: a `RawLock` is one `AtomicBool`, which has `bool`'s
// representation: zero bytes are `false`, unlocked, as `default()` makes
// it; nothing to drop.
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

    /// [`lock`](Self::lock), counting the caller in `waiting` while it
    /// waits if the first attempt finds the lock taken.
    #[inline]
    pub(crate) fn lock_counting(&self, waiting: &core::sync::atomic::AtomicUsize) {
        if !self.try_lock() {
            self.lock_counted(waiting);
        }
    }

    #[cold]
    #[inline(never)]
    fn lock_counted(&self, waiting: &core::sync::atomic::AtomicUsize) {
        waiting.fetch_add(1, Ordering::Relaxed);
        self.lock_contended();
        waiting.fetch_sub(1, Ordering::Relaxed);
    }

    /// Takes the lock if it is free.
    #[inline]
    pub(crate) fn try_lock(&self) -> bool {
        self.locked
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    #[cold]
    #[inline(never)]
    fn lock_contended(&self) {
        let mut waited = 0u32;
        loop {
            // Wait on a plain load (the line stays shared, not bounced
            // between waiters), then try again.
            while self.locked.load(Ordering::Relaxed) {
                wait(waited);
                waited = waited.saturating_add(1);
            }
            if self.try_lock() {
                return;
            }
        }
    }

    /// Releases the lock. Only the holder may call it (a logic error
    /// otherwise, never undefined behaviour: the lock guards atomics).
    #[inline]
    pub(crate) fn unlock(&self) {
        debug_assert!(self.locked.load(Ordering::Relaxed), "unlock of a free lock");
        self.locked.store(false, Ordering::Release);
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

    pub(crate) fn unlock(&self) {
        // SAFETY: only the holder calls `unlock`, so no one else touches
        // `held`; dropping the guard releases `inner`.
        let guard = unsafe { (*self.held.get()).take() };
        self.taken
            .store(false, core::sync::atomic::Ordering::Relaxed);
        drop(guard.expect("unlock of a free lock"));
    }
}
