//! One adaptor per filter under test, behind two traits:
//!
//! * [`Filter`]: exclusive (`&mut self`) use by one thread, so
//!   `cuckoofilter` runs without a lock in the single-threaded phases.
//! * [`Shared`]: `&self` use by several threads; `cuckoofilter` is wrapped
//!   in a `Mutex` there, as a user would have to.
//!
//! The measurement loops are default methods, so every implementation gets
//! its own monomorphic copy: no dynamic call per operation.

use crate::keys::{key, Rng};
use crate::timing::CpuClock;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, RwLock};

/// What a filter supports.
#[derive(Clone, Copy)]
pub struct Caps {
    pub insert: bool,
    pub remove: bool,
    /// A native batched lookup (otherwise the batch row is omitted).
    pub batch: bool,
}

pub trait Filter: Send + Sync {
    fn insert(&mut self, key: u64) -> bool;
    fn contains(&mut self, key: u64) -> bool;
    fn remove(&mut self, key: u64) -> bool;
    fn contains_batch(&mut self, keys: &[u64], out: &mut [bool]) {
        for (k, o) in keys.iter().zip(out) {
            *o = self.contains(*k);
        }
    }
    fn caps(&self) -> Caps;
    /// Bytes of the structure (table, locks; not the harness's keys).
    fn bytes(&self) -> usize;
    fn shared(&self) -> &dyn Shared;
    /// The `concurrent-cuckoo` filter inside, for the `*_hash` measurements.
    fn as_ours(&self) -> Option<&Ours> {
        None
    }

    /// Lookups of every key; returns how many answered "present".
    fn count_contains(&mut self, keys: &[u64]) -> usize {
        let mut hits = 0;
        for &k in keys {
            hits += usize::from(self.contains(k));
        }
        hits
    }

    /// Batched lookups in bursts of `burst`; returns the "present" count.
    fn count_contains_batch(&mut self, keys: &[u64], burst: usize) -> usize {
        let mut out = vec![false; burst];
        let mut hits = 0;
        for chunk in keys.chunks(burst) {
            let out = &mut out[..chunk.len()];
            self.contains_batch(chunk, out);
            hits += out.iter().filter(|&&b| b).count();
        }
        hits
    }

    /// Inserts keys `range`; returns the index of the first failure, if any
    /// (stopping there when `stop_at_failure`).
    fn insert_range(&mut self, range: std::ops::Range<u64>, stop_at_failure: bool) -> Option<u64> {
        let mut first = None;
        for i in range {
            if !self.insert(key(i)) && first.is_none() {
                first = Some(i);
                if stop_at_failure {
                    break;
                }
            }
        }
        first
    }

    /// Removes keys `range`; returns how many were found.
    fn remove_range(&mut self, range: std::ops::Range<u64>) -> u64 {
        let mut found = 0;
        for i in range {
            found += u64::from(self.remove(key(i)));
        }
        found
    }
}

/// An operation mix in percent: lookups, inserts, removes.
#[derive(Clone, Copy)]
pub struct Mix {
    pub lookup: u32,
    pub insert: u32,
    pub remove: u32,
}

impl Mix {
    pub const READ_ONLY: Mix = Mix {
        lookup: 100,
        insert: 0,
        remove: 0,
    };
    pub fn label(&self) -> String {
        if self.insert == 0 && self.remove == 0 {
            "read-only".into()
        } else {
            format!("{}/{}/{}", self.lookup, self.insert, self.remove)
        }
    }
}

/// Per-thread plan of a mixed run: which keys to look up, insert, remove.
pub struct Worker {
    pub thread: u64,
    pub threads: u64,
    /// Keys `0..n` were inserted at the start.
    pub n: u64,
    /// Next original key to remove: `remove_from + j * threads + thread`.
    pub remove_from: u64,
    /// First fresh key index for inserts (beyond everything used so far).
    pub insert_from: u64,
    pub seed: u64,
}

/// What one thread did in a mixed run.
pub struct MixResult {
    pub ops: u64,
    pub inserts: u64,
    pub removes: u64,
    /// The thread's CPU time during the run.
    pub cpu_ns: f64,
}

pub trait Shared: Sync {
    fn s_insert(&self, key: u64) -> bool;
    fn s_contains(&self, key: u64) -> bool;
    fn s_remove(&self, key: u64) -> bool;
    /// A native batched lookup, if any (used to prefetch during bulk fills).
    fn s_contains_batch(&self, _keys: &[u64], _out: &mut [bool]) -> bool {
        false
    }

    /// Runs `mix` until `stop`. Lookups draw from
    /// keys `0..2n` (about half present); inserts add fresh keys; removes
    /// take original keys, so the load stays about constant.
    fn run_mix(&self, w: &Worker, mix: Mix, stop: &AtomicBool) -> MixResult {
        let cpu = CpuClock::now();
        let mut rng = Rng::new(w.seed);
        let (mut ins, mut rem) = (0u64, 0u64);
        let mut ops = 0u64;
        let mut sink = 0u64;
        let lookup_below = u64::from(mix.lookup) << 56;
        let insert_below = u64::from(mix.lookup + mix.insert) << 56;
        let scale = |p: u64| p / 100;
        let (lookup_below, insert_below) = (scale(lookup_below), scale(insert_below));
        let lookups_only = mix.lookup == 100;
        while !stop.load(Ordering::Relaxed) {
            for _ in 0..256 {
                let r = rng.next_u64();
                if lookups_only || (r >> 8) < lookup_below {
                    sink += u64::from(self.s_contains(key(rng.below(2 * w.n))));
                } else if (r >> 8) < insert_below {
                    let i = w.insert_from + ins * w.threads + w.thread;
                    ins += 1;
                    sink += u64::from(self.s_insert(key(i)));
                } else {
                    let i = w.remove_from + rem * w.threads + w.thread;
                    rem += 1;
                    sink += u64::from(self.s_remove(key(i)));
                }
            }
            ops += 256;
        }
        std::hint::black_box(sink);
        MixResult {
            ops,
            inserts: ins,
            removes: rem,
            cpu_ns: cpu.elapsed_ns(),
        }
    }
}

// ---------------------------------------------------------------------------
// concurrent-cuckoo

pub use concurrent_cuckoo::CuckooFilter as Ours;

/// This crate through its key API (hashes each `u64` key with the default
/// hasher): what a user calling `contains(&key)` gets.
pub struct OursKeys(pub Ours);
pub fn ours(n: u64) -> Ours {
    Ours::builder()
        .capacity(n as usize)
        .seed(0x5EED)
        .build()
        .expect("build concurrent-cuckoo")
}

impl Shared for OursKeys {
    #[inline]
    fn s_insert(&self, k: u64) -> bool {
        self.0.insert(&k).is_ok()
    }
    #[inline]
    fn s_contains(&self, k: u64) -> bool {
        self.0.contains(&k)
    }
    #[inline]
    fn s_remove(&self, k: u64) -> bool {
        self.0.remove(&k)
    }
    fn s_contains_batch(&self, keys: &[u64], out: &mut [bool]) -> bool {
        self.0.contains_batch(keys, out);
        true
    }
}

impl Filter for OursKeys {
    #[inline]
    fn insert(&mut self, k: u64) -> bool {
        self.0.insert(&k).is_ok()
    }
    #[inline]
    fn contains(&mut self, k: u64) -> bool {
        self.0.contains(&k)
    }
    #[inline]
    fn remove(&mut self, k: u64) -> bool {
        self.0.remove(&k)
    }
    #[inline]
    fn contains_batch(&mut self, keys: &[u64], out: &mut [bool]) {
        self.0.contains_batch(keys, out)
    }
    fn caps(&self) -> Caps {
        Caps {
            insert: true,
            remove: true,
            batch: true,
        }
    }
    fn bytes(&self) -> usize {
        self.0.memory_usage()
    }
    fn shared(&self) -> &dyn Shared {
        self
    }
    fn as_ours(&self) -> Option<&Ours> {
        Some(&self.0)
    }
}

/// This crate filled and emptied with `insert_batch` / `remove_batch`
/// (pipelined writes) instead of one call per key; otherwise as [`OursKeys`].
pub struct OursBatch(pub Ours);

impl Shared for OursBatch {
    #[inline]
    fn s_insert(&self, k: u64) -> bool {
        self.0.insert(&k).is_ok()
    }
    #[inline]
    fn s_contains(&self, k: u64) -> bool {
        self.0.contains(&k)
    }
    #[inline]
    fn s_remove(&self, k: u64) -> bool {
        self.0.remove(&k)
    }
}

impl Filter for OursBatch {
    #[inline]
    fn insert(&mut self, k: u64) -> bool {
        self.0.insert(&k).is_ok()
    }
    #[inline]
    fn contains(&mut self, k: u64) -> bool {
        self.0.contains(&k)
    }
    #[inline]
    fn remove(&mut self, k: u64) -> bool {
        self.0.remove(&k)
    }
    #[inline]
    fn contains_batch(&mut self, keys: &[u64], out: &mut [bool]) {
        self.0.contains_batch(keys, out)
    }
    fn caps(&self) -> Caps {
        Caps {
            insert: true,
            remove: true,
            batch: true,
        }
    }
    fn bytes(&self) -> usize {
        self.0.memory_usage()
    }
    fn shared(&self) -> &dyn Shared {
        self
    }
    fn as_ours(&self) -> Option<&Ours> {
        Some(&self.0)
    }

    fn insert_range(&mut self, range: std::ops::Range<u64>, stop_at_failure: bool) -> Option<u64> {
        const CHUNK: u64 = 4096;
        let keys: Vec<u64> = range.clone().map(key).collect();
        let mut first = None;
        let mut at = 0usize;
        while at < keys.len() {
            let end = (at + CHUNK as usize).min(keys.len());
            match self.0.insert_batch(&keys[at..end]) {
                Ok(()) => at = end,
                Err(e) => {
                    let failed = at + e.inserted();
                    first.get_or_insert(range.start + failed as u64);
                    if stop_at_failure {
                        break;
                    }
                    at = failed + 1;
                }
            }
        }
        first
    }

    fn remove_range(&mut self, range: std::ops::Range<u64>) -> u64 {
        let keys: Vec<u64> = range.map(key).collect();
        let mut removed = vec![false; keys.len()];
        self.0.remove_batch(&keys, &mut removed);
        removed.iter().filter(|&&r| r).count() as u64
    }
}

// ---------------------------------------------------------------------------
// cuckoofilter 0.5 (single-threaded; a Mutex for threads)

type Cf = cuckoofilter::CuckooFilter<std::collections::hash_map::DefaultHasher>;

pub struct CuckooFilterCrate(Mutex<Cf>);

impl CuckooFilterCrate {
    pub fn new(n: u64) -> Self {
        Self(Mutex::new(Cf::with_capacity(n as usize)))
    }
    fn get(&mut self) -> &mut Cf {
        self.0.get_mut().expect("not poisoned")
    }
}

impl Filter for CuckooFilterCrate {
    #[inline]
    fn insert(&mut self, k: u64) -> bool {
        // On failure it stored the key and dropped a victim: count it as a
        // failure all the same (the fill stops at the first one).
        self.get().add(&k).is_ok()
    }
    #[inline]
    fn contains(&mut self, k: u64) -> bool {
        self.get().contains(&k)
    }
    #[inline]
    fn remove(&mut self, k: u64) -> bool {
        self.get().delete(&k)
    }
    fn caps(&self) -> Caps {
        Caps {
            insert: true,
            remove: true,
            batch: false,
        }
    }
    fn bytes(&self) -> usize {
        self.0.lock().expect("not poisoned").memory_usage()
    }
    fn shared(&self) -> &dyn Shared {
        self
    }
}

impl Shared for CuckooFilterCrate {
    #[inline]
    fn s_insert(&self, k: u64) -> bool {
        self.0.lock().expect("not poisoned").add(&k).is_ok()
    }
    #[inline]
    fn s_contains(&self, k: u64) -> bool {
        self.0.lock().expect("not poisoned").contains(&k)
    }
    #[inline]
    fn s_remove(&self, k: u64) -> bool {
        self.0.lock().expect("not poisoned").delete(&k)
    }
}

// ---------------------------------------------------------------------------
// atomic-cuckoo-filter 0.3 (concurrent)

pub struct AtomicCuckoo(atomic_cuckoo_filter::CuckooFilter);

impl AtomicCuckoo {
    pub fn new(n: u64) -> Self {
        Self(
            atomic_cuckoo_filter::CuckooFilter::builder()
                .capacity(n as usize)
                .build()
                .expect("build atomic-cuckoo-filter"),
        )
    }
}

impl Shared for AtomicCuckoo {
    #[inline]
    fn s_insert(&self, k: u64) -> bool {
        self.0.insert(&k).is_ok()
    }
    #[inline]
    fn s_contains(&self, k: u64) -> bool {
        self.0.contains(&k)
    }
    #[inline]
    fn s_remove(&self, k: u64) -> bool {
        self.0.remove(&k)
    }
}

impl Filter for AtomicCuckoo {
    #[inline]
    fn insert(&mut self, k: u64) -> bool {
        self.0.insert(&k).is_ok()
    }
    #[inline]
    fn contains(&mut self, k: u64) -> bool {
        self.0.contains(&k)
    }
    #[inline]
    fn remove(&mut self, k: u64) -> bool {
        self.0.remove(&k)
    }
    fn caps(&self) -> Caps {
        Caps {
            insert: true,
            remove: true,
            batch: false,
        }
    }
    fn bytes(&self) -> usize {
        // 16-bit fingerprints, `capacity()` slots.
        self.0.capacity() * 2
    }
    fn shared(&self) -> &dyn Shared {
        self
    }
}

// ---------------------------------------------------------------------------
// fastbloom 0.17 AtomicBloomFilter (no delete)

pub struct Bloom(fastbloom::AtomicBloomFilter);

impl Bloom {
    /// A Bloom filter of `bits` bits with the optimal hash count for `n`.
    pub fn new(bits: u64, n: u64) -> Self {
        Self(fastbloom::AtomicBloomFilter::with_num_bits(bits as usize).expected_items(n as usize))
    }
}

impl Shared for Bloom {
    #[inline]
    fn s_insert(&self, k: u64) -> bool {
        self.0.insert(&k);
        true
    }
    #[inline]
    fn s_contains(&self, k: u64) -> bool {
        self.0.contains(&k)
    }
    fn s_remove(&self, _: u64) -> bool {
        unreachable!("Bloom filters cannot delete")
    }
}

impl Filter for Bloom {
    #[inline]
    fn insert(&mut self, k: u64) -> bool {
        self.0.insert(&k);
        true
    }
    #[inline]
    fn contains(&mut self, k: u64) -> bool {
        self.0.contains(&k)
    }
    fn remove(&mut self, _: u64) -> bool {
        unreachable!("Bloom filters cannot delete")
    }
    fn caps(&self) -> Caps {
        Caps {
            insert: true,
            remove: false,
            batch: false,
        }
    }
    fn bytes(&self) -> usize {
        self.0.num_bits() / 8
    }
    fn shared(&self) -> &dyn Shared {
        self
    }
}

// ---------------------------------------------------------------------------
// xorf BinaryFuse16 (static)

pub struct Fuse(xorf::BinaryFuse16);

impl Fuse {
    /// Builds from keys `0..n`.
    pub fn new(n: u64) -> Self {
        let keys: Vec<u64> = (0..n).map(key).collect();
        Self(xorf::BinaryFuse16::try_from(&keys).expect("build BinaryFuse16"))
    }
}

impl Shared for Fuse {
    fn s_insert(&self, _: u64) -> bool {
        unreachable!("static filter")
    }
    #[inline]
    fn s_contains(&self, k: u64) -> bool {
        xorf::Filter::contains(&self.0, &k)
    }
    fn s_remove(&self, _: u64) -> bool {
        unreachable!("static filter")
    }
}

impl Filter for Fuse {
    fn insert(&mut self, _: u64) -> bool {
        unreachable!("static filter")
    }
    #[inline]
    fn contains(&mut self, k: u64) -> bool {
        xorf::Filter::contains(&self.0, &k)
    }
    fn remove(&mut self, _: u64) -> bool {
        unreachable!("static filter")
    }
    fn caps(&self) -> Caps {
        Caps {
            insert: false,
            remove: false,
            batch: false,
        }
    }
    fn bytes(&self) -> usize {
        self.0.fingerprints.len() * 2
    }
    fn shared(&self) -> &dyn Shared {
        self
    }
}

// ---------------------------------------------------------------------------
// Exact set: RwLock<HashSet<u64>>

pub struct Exact(RwLock<HashSet<u64>>);

impl Exact {
    pub fn new(n: u64) -> Self {
        Self(RwLock::new(HashSet::with_capacity(n as usize)))
    }
    fn get(&mut self) -> &mut HashSet<u64> {
        self.0.get_mut().expect("not poisoned")
    }
}

impl Shared for Exact {
    #[inline]
    fn s_insert(&self, k: u64) -> bool {
        self.0.write().expect("not poisoned").insert(k)
    }
    #[inline]
    fn s_contains(&self, k: u64) -> bool {
        self.0.read().expect("not poisoned").contains(&k)
    }
    #[inline]
    fn s_remove(&self, k: u64) -> bool {
        self.0.write().expect("not poisoned").remove(&k)
    }
}

impl Filter for Exact {
    #[inline]
    fn insert(&mut self, k: u64) -> bool {
        self.get().insert(k)
    }
    #[inline]
    fn contains(&mut self, k: u64) -> bool {
        self.get().contains(&k)
    }
    #[inline]
    fn remove(&mut self, k: u64) -> bool {
        self.get().remove(&k)
    }
    fn caps(&self) -> Caps {
        Caps {
            insert: true,
            remove: true,
            batch: false,
        }
    }
    fn bytes(&self) -> usize {
        // hashbrown: one u64 and one control byte per bucket.
        let cap = self.0.read().expect("not poisoned").capacity();
        (cap * 8 / 7).next_power_of_two() * 9
    }
    fn shared(&self) -> &dyn Shared {
        self
    }
}
