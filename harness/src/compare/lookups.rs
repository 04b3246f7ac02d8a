//! Lookups on one thread: `contains` at several fractions of positive keys,
//! batched negative lookups, `concurrent-cuckoo`'s `*_hash` API on hashes
//! computed before timing, and the peers' negative lookups on tables of
//! the 1 GiB class.

use super::subjects::subjects;
use crate::filters::{Filter, Ours};
use crate::keys::queries;
use crate::report::{bar, millions};
use crate::timing::time_ns;
use crate::Options;
use core::hash::BuildHasher;
use indicatif::ProgressBar;

/// Fractions of positive keys for `contains`.
pub const FRACTIONS: [f64; 3] = [0.0, 0.5, 1.0];
/// Burst sizes of the batched lookups (negative keys).
pub const BURSTS: [usize; 3] = [16, 32, 64];
/// Peers measured on tables sized for the 1 GiB class ([`big_peers`]).
const BIG_PEERS: [&str; 2] = ["cuckoofilter", "atomic-cuckoo-filter"];

/// Queries per timed run.
fn query_count(opts: &Options) -> usize {
    if opts.quick {
        1_000_000
    } else {
        2_000_000
    }
}

/// Keyed lookups, CPU ns per lookup.
pub struct Lookups {
    /// `contains` at each of [`FRACTIONS`].
    pub contains: [f64; 3],
    /// `contains_batch` in each of [`BURSTS`], where native.
    pub batch: Option<[f64; 3]>,
    /// False-positive rate of the all-negative `contains` run.
    pub fpr: f64,
}

/// Steps [`measure`] adds to the caller's progress bar.
pub fn steps(batch: bool) -> u64 {
    (FRACTIONS.len() + usize::from(batch) * BURSTS.len()) as u64
}

/// Keyed lookups of a filter holding keys `0..n`; `pb` advances once per
/// timed run.
pub fn measure(
    f: &mut dyn Filter,
    n: u64,
    batch: bool,
    opts: &Options,
    pb: &ProgressBar,
) -> Lookups {
    let q = query_count(opts);
    let warm = queries(n, q / 4, 0.5, 99);
    f.count_contains(&warm);
    let mut contains = [0.0; 3];
    let mut fpr = 0.0;
    for (i, &frac) in FRACTIONS.iter().enumerate() {
        let qs = queries(n, q, frac, 100 + i as u64);
        let (ns, hits) = time_ns(q, || f.count_contains(&qs));
        contains[i] = ns;
        if frac == 0.0 {
            fpr = hits as f64 / q as f64;
        }
        pb.inc(1);
    }
    let batch = batch.then(|| {
        let qs = queries(n, q, 0.0, 200);
        let mut b = [0.0; 3];
        for (i, &burst) in BURSTS.iter().enumerate() {
            b[i] = time_ns(q, || f.count_contains_batch(&qs, burst)).0;
            pb.inc(1);
        }
        b
    });
    Lookups {
        contains,
        batch,
        fpr,
    }
}

/// `concurrent-cuckoo` through `*_hash` with hashes computed before timing,
/// CPU ns per lookup.
pub struct HashLookups {
    /// `contains_hash` at each of [`FRACTIONS`].
    pub contains: [f64; 3],
    /// `contains_hash_batch` in each of [`BURSTS`].
    pub batch: [f64; 3],
}

pub fn measure_hash_api(f: &Ours, n: u64, opts: &Options) -> HashLookups {
    let q = query_count(opts);
    let hasher = f.hasher().clone();
    let pb = bar(7, "lookups concurrent-cuckoo *_hash");
    let hashed = |frac: f64, seed: u64| -> Vec<u64> {
        queries(n, q, frac, seed)
            .into_iter()
            .map(|k| hasher.hash_one(k))
            .collect()
    };
    let warm = hashed(0.5, 99);
    let mut sink = 0usize;
    for &h in &warm {
        sink += usize::from(f.contains_hash(h));
    }
    let mut contains = [0.0; 3];
    for (i, &frac) in FRACTIONS.iter().enumerate() {
        let hs = hashed(frac, 100 + i as u64);
        contains[i] = time_ns(q, || hs.iter().filter(|&&h| f.contains_hash(h)).count()).0;
        pb.inc(1);
    }
    let hs = hashed(0.0, 200);
    let mut batch = [0.0; 3];
    for (i, &burst) in BURSTS.iter().enumerate() {
        let mut out = vec![false; burst];
        batch[i] = time_ns(q, || {
            let mut hits = 0;
            for chunk in hs.chunks(burst) {
                let out = &mut out[..chunk.len()];
                f.contains_hash_batch(chunk, out);
                hits += out.iter().filter(|&&b| b).count();
            }
            hits
        })
        .0;
        pb.inc(1);
    }
    pb.finish_and_clear();
    std::hint::black_box(sink);
    HashLookups { contains, batch }
}

/// A peer's negative lookups on a table of the 1 GiB class.
pub struct BigPeer {
    pub name: String,
    pub bytes: usize,
    /// CPU ns per negative lookup.
    pub ns: f64,
}

/// Negative lookups of `cuckoofilter` and `atomic-cuckoo-filter` on tables
/// sized for `n` items (the 1 GiB class). A negative lookup reads both
/// buckets whatever the load, so the tables hold only a sample of keys:
/// filling them to 90% would not fit a five-minute run. Both allocate and
/// write their whole table up front, so every page is real memory.
pub fn big_peers(n: u64, opts: &Options) -> Vec<BigPeer> {
    let q = if opts.quick { 500_000 } else { 2_000_000 };
    let sample = n / 50;
    let qs = queries(n, q, 0.0, 300);
    let mut out = Vec::new();
    for s in subjects().iter().filter(|s| BIG_PEERS.contains(&s.name)) {
        let name = s.name;
        let pb = bar(
            3,
            format!("negative lookups {name}, table for {} items", millions(n)),
        );
        // The peers' builders take no bits per item.
        let mut f = (s.build)(n, 0);
        pb.inc(1);
        f.insert_range(0..sample, false);
        pb.inc(1);
        f.count_contains(&qs[..q / 4]);
        let (ns, _) = time_ns(q, || f.count_contains(&qs));
        pb.finish_and_clear();
        out.push(BigPeer {
            name: name.to_string(),
            bytes: f.bytes(),
            ns,
        });
    }
    out
}
