//! loom models of the single-lock writes (`src/table.rs`, "single-lock
//! writes"): a multiset insert into a free slot of its primary bucket, and
//! a remove of a copy there, each under the lock of that one bucket, while
//! the pair's other bucket may be changed by writers holding its lock.
//!
//! Each model races one such write against another writer of the same
//! buckets, with a lookup beside it. Markers the canary run looks for:
//! `LOST FINGERPRINT` (a stored key not found), `REMOVE MISSED` (a remove
//! of a present key that answered false). Tables have two lock stripes
//! (even and odd buckets), so a pair always spans both, and a write whose
//! primary is odd takes the lower stripe second (it releases and locks the
//! pair afresh): both orders are explored.
#![cfg(concurrent_cuckoo_loom)]

use concurrent_cuckoo::CuckooFilter;
use loom::sync::Arc;
use loom::thread;
use loom_tests::{four_buckets_two_stripes, model, Identity, Keys};

type Filter = CuckooFilter<Identity>;

/// A lookup of `key` on its own thread, which must find it.
fn reader(f: &Arc<Filter>, key: u64, what: &'static str) -> thread::JoinHandle<()> {
    let f = f.clone();
    thread::spawn(move || assert!(f.contains(&key), "LOST FINGERPRINT: {what}"))
}

/// Bucket 0 holds `victim` (pair {0, 3}) and three keys of pair {0, 1};
/// bucket 1 is full of pair-{1, 0} keys; buckets 2 and 3 are empty. An
/// insert of another pair-{0, 1} key must move `victim` to bucket 3.
/// Returns (victim, that newcomer, every stored key, the generator).
fn one_move_to_make(f: &Filter) -> (u64, u64, Vec<u64>, Keys) {
    let mut keys = Keys::new();
    let victim = keys.with_buckets(f, 0, 3);
    f.insert(&victim).unwrap();
    let mut stored = vec![victim];
    keys.insert_n(f, 0, 1, 3, &mut stored);
    keys.insert_n(f, 1, 0, 4, &mut stored);
    let newcomer = keys.with_buckets(f, 0, 1);
    (victim, newcomer, stored, keys)
}

/// Two inserts race for the one free slot of their common primary bucket
/// 0: one gets it under bucket 0's lock alone, the other finds the bucket
/// full and takes its alternate under both locks. A lookup of a key of
/// bucket 0 runs beside them. (With the lock skipped, both write the same
/// slot and one key is lost.)
#[test]
fn two_primary_inserts_race_for_one_free_slot() {
    model(|| {
        let f = Arc::new(four_buckets_two_stripes());
        let mut keys = Keys::new();
        let mut stored = Vec::new();
        keys.insert_n(&f, 0, 1, 3, &mut stored);
        let (a, b) = (keys.with_buckets(&f, 0, 1), keys.with_buckets(&f, 0, 3));
        let look = reader(&f, stored[0], "a key of the bucket both inserts write");
        let other = {
            let f = f.clone();
            thread::spawn(move || f.insert(&a).unwrap())
        };
        f.insert(&b).unwrap();
        other.join().unwrap();
        look.join().unwrap();
        for key in stored.iter().chain([&a, &b]) {
            assert!(
                f.contains(key),
                "LOST FINGERPRINT: a stored or accepted key"
            );
        }
        assert_eq!(f.len(), 5);
        assert_eq!(f.occupied_slots(), 5);
    });
}

/// A path move into bucket 3 (`victim`, 0 -> 3, under the locks of 0 and
/// 3) races an insert whose primary is bucket 3, under its lock alone.
/// The inserting thread then looks the moving key up while the move may
/// still run (two threads, not three: with a third for the lookup this
/// model explored 916,046 interleavings).
#[test]
fn a_primary_insert_races_a_path_move_into_its_bucket() {
    model(|| {
        let f = Arc::new(four_buckets_two_stripes());
        let (victim, newcomer, stored, mut keys) = one_move_to_make(&f);
        let rival = keys.with_buckets(&f, 3, 2);
        let other = {
            let f = f.clone();
            thread::spawn(move || {
                f.insert(&rival).unwrap();
                assert!(f.contains(&victim), "LOST FINGERPRINT: the key being moved");
            })
        };
        f.insert(&newcomer).unwrap();
        other.join().unwrap();
        for key in stored.iter().chain([&newcomer, &rival]) {
            assert!(
                f.contains(key),
                "LOST FINGERPRINT: a stored or accepted key"
            );
        }
        assert_eq!(f.relocations(), 1);
        assert_eq!(f.len(), stored.len() + 2);
        assert_eq!(f.occupied_slots(), stored.len() + 2);
    });
}

/// A path move out of bucket 0 frees a slot there for the insert that
/// made it; an insert whose primary is bucket 0 (alternate 3) may
/// take that slot under bucket 0's lock alone first, and the mover must
/// then make room again. Both succeed; the inserting thread then looks
/// the moving key up while the move may still run (a third thread for the
/// lookup made 3,121,533 interleavings).
#[test]
fn a_primary_insert_races_a_path_move_out_of_its_bucket() {
    model(|| {
        let f = Arc::new(four_buckets_two_stripes());
        let (victim, newcomer, stored, mut keys) = one_move_to_make(&f);
        let rival = keys.with_buckets(&f, 0, 3);
        let other = {
            let f = f.clone();
            thread::spawn(move || {
                f.insert(&rival).unwrap();
                assert!(f.contains(&victim), "LOST FINGERPRINT: the key being moved");
            })
        };
        f.insert(&newcomer).unwrap();
        other.join().unwrap();
        for key in stored.iter().chain([&newcomer, &rival]) {
            assert!(
                f.contains(key),
                "LOST FINGERPRINT: a stored or accepted key"
            );
        }
        assert_eq!(f.len(), stored.len() + 2);
        assert_eq!(f.occupied_slots(), stored.len() + 2);
    });
}

/// A remove of `victim` races the path move of `victim` from its primary
/// (bucket 0) to its alternate: it takes the copy in bucket 0 under that
/// lock alone, or, once it moved, finds bucket 0 without it and takes it
/// from bucket 3 under both locks. Never a false "not present"; a lookup of
/// another key of bucket 0 runs beside them.
#[test]
fn a_remove_races_a_move_of_its_fingerprint() {
    model(|| {
        let f = Arc::new(four_buckets_two_stripes());
        let (victim, newcomer, stored, _) = one_move_to_make(&f);
        let look = reader(&f, stored[1], "a key of the bucket the move leaves");
        let remover = {
            let f = f.clone();
            thread::spawn(move || {
                assert!(f.remove(&victim), "REMOVE MISSED: a key being moved");
            })
        };
        f.insert(&newcomer).unwrap();
        remover.join().unwrap();
        look.join().unwrap();
        assert!(!f.contains(&victim), "the removed key is gone");
        for key in stored[1..].iter().chain([&newcomer]) {
            assert!(
                f.contains(key),
                "LOST FINGERPRINT: a stored or accepted key"
            );
        }
        assert_eq!(f.len(), stored.len());
        assert_eq!(f.occupied_slots(), stored.len());
    });
}

/// Two removes of a key with three copies, one in its full primary bucket
/// (`primary`) and two in its alternate, run together: the first takes the
/// primary's copy under that bucket's lock alone, the other finds the
/// primary without one and takes one from the alternate under both locks,
/// adding the alternate's stripe when it comes after the primary's and
/// releasing and locking the pair afresh when it comes first.
/// Both succeed, and a lookup beside them always finds the copy that stays.
fn two_removes_of_a_key_with_three_copies(primary: usize, alternate: usize) {
    model(move || {
        let f = Arc::new(four_buckets_two_stripes());
        let mut keys = Keys::new();
        let mut stored = Vec::new();
        let key = keys.with_buckets(&f, primary, alternate);
        f.insert(&key).unwrap();
        keys.insert_n(&f, primary, 3 - primary, 3, &mut stored);
        f.insert(&key).unwrap(); // the primary is full: both into the alternate
        f.insert(&key).unwrap();
        let look = reader(&f, key, "the copy that stays");
        let other = {
            let f = f.clone();
            thread::spawn(move || assert!(f.remove(&key), "REMOVE MISSED: one of three copies"))
        };
        assert!(f.remove(&key), "REMOVE MISSED: one of three copies");
        other.join().unwrap();
        look.join().unwrap();
        assert!(f.contains(&key), "LOST FINGERPRINT: the third copy");
        assert!(stored.iter().all(|k| f.contains(k)), "LOST FINGERPRINT");
        assert_eq!(f.len(), stored.len() + 1);
        assert_eq!(f.occupied_slots(), stored.len() + 1);
        assert!(f.remove(&key) && !f.contains(&key));
    });
}

#[test]
fn two_removes_of_a_key_with_three_copies_widening_in_order() {
    two_removes_of_a_key_with_three_copies(0, 1);
}

#[test]
fn two_removes_of_a_key_with_three_copies_relocking_the_pair() {
    two_removes_of_a_key_with_three_copies(1, 0);
}

/// `insert_unique` of one key from two threads (both buckets' locks, as
/// before the single-lock writes) with a lookup of another key of the
/// pair beside them: exactly one adds it.
#[test]
fn insert_unique_races_insert_unique_beside_a_reader() {
    model(|| {
        let f = Arc::new(four_buckets_two_stripes());
        let mut keys = Keys::new();
        let mut stored = Vec::new();
        keys.insert_n(&f, 1, 0, 1, &mut stored);
        let key = keys.with_buckets(&f, 1, 0);
        let look = reader(&f, stored[0], "a key of the pair");
        let other = {
            let f = f.clone();
            thread::spawn(move || f.insert_unique(&key).unwrap())
        };
        let mine = f.insert_unique(&key).unwrap();
        let theirs = other.join().unwrap();
        look.join().unwrap();
        assert!(mine ^ theirs, "exactly one insert_unique must return true");
        assert_eq!(f.len(), 2);
        assert_eq!(f.occupied_slots(), 2);
    });
}
