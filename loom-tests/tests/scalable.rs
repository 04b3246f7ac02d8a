//! loom models of the growing filter's protocols: publishing a new level,
//! `insert_unique` across the growth point, retiring an emptied level, a
//! remove against a key colliding in another level, an insert against a
//! `clear` and regrowth, the last two removes of an old level, and a
//! retired slot reopened as the insert level while readers read it.
//!
//! Most models start from a filter whose first level (2 buckets, 8 slots)
//! is full, so the next insert must grow it. Run with `scripts/loom.sh`.
//! Failure messages carry a marker that `scripts/loom.sh --canary` looks
//! for: `LOST FINGERPRINT` for a key that was stored and not found (as in
//! `models.rs`), `FULL WITH ROOM` for an insert refused while a level had
//! room, `LEVEL NOT RETIRED` for an emptied old level left in use,
//! `REMOVE MISSED` for a remove of a stored key that took nothing.
#![cfg(concurrent_cuckoo_loom)]

use concurrent_cuckoo::ScalableCuckooFilter;
use loom::sync::atomic::{AtomicBool, Ordering};
use loom::sync::Arc;
use loom::thread;
use loom_tests::{model, model_with_preemptions_at_most, one_key_left_in_an_old_level, Identity};

type Filter = ScalableCuckooFilter<Identity>;

/// A key the models never pre-insert.
const NEWCOMER: u64 = 0xD1B5_4A32_D192_ED03;

/// A filter whose first level (room for 1 item: 2 buckets of 4 slots) is
/// full with 8 keys of distinct fingerprints; returns them.
fn full_first_level() -> (Arc<Filter>, Vec<u64>) {
    let f = ScalableCuckooFilter::builder()
        .capacity(1)
        .false_positive_rate(1e-3)
        .hasher(Identity)
        .build()
        .unwrap();
    let keys: Vec<u64> = (1..=8u64)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .collect();
    for k in &keys {
        f.insert(k).unwrap();
    }
    assert_eq!(f.levels(), 1, "setup: the first level must hold all 8");
    assert_eq!(f.capacity(), 8);
    assert!(
        keys.iter()
            .chain([&NEWCOMER])
            .all(|k| f.count(k) == usize::from(*k != NEWCOMER)),
        "setup: the keys must have distinct fingerprints"
    );
    (Arc::new(f), keys)
}

/// An insert into the full first level allocates and publishes level 1 and
/// lands there, while a reader looks up a key of level 0 (always found) and
/// the new key (found whenever the inserter has announced it).
#[test]
fn a_reader_sees_every_key_while_a_new_level_is_published() {
    model(|| {
        let (f, keys) = full_first_level();
        let old = keys[0];
        let announced = Arc::new(AtomicBool::new(false));
        let reader = {
            let (f, announced) = (f.clone(), announced.clone());
            thread::spawn(move || {
                let was_announced = announced.load(Ordering::Acquire);
                let mut out = [false; 2];
                f.contains_batch(&[old, NEWCOMER], &mut out);
                assert!(out[0], "LOST FINGERPRINT: a level-0 key during growth");
                assert!(
                    f.contains(&old),
                    "LOST FINGERPRINT: a level-0 key during growth"
                );
                if was_announced {
                    assert!(
                        out[1] && f.contains(&NEWCOMER),
                        "LOST FINGERPRINT: a key inserted into the new level"
                    );
                }
            })
        };
        f.insert(&NEWCOMER).unwrap();
        announced.store(true, Ordering::Release);
        reader.join().unwrap();
        assert_eq!(f.levels(), 2, "the insert must have grown the filter");
        assert!(keys.iter().all(|k| f.contains(k)) && f.contains(&NEWCOMER));
        assert_eq!(f.len(), keys.len() + 1);
    });
}

/// Two threads `insert_unique` the same key while a third inserts another
/// key, into a filter whose first level has one free slot: whichever of
/// the keys comes second grows the filter. Without the key lock, one
/// thread could check every level, add the key to level 0's last slot,
/// and the other (having checked before that) add it to the new level 1.
/// Exactly one call must add the key, and it must be stored once.
#[test]
fn insert_unique_of_one_key_from_two_threads_across_growth_wins_once() {
    model(|| {
        let (f, keys) = full_first_level();
        assert!(f.remove(&keys[7]).is_removed());
        let other = {
            let f = f.clone();
            thread::spawn(move || f.insert_unique(&NEWCOMER).unwrap())
        };
        let grower = {
            let f = f.clone();
            thread::spawn(move || f.insert(&keys[7]).unwrap())
        };
        let mine = f.insert_unique(&NEWCOMER).unwrap();
        let theirs = other.join().unwrap();
        grower.join().unwrap();
        assert!(
            mine ^ theirs,
            "added by both or by neither: {mine} {theirs}"
        );
        assert_eq!(f.count(&NEWCOMER), 1, "the key must be stored once");
        assert_eq!(
            f.levels(),
            2,
            "the second of the two keys must grow the filter"
        );
        assert_eq!(f.len(), 8 + 1);
    });
}

/// Level 1 holds a key, level 0 one last key. Removing the last key retires
/// level 0 (closed, memory given back) while a reader looks up the newest
/// level's key (always found) and a writer inserts another one (which must
/// land in the newest level, never the retired one).
#[test]
fn retiring_an_emptied_level_against_a_reader_and_an_inserter() {
    model(|| {
        let (f, keys) = full_first_level();
        f.insert(&NEWCOMER).unwrap();
        let (last, rest) = keys.split_last().unwrap();
        for k in rest {
            assert!(f.remove(k).is_removed());
        }
        let late = keys[0]; // removed above: free to insert again
        let reader = {
            let f = f.clone();
            thread::spawn(move || {
                assert!(
                    f.contains(&NEWCOMER),
                    "LOST FINGERPRINT: the newest level's key while an old level retires"
                );
            })
        };
        let inserter = {
            let f = f.clone();
            thread::spawn(move || f.insert(&late).unwrap())
        };
        assert!(f.remove(last).is_removed());
        inserter.join().unwrap();
        reader.join().unwrap();
        assert!(!f.contains(last), "the removed key must be gone");
        assert!(
            f.contains(&NEWCOMER) && f.contains(&late),
            "LOST FINGERPRINT"
        );
        assert_eq!(f.len(), 2);
        // Inserts go to the newest level only, so level 0 was emptied and
        // retired: the filter reports only level 1, which holds both keys.
        assert_eq!(f.levels(), 1, "the emptied level must be retired");
        assert_eq!(f.capacity(), 8);
    });
}

/// Nested levels (see "Removing keys across levels" in
/// `src/scalable/mod.rs`): slot 0 has 2 buckets and 8-bit fingerprints,
/// slot 1 4 buckets and 16-bit ones, and slot 1 refines slot 0. Key `j`
/// lies in slot 0; key `a` lies in slot 1 and collides with `j` in slot 0
/// (the same 8-bit fingerprint and bucket pair there), not in slot 1. So
/// `a` matches in both slots, and its remove must take the copy in the
/// finer slot 1 (its own): `j`'s copy in slot 0 answers for `j`, and for
/// `a` too. Slot 1 is full and slot 0 at 3/4, so while one thread removes
/// `a`, the other's insert of `late` is refused by slot 1 and switches the
/// current level back to slot 0 (unless the remove freed a slot first),
/// then looks `j` up. A remove that took the newest matching copy, the
/// current level's first (canary `newest_match_remove`, the rule before
/// removes looked across levels), takes `j`'s copy in slot 0 once the
/// switch is done, and `j` is lost. Whatever the order, the remove takes
/// one copy, `a`'s own; `j` is always found; counts are exact.
#[test]
fn removing_a_key_never_takes_the_copy_of_a_key_colliding_in_another_level() {
    let keys = CollidingInSlot0::find();
    model(move || {
        let f = Arc::new(keys.set_up());
        let remover = {
            let (f, a) = (f.clone(), keys.a);
            thread::spawn(move || f.remove(&a))
        };
        f.insert(&keys.late).unwrap();
        assert!(
            f.contains(&keys.j),
            "LOST FINGERPRINT: a key colliding in its level with a key removed from a finer level"
        );
        let removed = remover.join().unwrap();
        assert!(
            removed.is_removed(),
            "REMOVE MISSED: a remove of a key stored in a finer level took nothing: {removed:?}"
        );
        assert!(
            keys.kept().all(|k| f.count(k) == 1),
            "LOST FINGERPRINT: a remove took the copy of a key colliding in another level"
        );
        // `j`'s copy answers for `a`: `a`'s own copy was taken.
        assert_eq!(f.count(&keys.a), 1, "the remove took a's own copy");
        assert_eq!(f.len(), keys.kept().count());
        assert_eq!(f.levels(), 2);
    });
}

/// Two slots of nested levels, growth 4: slot 0 room for 8 fingerprints (2
/// buckets, 8-bit at a rate of 5%), slot 1 for 16 (4 buckets, 16-bit).
fn two_nested_slots() -> Filter {
    ScalableCuckooFilter::builder()
        .capacity(1)
        .growth_factor(4)
        .false_positive_rate(0.05)
        .max_levels(2)
        .hasher(Identity)
        .build()
        .unwrap()
}

/// The keys of `removing_a_key_never_takes_the_copy_of_a_key_colliding_in_another_level`:
/// `j` and `slot0` fill slot 0, `a` (colliding with `j` there) opens slot
/// 1, `slot1` fills it, and `late` is the key slot 1 then refuses. No two
/// keys collide anywhere but `a` and `j` in slot 0.
#[derive(Clone, Debug)]
struct CollidingInSlot0 {
    j: u64,
    slot0: Vec<u64>,
    a: u64,
    slot1: Vec<u64>,
    late: u64,
}

impl CollidingInSlot0 {
    /// Found once, by filling a real filter with candidate keys (hashes,
    /// under `Identity`) and asking it which ones it holds (it uses loom's
    /// atomics, so inside a loom model). A key that a filter holding only
    /// `j` answers for collides with `j` in slot 0; that it does not in
    /// slot 1 shows in the counts.
    fn find() -> Self {
        loom_tests::found_once(|| {
            let f = two_nested_slots();
            let mut next = (1u64..).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let j = next.next().unwrap();
            f.insert(&j).unwrap();
            let a = next.by_ref().find(|key| f.contains(key)).unwrap();
            let slot0: Vec<u64> = next
                .by_ref()
                .filter(|key| !f.contains(key))
                .take(7)
                .collect();
            for key in &slot0 {
                f.insert(key).unwrap();
            }
            assert_eq!(f.levels(), 1, "search: slot 0 holds j and slot0");
            f.insert(&a).unwrap();
            let mut slot1 = Vec::new();
            let late = loop {
                let key = next.by_ref().find(|key| !f.contains(key)).unwrap();
                if f.insert(&key).is_err() {
                    break key;
                }
                slot1.push(key);
            };
            CollidingInSlot0 {
                j,
                slot0,
                a,
                slot1,
                late,
            }
        })
    }

    /// Slot 0 holds `j` and 5 of `slot0` (at most 3/4 full: it takes
    /// inserts again when slot 1 refuses one), slot 1 (current) `a` and
    /// `slot1` (full: it refuses `late`).
    fn set_up(&self) -> Filter {
        let f = two_nested_slots();
        for key in [&self.j].into_iter().chain(&self.slot0) {
            f.insert(key).unwrap();
        }
        f.insert(&self.a).unwrap(); // opens slot 1
        for key in &self.slot1 {
            f.insert(key).unwrap();
        }
        for key in &self.slot0[..2] {
            assert!(f.remove(key).is_removed(), "setup: a filler's remove");
        }
        let geometry: Vec<(usize, u32, usize)> = f
            .level_stats()
            .iter()
            .map(|s| (s.bucket_count, s.fingerprint_bits, s.len))
            .collect();
        assert_eq!(
            geometry,
            [(2, 8, 6), (4, 16, 1 + self.slot1.len())],
            "setup: slot 0 at 3/4, slot 1 (current) with a and slot1"
        );
        assert!(
            self.slot1.len() + 1 == 16 && !f.contains(&self.late),
            "setup: slot 1 full, late new"
        );
        assert_eq!(
            (f.count(&self.a), f.count(&self.j)),
            (2, 1),
            "setup: a must collide with j in slot 0 only"
        );
        assert!(
            self.kept()
                .all(|key| *key == self.late || f.count(key) == 1),
            "setup: no other key may collide"
        );
        f
    }

    /// The keys every schedule leaves stored: `j`, the fillers that stay,
    /// and `late`.
    fn kept(&self) -> impl Iterator<Item = &u64> {
        [&self.j, &self.late]
            .into_iter()
            .chain(&self.slot0[2..])
            .chain(&self.slot1)
    }
}

/// Issue 28, item 1: a `clear` racing an insert must not make it answer
/// `Full` with room left. With two levels at most, an insert loads
/// `newest` (level 1) while another thread clears the filter (level 1
/// closes, `newest` goes back to 0), then refills level 0 and grows into
/// level 1 again. The insert, refused by the closed level, asks to grow
/// "past level 1": when growth compared only the level index (`newest`
/// back at the value the insert saw), it found no level after 1 under
/// `max_levels` and the insert answered `Full` while level 1 was empty.
/// Growth now compares a word whose generation every change of the newest
/// level increments, so the insert retries on level 1. The bad schedule
/// takes three preemptions (the insert stopped after loading `newest`,
/// after its refusal, and the clearing thread stopped after the clear), so
/// the model runs with at most three: exhaustive (bound 10) it explores
/// 1.4 million interleavings, about ten minutes on the 2-core machine,
/// and every canary run would pay that again. The canary `clear_aba` is
/// caught at this bound.
#[test]
fn an_insert_racing_a_clear_and_regrowth_never_answers_full_with_room_left() {
    model_with_preemptions_at_most(3, || {
        let f = ScalableCuckooFilter::builder()
            .capacity(1)
            .false_positive_rate(1e-3)
            .max_levels(2)
            .hasher(Identity)
            .build()
            .unwrap();
        let keys: Vec<u64> = (1..=9u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        for k in &keys {
            f.insert(k).unwrap();
        }
        assert_eq!(f.levels(), 2, "setup: the ninth key grows the filter");
        let f = Arc::new(f);
        let clearer = {
            let (f, keys) = (f.clone(), keys.clone());
            thread::spawn(move || {
                f.clear();
                // Level 0 refills (8 slots, one maybe taken by the
                // newcomer) and the ninth key (or an earlier one) grows
                // the filter back into level 1.
                for k in &keys {
                    f.insert(k).unwrap();
                }
            })
        };
        let answer = f.insert(&NEWCOMER);
        clearer.join().unwrap();
        assert!(
            answer.is_ok(),
            "FULL WITH ROOM: an insert racing a clear and regrowth answered {answer:?} with {} of {} slots used",
            f.len(),
            f.capacity()
        );
        // The newcomer survives unless the clear came after it.
        assert!(keys.iter().all(|k| f.contains(k)), "LOST FINGERPRINT");
        assert_eq!(f.contains(&NEWCOMER), f.len() == keys.len() + 1);
    });
}

/// Issue 28, item 2: two removes that take the last two items of an old
/// level, in different lock stripes (disjoint pairs: no lock orders them),
/// must not both miss that the level is empty. Each used to check with relaxed loads of the stripe counts after
/// unlocking its own stripe: each could read the other's count before its
/// decrement (store buffering: both loads before either store is visible,
/// allowed by C11 and by x86), and neither retired the level, which then
/// stayed in use (memory held, scanned by every lookup miss) for good.
/// Now each remove increments a shared word (acquire-release) between its
/// count write and its reads: the later of the two sees the other's
/// decrement and retires the level.
#[test]
fn the_last_two_removes_of_an_old_level_in_different_stripes_retire_it() {
    let (a, b) = keys_in_different_stripes();
    model(move || {
        let f = ScalableCuckooFilter::builder()
            .capacity(4)
            .false_positive_rate(1e-3)
            .level_stripes(4)
            .hasher(Identity)
            .build()
            .unwrap();
        f.insert(&a).unwrap();
        f.insert(&b).unwrap();
        let mut fillers = Vec::new();
        while f.levels() == 1 {
            let k = (fillers.len() as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            f.insert(&k).unwrap();
            fillers.push(k);
        }
        // The last filler grew the filter and lives in level 1; the rest
        // leave level 0, which then holds `a` and `b` only.
        let newest_key = fillers.pop().unwrap();
        for k in &fillers {
            assert!(
                f.remove(k).is_removed(),
                "setup: a filler must be removable"
            );
        }
        assert_eq!(
            (f.levels(), f.len()),
            (2, 3),
            "setup: level 0 must hold a and b, level 1 one key"
        );
        assert_eq!(f.level_stats()[0].bucket_count, 4);
        let f = Arc::new(f);
        let other = {
            let f = f.clone();
            thread::spawn(move || f.remove(&b))
        };
        let removed_a = f.remove(&a);
        let removed_b = other.join().unwrap();
        assert!(
            removed_a.is_removed() && removed_b.is_removed(),
            "both keys are removed"
        );
        assert!(
            f.contains(&newest_key),
            "LOST FINGERPRINT: the newest level's key"
        );
        assert_eq!(
            f.levels(),
            1,
            "LEVEL NOT RETIRED: two removes emptied level 0 and neither retired it"
        );
    });
}

/// Keys `a` and `b` (hashes, under `Identity`) whose bucket pairs in a
/// four-bucket, 16-bit level share no lock stripe when every bucket has a
/// stripe of its own: `a` in buckets {0, 1}, `b` in {2, 3}. (A pair always
/// spans an even and an odd bucket, so with two stripes every pair takes
/// both.) Runs inside a loom model once (filters use loom's atomics).
fn keys_in_different_stripes() -> (u64, u64) {
    loom_tests::found_once(|| {
        let level = concurrent_cuckoo::CuckooFilter::builder()
            .capacity(0)
            .bucket_count(4)
            .fingerprint_bits(16)
            .hasher(Identity)
            .build()
            .unwrap();
        let in_pair = |low: usize| {
            (1..10_000u64)
                .map(|i| i.wrapping_mul(0xD6E8_FEB8_6659_FD93))
                .find(|&h| {
                    let (_, i1, i2) = level.signature_of_hash(h);
                    i1.min(i2) == low && i1.max(i2) == low + 1
                })
                .expect("a key of that bucket pair")
        };
        (in_pair(0), in_pair(2))
    })
}

/// Slot reuse (issue 31): slot 1 takes inserts and is full, slot 0 holds
/// one last key. The main thread removes it (slot 0 retires: closed, out
/// of use), then inserts `first`: slot 1 is full, no level in use has
/// room, so the growth reopens slot 0 and publishes it as current. A
/// second writer inserts `second` meanwhile (into slot 0, whoever opens
/// it, or by switching to slot 0 before it retired) and announces it; a
/// reader looks up a key of slot 1 (always found) and `second` once
/// announced. Both inserts must succeed: slot 0 has room.
///
/// Canaries: `publish_before_mark` (the slot's in-use bit set after it is
/// published as current: the reader loads the new `current` and a mask
/// without its bit) loses `second`; `publish_before_reopen` (the level
/// reopened after it is published: the second writer finds it closed,
/// and its growth finds both slots in use and full) refuses it.
///
/// Three preemptions at most: three threads, one of which grows and
/// retires, are far too many schedules at ten (the run had not ended after
/// minutes), and each bad schedule needs at most two (the grower preempted
/// between publishing and marking or reopening, the writer then the reader
/// run); both canaries are caught at this bound.
#[test]
fn a_reader_sees_a_reopened_slot_while_two_writers_fill_it() {
    model_with_preemptions_at_most(3, || {
        let f = ScalableCuckooFilter::builder()
            .capacity(1)
            .growth_factor(1)
            .false_positive_rate(1e-3)
            .max_levels(2)
            .hasher(Identity)
            .build()
            .unwrap();
        let keys: Vec<u64> = (1..=19u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        let (old, rest) = keys.split_at(8);
        let (held, rest) = rest.split_at(8);
        let (first, second, last) = (rest[0], rest[1], old[0]);
        for k in old.iter().chain(held) {
            f.insert(k).unwrap(); // slot 0 fills, the ninth opens slot 1
        }
        for k in &old[1..] {
            assert!(f.remove(k).is_removed()); // slot 0 keeps one key: still in use
        }
        assert_eq!(f.levels(), 2, "setup: slot 0 with one key, slot 1 full");
        assert_eq!(f.len(), 9);
        assert!(
            [first, second].iter().all(|k| !f.contains(k)),
            "setup: the new keys must not collide"
        );
        let f = Arc::new(f);
        let announced = Arc::new(AtomicBool::new(false));
        let reader = {
            let (f, announced, seen) = (f.clone(), announced.clone(), held[0]);
            thread::spawn(move || {
                let was_announced = announced.load(Ordering::Acquire);
                assert!(
                    f.contains(&seen),
                    "LOST FINGERPRINT: a key of the full slot while a slot is reused"
                );
                if was_announced {
                    assert!(
                        f.contains(&second),
                        "LOST FINGERPRINT: a key inserted into a reopened slot"
                    );
                }
            })
        };
        let writer = {
            let (f, announced) = (f.clone(), announced.clone());
            thread::spawn(move || {
                let answer = f.insert(&second);
                assert!(
                    answer.is_ok(),
                    "FULL WITH ROOM: an insert while a slot is reopened answered {answer:?}"
                );
                announced.store(true, Ordering::Release);
            })
        };
        assert!(f.remove(&last).is_removed());
        let answer = f.insert(&first);
        assert!(
            answer.is_ok(),
            "FULL WITH ROOM: the insert that reopens a slot answered {answer:?}"
        );
        writer.join().unwrap();
        reader.join().unwrap();
        assert!(
            held.iter().chain([&first, &second]).all(|k| f.contains(k)),
            "LOST FINGERPRINT: a key after the slot was reused"
        );
        assert_eq!(f.len(), 10);
        assert_eq!(f.levels(), 2);
    });
}

/// Issue 31, item 4: compaction moves a key's fingerprint from an old
/// level into the current one (insert there, then take from the old one)
/// while a reader looks the key up. The reader searches the current level
/// first: without the move sequence it can look there before the insert
/// and in the old level after the take, and miss a key that was never
/// removed (canary `unbracketed_move`, two preemptions). With it, the
/// reader's miss is checked against the sequence and searched again.
#[test]
fn a_reader_finds_a_key_that_compaction_moves_between_levels() {
    model(|| {
        let (f, moving, stays) = one_key_left_in_an_old_level();
        let reader = {
            let f = f.clone();
            thread::spawn(move || {
                assert!(
                    f.contains(&moving),
                    "LOST FINGERPRINT: a key while compaction moves it"
                );
            })
        };
        let stats = f.compact_concurrently();
        reader.join().unwrap();
        assert_eq!((stats.fingerprints_moved, stats.levels_retired), (1, 1));
        assert!(f.contains(&moving) && f.contains(&stays));
        assert_eq!((f.levels(), f.len()), (1, 2));
    });
}

/// Issue 31, item 4: a remove of the key that compaction is moving takes
/// exactly one copy. It may take the old level's copy before the move's
/// take (the move then undoes its insert), or the new copy after the
/// insert (the move's take then finds the old one), or see both (one
/// geometry: either stands for the key). A remove that looked at the
/// current level before the insert and at the old one after the take found
/// nothing; without checking the move sequence it would answer `false` for
/// a key that was stored (canary `remove_ignores_moves`). At most three
/// preemptions: the bad schedules need two (the remover preempted after
/// its look at the current level, the compactor then running the move);
/// exhaustive (bound 10) it explores 53,867 interleavings, which every
/// canary run would pay again, and both canaries are caught at three.
#[test]
fn a_remove_racing_compaction_takes_the_moving_key_exactly_once() {
    model_with_preemptions_at_most(3, || {
        let (f, moving, stays) = one_key_left_in_an_old_level();
        let remover = {
            let f = f.clone();
            thread::spawn(move || f.remove(&moving))
        };
        f.compact_concurrently();
        assert!(
            remover.join().unwrap().is_removed(),
            "REMOVE MISSED: a remove of a key compaction was moving took nothing"
        );
        assert_eq!(f.count(&moving), 0, "one copy taken, none left behind");
        assert!(
            f.contains(&stays),
            "LOST FINGERPRINT: the current level's key"
        );
        assert_eq!((f.len(), f.levels()), (1, 1));
    });
}
