//! loom models of `WindowedCuckooFilter`: `advance` against inserts and
//! refreshes, lookups and batch lookups; the sweep (by `advance` or run
//! ahead by another thread) against a refresh of the lane it clears; a
//! displacement under a reader while the writer then
//! advances. Run with `scripts/loom.sh` (or `RUSTFLAGS="--cfg
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
    WindowedCuckooFilter::builder()
        .bucket_count(buckets)
        .stripe_count(2)
        .tag_bits(3)
        .generations(g)
        .max_path_len(1)
        .hasher(Identity)
        .build()
        .unwrap()
}

/// A key refreshed right after an advance stays visible to a reader that
/// read the old generation: its new tag is `r + 1`, which must read live
/// (canary `windowed_no_future`).
#[test]
fn a_refresh_after_an_advance_stays_visible() {
    model(|| {
        let f = Arc::new(tiny(4, 2));
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
/// `windowed_unvalidated_generation`).
#[test]
fn a_lookup_across_two_advances_retries() {
    model(|| {
        let f = Arc::new(tiny(4, 2));
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
/// mover then advances (the sweep passes the lane's new bucket).
#[test]
fn a_reader_finds_a_tagged_lane_while_it_is_displaced() {
    model(|| {
        // A window of 3: the victim (tag 0) lives through generation 2.
        let f = Arc::new(tiny(4, 3));
        let mut keys = Keys::new();
        let victim = keys.with_buckets(&f, 0, 3);
        f.insert(&victim).unwrap();
        f.advance(); // the victim's tag differs from the others'
        for _ in 0..3 {
            f.insert(&keys.with_buckets(&f, 0, 1)).unwrap();
        }
        for _ in 0..4 {
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
        assert_eq!(f.len(), 8);
    });
}
