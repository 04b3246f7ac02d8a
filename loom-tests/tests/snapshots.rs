//! loom models of snapshots taken beside writers (`src/snapshot.rs`): the
//! barrier that marks every stripe pending under every lock, the copy a
//! writer makes of a pending stripe before it changes it, and the pass
//! that copies the rest, a stripe at a time under loom.
//!
//! Tables have four buckets in two lock stripes (even and odd buckets).
//! Each model takes a snapshot on the main thread while another thread
//! writes, then reads the snapshot's body bucket by bucket. Markers the
//! canary run looks for: `LOST FINGERPRINT` (a key present throughout
//! missing from the snapshot), `SNAPSHOT TORN` (a snapshot that is no
//! state the filter was in: its length disagrees with the keys in it, a
//! fingerprint copied twice).
#![cfg(concurrent_cuckoo_loom)]

use concurrent_cuckoo::CuckooFilter;
use loom::sync::Arc;
use loom::thread;
use loom_tests::{four_buckets_two_stripes, model, Identity, Keys};

type Filter = CuckooFilter<Identity>;

/// Copies of `key`'s fingerprint in its two buckets of the snapshot `body`
/// (four 16-bit little-endian slots a bucket).
fn copies_in(f: &Filter, body: &[u8], key: u64) -> usize {
    let (fp, i1, i2) = f.signature_of_hash(key);
    let in_bucket = |i: usize| {
        body[i * 8..i * 8 + 8]
            .chunks_exact(2)
            .filter(|s| u64::from(u16::from_le_bytes([s[0], s[1]])) == fp)
            .count()
    };
    in_bucket(i1) + if i2 == i1 { 0 } else { in_bucket(i2) }
}

/// Checks a snapshot: every key of `stable` in it once, each of `maybe`
/// at most once, and a length that counts exactly those.
fn check(f: &Filter, snapshot: &(Vec<u8>, u64), stable: &[u64], maybe: &[u64]) {
    let (body, len) = snapshot;
    for &k in stable {
        let n = copies_in(f, body, k);
        assert!(
            n > 0,
            "LOST FINGERPRINT: a key present throughout is not in the snapshot"
        );
        assert_eq!(n, 1, "SNAPSHOT TORN: a key copied twice");
    }
    let mut expected = stable.len() as u64;
    for &k in maybe {
        let n = copies_in(f, body, k);
        assert!(n <= 1, "SNAPSHOT TORN: a key copied twice");
        expected += n as u64;
    }
    assert_eq!(
        *len, expected,
        "SNAPSHOT TORN: the length counts other keys"
    );
}

/// Bucket 1 (stripe 1) holds `victim` (pair {1, 2}) and three keys of pair
/// {1, 0}; bucket 0 (stripe 0) is full of pair-{0, 1} keys; buckets 2 and 3
/// are empty. An insert of another pair-{1, 0} key must move `victim` from
/// bucket 1 into bucket 2, out of stripe 1 into stripe 0, which the pass
/// copies first. Returns (every stored key, that newcomer).
fn move_across_stripes(f: &Filter) -> (Vec<u64>, u64) {
    let mut keys = Keys::new();
    let victim = keys.with_buckets(f, 1, 2);
    f.insert(&victim).unwrap();
    let mut stored = vec![victim];
    keys.insert_n(f, 1, 0, 3, &mut stored);
    keys.insert_n(f, 0, 1, 4, &mut stored);
    let newcomer = keys.with_buckets(f, 1, 0);
    (stored, newcomer)
}

/// A snapshot beside an insert that moves a fingerprint out of the stripe
/// the pass copies last into the one it copies first. (With the writer's
/// copy skipped, the pass can copy stripe 0 before the move and stripe 1
/// after it, and the victim is in neither copy; with the stripes marked
/// one by one instead of under every lock, the writer can find stripe 0
/// marked and stripe 1 not, with the same result.)
#[test]
fn a_snapshot_beside_a_move_across_stripes_loses_nothing() {
    model(|| {
        let f = Arc::new(four_buckets_two_stripes());
        let (stored, newcomer) = move_across_stripes(&f);
        let writer = {
            let f = f.clone();
            thread::spawn(move || f.insert(&newcomer).unwrap())
        };
        let snapshot = f.snapshot_body();
        writer.join().unwrap();
        check(&f, &snapshot, &stored, &[newcomer]);
        // The writer's copy must not have changed the filter itself.
        for k in stored.iter().chain([&newcomer]) {
            assert!(f.contains(k), "LOST FINGERPRINT: a key in the filter");
        }
    });
}

/// A snapshot beside a remove and an insert on two stripes: the remove of
/// a key of bucket 3 (stripe 1) and the insert of one into bucket 2 (stripe
/// 0) land in the snapshot or not, each as a whole, and the length counts
/// what is in it.
#[test]
fn a_snapshot_beside_a_remove_and_an_insert_is_one_state() {
    model(|| {
        let f = Arc::new(four_buckets_two_stripes());
        let mut keys = Keys::new();
        let mut stable = Vec::new();
        keys.insert_n(&f, 0, 1, 2, &mut stable);
        keys.insert_n(&f, 3, 2, 1, &mut stable);
        let leaving = keys.with_buckets(&f, 3, 0);
        f.insert(&leaving).unwrap();
        let arriving = keys.with_buckets(&f, 2, 1);
        let writer = {
            let f = f.clone();
            thread::spawn(move || {
                assert!(f.remove(&leaving));
                f.insert(&arriving).unwrap();
            })
        };
        let snapshot = f.snapshot_body();
        writer.join().unwrap();
        check(&f, &snapshot, &stable, &[leaving, arriving]);
        assert!(
            copies_in(&f, &snapshot.0, leaving) == 0 || copies_in(&f, &snapshot.0, arriving) == 0,
            "SNAPSHOT TORN: the insert without the remove that came before it"
        );
    });
}
