//! Bulk writes (`cuckoo-harness writes`): filling a filter and removing
//! from it, `concurrent-cuckoo`'s `insert_batch` / `remove_batch` against
//! its own one-at-a-time calls and the peers' insert and delete loops.
//!
//! Every cuckoo filter gets the same number of slots (2^25, or 2^17 for the
//! in-cache case: `concurrent-cuckoo` is given exactly that many buckets,
//! the peers round their capacity to that power of two themselves) and the
//! same keys, so "fill to 90%" is the same load for all: 0.9 x slots keys,
//! inserted in order into a fresh table. Then 10% of the keys (every tenth)
//! are removed. Each filter hashes the `u64` keys with its own default
//! hasher. Times are the thread's CPU time per key, one thread; each
//! configuration runs several rounds on fresh tables, the filters taking
//! turns within each round (so a slow spell of the shared machine hits them
//! all), and the median is reported (the machine is shared; the ratios are what matters).

use crate::filters::{AtomicCuckoo, CuckooFilterCrate, Filter, Ours};
use crate::keys::key;
use crate::report::{bar, f1, f2, machine, Table};
use crate::timing::time_ns;
use crate::Options;

/// A way to fill and empty one kind of filter.
struct Contender {
    name: &'static str,
    /// A fresh, empty filter of `slots` slots.
    build: fn(slots: u64) -> Box<dyn Writer>,
}

/// The write API under test, on a filter owned by one thread.
trait Writer {
    /// Inserts `keys` in order; the number inserted before the first failure.
    fn fill(&mut self, keys: &[u64]) -> usize;
    /// Removes `keys`; how many were found.
    fn remove_all(&mut self, keys: &[u64]) -> usize;
    fn bytes(&self) -> usize;
}

fn ours(slots: u64) -> Ours {
    Ours::builder()
        .capacity(0)
        .bucket_count((slots / 4) as usize)
        .seed(0x5EED)
        .build()
        .expect("build concurrent-cuckoo")
}

/// `insert_batch` / `remove_batch` on the whole key list: a control plane
/// loading a route table.
struct OursBatched(Ours);

impl Writer for OursBatched {
    fn fill(&mut self, keys: &[u64]) -> usize {
        match self.0.insert_batch(keys) {
            Ok(()) => keys.len(),
            Err(e) => e.inserted(),
        }
    }
    fn remove_all(&mut self, keys: &[u64]) -> usize {
        let mut removed = vec![false; keys.len()];
        self.0.remove_batch(keys, &mut removed);
        removed.iter().filter(|&&r| r).count()
    }
    fn bytes(&self) -> usize {
        self.0.memory_usage()
    }
}

/// `insert` / `remove` one key at a time.
struct OursSingle(Ours);

impl Writer for OursSingle {
    fn fill(&mut self, keys: &[u64]) -> usize {
        keys.iter()
            .position(|k| self.0.insert(k).is_err())
            .unwrap_or(keys.len())
    }
    fn remove_all(&mut self, keys: &[u64]) -> usize {
        keys.iter().filter(|k| self.0.remove(*k)).count()
    }
    fn bytes(&self) -> usize {
        self.0.memory_usage()
    }
}

/// A peer through the harness's `Filter` adaptor (one call per key).
struct Peer(Box<dyn Filter>);

impl Writer for Peer {
    fn fill(&mut self, keys: &[u64]) -> usize {
        keys.iter()
            .position(|&k| !self.0.insert(k))
            .unwrap_or(keys.len())
    }
    fn remove_all(&mut self, keys: &[u64]) -> usize {
        keys.iter().filter(|&&k| self.0.remove(k)).count()
    }
    fn bytes(&self) -> usize {
        self.0.bytes()
    }
}

fn contenders() -> Vec<Contender> {
    vec![
        Contender {
            name: "concurrent-cuckoo insert_batch / remove_batch",
            build: |slots| Box::new(OursBatched(ours(slots))),
        },
        Contender {
            name: "concurrent-cuckoo insert / remove",
            build: |slots| Box::new(OursSingle(ours(slots))),
        },
        Contender {
            name: "cuckoofilter add / delete",
            build: |slots| Box::new(Peer(Box::new(CuckooFilterCrate::new(slots)))),
        },
        Contender {
            name: "atomic-cuckoo-filter insert / remove",
            build: |slots| Box::new(Peer(Box::new(AtomicCuckoo::new(slots)))),
        },
    ]
}

/// One size: ns per key to fill to 90% and to remove 10%, per contender.
struct SizeResult {
    label: String,
    rows: Vec<(&'static str, f64, f64, usize, usize)>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn measure(label: String, slots: u64, rounds: usize) -> SizeResult {
    let fill: Vec<u64> = (0..slots * 9 / 10).map(key).collect();
    let victims: Vec<u64> = fill.iter().copied().step_by(10).collect();
    let contenders = contenders();
    let n = contenders.len();
    // Per contender: fill and remove times of each round, keys inserted, bytes.
    let mut samples: Vec<(Vec<f64>, Vec<f64>, usize, usize)> =
        (0..n).map(|_| (Vec::new(), Vec::new(), 0, 0)).collect();
    let pb = bar((rounds * n) as u64, format!("writes: {label}"));
    // Round by round, every contender once, starting with a different one
    // each round: a slow spell of the shared machine hits all of them.
    for round in 0..rounds {
        for i in (0..n).map(|i| (i + round) % n) {
            let mut f = (contenders[i].build)(slots);
            let (ns, inserted) = time_ns(fill.len(), || f.fill(&fill));
            let (rm_ns, found) = time_ns(victims.len(), || f.remove_all(&victims));
            assert!(found <= victims.len());
            let s = &mut samples[i];
            s.0.push(ns);
            s.1.push(rm_ns);
            s.2 = inserted;
            s.3 = f.bytes();
            pb.inc(1);
        }
    }
    pb.finish_and_clear();
    let rows = contenders
        .iter()
        .zip(samples)
        .map(|(c, (fills, removes, inserted, bytes))| {
            (c.name, median(fills), median(removes), inserted, bytes)
        })
        .collect();
    SizeResult { label, rows }
}

pub fn run(opts: &Options) -> String {
    // The in-cache size takes milliseconds a round, so it gets many more.
    let (rounds, small_rounds) = if opts.quick { (1, 5) } else { (5, 41) };
    let big_log2 = if opts.quick { 22 } else { 25 };
    let sizes = [
        (format!("2^{big_log2} slots"), 1u64 << big_log2, rounds),
        ("2^17 slots (in cache)".to_string(), 1 << 17, small_rounds),
    ];
    let results: Vec<SizeResult> = sizes
        .into_iter()
        .map(|(label, slots, rounds)| measure(label, slots, rounds))
        .collect();

    let mut out = format!(
        "## Bulk writes\n\n`cargo run --release -p cuckoo-harness -- writes{}`: one thread, a fresh table of the given slots per round, the filters taking turns round by round (the median of {rounds} rounds for the large table, {small_rounds} in cache), 0.9 x slots keys inserted in order (fill to 90%), then every tenth key removed. ns per key of the thread's CPU time.\n\n### Machine\n\n{}\n",
        if opts.quick { " --quick" } else { "" },
        machine()
    );
    for r in &results {
        out += &format!("### {}\n\n", r.label);
        let mut t = Table::new(&[
            "filter",
            "memory",
            "fill to 90%: ns/key",
            "keys inserted",
            "remove 10%: ns/key",
        ]);
        for (name, fill, remove, inserted, bytes) in &r.rows {
            t.row(vec![
                name.to_string(),
                crate::report::mib(*bytes),
                f1(*fill),
                inserted.to_string(),
                f1(*remove),
            ]);
        }
        out += &t.render();
        out += "\n";
    }
    // Goals (issue: bulk writes), as ratios measured in this run.
    let mut t = Table::new(&["goal", "target", "achieved"]);
    let find = |r: &SizeResult, prefix: &str| {
        r.rows
            .iter()
            .find(|row| row.0.starts_with(prefix))
            .map(|row| (row.1, row.2))
    };
    let (big, small) = (&results[0], &results[1]);
    let ratio =
        |a: Option<(f64, f64)>, b: Option<(f64, f64)>, pick: fn((f64, f64)) -> f64| match (a, b) {
            (Some(a), Some(b)) => format!("{}x", f2(pick(b) / pick(a))),
            _ => "-".into(),
        };
    let batch = "concurrent-cuckoo insert_batch";
    let single = "concurrent-cuckoo insert /";
    let (cf, acf) = ("cuckoofilter", "atomic-cuckoo-filter");
    let fill = |x: (f64, f64)| x.0;
    let remove = |x: (f64, f64)| x.1;
    t.row(vec![
        format!(
            "fill to 90% with `insert_batch` vs `cuckoofilter` ({})",
            big.label
        ),
        ">= 3x".into(),
        ratio(find(big, batch), find(big, cf), fill),
    ]);
    t.row(vec![
        format!(
            "fill to 90% with `insert_batch` vs `atomic-cuckoo-filter` ({})",
            big.label
        ),
        ">= 4x".into(),
        ratio(find(big, batch), find(big, acf), fill),
    ]);
    t.row(vec![
        format!(
            "fill to 90% with `insert_batch` vs `cuckoofilter` ({})",
            small.label
        ),
        ">= 2x".into(),
        ratio(find(small, batch), find(small, cf), fill),
    ]);
    t.row(vec![
        format!("one-at-a-time `insert` vs `cuckoofilter` ({})", big.label),
        ">= 1.5x".into(),
        ratio(find(big, single), find(big, cf), fill),
    ]);
    t.row(vec![
        format!(
            "`remove_batch` of 10% vs `cuckoofilter`'s `delete` ({})",
            big.label
        ),
        ">= 3x".into(),
        ratio(find(big, batch), find(big, cf), remove),
    ]);
    out += "### Goals\n\n";
    out += &t.render();
    out
}
