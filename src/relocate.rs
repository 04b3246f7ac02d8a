//! Moving a filter's memory to new addresses, under `&mut`: what a host's
//! active defragmentation needs. A Redis module's `defrag` callback, for
//! one, hands each block a value owns to `RedisModule_DefragAlloc`, which
//! may copy it into a less fragmented place, free the old block and
//! return the new one; the value must then use the new address.
//!
//! Why `&mut` makes it safe: every reader and writer reaches a filter's
//! tables, locks and levels through `&self`, so while the owner holds
//! `&mut` no thread is in them, no lock is held, and no reference into
//! them is alive; the blocks' bytes (atomics, locks that nobody holds,
//! pointers to other blocks of the filter) mean the same at any address.
//! A filter never publishes its blocks' addresses otherwise, but for the
//! C ABI's inline lookup view (`LookupView`), which a relocation makes
//! stale (that view's docs say so).
//!
//! Only blocks of the global allocator are offered: a table mapped on its
//! own (`TableMemory::Mapped`, 4 MiB and more on Linux) is not, and
//! neither is anything of a filter built under loom.
//!
//! This module holds only the contract, the tally and the helpers that
//! offer one block, and imports nothing of the crate: each type that owns
//! blocks offers them beside its own definition (`storage.rs`,
//! `stripes.rs`, `table.rs`, `filter.rs`, `scalable/relocate.rs`), so the
//! low layers that relocate their arrays never import the filter above
//! them.

use core::alloc::Layout;
use core::ptr::NonNull;

/// A way to move a block of the global allocator to a new address with
/// its contents: the shape of `RedisModule_DefragAlloc` (given the old
/// block, the new one, or nothing when it did not move it).
///
/// # Safety
/// Implementing this promises, for every call `relocate(block, layout)`
/// made with a live block that the global allocator handed out for
/// `layout`:
/// - `None`: the block was left alone (still allocated, where it was,
///   holding what it held);
/// - `Some(new)`: `new` is a live block that the global allocator's
///   `dealloc(new, layout)` accepts (so aligned to `layout.align()`, at
///   least `layout.size()` bytes long), its first `layout.size()` bytes
///   are the bytes `block` held, and `block` was given back: the caller
///   never uses it again, and owns `new` instead.
///
/// A panic counts as `None`: the block must then be left alone.
pub unsafe trait Relocate {
    /// Moves `block` (allocated with `layout`) or leaves it (the trait's
    /// contract).
    fn relocate(&mut self, block: NonNull<u8>, layout: Layout) -> Option<NonNull<u8>>;
}

/// What one relocation pass did: the blocks offered to the
/// [`Relocate`], and those it moved, with their bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Relocated {
    /// Blocks offered (every block of the global allocator that the filter
    /// owns, empty ones aside).
    pub offered: usize,
    /// Blocks the [`Relocate`] moved.
    pub moved: usize,
    /// The bytes of the blocks moved (their layouts' sizes).
    pub moved_bytes: usize,
}

/// Offers one block to `mover`, counting the offer in `tally`: the new
/// address, if it moved.
///
/// # Safety
/// `block` is a live block of the global allocator for `layout`, which
/// the caller owns and no reference points into.
pub(crate) unsafe fn offer(
    mover: &mut dyn Relocate,
    tally: &mut Relocated,
    block: NonNull<u8>,
    layout: Layout,
) -> Option<NonNull<u8>> {
    tally.offered += 1;
    let new = mover.relocate(block, layout)?;
    tally.moved += 1;
    tally.moved_bytes += layout.size();
    Some(new)
}

/// Offers the block of a boxed slice, and points the box at its new
/// address if it moved. Empty slices own no block and are skipped.
///
/// The elements move as bytes: sound for the types the filter keeps in
/// slices (atomics, locks, pointers to its own levels), which nothing
/// refers to by address while the caller holds `&mut`.
pub(crate) fn slice<T>(slice: &mut Box<[T]>, mover: &mut dyn Relocate, tally: &mut Relocated) {
    let layout = Layout::for_value::<[T]>(slice);
    if layout.size() == 0 {
        return;
    }
    let len = slice.len();
    let block = NonNull::from(&mut **slice).cast::<u8>();
    // SAFETY: a non-empty `Box<[T]>` is a block of the global allocator
    // for `Layout::for_value` of its slice; `&mut` to the box means the
    // caller owns it and nothing else refers into it.
    let Some(new) = (unsafe { offer(mover, tally, block, layout) }) else {
        return;
    };
    // SAFETY: by `Relocate`'s contract `new` is a block of the global
    // allocator for the same layout, holding the `len` values of `T` the
    // old block held, which is gone: the box rebuilt on `new` owns them,
    // and the old box is forgotten, not dropped (its memory was given back
    // and its values now live at `new`).
    let moved = unsafe {
        Box::from_raw(core::ptr::slice_from_raw_parts_mut(
            new.as_ptr().cast::<T>(),
            len,
        ))
    };
    core::mem::forget(core::mem::replace(slice, moved));
}

/// Offers the block of a value made by `Box::into_raw`, `*ptr`, and
/// stores its new address in `ptr` if it moved. The caller moves what the
/// value owns first: the block then moves with the new addresses in it.
///
/// # Safety
/// `*ptr` is null or came from `Box::<T>::into_raw`; the caller owns it
/// and nothing refers into it.
pub(crate) unsafe fn boxed<T>(ptr: &mut *mut T, mover: &mut dyn Relocate, tally: &mut Relocated) {
    let layout = Layout::new::<T>();
    let Some(block) = NonNull::new(*ptr) else {
        return;
    };
    if layout.size() == 0 {
        return;
    }
    // SAFETY: a `Box<T>` of a sized `T` of non-zero size is a block of
    // the global allocator for `Layout::new::<T>()`; the caller owns it.
    if let Some(new) = unsafe { offer(mover, tally, block.cast(), layout) } {
        // By the contract `new` holds the value, aligned for `T`, and is
        // owned as the box was.
        *ptr = new.as_ptr().cast();
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A [`Relocate`] that moves every block to a fresh allocation of the
    /// same layout (or every other one), copying its bytes and freeing the
    /// old block, and remembers the old addresses.
    pub(crate) struct Copying {
        pub(crate) skip_odd: bool,
        pub(crate) calls: usize,
        pub(crate) freed: Vec<usize>,
    }

    impl Copying {
        pub(crate) fn new(skip_odd: bool) -> Self {
            Self {
                skip_odd,
                calls: 0,
                freed: Vec::new(),
            }
        }
    }

    // SAFETY: `new` comes from the global allocator for `layout`, holds a
    // copy of `layout.size()` bytes of `block`, which is then freed with
    // its own layout; `None` touches nothing.
    unsafe impl Relocate for Copying {
        fn relocate(&mut self, block: NonNull<u8>, layout: Layout) -> Option<NonNull<u8>> {
            self.calls += 1;
            if self.skip_odd && self.calls % 2 == 1 {
                return None;
            }
            // SAFETY: `layout` has a non-zero size (empty blocks are never
            // offered); the copy stays within both blocks, which do not
            // overlap; `block` was allocated with `layout`.
            unsafe {
                let new = NonNull::new(std::alloc::alloc(layout))?;
                core::ptr::copy_nonoverlapping(block.as_ptr(), new.as_ptr(), layout.size());
                std::alloc::dealloc(block.as_ptr(), layout);
                self.freed.push(block.as_ptr() as usize);
                Some(new)
            }
        }
    }

    #[test]
    fn a_moved_slice_keeps_its_values_and_an_empty_one_is_not_offered() {
        let mut mover = Copying::new(false);
        let mut tally = Relocated::default();
        let mut values: Box<[u64]> = (0..100u64).collect();
        let before = values.as_ptr() as usize;
        slice(&mut values, &mut mover, &mut tally);
        assert_eq!(mover.freed, [before]);
        assert!(values.iter().copied().eq(0..100u64));
        let mut empty: Box<[u64]> = Box::new([]);
        slice(&mut empty, &mut mover, &mut tally);
        assert_eq!(
            tally,
            Relocated {
                offered: 1,
                moved: 1,
                moved_bytes: 800
            }
        );
    }
}
