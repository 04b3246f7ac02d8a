//! Writes: the fill to about 90% load, then remove and insert one at a time
//! at that load.

use crate::filters::{Caps, Filter};
use crate::keys::key;
use crate::report::{bar, millions};
use crate::timing::time_ns;
use indicatif::ProgressBar;
use std::time::Instant;

/// How the filter got its `n` keys.
pub struct Fill {
    pub threads: usize,
    /// Wall ns per key (a static filter: its construction).
    pub ns: f64,
    pub failures: u64,
}

/// Inserts keys `0..n` into a filter that takes inserts, on two threads
/// when `concurrent`; a static filter was built with them in `build_ns`
/// per key.
pub fn fill(
    f: &mut dyn Filter,
    n: u64,
    caps: Caps,
    concurrent: bool,
    build_ns: f64,
    name: &str,
) -> Fill {
    if caps.insert {
        let threads = if concurrent { 2 } else { 1 };
        let (ns, failures) = insert_all(f, n, threads, name);
        Fill {
            threads,
            ns,
            failures,
        }
    } else {
        Fill {
            threads: 1,
            ns: build_ns,
            failures: 0,
        }
    }
}

/// Fills keys `0..n`, with `threads` threads when the filter is concurrent.
/// A filter with a native batched lookup is bulk-loaded: each block of 64
/// keys is first looked up with `contains_batch`, which fetches its buckets
/// with many misses in flight, and then inserted from cache. Returns wall
/// ns per key and failed inserts.
fn insert_all(f: &mut dyn Filter, n: u64, threads: usize, name: &str) -> (f64, u64) {
    let pb = bar(
        n,
        format!("fill {name}: {} keys, {threads} thread(s)", millions(n)),
    );
    const CHUNK: u64 = 1 << 16;
    const BLOCK: usize = 64;
    let start = Instant::now();
    let failures = if threads <= 1 {
        let mut failures = 0;
        let mut at = 0;
        while at < n {
            let end = (at + CHUNK).min(n);
            if let Some(_first) = f.insert_range(at..end, false) {
                failures += 1;
            }
            pb.inc(end - at);
            at = end;
        }
        failures
    } else {
        let shared = f.shared();
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads as u64)
                .map(|t| {
                    let pb = pb.clone();
                    s.spawn(move || {
                        let mut failures = 0u64;
                        let mut chunk = t;
                        let mut block = [0u64; BLOCK];
                        let mut out = [false; BLOCK];
                        while chunk * CHUNK < n {
                            let (a, b) = (chunk * CHUNK, ((chunk + 1) * CHUNK).min(n));
                            let mut i = a;
                            while i < b {
                                let len = (b - i).min(BLOCK as u64) as usize;
                                for (j, k) in block[..len].iter_mut().enumerate() {
                                    *k = key(i + j as u64);
                                }
                                shared.s_contains_batch(&block[..len], &mut out[..len]);
                                for &k in &block[..len] {
                                    failures += u64::from(!shared.s_insert(k));
                                }
                                i += len as u64;
                            }
                            pb.inc(b - a);
                            chunk += threads as u64;
                        }
                        failures
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("fill thread"))
                .sum()
        })
    };
    let ns = start.elapsed().as_nanos() as f64 / n as f64;
    pb.finish_and_clear();
    (ns, failures)
}

/// Remove and insert at 90% load, CPU ns per operation.
pub struct Writes {
    pub insert: f64,
    pub remove: f64,
    /// Keys removed, and how many of them the filter found.
    pub removed: u64,
    pub found: u64,
}

/// Steps [`remove_insert`] adds to the caller's progress bar.
pub const STEPS: u64 = 2;

/// Removes 5% of the keys (at most 0.5M, or 2M on a full run), then
/// inserts them again; `pb` advances once for each.
pub fn remove_insert(f: &mut dyn Filter, n: u64, quick: bool, pb: &ProgressBar) -> Writes {
    let m = (n / 20).min(if quick { 500_000 } else { 2_000_000 });
    let (rm, found) = time_ns(m as usize, || f.remove_range(0..m));
    pb.inc(1);
    let (ins, _) = time_ns(m as usize, || f.insert_range(0..m, false));
    pb.inc(1);
    Writes {
        insert: ins,
        remove: rm,
        removed: m,
        found,
    }
}
