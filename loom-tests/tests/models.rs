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
use loom_tests::{model, Identity, Keys};

type Filter = CuckooFilter<Identity>;

/// A table of `buckets` buckets, two stripes (even | odd buckets), paths of
/// up to `max_path` moves, 16-bit fingerprints.
fn tiny(buckets: usize, max_path: usize) -> Filter {
    tiny_bits(buckets, max_path, 16)
}

/// [`tiny`] with fingerprints of `bits` bits (8, 16 or 32: the 32-bit
/// bucket is two atomic halves, the others one atomic word).
fn tiny_bits(buckets: usize, max_path: usize, bits: u32) -> Filter {
    CuckooFilter::builder()
        .bucket_count(buckets)
        .stripe_count(2)
        .max_path_len(max_path)
        .fingerprint_bits(bits)
        .hasher(Identity)
        .build()
        .unwrap()
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
    reader_during_displacement(displacement_setup, 16);
}

#[test]
fn reader_finds_a_fingerprint_displaced_towards_the_bucket_it_reads_first() {
    reader_during_displacement(reverse_displacement_setup, 16);
}

#[test]
fn reader_finds_an_8_bit_fingerprint_while_it_is_displaced() {
    reader_during_displacement(displacement_setup, 8);
    reader_during_displacement(reverse_displacement_setup, 8);
}

#[test]
fn reader_finds_a_32_bit_fingerprint_while_it_is_displaced() {
    reader_during_displacement(displacement_setup, 32);
    reader_during_displacement(reverse_displacement_setup, 32);
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
fn reader_during_displacement(setup: Setup, bits: u32) {
    model(move || {
        let f = Arc::new(tiny_bits(4, 1, bits));
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
/// taken; two threads each insert one more key of that pair, the first
/// with primary bucket 0, the second with primary `second_primary`.
/// Returns the filter, the prefilled keys, and each inserted key with its
/// result.
#[allow(clippy::type_complexity)]
fn race_for_last_slots(
    prefilled: usize,
    second_primary: usize,
) -> (Arc<Filter>, Vec<u64>, [(u64, Result<(), InsertError>); 2]) {
    let f = Arc::new(tiny(2, 1));
    let mut keys = Keys::new();
    let stored: Vec<u64> = (0..prefilled)
        .map(|i| keys.with_buckets(&f, i % 2, 1 - i % 2))
        .collect();
    for k in &stored {
        f.insert(k).unwrap();
    }
    let (a, b) = (
        keys.with_buckets(&f, 0, 1),
        keys.with_buckets(&f, second_primary, 1 - second_primary),
    );
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
        // Six of eight slots taken, one free in each bucket: both fit. Both
        // keys have primary 0: one takes its free slot under that lock
        // alone, the other finds it full and goes to bucket 1 under both
        // locks. (Keys of opposite primaries would each write their own
        // primary under their own lock: no shared access at all.)
        let (f, _, results) = race_for_last_slots(6, 0);
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
        let (f, _, results) = race_for_last_slots(7, 1);
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

/// "`Full` means full" against a search that reads the table without
/// locks. `newcomer` (pair {0, 1}) finds both buckets full, and its
/// search scans, one level at a time:
///
/// * level 1: bucket 3 (where `v` of bucket 0 would go), full; buckets 1
///   and 6, full;
/// * level 2: bucket 2 (where `u` of bucket 3 would go), with one free
///   slot; buckets 4 and 5, full.
///
/// Another thread removes `gone` from bucket 3, then inserts `late` into
/// bucket 2's last slot. A free slot is reachable from `newcomer` at every
/// instant (bucket 2 until the insert, bucket 3 from the remove on), yet a
/// search that scans level 1 before the remove and level 2 after the
/// insert sees none. Only an exact search under the locks may answer
/// `Full`, so the insert must succeed.
#[test]
fn a_search_that_misses_a_moving_free_slot_does_not_answer_full() {
    model(|| {
        let f = Arc::new(tiny(8, 2));
        let mut keys = Keys::new();
        let mut stored = Vec::new();
        let v = keys.with_buckets(&f, 0, 3);
        f.insert(&v).unwrap();
        stored.push(v);
        keys.insert_n(&f, 0, 1, 3, &mut stored);
        keys.insert_n(&f, 1, 6, 4, &mut stored);
        let gone = keys.with_buckets(&f, 3, 4);
        f.insert(&gone).unwrap();
        let u = keys.with_buckets(&f, 3, 2);
        f.insert(&u).unwrap();
        stored.push(u);
        keys.insert_n(&f, 3, 4, 2, &mut stored);
        keys.insert_n(&f, 4, 5, 4, &mut stored);
        keys.insert_n(&f, 5, 6, 4, &mut stored);
        keys.insert_n(&f, 6, 5, 4, &mut stored);
        keys.insert_n(&f, 2, 7, 3, &mut stored);
        let (newcomer, late) = (keys.with_buckets(&f, 0, 1), keys.with_buckets(&f, 2, 7));
        let t = {
            let f = f.clone();
            thread::spawn(move || {
                assert!(f.remove(&gone));
                // Bucket 2's last slot, or bucket 7 if `newcomer` took it.
                f.insert(&late).unwrap();
            })
        };
        let mine = f.insert(&newcomer);
        t.join().unwrap();
        assert_eq!(
            mine,
            Ok(()),
            "Full while a free slot was reachable throughout"
        );
        assert!(f.contains(&newcomer), "LOST FINGERPRINT: newcomer");
        assert!(f.contains(&late), "LOST FINGERPRINT: late");
        assert!(stored.iter().all(|k| f.contains(k)), "LOST FINGERPRINT");
        assert_eq!(f.len(), stored.len() + 2);
        assert_eq!(f.occupied_slots(), stored.len() + 2);
    });
}

// ---------------------------------------------------------------------------
// Removes that are moves: the second copy of a fingerprint.
//
// When a bucket pair holds two copies of one fingerprint, removing one of
// them leaves the key present, so to a reader it is a move: the copy it
// relied on disappears while another one, perhaps written a moment ago,
// stands in for it. These models fail unless such a remove tells readers
// (a version bump between the other copy being visible and the clear).
// ---------------------------------------------------------------------------

/// A key with the same fingerprint and bucket pair as `key`, but whose
/// primary bucket is `key`'s alternate: indistinguishable from `key` to the
/// filter, yet probed and removed in the opposite bucket order.
fn reversed_twin(f: &Filter, key: u64) -> u64 {
    let (fp, primary, alternate) = f.signature_of_hash(key);
    let twin = f.hash_for_bucket(alternate, fp as u32);
    assert_eq!(f.signature_of_hash(twin), (fp, alternate, primary));
    twin
}

/// Same key, weak memory. `key` sits in its full primary bucket 0; its
/// alternate, bucket 1, has room. The writer inserts a second copy (it
/// lands in bucket 1), then removes one (the copy in bucket 0, found
/// first). The key is present at every instant, but the reader's two
/// relaxed bucket loads are not ordered with each other: it may see bucket
/// 0 after the clear and bucket 1 before the new copy.
fn second_copy_inserted_then_first_removed(bits: u32) {
    model(move || {
        let f = Arc::new(tiny_bits(4, 1, bits));
        let mut keys = Keys::new();
        let key = keys.with_buckets(&f, 0, 1);
        f.insert(&key).unwrap();
        let mut stored = vec![key];
        keys.insert_n(&f, 0, 3, 3, &mut stored); // bucket 0 is now full
        let reader = {
            let f = f.clone();
            thread::spawn(move || {
                assert!(
                    f.contains(&key),
                    "LOST FINGERPRINT: a key with a copy in its pair at every instant"
                )
            })
        };
        f.insert(&key).unwrap(); // lands in bucket 1
        assert!(f.remove(&key)); // clears the copy in bucket 0
        reader.join().unwrap();
        assert!(stored.iter().all(|k| f.contains(k)), "LOST FINGERPRINT");
        assert_eq!(f.len(), stored.len());
        assert_eq!(f.occupied_slots(), stored.len());
    });
}

#[test]
fn removing_the_older_of_two_copies_never_hides_the_key_8_bit() {
    second_copy_inserted_then_first_removed(8);
}

#[test]
fn removing_the_older_of_two_copies_never_hides_the_key_16_bit() {
    second_copy_inserted_then_first_removed(16);
}

#[test]
fn removing_the_older_of_two_copies_never_hides_the_key_32_bit() {
    second_copy_inserted_then_first_removed(32);
}

/// Two colliding keys, any CPU. `key` (primary 0, alternate 1) has its only
/// copy in bucket 1, which is full; its reversed twin has primary 1. The
/// reader probes bucket 0 (no match); the writer inserts the twin (bucket 1
/// is full, so it lands in bucket 0) and removes it, which clears the copy
/// in the twin's primary, bucket 1: `key`'s. The reader then probes bucket 1
/// and finds nothing. `key` was never removed: the multiset still holds one
/// copy of the signature at every instant.
fn colliding_twin_inserted_then_removed(bits: u32) {
    model(move || {
        let f = Arc::new(tiny_bits(4, 1, bits));
        let mut keys = Keys::new();
        let mut stored = Vec::new();
        // Fill bucket 0 so that `key` lands in its alternate, bucket 1 ...
        keys.insert_n(&f, 0, 3, 4, &mut stored);
        let key = keys.with_buckets(&f, 0, 1);
        f.insert(&key).unwrap();
        // ... then make room in bucket 0 and fill bucket 1.
        let freed = stored.pop().unwrap();
        assert!(f.remove(&freed));
        keys.insert_n(&f, 1, 2, 3, &mut stored);
        stored.push(key);
        let twin = reversed_twin(&f, key);
        let reader = {
            let f = f.clone();
            thread::spawn(move || {
                assert!(
                    f.contains(&key),
                    "LOST FINGERPRINT: a key hidden by a colliding key's insert and remove"
                )
            })
        };
        f.insert(&twin).unwrap(); // bucket 1 is full: lands in bucket 0
        assert!(f.remove(&twin)); // clears the copy in bucket 1
        reader.join().unwrap();
        assert!(stored.iter().all(|k| f.contains(k)), "LOST FINGERPRINT");
        assert_eq!(f.len(), stored.len());
        assert_eq!(f.occupied_slots(), stored.len());
    });
}

#[test]
fn a_colliding_key_inserted_and_removed_never_hides_its_twin_8_bit() {
    colliding_twin_inserted_then_removed(8);
}

#[test]
fn a_colliding_key_inserted_and_removed_never_hides_its_twin_16_bit() {
    colliding_twin_inserted_then_removed(16);
}

#[test]
fn a_colliding_key_inserted_and_removed_never_hides_its_twin_32_bit() {
    colliding_twin_inserted_then_removed(32);
}

/// Inside one 32-bit bucket: its two halves (slots 0-1 and 2-3) are two
/// atomics, loaded one after the other. `key` is in slot 0; slot 1 is taken,
/// slots 2-3 are free. A second copy lands in slot 2 (the other half), then
/// the remove clears slot 0: a reader may see the new low half and the old
/// high half.
#[test]
fn removing_one_copy_never_hides_the_other_half_of_a_32_bit_bucket() {
    model(|| {
        let f = Arc::new(tiny_bits(4, 1, 32));
        let mut keys = Keys::new();
        let key = keys.with_buckets(&f, 0, 1);
        f.insert(&key).unwrap();
        let mut stored = vec![key];
        keys.insert_n(&f, 0, 3, 1, &mut stored);
        let reader = {
            let f = f.clone();
            thread::spawn(move || {
                assert!(
                    f.contains(&key),
                    "LOST FINGERPRINT: a copy in the other half of the bucket"
                )
            })
        };
        f.insert(&key).unwrap(); // slot 2, the high half
        assert!(f.remove(&key)); // slot 0, the low half
        reader.join().unwrap();
        assert!(f.contains(&key), "LOST FINGERPRINT");
        assert_eq!(f.len(), 2);
        assert_eq!(f.occupied_slots(), 2);
    });
}

/// Both copies of a duplicated key were stored before the reader started,
/// one in each bucket; removing one must leave the other visible.
#[test]
fn removing_one_of_two_old_copies_against_a_reader() {
    model(|| {
        let f = Arc::new(tiny(4, 1));
        let mut keys = Keys::new();
        let key = keys.with_buckets(&f, 0, 1);
        let mut stored = Vec::new();
        f.insert(&key).unwrap();
        keys.insert_n(&f, 0, 3, 3, &mut stored);
        f.insert(&key).unwrap(); // bucket 0 is full: the second copy is in bucket 1
        let reader = {
            let f = f.clone();
            thread::spawn(move || assert!(f.contains(&key), "LOST FINGERPRINT: the remaining copy"))
        };
        assert!(f.remove(&key));
        reader.join().unwrap();
        assert!(f.contains(&key), "LOST FINGERPRINT");
        assert_eq!(f.len(), stored.len() + 1);
        assert!(f.remove(&key) && !f.contains(&key));
    });
}

// ---------------------------------------------------------------------------
// Longer paths, clear, and set semantics against remove.
// ---------------------------------------------------------------------------

/// Six buckets, paths of up to two moves. Bucket 0 holds `near` (alternate
/// 3) and three keys whose alternate is bucket 1; bucket 1 is full of keys
/// whose alternate is bucket 0; bucket 3 holds `deep` (alternate 4) and
/// three keys whose alternate is bucket 0. The only way to free a slot for
/// a new pair-{0,1} key is two hops: `deep` 3 -> 4, then `near` 0 -> 3. A
/// reader looks both moved keys up with one batch.
#[test]
fn reader_finds_both_fingerprints_moved_by_a_two_hop_path() {
    model(|| {
        let f = Arc::new(tiny(6, 2));
        let mut keys = Keys::new();
        let mut stored = Vec::new();
        let near = keys.with_buckets(&f, 0, 3);
        f.insert(&near).unwrap();
        stored.push(near);
        keys.insert_n(&f, 0, 1, 3, &mut stored); // bucket 0 full
        keys.insert_n(&f, 1, 0, 4, &mut stored); // bucket 1 full
        let deep = keys.with_buckets(&f, 3, 4);
        f.insert(&deep).unwrap();
        stored.push(deep);
        keys.insert_n(&f, 3, 0, 3, &mut stored); // bucket 3 full
        let newcomer = keys.with_buckets(&f, 0, 1);
        let reader = {
            let f = f.clone();
            thread::spawn(move || {
                let mut out = [false; 2];
                f.contains_batch(&[near, deep], &mut out);
                assert_eq!(
                    out,
                    [true, true],
                    "LOST FINGERPRINT: a key moved by a two-hop path"
                );
            })
        };
        f.insert(&newcomer).unwrap();
        reader.join().unwrap();
        assert_eq!(f.relocations(), 2, "the model must force a two-hop path");
        assert!(stored.iter().all(|k| f.contains(k)), "LOST FINGERPRINT");
        assert!(f.contains(&newcomer));
        assert_eq!(f.len(), stored.len() + 1);
        assert_eq!(f.occupied_slots(), stored.len() + 1);
    });
}

/// `clear` races an insert of a new key and a reader. Whatever the order,
/// the counts agree with the contents, and a key inserted after the clear
/// (by the clearing thread) is visible to a reader that saw it published.
#[test]
fn clear_against_a_reader_and_an_inserter() {
    use loom::sync::atomic::{AtomicBool, Ordering};
    model(|| {
        let f = Arc::new(tiny(4, 1));
        let mut keys = Keys::new();
        let mut stored = Vec::new();
        keys.insert_n(&f, 0, 1, 2, &mut stored);
        let (racing, after) = (keys.with_buckets(&f, 1, 0), keys.with_buckets(&f, 0, 1));
        let published = Arc::new(AtomicBool::new(false));
        let reader = {
            let (f, published) = (f.clone(), published.clone());
            thread::spawn(move || {
                if published.load(Ordering::Acquire) {
                    assert!(
                        f.contains(&after),
                        "LOST FINGERPRINT: a key inserted after clear"
                    );
                }
            })
        };
        let inserter = {
            let f = f.clone();
            thread::spawn(move || f.insert(&racing).unwrap())
        };
        f.clear();
        f.insert(&after).unwrap();
        published.store(true, Ordering::Release);
        inserter.join().unwrap();
        reader.join().unwrap();
        // `racing` survives exactly when its insert came after the clear.
        let survivors = 1 + usize::from(f.contains(&racing));
        assert!(f.contains(&after), "LOST FINGERPRINT");
        assert!(stored.iter().all(|k| !f.contains(k)), "clear left a key");
        assert_eq!(f.len(), survivors);
        assert_eq!(f.occupied_slots(), survivors);
    });
}

/// `insert_unique` of a key races `remove` of its only copy: either the
/// remove came first (then the insert adds it back and returns true) or
/// the insert came first (it sees the copy and returns false, then the
/// remove takes it away). Never both false with the key absent, never two
/// copies.
#[test]
fn insert_unique_against_remove_of_the_same_key() {
    model(|| {
        let f = Arc::new(tiny(4, 1));
        let key = Keys::new().with_buckets(&f, 0, 1);
        f.insert(&key).unwrap();
        let remover = {
            let f = f.clone();
            thread::spawn(move || assert!(f.remove(&key), "the only copy must be removable"))
        };
        let added = f.insert_unique(&key).unwrap();
        remover.join().unwrap();
        assert_eq!(f.contains(&key), added);
        assert_eq!(f.len(), usize::from(added));
        assert_eq!(f.occupied_slots(), usize::from(added));
    });
}

// ---------------------------------------------------------------------------
// Batches: the same protocols through insert_batch / remove_batch, under
// both of their locking modes (every stripe, for a batch of at least half
// as many keys as the table has stripes; otherwise each key's pair).
// ---------------------------------------------------------------------------

/// [`tiny`] with `stripes` lock stripes: 2 makes a batch of one or more
/// keys lock the whole table; 128 makes a short batch lock each key's pair.
fn tiny_striped(buckets: usize, max_path: usize, stripes: usize) -> Filter {
    CuckooFilter::builder()
        .bucket_count(buckets)
        .stripe_count(stripes)
        .max_path_len(max_path)
        .fingerprint_bits(16)
        .hasher(Identity)
        .build()
        .unwrap()
}

/// A batch whose key needs the displacement of [`displacement_setup`],
/// against a reader of the key being moved.
fn batch_insert_displaces_while_a_reader_looks(stripes: usize) {
    model(move || {
        let f = Arc::new(tiny_striped(4, 1, stripes));
        let (victim, newcomer, stored) = displacement_setup(&f);
        let reader = {
            let f = f.clone();
            thread::spawn(move || {
                assert!(
                    f.contains(&victim),
                    "LOST FINGERPRINT: reader missed a key a batch displaced"
                )
            })
        };
        f.insert_batch(&[newcomer]).unwrap();
        reader.join().unwrap();
        assert_eq!(f.relocations(), 1, "the batch must displace the victim");
        assert!(stored.iter().all(|k| f.contains(k)) && f.contains(&newcomer));
        assert_eq!(f.len(), stored.len() + 1);
        assert_eq!(f.occupied_slots(), stored.len() + 1);
    });
}

#[test]
fn batch_insert_displaces_under_the_whole_table_lock_while_a_reader_looks() {
    batch_insert_displaces_while_a_reader_looks(2);
}

#[test]
fn batch_insert_displaces_under_pair_locks_while_a_reader_looks() {
    batch_insert_displaces_while_a_reader_looks(128);
}

/// The same-key scenario of protocol 2, through batches: a second copy
/// inserted by `insert_batch` lands in the alternate bucket, and
/// `remove_batch` clears the older copy in the primary.
fn batch_remove_of_a_second_copy_against_a_reader(stripes: usize) {
    model(move || {
        let f = Arc::new(tiny_striped(4, 1, stripes));
        let mut keys = Keys::new();
        let key = keys.with_buckets(&f, 0, 1);
        f.insert(&key).unwrap();
        let mut stored = vec![key];
        keys.insert_n(&f, 0, 3, 3, &mut stored);
        let reader = {
            let f = f.clone();
            thread::spawn(move || {
                assert!(
                    f.contains(&key),
                    "LOST FINGERPRINT: a batch remove hid a key with another copy"
                )
            })
        };
        f.insert_batch(&[key]).unwrap();
        let mut removed = [false];
        f.remove_batch(&[key], &mut removed);
        assert!(removed[0]);
        reader.join().unwrap();
        assert!(stored.iter().all(|k| f.contains(k)), "LOST FINGERPRINT");
        assert_eq!(f.len(), stored.len());
    });
}

#[test]
fn batch_remove_of_a_second_copy_under_the_whole_table_lock_against_a_reader() {
    batch_remove_of_a_second_copy_against_a_reader(2);
}

#[test]
fn batch_remove_of_a_second_copy_under_pair_locks_against_a_reader() {
    batch_remove_of_a_second_copy_against_a_reader(128);
}

/// A set-style batch (`insert_unique_batch`) and a lone `insert_unique`
/// of the same key: the batch decides under the locks it holds for the
/// key (every stripe, or the key's pair), as the lone call does, so the
/// key is stored once and exactly one of the two says it was new.
fn set_style_batch_against_a_lone_insert_unique(stripes: usize) {
    model(move || {
        let f = Arc::new(tiny_striped(4, 1, stripes));
        let mut keys = Keys::new();
        let key = keys.with_buckets(&f, 2, 3);
        let other = keys.with_buckets(&f, 0, 1);
        let lone = {
            let f = f.clone();
            thread::spawn(move || f.insert_unique(&key).unwrap())
        };
        let mut new = [false; 2];
        f.insert_unique_batch(&[other, key], &mut new).unwrap();
        let theirs = lone.join().unwrap();
        assert!(new[0], "the other key was new");
        assert!(
            new[1] ^ theirs,
            "DUPLICATE ADMITTED: exactly one insert of the key must say it was new"
        );
        assert_eq!(f.len(), 2, "DUPLICATE ADMITTED: the key stored twice");
        assert_eq!(f.occupied_slots(), 2);
    });
}

#[test]
fn set_style_batch_under_the_whole_table_lock_against_a_lone_insert_unique() {
    set_style_batch_against_a_lone_insert_unique(2);
}

#[test]
fn set_style_batch_under_pair_locks_against_a_lone_insert_unique() {
    set_style_batch_against_a_lone_insert_unique(128);
}

/// A batch that holds every stripe lets go as soon as another writer
/// waits for one (it checks before each key), then writes its remaining
/// keys under pair locks: the lone insert is not shut out for the rest of
/// the batch, nobody deadlocks, and every key of both is stored once.
#[test]
fn a_writer_waiting_on_a_batch_that_holds_every_stripe_gets_its_lock() {
    model(|| {
        let f = Arc::new(tiny_striped(4, 1, 2));
        let mut keys = Keys::new();
        let batch = [keys.with_buckets(&f, 0, 1), keys.with_buckets(&f, 2, 3)];
        let lone = keys.with_buckets(&f, 1, 0);
        let writer = {
            let f = f.clone();
            thread::spawn(move || f.insert(&lone).unwrap())
        };
        f.insert_batch(&batch).unwrap();
        writer.join().unwrap();
        assert!(
            batch.iter().chain([&lone]).all(|k| f.contains(k)),
            "LOST FINGERPRINT: a key of the batch or the lone insert is missing"
        );
        assert_eq!(f.len(), 3);
        assert_eq!(f.occupied_slots(), 3);
    });
}
