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
    // Around the pipeline's stages of 32 (the next stage is located while
    // the current one is probed) and its longer runs.
    for len in [
        0usize,
        1,
        7,
        8,
        9,
        16,
        31,
        32,
        33,
        63,
        64,
        65,
        95,
        96,
        97,
        1000,
        queries.len(),
    ] {
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
            Err(BuildError::InvalidMaxPathLen(_))
        ));
    }
    assert!(matches!(
        b().bucket_count(3).build(),
        Err(BuildError::InvalidBucketCount(3))
    ));
    assert!(matches!(
        b().stripe_count(3).build(),
        Err(BuildError::InvalidStripeCount(3))
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

#[test]
fn insert_batch_stops_at_the_ninth_duplicate() {
    let f = seeded(1000);
    let mut keys = vec![7u64; 12];
    keys.push(8);
    let err = f.insert_batch(&keys).unwrap_err();
    assert_eq!(err.inserted(), 8);
    assert_eq!(err.error(), &InsertError::TooManyDuplicates);
    assert_eq!(f.count(&7u64), 8);
    assert!(
        !f.contains(&8u64),
        "nothing after the refused key is inserted"
    );
    assert_eq!(f.len(), 8);
    let stats = f.stats();
    assert_eq!((stats.inserts, stats.duplicate_refusals), (8, 1));
    // The error is a proper error whose source is the insert error.
    let source = std::error::Error::source(&err).unwrap();
    assert_eq!(
        source.downcast_ref::<InsertError>(),
        Some(&InsertError::TooManyDuplicates)
    );
    assert_eq!(
        err.to_string(),
        format!(
            "batch insert stopped after 8 keys: {}",
            InsertError::TooManyDuplicates
        )
    );
}

#[test]
fn insert_batch_stops_at_full_and_leaves_the_rest_out() {
    // One bucket pair, eight slots: the ninth distinct key is refused.
    let f = CuckooFilter::builder()
        .capacity(0)
        .bucket_count(2)
        .seed(3)
        .build()
        .unwrap();
    let keys: Vec<u64> = (0..20).collect();
    let err = f.insert_batch(&keys).unwrap_err();
    assert_eq!(err.inserted(), 8);
    assert_eq!(err.error(), &InsertError::Full);
    assert!(keys[..8].iter().all(|k| f.contains(k)));
    assert_eq!(f.len(), 8);
    assert_eq!(f.occupied_slots(), 8);
    assert_eq!(f.stats().failed_inserts, 1);
    // An empty batch is fine, and a full filter refuses its first key.
    f.insert_batch::<u64>(&[]).unwrap();
    assert_eq!(f.insert_hash_batch(&[1, 2]).unwrap_err().inserted(), 0);
}

/// Same seed, same operations: the batch filter must be byte-identical to
/// the one built with single calls, up to full and with duplicates. Small
/// tables (at most 64 stripes) lock the whole table per block of a batch;
/// larger ones lock each key's pair and search paths as single calls do.
#[test]
fn batches_place_exactly_as_the_same_calls_one_at_a_time() {
    batches_match_single_calls(10_000, 1000, 31);
    batches_match_single_calls(300_000, 20_000, 32);
}

fn batches_match_single_calls(capacity: usize, max_batch: usize, seed: u64) {
    let mut rng = Rng(seed);
    let build = || {
        CuckooFilter::builder()
            .capacity(capacity)
            .fingerprint_bits(8)
            .seed(77)
            .build()
            .unwrap()
    };
    let (batched, single) = (build(), build());
    let mut stored: Vec<u64> = Vec::new();
    let mut saw_full = false;
    let mut saw_repeat = false;
    for round in 0..50 {
        let keys: Vec<u64> = (0..rng.below(max_batch))
            .map(|_| {
                if !stored.is_empty() && rng.below(10) == 0 {
                    stored[rng.below(stored.len())]
                } else {
                    rng.next()
                }
            })
            .collect();
        // Odd rounds store keys as a set (`insert_unique_batch` against
        // `insert_unique` one at a time); even rounds as a multiset.
        let unique = round % 2 == 1;
        let mut new_batched = vec![false; keys.len()];
        let mut new_single = vec![false; keys.len()];
        let a = if unique {
            batched.insert_unique_batch(&keys, &mut new_batched)
        } else {
            batched.insert_batch(&keys)
        };
        let mut b = Ok(());
        for (i, k) in keys.iter().enumerate() {
            let done = if unique {
                single.insert_unique(k).map(|new| new_single[i] = new)
            } else {
                single.insert(k)
            };
            if let Err(e) = done {
                b = Err((i, e));
                break;
            }
        }
        assert_eq!(
            new_batched, new_single,
            "round {round}: which keys were new"
        );
        saw_repeat |= unique && new_batched.contains(&false);
        let a = a.map_err(|e| (e.inserted(), *e.error()));
        assert_eq!(
            a, b,
            "round {round}: batch and single inserts stopped differently"
        );
        let inserted = a.err().map_or(keys.len(), |(i, e)| {
            saw_full |= e == InsertError::Full;
            i
        });
        stored.extend_from_slice(&keys[..inserted]);
        let victims: Vec<u64> = (0..rng.below(300))
            .map(|_| stored[rng.below(stored.len())])
            .collect();
        let mut removed = vec![false; victims.len()];
        batched.remove_batch(&victims, &mut removed);
        let one_by_one: Vec<bool> = victims.iter().map(|k| single.remove(k)).collect();
        assert_eq!(removed, one_by_one, "round {round}");
        assert_eq!(batched.to_bytes(), single.to_bytes(), "round {round}");
    }
    assert!(saw_full, "the test must fill the table until a batch stops");
    assert!(
        saw_repeat,
        "a set-style batch must meet keys already present"
    );
    let stripes = batched.stripe_count();
    assert!(
        (capacity < 50_000) == (stripes <= 64),
        "{capacity}: {stripes} stripes: both locking modes must be covered"
    );
    assert_eq!(batched.stats().inserts, single.stats().inserts);
}

#[test]
fn remove_batch_with_mismatched_lengths_panics_before_touching_the_filter() {
    let f = seeded(100);
    f.insert(&1u8).unwrap();
    for (keys, out_len, msg) in [
        (
            &[1u8, 2][..],
            1usize,
            "remove_batch: keys and removed differ in length",
        ),
        (
            &[][..],
            3,
            "remove_batch: keys and removed differ in length",
        ),
    ] {
        let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            f.remove_batch(keys, &mut vec![false; out_len])
        }))
        .unwrap_err();
        let text = err.downcast_ref::<String>().unwrap();
        assert!(text.contains(msg), "{text}");
    }
    let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        f.remove_hash_batch(&[1], &mut [])
    }))
    .unwrap_err();
    let text = err.downcast_ref::<String>().unwrap();
    assert!(
        text.contains("remove_hash_batch: hashes and removed differ in length"),
        "{text}"
    );
    assert!(f.contains(&1u8) && f.len() == 1, "nothing was removed");
}

#[test]
fn insert_unique_batch_with_mismatched_lengths_panics_before_touching_the_filter() {
    let f = seeded(100);
    for (call, msg) in [
        (
            Box::new(|f: &CuckooFilter| f.insert_unique_batch(&[1u8, 2], &mut [false]))
                as Box<dyn Fn(&CuckooFilter) -> Result<(), concurrent_cuckoo::BatchInsertError>>,
            "insert_unique_batch: keys and new differ in length",
        ),
        (
            Box::new(|f: &CuckooFilter| f.insert_unique_hash_batch(&[], &mut [false; 2])),
            "insert_unique_hash_batch: hashes and new differ in length",
        ),
    ] {
        let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| call(&f))).unwrap_err();
        let text = err.downcast_ref::<String>().unwrap();
        assert!(text.contains(msg), "{text}");
    }
    assert!(f.is_empty(), "nothing was inserted");
}

#[test]
fn count_tracks_copies() {
    let f = seeded(1000);
    assert_eq!(f.count("k"), 0);
    for n in 1..=8 {
        f.insert("k").unwrap();
        assert_eq!(f.count("k"), n);
    }
    assert_eq!(f.insert("k"), Err(InsertError::TooManyDuplicates));
    assert_eq!(f.count("k"), 8);
    assert!(f.remove("k"));
    assert_eq!(f.count("k"), 7);
    let h = f.hasher().hash_one("k");
    assert_eq!(f.count_hash(h), 7);
    assert!(f.contains_hash(h), "keyed and hashed calls agree");
}

#[test]
fn stats_add_up() {
    let f = CuckooFilter::builder()
        .capacity(0)
        .bucket_count(64)
        .seed(5)
        .build()
        .unwrap();
    let mut rng = Rng(6);
    let (mut inserted, mut full) = (Vec::new(), 0);
    while full < 10 {
        let k = rng.next();
        match f.insert(&k) {
            Ok(()) => inserted.push(k),
            Err(InsertError::Full) => full += 1,
            Err(e) => panic!("{e}"),
        }
    }
    for k in inserted.iter().step_by(3) {
        assert!(f.remove(k));
    }
    let s = f.stats();
    assert_eq!(s.len, f.len());
    assert_eq!(s.inserts, inserted.len() as u64);
    assert_eq!(s.removes, inserted.len().div_ceil(3) as u64);
    assert_eq!(s.inserts - s.removes, s.len as u64);
    assert_eq!(s.failed_inserts, 10);
    assert_eq!(s.path_lengths.iter().sum::<u64>(), s.inserts);
    assert!(
        s.path_lengths[1..].iter().sum::<u64>() > 0,
        "near full, some inserts used paths"
    );
    assert!(
        s.relocations
            >= s.path_lengths
                .iter()
                .enumerate()
                .map(|(h, n)| h as u64 * n)
                .sum::<u64>()
    );
    assert_eq!(
        (s.capacity, s.bucket_count, s.fingerprint_bits),
        (256, 64, 16)
    );
    assert_eq!(s.memory_usage, f.memory_usage());
    assert!((s.load_factor - s.len as f64 / 256.0).abs() < 1e-12);
    // clear() empties the table but keeps the history.
    f.clear();
    let after = f.stats();
    assert_eq!((after.len, after.inserts), (0, s.inserts));
}

#[test]
fn debug_output_never_shows_the_seed() {
    let seed = 0x0123_4567_89AB_CDEFu64;
    let builder = CuckooFilter::builder().capacity(10).seed(seed);
    let filter = builder.clone().build().unwrap();
    for text in [
        format!("{builder:?}"),
        format!("{filter:?}"),
        format!("{:?}", DefaultHashBuilder::with_seed(seed)),
    ] {
        assert!(!text.contains(&seed.to_string()), "{text}");
        assert!(!text.to_lowercase().contains("123456789abcdef"), "{text}");
    }
    assert!(format!("{builder:?}").contains("seed: <hidden>"));
}

/// Code generic over [`Filter`]: the same function over every filter type
/// answers alike for the keys each holds.
mod generic {
    use concurrent_cuckoo::{
        CuckooFilter, Filter, FrozenFilter, Removal, ScalableCuckooFilter, WindowedCuckooFilter,
    };

    /// Found keys among `keys`, by single and batch lookups (which must
    /// agree), with the trait's sizes checked on the way.
    fn found<F: Filter>(filter: &F, keys: &[u64]) -> usize {
        let mut out = vec![false; keys.len()];
        filter.contains_batch(keys, &mut out);
        let mut by_hash = vec![false; keys.len()];
        let hashes: Vec<u64> = (0..keys.len() as u64).collect();
        filter.contains_hash_batch(&hashes, &mut by_hash);
        for (i, (k, &b)) in keys.iter().zip(&out).enumerate() {
            assert_eq!(filter.contains(k), b, "key {k}");
            assert_eq!(filter.contains_hash(hashes[i]), by_hash[i]);
        }
        assert!(filter.false_positive_bound() > 0.0 && filter.false_positive_bound() < 0.01);
        assert!(filter.memory_usage() > 0);
        assert_eq!(filter.is_empty(), filter.len() == 0);
        out.iter().filter(|&&f| f).count()
    }

    #[test]
    fn one_generic_function_over_every_filter() {
        let keys: Vec<u64> = (0..500).collect();
        let fixed = CuckooFilter::builder()
            .capacity(1000)
            .seed(3)
            .build()
            .unwrap();
        fixed.insert_batch(&keys).unwrap();
        let mut growing: ScalableCuckooFilter = keys.iter().copied().collect();
        growing.extend(500..600u64);
        let windowed = WindowedCuckooFilter::builder()
            .capacity(1000)
            .seed(3)
            .build()
            .unwrap();
        windowed.insert_batch(&keys).unwrap();
        let frozen = FrozenFilter::from_bytes(fixed.to_bytes()).unwrap();
        assert_eq!(found(&fixed, &keys), 500);
        assert_eq!(found(&growing, &keys), 500);
        assert_eq!(found(&windowed, &keys), 500);
        assert_eq!(found(&frozen, &keys), 500);
        assert_eq!(Filter::len(&growing), 600);
        assert_eq!(Filter::len(&frozen), 500);
    }

    #[test]
    fn clones_are_copies_taken_at_one_moment() {
        let fixed = CuckooFilter::with_capacity(1000);
        fixed.insert_batch(&[1u64, 2, 3]).unwrap();
        let fixed_copy = fixed.clone();
        assert!(fixed.remove(&1u64));
        assert!(fixed_copy.contains(&1u64) && !fixed.contains(&1u64));
        assert_eq!(
            (fixed_copy.len(), fixed_copy.capacity()),
            (3, fixed.capacity())
        );
        assert_eq!(fixed_copy.to_bytes(), {
            fixed.insert(&1u64).unwrap();
            fixed.to_bytes()
        });

        let growing = ScalableCuckooFilter::with_capacity(10);
        growing
            .insert_batch(&(0..2000u64).collect::<Vec<_>>())
            .unwrap();
        let growing_copy = growing.clone();
        assert_eq!(growing_copy.to_bytes(), growing.to_bytes());
        assert_eq!(growing.remove(&5u64), Removal::Removed);
        assert!(growing_copy.contains(&5u64));
        assert_eq!(growing_copy.len(), growing.len() + 1);
        growing_copy.insert(&5000u64).unwrap(); // the copy takes writes alone
        assert_eq!(growing_copy.len(), growing.len() + 2);

        let windowed = WindowedCuckooFilter::builder()
            .capacity(100)
            .generations(2)
            .build()
            .unwrap();
        windowed.insert(&7u64).unwrap();
        windowed.advance();
        let windowed_copy = windowed.clone();
        assert_eq!(windowed_copy.to_bytes(), windowed.to_bytes());
        windowed_copy.advance();
        assert!(windowed.contains(&7u64) && !windowed_copy.contains(&7u64));
    }

    #[test]
    fn removes_say_why_they_did_not_remove() {
        let f = ScalableCuckooFilter::with_capacity(100);
        f.insert(&1u64).unwrap();
        assert_eq!(f.remove(&1u64), Removal::Removed);
        assert_eq!(f.remove(&1u64), Removal::NotFound);
        assert!(!bool::from(f.remove(&2u64)));
    }

    #[test]
    fn try_with_capacity_errs_where_with_capacity_panics() {
        assert!(CuckooFilter::try_with_capacity(usize::MAX).is_err());
        assert!(ScalableCuckooFilter::try_with_capacity(usize::MAX).is_err());
        assert!(CuckooFilter::try_with_capacity(10).is_ok());
    }
}

/// Keys are what their `Hash` impls write (README, Semantics): a `[u8]`
/// writes its length (widened to 8 bytes) then its bytes, so the empty
/// slice writes what `0u64` writes, and the two are one key (as in C,
/// `ccf` and Python, which hash byte keys as `&[u8]`).
#[test]
fn the_empty_byte_key_and_zero_are_one_key() {
    let f = CuckooFilter::builder()
        .capacity(1000)
        .seed(3)
        .build()
        .unwrap();
    let empty: &[u8] = &[];
    assert_eq!(f.hasher().hash_one(empty), f.hasher().hash_one(0u64));
    f.insert(empty).unwrap();
    assert!(f.contains(&0u64));
    assert!(!f.contains(&1u64) && !f.contains(&[0u8][..]));
}
