//! Real-thread stress test of duplicates and colliding keys: removes that
//! are moves.
//!
//! A hasher forces many keys onto shared signatures: for every *group*, a
//! stable key `k` and its *reversed twin*, a key with the same fingerprint
//! and the same bucket pair but the other primary bucket. The two are
//! indistinguishable to the filter, and the twin's `remove` checks the
//! buckets in the opposite order from `k`'s, so it may clear the very copy
//! a reader of `k` is relying on while the twin's copy sits in the other
//! bucket. Writers insert and remove twins and extra copies of `k`, each
//! only ever removing what it inserted, so every group's signature keeps at
//! least one copy at every instant; readers check every stable key without
//! pause. More threads than cores, so threads are preempted mid-operation.
//! Expectation: zero misses.

mod common;

use common::{scaled, Rng};
use concurrent_cuckoo::{CuckooFilter, InsertError};
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;

/// Keys are their own hashes: the test chooses bucket pairs and fingerprints.
#[derive(Clone, Copy, Default)]
struct Identity;

struct IdentityHasher(u64);

impl Hasher for IdentityHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("only u64 keys are hashed")
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

impl BuildHasher for Identity {
    type Hasher = IdentityHasher;
    fn build_hasher(&self) -> IdentityHasher {
        IdentityHasher(0)
    }
}

type Filter = CuckooFilter<Identity>;

/// One shared signature: the stable key and its reversed twin.
#[derive(Clone, Copy)]
struct Group {
    key: u64,
    twin: u64,
}

fn run(bits: u32, buckets: usize, stripes: usize, seed: u64) {
    const WRITERS: usize = 3;
    const READERS: usize = 3;
    const GROUPS: usize = 8;
    let f = Arc::new(
        CuckooFilter::builder()
            .bucket_count(buckets)
            .stripe_count(stripes)
            .fingerprint_bits(bits)
            .hasher(Identity)
            .build()
            .unwrap(),
    );
    let mut rng = Rng(seed);
    let mut signatures = std::collections::HashSet::new();
    let mut groups = Vec::new();
    while groups.len() < GROUPS {
        let key = rng.next();
        let (fp, a, b) = f.signature_of_hash(key);
        if !signatures.insert((fp, a.min(b), a.max(b))) {
            continue;
        }
        let twin = f.hash_for_bucket(b, fp as u32);
        assert_eq!(f.signature_of_hash(twin), (fp, b, a), "twin of {key:#x}");
        groups.push(Group { key, twin });
    }
    // Each group's key goes in once; filler keys (of other signatures)
    // bring the table near full, so twins and extra copies often land in
    // the other bucket and inserts displace fingerprints.
    let mut stable: Vec<u64> = groups.iter().map(|g| g.key).collect();
    for k in &stable {
        f.insert(k).unwrap();
    }
    while stable.len() < f.capacity() * 90 / 100 {
        let k = rng.next();
        let (fp, a, b) = f.signature_of_hash(k);
        if signatures.insert((fp, a.min(b), a.max(b))) {
            f.insert(&k).unwrap();
            stable.push(k);
        }
    }
    let (groups, stable) = (Arc::new(groups), Arc::new(stable));
    let rounds = scaled(30_000, 2_000);
    let stop = Arc::new(AtomicBool::new(false));
    let misses = Arc::new(AtomicUsize::new(0));
    let lookups = Arc::new(AtomicUsize::new(0));
    let barrier = Arc::new(Barrier::new(WRITERS + READERS));

    let readers: Vec<_> = (0..READERS)
        .map(|r| {
            let (f, groups, stable, stop, misses, lookups, barrier) = (
                f.clone(),
                groups.clone(),
                stable.clone(),
                stop.clone(),
                misses.clone(),
                lookups.clone(),
                barrier.clone(),
            );
            thread::spawn(move || {
                barrier.wait();
                let mut out = vec![false; stable.len()];
                while !stop.load(Ordering::Relaxed) {
                    let mut missed = 0;
                    // Twins share their key's signature: present too.
                    for g in groups.iter() {
                        missed += usize::from(!f.contains(&g.key));
                        missed += usize::from(!f.contains(&g.twin));
                    }
                    if r == 0 {
                        f.contains_batch(&stable, &mut out);
                        missed += out.iter().filter(|&&b| !b).count();
                    } else {
                        missed += stable.iter().filter(|k| !f.contains(*k)).count();
                    }
                    misses.fetch_add(missed, Ordering::Relaxed);
                    lookups.fetch_add(2 * groups.len() + stable.len(), Ordering::Relaxed);
                }
            })
        })
        .collect();

    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (f, groups, barrier) = (f.clone(), groups.clone(), barrier.clone());
            thread::spawn(move || {
                barrier.wait();
                let mut rng = Rng(seed ^ (1000 + w as u64));
                // Copies this writer added and still owes a remove, per group
                // (at most two: 1 stable + 3 writers x 2 = 7 <= 8 copies).
                let mut owed: Vec<Vec<u64>> = vec![Vec::new(); groups.len()];
                let mut removed = 0usize;
                for _ in 0..rounds {
                    for (g, group) in groups.iter().enumerate() {
                        let mine = &mut owed[g];
                        if mine.len() < 2 && rng.below(3) != 0 {
                            // A twin most of the time, else another copy of the key.
                            let k = if rng.below(4) != 0 {
                                group.twin
                            } else {
                                group.key
                            };
                            match f.insert(&k) {
                                Ok(()) => mine.push(k),
                                Err(InsertError::Full) => {}
                                Err(e) => panic!("writer {w}: {e}"),
                            }
                        } else if let Some(k) = mine.pop() {
                            assert!(f.remove(&k), "writer {w}: a copy it owns is gone");
                            removed += 1;
                        }
                    }
                }
                for k in owed.into_iter().flatten() {
                    assert!(f.remove(&k), "writer {w}: a copy it owns is gone");
                    removed += 1;
                }
                removed
            })
        })
        .collect();

    let removed: usize = writers.into_iter().map(|h| h.join().unwrap()).sum();
    stop.store(true, Ordering::Relaxed);
    for h in readers {
        h.join().unwrap();
    }
    println!(
        "{bits}-bit, {stripes} stripe(s): lookups {} misses {} writer removes {removed} relocations {}",
        lookups.load(Ordering::Relaxed),
        misses.load(Ordering::Relaxed),
        f.relocations(),
    );
    assert_eq!(
        misses.load(Ordering::Relaxed),
        0,
        "a reader missed a key whose signature kept a copy at every instant"
    );
    assert!(
        removed > rounds,
        "the writers must remove copies: {removed}"
    );
    assert_eq!(f.len(), stable.len());
    assert_eq!(f.occupied_slots(), stable.len());
    assert!(stable.iter().all(|k| f.contains(k)));
}

/// Keys whose bucket pair is `{2g, 2g + 1}` in a table of `2 * groups`
/// buckets: `count` keys of distinct fingerprints (not in `taken`), with
/// primary bucket `2g`. The alternate of bucket `i` is `(H(fp) - i) mod m`,
/// so this searches for fingerprints with `H(fp) = 4g + 1 (mod m)`.
fn keys_of_pair(f: &Filter, g: usize, count: usize, taken: &mut Vec<u64>) -> Vec<u64> {
    let mut keys = Vec::new();
    let mut low = 1u32;
    while keys.len() < count {
        let key = f.hash_for_bucket(2 * g, low);
        low += 1;
        let (fp, a, b) = f.signature_of_hash(key);
        if (a, b) == (2 * g, 2 * g + 1) && !taken.contains(&fp) {
            taken.push(fp);
            keys.push(key);
        }
    }
    keys
}

/// The sharpest form of the race, on every pair at once: each group's pair
/// holds its key, six fillers and one free slot. Its writer alternates
/// "insert the twin, remove the twin" with "insert the key, remove the
/// key"; with a single free slot each such pair of calls moves the group's
/// copy to the other bucket (the insert lands in the bucket that has room,
/// the remove clears the copy in its own primary). Readers look up keys and
/// twins, which probe the pair in opposite orders, without pause.
fn every_remove_is_a_move(bits: u32, groups: usize, stripes: usize) {
    const READERS: usize = 3;
    let f = Arc::new(
        CuckooFilter::builder()
            .bucket_count(2 * groups)
            .stripe_count(stripes)
            .fingerprint_bits(bits)
            .hasher(Identity)
            .build()
            .unwrap(),
    );
    let mut fingerprints = Vec::new();
    let mut all = Vec::new();
    let mut pairs = Vec::new();
    for g in 0..groups {
        let keys = keys_of_pair(&f, g, 7, &mut fingerprints);
        for k in &keys {
            f.insert(k).unwrap();
        }
        let key = keys[0];
        let twin = f.hash_for_bucket(2 * g + 1, f.signature_of_hash(key).0 as u32);
        assert_eq!(f.signature_of_hash(twin).0, f.signature_of_hash(key).0);
        all.extend_from_slice(&keys);
        all.push(twin);
        pairs.push(Group { key, twin });
    }
    let (pairs, all) = (Arc::new(pairs), Arc::new(all));
    let rounds = scaled(3_000_000, 100_000);
    let stop = Arc::new(AtomicBool::new(false));
    let misses = Arc::new(AtomicUsize::new(0));
    let lookups = Arc::new(AtomicUsize::new(0));
    let barrier = Arc::new(Barrier::new(groups + READERS));
    let readers: Vec<_> = (0..READERS)
        .map(|r| {
            let (f, all, stop, misses, lookups, barrier) = (
                f.clone(),
                all.clone(),
                stop.clone(),
                misses.clone(),
                lookups.clone(),
                barrier.clone(),
            );
            thread::spawn(move || {
                barrier.wait();
                let mut out = vec![false; all.len()];
                while !stop.load(Ordering::Relaxed) {
                    let missed = if r == 0 {
                        f.contains_batch(&all, &mut out);
                        out.iter().filter(|&&b| !b).count()
                    } else {
                        all.iter().filter(|k| !f.contains(*k)).count()
                    };
                    misses.fetch_add(missed, Ordering::Relaxed);
                    lookups.fetch_add(all.len(), Ordering::Relaxed);
                }
            })
        })
        .collect();
    let writers: Vec<_> = (0..groups)
        .map(|g| {
            let (f, pairs, barrier) = (f.clone(), pairs.clone(), barrier.clone());
            thread::spawn(move || {
                barrier.wait();
                let Group { key, twin } = pairs[g];
                for round in 0..rounds {
                    let k = if round % 2 == 0 { twin } else { key };
                    f.insert(&k).unwrap();
                    assert!(f.remove(&k), "group {g}: the copy just added is gone");
                }
            })
        })
        .collect();
    for h in writers {
        h.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    for h in readers {
        h.join().unwrap();
    }
    println!(
        "{bits}-bit, {groups} pairs, {stripes} stripe(s): lookups {} misses {} writer removes {}",
        lookups.load(Ordering::Relaxed),
        misses.load(Ordering::Relaxed),
        groups * rounds,
    );
    assert_eq!(
        misses.load(Ordering::Relaxed),
        0,
        "a reader missed a key whose signature kept a copy at every instant"
    );
    assert_eq!(f.len(), 7 * groups);
    assert_eq!(f.occupied_slots(), 7 * groups);
    assert!(all.iter().all(|k| f.contains(k)));
}

#[test]
fn every_remove_is_a_move_yet_no_reader_misses_16_bit() {
    every_remove_is_a_move(16, 3, 1);
}

#[test]
fn every_remove_is_a_move_yet_no_reader_misses_8_bit() {
    every_remove_is_a_move(8, 3, 2);
}

#[test]
fn every_remove_is_a_move_yet_no_reader_misses_32_bit() {
    every_remove_is_a_move(32, 3, 4);
}

#[test]
fn colliding_keys_and_duplicates_never_hide_a_present_key_16_bit() {
    run(16, 64, 1, 0xC011_1DE5);
}

#[test]
fn colliding_keys_and_duplicates_never_hide_a_present_key_8_bit() {
    run(8, 64, 4, 0xC011_1DE6);
}

#[test]
fn colliding_keys_and_duplicates_never_hide_a_present_key_32_bit() {
    run(32, 64, 2, 0xC011_1DE7);
}
