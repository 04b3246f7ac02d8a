//! The module's global allocator: Redis's, so that every byte the module
//! holds, filter tables included ([`TABLES`]), counts in Redis's
//! `used_memory`, which `maxmemory` acts on.

use crate::api::api;
use concurrent_cuckoo::{ChunkDecoder, TableMemory};
use core::ptr::NonNull;
use std::alloc::{GlobalAlloc, Layout, System};

/// Where every filter the module builds, decodes or copies gets its
/// tables: from the global allocator, whatever their size, never a mapping
/// of their own, so Redis counts them. Each builder and decoder is told
/// (the library's option is per filter; copies and grown levels follow
/// their filter's).
pub(crate) const TABLES: TableMemory = TableMemory::GlobalAllocator;

/// A decoder whose filter takes its tables from [`TABLES`].
pub(crate) fn decoder() -> ChunkDecoder {
    ChunkDecoder::new().table_memory(TABLES)
}

/// Redis's allocator once the module is loaded (`RedisModule_Init` sets
/// its entry points before the module allocates anything), the system's
/// otherwise: the crate's tests run without a server. Which one serves a
/// pointer never changes during its life, since the entry points are set
/// once, before the first allocation.
///
/// Redis's allocator takes no alignment and promises only 8 bytes: with
/// jemalloc its blocks of 16 bytes or more are 16-aligned, but a server
/// built with libc malloc (zmalloc's size header in front of each block,
/// as on musl) hands out blocks 8 bytes past a 16-byte boundary. So every
/// layout aligned to more than 8 (the library's cache-padded locks want
/// 128, its tables 64) is aligned by hand: the block is allocated `align`
/// bytes longer, the pointer handed out is the first aligned address at
/// least 8 bytes in, and the allocator's own pointer is kept in the 8
/// bytes before it, for `dealloc`. (`redis_module::alloc::RedisAlloc`
/// rounds sizes instead and relies on jemalloc's size classes, which do
/// not align every class: a 128-byte request came back 64-aligned.)
///
/// Table blocks (zeroed, aligned to [`TABLE_ALIGN`] or more: a table's
/// buckets, its lock stripes and its version words, the only allocations
/// the library makes fallibly) are admitted first (`admission.rs`) and
/// allocated with `RedisModule_TryCalloc` (Redis 7.2, Valkey), or on
/// Redis 7.0 with `RedisModule_TryAlloc` and zeroed by hand (blocks of 64
/// MiB or more only where the host has the memory available, and then
/// with `Calloc` where the kernel grants every such mapping: see
/// [`host_can_give`]): a refused or failed table is a null the library
/// turns into an error, never an abort of the server. Other zeroed allocations go to `RedisModule_Calloc`:
/// jemalloc hands out fresh pages already zero.
pub(crate) struct ModuleAlloc;

/// The alignment every block of Redis's allocator has, whichever
/// allocator the server was built with.
const REDIS_ALIGN: usize = 8;

/// The alignment of the library's tables (its cache line): a zeroed block
/// of this alignment or more is part of a table, its buckets, its lock
/// stripes (cache-padded: 128 on x86-64) or its version words (see the
/// type's docs).
pub(crate) const TABLE_ALIGN: usize = 64;

/// Whether a block from Redis's allocator, as it is, satisfies `layout`.
fn served_as_is(layout: Layout) -> bool {
    layout.align() <= REDIS_ALIGN
}

/// A zeroed table block of `bytes` bytes from Redis's allocator, or null
/// where it cannot be had: never an abort.
fn try_calloc(bytes: usize) -> *mut u8 {
    if let Some(try_calloc) = api!(RedisModule_TryCalloc) {
        // SAFETY: a plain zeroed allocation of a non-zero size.
        return unsafe { try_calloc(1, bytes) }.cast();
    }
    if let Some(try_alloc) = api!(RedisModule_TryAlloc) {
        // Redis 7.0. A large block the host cannot give is refused (it
        // would be granted lazily, then killed for by the kernel as it is
        // zeroed); one it can give comes zeroed lazily from `Calloc` where
        // the kernel's overcommit policy cannot refuse the mapping (so
        // `Calloc`, which aborts on failure, does not fail), rather than
        // written whole on the main thread.
        if bytes >= CHECKED_ZEROING {
            if !host_can_give(bytes) {
                return core::ptr::null_mut();
            }
            if let (Some(calloc), true) = (api!(RedisModule_Calloc), mappings_granted()) {
                // SAFETY: a plain zeroed allocation of a non-zero size.
                return unsafe { calloc(1, bytes) }.cast();
            }
        }
        // SAFETY: a plain allocation of a non-zero size.
        let block: *mut u8 = unsafe { try_alloc(bytes) }.cast();
        if !block.is_null() {
            // SAFETY: the block holds `bytes` writable bytes.
            unsafe { block.write_bytes(0, bytes) };
        }
        return block;
    }
    match api!(RedisModule_Calloc) {
        // SAFETY: as above (a server without `TryAlloc`: before 7.0).
        Some(calloc) => unsafe { calloc(1, bytes) }.cast(),
        None => core::ptr::null_mut(),
    }
}

/// Blocks from this size on are taken on Redis 7.0 only where the host has
/// the memory ([`host_can_give`]).
const CHECKED_ZEROING: usize = 64 << 20;

/// Whether the host has `bytes` more bytes of memory available
/// (`MemAvailable`). On Redis 7.0 (no `RedisModule_TryCalloc`) a table
/// block is allocated with `TryAlloc`, which the kernel grants lazily
/// whatever the host holds, and zeroed by hand: a block the host cannot
/// back had the kernel kill the server part way through the zeroing
/// (issue 50, item 9: `CF.RESERVE x 15000000000 EXPANSION 0` under a
/// raised `cuckoo.cf-max-memory-usage` on a 23.5 GiB host); it is now
/// refused as any table over the limits is. Where `/proc/meminfo` cannot
/// be read (not Linux), nothing is refused.
fn host_can_give(bytes: usize) -> bool {
    available_memory().is_none_or(|free| bytes as u64 <= free)
}

/// Whether the kernel grants any mapping the host's memory covers
/// (`vm.overcommit_memory` 0, heuristic, or 1, always): then `Calloc` of a
/// block [`host_can_give`] cannot fail. Not under strict accounting (2),
/// nor where the policy cannot be read.
fn mappings_granted() -> bool {
    std::fs::read_to_string("/proc/sys/vm/overcommit_memory")
        .is_ok_and(|policy| matches!(policy.trim(), "0" | "1"))
}

/// `MemAvailable` of `/proc/meminfo`, in bytes.
fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Aligns a block `raw` of `layout.size() + layout.align()` bytes from
/// Redis's allocator for `layout`, keeping `raw` just before the result.
///
/// # Safety
/// `raw` is null or such a block.
unsafe fn align_in(raw: *mut u8, layout: Layout) -> *mut u8 {
    if raw.is_null() {
        return raw;
    }
    // At least 8 bytes in (room for `raw`), and a multiple of the
    // alignment: between 8 and `align` bytes in, since `raw` is 8-aligned
    // and `align` a power of two of at least 16, so `raw % align` is a
    // multiple of 8 below `align`.
    let offset = layout.align() - (raw as usize % layout.align());
    debug_assert!(offset >= 8 && offset <= layout.align());
    // SAFETY: `offset <= align`, so the aligned block of `size` bytes and
    // the 8 bytes before it lie inside the `size + align` bytes allocated.
    unsafe {
        let aligned = raw.add(offset);
        aligned.cast::<*mut u8>().sub(1).write_unaligned(raw);
        aligned
    }
}

/// Moves the block `ptr` that [`ModuleAlloc`] handed out for `layout` with
/// `move_raw`, a mover of Redis's allocator's blocks in the manner of
/// `RedisModule_DefragAlloc`: given a block, it copies all of it (its
/// whole usable size) into a new block of the same size class, frees the
/// old one and returns the new one, or returns null and changes nothing.
/// The block for `layout`'s caller, at its new address, or `None` where it
/// did not move (and blocks of `System`, without a server, never do).
///
/// A hand-aligned block's value sits `ptr - raw` bytes into the block
/// `raw` that Redis's allocator gave: the copy keeps it at that offset,
/// which in the new block may not be aligned (jemalloc's small size
/// classes do not all share one alignment), so it is moved down or up to
/// the new block's first aligned place and the new `raw` kept before it,
/// as `align_in` does.
///
/// # Safety
/// `ptr` is a live block of this allocator for `layout`, owned by the
/// caller, that nothing refers into; `move_raw` behaves as said.
pub(crate) unsafe fn relocated(
    ptr: NonNull<u8>,
    layout: Layout,
    move_raw: impl FnOnce(*mut u8) -> *mut u8,
) -> Option<NonNull<u8>> {
    api!(RedisModule_Alloc)?; // `System`'s blocks: not the server's to move.
                              // SAFETY: the caller's contract, passed on.
    unsafe { moved_block(ptr, layout, move_raw) }
}

/// [`relocated`] of a block of Redis's allocator.
///
/// # Safety
/// As [`relocated`].
unsafe fn moved_block(
    ptr: NonNull<u8>,
    layout: Layout,
    move_raw: impl FnOnce(*mut u8) -> *mut u8,
) -> Option<NonNull<u8>> {
    if served_as_is(layout) {
        return NonNull::new(move_raw(ptr.as_ptr()));
    }
    // SAFETY: `align_in` kept the allocator's pointer in the 8 bytes
    // before a hand-aligned block.
    let raw = unsafe { ptr.as_ptr().cast::<*mut u8>().sub(1).read_unaligned() };
    let offset = ptr.as_ptr() as usize - raw as usize;
    let new_raw = NonNull::new(move_raw(raw))?.as_ptr();
    let new_offset = layout.align() - (new_raw as usize % layout.align());
    // SAFETY: the new block holds at least the `size + align` bytes the
    // old one was allocated with, all copied; both offsets are between 8
    // and `align` (`align_in`), so the value's old and new places and the
    // 8 bytes before the new place lie inside it. `copy` allows overlap.
    unsafe {
        if new_offset != offset {
            core::ptr::copy(new_raw.add(offset), new_raw.add(new_offset), layout.size());
        }
        let aligned = new_raw.add(new_offset);
        aligned.cast::<*mut u8>().sub(1).write_unaligned(new_raw);
        NonNull::new(aligned)
    }
}

// SAFETY: every pointer handed out is either from Redis's allocator
// (8-aligned, or aligned by hand as the type's docs explain, with at
// least `layout.size()` usable bytes) or from `System` with the caller's
// layout, and is freed by the same one (see the type's docs).
unsafe impl GlobalAlloc for ModuleAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let block = unsafe { self.alloc_uncounted(layout) };
        if !block.is_null() {
            // SAFETY: `block` was just handed out for `layout`.
            unsafe { counted(block, layout, 1) };
        }
        block
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let block = unsafe { self.alloc_zeroed_uncounted(layout) };
        if !block.is_null() {
            // SAFETY: as in `alloc`.
            unsafe { counted(block, layout, 1) };
        }
        block
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` is a live block of `layout` (the caller's contract).
        unsafe { counted(ptr, layout, -1) };
        match api!(RedisModule_Free) {
            // SAFETY: `ptr` came from Redis's allocator as it is.
            Some(free) if served_as_is(layout) => unsafe { free(ptr.cast()) },
            // SAFETY: `ptr` was aligned by `align_in`, which kept the
            // allocator's pointer in the 8 bytes before it.
            Some(free) => unsafe { free(ptr.cast::<*mut u8>().sub(1).read_unaligned().cast()) },
            // SAFETY: `ptr` came from `System` with this layout.
            None => unsafe { System.dealloc(ptr, layout) },
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let Ok(new) = Layout::from_size_align(new_size, layout.align()) else {
            return core::ptr::null_mut();
        };
        match api!(RedisModule_Realloc) {
            Some(realloc) if served_as_is(layout) && served_as_is(new) => {
                // SAFETY: `ptr` came from Redis's allocator as it is, and
                // the new block, of the new size, is aligned enough as it
                // is (`served_as_is`).
                let scoped = crate::admission::scoped();
                let old = match scoped {
                    // SAFETY: `ptr` is still a live block of `layout`.
                    true => unsafe { block_size(ptr, layout) },
                    false => 0,
                };
                // SAFETY: as above.
                let block: *mut u8 = unsafe { realloc(ptr.cast(), new_size).cast() };
                if scoped && !block.is_null() {
                    // SAFETY: `block` was just handed out for `new`.
                    let grown = unsafe { block_size(block, new) } as isize - old as isize;
                    crate::admission::allocated(grown);
                }
                block
            }
            Some(_) => {
                // Hand-aligned blocks, old or new: a fresh block and a copy
                // (each counted by `alloc` and `dealloc`).
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

/// Records a block handed out (`sign` 1) or about to be taken back (-1)
/// in the admission scope in force, if any (`admission::allocated`): the
/// bytes the server's allocator counts for it in `used_memory` (its size
/// class, the alignment added by hand included), so that what a scope
/// measures is what the server's memory grew by.
///
/// # Safety
/// `ptr` is a live block of `layout` from this allocator.
unsafe fn counted(ptr: *mut u8, layout: Layout, sign: isize) {
    if crate::admission::scoped() {
        // SAFETY: the caller's contract.
        let bytes = unsafe { block_size(ptr, layout) };
        crate::admission::allocated(sign * isize::try_from(bytes).unwrap_or(isize::MAX));
    }
}

/// The bytes the server's allocator holds for the buffer of `v` (its size
/// class, and the alignment added by hand for a type aligned to more than
/// 8), which is what `used_memory` counts for it: for `MEMORY USAGE` of a
/// large buffer of a type so aligned (a dump state's hash state is
/// cache-line aligned, and a `Vec` of 128 of them fell a size class short
/// of what the server held).
pub(crate) fn vec_bytes<T>(v: &Vec<T>) -> usize {
    let Ok(layout) = Layout::array::<T>(v.capacity()) else {
        return 0;
    };
    if layout.size() == 0 {
        return 0;
    }
    // SAFETY: a `Vec` of non-zero capacity and element size holds a live
    // block of exactly this layout from the global allocator, which in the
    // module is `ModuleAlloc`.
    unsafe { block_size(v.as_ptr().cast_mut().cast(), layout) }
}

/// The bytes the server's allocator holds for the block `ptr` of `layout`.
///
/// # Safety
/// As [`counted`].
unsafe fn block_size(ptr: *mut u8, layout: Layout) -> usize {
    let hand_aligned = !served_as_is(layout);
    match api!(RedisModule_MallocSize) {
        Some(size) if api!(RedisModule_Alloc).is_some() => {
            let raw = if hand_aligned {
                // SAFETY: `align_in` kept the allocator's pointer in the 8
                // bytes before a hand-aligned block.
                unsafe { ptr.cast::<*mut u8>().sub(1).read_unaligned() }
            } else {
                ptr
            };
            // SAFETY: `raw` is a live block of the server's allocator.
            unsafe { size(raw.cast()) }
        }
        _ if hand_aligned => layout.size().saturating_add(layout.align()),
        _ => layout.size(),
    }
}

impl ModuleAlloc {
    /// `alloc`, before it is counted.
    ///
    /// # Safety
    /// `GlobalAlloc::alloc`'s contract.
    unsafe fn alloc_uncounted(&self, layout: Layout) -> *mut u8 {
        match api!(RedisModule_Alloc) {
            // SAFETY: a plain allocation of a non-zero size.
            Some(alloc) if served_as_is(layout) => unsafe { alloc(layout.size()).cast() },
            // SAFETY: as above; `align_in` gets the longer block it needs.
            Some(alloc) => unsafe {
                align_in(alloc(layout.size() + layout.align()).cast(), layout)
            },
            // SAFETY: the caller's layout contract is `System`'s.
            None => unsafe { System.alloc(layout) },
        }
    }

    /// `alloc_zeroed`, before it is counted.
    ///
    /// # Safety
    /// `GlobalAlloc::alloc_zeroed`'s contract.
    unsafe fn alloc_zeroed_uncounted(&self, layout: Layout) -> *mut u8 {
        if layout.align() >= TABLE_ALIGN && api!(RedisModule_Calloc).is_some() {
            let Some(bytes) = layout.size().checked_add(layout.align()) else {
                return core::ptr::null_mut();
            };
            if !crate::admission::admit(bytes) {
                return core::ptr::null_mut();
            }
            let block = try_calloc(bytes);
            if block.is_null() {
                crate::admission::allocation_failed(bytes);
            }
            // SAFETY: `block` is null or `size + align` bytes from Redis's
            // allocator, freed by `dealloc` (not `served_as_is`).
            return unsafe { align_in(block, layout) };
        }
        match api!(RedisModule_Calloc) {
            // SAFETY: as in `alloc`; calloc zeroes what it returns.
            Some(calloc) if served_as_is(layout) => unsafe { calloc(1, layout.size()).cast() },
            // SAFETY: as in `alloc`.
            Some(calloc) => unsafe {
                align_in(calloc(1, layout.size() + layout.align()).cast(), layout)
            },
            // SAFETY: as in `alloc`.
            None => unsafe { System.alloc_zeroed(layout) },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hand alignment, on blocks from the system allocator standing in
    /// for Redis's (8-aligned, at every offset an 8-aligned allocator may
    /// return), for the layouts that need it.
    #[test]
    fn hand_aligned_blocks_are_aligned_and_keep_their_origin() {
        for (size, align) in [
            (100usize, 32usize),
            (100, 64),
            (100, 128),
            (100, 4096),
            (8, 16),
        ] {
            let layout = Layout::from_size_align(size, align).unwrap();
            assert!(!served_as_is(layout), "{layout:?}");
            let backing = vec![0u64; (size + align + 2 * align) / 8];
            for shift in (0..align).step_by(8) {
                let raw = (backing.as_ptr() as *mut u8).wrapping_add(shift);
                // SAFETY: `raw` has `size + align` bytes of `backing` after it.
                let aligned = unsafe { align_in(raw, layout) };
                assert_eq!(aligned as usize % align, 0);
                assert!(aligned as usize >= raw as usize + 8);
                assert!(aligned as usize + size <= raw as usize + size + align);
                // SAFETY: written by `align_in`.
                let kept = unsafe { aligned.cast::<*mut u8>().sub(1).read_unaligned() };
                assert_eq!(kept, raw);
            }
        }
    }

    /// A hand-aligned block moved by a mover that copies the whole block
    /// to another address (as `RedisModule_DefragAlloc` does) comes back
    /// aligned, holding the same value, with its origin kept before it,
    /// whatever the old and the new block's offsets from the alignment:
    /// the value is moved to the new block's aligned place when they
    /// differ.
    #[test]
    fn a_moved_hand_aligned_block_is_realigned_with_its_value() {
        for (size, align) in [(100usize, 64usize), (24, 16), (1000, 128)] {
            let layout = Layout::from_size_align(size, align).unwrap();
            let words = (size + 3 * align) / 8;
            for old_shift in (0..align).step_by(8) {
                for new_shift in (0..align).step_by(8) {
                    let mut old = vec![0u64; words];
                    let mut new = vec![0u64; words];
                    let raw = (old.as_mut_ptr() as *mut u8).wrapping_add(old_shift);
                    // SAFETY: `raw` has `size + align` bytes of `old` after it.
                    let ptr = unsafe { align_in(raw, layout) };
                    let value: Vec<u8> = (0..size).map(|i| (i * 7 + 1) as u8).collect();
                    // SAFETY: `ptr` has `size` bytes of `old` after it.
                    unsafe { ptr.copy_from_nonoverlapping(value.as_ptr(), size) };
                    let target = (new.as_mut_ptr() as *mut u8).wrapping_add(new_shift);
                    let mover = |from: *mut u8| {
                        assert_eq!(from, raw, "the allocator's own block is moved");
                        // SAFETY: both hold `size + align` bytes from there.
                        unsafe { target.copy_from_nonoverlapping(from, size + align) };
                        target
                    };
                    // SAFETY: `ptr` is a hand-aligned block of `layout`.
                    let moved = unsafe { moved_block(NonNull::new(ptr).unwrap(), layout, mover) }
                        .unwrap()
                        .as_ptr();
                    assert_eq!(moved as usize % align, 0);
                    assert!(moved as usize >= target as usize + 8);
                    assert!(moved as usize + size <= target as usize + size + align);
                    // SAFETY: `moved` has `size` bytes of `new` after it,
                    // and its origin before it.
                    unsafe {
                        assert_eq!(core::slice::from_raw_parts(moved, size), &value[..]);
                        assert_eq!(moved.cast::<*mut u8>().sub(1).read_unaligned(), target);
                    }
                    drop(old);
                }
            }
        }
    }

    /// A mover that leaves the block (null) leaves it, and a block served
    /// as it is goes to the mover as it is.
    #[test]
    fn a_block_not_moved_stays_and_a_plain_one_moves_as_it_is() {
        let layout = Layout::from_size_align(64, 8).unwrap();
        let mut backing = [0u64; 8];
        let ptr = NonNull::new(backing.as_mut_ptr().cast::<u8>()).unwrap();
        // SAFETY: a stand-in block of `layout`; the movers touch nothing.
        unsafe {
            assert_eq!(moved_block(ptr, layout, |_| core::ptr::null_mut()), None);
            let elsewhere = 0x1000 as *mut u8;
            let moved = moved_block(ptr, layout, |p| {
                assert_eq!(p, ptr.as_ptr());
                elsewhere
            });
            assert_eq!(moved.map(NonNull::as_ptr), Some(elsewhere));
        }
    }

    /// A block larger than the host's available memory is refused.
    #[test]
    fn blocks_beyond_the_hosts_memory_are_refused() {
        if let Some(free) = available_memory() {
            assert!(free > 0 && host_can_give(1 << 20));
            assert!(!host_can_give(
                usize::try_from(free)
                    .unwrap_or(usize::MAX)
                    .saturating_add(1)
            ));
        }
    }

    /// Only 8 bytes of alignment are taken from the server's allocator
    /// (libc malloc behind zmalloc's size header gives no more): every
    /// larger alignment, at any size, is made by hand.
    #[test]
    fn redis_blocks_serve_alignments_up_to_8_only() {
        let layout = |size, align| Layout::from_size_align(size, align).unwrap();
        assert!(served_as_is(layout(1, 1)) && served_as_is(layout(8, 8)));
        assert!(served_as_is(layout(4096, 8)));
        assert!(!served_as_is(layout(16, 16)) && !served_as_is(layout(48, 16)));
        assert!(!served_as_is(layout(8, 16)) && !served_as_is(layout(64, 32)));
    }
}
