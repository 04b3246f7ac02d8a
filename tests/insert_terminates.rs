//! An insert into a growing filter always ends. A level can refuse one key
//! while it is under 3/4 full (a small level whose bucket pair holds copies
//! that cannot move), and the rule that sends inserts back to a level in
//! use with room once handed such a key between two levels forever: the
//! `scalable_model` fuzzer found the hang (a burst of duplicates into a
//! filter of 2 items growing by 4). The case is that input, replayed; the
//! burst runs in a thread the test waits for with a deadline, so a hang
//! fails instead of blocking CI.

use concurrent_cuckoo::{CuckooFilter, DefaultHashBuilder, ScalableCuckooFilter};
use std::collections::HashSet;
use std::hash::BuildHasher;
use std::sync::mpsc;
use std::time::Duration;

/// Keys of `0..600` whose 32-bit fingerprints under `seed` are distinct
/// (the fuzz target's key map).
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

#[test]
fn a_burst_of_duplicates_into_a_tiny_growing_filter_ends() {
    const SEED: u64 = 4_702_111_234_474_983_745;
    const BURST: [u16; 36] = [
        27962, 16749, 16792, 16713, 16705, 4703, 65535, 16705, 16705, 28013, 16749, 16792, 16705,
        16705, 16705, 52171, 52171, 52171, 52171, 52171, 52171, 52171, 52171, 52171, 52171, 52171,
        52171, 52171, 52171, 52223, 52171, 65535, 65535, 511, 16705, 43,
    ];
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let filter = ScalableCuckooFilter::builder()
            .capacity(2)
            .growth_factor(4)
            .max_levels(6)
            .false_positive_rate(1e-7)
            .seed(SEED)
            .build()
            .unwrap();
        let valid = distinct_keys(SEED);
        let keys: Vec<u64> = BURST
            .iter()
            .map(|&k| valid[usize::from(k) % valid.len()])
            .collect();
        let inserted = filter
            .insert_batch(&keys)
            .map_or_else(|e| e.inserted(), |()| keys.len());
        // Every key inserted is found.
        assert!(keys[..inserted].iter().all(|k| filter.contains(k)));
        tx.send(inserted).unwrap();
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(inserted) => println!("{inserted} of {} inserted", BURST.len()),
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("the burst did not end within 60 s (two levels hand a key back and forth)")
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the burst's thread panicked"),
    }
}
