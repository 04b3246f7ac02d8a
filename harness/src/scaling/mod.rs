//! The thread sweep (`cuckoo-harness scaling`): how throughput grows with
//! threads, for `concurrent-cuckoo` and, where they support the operation,
//! `atomic-cuckoo-filter` and `Mutex<cuckoofilter>`, in the same run.
//!
//! Thread counts: 1, 2, 4, ... up to the CPUs this process may use, that
//! count itself, and twice it (oversubscribed); `--threads` overrides.
//! Each thread is pinned to a CPU where the OS allows (`pin.rs`). Parts
//! (`--part`, comma-separated; all by default):
//!
//! * `read`: read-only `contains` and `contains_batch` (bursts of 32) of
//!   absent and of present keys, on an in-cache table and a 1 GiB one
//!   (the peers: single lookups, in-cache table only: filling them to 90%
//!   at 1 GiB takes minutes each);
//! * `mix`: 90/5/5 and 50/25/25 lookup/insert/remove mixes on one shared
//!   filter (the peers on the in-cache table);
//! * `fill`: a fresh table filled to 90% from T threads, with
//!   `insert_batch` (the peers: one insert per key);
//! * `rw`: T readers' lookups while 1 and 2 more threads write in bulk.
//!
//! `--only NAME` keeps the filters whose name contains `NAME`.
//!
//! For every point: M operations/s by the wall clock, the speed-up over one
//! thread, the efficiency per thread (speed-up / T), lookup retries and
//! locked fallbacks per million lookups (`thread_lookup_retries`), and the
//! share of the CPUs the threads got (the machine may be shared).

mod pin;
mod render;
mod runner;
pub(crate) mod work;

use crate::keys::key;
use crate::Options;
use runner::Run;
use std::time::{Duration, Instant};
use work::{with_target, Keys, Kind, Lookup, Mix, Subject, Window};

/// Default table sizes in MiB (`--cache-mib`, `--big-mib`, `--fill-mib`).
/// The in-cache table (8 MiB of buckets) fits the last-level cache of any
/// current server core complex (16 MiB and up) but not one core's L2; the
/// big one is far larger than any last-level cache; the fill table is out
/// of cache but small enough for the peers to fill in seconds.
const CACHE_MIB: u64 = 8;
const BIG_MIB: u64 = 1024;
const FILL_MIB: u64 = 16;
/// `--quick` sizes: a smoke run of seconds.
const QUICK: (u64, u64, u64) = (1, 16, 4);

/// The mixes of the issue: the dataplane's 90/5/5 and a write-heavy one.
const MIXES: [Mix; 2] = [
    Mix {
        lookup: 90,
        insert: 5,
    },
    Mix {
        lookup: 50,
        insert: 25,
    },
];

/// Bytes per bucket of every cuckoo filter here (four 16-bit slots; the
/// 8-bit `cuckoofilter` gets the same slot count in half the bytes).
const BUCKET_BYTES: u64 = 8;

/// One measured point.
pub struct Point {
    /// The table the point concerns (also part of its section).
    pub section: String,
    pub filter: &'static str,
    pub threads: usize,
    /// Writer threads beside the `threads` measured ones.
    pub writers: usize,
    /// The run with the highest rate (wall clock).
    pub run: Run,
    /// Every run's M ops/s (wall clock), ascending.
    pub rates: Vec<f64>,
    /// Lookups, failed optimistic attempts and locked fallbacks of every
    /// run together.
    pub lookups: u64,
    pub retries: u64,
    pub locked: u64,
}

/// What the sweep was asked to do.
pub struct Plan {
    pub threads: Vec<usize>,
    pub cpus: Vec<usize>,
    pub physical: Option<usize>,
    pub dur: Duration,
    /// Runs per point (the best is reported).
    pub reps: usize,
    pub cache_slots: u64,
    pub big_slots: u64,
    pub fill_slots: u64,
    pub parts: Vec<String>,
    /// The filters to run (`--only NAME` keeps those whose name contains it).
    pub kinds: Vec<Kind>,
}

impl Plan {
    fn from(opts: &Options) -> Plan {
        let cpus = pin::allowed_cpus();
        let p = cpus.len();
        let threads = if opts.threads_given {
            opts.threads.clone()
        } else {
            let mut t: Vec<usize> = (0..).map(|i| 1 << i).take_while(|&t| t < p).collect();
            t.push(p);
            t.push(2 * p);
            t
        };
        let (cache, big, fill) = if opts.quick {
            QUICK
        } else {
            (CACHE_MIB, BIG_MIB, FILL_MIB)
        };
        let slots = |mib: Option<u64>, default: u64| {
            let bytes = mib.unwrap_or(default).max(1) << 20;
            (bytes / BUCKET_BYTES).next_power_of_two() * 4
        };
        let default_secs = if opts.quick { 0.1 } else { 0.5 };
        Plan {
            physical: pin::physical_cores(&cpus),
            cpus,
            threads,
            dur: Duration::from_secs_f64(opts.seconds.unwrap_or(default_secs)),
            reps: opts.reps.unwrap_or(if opts.quick { 1 } else { 3 }),
            cache_slots: slots(opts.cache_mib, cache),
            big_slots: slots(opts.big_mib, big),
            fill_slots: slots(opts.fill_mib, fill),
            parts: opts
                .part
                .as_deref()
                .unwrap_or("read,mix,fill,rw")
                .split(',')
                .map(str::to_string)
                .collect(),
            kinds: Kind::ALL
                .into_iter()
                .filter(|k| {
                    opts.only
                        .as_ref()
                        .is_none_or(|o| k.name().contains(o.as_str()))
                })
                .collect(),
        }
    }

    fn runs(&self, part: &str) -> bool {
        self.parts.iter().any(|p| p == part)
    }
}

/// Table label: "8 MiB" for `slots` 16-bit slots.
fn mib(slots: u64) -> String {
    format!("{} MiB", (slots * 2) >> 20)
}

/// Keys stored at 90% load.
fn stored(slots: u64) -> u64 {
    slots * 9 / 10
}

/// A filter of `slots` slots filled to 90% (from every CPU where it is
/// concurrent, with one thread for the `Mutex` one) and its window.
fn prepared(kind: Kind, slots: u64, plan: &Plan) -> (Subject, Window) {
    let subject = kind.build(slots);
    let n = stored(slots);
    let threads = if kind == Kind::Locked {
        1
    } else {
        plan.cpus.len()
    };
    let started = Instant::now();
    let run = with_target!(&subject, f => work::fill(f, n, threads, &plan.cpus, work::FILL_CHUNK));
    eprintln!(
        "  filled {} ({}) with {} keys in {:.1} s",
        kind.name(),
        mib(slots),
        run.main.ops,
        started.elapsed().as_secs_f64()
    );
    assert!(
        run.main.ops >= n - n / 1000,
        "{} refused keys at 90% load",
        kind.name()
    );
    // A spot check that the fill stored what it claims.
    let found = (0..1000u64)
        .map(|i| key(i * (n / 1000)))
        .filter(|&k| with_target!(&subject, f => work::Target::contains(f, k)))
        .count();
    assert!(found >= 999, "{}: a stored key is missing", kind.name());
    (subject, Window::new(n))
}

/// Measures `measure(threads)` for each of `plan.threads`, `reps` times,
/// round-robin (1, 2, 4, 1, 2, 4, ...: a slow spell of a shared machine
/// hits every thread count, not one), and keeps each thread count's best
/// run with every run's rate.
fn sweep(
    plan: &Plan,
    points: &mut Vec<Point>,
    section: &str,
    filter: &'static str,
    writers: usize,
    reps: usize,
    mut measure: impl FnMut(usize) -> Run,
) {
    let mut runs: Vec<Vec<Run>> = plan.threads.iter().map(|_| Vec::new()).collect();
    for _ in 0..reps {
        for (i, &t) in plan.threads.iter().enumerate() {
            runs[i].push(measure(t));
        }
    }
    for (runs, &t) in runs.into_iter().zip(&plan.threads) {
        let rate = |r: &Run| r.main.ops as f64 / r.secs / 1e6;
        let mut rates: Vec<f64> = runs.iter().map(rate).collect();
        rates.sort_by(f64::total_cmp);
        let lookups = runs.iter().map(|r| r.main.lookups).sum();
        let retries = runs.iter().map(|r| r.main.retries).sum();
        let locked = runs.iter().map(|r| r.main.locked).sum();
        let best = runs
            .into_iter()
            .max_by(|a, b| rate(a).total_cmp(&rate(b)))
            .expect("at least one run");
        eprintln!(
            "  {section}: {filter}, {t} threads{}: {:.1} M ops/s (best of {reps}; runs {:?})",
            if writers > 0 {
                format!(" + {writers} writers")
            } else {
                String::new()
            },
            rate(&best),
            rates
                .iter()
                .map(|r| (r * 10.0).round() / 10.0)
                .collect::<Vec<_>>()
        );
        points.push(Point {
            section: section.to_string(),
            filter,
            threads: t,
            writers,
            run: best,
            rates,
            lookups,
            retries,
            locked,
        });
    }
}

/// Read-only sections on one table: single and batched lookups (batched
/// for filters that have them), absent and present keys.
fn read_part(
    plan: &Plan,
    points: &mut Vec<Point>,
    kind: Kind,
    table: &str,
    f: &Subject,
    win: &Window,
) {
    for lookup in [Lookup::Batch, Lookup::Single] {
        if lookup == Lookup::Batch && !kind.batches() {
            continue;
        }
        for keys in [Keys::Absent, Keys::Present] {
            let section = format!("read-only {}, {}, {table}", lookup.label(), keys.label());
            sweep(
                plan,
                points,
                &section,
                kind.name(),
                0,
                plan.reps,
                |t| with_target!(f, f => work::read_only(f, win, t, &plan.cpus, plan.dur, lookup, keys)),
            );
        }
    }
}

fn mix_part(
    plan: &Plan,
    points: &mut Vec<Point>,
    kind: Kind,
    table: &str,
    f: &Subject,
    win: &Window,
) {
    for mix in MIXES {
        let section = format!(
            "mix {} (lookups of keys half present), {table}",
            mix.label()
        );
        sweep(
            plan,
            points,
            &section,
            kind.name(),
            0,
            plan.reps,
            |t| with_target!(f, f => work::mixed(f, win, t, &plan.cpus, plan.dur, mix)),
        );
    }
}

fn rw_part(
    plan: &Plan,
    points: &mut Vec<Point>,
    kind: Kind,
    table: &str,
    f: &Subject,
    win: &Window,
) {
    for writers in [1, 2] {
        let section = format!(
            "readers (contains, keys half present) beside {writers} bulk writer{}, {table}",
            if writers > 1 { "s" } else { "" }
        );
        sweep(
            plan,
            points,
            &section,
            kind.name(),
            writers,
            plan.reps,
            |t| with_target!(f, f => work::readers_writers(f, win, t, writers, &plan.cpus, plan.dur)),
        );
    }
}

fn fill_part(plan: &Plan, points: &mut Vec<Point>, kind: Kind) {
    // concurrent-cuckoo twice: calls of 65536 keys (each chunk of a call
    // takes every stripe lock while no other thread waits for one) and of
    // 256 (pair locks, as a dataplane's bursts).
    let chunks: &[u64] = if kind == Kind::Ours {
        &[work::FILL_CHUNK, work::FILL_BURST]
    } else {
        &[work::FILL_CHUNK]
    };
    for &chunk in chunks {
        let section = if kind == Kind::Ours && chunk != work::FILL_CHUNK {
            format!(
                "bulk fill to 90% ({}; concurrent-cuckoo: insert_batch of {chunk} keys)",
                mib(plan.fill_slots)
            )
        } else {
            format!(
                "bulk fill to 90% ({}; concurrent-cuckoo: insert_batch of {} keys)",
                mib(plan.fill_slots),
                work::FILL_CHUNK
            )
        };
        // The peers take seconds a fill: one run each.
        let reps = if kind == Kind::Ours { plan.reps } else { 1 };
        sweep(plan, points, &section, kind.name(), 0, reps, |t| {
            let f = kind.build(plan.fill_slots);
            let n = stored(plan.fill_slots);
            with_target!(&f, f => work::fill(f, n, t, &plan.cpus, chunk))
        });
    }
}

pub fn run(opts: &Options) -> String {
    let started = Instant::now();
    let plan = Plan::from(opts);
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let mut points = Vec::new();
    let cache = format!("in cache ({})", mib(plan.cache_slots));
    let big = format!("{} table", mib(plan.big_slots));
    eprintln!(
        "scaling: threads {:?} on CPUs {:?}, {:.2} s per point",
        plan.threads,
        plan.cpus,
        plan.dur.as_secs_f64()
    );
    // Every filter on the in-cache table: read-only, mixes, readers
    // beside writers, one filter at a time (the same filter throughout,
    // its load kept at 90% by the window).
    if plan.runs("read") || plan.runs("mix") || plan.runs("rw") {
        for &kind in &plan.kinds {
            let (f, win) = prepared(kind, plan.cache_slots, &plan);
            if plan.runs("read") {
                read_part(&plan, &mut points, kind, &cache, &f, &win);
            }
            if plan.runs("mix") {
                mix_part(&plan, &mut points, kind, &cache, &f, &win);
            }
            if plan.runs("rw") {
                rw_part(&plan, &mut points, kind, &cache, &f, &win);
            }
        }
    }
    if (plan.runs("read") || plan.runs("mix")) && plan.kinds.contains(&Kind::Ours) {
        let (f, win) = prepared(Kind::Ours, plan.big_slots, &plan);
        if plan.runs("read") {
            read_part(&plan, &mut points, Kind::Ours, &big, &f, &win);
        }
        if plan.runs("mix") {
            mix_part(&plan, &mut points, Kind::Ours, &big, &f, &win);
        }
    }
    if plan.runs("fill") {
        for &kind in &plan.kinds {
            fill_part(&plan, &mut points, kind);
        }
    }
    let mut out = render::report(&plan, &points, opts, load.trim());
    if let Some(dir) = &opts.svg_dir {
        out += &render::plots(&plan, &points, dir);
    }
    out += &format!(
        "\nTotal run time: {:.0} s.\n",
        started.elapsed().as_secs_f64()
    );
    out
}
