//! Filters built with `uniform_hashes(true)`: hashes used as they are,
//! without the finalizer (issue 34). They must answer as any filter does
//! (no false negative, the configured false-positive bound, keys and
//! hashes agreeing), fill as far on uniform hashes, and keep the choice
//! through saving and loading.

use concurrent_cuckoo::{CuckooFilter, FrozenFilter};
use std::hash::BuildHasher;

/// SplitMix64: uniform 64-bit hashes, reproducible.
fn hashes(seed: u64) -> impl Iterator<Item = u64> {
    let mut state = seed;
    std::iter::repeat_with(move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    })
}

fn uniform(capacity: usize) -> CuckooFilter {
    CuckooFilter::builder()
        .capacity(capacity)
        .seed(7)
        .uniform_hashes(true)
        .build()
        .unwrap()
}

#[test]
fn a_uniform_filter_fills_to_capacity_and_finds_every_hash() {
    const N: usize = 200_000;
    let filter = uniform(N);
    assert!(filter.uniform_hashes());
    let stored: Vec<u64> = hashes(1).take(N).collect();
    for &h in &stored {
        filter
            .insert_hash(h)
            .expect("a uniform filter fills to its capacity");
    }
    assert_eq!(filter.len(), N);
    assert!(stored.iter().all(|&h| filter.contains_hash(h)));
    let mut found = vec![false; N];
    filter.contains_hash_batch(&stored, &mut found);
    assert!(found.iter().all(|&f| f));

    // Absent hashes: false positives within the bound (8 / 2^16 for the
    // default 16-bit fingerprints; about 1.1e-4 expected at this load).
    let lookups = 1_000_000;
    let false_positives = hashes(2)
        .take(lookups)
        .filter(|&h| filter.contains_hash(h))
        .count();
    let rate = false_positives as f64 / lookups as f64;
    assert!(
        rate <= filter.false_positive_bound(),
        "false-positive rate {rate} above the bound {}",
        filter.false_positive_bound()
    );

    for &h in &stored[..N / 2] {
        assert!(filter.remove_hash(h));
    }
    assert!(stored[N / 2..].iter().all(|&h| filter.contains_hash(h)));
}

#[test]
fn keys_and_their_hashes_agree_in_a_uniform_filter() {
    let filter = uniform(10_000);
    for k in 0..5_000u64 {
        filter.insert(&k).unwrap();
    }
    for k in 0..10_000u64 {
        let h = filter.hasher().hash_one(k);
        assert_eq!(filter.contains(&k), filter.contains_hash(h), "key {k}");
        assert!(k >= 5_000 || filter.contains_hash(h));
    }
}

/// The option does what it says: the bucket comes from the hash's high
/// 32 bits and the fingerprint from its low 16, unmixed, so two hashes
/// that differ only in bits 16 to 31 are one item to a uniform filter,
/// and two different items to a default one.
#[test]
fn a_uniform_filter_uses_the_hash_bits_as_they_are() {
    let h = 0x1234_5678_0000_0001u64;
    let twin = h | 0xABCD_0000;
    let raw = uniform(1000);
    raw.insert_hash(h).unwrap();
    assert!(raw.contains_hash(twin));
    let mixed = CuckooFilter::builder()
        .capacity(1000)
        .seed(7)
        .build()
        .unwrap();
    assert!(!mixed.uniform_hashes());
    mixed.insert_hash(h).unwrap();
    assert!(!mixed.contains_hash(twin));
}

#[test]
fn the_choice_survives_saving_and_loading() {
    let filter = uniform(50_000);
    let stored: Vec<u64> = hashes(3).take(40_000).collect();
    for &h in &stored {
        filter.insert_hash(h).unwrap();
    }
    let bytes = filter.to_bytes();
    // Format version 1 records hashes used as they are (docs/format.md).
    assert_eq!(&bytes[8..10], &[1, 0]);
    let loaded = CuckooFilter::from_bytes(&bytes).unwrap();
    assert!(loaded.uniform_hashes());
    assert_eq!(loaded.to_bytes(), bytes);
    let frozen = FrozenFilter::from_bytes(&bytes[..]).unwrap();
    for h in stored.iter().copied().chain(hashes(4).take(100_000)) {
        let answer = filter.contains_hash(h);
        assert_eq!(loaded.contains_hash(h), answer);
        assert_eq!(frozen.contains_hash(h), answer);
    }
    assert!(stored.iter().all(|&h| loaded.contains_hash(h)));
}
