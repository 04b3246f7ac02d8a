//! Keys given with a 32-bit signature (`signed_hash`,
//! `contains_signed_batch`): the batch answers exactly as single lookups
//! of the signed hashes, in both hash schemes and every fingerprint width;
//! signatures of little entropy still fill the table; the false-positive
//! rate is the filter's; reloads keep the hashes; and readers of a burst
//! never miss a key a writer inserted before it.

mod common;

use common::{scaled, Rng};
use concurrent_cuckoo::{CuckooFilter, InsertError};
use std::sync::atomic::{AtomicUsize, Ordering};

fn filter(capacity: usize, bits: u32, uniform: bool, seed: u64) -> CuckooFilter {
    CuckooFilter::builder()
        .capacity(capacity)
        .fingerprint_bits(bits)
        .uniform_hashes(uniform)
        .seed(seed)
        .build()
        .unwrap()
}

/// `n` distinct byte keys (13 bytes, a flow's 5-tuple) with random
/// signatures.
fn flows(rng: &mut Rng, n: usize) -> (Vec<[u8; 13]>, Vec<u32>) {
    let keys = (0..n)
        .map(|i| {
            let mut k = [0u8; 13];
            k[..8].copy_from_slice(&(i as u64).to_le_bytes());
            k[8..].copy_from_slice(&rng.next().to_le_bytes()[..5]);
            k
        })
        .collect();
    let signatures = (0..n).map(|_| rng.next() as u32).collect();
    (keys, signatures)
}

#[test]
fn bursts_answer_as_single_lookups_of_the_signed_hashes() {
    let mut rng = Rng(5);
    for uniform in [false, true] {
        for bits in [8, 16, 32] {
            let f = filter(20_000, bits, uniform, 9);
            let (keys, signatures) = flows(&mut rng, 30_000);
            // Two thirds go in; the rest are absent.
            for (k, &s) in keys.iter().zip(&signatures).take(20_000) {
                f.insert_hash(f.signed_hash(k, s)).unwrap();
            }
            let singles: Vec<bool> = keys
                .iter()
                .zip(&signatures)
                .map(|(k, &s)| f.contains_hash(f.signed_hash(k, s)))
                .collect();
            assert!(singles[..20_000].iter().all(|&found| found));
            // Bursts of every length around the pipeline's distances.
            let mut start = 0;
            for len in (0..100).cycle() {
                if start + len > keys.len() {
                    break;
                }
                let mut out = vec![false; len];
                let range = start..start + len;
                f.contains_signed_batch(&keys[range.clone()], &signatures[range.clone()], &mut out);
                assert_eq!(
                    out, singles[range],
                    "{bits} bits, uniform {uniform}, burst at {start}"
                );
                start += len;
            }
            // One long batch too.
            let mut out = vec![false; keys.len()];
            f.contains_signed_batch(&keys, &signatures, &mut out);
            assert_eq!(out, singles, "{bits} bits, uniform {uniform}");
        }
    }
}

#[test]
fn a_signed_key_is_found_only_with_its_own_signature() {
    let f = filter(1000, 32, false, 3);
    let key = b"flow";
    f.insert_hash(f.signed_hash(&key[..], 42)).unwrap();
    let mut out = [false; 2];
    f.contains_signed_batch(&[&key[..], &key[..]], &[42, 43], &mut out);
    assert_eq!(out, [true, false], "another signature is another hash");
    // The key's own hash (not signed) is yet another.
    assert!(!f.contains(&key[..]));
}

/// Sequential signatures (all their entropy in the low bits) fill a
/// filter to its capacity, as its keyed calls do: the signature is mixed
/// before it picks a bucket.
#[test]
fn signatures_of_little_entropy_still_fill_the_table() {
    for uniform in [false, true] {
        let n = scaled(200_000, 20_000);
        let f = filter(n, 16, uniform, 11);
        for i in 0..n as u64 {
            f.insert_hash(f.signed_hash(&i, i as u32))
                .unwrap_or_else(|e| panic!("key {i} of {n} refused: {e}"));
        }
        assert_eq!(f.len(), n);
        let keys: Vec<u64> = (0..n as u64).collect();
        let signatures: Vec<u32> = (0..n as u32).collect();
        let mut out = vec![false; n];
        f.contains_signed_batch(&keys, &signatures, &mut out);
        assert!(out.iter().all(|&found| found));
    }
}

/// One signature for every key (a NIC that hashes nothing): the keys
/// share their first bucket, each key's fingerprint still picks its
/// alternate, and whatever goes in is found: refusals, never wrong
/// answers.
#[test]
fn one_signature_for_every_key_refuses_inserts_and_answers_right() {
    let f = filter(10_000, 16, false, 12);
    let mut inserted = Vec::new();
    for i in 0..10_000u64 {
        match f.insert_hash(f.signed_hash(&i, 7)) {
            Ok(()) => inserted.push(i),
            Err(InsertError::Full) => break,
            Err(e) => panic!("{e}"),
        }
    }
    assert!(
        inserted.len() < 10_000,
        "one signature cannot fill the table"
    );
    let signatures = vec![7; inserted.len()];
    let mut out = vec![false; inserted.len()];
    f.contains_signed_batch(&inserted, &signatures, &mut out);
    assert!(out.iter().all(|&found| found));
}

/// Keys sharing a signature share a bucket, not a fingerprint: at
/// capacity, absent keys (half of them with the signature of a stored key)
/// are false positives at the filter's own rate.
#[test]
fn the_false_positive_rate_is_the_filters() {
    let n = 100_000;
    let f = filter(n, 16, false, 13);
    let mut rng = Rng(14);
    let (keys, signatures) = flows(&mut rng, n);
    for (k, &s) in keys.iter().zip(&signatures) {
        f.insert_hash(f.signed_hash(k, s)).unwrap();
    }
    let probes = 1_000_000;
    let absent: Vec<u64> = (0..probes).map(|i| u64::MAX - i as u64).collect();
    let absent_signatures: Vec<u32> = (0..probes)
        .map(|i| {
            if i % 2 == 0 {
                signatures[rng.below(n)]
            } else {
                rng.next() as u32
            }
        })
        .collect();
    let mut out = vec![false; probes];
    f.contains_signed_batch(&absent, &absent_signatures, &mut out);
    let rate = out.iter().filter(|&&hit| hit).count() as f64 / probes as f64;
    let bound = f.false_positive_bound();
    assert!(
        rate <= bound,
        "false-positive rate {rate} above the bound {bound}"
    );
}

#[test]
fn a_reloaded_filter_gives_the_same_signed_hashes() {
    for uniform in [false, true] {
        let f = filter(5_000, 16, uniform, 15);
        let mut rng = Rng(16);
        let (keys, signatures) = flows(&mut rng, 5_000);
        for (k, &s) in keys.iter().zip(&signatures) {
            f.insert_hash(f.signed_hash(k, s)).unwrap();
        }
        let copy = CuckooFilter::from_bytes(&f.to_bytes()).unwrap();
        for (k, &s) in keys.iter().zip(&signatures) {
            assert_eq!(copy.signed_hash(k, s), f.signed_hash(k, s));
        }
        let mut out = vec![false; keys.len()];
        copy.contains_signed_batch(&keys, &signatures, &mut out);
        assert!(out.iter().all(|&found| found));
        // Removes take the same hashes.
        for (k, &s) in keys.iter().zip(&signatures) {
            assert!(copy.remove_hash(copy.signed_hash(k, s)));
        }
        assert!(copy.is_empty());
    }
}

#[test]
fn mismatched_lengths_panic_with_the_documented_message() {
    let f = filter(100, 16, false, 1);
    for (keys, signatures, out) in [(2usize, 2usize, 1usize), (2, 1, 2), (1, 2, 2)] {
        let keys = vec![0u64; keys];
        let signatures = vec![0u32; signatures];
        let mut out = vec![false; out];
        let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            f.contains_signed_batch(&keys, &signatures, &mut out)
        }))
        .unwrap_err();
        let text = err.downcast_ref::<&str>().map(|s| s.to_string()).unwrap();
        assert!(
            text.contains("contains_signed_batch: keys, signatures and out differ in length"),
            "{text}"
        );
    }
}

/// A writer inserts signed keys (moving others as the table fills) while
/// readers look up, in bursts, every key it has announced: none is ever
/// missed.
#[test]
fn bursts_beside_a_writer_never_miss_an_announced_key() {
    let n = scaled(60_000, 10_000);
    let f = filter(n, 16, false, 17);
    let mut rng = Rng(18);
    let (keys, signatures) = flows(&mut rng, n);
    let announced = AtomicUsize::new(0);
    std::thread::scope(|s| {
        s.spawn(|| {
            for (i, (k, &sig)) in keys.iter().zip(&signatures).enumerate() {
                f.insert_hash(f.signed_hash(k, sig)).unwrap();
                announced.store(i + 1, Ordering::Release);
            }
        });
        s.spawn(|| {
            let mut out = [false; 32];
            let mut rng = Rng(19);
            loop {
                let ready = announced.load(Ordering::Acquire);
                if ready >= 32 {
                    let start = rng.below(ready - 31);
                    let range = start..start + 32;
                    f.contains_signed_batch(&keys[range.clone()], &signatures[range], &mut out);
                    assert!(
                        out.iter().all(|&found| found),
                        "a burst from {start} missed a key"
                    );
                }
                if ready == n {
                    break;
                }
            }
        });
    });
}
