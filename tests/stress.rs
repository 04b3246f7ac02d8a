//! Multi-threaded stress tests with exact expectations, run with more
//! threads than the machine has cores so threads are preempted mid-operation.

mod common;

use common::{scaled, Rng};
use concurrent_cuckoo::{CuckooFilter, InsertError};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;

const WRITERS: usize = 4;
const READERS: usize = 4;

/// A small (in-cache) filter kept near full, so writers constantly execute
/// displacement paths through the buckets readers are probing.
#[test]
fn readers_never_miss_stable_keys_while_writers_displace_fingerprints() {
    let f = Arc::new(
        CuckooFilter::builder()
            .capacity(0)
            .bucket_count(2048)
            .seed(21)
            .build()
            .unwrap(),
    );
    let capacity = f.capacity();
    let mut rng = Rng(5);
    // Stable keys: inserted before the run, never removed.
    let stable: Arc<Vec<u64>> = Arc::new((0..capacity * 6 / 10).map(|_| rng.next()).collect());
    for k in stable.iter() {
        f.insert(k).unwrap();
    }
    let rounds = scaled(300, 8);
    let stop = Arc::new(AtomicBool::new(false));
    let misses = Arc::new(AtomicUsize::new(0));
    let lookups = Arc::new(AtomicUsize::new(0));
    let barrier = Arc::new(Barrier::new(WRITERS + READERS));

    let readers: Vec<_> = (0..READERS)
        .map(|r| {
            let (f, stable, stop, misses, lookups, barrier) = (
                f.clone(),
                stable.clone(),
                stop.clone(),
                misses.clone(),
                lookups.clone(),
                barrier.clone(),
            );
            thread::spawn(move || {
                barrier.wait();
                let mut out = [false; 32];
                while !stop.load(Ordering::Relaxed) {
                    if r % 2 == 0 {
                        let missed = stable.iter().filter(|k| !f.contains(*k)).count();
                        misses.fetch_add(missed, Ordering::Relaxed);
                    } else {
                        for chunk in stable.chunks(32) {
                            let out = &mut out[..chunk.len()];
                            f.contains_batch(chunk, out);
                            misses
                                .fetch_add(out.iter().filter(|&&b| !b).count(), Ordering::Relaxed);
                        }
                    }
                    lookups.fetch_add(stable.len(), Ordering::Relaxed);
                }
            })
        })
        .collect();

    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (f, barrier) = (f.clone(), barrier.clone());
            thread::spawn(move || {
                barrier.wait();
                let mut rng = Rng(1000 + w as u64);
                let mut mine: Vec<u64> = Vec::new();
                for _ in 0..rounds {
                    // Fill towards full: most of these inserts need paths.
                    for _ in 0..capacity / 10 {
                        let k = rng.next();
                        match f.insert(&k) {
                            Ok(()) => mine.push(k),
                            Err(InsertError::Full) => {}
                            Err(e) => panic!("{e}"),
                        }
                    }
                    assert!(
                        mine.iter().all(|k| f.contains(k)),
                        "writer lost its own key"
                    );
                    // Remove about two thirds of them again.
                    let keep = mine.len() / 3;
                    for k in mine.drain(keep..) {
                        assert!(f.remove(&k), "own key vanished before its removal");
                    }
                }
                mine
            })
        })
        .collect();

    let kept: Vec<Vec<u64>> = writers.into_iter().map(|h| h.join().unwrap()).collect();
    stop.store(true, Ordering::Relaxed);
    for h in readers {
        h.join().unwrap();
    }
    let kept_total: usize = kept.iter().map(Vec::len).sum();
    println!(
        "lookups {} misses {} relocations {} final load {:.3}",
        lookups.load(Ordering::Relaxed),
        misses.load(Ordering::Relaxed),
        f.relocations(),
        f.load_factor()
    );
    assert_eq!(
        misses.load(Ordering::Relaxed),
        0,
        "a reader missed a stable key"
    );
    assert!(lookups.load(Ordering::Relaxed) > 0);
    assert!(
        f.relocations() > 1000,
        "the test must force displacements: {}",
        f.relocations()
    );
    assert_eq!(f.len(), stable.len() + kept_total);
    assert_eq!(f.occupied_slots(), f.len());
    assert!(stable
        .iter()
        .chain(kept.iter().flatten())
        .all(|k| f.contains(k)));
}

#[test]
fn racing_insert_unique_counts_each_key_once() {
    let threads = 8;
    let n = scaled(20_000, 2_000);
    let f = Arc::new(
        CuckooFilter::builder()
            .capacity(n)
            .fingerprint_bits(32)
            .seed(22)
            .build()
            .unwrap(),
    );
    let wins: Arc<Vec<AtomicUsize>> = Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect());
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (f, wins, barrier) = (f.clone(), wins.clone(), barrier.clone());
            thread::spawn(move || {
                barrier.wait();
                // Every thread walks the keys in a different order.
                let stride = [1, 7, 13, 17, 19, 23, 29, 31][t];
                for i in 0..n {
                    let key = (i * stride + t) % n;
                    if f.insert_unique(&(key as u64)).unwrap() {
                        wins[key].fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    for (key, w) in wins.iter().enumerate() {
        assert_eq!(
            w.load(Ordering::Relaxed),
            1,
            "key {key} inserted {} times",
            w.load(Ordering::Relaxed)
        );
    }
    assert_eq!(f.len(), n);
    assert_eq!(f.occupied_slots(), n);
}

/// Racing `insert_unique` near full, where the first attempt usually fails
/// and the thread must search and execute a path before re-checking.
#[test]
fn racing_insert_unique_through_displacement_paths() {
    let threads = 6;
    let f = Arc::new(
        CuckooFilter::builder()
            .capacity(0)
            .bucket_count(512)
            .fingerprint_bits(32)
            .seed(23)
            .build()
            .unwrap(),
    );
    let mut rng = Rng(77);
    let filler: Vec<u64> = (0..f.capacity() * 85 / 100).map(|_| rng.next()).collect();
    for k in &filler {
        f.insert(k).unwrap();
    }
    let contested: Arc<Vec<u64>> = Arc::new((0..f.capacity() / 12).map(|_| rng.next()).collect());
    let wins = Arc::new(AtomicUsize::new(0));
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (f, contested, wins, barrier) =
                (f.clone(), contested.clone(), wins.clone(), barrier.clone());
            thread::spawn(move || {
                barrier.wait();
                let mut own = 0;
                for i in 0..contested.len() {
                    let k = contested[(i + t * 13) % contested.len()];
                    if f.insert_unique(&k).expect("table has room") {
                        own += 1;
                    }
                }
                wins.fetch_add(own, Ordering::Relaxed);
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(wins.load(Ordering::Relaxed), contested.len());
    assert_eq!(f.len(), filler.len() + contested.len());
    assert!(filler.iter().chain(contested.iter()).all(|k| f.contains(k)));
}

#[test]
fn len_is_exact_after_concurrent_inserts_and_removes() {
    let threads = 8;
    let per_thread = scaled(50_000, 5_000);
    let f = Arc::new(
        CuckooFilter::builder()
            .capacity(threads * per_thread)
            .seed(24)
            .build()
            .unwrap(),
    );
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let f = f.clone();
            thread::spawn(move || {
                let key = |i: usize| (t * per_thread + i) as u64;
                for i in 0..per_thread {
                    f.insert(&key(i)).unwrap();
                }
                // Remove every third key, and insert a duplicate of every fifth.
                let mut net = per_thread;
                for i in (0..per_thread).step_by(3) {
                    assert!(f.remove(&key(i)));
                    net -= 1;
                }
                for i in (0..per_thread).step_by(5) {
                    f.insert(&key(i)).unwrap();
                    net += 1;
                }
                net
            })
        })
        .collect();
    let expected: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
    assert_eq!(f.len(), expected);
    assert_eq!(f.occupied_slots(), expected);
}

/// Progress: on a table with one stripe and one version, every move anywhere
/// invalidates every lookup in flight. Two writers (plus a second reader,
/// so there are more threads than cores) keep the table near full and
/// force displacement paths without pause; the reader must still finish a
/// fixed number of lookups, exactly (lookups that keep seeing versions
/// change fall back to reading under the stripe locks after a few tries).
#[test]
fn a_reader_finishes_its_lookups_while_writers_keep_moving_fingerprints() {
    let f = Arc::new(
        CuckooFilter::builder()
            .capacity(0)
            .bucket_count(256)
            .stripe_count(1)
            .version_count(1)
            .seed(25)
            .build()
            .unwrap(),
    );
    let mut rng = Rng(26);
    let stable: Arc<Vec<u64>> =
        Arc::new((0..f.capacity() * 93 / 100).map(|_| rng.next()).collect());
    for k in stable.iter() {
        f.insert(k).unwrap();
    }
    let lookups = scaled(20_000_000, 500_000);
    let stop = Arc::new(AtomicBool::new(false));
    let barrier = Arc::new(Barrier::new(4));
    let writers: Vec<_> = (0..2u64)
        .map(|w| {
            let (f, stop, barrier) = (f.clone(), stop.clone(), barrier.clone());
            thread::spawn(move || {
                barrier.wait();
                let mut rng = Rng(300 + w);
                let mut moved_for = 0usize;
                while !stop.load(Ordering::Relaxed) {
                    // Near full, most inserts execute a displacement path.
                    let k = rng.next();
                    match f.insert(&k) {
                        Ok(()) => {
                            assert!(f.remove(&k), "writer {w}: its own key vanished");
                            moved_for += 1;
                        }
                        Err(InsertError::Full) => {}
                        Err(e) => panic!("{e}"),
                    }
                }
                moved_for
            })
        })
        .collect();
    let background_reader = {
        let (f, stable, stop, barrier) = (f.clone(), stable.clone(), stop.clone(), barrier.clone());
        thread::spawn(move || {
            barrier.wait();
            let mut missed = 0;
            while !stop.load(Ordering::Relaxed) {
                missed += stable.iter().filter(|k| !f.contains(*k)).count();
            }
            missed
        })
    };
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let reader = {
        let (f, stable) = (f.clone(), stable.clone());
        thread::spawn(move || {
            barrier.wait();
            let mut rng = Rng(27);
            let (mut missed, mut hits) = (0usize, 0usize);
            for i in 0..lookups {
                if i % 2 == 0 {
                    missed += usize::from(!f.contains(&stable[i / 2 % stable.len()]));
                } else {
                    // A negative lookup: every miss is validated, so every
                    // one of these is exposed to the writers' moves.
                    hits += usize::from(f.contains(&rng.next()));
                }
            }
            let retries = concurrent_cuckoo::thread_lookup_retries();
            done_tx.send(()).unwrap();
            (missed, hits, retries)
        })
    };
    if done_rx
        .recv_timeout(std::time::Duration::from_secs(300))
        .is_err()
    {
        stop.store(true, Ordering::Relaxed);
        panic!("the reader did not finish {lookups} lookups in 300 s: readers starve");
    }
    let (missed, false_positives, (retries, locked)) = reader.join().unwrap();
    stop.store(true, Ordering::Relaxed);
    let completed: usize = writers.into_iter().map(|h| h.join().unwrap()).sum();
    let background_missed = background_reader.join().unwrap();
    println!(
        "{lookups} lookups: {retries} optimistic retries, {locked} under the locks, \
         {false_positives} false positives; {completed} writer insert+remove pairs, {} moves",
        f.relocations()
    );
    assert_eq!(missed, 0, "the reader missed a stable key");
    assert_eq!(
        background_missed, 0,
        "the background reader missed a stable key"
    );
    assert!(
        f.relocations() > 1000,
        "the writers must force moves: {}",
        f.relocations()
    );
    assert_eq!(f.len(), stable.len());
    assert!(stable.iter().all(|k| f.contains(k)));
}

/// Batches from several threads at once (more threads than cores): every
/// key a thread's batches inserted is present, its batch removes find
/// exactly its own keys, and `len` and the statistics are exact at the end.
#[test]
fn concurrent_batches_keep_exact_counts() {
    let threads = 6u64;
    let per_thread = scaled(60_000, 6_000) as u64;
    let f = Arc::new(
        CuckooFilter::builder()
            .capacity((threads * per_thread) as usize)
            .seed(28)
            .build()
            .unwrap(),
    );
    let barrier = Arc::new(Barrier::new(threads as usize));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (f, barrier) = (f.clone(), barrier.clone());
            thread::spawn(move || {
                barrier.wait();
                let keys: Vec<u64> = (0..per_thread).map(|i| i * threads + t).collect();
                for chunk in keys.chunks(1000) {
                    f.insert_hash_batch(chunk).unwrap();
                }
                // Remove every other key in batches of 64, then insert a
                // duplicate of every tenth key with a keyed batch.
                let victims: Vec<u64> = keys.iter().copied().step_by(2).collect();
                for chunk in victims.chunks(64) {
                    let mut removed = vec![false; chunk.len()];
                    f.remove_hash_batch(chunk, &mut removed);
                    assert!(removed.iter().all(|&r| r), "thread {t}: own key missing");
                }
                let dups: Vec<u64> = keys.iter().copied().step_by(10).collect();
                for k in &dups {
                    f.insert_hash(*k).unwrap();
                }
                let survivors: Vec<u64> = keys.iter().copied().skip(1).step_by(2).collect();
                let mut found = vec![false; survivors.len()];
                f.contains_hash_batch(&survivors, &mut found);
                assert!(
                    found.iter().all(|&x| x),
                    "thread {t}: a surviving key is missing"
                );
                (
                    keys.len() - victims.len() + dups.len(),
                    keys.len() + dups.len(),
                    victims.len(),
                )
            })
        })
        .collect();
    let (mut expected, mut inserts, mut removes) = (0, 0, 0);
    for h in handles {
        let (e, i, r) = h.join().unwrap();
        expected += e;
        inserts += i as u64;
        removes += r as u64;
    }
    assert_eq!(f.len(), expected);
    assert_eq!(f.occupied_slots(), expected);
    let s = f.stats();
    assert_eq!((s.inserts, s.removes, s.len), (inserts, removes, expected));
    assert_eq!(s.path_lengths.iter().sum::<u64>(), s.inserts);
}

/// A long batch takes every stripe of the table for each chunk and must
/// let go whenever another thread waits for one. Lone writers insert and
/// remove their own keys (each checked right after its write) and readers
/// look up keys stored before the run while the batch fills the table to
/// about 85%, with displacement paths; every key is where it should be at
/// every step and at the end. (That a waiter is let in before the batch's
/// next key is the loom model
/// `a_writer_waiting_on_a_batch_that_holds_every_stripe_gets_its_lock`.)
#[test]
fn lone_writers_and_readers_alongside_a_batch_that_holds_every_stripe() {
    const LONE: u64 = 2;
    let f = Arc::new(
        CuckooFilter::builder()
            .capacity(0)
            .bucket_count(1 << 14) // 16 stripes: a chunk of 128 keys takes them all
            .seed(33)
            .build()
            .unwrap(),
    );
    let capacity = f.capacity() as u64;
    let stable: Vec<u64> = (0..capacity / 10).map(|i| i * 7 + 1_000_000_000).collect();
    f.insert_hash_batch(&stable).unwrap();
    let batch: Vec<u64> = (0..capacity * 3 / 4)
        .map(|i| i * 7 + 3_000_000_000)
        .collect();
    let batch_done = AtomicBool::new(false);
    let misses = AtomicUsize::new(0);
    let per_lone = scaled(4000, 400) as u64;
    thread::scope(|s| {
        let (f, batch_done, misses) = (&f, &batch_done, &misses);
        let stable = &stable;
        s.spawn(move || {
            let mut found = vec![false; stable.len()];
            while !batch_done.load(Ordering::Acquire) {
                f.contains_hash_batch(stable, &mut found);
                misses.fetch_add(found.iter().filter(|&&x| !x).count(), Ordering::Relaxed);
            }
        });
        for t in 0..LONE {
            s.spawn(move || {
                for i in 0..per_lone {
                    let k = (i * LONE + t) * 7 + 5_000_000_000;
                    f.insert_hash(k).unwrap();
                    assert!(f.contains_hash(k), "lone writer {t}: own key missing");
                    if i % 2 == 0 {
                        assert!(f.remove_hash(k), "lone writer {t}: own key not removed");
                    }
                }
            });
        }
        f.insert_hash_batch(&batch).unwrap();
        batch_done.store(true, Ordering::Release);
    });
    assert_eq!(misses.load(Ordering::Relaxed), 0, "a stable key was missed");
    let lone_kept: Vec<u64> = (0..per_lone)
        .filter(|i| i % 2 == 1)
        .flat_map(|i| (0..LONE).map(move |t| (i * LONE + t) * 7 + 5_000_000_000))
        .collect();
    for keys in [&stable, &batch, &lone_kept] {
        let mut found = vec![false; keys.len()];
        f.contains_hash_batch(keys, &mut found);
        assert!(found.iter().all(|&x| x), "a key is missing at the end");
    }
    let expected = stable.len() + batch.len() + lone_kept.len();
    assert_eq!(f.len(), expected);
    assert_eq!(f.occupied_slots(), expected);
    assert!(
        f.stats().relocations > 0,
        "the batch must have displaced keys"
    );
}

/// One phase of [`oversubscribed_threads_all_progress_every_second`]:
/// `writers` threads insert, remove and look up keys of their own while
/// `readers` threads look up stable keys (32 single lookups, then a burst
/// of 32, and so on), for `seconds` seconds. Checks
/// exact counts and zero misses, and that every thread made progress in
/// every whole second; returns the operations per second of all threads.
fn mixed_phase(writers: usize, readers: usize, seconds: usize) -> f64 {
    use std::collections::HashSet;
    use std::time::{Duration, Instant};
    let f = Arc::new(
        CuckooFilter::builder()
            .capacity(400_000)
            .seed(0x0F_5B)
            .build()
            .unwrap(),
    );
    let stable: Arc<Vec<u64>> = Arc::new((0..100_000u64).map(|i| i | 1 << 63).collect());
    f.insert_batch(&stable).unwrap();
    let threads = writers + readers;
    let ops: Arc<Vec<AtomicUsize>> = Arc::new((0..threads).map(|_| AtomicUsize::new(0)).collect());
    let misses = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let barrier = Arc::new(Barrier::new(threads + 1));
    let mut handles = Vec::new();
    for w in 0..writers {
        let (f, ops, misses, stop, barrier) = (
            f.clone(),
            ops.clone(),
            misses.clone(),
            stop.clone(),
            barrier.clone(),
        );
        handles.push(thread::spawn(move || {
            let mut rng = Rng(w as u64 + 1);
            // Keys of writer `w` only: its bits 48..56 (the stable keys
            // have bit 63).
            let mut mine: Vec<u64> = Vec::new();
            let mut present: HashSet<u64> = HashSet::new();
            let mut next = 0u64;
            barrier.wait();
            while !stop.load(Ordering::Relaxed) {
                match rng.below(10) {
                    // Inserts while the writer holds few keys, removes of a
                    // random own key otherwise: about 30,000 keys each.
                    0..=3 if mine.len() < 30_000 => {
                        let k = (w as u64) << 48 | next;
                        next += 1;
                        f.insert(&k).unwrap();
                        mine.push(k);
                        present.insert(k);
                    }
                    0..=5 if !mine.is_empty() => {
                        let k = mine.swap_remove(rng.below(mine.len()));
                        present.remove(&k);
                        assert!(f.remove(&k), "writer {w}: its key {k} was not there");
                    }
                    _ if !mine.is_empty() => {
                        let k = mine[rng.below(mine.len())];
                        if !f.contains(&k) {
                            misses.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    _ => continue,
                }
                ops[w].fetch_add(1, Ordering::Relaxed);
            }
            present
        }));
    }
    for r in 0..readers {
        let (f, stable, ops, misses, stop, barrier) = (
            f.clone(),
            stable.clone(),
            ops.clone(),
            misses.clone(),
            stop.clone(),
            barrier.clone(),
        );
        handles.push(thread::spawn(move || {
            let mut rng = Rng(1000 + r as u64);
            let mut out = [false; 32];
            let mut burst = false;
            barrier.wait();
            while !stop.load(Ordering::Relaxed) {
                // Every reader alternates single lookups and bursts, so the
                // mix is the same whatever the number of readers.
                burst = !burst;
                if !burst {
                    for _ in 0..32 {
                        let k = stable[rng.below(stable.len())];
                        if !f.contains(&k) {
                            misses.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    ops[writers + r].fetch_add(32, Ordering::Relaxed);
                } else {
                    let at = rng.below(stable.len() - 32);
                    f.contains_batch(&stable[at..at + 32], &mut out);
                    misses.fetch_add(out.iter().filter(|&&hit| !hit).count(), Ordering::Relaxed);
                    ops[writers + r].fetch_add(32, Ordering::Relaxed);
                }
            }
            HashSet::new()
        }));
    }
    // Sample every thread's count once a second: each must have moved.
    let snapshot = || {
        ops.iter()
            .map(|o| o.load(Ordering::Relaxed))
            .collect::<Vec<_>>()
    };
    barrier.wait();
    let start = Instant::now();
    let mut last = snapshot();
    let mut stalled = Vec::new();
    for second in 0..seconds {
        let deadline = start + Duration::from_secs(second as u64 + 1);
        thread::sleep(deadline.saturating_duration_since(Instant::now()));
        let now = snapshot();
        stalled.extend(
            (0..threads)
                .filter(|&t| now[t] == last[t])
                .map(|t| (second, t)),
        );
        last = now;
    }
    stop.store(true, Ordering::Relaxed);
    let elapsed = start.elapsed().as_secs_f64();
    let total: usize = last.iter().sum();
    let mut expected = stable.len();
    for h in handles {
        let present = h.join().unwrap();
        for k in &present {
            assert!(f.contains(k), "a writer's key {k} is missing at the end");
        }
        expected += present.len();
    }
    assert!(
        stalled.is_empty(),
        "(second, thread) pairs with no progress: {stalled:?}"
    );
    assert_eq!(
        misses.load(Ordering::Relaxed),
        0,
        "lookups missed present keys"
    );
    assert_eq!(f.len(), expected);
    assert_eq!(f.occupied_slots(), expected);
    assert!(stable.iter().all(|k| f.contains(k)));
    total as f64 / elapsed
}

/// 16 threads on a 2-core machine (8 writers inserting, removing and
/// looking up their own keys; 8 readers looking up stable keys, one at a
/// time and in bursts) for a fixed time: zero misses, exact final counts,
/// and every thread makes progress in every second, so the stripe lock's
/// spin-then-sleep wait starves no one. Prints the total throughput next
/// to that of 2 threads (one writer, one reader) on the same mix: a
/// figure for `docs/benchmarks.md`, never asserted.
#[test]
fn oversubscribed_threads_all_progress_every_second() {
    let seconds = scaled(5, 2);
    let two = mixed_phase(1, 1, seconds);
    let sixteen = mixed_phase(8, 8, seconds);
    println!(
        "oversubscription: 2 threads {:.2} M ops/s, 16 threads {:.2} M ops/s ({:.2}x)",
        two / 1e6,
        sixteen / 1e6,
        sixteen / two
    );
}
