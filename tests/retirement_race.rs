//! Issue 28, item 2, under real threads: two threads take the last two
//! items of an old level at once, from bucket pairs that share no lock
//! stripe; after every round the level must be retired. Each remove used
//! to decide whether it emptied the level with relaxed loads of the other
//! stripes' counts, so both could read the other's count from before its
//! decrement (store buffering) and neither retired the level. The loom
//! model `the_last_two_removes_of_an_old_level_in_different_stripes_retire_it`
//! proves the ordering; this runs the real thing many times.

use concurrent_cuckoo::{CuckooFilter, ScalableCuckooFilter};
use std::sync::{Arc, Barrier};
use std::thread;

/// The lock stripes of `hash`'s bucket pair in a level of `buckets`
/// buckets, `bits`-bit fingerprints and `stripes` stripes.
fn stripes_of(probe: &CuckooFilter, stripes: usize, hash: u64) -> [usize; 2] {
    let (_, i1, i2) = probe.signature_of_hash(hash);
    [i1 % stripes, i2 % stripes]
}

#[test]
fn two_threads_removing_the_last_items_of_an_old_level_always_retire_it() {
    let rounds_per_filter = 38;
    let filters = 8;
    let mut next = 0u64;
    let mut rounds = 0;
    for seed in 0..filters {
        let f = Arc::new(
            ScalableCuckooFilter::builder()
                .capacity(12_000) // 3,000+ buckets: 4 lock stripes
                .growth_factor(1)
                .max_levels(rounds_per_filter + 1)
                .false_positive_rate(1e-7) // 32-bit levels: no remove is refused
                .seed(seed)
                .build()
                .unwrap(),
        );
        let level = f.level_stats()[0].clone();
        assert_eq!(level.stripes, 4, "setup: several stripes");
        let probe = CuckooFilter::builder()
            .capacity(0)
            .bucket_count(level.bucket_count)
            .fingerprint_bits(level.fingerprint_bits)
            .build()
            .unwrap();
        // The key that grew the filter: the first of the newest level.
        let mut grower = None;
        for round in 0..rounds_per_filter {
            // Fill the newest level until the filter grows: the keys
            // before the last are in the level that just became old.
            let mut old: Vec<u64> = grower.take().into_iter().collect();
            let levels = f.levels();
            while f.levels() == levels {
                f.insert_hash(next).unwrap();
                old.push(next);
                next += 1;
            }
            grower = old.pop();
            // Two keys whose pairs share no stripe; the rest go first.
            let a = old[0];
            let sa = stripes_of(&probe, level.stripes, a);
            let at = old
                .iter()
                .position(|&k| {
                    let sb = stripes_of(&probe, level.stripes, k);
                    !sb.iter().any(|s| sa.contains(s))
                })
                .expect("a key in other stripes");
            let b = old.swap_remove(at);
            for k in &old[1..] {
                assert!(f.remove_hash(*k).is_removed());
            }
            assert_eq!(f.levels(), 2, "round {round}: the old level holds a and b");
            let start = Arc::new(Barrier::new(2));
            let other = {
                let (f, start) = (f.clone(), start.clone());
                thread::spawn(move || {
                    start.wait();
                    f.remove_hash(b)
                })
            };
            start.wait();
            let removed_a = f.remove_hash(a);
            let removed_b = other.join().unwrap();
            assert!(
                removed_a.is_removed() && removed_b.is_removed(),
                "round {round}: both removed"
            );
            assert_eq!(
                f.levels(),
                1,
                "round {round}: two removes emptied the old level and neither retired it"
            );
            rounds += 1;
        }
    }
    println!("{rounds} rounds, each level retired");
}
