//! Lookups in a growing filter (`cuckoo-harness levels`): what searching
//! 1, 2, 4 and 8 levels costs against one `CuckooFilter` of the same total
//! size, and what growing 16x costs in memory and false positives.
//!
//! For `L` levels the `ScalableCuckooFilter` (growth factor 2, rate 1e-3:
//! every level 16-bit) starts at `n / (2^L - 1)` items, so inserting the
//! same `n` keys fills it to exactly `L` levels; the single filter gets the
//! same number of slots (and 16-bit fingerprints) and the same keys. Keys
//! are uniformly random 64-bit values used as precomputed hashes (the
//! `*_hash` calls), so hashing is not measured. Lookups: a million queries
//! each of present keys, absent keys and a 50/50 mix, in bursts of 32
//! through `contains_hash_batch`, and the mix one key at a time through
//! `contains_hash`; CPU ns per key, the median of the rounds. Both filters
//! are measured in the same run, one after the other, round by round.
//! Then a quarter of the keys are removed from both, alternating in chunks
//! (CPU ns per remove, and the growing filter's refused removes).

use crate::keys::{key, queries};
use crate::report::{bar, f1, f2, machine, Table};
use crate::timing::time_ns;
use crate::Options;
use concurrent_cuckoo::{CuckooFilter, ScalableCuckooFilter};

const BURST: usize = 32;
const QUERIES: usize = 1 << 20;

/// The lookups both kinds of filter answer.
trait Lookups {
    fn batch(&self, hashes: &[u64], out: &mut [bool]);
    fn one(&self, hash: u64) -> bool;
}

impl Lookups for ScalableCuckooFilter {
    fn batch(&self, hashes: &[u64], out: &mut [bool]) {
        self.contains_hash_batch(hashes, out)
    }
    fn one(&self, hash: u64) -> bool {
        self.contains_hash(hash)
    }
}

impl Lookups for CuckooFilter {
    fn batch(&self, hashes: &[u64], out: &mut [bool]) {
        self.contains_hash_batch(hashes, out)
    }
    fn one(&self, hash: u64) -> bool {
        self.contains_hash(hash)
    }
}

/// ns per key of bursts of `queries`, and how many answered `true`.
fn batched(f: &dyn Lookups, queries: &[u64]) -> (f64, usize) {
    let mut out = [false; BURST];
    time_ns(queries.len(), || {
        let mut hits = 0;
        for burst in queries.chunks_exact(BURST) {
            f.batch(burst, &mut out);
            hits += out.iter().filter(|&&b| b).count();
        }
        hits
    })
}

fn single(f: &dyn Lookups, queries: &[u64]) -> (f64, usize) {
    time_ns(queries.len(), || {
        queries.iter().filter(|&&q| f.one(q)).count()
    })
}

/// Medians of one filter's lookup times over the rounds.
#[derive(Default)]
struct Times {
    positive: Vec<f64>,
    negative: Vec<f64>,
    mixed: Vec<f64>,
    mixed_single: Vec<f64>,
    false_positives: usize,
}

impl Times {
    fn measure(&mut self, f: &dyn Lookups, q: &Queries) {
        let (ns, hits) = batched(f, &q.positive);
        assert_eq!(hits, q.positive.len(), "a present key was not found");
        self.positive.push(ns);
        let (ns, fps) = batched(f, &q.negative);
        self.negative.push(ns);
        self.false_positives = fps;
        self.mixed.push(batched(f, &q.mixed).0);
        self.mixed_single.push(single(f, &q.mixed).0);
    }
}

/// Removes: `keys` (all present in both filters) taken out of each in
/// chunks, the filters alternating chunk by chunk. CPU ns per remove of
/// the growing and the single filter, and the growing filter's refused
/// removes (its key's fingerprint in two levels).
fn removes(grown: &ScalableCuckooFilter, one: &CuckooFilter, keys: &[u64]) -> (f64, f64, usize) {
    let (mut ns_grown, mut ns_one, mut refused) = (0.0, 0.0, 0);
    for chunk in keys.chunks(1 << 14) {
        let (ns, kept) = time_ns(chunk.len(), || {
            chunk
                .iter()
                .filter(|&&k| !grown.remove_hash(k).is_removed())
                .count()
        });
        ns_grown += ns * chunk.len() as f64;
        refused += kept;
        let (ns, missed) = time_ns(chunk.len(), || {
            chunk.iter().filter(|&&k| !one.remove_hash(k)).count()
        });
        assert_eq!(missed, 0, "the single filter lost a key");
        ns_one += ns * chunk.len() as f64;
    }
    let n = keys.len() as f64;
    (ns_grown / n, ns_one / n, refused)
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

struct Queries {
    positive: Vec<u64>,
    negative: Vec<u64>,
    mixed: Vec<u64>,
}

fn scalable(initial: usize) -> ScalableCuckooFilter {
    ScalableCuckooFilter::builder()
        .capacity(initial)
        .false_positive_rate(1e-3)
        .growth_factor(2)
        .seed(0x5EED)
        .build()
        .expect("build the scalable filter")
}

struct Row {
    label: String,
    widths: String,
    slots: usize,
    bits_per_item: f64,
    times: Times,
    bound: f64,
}

impl Row {
    fn cells(&self) -> Vec<String> {
        let t = &self.times;
        vec![
            self.label.clone(),
            self.widths.clone(),
            format!("{:.1}M", self.slots as f64 / 1e6),
            f1(self.bits_per_item),
            f1(median(&t.positive)),
            f1(median(&t.negative)),
            f1(median(&t.mixed)),
            f1(median(&t.mixed_single)),
            format!("{:.2e}", t.false_positives as f64 / QUERIES as f64),
            format!("{:.2e}", self.bound),
        ]
    }
}

pub fn run(opts: &Options) -> String {
    let n = opts.n.unwrap_or(if opts.quick { 1 << 20 } else { 1 << 24 });
    let rounds = if opts.quick { 3 } else { 5 };
    let keys: Vec<u64> = (0..n).map(key).collect();
    let q = Queries {
        positive: queries(n, QUERIES, 1.0, 1),
        negative: queries(n, QUERIES, 0.0, 2),
        mixed: queries(n, QUERIES, 0.5, 3),
    };
    let mut table = Table::new(&[
        "filter",
        "fingerprint bits",
        "slots",
        "bits/item",
        "batch present ns",
        "batch absent ns",
        "batch 50/50 ns",
        "one-at-a-time 50/50 ns",
        "measured FPR",
        "FPR bound",
    ]);
    let mut ratios = Table::new(&[
        "levels",
        "batch present",
        "batch absent",
        "batch 50/50",
        "one-at-a-time 50/50",
        "remove",
        "refused removes",
    ]);
    for levels in [1u32, 2, 4, 8] {
        let initial = (n as usize).div_ceil((1 << levels) - 1);
        let grown = scalable(initial);
        let pb = bar(rounds as u64 + 1, format!("levels: {levels}"));
        grown.insert_hash_batch(&keys).expect("the filter grows");
        let one = CuckooFilter::builder()
            .capacity(0)
            .bucket_count((grown.capacity() / 4).next_multiple_of(2))
            .fingerprint_bits(16)
            .seed(0x5EED)
            .build()
            .expect("build the single filter");
        one.insert_hash_batch(&keys)
            .expect("the single filter holds the keys");
        pb.inc(1);
        let (mut tg, mut to) = (Times::default(), Times::default());
        for _ in 0..rounds {
            tg.measure(&grown, &q);
            to.measure(&one, &q);
            pb.inc(1);
        }
        pb.finish_and_clear();
        // Removes last: they change both filters. A quarter of the keys,
        // spread over every level (keys went in in order).
        let gone: Vec<u64> = keys.iter().step_by(4).copied().collect();
        let (remove_grown, remove_one, refused) = removes(&grown, &one, &gone);
        let grown_row = Row {
            label: format!(
                "ScalableCuckooFilter, {} level{}",
                grown.levels(),
                if grown.levels() == 1 { "" } else { "s" }
            ),
            widths: format!("{:?}", grown.level_fingerprint_bits()),
            slots: grown.capacity(),
            bits_per_item: grown.memory_usage() as f64 * 8.0 / n as f64,
            times: tg,
            bound: grown.false_positive_bound(),
        };
        let one_row = Row {
            label: "CuckooFilter, same slots".into(),
            widths: "16".into(),
            slots: one.capacity(),
            bits_per_item: one.memory_usage() as f64 * 8.0 / n as f64,
            times: to,
            bound: one.false_positive_bound(),
        };
        let r = |a: &[f64], b: &[f64]| format!("{}x", f2(median(a) / median(b)));
        let (g, o) = (&grown_row.times, &one_row.times);
        ratios.row(vec![
            grown.levels().to_string(),
            r(&g.positive, &o.positive),
            r(&g.negative, &o.negative),
            r(&g.mixed, &o.mixed),
            r(&g.mixed_single, &o.mixed_single),
            format!(
                "{}x ({} / {} ns)",
                f2(remove_grown / remove_one),
                f1(remove_grown),
                f1(remove_one)
            ),
            format!("{refused} of {}", gone.len()),
        ]);
        table.row(grown_row.cells());
        table.row(one_row.cells());
    }

    // Growing 16x: what it costs against a filter sized right from the
    // start.
    let mut growth = Table::new(&[
        "filter",
        "levels",
        "fingerprint bits",
        "bits/item",
        "measured FPR",
        "FPR bound",
    ]);
    let pb = bar(1, "levels: grown 16x");
    let grown = scalable((n / 16) as usize);
    grown.insert_hash_batch(&keys).expect("the filter grows");
    let sized = CuckooFilter::builder()
        .capacity(n as usize)
        .fingerprint_bits(16)
        .seed(0x5EED)
        .build()
        .expect("build");
    sized.insert_hash_batch(&keys).expect("sized for n");
    // 16x the queries of the timings: the rates sit close to their bounds,
    // and a million queries measure them only to about 4%.
    let absent = queries(n, 16 * QUERIES, 0.0, 4);
    let fpr = |hits: usize| format!("{:.3e}", hits as f64 / absent.len() as f64);
    let mut out = [false; BURST];
    let mut count = |f: &dyn Lookups| {
        absent
            .chunks_exact(BURST)
            .map(|b| {
                f.batch(b, &mut out);
                out.iter().filter(|&&x| x).count()
            })
            .sum::<usize>()
    };
    growth.row(vec![
        "ScalableCuckooFilter from n/16, factor 2, rate 1e-3".to_string(),
        grown.levels().to_string(),
        format!("{:?}", grown.level_fingerprint_bits()),
        f1(grown.memory_usage() as f64 * 8.0 / n as f64),
        fpr(count(&grown)),
        format!("{:.3e}", grown.false_positive_bound()),
    ]);
    growth.row(vec![
        "CuckooFilter::with_capacity(n), 16-bit".into(),
        "1".into(),
        "16".into(),
        f1(sized.memory_usage() as f64 * 8.0 / n as f64),
        fpr(count(&sized)),
        format!("{:.3e}", sized.false_positive_bound()),
    ]);
    pb.finish_and_clear();

    format!(
        "## Growing filter: lookups against levels\n\n`cargo run --release -p cuckoo-harness -- levels{}`: n = {n} keys, {rounds} rounds, one thread; CPU ns per key (median). See `harness/src/levels.rs` for the method.\n\n### Machine\n\n{}\n### Lookup cost\n\n{}\n### Scalable against single, same slots (ratio of ns per key)\n\n{}\n### Grown 16x\n\n{}",
        if opts.quick { " --quick" } else { "" },
        machine(),
        table.render(),
        ratios.render(),
        growth.render()
    )
}
