//! The lookup benchmark `scripts/ab-lookups.sh` compiles against two
//! versions of the library: a table of BITS-bit fingerprints and MIB MiB
//! filled to 90% (two threads, `insert_hash` after a `contains_hash_batch`
//! prefetch of each block), then 2M absent keys looked up with `contains`,
//! `contains_hash`, `contains_batch` and `contains_hash_batch` in bursts of
//! 32, ROUNDS times; prints the median ns per lookup (thread CPU time) of
//! each. Uses only API both old and new versions have.
//!
//! Usage: ab-lookups BITS MIB [ROUNDS]
use concurrent_cuckoo::CuckooFilter;
use std::hint::black_box;

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

fn main() {
    let args: Vec<String> = std::env::args().collect();
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
    let med = |v: &mut Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[v.len() / 2]
    };
    println!("{bits}-bit {mib} MiB: contains {:.2} contains_hash {:.2} batch32 {:.2} hash_batch32 {:.2} ns", med(&mut results[0]), med(&mut results[1]), med(&mut results[2]), med(&mut results[3]));
}
