//! What the Python classes need of the library's types beyond its
//! [`Filter`] trait (lookups), so one generic body serves every class.

use concurrent_cuckoo::{
    BatchInsertError, CuckooFilter, DecodeError, Filter, FrozenFilter, InsertError, MappedFile,
    ScalableCuckooFilter, WindowedCuckooFilter,
};
use std::hash::Hash;
use std::path::Path;

/// Every filter, frozen ones too: sizes for `capacity` and `repr`.
pub(crate) trait Shape: Filter + Send + Sync {
    /// Keys the filter holds at most (a growing filter: before it grows).
    fn capacity(&self) -> usize;
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

/// A live filter with set and multiset calls: add-if-absent, copies,
/// counts, clearing (the fixed and the growing filter; a windowed filter
/// refreshes a key instead of copying it).
pub(crate) trait Counting: Live {
    fn insert<K: Hash + ?Sized>(&self, key: &K) -> Result<(), InsertError>;
    fn insert_batch<K: Hash>(&self, keys: &[K]) -> Result<(), BatchInsertError>;
    fn insert_unique<K: Hash + ?Sized>(&self, key: &K) -> Result<bool, InsertError>;
    fn count<K: Hash + ?Sized>(&self, key: &K) -> usize;
    fn clear(&self);
}

macro_rules! counting {
    ($ty:ty) => {
        impl Counting for $ty {
            fn insert<K: Hash + ?Sized>(&self, key: &K) -> Result<(), InsertError> {
                <$ty>::insert(self, key)
            }
            fn insert_batch<K: Hash>(&self, keys: &[K]) -> Result<(), BatchInsertError> {
                <$ty>::insert_batch(self, keys)
            }
            fn insert_unique<K: Hash + ?Sized>(&self, key: &K) -> Result<bool, InsertError> {
                <$ty>::insert_unique(self, key)
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

counting!(CuckooFilter);
counting!(ScalableCuckooFilter);

impl Shape for FrozenFilter<MappedFile> {
    fn capacity(&self) -> usize {
        FrozenFilter::capacity(self)
    }
}
