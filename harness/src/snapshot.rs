//! What a snapshot costs the writers beside it (`cuckoo-harness snapshot`).
//!
//! A `with_capacity(n / 0.9)` filter holding `--n` items (default 16M:
//! 42 MB with its locks and versions, 81% of its slots; `--quick`: 2M);
//! one writer thread replaces keys (remove the oldest, insert a fresh
//! one, so the load stays put) and times every write, while the main
//! thread does nothing, then takes snapshots back to back by each method
//! in turn, each for the same time: `write_to` into a `Vec` (every lock
//! held while it writes), `to_bytes` and `try_clone` (copied beside the
//! writers, stripe group by stripe group). Reported per method:
//! snapshots taken, their median time, and the writer's writes per second,
//! worst write, 99.99th percentile, and writes slower than 100 µs and 1 ms
//! over that period (on a shared 2-vCPU guest the writer alone sees a few
//! millisecond stalls: the host's, not the filter's).

use crate::keys::key;
use crate::Options;
use concurrent_cuckoo::CuckooFilter;
use std::fmt::Write;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::{Duration, Instant};

/// What the main thread does while the writer runs.
#[derive(Clone, Copy, PartialEq)]
enum Method {
    /// Nothing: the writer alone.
    Idle,
    /// `write_to` a `Vec`, all locks held.
    WriteTo,
    /// `to_bytes`, beside writers.
    ToBytes,
    /// `try_clone`, beside writers.
    Clone,
}

impl Method {
    const ALL: [Method; 4] = [
        Method::Idle,
        Method::WriteTo,
        Method::ToBytes,
        Method::Clone,
    ];

    fn name(self) -> &'static str {
        match self {
            Method::Idle => "no snapshot",
            Method::WriteTo => "write_to (every lock held)",
            Method::ToBytes => "to_bytes (beside writers)",
            Method::Clone => "try_clone (beside writers)",
        }
    }
}

/// The writer's latencies over one period, in nanoseconds.
struct Period {
    latencies: Vec<u64>,
    secs: f64,
}

pub fn run(opts: &Options) -> String {
    let n = opts
        .n
        .unwrap_or(if opts.quick { 2 << 20 } else { 16 << 20 });
    let period = if opts.quick {
        Duration::from_millis(500)
    } else {
        Duration::from_secs(2)
    };
    let f = CuckooFilter::with_capacity((n as f64 / 0.9) as usize);
    for i in 0..n {
        f.insert(&key(i)).expect("the filter takes its capacity");
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "snapshot beside one writer: {} items, {} buckets, {} stripes, {:.1} MB, {:.1}% load, {:.1} s a method\n",
        n,
        f.bucket_count(),
        f.stats().stripes,
        f.memory_usage() as f64 / 1e6,
        f.load_factor() * 100.0,
        period.as_secs_f64()
    );
    let _ = writeln!(
        out,
        "| main thread | snapshots | median snapshot ms | writes/s | worst write µs | p99.99 write µs | writes > 100 µs | writes > 1 ms |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|");
    // The writer replaces keys from `next_old` (oldest) upwards with
    // `next_new` ones: the load stays at its fill.
    let (mut next_old, mut next_new) = (0u64, n);
    for method in Method::ALL {
        let (stats, times) = measure(&f, method, period, &mut next_old, &mut next_new);
        let mut lat = stats.latencies;
        lat.sort_unstable();
        let worst = lat.last().copied().unwrap_or(0);
        let p9999 = lat[(lat.len() as f64 * 0.9999) as usize..]
            .first()
            .copied()
            .unwrap_or(worst);
        let snapshots = times.len();
        let median_ms = median(times) * 1e3;
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.2}M | {:.0} | {:.0} | {} | {} |",
            method.name(),
            if method == Method::Idle {
                "-".to_string()
            } else {
                snapshots.to_string()
            },
            if method == Method::Idle {
                "-".to_string()
            } else {
                format!("{median_ms:.1}")
            },
            lat.len() as f64 / stats.secs / 1e6,
            worst as f64 / 1e3,
            p9999 as f64 / 1e3,
            lat.len() - lat.partition_point(|&l| l <= 100_000),
            lat.len() - lat.partition_point(|&l| l <= 1_000_000)
        );
    }
    out
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs the writer for `period` while the main thread snapshots by
/// `method`; returns the writer's latencies and the snapshots' times.
fn measure(
    f: &CuckooFilter,
    method: Method,
    period: Duration,
    next_old: &mut u64,
    next_new: &mut u64,
) -> (Period, Vec<f64>) {
    let stop = AtomicBool::new(false);
    let started = AtomicU8::new(0);
    let (old0, new0) = (*next_old, *next_new);
    let (writer, times) = std::thread::scope(|s| {
        let (stop, started) = (&stop, &started);
        let writer = s.spawn(move || {
            let mut latencies = Vec::with_capacity(1 << 24);
            let (mut old, mut new) = (old0, new0);
            started.store(1, Ordering::Release);
            let t0 = Instant::now();
            while !stop.load(Ordering::Relaxed) {
                let a = Instant::now();
                assert!(f.remove(&key(old)), "a stored key is there to remove");
                let b = Instant::now();
                f.insert(&key(new)).expect("the load stays put");
                let c = Instant::now();
                latencies.push((b - a).as_nanos() as u64);
                latencies.push((c - b).as_nanos() as u64);
                old += 1;
                new += 1;
            }
            (
                Period {
                    latencies,
                    secs: t0.elapsed().as_secs_f64(),
                },
                old,
                new,
            )
        });
        while started.load(Ordering::Acquire) == 0 {
            std::hint::spin_loop();
        }
        let mut times = Vec::new();
        let end = Instant::now() + period;
        while Instant::now() < end {
            let t = Instant::now();
            match method {
                Method::Idle => std::thread::sleep(Duration::from_millis(10)),
                Method::WriteTo => {
                    let mut v = Vec::with_capacity(f.encoded_len());
                    f.write_to(&mut v).expect("a Vec takes the encoding");
                    std::hint::black_box(v);
                }
                Method::ToBytes => {
                    std::hint::black_box(f.to_bytes());
                }
                Method::Clone => {
                    std::hint::black_box(f.try_clone().expect("memory for a copy"));
                }
            }
            if method != Method::Idle {
                times.push(t.elapsed().as_secs_f64());
            }
        }
        stop.store(true, Ordering::Relaxed);
        (writer.join().expect("the writer finishes"), times)
    });
    let (period, old, new) = writer;
    (*next_old, *next_new) = (old, new);
    (period, times)
}
