//! `WindowedCuckooFilter` under real threads: workers insert keys and
//! re-check them (one by one and in batches) while a timer thread advances
//! the generation as fast as it can. A key inserted when the generation
//! read before the insert was `t` must be found by every lookup after
//! which `generation()` reads at most `t + G - 1`. Bounded at ~1.6 s and
//! ~3.2 s.

use concurrent_cuckoo::WindowedCuckooFilter;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[test]
fn workers_recheck_their_keys_while_a_timer_advances() {
    // 16-bit lanes, then 32-bit ones (a rate only they reach).
    recheck_beside_a_timer(1e-3, Duration::from_millis(1000));
    recheck_beside_a_timer(1e-6, Duration::from_millis(600));
}

fn recheck_beside_a_timer(rate: f64, run: Duration) {
    const WORKERS: u64 = 2;
    let (capacity, g) = (1usize << 10, 3u64);
    let f = Arc::new(
        WindowedCuckooFilter::builder()
            .capacity(capacity)
            .generations(g)
            .false_positive_rate(rate)
            .seed(11)
            .build()
            .unwrap(),
    );
    // Each worker inserts at most this many keys per generation it reads.
    // A key is tagged with the generation its worker read or the next, so
    // the `G` live tags hold the keys of at most `G + 1` read generations:
    // at most `capacity` keys are live, and the table runs near full.
    let quota = capacity as u64 / (g + 1) / WORKERS;
    let stop = Arc::new(AtomicBool::new(false));
    let timer = {
        let (f, stop) = (f.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                f.advance();
                std::thread::sleep(Duration::from_micros(200));
            }
        })
    };
    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            let f = f.clone();
            std::thread::spawn(move || {
                let deadline = Instant::now() + run;
                let mut recent: VecDeque<(u64, u64)> = VecDeque::new();
                let (mut n, mut checks, mut batch_checks) = (0u64, 0u64, 0u64);
                let (mut gen_seen, mut in_gen) = (u64::MAX, 0);
                while Instant::now() < deadline {
                    let t = f.generation();
                    if t != gen_seen {
                        (gen_seen, in_gen) = (t, 0);
                    }
                    if in_gen >= quota {
                        std::thread::yield_now();
                        continue;
                    }
                    in_gen += 1;
                    let key = w << 48 | n;
                    n += 1;
                    f.insert(&key).expect("at most capacity keys are live");
                    recent.push_back((key, t));
                    if recent.len() > 64 {
                        recent.pop_front();
                    }
                    // Re-check every recent key.
                    for &(k, t) in &recent {
                        let found = f.contains(&k);
                        let now = f.generation();
                        if now < t + g {
                            assert!(found, "key {k:#x} inserted from {t} lost at {now}");
                            checks += 1;
                        }
                    }
                    if n % 16 == 0 {
                        let keys: Vec<u64> = recent.iter().map(|&(k, _)| k).collect();
                        let mut out = vec![false; keys.len()];
                        f.contains_batch(&keys, &mut out);
                        let now = f.generation();
                        for (&(k, t), &found) in recent.iter().zip(&out) {
                            if now < t + g {
                                assert!(found, "batch: key {k:#x} from {t} lost at {now}");
                                batch_checks += 1;
                            }
                        }
                    }
                }
                (n, checks, batch_checks)
            })
        })
        .collect();
    let totals: Vec<(u64, u64, u64)> = workers.into_iter().map(|w| w.join().unwrap()).collect();
    stop.store(true, Ordering::Relaxed);
    timer.join().unwrap();
    let s = f.stats();
    println!(
        "stress ({}-bit lanes): {} generations, inserts/checks/batch checks per worker \
         {totals:?}, {} moves, {} swept",
        f.lane_bits(),
        s.generation,
        s.relocations,
        s.swept
    );
    assert_eq!(s.failed_inserts, 0);
    assert!(
        s.generation > 100,
        "the timer advanced {} times",
        s.generation
    );
    assert!(totals.iter().all(|&(_, checks, _)| checks > 0));
    assert!(f.len() <= capacity);
}

/// The exact window beside jumps (issue 49): two writers insert keys of a
/// pool whose fingerprints are pairwise distinct (so no key is another's
/// false positive) and re-check their recent keys; two readers check
/// random keys of the pool; one thread advances, and every few advances
/// jumps with `advance_to` by sizes around the window, the tag period `M`
/// and its multiples. Every lookup must find a key whose insert started
/// at `t_lo` while `generation()` still reads at most `t_lo + G - 1` after
/// the lookup, and must miss a key whose insert returned at `t_hi` once
/// `generation()` read `t_hi + G` or more before the lookup. Before the
/// fix `advance_to` kept a key inserted during its first advances alive
/// across a jump by a multiple of `M` ("EXPIRED KEY FOUND"). ~0.8 s per
/// configuration.
#[test]
fn the_window_is_exact_for_every_thread_beside_advance_to_jumps() {
    // The last in 32-bit lanes (more than 5 tag bits).
    for (tag_bits, g) in [(2u32, 1u64), (3, 4), (5, 1), (7, 40)] {
        jumps_keep_the_window_exact(tag_bits, g, Duration::from_millis(800));
    }
}

/// A key's last insert: `t_lo << 32 | t_hi` (the generations read before
/// it started and after it returned), `NONE` before its first insert,
/// `BUSY` while an insert runs.
const NONE: u64 = 0;
const BUSY: u64 = u64::MAX;

fn jumps_keep_the_window_exact(tag_bits: u32, g: u64, run: Duration) {
    const WRITERS: usize = 2;
    const READERS: usize = 2;
    const POOL: usize = 1024;
    let f = Arc::new(
        WindowedCuckooFilter::builder()
            .capacity(2 * POOL)
            .tag_bits(tag_bits)
            .generations(g)
            .seed(5)
            .build()
            .unwrap(),
    );
    let m = 1u64 << tag_bits;
    // Keys (hashes) with pairwise distinct fingerprints.
    let mut seen = std::collections::HashSet::new();
    let pool: Arc<Vec<u64>> = Arc::new(
        (1u64..)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .filter(|&h| seen.insert(f.signature_of_hash(h).0))
            .take(POOL)
            .collect(),
    );
    let records: Arc<Vec<AtomicU64>> = Arc::new((0..POOL).map(|_| AtomicU64::new(NONE)).collect());
    let stop = Arc::new(AtomicBool::new(false));
    // The check every thread makes: `g1`, `found`, `g2` around one lookup
    // of key `i`, whose record read `record` before and after it.
    let check = move |i: usize, record: u64, g1: u64, found: bool, g2: u64| {
        let (t_lo, t_hi) = (record >> 32, record & 0xFFFF_FFFF);
        if g2 < t_lo + g {
            assert!(found, "LOST FINGERPRINT: key {i} inserted in [{t_lo}, {t_hi}], lookup in [{g1}, {g2}], G {g}, M {m}");
        }
        if g1 >= t_hi + g {
            assert!(!found, "EXPIRED KEY FOUND: key {i} inserted in [{t_lo}, {t_hi}], lookup in [{g1}, {g2}], G {g}, M {m}");
        }
    };
    // One checked lookup of key `i`; false if its record changed (an
    // insert of it ran meanwhile).
    let lookup = {
        let (f, pool, records) = (f.clone(), pool.clone(), records.clone());
        move |i: usize| -> bool {
            let record = records[i].load(Ordering::SeqCst);
            if record == NONE || record == BUSY {
                return false;
            }
            let g1 = f.generation();
            let found = f.contains_hash(pool[i]);
            // A hit loads the lane relaxed: order the re-read after it.
            std::sync::atomic::fence(Ordering::SeqCst);
            let g2 = f.generation();
            if records[i].load(Ordering::SeqCst) != record {
                return false;
            }
            check(i, record, g1, found, g2);
            true
        }
    };
    let advancer = {
        let (f, stop) = (f.clone(), stop.clone());
        let slack = m - 1 - g;
        std::thread::spawn(move || {
            let jumps = [slack, g, m - 1, m, m + 1, 2 * m, 3 * m + 1, g + m, 1000 * m];
            let mut n = 0usize;
            while !stop.load(Ordering::Relaxed) {
                f.advance();
                if n.is_multiple_of(3) {
                    let jump = jumps[(n / 3) % jumps.len()];
                    f.advance_to(f.generation() + jump);
                }
                n += 1;
                std::thread::sleep(Duration::from_micros(50));
            }
            n
        })
    };
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (f, pool, records, lookup) =
                (f.clone(), pool.clone(), records.clone(), lookup.clone());
            std::thread::spawn(move || {
                let deadline = Instant::now() + run;
                let mine: Vec<usize> = (w..POOL).step_by(WRITERS).collect();
                let mut recent: VecDeque<usize> = VecDeque::new();
                let (mut inserts, mut checks) = (0u64, 0u64);
                while Instant::now() < deadline {
                    let i = mine[inserts as usize % mine.len()];
                    records[i].store(BUSY, Ordering::SeqCst);
                    let t_lo = f.generation();
                    f.insert_hash(pool[i]).expect("at most the pool is live");
                    let t_hi = f.generation();
                    records[i].store(t_lo << 32 | t_hi, Ordering::SeqCst);
                    inserts += 1;
                    recent.push_back(i);
                    if recent.len() > 32 {
                        recent.pop_front();
                    }
                    for &k in &recent {
                        checks += u64::from(lookup(k));
                    }
                }
                (inserts, checks)
            })
        })
        .collect();
    let readers: Vec<_> = (0..READERS)
        .map(|r| {
            let lookup = lookup.clone();
            std::thread::spawn(move || {
                let deadline = Instant::now() + run;
                let mut rng = 0x2545_F491_4F6C_DD1Du64 ^ r as u64;
                let mut checks = 0u64;
                while Instant::now() < deadline {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    checks += u64::from(lookup(rng as usize % POOL));
                }
                checks
            })
        })
        .collect();
    let written: Vec<(u64, u64)> = writers.into_iter().map(|w| w.join().unwrap()).collect();
    let read: Vec<u64> = readers.into_iter().map(|r| r.join().unwrap()).collect();
    stop.store(true, Ordering::Relaxed);
    let advances = advancer.join().unwrap();
    println!(
        "M {m}, G {g}: {advances} advances (a third with a jump), generation {}, writers (inserts, checks) {written:?}, readers' checks {read:?}",
        f.generation()
    );
    assert!(advances > 100, "{advances} advances");
    assert!(written.iter().all(|&(_, checks)| checks > 0));
    assert!(read.iter().all(|&checks| checks > 0));
}
