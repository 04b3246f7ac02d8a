//! Issue 53: a growing filter's removes never refuse. Its levels' maps
//! nest (`src/index.rs`, "Nested maps"), so a remove takes the copy in the
//! largest level that matches, and that copy always stands for the key
//! (`src/scalable/mod.rs`, "Removing keys across levels").
//!
//! Checked against a model (a multiset of the keys inserted and not
//! removed), with high false-positive rates so that keys collide across
//! levels often: every remove of a present key takes a copy (never
//! `Refused`), every present key is found after every operation, and the
//! length is the model's. A remove that took the copy of a smaller
//! matching level (or the newest level's, the rule before levels were
//! reused) makes some other key a false negative here: see
//! `taking_from_the_smallest_matching_level_would_lose_a_key`.

mod common;

use common::{scaled, Rng};
use concurrent_cuckoo::{Removal, ScalableCuckooFilter};
use proptest::prelude::*;
use std::collections::HashMap;

/// A filter of `capacity` items, growth `growth`, and a rate that gives
/// 8-bit fingerprints to the first levels (`rate` 0.2) or 16-bit ones.
fn filter(capacity: usize, growth: usize, rate: f64, seed: u64) -> ScalableCuckooFilter {
    ScalableCuckooFilter::builder()
        .capacity(capacity)
        .growth_factor(growth)
        .false_positive_rate(rate)
        .max_levels(16)
        .seed(seed)
        .build()
        .unwrap()
}

/// Runs `ops` (`true`: insert a key drawn from `keys`; `false`: remove a
/// present key) against the model, checking everything after each.
fn run(f: &ScalableCuckooFilter, ops: &[(bool, u64)], keys: u64) -> Result<(), TestCaseError> {
    let mut model: HashMap<u64, usize> = HashMap::new();
    let mut present: Vec<u64> = Vec::new();
    for (step, &(insert, pick)) in ops.iter().enumerate() {
        if insert || present.is_empty() {
            let key = pick % keys;
            match f.insert_hash(key) {
                Ok(()) => {
                    *model.entry(key).or_default() += 1;
                    present.push(key);
                }
                // Eight copies of one fingerprint in a level: the model's
                // keys repeat on purpose; a refused insert changes nothing.
                Err(concurrent_cuckoo::InsertError::TooManyDuplicates) => {}
                Err(e) => return Err(TestCaseError::fail(format!("step {step}: {e}"))),
            }
        } else {
            let key = present.swap_remove((pick as usize) % present.len());
            let removal = f.remove_hash(key);
            prop_assert_eq!(
                removal,
                Removal::Removed,
                "step {}: remove of a present key, {} levels",
                step,
                f.levels()
            );
            let copies = model.get_mut(&key).unwrap();
            *copies -= 1;
            if *copies == 0 {
                model.remove(&key);
            }
        }
        prop_assert_eq!(f.len(), present.len(), "step {}: len", step);
        for &key in model.keys() {
            prop_assert!(
                f.contains_hash(key),
                "step {}: key {} lost ({} levels)",
                step,
                key,
                f.levels()
            );
        }
    }
    // Every copy comes out, and then the filter is empty.
    for key in present {
        prop_assert_eq!(f.remove_hash(key), Removal::Removed);
    }
    prop_assert!(f.is_empty());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: scaled(96, 8) as u32, ..ProptestConfig::default() })]

    /// Few keys, many repeats: copies of one key spread over levels.
    #[test]
    fn repeated_keys_across_levels_of_8_bit_fingerprints(
        growth in 1usize..=4,
        seed in any::<u64>(),
        ops in proptest::collection::vec((prop::bool::weighted(0.6), any::<u64>()), 1..1500),
    ) {
        run(&filter(16, growth, 0.2, seed), &ops, 400)?;
    }

    /// Many keys, 16-bit levels: growth, churn and slot reuse.
    #[test]
    fn churn_across_levels_of_16_bit_fingerprints(
        growth in 1usize..=4,
        seed in any::<u64>(),
        ops in proptest::collection::vec((prop::bool::weighted(0.55), any::<u64>()), 1..2500),
    ) {
        run(&filter(32, growth, 0.01, seed), &ops, u64::MAX)?;
    }
}

/// A sliding window (insert new keys, remove the oldest) across many
/// growths and switches back to reused levels, with 8-bit first levels:
/// every remove takes a copy and every key of the window stays found.
#[test]
fn a_sliding_window_of_colliding_keys_never_refuses_a_remove() {
    for (growth, seed) in [(1usize, 1u64), (2, 2), (3, 3), (4, 4)] {
        let f = filter(64, growth, 0.2, seed);
        let window = 600u64;
        let total = scaled(40_000, 4_000) as u64;
        let mut rng = Rng(seed);
        let key = |i: u64| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ seed;
        let mut refused = 0;
        for i in 0..total {
            f.insert_hash(key(i)).unwrap();
            if i >= window {
                refused += usize::from(f.remove_hash(key(i - window)) != Removal::Removed);
            }
            if rng.below(500) == 0 {
                let lost = (i.saturating_sub(window - 1)..=i).filter(|&j| !f.contains_hash(key(j)));
                assert_eq!(
                    lost.count(),
                    0,
                    "growth {growth}: a key of the window lost at {i}"
                );
            }
        }
        assert_eq!(refused, 0, "growth {growth}");
        assert_eq!(f.len() as u64, window);
        assert!(
            f.level_fingerprint_bits().contains(&8),
            "growth {growth}: the test needs 8-bit levels to collide in"
        );
    }
}

/// The reason for the rule, on one pair of keys: `j` lies in level 0 and
/// `a` in level 1, and they collide in level 0's geometry only. A remove
/// of `a` matches in both levels; taking level 0's copy (`j`'s) would
/// leave `j` unfound. The rule takes level 1's, and `j` stays.
#[test]
fn taking_from_the_smallest_matching_level_would_lose_a_key() {
    let mut checked = 0;
    for seed in 0..200u64 {
        let f = filter(16, 2, 0.2, seed);
        // Hashes differ by seed (`*_hash` calls skip the filter's hasher).
        let key = |i: u64| (i ^ (seed << 40)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut level0 = Vec::new();
        let mut n = 0;
        while f.levels() == 1 {
            f.insert_hash(key(n)).unwrap();
            if f.levels() == 1 {
                level0.push(key(n));
            }
            n += 1;
        }
        // The key that opened level 1 lies there; find a later key that
        // level 0 answers for (a collision with one of its keys).
        let Some(a) = (n..n + 100_000).map(key).find(|&k| f.contains_hash(k)) else {
            continue;
        };
        let twins = f.count_hash(a);
        f.insert_hash(a).unwrap();
        assert_eq!(
            f.count_hash(a),
            twins + 1,
            "seed {seed}: a's copy beside its twins"
        );
        assert_eq!(f.remove_hash(a), Removal::Removed);
        assert_eq!(f.count_hash(a), twins, "seed {seed}: one copy taken");
        assert!(
            level0.iter().all(|&j| f.contains_hash(j)),
            "seed {seed}: the twin in level 0 was taken"
        );
        checked += 1;
    }
    assert!(checked > 20, "only {checked} seeds had a collision");
}

/// Threads each insert and remove their own keys, repeated ones included,
/// while the filter grows and levels empty, retire and are reused: every
/// remove takes a copy, and at the end every key still inserted is found
/// and the length is exact.
#[test]
fn threads_remove_across_growing_levels_without_a_refusal() {
    let f = filter(64, 2, 0.2, 9);
    let threads = 4u64;
    let rounds = scaled(30_000, 3_000) as u64;
    std::thread::scope(|s| {
        for t in 0..threads {
            let f = &f;
            s.spawn(move || {
                let mut rng = Rng(t + 100);
                let mut mine: Vec<u64> = Vec::new();
                for _ in 0..rounds {
                    if mine.len() < 300 || rng.below(2) == 0 {
                        // Keys repeat within a thread: (t, 0..500).
                        let key = (t << 32) | rng.below(500) as u64;
                        if f.insert_hash(key).is_ok() {
                            mine.push(key);
                        }
                    } else {
                        let key = mine.swap_remove(rng.below(mine.len()));
                        assert_eq!(f.remove_hash(key), Removal::Removed, "thread {t}");
                    }
                }
                for &key in &mine {
                    assert!(f.contains_hash(key), "thread {t}: key {key} lost");
                }
                mine.len()
            });
        }
    });
    assert!(f.levels() >= 1);
    let held = f.len();
    assert!(held >= 4 * 300, "{held}");
}

/// Nested levels fill as the old maps' did: with a first level of 10
/// items and growth 2 to 4 (small top ranges, many low bits), every level
/// holds over 90% of its slots when the filter refuses an insert. (An
/// alternate whose low bits ignored the key split the levels into small
/// separate tables: 76% at growth 4.)
#[test]
fn nested_levels_fill_before_the_filter_is_full() {
    for growth in [2usize, 3, 4] {
        for seed in 0..4u64 {
            let f = ScalableCuckooFilter::builder()
                .capacity(10)
                .false_positive_rate(1e-7)
                .growth_factor(growth)
                .max_levels(3)
                .seed(seed)
                .build()
                .unwrap();
            let mut n = 0u64;
            while f
                .insert_hash(n.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ seed)
                .is_ok()
            {
                n += 1;
            }
            assert_eq!(f.levels(), 3);
            for level in f.level_stats() {
                let slots = level.bucket_count * 4;
                assert!(
                    level.len * 10 > slots * 9,
                    "growth {growth}, seed {seed}: {} of {slots}",
                    level.len
                );
            }
        }
    }
}
