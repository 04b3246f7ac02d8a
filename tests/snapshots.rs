//! Snapshots taken beside writers (`src/snapshot.rs`): `to_bytes` and
//! `write_to_path` of a nearly full filter, taken over and over while
//! other threads insert (with displacement paths across stripes) and
//! remove, must each decode to a filter holding every key that was present
//! throughout, with a length that matches its contents and stays within
//! what the writers can have had in flight. The loom models in
//! `loom-tests/tests/snapshots.rs` check the protocol step by step; this
//! checks it at scale, at every fingerprint width and on a grown filter.

mod common;

use common::Rng;
use concurrent_cuckoo::{CuckooFilter, ScalableCuckooFilter, WindowedCuckooFilter};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Keys every writer keeps in flight at most.
const IN_FLIGHT: usize = 300;

/// Runs `writers` threads of inserts and removes of even keys (each thread
/// keeping at most `IN_FLIGHT` of its own) while `snapshot` is called
/// `rounds` times, each after the writers have done some work; returns
/// what the snapshots returned.
fn beside_writers<T: Send>(
    writers: u64,
    rounds: usize,
    insert: impl Fn(u64) -> bool + Sync,
    remove: impl Fn(u64) -> bool + Sync,
    snapshot: impl Fn() -> T,
) -> Vec<T> {
    let stop = AtomicBool::new(false);
    let ops = AtomicUsize::new(0);
    // Writers that ended (a failed assertion ends one early): the main
    // thread stops waiting for their progress then, and the scope's join
    // reports the panic.
    let ended = AtomicUsize::new(0);
    let mut taken = Vec::new();
    std::thread::scope(|s| {
        for t in 0..writers {
            let (stop, ops, ended, insert, remove) = (&stop, &ops, &ended, &insert, &remove);
            s.spawn(move || {
                struct Ended<'a>(&'a AtomicUsize);
                impl Drop for Ended<'_> {
                    fn drop(&mut self) {
                        self.0.fetch_add(1, Ordering::Relaxed);
                    }
                }
                let _ended = Ended(ended);
                let mut rng = Rng(7 + t);
                let mut mine = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    if mine.len() < IN_FLIGHT && rng.next().is_multiple_of(2) {
                        let k = (rng.next() >> 1) << 1;
                        if insert(k) {
                            mine.push(k);
                        }
                    } else if let Some(k) = mine.pop() {
                        assert!(remove(k), "a writer's own key was not there to remove");
                    }
                    ops.fetch_add(1, Ordering::Relaxed);
                }
                for k in mine {
                    assert!(remove(k));
                }
            });
        }
        for _ in 0..rounds {
            let seen = ops.load(Ordering::Relaxed);
            while ops.load(Ordering::Relaxed) < seen + 200 {
                if ended.load(Ordering::Relaxed) > 0 {
                    stop.store(true, Ordering::Relaxed);
                    return;
                }
                std::thread::yield_now();
            }
            taken.push(snapshot());
        }
        stop.store(true, Ordering::Relaxed);
    });
    taken
}

/// Fills `f` with odd keys until an insert fails or `load` of its slots
/// are taken; returns them.
fn fill(f: &CuckooFilter, load: f64) -> Vec<u64> {
    let target = (f.bucket_count() as f64 * 4.0 * load) as usize;
    let mut rng = Rng(99);
    let mut stable = Vec::new();
    while stable.len() < target {
        let k = rng.next() | 1;
        if f.insert(&k).is_err() {
            break;
        }
        stable.push(k);
    }
    stable
}

fn check_snapshot(bytes: &[u8], stable: &[u64], writers: u64, what: &str) {
    let g = CuckooFilter::from_bytes(bytes).expect("a snapshot decodes");
    // Decoding checks the length against the occupied slots; a fingerprint
    // copied twice (out of a stripe copied late, into one copied early)
    // would push it past what the writers can hold.
    assert!(
        g.len() >= stable.len() && g.len() <= stable.len() + writers as usize * IN_FLIGHT,
        "{what}: a snapshot of {} items beside {} stable ones",
        g.len(),
        stable.len()
    );
    let lost = stable.iter().filter(|k| !g.contains(*k)).count();
    assert_eq!(lost, 0, "{what}: stable keys missing from a snapshot");
}

#[test]
fn snapshots_of_a_nearly_full_filter_beside_moving_writers_lose_nothing() {
    for bits in [8, 16, 32] {
        // 64 stripes: eight groups for the pass, so writers copy stripes
        // the pass has not reached and move fingerprints between stripes
        // copied at different moments.
        let f = CuckooFilter::builder()
            .bucket_count(1 << 12)
            .stripe_count(64)
            .fingerprint_bits(bits)
            .seed(3)
            .build()
            .unwrap();
        let stable = fill(&f, 0.93);
        let moves_before = f.stats().relocations;
        let writers = 2;
        let snapshots = beside_writers(
            writers,
            40,
            |k| f.insert(&k).is_ok(),
            |k| f.remove(&k),
            || f.to_bytes(),
        );
        assert!(
            f.stats().relocations > moves_before,
            "{bits} bits: writers moved fingerprints"
        );
        for bytes in &snapshots {
            check_snapshot(bytes, &stable, writers, &format!("{bits} bits"));
        }
        let lengths: std::collections::HashSet<usize> = snapshots
            .iter()
            .map(|b| CuckooFilter::from_bytes(b).unwrap().len())
            .collect();
        assert!(
            lengths.len() > 1,
            "{bits} bits: the snapshots saw writers at work"
        );
        assert_eq!(f.len(), stable.len());
        assert_eq!(f.occupied_slots(), stable.len());
    }
}

#[test]
fn saved_files_beside_writers_hold_every_stable_key() {
    let f = CuckooFilter::builder()
        .bucket_count(1 << 11)
        .stripe_count(16)
        .seed(4)
        .build()
        .unwrap();
    let stable = fill(&f, 0.9);
    let dir = std::env::temp_dir().join(format!("ccf-snapshots-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("f.ccf");
    let saved = beside_writers(
        1,
        10,
        |k| f.insert(&k).is_ok(),
        |k| f.remove(&k),
        || {
            f.write_to_path(&path).unwrap();
            std::fs::read(&path).unwrap()
        },
    );
    for bytes in &saved {
        check_snapshot(bytes, &stable, 1, "write_to_path");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_grown_filter_snapshots_every_level_beside_writers() {
    let f = ScalableCuckooFilter::builder()
        .capacity(2_000)
        .seed(5)
        .build()
        .unwrap();
    let stable: Vec<u64> = (0..12_000u64).map(|k| k * 2 + 1).collect();
    for k in &stable {
        f.insert(k).unwrap();
    }
    assert!(f.levels() >= 3);
    let writers = 2;
    let snapshots = beside_writers(
        writers,
        20,
        |k| f.insert(&k).is_ok(),
        |k| f.remove(&k).is_removed(),
        || f.to_bytes(),
    );
    for bytes in &snapshots {
        let g = ScalableCuckooFilter::from_bytes(bytes).expect("a snapshot decodes");
        assert!(g.len() >= stable.len() && g.len() <= stable.len() + writers as usize * IN_FLIGHT);
        assert!(stable.iter().all(|k| g.contains(k)), "a stable key missing");
    }
    assert_eq!(f.len(), stable.len());
}

#[test]
fn a_windowed_filter_snapshots_beside_writers_filling_it() {
    let f = WindowedCuckooFilter::builder()
        .capacity(12_000)
        .generations(4)
        // 64 stripes (8 groups for the pass): writers take stripes the
        // pass has not reached (the default, 4, is one group).
        .stripe_count(64)
        .seed(6)
        .build()
        .unwrap();
    let stable: Vec<u64> = (0..8_000u64).map(|k| k * 2 + 1).collect();
    for k in &stable {
        f.insert(k).unwrap();
    }
    f.advance();
    let writers = 2;
    // Writers fill the table towards full (displacing fingerprints) and
    // refresh stable keys into the current generation (a lane rewritten
    // in place); nothing advances, so nothing expires.
    let snapshots = beside_writers(
        writers,
        20,
        |k| {
            let _ = f.insert(&k);
            let _ = f.insert(&((k % 16_000) | 1));
            false
        },
        |_| true,
        || (f.to_bytes(), f.generation()),
    );
    for (bytes, generation) in &snapshots {
        let g = WindowedCuckooFilter::from_bytes(bytes).expect("a snapshot decodes");
        assert_eq!(g.generation(), *generation);
        let lost = stable.iter().filter(|k| !g.contains(*k)).count();
        assert_eq!(lost, 0, "stable keys missing from a windowed snapshot");
    }
    assert!(stable.iter().all(|k| f.contains(k)));
}

#[test]
fn clones_beside_writers_are_one_moment_of_the_filter() {
    let f = CuckooFilter::builder()
        .bucket_count(1 << 12)
        .stripe_count(64)
        .seed(8)
        .build()
        .unwrap();
    let stable = fill(&f, 0.93);
    let writers = 2;
    let copies = beside_writers(
        writers,
        20,
        |k| f.insert(&k).is_ok(),
        |k| f.remove(&k),
        || f.try_clone().unwrap(),
    );
    for g in &copies {
        assert_eq!(
            g.len(),
            g.occupied_slots(),
            "a clone's count matches its buckets"
        );
        assert!(g.len() >= stable.len() && g.len() <= stable.len() + writers as usize * IN_FLIGHT);
        assert!(
            stable.iter().all(|k| g.contains(k)),
            "a stable key missing from a clone"
        );
    }
    let w = WindowedCuckooFilter::builder()
        .capacity(12_000)
        .generations(4)
        // 64 stripes (8 groups for the pass): writers take stripes the
        // pass has not reached (the default, 4, is one group).
        .stripe_count(64)
        .seed(9)
        .build()
        .unwrap();
    let stable: Vec<u64> = (0..8_000u64).map(|k| k * 2 + 1).collect();
    for k in &stable {
        w.insert(k).unwrap();
    }
    let copies = beside_writers(
        writers,
        10,
        |k| {
            let _ = w.insert(&k);
            false
        },
        |_| true,
        || w.try_clone().unwrap(),
    );
    for g in &copies {
        assert!(g.len() >= stable.len());
        assert!(
            stable.iter().all(|k| g.contains(k)),
            "a stable key missing from a windowed clone"
        );
        // The copy is its own filter: a refresh there (in place, however
        // full the copy) leaves the original alone.
        g.insert(&stable[0]).unwrap();
        assert!(g.contains(&stable[0]));
    }
}
