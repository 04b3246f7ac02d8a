#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod error;
mod filter;
mod fingerprint;
#[cfg(not(concurrent_cuckoo_loom))]
mod frozen;
mod hashing;
mod index;
mod lookup;
mod path;
#[cfg(not(concurrent_cuckoo_loom))]
mod persist;
mod probe;
mod scalable;
mod stats;
mod storage;
mod stripes;
mod sync;
mod table;
#[cfg(test)]
mod test_rng;

pub use error::{AllocationError, BatchInsertError, BuildError, DecodeError, InsertError};
pub use filter::{Builder, CuckooFilter};
#[cfg(not(concurrent_cuckoo_loom))]
pub use frozen::FrozenFilter;
pub use hashing::{DefaultHashBuilder, PersistentHasher, PortableHasher};
pub use scalable::{ScalableBuilder, ScalableCuckooFilter};
pub use stats::Stats;

/// Lookups on the calling thread that had to retry because a move went
/// through one of their buckets: `(failed optimistic attempts, lookups that
/// finished under the stripe locks)`, since the thread started. For the
/// retry measurements in `harness`.
///
/// **Unstable**: a hook for tests and measurements, hidden from the docs; it
/// may change or go away in any release.
#[doc(hidden)]
#[must_use]
pub fn thread_lookup_retries() -> (u64, u64) {
    table::diagnostics::thread_counts()
}

/// Name of the SIMD probe compiled into this build: `"sse2"`, `"sse2+avx2"`,
/// `"neon"` or `"portable"`.
///
/// ```
/// let backend = concurrent_cuckoo::probe_backend();
/// assert!(["sse2", "sse2+avx2", "neon", "portable"].contains(&backend));
/// println!("lookups compare buckets with {backend}");
/// ```
#[must_use]
pub fn probe_backend() -> &'static str {
    probe::BACKEND
}
