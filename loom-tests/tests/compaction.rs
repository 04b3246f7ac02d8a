//! loom models of compaction (`compact_concurrently`) against every kind of
//! reader and writer (issue 40): a remove whose key collides in a coarser
//! level with another key, removers and readers whose level set predates the
//! level a move targets, batch lookups and counts, `clear`, two
//! compactions at once, growth reopening a slot that compaction just
//! retired, a key moved twice, and `insert_unique` of a key being moved.
//!
//! Run with `scripts/loom.sh`. Markers for `scripts/loom.sh --canary`:
//! `LOST FINGERPRINT` for a key stored and not found (or a copy taken that
//! was another key's), `REMOVE MISSED` for a remove of a stored key that
//! took nothing, `DUPLICATE ADMITTED` for an `insert_unique` that added a
//! second copy of a stored key.
//!
//! Preemption bounds: each model says how many preemptions its bad
//! schedules need; the models run at that bound (or one more), which keeps
//! the suite inside CI's time, and the canaries show they still bite.
#![cfg(concurrent_cuckoo_loom)]

use concurrent_cuckoo::ScalableCuckooFilter;
use loom::sync::Arc;
use loom::thread;
use loom_tests::{model_with_preemptions_at_most, one_key_left_in_an_old_level, Identity};

type Filter = ScalableCuckooFilter<Identity>;

/// Candidate keys (hashes, under `Identity`).
fn candidate(i: u64) -> u64 {
    i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5555
}

/// Three slots of room for 8 fingerprints each (2 buckets of 4), growth 1.
/// At a rate of 5% slot 0 has 8-bit fingerprints and slots 1 and 2 16-bit
/// ones: two geometries, the 16-bit slots refining slot 0 (nested maps:
/// two keys that collide in a 16-bit slot collide in slot 0 too, not the
/// other way round). At 0.1% all three are 16-bit: one geometry.
fn three_slots(rate: f64) -> Filter {
    ScalableCuckooFilter::builder()
        .capacity(1)
        .growth_factor(1)
        .max_levels(3)
        .false_positive_rate(rate)
        .hasher(Identity)
        .build()
        .unwrap()
}

/// The keys of the two-geometry setup: `slot0` fills slot 0 (8-bit);
/// `k`, which slot 0 answers for (it collides there with one of slot 0's
/// keys, `j`: the same 8-bit fingerprint and bucket pair, and with no key
/// in the 16-bit slots), opens slot 1 (16-bit); `fillers` fill slot 1;
/// `opener` opens slot 2 (16-bit). A remove of `k` must take `k`'s own
/// copy, in the 16-bit slot that holds it (it refines slot 0): `j`'s copy
/// in slot 0 then still answers for both.
#[derive(Clone, Debug)]
struct TwoGeometries {
    slot0: Vec<u64>,
    k: u64,
    fillers: Vec<u64>,
    opener: u64,
}

impl TwoGeometries {
    /// Found once, by running the setup on real filters (they use loom's
    /// atomics, so inside a loom model).
    fn find() -> Self {
        loom_tests::found_once(|| {
            let f = three_slots(0.05);
            let mut next = (1u64..).map(candidate);
            let slot0: Vec<u64> = next.by_ref().take(8).collect();
            for key in &slot0 {
                f.insert(key).unwrap();
            }
            let k = next.by_ref().find(|key| f.contains(key)).unwrap();
            // Fillers that collide nowhere (their removes must succeed).
            let fresh: Vec<u64> = next
                .by_ref()
                .filter(|key| !f.contains(key))
                .take(40)
                .collect();
            let mut fresh = fresh.into_iter();
            f.insert(&k).unwrap();
            let fillers: Vec<u64> = fresh.by_ref().take(7).collect();
            for key in &fillers {
                f.insert(key).unwrap();
            }
            let opener = fresh.find(|key| !f.contains(key)).unwrap();
            // A remove of `k` takes its own copy (slot 1's): `j`'s copy in
            // slot 0 stays, and still answers for `k`.
            assert_eq!(f.count(&k), 2, "search: k matches in slots 0 and 1");
            assert!(f.remove(&k).is_removed(), "search: k's remove");
            assert!(
                slot0.iter().chain(&fillers).all(|key| f.count(key) == 1) && f.count(&k) == 1,
                "search: k's remove took another key's copy"
            );
            TwoGeometries {
                slot0,
                k,
                fillers,
                opener,
            }
        })
    }

    /// Slot 0 full of `slot0`, slot 1 full of `k` and the fillers (current).
    fn up_to_slot_1(&self) -> Filter {
        let f = three_slots(0.05);
        for key in self.slot0.iter().chain([&self.k]).chain(&self.fillers) {
            f.insert(key).unwrap();
        }
        assert_eq!(f.level_fingerprint_bits(), vec![8, 16], "setup: widths");
        assert_eq!((f.levels(), f.len()), (2, 16), "setup: two full slots");
        assert_eq!(
            f.count(&self.k),
            2,
            "setup: k must match in both geometries"
        );
        f
    }

    /// Then `opener` opens slot 2 and the fillers leave slot 1: slot 1
    /// holds `k` alone, which compaction moves into slot 2.
    fn open_slot_2_and_empty_fillers(&self, f: &Filter) {
        f.insert(&self.opener).unwrap();
        for key in &self.fillers {
            assert!(f.remove(key).is_removed(), "setup: a filler's remove");
        }
    }

    /// The keys that a remove of `k` must leave found: slot 0's (`j`
    /// among them) and `opener`.
    fn others(&self) -> impl Iterator<Item = &u64> {
        self.slot0.iter().chain([&self.opener])
    }
}

/// Item 5 (a), the review's interleaving: slot 0 (8-bit) holds a key `j`
/// that `k` collides with there; `k` lies in slot 1 (16-bit); compaction
/// moves it into slot 2 (16-bit, current) while another thread removes
/// `k`. The remove sees `k` match in slot 0 and in slot 1 or 2, and must
/// take `k`'s own copy there (the 16-bit slots refine slot 0): `j` stays
/// found, and `j`'s copy still answers for `k`. Before the fix, a remove
/// that looked at slot 2 before the move's insert and at slot 1 after its
/// take saw slot 0 as the only holder and took `j`'s copy, losing `j`
/// (canary `unvalidated_take`: the take not validated against the move
/// sequence). One preemption makes the bad schedule (the remover stopped
/// between slot 2 and slot 0); the model runs at two.
#[test]
fn a_remove_racing_compaction_takes_its_own_copy_when_a_coarser_level_matches() {
    let keys = TwoGeometries::find();
    model_with_preemptions_at_most(2, move || {
        let f = keys.up_to_slot_1();
        keys.open_slot_2_and_empty_fillers(&f);
        assert_eq!(f.level_fingerprint_bits(), vec![8, 16, 16]);
        let f = Arc::new(f);
        let remover = {
            let (f, k) = (f.clone(), keys.k);
            thread::spawn(move || f.remove(&k))
        };
        let stats = f.compact_concurrently();
        let took = remover.join().unwrap();
        assert!(
            took.is_removed(),
            "REMOVE MISSED: a remove of a key compaction was moving took nothing ({took:?}, moved: {})",
            stats.fingerprints_moved
        );
        assert!(
            keys.others().all(|key| f.contains(key)),
            "LOST FINGERPRINT: a remove beside compaction took the copy of a key colliding in a coarser level (moved: {})",
            stats.fingerprints_moved
        );
        assert_eq!(f.count(&keys.k), 1, "k's own copy taken, j's left");
        assert_eq!(f.len(), 9);
    });
}

/// Item 5 (b): a remover whose level set predates the level the move
/// targets. The remover loads its level set (slots 0 and 1) before slot 2
/// opens; then one thread opens slot 2, empties slot 1 but for `k`, and
/// compacts `k` into slot 2, retiring slot 1. The remover, scanning the
/// old set, finds only slot 0 matching (`k` left slot 1) and, without the
/// validation, takes `j`'s copy (canary `unvalidated_take`); with it, it
/// scans again and takes `k`'s copy in slot 2. (A remover that runs first
/// takes `k`'s copy in slot 1, and `opener` then goes into slot 1.) One
/// preemption (the remover stopped after loading its level set).
#[test]
fn a_remover_with_a_stale_level_set_takes_its_own_copy_when_a_coarser_level_matches() {
    let keys = TwoGeometries::find();
    model_with_preemptions_at_most(1, move || {
        let f = Arc::new(keys.up_to_slot_1());
        let remover = {
            let (f, k) = (f.clone(), keys.k);
            thread::spawn(move || f.remove(&k))
        };
        keys.open_slot_2_and_empty_fillers(&f);
        let stats = f.compact_concurrently();
        let took = remover.join().unwrap();
        assert!(
            took.is_removed(),
            "REMOVE MISSED: a remove with a stale level set took nothing ({took:?}, moved: {})",
            stats.fingerprints_moved
        );
        assert!(
            keys.others().all(|key| f.contains(key)),
            "LOST FINGERPRINT: a stale remove beside compaction took the copy of a key colliding in a coarser level (moved: {})",
            stats.fingerprints_moved
        );
        assert_eq!(f.count(&keys.k), 1, "k's own copy taken, j's left");
        assert_eq!(f.len(), 9);
    });
}

/// Item 5 (h): a reader whose snapshot predates the level a move targets.
/// The reader looks up a filler of slot 1 that collides nowhere (`kept`).
/// It loads its level set (slots 1 and 0) before slot 2 opens; then one
/// thread opens slot 2, empties slot 1 but for `k` and `kept`, and
/// compacts both into slot 2, retiring slot 1. The reader read the move
/// sequence before its level set, so it sees that moves happened and
/// searches again with a fresh set. Read after the set (canary
/// `sequence_after_levels`), the sequence looks unchanged and the reader
/// answers from the stale set, where `kept` is nowhere. One preemption
/// (the reader stopped after loading its level set).
#[test]
fn a_reader_whose_snapshot_predates_the_target_level_finds_the_moved_key() {
    let keys = TwoGeometries::find();
    model_with_preemptions_at_most(1, move || {
        let f = Arc::new(keys.up_to_slot_1());
        // The reader's key: the last filler, which stays and moves with k.
        let (kept, removed) = keys.fillers.split_last().unwrap();
        let kept = *kept;
        let reader = {
            let f = f.clone();
            thread::spawn(move || {
                assert!(
                    f.contains(&kept),
                    "LOST FINGERPRINT: a key moved into a level opened after the reader's snapshot"
                );
            })
        };
        f.insert(&keys.opener).unwrap();
        for key in removed {
            assert!(f.remove(key).is_removed(), "setup: a filler's remove");
        }
        let stats = f.compact_concurrently();
        reader.join().unwrap();
        assert_eq!((stats.fingerprints_moved, stats.levels_retired), (2, 1));
        assert!(f.contains(&kept) && f.contains(&keys.k));
    });
}

/// Item 5 (c): batch lookups and counts beside a move. `contains_batch`
/// searches each level for a whole chunk, the current level first, and
/// `count` sums every level: both must check the move sequence, or a
/// chunk looked up in slot 1 before the insert and in slot 0 after the
/// take misses the key (canary `unbracketed_move`), and a count sees 0.
/// Two preemptions.
#[test]
fn batch_lookups_and_counts_see_a_key_that_compaction_moves() {
    model_with_preemptions_at_most(2, || {
        let (f, moving, stays) = one_key_left_in_an_old_level();
        let reader = {
            let f = f.clone();
            thread::spawn(move || {
                let mut out = [false; 2];
                f.contains_batch(&[moving, stays], &mut out);
                assert!(
                    out == [true, true],
                    "LOST FINGERPRINT: a batch lookup while compaction moves a key: {out:?}"
                );
                assert_eq!(
                    f.count(&moving),
                    1,
                    "LOST FINGERPRINT: a count while compaction moves a key"
                );
            })
        };
        let stats = f.compact_concurrently();
        reader.join().unwrap();
        assert_eq!((stats.fingerprints_moved, stats.levels_retired), (1, 1));
        assert_eq!((f.levels(), f.len()), (1, 2));
    });
}

/// Item 5 (d): `clear` beside compaction. Both hold the growth lock for
/// their changes of the level set, and a move holds it too: whatever the
/// order, the filter ends empty with one level in use, and a reader of
/// the key being moved finds it unless the clear has begun (it checks
/// whether it saw the clear finish, not whether it started: a lookup that
/// overlaps a clear may answer either way). Two preemptions.
#[test]
fn clear_beside_compaction_leaves_an_empty_filter() {
    model_with_preemptions_at_most(2, || {
        let (f, moving, stays) = one_key_left_in_an_old_level();
        let compactor = {
            let f = f.clone();
            thread::spawn(move || f.compact_concurrently())
        };
        f.clear();
        let stats = compactor.join().unwrap();
        assert!(stats.fingerprints_moved <= 1);
        assert_eq!(f.len(), 0, "clear beside compaction left items");
        assert!(!f.contains(&moving) && !f.contains(&stays));
        assert_eq!(f.levels(), 1);
        // The filter still works: both keys go back in.
        f.insert(&moving).unwrap();
        f.insert(&stays).unwrap();
        assert!(
            f.contains(&moving) && f.contains(&stays),
            "LOST FINGERPRINT"
        );
    });
}

/// Item 5 (e): two compactions at once. Moves are serialized by the
/// growth lock; each pass re-reads the level set under it, so the key is
/// moved once, taken once, and the emptied level retired once: one copy
/// of each key, one level. A reader would add nothing the single
/// compactor models do not cover. Two preemptions.
#[test]
fn two_compactions_at_once_move_each_key_once() {
    model_with_preemptions_at_most(2, || {
        let (f, moving, stays) = one_key_left_in_an_old_level();
        let other = {
            let f = f.clone();
            thread::spawn(move || f.compact_concurrently())
        };
        let mine = f.compact_concurrently();
        let theirs = other.join().unwrap();
        assert_eq!(
            mine.fingerprints_moved + theirs.fingerprints_moved,
            1,
            "the key moved once"
        );
        assert_eq!(mine.levels_retired + theirs.levels_retired, 1);
        assert_eq!(
            f.count(&moving),
            1,
            "LOST FINGERPRINT: one copy of the moved key"
        );
        assert!(f.contains(&stays), "LOST FINGERPRINT");
        assert_eq!((f.levels(), f.len()), (1, 2));
    });
}

/// Item 5 (f): growth reopening a slot that compaction just retired. Slot
/// 1 (current) has room for one more key; compaction moves `moving` into
/// it (now full) and retires slot 0, while another thread inserts a key:
/// into slot 1 if it comes first (then the move goes nowhere and
/// `moving` stays in slot 0), or, slot 1 full, into slot 0 (switched to
/// while in use, or reopened after its retirement). Every key stays
/// found, none is refused. Three preemptions (at two the growth lock
/// leaves 50 schedules).
#[test]
fn growth_reopening_a_slot_compaction_retired_loses_nothing() {
    model_with_preemptions_at_most(3, || {
        let (f, moving, stays) = one_key_left_in_an_old_level();
        // Slot 1 gets 6 more keys: room for one.
        let more: Vec<u64> = (20..26u64).map(candidate).collect();
        for k in &more {
            f.insert(k).unwrap();
        }
        assert_eq!(f.len(), 8, "setup");
        let late = candidate(30);
        let inserter = {
            let f = f.clone();
            thread::spawn(move || {
                let answer = f.insert(&late);
                assert!(answer.is_ok(), "FULL WITH ROOM: {answer:?}");
                assert!(f.contains(&late), "LOST FINGERPRINT: the inserted key");
            })
        };
        f.compact_concurrently();
        inserter.join().unwrap();
        assert!(
            more.iter()
                .chain([&moving, &stays, &late])
                .all(|k| f.count(k) == 1),
            "LOST FINGERPRINT: every key once"
        );
        assert_eq!(f.len(), 9);
    });
}

/// Item 5 (g): a key moved twice in one compaction, beside a reader.
/// Three slots of one geometry: slot 0 keeps `k`, slot 1 keeps `m`, slot
/// 2 (current) one key. Compaction empties the sparsest level first, ties
/// to the lowest slot: slot 0's `k` moves into slot 1 (the lowest target
/// with room), then slot 1's `m` and `k` into slot 2. The reader must
/// find `k` through both moves (canary `unbracketed_move`). Two
/// preemptions.
#[test]
fn a_key_moved_twice_stays_found() {
    model_with_preemptions_at_most(2, || {
        let f = three_slots(1e-3);
        let keys: Vec<u64> = (1..=17u64).map(candidate).collect();
        for key in &keys {
            f.insert(key).unwrap(); // 8 in slot 0, 8 in slot 1, 1 in slot 2
        }
        assert_eq!(f.level_fingerprint_bits(), vec![16, 16, 16], "setup");
        for key in keys[1..8].iter().chain(&keys[9..16]) {
            assert!(f.remove(key).is_removed(), "setup remove");
        }
        let (k, m, last) = (keys[0], keys[8], keys[16]);
        assert_eq!((f.levels(), f.len()), (3, 3), "setup");
        let f = Arc::new(f);
        let reader = {
            let f = f.clone();
            thread::spawn(move || {
                assert!(f.contains(&k), "LOST FINGERPRINT: a key moved twice");
            })
        };
        let stats = f.compact_concurrently();
        reader.join().unwrap();
        assert_eq!(
            (stats.fingerprints_moved, stats.levels_retired),
            (3, 2),
            "k moved twice, m once"
        );
        assert!(
            [k, m, last].iter().all(|key| f.count(key) == 1),
            "LOST FINGERPRINT"
        );
        assert_eq!((f.levels(), f.len()), (1, 3));
    });
}

/// `insert_unique` of a key that compaction moves meanwhile (issue 49):
/// three 16-bit slots, slot 0 with seven keys (room for one more), slot 1
/// with `k` alone, slot 2 (current) one key. Compaction drains slot 1
/// first (the smallest) into the lowest level with room, slot 0, not the
/// current one, and retires slot 1 (slot 0 then stays: eight keys, room
/// for seven elsewhere). `insert_unique(k)` must find `k` wherever it is
/// (its check is a lookup validated against the move sequence: the key
/// lock does not stop the move), answer "already present" and add no
/// second copy (canary `unique_unvalidated_check`: one pass over the
/// levels, current first and then ascending, whose miss is trusted, reads
/// slot 0 before the move's insert and slot 1 after its take, and the
/// insert into the current level, which checks only there, adds a
/// duplicate). Had the move targeted the current level, that insert's own
/// check would have found it. The bad schedule takes two preemptions.
#[test]
fn insert_unique_racing_a_move_admits_no_duplicate() {
    model_with_preemptions_at_most(2, || {
        let f = three_slots(1e-3);
        let keys: Vec<u64> = (1..=17u64).map(candidate).collect();
        for key in &keys {
            f.insert(key).unwrap(); // 8 in slot 0, 8 in slot 1, 1 in slot 2
        }
        assert_eq!(f.level_fingerprint_bits(), vec![16, 16, 16], "setup");
        for key in keys[1..2].iter().chain(&keys[9..16]) {
            assert!(f.remove(key).is_removed(), "setup remove");
        }
        let k = keys[8];
        let kept: Vec<u64> = keys[..1]
            .iter()
            .chain(&keys[2..9])
            .chain(&keys[16..])
            .copied()
            .collect();
        assert_eq!((f.levels(), f.len()), (3, 9), "setup");
        let f = Arc::new(f);
        let inserter = {
            let f = f.clone();
            thread::spawn(move || f.insert_unique(&k).unwrap())
        };
        let stats = f.compact_concurrently();
        let added = inserter.join().unwrap();
        assert!(
            !added && f.count(&k) == 1,
            "DUPLICATE ADMITTED: insert_unique added a key that was moving"
        );
        assert_eq!(
            (stats.fingerprints_moved, stats.levels_retired),
            (1, 1),
            "setup: k moves into slot 0"
        );
        assert!(kept.iter().all(|key| f.count(key) == 1), "LOST FINGERPRINT");
        assert_eq!((f.levels(), f.len()), (2, 9));
    });
}
