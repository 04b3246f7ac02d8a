//! Where tables get their memory: `ccf_set_table_allocator`, a host's
//! allocator (a dataplane's `rte_malloc_socket` on its NUMA socket, huge
//! pages it reserved) for the tables of every filter made or loaded
//! afterwards (the library's `TableMemory::Allocator`).

use concurrent_cuckoo::{TableAllocator, TableHost, TableMemory};
use core::alloc::Layout;
use core::ffi::c_void;
use std::sync::Mutex;

use crate::status::ccf_status::{self, *};

/// A host's allocator for filter tables: see `ccf_set_table_allocator`.
#[repr(C)]
pub struct ccf_allocator {
    /// Returns a block of `size` bytes aligned to `align` (a power of two
    /// from 64 to 4096), or NULL to refuse it (the filter's creation then
    /// fails with `CCF_ALLOCATION_FAILED`). The block need not be zeroed:
    /// the library zeroes it. Called from the thread that makes the filter.
    pub alloc:
        Option<unsafe extern "C" fn(ctx: *mut c_void, size: usize, align: usize) -> *mut c_void>,
    /// Gives back a block `alloc` returned, with its size. Called from the
    /// thread that frees the filter.
    pub free: Option<unsafe extern "C" fn(ctx: *mut c_void, block: *mut c_void, size: usize)>,
    /// Passed to both, unchanged.
    pub ctx: *mut c_void,
}

// SAFETY: `ccf_set_table_allocator`'s contract: both functions may be
// called from any thread with `ctx`; the struct is only read.
unsafe impl Sync for ccf_allocator {}

// SAFETY: a block comes from the host's `alloc` for the layout's size,
// checked for the layout's alignment (refused, and given back, if not)
// and zeroed here before use; it goes back to `free` with the same size,
// once (the library's contract for `deallocate`).
unsafe impl TableAllocator for ccf_allocator {
    fn allocate_zeroed(&self, layout: Layout) -> *mut u8 {
        let (Some(alloc), Some(free)) = (self.alloc, self.free) else {
            return core::ptr::null_mut();
        };
        // SAFETY: the host's function, with the arguments its contract
        // names.
        let block = unsafe { alloc(self.ctx, layout.size(), layout.align()) }.cast::<u8>();
        if block.is_null() {
            return block;
        }
        if !(block as usize).is_multiple_of(layout.align()) {
            // SAFETY: the block `alloc` just gave, back once.
            unsafe { free(self.ctx, block.cast(), layout.size()) };
            return core::ptr::null_mut();
        }
        // SAFETY: `alloc` gave `layout.size()` writable bytes at `block`,
        // which nothing else uses yet.
        unsafe { core::ptr::write_bytes(block, 0, layout.size()) };
        block
    }

    unsafe fn deallocate(&self, block: *mut u8, layout: Layout) {
        if let Some(free) = self.free {
            // SAFETY: a block `alloc` gave for `layout.size()` bytes, given
            // back once (the caller's contract).
            unsafe { free(self.ctx, block.cast(), layout.size()) };
        }
    }
}

/// The allocator in force (`None`: the library's default), and the
/// library's name for each allocator ever set: one `TableHost` each, kept
/// for the life of the process (a few bytes per allocator a program sets,
/// which a filter made with it may outlive any later setting).
struct Hosts {
    current: Option<&'static TableHost>,
    known: Vec<(usize, &'static TableHost)>,
}

static HOSTS: Mutex<Hosts> = Mutex::new(Hosts {
    current: None,
    known: Vec::new(),
});

fn hosts() -> std::sync::MutexGuard<'static, Hosts> {
    // Nothing panics while it is held: a poisoned lock's data is whole.
    HOSTS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Makes `allocator` the source of the tables of every filter made or
/// loaded from now on (`ccf_new*`, `ccf_load`, `ccf_scalable_*`,
/// `ccf_windowed_*`, `ccf_timed_*`; a growing filter's later levels too),
/// or, for NULL, the library's default again (tables of 4 MiB and more
/// mapped on their own with 2 MiB pages advised, smaller ones from
/// `malloc`). Each filter keeps the allocator it was made with until it
/// is freed, whatever is set later; each of its tables is a few blocks
/// (lock stripes, version words, shared state, buckets), asked for when
/// it is made and given back when it is freed. Saved filters queried in
/// place (`ccf_frozen_*`) are not tables: they are unaffected.
///
/// For a DPDK dataplane: an `alloc` calling `rte_malloc_socket(NULL, size,
/// align, rte_socket_id())` places each filter's table on the NUMA socket
/// of the lcore that makes it (`ffi/examples/dpdk/dataplane.c`).
///
/// Returns `CCF_OK`, or `CCF_INVALID_ARGUMENT` (nothing changed) for an
/// allocator without `alloc` or `free`.
///
/// # Safety
/// `allocator` is NULL or points to a `ccf_allocator` that stays valid and
/// unchanged until every filter made while it was in force has been
/// freed; its functions may be called from any thread, concurrently.
#[no_mangle]
pub unsafe extern "C" fn ccf_set_table_allocator(allocator: *const ccf_allocator) -> ccf_status {
    if allocator.is_null() {
        hosts().current = None;
        return CCF_OK;
    }
    // SAFETY: the caller's contract keeps the allocator valid and
    // unchanged until every filter made while it is in force has been
    // freed: for as long as the library uses the reference.
    let a: &'static ccf_allocator = unsafe { &*allocator };
    if a.alloc.is_none() || a.free.is_none() {
        return CCF_INVALID_ARGUMENT;
    }
    let mut hosts = hosts();
    let key = allocator as usize;
    let host = match hosts.known.iter().find(|(k, _)| *k == key) {
        Some(&(_, host)) => host,
        None => {
            let host: &'static TableHost = Box::leak(Box::new(TableHost::new(a)));
            hosts.known.push((key, host));
            host
        }
    };
    hosts.current = Some(host);
    CCF_OK
}

/// Options for loading a file of `len` bytes (a header claiming more is
/// refused before anything is allocated) into tables from
/// [`table_memory`].
pub(crate) fn read_options(len: u64) -> concurrent_cuckoo::ReadOptions {
    concurrent_cuckoo::ReadOptions::new()
        .limit(len)
        .table_memory(table_memory())
}

/// Where the tables of a filter made now get their memory.
pub(crate) fn table_memory() -> TableMemory {
    match hosts().current {
        Some(host) => TableMemory::Allocator(host),
        None => TableMemory::Mapped,
    }
}
