//! The instruction-count driver `scripts/lookup-instructions.sh` compiles
//! against any version of the library and runs under callgrind: a table of
//! BITS-bit fingerprints and MIB MiB filled to 90% on one thread (keys and
//! seed as in `scripts/ab-lookups/main.rs`), then N operations of one kind
//! inside one `#[inline(never)]` function named `op_KIND`, which callgrind
//! collects alone (`--toggle-collect=op_KIND`). Instructions per operation
//! = the collected total / N (the loop around each call included: a few
//! instructions). Uses only API every version since `818fd9c` has.
//!
//! Usage: lookup-instructions BITS MIB KIND N
//! KIND: contains_hash_miss, contains_hash_hit, contains_miss, contains_hit,
//! hash_batch_miss, batch_miss (bursts of 32), insert_remove (N pairs of
//! `insert_hash` then `remove_hash` of a fresh key, at 90% load),
//! insert_remove_half (the same at 45% load),
//! scalable_insert_remove (the same on a growing filter of one level, the
//! Redis module's type: issue 40's remove validation),
//! scalable2_insert_remove (the same on a growing filter of two levels of
//! one geometry, growth 1: the remove scans both),
//! windowed_contains_hash_miss, windowed_contains_hash_hit,
//! windowed_refresh (a `WindowedCuckooFilter` of MIB MiB, 4 generations,
//! 90% full (32-bit lanes: 80%) of keys inserted in one generation; a refresh is an
//! `insert_hash` of a present key), and the same three as `wide_*`: the
//! filter built for a rate of 1e-6, in 32-bit lanes (revisions before
//! them refuse to build it). The windowed kinds need a revision with
//! `WindowedCuckooFilter::insert_hash`. windowed_churn: N fresh inserts
//! in the steady state at capacity (90% of the slots live, a quarter of
//! them from each of the last four generations; an `advance` before each
//! quarter), the advances' sweeps included.
use concurrent_cuckoo::{CuckooFilter, ScalableCuckooFilter, WindowedCuckooFilter};
use std::hint::black_box;

fn key(i: u64) -> u64 {
    let mut z = i
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(0x1234_5678_9ABC_DEF1);
    z = (z ^ (z >> 33)).wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    z = (z ^ (z >> 33)).wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    z ^ (z >> 33)
}

#[inline(never)]
#[no_mangle]
pub fn op_contains_hash(f: &CuckooFilter, keys: &[u64]) -> usize {
    keys.iter().filter(|&&h| f.contains_hash(h)).count()
}

#[inline(never)]
#[no_mangle]
pub fn op_contains(f: &CuckooFilter, keys: &[u64]) -> usize {
    keys.iter().filter(|k| f.contains(*k)).count()
}

#[inline(never)]
#[no_mangle]
pub fn op_hash_batch(f: &CuckooFilter, keys: &[u64], out: &mut [bool]) -> usize {
    let mut c = 0;
    for ch in keys.chunks(32) {
        f.contains_hash_batch(ch, &mut out[..ch.len()]);
        c += out[0] as usize;
    }
    c
}

#[inline(never)]
#[no_mangle]
pub fn op_batch(f: &CuckooFilter, keys: &[u64], out: &mut [bool]) -> usize {
    let mut c = 0;
    for ch in keys.chunks(32) {
        f.contains_batch(ch, &mut out[..ch.len()]);
        c += out[0] as usize;
    }
    c
}

#[inline(never)]
#[no_mangle]
pub fn op_insert_remove(f: &CuckooFilter, keys: &[u64]) -> usize {
    let mut c = 0;
    for &h in keys {
        c += f.insert_hash(h).is_ok() as usize;
        c += f.remove_hash(h) as usize;
    }
    c
}

#[inline(never)]
#[no_mangle]
pub fn op_scalable_insert_remove(f: &ScalableCuckooFilter, keys: &[u64]) -> usize {
    let mut c = 0;
    for &h in keys {
        c += f.insert_hash(h).is_ok() as usize;
        c += f.remove_hash(h) as usize;
    }
    c
}

/// [`op_insert_remove`] under its own name, which callgrind collects
/// alone for the half-full kind.
#[inline(never)]
#[no_mangle]
pub fn op_insert_remove_half(f: &CuckooFilter, keys: &[u64]) -> usize {
    op_insert_remove(f, keys)
}

/// [`op_scalable_insert_remove`] under its own name, which callgrind
/// collects alone for the two-level kind.
#[inline(never)]
#[no_mangle]
pub fn op_scalable2_insert_remove(f: &ScalableCuckooFilter, keys: &[u64]) -> usize {
    op_scalable_insert_remove(f, keys)
}

#[inline(never)]
#[no_mangle]
pub fn op_windowed_contains_hash(f: &WindowedCuckooFilter, keys: &[u64]) -> usize {
    keys.iter().filter(|&&h| f.contains_hash(h)).count()
}

#[inline(never)]
#[no_mangle]
pub fn op_windowed_refresh(f: &WindowedCuckooFilter, keys: &[u64]) -> usize {
    keys.iter().filter(|&&h| f.insert_hash(h).is_ok()).count()
}

/// Steady state at capacity: `keys.len() / per` generations, each an
/// `advance` and `per` inserts of fresh keys (the oldest `per` expire).
#[inline(never)]
#[no_mangle]
pub fn op_windowed_churn(f: &WindowedCuckooFilter, keys: &[u64], per: usize) -> usize {
    let mut c = 0;
    for generation in keys.chunks(per) {
        f.advance();
        for &h in generation {
            c += f.insert_hash(h).is_ok() as usize;
        }
    }
    c
}

/// [`op_windowed_contains_hash`] under its own name, for the wide kinds.
#[inline(never)]
#[no_mangle]
pub fn op_wide_contains_hash(f: &WindowedCuckooFilter, keys: &[u64]) -> usize {
    op_windowed_contains_hash(f, keys)
}

/// [`op_windowed_refresh`] under its own name, for the wide kind.
#[inline(never)]
#[no_mangle]
pub fn op_wide_refresh(f: &WindowedCuckooFilter, keys: &[u64]) -> usize {
    op_windowed_refresh(f, keys)
}

/// A windowed filter of `mib` MiB of buckets (16-bit lanes, or 32-bit for
/// `wide`) 90% full of the keys `0..` (80% in 32-bit lanes: the load
/// `capacity` sizes them for; they fill to about 88%), and their count.
fn windowed(mib: u64, wide: bool) -> (WindowedCuckooFilter, u64) {
    let buckets = mib * 1024 * 1024 / 8;
    let slots = if wide { buckets * 2 } else { buckets * 4 };
    let mut b = WindowedCuckooFilter::builder()
        .capacity(0)
        .bucket_count(buckets as usize)
        .generations(4)
        .seed(3);
    if wide {
        b = b.false_positive_rate(1e-6);
    }
    let f = b.build().unwrap();
    let n = if wide { slots * 8 / 10 } else { slots * 9 / 10 };
    for i in 0..n {
        f.insert_hash(key(i)).unwrap();
    }
    (f, n)
}

/// A growing filter holding `n` keys in `levels` levels of one geometry.
fn scalable(n: u64, levels: u64) -> ScalableCuckooFilter {
    let f = ScalableCuckooFilter::builder()
        .capacity((n / levels) as usize)
        .growth_factor(1)
        .seed(3)
        .build()
        .unwrap();
    for i in 0..n {
        f.insert_hash(key(i)).unwrap();
    }
    f
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let bits: u32 = args[1].parse().unwrap();
    let mib: u64 = args[2].parse().unwrap();
    let kind = args[3].as_str();
    let ops: u64 = args[4].parse().unwrap();
    if let Some(rest) = kind
        .strip_prefix("windowed_")
        .or_else(|| kind.strip_prefix("wide_"))
    {
        if rest == "churn" {
            // Steady state: 90% of the slots live, a quarter of them
            // inserted in each of the last four generations.
            let per = (mib as usize * 1024 * 1024 / 8 * 4) * 9 / 10 / 4;
            let w2 = WindowedCuckooFilter::builder()
                .capacity(0)
                .bucket_count((mib * 1024 * 1024 / 8) as usize)
                .generations(4)
                .seed(3)
                .build()
                .unwrap();
            let mut next = 0u64;
            for _ in 0..8 {
                w2.advance();
                for _ in 0..per {
                    w2.insert_hash(key(next)).unwrap();
                    next += 1;
                }
            }
            let fresh: Vec<u64> = (0..ops).map(|i| key(next + i)).collect();
            let r = op_windowed_churn(&w2, &fresh, per);
            println!("{kind}: {}", black_box(r));
            return;
        }
        let (w, n) = windowed(mib, kind.starts_with("wide_"));
        let absent: Vec<u64> = (0..ops).map(|i| key(n + 1 + i * 7)).collect();
        let present: Vec<u64> = (0..ops).map(|i| key((i * 7919) % n)).collect();
        let wide = kind.starts_with("wide_");
        let r = match (rest, wide) {
            ("contains_hash_miss", false) => op_windowed_contains_hash(&w, &absent),
            ("contains_hash_hit", false) => op_windowed_contains_hash(&w, &present),
            ("refresh", false) => op_windowed_refresh(&w, &present),
            ("contains_hash_miss", true) => op_wide_contains_hash(&w, &absent),
            ("contains_hash_hit", true) => op_wide_contains_hash(&w, &present),
            ("refresh", true) => op_wide_refresh(&w, &present),
            _ => panic!("unknown kind {kind}"),
        };
        println!("{kind}: {}", black_box(r));
        return;
    }
    let slots = mib * 1024 * 1024 * 8 / bits as u64;
    // `insert_remove_half` writes at 45% load, where most inserts find a
    // free slot in their primary bucket; every other kind at 90%.
    let n = if kind == "insert_remove_half" {
        slots * 45 / 100
    } else {
        slots * 9 / 10
    };
    let f = CuckooFilter::builder()
        .capacity(0)
        .bucket_count((slots / 4) as usize)
        .fingerprint_bits(bits)
        .seed(3)
        .build()
        .unwrap();
    // Keyed kinds look keys up through the hasher: fill with the same keys.
    let keyed = matches!(kind, "contains_miss" | "contains_hit" | "batch_miss");
    for i in 0..n {
        if keyed {
            f.insert(&key(i)).unwrap();
        } else {
            f.insert_hash(key(i)).unwrap();
        }
    }
    let absent: Vec<u64> = (0..ops).map(|i| key(n + 1 + i * 7)).collect();
    let present: Vec<u64> = (0..ops).map(|i| key((i * 7919) % n)).collect();
    let mut out = vec![false; 32];
    let r = match kind {
        "contains_hash_miss" => op_contains_hash(&f, &absent),
        "contains_hash_hit" => op_contains_hash(&f, &present),
        "contains_miss" => op_contains(&f, &absent),
        "contains_hit" => op_contains(&f, &present),
        "hash_batch_miss" => op_hash_batch(&f, &absent, &mut out),
        "batch_miss" => op_batch(&f, &absent, &mut out),
        "insert_remove" => op_insert_remove(&f, &absent),
        "insert_remove_half" => op_insert_remove_half(&f, &absent),
        "scalable_insert_remove" => op_scalable_insert_remove(&scalable(n, 1), &absent),
        "scalable2_insert_remove" => op_scalable2_insert_remove(&scalable(n, 2), &absent),
        _ => panic!("unknown kind {kind}"),
    };
    println!("{kind}: {}", black_box(r));
}
