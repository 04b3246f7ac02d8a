//! The lookup benchmark `scripts/ab-lookups.sh` compiles against two
//! versions of the library: a table of BITS-bit fingerprints and MIB MiB
//! filled to 90% (two threads, `insert_hash` after a `contains_hash_batch`
//! prefetch of each block), then 2M absent keys looked up with `contains`,
//! `contains_hash`, `contains_batch` and `contains_hash_batch` in bursts of
//! 32, ROUNDS times; prints the median ns per lookup (thread CPU time) of
//! each. Uses only API both old and new versions have.
//!
//! Usage: ab-lookups BITS MIB [ROUNDS]
//!
//! `ab-lookups mix MIB [ROUNDS]` instead runs the two-thread mix of issue
//! 21: a 16-bit table of MIB MiB filled to 80% with keyed inserts, then
//! ROUNDS rounds of one second in which two threads each run 90% keyed
//! `contains` (keys half present), 5% `insert` of fresh keys and 5%
//! `remove` of keys inserted at the start (so the load stays at 80%);
//! prints the median over rounds of M operations/s by the wall clock and
//! by the threads' CPU time (the sum of each thread's own rate).
//!
//! `ab-lookups writes MIB [ROUNDS]`: per-key writes on one thread, an
//! empty 16-bit table of MIB MiB filled to 92% with `insert_hash` and
//! emptied with `remove_hash`; the median ns per insert and per remove.
//!
//! `ab-lookups sremove MIB [ROUNDS]`: a growing filter of two levels of
//! one geometry (growth 1, 16-bit) holding MIB MiB of keys at 90%, then
//! ROUNDS rounds of 1M pairs of `insert_hash` and `remove_hash` of a fresh
//! key on one thread (the remove scans both levels: issue 40's
//! validation); prints the median ns per pair (thread CPU time).
//!
//! `ab-lookups sgrow MIB [ROUNDS]`: a growing filter of the default growth
//! factor 2 whose first level holds an eighth of MIB MiB of 16-bit slots
//! at 90%, filled with that many keys (four levels, the last about a
//! quarter full); then ROUNDS rounds of 1M insert + remove pairs of fresh
//! keys, and of 1M lookups of absent keys (each searches every level);
//! prints the median ns per pair and per lookup (thread CPU time).
use concurrent_cuckoo::{CuckooFilter, ScalableCuckooFilter};
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;

fn key(i: u64) -> u64 {
    let mut z = i
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(0x1234_5678_9ABC_DEF1);
    z = (z ^ (z >> 33)).wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    z = (z ^ (z >> 33)).wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    z ^ (z >> 33)
}

fn cpu_ns() -> u128 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u128 * 1_000_000_000 + ts.tv_nsec as u128
}

fn time<F: FnMut() -> usize>(ops: usize, mut f: F) -> f64 {
    let t = cpu_ns();
    black_box(f());
    (cpu_ns() - t) as f64 / ops as f64
}

#[inline(never)]
#[no_mangle]
pub fn hb(f: &CuckooFilter, h: &[u64], out: &mut [bool]) {
    f.contains_hash_batch(h, out)
}

/// xorshift64*: the mix's operation choices and lookup keys.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// One thread's share of a round of the mix: (operations, CPU ns).
fn mix_thread(f: &CuckooFilter, t: u64, n: u64, round: u64, stop: &AtomicBool) -> (u64, u64) {
    let start = cpu_ns();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (t << 32) ^ round);
    // Fresh keys from 2^40 on, originals from the start: disjoint per
    // thread and round, so every remove finds its key and every insert
    // adds a new one.
    let (mut ins, mut rem) = ((1u64 << 40) + (round << 32) + t, round * (n / 16) + t);
    let (mut ops, mut sink) = (0u64, 0usize);
    while !stop.load(Ordering::Relaxed) {
        for _ in 0..256 {
            let r = rng.next();
            match r % 100 {
                0..=89 => sink += usize::from(f.contains(&key((r >> 8) % (2 * n)))),
                90..=94 => {
                    sink += usize::from(f.insert(&key(ins)).is_ok());
                    ins += 2;
                }
                _ => {
                    sink += usize::from(f.remove(&key(rem)));
                    rem += 2;
                }
            }
        }
        ops += 256;
    }
    black_box(sink);
    (ops, (cpu_ns() - start) as u64)
}

fn mix(mib: u64, rounds: usize) {
    let slots = mib * 1024 * 1024 * 8 / 16;
    let n = slots * 8 / 10;
    let f = CuckooFilter::builder()
        .capacity(0)
        .bucket_count((slots / 4) as usize)
        .fingerprint_bits(16)
        .seed(3)
        .build()
        .unwrap();
    std::thread::scope(|s| {
        for t in 0..2u64 {
            let f = &f;
            s.spawn(move || {
                let mut i = t;
                while i < n {
                    f.insert(&key(i)).unwrap();
                    i += 2;
                }
            });
        }
    });
    let (mut wall, mut cpu) = (Vec::new(), Vec::new());
    for round in 0..rounds as u64 {
        let stop = AtomicBool::new(false);
        let barrier = Barrier::new(3);
        let (results, secs) = std::thread::scope(|s| {
            let handles: Vec<_> = (0..2u64)
                .map(|t| {
                    let (f, stop, barrier) = (&f, &stop, &barrier);
                    s.spawn(move || {
                        barrier.wait();
                        mix_thread(f, t, n, round, stop)
                    })
                })
                .collect();
            barrier.wait();
            let start = std::time::Instant::now();
            std::thread::sleep(std::time::Duration::from_secs(1));
            stop.store(true, Ordering::Relaxed);
            let results: Vec<(u64, u64)> = handles.into_iter().map(|h| h.join().unwrap()).collect();
            (results, start.elapsed().as_secs_f64())
        });
        let ops: u64 = results.iter().map(|r| r.0).sum();
        wall.push(ops as f64 / secs / 1e6);
        cpu.push(
            results
                .iter()
                .map(|r| r.0 as f64 / r.1.max(1) as f64 * 1e3)
                .sum::<f64>(),
        );
    }
    println!(
        "mix {mib} MiB: wall {:.2} cpu {:.2} Mops",
        median(&mut wall),
        median(&mut cpu)
    );
}

fn scalable_remove(mib: u64, rounds: usize) {
    let n = mib * 1024 * 1024 * 8 / 16 * 9 / 10;
    let f = ScalableCuckooFilter::builder()
        .capacity((n / 2) as usize)
        .growth_factor(1)
        .seed(3)
        .build()
        .unwrap();
    for i in 0..n {
        f.insert_hash(key(i)).unwrap();
    }
    let q = 1_000_000usize;
    let fresh: Vec<u64> = (0..q as u64).map(|i| key(n + 1 + i * 7)).collect();
    let mut pairs: Vec<f64> = (0..rounds)
        .map(|_| {
            time(q, || {
                fresh
                    .iter()
                    .filter(|&&h| f.insert_hash(h).is_ok() && bool::from(f.remove_hash(h)))
                    .count()
            })
        })
        .collect();
    pairs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!("sremove {mib} MiB: pair {:.2} ns", pairs[pairs.len() / 2]);
}

/// `writes MIB [ROUNDS]`: one thread fills an empty 16-bit table of MIB
/// MiB to 92% with `insert_hash`, one key at a time, then removes every
/// key with `remove_hash`; ROUNDS rounds on the same table (emptied by the
/// removes); the median ns per insert and per remove (thread CPU time).
fn writes(mib: u64, rounds: usize) {
    let slots = mib * 1024 * 1024 * 8 / 16;
    let n = slots * 92 / 100;
    let f = CuckooFilter::builder()
        .capacity(0)
        .bucket_count((slots / 4) as usize)
        .seed(3)
        .build()
        .unwrap();
    let keys: Vec<u64> = (0..n).map(key).collect();
    let (mut inserts, mut removes) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        inserts.push(time(n as usize, || {
            keys.iter().filter(|&&h| f.insert_hash(h).is_ok()).count()
        }));
        removes.push(time(n as usize, || {
            keys.iter().filter(|&&h| f.remove_hash(h)).count()
        }));
        assert_eq!(f.len(), 0);
    }
    println!(
        "writes {mib} MiB: insert {:.2} ns remove {:.2} ns",
        median(&mut inserts),
        median(&mut removes)
    );
}

fn scalable_growth(mib: u64, rounds: usize) {
    let n = mib * 1024 * 1024 * 8 / 16 * 9 / 10;
    let f = ScalableCuckooFilter::builder()
        .capacity((n / 8) as usize)
        .seed(3)
        .build()
        .unwrap();
    for i in 0..n {
        f.insert_hash(key(i)).unwrap();
    }
    let q = 1_000_000usize;
    let fresh: Vec<u64> = (0..q as u64).map(|i| key(n + 1 + i * 7)).collect();
    let mut pairs = Vec::new();
    let mut lookups = Vec::new();
    for _ in 0..rounds {
        pairs.push(time(q, || {
            fresh
                .iter()
                .filter(|&&h| f.insert_hash(h).is_ok() && bool::from(f.remove_hash(h)))
                .count()
        }));
        lookups.push(time(q, || {
            fresh.iter().filter(|&&h| f.contains_hash(h)).count()
        }));
    }
    println!(
        "sgrow {mib} MiB ({} levels): pair {:.2} ns lookup {:.2} ns",
        f.levels(),
        median(&mut pairs),
        median(&mut lookups)
    );
}

/// The median of `v` (sorted in place).
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args[1] == "writes" {
        let rounds = args.get(3).map_or(3, |s| s.parse().unwrap());
        return writes(args[2].parse().unwrap(), rounds);
    }
    if args[1] == "sremove" {
        let rounds = args.get(3).map_or(5, |s| s.parse().unwrap());
        return scalable_remove(args[2].parse().unwrap(), rounds);
    }
    if args[1] == "sgrow" {
        let rounds = args.get(3).map_or(5, |s| s.parse().unwrap());
        return scalable_growth(args[2].parse().unwrap(), rounds);
    }
    if args[1] == "mix" {
        let rounds = args.get(3).map_or(5, |s| s.parse().unwrap());
        return mix(args[2].parse().unwrap(), rounds);
    }
    let bits: u32 = args[1].parse().unwrap();
    let mib: u64 = args[2].parse().unwrap();
    let rounds: usize = args.get(3).map_or(5, |s| s.parse().unwrap());
    let slots = mib * 1024 * 1024 * 8 / bits as u64;
    let n = slots * 9 / 10;
    let f = CuckooFilter::builder()
        .capacity(0)
        .bucket_count((slots / 4) as usize)
        .fingerprint_bits(bits)
        .seed(3)
        .build()
        .unwrap();
    std::thread::scope(|s| {
        for t in 0..2u64 {
            let f = &f;
            s.spawn(move || {
                let mut i = t;
                let mut found = [false; 64];
                let mut block = Vec::with_capacity(64);
                while i < n {
                    block.clear();
                    let mut j = i;
                    while block.len() < 64 && j < n {
                        block.push(key(j));
                        j += 2;
                    }
                    f.contains_hash_batch(&block, &mut found[..block.len()]);
                    for &h in &block {
                        f.insert_hash(h).unwrap();
                    }
                    i = j;
                }
            });
        }
    });
    let q = 2_000_000usize;
    let neg: Vec<u64> = (0..q as u64).map(|i| key(n + 1 + i * 7)).collect();
    let mut out = vec![false; 32];
    let mut results: Vec<Vec<f64>> = vec![Vec::new(); 4];
    for _ in 0..rounds {
        results[0].push(time(q, || neg.iter().filter(|k| f.contains(*k)).count()));
        results[1].push(time(q, || {
            neg.iter().filter(|&&h| f.contains_hash(h)).count()
        }));
        results[2].push(time(q, || {
            let mut c = 0;
            for ch in neg.chunks(32) {
                f.contains_batch(ch, &mut out[..ch.len()]);
                c += out.iter().filter(|&&b| b).count();
            }
            c
        }));
        results[3].push(time(q, || {
            let mut c = 0;
            for ch in neg.chunks(32) {
                hb(&f, ch, &mut out[..ch.len()]);
                c += out.iter().filter(|&&b| b).count();
            }
            c
        }));
    }
    println!("{bits}-bit {mib} MiB: contains {:.2} contains_hash {:.2} batch32 {:.2} hash_batch32 {:.2} ns", median(&mut results[0]), median(&mut results[1]), median(&mut results[2]), median(&mut results[3]));
}
