//! Churn in a steady sliding window (`cuckoo-harness window`, issue 31):
//! each round inserts `w / 4` new keys and removes the `w / 4` oldest, so
//! `w` keys stay live. A growing filter (growth 1 from `w / 2` items, and
//! growth 2 from `w / 8`: several levels in use, slots retired and
//! reopened all the time) against one `CuckooFilter` sized for the window
//! and a round of new keys (16-bit fingerprints, the growing filter's
//! width at rate 1e-3). Keys are uniformly random 64-bit values used as
//! precomputed hashes (the `*_hash` calls), so hashing is not measured.
//! After warm-up rounds (the growing filter reaches its steady levels),
//! the timed rounds give churn throughput: inserts plus removes per CPU
//! second, one thread, the median of the rounds; then levels in use and
//! memory per live key.

use crate::keys::key;
use crate::report::{f1, f2, machine, Table};
use crate::timing::time_ns;
use crate::Options;
use concurrent_cuckoo::{CuckooFilter, ScalableCuckooFilter};

/// The writes both kinds of filter take.
trait Churn {
    fn add(&self, hash: u64);
    fn take(&self, hash: u64) -> bool;
    fn bytes(&self) -> usize;
    fn levels(&self) -> usize;
}

impl Churn for ScalableCuckooFilter {
    fn add(&self, hash: u64) {
        self.insert_hash(hash)
            .expect("a steady window never fills a growing filter");
    }
    fn take(&self, hash: u64) -> bool {
        self.remove_hash(hash).is_removed()
    }
    fn bytes(&self) -> usize {
        self.memory_usage()
    }
    fn levels(&self) -> usize {
        ScalableCuckooFilter::levels(self)
    }
}

impl Churn for CuckooFilter {
    fn add(&self, hash: u64) {
        self.insert_hash(hash)
            .expect("sized for the window and a round");
    }
    fn take(&self, hash: u64) -> bool {
        self.remove_hash(hash)
    }
    fn bytes(&self) -> usize {
        self.memory_usage()
    }
    fn levels(&self) -> usize {
        1
    }
}

/// Runs `warm` then `timed` rounds on `f`; the median ns per write of the
/// timed rounds, the most levels in use, and refused removes.
fn churn(f: &dyn Churn, w: u64, warm: usize, timed: usize) -> (f64, usize, usize) {
    let round = w / 4;
    let mut next = 0u64;
    for _ in 0..w {
        f.add(key(next));
        next += 1;
    }
    let mut times = Vec::with_capacity(timed);
    let mut peak = f.levels();
    let mut refused = 0;
    for r in 0..warm + timed {
        let (ns, gone) = time_ns(2 * round as usize, || {
            let mut refused = 0;
            for _ in 0..round {
                f.add(key(next));
                refused += usize::from(!f.take(key(next - w)));
                next += 1;
            }
            refused
        });
        refused += gone;
        peak = peak.max(f.levels());
        if r >= warm {
            times.push(ns);
        }
    }
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], peak, refused)
}

pub fn run(opts: &Options) -> String {
    let w: u64 = opts.n.unwrap_or(if opts.quick { 1 << 16 } else { 1 << 20 });
    let (warm, timed) = if opts.quick { (8, 8) } else { (16, 16) };
    let mut table = Table::new(&[
        "filter",
        "M writes/s",
        "ns per write",
        "most levels in use",
        "bytes per live key",
        "refused removes",
    ]);
    let scalable = |initial: u64, growth: usize| {
        ScalableCuckooFilter::builder()
            .capacity(initial as usize)
            .growth_factor(growth)
            .max_levels(32)
            .false_positive_rate(1e-3)
            .seed(0x5EED)
            .build()
            .expect("build")
    };
    let filters: Vec<(String, Box<dyn Churn>)> = vec![
        (
            "ScalableCuckooFilter, growth 1, levels of w/2".to_string(),
            Box::new(scalable(w / 2, 1)),
        ),
        (
            "ScalableCuckooFilter, growth 2, from w/8".to_string(),
            Box::new(scalable(w / 8, 2)),
        ),
        (
            "CuckooFilter::with_capacity(w + w/4), 16-bit".to_string(),
            Box::new(
                CuckooFilter::builder()
                    .capacity((w + w / 4) as usize)
                    .fingerprint_bits(16)
                    .seed(0x5EED)
                    .build()
                    .expect("build"),
            ),
        ),
    ];
    for (name, f) in &filters {
        let (ns, peak, refused) = churn(f.as_ref(), w, warm, timed);
        table.row(vec![
            name.clone(),
            f2(1e3 / ns),
            f1(ns),
            peak.to_string(),
            f1(f.bytes() as f64 / w as f64),
            format!("{refused} of {}", (warm + timed) as u64 * (w / 4)),
        ]);
    }
    format!(
        "## Growing filter: churn in a steady window\n\n`cargo run --release -p cuckoo-harness -- window{}`: w = {w} live keys, rounds of w/4 inserts and w/4 removes, {warm} warm-up and {timed} timed rounds, one thread; writes (inserts + removes) per CPU second, the median round. See `harness/src/window.rs` for the method.\n\n### Machine\n\n{}\n### Churn\n\n{}",
        if opts.quick { " --quick" } else { "" },
        machine(),
        table.render()
    )
}
