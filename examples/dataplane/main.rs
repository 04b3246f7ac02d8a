//! A router dataplane in miniature.
//!
//! Worker threads classify bursts of 32 packets against a shared filter of
//! millions of active flows (5-tuples), while a control thread admits new
//! flows and expires old ones at a steady rate. Once a second it prints
//! lookup throughput, churn, load factor, the measured false-positive rate
//! and the false-negative count (which must stay 0: a false negative would be
//! a dropped flow).
//!
//! The control thread works in batches, as a control plane does: each round
//! it admits its new flows with one `insert_batch`, checks the expiring
//! ones with `contains_batch` and expires them with one `remove_batch`.
//!
//! With `--scalable`, the filter is a `ScalableCuckooFilter` deliberately
//! sized for 1/16 of the flows: loading grows it level by level, and each
//! line shows the levels, the load and the false-positive bound.
//!
//! With `--window SECONDS`, flows age instead of being removed: the filter
//! is a `WindowedCuckooFilter`, a flow stays while its traffic refreshes it
//! and is forgotten once idle for the window (`windowed.rs`).
//!
//! Run: `cargo run --release --example dataplane [-- --seconds 10 --flows 8000000 --workers 2 --churn 200000 --scalable | --window 2]`

mod windowed;

use concurrent_cuckoo::{BatchInsertError, CuckooFilter, ScalableCuckooFilter};
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
    scalable: bool,
    /// `--window SECONDS`: flow aging over this window.
    window: Option<Duration>,
}

fn parse_args() -> Args {
    let mut args = Args {
        seconds: 10,
        flows: 8_000_000,
        workers: 2,
        churn_per_sec: 200_000,
        scalable: false,
        window: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--scalable" {
            args.scalable = true;
            continue;
        }
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
            "--window" => args.window = Some(Duration::from_secs(value().max(1))),
            other => panic!(
                "unknown flag {other}; flags: --seconds --flows --workers --churn --scalable --window"
            ),
        }
    }
    args
}

/// What the demo needs of a filter, so one dataplane runs on either kind.
trait FlowFilter: Send + Sync + 'static {
    fn contains_batch(&self, keys: &[FlowKey], out: &mut [bool]);
    fn insert_batch(&self, keys: &[FlowKey]) -> Result<(), BatchInsertError>;
    fn remove_batch(&self, keys: &[FlowKey], removed: &mut [bool]);
    fn len(&self) -> usize;
    fn memory_usage(&self) -> usize;
    fn false_positive_bound(&self) -> f64;
    /// The per-second state: load, and relocations or levels.
    fn state(&self) -> String;
}

impl FlowFilter for CuckooFilter {
    fn contains_batch(&self, keys: &[FlowKey], out: &mut [bool]) {
        CuckooFilter::contains_batch(self, keys, out)
    }
    fn insert_batch(&self, keys: &[FlowKey]) -> Result<(), BatchInsertError> {
        CuckooFilter::insert_batch(self, keys)
    }
    fn remove_batch(&self, keys: &[FlowKey], removed: &mut [bool]) {
        CuckooFilter::remove_batch(self, keys, removed)
    }
    fn len(&self) -> usize {
        CuckooFilter::len(self)
    }
    fn memory_usage(&self) -> usize {
        CuckooFilter::memory_usage(self)
    }
    fn false_positive_bound(&self) -> f64 {
        CuckooFilter::false_positive_bound(self)
    }
    fn state(&self) -> String {
        format!(
            "load {:.4} | relocations {}",
            self.load_factor(),
            self.relocations()
        )
    }
}

impl FlowFilter for ScalableCuckooFilter {
    fn contains_batch(&self, keys: &[FlowKey], out: &mut [bool]) {
        ScalableCuckooFilter::contains_batch(self, keys, out)
    }
    fn insert_batch(&self, keys: &[FlowKey]) -> Result<(), BatchInsertError> {
        ScalableCuckooFilter::insert_batch(self, keys)
    }
    fn remove_batch(&self, keys: &[FlowKey], removed: &mut [bool]) {
        for (key, out) in keys.iter().zip(removed) {
            *out = ScalableCuckooFilter::remove(self, key).is_removed();
        }
    }
    fn len(&self) -> usize {
        ScalableCuckooFilter::len(self)
    }
    fn memory_usage(&self) -> usize {
        ScalableCuckooFilter::memory_usage(self)
    }
    fn false_positive_bound(&self) -> f64 {
        self.false_positive_bound()
    }
    fn state(&self) -> String {
        format!(
            "levels {} {:?} | load {:.4} | {:.1} bits/flow",
            self.levels(),
            self.level_fingerprint_bits(),
            self.load_factor(),
            self.memory_usage() as f64 * 8.0 / self.len().max(1) as f64
        )
    }
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
    if let Some(window) = args.window {
        return windowed::run(&args, window);
    }
    // Room for the long-lived flows plus the churning ones in flight.
    let churn_window = (args.churn_per_sec as usize).max(1);
    let wanted = args.flows + churn_window;
    if args.scalable {
        // Deliberately too small: loading grows it about 16x.
        let filter = ScalableCuckooFilter::with_capacity((wanted / 16).max(1));
        let first = format!(
            "scalable filter sized for {} flows ({:.1} MiB, {}-bit first level), grows as needed",
            (wanted / 16).max(1),
            filter.memory_usage() as f64 / (1 << 20) as f64,
            filter.level_fingerprint_bits()[0],
        );
        run(&args, churn_window, Arc::new(filter), first);
    } else {
        let filter = CuckooFilter::with_capacity(wanted);
        let first = format!(
            "filter {:.1} MiB, {}-bit fingerprints",
            filter.memory_usage() as f64 / (1 << 20) as f64,
            filter.fingerprint_bits(),
        );
        run(&args, churn_window, Arc::new(filter), first);
    }
}

fn run<F: FlowFilter>(args: &Args, churn_window: usize, filter: Arc<F>, described: String) {
    println!(
        "dataplane: {} long-lived flows, {} workers, churn {}/s, {} s; {described}; probe {}",
        args.flows,
        args.workers,
        args.churn_per_sec,
        args.seconds,
        concurrent_cuckoo::probe_backend(),
    );

    let start = Instant::now();
    let stable: Arc<Vec<FlowKey>> =
        Arc::new((0..args.flows as u64).map(FlowKey::from_id).collect());
    for chunk in stable.chunks(4096) {
        if let Err(e) = filter.insert_batch(chunk) {
            eprintln!("loading the flows failed: {e}");
            std::process::exit(2);
        }
    }
    println!(
        "loaded {} flows in {:.2} s: {}",
        filter.len(),
        start.elapsed().as_secs_f64(),
        filter.state()
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
            worker(w, &*filter, &stable, &stop, &counters)
        }));
    }
    {
        let (filter, stop, counters) = (filter.clone(), stop.clone(), counters.clone());
        let rate = args.churn_per_sec;
        handles.push(thread::spawn(move || {
            control(&*filter, rate, churn_window, &stop, &counters)
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
            "[{second:>3}s] lookups {:>7.2} Mpps | churn {:>7.0} ops/s | fpr {:.2e} | false negatives {} | {}",
            (lookups - last.1) as f64 / dt / 1e6,
            (churn - last.2) as f64 / dt,
            fpr,
            total_false_negatives,
            filter.state(),
        );
        last = (now, lookups, churn);
    }
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.join().expect("thread panicked");
    }
    println!(
        "done in {:.1} s: {} lookups, measured fpr {:.2e} (bound {:.2e}), false negatives {}, {:.1} MiB",
        start.elapsed().as_secs_f64(),
        counters.lookups.load(Ordering::Relaxed),
        counters.false_positives.load(Ordering::Relaxed) as f64
            / counters.negative_lookups.load(Ordering::Relaxed).max(1) as f64,
        filter.false_positive_bound(),
        total_false_negatives,
        filter.memory_usage() as f64 / (1 << 20) as f64,
    );
    if total_false_negatives != 0 {
        eprintln!("FALSE NEGATIVES: an active flow was not found");
        std::process::exit(1);
    }
}

/// Classifies bursts: half the packets belong to long-lived flows (must
/// hit), half to unknown flows (hits are false positives).
fn worker<F: FlowFilter + ?Sized>(
    id: usize,
    filter: &F,
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

/// Admits new flows and expires the oldest, `rate` of each a second,
/// keeping `window / 2` churning flows alive. Works in rounds of up to 1024
/// flows: one `insert_batch` of the new ones, then a `contains_batch` of the
/// expiring ones (each must still be found) and one `remove_batch`.
fn control<F: FlowFilter + ?Sized>(
    filter: &F,
    rate: u64,
    window: usize,
    stop: &AtomicBool,
    counters: &Counters,
) {
    let mut live: VecDeque<FlowKey> = VecDeque::with_capacity(window);
    let mut next_id = CHURN_BASE;
    let start = Instant::now();
    let mut done = 0u64;
    let (mut admitted, mut expiring) = (Vec::new(), Vec::new());
    let (mut found, mut removed) = (Vec::new(), Vec::new());
    while !stop.load(Ordering::Relaxed) {
        let due = (start.elapsed().as_secs_f64() * rate as f64) as u64;
        if done >= due {
            thread::sleep(Duration::from_micros(200));
            continue;
        }
        let round = (due - done).min(1024) as usize;
        admitted.clear();
        admitted.extend((0..round as u64).map(|i| FlowKey::from_id(next_id + i)));
        next_id += round as u64;
        filter
            .insert_batch(&admitted)
            .expect("sized for the churn window");
        live.extend(admitted.iter().copied());
        let expire = live.len().saturating_sub(window / 2);
        expiring.clear();
        expiring.extend(live.drain(..expire));
        found.resize(expiring.len(), false);
        filter.contains_batch(&expiring, &mut found);
        let missed = found.iter().filter(|&&f| !f).count() as u64;
        counters
            .false_negatives
            .fetch_add(missed, Ordering::Relaxed);
        removed.resize(expiring.len(), false);
        filter.remove_batch(&expiring, &mut removed);
        assert!(removed.iter().all(|&r| r), "an admitted flow vanished");
        done += round as u64;
        counters.churn_ops.store(done * 2, Ordering::Relaxed);
    }
}
