//! `WindowedCuckooFilter` under real threads: workers insert keys and
//! re-check them (one by one and in batches) while a timer thread advances
//! the generation as fast as it can. A key inserted when the generation
//! read before the insert was `t` must be found by every lookup after
//! which `generation()` reads at most `t + G - 1`. Bounded at ~1.5 s.

use concurrent_cuckoo::WindowedCuckooFilter;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[test]
fn workers_recheck_their_keys_while_a_timer_advances() {
    const WORKERS: u64 = 2;
    let (capacity, g) = (1usize << 10, 3u64);
    let f = Arc::new(
        WindowedCuckooFilter::builder()
            .capacity(capacity)
            .generations(g as usize)
            .false_positive_rate(1e-3)
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
                let deadline = Instant::now() + Duration::from_millis(1500);
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
        "stress: {} generations, inserts/checks/batch checks per worker {totals:?}, {} moves, {} swept",
        s.generation, s.relocations, s.swept
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
