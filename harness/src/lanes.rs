//! A windowed filter's two lane widths side by side (`cuckoo-harness
//! lanes`): 16-bit lanes (four a bucket, the rate 1e-3) against 32-bit
//! lanes (two a bucket, the rate 1e-6, and a window of 100 generations).
//!
//! 1. **Fill to the first refused insert**, five seeds per size (1,000,
//!    100,000 and 1,000,000 keys of capacity): the load reached (keys
//!    held over slots), for 32-bit lanes with paths of 5 moves (the
//!    16-bit lanes' longest) and of 8 (theirs): what `capacity(n)`'s
//!    target load of 0.8 must stay below. Whether `capacity` keys fit.
//! 2. **Bytes a key** at capacity (`memory_usage() / capacity`).
//! 3. **Time per operation** (ns, medians of `--reps` rounds, default 5,
//!    the widths alternating within each round): a lookup of a present
//!    key, of an absent key, and a refresh (an insert of a present key),
//!    in a table of 1 MiB of buckets (in cache) and of 64 MiB (`--quick`:
//!    16 MiB), filled to 90% of slots (80% in 32-bit lanes), keys given
//!    as hashes.

use crate::keys::key;
use crate::timing::time_ns;
use crate::Options;
use concurrent_cuckoo::WindowedCuckooFilter;
use std::fmt::Write;
use std::hint::black_box;

/// One filter's configuration: a name, its rate and window, and the
/// longest path (`None`: the builder's).
struct Config {
    name: &'static str,
    rate: f64,
    generations: u64,
    max_path: Option<usize>,
}

const FILL: [Config; 4] = [
    Config {
        name: "16-bit lanes (1e-3, G = 4)",
        rate: 1e-3,
        generations: 4,
        max_path: None,
    },
    Config {
        name: "32-bit lanes, paths of 5 (1e-6, G = 4)",
        rate: 1e-6,
        generations: 4,
        max_path: Some(5),
    },
    Config {
        name: "32-bit lanes (1e-6, G = 4)",
        rate: 1e-6,
        generations: 4,
        max_path: None,
    },
    Config {
        name: "32-bit lanes (1e-6, G = 100)",
        rate: 1e-6,
        generations: 100,
        max_path: None,
    },
];

fn build(c: &Config, capacity: usize, seed: u64) -> WindowedCuckooFilter {
    let mut b = WindowedCuckooFilter::builder()
        .capacity(capacity)
        .generations(c.generations)
        .false_positive_rate(c.rate)
        .seed(seed);
    if let Some(hops) = c.max_path {
        b = b.max_path_len(hops);
    }
    b.build().expect("a valid configuration")
}

pub fn run(opts: &Options) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## Windowed filters: 16-bit against 32-bit lanes\n");
    let _ = writeln!(
        out,
        "### Fill to the first refused insert (5 seeds)\n\n\
         | filter | capacity | lane bits | slots | load at the first refusal (min / median / max) | capacity fits | bytes a key at capacity |\n\
         |---|---:|---:|---:|---|---:|---:|"
    );
    for c in &FILL {
        for capacity in [1_000usize, 100_000, 1_000_000] {
            let mut loads = Vec::new();
            let mut fits = 0;
            let mut shape = (0, 0, 0);
            for seed in 0..5u64 {
                let f = build(c, capacity, seed);
                let mut held = 0u64;
                while f.insert_hash(key(seed << 40 | held)).is_ok() {
                    held += 1;
                }
                fits += usize::from(held as usize >= capacity);
                loads.push(held as f64 / f.slots() as f64);
                shape = (f.lane_bits(), f.slots(), f.memory_usage());
            }
            loads.sort_by(f64::total_cmp);
            let _ = writeln!(
                out,
                "| {} | {capacity} | {} | {} | {:.3} / {:.3} / {:.3} | {fits}/5 | {:.2} |",
                c.name,
                shape.0,
                shape.1,
                loads[0],
                loads[2],
                loads[4],
                shape.2 as f64 / capacity as f64
            );
        }
    }
    let reps = opts.reps.unwrap_or(5);
    let big = if opts.quick { 16 } else { 64 };
    let _ = writeln!(
        out,
        "\n### Time per operation (ns, median of {reps} rounds)\n\n\
         | table | lane bits | lookup, present | lookup, absent | refresh |\n\
         |---|---:|---:|---:|---:|"
    );
    for mib in [1usize, big] {
        let filters: Vec<(WindowedCuckooFilter, u64)> = [false, true]
            .iter()
            .map(|&wide| filled(mib, wide))
            .collect();
        let ops = 1usize << 20;
        let mut times = vec![[Vec::new(), Vec::new(), Vec::new()]; 2];
        for round in 0..reps {
            for (w, (f, n)) in filters.iter().enumerate() {
                let present: Vec<u64> = (0..ops as u64)
                    .map(|i| key((i * 7919 + round as u64) % n))
                    .collect();
                let absent: Vec<u64> = (0..ops as u64).map(|i| key(n + 1 + i)).collect();
                let (hit, _) = time_ns(ops, || {
                    black_box(present.iter().filter(|&&h| f.contains_hash(h)).count())
                });
                let (miss, _) = time_ns(ops, || {
                    black_box(absent.iter().filter(|&&h| f.contains_hash(h)).count())
                });
                let (refresh, _) = time_ns(ops, || {
                    black_box(
                        present
                            .iter()
                            .filter(|&&h| f.insert_hash(h).is_ok())
                            .count(),
                    )
                });
                times[w][0].push(hit);
                times[w][1].push(miss);
                times[w][2].push(refresh);
            }
        }
        for (w, (f, _)) in filters.iter().enumerate() {
            let median = |v: &mut Vec<f64>| {
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            };
            let t = &mut times[w];
            let _ = writeln!(
                out,
                "| {mib} MiB | {} | {:.1} | {:.1} | {:.1} |",
                f.lane_bits(),
                median(&mut t[0]),
                median(&mut t[1]),
                median(&mut t[2])
            );
        }
    }
    out
}

/// A filter of `mib` MiB of buckets, 16-bit lanes at 1e-3 or 32-bit ones
/// at 1e-6 (`wide`), filled with the hashes `key(0..n)` to 90% of its
/// slots (80% in 32-bit lanes, the load `capacity` sizes them for), and
/// `n`.
fn filled(mib: usize, wide: bool) -> (WindowedCuckooFilter, u64) {
    let buckets = mib << 17;
    let f = WindowedCuckooFilter::builder()
        .capacity(0)
        .bucket_count(buckets)
        .generations(4)
        .false_positive_rate(if wide { 1e-6 } else { 1e-3 })
        .seed(9)
        .build()
        .expect("a valid configuration");
    let n = if wide {
        f.slots() as u64 * 8 / 10
    } else {
        f.slots() as u64 * 9 / 10
    };
    for i in 0..n {
        f.insert_hash(key(i)).expect("below the fill limit");
    }
    (f, n)
}
