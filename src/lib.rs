//! A concurrent cuckoo filter (Fan, Andersen, Kaminsky, Mitzenmacher,
//! *Cuckoo Filter: Practically Better Than Bloom*, CoNEXT 2014):
//! approximate set membership with deletion, built for many threads at
//! once. The worker threads of a router dataplane, or the request threads of
//! a high-throughput service, share one filter through `&self`.
//!
//! ```
//! use concurrent_cuckoo::CuckooFilter;
//! use std::sync::Arc;
//!
//! let filter = Arc::new(CuckooFilter::with_capacity(1_000_000));
//! filter.insert("10.0.0.1:443")?;
//! assert!(filter.contains("10.0.0.1:443"));
//!
//! // A burst of lookups (a packet batch): the same answers as one
//! // `contains` per key, with the keys' memory accesses overlapped.
//! let burst = ["10.0.0.1:443", "10.0.0.2:80", "10.0.0.1:443"];
//! let mut found = [false; 3];
//! filter.contains_batch(&burst, &mut found);
//! assert!(found[0] && found[2]); // found[1]: false, or rarely a false positive
//!
//! // Many threads share it through `&self`: no lock around it.
//! let workers: Vec<_> = (0..4u64)
//!     .map(|t| {
//!         let filter = Arc::clone(&filter);
//!         std::thread::spawn(move || {
//!             for i in 0..1000u64 {
//!                 filter.insert(&(t, i)).unwrap();
//!             }
//!             assert!((0..1000u64).all(|i| filter.contains(&(t, i))));
//!         })
//!     })
//!     .collect();
//! for w in workers {
//!     w.join().unwrap();
//! }
//! assert_eq!(filter.len(), 4001);
//!
//! assert!(filter.remove("10.0.0.1:443"));
//! assert_eq!(filter.len(), 4000);
//! # Ok::<(), concurrent_cuckoo::InsertError>(())
//! ```
//!
//! # Which method when
//!
//! | you have, or want | call | |
//! |---|---|---|
//! | one key | [`insert`], [`contains`], [`remove`] | a key is any `K: Hash + ?Sized`: `str`, `[u8]`, integers, tuples, `#[derive(Hash)]` structs |
//! | a burst of keys | [`contains_batch`], [`insert_batch`], [`remove_batch`] | exactly the answers and effects of one call per key, in order; the buckets of keys further along are prefetched while the current one is probed, so many cache misses are in flight (see each method) |
//! | a 64-bit hash you already have, e.g. a NIC's RSS hash | [`insert_hash`], [`contains_hash`], [`remove_hash`], [`contains_hash_batch`], ... | every key method has a `*_hash` form; `contains_hash(filter.hasher().hash_one(&k))` is `contains(&k)` |
//! | a multiset: every insert counts | [`insert`] | up to 8 copies of a key; each [`remove`] takes one away |
//! | set semantics | [`insert_unique`] | adds the key only if it is absent, atomically: of threads racing to add one key, exactly one gets `true` |
//! | how many copies | [`count`] | exact: read under the key's stripe locks |
//! | size, memory, what writers did | [`len`], [`load_factor`], [`memory_usage`], [`stats`] | `stats` is one snapshot, including the writers' counters; reading it never slows lookups |
//!
//! # Which type when
//!
//! | | |
//! |---|---|
//! | [`CuckooFilter`] | you know how many items it must hold: a fixed capacity, the fastest lookups. An insert into a full filter fails with [`InsertError::Full`]. |
//! | [`ScalableCuckooFilter`] | your capacity estimate may be wrong: it adds a larger level whenever the newest one fills. A lookup that misses searches every level, so it costs more per level; removes across levels have a limit ([removing keys across levels](ScalableCuckooFilter#removing-keys-across-levels)); its stats are per level ([`level_stats`](ScalableCuckooFilter::level_stats)). |
//! | [`WindowedCuckooFilter`] | keys that expire by age: a key lives `G` generations after its last insert ([`advance`](WindowedCuckooFilter::advance) starts the next); inserts are never refused with at most `capacity` keys live, a lookup reads two buckets whatever `G` is. No per-key remove; saved and loaded as the others (format version 4). |
//! | [`FrozenFilter`] | a saved `CuckooFilter` queried in place, from bytes, a file read into memory ([`FrozenFilter::load`]) or a read-only mmapped file shared by processes (`unsafe` [`FrozenFilter::open`]): no decode, no locks, shared by any number of threads. Read-only; [`to_filter`](FrozenFilter::to_filter) thaws a writable copy. |
//! | persistence | [`to_bytes`](CuckooFilter::to_bytes) / [`from_bytes`](CuckooFilter::from_bytes), streaming [`write_to`](CuckooFilter::write_to) / [`read_from`](CuckooFilter::read_from) ([`read_from_limited`](CuckooFilter::read_from_limited) for untrusted input), crash-safe [`write_to_path`](CuckooFilter::write_to_path); the same on `ScalableCuckooFilter` and `WindowedCuckooFilter` (the windowed one without `read_from_limited`). With the `serde` feature, both filters implement `Serialize` and `Deserialize`. |
//! | C | the workspace member `ffi/` (crate `concurrent-cuckoo-ffi`): a C11 header and a static and a shared library; see [From C](#from-c). |
//!
//! # What it promises
//!
//! * **No false negatives, ever**: an item inserted and not removed is found
//!   by every thread at every moment, including while other threads move
//!   fingerprints to make room or remove duplicates and colliding keys.
//!   Every write path (moves, removes, `clear`) and every fingerprint width
//!   is model-checked with loom; `docs/concurrency.md` in the repository
//!   lists exactly what the models cover and what they do not.
//! * **False positives** at a rate below `2 * 4 / 2^bits`
//!   ([`false_positive_bound`](CuckooFilter::false_positive_bound)): about
//!   0.012% with the default 16-bit fingerprints; 8 and 32 bits are
//!   available ([`Builder::false_positive_rate`] picks the narrowest that
//!   meets a target).
//! * **Lookups take no lock and write no shared memory** in the common
//!   case, so readers scale with cores. A lookup that keeps racing moves
//!   through its two buckets retries a few times and then reads them under
//!   their two stripe locks, so that it always finishes (rare: see "What is
//!   not" under [Design in brief](#design-in-brief)). Writers lock two of
//!   up to 4096 cache-padded stripes.
//! * **Both candidate buckets compared with one SIMD instruction** (SSE2 or
//!   AVX2 on x86-64, NEON on aarch64, exact portable code elsewhere;
//!   [`probe_backend`] names the one compiled in).
//! * **Compact**: any even bucket count of at least 2 (no rounding to a power of two); 16-bit
//!   fingerprints cost about 18 bits per item at the requested capacity, and
//!   a filter fills to over 95% before its first refused insert.
//! * **Errors, not panics**: a full filter, too many duplicates, a bad
//!   configuration or a damaged file is a typed error
//!   ([`InsertError`], [`BatchInsertError`], [`BuildError`],
//!   [`DecodeError`]), and the filter is left exactly as it was.
//!
//! # Removing what was never inserted
//! A warning from the paper (section 3.3): removing a key that was never
//! inserted can remove *another* key's fingerprint if the two collide (the
//! same fingerprint and bucket pair), creating a false negative for that
//! other key. Only remove what you inserted. A [`ScalableCuckooFilter`]
//! adds a limit of its own: see
//! [removing keys across levels](ScalableCuckooFilter#removing-keys-across-levels).
//!
//! # Persistence
//! [`to_bytes`](CuckooFilter::to_bytes) /
//! [`from_bytes`](CuckooFilter::from_bytes) and streaming
//! [`write_to`](CuckooFilter::write_to) /
//! [`read_from`](CuckooFilter::read_from) use a versioned, checksummed
//! little-endian format (`docs/format.md` in the repository); a corrupted
//! or truncated input is refused with a [`DecodeError`], never turned into
//! a filter that answers wrong. [`write_to_path`](CuckooFilter::write_to_path)
//! replaces a file atomically (a temporary file, `fsync`, `rename`), so a
//! crash leaves the old file or the new one, and processes that have the
//! old one open as a [`FrozenFilter`] keep reading it. The default hasher
//! has frozen output (below), so a filter written on one machine answers
//! identically on another.
//!
//! ```
//! use concurrent_cuckoo::{CuckooFilter, FrozenFilter};
//! let filter = CuckooFilter::with_capacity(10_000);
//! filter.insert("blocked.example")?;
//! let bytes = filter.to_bytes();
//! assert!(CuckooFilter::from_bytes(&bytes)?.contains("blocked.example")); // a live copy
//! assert!(FrozenFilter::from_bytes(&bytes[..])?.contains("blocked.example")); // read in place
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! With the `serde` feature, [`CuckooFilter`] and [`ScalableCuckooFilter`]
//! serialize to the same bytes, as one byte string (formats such as JSON
//! that spell bytes as a sequence of numbers are accepted too):
//!
//! ```
//! # #[cfg(feature = "serde")] {
//! use concurrent_cuckoo::CuckooFilter;
//! let filter = CuckooFilter::with_capacity(100);
//! filter.insert("k").unwrap();
//! let json = serde_json::to_string(&filter).unwrap();
//! let back: CuckooFilter = serde_json::from_str(&json).unwrap();
//! assert!(back.contains("k"));
//! # }
//! ```
//!
//! # Keys and hashing
//! The default hasher, [`DefaultHashBuilder`], is XXH3-64 over a canonical
//! encoding of the key ([`PortableHasher`]), with a random seed per filter
//! (fix one with [`Builder::seed`] for reproducible runs). Its output is
//! frozen: the same key and seed hash the same on every platform and in
//! every release, which is what lets saved filters answer right anywhere.
//! The canonical encoding feeds integers as their little-endian bytes,
//! `usize`/`isize` widened to 8 bytes, and byte slices as they are. So
//! these keys hash alike on every platform: integers, `bool`, `char`, byte
//! slices, `Vec<u8>` and `[u8; N]`, `str` and `String`, and tuples and
//! `#[derive(Hash)]` structs of them. Slices and arrays of integers wider
//! than a byte are hashed by std as their native-endian memory, so they
//! agree between little-endian platforms only (and `[usize]` differs
//! between 32- and 64-bit ones); enums and hand-written `Hash` impls are as
//! portable as the hasher calls they make. For full control, hash keys
//! yourself and use the `*_hash` methods. Every hash, the filter's own or
//! yours, first goes through a fixed bijective mixer, so a hash whose
//! entropy is all in its low 32 bits (an RSS hash widened to `u64`) spreads
//! over the buckets as well as a full 64-bit one.
//!
//! The seed keeps an attacker who knows the hash function from crafting keys
//! that collide in one bucket pair (forcing refused inserts) or share a
//! fingerprint (chosen false positives). A saved filter records its seed, so
//! keep saved filters as private as the seed must be. Another persistent
//! hash function can be plugged in through [`PersistentHasher`]; any
//! [`BuildHasher`](core::hash::BuildHasher) works for a filter that is
//! never saved ([`Builder::hasher`]).
//!
//! # From C
//! The workspace member `ffi/` (crate `concurrent-cuckoo-ffi`) builds
//! `libconcurrent_cuckoo_ffi.a` and `.so` and the header
//! `ffi/include/concurrent_cuckoo.h`: an opaque `ccf_filter` handle with
//! the operations of [`CuckooFilter`] (`ccf_new`, `ccf_insert`,
//! `ccf_contains`, `ccf_remove`, their `*_hash` and batch forms,
//! `ccf_count`, `ccf_stats`, `ccf_save`/`ccf_load`, ...) returning a
//! `ccf_status`, and `ccf_frozen_*` calls that read a saved file in place
//! as a [`FrozenFilter`] does. Every function but the two `*_free` may be
//! called from any number of threads at once. A key given as `(const void
//! *key, size_t len)` hashes exactly as the Rust call on a `&[u8]` of the
//! same bytes, so a filter saved by Rust with byte-slice keys answers the
//! same in C, and the other way round. The header documents every function;
//! [`ffi/README.md`](https://github.com/concurrent-cuckoo/concurrent-cuckoo/blob/main/ffi/README.md)
//! shows how to build and link.
//!
//! # Design in brief
//! The paper's parameters: 4 slots per bucket, 16-bit fingerprints by
//! default, two candidate buckets per key by *partial-key cuckoo hashing*
//! (the alternate bucket depends only on the current bucket and the
//! fingerprint), so fingerprints can move without the original key.
//!
//! * **Hashing.** One 64-bit hash per key, mixed by a fixed bijective
//!   finalizer; its high 32 bits choose the primary bucket (a multiply and
//!   a shift onto any bucket count), its low bits are the fingerprint (0 is
//!   reserved for "empty"). The alternate bucket is `(H(f) - i1) mod m`
//!   with `H(f)` odd and `m` even: an involution for any `m`, and never
//!   `i1` itself.
//! * **Memory.** Buckets are 4, 8 or 16 bytes in one 64-byte-aligned array
//!   (on Linux, tables of 4 MiB and more are advised to use 2 MiB pages),
//!   so a bucket never straddles a cache line. A lookup loads each bucket
//!   with one atomic load and compares both against the fingerprint with
//!   one SIMD compare.
//! * **What is locked.** Inserts and removes lock the stripes of the key's
//!   two buckets, in ascending order. Each stripe counts its items on the
//!   lock's own cache line, so [`len`] adds no contended counter.
//! * **What is not.** Lookups. A lookup reads the *move versions* of its
//!   two buckets (a small array that stays in cache), loads both buckets
//!   and compares. A hit returns at once. A miss issues an acquire fence
//!   and re-reads the versions; if either changed, it retries, and after
//!   four attempts it reads the two buckets under their stripe locks, so
//!   every lookup finishes however busy the writers are.
//! * **Moves.** When both of a key's buckets are full, an insert searches
//!   breadth-first, without locks, for the shortest path of at most 5 moves
//!   that ends in a free slot, then executes it from the free end backwards,
//!   one hop at a time under that hop's two stripe locks: write the
//!   fingerprint into the destination, bump the source's version, clear the
//!   source. A reader that read the source after the clear and the
//!   destination before the write sees the version change and retries:
//!   that is why it never misses a present key. [`InsertError::Full`] means
//!   a search with every stripe locked found no path (a lock-free search
//!   can miss a free slot other writers move around, so one that finds
//!   none is confirmed that way); nothing is ever evicted.
//!
//! The longer version, with the memory-ordering argument and measurements,
//! is `docs/design.md` in the repository.
//!
//! [`insert`]: CuckooFilter::insert
//! [`contains`]: CuckooFilter::contains
//! [`remove`]: CuckooFilter::remove
//! [`contains_batch`]: CuckooFilter::contains_batch
//! [`insert_batch`]: CuckooFilter::insert_batch
//! [`remove_batch`]: CuckooFilter::remove_batch
//! [`insert_hash`]: CuckooFilter::insert_hash
//! [`contains_hash`]: CuckooFilter::contains_hash
//! [`remove_hash`]: CuckooFilter::remove_hash
//! [`contains_hash_batch`]: CuckooFilter::contains_hash_batch
//! [`insert_unique`]: CuckooFilter::insert_unique
//! [`count`]: CuckooFilter::count
//! [`len`]: CuckooFilter::len
//! [`load_factor`]: CuckooFilter::load_factor
//! [`memory_usage`]: CuckooFilter::memory_usage
//! [`stats`]: CuckooFilter::stats
#![warn(missing_docs)]

/// An item of the unstable surface (hooks for tests, measurements and the
/// C ABI's inlined lookups): public, hidden from the docs, with the
/// `unstable` feature; private to the crate without it, so that it is no
/// part of the stable API and may change in any release.
macro_rules! unstable_api {
    ($(#[$meta:meta])* pub fn $($rest:tt)*) => {
        #[cfg(feature = "unstable")]
        #[doc(hidden)]
        $(#[$meta])*
        pub fn $($rest)*
        #[cfg(not(feature = "unstable"))]
        #[allow(dead_code)]
        $(#[$meta])*
        pub(crate) fn $($rest)*
    };
}
pub(crate) use unstable_api;

#[cfg(not(concurrent_cuckoo_loom))]
mod copies;
mod error;
mod filter;
mod fingerprint;
#[cfg(not(concurrent_cuckoo_loom))]
mod frozen;
mod hashing;
mod index;
mod live_view;
mod lookup;
mod membership;
mod path;
#[cfg(not(concurrent_cuckoo_loom))]
mod persist;
mod probe;
#[cfg(not(concurrent_cuckoo_loom))]
mod relocate;
mod scalable;
mod snapshot;
mod stages;
mod stats;
mod storage;
mod stripes;
mod sync;
mod table;
mod table_move;
#[cfg(test)]
mod test_rng;
#[cfg(not(concurrent_cuckoo_loom))]
mod timed;
#[cfg(not(concurrent_cuckoo_loom))]
mod view;
mod windowed;

pub use error::{AllocationError, BatchInsertError, BuildError, DecodeError, InsertError};
pub use filter::{Builder, CuckooFilter};
#[cfg(not(concurrent_cuckoo_loom))]
pub use frozen::{FrozenBytes, FrozenFilter, MappedFile};
pub use hashing::{DefaultHashBuilder, PersistentHasher, PortableHasher};
pub use membership::{DeletableFilter, Filter};
#[cfg(not(concurrent_cuckoo_loom))]
pub use persist::{ChunkDecoder, ChunkEncoder, DecodedFilter, ReadOptions};
#[cfg(not(concurrent_cuckoo_loom))]
pub use relocate::{Relocate, Relocated};
pub use scalable::{CompactStats, Removal, ScalableBuilder, ScalableCuckooFilter};
pub use stats::Stats;
pub use storage::{TableAllocator, TableHost, TableMemory};
#[cfg(not(concurrent_cuckoo_loom))]
pub use timed::{Clock, ManualClock, SystemClock, TimedBuilder, TimedCuckooFilter};
#[cfg(not(concurrent_cuckoo_loom))]
#[doc(hidden)]
#[cfg(feature = "unstable")]
pub use view::LookupView;
pub use windowed::{WindowedBuilder, WindowedCuckooFilter, WindowedStats};
#[cfg(not(concurrent_cuckoo_loom))]
pub use windowed::{WindowedChunkDecoder, WindowedChunkEncoder};

crate::unstable_api! {
    /// Lookups on the calling thread that had to retry because a move went
    /// through one of their buckets: `(failed optimistic attempts, lookups that
    /// finished under the stripe locks)`, since the thread started. For the
    /// retry measurements in `harness`.
    ///
    /// **Unstable**: a hook for tests and measurements, hidden from the docs; it
    /// may change or go away in any release.
    #[must_use]
    pub fn thread_lookup_retries() -> (u64, u64) {
        table::diagnostics::thread_counts()
    }
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

/// The README's Rust examples, compiled and run as doctests (the crate
/// docs above no longer include the README).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The guide's Rust examples (docs/guide.md), compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/guide.md")]
pub struct GuideDoctests;
