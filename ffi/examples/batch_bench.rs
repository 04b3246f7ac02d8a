//! `contains_hash_batch` from Rust, the twin of `ffi/examples/batch_bench.c`
//! (which calls `ccf_contains_hash_batch` from C): same arguments, same
//! table file, same keys, same loop, same output, so the two measure the
//! cost of the FFI boundary on bursts of 32. See the C file for what is
//! measured.
//!
//! `cargo run --release -p concurrent-cuckoo-ffi --example batch_bench -- --table PATH`

use concurrent_cuckoo::CuckooFilter;
use std::path::Path;

const BURST: usize = 32;
const QUERIES: usize = 1 << 20;

fn key(i: u64) -> u64 {
    let mut z = i
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(0x632B_E59B_D9B4_E019);
    z = (z ^ (z >> 33)).wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    z = (z ^ (z >> 33)).wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    z ^ (z >> 33)
}

/// The calling thread's CPU time, as `CLOCK_THREAD_CPUTIME_ID` in the C
/// twin.
#[cfg(unix)]
fn cpu_seconds() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec and the clock id is a
    // constant every Unix this runs on supports.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime");
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

#[cfg(not(unix))]
fn cpu_seconds() -> f64 {
    use std::sync::OnceLock;
    static START: OnceLock<std::time::Instant> = OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs_f64()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut table = None;
    let (mut items, mut lookups, mut reps) = (120_000_000u64, 1u64 << 25, 5u64);
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !args.len().is_multiple_of(2) {
        return Err("usage: batch_bench --table PATH [--items N] [--lookups N] [--reps N]".into());
    }
    for pair in args.chunks(2) {
        match pair[0].as_str() {
            "--table" => table = Some(pair[1].clone()),
            "--items" => items = pair[1].parse()?,
            "--lookups" => lookups = pair[1].parse()?,
            "--reps" => reps = pair[1].parse()?,
            other => return Err(format!("unknown flag {other}").into()),
        }
    }
    let table = table.ok_or("--table PATH is required")?;

    let filter = if Path::new(&table).exists() {
        CuckooFilter::read_from(std::fs::File::open(&table)?)?
    } else {
        let f = CuckooFilter::builder()
            .capacity(items as usize)
            .fingerprint_bits(16)
            .seed(1)
            .build()?;
        for i in 0..items {
            f.insert_hash(key(i))?;
        }
        f.write_to_path(&table)?;
        f
    };
    let items = filter.len() as u64;

    let queries: Vec<u64> = (0..QUERIES as u64).map(|j| key(items + j)).collect();
    let mut out = [false; BURST];
    for chunk in queries.chunks_exact(BURST) {
        filter.contains_hash_batch(chunk, &mut out);
    }

    println!(
        "Rust contains_hash_batch:     table {:.0} MiB, {items} items, load {:.3}, bursts of {BURST}",
        filter.memory_usage() as f64 / (1 << 20) as f64,
        filter.load_factor()
    );
    for r in 0..reps {
        let mut hits = 0u64;
        let t0 = cpu_seconds();
        let mut done = 0u64;
        while done + BURST as u64 <= lookups {
            let at = (done % QUERIES as u64) as usize;
            filter.contains_hash_batch(&queries[at..at + BURST], &mut out);
            for &hit in &out {
                hits += u64::from(hit);
            }
            done += BURST as u64;
        }
        let t = cpu_seconds() - t0;
        println!(
            "Rust rep {r}: {:.2} ns per lookup (CPU time), {hits} false positives",
            t * 1e9 / (lookups / BURST as u64 * BURST as u64) as f64
        );
    }
    Ok(())
}
