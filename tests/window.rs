//! A growing filter used as a sliding window (issue 31): each round
//! inserts new keys and removes the oldest, so the number of live keys
//! stays constant, for long enough that many levels come and go.
//!
//! Before levels were slots reused forever, a level's index only grew
//! and its size and width were functions of that index: after a few dozen
//! levels had come and gone every insert was refused (round 75 with
//! growth 1 and 32 levels). Now, after every round: every live key is
//! found, no insert is refused, at most the derived bound of levels is in
//! use, and memory stays within a constant factor of round 20's.

use concurrent_cuckoo::ScalableCuckooFilter;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Barrier;

/// One window's shape.
#[derive(Clone, Copy)]
struct Window {
    initial: usize,
    growth: usize,
    max_levels: usize,
    /// Keys live after each round's removes.
    live: usize,
    /// New keys a round.
    per_round: usize,
    rounds: usize,
}

/// Memory after round 20 may grow by at most this factor: the levels in
/// use are bounded (`level_bound`), retired slots are reopened rather than
/// reallocated, and with growth 1 every slot has the same size.
const MEMORY_FACTOR: f64 = 2.0;

/// The most levels in use: every level other than the current one holds
/// more than 3/4 of its slot capacity when the filter grows (it would have
/// been switched to otherwise), so with `most` items stored at once and
/// `smallest` the capacity of the smallest slot, `n - 1 < most / (3/4 *
/// smallest)` levels were in use before the growth, and one more after.
fn level_bound(most: usize, smallest: usize) -> usize {
    (4 * most).div_ceil(3 * smallest) + 1
}

/// The threads sharing one filter: each round ends at `barrier`, and the
/// levels and memory are read while no thread writes (between two waits).
struct Shared {
    threads: usize,
    barrier: Barrier,
    /// Removes refused so far, over all threads.
    refused: AtomicUsize,
    /// Set by a thread that failed: every thread stops after the round
    /// (instead of one panicking and the other waiting at the barrier).
    failed: AtomicBool,
}

/// Runs one window on `filter` with keys `base..`; returns the peak levels
/// in use, and memory at round 20 and at the end, or the first failure.
fn run(
    filter: &ScalableCuckooFilter,
    w: Window,
    base: u64,
    shared: &Shared,
) -> Result<(usize, usize, usize), String> {
    let smallest = filter.level_stats()[0].bucket_count * 4;
    let mut live: VecDeque<u64> = VecDeque::new();
    let mut next = base;
    let mut peak = 0;
    let mut at_20 = 0;
    let mut failure = None;
    for round in 0..w.rounds {
        failure = failure
            .or_else(|| churn(filter, w, &mut live, &mut next, shared).err())
            .map(|e| format!("round {round}: {e}"));
        if failure.is_some() {
            shared.failed.store(true, Ordering::SeqCst);
        }
        shared.barrier.wait();
        let levels = filter.levels();
        peak = peak.max(levels);
        // Items stored at once: every thread's window and a round of new
        // keys, and the keys whose removes were refused.
        let most = shared.threads * (w.live + w.per_round) + shared.refused.load(Ordering::Relaxed);
        let bound = level_bound(most, smallest).min(w.max_levels);
        if levels > bound {
            failure = failure.or(Some(format!(
                "round {round}: {levels} levels in use, bound {bound}"
            )));
        }
        if round == 20 {
            at_20 = filter.memory_usage();
        }
        let now = filter.memory_usage();
        if round > 20 && now as f64 > MEMORY_FACTOR * at_20 as f64 {
            failure = failure.or(Some(format!(
                "round {round}: memory {now} over {MEMORY_FACTOR} x round 20's {at_20}"
            )));
        }
        if failure.is_some() {
            shared.failed.store(true, Ordering::SeqCst);
        }
        shared.barrier.wait();
        if shared.failed.load(Ordering::SeqCst) {
            break;
        }
    }
    match failure {
        Some(e) => Err(e),
        None => Ok((peak, at_20, filter.memory_usage())),
    }
}

/// One round of one window: new keys in, the oldest out, every live key
/// checked.
fn churn(
    filter: &ScalableCuckooFilter,
    w: Window,
    live: &mut VecDeque<u64>,
    next: &mut u64,
    shared: &Shared,
) -> Result<(), String> {
    for _ in 0..w.per_round {
        filter
            .insert_hash(*next)
            .map_err(|e| format!("insert refused: {e}"))?;
        live.push_back(*next);
        *next += 1;
    }
    while live.len() > w.live {
        let old = live.pop_front().unwrap();
        if !filter.remove_hash(old) {
            // Two levels match its fingerprint: it stays stored (a false
            // positive from now on) and must not pin its level.
            shared.refused.fetch_add(1, Ordering::Relaxed);
        }
    }
    match live.iter().find(|&&k| !filter.contains_hash(k)) {
        Some(k) => Err(format!("live key {k} not found")),
        None => Ok(()),
    }
}

fn shared(threads: usize) -> Shared {
    Shared {
        threads,
        barrier: Barrier::new(threads),
        refused: AtomicUsize::new(0),
        failed: AtomicBool::new(false),
    }
}

fn one_thread(w: Window) {
    let filter = ScalableCuckooFilter::builder()
        .initial_capacity(w.initial)
        .growth_factor(w.growth)
        .max_levels(w.max_levels)
        .seed(31)
        .build()
        .unwrap();
    let shared = shared(1);
    let (peak, at_20, end) = run(&filter, w, 0, &shared).unwrap_or_else(|e| panic!("{e}"));
    let refused = shared.refused.into_inner();
    eprintln!(
        "growth {}: {} rounds, peak {peak} levels, {refused} refused removes, memory {at_20} at round 20, {end} at the end",
        w.growth, w.rounds
    );
}

fn two_threads(w: Window) {
    let filter = ScalableCuckooFilter::builder()
        .initial_capacity(w.initial)
        .growth_factor(w.growth)
        .max_levels(w.max_levels)
        .seed(32)
        .build()
        .unwrap();
    let shared = shared(2);
    std::thread::scope(|s| {
        for t in 0..2u64 {
            let (filter, shared) = (&filter, &shared);
            s.spawn(move || {
                let (peak, at_20, end) =
                    run(filter, w, t << 40, shared).unwrap_or_else(|e| panic!("thread {t}: {e}"));
                eprintln!(
                    "growth {}, thread {t}: {} rounds, peak {peak} levels, memory {at_20} at round 20, {end} at the end",
                    w.growth, w.rounds
                );
            });
        }
    });
    eprintln!("{} refused removes", shared.refused.into_inner());
}

/// The issue's window: 500 new keys a round, 1,500 live, levels of 1,000,
/// 32 slots; 1,000 rounds are 10^6 inserts and removes.
const ISSUE: Window = Window {
    initial: 1000,
    growth: 1,
    max_levels: 32,
    live: 1500,
    per_round: 500,
    rounds: 1000,
};

#[test]
fn a_window_with_growth_1_runs_forever() {
    one_thread(ISSUE);
}

#[test]
fn a_window_with_growth_2_runs_forever() {
    one_thread(Window { growth: 2, ..ISSUE });
}

/// Two threads, each its own window of 1,500 over levels of 2,000, 16
/// slots; 500 rounds each: 10^6 inserts and removes in all.
const SHARED: Window = Window {
    initial: 2000,
    growth: 1,
    max_levels: 16,
    live: 1500,
    per_round: 500,
    rounds: 500,
};

#[test]
fn two_windows_on_two_threads_with_growth_1_run_forever() {
    two_threads(SHARED);
}

#[test]
fn two_windows_on_two_threads_with_growth_2_run_forever() {
    two_threads(Window {
        growth: 2,
        ..SHARED
    });
}
