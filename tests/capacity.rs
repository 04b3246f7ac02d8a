//! Sizing, fill to first failure, and the false-positive rate.

mod common;

use common::{scaled, Rng};

use concurrent_cuckoo::{CuckooFilter, InsertError};

/// Inserts random keys until the first `Full`; returns the keys accepted.
fn fill_to_failure(f: &CuckooFilter, rng: &mut Rng) -> Vec<u64> {
    let mut keys = Vec::with_capacity(f.capacity());
    loop {
        let k = rng.next();
        match f.insert(&k) {
            Ok(()) => keys.push(k),
            Err(InsertError::Full) => return keys,
            Err(e) => panic!("unexpected {e}"),
        }
    }
}

#[test]
fn with_capacity_accepts_n_distinct_keys_for_many_sizes() {
    let mut rng = Rng(11);
    let mut sizes: Vec<usize> = (0..=64).collect();
    sizes.extend([100, 127, 500, 1000, 4096, 10_000, 65_537, 300_000]);
    for &n in &sizes {
        let trials = if n <= 1000 {
            scaled(200, 10)
        } else {
            scaled(5, 1)
        };
        for t in 0..trials {
            let f = CuckooFilter::builder()
                .capacity(n)
                .seed(rng.next())
                .build()
                .unwrap();
            for i in 0..n {
                let key = (n, t, i);
                if let Err(e) = f.insert(&key) {
                    panic!("capacity {n}, trial {t}: insert {i} failed: {e} ({f:?})");
                }
            }
            assert_eq!(f.len(), n);
        }
    }
}

#[test]
fn at_most_19_bits_per_item_at_capacity_with_16_bit_fingerprints() {
    for n in [100_000usize, 1_000_000, 10_000_000] {
        let f = CuckooFilter::with_capacity(n);
        let bits = f.memory_usage() as f64 * 8.0 / n as f64;
        println!(
            "n={n}: {bits:.2} bits/item, {} buckets, {} stripes",
            f.bucket_count(),
            f.stripe_count()
        );
        assert!(bits <= 19.0, "n={n}: {bits:.2} bits per item");
    }
}

#[test]
fn fill_to_first_failure_reaches_95_percent_and_loses_nothing() {
    let mut rng = Rng(12);
    for (bits, n) in [
        (16, scaled(1 << 20, 1 << 14)),
        (8, scaled(1 << 18, 1 << 12)),
        (32, scaled(1 << 18, 1 << 12)),
    ] {
        let f = CuckooFilter::builder()
            .capacity(n)
            .fingerprint_bits(bits)
            .seed(rng.next())
            .build()
            .unwrap();
        let keys = fill_to_failure(&f, &mut rng);
        let load = f.load_factor();
        println!(
            "{bits}-bit, {} slots: first failure at load {load:.4}",
            f.capacity()
        );
        assert!(load >= 0.95, "{bits}-bit: first failure at load {load}");
        assert_eq!(f.len(), keys.len());
        assert_eq!(f.occupied_slots(), keys.len());
        // The failed insert changed nothing, and nothing was lost while
        // fingerprints were displaced to make room.
        let mut out = vec![false; keys.len()];
        f.contains_batch(&keys, &mut out);
        assert!(out.iter().all(|&b| b), "a key went missing");
        // Further failures also change nothing.
        for _ in 0..1000 {
            let before = f.len();
            if f.insert(&rng.next()).is_err() {
                assert_eq!(f.len(), before);
                assert_eq!(f.occupied_slots(), before);
            }
        }
        assert!(keys.iter().all(|k| f.contains(k)));
        // And everything can be removed again.
        assert!(keys.iter().all(|k| f.remove(k)));
        assert!(f.len() <= 1000);
    }
}

#[test]
fn false_positive_rate_is_within_2b_over_2_to_the_f() {
    let mut rng = Rng(13);
    for (bits, fill, queries) in [(8u32, 0.95, 1 << 20), (16, 0.95, 1 << 22)] {
        let n = 1 << 18;
        let f = CuckooFilter::builder()
            .capacity(n)
            .fingerprint_bits(bits)
            .seed(rng.next())
            .build()
            .unwrap();
        let target = (f.capacity() as f64 * fill) as u64;
        // Inserted keys are even numbers, queries odd ones: disjoint sets.
        for i in 0..target {
            f.insert(&(i * 2)).unwrap();
        }
        let fp = (0..queries as u64)
            .filter(|q| f.contains(&(q * 2 + 1)))
            .count();
        let rate = fp as f64 / queries as f64;
        let bound = f.false_positive_bound();
        println!(
            "{bits}-bit at load {:.3}: measured FPR {rate:.3e} (bound {bound:.3e})",
            f.load_factor()
        );
        assert!(rate <= bound, "{bits}-bit: FPR {rate} above bound {bound}");
        assert!(
            rate > bound / 4.0,
            "{bits}-bit: FPR {rate} implausibly low: are fingerprints compared at all?"
        );
    }
}

/// A dataplane's precomputed hash is often a 32-bit RSS/Toeplitz value
/// widened to `u64`: all its entropy in the low half. Random 32-bit values,
/// consecutive integers (the most structured input), and values shifted
/// into the high half must all fill 95% of the slots with no error and be
/// found again.
#[test]
fn thirty_two_bit_hashes_fill_95_percent_of_the_slots() {
    let mut rng = Rng(14);
    for (name, make) in [
        (
            "random u32",
            (|r: &mut Rng, _| u64::from(r.next() as u32)) as fn(&mut Rng, u64) -> u64,
        ),
        ("consecutive", |_, i| i),
        ("u32 << 32", |r: &mut Rng, _| {
            u64::from(r.next() as u32) << 32
        }),
    ] {
        for bits in [8u32, 16, 32] {
            let f = CuckooFilter::builder()
                .capacity(scaled(200_000, 20_000))
                .fingerprint_bits(bits)
                .seed(rng.next())
                .build()
                .unwrap();
            let target = f.capacity() * 95 / 100;
            let mut seen = std::collections::HashSet::with_capacity(target);
            let mut hashes = Vec::with_capacity(target);
            let mut i = 0u64;
            while hashes.len() < target {
                let h = make(&mut rng, i);
                i += 1;
                if seen.insert(h) {
                    hashes.push(h);
                }
            }
            for (n, &h) in hashes.iter().enumerate() {
                if let Err(e) = f.insert_hash(h) {
                    panic!("{name}, {bits}-bit: insert {n} of {target} failed: {e}");
                }
            }
            let mut found = vec![false; hashes.len()];
            f.contains_hash_batch(&hashes, &mut found);
            assert!(
                found.iter().all(|&x| x),
                "{name}, {bits}-bit: a hash went missing"
            );
            println!(
                "{name}, {bits}-bit: {target} hashes at load {:.3}",
                f.load_factor()
            );
        }
    }
}

/// The false-positive bound holds for 32-bit hashes too: the finalizer
/// must not correlate fingerprint and bucket for narrow inputs.
#[test]
fn false_positive_rate_is_within_the_bound_for_32_bit_hashes() {
    let mut rng = Rng(15);
    for (bits, queries) in [(8u32, 1usize << 20), (16, 1 << 22)] {
        let f = CuckooFilter::builder()
            .capacity(1 << 18)
            .fingerprint_bits(bits)
            .seed(rng.next())
            .build()
            .unwrap();
        let target = (f.capacity() as f64 * 0.95) as u64;
        // Stored: even 32-bit values; queried: odd ones (disjoint).
        for i in 0..target {
            f.insert_hash(i * 2).unwrap();
        }
        let fp = (0..queries as u64)
            .filter(|&q| f.contains_hash((q * 2 + 1) & 0xFFFF_FFFF))
            .count();
        let rate = fp as f64 / queries as f64;
        let bound = f.false_positive_bound();
        println!("{bits}-bit, 32-bit hashes: FPR {rate:.3e} (bound {bound:.3e})");
        assert!(rate <= bound, "{bits}-bit: FPR {rate} above bound {bound}");
        assert!(rate > bound / 4.0, "{bits}-bit: FPR {rate} implausibly low");
    }
}
