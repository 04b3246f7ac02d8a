//! A growing filter decoded from an encoding written before level widths
//! were a function of the level index (by a copy reloaded after its oldest
//! levels retired: it chose narrower fingerprints for later levels). Such
//! a filter keeps its levels' widths while they are in use; a closed level
//! of a width the current rule would not choose is replaced, not reopened,
//! when the filter grows into it again (the old level stays alive for any
//! lookup still reading it, until `&mut self`). Its answers stay right, it
//! evolves as its own reloaded copy does, and `reclaim_retired` frees the
//! replaced levels.

use concurrent_cuckoo::{CuckooFilter, ScalableCuckooFilter};
use xxhash_rust::xxh3::xxh3_64;

const SEED: u64 = 24;

fn builder() -> concurrent_cuckoo::ScalableBuilder {
    ScalableCuckooFilter::builder()
        .capacity(4)
        .growth_factor(1)
        .max_levels(16)
        .false_positive_rate(1e-3)
        .seed(SEED)
}

/// The encoding such a copy wrote: levels 4 to 9 stored, empty, all with
/// 16-bit fingerprints (the current rule gives levels 8 and 9 32 bits:
/// eight 16-bit levels fit the 1e-3 budget, counting levels 0 to 3).
fn legacy_encoding() -> Vec<u8> {
    let real = builder().build().unwrap();
    let bytes = real.to_bytes();
    let buckets = real.level_stats()[0].bucket_count;
    let stored: Vec<u32> = (4..=9).collect();
    // The container header (src/persist/scalable.rs): the real one's fixed
    // part, another level count, the indices, then its checksum.
    let mut head = bytes[..56].to_vec();
    head[12..16].copy_from_slice(&(stored.len() as u32).to_le_bytes());
    for i in &stored {
        head.extend_from_slice(&i.to_le_bytes());
    }
    while !head.len().is_multiple_of(8) {
        head.push(0);
    }
    let sum = xxh3_64(&head);
    head.extend_from_slice(&sum.to_le_bytes());
    for _ in &stored {
        let level = CuckooFilter::builder()
            .capacity(0)
            .bucket_count(buckets)
            .fingerprint_bits(16)
            .seed(SEED)
            .build()
            .unwrap();
        head.extend_from_slice(&level.to_bytes());
    }
    head
}

/// Inserts fresh keys until the filter has grown `times` times.
fn grow(f: &ScalableCuckooFilter, times: usize, next: &mut u64, keys: &mut Vec<u64>) {
    for _ in 0..times {
        let levels = f.levels();
        while f.levels() == levels {
            f.insert_hash(*next).unwrap();
            keys.push(*next);
            *next += 1;
        }
    }
}

#[test]
fn a_level_of_a_legacy_width_is_replaced_when_the_filter_grows_into_it_again() {
    let mut f = ScalableCuckooFilter::from_bytes(&legacy_encoding()).expect("a legacy encoding");
    assert_eq!(f.level_fingerprint_bits(), vec![16; 6]);
    let mut next = 0;
    let mut keys = Vec::new();
    // Growth 1: the lowest free slot, 0, at its rule's 16 bits (the
    // legacy levels leave room in the budget for it).
    grow(&f, 1, &mut next, &mut keys);
    assert_eq!(f.level_fingerprint_bits(), vec![16; 7]);
    f.clear(); // keeps slot 0, the lowest in use; slots 4 to 9 close
    keys.clear();
    let before = f.memory_usage();
    grow(&f, 9, &mut next, &mut keys); // opens 1 to 3, reopens 4 to 7, replaces 8 and 9
    assert_eq!(
        f.level_fingerprint_bits(),
        [vec![16; 8], vec![32, 32]].concat(),
        "slots 8 and 9 take the rule's width, not the legacy one"
    );
    assert!(keys.iter().all(|k| f.contains_hash(*k)), "every key found");
    assert_eq!(f.len(), keys.len());
    // The replaced levels are still held (a lookup may read them) and
    // counted; reclaiming frees them and the retired levels.
    assert!(f.memory_usage() > before);
    let copy = ScalableCuckooFilter::from_bytes(&f.to_bytes()).unwrap();
    let held = f.memory_usage();
    let freed = f.reclaim_retired();
    assert!(freed > 0 && f.memory_usage() == held - freed);
    assert!(keys.iter().all(|k| f.contains_hash(*k)));
    assert!(
        f.to_bytes() == copy.to_bytes(),
        "reclaim changes no encoding"
    );
    // And it evolves as its reloaded copy does.
    let mut more = Vec::new();
    let mut next_copy = next;
    grow(&f, 2, &mut next, &mut more);
    let mut more_copy = Vec::new();
    grow(&copy, 2, &mut next_copy, &mut more_copy);
    assert_eq!(more, more_copy);
    assert!(
        f.to_bytes() == copy.to_bytes(),
        "the copy evolves identically"
    );
}
