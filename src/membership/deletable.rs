//! [`DeletableFilter`]: the writes of the filters that store copies and
//! remove them.

use super::Filter;
use crate::error::InsertError;
use crate::{CuckooFilter, ScalableCuckooFilter};
use core::hash::{BuildHasher, Hash};

/// The writes of [`CuckooFilter`] and [`ScalableCuckooFilter`], the two
/// filters that store a copy a key per insert and remove one per remove.
/// Sealed and dyn-compatible as [`Filter`] is: a `dyn DeletableFilter`
/// calls the hash-based forms with `hash_key(key)`.
///
/// `insert` means the same on both: store one copy; each `remove` undoes
/// one `insert`, so a key inserted and not removed is always found.
/// [`insert_unique`](Self::insert_unique) is the set-style form, with its
/// caveat: a key it refuses as already present (which may be another
/// key's false positive) was not stored, and must not be removed later.
///
/// ```
/// use concurrent_cuckoo::{CuckooFilter, DeletableFilter, ScalableCuckooFilter};
///
/// fn pick(growing: bool) -> Box<dyn DeletableFilter + Send + Sync> {
///     if growing {
///         Box::new(ScalableCuckooFilter::with_capacity(1000))
///     } else {
///         Box::new(CuckooFilter::with_capacity(1000))
///     }
/// }
///
/// for growing in [false, true] {
///     let filter = pick(growing);
///     let flow = filter.hash_key("flow-7");
///     filter.insert_hash(flow)?;
///     assert!(filter.contains_hash(flow));
///     assert!(!filter.insert_unique_hash(flow)?); // present: not stored again
///     assert!(filter.remove_hash(flow));
///     assert!(!filter.contains_hash(flow));
/// }
/// # Ok::<(), concurrent_cuckoo::InsertError>(())
/// ```
pub trait DeletableFilter: Filter {
    /// Stores one copy of `key`.
    ///
    /// # Errors
    /// [`InsertError`]: the filter is full, or holds too many copies of
    /// the key's fingerprint; nothing changed.
    fn insert<K: Hash + ?Sized>(&self, key: &K) -> Result<(), InsertError>
    where
        Self: Sized;

    /// [`insert`](Self::insert) of a 64-bit hash.
    ///
    /// # Errors
    /// As [`insert`](Self::insert).
    fn insert_hash(&self, hash: u64) -> Result<(), InsertError>;

    /// Stores `key` unless it (or a key indistinguishable from it) is
    /// already present; `true` if it was stored. Atomic with respect to
    /// other `insert_unique` calls.
    ///
    /// # Errors
    /// As [`insert`](Self::insert).
    fn insert_unique<K: Hash + ?Sized>(&self, key: &K) -> Result<bool, InsertError>
    where
        Self: Sized;

    /// [`insert_unique`](Self::insert_unique) of a 64-bit hash.
    ///
    /// # Errors
    /// As [`insert`](Self::insert).
    fn insert_unique_hash(&self, hash: u64) -> Result<bool, InsertError>;

    /// Removes one copy of `key`; `true` if one was removed. A growing
    /// filter may refuse to (see [`Removal`](crate::Removal)): `false`
    /// then too, and the key stays present; its inherent
    /// [`remove`](ScalableCuckooFilter::remove) tells the two apart.
    fn remove<K: Hash + ?Sized>(&self, key: &K) -> bool
    where
        Self: Sized;

    /// [`remove`](Self::remove) of a 64-bit hash.
    fn remove_hash(&self, hash: u64) -> bool;
}

impl<S: BuildHasher> DeletableFilter for CuckooFilter<S> {
    #[inline]
    fn insert<K: Hash + ?Sized>(&self, key: &K) -> Result<(), InsertError> {
        CuckooFilter::insert(self, key)
    }
    #[inline]
    fn insert_hash(&self, hash: u64) -> Result<(), InsertError> {
        CuckooFilter::insert_hash(self, hash)
    }
    #[inline]
    fn insert_unique<K: Hash + ?Sized>(&self, key: &K) -> Result<bool, InsertError> {
        CuckooFilter::insert_unique(self, key)
    }
    #[inline]
    fn insert_unique_hash(&self, hash: u64) -> Result<bool, InsertError> {
        CuckooFilter::insert_unique_hash(self, hash)
    }
    #[inline]
    fn remove<K: Hash + ?Sized>(&self, key: &K) -> bool {
        CuckooFilter::remove(self, key)
    }
    #[inline]
    fn remove_hash(&self, hash: u64) -> bool {
        CuckooFilter::remove_hash(self, hash)
    }
}

impl<S: BuildHasher> DeletableFilter for ScalableCuckooFilter<S> {
    #[inline]
    fn insert<K: Hash + ?Sized>(&self, key: &K) -> Result<(), InsertError> {
        ScalableCuckooFilter::insert(self, key)
    }
    #[inline]
    fn insert_hash(&self, hash: u64) -> Result<(), InsertError> {
        ScalableCuckooFilter::insert_hash(self, hash)
    }
    #[inline]
    fn insert_unique<K: Hash + ?Sized>(&self, key: &K) -> Result<bool, InsertError> {
        ScalableCuckooFilter::insert_unique(self, key)
    }
    #[inline]
    fn insert_unique_hash(&self, hash: u64) -> Result<bool, InsertError> {
        ScalableCuckooFilter::insert_unique_hash(self, hash)
    }
    #[inline]
    fn remove<K: Hash + ?Sized>(&self, key: &K) -> bool {
        ScalableCuckooFilter::remove(self, key).is_removed()
    }
    #[inline]
    fn remove_hash(&self, hash: u64) -> bool {
        ScalableCuckooFilter::remove_hash(self, hash).is_removed()
    }
}
