//! Behaviour of the public API on a single thread.

mod common;

use common::Rng;
use concurrent_cuckoo::{BuildError, CuckooFilter, DefaultHashBuilder, InsertError};
use std::hash::BuildHasher;

fn seeded(capacity: usize) -> CuckooFilter {
    CuckooFilter::builder()
        .capacity(capacity)
        .seed(1)
        .build()
        .unwrap()
}

#[test]
fn filter_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    assert_send_sync::<CuckooFilter>();
    assert_send_sync::<CuckooFilter<std::hash::RandomState>>();
    assert_send_sync::<InsertError>();
    assert_send_sync::<BuildError>();
}

#[test]
fn insert_contains_remove() {
    let f = CuckooFilter::with_capacity(1000);
    assert!(f.is_empty());
    for i in 0..1000u32 {
        f.insert(&i).unwrap();
    }
    assert_eq!(f.len(), 1000);
    assert!((0..1000u32).all(|i| f.contains(&i)));
    for i in 0..500u32 {
        assert!(f.remove(&i));
    }
    assert_eq!(f.len(), 500);
    assert!((500..1000u32).all(|i| f.contains(&i)));
    assert_eq!(f.occupied_slots(), 500);
    f.clear();
    assert!(f.is_empty());
    assert_eq!(f.occupied_slots(), 0);
    assert!(!f.remove(&600u32));
}

#[test]
fn keys_of_any_size_including_empty() {
    let f = seeded(100);
    let long = vec![0xABu8; 1 << 20];
    f.insert("").unwrap();
    f.insert(&[] as &[u8]).unwrap();
    f.insert(&long[..]).unwrap();
    f.insert(&String::from("flow")).unwrap();
    f.insert(&(1u8, 2u16, [3u32; 4])).unwrap();
    assert!(f.contains(""));
    assert!(f.contains(&[] as &[u8]));
    assert!(f.contains(&long[..]));
    assert!(f.contains("flow"), "str and String hash alike");
    assert!(f.contains(&(1u8, 2u16, [3u32; 4])));
    assert_eq!(f.len(), 5);
}

#[test]
fn eight_copies_then_too_many_duplicates_changing_nothing() {
    let f = seeded(1000);
    for _ in 0..8 {
        f.insert("dup").unwrap();
    }
    assert_eq!(f.insert("dup"), Err(InsertError::TooManyDuplicates));
    assert_eq!(f.len(), 8);
    assert_eq!(f.occupied_slots(), 8);
    for remaining in (0..8).rev() {
        assert!(f.remove("dup"));
        assert_eq!(f.contains("dup"), remaining > 0);
    }
    assert!(!f.remove("dup"));
    assert!(f.is_empty());
}

#[test]
fn insert_unique_adds_once() {
    let f = seeded(100);
    assert_eq!(f.insert_unique("a"), Ok(true));
    assert_eq!(f.insert_unique("a"), Ok(false));
    f.insert("a").unwrap();
    assert_eq!(f.len(), 2);
    assert_eq!(f.insert_unique("b"), Ok(true));
    assert_eq!(f.len(), 3);
}

#[test]
fn hash_api_agrees_with_key_api() {
    let f = seeded(10_000);
    let h = f.hasher().hash_one("k");
    f.insert("k").unwrap();
    assert!(f.contains_hash(h));
    assert!(f.remove_hash(h));
    assert!(!f.contains("k"));
    f.insert_hash(h).unwrap();
    assert!(f.contains("k"));
    assert_eq!(f.insert_unique_hash(h), Ok(false));
}

#[test]
fn batch_lookups_equal_single_lookups() {
    let f = seeded(50_000);
    let mut rng = Rng(9);
    let present: Vec<u64> = (0..40_000).map(|_| rng.next()).collect();
    for k in &present {
        f.insert(k).unwrap();
    }
    let mut queries: Vec<u64> = present.iter().step_by(3).copied().collect();
    queries.extend((0..20_000).map(|_| rng.next()));
    for len in [0usize, 1, 7, 8, 9, 16, 32, 33, 64, 1000, queries.len()] {
        let keys = &queries[..len];
        let mut out = vec![false; len];
        f.contains_batch(keys, &mut out);
        let single: Vec<bool> = keys.iter().map(|k| f.contains(k)).collect();
        assert_eq!(out, single, "len {len}");
        let hashes: Vec<u64> = keys.iter().map(|k| f.hasher().hash_one(k)).collect();
        let mut out2 = vec![false; len];
        f.contains_hash_batch(&hashes, &mut out2);
        assert_eq!(out2, single, "hash batch len {len}");
    }
    let mut out = vec![false; present.len()];
    f.contains_batch(&present, &mut out);
    assert!(out.iter().all(|&b| b), "no false negatives in a batch");
}

#[test]
#[should_panic(expected = "differ in length")]
fn batch_with_mismatched_lengths_panics() {
    let f = seeded(10);
    let mut out = [false; 2];
    f.contains_batch(&[1u8, 2, 3], &mut out);
}

#[test]
#[should_panic(expected = "differ in length")]
fn hash_batch_with_mismatched_lengths_panics() {
    let f = seeded(10);
    let mut out = [false; 4];
    f.contains_hash_batch(&[1, 2, 3], &mut out);
}

#[test]
fn sizes_and_accounting() {
    let f = CuckooFilter::with_capacity(1_000_000);
    assert_eq!(f.capacity(), f.bucket_count() * 4);
    assert!(f.capacity() >= 1_000_000);
    assert_eq!(f.fingerprint_bits(), 16);
    assert!(f.memory_usage() >= f.bucket_count() * 8);
    assert!(f.memory_usage() < f.bucket_count() * 8 + (1 << 20));
    for i in 0..1000u32 {
        f.insert(&i).unwrap();
    }
    assert!((f.load_factor() - 1000.0 / f.capacity() as f64).abs() < 1e-12);
    let dbg = format!("{f:?}");
    assert!(dbg.contains("len: 1000"), "{dbg}");
}

#[test]
fn builder_validates_configuration() {
    let b = || CuckooFilter::builder().capacity(100);
    assert_eq!(
        CuckooFilter::builder().build().unwrap_err(),
        BuildError::MissingCapacity
    );
    for rate in [0.0, 1.0, -0.5, 2.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            b().false_positive_rate(rate).build(),
            Err(BuildError::InvalidFalsePositiveRate(_))
        ));
    }
    for bits in [0, 1, 4, 12, 24, 64] {
        assert_eq!(
            b().fingerprint_bits(bits).build().unwrap_err(),
            BuildError::UnsupportedFingerprintBits(bits)
        );
    }
    assert!(matches!(
        b().fingerprint_bits(8).false_positive_rate(1e-4).build(),
        Err(BuildError::FingerprintTooShort { bits: 8, .. })
    ));
    assert!(matches!(
        b().false_positive_rate(1e-12).build(),
        Err(BuildError::FingerprintTooShort { bits: 32, .. })
    ));
    assert!(matches!(
        CuckooFilter::builder().capacity(usize::MAX).build(),
        Err(BuildError::CapacityOverflow { .. })
    ));
    for hops in [0, 6, 100] {
        assert!(matches!(
            b().max_path_len(hops).build(),
            Err(BuildError::InvalidParameter(_))
        ));
    }
    assert!(matches!(
        b().bucket_count(3).build(),
        Err(BuildError::InvalidParameter(_))
    ));
    assert!(matches!(
        b().stripe_count(3).build(),
        Err(BuildError::InvalidParameter(_))
    ));
}

#[test]
fn false_positive_rate_picks_the_narrowest_sufficient_width() {
    let bits = |rate: f64| {
        CuckooFilter::builder()
            .capacity(10)
            .false_positive_rate(rate)
            .build()
            .unwrap()
            .fingerprint_bits()
    };
    assert_eq!(bits(0.05), 8);
    assert_eq!(bits(0.03125), 8);
    assert_eq!(bits(0.01), 16);
    assert_eq!(bits(1e-4), 32);
    assert_eq!(bits(2e-9), 32);
    let f = CuckooFilter::builder()
        .capacity(10)
        .fingerprint_bits(32)
        .false_positive_rate(0.01)
        .build()
        .unwrap();
    assert_eq!(f.fingerprint_bits(), 32);
}

#[test]
#[should_panic(expected = "capacity overflow")]
fn with_capacity_panics_only_on_overflow() {
    let _ = CuckooFilter::with_capacity(usize::MAX);
}

#[test]
fn custom_hasher_and_fixed_seed() {
    let f = CuckooFilter::builder()
        .capacity(100)
        .hasher(std::hash::RandomState::new())
        .build()
        .unwrap();
    f.insert(&5u64).unwrap();
    assert!(f.contains(&5u64));

    let a = CuckooFilter::builder()
        .capacity(100)
        .seed(7)
        .build()
        .unwrap();
    let b = CuckooFilter::builder()
        .capacity(100)
        .seed(7)
        .build()
        .unwrap();
    assert_eq!(a.hasher().seed(), 7);
    assert_eq!(a.hasher().hash_one("x"), b.hasher().hash_one("x"));
    assert_ne!(
        CuckooFilter::with_capacity(10).hasher().seed(),
        CuckooFilter::with_capacity(10).hasher().seed(),
        "default filters are seeded independently"
    );
    let _: &DefaultHashBuilder = a.hasher();
}

#[test]
fn every_width_works() {
    for bits in [8, 16, 32] {
        let f = CuckooFilter::builder()
            .capacity(10_000)
            .fingerprint_bits(bits)
            .seed(3)
            .build()
            .unwrap();
        for i in 0..10_000u32 {
            f.insert(&i).unwrap();
        }
        assert!((0..10_000u32).all(|i| f.contains(&i)), "{bits}");
        assert!((0..10_000u32).all(|i| f.remove(&i)), "{bits}");
        assert!(f.is_empty());
        assert_eq!(f.occupied_slots(), 0);
    }
}

#[test]
fn probe_backend_is_reported() {
    assert!(["sse2", "sse2+avx2", "neon", "portable"].contains(&concurrent_cuckoo::probe_backend()));
}
