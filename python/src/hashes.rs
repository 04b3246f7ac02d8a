//! A key's hash, exactly as the filter's hasher computes it.
//!
//! The library's default hasher hashes a `[u8]` key as XXH3-64, with the
//! filter's seed, of its canonical bytes: std's `Hash` for a slice feeds
//! its length as a `usize`, which the hasher widens to 8 little-endian
//! bytes, then the bytes themselves (`src/hashing.rs`, "What is hashed";
//! XXH3 is a specified algorithm, its output frozen for saved filters).
//! A `str` key is its UTF-8 as such a `[u8]` key (`keys.rs`), hashed by
//! the library's `hash_bytes`: in registers, from the bytes where they
//! lie, no copy (python/tests: batches and single calls store the same
//! bytes for keys of every length from 0 to 139). An int is the
//! library's `u64` key.

use crate::backend::Shape;
use crate::keys::KeyRef;

/// `key` hashed as `filter`'s keyed calls hash it.
#[inline]
pub(crate) fn hash<F: Shape>(filter: &F, key: KeyRef<'_>) -> u64 {
    match key {
        KeyRef::Int(v) => filter.hash_key(&v),
        KeyRef::Bytes(b) => filter.hash_bytes(b),
    }
}
