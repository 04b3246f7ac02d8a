//! Arbitrary operation sequences on a growing filter against an exact
//! model. Every level has 32-bit fingerprints (a bound of 1e-7) and the
//! keys are the ones of `0..600` whose 32-bit fingerprints are all
//! distinct under the input's seed, so no two keys collide in any level
//! and the filter must behave exactly as a multiset of keys (its levels
//! nest, so no remove of a present key is refused, even of a key with
//! copies in several levels): no false
//! negatives, no false positives, exact counts and `len`, batch writes
//! equal to the same calls one at a time, refused inserts that change
//! nothing, and, through growth, retirement of emptied levels, `clear`
//! and save/load cycles (which drop retired levels), the same answers.
#![no_main]

use concurrent_cuckoo::{CuckooFilter, DefaultHashBuilder, InsertError, ScalableCuckooFilter};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;

#[derive(Arbitrary, Debug)]
enum Op {
    Insert(u16),
    InsertUnique(u16),
    Remove(u16),
    Contains(u16),
    Count(u16),
    InsertBatch(Vec<u16>),
    ContainsBatch(Vec<u16>),
    RemoveBatch(Vec<u16>),
    /// Remove every copy the model holds: retires every level but the newest.
    RemoveAll,
    Clear,
    /// Replace the filter by the decoding of its encoding.
    RoundTrip,
    /// The same through `read_from_limited`, bounded by the exact length.
    RoundTripStream,
}

#[derive(Arbitrary, Debug)]
struct Input {
    initial: u8,
    growth: u8,
    max_levels: u8,
    seed: u64,
    ops: Vec<Op>,
}

/// Checks a remove's answer against the model's count of the key's copies.
/// Keys never collide, so a remove may be refused only when the key has
/// copies in two levels (at least two copies); a key stored once is always
/// removed, a key without copies never.
fn model_remove(removed: bool, count: &mut usize) {
    if removed {
        assert!(*count > 0, "removed a key the model does not hold");
        *count -= 1;
    } else {
        assert_eq!(*count, 0, "refused the remove of a key it holds");
    }
}

/// Keys of `0..600` whose 32-bit fingerprints under `seed` are distinct.
fn distinct_keys(seed: u64) -> Vec<u64> {
    let probe = CuckooFilter::builder()
        .capacity(10)
        .fingerprint_bits(32)
        .seed(seed)
        .build()
        .unwrap();
    let hasher = DefaultHashBuilder::with_seed(seed);
    let mut seen = HashSet::new();
    (0..600u64)
        .filter(|k| seen.insert(probe.signature_of_hash(hasher.hash_one(k)).0))
        .collect()
}

fuzz_target!(|input: Input| {
    let max_levels = 1 + usize::from(input.max_levels % 12);
    let mut f = ScalableCuckooFilter::builder()
        .capacity(1 + usize::from(input.initial % 64))
        .growth_factor(2 + usize::from(input.growth % 3))
        .false_positive_rate(1e-7)
        .max_levels(max_levels)
        .seed(input.seed)
        .build()
        .unwrap();
    let valid = distinct_keys(input.seed);
    let key = |k: &u16| valid[usize::from(*k) % valid.len()];
    let mut model: HashMap<u64, usize> = HashMap::new();
    // An insert refused with `Full` (every level in use and full) or
    // `TooManyDuplicates` (8 copies in the newest level's pair) changes
    // nothing; a key with fewer than 8 copies is refused only as `Full`.
    let refused = |e: &InsertError, count: usize| match e {
        InsertError::Full => {}
        InsertError::TooManyDuplicates => assert!(count >= 8, "refused copy {count}"),
        e => panic!("unexpected {e}"),
    };
    for op in &input.ops {
        match op {
            Op::Insert(k) => {
                let k = key(k);
                let count = model.entry(k).or_default();
                let len = f.len();
                match f.insert(&k) {
                    Ok(()) => *count += 1,
                    Err(e) => {
                        refused(&e, *count);
                        assert_eq!(f.len(), len, "a refused insert changed the filter");
                    }
                }
            }
            Op::InsertUnique(k) => {
                let k = key(k);
                let count = model.entry(k).or_default();
                match f.insert_unique(&k) {
                    Ok(added) => {
                        assert_eq!(added, *count == 0);
                        *count += usize::from(added);
                    }
                    Err(e) => {
                        assert_eq!(e, InsertError::Full);
                        assert_eq!(*count, 0);
                    }
                }
            }
            Op::Remove(k) => {
                let k = key(k);
                model_remove(f.remove(&k).is_removed(), model.entry(k).or_default());
            }
            Op::Contains(k) => {
                let k = key(k);
                assert_eq!(f.contains(&k), model.get(&k).copied().unwrap_or(0) > 0);
            }
            Op::Count(k) => {
                let k = key(k);
                assert_eq!(f.count(&k), model.get(&k).copied().unwrap_or(0));
            }
            Op::InsertBatch(keys) => {
                let keys: Vec<u64> = keys.iter().map(key).collect();
                let result = f.insert_batch(&keys);
                let inserted = result
                    .as_ref()
                    .map_or_else(|e| e.inserted(), |()| keys.len());
                for k in &keys[..inserted] {
                    *model.entry(*k).or_default() += 1;
                }
                if let Err(e) = result {
                    refused(e.error(), model.get(&keys[inserted]).copied().unwrap_or(0));
                }
            }
            Op::ContainsBatch(keys) => {
                let keys: Vec<u64> = keys.iter().map(key).collect();
                let mut out = vec![false; keys.len()];
                f.contains_batch(&keys, &mut out);
                for (k, got) in keys.iter().zip(out) {
                    assert_eq!(got, model.get(k).copied().unwrap_or(0) > 0);
                }
            }
            Op::RemoveBatch(keys) => {
                let keys: Vec<u64> = keys.iter().map(key).collect();
                let mut removed = vec![concurrent_cuckoo::Removal::Removed; keys.len()];
                f.remove_batch(&keys, &mut removed);
                for (k, got) in keys.iter().zip(removed) {
                    model_remove(got.is_removed(), model.entry(*k).or_default());
                }
            }
            Op::RemoveAll => {
                for (k, count) in model.iter_mut() {
                    while *count > 0 {
                        model_remove(f.remove(k).is_removed(), count);
                    }
                }
                assert_eq!(f.levels(), 1, "only the newest level is left");
            }
            Op::Clear => {
                f.clear();
                model.clear();
                assert_eq!(f.levels(), 1);
                assert!(f.capacity() > 0, "a cleared filter has room");
            }
            Op::RoundTrip => {
                let bytes = f.to_bytes();
                let g = ScalableCuckooFilter::from_bytes(&bytes).expect("own encoding decodes");
                assert_eq!(g.to_bytes(), bytes, "re-encoding is byte-identical");
                f = g;
            }
            Op::RoundTripStream => {
                let bytes = f.to_bytes();
                let n = bytes.len() as u64;
                assert!(ScalableCuckooFilter::read_from_limited(&bytes[..], n - 1).is_err());
                f = ScalableCuckooFilter::read_from_limited(&bytes[..], n)
                    .expect("own encoding decodes within its length");
            }
        }
        assert_eq!(f.len(), model.values().sum::<usize>());
        assert!(f.levels() >= 1 && f.levels() <= max_levels);
        assert!(f.false_positive_bound() <= 1e-7);
    }
    for (k, &count) in &model {
        assert_eq!(f.count(k), count);
    }
});
