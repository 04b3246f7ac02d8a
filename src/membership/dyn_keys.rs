//! [`hash_key`](dyn Filter::hash_key) on the trait objects: the keyed
//! methods of [`Filter`] and [`DeletableFilter`] are generic over the key,
//! so a trait object cannot call them (`where Self: Sized` keeps the traits
//! dyn-compatible); it calls their hash-based forms with the key hashed by
//! the filter's own hasher, which is what the keyed methods do, so the
//! answers are the same. (The methods cannot share the keyed methods'
//! names: a trait object's own trait methods would shadow them.)

use super::{DeletableFilter, Filter};
use core::hash::{Hash, Hasher};

/// Implements `hash_key` for each trait-object type.
macro_rules! hash_key {
    ($($dyn_ty:ty),*) => {$(
        impl $dyn_ty {
            /// `key` hashed by the filter's hasher
            /// ([`Filter::hash_with`]): what the filter's keyed methods
            /// hash, for its hash-based ones.
            ///
            /// ```
            /// use concurrent_cuckoo::{CuckooFilter, Filter};
            /// let filter: Box<dyn Filter> = Box::new(CuckooFilter::with_capacity(100));
            /// assert!(!filter.contains_hash(filter.hash_key("k")));
            /// ```
            #[inline]
            pub fn hash_key<K: Hash + ?Sized>(&self, key: &K) -> u64 {
                self.hash_with(&mut |hasher: &mut dyn Hasher| key.hash(&mut &mut *hasher))
            }
        }
    )*};
}

hash_key!(
    dyn Filter + '_,
    dyn Filter + Send + Sync + '_,
    dyn DeletableFilter + '_,
    dyn DeletableFilter + Send + Sync + '_
);
