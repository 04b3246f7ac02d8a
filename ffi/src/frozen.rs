//! Frozen filters: a file saved by `ccf_save`, mapped read-only and
//! queried in place (Rust's `FrozenFilter::open`). The lookups and counts
//! are the generic ones of the private `ops` module.

use crate::ops::{self, counted, lookup, Handle};
use crate::persist::open;
use crate::status::ccf_status::{self, *};
use crate::{ccf_filter, guard};
use concurrent_cuckoo::{FrozenFilter, MappedFile};
use core::ffi::{c_char, c_void};
use std::path::Path;

/// A saved filter, queried where its file lies: read-only, copying
/// nothing, taking no locks.
///
/// Opaque: open one with `ccf_frozen_open`, release it with
/// `ccf_frozen_free`. It answers every query exactly as the filter that
/// was saved (same table, same hash seed); `ccf_frozen_thaw` makes a
/// writable `ccf_filter` from it.
///
/// Threads and processes: every function except `ccf_frozen_free` may be
/// called from any number of threads at once on the same `ccf_frozen`,
/// with no locking by the caller (nothing in it ever changes), and any
/// number of processes may open the same file: each maps it read-only, and
/// they all share one copy of it in the page cache. `ccf_frozen_free` must
/// be the last call on a `ccf_frozen`.
///
/// Replacing the file: only ever by renaming a new file over it, which is
/// what `ccf_save` does. A process that has the old file open keeps
/// reading the old contents, unchanged, until it opens the new one.
/// Never truncate, rewrite or append to the file in place while any
/// process has it open: their lookups would read the changed bytes, or
/// crash (SIGBUS) on a truncated page. This is the caller's contract (Rust
/// marks the same map `unsafe`); a program that cannot promise it loads
/// the file with `ccf_load` instead, a private copy.
pub struct ccf_frozen {
    inner: FrozenFilter<concurrent_cuckoo::MappedFile>,
}

lookup!(FrozenFilter<MappedFile>);
counted!(FrozenFilter<MappedFile>);

impl Handle for ccf_frozen {
    type Filter = FrozenFilter<MappedFile>;
    fn filter(&self) -> &FrozenFilter<MappedFile> {
        &self.inner
    }
    fn wrap(inner: FrozenFilter<MappedFile>) -> Self {
        ccf_frozen { inner }
    }
}

/// Opens the file at `path`, saved by `ccf_save` (or by Rust's
/// `write_to_path` with the default hasher), as a frozen filter: the file
/// is mapped read-only and checked once (its checksum, and its length
/// against the slots it fills); lookups then read the mapping, with no
/// copy of the table.
///
/// `path` is as for `ccf_load`. Returns `CCF_OK` and stores the handle in
/// `*out`, to be released with `ccf_frozen_free`; on any error `*out` is
/// left unchanged: `CCF_IO_ERROR` if the file cannot be opened or mapped
/// (a missing file, a directory); `CCF_CORRUPT` if it is not one intact
/// saved filter (see `CCF_CORRUPT`); `CCF_INVALID_ARGUMENT` for a NULL
/// `out`, a NULL or empty `path`, or (outside Unix) a path that is not
/// UTF-8.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string; `out` is NULL or valid for
/// writing one pointer.
#[no_mangle]
pub unsafe extern "C" fn ccf_frozen_open(
    path: *const c_char,
    out: *mut *mut ccf_frozen,
) -> ccf_status {
    let map = |path: &Path| {
        // SAFETY: `FrozenFilter::open` needs the file left as it is while
        // the mapping lives: that is this function's documented contract
        // with C callers (see `ccf_frozen`: replace it only by renaming a
        // new file over it, never truncate or rewrite it in place).
        unsafe { FrozenFilter::open(path) }.map_err(ccf_status::from)
    };
    // SAFETY: the caller's contract is `persist::open`'s.
    unsafe { open(path, out, map) }
}

/// Releases a frozen filter: unmaps its file. NULL is a no-op.
///
/// Not thread-safe: no other call may be using `f`, and `f` must not be
/// used (or freed) again afterwards. Filters thawed from it are
/// independent and stay valid.
///
/// # Safety
/// `f` is NULL or a handle from `ccf_frozen_open` that has not been freed,
/// and no other thread uses it.
#[no_mangle]
pub unsafe extern "C" fn ccf_frozen_free(f: *mut ccf_frozen) {
    // SAFETY: the caller's contract is `ops::release`'s.
    unsafe { ops::release(f) }
}

/// `ccf_contains` on a frozen filter: the answer the saved filter gave.
/// False for a NULL `f`, or a NULL `key` with `len > 0`.
///
/// # Safety
/// `f` is NULL or a live frozen filter; `key` is NULL or points to `len`
/// readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ccf_frozen_contains(
    f: *const ccf_frozen,
    key: *const c_void,
    len: usize,
) -> bool {
    // SAFETY: the caller's contract is `ops::contains`'s.
    unsafe { ops::contains(f, key, len) }
}

/// `ccf_contains_hash` on a frozen filter; false for a NULL `f`.
///
/// # Safety
/// `f` is NULL or a live frozen filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_frozen_contains_hash(f: *const ccf_frozen, hash: u64) -> bool {
    // SAFETY: the caller's contract is `ops::contains_hash`'s.
    unsafe { ops::contains_hash(f, hash) }
}

/// `ccf_contains_batch` on a frozen filter: `out[i] =
/// ccf_frozen_contains(f, keys[i], lens[i])` for `i < n`, pipelined, with
/// no allocation. NULL arguments and invalid keys as `ccf_contains_batch`:
/// if `out` is NULL nothing is written; otherwise a NULL `f`, `keys` or
/// `lens` sets every `out[i]` to false, and an invalid key gets false.
///
/// # Safety
/// `f` is NULL or a live frozen filter; otherwise as `ccf_contains_batch`.
#[no_mangle]
pub unsafe extern "C" fn ccf_frozen_contains_batch(
    f: *const ccf_frozen,
    keys: *const *const c_void,
    lens: *const usize,
    n: usize,
    out: *mut bool,
) {
    // SAFETY: the caller's contract is `ops::contains_batch`'s.
    unsafe { ops::contains_batch(f, keys, lens, n, out) }
}

/// `ccf_contains_hash_batch` on a frozen filter: `out[i] =
/// ccf_frozen_contains_hash(f, hashes[i])` for `i < n`, pipelined. If
/// `out` is NULL nothing is written; otherwise a NULL `f` or `hashes` sets
/// every `out[i]` to false.
///
/// # Safety
/// `f` is NULL or a live frozen filter; otherwise as
/// `ccf_contains_hash_batch`.
#[no_mangle]
pub unsafe extern "C" fn ccf_frozen_contains_hash_batch(
    f: *const ccf_frozen,
    hashes: *const u64,
    n: usize,
    out: *mut bool,
) {
    // SAFETY: the caller's contract is `ops::contains_hash_batch`'s.
    unsafe { ops::contains_hash_batch(f, hashes, n, out) }
}

/// `ccf_count` on a frozen filter: copies of the key's fingerprint in its
/// two buckets when the filter was saved (0 to 8). 0 for a NULL `f`, or a
/// NULL `key` with `len > 0`.
///
/// # Safety
/// `f` is NULL or a live frozen filter; `key` is NULL or points to `len`
/// readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ccf_frozen_count(
    f: *const ccf_frozen,
    key: *const c_void,
    len: usize,
) -> usize {
    // SAFETY: the caller's contract is `ops::count`'s.
    unsafe { ops::count(f, key, len) }
}

/// `ccf_count_hash` on a frozen filter; 0 for a NULL `f`.
///
/// # Safety
/// `f` is NULL or a live frozen filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_frozen_count_hash(f: *const ccf_frozen, hash: u64) -> usize {
    // SAFETY: the caller's contract is `ops::count_hash`'s.
    unsafe { ops::count_hash(f, hash) }
}

/// Items the filter held when it was saved (each copy counts); 0 for a
/// NULL `f`.
///
/// # Safety
/// `f` is NULL or a live frozen filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_frozen_len(f: *const ccf_frozen) -> usize {
    // SAFETY: `f` is NULL or a live frozen filter (caller's contract).
    unsafe { ops::read(f, 0, |frozen| frozen.len()) }
}

/// Fingerprint slots, as `ccf_capacity` of the saved filter; 0 for a NULL
/// `f`.
///
/// # Safety
/// `f` is NULL or a live frozen filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_frozen_capacity(f: *const ccf_frozen) -> usize {
    // SAFETY: `f` is NULL or a live frozen filter (caller's contract).
    unsafe { ops::read(f, 0, |frozen| frozen.capacity()) }
}

/// Thaws a frozen filter: a new, writable filter with the same contents
/// and hash seed, answering every query as `f` does (its table is copied
/// into fresh memory; `f` stays valid and unchanged, and the two are
/// independent). Its `ccf_stats` counters start at 0.
///
/// Returns `CCF_OK` and stores the filter in `*out`, to be released with
/// `ccf_free`; on any error `*out` is left unchanged:
/// `CCF_ALLOCATION_FAILED` if the memory for the table cannot be had;
/// `CCF_INVALID_ARGUMENT` for a NULL `f` or `out`.
///
/// # Safety
/// `f` is NULL or a live frozen filter; `out` is NULL or valid for writing
/// one pointer.
#[no_mangle]
pub unsafe extern "C" fn ccf_frozen_thaw(
    f: *const ccf_frozen,
    out: *mut *mut ccf_filter,
) -> ccf_status {
    guard(CCF_INTERNAL_ERROR, || {
        // SAFETY: `f` is NULL or a live frozen filter (caller's contract).
        let Some(frozen) = (unsafe { ops::filter_of(f) }) else {
            return CCF_INVALID_ARGUMENT;
        };
        if out.is_null() {
            return CCF_INVALID_ARGUMENT;
        }
        match frozen.to_filter() {
            // SAFETY: `out` is non-null (checked) and valid for writing a
            // pointer (caller's contract).
            Ok(inner) => unsafe { ops::store::<ccf_filter>(out, inner) },
            Err(e) => ccf_status::from(e),
        }
    })
}
