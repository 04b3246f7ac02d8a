//! Active defragmentation: the type's `defrag` callback, which moves a
//! filter's memory where the server's allocator asks for it.
//!
//! A server built with its own jemalloc (Redis 6.2 and later, Valkey)
//! runs active defragmentation (`activedefrag yes`) when fragmentation
//! passes its thresholds: it walks the keyspace, and for a module value
//! calls the type's `defrag` callback, which hands each of the value's
//! blocks to `RedisModule_DefragAlloc`. That moves a block only where
//! jemalloc says moving it helps (a block of a small size class, 14 KiB
//! or less, in a sparsely used run): it copies the block whole into a new
//! one, frees the old one and returns the new address, or returns null.
//! The callback moves the filter's blocks
//! (`concurrent_cuckoo::CuckooFilter::relocate`: buckets, lock stripes,
//! version words, levels) and then the value's own block.
//!
//! The server calls it on its main thread, holding the key, where no
//! command runs: nothing else is in the filter, so `&mut` to it is sound.
//! A value being restored (`CF.LOADCHUNK` under way) is left as it is:
//! its decoder's tables are not yet a filter, and the restore is brief.
//!
//! Where the server has no `RedisModule_DefragAlloc`, nothing moves; a
//! server without active defragmentation (Debian's Redis 7.0, built with
//! the system's jemalloc, and libc-malloc builds, refuse `activedefrag
//! yes`) never calls the callback at all. Each call moves at most a few
//! blocks per level and returns done (0), so it needs no cursor: the
//! server's time limit (`RedisModule_DefragShouldStop`) is never reached
//! by one value.

use crate::api::api;
use crate::value::{Body, CfValue, Filter};
use concurrent_cuckoo::{Relocate, Relocated};
use core::alloc::Layout;
use core::ffi::{c_int, c_void};
use core::ptr::NonNull;
use core::sync::atomic::{AtomicU64, Ordering};
use redis_module::raw;

/// Values the callback was called for.
static VALUES: AtomicU64 = AtomicU64::new(0);
/// Blocks it offered to the server, and those the server moved, with their
/// bytes: the module's `INFO` section `defrag` reports them (the server's
/// own `active_defrag_hits` counts every type's blocks together).
static OFFERED: AtomicU64 = AtomicU64::new(0);
static MOVED: AtomicU64 = AtomicU64::new(0);
static MOVED_BYTES: AtomicU64 = AtomicU64::new(0);

/// The blocks of one value, offered to `RedisModule_DefragAlloc`.
struct DefragAlloc {
    ctx: *mut raw::RedisModuleDefragCtx,
    alloc: unsafe extern "C" fn(*mut raw::RedisModuleDefragCtx, *mut c_void) -> *mut c_void,
}

// SAFETY: every block the filter offers came from the global allocator,
// the module's `ModuleAlloc`; `alloc::relocated` moves it with
// `RedisModule_DefragAlloc`, which copies a block of the server's
// allocator whole into a new one of the same size class and frees the old
// one (or returns null and changes nothing), and puts the value back at
// an address aligned for `layout`, in a block `ModuleAlloc::dealloc`
// frees. Nothing here panics between the move and the return.
unsafe impl Relocate for DefragAlloc {
    fn relocate(&mut self, block: NonNull<u8>, layout: Layout) -> Option<NonNull<u8>> {
        let (ctx, alloc) = (self.ctx, self.alloc);
        // SAFETY: `block` is a live block of `ModuleAlloc` for `layout`,
        // owned by the value the server lent the callback (`Relocate`'s
        // caller contract); `ctx` is the callback's.
        unsafe { crate::alloc::relocated(block, layout, |raw| alloc(ctx, raw.cast()).cast()) }
    }
}

/// The type's `defrag` callback (`datatype.rs` registers it): moves what
/// the server's allocator asks to move, then the value's own block, and
/// stores its new address in `*value`. Always done (0).
pub(crate) unsafe extern "C" fn defrag(
    ctx: *mut raw::RedisModuleDefragCtx,
    _key: *mut raw::RedisModuleString,
    value: *mut *mut c_void,
) -> c_int {
    VALUES.fetch_add(1, Ordering::Relaxed);
    let Some(alloc) = api!(RedisModule_DefragAlloc) else {
        return 0;
    };
    let mut mover = DefragAlloc { ctx, alloc };
    let mut tally = Relocated::default();
    // SAFETY: the server passes the value's slot: a `CfValue` boxed by
    // this module, which it lends the callback on its main thread with no
    // command running, so nothing else refers into it.
    let slot = unsafe { &mut *value };
    // SAFETY: as above: `*slot` is that `CfValue`, lent exclusively.
    let cf = unsafe { &mut *slot.cast::<CfValue>() };
    if let Body::Live(filter) = &mut cf.body {
        let moved = match filter {
            Filter::Fixed(f) => f.relocate(&mut mover),
            Filter::Growing(f) => f.relocate(&mut mover),
        };
        add(&mut tally, moved);
    }
    // The value's own block last, with the filter's new addresses in it.
    // SAFETY: `*slot` is a `Box<CfValue>`'s block (`set_value`, `rdb_load`
    // and `copy` box it), a block of `ModuleAlloc` for this layout.
    let own = unsafe {
        mover.relocate(
            NonNull::new_unchecked(slot.cast::<u8>()),
            Layout::new::<CfValue>(),
        )
    };
    tally.offered += 1;
    if let Some(new) = own {
        // The server keeps using whatever `*value` holds when this returns.
        *slot = new.as_ptr().cast();
        tally.moved += 1;
        tally.moved_bytes += core::mem::size_of::<CfValue>();
    }
    OFFERED.fetch_add(tally.offered as u64, Ordering::Relaxed);
    MOVED.fetch_add(tally.moved as u64, Ordering::Relaxed);
    MOVED_BYTES.fetch_add(tally.moved_bytes as u64, Ordering::Relaxed);
    0
}

/// `tally += more`.
fn add(tally: &mut Relocated, more: Relocated) {
    tally.offered += more.offered;
    tally.moved += more.moved;
    tally.moved_bytes += more.moved_bytes;
}

/// The module's `INFO` section `defrag`: `cuckoo_defrag_values` (calls
/// of the callback), `cuckoo_defrag_offered` and `cuckoo_defrag_moved`
/// (blocks), `cuckoo_defrag_moved_bytes`.
pub(crate) fn info_section(ctx: *mut raw::RedisModuleInfoCtx) {
    let load = |a: &AtomicU64| i64::try_from(a.load(Ordering::Relaxed)).unwrap_or(i64::MAX);
    raw::add_info_section(ctx, Some("defrag"));
    for (name, value) in [
        ("defrag_values", load(&VALUES)),
        ("defrag_offered", load(&OFFERED)),
        ("defrag_moved", load(&MOVED)),
        ("defrag_moved_bytes", load(&MOVED_BYTES)),
    ] {
        raw::add_info_field_long_long(ctx, name, value);
    }
}
