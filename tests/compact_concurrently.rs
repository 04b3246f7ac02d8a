//! `ScalableCuckooFilter::compact_concurrently` beside readers and writers
//! (issue 31, item 4): while one thread compacts over and over, writers
//! churn sliding windows that leave a few keys behind in every level (so
//! there is always something to move), readers check every key that must
//! be present, and every remove of a live key must take it.
//!
//! Exact expectations: no live or kept key is ever missed by a lookup or a
//! count; every remove of a live key answers `true` (all 16 slots here
//! have one geometry: growth 1 and, at a rate of 1%, 16-bit fingerprints
//! in every slot, which `every_slot_is_16_bits` checks; so no remove is
//! ambiguous, and a `false` is a remove that missed a copy on the move;
//! at 0.1% slots 8 to 15 get 32 bits, and a key colliding there is
//! rightly refused); at the end the filter holds exactly the
//! live and kept keys, and compaction has moved fingerprints and retired
//! levels while the others ran. Bounded: a few seconds in a test build.

use concurrent_cuckoo::ScalableCuckooFilter;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

const WRITERS: u64 = 2;
const LIVE: u64 = 1000;
const PER_ROUND: u64 = 250;
const ROUNDS: u64 = 300;

mod common;

/// [`ROUNDS`], divided by `CUCKOO_TEST_SCALE` under qemu (at least 40):
/// the churn test took 109 s of the aarch64 step at full length.
fn rounds() -> u64 {
    common::scaled(ROUNDS as usize, 40) as u64
}
/// Every `KEEP`-th key of a window is never removed: old levels keep a few
/// items, which only compaction moves out.
const KEEP: u64 = 64;

fn kept(k: u64) -> bool {
    k.is_multiple_of(KEEP)
}

/// The filter of the churn tests: growth 1, 16 slots of 500 items, all
/// 16-bit at a rate of 1% (`every_slot_is_16_bits`).
fn one_width_filter(seed: u64) -> ScalableCuckooFilter {
    ScalableCuckooFilter::builder()
        .capacity(500)
        .growth_factor(1)
        .max_levels(16)
        .false_positive_rate(0.01)
        .seed(seed)
        .build()
        .unwrap()
}

/// The premise of the exact remove expectations: every slot of the
/// filters below has one width.
#[test]
fn every_slot_is_16_bits() {
    let filter = one_width_filter(41);
    let mut k = 0u64;
    while filter.insert_hash(k).is_ok() {
        k += 1;
    }
    assert_eq!(filter.level_fingerprint_bits(), vec![16; 16]);
}

#[test]
fn nothing_is_missed_while_compaction_moves_fingerprints_under_churn() {
    let filter = one_width_filter(41);
    let bounds: Vec<(AtomicU64, AtomicU64)> = (0..WRITERS)
        .map(|w| (AtomicU64::new(w << 40), AtomicU64::new(w << 40)))
        .collect();
    let writers_done = AtomicUsize::new(0);
    let compacting = AtomicBool::new(true);
    let (moved, retired, passes) = (
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicUsize::new(0),
    );
    let checked = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for (w, (lo, hi)) in bounds.iter().enumerate() {
            let (filter, writers_done) = (&filter, &writers_done);
            s.spawn(move || {
                // Counts this writer done even if it panics: the others
                // stop then, and the scope reports the panic.
                struct Done<'a>(&'a AtomicUsize);
                impl Drop for Done<'_> {
                    fn drop(&mut self) {
                        self.0.fetch_add(1, Ordering::Release);
                    }
                }
                let _done = Done(writers_done);
                for round in 0..rounds() {
                    for _ in 0..PER_ROUND {
                        let k = hi.load(Ordering::Relaxed);
                        filter
                            .insert_hash(k)
                            .unwrap_or_else(|e| panic!("writer {w}, round {round}: {e}"));
                        hi.store(k + 1, Ordering::Release);
                    }
                    while hi.load(Ordering::Relaxed) - lo.load(Ordering::Relaxed) > LIVE {
                        let k = lo.load(Ordering::Relaxed);
                        lo.store(k + 1, Ordering::Release);
                        if !kept(k) {
                            assert!(
                                filter.remove_hash(k).is_removed(),
                                "writer {w}, round {round}: the remove of live key {k} took nothing"
                            );
                        }
                    }
                }
            });
        }
        {
            let (filter, compacting) = (&filter, &compacting);
            let (moved, retired, passes) = (&moved, &retired, &passes);
            s.spawn(move || {
                while compacting.load(Ordering::Acquire) {
                    let stats = filter.compact_concurrently();
                    moved.fetch_add(stats.fingerprints_moved, Ordering::Relaxed);
                    retired.fetch_add(stats.levels_retired, Ordering::Relaxed);
                    passes.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        let (filter, bounds, writers_done, checked) = (&filter, &bounds, &writers_done, &checked);
        let compacting = &compacting;
        s.spawn(move || {
            while writers_done.load(Ordering::Acquire) < WRITERS as usize {
                for (w, (lo, hi)) in bounds.iter().enumerate() {
                    let base = (w as u64) << 40;
                    let (from, to) = (lo.load(Ordering::Acquire), hi.load(Ordering::Acquire));
                    let old_kept =
                        (from.saturating_sub(64 * KEEP).max(base)..from).filter(|&k| kept(k));
                    for k in (from..to).chain(old_kept) {
                        if !filter.contains_hash(k) {
                            assert!(
                                !kept(k) && k < lo.load(Ordering::Acquire),
                                "live key {k} not found"
                            );
                        }
                        if kept(k) && k < to {
                            assert!(filter.count_hash(k) >= 1, "kept key {k} counted 0");
                        }
                        checked.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            compacting.store(false, Ordering::Release);
        });
    });
    let mut expected = 0;
    for (w, (lo, hi)) in bounds.iter().enumerate() {
        let base = (w as u64) << 40;
        let (lo, hi) = (lo.load(Ordering::Relaxed), hi.load(Ordering::Relaxed));
        assert_eq!(hi - base, rounds() * PER_ROUND);
        for k in (base..lo).filter(|&k| kept(k)).chain(lo..hi) {
            assert!(filter.contains_hash(k), "key {k} lost at the end");
            expected += 1;
        }
    }
    assert_eq!(filter.len(), expected, "exactly the live and kept keys");
    assert!(checked.into_inner() > 0);
    let (moved, retired) = (moved.into_inner(), retired.into_inner());
    eprintln!(
        "{} passes moved {moved} fingerprints and retired {retired} levels; {} levels in use at the end",
        passes.into_inner(),
        filter.levels()
    );
    assert!(
        moved > 0 && retired > 0,
        "compaction had work beside the writers"
    );
}

/// A remove that races a compaction moving its key's only copy takes that
/// copy, exactly once: from the source before the take (the move's insert
/// is then undone) or from the target after the insert. Many short races
/// on a two-level filter, each with exact counts after it.
#[test]
fn a_remove_racing_the_move_of_its_key_takes_exactly_one_copy() {
    for round in 0..200u64 {
        let filter = ScalableCuckooFilter::builder()
            .capacity(100)
            .growth_factor(1)
            .seed(round)
            .build()
            .unwrap();
        let mut n = 0u64;
        while filter.levels() < 2 {
            filter.insert_hash(n).unwrap();
            n += 1;
        }
        // Key `n - 1` opened slot 1; 19 more join it there.
        let first_in_slot_1 = n - 1;
        for _ in 0..19 {
            filter.insert_hash(n).unwrap();
            n += 1;
        }
        // Slot 0 keeps 8 keys; they are what compaction moves.
        let moving: Vec<u64> = (0..8).collect();
        for k in 8..first_in_slot_1 {
            assert!(filter.remove_hash(k).is_removed());
        }
        let len = filter.len();
        let removed = std::thread::scope(|s| {
            let remover = s.spawn(|| {
                moving
                    .iter()
                    .filter(|&&k| filter.remove_hash(k).is_removed())
                    .count()
            });
            let stats = filter.compact_concurrently();
            assert!(stats.fingerprints_moved <= moving.len());
            remover.join().unwrap()
        });
        assert_eq!(
            removed,
            moving.len(),
            "round {round}: every remove took a copy"
        );
        assert_eq!(
            filter.len(),
            len - moving.len(),
            "round {round}: one copy each"
        );
        for k in first_in_slot_1..n {
            assert!(filter.contains_hash(k), "round {round}: key {k} lost");
        }
    }
}

/// A snapshot (`to_bytes`) taken while compaction moves fingerprints holds
/// every key that was inserted before it began and never removed: a move
/// from a level not yet written into one already written would otherwise
/// leave the key out of the copy (the snapshot holds the growth lock, so
/// no move runs while it writes). One writer churns a window that keeps
/// every 64th key forever, a thread compacts over and over, and another
/// snapshots, decodes, and checks every kept key below the writer's mark.
#[test]
fn a_snapshot_beside_compaction_holds_every_kept_key() {
    /// Sets its flag when dropped: at a thread's end, panicking or not.
    struct Done<'a>(&'a AtomicBool);
    impl Drop for Done<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Release);
        }
    }
    let filter = one_width_filter(43);
    let hi = AtomicU64::new(0);
    let done = AtomicBool::new(false);
    let snapshotter_ended = AtomicBool::new(false);
    let snapshots = AtomicUsize::new(0);
    std::thread::scope(|s| {
        let (filter, hi, done, snapshots) = (&filter, &hi, &done, &snapshots);
        let snapshotter_ended = &snapshotter_ended;
        s.spawn(move || {
            let _done = Done(done);
            let mut lo = 0;
            for _ in 0..rounds() {
                for _ in 0..PER_ROUND {
                    let k = hi.load(Ordering::Relaxed);
                    filter.insert_hash(k).unwrap();
                    hi.store(k + 1, Ordering::Release);
                }
                while hi.load(Ordering::Relaxed) - lo > LIVE {
                    if !kept(lo) {
                        assert!(filter.remove_hash(lo).is_removed(), "live key {lo}");
                    }
                    lo += 1;
                }
            }
            // Writes outran the first snapshot (under qemu, or once
            // writes got faster): keep compaction running until one
            // snapshot has been taken beside it, unless that thread ended.
            while snapshots.load(Ordering::Acquire) == 0
                && !snapshotter_ended.load(Ordering::Acquire)
            {
                std::thread::yield_now();
            }
        });
        s.spawn(move || {
            while !done.load(Ordering::Acquire) {
                filter.compact_concurrently();
            }
        });
        s.spawn(move || {
            let _ended = Done(snapshotter_ended);
            while !done.load(Ordering::Acquire) {
                let mark = hi.load(Ordering::Acquire);
                let copy = ScalableCuckooFilter::from_bytes(&filter.to_bytes()).unwrap();
                for k in (0..mark).filter(|&k| kept(k)) {
                    assert!(
                        copy.contains_hash(k),
                        "kept key {k} missing from a snapshot"
                    );
                }
                snapshots.fetch_add(1, Ordering::Release);
            }
        });
    });
    assert!(snapshots.into_inner() > 0);
}

/// Issue 40: a remove racing compaction must not take the copy of another
/// key. Growth 1 at a rate of 5%: slot 0 has 8-bit fingerprints, slots 1
/// and 2 16-bit ones (they refine slot 0: nested maps). Slot 0 keeps its
/// keys; slot 1 keeps a key `k` that collides in slot 0 with one of slot
/// 0's keys (a false positive there), then compaction moves `k` from slot
/// 1 into slot 2, the current level, while another thread removes `k` and
/// inserts it again, over and over. Each remove matches in slot 0 (the
/// other key's copy) and in `k`'s own level, and must take from the
/// finer: `k`'s copy. A remove that looked at slot 2 before the move's
/// insert and at slot 1 after its take, and did not check the move
/// sequence before its take, would see slot 0 as the only holder and
/// take the colliding key's copy, which would then be a false negative.
/// Exact expectations: every remove takes a copy, and afterwards every
/// key is found and the filter's length is unchanged. The window is a few
/// nanoseconds a round, so rounds run for 8 s.
#[test]
fn a_remove_racing_compaction_never_takes_a_key_colliding_in_another_geometry() {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(8);
    let (mut rounds, mut seed, mut races) = (0u64, 0u64, 0u64);
    while std::time::Instant::now() < deadline {
        seed += 1;
        let filter = ScalableCuckooFilter::builder()
            .capacity(100)
            .growth_factor(1)
            .max_levels(3)
            .false_positive_rate(0.05)
            .seed(seed)
            .build()
            .unwrap();
        // Slot 0 (8-bit) fills; the key it refuses opens slot 1.
        let mut n = 0u64;
        while filter.levels() == 1 {
            filter.insert_hash(n).unwrap();
            n += 1;
        }
        // Key `n - 1` opened slot 1 and lies there.
        let slot0 = 0..n - 1;
        // The first key of slot 1 to come that slot 0 already answers
        // for: a fingerprint collision in slot 0's geometry (slot 1 holds
        // one 16-bit key: its false positives are negligible).
        let slot1_start = n - 1;
        let mut colliding = None;
        while filter.levels() == 2 {
            if colliding.is_none() && filter.contains_hash(n) {
                colliding = Some(n);
            }
            filter.insert_hash(n).unwrap();
            n += 1;
        }
        // The key that opened slot 2 (16-bit, current) lies there; slot 1
        // is full. Remove the others from slot 1: every remove takes a
        // copy (slot 1 refines slot 0), so `k` alone stays.
        let slot1_end = n - 1;
        let Some(k) = colliding.filter(|&k| k < slot1_end) else {
            continue;
        };
        let others_removed = (slot1_start..slot1_end)
            .filter(|&other| other != k)
            .all(|other| filter.remove_hash(other).is_removed());
        assert!(
            others_removed,
            "seed {seed}: a remove of a stored key was refused"
        );
        let stayed = [k];
        assert_eq!(
            filter.level_fingerprint_bits(),
            vec![8, 16, 16],
            "seed {seed}: the geometries"
        );
        let len = filter.len();
        let done = AtomicBool::new(false);
        let wrong_take = std::thread::scope(|s| {
            let churner = s.spawn(|| {
                let mut missed = false;
                while !done.load(Ordering::Acquire) {
                    missed |= !filter.remove_hash(k).is_removed();
                    filter.insert_hash(k).unwrap();
                }
                missed
            });
            let stats = filter.compact_concurrently();
            done.store(true, Ordering::Release);
            assert!(
                stats.fingerprints_moved <= 1,
                "seed {seed}: slot 1 moved {stats:?}"
            );
            churner.join().unwrap()
        });
        rounds += 1;
        races += u64::from(wrong_take);
        let lost: Vec<u64> = slot0
            .clone()
            .chain(stayed.iter().copied())
            .chain(slot1_end..n)
            .filter(|&key| !filter.contains_hash(key))
            .collect();
        assert!(
            !wrong_take && lost.is_empty(),
            "seed {seed}, round {rounds}: a remove of a key matching in two levels beside \
             compaction took nothing ({wrong_take}) or another key's copy; keys lost: {lost:?}"
        );
        assert_eq!(
            filter.len(),
            len,
            "seed {seed}: every remove undone by its insert"
        );
    }
    assert!(rounds >= 100, "only {rounds} rounds ran");
    eprintln!("{rounds} rounds, {races} missed removes");
}
