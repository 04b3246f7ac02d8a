//! Shared pieces of the loom models in `tests/`: an identity hasher, so a
//! model chooses where its keys go, and the model runner.
#![cfg(concurrent_cuckoo_loom)]

use concurrent_cuckoo::{CuckooFilter, InsertError, WindowedCuckooFilter};
use std::hash::{BuildHasher, Hasher};

/// Hashes a `u64` key to itself, so tests choose bucket and fingerprint.
#[derive(Clone, Copy, Default)]
pub struct Identity;

pub struct IdentityHasher(u64);

impl Hasher for IdentityHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("models only hash u64 keys")
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

impl BuildHasher for Identity {
    type Hasher = IdentityHasher;
    fn build_hasher(&self) -> IdentityHasher {
        IdentityHasher(0)
    }
}

/// A filter whose keys a model places in chosen buckets (through
/// [`Identity`]).
pub trait Placed {
    /// A hash of primary bucket `bucket` whose fingerprint comes from `low`.
    fn hash_for_bucket(&self, bucket: usize, low: u32) -> u64;
    /// `(fingerprint, primary, alternate)` of a hash.
    fn signature_of_hash(&self, hash: u64) -> (u64, usize, usize);
    /// Inserts the key `key`.
    fn insert_key(&self, key: u64) -> Result<(), InsertError>;
}

impl Placed for CuckooFilter<Identity> {
    fn hash_for_bucket(&self, bucket: usize, low: u32) -> u64 {
        CuckooFilter::hash_for_bucket(self, bucket, low)
    }
    fn signature_of_hash(&self, hash: u64) -> (u64, usize, usize) {
        CuckooFilter::signature_of_hash(self, hash)
    }
    fn insert_key(&self, key: u64) -> Result<(), InsertError> {
        self.insert(&key)
    }
}

impl Placed for WindowedCuckooFilter<Identity> {
    fn hash_for_bucket(&self, bucket: usize, low: u32) -> u64 {
        WindowedCuckooFilter::hash_for_bucket(self, bucket, low)
    }
    fn signature_of_hash(&self, hash: u64) -> (u64, usize, usize) {
        WindowedCuckooFilter::signature_of_hash(self, hash)
    }
    fn insert_key(&self, key: u64) -> Result<(), InsertError> {
        self.insert(&key)
    }
}

impl<T: Placed> Placed for loom::sync::Arc<T> {
    fn hash_for_bucket(&self, bucket: usize, low: u32) -> u64 {
        (**self).hash_for_bucket(bucket, low)
    }
    fn signature_of_hash(&self, hash: u64) -> (u64, usize, usize) {
        (**self).signature_of_hash(hash)
    }
    fn insert_key(&self, key: u64) -> Result<(), InsertError> {
        (**self).insert_key(key)
    }
}

/// Hands out keys with chosen (primary, alternate) buckets and fingerprints
/// never used before, so every key is distinguishable from every other.
pub struct Keys {
    used: Vec<u64>,
    next_low: u32,
}

impl Default for Keys {
    fn default() -> Self {
        Self::new()
    }
}

impl Keys {
    pub fn new() -> Self {
        Self {
            used: Vec::new(),
            next_low: 1,
        }
    }

    /// A generator that avoids the fingerprints of `taken` keys (keys made
    /// by another generator, for example a setup function's).
    pub fn avoiding<'a>(f: &impl Placed, taken: impl IntoIterator<Item = &'a u64>) -> Self {
        let mut keys = Self::new();
        keys.used
            .extend(taken.into_iter().map(|&k| f.signature_of_hash(k).0));
        keys
    }

    /// Inserts `n` new keys of bucket pair (`primary`, `alternate`) into `f`
    /// and appends them to `stored`.
    pub fn insert_n(
        &mut self,
        f: &impl Placed,
        primary: usize,
        alternate: usize,
        n: usize,
        stored: &mut Vec<u64>,
    ) {
        for _ in 0..n {
            let k = self.with_buckets(f, primary, alternate);
            f.insert_key(k).unwrap();
            stored.push(k);
        }
    }

    /// A key whose primary bucket is `primary` and alternate is `alternate`.
    pub fn with_buckets(&mut self, f: &impl Placed, primary: usize, alternate: usize) -> u64 {
        loop {
            let low = self.next_low;
            self.next_low += 1;
            let key = f.hash_for_bucket(primary, low);
            let (fp, i1, i2) = f.signature_of_hash(key);
            if i1 == primary && i2 == alternate && !self.used.contains(&fp) {
                self.used.push(fp);
                return key;
            }
        }
    }
}

/// What `search` returns, computed once on real filters (which use loom's
/// atomics, so inside a loom model: one execution of straight-line code,
/// with the branch limit raised for the thousands of atomic accesses a
/// search of keys makes). For a model's set-up: keys with chosen
/// collisions, found by asking a filter.
pub fn found_once<T: Send + 'static>(search: impl Fn() -> T + Sync + Send + 'static) -> T {
    let found = std::sync::Arc::new(std::sync::Mutex::new(None));
    let out = found.clone();
    let mut builder = loom::model::Builder::new();
    builder.max_branches = 1_000_000;
    builder.check(move || {
        *out.lock().unwrap() = Some(search());
    });
    let result = found.lock().unwrap().take().expect("the search ran");
    result
}

/// A filter of four buckets in two lock stripes (even and odd buckets),
/// paths of one move and 16-bit fingerprints: a pair always spans both
/// stripes.
pub fn four_buckets_two_stripes() -> CuckooFilter<Identity> {
    CuckooFilter::builder()
        .bucket_count(4)
        .stripe_count(2)
        .max_path_len(1)
        .fingerprint_bits(16)
        .hasher(Identity)
        .build()
        .unwrap()
}

/// Runs `f` under loom (preemption bound 3 unless `LOOM_MAX_PREEMPTIONS`
/// says otherwise), prints how many interleavings it explored, and fails a
/// model that explored only one: its threads never interacted.
pub fn model(f: impl Fn() + Sync + Send + 'static) {
    run(None, f);
}

/// [`model`] with at most `most` preemptions, whatever
/// `LOOM_MAX_PREEMPTIONS` says: for a model too large to explore
/// exhaustively in CI's time, whose bad schedules need no more than
/// `most` (each such model says why, and its canary shows it still bites).
pub fn model_with_preemptions_at_most(most: usize, f: impl Fn() + Sync + Send + 'static) {
    run(Some(most), f);
}

fn run(most: Option<usize>, f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(3);
    }
    if let Some(most) = most {
        builder.preemption_bound = builder.preemption_bound.map(|b| b.min(most));
    }
    // A branch is every atomic access: the models of 128-stripe tables
    // (batches under pair locks) sum 128 per-stripe counters in `len()`
    // and `relocations()`, past loom's default of 1000 per execution.
    builder.max_branches = 20_000;
    let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = runs.clone();
    builder.check(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        f()
    });
    let runs = runs.load(std::sync::atomic::Ordering::Relaxed);
    let name = std::thread::current().name().unwrap_or("model").to_string();
    println!("{name}: explored {runs} interleavings");
    // A model whose threads never interact explores one schedule and
    // proves nothing.
    assert!(
        runs > 1,
        "loom explored a single interleaving: the model has no concurrency"
    );
}

/// A filter of two slots of one geometry (growth 1): slot 0 keeps one key
/// (`moving`), slot 1, the current level, one (`stays`). Compaction moves
/// `moving` into slot 1 and retires slot 0. Returns the filter and the two
/// keys. The set-up of the compaction models in `scalable.rs` and
/// `compaction.rs`.
pub fn one_key_left_in_an_old_level() -> (
    loom::sync::Arc<concurrent_cuckoo::ScalableCuckooFilter<Identity>>,
    u64,
    u64,
) {
    let f = concurrent_cuckoo::ScalableCuckooFilter::builder()
        .capacity(1)
        .growth_factor(1)
        .false_positive_rate(1e-3)
        .max_levels(2)
        .hasher(Identity)
        .build()
        .unwrap();
    let keys: Vec<u64> = (1..=9u64)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .collect();
    for k in &keys {
        f.insert(k).unwrap(); // slot 0 fills, the ninth opens slot 1
    }
    for k in &keys[1..8] {
        assert!(f.remove(k).is_removed());
    }
    let (moving, stays) = (keys[0], keys[8]);
    assert_eq!(f.levels(), 2, "setup: slot 0 with one key, slot 1 with one");
    assert!(
        f.count(&moving) == 1 && f.count(&stays) == 1 && f.len() == 2,
        "setup: the two keys must not collide"
    );
    (loom::sync::Arc::new(f), moving, stays)
}
