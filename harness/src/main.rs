//! Side-by-side benchmark of `concurrent-cuckoo` against the filters users
//! would pick instead, and against the memory system's limit.
//!
//! ```text
//! cargo run --release -p cuckoo-harness -- [--quick] [--out FILE]
//! cargo run --release -p cuckoo-harness -- paper [--quick] [--out FILE] [--svg-dir DIR]
//! cargo run --release -p cuckoo-harness -- retries [--quick] [--n ITEMS]
//! cargo run --release -p cuckoo-harness -- writes [--quick]
//! cargo run --release -p cuckoo-harness -- bands [--quick] [--n SLOTS]
//! cargo run --release -p cuckoo-harness -- levels [--quick] [--n ITEMS]
//! cargo run --release -p cuckoo-harness -- window [--quick] [--n LIVE_KEYS]
//! cargo run --release -p cuckoo-harness -- frozen [--quick] [--dir DIR]
//! cargo run --release -p cuckoo-harness -- snapshot [--quick] [--n ITEMS]
//! cargo run --release -p cuckoo-harness -- scaling [--quick] [--threads 1,2,4] [--seconds S] [--reps R]
//!     [--cache-mib M] [--big-mib M] [--fill-mib M] [--part read,mix,fill,rw] [--only NAME] [--svg-dir DIR]
//! ```
//!
//! See `docs/benchmarks.md` for what is measured and the results.

mod bands;
mod compare;
mod expiry;
mod filters;
mod frozen;
mod keys;
mod lanes;
mod levels;
mod memlimit;
mod paper;
mod plot;
mod report;
mod retries;
mod scaling;
mod snapshot;
mod timing;
mod window;
mod writes;

use std::time::Duration;

/// Command-line options.
pub struct Options {
    pub quick: bool,
    /// Items for `concurrent-cuckoo` (its table is sized for them at 90%).
    pub n: Option<u64>,
    pub out: Option<String>,
    pub svg_dir: Option<String>,
    pub threads: Vec<usize>,
    /// Whether `--threads` was given (`scaling` picks its own otherwise).
    pub threads_given: bool,
    pub only: Option<String>,
    /// Where `frozen` saves its file (default: the system's temporary directory).
    pub dir: Option<String>,
    /// `scaling`: seconds per run, and runs per point.
    pub seconds: Option<f64>,
    pub reps: Option<usize>,
    /// `scaling`: table sizes in MiB.
    pub cache_mib: Option<u64>,
    pub big_mib: Option<u64>,
    pub fill_mib: Option<u64>,
    /// `scaling`: which parts to run (comma-separated).
    pub part: Option<String>,
}

impl Options {
    pub fn run_time(&self) -> Duration {
        if self.quick {
            Duration::from_millis(250)
        } else {
            Duration::from_millis(600)
        }
    }
}

fn usage() -> ! {
    eprintln!(
        "usage: cuckoo-harness [paper] [--quick] [--n ITEMS] [--out FILE] [--svg-dir DIR] [--only NAME] [--dir DIR]\n\
         \n  (default)  side-by-side comparison on a 1 GiB table (--quick: 64 MiB)\
         \n  paper      the paper's Table 3 and Figures 5, 7, 8 (SVG plots into --svg-dir)\
         \n  retries    lookup retries per lookup against lock stripe and version counts\
         \n  writes     bulk fill and remove: insert_batch/remove_batch against single calls and peers\
         \n  bands      where a fill's time goes: ns per key and path lengths by occupancy band (--n: slots)\
         \n  levels     lookups in a growing filter of 1, 2, 4, 8 levels against one filter of the same size\
         \n  window     churn (insert + remove) in a steady sliding window: growing filters against one sized for it\
         \n  frozen     a saved 1 GiB filter: FrozenFilter::open against from_bytes, frozen against live lookups\
         \n             (--dir: where to save the file, e.g. a tmpfs mounted with huge=always)\
         \n  lanes      a windowed filter's 16- and 32-bit lanes: fill to the first refusal, bytes a key, ns per lookup and refresh\
         \n  snapshot   a writer's latency while another thread snapshots: write_to (all locks) against to_bytes (beside writers)\
         \n  scaling    throughput against threads (1, 2, 4, ... CPUs, 2 x CPUs, pinned) for reads, mixes,\
         \n             bulk fills and readers beside writers, with the peers; --seconds per run, --reps runs per point (best kept),\
         \n             --cache-mib/--big-mib/--fill-mib table sizes, --part read,mix,fill,rw, --svg-dir"
    );
    std::process::exit(2)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut mode = "compare".to_string();
    let mut opts = Options {
        quick: false,
        n: None,
        out: None,
        svg_dir: None,
        threads: vec![1, 2],
        threads_given: false,
        only: None,
        dir: None,
        seconds: None,
        reps: None,
        cache_mib: None,
        big_mib: None,
        fill_mib: None,
        part: None,
    };
    let mib = |v: Option<String>| -> Option<u64> {
        Some(v.and_then(|v| v.parse().ok()).unwrap_or_else(|| usage()))
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quick" => opts.quick = true,
            "--n" => {
                opts.n = Some(
                    args.next()
                        .and_then(|v| v.replace('_', "").parse().ok())
                        .unwrap_or_else(|| usage()),
                )
            }
            "--out" => opts.out = Some(args.next().unwrap_or_else(|| usage())),
            "--svg-dir" => opts.svg_dir = Some(args.next().unwrap_or_else(|| usage())),
            "--only" => opts.only = Some(args.next().unwrap_or_else(|| usage())),
            "--dir" => opts.dir = Some(args.next().unwrap_or_else(|| usage())),
            "--part" => opts.part = Some(args.next().unwrap_or_else(|| usage())),
            "--seconds" => {
                opts.seconds = Some(
                    args.next()
                        .and_then(|v| v.parse().ok())
                        .filter(|s: &f64| *s > 0.0 && s.is_finite())
                        .unwrap_or_else(|| usage()),
                )
            }
            "--reps" => {
                opts.reps = Some(
                    args.next()
                        .and_then(|v| v.parse().ok())
                        .filter(|&r| r > 0)
                        .unwrap_or_else(|| usage()),
                )
            }
            "--cache-mib" => opts.cache_mib = mib(args.next()),
            "--big-mib" => opts.big_mib = mib(args.next()),
            "--fill-mib" => opts.fill_mib = mib(args.next()),
            "--threads" => {
                opts.threads_given = true;
                opts.threads = args
                    .next()
                    .unwrap_or_else(|| usage())
                    .split(',')
                    .map(|t| t.parse().unwrap_or_else(|_| usage()))
                    .collect();
                if opts.threads.contains(&0) {
                    usage()
                }
            }
            "paper" | "compare" | "retries" | "writes" | "bands" | "levels" | "frozen"
            | "scaling" | "window" | "expiry" | "snapshot" | "lanes" => mode = arg,
            "-h" | "--help" => usage(),
            _ => usage(),
        }
    }
    let text = match mode.as_str() {
        "paper" => paper::run(&opts),
        "retries" => retries::run(&opts),
        "writes" => writes::run(&opts),
        "bands" => bands::run(&opts),
        "levels" => levels::run(&opts),
        "window" => window::run(&opts),
        "expiry" => expiry::run(&opts),
        "frozen" => frozen::run(&opts),
        "scaling" => scaling::run(&opts),
        "snapshot" => snapshot::run(&opts),
        "lanes" => lanes::run(&opts),
        _ => compare::run(&opts),
    };
    println!("{text}");
    if let Some(path) = &opts.out {
        std::fs::write(path, &text).unwrap_or_else(|e| panic!("write {path}: {e}"));
        eprintln!("wrote {path}");
    }
}
