//! The traits over the filter types, for code generic over them (as
//! xorf's `Filter<T>`) or that picks one at run time (`Box<dyn Filter>`):
//! [`Filter`], the lookups and sizes of all five filter types, and
//! [`DeletableFilter`], the writes of the two that store copies and remove
//! them. Each method is
//! the type's inherent method of the same name, which callers that know
//! the type use without importing a trait.
//!
//! Both traits are dyn-compatible: the methods generic over the key type
//! require `Self: Sized`, and a trait object calls the hash-based forms
//! (`contains_hash`, `insert_hash`, `remove_hash`, ...) with `hash_key(key)`,
//! the key hashed by the filter's own hasher (on `dyn Filter` and
//! `dyn DeletableFilter`, with or without `+ Send + Sync`): the hash the
//! keyed methods compute, so the same answers. Both are sealed:
//! implemented by this crate's filters only, so methods can be added
//! without breaking anyone.

mod deletable;
mod dyn_keys;
mod lookups;

pub use deletable::DeletableFilter;
pub use lookups::Filter;

/// The seal: only this crate's filters implement [`Filter`].
pub(crate) mod sealed {
    /// Implemented by the five filter types; not nameable outside the crate.
    pub trait Sealed {}
}
