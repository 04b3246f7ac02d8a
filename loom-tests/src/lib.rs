//! Shared pieces of the loom models in `tests/`: an identity hasher, so a
//! model chooses where its keys go, and the model runner.
#![cfg(concurrent_cuckoo_loom)]

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
