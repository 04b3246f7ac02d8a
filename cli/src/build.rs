//! `ccf build`: items from files into a filter, on every core, written
//! atomically.
//!
//! The reader (this thread) cuts the input into batches of whole lines; the
//! insert threads each take a batch, split it into items and hand them to
//! the library's `insert_batch` (hashing a block ahead and prefetching
//! buckets), so parsing and inserting run in parallel and the filter,
//! shared through `&self`, takes every thread's inserts at once.

use crate::atomic::Output;
use crate::cli::BuildArgs;
use crate::fail::{Context, Failure, Result};
use crate::input::{self, Batch, ColumnRef, Format};
use crate::progress::{self, thousands};
use concurrent_cuckoo::{BatchInsertError, CuckooFilter, InsertError, ScalableCuckooFilter};
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Instant;

/// Batches waiting for an insert thread, at most: with 4 MiB batches, the
/// queue holds at most 64 MiB however many threads there are.
const MAX_QUEUED: usize = 16;

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
    /// `counted`: the inputs' line count, the size of a fixed filter built
    /// without `--capacity`.
    fn new(args: &BuildArgs, counted: Option<u64>) -> Result<Self> {
        let built = if args.grow {
            let mut b = ScalableCuckooFilter::builder()
                .capacity(args.capacity.unwrap_or(DEFAULT_INITIAL_CAPACITY));
            if let Some(rate) = args.error_rate {
                b = b.false_positive_rate(rate);
            }
            if let Some(seed) = args.seed {
                b = b.seed(seed);
            }
            b.build().map(Self::Grow)
        } else {
            let capacity = match (args.capacity, counted) {
                (Some(n), _) => n,
                (None, Some(lines)) => usize::try_from(lines.max(1)).unwrap_or(usize::MAX),
                (None, None) => {
                    return Err(Failure::new(
                        "give the filter a size: --capacity N (a fixed filter) or --grow \
                         (a growing one); without either, every input must be a regular, \
                         uncompressed file (its lines are counted)",
                    ))
                }
            };
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

    fn write_to(&self, out: impl Write) -> std::io::Result<()> {
        match self {
            Self::Fixed(f) => f.write_to(out),
            Self::Grow(f) => f.write_to(out),
        }
    }

    /// The kind and fingerprint width, before any item.
    fn kind(&self) -> String {
        match self {
            Self::Fixed(f) => format!("a fixed filter, {}-bit fingerprints", f.fingerprint_bits()),
            Self::Grow(f) => format!(
                "a growing filter, false-positive bound {}",
                percent(f.configured_false_positive_rate())
            ),
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
                percent(f.false_positive_bound())
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
            delimiter: args
                .delimiter
                .as_deref()
                .map(input::parse_delimiter)
                .transpose()?,
        },
    };
    let threads = match args.threads {
        Some(n) => usize::from(n),
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    // Everything that can fail before the work does so now: the inputs
    // opened, the output created (and not one of the inputs), before the
    // lines are counted or the filter's memory is taken.
    let sources = input::open_all(&args.inputs)?;
    input::refuse_output_among(&sources, &args.output)?;
    let mut output = Output::create(&args.output)?;
    let counted = if args.capacity.is_none() && !args.grow {
        count_lines(&sources, args.quiet)?
    } else {
        None
    };
    let target = Target::new(args, counted)?;
    let queue = (threads * 2).min(MAX_QUEUED);
    if args.verbose {
        let size =
            input::total_size(&args.inputs).map_or_else(|| "size unknown".into(), progress::size);
        eprintln!(
            "building {} from {} input(s) ({size}): {}, capacity {}; {threads} insert \
             thread(s), at most {queue} batches of {} queued",
            output.name(),
            args.inputs.len(),
            target.kind(),
            thousands(target.capacity() as u64),
            progress::size(input::BATCH_BYTES as u64),
        );
    }
    let started = Instant::now();
    let bar = progress::bytes(input::total_size(&args.inputs), args.quiet);
    let counts = Counts::default();
    let stop = Stop {
        flag: AtomicBool::new(false),
        error: Mutex::new(None),
    };
    let (tx, rx) = crossbeam_channel::bounded::<Batch>(queue);
    let read = std::thread::scope(|scope| {
        for i in 0..threads {
            let rx = rx.clone();
            let (target, counts, stop) = (&target, &counts, &stop);
            let spawned = std::thread::Builder::new()
                .name(format!("insert-{i}"))
                .spawn_scoped(scope, move || {
                    insert_worker(&rx, target, args, counts, stop)
                });
            if let Err(e) = spawned {
                stop.set(Failure::new(format!(
                    "cannot start insert thread {} of {threads}: {e} (try fewer --threads)",
                    i + 1
                )));
                break;
            }
        }
        // Only the threads hold receivers now: once they have all stopped,
        // a send fails instead of waiting for room forever.
        drop(rx);
        let read = if stop.is_set() {
            Ok(())
        } else {
            input::read_all(sources, &format, args.max_line, &bar, |batch| {
                let items = counts.items.load(Relaxed);
                let rate = items as f64 / started.elapsed().as_secs_f64().max(1e-3);
                bar.set_message(format!(
                    "{} items, {} items/s",
                    thousands(items),
                    thousands(rate as u64)
                ));
                !stop.is_set() && tx.send(batch).is_ok()
            })
        };
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
    let name = output.name();
    // No buffer: the library's encoder already writes in large chunks.
    let mut counted = CountingWriter {
        inner: &mut output,
        bytes: 0,
    };
    target
        .write_to(&mut counted)
        .and_then(|()| counted.flush())
        .context(|| format!("cannot write {name}"))?;
    let file_size = counted.bytes;
    output.commit()?;
    let total = started.elapsed();
    let items = counts.items.load(Relaxed);
    let stored = target.len() as u64;
    if stored == 0 {
        // Said even with --quiet: the file is of little use.
        eprintln!(
            "ccf: warning: no items in the input: {name} holds an empty filter, which \
             `ccf push` can load but `ccf pull` can never bring back (a filter with no \
             items has no dump)"
        );
    }
    if !args.quiet {
        // All on stderr: stdout may be the filter itself (`-o -`).
        eprintln!("wrote {name}: {}", target.describe());
        eprintln!("  items read     {}", thousands(items));
        eprintln!(
            "  stored         {} (capacity {})",
            thousands(stored),
            thousands(target.capacity() as u64)
        );
        if args.unique {
            eprintln!(
                "  duplicates     {} (already present, skipped)",
                thousands(counts.duplicates.load(Relaxed))
            );
        }
        eprintln!(
            "  refused        {} (a key's copies were at the limit)",
            thousands(counts.refused.load(Relaxed))
        );
        if stored > 0 {
            eprintln!(
                "  file           {} ({:.2} bytes per stored item)",
                progress::size(file_size),
                file_size as f64 / stored as f64
            );
        } else {
            eprintln!("  file           {}", progress::size(file_size));
        }
        eprintln!(
            "  time           {:.2} s (read and insert {:.2} s, write {:.2} s), {} items/s",
            total.as_secs_f64(),
            inserted_in.as_secs_f64(),
            (total - inserted_in).as_secs_f64(),
            thousands((items as f64 / total.as_secs_f64().max(1e-9)) as u64)
        );
    }
    Ok(())
}

/// The inputs' lines, counted in one extra pass over them (for a fixed
/// filter built without `--capacity`), said on stderr with what the pass
/// cost; `None` where an input cannot be counted before it is read.
fn count_lines(sources: &[input::Source], quiet: bool) -> Result<Option<u64>> {
    let started = Instant::now();
    let Some(lines) = input::count_lines(sources)? else {
        return Ok(None);
    };
    if !quiet {
        eprintln!(
            "counted {} lines in {:.2} s (one extra pass over the input): --capacity {lines}",
            thousands(lines),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(Some(lines))
}

/// Counts the bytes written through it (the file's size, for the summary,
/// also when the file is stdout).
struct CountingWriter<W> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for CountingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// One insert thread: takes batches until the reader is done or someone
/// failed.
fn insert_worker(
    rx: &crossbeam_channel::Receiver<Batch>,
    target: &Target,
    args: &BuildArgs,
    counts: &Counts,
    stop: &Stop,
) {
    // Items per batch seen last time: sizes the next batch's key list.
    let mut expected = 0;
    loop {
        let Ok(batch) = rx.recv() else { return };
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
                _ => return Err(full(target, false)),
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
            Err(_) => return Err(full(target, true)),
        }
    }
    Ok(())
}

fn full(target: &Target, unique: bool) -> Failure {
    let hint = match (target, unique) {
        (Target::Fixed(_), false) => {
            "--unique if the input repeats items (each copy takes a slot), \
             a larger --capacity, or --grow"
        }
        (Target::Fixed(_), true) => "a larger --capacity, or --grow",
        (Target::Grow(_), false) => {
            "--unique if the input repeats items (each copy takes a slot), \
             or a larger --capacity (the first level)"
        }
        (Target::Grow(_), true) => "a larger --capacity (the first level)",
    };
    Failure::new(format!(
        "the filter is full: {} items went in (capacity {}); nothing was written. \
         Try {hint}",
        thousands(target.len() as u64),
        thousands(target.capacity() as u64)
    ))
}
