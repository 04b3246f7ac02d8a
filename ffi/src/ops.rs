//! The calls every filter handle makes the same way: insert, look up,
//! count and remove one byte key, one hash, and bursts of either; insert
//! a key once (set semantics); run an operation on the filter behind a
//! handle; box a filter into a handle and release it. Each handle type
//! (`ccf_filter`, `ccf_scalable`, `ccf_windowed`, `ccf_frozen`) says which
//! library filter it wraps ([`Handle`]), and each library filter which of
//! the traits below it offers ([`Lookup`], [`Keyed`], [`Counted`],
//! [`Unique`], [`Removable`]); the exported `ccf_*` functions whose bodies
//! are alike are one-line calls of the generic functions here, so a new
//! filter type adds its names and their C documentation, not another copy
//! of the argument checks and `SAFETY` reasoning. Saving and loading files
//! are the generic `save`, `load` and `open` of [`crate::persist`].

use crate::status::ccf_status::{self, *};
use crate::{
    array, array_or_empty, contains_byte_keys, guard, insert_byte_keys, insert_hashes, key_bytes,
    out_array, set_count,
};
use crate::{remove_byte_keys, remove_hashes, set_added};
use concurrent_cuckoo::{BatchInsertError, InsertError};
use core::ffi::c_void;

/// The lookups a handle's filter offers these calls: the library's
/// inherent methods of the same meaning.
pub(crate) trait Lookup: Sync {
    fn contains_key(&self, key: &[u8]) -> bool;
    fn contains_one_hash(&self, hash: u64) -> bool;
    fn contains_keys(&self, keys: &[&[u8]], out: &mut [bool]);
    fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]);
}

/// The inserts of a filter that takes them, besides its lookups.
pub(crate) trait Keyed: Lookup {
    fn insert_key(&self, key: &[u8]) -> Result<(), InsertError>;
    fn insert_one_hash(&self, hash: u64) -> Result<(), InsertError>;
    fn insert_keys(&self, keys: &[&[u8]]) -> Result<(), BatchInsertError>;
    fn insert_many_hashes(&self, hashes: &[u64]) -> Result<(), BatchInsertError>;
}

/// Copies of a key's fingerprint (`count`, `count_hash`).
pub(crate) trait Counted: Sync {
    fn count_key(&self, key: &[u8]) -> usize;
    fn count_one_hash(&self, hash: u64) -> usize;
}

/// Inserts with set semantics: `Ok(true)` when this call stored the key.
pub(crate) trait Unique: Sync {
    fn insert_unique_key(&self, key: &[u8]) -> Result<bool, InsertError>;
    fn insert_unique_one_hash(&self, hash: u64) -> Result<bool, InsertError>;
}

/// Keys given with a 32-bit signature (`CuckooFilter::signed_hash`).
pub(crate) trait Signed: Lookup {
    fn signed_hash_of(&self, key: &[u8], signature: u32) -> u64;
    fn contains_signed(&self, keys: &[&[u8]], signatures: &[u32], out: &mut [bool]);
}

/// Removes, each answering as C does: whether a copy was taken away.
/// Implemented by hand for each filter type, since the library's answers
/// differ (`CuckooFilter::remove` is a `bool`,
/// `ScalableCuckooFilter::remove` a `Removal`).
pub(crate) trait Removable: Sync {
    fn remove_key(&self, key: &[u8]) -> bool;
    fn remove_one_hash(&self, hash: u64) -> bool;
    /// `out[i]`: whether a copy of `keys[i]` was removed; `out` is as long
    /// as `keys`.
    fn remove_keys(&self, keys: &[&[u8]], out: &mut [bool]);
    /// As [`Removable::remove_keys`], for hashes.
    fn remove_many_hashes(&self, hashes: &[u64], out: &mut [bool]);
}

/// [`Lookup`] for a library filter type whose inherent methods have the
/// usual names (`contains`, `contains_hash`, `contains_batch`,
/// `contains_hash_batch`).
macro_rules! lookup {
    ($filter:ty) => {
        impl $crate::ops::Lookup for $filter {
            /// Through `hash_bytes` (in registers), as every byte-key
            /// call here: the hash `contains(key)` computes.
            #[inline(always)]
            fn contains_key(&self, key: &[u8]) -> bool {
                <$filter>::contains_hash(self, <$filter>::hasher(self).hash_bytes(key))
            }
            #[inline(always)]
            fn contains_one_hash(&self, hash: u64) -> bool {
                <$filter>::contains_hash(self, hash)
            }
            /// Each chunk's keys hashed first by `hash_bytes` (in
            /// registers, from the bytes where they lie), then looked up
            /// as hashes: the same answers as `contains_batch` of the
            /// keys, which hashes each through a `Hasher` that the batch's
            /// loop calls out of line (`docs/benchmarks.md`, "Byte-key
            /// bursts").
            #[inline(always)]
            fn contains_keys(&self, keys: &[&[u8]], out: &mut [bool]) {
                let hasher = <$filter>::hasher(self);
                let mut hashes = [0u64; $crate::KEY_CHUNK];
                for (keys, out) in keys
                    .chunks($crate::KEY_CHUNK)
                    .zip(out.chunks_mut($crate::KEY_CHUNK))
                {
                    for (hash, key) in hashes.iter_mut().zip(keys) {
                        *hash = hasher.hash_bytes(key);
                    }
                    <$filter>::contains_hash_batch(self, &hashes[..keys.len()], out);
                }
            }
            #[inline(always)]
            fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) {
                <$filter>::contains_hash_batch(self, hashes, out)
            }
        }
    };
}
pub(crate) use lookup;

/// [`Lookup`] and [`Keyed`] for a library filter type whose inherent
/// methods have the usual names (those of [`lookup!`], and `insert`,
/// `insert_hash`, `insert_batch`, `insert_hash_batch`).
macro_rules! keyed {
    ($filter:ty) => {
        $crate::ops::lookup!($filter);
        impl $crate::ops::Keyed for $filter {
            #[inline(always)]
            fn insert_key(&self, key: &[u8]) -> Result<(), concurrent_cuckoo::InsertError> {
                <$filter>::insert_hash(self, <$filter>::hasher(self).hash_bytes(key))
            }
            #[inline(always)]
            fn insert_one_hash(&self, hash: u64) -> Result<(), concurrent_cuckoo::InsertError> {
                <$filter>::insert_hash(self, hash)
            }
            #[inline(always)]
            fn insert_keys(
                &self,
                keys: &[&[u8]],
            ) -> Result<(), concurrent_cuckoo::BatchInsertError> {
                <$filter>::insert_batch(self, keys)
            }
            #[inline(always)]
            fn insert_many_hashes(
                &self,
                hashes: &[u64],
            ) -> Result<(), concurrent_cuckoo::BatchInsertError> {
                <$filter>::insert_hash_batch(self, hashes)
            }
        }
    };
}
pub(crate) use keyed;

/// [`Counted`] for a library filter type with `count` and `count_hash`.
macro_rules! counted {
    ($filter:ty) => {
        impl $crate::ops::Counted for $filter {
            #[inline(always)]
            fn count_key(&self, key: &[u8]) -> usize {
                <$filter>::count_hash(self, <$filter>::hasher(self).hash_bytes(key))
            }
            #[inline(always)]
            fn count_one_hash(&self, hash: u64) -> usize {
                <$filter>::count_hash(self, hash)
            }
        }
    };
}
pub(crate) use counted;

/// [`Unique`] for a library filter type with `insert_unique` and
/// `insert_unique_hash`.
macro_rules! unique {
    ($filter:ty) => {
        impl $crate::ops::Unique for $filter {
            #[inline(always)]
            fn insert_unique_key(
                &self,
                key: &[u8],
            ) -> Result<bool, concurrent_cuckoo::InsertError> {
                <$filter>::insert_unique_hash(self, <$filter>::hasher(self).hash_bytes(key))
            }
            #[inline(always)]
            fn insert_unique_one_hash(
                &self,
                hash: u64,
            ) -> Result<bool, concurrent_cuckoo::InsertError> {
                <$filter>::insert_unique_hash(self, hash)
            }
        }
    };
}
pub(crate) use unique;

/// An opaque handle: a boxed library filter, given to C as a pointer.
pub(crate) trait Handle: Sized {
    type Filter: Sync;
    fn filter(&self) -> &Self::Filter;
    fn wrap(filter: Self::Filter) -> Self;
}

/// The filter behind a handle; `None` for NULL.
///
/// # Safety
/// `f` is NULL or a handle made by [`store`] and not yet released by
/// [`release`].
#[inline(always)]
pub(crate) unsafe fn filter_of<'a, H: Handle + 'a>(f: *const H) -> Option<&'a H::Filter> {
    // SAFETY: by the caller's contract `f` is NULL (`as_ref` gives None) or
    // points to a live handle made by `Box::into_raw`, which nothing
    // mutates through a `&mut` until it is released (which may not run
    // concurrently with this call), so a shared reference is valid for the
    // duration of the call.
    unsafe { f.as_ref() }.map(H::filter)
}

/// Boxes `filter` into a handle and stores it in `*out`.
///
/// # Safety
/// `out` is non-null and valid for writing one pointer.
pub(crate) unsafe fn store<H: Handle>(out: *mut *mut H, filter: H::Filter) -> ccf_status {
    let handle = Box::into_raw(Box::new(H::wrap(filter)));
    // SAFETY: `out` is non-null and valid for writing a pointer (caller's
    // contract).
    unsafe { out.write(handle) };
    CCF_OK
}

/// Releases a handle made by [`store`]; NULL is a no-op.
///
/// # Safety
/// `f` is NULL or a handle made by [`store`], not released yet, that no
/// other thread uses now or later.
pub(crate) unsafe fn release<H: Handle>(f: *mut H) {
    guard((), || {
        if !f.is_null() {
            // SAFETY: `f` came from `Box::into_raw` in `store`, has not been
            // released, and no other reference to it exists now (caller's
            // contract): rebuilding the box and dropping it is the single
            // release of that allocation.
            drop(unsafe { Box::from_raw(f) });
        }
    })
}

/// A property of the filter behind `f`, or `none` for NULL.
///
/// # Safety
/// As [`filter_of`].
#[inline(always)]
pub(crate) unsafe fn read<H: Handle, R>(
    f: *const H,
    none: R,
    get: impl FnOnce(&H::Filter) -> R,
) -> R
where
    R: Copy,
{
    // SAFETY: `f` as the caller's contract says.
    guard(none, || unsafe { filter_of(f) }.map_or(none, get))
}

/// `get` of the filter behind `f` and the byte key `key`/`len`, or `none`
/// for NULL `f` or an invalid key.
///
/// # Safety
/// `f` as for [`filter_of`]; `key` is NULL or points to `len` readable
/// bytes.
#[inline(always)]
unsafe fn read_key<H: Handle, R>(
    f: *const H,
    key: *const c_void,
    len: usize,
    none: R,
    get: impl FnOnce(&H::Filter, &[u8]) -> R,
) -> R
where
    R: Copy,
{
    guard(none, || {
        // SAFETY: `f` and `key`/`len` as the caller's contract says.
        match (unsafe { filter_of(f) }, unsafe { key_bytes(key, len) }) {
            (Some(filter), Some(key)) => get(filter, key),
            _ => none,
        }
    })
}

/// Runs `op` on the filter behind `f` and returns its status;
/// `CCF_INVALID_ARGUMENT` for NULL.
///
/// # Safety
/// As [`filter_of`].
pub(crate) unsafe fn with<H: Handle>(
    f: *const H,
    op: impl FnOnce(&H::Filter) -> ccf_status,
) -> ccf_status {
    guard(CCF_INTERNAL_ERROR, || {
        // SAFETY: `f` as the caller's contract says.
        match unsafe { filter_of(f) } {
            Some(filter) => op(filter),
            None => CCF_INVALID_ARGUMENT,
        }
    })
}

/// Inserts one byte key.
///
/// # Safety
/// `f` as for [`filter_of`]; `key` is NULL or points to `len` readable
/// bytes.
pub(crate) unsafe fn insert<H: Handle<Filter: Keyed>>(
    f: *const H,
    key: *const c_void,
    len: usize,
) -> ccf_status {
    guard(CCF_INTERNAL_ERROR, || {
        // SAFETY: `f` and `key`/`len` as the caller's contract says.
        let (Some(filter), Some(key)) = (unsafe { filter_of(f) }, unsafe { key_bytes(key, len) })
        else {
            return CCF_INVALID_ARGUMENT;
        };
        filter
            .insert_key(key)
            .map_or_else(ccf_status::from, |()| CCF_OK)
    })
}

/// Inserts one precomputed hash.
///
/// # Safety
/// As [`filter_of`].
pub(crate) unsafe fn insert_hash<H: Handle<Filter: Keyed>>(f: *const H, hash: u64) -> ccf_status {
    guard(CCF_INTERNAL_ERROR, || {
        // SAFETY: `f` as the caller's contract says.
        let Some(filter) = (unsafe { filter_of(f) }) else {
            return CCF_INVALID_ARGUMENT;
        };
        filter
            .insert_one_hash(hash)
            .map_or_else(ccf_status::from, |()| CCF_OK)
    })
}

/// Looks up one byte key; false for NULL `f` or an invalid key.
///
/// # Safety
/// As [`insert`].
pub(crate) unsafe fn contains<H: Handle<Filter: Lookup>>(
    f: *const H,
    key: *const c_void,
    len: usize,
) -> bool {
    // SAFETY: `f` and `key`/`len` as the caller's contract says.
    unsafe { read_key(f, key, len, false, |filter, key| filter.contains_key(key)) }
}

/// Looks up one precomputed hash; false for NULL `f`.
///
/// # Safety
/// As [`filter_of`].
pub(crate) unsafe fn contains_hash<H: Handle<Filter: Lookup>>(f: *const H, hash: u64) -> bool {
    // SAFETY: `f` as the caller's contract says.
    unsafe { read(f, false, |filter| filter.contains_one_hash(hash)) }
}

/// `out[i]` = the lookup of `hashes[i]`; every `out[i]` false for NULL `f`
/// or `hashes`; nothing for NULL `out`.
///
/// # Safety
/// `f` as for [`filter_of`]; `hashes` is NULL or `n` readable `uint64_t`s;
/// `out` is NULL or `n` writable bools that nothing else reads or writes
/// during the call.
pub(crate) unsafe fn contains_hash_batch<H: Handle<Filter: Lookup>>(
    f: *const H,
    hashes: *const u64,
    n: usize,
    out: *mut bool,
) {
    guard((), || {
        // SAFETY: `out` is NULL or `n` writable, unshared bools (caller's
        // contract); every element is set to false first.
        let Some(out) = (unsafe { out_array(out, n) }) else {
            return;
        };
        // SAFETY: `f` and `hashes` as the caller's contract says.
        if let (Some(filter), Some(hashes)) = (unsafe { filter_of(f) }, unsafe { array(hashes, n) })
        {
            filter.contains_hashes(hashes, out);
        }
    })
}

/// `out[i]` = the lookup of byte key `keys[i]`/`lens[i]` (false for an
/// invalid key); every `out[i]` false for NULL `f`, `keys` or `lens`.
///
/// # Safety
/// `f` as for [`filter_of`]; `keys` and `lens` are NULL or `n` readable
/// elements, each `keys[i]` NULL or `lens[i]` readable bytes; `out` as for
/// [`contains_hash_batch`].
pub(crate) unsafe fn contains_batch<H: Handle<Filter: Lookup>>(
    f: *const H,
    keys: *const *const c_void,
    lens: *const usize,
    n: usize,
    out: *mut bool,
) {
    guard((), || {
        // SAFETY: `out` is NULL or `n` writable, unshared bools (caller's
        // contract); every element is set to false first.
        let Some(out) = (unsafe { out_array(out, n) }) else {
            return;
        };
        // SAFETY: `f`, `keys` and `lens` as the caller's contract says.
        let (Some(filter), Some(keys), Some(lens)) =
            (unsafe { filter_of(f) }, unsafe { array(keys, n) }, unsafe {
                array(lens, n)
            })
        else {
            return;
        };
        // SAFETY: `keys` and `lens` have `n` elements, as `out` does; each
        // `keys[i]` is NULL or `lens[i]` readable bytes (caller's contract).
        unsafe {
            contains_byte_keys(keys, lens, out, |chunk, out| {
                filter.contains_keys(chunk, out)
            })
        };
    })
}

/// Inserts byte keys in order, stopping at the first refused, as
/// `ccf_insert_batch` documents; `*inserted` (unless NULL) counts the keys
/// that went in.
///
/// # Safety
/// `f`, `keys` and `lens` as for [`contains_batch`]; `inserted` is NULL or
/// valid for writing one `size_t`.
pub(crate) unsafe fn insert_batch<H: Handle<Filter: Keyed>>(
    f: *const H,
    keys: *const *const c_void,
    lens: *const usize,
    n: usize,
    inserted: *mut usize,
) -> ccf_status {
    // SAFETY: `inserted` is NULL or writable (caller's contract).
    unsafe { set_count(inserted, 0) };
    guard(CCF_INTERNAL_ERROR, || {
        // SAFETY: `f`, `keys` and `lens` as the caller's contract says.
        let (Some(filter), Some(keys), Some(lens)) = (
            unsafe { filter_of(f) },
            unsafe { array_or_empty(keys, n) },
            unsafe { array_or_empty(lens, n) },
        ) else {
            return CCF_INVALID_ARGUMENT;
        };
        // SAFETY: `keys` and `lens` have `n` elements, each `keys[i]` NULL
        // or `lens[i]` readable bytes; `inserted` is NULL or writable
        // (caller's contract).
        unsafe { insert_byte_keys(keys, lens, inserted, |chunk| filter.insert_keys(chunk)) }
    })
}

/// Inserts precomputed hashes in order, as [`insert_batch`].
///
/// # Safety
/// `f` as for [`filter_of`]; `hashes` is NULL or `n` readable
/// `uint64_t`s; `inserted` as for [`insert_batch`].
pub(crate) unsafe fn insert_hash_batch<H: Handle<Filter: Keyed>>(
    f: *const H,
    hashes: *const u64,
    n: usize,
    inserted: *mut usize,
) -> ccf_status {
    // SAFETY: `inserted` is NULL or writable (caller's contract).
    unsafe { set_count(inserted, 0) };
    guard(CCF_INTERNAL_ERROR, || {
        // SAFETY: `f` and `hashes` as the caller's contract says.
        let (Some(filter), Some(hashes)) = (unsafe { filter_of(f) }, unsafe {
            array_or_empty(hashes, n)
        }) else {
            return CCF_INVALID_ARGUMENT;
        };
        // SAFETY: `inserted` is NULL or writable (caller's contract).
        unsafe { insert_hashes(hashes, inserted, |hashes| filter.insert_many_hashes(hashes)) }
    })
}

/// Inserts one byte key unless it is present, as `ccf_insert_unique`
/// documents: `*added` (unless NULL) is set on every return, to true
/// exactly when this call stored the key.
///
/// # Safety
/// As [`insert`]; `added` is NULL or valid for writing one `bool`.
pub(crate) unsafe fn insert_unique<H: Handle<Filter: Unique>>(
    f: *const H,
    key: *const c_void,
    len: usize,
    added: *mut bool,
) -> ccf_status {
    guard(CCF_INTERNAL_ERROR, || {
        // SAFETY: `f` and `key`/`len` as the caller's contract says.
        let (Some(filter), Some(key)) = (unsafe { filter_of(f) }, unsafe { key_bytes(key, len) })
        else {
            // SAFETY: `added` is NULL or writable (caller's contract).
            unsafe { set_added(added, false) };
            return CCF_INVALID_ARGUMENT;
        };
        let result = filter.insert_unique_key(key);
        // SAFETY: as above.
        unsafe { set_added(added, result == Ok(true)) };
        result.map_or_else(ccf_status::from, |_| CCF_OK)
    })
}

/// [`insert_unique`] for a precomputed hash.
///
/// # Safety
/// As [`filter_of`]; `added` is NULL or valid for writing one `bool`.
pub(crate) unsafe fn insert_unique_hash<H: Handle<Filter: Unique>>(
    f: *const H,
    hash: u64,
    added: *mut bool,
) -> ccf_status {
    guard(CCF_INTERNAL_ERROR, || {
        // SAFETY: `f` as the caller's contract says.
        let Some(filter) = (unsafe { filter_of(f) }) else {
            // SAFETY: `added` is NULL or writable (caller's contract).
            unsafe { set_added(added, false) };
            return CCF_INVALID_ARGUMENT;
        };
        let result = filter.insert_unique_one_hash(hash);
        // SAFETY: as above.
        unsafe { set_added(added, result == Ok(true)) };
        result.map_or_else(ccf_status::from, |_| CCF_OK)
    })
}

/// Copies of one byte key's fingerprint; 0 for NULL `f` or an invalid key.
///
/// # Safety
/// As [`insert`].
pub(crate) unsafe fn count<H: Handle<Filter: Counted>>(
    f: *const H,
    key: *const c_void,
    len: usize,
) -> usize {
    // SAFETY: `f` and `key`/`len` as the caller's contract says.
    unsafe { read_key(f, key, len, 0, |filter, key| filter.count_key(key)) }
}

/// Copies of one precomputed hash's fingerprint; 0 for NULL `f`.
///
/// # Safety
/// As [`filter_of`].
pub(crate) unsafe fn count_hash<H: Handle<Filter: Counted>>(f: *const H, hash: u64) -> usize {
    // SAFETY: `f` as the caller's contract says.
    unsafe { read(f, 0, |filter| filter.count_one_hash(hash)) }
}

/// Removes one copy of one byte key; false if none was taken, or for NULL
/// `f` or an invalid key.
///
/// # Safety
/// As [`insert`].
pub(crate) unsafe fn remove<H: Handle<Filter: Removable>>(
    f: *const H,
    key: *const c_void,
    len: usize,
) -> bool {
    // SAFETY: `f` and `key`/`len` as the caller's contract says.
    unsafe { read_key(f, key, len, false, |filter, key| filter.remove_key(key)) }
}

/// Removes one copy of one precomputed hash; false if none was taken, or
/// for NULL `f`.
///
/// # Safety
/// As [`filter_of`].
pub(crate) unsafe fn remove_hash<H: Handle<Filter: Removable>>(f: *const H, hash: u64) -> bool {
    // SAFETY: `f` as the caller's contract says.
    unsafe { read(f, false, |filter| filter.remove_one_hash(hash)) }
}

/// Removes one copy of each byte key in order, as `ccf_remove_batch`
/// documents: `removed[i]` (unless `removed` is NULL) is whether key `i`
/// lost a copy, every one false after an error; `CCF_INVALID_ARGUMENT`
/// (nothing removed) for NULL `f`, NULL arrays with `n > 0` or any invalid
/// key.
///
/// # Safety
/// `f`, `keys` and `lens` as for [`contains_batch`]; `removed` is NULL or
/// `n` writable bools that overlap none of the inputs and that nothing
/// else reads or writes during the call.
pub(crate) unsafe fn remove_batch<H: Handle<Filter: Removable>>(
    f: *const H,
    keys: *const *const c_void,
    lens: *const usize,
    n: usize,
    removed: *mut bool,
) -> ccf_status {
    guard(CCF_INTERNAL_ERROR, || {
        // SAFETY: `removed` is NULL or `n` writable, unshared,
        // non-overlapping bools (caller's contract); every element is set
        // to false first.
        let removed = unsafe { out_array(removed, n) };
        // SAFETY: `f`, `keys` and `lens` as the caller's contract says.
        let (Some(filter), Some(keys), Some(lens)) = (
            unsafe { filter_of(f) },
            unsafe { array_or_empty(keys, n) },
            unsafe { array_or_empty(lens, n) },
        ) else {
            return CCF_INVALID_ARGUMENT;
        };
        // SAFETY: `keys`, `lens` and `removed` (if any) have `n` elements;
        // each `keys[i]` is NULL or `lens[i]` readable bytes (caller's
        // contract).
        unsafe {
            remove_byte_keys(keys, lens, removed, |chunk, out| {
                filter.remove_keys(chunk, out)
            })
        }
    })
}

/// [`remove_batch`] for precomputed hashes; `CCF_INVALID_ARGUMENT`
/// (nothing removed) for NULL `f`, or NULL `hashes` with `n > 0`.
///
/// # Safety
/// `f` as for [`filter_of`]; `hashes` is NULL or `n` readable
/// `uint64_t`s; `removed` as for [`remove_batch`].
pub(crate) unsafe fn remove_hash_batch<H: Handle<Filter: Removable>>(
    f: *const H,
    hashes: *const u64,
    n: usize,
    removed: *mut bool,
) -> ccf_status {
    guard(CCF_INTERNAL_ERROR, || {
        // SAFETY: `removed` is NULL or `n` writable, unshared,
        // non-overlapping bools (caller's contract); every element is set
        // to false first.
        let removed = unsafe { out_array(removed, n) };
        // SAFETY: `f` and `hashes` as the caller's contract says.
        let (Some(filter), Some(hashes)) = (unsafe { filter_of(f) }, unsafe {
            array_or_empty(hashes, n)
        }) else {
            return CCF_INVALID_ARGUMENT;
        };
        remove_hashes(hashes, removed, |hashes, out| {
            filter.remove_many_hashes(hashes, out)
        });
        CCF_OK
    })
}

/// The most keys a burst call takes: its answer is one `uint64_t` hit
/// mask, as `rte_hash_lookup_bulk`'s.
pub(crate) const BURST_MAX: u32 = 64;

/// Bit `i` set for each `hit[i]`.
#[inline(always)]
fn hit_mask(hit: &[bool]) -> u64 {
    hit.iter()
        .enumerate()
        .fold(0, |mask, (i, &h)| mask | (u64::from(h) << i))
}

/// `probe`'s hit mask for a burst of `n <= 64` items at `items`; 0 for a
/// NULL `f` or `items`, or `n > 64`. What the two burst calls share.
///
/// # Safety
/// `f` as for [`filter_of`]; `items` is NULL or `n` readable elements.
unsafe fn burst<H: Handle<Filter: Lookup>, T>(
    f: *const H,
    items: *const T,
    n: u32,
    probe: impl FnOnce(&H::Filter, &[T]) -> u64,
) -> u64 {
    guard(0, || {
        if n > BURST_MAX {
            return 0;
        }
        // SAFETY: `f` and `items` as the caller's contract says.
        match (unsafe { filter_of(f) }, unsafe { array(items, n as usize) }) {
            (Some(filter), Some(items)) => probe(filter, items),
            _ => 0,
        }
    })
}

/// The hit mask of a burst of `n <= 64` hashes: bit `i` set when
/// `hashes[i]` is probably present; 0 for NULL `f` or `hashes`, or
/// `n > 64`.
///
/// # Safety
/// `f` as for [`filter_of`]; `hashes` is NULL or `n` readable elements.
pub(crate) unsafe fn contains_hash_burst<H: Handle<Filter: Lookup>>(
    f: *const H,
    hashes: *const u64,
    n: u32,
) -> u64 {
    let probe = |filter: &H::Filter, hashes: &[u64]| {
        let mut hit = [false; BURST_MAX as usize];
        let hit = &mut hit[..hashes.len()];
        filter.contains_hashes(hashes, hit);
        hit_mask(hit)
    };
    // SAFETY: the caller's contract is `burst`'s.
    unsafe { burst(f, hashes, n, probe) }
}

/// `signed_hash` of the `len` bytes at `key` with `signature`; 0 for a
/// NULL `f`, or a NULL `key` with `len > 0`.
///
/// # Safety
/// `f` as for [`filter_of`]; `key` is NULL or points to `len` readable
/// bytes.
pub(crate) unsafe fn signed_hash<H: Handle<Filter: Signed>>(
    f: *const H,
    key: *const c_void,
    len: usize,
    signature: u32,
) -> u64 {
    guard(0, || {
        // SAFETY: `f` and `key` as the caller's contract says.
        match (unsafe { filter_of(f) }, unsafe { key_bytes(key, len) }) {
            (Some(filter), Some(key)) => filter.signed_hash_of(key, signature),
            _ => 0,
        }
    })
}

/// The hit mask of a burst of `n <= 64` byte keys of one length
/// `key_len`, each with its signature: bit `i` set when `keys[i]` with
/// `signatures[i]` is probably present; clear for a NULL `keys[i]` (with
/// `key_len > 0`); 0 for NULL `f`, `keys` or `signatures`, or `n > 64`.
///
/// # Safety
/// `f` as for [`filter_of`]; `keys` is NULL or `n` readable pointers, each
/// NULL or pointing to `key_len` readable bytes; `signatures` is NULL or
/// `n` readable `uint32_t`s.
pub(crate) unsafe fn contains_signed_burst<H: Handle<Filter: Signed>>(
    f: *const H,
    keys: *const *const c_void,
    key_len: usize,
    signatures: *const u32,
    n: u32,
) -> u64 {
    if n > BURST_MAX {
        return 0;
    }
    // SAFETY: `signatures` is NULL or `n` readable `uint32_t`s (caller's
    // contract).
    let Some(signatures) = (unsafe { array(signatures, n as usize) }) else {
        return 0;
    };
    let probe = |filter: &H::Filter, keys: &[*const c_void]| {
        // SAFETY: the caller's contract for `keys` and `key_len`.
        unsafe {
            burst_of_keys(keys, key_len, |keys, hit| {
                filter.contains_signed(keys, signatures, hit)
            })
        }
    };
    // SAFETY: the caller's contract is `burst`'s.
    unsafe { burst(f, keys, n, probe) }
}

/// The hit mask of `lookup(keys, hit)` over a burst of `keys.len() <= 64`
/// C keys of `key_len` bytes, gathered as slices; a NULL key (with
/// `key_len > 0`) is looked up as the empty key and its bit cleared.
///
/// # Safety
/// Each `keys[i]` is NULL or points to `key_len` readable bytes that do
/// not change during the call.
unsafe fn burst_of_keys(
    keys: &[*const c_void],
    key_len: usize,
    lookup: impl FnOnce(&[&[u8]], &mut [bool]),
) -> u64 {
    let mut chunk: [&[u8]; BURST_MAX as usize] = [&[]; BURST_MAX as usize];
    let mut valid = 0u64;
    for (i, &key) in keys.iter().enumerate() {
        // SAFETY: `key` is NULL or `key_len` readable, unchanging bytes
        // (caller's contract).
        if let Some(bytes) = unsafe { key_bytes(key, key_len) } {
            chunk[i] = bytes;
            valid |= 1 << i;
        }
    }
    let mut hit = [false; BURST_MAX as usize];
    let hit = &mut hit[..keys.len()];
    lookup(&chunk[..keys.len()], hit);
    hit_mask(hit) & valid
}

/// The hit mask of a burst of `n <= 64` byte keys of one length
/// `key_len` (a DPDK flow key): bit `i` set when `keys[i]` is probably
/// present; clear for a NULL `keys[i]` (with `key_len > 0`); 0 for NULL
/// `f` or `keys`, or `n > 64`.
///
/// # Safety
/// `f` as for [`filter_of`]; `keys` is NULL or `n` readable pointers, each
/// NULL or pointing to `key_len` readable bytes.
pub(crate) unsafe fn contains_burst<H: Handle<Filter: Lookup>>(
    f: *const H,
    keys: *const *const c_void,
    key_len: usize,
    n: u32,
) -> u64 {
    let probe = |filter: &H::Filter, keys: &[*const c_void]| {
        // SAFETY: the caller's contract for `keys` and `key_len`.
        unsafe { burst_of_keys(keys, key_len, |keys, hit| filter.contains_keys(keys, hit)) }
    };
    // SAFETY: the caller's contract is `burst`'s.
    unsafe { burst(f, keys, n, probe) }
}
