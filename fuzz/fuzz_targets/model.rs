//! Arbitrary operation sequences against an exact model: the filter must
//! behave as a multiset of *signatures* (fingerprint and bucket pair; two
//! keys with the same signature are indistinguishable to any cuckoo
//! filter). Checks no false negatives, no false positives beyond the
//! model's, exact counts, batch writes equal to the same calls one at a
//! time, the 8-copy limit, `Full` leaving the filter unchanged, an exact
//! `len` after every operation, and that persistence round trips mid-run
//! keep all of it.
#![no_main]

use concurrent_cuckoo::{CuckooFilter, InsertError};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};

#[derive(Arbitrary, Debug)]
enum Key {
    Small(u8),
    Int(u16),
    Bytes(Vec<u8>),
}

#[derive(Arbitrary, Debug)]
enum Op {
    Insert(Key),
    InsertUnique(Key),
    Remove(Key),
    Contains(Key),
    Batch(Vec<u16>),
    InsertBatch(Vec<u16>),
    RemoveBatch(Vec<u16>),
    Count(Key),
    /// Replace the filter by the decoding of its encoding.
    RoundTrip,
    Clear,
}

#[derive(Arbitrary, Debug)]
struct Input {
    bits: u8,
    buckets: u8,
    max_path: u8,
    stripes: u8,
    seed: u64,
    ops: Vec<Op>,
}

type Signature = (u64, usize, usize);

fn signature<K: Hash + ?Sized>(f: &CuckooFilter, key: &K) -> Signature {
    let (fp, a, b) = f.signature_of_hash(f.hasher().hash_one(key));
    (fp, a.min(b), a.max(b))
}

/// Runs `$body` with `$k` bound to the key as a `&impl Hash`.
macro_rules! with_key {
    ($key:expr, $k:ident => $body:expr) => {
        match $key {
            Key::Small(v) => {
                let $k = v;
                $body
            }
            Key::Int(v) => {
                let $k = v;
                $body
            }
            Key::Bytes(v) => {
                let $k = &v[..];
                $body
            }
        }
    };
}

fuzz_target!(|input: Input| {
    let bits = [8, 16, 32][usize::from(input.bits % 3)];
    let mut f = CuckooFilter::builder()
        .capacity(0)
        .bucket_count(2 * (1 + usize::from(input.buckets % 32)))
        .fingerprint_bits(bits)
        .max_path_len(1 + usize::from(input.max_path % 5))
        .stripe_count(1 << (input.stripes % 3))
        .seed(input.seed)
        .build()
        .unwrap();
    let mut model: HashMap<Signature, usize> = HashMap::new();
    let mut total = 0usize;
    for op in &input.ops {
        match op {
            Op::Insert(key) => with_key!(key, k => {
                let count = model.entry(signature(&f, k)).or_default();
                match f.insert(k) {
                    Ok(()) => {
                        assert!(*count < 8, "accepted a 9th copy");
                        *count += 1;
                        total += 1;
                    }
                    Err(InsertError::TooManyDuplicates) => assert_eq!(*count, 8),
                    Err(InsertError::Full) => assert!(*count < 8),
                    Err(e) => panic!("unexpected {e}"),
                }
            }),
            Op::InsertUnique(key) => with_key!(key, k => {
                let count = model.entry(signature(&f, k)).or_default();
                match f.insert_unique(k) {
                    Ok(true) => {
                        assert_eq!(*count, 0);
                        *count += 1;
                        total += 1;
                    }
                    Ok(false) => assert!(*count > 0),
                    Err(InsertError::Full) => assert_eq!(*count, 0),
                    Err(e) => panic!("unexpected {e}"),
                }
            }),
            Op::Remove(key) => with_key!(key, k => {
                let count = model.entry(signature(&f, k)).or_default();
                assert_eq!(f.remove(k), *count > 0);
                if *count > 0 {
                    *count -= 1;
                    total -= 1;
                }
            }),
            Op::Contains(key) => with_key!(key, k => {
                let want = model.get(&signature(&f, k)).is_some_and(|&c| c > 0);
                assert_eq!(f.contains(k), want);
            }),
            Op::Batch(keys) => {
                let mut out = vec![false; keys.len()];
                f.contains_batch(keys, &mut out);
                for (k, got) in keys.iter().zip(out) {
                    assert_eq!(got, model.get(&signature(&f, k)).is_some_and(|&c| c > 0));
                }
            }
            Op::InsertBatch(keys) => {
                // As the same inserts one at a time, stopping at the first
                // refused key.
                let result = f.insert_batch(keys);
                let inserted = result
                    .as_ref()
                    .map_or_else(|e| e.inserted(), |()| keys.len());
                for k in &keys[..inserted] {
                    let count = model.entry(signature(&f, k)).or_default();
                    assert!(*count < 8, "a batch accepted a 9th copy");
                    *count += 1;
                    total += 1;
                }
                if let Err(e) = result {
                    let count = model
                        .get(&signature(&f, &keys[inserted]))
                        .copied()
                        .unwrap_or(0);
                    match e.error() {
                        InsertError::TooManyDuplicates => assert_eq!(count, 8),
                        InsertError::Full => assert!(count < 8),
                        e => panic!("unexpected {e}"),
                    }
                }
            }
            Op::RemoveBatch(keys) => {
                let mut removed = vec![false; keys.len()];
                f.remove_batch(keys, &mut removed);
                for (k, got) in keys.iter().zip(removed) {
                    let count = model.entry(signature(&f, k)).or_default();
                    assert_eq!(got, *count > 0);
                    if got {
                        *count -= 1;
                        total -= 1;
                    }
                }
            }
            Op::Count(key) => with_key!(key, k => {
                let want = model.get(&signature(&f, k)).copied().unwrap_or(0);
                assert_eq!(f.count(k), want);
            }),
            Op::RoundTrip => {
                let bytes = f.to_bytes();
                let g = CuckooFilter::from_bytes(&bytes).expect("own encoding decodes");
                assert_eq!(g.to_bytes(), bytes);
                f = g;
            }
            Op::Clear => {
                f.clear();
                model.clear();
                total = 0;
            }
        }
        assert_eq!(f.len(), total);
    }
    assert_eq!(f.occupied_slots(), total);
});
