//! The cost of `advance_to` past the whole window on a ~1 GiB windowed
//! filter (the write after an idle hour), and, on Linux, three raw ways
//! to zero as much touched memory: atomic stores, memset, madvise.
//! `docs/benchmarks.md`, "advance_to past the window", has the figures.
//!
//! `cargo run --release --example windowed_reset -- [MiB (1024)] [heap|mapped]`;
//! `... -- lookups` times single lookups instead (the jump's flag is read
//! by every lookup: the cost of that, before and after).
use concurrent_cuckoo::{TableMemory, WindowedCuckooFilter};
#[cfg(target_os = "linux")]
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

fn main() {
    if std::env::args().nth(1).as_deref() == Some("lookups") {
        return lookups();
    }
    let mib: usize = std::env::args().nth(1).map_or(1024, |a| a.parse().unwrap());
    let memory = match std::env::args().nth(2).as_deref() {
        Some("heap") => TableMemory::GlobalAllocator,
        _ => TableMemory::Mapped,
    };
    // 16-bit slots, 4 per bucket, ~95% load: capacity ~ bytes / 2 * 0.95.
    let capacity = mib * (1 << 20) / 2 * 9 / 10;
    let f = WindowedCuckooFilter::builder()
        .capacity(capacity)
        .generations(4)
        .table_memory(memory)
        .seed(1)
        .build()
        .unwrap();
    let buckets = f.slots() / 4;
    let t = Instant::now();
    let hashes: Vec<u64> = (0..1u64 << 20).collect();
    let mut inserted = 0usize;
    let mut base = 0u64;
    while inserted < buckets {
        let batch: Vec<u64> = hashes
            .iter()
            .map(|h| (h + base).wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        f.insert_hash_batch(&batch).unwrap();
        inserted += batch.len();
        base += 1 << 20;
    }
    println!(
        "{:?}: {} MiB table ({} buckets), {} keys inserted in {:.1} s, len {}",
        memory,
        f.memory_usage() >> 20,
        buckets,
        inserted,
        t.elapsed().as_secs_f64(),
        f.len()
    );
    let g = f.generation();
    let t = Instant::now();
    f.advance_to(g + 3600);
    let jump = t.elapsed();
    let t = Instant::now();
    f.insert_hash(12345).unwrap();
    let insert = t.elapsed();
    println!(
        "advance_to(+3600) past the window: {:.1} ms; the insert after it {:.3} ms; len {}",
        jump.as_secs_f64() * 1e3,
        insert.as_secs_f64() * 1e3,
        f.len()
    );
    let t = Instant::now();
    f.advance_to(g + 7200);
    println!(
        "advance_to past the window again (one key): {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    let t = Instant::now();
    f.advance_to(g + 10800);
    println!(
        "advance_to past the window of an empty filter: {:.3} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    drop(f);
    #[cfg(target_os = "linux")]
    raw(mib);
}

/// Zeroing `mib` MiB of touched anonymous memory three ways.
#[cfg(target_os = "linux")]
fn raw(mib: usize) {
    let bytes = mib << 20;
    // SAFETY: a fresh private anonymous mapping of `bytes`, unmapped below.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    } as *mut u8;
    assert!(p as isize != -1);
    // SAFETY: the mapping is `bytes` long, page-aligned and zeroed (valid
    // `AtomicU64`s), and lives until the `munmap` at the end.
    let words = unsafe { std::slice::from_raw_parts(p as *const AtomicU64, bytes / 8) };
    let fill = || {
        for (i, w) in words.iter().enumerate() {
            w.store(i as u64 | 1, Ordering::Relaxed);
        }
    };
    fill();
    let t = Instant::now();
    for w in words {
        if w.load(Ordering::Relaxed) != 0 {
            w.store(0, Ordering::Relaxed);
        }
    }
    println!(
        "raw {mib} MiB: atomic load+store loop {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    fill();
    let t = Instant::now();
    // SAFETY: the mapping is ours and no other thread touches it.
    unsafe { std::ptr::write_bytes(p, 0, bytes) };
    println!(
        "raw {mib} MiB: memset {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    fill();
    let t = Instant::now();
    // SAFETY: the private anonymous mapping made above; its pages read as
    // zero after.
    let rc = unsafe { libc::madvise(p as *mut libc::c_void, bytes, libc::MADV_DONTNEED) };
    assert_eq!(rc, 0);
    println!(
        "raw {mib} MiB: madvise(MADV_DONTNEED) {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    let t = Instant::now();
    let mut sum = 0u64;
    for w in words.iter().step_by(512) {
        sum += w.load(Ordering::Relaxed);
    }
    assert_eq!(sum, 0);
    println!(
        "raw {mib} MiB: reading one word per page after madvise {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    // SAFETY: the mapping made above, no longer used.
    unsafe { libc::munmap(p as *mut libc::c_void, bytes) };
}

/// Absent and present single lookups on 1 MiB and 64 MiB tables, the best
/// of three rounds of 20M each.
fn lookups() {
    for mib in [1usize, 64] {
        let capacity = mib * (1 << 20) / 2 * 9 / 10;
        let f = WindowedCuckooFilter::builder()
            .capacity(capacity)
            .generations(4)
            .seed(1)
            .build()
            .unwrap();
        let keys: Vec<u64> = (0..capacity as u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        f.insert_hash_batch(&keys).unwrap();
        let n = 20_000_000u64;
        let (mut absent, mut present) = (f64::MAX, f64::MAX);
        for _ in 0..3 {
            let t = Instant::now();
            let mut hits = 0u64;
            for i in 0..n {
                hits +=
                    u64::from(f.contains_hash((i | 1 << 63).wrapping_mul(0xD6E8_FEB8_6659_FD93)));
            }
            absent = absent.min(t.elapsed().as_secs_f64() * 1e9 / n as f64);
            std::hint::black_box(hits);
            let t = Instant::now();
            let mut hits = 0u64;
            for i in 0..n {
                hits += u64::from(f.contains_hash(keys[(i as usize * 7919) % keys.len()]));
            }
            present = present.min(t.elapsed().as_secs_f64() * 1e9 / n as f64);
            assert_eq!(hits, n);
        }
        println!("{mib} MiB: absent {absent:.2} ns, present {present:.2} ns");
    }
}
