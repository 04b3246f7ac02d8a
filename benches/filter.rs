//! Criterion suite: single-threaded operations at two table sizes, and
//! multi-threaded mixes at 1, 2 and 4 threads.
//!
//! ```text
//! cargo bench --bench filter                      # everything (fills a 1 GiB table once, ~2 min)
//! cargo bench --bench filter -- contains/cache    # a filter on criterion's usual syntax
//! CUCKOO_BENCH_SIZES=cache cargo bench --bench filter    # skip the 1 GiB table
//! CUCKOO_BENCH_MEMORY_MIB=2048 cargo bench --bench filter
//! ```
//!
//! Sizes: `cache` is a table of about 1 MiB (fits L2); `memory` is at least
//! 1 GiB (default; far larger than the L3 of the development machine, about
//! 260 MiB), so lookups there measure DRAM and TLB misses, not cache. Both
//! tables are filled to 90% once; the operations that change the table put
//! it back (remove, then re-insert untimed) so every sample sees the same
//! load. `insert` fills fresh tables from empty to 95% load.
//!
//! Keys are distinct `u64`s (a bijective mix of a counter), so keys
//! `0..n` are present and keys from `n` on are absent. Lookups use the key
//! API (hashing included); `contains_batch` is measured through both the
//! key API and `contains_hash_batch` with precomputed hashes.

use concurrent_cuckoo::CuckooFilter;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Barrier, OnceLock};
use std::time::{Duration, Instant};

/// A bijection on `u64` (murmur3's finaliser after a golden-ratio step).
#[inline(always)]
fn key(i: u64) -> u64 {
    let mut z = i
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(0x1234_5678_9ABC_DEF1);
    z = (z ^ (z >> 33)).wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    z = (z ^ (z >> 33)).wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    z ^ (z >> 33)
}

/// wyrand.
struct Rng(u64);
impl Rng {
    #[inline(always)]
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0xA076_1D64_78BD_642F);
        let t = u128::from(self.0) * u128::from(self.0 ^ 0xE703_7ED1_A0B4_28DB);
        ((t >> 64) as u64) ^ (t as u64)
    }
    #[inline(always)]
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }
}

/// Query keys, a fraction `positive` of them present (keys `0..n`).
fn queries(n: u64, count: usize, positive_percent: u64, seed: u64) -> Vec<u64> {
    let mut rng = Rng(seed);
    (0..count)
        .map(|_| {
            if rng.below(100) < positive_percent {
                key(rng.below(n))
            } else {
                key(n + rng.below(1 << 60))
            }
        })
        .collect()
}

/// A filter filled with keys `0..n` (90% of its slots).
struct Table {
    label: &'static str,
    n: u64,
    filter: CuckooFilter,
    /// Next key to take out in `remove` (and put back untimed).
    cursor: AtomicU64,
    /// Next fresh key index for the mixes' inserts.
    fresh: AtomicU64,
}

fn build(n: u64) -> CuckooFilter {
    CuckooFilter::builder()
        .capacity(n as usize)
        .seed(42)
        .build()
        .expect("build filter")
}

/// Inserts keys `range` on two threads.
fn fill(filter: &CuckooFilter, range: std::ops::Range<u64>) {
    std::thread::scope(|s| {
        for t in 0..2 {
            let range = range.clone();
            s.spawn(move || {
                for i in range.skip(t).step_by(2) {
                    filter.insert(&key(i)).expect("fill below capacity");
                }
            });
        }
    });
}

fn sizes() -> Vec<&'static str> {
    let env = std::env::var("CUCKOO_BENCH_SIZES").unwrap_or_else(|_| "cache,memory".into());
    ["cache", "memory"]
        .into_iter()
        .filter(|s| env.split(',').any(|e| e.trim() == *s))
        .collect()
}

/// Items for a table of `bytes` at 90% load (16-bit fingerprints: 2 bytes per slot).
fn items_for(bytes: u64) -> u64 {
    bytes / 2 * 9 / 10
}

fn memory_bytes() -> u64 {
    let mib: u64 = std::env::var("CUCKOO_BENCH_MEMORY_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    mib << 20
}

fn table(label: &'static str) -> &'static Table {
    static CACHE: OnceLock<Table> = OnceLock::new();
    static MEMORY: OnceLock<Table> = OnceLock::new();
    let (cell, bytes) = match label {
        "cache" => (&CACHE, 1u64 << 20),
        _ => (&MEMORY, memory_bytes()),
    };
    cell.get_or_init(|| {
        let n = items_for(bytes);
        let start = Instant::now();
        let filter = build(n);
        fill(&filter, 0..n);
        eprintln!(
            "[{label}] {} items, {:.1} MiB, load {:.3}, filled in {:.1} s",
            n,
            filter.memory_usage() as f64 / (1 << 20) as f64,
            filter.load_factor(),
            start.elapsed().as_secs_f64()
        );
        Table {
            label,
            n,
            filter,
            cursor: AtomicU64::new(0),
            fresh: AtomicU64::new(1 << 50),
        }
    })
}

const QUERIES: usize = 1 << 16;

fn bench_contains(c: &mut Criterion) {
    let mut g = c.benchmark_group("contains");
    g.throughput(Throughput::Elements(QUERIES as u64));
    for size in sizes() {
        let t = table(size);
        for positive in [0u64, 50, 100] {
            let qs = queries(t.n, QUERIES, positive, 7 + positive);
            g.bench_with_input(
                BenchmarkId::new(t.label, format!("{positive}%")),
                &qs,
                |b, qs| {
                    b.iter(|| qs.iter().filter(|k| t.filter.contains(*k)).count());
                },
            );
        }
    }
    g.finish();
}

fn bench_contains_batch(c: &mut Criterion) {
    let mut g = c.benchmark_group("contains_batch");
    g.throughput(Throughput::Elements(QUERIES as u64));
    for size in sizes() {
        let t = table(size);
        let qs = queries(t.n, QUERIES, 0, 11);
        let hs: Vec<u64> = {
            use core::hash::BuildHasher;
            qs.iter().map(|k| t.filter.hasher().hash_one(k)).collect()
        };
        for burst in [16usize, 32, 64] {
            let mut out = vec![false; burst];
            g.bench_function(BenchmarkId::new(t.label, format!("keys/{burst}")), |b| {
                b.iter(|| {
                    let mut hits = 0;
                    for chunk in qs.chunks(burst) {
                        let out = &mut out[..chunk.len()];
                        t.filter.contains_batch(chunk, out);
                        hits += out.iter().filter(|&&x| x).count();
                    }
                    hits
                });
            });
            g.bench_function(BenchmarkId::new(t.label, format!("hashes/{burst}")), |b| {
                b.iter(|| {
                    let mut hits = 0;
                    for chunk in hs.chunks(burst) {
                        let out = &mut out[..chunk.len()];
                        t.filter.contains_hash_batch(chunk, out);
                        hits += out.iter().filter(|&&x| x).count();
                    }
                    hits
                });
            });
        }
    }
    g.finish();
}

/// Inserts. `cache/empty to 95%` fills fresh 1 MiB tables from empty to
/// 95% load over and over (each measured insert lands at a load between 0
/// and 95%, evenly). `*/90% to 95%` inserts fresh keys into the table at
/// 90% until it reaches 95%, then takes them out again (untimed). The
/// insert rate over the whole range of occupancy, also for the 1 GiB
/// table, is in the harness's paper mode (Figure 7).
fn bench_insert(c: &mut Criterion) {
    let mut g = c.benchmark_group("insert");
    g.throughput(Throughput::Elements(1));
    if sizes().contains(&"cache") {
        let n = items_for(1 << 20);
        let filter = build(n);
        let limit = (filter.capacity() as f64 * 0.95) as u64;
        let mut next = 0u64;
        g.bench_function(BenchmarkId::new("cache", "empty to 95%"), |b| {
            b.iter_custom(|iters| {
                let mut spent = Duration::ZERO;
                let mut left = iters;
                while left > 0 {
                    let room = limit.saturating_sub(filter.len() as u64);
                    if room == 0 {
                        filter.clear();
                        continue;
                    }
                    let step = left.min(room);
                    let start = Instant::now();
                    for i in next..next + step {
                        black_box(filter.insert(&key(i)).is_ok());
                    }
                    spent += start.elapsed();
                    next += step;
                    left -= step;
                }
                spent
            });
        });
    }
    for size in sizes() {
        let t = table(size);
        let limit = (t.filter.capacity() as f64 * 0.95) as u64;
        let base = t.fresh.fetch_add(1 << 40, Ordering::Relaxed);
        let mut added = 0u64;
        g.bench_function(BenchmarkId::new(t.label, "90% to 95%"), |b| {
            b.iter_custom(|iters| {
                let mut spent = Duration::ZERO;
                let mut left = iters;
                while left > 0 {
                    let room = limit.saturating_sub(t.filter.len() as u64);
                    if room == 0 {
                        for i in base..base + added {
                            let _ = t.filter.remove(&key(i));
                        }
                        added = 0;
                        continue;
                    }
                    let step = left.min(room);
                    let start = Instant::now();
                    for i in base + added..base + added + step {
                        black_box(t.filter.insert(&key(i)).is_ok());
                    }
                    spent += start.elapsed();
                    added += step;
                    left -= step;
                }
                spent
            });
        });
        for i in base..base + added {
            let _ = t.filter.remove(&key(i));
        }
    }
    g.finish();
}

/// Removes present keys at 90% load; each is inserted again, untimed.
fn bench_remove(c: &mut Criterion) {
    let mut g = c.benchmark_group("remove");
    g.throughput(Throughput::Elements(1));
    for size in sizes() {
        let t = table(size);
        g.bench_function(BenchmarkId::new(t.label, "at 90%"), |b| {
            b.iter_custom(|iters| {
                let mut spent = Duration::ZERO;
                let mut left = iters;
                while left > 0 {
                    let step = left.min(t.n / 4).min(1 << 16);
                    let from = t.cursor.fetch_add(step, Ordering::Relaxed) % (t.n - step);
                    let start = Instant::now();
                    for i in from..from + step {
                        black_box(t.filter.remove(&key(i)));
                    }
                    spent += start.elapsed();
                    for i in from..from + step {
                        t.filter.insert(&key(i)).expect("re-insert");
                    }
                    left -= step;
                }
                spent
            });
        });
    }
    g.finish();
}

/// `(lookup, insert, remove)` percentages.
const MIXES: [(&str, u64, u64); 3] = [
    ("read-only", 100, 0),
    ("90-5-5", 90, 5),
    ("50-25-25", 50, 25),
];

/// `threads` threads share `iters` operations of a mix; the time runs from
/// a common start to the last thread's finish. Inserts add fresh keys and
/// removes take fresh keys inserted earlier by the same thread (or original
/// keys before any), so the load stays at about 90%.
fn run_mix(t: &Table, threads: u64, iters: u64, lookup: u64, insert: u64) -> Duration {
    let barrier = Barrier::new(threads as usize + 1);
    let per_thread = iters.div_ceil(threads);
    let base = t
        .fresh
        .fetch_add(per_thread * threads * 2, Ordering::Relaxed);
    let (start, ends) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|th| {
                let barrier = &barrier;
                s.spawn(move || {
                    let mut rng = Rng(0xBEEF + th * 7919 + base);
                    let (mut ins, mut rem) = (0u64, 0u64);
                    let f = &t.filter;
                    barrier.wait();
                    for _ in 0..per_thread {
                        let r = rng.below(100);
                        if r < lookup {
                            black_box(f.contains(&key(rng.below(2 * t.n))));
                        } else if r < lookup + insert || rem >= ins {
                            black_box(f.insert(&key(base + (ins * threads + th))).is_ok());
                            ins += 1;
                        } else {
                            black_box(f.remove(&key(base + (rem * threads + th))));
                            rem += 1;
                        }
                    }
                    let end = Instant::now();
                    // Leave the table as it was (untimed): take out what is left.
                    while rem < ins {
                        let _ = f.remove(&key(base + (rem * threads + th)));
                        rem += 1;
                    }
                    end
                })
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        let ends: Vec<Instant> = handles
            .into_iter()
            .map(|h| h.join().expect("worker"))
            .collect();
        (start, ends)
    });
    ends.into_iter()
        .max()
        .map_or(Duration::ZERO, |end| end.saturating_duration_since(start))
}

fn bench_threads(c: &mut Criterion) {
    for (name, lookup, insert) in MIXES {
        let mut g = c.benchmark_group(format!("threads/{name}"));
        g.sample_size(10);
        g.measurement_time(Duration::from_secs(3));
        g.throughput(Throughput::Elements(1));
        for size in sizes() {
            let t = table(size);
            for threads in [1u64, 2, 4] {
                g.bench_function(
                    BenchmarkId::new(t.label, format!("{threads} threads")),
                    |b| {
                        b.iter_custom(|iters| run_mix(t, threads, iters, lookup, insert));
                    },
                );
            }
        }
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = bench_contains, bench_contains_batch, bench_insert, bench_remove, bench_threads
}
criterion_main!(benches);
