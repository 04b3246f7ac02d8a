//! What the Python classes need of the library's types beyond its
//! [`Filter`] trait (lookups), so one generic body serves every class.

use concurrent_cuckoo::{
    BatchInsertError, CuckooFilter, DecodeError, Filter, FrozenFilter, InsertError, MappedFile,
    ScalableCuckooFilter, TimedCuckooFilter, WindowedCuckooFilter,
};
use std::hash::{BuildHasher, Hash};
use std::path::Path;

/// Every filter, frozen ones too: sizes for `capacity` and `repr`, and
/// the filter's own hash of a key.
pub(crate) trait Shape: Filter + Send + Sync {
    /// Keys the filter holds at most (a growing filter: before it grows).
    fn capacity(&self) -> usize;
    /// `key` hashed by the filter's hasher: what its keyed calls hash, so
    /// `contains_hash(hash_key(k))` is `contains(k)`. Batches hash each
    /// object's key while they read it (under the GIL, from the object's
    /// own bytes), so the chunk holds no references to its objects once
    /// read and the library takes plain `u64`s without the GIL.
    fn hash_key<K: Hash + ?Sized>(&self, key: &K) -> u64;
    /// `hash_key` of a byte-string key (a `str`'s UTF-8, `bytes`),
    /// computed in registers by the library's `hash_bytes`.
    fn hash_bytes(&self, bytes: &[u8]) -> u64;
}

/// A live filter: its file format.
pub(crate) trait Live: Shape + Sized {
    fn to_bytes(&self) -> Vec<u8>;
    fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError>;
    /// Crash-safe: a temporary file, fsync, rename.
    fn write_to_path(&self, path: &Path) -> std::io::Result<()>;
}

/// `Shape` and `Live` for a library type whose inherent methods have
/// these names (`$capacity`: the method that gives its capacity).
macro_rules! live {
    ($ty:ty, $capacity:ident) => {
        impl Shape for $ty {
            fn capacity(&self) -> usize {
                <$ty>::$capacity(self)
            }
            #[inline(always)]
            fn hash_key<K: Hash + ?Sized>(&self, key: &K) -> u64 {
                <$ty>::hasher(self).hash_one(key)
            }
            #[inline(always)]
            fn hash_bytes(&self, bytes: &[u8]) -> u64 {
                <$ty>::hasher(self).hash_bytes(bytes)
            }
        }
        impl Live for $ty {
            fn to_bytes(&self) -> Vec<u8> {
                <$ty>::to_bytes(self)
            }
            fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
                <$ty>::from_bytes(bytes)
            }
            fn write_to_path(&self, path: &Path) -> std::io::Result<()> {
                <$ty>::write_to_path(self, path)
            }
        }
    };
}

live!(CuckooFilter, capacity);
live!(ScalableCuckooFilter, capacity);
// A windowed filter's capacity is its slot count (what its builder's
// `capacity` rounds up to).
live!(WindowedCuckooFilter, slots);
live!(TimedCuckooFilter, slots);

/// A live filter whose insert of a present key refreshes it (windowed
/// and timed filters): `add` is "was it live, then refresh".
pub(crate) trait Refreshing: Live {
    fn refresh_hash(&self, hash: u64) -> Result<(), InsertError>;

    /// `add` of a hashed key: whether it was new (not live just before),
    /// then the refresh. Two threads adding one new key at once may both
    /// be told `true`; the filter holds it once.
    #[inline(always)]
    fn add_hash(&self, hash: u64) -> Result<bool, InsertError> {
        let new = !self.contains_hash(hash);
        self.refresh_hash(hash).map(|()| new)
    }
}

impl Refreshing for WindowedCuckooFilter {
    #[inline(always)]
    fn refresh_hash(&self, hash: u64) -> Result<(), InsertError> {
        self.insert_hash(hash)
    }
}

impl Refreshing for TimedCuckooFilter {
    #[inline(always)]
    fn refresh_hash(&self, hash: u64) -> Result<(), InsertError> {
        self.insert_hash(hash)
    }
}

/// A live filter with set and multiset calls: add-if-absent, copies,
/// counts, clearing (the fixed and the growing filter; a windowed filter
/// refreshes a key instead of copying it). Batches come as the keys'
/// hashes ([`Shape::hash_key`]).
pub(crate) trait Counting: Live {
    /// `insert_unique_hash` of every hash in order: `new[i]` says whether
    /// `hashes[i]`'s key was added; on a refusal, the index of the hash
    /// refused.
    ///
    /// The hashes are first looked up together (the library's pipelined
    /// batch lookup): a key present before the call stores nothing and is
    /// not new, exactly as its `insert_unique` would answer (nothing is
    /// removed meanwhile by this call, and a concurrent remove may as well
    /// have come after). Only the others take `insert_unique_hash`, which
    /// looks again under its lock (a repeat within the batch, or a false
    /// positive of a key added earlier in it, is found then). A column of
    /// repeated ids is mostly lookups.
    fn insert_unique_hashes(
        &self,
        hashes: &[u64],
        new: &mut [bool],
    ) -> Result<(), (usize, InsertError)> {
        self.contains_hash_batch(hashes, new);
        let absent = absent(new);
        for &i in &absent {
            new[i] = self.insert_unique_hash(hashes[i]).map_err(|e| (i, e))?;
        }
        Ok(())
    }
    fn insert<K: Hash + ?Sized>(&self, key: &K) -> Result<(), InsertError>;
    fn insert_hash_batch(&self, hashes: &[u64]) -> Result<(), BatchInsertError>;
    fn insert_unique_hash(&self, hash: u64) -> Result<bool, InsertError>;
    fn count<K: Hash + ?Sized>(&self, key: &K) -> usize;
    fn clear(&self);
}

macro_rules! counting {
    ($ty:ty $(, $own:item)*) => {
        impl Counting for $ty {
            $($own)*
            fn insert<K: Hash + ?Sized>(&self, key: &K) -> Result<(), InsertError> {
                <$ty>::insert(self, key)
            }
            fn insert_hash_batch(&self, hashes: &[u64]) -> Result<(), BatchInsertError> {
                <$ty>::insert_hash_batch(self, hashes)
            }
            fn insert_unique_hash(&self, hash: u64) -> Result<bool, InsertError> {
                <$ty>::insert_unique_hash(self, hash)
            }
            fn count<K: Hash + ?Sized>(&self, key: &K) -> usize {
                <$ty>::count(self, key)
            }
            fn clear(&self) {
                <$ty>::clear(self)
            }
        }
    };
}

/// The indices of the keys not found (`found[i]` false), and `found`
/// cleared: a found key is not new.
fn absent(found: &mut [bool]) -> Vec<usize> {
    let absent = (0..found.len()).filter(|&i| !found[i]).collect();
    found.fill(false);
    absent
}

counting!(
    CuckooFilter,
    /// The library's pipelined set-style batch
    /// (`insert_unique_hash_batch`): the same answers as the default's
    /// lookups and inserts one at a time, with every key's buckets
    /// prefetched ahead and, for a chunk as long as the table has
    /// stripes, the stripes locked once for the chunk rather than twice a
    /// key. A key already present is a look at its two buckets under the
    /// locks, as cheap as the default's lookup pass.
    fn insert_unique_hashes(
        &self,
        hashes: &[u64],
        new: &mut [bool],
    ) -> Result<(), (usize, InsertError)> {
        self.insert_unique_hash_batch(hashes, new)
            .map_err(|e| (e.inserted(), *e.error()))
    }
);
counting!(ScalableCuckooFilter);

impl Shape for FrozenFilter<MappedFile> {
    fn capacity(&self) -> usize {
        FrozenFilter::capacity(self)
    }
    #[inline(always)]
    fn hash_key<K: Hash + ?Sized>(&self, key: &K) -> u64 {
        FrozenFilter::hasher(self).hash_one(key)
    }
    #[inline(always)]
    fn hash_bytes(&self, bytes: &[u8]) -> u64 {
        FrozenFilter::hasher(self).hash_bytes(bytes)
    }
}
