//! A key's hash, exactly as the filter's hasher computes it, with byte
//! strings (a `str`'s UTF-8, `bytes`) hashed in one pass.
//!
//! The library's default hasher hashes a `[u8]` key as XXH3-64, with the
//! filter's seed, of its canonical bytes: std's `Hash` for a slice feeds
//! its length as a `usize`, which the hasher widens to 8 little-endian
//! bytes, then the bytes themselves (`src/hashing.rs`, "What is hashed";
//! XXH3 is a specified algorithm, its output frozen for saved filters).
//! Its `Hasher` collects those bytes through a general buffer (any key
//! type, any number of writes); a key already known to be a byte string
//! of 9 to 120 bytes is copied here once, behind its length, into one
//! buffer for `xxh3_64_with_seed`: the same input, so the same hash
//! (python/tests: batches and single calls store the same bytes for keys
//! of every length from 0 to 139), in less time. Others (ints, strings of
//! up to 8 bytes, which the library hashes in registers, and long ones)
//! take the filter's own hasher.

use crate::backend::Shape;
use crate::keys::KeyRef;
use xxhash_rust::xxh3::xxh3_64_with_seed;

/// Canonical input bytes hashed here at most: the library's inline
/// buffer (above it, its hasher streams; the output is the same).
const MAX_INPUT: usize = 128;

/// The length prefix: std feeds a slice's length as a `usize`, which the
/// library's hasher widens to a `u64`.
const PREFIX: usize = 8;

/// `key` hashed as `filter`'s keyed calls hash it.
#[inline]
pub(crate) fn hash<F: Shape>(filter: &F, key: KeyRef<'_>) -> u64 {
    match key {
        KeyRef::Int(v) => filter.hash_key(&v),
        KeyRef::Bytes(b) => bytes(filter, b),
    }
}

/// `filter.hash_key(b)` for a byte-string key.
#[inline]
fn bytes<F: Shape>(filter: &F, b: &[u8]) -> u64 {
    let len = PREFIX + b.len();
    // Up to 16 bytes the library hashes in registers, no buffer to skip.
    if len <= 16 || len > MAX_INPUT {
        return filter.hash_key(b);
    }
    let mut input = [0u8; MAX_INPUT];
    input[..PREFIX].copy_from_slice(&(b.len() as u64).to_le_bytes());
    input[PREFIX..len].copy_from_slice(b);
    xxh3_64_with_seed(&input[..len], filter.seed())
}
