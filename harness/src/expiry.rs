//! Keys that expire (`cuckoo-harness expiry`, issue 41): the
//! `WindowedCuckooFilter` against what users build instead, in one run.
//!
//! * **Lookups** (precomputed hashes, no hashing measured): the windowed
//!   filter (`G = 4`, rate 1e-3, all `n` keys live, inserted over four
//!   generations) against a `CuckooFilter` of the same capacity and rate
//!   holding the same keys (the floor: no expiry at all), and against a
//!   ring of `G` `CuckooFilter`s of `n / G` each, one per generation,
//!   probed newest first (the design users write by hand). Single
//!   `contains_hash` and bursts of 32 through `contains_hash_batch`, for
//!   absent keys and a 50/50 mix; CPU ns per key, the median of the
//!   rounds, the contenders alternating round by round.
//! * **Keyed lookups against `expiring-atomic-filter`** (crates.io 0.1: a
//!   ring of `atomic-cuckoo-filter`s, `ttl / period + 2` of them, 32-bit
//!   fingerprints, SipHash): `contains(&u64)` on each, each with its own
//!   hasher, `n / G` keys (its slots split the capacity by `G`, and it
//!   files every insert of the same second into one of them).
//! * **Steady state at capacity**: each generation inserts `n / G` fresh
//!   keys and the oldest `n / G` expire (`advance` for the windowed
//!   filter; `clear` of the oldest filter for the ring), ns per key.
//! * **Bytes per live key** of each.

use crate::keys::{key, queries};
use crate::report::{f1, f2, machine, mib, Table};
use crate::timing::time_ns;
use crate::Options;
use concurrent_cuckoo::{CuckooFilter, WindowedCuckooFilter};
use expiring_atomic_filter::ExpiringAtomicFilter;

const G: usize = 4;
const BURST: usize = 32;
const QUERIES: usize = 1 << 20;
const RATE: f64 = 1e-3;

/// The hash lookups the three contenders answer.
trait Lookups {
    fn one(&self, hash: u64) -> bool;
    fn batch(&self, hashes: &[u64], out: &mut [bool]);
    fn bytes(&self) -> usize;
}

impl Lookups for WindowedCuckooFilter {
    fn one(&self, hash: u64) -> bool {
        self.contains_hash(hash)
    }
    fn batch(&self, hashes: &[u64], out: &mut [bool]) {
        self.contains_hash_batch(hashes, out)
    }
    fn bytes(&self) -> usize {
        self.memory_usage()
    }
}

impl Lookups for CuckooFilter {
    fn one(&self, hash: u64) -> bool {
        self.contains_hash(hash)
    }
    fn batch(&self, hashes: &[u64], out: &mut [bool]) {
        self.contains_hash_batch(hashes, out)
    }
    fn bytes(&self) -> usize {
        self.memory_usage()
    }
}

/// `G` filters, one per generation; `newest` takes inserts.
struct Ring {
    filters: Vec<CuckooFilter>,
    newest: usize,
}

impl Ring {
    fn new(capacity: usize) -> Self {
        let filters = (0..G)
            .map(|_| {
                CuckooFilter::builder()
                    .capacity(capacity / G)
                    .false_positive_rate(RATE)
                    .seed(5)
                    .build()
                    .expect("a ring filter")
            })
            .collect();
        Ring { filters, newest: 0 }
    }

    /// The next generation: the oldest filter is emptied and takes inserts.
    fn advance(&mut self) {
        self.newest = (self.newest + 1) % G;
        self.filters[self.newest].clear();
    }
}

impl Lookups for Ring {
    fn one(&self, hash: u64) -> bool {
        (0..G).any(|age| self.filters[(self.newest + G - age) % G].contains_hash(hash))
    }
    fn batch(&self, hashes: &[u64], out: &mut [bool]) {
        // As a user would: each filter's burst lookup, newest first, OR-ed.
        let mut found = [false; BURST];
        out.fill(false);
        for age in 0..G {
            let f = &self.filters[(self.newest + G - age) % G];
            f.contains_hash_batch(hashes, &mut found[..hashes.len()]);
            for (o, &hit) in out.iter_mut().zip(&found) {
                *o |= hit;
            }
        }
    }
    fn bytes(&self) -> usize {
        self.filters.iter().map(CuckooFilter::memory_usage).sum()
    }
}

fn single(f: &dyn Lookups, queries: &[u64]) -> f64 {
    time_ns(queries.len(), || {
        queries.iter().filter(|&&h| f.one(h)).count()
    })
    .0
}

fn batched(f: &dyn Lookups, queries: &[u64]) -> f64 {
    let mut out = [false; BURST];
    time_ns(queries.len(), || {
        let mut hits = 0;
        for burst in queries.chunks_exact(BURST) {
            f.batch(burst, &mut out);
            hits += out.iter().filter(|&&b| b).count();
        }
        hits
    })
    .0
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

pub fn run(opts: &Options) -> String {
    let sizes: Vec<u64> = if opts.quick {
        vec![1, 64]
    } else {
        vec![1, opts.big_mib.unwrap_or(1024)]
    };
    let rounds = if opts.quick { 3 } else { 7 };
    let mut out = format!(
        "# Keys that expire: WindowedCuckooFilter against a CuckooFilter, a ring of {G} CuckooFilters and expiring-atomic-filter\n\n\
         Machine: {}. Command: `cargo run --release -p cuckoo-harness -- expiry{}`. Rate 1e-3, G = {G}, \
         capacity `n` = the items a `CuckooFilter` of that many MiB holds at 90% load; CPU ns per key, \
         the median of {rounds} rounds, contenders alternating.\n",
        machine(),
        if opts.quick { " --quick" } else { "" },
    );
    for mib_size in sizes {
        out += &size_report(mib_size, rounds);
    }
    out
}

fn size_report(mib_size: u64, rounds: usize) -> String {
    let n = (mib_size << 20) * 8 / 16 * 9 / 10;
    let per = n / G as u64;
    let windowed = WindowedCuckooFilter::builder()
        .capacity(n as usize)
        .generations(G as u64)
        .false_positive_rate(RATE)
        .seed(5)
        .build()
        .expect("the windowed filter");
    let plain = CuckooFilter::builder()
        .capacity(n as usize)
        .false_positive_rate(RATE)
        .seed(5)
        .build()
        .expect("the plain filter");
    let mut ring = Ring::new(n as usize);
    for g in 0..G as u64 {
        let keys: Vec<u64> = (g * per..(g + 1) * per).map(key).collect();
        for chunk in keys.chunks(4096) {
            windowed
                .insert_hash_batch(chunk)
                .expect("room for n live keys");
            plain.insert_hash_batch(chunk).expect("room for n keys");
            ring.filters[ring.newest]
                .insert_hash_batch(chunk)
                .expect("room for n / G keys");
        }
        if g + 1 < G as u64 {
            windowed.advance();
            ring.advance();
        }
    }
    let stored = G as u64 * per;
    let absent = queries(stored, QUERIES, 0.0, 11);
    let mixed = queries(stored, QUERIES, 0.5, 12);
    let contenders: [(&str, &dyn Lookups); 3] = [
        ("WindowedCuckooFilter", &windowed),
        ("CuckooFilter (no expiry)", &plain),
        ("ring of 4 CuckooFilters", &ring),
    ];
    let mut times = vec![[Vec::new(), Vec::new(), Vec::new(), Vec::new()]; 3];
    for _ in 0..rounds {
        for (i, (_, f)) in contenders.iter().enumerate() {
            times[i][0].push(single(*f, &absent));
            times[i][1].push(single(*f, &mixed));
            times[i][2].push(batched(*f, &absent));
            times[i][3].push(batched(*f, &mixed));
        }
    }
    let med: Vec<[f64; 4]> = times.into_iter().map(|t| t.map(median)).collect();
    let mut table = Table::new(&[
        "filter",
        "MiB",
        "bytes/key",
        "single, absent",
        "single, 50/50",
        "burst 32, absent",
        "burst 32, 50/50",
        "windowed speed vs this (single / burst, absent)",
    ]);
    for (i, (name, f)) in contenders.iter().enumerate() {
        table.row(vec![
            name.to_string(),
            mib(f.bytes()),
            f2(f.bytes() as f64 / stored as f64),
            f1(med[i][0]),
            f1(med[i][1]),
            f1(med[i][2]),
            f1(med[i][3]),
            format!(
                "{} / {}",
                f2(med[i][0] / med[0][0]),
                f2(med[i][2] / med[0][2])
            ),
        ]);
    }
    let mut out = format!(
        "\n## {mib_size} MiB: n = {stored} live keys\n\nPrecomputed hashes; the last column is this filter's time over the windowed filter's (above 1: the windowed filter is faster).\n\n{}",
        table.render()
    );

    // Keyed lookups against expiring-atomic-filter.
    let eaf = ExpiringAtomicFilter::builder()
        .capacity(n as usize)
        .ttl(G as u64)
        .expiration_period(1)
        .build()
        .expect("expiring-atomic-filter");
    let keyed = WindowedCuckooFilter::builder()
        .capacity(n as usize)
        .generations(G as u64)
        .false_positive_rate(RATE)
        .seed(5)
        .build()
        .expect("the windowed filter");
    // Its slots hold n / G each, and one second's inserts go to one slot.
    let few = per * 9 / 10;
    let mut eaf_room = few;
    for i in 0..few {
        keyed.insert(&i).expect("room");
        if eaf.insert(&i).is_err() {
            eaf_room = i;
            break;
        }
    }
    let keyed_absent: Vec<u64> = (0..QUERIES as u64).map(|i| (1 << 60) + i).collect();
    let keyed_mixed: Vec<u64> = (0..QUERIES as u64)
        .map(|i| {
            if i % 2 == 0 {
                i % eaf_room.max(1)
            } else {
                (1 << 60) + i
            }
        })
        .collect();
    let (mut ours, mut theirs) = ([Vec::new(), Vec::new()], [Vec::new(), Vec::new()]);
    for _ in 0..rounds {
        for (j, q) in [&keyed_absent, &keyed_mixed].into_iter().enumerate() {
            ours[j].push(time_ns(q.len(), || q.iter().filter(|k| keyed.contains(*k)).count()).0);
            theirs[j].push(time_ns(q.len(), || q.iter().filter(|k| eaf.contains(*k)).count()).0);
        }
    }
    let (ours, theirs) = (ours.map(median), theirs.map(median));
    let mut t2 = Table::new(&[
        "filter (keyed contains, own hasher)",
        "single, absent",
        "single, 50/50",
        "windowed speed vs this",
    ]);
    t2.row(vec![
        "WindowedCuckooFilter".into(),
        f1(ours[0]),
        f1(ours[1]),
        "1.00".into(),
    ]);
    t2.row(vec![
        format!(
            "expiring-atomic-filter 0.1 (ttl {G}, period 1: {} slots)",
            G + 2
        ),
        f1(theirs[0]),
        f1(theirs[1]),
        format!("{} / {}", f2(theirs[0] / ours[0]), f2(theirs[1] / ours[1])),
    ]);
    out += &format!("\n\n{eaf_room} keys in each (expiring-atomic-filter files one second's inserts into one of its slots).\n\n{}", t2.render());

    // Steady state at capacity: n / G fresh keys a generation, the oldest
    // n / G expire.
    let steady_generations = 8u64;
    let mut next = stored;
    let (w_ns, _) = time_ns((steady_generations * per) as usize, || {
        for _ in 0..steady_generations {
            windowed.advance();
            let keys: Vec<u64> = (next..next + per).map(key).collect();
            for chunk in keys.chunks(4096) {
                windowed
                    .insert_hash_batch(chunk)
                    .expect("never refused at capacity");
            }
            next += per;
        }
    });
    let mut next = stored;
    let (r_ns, _) = time_ns((steady_generations * per) as usize, || {
        for _ in 0..steady_generations {
            ring.advance();
            let keys: Vec<u64> = (next..next + per).map(key).collect();
            for chunk in keys.chunks(4096) {
                ring.filters[ring.newest]
                    .insert_hash_batch(chunk)
                    .expect("room");
            }
            next += per;
        }
    });
    out += &format!(
        "\n\nSteady state at capacity ({steady_generations} generations of {per} fresh keys, the oldest expiring; the key vectors' making included for both): \
         WindowedCuckooFilter {} ns per key (advance included), ring {} ns per key (clear included); live keys after: {} (windowed).\n",
        f1(w_ns),
        f1(r_ns),
        windowed.len()
    );
    out
}
