//! loom models of `WindowedCuckooFilter`: `advance` against inserts and
//! refreshes, lookups and batch lookups; the sweep (by `advance` or run
//! ahead by another thread) against a refresh of the lane it clears; a
//! displacement under a reader while the writer then
//! advances; `advance_to` jumps (a reset, a pass) beside a reader; the
//! wraparound beside a reader; an insert beside three advances; a hop
//! whose lane expired after its search. Four of them (a refresh after an
//! advance, a lookup across two advances, a reader beside a displacement,
//! a hop that finds its lane expired) run in 32-bit lanes too (two a
//! bucket), as the builder makes them for small rates and long windows.
//! Run with `scripts/loom.sh` (or `RUSTFLAGS="--cfg
//! concurrent_cuckoo_loom" cargo test --release -p loom-tests --test
//! windowed`).
//!
//! Markers for the canary run: `LOST FINGERPRINT` (a live key not found),
//! `EXPIRED KEY FOUND` (a key found after its window).
#![cfg(concurrent_cuckoo_loom)]

use concurrent_cuckoo::WindowedCuckooFilter;
use loom::sync::Arc;
use loom::thread;
use loom_tests::{model, Identity, Keys};

type Filter = WindowedCuckooFilter<Identity>;

/// `buckets` buckets, two stripes, 3 tag bits (`M = 8`), a window of `g`.
fn tiny(buckets: usize, g: usize) -> Filter {
    tiny_m(buckets, 3, g)
}

/// [`tiny`] with `tag_bits` tag bits (`M = 2^tag_bits`).
fn tiny_m(buckets: usize, tag_bits: u32, g: usize) -> Filter {
    tiny_in(16, buckets, tag_bits, g)
}

/// [`tiny_m`] in lanes of `lane_bits` bits (16: four a bucket; 32: two).
/// The models marked "both widths" run in each: the protocol does not
/// depend on the width (a bucket is one word either way), and these
/// check that it holds in both lane encodings.
fn tiny_in(lane_bits: u32, buckets: usize, tag_bits: u32, g: usize) -> Filter {
    WindowedCuckooFilter::builder()
        .bucket_count(buckets)
        .stripe_count(2)
        .lane_bits(lane_bits)
        .tag_bits(tag_bits)
        .generations(g as u64)
        .max_path_len(1)
        .hasher(Identity)
        .build()
        .unwrap()
}

/// A key refreshed right after an advance stays visible to a reader that
/// read the old generation: its new tag is `r + 1`, which must read live
/// (canary `windowed_no_future`). Both widths.
#[test]
fn a_refresh_after_an_advance_stays_visible() {
    refresh_after_an_advance(16);
}

#[test]
fn a_refresh_after_an_advance_stays_visible_in_32_bit_lanes() {
    refresh_after_an_advance(32);
}

fn refresh_after_an_advance(lane_bits: u32) {
    model(move || {
        let f = Arc::new(tiny_in(lane_bits, 4, 3, 2));
        let k = Keys::new().with_buckets(&f, 0, 1);
        f.insert(&k).unwrap();
        let reader = {
            let f = f.clone();
            // Tag 0 is live through generation 1, and the refresh (tag 1)
            // through 2: live for the whole lookup.
            thread::spawn(move || assert!(f.contains(&k), "LOST FINGERPRINT: refreshed key missed"))
        };
        f.advance();
        f.insert(&k).unwrap();
        reader.join().unwrap();
        assert!(f.contains(&k) && f.len() == 1, "LOST FINGERPRINT after");
    });
}

/// The same key refreshed across two advances while a lookup runs: a
/// lookup that read generation `r` and then sees tag `r + 2` (age `M - 2`:
/// "expired") must not answer from that (canary
/// `windowed_unvalidated_generation`). Both widths.
#[test]
fn a_lookup_across_two_advances_retries() {
    lookup_across_two_advances(16);
}

#[test]
fn a_lookup_across_two_advances_retries_in_32_bit_lanes() {
    lookup_across_two_advances(32);
}

fn lookup_across_two_advances(lane_bits: u32) {
    model(move || {
        let f = Arc::new(tiny_in(lane_bits, 4, 3, 2));
        let k = Keys::new().with_buckets(&f, 0, 1);
        f.insert(&k).unwrap();
        let reader = {
            let f = f.clone();
            thread::spawn(move || {
                assert!(
                    f.contains(&k),
                    "LOST FINGERPRINT: lookup across two advances"
                )
            })
        };
        for _ in 0..2 {
            f.advance();
            f.insert(&k).unwrap();
        }
        reader.join().unwrap();
    });
}

/// [`a_refresh_after_an_advance_stays_visible`] through `contains_batch`.
#[test]
fn a_batch_lookup_sees_a_refresh_after_an_advance() {
    model(|| {
        let f = Arc::new(tiny(4, 2));
        let mut keys = Keys::new();
        let k = keys.with_buckets(&f, 0, 1);
        let never = keys.with_buckets(&f, 2, 3);
        f.insert(&k).unwrap();
        let reader = {
            let f = f.clone();
            thread::spawn(move || {
                let mut out = [false; 2];
                f.contains_batch(&[never, k], &mut out);
                assert!(out[1], "LOST FINGERPRINT: batch lookup missed a refresh");
                assert!(!out[0], "EXPIRED KEY FOUND: a key never inserted");
            })
        };
        f.advance();
        f.insert(&k).unwrap();
        reader.join().unwrap();
    });
}

/// An insert racing an advance is tagged with the generation before or
/// after it, never older: with a window of one generation, a key whose
/// inserter read generation 1 before inserting is found at generation 1;
/// with a window of two it is found whatever the order.
#[test]
fn an_insert_racing_an_advance_gets_the_generation_before_or_after() {
    for g in [1, 2] {
        model(move || {
            let f = Arc::new(tiny(4, g));
            let k = Keys::new().with_buckets(&f, 0, 1);
            let inserter = {
                let f = f.clone();
                thread::spawn(move || {
                    let before = f.generation();
                    f.insert(&k).unwrap();
                    before
                })
            };
            f.advance();
            let before = inserter.join().unwrap();
            let found = f.contains(&k);
            if g == 2 || before == 1 {
                assert!(found, "LOST FINGERPRINT: G = {g}, inserted from {before}");
            }
            assert_eq!(f.len(), usize::from(found), "len counts what is found");
        });
    }
}

/// The sweep clears an expired lane while an insert refreshes it: whichever
/// takes the bucket's lock first, the key ends live (refreshed, or stored
/// anew), stored once (canary `windowed_unlocked_sweep`).
#[test]
fn the_sweep_and_a_refresh_of_the_same_lane() {
    model(|| {
        let (f, k) = an_expired_key_in_bucket_0();
        let refresher = {
            let f = f.clone();
            thread::spawn(move || f.insert(&k).unwrap())
        };
        f.advance(); // sweeps bucket 0 at generation 2
        refresher.join().unwrap();
        assert_refreshed_once(&f, k);
    });
}

/// Two buckets, window 2, M = 8 (the sweep's period is 5 and bucket 0 is
/// swept at generations 2, 7, ...), at generation 2, holding one key in
/// bucket 0 inserted at generation 0: expired, not yet swept.
fn an_expired_key_in_bucket_0() -> (Arc<Filter>, u64) {
    let f = Arc::new(tiny(2, 2));
    let k = Keys::new().with_buckets(&f, 0, 1);
    f.insert(&k).unwrap();
    f.advance();
    f.advance();
    assert!(!f.contains(&k), "EXPIRED KEY FOUND before the race");
    (f, k)
}

/// After the race: `k` is found, counted once, in one live lane.
fn assert_refreshed_once(f: &Filter, k: u64) {
    assert!(
        f.contains(&k),
        "LOST FINGERPRINT: the sweep took a refreshed lane"
    );
    assert_eq!(f.len(), 1);
    assert_eq!(f.scan_lanes(), (1, 1), "one lane, live");
}

/// The same race with the sweep run ahead by a third thread
/// (`sweep_ahead`, as an insert's help does) while the main thread
/// advances: whoever sweeps bucket 0 at generation 2, under its lock, the
/// refreshed key ends live and stored once, and the advance that follows
/// leaves no expired lane behind (canary `windowed_unlocked_sweep`).
#[test]
fn the_sweep_run_ahead_and_a_refresh_of_the_same_lane() {
    model(|| {
        let (f, k) = an_expired_key_in_bucket_0();
        let refresher = {
            let f = f.clone();
            thread::spawn(move || f.insert(&k).unwrap())
        };
        let sweeper = {
            let f = f.clone();
            thread::spawn(move || f.sweep_ahead(1))
        };
        f.advance(); // sweeps what the sweeper left of bucket 0's slice
        refresher.join().unwrap();
        sweeper.join().unwrap();
        assert_refreshed_once(&f, k);
    });
}

/// A displacement moves a tagged lane while a reader looks for it; the
/// mover then advances (the sweep passes the lane's new bucket). Both
/// widths.
#[test]
fn a_reader_finds_a_tagged_lane_while_it_is_displaced() {
    reader_beside_a_displacement(16);
}

#[test]
fn a_reader_finds_a_tagged_lane_while_it_is_displaced_in_32_bit_lanes() {
    reader_beside_a_displacement(32);
}

fn reader_beside_a_displacement(lane_bits: u32) {
    let slots = 64 / lane_bits as usize;
    model(move || {
        // A window of 3: the victim (tag 0) lives through generation 2.
        let f = Arc::new(tiny_in(lane_bits, 4, 3, 3));
        let mut keys = Keys::new();
        let victim = keys.with_buckets(&f, 0, 3);
        f.insert(&victim).unwrap();
        f.advance(); // the victim's tag differs from the others'
        for _ in 1..slots {
            f.insert(&keys.with_buckets(&f, 0, 1)).unwrap();
        }
        for _ in 0..slots {
            f.insert(&keys.with_buckets(&f, 1, 0)).unwrap();
        }
        let newcomer = keys.with_buckets(&f, 0, 1);
        let reader = {
            let f = f.clone();
            thread::spawn(move || {
                assert!(
                    f.contains(&victim),
                    "LOST FINGERPRINT: reader missed a lane being displaced"
                )
            })
        };
        f.insert(&newcomer).unwrap();
        f.advance();
        reader.join().unwrap();
        assert_eq!(f.stats().relocations, 1, "the model must force one move");
        assert!(f.contains(&newcomer), "LOST FINGERPRINT: newcomer");
        f.advance(); // generation 3: the victim (tag 0) expires
        assert!(!f.contains(&victim), "EXPIRED KEY FOUND: the moved lane");
        assert_eq!(f.len(), 2 * slots);
    });
}

/// `contains(k)` from another thread, with the generation read after it:
/// a miss while the generation still reads below `live_until + 1` loses a
/// live key.
fn spawn_checked_lookup(f: &Arc<Filter>, k: u64, live_until: u64) -> thread::JoinHandle<()> {
    let f = f.clone();
    thread::spawn(move || {
        let found = f.contains(&k);
        let after = f.generation();
        assert!(
            found || after > live_until,
            "LOST FINGERPRINT: a key live through {live_until} missed at {after}"
        );
    })
}

/// A lookup racing an `advance_to` past the whole window (a reset: every
/// lane cleared under every lock): it may miss the key only once the
/// jump has taken effect, never while `generation()` still reads a
/// generation the key is live in (canary `windowed_jump_unflagged`: the
/// reset clears while lookups still read the old generation and their
/// misses stand).
#[test]
fn a_lookup_racing_a_jump_past_the_window() {
    model(|| {
        let f = Arc::new(tiny(4, 2));
        let k = Keys::new().with_buckets(&f, 0, 1);
        f.insert(&k).unwrap();
        let reader = spawn_checked_lookup(&f, k, 1);
        assert_eq!(f.advance_to(10), 10);
        reader.join().unwrap();
        assert!(!f.contains(&k), "EXPIRED KEY FOUND after the jump");
        assert_eq!((f.len(), f.scan_lanes()), (0, (0, 0)));
    });
}

/// A lookup racing an `advance_to` within the window (one pass under
/// every lock clearing the lanes expired at the target): the key that
/// expires in the jump is missed only once it took effect, and the key
/// that survives it is found after (canary `windowed_jump_unflagged`).
/// (A second reader, of the survivor, made 590,000 interleavings.)
#[test]
fn a_lookup_racing_a_jump_within_the_window() {
    model(|| {
        // M = 8, G = 4: the sweep's period is 3, so a jump of 3 is a pass.
        let f = Arc::new(tiny(4, 4));
        let mut keys = Keys::new();
        let old = keys.with_buckets(&f, 0, 1);
        let young = keys.with_buckets(&f, 2, 3);
        f.insert(&old).unwrap(); // generation 0: live through 3
        f.advance();
        f.insert(&young).unwrap(); // generation 1: live through 4
        let reader = spawn_checked_lookup(&f, old, 3);
        assert_eq!(f.advance_to(4), 4);
        reader.join().unwrap();
        assert!(!f.contains(&old), "EXPIRED KEY FOUND after the jump");
        assert!(f.contains(&young) && f.len() == 1, "LOST FINGERPRINT after");
    });
}

/// A jump clears each lane by its true age at the target, not by its
/// tag's age then, which may have come round: a lane expired (age 5 of
/// `M = 8`, `G = 5`) but not yet swept stays expired across a jump of 4,
/// beside a reader of a key that stays live (canary
/// `windowed_jump_by_tag`: the jump keeps the old lane, whose tag reads
/// age 1 at the target).
#[test]
fn a_jump_clears_lanes_by_their_true_age() {
    model(|| {
        let f = Arc::new(tiny(4, 5));
        let mut keys = Keys::new();
        let old = keys.with_buckets(&f, 0, 1);
        let young = keys.with_buckets(&f, 2, 3);
        f.insert(&old).unwrap();
        for _ in 0..5 {
            f.advance(); // bucket 0 is swept at even generations only
        }
        f.insert(&young).unwrap(); // generation 5: live through 9
        assert!(!f.contains(&old), "EXPIRED KEY FOUND before the jump");
        let reader = spawn_checked_lookup(&f, young, 9);
        assert_eq!(f.advance_to(9), 9); // a jump of 4: a pass (period 2)
        reader.join().unwrap();
        assert!(!f.contains(&old), "EXPIRED KEY FOUND after the jump");
        assert!(f.contains(&young) && f.len() == 1, "LOST FINGERPRINT after");
    });
}

/// The wraparound (INV-3): a key's tag comes round after `M` generations,
/// so its lane must be cleared before its age reaches `M - 1` (which reads
/// live). A reader checks the key while the main thread advances `M`
/// times (`M = 4`, `G = 1`, two buckets: each swept every other
/// generation): from generation 1 on it must miss (canary
/// `windowed_sweep_after_publish`: `advance` sweeps after storing the next
/// generation, so a reader at 3 sees the lane at age `M - 1`).
#[test]
fn a_reader_beside_the_advances_that_bring_a_tag_round() {
    model(|| {
        let f = Arc::new(tiny_m(2, 2, 1));
        let k = Keys::new().with_buckets(&f, 0, 1);
        f.insert(&k).unwrap();
        f.advance(); // generation 1: expired, not swept (bucket 0 at 2)
        let reader = {
            let f = f.clone();
            thread::spawn(move || {
                let found = f.contains(&k);
                assert!(!found, "EXPIRED KEY FOUND: a lane whose tag came round");
            })
        };
        for _ in 0..3 {
            f.advance();
        }
        reader.join().unwrap();
        assert!(!f.contains(&k), "EXPIRED KEY FOUND after");
        assert_eq!(f.scan_lanes(), (0, 0), "the sweep cleared the lane");
    });
}

/// An insert reads the generation under its locks (INV-3 (a)): one that
/// read it before them (canary `windowed_cur_before_lock`) could land a
/// lane tagged three generations back (`M = 4`, `G = 1`), after the sweep
/// of its bucket passed, at age `M - 1`: read live, and, one advance
/// later, at age 0.
#[test]
fn an_insert_racing_advances_is_tagged_under_its_locks() {
    model(|| {
        let f = Arc::new(tiny_m(2, 2, 1));
        let k = Keys::new().with_buckets(&f, 0, 1);
        let inserter = {
            let f = f.clone();
            thread::spawn(move || f.insert(&k).unwrap())
        };
        for _ in 0..3 {
            f.advance();
        }
        inserter.join().unwrap();
        f.advance(); // generation 4: a key inserted at 3 or before is gone
        assert!(
            !f.contains(&k),
            "EXPIRED KEY FOUND: an insert tagged before its locks"
        );
    });
}

/// A hop whose source lane expired between the path search and the hop
/// clears the lane instead of moving it (INV-3): moved, it would land in a
/// bucket whose sweep has passed and read live when its tag came round
/// (canary `windowed_move_expired`). `M = 8`, `G = 5`: the sweep's period
/// is 2, buckets 0 and 1 are swept at even generations, 2 and 3 at odd
/// ones. The victim (bucket 0, alternate 3, tagged 0) is live at 4 and
/// expired at 5 and 6; the newcomer's search at 4 moves it, the main
/// thread advances to 6 meanwhile (sweeping bucket 3 at 5), and the hop
/// then finds it expired.
/// Both widths.
#[test]
fn a_hop_that_finds_its_lane_expired_clears_it() {
    hop_finds_its_lane_expired(16);
}

#[test]
fn a_hop_that_finds_its_lane_expired_clears_it_in_32_bit_lanes() {
    hop_finds_its_lane_expired(32);
}

fn hop_finds_its_lane_expired(lane_bits: u32) {
    let slots = 64 / lane_bits as usize;
    model(move || {
        let f = Arc::new(tiny_in(lane_bits, 4, 3, 5));
        let mut keys = Keys::new();
        let victim = keys.with_buckets(&f, 0, 3);
        f.insert(&victim).unwrap();
        for _ in 0..4 {
            f.advance();
        }
        // Bucket 0 full (the victim and keys whose alternate is the full
        // bucket 1), bucket 1 full: only the victim can move.
        for _ in 1..slots {
            f.insert(&keys.with_buckets(&f, 0, 1)).unwrap();
        }
        for _ in 0..slots {
            f.insert(&keys.with_buckets(&f, 1, 0)).unwrap();
        }
        let newcomer = keys.with_buckets(&f, 0, 1);
        let inserter = {
            let f = f.clone();
            thread::spawn(move || f.insert(&newcomer).unwrap())
        };
        f.advance();
        f.advance();
        inserter.join().unwrap();
        assert!(f.contains(&newcomer), "LOST FINGERPRINT: newcomer");
        f.advance(); // generation 7: the victim's tag reads age M - 1
        assert!(
            !f.contains(&victim),
            "EXPIRED KEY FOUND: an expired lane carried by a hop"
        );
        assert_eq!(f.len(), 2 * slots);
    });
}

/// `contains_at` (a replica's lookup by its own clock, ahead of the
/// filter's) racing a jump: a key live through 3 asked at 2 is found
/// unless the jump to 4 took effect (canary `windowed_jump_unflagged`: its
/// miss stands while the generation still reads 0). Also the same
/// answer after the jump, and `len_at` exact once no thread writes.
#[test]
fn a_lookup_ahead_of_the_generation_racing_a_jump() {
    model(|| {
        let f = Arc::new(tiny(4, 4));
        let k = Keys::new().with_buckets(&f, 0, 1);
        f.insert(&k).unwrap();
        let reader = {
            let f = f.clone();
            thread::spawn(move || {
                let found = f.contains_at(&k, 2);
                let after = f.generation();
                assert!(
                    found || after >= 4,
                    "LOST FINGERPRINT: contains_at(2) missed a key live through 3 at {after}"
                );
            })
        };
        assert_eq!(f.advance_to(4), 4);
        reader.join().unwrap();
        assert!(!f.contains_at(&k, 2) && !f.contains_at(&k, 5));
        assert_eq!((f.len_at(4), f.len_at(9)), (0, 0));
    });
}
