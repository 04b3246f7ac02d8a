//! Growing filters: `ccf_scalable`, Rust's `ScalableCuckooFilter` (a chain
//! of cuckoo filters, each larger than the last), with the operations of
//! `ccf_filter` that apply to it, and saving and loading its files.
//!
//! Byte keys go through the keyed API, as in [`crate::filter`]; the calls
//! that every handle makes alike are the generic ones of the private `ops`
//! module (and `persist`'s `save` and `load`): what is its own is growth
//! (`levels`, `compact`) and its options.

use crate::guard;
use crate::ops::{self, counted, keyed, unique, Handle, Removable};
use crate::persist::{load, save};
use crate::status::ccf_status::{self, *};
use concurrent_cuckoo::ScalableCuckooFilter;
use core::ffi::{c_char, c_void};

/// A concurrent cuckoo filter that grows: a chain of cuckoo filters
/// (levels), each `growth_factor` times the size of the last.
///
/// Opaque: create one with `ccf_scalable_new`,
/// `ccf_scalable_new_with_options` or `ccf_scalable_load`, release it with
/// `ccf_scalable_free`.
///
/// Growth: it grows on demand. Inserts go to the newest level; when it is
/// full, one inserting thread adds the next level while lookups keep
/// answering, and the other inserters wait for it and retry there. An
/// insert returns `CCF_FULL` only when `max_levels` levels are in use and
/// the newest is full, or a new level cannot be allocated. Lookups search
/// every level, newest first, so each level costs an absent key about one
/// more lookup. An older level emptied by removes is retired: no longer
/// searched, and its memory given back to the system (tables of 4 MiB or
/// more; smaller ones keep theirs until the filter is freed).
///
/// Thread safety: every function except `ccf_scalable_free` may be called
/// from any number of threads at once on the same filter, with no locking
/// by the caller, while it grows. `ccf_scalable_free` must be the last call
/// on a filter: no other thread may be using it or use it afterwards.
///
/// Keys: as for `ccf_filter`: `(key, len)` hashes exactly as the Rust call
/// on a `&[u8]` of the same bytes (`filter.insert(bytes)` on a
/// `ScalableCuckooFilter`), and `len` 0 is the empty key (`key` may then be
/// NULL).
///
/// False positives: a lookup of an absent key may be a false positive in
/// every level, so the bound of the whole filter is the sum of the levels'
/// bounds; the configured rate is a budget that holds however far the
/// filter grows (each new level gets the narrowest fingerprint that keeps
/// the sum within it). `ccf_scalable_false_positive_bound(f)` reports the
/// sum for the levels in use.
///
/// Duplicates: a key may be inserted up to 8 times per level (a multiset);
/// each remove takes one copy away. `ccf_scalable_insert_unique` stays
/// atomic across growth.
///
/// Removes: a key's copy is identified only by its fingerprint in each
/// level, and a key `k` may collide in another level with a key `j` stored
/// there. The levels' bucket maps nest: two keys that collide in a larger
/// level collide in every smaller one. So a remove takes the copy in the
/// largest level holding the key's fingerprint, which always stands for
/// the key (if it is `j`'s, `k`'s own copy in a smaller level now stands
/// for `j`), also for a key added again after the filter grew. A filter
/// loaded from a file written before nested levels keeps its old maps;
/// there, when levels of different sizes or widths hold the fingerprint,
/// the remove is refused (returns false, changes nothing, the key stays
/// found). So a key inserted and not removed is found by every thread at
/// every moment, whatever the number of levels. As for `ccf_filter`, only
/// remove keys that were inserted.
pub struct ccf_scalable {
    inner: ScalableCuckooFilter,
}

keyed!(ScalableCuckooFilter);
counted!(ScalableCuckooFilter);
unique!(ScalableCuckooFilter);

/// C gets a bool per key: whether a copy was removed.
impl Removable for ScalableCuckooFilter {
    #[inline(always)]
    fn remove_key(&self, key: &[u8]) -> bool {
        self.remove_hash(self.hasher().hash_bytes(key)).is_removed()
    }
    #[inline(always)]
    fn remove_one_hash(&self, hash: u64) -> bool {
        self.remove_hash(hash).is_removed()
    }
    fn remove_keys(&self, keys: &[&[u8]], out: &mut [bool]) {
        // The library's batch is this loop (a growing filter removes one
        // key at a time); C gets a bool per key.
        for (key, out) in keys.iter().zip(out) {
            *out = self.remove(key).is_removed();
        }
    }
    fn remove_many_hashes(&self, hashes: &[u64], out: &mut [bool]) {
        for (&hash, out) in hashes.iter().zip(out) {
            *out = self.remove_hash(hash).is_removed();
        }
    }
}

impl Handle for ccf_scalable {
    type Filter = ScalableCuckooFilter;
    fn filter(&self) -> &ScalableCuckooFilter {
        &self.inner
    }
    fn wrap(inner: ScalableCuckooFilter) -> Self {
        ccf_scalable { inner }
    }
}

/// Creates a growing filter whose first level holds `initial_capacity`
/// items (0 is taken as 1), with growth factor 2, up to 32 levels, and a
/// random hash seed.
///
/// `false_positive_rate` is the bound on the whole filter's false-positive
/// rate however far it grows: 0 means the default, 0.001; otherwise it
/// must be strictly between 0 and 1, and at least the reserve the levels
/// need (`max_levels * 8 / 2^32`, about 6e-8 for 32 levels).
///
/// Returns `CCF_OK` and stores the new filter in `*out`, to be released
/// with `ccf_scalable_free`. On any error `*out` is left unchanged:
/// `CCF_INVALID_ARGUMENT` for a NULL `out`, an initial capacity too large
/// to address, or a rate outside [0, 1), NaN or below the reserve;
/// `CCF_ALLOCATION_FAILED` if the memory of the first level cannot be had.
///
/// # Safety
/// `out` is NULL or valid for writing one pointer.
#[no_mangle]
pub unsafe extern "C" fn ccf_scalable_new(
    initial_capacity: usize,
    false_positive_rate: f64,
    out: *mut *mut ccf_scalable,
) -> ccf_status {
    // SAFETY: the caller upholds `ccf_scalable_new_with_options`' contract
    // for `out`; `seed` is NULL, which it accepts.
    unsafe {
        ccf_scalable_new_with_options(
            initial_capacity,
            false_positive_rate,
            0,
            0,
            core::ptr::null(),
            out,
        )
    }
}

/// `ccf_scalable_new` with every option: `growth_factor`, how many times
/// more items each new level holds than the one before (1 to 4294967295,
/// the most a saved file records; 1 makes every level the size of the
/// first; 0 = the default, 2); `max_levels`, the most levels the filter
/// may have (1 to 64; 0 = the default, 32); and `seed`, a pointer to the
/// hash seed to use (NULL = a fresh random seed), as for
/// `ccf_new_with_options`.
///
/// Returns as `ccf_scalable_new`, plus `CCF_INVALID_ARGUMENT` for a growth
/// factor above 4294967295, a level count above 64, or a rate below the
/// reserve of `max_levels` levels. `*out` is left unchanged on any error.
///
/// # Safety
/// `out` is NULL or valid for writing one pointer; `seed` is NULL or points
/// to a readable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn ccf_scalable_new_with_options(
    initial_capacity: usize,
    false_positive_rate: f64,
    growth_factor: usize,
    max_levels: usize,
    seed: *const u64,
    out: *mut *mut ccf_scalable,
) -> ccf_status {
    guard(CCF_INTERNAL_ERROR, || {
        if out.is_null() {
            return CCF_INVALID_ARGUMENT;
        }
        let mut builder = ScalableCuckooFilter::builder()
            .capacity(initial_capacity)
            .table_memory(crate::memory::table_memory());
        // -0.0 == 0.0 is the default too; NaN is not 0 and the builder
        // refuses it.
        if false_positive_rate != 0.0 {
            builder = builder.false_positive_rate(false_positive_rate);
        }
        if growth_factor != 0 {
            builder = builder.growth_factor(growth_factor);
        }
        if max_levels != 0 {
            builder = builder.max_levels(max_levels);
        }
        // SAFETY: `seed` is NULL (`as_ref` gives None) or points to a
        // readable, aligned `uint64_t` (caller's contract).
        if let Some(&seed) = unsafe { seed.as_ref() } {
            builder = builder.seed(seed);
        }
        match builder.build() {
            // SAFETY: `out` is non-null (checked) and valid for writing a
            // pointer (caller's contract).
            Ok(inner) => unsafe { ops::store(out, inner) },
            Err(e) => e.into(),
        }
    })
}

/// Releases a growing filter and all its levels. NULL is a no-op.
///
/// Not thread-safe: no other call may be using `f`, and `f` must not be
/// used (or freed) again afterwards.
///
/// # Safety
/// `f` is NULL or a filter from `ccf_scalable_new`,
/// `ccf_scalable_new_with_options` or `ccf_scalable_load` that has not been
/// freed, and no other thread uses it.
#[no_mangle]
pub unsafe extern "C" fn ccf_scalable_free(f: *mut ccf_scalable) {
    // SAFETY: the caller's contract is `ops::release`'s.
    unsafe { ops::release(f) }
}

/// Adds one copy of the key (the `len` bytes at `key`) to the newest
/// level, growing the filter if that level is full.
///
/// Returns `CCF_OK`; `CCF_FULL` only when `max_levels` levels are in use
/// and the newest is full, or a new level cannot be allocated;
/// `CCF_TOO_MANY_DUPLICATES` when the newest level already holds 8 copies
/// of the key's fingerprint in its two buckets; `CCF_INVALID_ARGUMENT` for
/// a NULL `f`, or a NULL `key` with `len > 0`. On any error the filter's
/// contents are unchanged.
///
/// # Safety
/// `f` is NULL or a live growing filter; `key` is NULL or points to `len`
/// readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ccf_scalable_insert(
    f: *mut ccf_scalable,
    key: *const c_void,
    len: usize,
) -> ccf_status {
    // SAFETY: the caller's contract is `ops::insert`'s.
    unsafe { ops::insert(f, key, len) }
}

/// Adds the key unless it (or a key indistinguishable from it) is already
/// present in any level: set semantics. Of several threads adding the same
/// key at once, exactly one sees `*added == true`, even while the filter
/// grows.
///
/// `added` may be NULL; otherwise `*added` is set on every return, to true
/// exactly when this call stored the key. Returns as `ccf_scalable_insert`
/// (a key already present is `CCF_OK` with `*added == false`).
///
/// # Safety
/// `f` is NULL or a live growing filter; `key` is NULL or points to `len`
/// readable bytes; `added` is NULL or valid for writing one `bool`.
#[no_mangle]
pub unsafe extern "C" fn ccf_scalable_insert_unique(
    f: *mut ccf_scalable,
    key: *const c_void,
    len: usize,
    added: *mut bool,
) -> ccf_status {
    // SAFETY: the caller's contract is `ops::insert_unique`'s.
    unsafe { ops::insert_unique(f, key, len, added) }
}

/// Is the key (probably) present in any level? A false positive with
/// probability below `ccf_scalable_false_positive_bound(f)`; no false
/// negative.
///
/// Returns false for a NULL `f`, or a NULL `key` with `len > 0`.
///
/// # Safety
/// `f` is NULL or a live growing filter; `key` is NULL or points to `len`
/// readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ccf_scalable_contains(
    f: *const ccf_scalable,
    key: *const c_void,
    len: usize,
) -> bool {
    // SAFETY: the caller's contract is `ops::contains`'s.
    unsafe { ops::contains(f, key, len) }
}

/// Removes one copy of the key from a level holding its fingerprint;
/// returns false, changing nothing, if no level does or levels of
/// different sizes or widths do (see `ccf_scalable` on removes), or for a NULL `f`, or a NULL `key` with
/// `len > 0`. A level this empties, and that no longer takes inserts, is
/// retired (see `ccf_scalable`).
///
/// Only remove keys that were inserted.
///
/// # Safety
/// `f` is NULL or a live growing filter; `key` is NULL or points to `len`
/// readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ccf_scalable_remove(
    f: *mut ccf_scalable,
    key: *const c_void,
    len: usize,
) -> bool {
    // SAFETY: the caller's contract is `ops::remove`'s.
    unsafe { ops::remove(f, key, len) }
}

/// `ccf_scalable_insert` for a precomputed, well-mixed 64-bit hash (see
/// `ccf_insert_hash`): hashes and byte keys are separate spaces.
///
/// Returns `CCF_INVALID_ARGUMENT` for a NULL `f`, otherwise as
/// `ccf_scalable_insert`.
///
/// # Safety
/// `f` is NULL or a live growing filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_scalable_insert_hash(f: *mut ccf_scalable, hash: u64) -> ccf_status {
    // SAFETY: the caller's contract is `ops::insert_hash`'s.
    unsafe { ops::insert_hash(f, hash) }
}

/// `ccf_scalable_insert_unique` for a precomputed hash. `added` may be
/// NULL; otherwise `*added` is set on every return.
///
/// # Safety
/// `f` is NULL or a live growing filter; `added` is NULL or valid for
/// writing one `bool`.
#[no_mangle]
pub unsafe extern "C" fn ccf_scalable_insert_unique_hash(
    f: *mut ccf_scalable,
    hash: u64,
    added: *mut bool,
) -> ccf_status {
    // SAFETY: the caller's contract is `ops::insert_unique_hash`'s.
    unsafe { ops::insert_unique_hash(f, hash, added) }
}

/// `ccf_scalable_contains` for a precomputed hash; false for a NULL `f`.
///
/// # Safety
/// `f` is NULL or a live growing filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_scalable_contains_hash(f: *const ccf_scalable, hash: u64) -> bool {
    // SAFETY: the caller's contract is `ops::contains_hash`'s.
    unsafe { ops::contains_hash(f, hash) }
}

/// `ccf_scalable_remove` for a precomputed hash; false for a NULL `f`.
///
/// # Safety
/// `f` is NULL or a live growing filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_scalable_remove_hash(f: *mut ccf_scalable, hash: u64) -> bool {
    // SAFETY: the caller's contract is `ops::remove_hash`'s.
    unsafe { ops::remove_hash(f, hash) }
}

/// Copies of the key's fingerprint in its two buckets, summed over every
/// level (so it may exceed 8): how many times the key was inserted and not
/// removed, plus copies of keys that collide with it. Each level is read
/// exactly, under its locks. 0 for a NULL `f`, or a NULL `key` with
/// `len > 0`.
///
/// # Safety
/// `f` is NULL or a live growing filter; `key` is NULL or points to `len`
/// readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ccf_scalable_count(
    f: *const ccf_scalable,
    key: *const c_void,
    len: usize,
) -> usize {
    // SAFETY: the caller's contract is `ops::count`'s.
    unsafe { ops::count(f, key, len) }
}

/// `ccf_scalable_count` for a precomputed hash; 0 for a NULL `f`.
///
/// # Safety
/// `f` is NULL or a live growing filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_scalable_count_hash(f: *const ccf_scalable, hash: u64) -> usize {
    // SAFETY: the caller's contract is `ops::count_hash`'s.
    unsafe { ops::count_hash(f, hash) }
}

/// Looks up a burst of precomputed hashes: `out[i] =
/// ccf_scalable_contains_hash(f, hashes[i])` for `i < n`, each level
/// searched with the pipelined lookup of `ccf_contains_hash_batch` for the
/// hashes not found yet, newest level first.
///
/// `n == 0` does nothing. If `out` is NULL nothing is written; otherwise if
/// `f` or `hashes` is NULL, every `out[i]` is set to false.
///
/// # Safety
/// `f` is NULL or a live growing filter; otherwise as
/// `ccf_contains_hash_batch`.
#[no_mangle]
pub unsafe extern "C" fn ccf_scalable_contains_hash_batch(
    f: *const ccf_scalable,
    hashes: *const u64,
    n: usize,
    out: *mut bool,
) {
    // SAFETY: the caller's contract is `ops::contains_hash_batch`'s.
    unsafe { ops::contains_hash_batch(f, hashes, n, out) }
}

/// Looks up a burst of byte keys: `out[i] = ccf_scalable_contains(f,
/// keys[i], lens[i])` for `i < n`, pipelined as
/// `ccf_scalable_contains_hash_batch`. Allocates nothing.
///
/// `n == 0` does nothing. If `out` is NULL nothing is written; otherwise if
/// `f`, `keys` or `lens` is NULL every `out[i]` is set to false, and a key
/// with `keys[i] == NULL` and `lens[i] > 0` gets `out[i] = false`.
///
/// # Safety
/// `f` is NULL or a live growing filter; otherwise as `ccf_contains_batch`.
#[no_mangle]
pub unsafe extern "C" fn ccf_scalable_contains_batch(
    f: *const ccf_scalable,
    keys: *const *const c_void,
    lens: *const usize,
    n: usize,
    out: *mut bool,
) {
    // SAFETY: the caller's contract is `ops::contains_batch`'s.
    unsafe { ops::contains_batch(f, keys, lens, n, out) }
}

/// Inserts a batch of byte keys, `keys[i]`/`lens[i]` for `i < n`, in order,
/// exactly as the same `ccf_scalable_insert` calls one at a time would
/// (growing the filter as needed), stopping at the first key refused;
/// pipelined within each level. Each insert is still an ordinary operation
/// of its own, seen by other threads one by one. Allocates nothing.
///
/// Returns and sets `*inserted` (which may be NULL) as `ccf_insert_batch`:
/// `CCF_OK` when every key went in; otherwise the status of the first key
/// refused (`CCF_FULL` or `CCF_TOO_MANY_DUPLICATES`), the keys before it
/// being in the filter and it and every key after it not;
/// `CCF_INVALID_ARGUMENT` for a NULL `f`, a NULL `keys` or `lens` with
/// `n > 0`, or a NULL `keys[i]` with `lens[i] > 0` anywhere in the batch
/// (the whole batch is checked first, so nothing is inserted then).
/// `*inserted` is how many keys, from the start, went in.
///
/// # Safety
/// `f` is NULL or a live growing filter; otherwise as `ccf_insert_batch`.
#[no_mangle]
pub unsafe extern "C" fn ccf_scalable_insert_batch(
    f: *mut ccf_scalable,
    keys: *const *const c_void,
    lens: *const usize,
    n: usize,
    inserted: *mut usize,
) -> ccf_status {
    // SAFETY: the caller's contract is `ops::insert_batch`'s.
    unsafe { ops::insert_batch(f, keys, lens, n, inserted) }
}

/// `ccf_scalable_insert_batch` for precomputed hashes: `hashes[i]` for
/// `i < n`, in order, stopping at the first refused.
///
/// Returns and sets `*inserted` (which may be NULL) as `ccf_insert_batch`;
/// `CCF_INVALID_ARGUMENT` for a NULL `f`, or a NULL `hashes` with `n > 0`.
///
/// # Safety
/// `f` is NULL or a live growing filter; `hashes` is NULL or points to `n`
/// readable `uint64_t`s; `inserted` is NULL or valid for writing one
/// `size_t`.
#[no_mangle]
pub unsafe extern "C" fn ccf_scalable_insert_hash_batch(
    f: *mut ccf_scalable,
    hashes: *const u64,
    n: usize,
    inserted: *mut usize,
) -> ccf_status {
    // SAFETY: the caller's contract is `ops::insert_hash_batch`'s.
    unsafe { ops::insert_hash_batch(f, hashes, n, inserted) }
}

/// Removes one copy of each byte key `keys[i]`/`lens[i]`, `i < n`, in
/// order, exactly as the same `ccf_scalable_remove` calls one at a time
/// would (so a key listed twice loses two copies, if it has them).
/// Allocates nothing. Only remove keys that were inserted (see
/// `ccf_scalable_remove`).
///
/// `removed` may be NULL, and then only the removes happen; otherwise
/// `removed[i]` is set to whether a copy of key `i` was found and removed
/// (every `removed[i]` is false after an error).
///
/// Returns `CCF_OK`; `CCF_INVALID_ARGUMENT` for a NULL `f`, a NULL `keys`
/// or `lens` with `n > 0`, or a NULL `keys[i]` with `lens[i] > 0` anywhere
/// in the batch: the whole batch is checked first, so nothing is removed
/// then.
///
/// # Safety
/// `f` is NULL or a live growing filter; otherwise as `ccf_remove_batch`.
#[no_mangle]
pub unsafe extern "C" fn ccf_scalable_remove_batch(
    f: *mut ccf_scalable,
    keys: *const *const c_void,
    lens: *const usize,
    n: usize,
    removed: *mut bool,
) -> ccf_status {
    // SAFETY: the caller's contract is `ops::remove_batch`'s.
    unsafe { ops::remove_batch(f, keys, lens, n, removed) }
}

/// `ccf_scalable_remove_batch` for precomputed hashes: removes one copy of
/// each `hashes[i]`, `i < n`, in order, as `ccf_scalable_remove_hash`
/// calls one at a time would. `removed` may be NULL; otherwise
/// `removed[i]` is set as in `ccf_scalable_remove_batch`.
///
/// Returns `CCF_OK`; `CCF_INVALID_ARGUMENT` (nothing removed, every
/// `removed[i]` false) for a NULL `f`, or a NULL `hashes` with `n > 0`.
///
/// # Safety
/// `f` is NULL or a live growing filter; otherwise as
/// `ccf_remove_hash_batch`.
#[no_mangle]
pub unsafe extern "C" fn ccf_scalable_remove_hash_batch(
    f: *mut ccf_scalable,
    hashes: *const u64,
    n: usize,
    removed: *mut bool,
) -> ccf_status {
    // SAFETY: the caller's contract is `ops::remove_hash_batch`'s.
    unsafe { ops::remove_hash_batch(f, hashes, n, removed) }
}

/// Items stored over all levels (each copy counts): exact while no insert
/// or remove runs, a recent value while they do. 0 for a NULL `f`.
///
/// # Safety
/// `f` is NULL or a live growing filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_scalable_len(f: *const ccf_scalable) -> usize {
    // SAFETY: `f` is NULL or a live growing filter (caller's contract).
    unsafe { ops::read(f, 0, ScalableCuckooFilter::len) }
}

/// `ccf_scalable_len(f) == 0` (so true for a NULL `f`).
///
/// # Safety
/// `f` is NULL or a live growing filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_scalable_is_empty(f: *const ccf_scalable) -> bool {
    // SAFETY: `f` is NULL or a live growing filter (caller's contract).
    unsafe { ccf_scalable_len(f) == 0 }
}

/// Fingerprint slots of the levels in use (4 per bucket): it grows with
/// the filter, and shrinks when removes empty an older level. 0 for a
/// NULL `f`.
///
/// # Safety
/// `f` is NULL or a live growing filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_scalable_capacity(f: *const ccf_scalable) -> usize {
    // SAFETY: `f` is NULL or a live growing filter (caller's contract).
    unsafe { ops::read(f, 0, ScalableCuckooFilter::capacity) }
}

/// `ccf_scalable_len(f) / ccf_scalable_capacity(f)`: the newest level fills
/// before the next is added, so this swings from about `1 / growth_factor`
/// (just grown) up to about 0.95. 0 for a NULL `f`.
///
/// # Safety
/// `f` is NULL or a live growing filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_scalable_load_factor(f: *const ccf_scalable) -> f64 {
    // SAFETY: `f` is NULL or a live growing filter (caller's contract).
    unsafe { ops::read(f, 0.0, ScalableCuckooFilter::load_factor) }
}

/// Levels in use: 1 for a new filter, one more each time it grows, fewer
/// when removes empty older levels (or after `ccf_scalable_clear`). 0 for
/// a NULL `f`.
///
/// # Safety
/// `f` is NULL or a live growing filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_scalable_levels(f: *const ccf_scalable) -> usize {
    // SAFETY: `f` is NULL or a live growing filter (caller's contract).
    unsafe { ops::read(f, 0, ScalableCuckooFilter::levels) }
}

/// Moves the items of sparse older levels into other levels in use of the
/// same size and fingerprint width (at the same bucket pair) and retires
/// the levels it empties: a level kept in use by a few items that are
/// never removed stops costing a lookup (Rust's
/// `ScalableCuckooFilter::compact_concurrently`). Safe beside every other
/// call on `f` from other threads: a lookup, remove or count never misses
/// an item that is being moved. Runs only when called; costs a pass over
/// the buckets of the levels it moves from plus the moves' inserts. The
/// retired levels' tables stay allocated for reuse by a later growth.
///
/// Writes the fingerprints moved to `*moved` and the levels retired to
/// `*retired` (each may be NULL). Returns `CCF_INVALID_ARGUMENT` for a
/// NULL `f`, otherwise `CCF_OK`.
///
/// # Safety
/// `f` is NULL or a live growing filter; `moved` and `retired` are NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn ccf_scalable_compact(
    f: *mut ccf_scalable,
    moved: *mut usize,
    retired: *mut usize,
) -> ccf_status {
    let compact = |filter: &ScalableCuckooFilter| {
        let stats = filter.compact_concurrently();
        // SAFETY: each out pointer is NULL (skipped) or writable (caller's
        // contract).
        unsafe {
            if let Some(out) = moved.as_mut() {
                *out = stats.fingerprints_moved;
            }
            if let Some(out) = retired.as_mut() {
                *out = stats.levels_retired;
            }
        }
        CCF_OK
    };
    // SAFETY: `f` is NULL or a live growing filter (caller's contract).
    unsafe { ops::with(f, compact) }
}

/// Bytes the filter holds: the tables and locks of its levels in use (a
/// retired level is not counted) and the handle itself. 0 for a NULL `f`.
///
/// # Safety
/// `f` is NULL or a live growing filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_scalable_memory_usage(f: *const ccf_scalable) -> usize {
    // SAFETY: `f` is NULL or a live growing filter (caller's contract).
    unsafe { ops::read(f, 0, ScalableCuckooFilter::memory_usage) }
}

/// Upper bound on the false-positive rate of the levels in use: the sum of
/// their bounds `8 / 2^bits`, at most the configured rate however far the
/// filter grows. 0 for a NULL `f`.
///
/// # Safety
/// `f` is NULL or a live growing filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_scalable_false_positive_bound(f: *const ccf_scalable) -> f64 {
    // SAFETY: `f` is NULL or a live growing filter (caller's contract).
    unsafe { ops::read(f, 0.0, ScalableCuckooFilter::false_positive_bound) }
}

/// Removes every item from every level: the first level is emptied and
/// kept, the others are retired (see `ccf_scalable`) and reused if the
/// filter grows again. Concurrent inserts and removes wait for it; lookups
/// running meanwhile may see the items either there or gone. Returns
/// `CCF_INVALID_ARGUMENT` for a NULL `f`.
///
/// # Safety
/// `f` is NULL or a live growing filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_scalable_clear(f: *mut ccf_scalable) -> ccf_status {
    // SAFETY: `f` is NULL or a live growing filter (caller's contract).
    unsafe {
        ops::with(f, |filter| {
            filter.clear();
            CCF_OK
        })
    }
}

/// Saves the growing filter to the file at `path`, crash-safely as
/// `ccf_save` does (a temporary file in the same directory, fsync, rename
/// over `path`, directory sync): a crash leaves the old file or the new
/// one, and a failed save leaves `path` as it was.
///
/// The file records the configuration (initial capacity, rate, growth
/// factor, max levels), every level in use and the hash seed; it is the
/// format Rust's `ScalableCuckooFilter::write_to_path` writes (format
/// version 3), which `ccf_scalable_load` reads and `ccf_load` refuses.
/// Each level is one moment of that level, taken beside writers (a writer
/// waits at most for one group of lock stripes to be copied); no level is
/// added, retired or compacted meanwhile; lookups go on.
///
/// `path` is as for `ccf_save`. Returns `CCF_OK`; `CCF_IO_ERROR` if
/// creating, writing, syncing or renaming fails; `CCF_INVALID_ARGUMENT`
/// for a NULL `f`, a NULL or empty `path`, or (outside Unix) a path that is
/// not UTF-8.
///
/// # Safety
/// `f` is NULL or a live growing filter; `path` is NULL or a NUL-terminated
/// string.
#[no_mangle]
pub unsafe extern "C" fn ccf_scalable_save(
    f: *const ccf_scalable,
    path: *const c_char,
) -> ccf_status {
    // SAFETY: the caller's contract is `persist::save`'s.
    unsafe { save(f, path, |filter, path| filter.write_to_path(path)) }
}

/// Loads a growing filter saved by `ccf_scalable_save` (or by Rust's
/// `ScalableCuckooFilter::write_to_path`, `write_to` or `to_bytes` with the
/// default hasher). The new filter answers every query exactly as the
/// saved one did and grows as it would have: same levels, contents,
/// configuration and hash seed.
///
/// The file must hold exactly one saved growing filter: a file saved by
/// `ccf_save` (a single filter) is `CCF_CORRUPT` here, as a file saved by
/// `ccf_scalable_save` is for `ccf_load`.
///
/// Returns `CCF_OK` and stores the filter in `*out` (release it with
/// `ccf_scalable_free`); on any error `*out` is left unchanged:
/// `CCF_IO_ERROR` if the file cannot be opened or read; `CCF_CORRUPT` if it
/// is not one intact saved growing filter (see `CCF_CORRUPT`);
/// `CCF_ALLOCATION_FAILED` if the memory for its levels cannot be had;
/// `CCF_INVALID_ARGUMENT` for a NULL `out`, a NULL or empty `path`, or
/// (outside Unix) a path that is not UTF-8.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string; `out` is NULL or valid for
/// writing one pointer.
#[no_mangle]
pub unsafe extern "C" fn ccf_scalable_load(
    path: *const c_char,
    out: *mut *mut ccf_scalable,
) -> ccf_status {
    // SAFETY: the caller's contract is `persist::load`'s.
    unsafe {
        load(path, out, |file, len| {
            ScalableCuckooFilter::read_from_with_options(file, crate::memory::read_options(len))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::KEY_CHUNK;
    use core::ptr;

    fn new_scalable(initial: usize, rate: f64, seed: u64) -> *mut ccf_scalable {
        let mut f = ptr::null_mut();
        // SAFETY: `seed` and `f` are valid for reading and writing.
        let status = unsafe { ccf_scalable_new_with_options(initial, rate, 0, 0, &seed, &mut f) };
        assert_eq!(status, CCF_OK);
        f
    }

    /// Pointers and lengths of `keys`, as C passes a batch.
    fn c_batch(keys: &[String]) -> (Vec<*const c_void>, Vec<usize>) {
        (
            keys.iter().map(|k| k.as_ptr().cast()).collect(),
            keys.iter().map(String::len).collect(),
        )
    }

    #[test]
    fn options_reach_the_builder_and_zero_means_the_default() {
        let f = new_scalable(10, 0.0, 1);
        // SAFETY: `f` is live until `ccf_scalable_free` below, used by this
        // thread only.
        let inner = unsafe { &(*f).inner };
        assert_eq!(inner.configured_false_positive_rate(), 1e-3);
        // Growth factor 2 (the default): level sizes double.
        inner
            .insert_hash_batch(&(0..200u64).collect::<Vec<_>>())
            .unwrap();
        assert!(inner.levels() > 1);
        // SAFETY: `f` came from `ccf_scalable_new_with_options`, freed once.
        unsafe { ccf_scalable_free(f) };

        let mut g = ptr::null_mut();
        // SAFETY: `g` is valid for writing; `seed` NULL.
        let status = unsafe { ccf_scalable_new_with_options(10, 1e-7, 4, 3, ptr::null(), &mut g) };
        assert_eq!(status, CCF_OK);
        // SAFETY: `g` is live until freed below.
        let inner = unsafe { &(*g).inner };
        assert_eq!(inner.configured_false_positive_rate(), 1e-7);
        assert_eq!(inner.level_fingerprint_bits(), vec![32]);
        // Three levels at most (for 10, 40 and 160 items), then CCF_FULL.
        let mut status = CCF_OK;
        let mut n = 0u64;
        while status == CCF_OK {
            // SAFETY: `g` is live.
            status = unsafe { ccf_scalable_insert_hash(g, n.wrapping_mul(0x9E37_79B9_7F4A_7C15)) };
            n += 1;
        }
        assert_eq!(status, CCF_FULL);
        assert_eq!(inner.levels(), 3);
        // Refused only once the three levels are nearly full.
        let stored = (n - 1) as usize;
        assert_eq!(inner.len(), stored);
        assert!(
            stored * 10 > inner.capacity() * 8,
            "{stored} of {}",
            inner.capacity()
        );
        // SAFETY: `g` came from `ccf_scalable_new_with_options`, freed once.
        unsafe { ccf_scalable_free(g) };

        // Refused options: `*out` untouched.
        let too_wide = usize::try_from(u64::from(u32::MAX) + 1).unwrap_or(0);
        for (factor, levels, rate) in [(too_wide, 0, 0.0), (0, 65, 0.0), (0, 32, 1e-8), (0, 0, 1.0)]
        {
            if factor == 0 && levels == 0 && rate == 0.0 {
                continue; // a 32-bit target: no factor too wide for the format
            }
            let mut h = ptr::dangling_mut();
            // SAFETY: `h` is valid for writing; the call must not write it.
            let status = unsafe {
                ccf_scalable_new_with_options(10, rate, factor, levels, ptr::null(), &mut h)
            };
            assert_eq!(status, CCF_INVALID_ARGUMENT, "{factor} {levels} {rate}");
            assert_eq!(h, ptr::dangling_mut());
        }
    }

    #[test]
    fn byte_keys_hash_as_rust_byte_slices_across_levels() {
        let f = new_scalable(16, 0.0, 7);
        // SAFETY: `f` is live until `ccf_scalable_free` below, used by this
        // thread only.
        let inner = unsafe { &(*f).inner };
        let keys: Vec<Vec<u8>> = (0..300usize)
            .map(|len| (0..len).map(|i| (i * 13 + len) as u8).collect())
            .collect();
        for (i, key) in keys.iter().enumerate() {
            if i % 2 == 0 {
                // SAFETY: `key` is `key.len()` readable bytes.
                let status = unsafe { ccf_scalable_insert(f, key.as_ptr().cast(), key.len()) };
                assert_eq!(status, CCF_OK);
            } else {
                inner.insert(key.as_slice()).unwrap();
            }
        }
        assert!(inner.levels() > 1, "the filter grew");
        for key in &keys {
            // Both ways: what C stored Rust finds, and the other way round.
            assert!(inner.contains(key.as_slice()));
            // SAFETY: as above.
            assert!(unsafe { ccf_scalable_contains(f, key.as_ptr().cast(), key.len()) });
        }
        // SAFETY: `f` came from `ccf_scalable_new_with_options`, freed once.
        unsafe { ccf_scalable_free(f) };
    }

    #[test]
    fn byte_key_batches_match_rust_across_chunks_and_growth() {
        let f = new_scalable(8, 0.0, 9);
        // SAFETY: `f` is live until `ccf_scalable_free` below, used by this
        // thread only.
        let inner = unsafe { &(*f).inner };
        let n = 3 * KEY_CHUNK + 5;
        let keys: Vec<String> = (0..n).map(|i| format!("batch-{i}")).collect();
        let (mut ptrs, lens) = c_batch(&keys);
        let mut inserted = usize::MAX;
        // SAFETY: `ptrs`/`lens` hold `n` elements, each `lens[i]` bytes.
        let status =
            unsafe { ccf_scalable_insert_batch(f, ptrs.as_ptr(), lens.as_ptr(), n, &mut inserted) };
        assert_eq!((status, inserted), (CCF_OK, n));
        assert!(inner.levels() > 1, "the batch grew the filter");
        assert!(keys.iter().all(|k| inner.contains(k.as_bytes())));
        assert_eq!(inner.len(), n);

        let mut out = vec![false; n];
        // SAFETY: as above; `out` holds `n` bools.
        unsafe {
            ccf_scalable_contains_batch(f, ptrs.as_ptr(), lens.as_ptr(), n, out.as_mut_ptr())
        };
        assert!(out.iter().all(|&o| o));

        // One invalid key, in the last chunk: nothing goes in or out.
        ptrs[n - 2] = ptr::null();
        // SAFETY: as above; the NULL key is refused, never read.
        let status =
            unsafe { ccf_scalable_insert_batch(f, ptrs.as_ptr(), lens.as_ptr(), n, &mut inserted) };
        assert_eq!((status, inserted), (CCF_INVALID_ARGUMENT, 0));
        let mut removed = vec![true; n];
        // SAFETY: as above; `removed` holds `n` bools.
        let status = unsafe {
            ccf_scalable_remove_batch(f, ptrs.as_ptr(), lens.as_ptr(), n, removed.as_mut_ptr())
        };
        assert_eq!(status, CCF_INVALID_ARGUMENT);
        assert!(removed.iter().all(|&r| !r));
        assert_eq!(inner.len(), n);

        // Removes across chunks, without flags and with them.
        ptrs[n - 2] = keys[n - 2].as_ptr().cast();
        let half = 2 * KEY_CHUNK + 1;
        // SAFETY: as above, with `half <= n` elements.
        let status = unsafe {
            ccf_scalable_remove_batch(f, ptrs.as_ptr(), lens.as_ptr(), half, ptr::null_mut())
        };
        assert_eq!(status, CCF_OK);
        assert_eq!(inner.len(), n - half);
        // SAFETY: as above.
        let status = unsafe {
            ccf_scalable_remove_batch(f, ptrs.as_ptr(), lens.as_ptr(), n, removed.as_mut_ptr())
        };
        assert_eq!(status, CCF_OK);
        assert!(removed[..half].iter().all(|&r| !r) && removed[half..].iter().all(|&r| r));
        assert!(inner.is_empty());
        // SAFETY: `f` came from `ccf_scalable_new_with_options`, freed once.
        unsafe { ccf_scalable_free(f) };
    }

    #[test]
    fn each_loader_refuses_the_other_kind_of_file() {
        let dir = std::env::temp_dir();
        let id = std::process::id();
        let single_path = dir.join(format!("ccf-ffi-scalable-single-{id}.ccf"));
        let scalable_path = dir.join(format!("ccf-ffi-scalable-growing-{id}.ccf"));
        concurrent_cuckoo::CuckooFilter::with_capacity(100)
            .write_to_path(&single_path)
            .unwrap();
        let grown = ScalableCuckooFilter::with_capacity(10);
        grown
            .insert_hash_batch(&(0..500u64).collect::<Vec<_>>())
            .unwrap();
        grown.write_to_path(&scalable_path).unwrap();
        let c =
            |p: &std::path::Path| std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        let (single, scalable) = (c(&single_path), c(&scalable_path));

        let mut s = ptr::dangling_mut();
        // SAFETY: NUL-terminated paths; `s` is valid for writing.
        assert_eq!(
            unsafe { ccf_scalable_load(single.as_ptr(), &mut s) },
            CCF_CORRUPT
        );
        assert_eq!(s, ptr::dangling_mut());
        let mut f = ptr::dangling_mut();
        // SAFETY: as above.
        assert_eq!(
            unsafe { crate::persist::ccf_load(scalable.as_ptr(), &mut f) },
            CCF_CORRUPT
        );
        assert_eq!(f, ptr::dangling_mut());

        // The growing filter's own file loads, answering as the original.
        // SAFETY: as above.
        assert_eq!(
            unsafe { ccf_scalable_load(scalable.as_ptr(), &mut s) },
            CCF_OK
        );
        // SAFETY: `s` is live until freed below.
        let loaded = unsafe { &(*s).inner };
        assert_eq!(loaded.len(), 500);
        assert_eq!(loaded.levels(), grown.levels());
        assert!((0..2000u64).all(|h| loaded.contains_hash(h) == grown.contains_hash(h)));
        // SAFETY: `s` came from `ccf_scalable_load`, freed once.
        unsafe { ccf_scalable_free(s) };
        std::fs::remove_file(&single_path).unwrap();
        std::fs::remove_file(&scalable_path).unwrap();
    }
}
