//! [`ScalableCuckooFilter::relocate`]: a growing filter's memory moved to
//! new addresses under `&mut` (`src/relocate.rs` says why that is safe).

use super::slots::Level;
use super::ScalableCuckooFilter;
use crate::relocate::{self, Relocate, Relocated};

impl Level {
    /// Offers this level's table, and the levels it replaced with theirs
    /// (each level's own block after what it owns, so that a moved block
    /// carries the new addresses).
    fn relocate(&mut self, mover: &mut dyn Relocate, tally: &mut Relocated) {
        self.table.relocate(mover, tally);
        let replaced = self.replaced.get_mut();
        // SAFETY: a non-null `replaced` came from `Box::into_raw` and is
        // owned by this level alone (`Level::drop_replaced`); `&mut self`
        // rules out any reader in it.
        if let Some(older) = unsafe { replaced.as_mut() } {
            older.relocate(mover, tally);
        }
        // SAFETY: as above.
        unsafe { relocate::boxed(replaced, mover, tally) };
    }
}

impl<S> ScalableCuckooFilter<S> {
    /// Moves the filter's memory to new addresses where `mover` gives
    /// them, as [`CuckooFilter::relocate`](crate::CuckooFilter::relocate)
    /// does: every level's table (buckets, lock stripes, version words),
    /// in use or retired, each level's own block, the level slots and the
    /// key locks. The filter answers exactly as before, and its encoding
    /// is the same bytes. `&mut self`: no thread is in the filter
    /// meanwhile.
    ///
    /// ```
    /// use concurrent_cuckoo::{Relocate, ScalableCuckooFilter};
    /// use std::alloc::Layout;
    /// use std::ptr::NonNull;
    ///
    /// /// Copies every block to a fresh allocation of the same layout.
    /// struct Fresh;
    /// // SAFETY: the new block is the global allocator's, for `layout`,
    /// // holds the old block's bytes, and the old block is freed.
    /// unsafe impl Relocate for Fresh {
    ///     fn relocate(&mut self, block: NonNull<u8>, layout: Layout) -> Option<NonNull<u8>> {
    ///         // SAFETY: `layout` is the block's (the trait's contract) and
    ///         // non-zero; the copy stays inside both blocks, which do not
    ///         // overlap; `block` is freed once, with its own layout.
    ///         unsafe {
    ///             let new = NonNull::new(std::alloc::alloc(layout))?;
    ///             new.as_ptr().copy_from_nonoverlapping(block.as_ptr(), layout.size());
    ///             std::alloc::dealloc(block.as_ptr(), layout);
    ///             Some(new)
    ///         }
    ///     }
    /// }
    ///
    /// let mut filter = ScalableCuckooFilter::with_capacity(100);
    /// filter.insert_batch(&(0..1000u32).collect::<Vec<_>>())?; // several levels
    /// let before = filter.to_bytes();
    /// let moved = filter.relocate(&mut Fresh);
    /// assert_eq!(moved.moved, moved.offered);
    /// assert_eq!(filter.to_bytes(), before);
    /// assert!((0..1000u32).all(|k| filter.contains(&k)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn relocate(&mut self, mover: &mut dyn Relocate) -> Relocated {
        let mut tally = Relocated::default();
        for slot in self.slots.iter_mut() {
            let level = slot.get_mut();
            // SAFETY: a non-null slot is this filter's `Box::into_raw`
            // level, freed only under `&mut` (`drop`, `reclaim_retired`);
            // `&mut self` rules out any reader in it.
            if let Some(l) = unsafe { level.as_mut() } {
                l.relocate(mover, &mut tally);
            }
            // SAFETY: as above.
            unsafe { relocate::boxed(level, mover, &mut tally) };
        }
        relocate::slice(&mut self.slots, mover, &mut tally);
        relocate::slice(&mut self.key_locks, mover, &mut tally);
        tally
    }
}
