//! The module's global allocator: Redis's, so that every byte the module
//! holds, filter tables included (`concurrent_cuckoo::set_table_memory`),
//! counts in Redis's `used_memory`, which `maxmemory` acts on.

use redis_module::raw;
use std::alloc::{GlobalAlloc, Layout, System};

/// Redis's allocator once the module is loaded (`RedisModule_Init` sets
/// its entry points before the module allocates anything), the system's
/// otherwise: the crate's unit tests run without a server. Which one
/// serves a pointer never changes during its life, since the entry points
/// are set once, before the first allocation.
///
/// Unlike `redis_module::alloc::RedisAlloc`, zeroed allocations go to
/// `RedisModule_Calloc`: jemalloc hands out fresh pages of a large table
/// already zero, where zeroing by hand would touch every page of a new
/// filter at once.
pub(crate) struct ModuleAlloc;

/// The entry point `$name` of Redis's module API.
macro_rules! api {
    ($name:ident) => {{
        // SAFETY: the API's entry points are `static mut`s that Redis
        // fills in `RedisModule_Init`, before any code of the module runs,
        // and nothing writes them afterwards: reading a copy races nothing.
        unsafe { raw::$name }
    }};
}
pub(crate) use api;

/// `size` rounded up to a multiple of `align`: jemalloc's size classes for
/// multiples of a power of two are aligned to it (how `RedisAlloc` gets
/// alignment from an allocator that takes none).
fn padded(layout: Layout) -> usize {
    (layout.size() + layout.align() - 1) & !(layout.align() - 1)
}

// SAFETY: every pointer handed out is either from Redis's allocator
// (jemalloc, aligned as `padded` explains, at least `layout.size()` bytes)
// or from `System` with the caller's layout, and is freed by the same one
// (see the type's docs).
unsafe impl GlobalAlloc for ModuleAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match api!(RedisModule_Alloc) {
            Some(alloc) => {
                // SAFETY: a plain allocation of a non-zero size.
                unsafe { alloc(padded(layout)).cast() }
            }
            // SAFETY: the caller's layout contract is `System`'s.
            None => unsafe { System.alloc(layout) },
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match api!(RedisModule_Calloc) {
            Some(calloc) => {
                // SAFETY: as in `alloc`; calloc zeroes what it returns.
                unsafe { calloc(1, padded(layout)).cast() }
            }
            // SAFETY: as in `alloc`.
            None => unsafe { System.alloc_zeroed(layout) },
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match api!(RedisModule_Free) {
            // SAFETY: `ptr` came from Redis's allocator (see the type's docs).
            Some(free) => unsafe { free(ptr.cast()) },
            // SAFETY: `ptr` came from `System` with this layout.
            None => unsafe { System.dealloc(ptr, layout) },
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        match api!(RedisModule_Realloc) {
            Some(realloc) if layout.align() <= 16 => {
                // SAFETY: `ptr` came from Redis's allocator; jemalloc keeps
                // 16-byte alignment on reallocation, enough for `layout`.
                unsafe { realloc(ptr.cast(), new_size).cast() }
            }
            Some(_) => {
                // Larger alignments: a fresh, padded allocation and a copy.
                let new = Layout::from_size_align(new_size, layout.align());
                let Ok(new) = new else {
                    return core::ptr::null_mut();
                };
                // SAFETY: `new` is a valid layout of non-zero size.
                let fresh = unsafe { self.alloc(new) };
                if !fresh.is_null() {
                    // SAFETY: both blocks hold at least the smaller size and
                    // do not overlap; the old one is then freed.
                    unsafe {
                        core::ptr::copy_nonoverlapping(ptr, fresh, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                }
                fresh
            }
            // SAFETY: `ptr` came from `System` with `layout`.
            None => unsafe { System.realloc(ptr, layout, new_size) },
        }
    }
}
