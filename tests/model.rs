//! Property test: the filter behaves exactly like a multiset of signatures.
//!
//! Two keys with the same fingerprint and the same bucket pair (their
//! *signature*) are indistinguishable to any cuckoo filter, so the exact
//! model of the filter is a multiset of signatures: `contains` is "count >
//! 0", `remove` decrements, `insert` increments up to 8 copies. Small tables
//! and 8-bit fingerprints make collisions, duplicates, displacements and
//! `Full` common, so every branch is exercised.

use concurrent_cuckoo::{CuckooFilter, InsertError};
use proptest::prelude::*;
use std::collections::HashMap;
use std::hash::BuildHasher;

#[derive(Clone, Debug)]
enum Op {
    Insert(u16),
    InsertUnique(u16),
    Remove(u16),
    Contains(u16),
    Batch(Vec<u16>),
    InsertBatch(Vec<u16>),
    InsertUniqueBatch(Vec<u16>),
    RemoveBatch(Vec<u16>),
    Count(u16),
}

fn op(universe: u16) -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..universe).prop_map(Op::Insert),
        2 => (0..universe).prop_map(Op::InsertUnique),
        3 => (0..universe).prop_map(Op::Remove),
        2 => (0..universe).prop_map(Op::Contains),
        1 => proptest::collection::vec(0..universe, 0..40).prop_map(Op::Batch),
        2 => proptest::collection::vec(0..universe, 0..40).prop_map(Op::InsertBatch),
        2 => proptest::collection::vec(0..universe, 0..40).prop_map(Op::InsertUniqueBatch),
        1 => proptest::collection::vec(0..universe, 0..40).prop_map(Op::RemoveBatch),
        1 => (0..universe).prop_map(Op::Count),
    ]
}

type Signature = (u64, usize, usize);

fn signature(f: &CuckooFilter, key: u16) -> Signature {
    let (fp, a, b) = f.signature_of_hash(f.hasher().hash_one(key));
    (fp, a.min(b), a.max(b))
}

fn run(
    bits: u32,
    buckets: usize,
    max_path: usize,
    seed: u64,
    ops: &[Op],
) -> Result<(), TestCaseError> {
    let f = CuckooFilter::builder()
        .capacity(0)
        .bucket_count(buckets)
        .stripe_count(2)
        .fingerprint_bits(bits)
        .max_path_len(max_path)
        .seed(seed)
        .build()
        .unwrap();
    let mut model: HashMap<Signature, usize> = HashMap::new();
    let mut total = 0usize;
    for op in ops {
        match op {
            Op::Insert(k) => {
                let count = model.entry(signature(&f, *k)).or_default();
                match f.insert(k) {
                    Ok(()) => {
                        prop_assert!(*count < 8, "accepted a 9th copy");
                        *count += 1;
                        total += 1;
                    }
                    Err(InsertError::TooManyDuplicates) => prop_assert_eq!(*count, 8),
                    Err(InsertError::Full) => prop_assert!(*count < 8),
                    Err(e) => return Err(TestCaseError::fail(format!("unexpected {e}"))),
                }
            }
            Op::InsertUnique(k) => {
                let count = model.entry(signature(&f, *k)).or_default();
                match f.insert_unique(k) {
                    Ok(true) => {
                        prop_assert_eq!(*count, 0);
                        *count += 1;
                        total += 1;
                    }
                    Ok(false) => prop_assert!(*count > 0),
                    Err(InsertError::Full) => prop_assert_eq!(*count, 0),
                    Err(e) => return Err(TestCaseError::fail(format!("unexpected {e}"))),
                }
            }
            Op::Remove(k) => {
                let count = model.entry(signature(&f, *k)).or_default();
                prop_assert_eq!(f.remove(k), *count > 0);
                if *count > 0 {
                    *count -= 1;
                    total -= 1;
                }
            }
            Op::Contains(k) => {
                let want = model.get(&signature(&f, *k)).is_some_and(|&c| c > 0);
                prop_assert_eq!(f.contains(k), want);
            }
            Op::Batch(keys) => {
                let mut out = vec![false; keys.len()];
                f.contains_batch(keys, &mut out);
                for (k, got) in keys.iter().zip(out) {
                    prop_assert_eq!(got, model.get(&signature(&f, *k)).is_some_and(|&c| c > 0));
                }
            }
            Op::InsertBatch(keys) => {
                // Exactly the same inserts one at a time, stopping at the
                // first refused key: the keys before it went in (each with
                // room for another copy), it and the rest did not.
                let result = f.insert_batch(keys);
                let inserted = result.as_ref().err().map_or(keys.len(), |e| e.inserted());
                for k in &keys[..inserted] {
                    let count = model.entry(signature(&f, *k)).or_default();
                    prop_assert!(*count < 8, "accepted a 9th copy in a batch");
                    *count += 1;
                    total += 1;
                }
                if let Err(e) = result {
                    let count = model
                        .get(&signature(&f, keys[inserted]))
                        .copied()
                        .unwrap_or(0);
                    match e.error() {
                        InsertError::TooManyDuplicates => prop_assert_eq!(count, 8),
                        InsertError::Full => prop_assert!(count < 8),
                        other => return Err(TestCaseError::fail(format!("unexpected {other}"))),
                    }
                }
            }
            Op::InsertUniqueBatch(keys) => {
                // As `insert_unique` one key at a time: a key whose
                // signature is present (an earlier key of the batch
                // included) is not stored again; the batch stops at the
                // first key refused, whose `new` entry is left alone.
                let mut new = vec![true; keys.len()];
                let result = f.insert_unique_batch(keys, &mut new);
                let inserted = result.as_ref().err().map_or(keys.len(), |e| e.inserted());
                for (k, &stored) in keys[..inserted].iter().zip(&new) {
                    let count = model.entry(signature(&f, *k)).or_default();
                    prop_assert_eq!(stored, *count == 0);
                    if stored {
                        *count += 1;
                        total += 1;
                    }
                }
                if let Err(e) = result {
                    prop_assert!(new[inserted], "a refused key's answer was written");
                    let count = model
                        .get(&signature(&f, keys[inserted]))
                        .copied()
                        .unwrap_or(0);
                    prop_assert_eq!(*e.error(), InsertError::Full);
                    prop_assert_eq!(count, 0);
                }
            }
            Op::RemoveBatch(keys) => {
                let mut removed = vec![false; keys.len()];
                f.remove_batch(keys, &mut removed);
                for (k, got) in keys.iter().zip(removed) {
                    let count = model.entry(signature(&f, *k)).or_default();
                    prop_assert_eq!(got, *count > 0);
                    if *count > 0 {
                        *count -= 1;
                        total -= 1;
                    }
                }
            }
            Op::Count(k) => {
                let want = model.get(&signature(&f, *k)).copied().unwrap_or(0);
                prop_assert_eq!(f.count(k), want);
            }
        }
        prop_assert_eq!(f.len(), total);
        let stats = f.stats();
        prop_assert_eq!(stats.len, total);
        prop_assert_eq!(stats.inserts - stats.removes, total as u64);
        prop_assert_eq!(stats.path_lengths.iter().sum::<u64>(), stats.inserts);
    }
    prop_assert_eq!(f.occupied_slots(), total);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn tiny_tables_with_8_bit_fingerprints(
        buckets in (1usize..=8).prop_map(|b| b * 2),
        max_path in 1usize..=5,
        seed in any::<u64>(),
        ops in proptest::collection::vec(op(48), 1..300),
    ) {
        run(8, buckets, max_path, seed, &ops)?;
    }

    #[test]
    fn small_tables_with_16_bit_fingerprints(
        buckets in (1usize..=32).prop_map(|b| b * 2),
        seed in any::<u64>(),
        ops in proptest::collection::vec(op(400), 1..400),
    ) {
        run(16, buckets, 5, seed, &ops)?;
    }

    #[test]
    fn duplicates_with_32_bit_fingerprints(
        seed in any::<u64>(),
        ops in proptest::collection::vec(op(6), 1..200),
    ) {
        run(32, 64, 5, seed, &ops)?;
    }
}
