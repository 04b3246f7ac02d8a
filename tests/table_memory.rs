//! `set_table_memory`: with `GlobalAllocator`, every table comes from the
//! global allocator (here a counting one), whatever its size, and filters
//! work as before. Its own test binary: the setting is process-wide.

use concurrent_cuckoo::{set_table_memory, CuckooFilter, ScalableCuckooFilter, TableMemory};
mod counting_alloc;
use counting_alloc::Counting;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

#[test]
fn large_tables_come_from_the_global_allocator_when_asked() {
    let items = 4_000_000; // a ~9 MiB table: mapped by default
    let before = counting_alloc::live();
    let mapped = CuckooFilter::with_capacity(items);
    let grew = counting_alloc::live() - before;
    assert!(
        grew < 1 << 20,
        "a mapped table is not the allocator's: {grew}"
    );
    drop(mapped);

    set_table_memory(TableMemory::GlobalAllocator);
    let before = counting_alloc::live();
    let f = CuckooFilter::with_capacity(items);
    let grew = counting_alloc::live() - before;
    assert!(
        grew >= f.bucket_count() * 8,
        "{grew} bytes allocated for a {}-byte table",
        f.bucket_count() * 8
    );
    f.insert_hash_batch(&(0..1_000_000u64).collect::<Vec<_>>())
        .unwrap();
    assert!((0..1_000_000u64).all(|h| f.contains_hash(h)));
    let copy = CuckooFilter::from_bytes(&f.to_bytes()).unwrap();
    assert_eq!(copy.len(), 1_000_000);
    drop((f, copy));
    let g = ScalableCuckooFilter::with_capacity(1_000_000);
    g.insert_hash_batch(&(0..3_000_000u64).collect::<Vec<_>>())
        .unwrap();
    assert!(g.levels() > 1);
    assert!((0..3_000_000u64).step_by(7).all(|h| g.contains_hash(h)));
    set_table_memory(TableMemory::Mapped);
}
