//! `--window SECONDS`: flow aging with a `WindowedCuckooFilter`. A flow is
//! kept alive by its own traffic and forgotten once idle for a window: no
//! flow is ever removed by key.
//!
//! * Long-lived flows: the control thread refreshes every one of them once
//!   a generation (their traffic); workers look them up in bursts and must
//!   always find them.
//! * Short-lived flows: the control thread admits `--churn` new flows a
//!   second, refreshes each for one generation, then lets it go idle. Each
//!   idle flow is checked twice: while still inside its window it must be
//!   found (a miss is a false negative), and once a window has passed it
//!   must be gone (a hit is a false positive, at most the filter's bound).
//! * A clock thread advances the generation every `window / G` seconds
//!   (`advance_to` of the elapsed generations, so a late tick catches up).
//!
//! Every answer is checked against the generation numbers: a flow whose
//! last insert returned while the generation was `t` must be found while
//! the generation read after the lookup is at most `t + G - 1`.

use super::{mix, Args, FlowKey, BURST, CHURN_BASE, NEGATIVE_BASE};
use concurrent_cuckoo::WindowedCuckooFilter;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// Generations a window is split into.
const GENERATIONS: u64 = 4;

#[derive(Default)]
struct Counters {
    lookups: AtomicU64,
    false_negatives: AtomicU64,
    aged_out_checked: AtomicU64,
    aged_out_false_positives: AtomicU64,
    admitted: AtomicU64,
    refreshed: AtomicU64,
}

pub(super) fn run(args: &Args, window: Duration) {
    let generation_len = window / GENERATIONS as u32;
    // Live at once: the long-lived flows, and the short-lived ones of the
    // last window plus the generation in progress.
    let churning = (args.churn_per_sec as f64 * (window + generation_len).as_secs_f64()) as usize;
    let capacity = args.flows + churning + 1;
    let filter = match WindowedCuckooFilter::builder()
        .capacity(capacity)
        .generations(GENERATIONS)
        .false_positive_rate(1e-3)
        .build()
    {
        Ok(f) => Arc::new(f),
        Err(e) => {
            eprintln!("cannot build the filter: {e}");
            std::process::exit(2);
        }
    };
    println!(
        "dataplane --window {:.1}s: {} long-lived flows, {} workers, {} new flows/s (each idle after one \
         generation), {} s; windowed filter for {} live flows, {} generations of {:.2} s, {:.1} MiB, \
         {}-bit fingerprints; probe {}",
        window.as_secs_f64(),
        args.flows,
        args.workers,
        args.churn_per_sec,
        args.seconds,
        capacity,
        GENERATIONS,
        generation_len.as_secs_f64(),
        filter.memory_usage() as f64 / (1 << 20) as f64,
        filter.fingerprint_bits(),
        concurrent_cuckoo::probe_backend(),
    );
    let stable: Arc<Vec<FlowKey>> =
        Arc::new((0..args.flows as u64).map(FlowKey::from_id).collect());
    for chunk in stable.chunks(4096) {
        filter
            .insert_batch(chunk)
            .expect("sized for every live flow");
    }
    let start = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let counters = Arc::new(Counters::default());
    let mut handles = Vec::new();
    for w in 0..args.workers {
        let (filter, stable, stop, counters) = (
            filter.clone(),
            stable.clone(),
            stop.clone(),
            counters.clone(),
        );
        handles.push(thread::spawn(move || {
            worker(w, &filter, &stable, &stop, &counters)
        }));
    }
    {
        let (filter, stop) = (filter.clone(), stop.clone());
        handles.push(thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let due = start.elapsed().as_nanos() / generation_len.as_nanos().max(1);
                filter.advance_to(due as u64);
                thread::sleep(Duration::from_millis(2));
            }
        }));
    }
    {
        let (filter, stable, stop, counters) = (
            filter.clone(),
            stable.clone(),
            stop.clone(),
            counters.clone(),
        );
        let rate = args.churn_per_sec;
        handles.push(thread::spawn(move || {
            control(&filter, &stable, rate, &stop, &counters)
        }));
    }
    let mut last = (Instant::now(), 0u64);
    for second in 1..=args.seconds {
        thread::sleep(Duration::from_secs(1));
        let now = Instant::now();
        let lookups = counters.lookups.load(Ordering::Relaxed);
        let checked = counters.aged_out_checked.load(Ordering::Relaxed).max(1);
        println!(
            "[{second:>3}s] generation {:>4} | lookups {:>7.2} Mpps | live {:>9} | admitted {:>9} | \
             refreshed {:>10} | aged out {:>9} (fpr {:.2e}) | false negatives {}",
            filter.generation(),
            (lookups - last.1) as f64 / now.duration_since(last.0).as_secs_f64() / 1e6,
            filter.len(),
            counters.admitted.load(Ordering::Relaxed),
            counters.refreshed.load(Ordering::Relaxed),
            counters.aged_out_checked.load(Ordering::Relaxed),
            counters.aged_out_false_positives.load(Ordering::Relaxed) as f64 / checked as f64,
            counters.false_negatives.load(Ordering::Relaxed),
        );
        last = (now, lookups);
    }
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.join().expect("thread panicked");
    }
    let false_negatives = counters.false_negatives.load(Ordering::Relaxed);
    let checked = counters.aged_out_checked.load(Ordering::Relaxed);
    let fps = counters.aged_out_false_positives.load(Ordering::Relaxed);
    println!(
        "done: {} flows aged out and checked gone (fpr {:.2e}, bound {:.2e}), false negatives {}, \
         memory {:.1} MiB (fixed)",
        checked,
        fps as f64 / checked.max(1) as f64,
        filter.false_positive_bound(),
        false_negatives,
        filter.memory_usage() as f64 / (1 << 20) as f64,
    );
    if false_negatives != 0 {
        eprintln!("FALSE NEGATIVES: a flow inside its window was not found");
        std::process::exit(1);
    }
}

/// Bursts of long-lived flows (must hit) and never-seen flows.
fn worker(
    id: usize,
    filter: &WindowedCuckooFilter,
    stable: &[FlowKey],
    stop: &AtomicBool,
    counters: &Counters,
) {
    let mut state = mix(id as u64 + 1);
    let mut burst = [FlowKey::from_id(0); BURST];
    let mut out = [false; BURST];
    let mut unknown = NEGATIVE_BASE + (id as u64) * (1 << 40);
    while !stop.load(Ordering::Relaxed) {
        let mut misses = 0;
        for _ in 0..256 {
            for key in burst.iter_mut().step_by(2) {
                state = mix(state);
                *key = stable[state as usize % stable.len()];
            }
            for key in burst.iter_mut().skip(1).step_by(2) {
                unknown += 1;
                *key = FlowKey::from_id(unknown);
            }
            filter.contains_batch(&burst, &mut out);
            misses += out.iter().step_by(2).filter(|&&hit| !hit).count() as u64;
        }
        counters
            .lookups
            .fetch_add(256 * BURST as u64, Ordering::Relaxed);
        counters
            .false_negatives
            .fetch_add(misses, Ordering::Relaxed);
    }
}

/// One short-lived flow: its id and the generations read before and
/// after its last insert (it is tagged with one between them: found while
/// the generation is below `refreshed_in + G`, gone from `tagged_by + G`).
struct Idle {
    flow: FlowKey,
    refreshed_in: u64,
    tagged_by: u64,
}

/// Refreshes the long-lived flows once a generation, admits new flows at
/// `rate` (each refreshed once more in the next generation, then idle),
/// and checks idle flows inside and past their window.
fn control(
    filter: &WindowedCuckooFilter,
    stable: &[FlowKey],
    rate: u64,
    stop: &AtomicBool,
    counters: &Counters,
) {
    let start = Instant::now();
    let mut refreshed_generation = filter.generation();
    let (mut next_id, mut admitted) = (CHURN_BASE, 0u64);
    let mut young: VecDeque<Idle> = VecDeque::new(); // admitted, one more refresh due
    let mut idle: VecDeque<Idle> = VecDeque::new();
    let (mut batch, mut found) = (Vec::new(), Vec::new());
    while !stop.load(Ordering::Relaxed) {
        let generation = filter.generation();
        if generation > refreshed_generation {
            // Their traffic: every long-lived flow, once a generation.
            for chunk in stable.chunks(4096) {
                filter
                    .insert_batch(chunk)
                    .expect("sized for every live flow");
            }
            counters
                .refreshed
                .fetch_add(stable.len() as u64, Ordering::Relaxed);
            // Young flows get their last packet, then go idle.
            while young.front().is_some_and(|f| f.refreshed_in < generation) {
                let mut flow = young.pop_front().expect("checked");
                flow.refreshed_in = filter.generation();
                filter
                    .insert(&flow.flow)
                    .expect("sized for every live flow");
                flow.tagged_by = filter.generation();
                idle.push_back(flow);
            }
            refreshed_generation = generation;
        }
        // New flows, at the configured rate.
        let due = (start.elapsed().as_secs_f64() * rate as f64) as u64;
        if due > admitted {
            let n = (due - admitted).min(1024);
            let before = filter.generation();
            batch.clear();
            batch.extend((0..n).map(|i| FlowKey::from_id(next_id + i)));
            filter
                .insert_batch(&batch)
                .expect("sized for every live flow");
            let after = filter.generation();
            young.extend(batch.iter().map(|&flow| Idle {
                flow,
                refreshed_in: before,
                tagged_by: after,
            }));
            next_id += n;
            admitted += n;
            counters.admitted.store(admitted, Ordering::Relaxed);
        }
        // Idle flows: inside their window they must be found; one window
        // after their last insert they must be gone.
        let generation = filter.generation();
        batch.clear();
        let mut old = 0;
        while idle
            .get(old)
            .is_some_and(|f| f.tagged_by + GENERATIONS <= generation)
        {
            batch.push(idle[old].flow);
            old += 1;
        }
        if old > 0 {
            found.resize(old, false);
            filter.contains_batch(&batch, &mut found);
            counters
                .aged_out_checked
                .fetch_add(old as u64, Ordering::Relaxed);
            let hits = found.iter().filter(|&&hit| hit).count() as u64;
            counters
                .aged_out_false_positives
                .fetch_add(hits, Ordering::Relaxed);
            idle.drain(..old);
        }
        for flow in idle.iter().take(64) {
            let hit = filter.contains(&flow.flow);
            if !hit && filter.generation() < flow.refreshed_in + GENERATIONS {
                counters.false_negatives.fetch_add(1, Ordering::Relaxed);
            }
        }
        thread::sleep(Duration::from_micros(500));
    }
}
