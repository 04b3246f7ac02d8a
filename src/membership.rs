//! [`Filter`]: what every filter type answers, for code generic over them
//! (as xorf's `Filter<T>`). Each method is the type's inherent method of
//! the same name, which callers that know the type use without importing
//! the trait.

use crate::frozen::FrozenFilter;
use crate::{CuckooFilter, ScalableCuckooFilter, WindowedCuckooFilter};
use core::hash::{BuildHasher, Hash};

/// The lookups and sizes of every filter: [`CuckooFilter`],
/// [`ScalableCuckooFilter`], [`WindowedCuckooFilter`] and
/// [`FrozenFilter`]. Writes differ between them (a frozen filter takes
/// none, a windowed one has no per-key remove), so they are not here.
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
pub trait Filter {
    /// Whether `key` may be in the filter: `false` means it is not (no
    /// false negatives); `true` is wrong at most about
    /// [`false_positive_bound`](Self::false_positive_bound) of the time.
    fn contains<K: Hash + ?Sized>(&self, key: &K) -> bool;

    /// [`contains`](Self::contains) of a 64-bit hash (the filter's
    /// hasher's output, or your own).
    fn contains_hash(&self, hash: u64) -> bool;

    /// `out[i] = contains(&keys[i])`, with the memory accesses of many keys
    /// overlapped.
    ///
    /// # Panics
    /// If `keys.len() != out.len()`.
    fn contains_batch<K: Hash>(&self, keys: &[K], out: &mut [bool]);

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
}

/// Implements [`Filter`] for `$ty` (its generic parameters and their
/// bounds in brackets) by calling its inherent methods.
macro_rules! impl_filter {
    ($([$($generics:tt)*] $ty:ty;)*) => {$(
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
        }
    )*};
}

impl_filter! {
    [S: BuildHasher] CuckooFilter<S>;
    [S: BuildHasher] ScalableCuckooFilter<S>;
    [S: BuildHasher] WindowedCuckooFilter<S>;
    [B: AsRef<[u8]>, S: BuildHasher] FrozenFilter<B, S>;
}
