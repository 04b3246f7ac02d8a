//! A global allocator that forwards to `System` and counts the bytes live,
//! for the test binaries that compare `memory_usage` with what the process
//! really holds. Each such binary installs it with
//! `#[global_allocator] static ALLOCATOR: Counting = Counting;`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Forwards to `System`, counting live bytes in [`live`].
pub struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

/// Bytes the process holds from the allocator right now.
pub fn live() -> usize {
    LIVE.load(Ordering::Relaxed)
}

// SAFETY: forwards every call to `System` unchanged, only counting bytes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's layout contract is `System`'s.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` came from `System` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}
