//! How often moves make lookups retry, against the lock-stripe and version
//! counts (`cuckoo-harness retries`).
//!
//! A lookup that misses validates the versions of its two buckets; a move
//! (or a remove of one of two copies) bumps the version of the bucket it
//! clears, so every lookup that shares that version and runs at the same
//! time retries, and after a few retries reads under the stripe locks.
//! Fewer versions cost less memory; more versions mean fewer lookups share
//! one. This measures retries per lookup under the write-heaviest mix of
//! the comparison (50% lookups of keys half present, 25% inserts of fresh
//! keys, 25% removes of stored keys, so the load stays at 90%) on two
//! threads, for tables of 1, 64 and 4096 stripes and versions coupled to
//! the stripes or finer.

use crate::keys::{key, Rng};
use crate::Options;
use concurrent_cuckoo::{thread_lookup_retries, CuckooFilter};
use std::fmt::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

struct Outcome {
    lookups: u64,
    retries: u64,
    locked: u64,
    ops: u64,
    secs: f64,
    moves: u64,
}

fn run_mix(f: &CuckooFilter, stored: u64, threads: u64, dur: Duration) -> Outcome {
    let stop = AtomicBool::new(false);
    let barrier = Barrier::new(threads as usize + 1);
    let moves_before = f.relocations();
    let (per_thread, secs) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (stop, barrier) = (&stop, &barrier);
                s.spawn(move || {
                    let mut rng = Rng::new(0x5EED + t);
                    // Inserts add fresh keys far above the stored ones;
                    // removes take this thread's share of the stored keys
                    // in order, then the keys it inserted, oldest first, so
                    // the load stays where it started.
                    let share = stored / threads;
                    let fresh = |k: u64| key((1u64 << 40) + t + k * threads);
                    let (mut removed, mut inserted) = (0u64, 0u64);
                    let (mut lookups, mut ops) = (0u64, 0u64);
                    barrier.wait();
                    let (r0, l0) = thread_lookup_retries();
                    while !stop.load(Ordering::Relaxed) {
                        for _ in 0..256 {
                            match rng.below(4) {
                                0 | 1 => {
                                    let _ = std::hint::black_box(
                                        f.contains(&key(rng.below(2 * stored))),
                                    );
                                    lookups += 1;
                                }
                                2 if f.insert(&fresh(inserted)).is_ok() => inserted += 1,
                                2 => {}
                                _ if removed < share => {
                                    let _ = f.remove(&key(t + removed * threads));
                                    removed += 1;
                                }
                                _ if removed - share < inserted => {
                                    let _ = f.remove(&fresh(removed - share));
                                    removed += 1;
                                }
                                _ => {}
                            }
                            ops += 1;
                        }
                    }
                    let (r1, l1) = thread_lookup_retries();
                    (lookups, r1 - r0, l1 - l0, ops)
                })
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        std::thread::sleep(dur);
        stop.store(true, Ordering::Relaxed);
        let per: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        (per, start.elapsed().as_secs_f64())
    });
    let sum = |i: usize| -> u64 { per_thread.iter().map(|p| [p.0, p.1, p.2, p.3][i]).sum() };
    Outcome {
        lookups: sum(0),
        retries: sum(1),
        locked: sum(2),
        ops: sum(3),
        secs,
        moves: f.relocations() - moves_before,
    }
}

/// The report: one row per (table, stripes, versions).
pub fn run(opts: &Options) -> String {
    let items: u64 = opts
        .n
        .unwrap_or(if opts.quick { 100_000 } else { 1_000_000 });
    let dur = opts.run_time() * 3;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## Lookup retries under a 50/25/25 mix, 2 threads\n\n\
         `cargo run --release -p cuckoo-harness -- retries{}`: a filter sized for {items} items \
         (and a 2048-bucket one), filled to 90%, then {:.1} s per row of 50% lookups (half \
         present), 25% inserts, 25% removes on 2 threads. Retries and locked reads are per \
         lookup; moves are fingerprints moved by inserts' paths per operation.\n",
        if opts.quick { " --quick" } else { "" },
        dur.as_secs_f64()
    );
    let _ = writeln!(
        out,
        "| buckets | lock stripes | versions | version bytes | retries per lookup | locked reads per lookup | moves per op | M ops/s |\n|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    let big = CuckooFilter::builder()
        .capacity(items as usize)
        .build()
        .unwrap();
    let (big_buckets, default_stripes, default_versions) =
        (big.bucket_count(), big.stripe_count(), big.version_count());
    drop(big);
    let mut configs = Vec::new();
    for stripes in [1usize, 64, default_stripes, 4096] {
        for versions in [stripes, default_versions, 4096, 65536] {
            let config = (big_buckets, stripes, versions);
            if versions >= stripes && !configs.contains(&config) {
                configs.push(config);
            }
        }
    }
    let small_default = CuckooFilter::builder()
        .capacity(0)
        .bucket_count(2048)
        .build()
        .unwrap()
        .version_count();
    for versions in [1usize, small_default, 64, 2048] {
        configs.push((2048, 1, versions));
    }
    configs.dedup();
    for (buckets, stripes, versions) in configs {
        let f = CuckooFilter::builder()
            .capacity(0)
            .fingerprint_bits(16)
            .bucket_count(buckets)
            .stripe_count(stripes)
            .version_count(versions)
            .seed(7)
            .build()
            .unwrap();
        let stored = (f.capacity() as u64) * 9 / 10;
        for i in 0..stored {
            f.insert(&key(i)).expect("fill to 90%");
        }
        let o = run_mix(&f, stored, 2, dur);
        let _ = writeln!(
            out,
            "| {buckets} | {stripes} | {versions} | {} | {:.2e} | {:.2e} | {:.3} | {:.1} |",
            versions * 8,
            o.retries as f64 / o.lookups as f64,
            o.locked as f64 / o.lookups as f64,
            o.moves as f64 / o.ops as f64,
            o.ops as f64 / o.secs / 1e6,
        );
        eprintln!("retries: {buckets} buckets, {stripes} stripes, {versions} versions done");
    }
    out
}
