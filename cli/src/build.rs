//! `ccf build`: items from files into a filter, on every core, written
//! atomically.
//!
//! The reader (this thread) cuts the input into batches of whole lines; the
//! insert threads each take a batch, split it into items and hand them to
//! the library's `insert_batch` (hashing a block ahead and prefetching
//! buckets), so parsing and inserting run in parallel and the filter,
//! shared through `&self`, takes every thread's inserts at once.

use crate::cli::BuildArgs;
use crate::fail::{Context, Failure, Result};
use crate::input::{self, Batch, ColumnRef, Format};
use crate::progress::{self, thousands};
use concurrent_cuckoo::{BatchInsertError, CuckooFilter, InsertError, ScalableCuckooFilter};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{mpsc, Mutex};
use std::time::Instant;

/// First level of a growing filter when `--capacity` is not given.
const DEFAULT_INITIAL_CAPACITY: usize = 1 << 20;

/// The filter being built.
// One per run, never moved around: boxing the larger variant would only
// add an indirection to every insert.
#[allow(clippy::large_enum_variant)]
enum Target {
    Fixed(CuckooFilter),
    Grow(ScalableCuckooFilter),
}

impl Target {
    fn new(args: &BuildArgs) -> Result<Self> {
        let built = if args.grow {
            let mut b = ScalableCuckooFilter::builder()
                .initial_capacity(args.capacity.unwrap_or(DEFAULT_INITIAL_CAPACITY));
            if let Some(rate) = args.error_rate {
                b = b.false_positive_rate(rate);
            }
            if let Some(seed) = args.seed {
                b = b.seed(seed);
            }
            b.build().map(Self::Grow)
        } else {
            let capacity = args.capacity.ok_or_else(|| {
                Failure::new(
                    "give the filter a size: --capacity N (a fixed filter) \
                     or --grow (a growing one)",
                )
            })?;
            let mut b = CuckooFilter::builder().capacity(capacity);
            if let Some(rate) = args.error_rate {
                b = b.false_positive_rate(rate);
            }
            if let Some(bits) = args.fingerprint_bits {
                b = b.fingerprint_bits(bits);
            }
            if let Some(seed) = args.seed {
                b = b.seed(seed);
            }
            b.build().map(Self::Fixed)
        };
        built.context(|| "cannot make the filter".into())
    }

    fn insert_batch(&self, keys: &[&[u8]]) -> std::result::Result<(), BatchInsertError> {
        match self {
            Self::Fixed(f) => f.insert_batch(keys),
            Self::Grow(f) => f.insert_batch(keys),
        }
    }

    fn insert_unique(&self, key: &[u8]) -> std::result::Result<bool, InsertError> {
        match self {
            Self::Fixed(f) => f.insert_unique(key),
            Self::Grow(f) => f.insert_unique(key),
        }
    }

    fn len(&self) -> usize {
        match self {
            Self::Fixed(f) => f.len(),
            Self::Grow(f) => f.len(),
        }
    }

    fn capacity(&self) -> usize {
        match self {
            Self::Fixed(f) => f.capacity(),
            Self::Grow(f) => f.capacity(),
        }
    }

    fn write_to_path(&self, path: &std::path::Path) -> std::io::Result<()> {
        match self {
            Self::Fixed(f) => f.write_to_path(path),
            Self::Grow(f) => f.write_to_path(path),
        }
    }

    fn describe(&self) -> String {
        match self {
            Self::Fixed(f) => format!(
                "a fixed filter, {}-bit fingerprints, load {:.1}%, false-positive bound {}",
                f.fingerprint_bits(),
                100.0 * f.load_factor(),
                percent(f.false_positive_bound())
            ),
            Self::Grow(f) => format!(
                "a growing filter, {} level(s), load {:.1}%, false-positive bound {}",
                f.levels(),
                100.0 * f.load_factor(),
                percent(f.false_positive_rate_bound())
            ),
        }
    }
}

fn percent(p: f64) -> String {
    format!("{:.4}%", 100.0 * p)
}

/// What the insert threads did, summed.
#[derive(Default)]
struct Counts {
    /// Items read (non-empty lines or fields).
    items: AtomicU64,
    /// `--unique`: items already present, skipped.
    duplicates: AtomicU64,
    /// Items refused because the key already had the most copies a filter
    /// keeps (8 for a fixed filter).
    refused: AtomicU64,
}

/// Why the insert threads stopped early.
struct Stop {
    flag: AtomicBool,
    error: Mutex<Option<Failure>>,
}

impl Stop {
    fn set(&self, failure: Failure) {
        let mut error = self.error.lock().unwrap_or_else(|e| e.into_inner());
        error.get_or_insert(failure);
        self.flag.store(true, Relaxed);
    }

    fn is_set(&self) -> bool {
        self.flag.load(Relaxed)
    }
}

pub fn run(args: &BuildArgs) -> Result<()> {
    let format = match &args.column {
        None => Format::Lines,
        Some(c) => Format::Column {
            column: ColumnRef::parse(c)?,
            header: args.header,
            delimiter: match args.delimiter {
                None => None,
                Some(c) if c.is_ascii() => Some(c as u8),
                Some(c) => {
                    return Err(Failure::new(format!(
                        "--delimiter {c:?}: only an ASCII character"
                    )))
                }
            },
        },
    };
    let threads = match args.threads {
        Some(0) => return Err(Failure::new("--threads: at least 1")),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let target = Target::new(args)?;
    let started = Instant::now();
    let bar = progress::bytes(input::total_size(&args.inputs), args.quiet);
    let counts = Counts::default();
    let stop = Stop {
        flag: AtomicBool::new(false),
        error: Mutex::new(None),
    };
    let (tx, rx) = mpsc::sync_channel::<Batch>(threads * 2);
    let rx = Mutex::new(rx);
    let read = std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| insert_worker(&rx, &target, args, &counts, &stop));
        }
        let read = input::read_all(&args.inputs, &format, args.max_line, &bar, |batch| {
            let items = counts.items.load(Relaxed);
            let rate = items as f64 / started.elapsed().as_secs_f64().max(1e-3);
            bar.set_message(format!(
                "{} items, {} items/s",
                thousands(items),
                thousands(rate as u64)
            ));
            !stop.is_set() && tx.send(batch).is_ok()
        });
        drop(tx);
        read
    });
    bar.finish_and_clear();
    let stopped = stop.error.into_inner().unwrap_or_else(|e| e.into_inner());
    if let Some(failure) = stopped {
        return Err(failure);
    }
    read?;
    let inserted_in = started.elapsed();
    target
        .write_to_path(&args.output)
        .context(|| format!("cannot write {}", args.output.display()))?;
    let total = started.elapsed();
    if !args.quiet {
        let items = counts.items.load(Relaxed);
        let stored = target.len() as u64;
        let file_size = std::fs::metadata(&args.output).map_or(0, |m| m.len());
        println!("wrote {}: {}", args.output.display(), target.describe());
        println!("  items read     {}", thousands(items));
        println!(
            "  stored         {} (capacity {})",
            thousands(stored),
            thousands(target.capacity() as u64)
        );
        if args.unique {
            println!(
                "  duplicates     {} (already present, skipped)",
                thousands(counts.duplicates.load(Relaxed))
            );
        }
        println!(
            "  refused        {} (a key's copies were at the limit)",
            thousands(counts.refused.load(Relaxed))
        );
        println!(
            "  file           {} ({:.2} bytes per stored item)",
            progress::size(file_size),
            file_size as f64 / stored.max(1) as f64
        );
        println!(
            "  time           {:.2} s (read and insert {:.2} s, write {:.2} s), {} items/s",
            total.as_secs_f64(),
            inserted_in.as_secs_f64(),
            (total - inserted_in).as_secs_f64(),
            thousands((items as f64 / total.as_secs_f64().max(1e-9)) as u64)
        );
    }
    Ok(())
}

/// One insert thread: takes batches until the reader is done or someone
/// failed.
fn insert_worker(
    rx: &Mutex<mpsc::Receiver<Batch>>,
    target: &Target,
    args: &BuildArgs,
    counts: &Counts,
    stop: &Stop,
) {
    // Items per batch seen last time: sizes the next batch's key list.
    let mut expected = 0;
    loop {
        let batch = {
            let rx = rx.lock().unwrap_or_else(|e| e.into_inner());
            match rx.recv() {
                Ok(batch) => batch,
                Err(_) => return,
            }
        };
        if stop.is_set() {
            return;
        }
        let mut keys: Vec<&[u8]> = Vec::with_capacity(expected);
        if let Err(e) = batch.for_each(args.max_line, |k| keys.push(k)) {
            stop.set(e);
            return;
        }
        expected = keys.len() + keys.len() / 8;
        counts.items.fetch_add(keys.len() as u64, Relaxed);
        let outcome = if args.unique {
            insert_unique(target, &keys, counts)
        } else {
            insert_all(target, &keys, counts)
        };
        if let Err(e) = outcome {
            stop.set(e);
            return;
        }
    }
}

/// `insert_batch`, stepping over keys refused for too many copies.
fn insert_all(target: &Target, mut keys: &[&[u8]], counts: &Counts) -> Result<()> {
    loop {
        match target.insert_batch(keys) {
            Ok(()) => return Ok(()),
            Err(e) => match e.error() {
                InsertError::TooManyDuplicates => {
                    counts.refused.fetch_add(1, Relaxed);
                    keys = &keys[e.inserted() + 1..];
                }
                _ => return Err(full(target)),
            },
        }
    }
}

/// `insert_unique`, one key at a time.
fn insert_unique(target: &Target, keys: &[&[u8]], counts: &Counts) -> Result<()> {
    for key in keys {
        match target.insert_unique(key) {
            Ok(true) => {}
            Ok(false) => {
                counts.duplicates.fetch_add(1, Relaxed);
            }
            Err(InsertError::TooManyDuplicates) => {
                counts.refused.fetch_add(1, Relaxed);
            }
            Err(_) => return Err(full(target)),
        }
    }
    Ok(())
}

fn full(target: &Target) -> Failure {
    let hint = match target {
        Target::Fixed(_) => "a larger --capacity, or --grow",
        Target::Grow(_) => "a larger --capacity (the first level)",
    };
    Failure::new(format!(
        "the filter is full: {} items went in (capacity {}); nothing was written. \
         Try {hint}",
        thousands(target.len() as u64),
        thousands(target.capacity() as u64)
    ))
}
