//! `relocate`: a filter whose memory moved to new addresses (what a Redis
//! module's defrag callback does with `RedisModule_DefragAlloc`) answers
//! as before, encodes to the same bytes, and keeps working.
//!
//! The mover here copies each block it moves into a fresh allocation and
//! fills the old block with 0xFF instead of freeing it at once: a filter
//! that still read an old block would find its keys garbled (and none of
//! the old addresses can be handed out again while the test runs).

use concurrent_cuckoo::{CuckooFilter, Relocate, ScalableCuckooFilter};
use std::alloc::Layout;
use std::ptr::NonNull;

/// Moves every block (or every other one), poisoning what it leaves.
struct Poisoning {
    every_other: bool,
    calls: usize,
    /// Old blocks, poisoned, freed when the mover is dropped.
    old: Vec<(NonNull<u8>, Layout)>,
    /// New blocks' addresses.
    new: Vec<usize>,
}

impl Poisoning {
    fn new(every_other: bool) -> Self {
        Self {
            every_other,
            calls: 0,
            old: Vec::new(),
            new: Vec::new(),
        }
    }
}

// SAFETY: a moved block's replacement comes from the global allocator for
// `layout` and holds the old block's bytes; the old block is never handed
// back to the filter (it is freed only by `Drop`, the filter having
// given it up); `None` touches nothing.
unsafe impl Relocate for Poisoning {
    fn relocate(&mut self, block: NonNull<u8>, layout: Layout) -> Option<NonNull<u8>> {
        self.calls += 1;
        if self.every_other && self.calls.is_multiple_of(2) {
            return None;
        }
        // SAFETY: `layout` is the block's, of non-zero size; the two blocks
        // do not overlap.
        let new = unsafe {
            let new = NonNull::new(std::alloc::alloc(layout))?;
            new.as_ptr()
                .copy_from_nonoverlapping(block.as_ptr(), layout.size());
            block.as_ptr().write_bytes(0xFF, layout.size());
            new
        };
        self.old.push((block, layout));
        self.new.push(new.as_ptr() as usize);
        Some(new)
    }
}

impl Drop for Poisoning {
    fn drop(&mut self) {
        for &(block, layout) in &self.old {
            // SAFETY: allocated by the filter with `layout`, given up by it.
            unsafe { std::alloc::dealloc(block.as_ptr(), layout) };
        }
    }
}

#[test]
fn a_moved_filter_finds_every_key_and_encodes_the_same_bytes() {
    let mut filter = CuckooFilter::builder()
        .capacity(10_000)
        .seed(7)
        .build()
        .unwrap();
    let keys: Vec<u64> = (0..9_000).collect();
    filter.insert_hash_batch(&keys).unwrap();
    filter.insert_hash(5).unwrap(); // a second copy
    let bytes = filter.to_bytes();
    let mut mover = Poisoning::new(false);
    let moved = filter.relocate(&mut mover);
    // The buckets, the lock stripes, the version words and the count of
    // lock waiters.
    assert_eq!((moved.offered, moved.moved), (4, 4), "{moved:?}");
    assert!(moved.moved_bytes >= filter.bucket_count() * 8);
    assert!(keys.iter().all(|&k| filter.contains_hash(k)));
    assert_eq!(filter.count_hash(5), 2);
    assert_eq!(filter.to_bytes(), bytes, "the same encoding");
    // Locks and counters moved with it: writes go on.
    assert!(filter.remove_hash(5));
    filter
        .insert_hash_batch(&(9_000..9_400).collect::<Vec<_>>())
        .unwrap();
    assert!((0..9_400).all(|k| filter.contains_hash(k)));
    assert_eq!(filter.len(), 9_400);
    drop(filter);
    drop(mover);
}

#[test]
fn a_moved_growing_filter_keeps_every_level_retired_ones_included() {
    let mut filter = ScalableCuckooFilter::builder()
        .capacity(500)
        .seed(3)
        .build()
        .unwrap();
    let mut k = 0u64;
    while filter.levels() < 3 {
        filter.insert_hash(k).unwrap();
        k += 1;
    }
    // Empty the first level so that it retires (its memory still held).
    let first = (0..k)
        .take_while(|&h| filter.remove_hash(h).is_removed())
        .count() as u64;
    assert!(first > 0);
    let kept: Vec<u64> = (first..k).collect();
    assert!(kept.iter().all(|&h| filter.contains_hash(h)));
    let bytes = filter.to_bytes();
    let memory = filter.memory_usage();

    let mut mover = Poisoning::new(false);
    let moved = filter.relocate(&mut mover);
    assert_eq!(moved.moved, moved.offered, "{moved:?}");
    // Per level (three at least) its table's four blocks and its own; the
    // slots and the key locks.
    assert!(moved.offered >= 3 * 5 + 2, "{moved:?}");
    assert!(kept.iter().all(|&h| filter.contains_hash(h)));
    assert_eq!(filter.to_bytes(), bytes, "the same encoding");
    assert_eq!(filter.memory_usage(), memory);

    // Growth, reuse of the retired level, removes and reclaim go on.
    let more: Vec<u64> = (k..k + 5_000).collect();
    filter.insert_hash_batch(&more).unwrap();
    assert!(kept.iter().chain(&more).all(|&h| filter.contains_hash(h)));
    assert!(more.iter().all(|&h| filter.remove_hash(h).is_removed()));
    filter.reclaim_retired();
    assert!(kept.iter().all(|&h| filter.contains_hash(h)));
    drop(filter);
    drop(mover);
}

#[test]
fn blocks_left_in_place_and_moved_ones_mix() {
    let mut filter = ScalableCuckooFilter::builder()
        .capacity(200)
        .seed(11)
        .build()
        .unwrap();
    let keys: Vec<u64> = (0..2_000).collect();
    filter.insert_hash_batch(&keys).unwrap();
    let bytes = filter.to_bytes();
    let mut mover = Poisoning::new(true);
    let first = filter.relocate(&mut mover);
    assert!(first.moved > 0 && first.moved < first.offered, "{first:?}");
    // A second pass offers the same blocks, at their new addresses.
    let second = filter.relocate(&mut mover);
    assert_eq!(second.offered, first.offered);
    assert!(keys.iter().all(|&k| filter.contains_hash(k)));
    assert_eq!(filter.to_bytes(), bytes);
    drop(filter);
    drop(mover);
}

/// A table mapped on its own (the default for 4 MiB and more on Linux) is
/// not the global allocator's: it is never offered.
#[cfg(target_os = "linux")]
#[test]
fn a_mapped_table_stays_where_it_is() {
    let mut filter = CuckooFilter::with_capacity(4_000_000);
    filter.insert_hash(1).unwrap();
    let mut mover = Poisoning::new(false);
    let moved = filter.relocate(&mut mover);
    assert_eq!(
        moved,
        filter.relocate(&mut Poisoning::new(false)),
        "the same blocks every time"
    );
    assert_eq!(
        moved.offered, 3,
        "the stripes, versions and waiter count only: {moved:?}"
    );
    assert!(filter.contains_hash(1));
    drop(filter);
    drop(mover);
}
