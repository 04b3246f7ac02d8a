//! The one place that names the synchronisation primitives the filter uses.
//!
//! Normally these are `core` atomics and `parking_lot` locks. Under the
//! crate-specific `concurrent_cuckoo_loom` cfg they are loom's instrumented
//! versions, so the loom models in `loom-tests/` explore every interleaving
//! of the *real* filter code. The cfg is crate-specific (not the bare `loom`
//! cfg) so that dependencies are not switched into loom mode as well.

#[cfg(not(concurrent_cuckoo_loom))]
pub(crate) use core::sync::atomic::{fence, AtomicI64, AtomicU32, AtomicU64, Ordering};
#[cfg(concurrent_cuckoo_loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicI64, AtomicU32, AtomicU64, Ordering};

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

/// A mutual-exclusion lock that protects no data of its own: it guards the
/// buckets of one stripe, which live elsewhere.
#[derive(Default)]
pub(crate) struct RawLock {
    #[cfg(not(concurrent_cuckoo_loom))]
    inner: parking_lot::Mutex<()>,
    #[cfg(concurrent_cuckoo_loom)]
    inner: loom::sync::Mutex<()>,
}

/// Proof that a [`RawLock`] is held; unlocks on drop.
pub(crate) struct LockGuard<'a> {
    #[cfg(not(concurrent_cuckoo_loom))]
    _inner: parking_lot::MutexGuard<'a, ()>,
    #[cfg(concurrent_cuckoo_loom)]
    _inner: loom::sync::MutexGuard<'a, ()>,
}

impl RawLock {
    #[inline]
    pub(crate) fn lock(&self) -> LockGuard<'_> {
        #[cfg(not(concurrent_cuckoo_loom))]
        let guard = self.inner.lock();
        // A loom mutex is only poisoned if a model thread panicked, and then
        // the model has already failed; unwrapping reports that failure.
        #[cfg(concurrent_cuckoo_loom)]
        let guard = self.inner.lock().unwrap();
        LockGuard { _inner: guard }
    }
}
