//! loom models of `WindowedCuckooFilter`'s rarer write paths (issue 49),
//! beside the protocol models of `windowed.rs`: an insert stalled across
//! a sweep period, checked against its window by its own lookups while
//! another thread advances; the insert that falls back to every stripe
//! lock; a two-hop displacement under a reader of the moved key; the
//! sweep an insert runs ahead (`sweep_ahead`) beside a reader of a live
//! key; `len` beside a writer and an advance's sweep. Run with `scripts/loom.sh`
//! (or `RUSTFLAGS="--cfg concurrent_cuckoo_loom" cargo test --release -p
//! loom-tests --test windowed_paths`).
//!
//! Preemption bounds: the models of three advances or three threads run
//! at three preemptions (exhaustive, at ten, they explored 272,111,
//! 2,935,289 and 239,094 interleavings, 200 s in all, and passed); each
//! canary's bad schedule needs at most two.
//!
//! Markers for the canary run: `LOST FINGERPRINT` (a live key not found),
//! `EXPIRED KEY FOUND` (a key found after its window), `LEN WRONG` (`len`
//! not exact once no thread writes).
#![cfg(concurrent_cuckoo_loom)]

use concurrent_cuckoo::WindowedCuckooFilter;
use loom::sync::Arc;
use loom::thread;
use loom_tests::{model, model_with_preemptions_at_most, Identity, Keys};

type Filter = WindowedCuckooFilter<Identity>;

/// `buckets` buckets, two stripes (bucket `b` under stripe `b & 1`),
/// `2^tag_bits` tags, a window of `g`, paths of at most `max_path` moves.
fn tiny(buckets: usize, tag_bits: u32, g: usize, max_path: usize) -> Filter {
    WindowedCuckooFilter::builder()
        .bucket_count(buckets)
        .stripe_count(2)
        .tag_bits(tag_bits)
        .generations(g as u64)
        .max_path_len(max_path)
        .hasher(Identity)
        .build()
        .unwrap()
}

/// Inserts `k` and checks it against its window `[t, t + G - 1]` with a
/// lookup by the same thread, while others advance: `t`, the generation
/// read under the insert's locks, is at least the generation read before
/// the call and at most the one read after it. So the key must be found
/// when the generation after the lookup is still below `before + G` (it
/// was live for the whole lookup), and missed when the generation read
/// just before the lookup is already `after + G` or more (it had expired
/// before the lookup began). Returns whether the insert succeeded.
fn insert_and_check_window(f: &Filter, k: u64) -> bool {
    let g = f.generations();
    let before = f.generation();
    if f.insert(&k).is_err() {
        return false;
    }
    let after = f.generation();
    let start = f.generation();
    let found = f.contains(&k);
    let end = f.generation();
    assert!(
        found || end >= before + g,
        "LOST FINGERPRINT: inserted from {before}, missed at {start}..{end}"
    );
    assert!(
        !found || start < after + g,
        "EXPIRED KEY FOUND: inserted by {after}, found from {start}"
    );
    true
}

/// A writer stalled across a sweep period. `M = 4`, `G = 1`, two
/// buckets: the sweep's period is 2, bucket 0 is swept at even
/// generations, bucket 1 at odd ones. The writer may stop anywhere in its
/// insert (after it read the generation under its locks, the advance's
/// sweep of its bucket waits for it; the other bucket's does not) while
/// the main thread advances three times, through a whole period and to
/// the generation where a tag 0 would read age `M - 1`. Its own lookup
/// must find the key inside its window and miss it from `t + G` on, and
/// one advance after the join the key is gone (canary
/// `windowed_sweep_clears_next`: `advance`'s sweep also clears the lanes
/// that expire at the generation it is about to store, while readers
/// still read the current one, so the writer's lookup misses a key live
/// at `t`).
#[test]
fn a_stalled_insert_lives_exactly_its_window_beside_advances() {
    model_with_preemptions_at_most(3, || {
        let f = Arc::new(tiny(2, 2, 1, 1));
        let k = Keys::new().with_buckets(&f, 0, 1);
        let writer = {
            let f = f.clone();
            thread::spawn(move || assert!(insert_and_check_window(&f, k)))
        };
        for _ in 0..3 {
            f.advance();
        }
        writer.join().unwrap();
        f.advance(); // generation 4: a key tagged 3 or before is gone
        assert!(!f.contains(&k), "EXPIRED KEY FOUND after the join");
        assert_eq!(f.len(), 0, "len after the join");
    });
}

/// The insert that falls back to every stripe lock (its pair was
/// full and no path was found, `store_key`). Both buckets hold four keys
/// inserted at generation 0 (`M = 4`, `G = 1`): they expire at 1, and
/// the sweep clears bucket 1 at 1 and bucket 0 at 2. The writer's first
/// attempt, at generation 0, finds its pair full and no path, and falls
/// back to every lock while the main thread advances three times: the
/// fallback must tag the key with the generation read under its locks,
/// so that it lives exactly its window (canary
/// `windowed_fallback_cur_before_lock`: read before them, it tags the key
/// 0 after both sweeps, at age `M - 1`, live at 3 and again at 4). A
/// writer that ran before any advance finds the table full: `Full`.
#[test]
fn an_insert_falling_back_to_every_lock_beside_advances() {
    model_with_preemptions_at_most(3, || {
        let f = Arc::new(tiny(2, 2, 1, 1));
        let mut keys = Keys::new();
        let mut stored = Vec::new();
        keys.insert_n(&f, 0, 1, 4, &mut stored);
        keys.insert_n(&f, 1, 0, 4, &mut stored);
        let k = keys.with_buckets(&f, 0, 1);
        let writer = {
            let f = f.clone();
            thread::spawn(move || insert_and_check_window(&f, k))
        };
        for _ in 0..3 {
            f.advance();
        }
        let inserted = writer.join().unwrap();
        f.advance();
        assert!(
            !f.contains(&k),
            "EXPIRED KEY FOUND: the fallback's key after the join (inserted: {inserted})"
        );
        assert!(stored.iter().all(|s| !f.contains(s)), "EXPIRED KEY FOUND");
        assert_eq!(f.len(), 0);
    });
}

/// A two-hop path under a reader of the key it moves. Four
/// buckets (a key's two buckets differ in parity), paths of two moves,
/// `M = 8`, `G = 3` (nothing expires): bucket 3 holds `b` (alternate 2)
/// and three keys of alternate 0, bucket 0 `a` (primary 3, stored in its
/// alternate) and three keys of alternate 1, bucket 1 four keys of
/// alternate 0, bucket 2 one key. The newcomer (buckets 0 and 1) finds no free lane within one
/// move, so its path is `b: 3 -> 2` then `a: 0 -> 3`, each hop into a
/// bucket that holds other lanes. A reader of `a` must find it at every
/// moment (canary `windowed_hop_into_occupied_unbumped`: such a hop skips
/// the version bump, and a reader that read bucket 3, `a`'s primary,
/// before `a` arrived and bucket 0 after it left lets its miss stand; the one-hop models of
/// `windowed.rs` move into empty buckets).
#[test]
fn a_reader_finds_a_key_moved_by_a_two_hop_path() {
    model(|| {
        let f = Arc::new(tiny(4, 3, 3, 2));
        let mut keys = Keys::new();
        let mut stored = Vec::new();
        let b = keys.with_buckets(&f, 3, 2);
        f.insert(&b).unwrap();
        keys.insert_n(&f, 3, 0, 3, &mut stored);
        // Bucket 3 is full: `a` lands in its alternate, bucket 0, and the
        // path moves it back to its primary, which readers read first.
        let a = keys.with_buckets(&f, 3, 0);
        f.insert(&a).unwrap();
        keys.insert_n(&f, 0, 1, 3, &mut stored);
        keys.insert_n(&f, 1, 0, 4, &mut stored);
        keys.insert_n(&f, 2, 1, 1, &mut stored);
        let newcomer = keys.with_buckets(&f, 0, 1);
        let reader = {
            let f = f.clone();
            thread::spawn(move || {
                assert!(
                    f.contains(&a),
                    "LOST FINGERPRINT: the key moved by the second hop"
                )
            })
        };
        f.insert(&newcomer).unwrap();
        reader.join().unwrap();
        assert_eq!(f.stats().relocations, 2, "the model must force two moves");
        for k in stored.iter().chain([&a, &b, &newcomer]) {
            assert!(f.contains(k), "LOST FINGERPRINT after the path");
        }
        assert_eq!(f.len(), 14);
    });
}

/// The sweep an insert runs ahead of the advance (`insert` is
/// `store_key` and then, for one fingerprint in 64, `sweep_ahead`: the
/// trigger is compiled out under loom, so the writer here calls
/// `sweep_ahead` after its insert, as `insert` does). A key inserted at
/// generation 0 with `G = 2` is live through 1; at generation 1 (`M = 8`,
/// the sweep's period 5: bucket 1 is swept at 1) a writer inserts another
/// key and sweeps ahead while a reader looks the first one up and the
/// main thread advances: the reader must find it unless the advance to 2
/// took effect (canary `windowed_help_sweeps_for_next_generation`: the
/// helper clears the lanes expired at the next generation, the live key
/// among them, while the generation still reads 1).
#[test]
fn the_sweep_an_insert_runs_ahead_beside_a_reader_of_a_live_key() {
    model_with_preemptions_at_most(3, || {
        let f = Arc::new(tiny(8, 3, 2, 1));
        let mut keys = Keys::new();
        let live = keys.with_buckets(&f, 1, 0);
        f.insert(&live).unwrap();
        f.advance(); // generation 1: `live` (tag 0) lives through 1
        let other = keys.with_buckets(&f, 4, 5);
        let writer = {
            let f = f.clone();
            thread::spawn(move || {
                f.insert(&other).unwrap();
                f.sweep_ahead(64);
            })
        };
        let reader = {
            let f = f.clone();
            thread::spawn(move || {
                let found = f.contains(&live);
                let after = f.generation();
                assert!(
                    found || after >= 2,
                    "LOST FINGERPRINT: a key live through 1 missed at {after}"
                );
            })
        };
        f.advance();
        writer.join().unwrap();
        reader.join().unwrap();
        assert!(!f.contains(&live) && f.contains(&other));
        assert_eq!(f.len(), 1);
    });
}

/// `len` promises exactness when no thread writes ("Exact when no
/// thread writes", `WindowedCuckooFilter::len`); while threads write it
/// is a sum of per-stripe tag counters read one by one, not a snapshot
/// (a refresh or a hop may be counted twice or not at all for a moment),
/// so the model checks it against the table's lanes after the race, at a
/// generation where every tag the race touched reads live again. Four
/// buckets (stripe `b & 1`), `M = 8`, `G = 2`: the sweep's period is 5,
/// bucket 0 is swept at generations 1 and 6, bucket 2 at 3. Two keys
/// tagged 0, in buckets 0 and 2 (one stripe), have expired at 3; a writer
/// inserts a key of primary 0, which takes the expired lane there
/// (uncounting tag 0 under its locks), while the advance from 3 sweeps
/// bucket 2 (uncounting tag 0 under bucket 2's lock). After the join, at
/// generations 8 and 9 (tag 0 is live), `len` must equal the live lanes a
/// scan counts (canary `windowed_sweep_counts_unlocked`: the sweep
/// uncounts after releasing the lock, and its load and store lose the
/// writer's decrement). The writer also reads `len` beside the advance:
/// at most the table's lanes.
#[test]
fn len_is_exact_after_a_writer_and_a_sweep_share_a_tag_counter() {
    model(|| {
        let f = Arc::new(tiny(4, 3, 2, 1));
        let mut keys = Keys::new();
        f.insert(&keys.with_buckets(&f, 0, 1)).unwrap();
        f.insert(&keys.with_buckets(&f, 2, 1)).unwrap();
        for _ in 0..3 {
            f.advance(); // bucket 0 swept at 1, where both keys are live
        }
        assert_eq!((f.len(), f.scan_lanes()), (0, (2, 0)), "setup");
        let k = keys.with_buckets(&f, 0, 3);
        let writer = {
            let f = f.clone();
            thread::spawn(move || {
                f.insert(&k).unwrap();
                assert!(f.len() <= f.slots(), "LEN WRONG: beyond the table");
            })
        };
        f.advance(); // sweeps bucket 2 at 3
        writer.join().unwrap();
        assert_eq!(f.len(), f.scan_lanes().1, "LEN WRONG at {}", f.generation());
        while f.generation() < 9 {
            f.advance();
            let (len, live) = (f.len(), f.scan_lanes().1);
            assert_eq!(len, live, "LEN WRONG at {}", f.generation());
        }
    });
}
