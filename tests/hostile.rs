//! Hostile input outside decoding (which `tests/persist.rs` and the fuzz
//! targets cover): builder values at and past every limit, batch lookups
//! with mismatched slices, and keys of every size and shape. Complements
//! `tests/api.rs`.

use concurrent_cuckoo::{BuildError, CuckooFilter, InsertError};
use std::panic::{catch_unwind, AssertUnwindSafe};

fn seeded(capacity: usize) -> CuckooFilter {
    CuckooFilter::builder()
        .capacity(capacity)
        .seed(13)
        .build()
        .unwrap()
}

#[test]
fn builder_rejects_every_out_of_range_value() {
    let b = || CuckooFilter::builder().capacity(100);
    for buckets in [0usize, 1, 3, 7, 1001] {
        assert_eq!(
            b().bucket_count(buckets).build().unwrap_err(),
            BuildError::InvalidBucketCount(buckets)
        );
    }
    #[cfg(target_pointer_width = "64")]
    for buckets in [(1usize << 32) + 2, 1 << 40, usize::MAX - 1] {
        assert_eq!(
            b().bucket_count(buckets).build().unwrap_err(),
            BuildError::InvalidBucketCount(buckets)
        );
    }
    for stripes in [0usize, 3, 6, 1 << 17, usize::MAX] {
        assert_eq!(
            b().stripe_count(stripes).build().unwrap_err(),
            BuildError::InvalidStripeCount(stripes)
        );
    }
    for versions in [0usize, 3, 1 << 21] {
        assert_eq!(
            b().stripe_count(1)
                .version_count(versions)
                .build()
                .unwrap_err(),
            BuildError::InvalidVersionCount(versions)
        );
    }
    // Fewer versions than stripes would put one version under two locks.
    assert_eq!(
        b().stripe_count(8).version_count(4).build().unwrap_err(),
        BuildError::InvalidVersionCount(4)
    );
    for hops in [0usize, 6, usize::MAX] {
        assert_eq!(
            b().max_path_len(hops).build().unwrap_err(),
            BuildError::InvalidMaxPathLen(hops)
        );
    }
    for bits in [2, 15, 17, 31, 33, 128, u32::MAX] {
        assert_eq!(
            b().fingerprint_bits(bits).build().unwrap_err(),
            BuildError::UnsupportedFingerprintBits(bits)
        );
    }
    for rate in [
        -0.0,
        f64::NEG_INFINITY,
        -f64::MIN_POSITIVE,
        1.0 + f64::EPSILON,
    ] {
        assert!(matches!(
            b().false_positive_rate(rate).build(),
            Err(BuildError::InvalidFalsePositiveRate(_))
        ));
    }
    // Tiny but valid rates need more than 32 bits.
    assert!(matches!(
        b().false_positive_rate(f64::MIN_POSITIVE).build(),
        Err(BuildError::FingerprintTooShort { bits: 32, .. })
    ));
    // Capacities past 2^32 buckets of 4 slots (or, on 32-bit targets, past
    // what the address space can hold) overflow, at any width.
    #[cfg(target_pointer_width = "64")]
    let capacities = [usize::MAX, usize::MAX / 2, 1 << 34];
    #[cfg(not(target_pointer_width = "64"))]
    let capacities = [usize::MAX, usize::MAX / 2];
    for bits in [8, 16, 32] {
        for &capacity in &capacities {
            assert!(
                matches!(
                    CuckooFilter::builder()
                        .capacity(capacity)
                        .fingerprint_bits(bits)
                        .build(),
                    Err(BuildError::CapacityOverflow { .. })
                ),
                "{bits} bits, capacity {capacity}"
            );
        }
    }
    // Every error explains itself in lowercase, without a trailing period.
    for e in [
        b().bucket_count(3).build().unwrap_err(),
        b().fingerprint_bits(3).build().unwrap_err(),
        b().false_positive_rate(2.0).build().unwrap_err(),
    ] {
        let msg = e.to_string();
        assert!(msg.starts_with(|c: char| c.is_lowercase()), "{msg}");
        assert!(!msg.ends_with('.'), "{msg}");
    }
}

#[test]
fn builder_accepts_the_extremes_of_every_range() {
    let f = CuckooFilter::builder().capacity(0).build().unwrap();
    assert_eq!(f.bucket_count(), 2);
    f.insert(&1u8).unwrap();
    assert!(f.contains(&1u8));
    let f = CuckooFilter::builder()
        .capacity(0)
        .bucket_count(2)
        .stripe_count(1 << 16)
        .max_path_len(1)
        .fingerprint_bits(32)
        .build()
        .unwrap();
    assert_eq!(f.stripe_count(), 1 << 16);
    assert_eq!(f.max_path_len(), 1);
    for rate in [0.999_999, 0.031_25, 1.9e-9] {
        assert!(CuckooFilter::builder()
            .capacity(10)
            .false_positive_rate(rate)
            .build()
            .is_ok());
    }
}

/// The panic message of `f`, which must panic.
fn panic_message(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("expected a panic");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn batch_lookups_with_mismatched_lengths_panic_with_the_documented_message() {
    let f = seeded(100);
    f.insert(&1u32).unwrap();
    let keys = [1u32, 2, 3];
    for out_len in [0usize, 1, 2, 4, 100] {
        let msg = panic_message(|| f.contains_batch(&keys, &mut vec![false; out_len]));
        assert!(
            msg.contains("contains_batch: keys and out differ in length"),
            "{msg}"
        );
        let msg = panic_message(|| f.contains_hash_batch(&[1, 2, 3], &mut vec![false; out_len]));
        assert!(
            msg.contains("contains_hash_batch: hashes and out differ in length"),
            "{msg}"
        );
    }
    let none: [u32; 0] = [];
    let msg = panic_message(|| f.contains_batch(&none, &mut [false]));
    assert!(msg.contains("differ in length"), "{msg}");
    // Equal lengths, including empty, are fine; the filter is unharmed.
    f.contains_batch(&none, &mut []);
    f.contains_hash_batch(&[], &mut []);
    let mut out = [false; 3];
    f.contains_batch(&keys, &mut out);
    assert_eq!(out, keys.map(|k| f.contains(&k)));
    assert!(out[0]);
    assert!(f.contains(&1u32));
    f.insert(&9u32).unwrap();
    assert_eq!(f.len(), 2);
}

#[test]
fn keys_of_every_size_and_shape() {
    let f = seeded(1000);
    // Around the hasher's 128-byte inline buffer, and far past it.
    let sizes = [
        0usize,
        1,
        7,
        8,
        9,
        15,
        16,
        17,
        63,
        64,
        119,
        120,
        127,
        128,
        129,
        240,
        241,
        1 << 20,
    ];
    let blobs: Vec<Vec<u8>> = sizes
        .iter()
        .map(|&n| (0..n).map(|i| (i * 131 + n) as u8).collect())
        .collect();
    for b in &blobs {
        f.insert(&b[..]).unwrap();
    }
    #[derive(Hash)]
    struct Unit;
    #[derive(Hash)]
    struct Empty {}
    f.insert(&()).unwrap();
    f.insert(&Unit).unwrap();
    f.insert(&Empty {}).unwrap();
    f.insert(&[0u8; 0]).unwrap();
    f.insert("").unwrap();
    f.insert(&String::new()).unwrap();
    f.insert(&Vec::<u64>::new()).unwrap();
    f.insert(&vec![u64::MAX; 100]).unwrap();
    f.insert(&(u128::MAX, i128::MIN, usize::MAX, isize::MIN))
        .unwrap();
    f.insert(&'\u{10FFFF}').unwrap();
    f.insert(&Some(Box::new([1u16; 3]))).unwrap();
    let n = blobs.len() + 11;
    assert_eq!(f.len(), n);

    for b in &blobs {
        assert!(f.contains(&b[..]), "{} bytes", b.len());
    }
    assert!(f.contains(&()));
    assert!(f.contains(&Unit));
    assert!(f.contains(&Empty {}));
    assert!(f.contains(&[0u8; 0]));
    assert!(f.contains(""));
    assert!(f.contains(&vec![u64::MAX; 100]));
    assert!(f.contains(&(u128::MAX, i128::MIN, usize::MAX, isize::MIN)));
    assert!(f.contains(&'\u{10FFFF}'));
    assert!(f.contains(&Some(Box::new([1u16; 3]))));

    // Batch lookups hash every size the same way as single lookups.
    let slices: Vec<&[u8]> = blobs.iter().map(|b| &b[..]).collect();
    let mut out = vec![false; slices.len()];
    f.contains_batch(&slices, &mut out);
    assert!(out.iter().all(|&x| x));

    // And the filter with all of them persists.
    let g = CuckooFilter::from_bytes(&f.to_bytes()).unwrap();
    assert!(blobs.iter().all(|b| g.contains(&b[..])));
    assert!(g.contains(&Unit));

    for b in &blobs {
        assert!(f.remove(&b[..]));
    }
    assert_eq!(f.len(), n - blobs.len());
    assert_eq!(f.occupied_slots(), f.len());
}

#[test]
fn extreme_precomputed_hashes() {
    for bits in [8, 16, 32] {
        let f = CuckooFilter::builder()
            .capacity(100)
            .fingerprint_bits(bits)
            .build()
            .unwrap();
        // Low bits zero (fingerprint would be the empty marker: mapped to
        // 1), all ones, and the top and bottom of the bucket range.
        let hashes = [
            0u64,
            u64::MAX,
            1 << 63,
            (1 << 32) - 1,
            0xFFFF_FFFF_0000_0000,
            1,
        ];
        for &h in &hashes {
            f.insert_hash(h).unwrap();
        }
        for &h in &hashes {
            assert!(f.contains_hash(h), "{bits}: {h:#x}");
        }
        for &h in &hashes {
            assert!(f.remove_hash(h), "{bits}: {h:#x}");
        }
        assert!(f.is_empty());
        assert_eq!(f.occupied_slots(), 0);
    }
}

#[test]
fn removing_and_clearing_what_is_not_there() {
    let f = seeded(10);
    assert!(!f.remove("never inserted"));
    assert!(!f.remove(&[] as &[u8]));
    f.clear();
    f.clear();
    assert!(f.is_empty());
    assert!(!f.contains(""));
    // A full tiny filter refuses cleanly and loses nothing.
    let f = CuckooFilter::builder()
        .capacity(0)
        .bucket_count(2)
        .fingerprint_bits(32)
        .seed(1)
        .build()
        .unwrap();
    let mut stored = Vec::new();
    for k in 0..100u32 {
        match f.insert(&k) {
            Ok(()) => stored.push(k),
            Err(InsertError::Full) => break,
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(stored.len(), 8, "two buckets of four slots");
    assert_eq!(f.insert(&1000u32), Err(InsertError::Full));
    assert!(stored.iter().all(|k| f.contains(k)));
    assert_eq!(f.len(), 8);
}
