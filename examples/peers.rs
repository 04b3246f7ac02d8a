//! Our half of the side-by-side lookup benchmark (`scripts/bench-peers.sh`,
//! `ffi/bench/`), from Rust: the same keys and table sizes, our lookups
//! inlined into the loop instead of called through the C ABI. The C++
//! program prints the peers' figures beside ours through the C ABI; this
//! one shows what a Rust caller gets.
//!
//! Run: `cargo run --release --example peers [-- 16 20 24]` (log2 of the
//! peers' bucket counts; 16-bit fingerprints, n = 0.94 * 4 * 2^lg keys).
//! Each size runs twice: a default filter, and one built with
//! `uniform_hashes(true)`, which takes the random keys as they are.

use concurrent_cuckoo::CuckooFilter;
use std::hint::black_box;
use std::time::Instant;

/// Repetitions of each timed loop; the median is printed.
const REPS: usize = 5;
/// Keys per burst.
const BURST: usize = 32;

/// The `i`-th key of the table of `2^lg` buckets, as `bench_key` in
/// `ffi/bench/bench.h`: a bijection of `i`.
fn key(lg: u32, i: u64) -> u64 {
    let mut z = (i + 1)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(u64::from(lg));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Median over [`REPS`] runs of `body` (which returns how many keys it
/// looked up), in M keys/s.
fn median_mkeys(mut body: impl FnMut() -> usize) -> f64 {
    let mut rates: Vec<f64> = (0..REPS)
        .map(|_| {
            let start = Instant::now();
            let keys = body();
            keys as f64 / start.elapsed().as_secs_f64() / 1e6
        })
        .collect();
    rates.sort_by(f64::total_cmp);
    rates[REPS / 2]
}

fn one_at_a_time(filter: &CuckooFilter, keys: &[u64]) -> usize {
    let found = keys.iter().filter(|&&k| filter.contains_hash(k)).count();
    black_box(found);
    keys.len()
}

fn bursts(filter: &CuckooFilter, keys: &[u64]) -> usize {
    let mut out = [false; BURST];
    let mut found = 0;
    for chunk in keys.chunks_exact(BURST) {
        filter.contains_hash_batch(chunk, &mut out);
        found += out.iter().filter(|&&b| b).count();
    }
    black_box(found);
    keys.len() / BURST * BURST
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut sizes: Vec<u32> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    if sizes.is_empty() {
        sizes = vec![16, 20, 24];
    }
    println!("Rust, single thread, M keys/s (median of {REPS}); 16-bit fingerprints");
    println!();
    println!(
        "| peers' buckets | keys | lookup | contains_hash | contains_hash_batch (32) \
         | uniform_hashes: contains_hash | uniform_hashes: contains_hash_batch (32) |"
    );
    println!("|---|---:|---|---:|---:|---:|---:|");
    for lg in sizes {
        let n = (0.94 * 4.0 * (1u64 << lg) as f64) as usize;
        let m = n.min(1 << 22);
        let keys: Vec<u64> = (0..n as u64).map(|i| key(lg, i)).collect();
        let absent: Vec<u64> = (n as u64..(n + m) as u64).map(|i| key(lg, i)).collect();
        let present = &keys[..m];
        let mut rows = [
            ("absent", &absent[..], [0.0; 4]),
            ("present", present, [0.0; 4]),
        ];
        for (column, uniform) in [(0, false), (2, true)] {
            let filter = CuckooFilter::builder()
                .capacity(n)
                .fingerprint_bits(16)
                .seed(42)
                .uniform_hashes(uniform)
                .build()?;
            filter.insert_hash_batch(&keys)?;
            assert!(present.iter().all(|&k| filter.contains_hash(k)));
            for (_, set, rates) in &mut rows {
                rates[column] = median_mkeys(|| one_at_a_time(&filter, set));
                rates[column + 1] = median_mkeys(|| bursts(&filter, set));
            }
        }
        for (what, _, [one, burst, one_u, burst_u]) in rows {
            println!(
                "| 2^{lg} | {n} | {what} | {one:.1} | {burst:.1} | {one_u:.1} | {burst_u:.1} |"
            );
        }
    }
    Ok(())
}
