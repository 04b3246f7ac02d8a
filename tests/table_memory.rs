//! `TableMemory`, a per-filter option: a filter built or decoded with
//! `GlobalAllocator` takes every table from the global allocator (here a
//! counting one), whatever its size — its first table, the levels it grows,
//! its copies — while a filter beside it keeps the default mapped tables.
//! The counting allocator sees the whole process, so the tests take turns
//! (`ONE_AT_A_TIME`): nothing else allocates while one measures.

use concurrent_cuckoo::{
    ChunkDecoder, CuckooFilter, DecodedFilter, DefaultHashBuilder, FrozenFilter, ReadOptions,
    ScalableCuckooFilter, TableMemory, WindowedCuckooFilter,
};
mod counting_alloc;
use counting_alloc::Counting;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A ~9 MiB table at 16-bit fingerprints: mapped by default on Linux.
const ITEMS: usize = 4_000_000;

/// What `make` takes from the global allocator, and what it made.
fn allocated<T>(make: impl FnOnce() -> T) -> (usize, T) {
    let before = counting_alloc::live();
    let made = make();
    (counting_alloc::live().saturating_sub(before), made)
}

/// `grew` bytes held the whole table of `table_bytes`, or (mapped) almost
/// none of it.
fn assert_from_allocator(grew: usize, table_bytes: usize, heap: bool, what: &str) {
    if heap {
        assert!(
            grew >= table_bytes,
            "{what}: {grew} bytes allocated for a {table_bytes}-byte table"
        );
    } else if cfg!(target_os = "linux") {
        assert!(
            grew < 1 << 20,
            "{what}: a mapped table is not the allocator's: {grew}"
        );
    }
}

#[test]
fn each_filter_takes_its_tables_where_it_was_told() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let heap = TableMemory::GlobalAllocator;

    // Built: side by side, one of each choice.
    let (grew, mapped) = allocated(|| CuckooFilter::with_capacity(ITEMS));
    assert_eq!(mapped.table_memory(), TableMemory::Mapped);
    assert_from_allocator(grew, mapped.bucket_count() * 8, false, "default");
    let (grew, f) = allocated(|| {
        CuckooFilter::builder()
            .capacity(ITEMS)
            .table_memory(heap)
            .build()
            .unwrap()
    });
    assert_eq!(f.table_memory(), heap);
    let table = f.bucket_count() * 8;
    assert_from_allocator(grew, table, true, "built");
    f.insert_hash_batch(&(0..1_000_000u64).collect::<Vec<_>>())
        .unwrap();
    assert!((0..1_000_000u64).all(|h| f.contains_hash(h)));

    // Copies take their memory where the original's came from.
    let (grew, copy) = allocated(|| f.clone());
    assert_eq!(copy.table_memory(), heap);
    assert_from_allocator(grew, table, true, "clone");
    let (grew, copy_of_mapped) = allocated(|| mapped.clone());
    assert_from_allocator(grew, table, false, "clone of a mapped filter");
    drop((copy, copy_of_mapped, mapped));

    // Decoded: as the options say, and by default mapped.
    let bytes = f.to_bytes();
    let options = ReadOptions::new().table_memory(heap);
    let (grew, d) = allocated(|| {
        CuckooFilter::<DefaultHashBuilder>::from_bytes_with_options(&bytes, options).unwrap()
    });
    assert_eq!((d.table_memory(), d.len()), (heap, 1_000_000));
    assert_from_allocator(grew, table, true, "from_bytes_with_options");
    drop(d);
    let (grew, d) = allocated(|| {
        CuckooFilter::<DefaultHashBuilder>::read_from_with_options(&bytes[..], options).unwrap()
    });
    assert_from_allocator(grew, table, true, "read_from_with_options");
    drop(d);
    let (grew, d) = allocated(|| CuckooFilter::from_bytes(&bytes).unwrap());
    assert_eq!(d.table_memory(), TableMemory::Mapped);
    assert_from_allocator(grew, table, false, "from_bytes");
    drop(d);
    let (grew, d) = allocated(|| {
        let mut decoder = ChunkDecoder::new().table_memory(heap);
        for piece in bytes.chunks(1 << 20) {
            decoder.feed(piece).unwrap();
        }
        decoder.finish().unwrap()
    });
    let DecodedFilter::Filter(d) = d else {
        panic!("a fixed filter")
    };
    assert_eq!(d.table_memory(), heap);
    assert_from_allocator(grew, table, true, "ChunkDecoder");
    drop(d);

    // A frozen filter's loaded bytes.
    let path = std::env::temp_dir().join(format!("table-memory-{}.ccf", std::process::id()));
    f.write_to_path(&path).unwrap();
    let (grew, frozen) = allocated(|| {
        FrozenFilter::<_, DefaultHashBuilder>::load_with_options(&path, options).unwrap()
    });
    assert!(frozen.contains_hash(7));
    assert_from_allocator(grew, table, true, "FrozenFilter::load_with_options");
    drop(frozen);
    let (grew, frozen) = allocated(|| FrozenFilter::load(&path).unwrap());
    assert_from_allocator(grew, table, false, "FrozenFilter::load");
    drop(frozen);
    std::fs::remove_file(&path).unwrap();
    drop(f);

    // A growing filter: every level it grows, and after decoding too.
    let (grew, g) = allocated(|| {
        let g = ScalableCuckooFilter::builder()
            .capacity(1_000_000)
            .table_memory(heap)
            .build()
            .unwrap();
        g.insert_hash_batch(&(0..3_000_000u64).collect::<Vec<_>>())
            .unwrap();
        g
    });
    assert!(g.levels() > 1);
    assert_eq!(g.table_memory(), heap);
    assert!(
        grew >= g.memory_usage() * 9 / 10,
        "{grew} bytes allocated for a filter of {}",
        g.memory_usage()
    );
    assert!((0..3_000_000u64).step_by(7).all(|h| g.contains_hash(h)));
    let bytes = g.to_bytes();
    drop(g);
    let (grew, g) = allocated(|| {
        let g =
            ScalableCuckooFilter::<DefaultHashBuilder>::read_from_with_options(&bytes[..], options)
                .unwrap();
        g.insert_hash_batch(&(3_000_000..12_000_000u64).collect::<Vec<_>>())
            .unwrap();
        g
    });
    assert_eq!(g.table_memory(), heap);
    assert!(
        grew >= g.memory_usage() * 9 / 10,
        "decoded and grown: {grew} bytes allocated for a filter of {}",
        g.memory_usage()
    );
    drop(g);
    let (grew, g) = allocated(|| {
        let g = ScalableCuckooFilter::from_bytes(&bytes).unwrap();
        g.insert_hash_batch(&(3_000_000..12_000_000u64).collect::<Vec<_>>())
            .unwrap();
        g
    });
    assert_eq!(g.table_memory(), TableMemory::Mapped);
    if cfg!(target_os = "linux") {
        assert!(
            grew < g.memory_usage() / 2,
            "a mapped growing filter: {grew}"
        );
    }
    drop(g);

    // A windowed filter: built, copied, decoded.
    let (grew, w) = allocated(|| {
        WindowedCuckooFilter::builder()
            .capacity(ITEMS)
            .table_memory(heap)
            .build()
            .unwrap()
    });
    let table = w.encoded_len() - 128;
    assert_from_allocator(grew, table, true, "windowed");
    let (grew, copy) = allocated(|| w.clone());
    assert_eq!(copy.table_memory(), heap);
    assert_from_allocator(grew, table, true, "windowed clone");
    drop(copy);
    let bytes = w.to_bytes();
    let (grew, d) = allocated(|| {
        WindowedCuckooFilter::<DefaultHashBuilder>::from_bytes_with_options(&bytes, options)
            .unwrap()
    });
    assert_eq!(d.table_memory(), heap);
    assert_from_allocator(grew, table, true, "windowed from_bytes_with_options");
    drop(d);
    let (grew, d) = allocated(|| WindowedCuckooFilter::from_bytes(&bytes).unwrap());
    assert_eq!(d.table_memory(), TableMemory::Mapped);
    assert_from_allocator(grew, table, false, "windowed from_bytes");
}

#[test]
fn a_limit_is_kept_by_every_reader() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let f = CuckooFilter::with_capacity(100_000);
    let bytes = f.to_bytes();
    let tight = ReadOptions::new().limit(bytes.len() as u64 - 1);
    let exact = ReadOptions::new().limit(bytes.len() as u64);
    type Fixed = CuckooFilter<DefaultHashBuilder>;
    assert!(Fixed::from_bytes_with_options(&bytes, tight).is_err());
    assert!(Fixed::read_from_with_options(&bytes[..], tight).is_err());
    assert!(Fixed::from_bytes_with_options(&bytes, exact).is_ok());
    let g = ScalableCuckooFilter::with_capacity(100_000);
    let bytes = g.to_bytes();
    let tight = ReadOptions::new().limit(bytes.len() as u64 - 1);
    let exact = ReadOptions::new().limit(bytes.len() as u64);
    type Growing = ScalableCuckooFilter<DefaultHashBuilder>;
    assert!(Growing::from_bytes_with_options(&bytes, tight).is_err());
    assert!(Growing::read_from_with_options(&bytes[..], tight).is_err());
    assert!(Growing::read_from_with_options(&bytes[..], exact).is_ok());
    let w = WindowedCuckooFilter::builder()
        .capacity(100_000)
        .build()
        .unwrap();
    let bytes = w.to_bytes();
    let tight = ReadOptions::new().limit(bytes.len() as u64 - 1);
    let exact = ReadOptions::new().limit(bytes.len() as u64);
    type Windowed = WindowedCuckooFilter<DefaultHashBuilder>;
    assert!(Windowed::from_bytes_with_options(&bytes, tight).is_err());
    assert!(Windowed::read_from_with_options(&bytes[..], tight).is_err());
    assert!(Windowed::read_from_with_options(&bytes[..], exact).is_ok());
}
