//! loom models of every concurrent protocol of the filter.
//!
//! Run with `scripts/loom.sh` (it sets `--cfg concurrent_cuckoo_loom`, which
//! switches the library's sync facade to loom's primitives). Each model
//! builds a tiny filter whose keys are placed in chosen buckets through an
//! identity hasher, so a displacement happens exactly where the model wants.
//!
//! Failure messages that mean "an inserted fingerprint was not found" carry
//! the marker `LOST FINGERPRINT`, which the canary run looks for.
#![cfg(concurrent_cuckoo_loom)]

use concurrent_cuckoo::{CuckooFilter, InsertError};
use loom::sync::Arc;
use loom::thread;
use std::hash::{BuildHasher, Hasher};

/// Hashes a `u64` key to itself, so tests choose bucket and fingerprint.
#[derive(Clone, Copy, Default)]
struct Identity;

struct IdentityHasher(u64);

impl Hasher for IdentityHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("models only hash u64 keys")
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

/// Four buckets, two stripes (0,2 | 1,3), one-hop paths.
fn tiny(buckets: usize, max_path: usize) -> Filter {
    CuckooFilter::builder()
        .bucket_count(buckets)
        .stripe_count(2)
        .max_path_len(max_path)
        .fingerprint_bits(16)
        .hasher(Identity)
        .build()
        .unwrap()
}

/// Hands out keys with chosen (primary, alternate) buckets and fingerprints
/// never used before, so every key is distinguishable from every other.
struct Keys {
    used: Vec<u64>,
    next_low: u32,
}

impl Keys {
    fn new() -> Self {
        Self {
            used: Vec::new(),
            next_low: 1,
        }
    }

    /// A generator that avoids the fingerprints of `taken` keys (keys made
    /// by another generator, for example a setup function's).
    fn avoiding<'a>(f: &Filter, taken: impl IntoIterator<Item = &'a u64>) -> Self {
        let mut keys = Self::new();
        keys.used
            .extend(taken.into_iter().map(|&k| f.signature_of_hash(k).0));
        keys
    }

    /// Inserts `n` new keys of bucket pair (`primary`, `alternate`) into `f`
    /// and appends them to `stored`.
    fn insert_n(
        &mut self,
        f: &Filter,
        primary: usize,
        alternate: usize,
        n: usize,
        stored: &mut Vec<u64>,
    ) {
        for _ in 0..n {
            let k = self.with_buckets(f, primary, alternate);
            f.insert(&k).unwrap();
            stored.push(k);
        }
    }

    /// A key whose primary bucket is `primary` and alternate is `alternate`.
    fn with_buckets(&mut self, f: &Filter, primary: usize, alternate: usize) -> u64 {
        loop {
            let low = self.next_low;
            self.next_low += 1;
            let key = f.hash_for_bucket(primary, low);
            let (fp, i1, i2) = f.signature_of_hash(key);
            if i1 == primary && i2 == alternate && !self.used.contains(&fp) {
                self.used.push(fp);
                return key;
            }
        }
    }
}

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(3);
    }
    let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = runs.clone();
    builder.check(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        f()
    });
    let runs = runs.load(std::sync::atomic::Ordering::Relaxed);
    println!("explored {runs} interleavings");
    // A model whose threads never interact explores one schedule and
    // proves nothing.
    assert!(
        runs > 1,
        "loom explored a single interleaving: the model has no concurrency"
    );
}

/// Bucket 0 holds `victim` (pair {0,3}) plus three keys of pair {0,1};
/// bucket 1 is full of pair-{0,1} keys; bucket 3 is empty. Inserting another
/// pair-{0,1} key must move `victim` from bucket 0 to bucket 3 (the only
/// possible one-hop path). Returns (victim, the key to insert, all stored keys).
fn displacement_setup(f: &Filter) -> (u64, u64, Vec<u64>) {
    let mut keys = Keys::new();
    let victim = keys.with_buckets(f, 0, 3);
    f.insert(&victim).unwrap();
    let mut stored = vec![victim];
    keys.insert_n(f, 0, 1, 3, &mut stored);
    keys.insert_n(f, 1, 0, 4, &mut stored);
    let newcomer = keys.with_buckets(f, 0, 1);
    (victim, newcomer, stored)
}

/// The mirror image of [`displacement_setup`]: `victim` (pair {0,3}) sits
/// in its *alternate* bucket 3 and the only path moves it to its primary
/// bucket 0. A reader probes bucket 0 before bucket 3, so here it reads the
/// destination first, the order in which a move without version validation
/// is missed even on a sequentially consistent machine.
fn reverse_displacement_setup(f: &Filter) -> (u64, u64, Vec<u64>) {
    let mut keys = Keys::new();
    let mut stored = Vec::new();
    let evicted = keys.with_buckets(f, 0, 1);
    f.insert(&evicted).unwrap();
    keys.insert_n(f, 0, 1, 3, &mut stored);
    let victim = keys.with_buckets(f, 0, 3);
    f.insert(&victim).unwrap(); // bucket 0 is full: lands in bucket 3
    stored.push(victim);
    assert!(f.remove(&evicted)); // bucket 0 now has one free slot
    keys.insert_n(f, 3, 2, 3, &mut stored);
    keys.insert_n(f, 2, 3, 4, &mut stored);
    let newcomer = keys.with_buckets(f, 3, 2);
    (victim, newcomer, stored)
}

type Setup = fn(&Filter) -> (u64, u64, Vec<u64>);

#[test]
fn reader_finds_a_fingerprint_while_it_is_displaced() {
    reader_during_displacement(displacement_setup);
}

#[test]
fn reader_finds_a_fingerprint_displaced_towards_the_bucket_it_reads_first() {
    reader_during_displacement(reverse_displacement_setup);
}

#[test]
fn batch_reader_finds_a_fingerprint_while_it_is_displaced() {
    batch_reader_during_displacement(displacement_setup);
}

#[test]
fn batch_reader_finds_a_fingerprint_displaced_towards_the_bucket_it_reads_first() {
    batch_reader_during_displacement(reverse_displacement_setup);
}

/// The reader runs on both sides of the spawn: one lookup on the spawned
/// thread and one on the model's main thread, so loom's exploration starts
/// from schedules where the lookup runs before and after the move's stores.
fn reader_during_displacement(setup: Setup) {
    model(move || {
        let f = Arc::new(tiny(4, 1));
        let (victim, newcomer, stored) = setup(&f);
        let reader = {
            let f = f.clone();
            thread::spawn(move || {
                assert!(
                    f.contains(&victim),
                    "LOST FINGERPRINT: reader missed a key being displaced"
                )
            })
        };
        f.insert(&newcomer).unwrap();
        reader.join().unwrap();
        assert!(
            f.contains(&victim) && f.contains(&newcomer),
            "LOST FINGERPRINT after the move"
        );
        assert_eq!(f.relocations(), 1, "the model must force exactly one move");
        assert_eq!(f.len(), stored.len() + 1);
        assert_eq!(f.occupied_slots(), stored.len() + 1);
    });
}

fn batch_reader_during_displacement(setup: Setup) {
    model(move || {
        let f = Arc::new(tiny(4, 1));
        let (victim, newcomer, stored) = setup(&f);
        let other = stored[1];
        let reader = {
            let f = f.clone();
            thread::spawn(move || {
                let keys = [other, victim];
                let mut out = [false; 2];
                f.contains_batch(&keys, &mut out);
                assert_eq!(
                    out,
                    [true, true],
                    "LOST FINGERPRINT: batch lookup missed a key being displaced"
                );
            })
        };
        f.insert(&newcomer).unwrap();
        reader.join().unwrap();
        assert_eq!(f.relocations(), 1);
    });
}

#[test]
fn two_displacing_inserters_and_a_reader() {
    model(|| {
        // Both newcomers need the single path (victim 0 -> 3); after it is
        // used, bucket 0 can only be freed again by moving the first
        // newcomer's neighbours, which all have full alternates. So one
        // insert succeeds and the other may succeed (if it ran its path
        // first and the other found the freed slot) or fail with Full.
        let f = Arc::new(tiny(4, 1));
        let (victim, first, stored) = displacement_setup(&f);
        let mut keys = Keys::avoiding(&f, stored.iter().chain([&first]));
        let second = keys.with_buckets(&f, 0, 1);
        let reader = {
            let f = f.clone();
            thread::spawn(move || {
                assert!(
                    f.contains(&victim),
                    "LOST FINGERPRINT: reader missed a key being displaced"
                )
            })
        };
        let other = {
            let f = f.clone();
            thread::spawn(move || f.insert(&second))
        };
        let mine = f.insert(&first);
        let theirs = other.join().unwrap();
        reader.join().unwrap();
        let accepted = [(first, mine), (second, theirs)];
        assert!(
            mine.is_ok() || theirs.is_ok(),
            "the free slot must go to someone"
        );
        for (key, result) in accepted {
            match result {
                Ok(()) => assert!(f.contains(&key), "LOST FINGERPRINT: accepted newcomer"),
                Err(e) => assert_eq!(e, InsertError::Full),
            }
        }
        let expected = stored.len() + accepted.iter().filter(|(_, r)| r.is_ok()).count();
        assert_eq!(f.len(), expected);
        assert_eq!(f.occupied_slots(), expected);
        assert!(stored.iter().all(|k| f.contains(k)), "LOST FINGERPRINT");
    });
}

/// A two-bucket table (one bucket pair) with `prefilled` of its eight slots
/// taken; two threads each insert one more key of that pair. Returns the
/// filter, the prefilled keys, and each inserted key with its result.
#[allow(clippy::type_complexity)]
fn race_for_last_slots(
    prefilled: usize,
) -> (Arc<Filter>, Vec<u64>, [(u64, Result<(), InsertError>); 2]) {
    let f = Arc::new(tiny(2, 1));
    let mut keys = Keys::new();
    let stored: Vec<u64> = (0..prefilled)
        .map(|i| keys.with_buckets(&f, i % 2, 1 - i % 2))
        .collect();
    for k in &stored {
        f.insert(k).unwrap();
    }
    let (a, b) = (keys.with_buckets(&f, 0, 1), keys.with_buckets(&f, 1, 0));
    let t = {
        let f = f.clone();
        thread::spawn(move || f.insert(&a))
    };
    let rb = f.insert(&b);
    let ra = t.join().unwrap();
    assert!(
        stored.iter().all(|k| f.contains(k)),
        "LOST FINGERPRINT: a prefilled key"
    );
    (f, stored, [(a, ra), (b, rb)])
}

#[test]
fn two_inserters_race_for_the_last_two_slots() {
    model(|| {
        // Six of eight slots taken: both fit.
        let (f, _, results) = race_for_last_slots(6);
        for (key, result) in results {
            assert_eq!(result, Ok(()));
            assert!(f.contains(&key), "LOST FINGERPRINT: an accepted key");
        }
        assert_eq!(f.len(), 8);
        assert_eq!(f.occupied_slots(), 8);
    });
}

#[test]
fn two_inserters_race_for_the_last_slot() {
    model(|| {
        // Seven of eight slots taken: exactly one wins, the other is Full.
        let (f, _, results) = race_for_last_slots(7);
        let winners: Vec<u64> = results
            .iter()
            .filter(|(_, r)| r.is_ok())
            .map(|&(k, _)| k)
            .collect();
        assert_eq!(winners.len(), 1, "exactly one must win: {results:?}");
        assert!(results
            .iter()
            .all(|(_, r)| matches!(r, Ok(()) | Err(InsertError::Full))));
        assert!(f.contains(&winners[0]), "LOST FINGERPRINT: the winner");
        assert_eq!(f.len(), 8);
        assert_eq!(f.occupied_slots(), 8);
    });
}

#[test]
fn insert_unique_of_one_key_from_two_threads_wins_once() {
    model(|| {
        let f = Arc::new(tiny(4, 1));
        let key = Keys::new().with_buckets(&f, 2, 3);
        let t = {
            let f = f.clone();
            thread::spawn(move || f.insert_unique(&key).unwrap())
        };
        let mine = f.insert_unique(&key).unwrap();
        let theirs = t.join().unwrap();
        assert!(mine ^ theirs, "exactly one insert_unique must return true");
        assert_eq!(f.len(), 1);
    });
}

#[test]
fn insert_unique_races_through_a_displacement() {
    model(|| {
        // Both buckets of the contested key are full, so each thread must
        // search and execute a path, then re-check under the locks.
        let f = Arc::new(tiny(4, 1));
        let (_, newcomer, stored) = displacement_setup(&f);
        let t = {
            let f = f.clone();
            thread::spawn(move || f.insert_unique(&newcomer).unwrap())
        };
        let mine = f.insert_unique(&newcomer).unwrap();
        let theirs = t.join().unwrap();
        assert!(mine ^ theirs, "exactly one insert_unique must return true");
        assert_eq!(f.len(), stored.len() + 1);
        assert!(stored.iter().all(|k| f.contains(k)), "LOST FINGERPRINT");
    });
}

#[test]
fn remove_races_contains_and_insert_on_shared_buckets() {
    model(|| {
        let f = Arc::new(tiny(4, 1));
        let mut keys = Keys::new();
        let (doomed, stable, incoming) = (
            keys.with_buckets(&f, 0, 1),
            keys.with_buckets(&f, 1, 0),
            keys.with_buckets(&f, 0, 1),
        );
        f.insert(&doomed).unwrap();
        f.insert(&doomed).unwrap(); // two copies: one survives the remove
        f.insert(&stable).unwrap();
        let remover = {
            let f = f.clone();
            thread::spawn(move || assert!(f.remove(&doomed)))
        };
        let inserter = {
            let f = f.clone();
            thread::spawn(move || f.insert(&incoming).unwrap())
        };
        assert!(
            f.contains(&stable),
            "LOST FINGERPRINT: unrelated key missed during remove"
        );
        assert!(
            f.contains(&doomed),
            "LOST FINGERPRINT: the surviving copy was missed"
        );
        remover.join().unwrap();
        inserter.join().unwrap();
        assert_eq!(f.len(), 3);
        assert!(f.contains(&doomed) && f.contains(&stable) && f.contains(&incoming));
        assert!(f.remove(&doomed) && !f.contains(&doomed));
    });
}

#[test]
fn a_path_invalidated_by_another_writer_is_retried_or_fails_cleanly() {
    model(|| {
        // The only path moves `victim` from bucket 0 to bucket 3, which has a
        // single free slot; another thread fills that slot concurrently.
        let f = Arc::new(tiny(4, 1));
        let (victim, newcomer, mut stored) = displacement_setup(&f);
        let mut keys = Keys::avoiding(&f, stored.iter().chain([&newcomer]));
        keys.insert_n(&f, 3, 2, 3, &mut stored);
        let rival = keys.with_buckets(&f, 3, 2);
        let t = {
            let f = f.clone();
            thread::spawn(move || f.insert(&rival).unwrap())
        };
        let mine = f.insert(&newcomer);
        t.join().unwrap();
        // Whichever way it went, nothing stored was lost and len is exact.
        assert!(stored.iter().all(|k| f.contains(k)), "LOST FINGERPRINT");
        assert!(f.contains(&rival), "LOST FINGERPRINT: rival");
        assert!(f.contains(&victim), "LOST FINGERPRINT: victim");
        let expected = stored.len() + 1 + usize::from(mine.is_ok());
        assert_eq!(f.len(), expected);
        assert_eq!(f.occupied_slots(), expected);
        match mine {
            Ok(()) => assert!(f.contains(&newcomer)),
            Err(e) => assert_eq!(e, InsertError::Full),
        }
    });
}
