//! [`Filter`]: what every filter type answers.

use super::sealed::Sealed;
use crate::{CuckooFilter, ScalableCuckooFilter, WindowedCuckooFilter};
use core::hash::{BuildHasher, Hash, Hasher};

/// The lookups and sizes of every filter: [`CuckooFilter`],
/// [`ScalableCuckooFilter`], [`WindowedCuckooFilter`], [`FrozenFilter`]
/// and [`TimedCuckooFilter`]. Writes differ between them (a frozen filter
/// takes none, the windowed and timed ones refresh and have no per-key
/// remove): the two
/// that store copies and remove them share [`DeletableFilter`](super::DeletableFilter).
///
/// Sealed (only this crate's filters implement it) and dyn-compatible: a
/// `dyn Filter` answers the hash-based calls, given the key hashed by the
/// filter's hasher (`hash_key`, built on [`hash_with`](Self::hash_with)),
/// so a filter chosen at run time answers exactly as its type does.
///
/// ```
/// use concurrent_cuckoo::{CuckooFilter, Filter, ScalableCuckooFilter, WindowedCuckooFilter};
///
/// let fixed = CuckooFilter::with_capacity(100);
/// fixed.insert("a")?;
/// let filters: Vec<Box<dyn Filter + Send + Sync>> = vec![
///     Box::new(fixed),
///     Box::new(ScalableCuckooFilter::with_capacity(100)),
///     Box::new(WindowedCuckooFilter::with_capacity(100)),
/// ];
/// let found: Vec<bool> = filters.iter().map(|f| f.contains_hash(f.hash_key("a"))).collect();
/// assert_eq!(found, [true, false, false]);
/// # Ok::<(), concurrent_cuckoo::InsertError>(())
/// ```
///
/// Generic code over a known type:
///
/// ```
/// use concurrent_cuckoo::{CuckooFilter, Filter, ScalableCuckooFilter};
///
/// fn share_found<F: Filter>(filter: &F, keys: &[&str]) -> f64 {
///     let mut found = vec![false; keys.len()];
///     filter.contains_batch(keys, &mut found);
///     found.iter().filter(|&&f| f).count() as f64 / keys.len() as f64
/// }
///
/// let fixed = CuckooFilter::with_capacity(100);
/// let growing = ScalableCuckooFilter::with_capacity(100);
/// fixed.insert("a")?;
/// growing.insert("a")?;
/// assert_eq!(share_found(&fixed, &["a", "b"]), share_found(&growing, &["a", "b"]));
/// # Ok::<(), concurrent_cuckoo::InsertError>(())
/// ```
pub trait Filter: Sealed {
    /// Whether `key` may be in the filter: `false` means it is not (no
    /// false negatives); `true` is wrong at most about
    /// [`false_positive_bound`](Self::false_positive_bound) of the time.
    /// (A `dyn Filter` calls `contains_hash(filter.hash_key(key))`.)
    fn contains<K: Hash + ?Sized>(&self, key: &K) -> bool
    where
        Self: Sized;

    /// [`contains`](Self::contains) of a 64-bit hash (the filter's
    /// hasher's output, or your own).
    fn contains_hash(&self, hash: u64) -> bool;

    /// `out[i] = contains(&keys[i])`, with the memory accesses of many keys
    /// overlapped.
    ///
    /// # Panics
    /// If `keys.len() != out.len()`.
    fn contains_batch<K: Hash>(&self, keys: &[K], out: &mut [bool])
    where
        Self: Sized;

    /// [`contains_batch`](Self::contains_batch) of 64-bit hashes.
    ///
    /// # Panics
    /// If `hashes.len() != out.len()`.
    fn contains_hash_batch(&self, hashes: &[u64], out: &mut [bool]);

    /// Items held (each type's own count: stored copies, or live keys for
    /// a windowed filter).
    fn len(&self) -> usize;

    /// Whether [`len`](Self::len) is 0.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The most a lookup of an absent key answers `true`, as a rate, for
    /// the filter as it is now.
    fn false_positive_bound(&self) -> f64;

    /// Bytes the filter holds.
    fn memory_usage(&self) -> usize;

    /// The filter's hasher applied to what `write` feeds it: the hash every
    /// keyed call of the filter uses, for callers that hold it as a
    /// `dyn Filter` (whose keyed calls are built on this).
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, Filter};
    /// use std::hash::BuildHasher;
    /// let filter = CuckooFilter::with_capacity(100);
    /// let by_trait = Filter::hash_with(&filter, &mut |h| h.write_u64(7));
    /// assert_eq!(by_trait, filter.hasher().hash_one(7u64));
    /// ```
    fn hash_with(&self, write: &mut dyn FnMut(&mut dyn Hasher)) -> u64;
}

// The frozen and timed filters are not built for the loom models.
#[cfg(not(concurrent_cuckoo_loom))]
use crate::frozen::FrozenFilter;
#[cfg(not(concurrent_cuckoo_loom))]
use crate::timed::{Clock, TimedCuckooFilter};

/// Implements [`Filter`] for `$ty` (its generic parameters and their
/// bounds in brackets) by calling its inherent methods.
macro_rules! impl_filter {
    ($($(#[$attr:meta])* [$($generics:tt)*] $ty:ty;)*) => {$(
        $(#[$attr])*
        impl<$($generics)*> Sealed for $ty {}

        $(#[$attr])*
        impl<$($generics)*> Filter for $ty {
            #[inline]
            fn contains<K: Hash + ?Sized>(&self, key: &K) -> bool {
                <$ty>::contains(self, key)
            }
            #[inline]
            fn contains_hash(&self, hash: u64) -> bool {
                <$ty>::contains_hash(self, hash)
            }
            #[inline]
            fn contains_batch<K: Hash>(&self, keys: &[K], out: &mut [bool]) {
                <$ty>::contains_batch(self, keys, out)
            }
            #[inline]
            fn contains_hash_batch(&self, hashes: &[u64], out: &mut [bool]) {
                <$ty>::contains_hash_batch(self, hashes, out)
            }
            #[inline]
            fn len(&self) -> usize {
                <$ty>::len(self)
            }
            #[inline]
            fn is_empty(&self) -> bool {
                <$ty>::is_empty(self)
            }
            fn false_positive_bound(&self) -> f64 {
                <$ty>::false_positive_bound(self)
            }
            fn memory_usage(&self) -> usize {
                <$ty>::memory_usage(self)
            }
            fn hash_with(&self, write: &mut dyn FnMut(&mut dyn Hasher)) -> u64 {
                let mut hasher = self.hasher().build_hasher();
                write(&mut hasher);
                hasher.finish()
            }
        }
    )*};
}

impl_filter! {
    [S: BuildHasher] CuckooFilter<S>;
    [S: BuildHasher] ScalableCuckooFilter<S>;
    [S: BuildHasher] WindowedCuckooFilter<S>;
    #[cfg(not(concurrent_cuckoo_loom))]
    [B: AsRef<[u8]>, S: BuildHasher] FrozenFilter<B, S>;
    #[cfg(not(concurrent_cuckoo_loom))]
    [C: Clock, S: BuildHasher] TimedCuckooFilter<C, S>;
}
