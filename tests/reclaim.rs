//! `reclaim_retired` with heap tables (`TableMemory::GlobalAllocator`, as
//! the Redis module uses): a retired level's table stays allocated until
//! it is reclaimed, `memory_usage` counts it until then (it used to leave
//! it out, claiming it given back), and reclaiming gives back about that
//! level's bytes to the allocator without changing any answer, encoding
//! or later growth. Its own test binary: the allocator counts every byte
//! of the process.

use concurrent_cuckoo::{ScalableCuckooFilter, TableMemory};
mod counting_alloc;
use counting_alloc::Counting;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// `memory_usage` against what the allocator holds for the filter: equal
/// up to the allocator's own rounding (none here: `System` is asked for
/// exact sizes) and a few small boxes.
fn assert_counts_what_is_held(f: &ScalableCuckooFilter, baseline: usize, when: &str) {
    let held = counting_alloc::live() - baseline;
    let reported = f.memory_usage();
    let gap = held.abs_diff(reported);
    assert!(
        gap < 4096,
        "{when}: memory_usage {reported} but the allocator holds {held} for the filter"
    );
}

fn twin(seed: u64) -> ScalableCuckooFilter {
    ScalableCuckooFilter::builder()
        .capacity(1_000_000) // 32-bit levels of 4.5 MiB and up: mapped unless told
        .false_positive_rate(1e-7) // 32-bit: no remove is refused
        .seed(seed)
        .table_memory(TableMemory::GlobalAllocator)
        .build()
        .unwrap()
}

#[test]
fn reclaiming_a_retired_heap_level_gives_its_table_back() {
    // Every vector this test fills is allocated before the baseline.
    let mut first: Vec<u64> = Vec::with_capacity(4_000_000);
    let kept: Vec<u64> = (1 << 40..(1 << 40) + 10_000).collect();
    let baseline = counting_alloc::live();
    let mut f = twin(24);
    assert_counts_what_is_held(&f, baseline, "built");
    let mut next = 0u64;
    while f.levels() == 1 {
        f.insert_hash(next).unwrap();
        first.push(next);
        next += 1;
    }
    let grower = first.pop().unwrap(); // grew the filter: lives in level 1
    f.insert_hash_batch(&kept).unwrap();
    let level0 = f.level_stats()[0].memory_usage;
    assert!(level0 > 4 << 20, "a table mapping would take: {level0}");
    assert_eq!(f.reclaim_retired(), 0, "nothing retired yet");
    for k in &first {
        assert!(f.remove_hash(*k).is_removed());
    }
    assert_eq!(f.levels(), 1, "the emptied first level retired");
    // Retired, its heap table is still held, and counted.
    assert_counts_what_is_held(&f, baseline, "retired");
    let bytes = f.to_bytes();
    let (memory, live) = (f.memory_usage(), counting_alloc::live());

    let freed = f.reclaim_retired();
    let released = live - counting_alloc::live();
    println!(
        "level 0 held {level0} bytes; reclaim_retired freed {freed}; the allocator got back {released}; memory_usage {memory} -> {}",
        f.memory_usage()
    );
    assert!(
        freed >= level0 && freed < level0 + 4096,
        "freed {freed}, level 0 {level0}"
    );
    assert_eq!(f.memory_usage(), memory - freed);
    assert!(released.abs_diff(freed) < 4096, "released {released}");
    assert_counts_what_is_held(&f, baseline + bytes.capacity(), "reclaimed");
    assert_eq!(f.reclaim_retired(), 0, "nothing left to reclaim");
    assert!(f.to_bytes() == bytes, "reclaiming changes no encoding");
    assert!(kept.iter().all(|k| f.contains_hash(*k)) && f.contains_hash(grower));

    // Later growth (past level 1) and clears: as in a filter given the
    // same writes that never reclaimed.
    let reference = twin(24);
    for k in first.iter().chain([&grower]).chain(&kept) {
        reference.insert_hash(*k).unwrap();
    }
    for k in &first {
        assert!(reference.remove_hash(*k).is_removed());
    }
    assert!(reference.to_bytes() == f.to_bytes());
    let more: Vec<u64> = (10_000_000..13_000_000).collect();
    f.insert_hash_batch(&more).unwrap();
    reference.insert_hash_batch(&more).unwrap();
    assert!(f.levels() >= 2, "grown past level 1");
    assert!(more.iter().step_by(7).all(|k| f.contains_hash(*k)));
    assert!(f.to_bytes() == reference.to_bytes(), "growth after reclaim");
    f.clear();
    reference.clear();
    f.reclaim_retired();
    f.insert_hash_batch(&more).unwrap();
    reference.insert_hash_batch(&more).unwrap();
    assert!(f.to_bytes() == reference.to_bytes(), "regrowth after clear");
}
