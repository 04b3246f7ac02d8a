//! The traits as trait objects: `dyn Filter` and `dyn DeletableFilter`
//! answer exactly as each filter type's own methods do (a trait object's
//! `hash_key` is the filter's hasher), for every key type a user hashes,
//! and their writes are the types' writes, from many threads.

use concurrent_cuckoo::{
    CuckooFilter, DeletableFilter, Filter, FrozenFilter, ScalableCuckooFilter, WindowedCuckooFilter,
};
use std::hash::{BuildHasher, Hash};

#[derive(Hash)]
struct Flow {
    src: [u8; 4],
    dst: [u8; 4],
    port: u16,
}

fn flow(i: u32) -> Flow {
    Flow {
        src: i.to_le_bytes(),
        dst: (i ^ 0x5a5a).to_be_bytes(),
        port: i as u16,
    }
}

/// Every lookup of `dynamic` (the same filter as `typed`) agrees with the
/// typed one, present and absent keys of four key types, one at a time and
/// in batches (more keys than one chunk of the trait object's batch).
fn agree<F: Filter>(typed: &F, dynamic: &dyn Filter) {
    let found = |hash: u64| dynamic.contains_hash(hash);
    for i in 0..3000u32 {
        let s = format!("key-{i}");
        assert_eq!(found(dynamic.hash_key(&s)), typed.contains(&s), "{s}");
        assert_eq!(
            found(dynamic.hash_key(s.as_str())),
            typed.contains(s.as_str()),
            "{s}"
        );
        assert_eq!(
            found(dynamic.hash_key(s.as_bytes())),
            typed.contains(s.as_bytes()),
            "{s}"
        );
        assert_eq!(
            found(dynamic.hash_key(&u64::from(i))),
            typed.contains(&u64::from(i))
        );
        assert_eq!(found(dynamic.hash_key(&flow(i))), typed.contains(&flow(i)));
    }
    let keys: Vec<u64> = (0..3000).collect();
    let hashes: Vec<u64> = keys.iter().map(|k| dynamic.hash_key(k)).collect();
    let (mut by_dyn, mut by_type) = (vec![false; keys.len()], vec![false; keys.len()]);
    dynamic.contains_hash_batch(&hashes, &mut by_dyn);
    typed.contains_batch(&keys, &mut by_type);
    assert_eq!(by_dyn, by_type);
    assert_eq!(dynamic.len(), typed.len());
    assert_eq!(dynamic.memory_usage(), typed.memory_usage());
    assert_eq!(dynamic.false_positive_bound(), typed.false_positive_bound());
}

/// Half of 0..3000 of each key type inserted (the others absent).
fn fill(insert: impl Fn(&dyn Fn(&mut dyn FnMut(u32)))) {
    insert(&|f| (0..3000).step_by(2).for_each(f));
}

#[test]
fn each_filter_as_dyn_filter_answers_as_its_type() {
    let fixed = CuckooFilter::with_capacity(20_000);
    let growing = ScalableCuckooFilter::with_capacity(500); // grows to several levels
    let windowed = WindowedCuckooFilter::with_capacity(20_000);
    fill(|each| {
        each(&mut |i| {
            let s = format!("key-{i}");
            fixed.insert(&s).unwrap();
            growing.insert(s.as_str()).unwrap();
            windowed.insert(s.as_bytes()).unwrap();
            fixed.insert(&u64::from(i)).unwrap();
            growing.insert(&u64::from(i)).unwrap();
            windowed.insert(&u64::from(i)).unwrap();
            fixed.insert(&flow(i)).unwrap();
            growing.insert(&flow(i)).unwrap();
            windowed.insert(&flow(i)).unwrap();
        })
    });
    assert!(growing.levels() > 1);
    let frozen = FrozenFilter::from_bytes(fixed.to_bytes()).unwrap();
    agree(&fixed, &fixed);
    agree(&growing, &growing);
    agree(&windowed, &windowed);
    agree(&frozen, &frozen);
    // Every inserted key is found through the trait object.
    let all: [&dyn Filter; 4] = [&fixed, &growing, &windowed, &frozen];
    for (n, filter) in all.iter().enumerate() {
        for i in (0..3000u32).step_by(2) {
            assert!(
                filter.contains_hash(filter.hash_key(&u64::from(i))),
                "filter {n}, key {i}"
            );
            assert!(
                filter.contains_hash(filter.hash_key(&flow(i))),
                "filter {n}, flow {i}"
            );
        }
    }
}

#[test]
fn hash_with_is_the_filters_hasher() {
    let fixed = CuckooFilter::with_capacity(100);
    let growing = ScalableCuckooFilter::with_capacity(100);
    let windowed = WindowedCuckooFilter::with_capacity(100);
    for key in ["", "a", "flow-7"] {
        assert_eq!(
            Filter::hash_with(&fixed, &mut |h| key.hash(&mut &mut *h)),
            fixed.hasher().hash_one(key)
        );
        assert_eq!(
            Filter::hash_with(&growing, &mut |h| key.hash(&mut &mut *h)),
            growing.hasher().hash_one(key)
        );
        assert_eq!(
            Filter::hash_with(&windowed, &mut |h| key.hash(&mut &mut *h)),
            windowed.hasher().hash_one(key)
        );
    }
}

#[test]
fn writes_through_dyn_deletable_filter_are_the_types_writes() {
    let fixed = CuckooFilter::with_capacity(10_000);
    // Grown past its first level: its removes never refuse (nested
    // levels), so `true` for each insert here too.
    let growing = ScalableCuckooFilter::with_capacity(1_000);
    for filter in [&fixed as &dyn DeletableFilter, &growing] {
        let key = |i: u32| filter.hash_key(&flow(i));
        for i in 0..4000u32 {
            filter.insert_hash(key(i)).unwrap();
        }
        // A copy per insert: a second copy of the even keys.
        for i in (0..4000u32).step_by(2) {
            filter.insert_hash(key(i)).unwrap();
        }
        assert_eq!(filter.len(), 6000);
        // Set-style: nothing more stored for a present key.
        assert!(!filter.insert_unique_hash(key(0)).unwrap());
        assert_eq!(filter.len(), 6000);
        // Each remove undoes one insert.
        for i in 0..4000u32 {
            assert!(filter.remove_hash(key(i)), "key {i}");
        }
        for i in (0..4000u32).step_by(2) {
            assert!(filter.contains_hash(key(i)), "second copy of {i}");
        }
        assert_eq!(filter.len(), 2000);
    }
    assert!(growing.levels() > 1, "the growing filter grew");
    // What the trait objects wrote, the types read.
    for i in (0..4000u32).step_by(2) {
        assert!(fixed.contains(&flow(i)) && growing.contains(&flow(i)));
        assert!(fixed.remove(&flow(i)));
        assert!(growing.remove(&flow(i)).is_removed());
    }
    assert!(fixed.is_empty() && growing.is_empty());
}

#[test]
fn a_shared_dyn_deletable_filter_takes_writes_from_many_threads() {
    let filters: Vec<Box<dyn DeletableFilter + Send + Sync>> = vec![
        Box::new(CuckooFilter::with_capacity(40_000)),
        Box::new(ScalableCuckooFilter::with_capacity(4_000)), // grows, as above
    ];
    for filter in &filters {
        let filter: &(dyn DeletableFilter + Send + Sync) = &**filter;
        std::thread::scope(|s| {
            for t in 0..4u64 {
                s.spawn(move || {
                    for i in 0..5000u64 {
                        filter.insert_hash(filter.hash_key(&(t, i))).unwrap();
                        assert!(
                            filter.contains_hash(filter.hash_key(&(t, i))),
                            "thread {t} key {i}"
                        );
                    }
                    for i in (0..5000u64).step_by(2) {
                        assert!(
                            filter.remove_hash(filter.hash_key(&(t, i))),
                            "thread {t} key {i}"
                        );
                    }
                });
            }
        });
        assert_eq!(filter.len(), 4 * 2500);
        for t in 0..4u64 {
            for i in (1..5000u64).step_by(2) {
                let hash = filter.hash_key(&(t, i));
                assert!(
                    filter.contains_hash(hash),
                    "thread {t} key {i} after the join"
                );
            }
        }
    }
}
