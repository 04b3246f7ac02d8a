//! The filters under test and the workloads the sweep runs on them.
//!
//! Every workload is generic over [`Target`], so each filter gets its own
//! monomorphic loop (no dynamic call per operation). The keys stored in a
//! filter are always a contiguous run of key indices, the [`Window`]
//! `lo..hi`: inserts take fresh indices at `hi`, removes take the oldest at
//! `lo`, so a mix with as many inserts as removes keeps the load where the
//! fill left it (about 90%) however long it runs, and a lookup knows which
//! keys are present without a shared structure. Threads claim indices a
//! block at a time, so the window's counters cost one shared write per
//! [`BLOCK`] writes, not one per write.

use super::runner::{run, Role, Run, ThreadCount};
use crate::filters::{AtomicCuckoo, CuckooFilterCrate, Ours, Shared};
use crate::keys::{key, Rng};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Key indices a thread claims from the window at once.
pub const BLOCK: u64 = 1024;
/// Lookups per burst of `contains_batch`.
pub const BURST: usize = 32;
/// Keys per `insert_batch` call in a bulk fill: a control plane loading
/// a table in large batches.
pub const FILL_CHUNK: u64 = 1 << 16;
/// Keys per `insert_batch` call in a fill of dataplane-sized bursts.
pub const FILL_BURST: u64 = 256;
/// Absent keys are drawn from indices at and above this (never inserted:
/// `key` is a bijection and stored indices stay far below it).
const ABSENT_FROM: u64 = 1 << 62;

/// The filter operations the sweep uses.
pub trait Target: Sync {
    fn contains(&self, k: u64) -> bool;
    fn insert(&self, k: u64) -> bool;
    fn remove(&self, k: u64) -> bool;
    /// Looks up `keys`; the default is one `contains` per key.
    fn contains_batch(&self, keys: &[u64], out: &mut [bool]) {
        for (k, o) in keys.iter().zip(out) {
            *o = self.contains(*k);
        }
    }
    /// Inserts `keys`; how many went in. The default is one `insert` each.
    fn insert_batch(&self, keys: &[u64]) -> u64 {
        keys.iter().map(|&k| u64::from(self.insert(k))).sum()
    }
    /// Removes `keys`; the default is one `remove` each.
    fn remove_batch(&self, keys: &[u64]) {
        for &k in keys {
            self.remove(k);
        }
    }
}

impl Target for Ours {
    #[inline]
    fn contains(&self, k: u64) -> bool {
        Ours::contains(self, &k)
    }
    #[inline]
    fn insert(&self, k: u64) -> bool {
        Ours::insert(self, &k).is_ok()
    }
    #[inline]
    fn remove(&self, k: u64) -> bool {
        Ours::remove(self, &k)
    }
    #[inline]
    fn contains_batch(&self, keys: &[u64], out: &mut [bool]) {
        Ours::contains_batch(self, keys, out)
    }
    fn insert_batch(&self, keys: &[u64]) -> u64 {
        // A refused key (the table is sized so that none is) ends the
        // call; the rest of the keys are retried after it.
        let mut done = 0;
        let mut at = 0;
        while at < keys.len() {
            match Ours::insert_batch(self, &keys[at..]) {
                Ok(()) => return done + (keys.len() - at) as u64,
                Err(e) => {
                    done += e.inserted() as u64;
                    at += e.inserted() + 1;
                }
            }
        }
        done
    }
    fn remove_batch(&self, keys: &[u64]) {
        let mut removed = [false; BLOCK as usize];
        for chunk in keys.chunks(removed.len()) {
            Ours::remove_batch(self, chunk, &mut removed[..chunk.len()]);
        }
    }
}

/// The peers through the comparison's adaptors (`#[inline]` there).
macro_rules! shared_target {
    ($t:ty) => {
        impl Target for $t {
            #[inline]
            fn contains(&self, k: u64) -> bool {
                self.s_contains(k)
            }
            #[inline]
            fn insert(&self, k: u64) -> bool {
                self.s_insert(k)
            }
            #[inline]
            fn remove(&self, k: u64) -> bool {
                self.s_remove(k)
            }
        }
    };
}
shared_target!(AtomicCuckoo);
shared_target!(CuckooFilterCrate);

/// One filter under test (a handful are built per run: their sizes
/// differing does not matter).
#[allow(clippy::large_enum_variant)]
pub enum Subject {
    Ours(Ours),
    Atomic(AtomicCuckoo),
    Locked(CuckooFilterCrate),
}

/// Runs `$body` with `$f` bound to the concrete filter inside `$subject`.
macro_rules! with_target {
    ($subject:expr, $f:ident => $body:expr) => {
        match $subject {
            $crate::scaling::work::Subject::Ours($f) => $body,
            $crate::scaling::work::Subject::Atomic($f) => $body,
            $crate::scaling::work::Subject::Locked($f) => $body,
        }
    };
}
pub(crate) use with_target;

/// Which filter, for building one.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Ours,
    Atomic,
    Locked,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Ours, Kind::Atomic, Kind::Locked];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Ours => "concurrent-cuckoo",
            Kind::Atomic => "atomic-cuckoo-filter",
            Kind::Locked => "Mutex<cuckoofilter>",
        }
    }

    /// An empty filter of `slots` fingerprint slots (a power of two, so
    /// that the peers, which round to one, get exactly as many).
    pub fn build(self, slots: u64) -> Subject {
        match self {
            Kind::Ours => Subject::Ours(
                Ours::builder()
                    .capacity(0)
                    .fingerprint_bits(16)
                    .bucket_count((slots / 4) as usize)
                    .seed(0x5EED)
                    .build()
                    .expect("build concurrent-cuckoo"),
            ),
            Kind::Atomic => Subject::Atomic(AtomicCuckoo::new(slots)),
            Kind::Locked => Subject::Locked(CuckooFilterCrate::new(slots)),
        }
    }

    /// Whether it has a native batched lookup.
    pub fn batches(self) -> bool {
        self == Kind::Ours
    }
}

/// A 128-byte aligned counter, so the two never share a line.
#[repr(align(128))]
struct Padded(AtomicU64);

/// The stored key indices `lo..hi` (module docs).
pub struct Window {
    lo: Padded,
    hi: Padded,
}

impl Window {
    /// A filter holding keys `0..n`.
    pub fn new(n: u64) -> Self {
        Self {
            lo: Padded(AtomicU64::new(0)),
            hi: Padded(AtomicU64::new(n)),
        }
    }

    /// A recent `(lo, hi)`.
    fn snapshot(&self) -> (u64, u64) {
        let lo = self.lo.0.load(Ordering::Relaxed);
        let hi = self.hi.0.load(Ordering::Relaxed);
        (lo, hi.max(lo + 1))
    }
}

/// A thread's claimed block of indices at one end of the window.
struct Claim {
    next: u64,
    end: u64,
}

impl Claim {
    const fn empty() -> Self {
        Self { next: 0, end: 0 }
    }

    /// The next index, claiming a new block from `counter` when this one
    /// is used up.
    #[inline]
    fn take(&mut self, counter: &AtomicU64) -> u64 {
        if self.next == self.end {
            self.next = counter.fetch_add(BLOCK, Ordering::Relaxed);
            self.end = self.next + BLOCK;
        }
        self.next += 1;
        self.next - 1
    }
}

/// Which keys lookups ask for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Keys {
    /// Never inserted.
    Absent,
    /// Stored.
    Present,
    /// Drawn from `lo..lo + 2 * (hi - lo)`: about half stored.
    Half,
}

impl Keys {
    pub fn label(self) -> &'static str {
        match self {
            Keys::Absent => "absent keys",
            Keys::Present => "present keys",
            Keys::Half => "keys half present",
        }
    }

    #[inline(always)]
    fn draw(self, rng: &mut Rng, (lo, hi): (u64, u64)) -> u64 {
        match self {
            Keys::Absent => key(ABSENT_FROM + (rng.next_u64() >> 2)),
            Keys::Present => key(lo + rng.below(hi - lo)),
            Keys::Half => key(lo + rng.below(2 * (hi - lo))),
        }
    }
}

/// One lookup at a time, or bursts of [`BURST`] through `contains_batch`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    Single,
    Batch,
}

impl Lookup {
    pub fn label(self) -> String {
        match self {
            Lookup::Single => "contains".into(),
            Lookup::Batch => format!("contains_batch ({BURST})"),
        }
    }
}

/// Operations between two looks at `stop` (and at the window).
const ROUND: u64 = 256;

/// Read-only: `threads` threads look up `keys` for `dur`.
pub fn read_only<F: Target>(
    f: &F,
    win: &Window,
    threads: usize,
    cpus: &[usize],
    dur: Duration,
    lookup: Lookup,
    keys: Keys,
) -> Run {
    run(threads, 0, cpus, Some(dur), |_, t, stop| {
        let mut rng = Rng::new(0xBEEF + t as u64);
        let (mut ops, mut hits) = (0u64, 0u64);
        let mut burst = [0u64; BURST];
        let mut out = [false; BURST];
        while !stop.load(Ordering::Relaxed) {
            let window = win.snapshot();
            for _ in 0..ROUND / BURST as u64 {
                match lookup {
                    Lookup::Single => {
                        for _ in 0..BURST {
                            hits += u64::from(f.contains(keys.draw(&mut rng, window)));
                        }
                    }
                    Lookup::Batch => {
                        for k in burst.iter_mut() {
                            *k = keys.draw(&mut rng, window);
                        }
                        f.contains_batch(&burst, &mut out);
                        hits += out.iter().map(|&b| u64::from(b)).sum::<u64>();
                    }
                }
            }
            ops += ROUND;
        }
        std::hint::black_box(hits);
        ThreadCount { ops, lookups: ops }
    })
}

/// A lookup/insert/remove mix in percent.
#[derive(Clone, Copy)]
pub struct Mix {
    pub lookup: u64,
    pub insert: u64,
}

impl Mix {
    pub fn label(self) -> String {
        let remove = 100 - self.lookup - self.insert;
        format!("{}/{}/{}", self.lookup, self.insert, remove)
    }
}

/// `mix` on `threads` threads sharing `f` for `dur`: lookups of keys half
/// present, inserts of fresh keys, removes of the oldest stored ones.
pub fn mixed<F: Target>(
    f: &F,
    win: &Window,
    threads: usize,
    cpus: &[usize],
    dur: Duration,
    mix: Mix,
) -> Run {
    run(threads, 0, cpus, Some(dur), |_, t, stop| {
        let mut rng = Rng::new(0xC0FFEE + t as u64);
        let (mut inserts, mut removes) = (Claim::empty(), Claim::empty());
        let (mut ops, mut lookups, mut sink) = (0u64, 0u64, 0u64);
        while !stop.load(Ordering::Relaxed) {
            let window = win.snapshot();
            for _ in 0..ROUND {
                let r = rng.below(100);
                if r < mix.lookup {
                    sink += u64::from(f.contains(Keys::Half.draw(&mut rng, window)));
                    lookups += 1;
                } else if r < mix.lookup + mix.insert {
                    sink += u64::from(f.insert(key(inserts.take(&win.hi.0))));
                } else {
                    sink += u64::from(f.remove(key(removes.take(&win.lo.0))));
                }
            }
            ops += ROUND;
        }
        std::hint::black_box(sink);
        ThreadCount { ops, lookups }
    })
}

/// `readers` threads of single lookups (keys half present) while
/// `writers` more threads write in bulk: `insert_batch` of [`BLOCK`] fresh
/// keys, then `remove_batch` of the [`BLOCK`] oldest (one call per key for
/// filters without batches). The run's writer totals count their keys.
pub fn readers_writers<F: Target>(
    f: &F,
    win: &Window,
    readers: usize,
    writers: usize,
    cpus: &[usize],
    dur: Duration,
) -> Run {
    run(readers, writers, cpus, Some(dur), |role, t, stop| {
        let mut rng = Rng::new(0xFEED + t as u64);
        let (mut ops, mut sink) = (0u64, 0u64);
        match role {
            Role::Main => {
                while !stop.load(Ordering::Relaxed) {
                    let window = win.snapshot();
                    for _ in 0..ROUND {
                        sink += u64::from(f.contains(Keys::Half.draw(&mut rng, window)));
                    }
                    ops += ROUND;
                }
                std::hint::black_box(sink);
                ThreadCount { ops, lookups: ops }
            }
            Role::Writer => {
                let mut keys = vec![0u64; BLOCK as usize];
                while !stop.load(Ordering::Relaxed) {
                    let from = win.hi.0.fetch_add(BLOCK, Ordering::Relaxed);
                    keys.iter_mut().zip(from..).for_each(|(k, i)| *k = key(i));
                    f.insert_batch(&keys);
                    let from = win.lo.0.fetch_add(BLOCK, Ordering::Relaxed);
                    keys.iter_mut().zip(from..).for_each(|(k, i)| *k = key(i));
                    f.remove_batch(&keys);
                    ops += 2 * BLOCK;
                }
                ThreadCount { ops, lookups: 0 }
            }
        }
    })
}

/// Inserts keys `0..n` into the empty `f` from `threads` threads, each
/// its own contiguous share in `insert_batch` calls of `chunk` keys; runs
/// to completion. The run's ops are the keys inserted.
pub fn fill<F: Target>(f: &F, n: u64, threads: usize, cpus: &[usize], chunk: u64) -> Run {
    run(threads, 0, cpus, None, |_, t, _| {
        let (from, to) = (
            n * t as u64 / threads as u64,
            n * (t as u64 + 1) / threads as u64,
        );
        let mut keys = Vec::with_capacity(chunk as usize);
        let mut inserted = 0;
        let mut at = from;
        while at < to {
            let end = (at + chunk).min(to);
            keys.clear();
            keys.extend((at..end).map(key));
            inserted += f.insert_batch(&keys);
            at = end;
        }
        ThreadCount {
            ops: inserted,
            lookups: 0,
        }
    })
}
