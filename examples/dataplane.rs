//! A router dataplane in miniature.
//!
//! Worker threads classify bursts of 32 packets against a shared filter of
//! millions of active flows (5-tuples), while a control thread admits new
//! flows and expires old ones at a steady rate. Once a second it prints
//! lookup throughput, churn, load factor, the measured false-positive rate
//! and the false-negative count (which must stay 0: a false negative would be
//! a dropped flow).
//!
//! Run: `cargo run --release --example dataplane [-- --seconds 10 --flows 8000000 --workers 2]`

use concurrent_cuckoo::CuckooFilter;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// An IPv4 5-tuple.
#[derive(Clone, Copy, Hash, PartialEq, Eq, Debug)]
struct FlowKey {
    src: u32,
    dst: u32,
    src_port: u16,
    dst_port: u16,
    proto: u8,
}

impl FlowKey {
    /// A deterministic, well-spread flow for an id (distinct ids give
    /// distinct flows: the mapping is a bijection on the 64-bit id).
    fn from_id(id: u64) -> Self {
        let x = mix(id);
        let y = mix(id ^ 0xA5A5_A5A5_A5A5_A5A5);
        Self {
            src: 0x0A00_0000 | (x as u32 & 0x00FF_FFFF), // 10.0.0.0/8 clients
            dst: (x >> 32) as u32,
            src_port: 1024 + (y as u16 % 64_000),
            dst_port: [80, 443, 53, 8080, 22][(y >> 16) as usize % 5],
            proto: if (y >> 24) & 3 == 0 { 17 } else { 6 },
        }
    }
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

struct Args {
    seconds: u64,
    flows: usize,
    workers: usize,
    churn_per_sec: u64,
}

fn parse_args() -> Args {
    let mut args = Args {
        seconds: 10,
        flows: 8_000_000,
        workers: 2,
        churn_per_sec: 200_000,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .and_then(|v| v.parse::<u64>().ok())
                .expect("flag needs a number")
        };
        match flag.as_str() {
            "--seconds" => args.seconds = value(),
            "--flows" => args.flows = value() as usize,
            "--workers" => args.workers = value() as usize,
            "--churn" => args.churn_per_sec = value(),
            other => panic!("unknown flag {other}; flags: --seconds --flows --workers --churn"),
        }
    }
    args
}

#[derive(Default)]
struct Counters {
    lookups: AtomicU64,
    negative_lookups: AtomicU64,
    false_positives: AtomicU64,
    false_negatives: AtomicU64,
    churn_ops: AtomicU64,
}

const BURST: usize = 32;
/// Ids at or above this are never inserted: lookups of them measure FPR.
const NEGATIVE_BASE: u64 = 1 << 62;
/// Ids of flows the control thread admits and expires.
const CHURN_BASE: u64 = 1 << 61;

fn main() {
    let args = parse_args();
    // Room for the long-lived flows plus the churning ones in flight.
    let churn_window = (args.churn_per_sec as usize).max(1);
    let filter = Arc::new(CuckooFilter::with_capacity(args.flows + churn_window));
    println!(
        "dataplane: {} long-lived flows, {} workers, churn {}/s, {} s; filter {:.1} MiB, {}-bit fingerprints, probe {}",
        args.flows,
        args.workers,
        args.churn_per_sec,
        args.seconds,
        filter.memory_usage() as f64 / (1 << 20) as f64,
        filter.fingerprint_bits(),
        concurrent_cuckoo::probe_backend(),
    );

    let start = Instant::now();
    let stable: Arc<Vec<FlowKey>> =
        Arc::new((0..args.flows as u64).map(FlowKey::from_id).collect());
    for key in stable.iter() {
        filter.insert(key).expect("sized for every flow");
    }
    println!(
        "loaded {} flows in {:.2} s (load factor {:.3})",
        filter.len(),
        start.elapsed().as_secs_f64(),
        filter.load_factor()
    );

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
        let (filter, stop, counters) = (filter.clone(), stop.clone(), counters.clone());
        let rate = args.churn_per_sec;
        handles.push(thread::spawn(move || {
            control(&filter, rate, churn_window, &stop, &counters)
        }));
    }

    let mut last = (Instant::now(), 0u64, 0u64);
    let mut total_false_negatives = 0;
    for second in 1..=args.seconds {
        thread::sleep(Duration::from_secs(1));
        let now = Instant::now();
        let lookups = counters.lookups.load(Ordering::Relaxed);
        let churn = counters.churn_ops.load(Ordering::Relaxed);
        let dt = now.duration_since(last.0).as_secs_f64();
        let negatives = counters.negative_lookups.load(Ordering::Relaxed).max(1);
        let fpr = counters.false_positives.load(Ordering::Relaxed) as f64 / negatives as f64;
        total_false_negatives = counters.false_negatives.load(Ordering::Relaxed);
        println!(
            "[{second:>3}s] lookups {:>7.2} Mpps | churn {:>7.0} ops/s | load {:.4} | fpr {:.2e} | false negatives {} | relocations {}",
            (lookups - last.1) as f64 / dt / 1e6,
            (churn - last.2) as f64 / dt,
            filter.load_factor(),
            fpr,
            total_false_negatives,
            filter.relocations(),
        );
        last = (now, lookups, churn);
    }
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.join().expect("thread panicked");
    }
    println!(
        "done in {:.1} s: {} lookups, measured fpr {:.2e} (bound {:.2e}), false negatives {}",
        start.elapsed().as_secs_f64(),
        counters.lookups.load(Ordering::Relaxed),
        counters.false_positives.load(Ordering::Relaxed) as f64
            / counters.negative_lookups.load(Ordering::Relaxed).max(1) as f64,
        filter.false_positive_bound(),
        total_false_negatives
    );
    if total_false_negatives != 0 {
        eprintln!("FALSE NEGATIVES: an active flow was not found");
        std::process::exit(1);
    }
}

/// Classifies bursts: half the packets belong to long-lived flows (must
/// hit), half to unknown flows (hits are false positives).
fn worker(
    id: usize,
    filter: &CuckooFilter,
    stable: &[FlowKey],
    stop: &AtomicBool,
    counters: &Counters,
) {
    let mut state = mix(id as u64 + 1);
    let mut burst = [FlowKey::from_id(0); BURST];
    let mut known = [false; BURST];
    let mut out = [false; BURST];
    let mut negative_id = NEGATIVE_BASE + (id as u64) * (1 << 40);
    let (mut lookups, mut negatives, mut fps, mut fns) = (0u64, 0u64, 0u64, 0u64);
    while !stop.load(Ordering::Relaxed) {
        for _ in 0..1024 {
            for i in 0..BURST {
                state = mix(state);
                known[i] = state & 1 == 0;
                burst[i] = if known[i] {
                    stable[(state >> 1) as usize % stable.len()]
                } else {
                    negative_id += 1;
                    FlowKey::from_id(negative_id)
                };
            }
            filter.contains_batch(&burst, &mut out);
            for i in 0..BURST {
                match (known[i], out[i]) {
                    (true, false) => fns += 1,
                    (false, true) => fps += 1,
                    _ => {}
                }
                negatives += u64::from(!known[i]);
            }
            lookups += BURST as u64;
        }
        counters.lookups.fetch_add(lookups, Ordering::Relaxed);
        counters
            .negative_lookups
            .fetch_add(negatives, Ordering::Relaxed);
        counters.false_positives.fetch_add(fps, Ordering::Relaxed);
        counters.false_negatives.fetch_add(fns, Ordering::Relaxed);
        (lookups, negatives, fps, fns) = (0, 0, 0, 0);
    }
}

/// Admits a new flow and expires the oldest one, `rate` times a second,
/// keeping `window` churning flows alive; checks each is found before expiry.
fn control(
    filter: &CuckooFilter,
    rate: u64,
    window: usize,
    stop: &AtomicBool,
    counters: &Counters,
) {
    let mut live: VecDeque<FlowKey> = VecDeque::with_capacity(window);
    let mut next_id = CHURN_BASE;
    let start = Instant::now();
    let mut done = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let due = (start.elapsed().as_secs_f64() * rate as f64) as u64;
        if done >= due {
            thread::sleep(Duration::from_micros(200));
            continue;
        }
        let batch_end = due.min(done + 1024);
        while done < batch_end {
            let key = FlowKey::from_id(next_id);
            next_id += 1;
            filter.insert(&key).expect("sized for the churn window");
            live.push_back(key);
            if live.len() > window / 2 {
                let old = live.pop_front().expect("non-empty");
                if !filter.contains(&old) {
                    counters.false_negatives.fetch_add(1, Ordering::Relaxed);
                }
                assert!(filter.remove(&old), "an admitted flow vanished");
            }
            done += 1;
        }
        counters.churn_ops.store(done * 2, Ordering::Relaxed);
    }
}
