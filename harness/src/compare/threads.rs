//! The mixed workloads on several threads: read-only and lookup/insert/
//! remove mixes at about 90% load. Adding a workload is one entry in
//! [`MIXES`].

use crate::filters::{Caps, Filter, Mix, Worker};
use crate::report::bar;
use crate::Options;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

pub const MIXES: [Mix; 3] = [
    Mix::READ_ONLY,
    Mix {
        lookup: 90,
        insert: 5,
        remove: 5,
    },
    Mix {
        lookup: 50,
        insert: 25,
        remove: 25,
    },
];

/// One mix on one thread count.
pub struct Threaded {
    /// [`Mix::label`].
    pub mix: String,
    pub threads: usize,
    /// M operations/s by the wall clock.
    pub wall: f64,
    /// M operations/s by the threads' CPU time.
    pub cpu: f64,
}

/// The rates (wall clock, CPU time) of `mix` on `threads` threads, if run.
pub fn rate(runs: &[Threaded], mix: &str, threads: usize) -> Option<(f64, f64)> {
    runs.iter()
        .find(|r| r.mix == mix && r.threads == threads)
        .map(|r| (r.wall, r.cpu))
}

/// Every mix the filter supports (a filter that cannot insert and remove
/// runs read-only only) on each of `opts.threads`, in that order; keys
/// `0..n` are in the filter.
pub fn measure(f: &dyn Filter, caps: Caps, n: u64, opts: &Options, name: &str) -> Vec<Threaded> {
    let mixes: Vec<Mix> = MIXES
        .iter()
        .copied()
        .filter(|m| m.insert == 0 || (caps.insert && caps.remove))
        .collect();
    let pb = bar(
        (mixes.len() * opts.threads.len()) as u64,
        format!("threads {name}"),
    );
    let mut runs = Vec::new();
    let (mut remove_from, mut insert_from) = (0u64, 1u64 << 50);
    for mix in mixes {
        for &t in &opts.threads {
            let (wall, cpu) = threaded(
                f,
                mix,
                t,
                opts.run_time(),
                n,
                &mut remove_from,
                &mut insert_from,
            );
            runs.push(Threaded {
                mix: mix.label(),
                threads: t,
                wall,
                cpu,
            });
            pb.inc(1);
        }
    }
    pb.finish_and_clear();
    runs
}

/// Runs `mix` on `threads` threads for `dur`; returns M operations/s by
/// the wall clock and by the threads' CPU time (the sum of each thread's
/// own rate: what the run would do with the cores to itself).
fn threaded(
    f: &dyn Filter,
    mix: Mix,
    threads: usize,
    dur: Duration,
    n: u64,
    remove_from: &mut u64,
    insert_from: &mut u64,
) -> (f64, f64) {
    let shared = f.shared();
    let stop = AtomicBool::new(false);
    let barrier = Barrier::new(threads + 1);
    let (rf, inf) = (*remove_from, *insert_from);
    let (results, secs) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads as u64)
            .map(|t| {
                let (stop, barrier) = (&stop, &barrier);
                s.spawn(move || {
                    let w = Worker {
                        thread: t,
                        threads: threads as u64,
                        n,
                        remove_from: rf,
                        insert_from: inf,
                        seed: 0xC0FFEE + t * 7919 + rf,
                    };
                    barrier.wait();
                    shared.run_mix(&w, mix, stop)
                })
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        std::thread::sleep(dur);
        stop.store(true, Ordering::Relaxed);
        let results: Vec<_> = handles
            .into_iter()
            .map(|h| h.join().expect("worker"))
            .collect();
        (results, start.elapsed().as_secs_f64())
    });
    let ops: u64 = results.iter().map(|r| r.ops).sum();
    let max_ins = results.iter().map(|r| r.inserts).max().unwrap_or(0);
    let max_rem = results.iter().map(|r| r.removes).max().unwrap_or(0);
    *remove_from += max_rem * threads as u64;
    *insert_from += max_ins * threads as u64;
    let cpu_rate: f64 = results
        .iter()
        .map(|r| r.ops as f64 / r.cpu_ns.max(1.0) * 1e3)
        .sum();
    (ops as f64 / secs / 1e6, cpu_rate)
}
